#!/bin/bash
# decide on fixture roots: every kind of kernel of DESIGN section 1, the real
# distribution configs, each auto rule, --explain naming file:line, and the
# bad inputs of the foundation (exit 3 naming the file, exit 2 for usage).
. "$TOP/tests/lib.sh"
CFG="$FIX/configs"

# decide_case NAME RELEASE CONFIG MODE WANT ADD REMOVE
# ADD / REMOVE: the JSON arrays expected, compact, e.g. '["cgroup_disable=memory"]'
decide_case() {
	local name=$1 rel=$2 cfg=$3 mode=$4 want=$5 add=$6 remove=$7
	local root
	root=$(mkroot)
	add_kernel "$root" "$rel" "$CFG/$cfg"
	printf '[policy]\nmode = %s\n' "$mode" | write_policy "$root/etc/memcg-policy.conf"
	expect_exit "$name: exit 0" 0 "$MEMCG_POLICY" --root "$root" decide --kernel "$rel"
	expect_eq "$name: decision" "$(printf '%s\n' "$OUT" | head -n 1)" "$want"
	expect_exit "$name: json exit 0" 0 "$MEMCG_POLICY" --root "$root" --json decide --kernel "$rel"
	local k
	k=$(printf '%s' "$OUT" | jq -c --arg v "$rel" '.kernels[] | select(.version == $v) | [.decision, .add, .remove]')
	expect_eq "$name: json decision, add, remove" "$k" "[\"$want\",$add,$remove]"
}

D='"cgroup_disable=memory"'
E='"cgroup_enable=memory"'
FULL='"cgroup.memory=nokmem","cgroup.memory=nosocket"'

# mainline: cgroup_disable wins; cgroup_enable is unknown
decide_case "debian12 amd64 off" 6.1.0-41-amd64 debian12-amd64.config off off "[$D]" "[$E]"
decide_case "debian12 amd64 on" 6.1.0-41-amd64 debian12-amd64.config on on "[]" "[$D,$FULL]"
decide_case "debian12 cloud off" 6.1.0-41-cloud-amd64 debian12-cloud-amd64.config off off "[$D]" "[$E]"
decide_case "debian12 bpo 6.12 off" 6.12.117+bpo-amd64 debian12-bpo-6.12-amd64.config off off "[$D]" "[$E]"
decide_case "debian12 arm64 (BCM2835 symbols, mainline) off" 6.1.0-53-arm64 debian12-arm64.config off off "[$D]" "[$E]"
decide_case "debian12 -rpi (mainline) off" 6.1.0-50-rpi debian12-rpi-armel.config off off "[$D]" "[$E]"
decide_case "debian12 -rpi (mainline) on" 6.1.0-50-rpi debian12-rpi-armel.config on on "[]" "[$D,$FULL]"
# default-off kernels that accept cgroup_enable=memory
decide_case "debian 3.16 on" 3.16.0-11-amd64 debian8-3.16-amd64.config on on "[$E]" "[$D,$FULL]"
decide_case "debian 3.16 off" 3.16.0-11-amd64 debian8-3.16-amd64.config off off "[]" "[$E]"
decide_case "debian 3.2 on" 3.2.0-4-amd64 debian7-3.2-amd64.config on on "[$E]" "[$D,$FULL]"
decide_case "suse proposal on" 4.1.12-default suse-proposal-4.1-x86_64.config on on "[$E]" "[$D,$FULL]"
decide_case "suse proposal off" 4.1.12-default suse-proposal-4.1-x86_64.config off off "[]" "[$E]"
decide_case "raspberry pi 6.6 on" 6.6.51+rpt-rpi-2712 rpi-6.6-bcm2712.config on on "[$E]" "[$D,$FULL]"
decide_case "raspberry pi 6.6 off" 6.6.51+rpt-rpi-2712 rpi-6.6-bcm2712.config off off "[]" "[$E]"
decide_case "raspberry pi 6.12 on" 6.12.25+rpt-rpi-2712 rpi-6.12-bcm2712.config on on "[$E]" "[$D,$FULL]"
decide_case "raspberry pi 6.12 off" 6.12.25+rpt-rpi-2712 rpi-6.12-bcm2712.config off off "[]" "[$E]"
# memcg not built: off whatever the policy says, nothing to write
decide_case "no memcg, on asked" 5.10.0-nomemcg no-memcg-x86.config on off "[]" "[]"
# built-in cgroup_disable=memory first on a mainline kernel: cannot be turned on
decide_case "x86 builtin disable, off" 6.1.0-cmdline no-memcg-x86.config off off "[]" "[]"

