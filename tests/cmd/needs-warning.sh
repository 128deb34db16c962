#!/bin/bash
# memcg off where the system has what needs it (k3s, dockerd, a unit with
# MemoryMax=): the tool knows it will fail after the reboot and says so,
# naming it, wherever the decision is shown: set off (stderr and --json
# warnings), status's headline, check --monitoring's text. Nothing is
# refused: off is the admin's choice. With nothing that needs memcg, or
# with memcg on, no such warning.
. "$TOP/tests/lib.sh"
has() { case $2 in *"$3"*) pass "$1" ;; *) fail "$1" "no: $3" "in: $2" ;; esac; }
lacks() { case $2 in *"$3"*) fail "$1" "has: $3" "in: $2" ;; *) pass "$1" ;; esac; }

# setup MODE: a root whose boot configuration is /etc/kernel/cmdline
setup() {
	root=$(mkroot)
	add_kernel "$root" 6.1.0-40-amd64 "$FIX/configs/debian12-amd64.config"
	mkdir -p "$root/etc/kernel"
	printf 'root=/dev/sda1 ro quiet\n' >"$root/etc/kernel/cmdline"
	printf '[policy]\nmode = %s\n[bootloaders]\nkernel-cmdline = yes\n' "$1" | write_policy "$root/etc/memcg-policy.conf"
}
program() { # program ROOT PATH
	mkdir -p "$(dirname "$1$2")"
	printf '#!/bin/sh\n' >"$1$2"
	chmod 0755 "$1$2"
}

setup on
program "$root" /usr/local/bin/k3s
expect_exit "k3s installed, set off: exit 0 (a warning, not a refusal)" 0 "$MEMCG_POLICY" --root "$root" set off
has "set off warns that k3s needs memcg" "$ERR" "warning: memcg off, but k3s (/usr/local/bin/k3s) needs it"
has "and what fails" "$ERR" "its containers or pods fail to start after the next boot"
check "set off wrote the decision all the same" grep -qw cgroup_disable=memory "$root/etc/kernel/cmdline"
expect_exit "status" 0 "$MEMCG_POLICY" --root "$root" status
has "status's headline has the warning" "$(sed -n '/^$/q;p' <<<"$OUT")" "Warning: memcg off, but k3s (/usr/local/bin/k3s) needs it"
expect_exit "check --monitoring: OK (in sync)" 0 "$MEMCG_POLICY" --root "$root" check --monitoring
has "the monitoring line carries the warning" "$OUT" "; warning: memcg off, but k3s (/usr/local/bin/k3s) needs it"
json_run "set off --json again" "$MEMCG_POLICY" --root "$root" --json set off
has "--json: the warning is in warnings[]" "$(jq -r '.warnings[]' <<<"$OUT")" "memcg off, but k3s (/usr/local/bin/k3s) needs it"
expect_eq "--json: the program found, as data" "$(jq -c '.system.needs_memcg_programs' <<<"$OUT")" \
	'[{"name":"k3s","path":"/usr/local/bin/k3s"}]'
program "$root" /usr/bin/dockerd
program "$root" /usr/bin/containerd
program "$root" /usr/bin/kubelet
expect_exit "four programs: status" 0 "$MEMCG_POLICY" --root "$root" status
has "four programs: three named, and how many more" "$OUT" "and 1 more needs it"

# a unit with a memory directive, no program
setup on
mkdir -p "$root/etc/systemd/system"
printf '[Unit]\nDescription=web\n[Service]\nExecStart=/bin/true\nMemoryMax=512M\n' >"$root/etc/systemd/system/web.service"
expect_exit "a unit with MemoryMax=, set off: exit 0" 0 "$MEMCG_POLICY" --root "$root" set off
has "set off names the unit and its directive" "$ERR" "web.service:5: MemoryMax= sets a memory limit"
has "and what fails" "$ERR" "systemd cannot enforce it after the next boot"

# nothing that needs memcg: no warning; on with k3s: no warning
setup on
expect_exit "nothing needs memcg, set off" 0 "$MEMCG_POLICY" --root "$root" set off
lacks "nothing needs memcg: no warning" "$ERR" "memcg off, but"
setup off
program "$root" /usr/local/bin/k3s
expect_exit "k3s installed, set on" 0 "$MEMCG_POLICY" --root "$root" set on
lacks "set on: no warning" "$ERR" "memcg off, but"

# the unit files are read only where they can matter: a kernel decided by
# auto (the decision) or off (the warning); with every mode on, not at all
setup on
mkdir -p "$root/etc/systemd/system"
printf '[Service]\nExecStart=/bin/true\nMemoryMax=512M\n' >"$root/etc/systemd/system/web.service"
json_run "mode on: status --json" "$MEMCG_POLICY" --root "$root" --json status
expect_eq "mode on: the unit files are not read" "$(jq -r '.system.needs_memcg_units | length' <<<"$OUT")" 0
printf '[policy]\nmode = on\n[kernel 6.1.*]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
json_run "a [kernel] section off: status --json" "$MEMCG_POLICY" --root "$root" --json status
expect_eq "a [kernel] section off: the unit is read, as data" \
	"$(jq -c '.system.needs_memcg_units' <<<"$OUT")" \
	'[{"unit":"web.service","file":"/etc/systemd/system/web.service","line":3,"directive":"MemoryMax"}]'

# two kernels decided off, k3s installed: status says the warning once (the
# headline), not again under each kernel; -v shows it under each
setup off
add_kernel "$root" 6.1.0-41-amd64 "$FIX/configs/debian12-amd64.config"
program "$root" /usr/local/bin/k3s
expect_exit "two kernels: status" 0 "$MEMCG_POLICY" --root "$root" status
expect_eq "two kernels: the warning once" "$(grep -c 'memcg off, but k3s' <<<"$OUT")" 1
expect_exit "two kernels: status -v" 0 "$MEMCG_POLICY" --root "$root" -v status
expect_eq "two kernels, -v: the headline and each kernel" "$(grep -c 'memcg off, but k3s' <<<"$OUT")" 3
