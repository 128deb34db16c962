#!/bin/bash
# tests/cmd/uki.sh: unified kernel images read as systemd-stub reads them,
# and judged. The UKIs and addons are built by Debian 13's own ukify and
# stubs (tests/uki/fetch-ukify.sh brings them from the Debian mirror);
# what the tool reads of each is compared with `ukify inspect`. The
# rebuild with the image's kernel-install is tests/uki/rebuild.sh.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

cache=${UKIFY_CACHE:-$TOP/build/ukify}
if ! U=$("$TOP/tests/uki/fetch-ukify.sh" "$cache" 2>&1 | tail -n 1) || [ ! -x "$U/usr/bin/ukify" ]; then
	fail "Debian 13's ukify is fetched from the mirror" "$U"
	echo "1 check could not run"
	exit 1
fi
STUB=$U/usr/lib/systemd/boot/efi/linuxx64.efi.stub
ADDON_STUB=$U/usr/lib/systemd/boot/efi/addonx64.efi.stub
ukify() { /usr/bin/python3 "$U/usr/bin/ukify" "$@"; }
V=6.12.57+deb13-amd64
MID=0123456789abcdef0123456789abcdef
tmp=$(mktemp -d)
_tmpdirs+=("$tmp")
printf 'not a kernel\n' >"$tmp/linux"