# the built-in command line turns memcg off: nothing to add for off
root=$(mkroot)
add_kernel "$root" 6.1.0-builtin "$CFG/x86-cmdline-bool.config"
printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "builtin disable: off" 0 "$MEMCG_POLICY" --root "$root" --json decide
expect_eq "builtin disable: nothing to add" "$(printf '%s' "$OUT" | jq -c '[.kernels[0].decision, .kernels[0].add]')" '["off",[]]'
printf '[policy]\nmode = on\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "builtin disable: on asked" 0 "$MEMCG_POLICY" --root "$root" --json decide
expect_eq "builtin disable: stays off, with a warning" \
	"$(printf '%s' "$OUT" | jq -c '[.kernels[0].decision, (.kernels[0].warnings | length > 0)]')" '["off",true]'

# accounting = lite adds the cheaper middle ground
root=$(mkroot)
add_kernel "$root" 6.1.0-41-amd64 "$CFG/debian12-amd64.config"
printf '[policy]\nmode = on\naccounting = lite\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "lite: exit 0" 0 "$MEMCG_POLICY" --root "$root" --json decide
expect_eq "lite: adds cgroup.memory=nokmem,nosocket" "$(printf '%s' "$OUT" | jq -c '.kernels[0].add')" '["cgroup.memory=nokmem,nosocket"]'

# gzip-compressed config, detected by content
root=$(mkroot)
add_kernel "$root" 3.16.0-11-amd64 "$CFG/debian8-3.16-amd64.config" gzip
printf '[policy]\nmode = on\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "gzip config: exit 0" 0 "$MEMCG_POLICY" --root "$root" --json decide
expect_eq "gzip config: default off read" "$(printf '%s' "$OUT" | jq -r '.kernels[0].default')" off

# the default kernel is the newest installed: 6.1.0-10 is newer than 6.1.0-9
root=$(mkroot)
add_kernel "$root" 6.1.0-9-amd64 "$CFG/debian8-3.16-amd64.config"
add_kernel "$root" 6.1.0-10-amd64 "$CFG/debian12-amd64.config"
printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "default kernel: exit 0" 0 "$MEMCG_POLICY" --root "$root" --json decide
expect_eq "default kernel: newest by version order" \
	"$(printf '%s' "$OUT" | jq -r '.kernels[] | select(.default_kernel) | .version')" 6.1.0-10-amd64
expect_eq "default kernel: listed newest first" "$(printf '%s' "$OUT" | jq -r '[.kernels[].version] | join(" ")')" \
	"6.1.0-10-amd64 6.1.0-9-amd64"

# ---- auto rules ----
# auto_case NAME WANT [setup commands run with $root set]
auto_root() {
	root=$(mkroot)
	add_kernel "$root" 6.1.0-41-amd64 "$CFG/debian12-amd64.config"
}

auto_root
printf '[policy]\nmode = auto\n' | write_policy "$root/etc/memcg-policy.conf"
mkdir -p "$root/usr/bin"
printf '#!/bin/sh\n' >"$root/usr/bin/dockerd"
chmod 0755 "$root/usr/bin/dockerd"
expect_exit "auto: program found" 0 "$MEMCG_POLICY" --root "$root" decide --explain
expect_eq "auto: dockerd in /usr/bin -> on" "$(printf '%s\n' "$OUT" | head -n 1)" on
check "auto: explain names the program" grep -q 'dockerd (/usr/bin/dockerd)' <<<"$OUT"
check "auto: explain names the policy file and line of mode" grep -q "$root/etc/memcg-policy.conf:2" <<<"$OUT"

auto_root
printf '[policy]\nmode = auto\n' | write_policy "$root/etc/memcg-policy.conf"
mkdir -p "$root/usr/local/sbin"
printf '#!/bin/sh\n' >"$root/usr/local/sbin/k3s"
chmod 0755 "$root/usr/local/sbin/k3s"
expect_exit "auto: k3s in /usr/local/sbin" 0 "$MEMCG_POLICY" --root "$root" decide
expect_eq "auto: k3s in /usr/local/sbin -> on" "$(printf '%s\n' "$OUT" | head -n 1)" on

auto_root
printf '[policy]\nmode = auto\n[auto]\nneeds-memcg = mytool\n' | write_policy "$root/etc/memcg-policy.conf"
mkdir -p "$root/usr/bin"
printf '#!/bin/sh\n' >"$root/usr/bin/dockerd"
chmod 0755 "$root/usr/bin/dockerd"
expect_exit "auto: needs-memcg replaced" 0 "$MEMCG_POLICY" --root "$root" --json decide
expect_eq "auto: dockerd no longer listed -> keep (kernel default on)" \
	"$(printf '%s' "$OUT" | jq -c '[.kernels[0].decision, .kernels[0].keep, .kernels[0].add, .kernels[0].remove]')" '["on",true,[],[]]'

auto_root
printf '[policy]\nmode = auto\n[auto]\notherwise = off\n' | write_policy "$root/etc/memcg-policy.conf"
mkdir -p "$root/etc/systemd/system"
printf '[Service]\nExecStart=/bin/true\nMemoryMax=2G\n' >"$root/etc/systemd/system/app.service"
expect_exit "auto: unit with MemoryMax=" 0 "$MEMCG_POLICY" --root "$root" decide --explain
expect_eq "auto: unit with MemoryMax= -> on" "$(printf '%s\n' "$OUT" | head -n 1)" on
check "auto: explain names the unit file and line" grep -q '/etc/systemd/system/app.service:3: MemoryMax=' <<<"$OUT"

auto_root
printf '[policy]\nmode = auto\n[auto]\nneeds-memcg-units = no\notherwise = off\n' | write_policy "$root/etc/memcg-policy.conf"
mkdir -p "$root/etc/systemd/system"
printf '[Service]\nMemoryMax=2G\n' >"$root/etc/systemd/system/app.service"
expect_exit "auto: units not scanned" 0 "$MEMCG_POLICY" --root "$root" decide
expect_eq "auto: needs-memcg-units = no -> otherwise off" "$(printf '%s\n' "$OUT" | head -n 1)" off

auto_root
printf '[policy]\nmode = auto\n[auto]\notherwise = on\n' | write_policy "$root/etc/memcg-policy.conf"
mkdir -p "$root/etc/systemd/system"
printf '[Service]\nMemoryMax=infinity\nMemoryDenyWriteExecute=yes\n' >"$root/etc/systemd/system/app.service"
expect_exit "auto: MemoryMax=infinity does not count" 0 "$MEMCG_POLICY" --root "$root" decide --explain
check "auto: infinity / MemoryDenyWriteExecute are not memory directives" grep -q 'otherwise = on' <<<"$OUT"

auto_root
printf '[policy]\nmode = auto\n[auto]\nmin-ram = 1G\nassume-ram = 512M\notherwise = on\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "auto: min-ram" 0 "$MEMCG_POLICY" --root "$root" decide --explain
expect_eq "auto: assume-ram 512M below min-ram 1G -> off" "$(printf '%s\n' "$OUT" | head -n 1)" off
check "auto: explain names min-ram's file:line" grep -q "$root/etc/memcg-policy.conf:4" <<<"$OUT"

auto_root
printf '[policy]\nmode = auto\n[auto]\nmin-ram = 1G\nassume-ram = 4G\notherwise = on\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "auto: enough RAM" 0 "$MEMCG_POLICY" --root "$root" decide
expect_eq "auto: assume-ram 4G not below 1G -> otherwise on" "$(printf '%s\n' "$OUT" | head -n 1)" on

auto_root
printf '[policy]\nmode = auto\n[auto]\nmin-ram = 64T\notherwise = on\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "auto: min-ram with --root and no assume-ram" 0 "$MEMCG_POLICY" --root "$root" decide --explain
expect_eq "auto: the host's RAM is never used with --root" "$(printf '%s\n' "$OUT" | head -n 1)" on
check "auto: explain says the RAM is unknown" grep -q 'RAM is unknown' <<<"$OUT"

auto_root
printf '[policy]\nmode = auto\n[auto]\notherwise = kernel\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "auto: otherwise kernel" 0 "$MEMCG_POLICY" --root "$root" --json decide
expect_eq "auto: otherwise = kernel removes ours and contradicting ones" \
	"$(printf '%s' "$OUT" | jq -c '[.kernels[0].decision, .kernels[0].add, .kernels[0].remove]')" "[\"on\",[],[$D,$E]]"

# [kernel GLOB] sections: the last matching one wins, explain names it
root=$(mkroot)
add_kernel "$root" 6.6.51+rpt-rpi-2712 "$CFG/rpi-6.6-bcm2712.config"
add_kernel "$root" 6.1.0-41-amd64 "$CFG/debian12-amd64.config"
write_policy "$root/etc/memcg-policy.conf" <<'P'
[policy]
mode = off

[kernel 6.6.*]
mode = auto