# uki OUT CMDLINE [UNAME]: a UKI built by ukify (no UNAME: a PE "kernel"
# without a version, so that ukify writes no .uname)
uki() {
	local out=$1 cmdline=$2
	mkdir -p "$(dirname "$out")"
	if [ $# -ge 3 ]; then
		ukify build --stub="$STUB" --linux="$tmp/linux" --cmdline="$cmdline" --uname="$3" --output="$out" >/dev/null 2>&1
	else
		ukify build --stub="$STUB" --linux="$ADDON_STUB" --cmdline="$cmdline" --output="$out" >/dev/null 2>&1
	fi || fail "ukify builds $out"
}
# addon OUT CMDLINE [UNAME]
addon() {
	local out=$1
	mkdir -p "$(dirname "$out")"
	ukify build --stub="$ADDON_STUB" --cmdline="$2" ${3:+--uname="$3"} --output="$out" >/dev/null 2>&1 ||
		fail "ukify builds $out"
}
# inspect FILE SECTION: the section's text as ukify inspect reads it
inspect() { ukify inspect "$1" --json=short | jq -r --arg s "$2" '.[$s].text // "(none)"'; }
# stub_line TEXT: systemd-stub's reading of a .cmdline (control
# characters become spaces, trailing spaces go)
stub_line() { /usr/bin/python3 -c 'import sys; t=sys.argv[1]; print("".join(" " if ord(c) < 32 else c for c in t).rstrip(" "))' "$1"; }

# a Debian 13 root with layout=uki: the ESP at /boot/efi
mkuki_root() {
	local r
	r=$(mkroot)
	mkdir -p "$r/etc/kernel" "$r/boot/efi/EFI/Linux" "$r/boot/efi/loader"
	echo "$MID" >"$r/etc/machine-id"
	xz -dc "$TOP/../shared/corpus/kernel-configs/debian12-bpo-6.12.117-amd64.config.xz" >"$r/boot/config-$V" 2>/dev/null ||
		cp "$FIX/configs/mainline-memcg-on.config" "$r/boot/config-$V"
	: >"$r/boot/vmlinuz-$V"
	echo layout=uki >"$r/etc/kernel/install.conf"
	# the image's kernel-install: a stand-in that fails if run (with
	# --root no program of the image runs)
	mkdir -p "$r/usr/bin"
	printf '#!/bin/sh\nexit 1\n' >"$r/usr/bin/kernel-install"
	chmod 0755 "$r/usr/bin/kernel-install"
	echo "root=UUID=1234 ro quiet" >"$r/etc/kernel/cmdline"
	echo "$r"
}
json_slot() { jq -c --arg p "$2" '.slots[] | select(.path == $p)' <<<"$1"; }

# --- 1. the tool reads what ukify wrote, as the stub reads it ---
root=$(mkuki_root)
E=/boot/efi/EFI/Linux
printf 'root=UUID=1234 ro\n\tquiet  splash\n\n' >"$tmp/multi"
uki "$root$E/$MID-$V.efi" " root=UUID=1234 ro quiet systemd.machine_id=$MID" "$V"
uki "$root$E/$MID-6.1.0-41-amd64.efi" "@$tmp/multi" 6.1.0-41-amd64
uki "$root$E/plain.efi" "root=/dev/vda2 rw"
mkdir -p "$root/lib/modules/6.1.0-41-amd64"
cp "$root/boot/config-$V" "$root/boot/config-6.1.0-41-amd64"
json_run "status --json on a UKI root" "$MEMCG_POLICY" --root "$root" status --json
expect_eq "status --json on a UKI root: exit 0" "$RC" 0
for f in "$MID-$V.efi" "$MID-6.1.0-41-amd64.efi" plain.efi; do
	s=$(json_slot "$OUT" "$E/$f")
	expect_eq "$f: a uki slot" "$(jq -r .kind <<<"$s")" uki
	want=$(stub_line "$(inspect "$root$E/$f" .cmdline)")
	expect_eq "$f: its own line is ukify inspect's .cmdline, as the stub reads it" \
		"$(jq -r .uki.cmdline <<<"$s")" "$want"
	expect_eq "$f: no addon: the kernel's line is its own" "$(jq -r .cmdline <<<"$s")" "$want"
	expect_eq "$f: .uname as ukify inspect reads it" "$(jq -r '.uki.uname // "(none)"' <<<"$s")" \
		"$(inspect "$root$E/$f" .uname)"
done
expect_eq "a UKI without .uname: its kernel from its name, none here" \
	"$(json_slot "$OUT" "$E/plain.efi" | jq -r '.kernel // "none"')" none
expect_eq "a UKI with .uname belongs to that kernel" "$(json_slot "$OUT" "$E/$MID-$V.efi" | jq -r .kernel)" "$V"
expect_eq "the line with newlines and tabs reads as one line" \
	"$(json_slot "$OUT" "$E/$MID-6.1.0-41-amd64.efi" | jq -r .cmdline)" "root=UUID=1234 ro  quiet  splash"

# --- 2. addons: global, then the UKI's own, each in name order ---
root=$(mkuki_root)
uki "$root$E/$MID-$V.efi" "root=UUID=1234 ro quiet" "$V"
addon "$root/boot/efi/loader/addons/20-b.addon.efi" "b=2"
addon "$root/boot/efi/loader/addons/10-a.addon.efi" "a=1"
addon "$root$E/$MID-$V.efi.extra.d/05-c.addon.efi" "c=3"
addon "$root$E/$MID-$V.efi.extra.d/07-other.addon.efi" "other=kernel" 6.1.0-41-amd64
addon "$root$E/$MID-$V.efi.extra.d/09-mine.addon.efi" "mine=yes" "$V"
cp "$root$E/$MID-$V.efi.extra.d/05-c.addon.efi" "$root$E/$MID-$V.efi.extra.d/not-an-addon.efi"
cp "$root$E/$MID-$V.efi" "$root$E/$MID-$V.efi.extra.d/99-kernel.addon.efi"
json_run "status --json with addons" "$MEMCG_POLICY" --root "$root" status --json
s=$(json_slot "$OUT" "$E/$MID-$V.efi")
expect_eq "addons: own line, global addons, then the UKI's, each in name order" "$(jq -r .cmdline <<<"$s")" \
	"root=UUID=1234 ro quiet a=1 b=2 c=3 mine=yes"
expect_eq "addons: each one's line is ukify inspect's" "$(jq -r '.uki.addons[] | .cmdline' <<<"$s" | tr '\n' ' ')" \
	"a=1 b=2 c=3 mine=yes "
expect_exit "addons: an addon with a .linux section is refused, said" 0 "$MEMCG_POLICY" --root "$root" status
check "addons: the refusal names the file" grep -q '99-kernel.addon.efi: has a .linux section' <<<"$ERR"
check "addons: status shows the line the kernel gets, and that addons make it" \
	grep -qx '  *the kernel gets: root=UUID=1234 ro quiet a=1 b=2 c=3 mine=yes (its own line, then 4 addons)' <<<"$OUT"
expect_exit "addons: status -v" 0 "$MEMCG_POLICY" -v --root "$root" status
check "addons: status -v names each addon and its line, in order" \
	test "$(grep -o 'addon [^ ]*: [^ ]*$' <<<"$OUT" | tr '\n' ' ')" = \
	"addon /boot/efi/loader/addons/10-a.addon.efi: a=1 addon /boot/efi/loader/addons/20-b.addon.efi: b=2 addon $E/$MID-$V.efi.extra.d/05-c.addon.efi: c=3 addon $E/$MID-$V.efi.extra.d/09-mine.addon.efi: mine=yes "

# --- 3. judged: the line the stub gives is what the next boot gets ---
root=$(mkuki_root)
uki "$root$E/$MID-$V.efi" "root=UUID=1234 ro quiet" "$V"
write_policy "$root/etc/memcg-policy.conf" <<<$'[policy]\nmode = off'
expect_exit "mode=off, UKI without the token: check says drift" 1 "$MEMCG_POLICY" --root "$root" check
check "check names the UKI and what its line lacks" grep -q "$E/$MID-$V.efi: the line systemd-stub gives it lacks cgroup_disable=memory" <<<"$OUT$ERR"
expect_exit "status: exit 0" 0 "$MEMCG_POLICY" --root "$root" status
expect_eq "status's headline says the next boot has memcg on" "$(head -n 1 <<<"$OUT" | grep -o 'memcg [A-Z]*' | head -n 1)" "memcg ON"
# set off edits /etc/kernel/cmdline; the UKI is not rebuilt with --root:
# the run says so, and does not call the next boot off
expect_exit "set off with --root: the UKI left as it is is an error" 1 "$MEMCG_POLICY" --root "$root" set off
check "set off: /etc/kernel/cmdline has the token" grep -q cgroup_disable=memory "$root/etc/kernel/cmdline"
check "set off: says the UKI does not carry it" grep -q "$E/$MID-$V.efi: not carrying the decision" <<<"$ERR"
check "set off: says how to rebuild it" grep -q "kernel-install add $V /boot/vmlinuz-$V" <<<"$ERR"
check "set off: the next boot is memcg on, as it is" grep -q "^next boot of the image ($V): memcg on" <<<"$OUT"
expect_exit "apply --hook: a warning, exit 0" 0 "$MEMCG_POLICY" --root "$root" apply --hook
check "apply --hook: the warning names the UKI" grep -q "warning: .*$MID-$V.efi: not carrying the decision" <<<"$ERR"
# a UKI built with the token: in sync
uki "$root$E/$MID-$V.efi" "root=UUID=1234 ro quiet cgroup_disable=memory" "$V"
expect_exit "a UKI whose .cmdline has the token: in sync" 0 "$MEMCG_POLICY" --root "$root" check
# the token from a global addon only
uki "$root$E/$MID-$V.efi" "root=UUID=1234 ro quiet" "$V"
addon "$root/boot/efi/loader/addons/memcg.addon.efi" "cgroup_disable=memory"
expect_exit "the token from a global addon: in sync" 0 "$MEMCG_POLICY" --root "$root" check
# mode = on with the addon: the addon is what to change, not the UKI
write_policy "$root/etc/memcg-policy.conf" <<<$'[policy]\nmode = on'
expect_exit "mode=on, an addon brings cgroup_disable=memory: drift" 1 "$MEMCG_POLICY" --root "$root" check
check "the drift names the addon" grep -q "from the addon /boot/efi/loader/addons/memcg.addon.efi" <<<"$OUT$ERR"
json_run "status --json: the addon's UKI has no rebuild that helps" "$MEMCG_POLICY" --root "$root" status --json
expect_eq "the UKI drifts" "$(json_slot "$OUT" "$E/$MID-$V.efi" | jq -r .state)" drift

# --- 3a. multi-profile UKIs (ukify --profile, --join-profile): the stub
# boots profile @0 by default, with its own sections where it has them,
# else the base ones (ukify makes @0 of the base: its --cmdline is the
# base .cmdline, and each joined profile follows with its own) ---
# profile OUT PROFILE [CMDLINE]: a profile PE to join
profile() {
	ukify build --stub="$ADDON_STUB" --profile="$2" ${3:+--cmdline="$3"} --output="$1" >/dev/null 2>&1 ||
		fail "ukify builds the profile $1"
}
root=$(mkuki_root)
write_policy "$root/etc/memcg-policy.conf" <<<$'[policy]\nmode = off'
echo "root=UUID=1234 ro quiet cgroup_disable=memory" >"$root/etc/kernel/cmdline"
profile "$tmp/factory.efi" "ID=factory TITLE=Factory reset" "root=UUID=1234 ro systemd.unit=factory-reset.target"
ukify build --stub="$STUB" --linux="$tmp/linux" --uname="$V" --cmdline="root=UUID=1234 ro quiet cgroup_disable=memory" \
	--profile="ID=default TITLE=Default" --join-profile="$tmp/factory.efi" --output="$root$E/$MID-$V.efi" >/dev/null 2>&1 ||
	fail "ukify builds a multi-profile UKI"
check "multi-profile: ukify wrote two .profile sections" \
	test "$(objdump -h "$root$E/$MID-$V.efi" | grep -c ' \.profile ')" -eq 2
json_run "multi-profile: status --json" "$MEMCG_POLICY" --root "$root" status --json
s=$(json_slot "$OUT" "$E/$MID-$V.efi")
expect_eq "multi-profile: two profiles" "$(jq -r .uki.profiles <<<"$s")" 2
expect_eq "multi-profile: @0 gets the base line, not the factory profile's" "$(jq -r .cmdline <<<"$s")" \
	"root=UUID=1234 ro quiet cgroup_disable=memory"
expect_exit "multi-profile, the base line carrying the token: in sync" 0 "$MEMCG_POLICY" --root "$root" check
expect_exit "multi-profile: status" 0 "$MEMCG_POLICY" --root "$root" status
check "multi-profile: status says which profile and whose line" \
	grep -q "profile @0 of 2 (the default), its line the base one; other profiles with a line of their own are not judged" <<<"$OUT"

# --- 4. /etc/kernel/cmdline created from the UKI's own line ---
root=$(mkuki_root)
rm "$root/etc/kernel/cmdline"
uki "$root$E/$MID-$V.efi" "root=UUID=77 ro quiet systemd.machine_id=$MID" "$V"
write_policy "$root/etc/memcg-policy.conf" <<<$'[policy]\nmode = off'
expect_exit "no /etc/kernel/cmdline: apply creates it (the UKI still drifts)" 1 "$MEMCG_POLICY" --root "$root" apply
expect_eq "created from the UKI's own line, without systemd.machine_id" "$(cat "$root/etc/kernel/cmdline")" \
	"root=UUID=77 ro quiet cgroup_disable=memory"

# --- 5. damaged files ---
root=$(mkuki_root)
printf 'MZ but nothing else' >"$root$E/broken.efi"
head -c 300 "$STUB" >"$root$E/torn.efi"
expect_exit "a damaged UKI: status still works" 0 "$MEMCG_POLICY" --root "$root" status --json
s=$(json_slot "$OUT" "$E/broken.efi")
expect_eq "a file that is not a PE: unmanaged" "$(jq -r .state <<<"$s")" unmanaged
check "its note says it is not a PE image" grep -q 'not a PE image' <<<"$(jq -r .note <<<"$s")"
expect_eq "a torn PE: unmanaged" "$(json_slot "$OUT" "$E/torn.efi" | jq -r .state)" unmanaged

# --- 6. boot entries that boot a UKI (a uki key) ---
root=$(mkuki_root)
rm -rf "$root/boot/efi/EFI/Linux"
uki "$root/boot/efi/$MID/$V/uki.efi" "root=UUID=1234 ro quiet" "$V"
mkdir -p "$root/boot/efi/loader/entries"
ent=/boot/efi/loader/entries/$MID-$V.conf
printf 'title Debian\nversion %s\nuki /%s/%s/uki.efi\n' "$V" "$MID" "$V" >"$root$ent"
write_policy "$root/etc/memcg-policy.conf" <<<$'[policy]\nmode = off'
json_run "an entry with a uki key and no options: status --json" "$MEMCG_POLICY" --root "$root" status --json
s=$(json_slot "$OUT" "$ent")
expect_eq "no options: the entry is judged by the UKI's own line" "$(jq -r '.kind + " " + .state' <<<"$s")" "uki drift"
expect_eq "no options: that line is the UKI's .cmdline" "$(jq -r .cmdline <<<"$s")" \
	"$(stub_line "$(inspect "$root/boot/efi/$MID/$V/uki.efi" .cmdline)")"
check "no options: the note says how" grep -q 'give the entry an options line' <<<"$(jq -r .note <<<"$s")"
expect_exit "no options: check says drift" 1 "$MEMCG_POLICY" --root "$root" check
# with options, Secure Boot off (an image: off unless the policy says):
# the options replace the UKI's line, and the entry is edited
printf 'options root=UUID=1234 ro\n' >>"$root$ent"
json_run "an entry with a uki key and options: status --json" "$MEMCG_POLICY" --root "$root" status --json
expect_eq "options, Secure Boot off: a BLS entry the tool edits" "$(json_slot "$OUT" "$ent" | jq -r '.kind + " " + .state')" "bls drift"
expect_exit "options, Secure Boot off: apply" 0 "$MEMCG_POLICY" --root "$root" apply
check "options, Secure Boot off: apply put the token in the entry's options" grep -q '^options .*cgroup_disable=memory' "$root$ent"
expect_exit "options, Secure Boot off: then in sync" 0 "$MEMCG_POLICY" --root "$root" check
# Secure Boot on: systemd-stub ignores the loader's line; the UKI's counts
write_policy "$root/etc/memcg-policy.conf" <<<$'[policy]\nmode = off\n[bootloaders]\nsecure-boot = yes'
json_run "Secure Boot on: status --json" "$MEMCG_POLICY" --root "$root" status --json
s=$(json_slot "$OUT" "$ent")
expect_eq "Secure Boot on: the entry is judged by the UKI's own line, not its options" "$(jq -r '.kind + " " + .state' <<<"$s")" "uki drift"
check "Secure Boot on: the note says the options do not reach it" grep -q 'Secure Boot is on' <<<"$(jq -r .note <<<"$s")"
expect_exit "Secure Boot on: check says drift, whatever the options say" 1 "$MEMCG_POLICY" --root "$root" check