[kernel 6.6.*+rpt-*]
mode = on
P
expect_exit "kernel section: exit 0" 0 "$MEMCG_POLICY" --root "$root" decide --kernel 6.6.51+rpt-rpi-2712 --explain
expect_eq "kernel section: last match wins -> on" "$(printf '%s\n' "$OUT" | head -n 1)" on
check "kernel section: explain names the section and its line" grep -q "\[kernel 6.6.\*+rpt-\*\].*$root/etc/memcg-policy.conf:8" <<<"$OUT"
expect_exit "kernel section: other kernel" 0 "$MEMCG_POLICY" --root "$root" decide --kernel 6.1.0-41-amd64
expect_eq "kernel section: non-matching kernel follows [policy]" "$(printf '%s\n' "$OUT" | head -n 1)" off

# [kernel] default / accepts-cgroup-enable overrides
root=$(mkroot)
add_kernel "$root" 6.1.0-custom "$CFG/debian12-amd64.config"
printf '[policy]\nmode = on\n[kernel 6.1.0-custom]\ndefault = off\naccepts-cgroup-enable = yes\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "kernel overrides: exit 0" 0 "$MEMCG_POLICY" --root "$root" --json decide
expect_eq "kernel overrides: default off + accepts -> add cgroup_enable=memory" "$(printf '%s' "$OUT" | jq -c '.kernels[0].add')" "[$E]"

# --config replaces the search
root=$(mkroot)
add_kernel "$root" 6.1.0-41-amd64 "$CFG/debian12-amd64.config"
printf '[policy]\nmode = on\n' | write_policy "$root/etc/memcg-policy.conf"
other=$(mkroot)/other.conf
printf '[policy]\nmode = off\n' | write_policy "$other"
expect_exit "--config: exit 0" 0 "$MEMCG_POLICY" --root "$root" --config "$other" decide
expect_eq "--config replaces the search" "$(printf '%s\n' "$OUT" | head -n 1)" off

# vendor, admin and drop-in files: later keys win
root=$(mkroot)
add_kernel "$root" 6.1.0-41-amd64 "$CFG/debian12-amd64.config"
printf '[policy]\nmode = on\n' | write_policy "$root/usr/lib/memcg-policy.d/10-vendor.conf"
printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
printf '[policy]\naccounting = lite\n' | write_policy "$root/etc/memcg-policy.d/50-local.conf"
expect_exit "search order: exit 0" 0 "$MEMCG_POLICY" --root "$root" decide --explain
expect_eq "search order: /etc/memcg-policy.conf overrides vendor" "$(printf '%s\n' "$OUT" | head -n 1)" off
check "search order: every file listed" grep -q '50-local.conf' <<<"$OUT"

# ---- bad input ----
root=$(mkroot)
mkdir -p "$root/lib/modules/6.1.0-41-amd64"
: >"$root/boot/vmlinuz-6.1.0-41-amd64"
head -c 300 <(gzip -c "$CFG/debian12-amd64.config") >"$root/boot/config-6.1.0-41-amd64"
expect_exit "truncated config.gz: exit 3" 3 "$MEMCG_POLICY" --root "$root" decide
check "truncated config.gz: message names the file" grep -q "boot/config-6.1.0-41-amd64" <<<"$ERR"

root=$(mkroot)
mkdir -p "$root/lib/modules/6.1.0-41-amd64"
: >"$root/boot/vmlinuz-6.1.0-41-amd64"
printf '\037\213garbage' >"$root/boot/config-6.1.0-41-amd64"
expect_exit "corrupt gzip: exit 3" 3 "$MEMCG_POLICY" --root "$root" decide
check "corrupt gzip: message names the file" grep -q "boot/config-6.1.0-41-amd64" <<<"$ERR"

root=$(mkroot)
mkdir -p "$root/lib/modules/6.1.0-41-amd64"
: >"$root/boot/vmlinuz-6.1.0-41-amd64"
printf 'hello world\nthis is not a config\n' >"$root/boot/config-6.1.0-41-amd64"
expect_exit "not a config: exit 3" 3 "$MEMCG_POLICY" --root "$root" decide
check "not a config: message names the file and line" grep -q "boot/config-6.1.0-41-amd64:1" <<<"$ERR"

root=$(mkroot)
mkdir -p "$root/lib/modules/6.1.0-41-amd64"
: >"$root/boot/vmlinuz-6.1.0-41-amd64"
expect_exit "missing config: exit 3" 3 "$MEMCG_POLICY" --root "$root" decide
check "missing config: message names the kernel" grep -q "6.1.0-41-amd64" <<<"$ERR"

root=$(mkroot)
expect_exit "no kernel at all: exit 3" 3 "$MEMCG_POLICY" --root "$root" decide

root=$(mkroot)
add_kernel "$root" 6.1.0-41-amd64 "$CFG/debian12-amd64.config"
expect_exit "--kernel not installed, no config: exit 3" 3 "$MEMCG_POLICY" --root "$root" decide --kernel 9.9.9-none

# policy errors: exit 3 with FILE:LINE
policy_error() {
	local name=$1 line=$2
	local root
	root=$(mkroot)
	add_kernel "$root" 6.1.0-41-amd64 "$CFG/debian12-amd64.config"
	write_policy "$root/etc/memcg-policy.conf"
	expect_exit "policy $name: exit 3" 3 "$MEMCG_POLICY" --root "$root" decide
	check "policy $name: message names file:line" grep -q "$root/etc/memcg-policy.conf:$line:" <<<"$ERR"
}
printf '[policy]\nmode = sometimes\n' | policy_error "bad mode" 2
printf '[policy]\nmode = on\ncolour = blue\n' | policy_error "unknown key" 3
printf '# comment\n[polcy]\nmode = on\n' | policy_error "unknown section" 2
printf '[policy]\nmode = on\nmode = off\n' | policy_error "duplicate key" 3
printf '[policy]\nmode on\n' | policy_error "missing =" 2
printf '[auto]\nmin-ram = lots\n' | policy_error "bad size" 2
{ printf '[auto]\nneeds-memcg = '; head -c 300 /dev/zero | tr '\0' 'a'; printf '\n'; } | policy_error "line over 200 bytes" 2

root=$(mkroot)
add_kernel "$root" 6.1.0-41-amd64 "$CFG/debian12-amd64.config"
printf '[policy]\nmode = on\n' | write_policy "$root/etc/memcg-policy.conf"
chmod 0666 "$root/etc/memcg-policy.conf"
expect_exit "world-writable policy: exit 3" 3 "$MEMCG_POLICY" --root "$root" decide
check "world-writable policy: message names the file" grep -q "$root/etc/memcg-policy.conf" <<<"$ERR"
chmod 0620 "$root/etc/memcg-policy.conf"
expect_exit "group-writable policy: exit 3" 3 "$MEMCG_POLICY" --root "$root" decide
chmod 0644 "$root/etc/memcg-policy.conf"
chown 12345 "$root/etc/memcg-policy.conf"
expect_exit "policy owned by another user: exit 3" 3 "$MEMCG_POLICY" --root "$root" decide
rm -f "$root/etc/memcg-policy.conf"
mkfifo "$root/etc/memcg-policy.conf"
expect_exit "policy that is a FIFO: exit 3" 3 "$MEMCG_POLICY" --root "$root" decide
expect_exit "missing --config file: exit 3" 3 "$MEMCG_POLICY" --root "$root" --config /nonexistent/x.conf decide
check "missing --config file: message names it" grep -q "/nonexistent/x.conf" <<<"$ERR"

# usage errors: exit 2
expect_exit "unknown command: exit 2" 2 "$MEMCG_POLICY" frobnicate
expect_exit "unknown option: exit 2" 2 "$MEMCG_POLICY" --frob status
expect_exit "decide extra argument: exit 2" 2 "$MEMCG_POLICY" --root "$root" decide extra
expect_exit "decide --kernel without value: exit 2" 2 "$MEMCG_POLICY" --root "$root" decide --kernel
expect_exit "no command: exit 2" 2 "$MEMCG_POLICY"
expect_exit "--root that does not exist: exit 2" 2 "$MEMCG_POLICY" --root /nonexistent/root status

# --explain keeps FILE:LINE however long the root's path is
long=$(mkroot)
deep=$long/$(printf 'image-%.0s' {1..40})/$(printf 'x%.0s' {1..200})/$(printf 'y%.0s' {1..200})
mkdir -p "$deep/etc"
add_kernel "$deep" 6.1.0-41-amd64 "$CFG/debian12-amd64.config"
printf '[policy]\n\nmode = off\n' | write_policy "$deep/etc/memcg-policy.conf"
expect_exit "explain under a long --root: exit 0" 0 "$MEMCG_POLICY" --root "$deep" decide --explain
check "explain under a long --root names memcg-policy.conf:3" grep -q 'mode = off (.*/etc/memcg-policy.conf:3)' <<<"$OUT"
