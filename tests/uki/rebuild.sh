#!/bin/bash
# tests/uki/rebuild.sh BUILD-DIR: unified kernel images on a real Debian 13
# root, built and rebuilt by its own kernel-install and ukify (make
# check-uki; needs root, mmdebstrap and the Debian mirror).
#
# A trixie root (mmdebstrap, kept in $UKI_CACHE between runs) with
# layout=uki and its ESP at /boot/efi; the kernel is a stand-in file
# (ukify builds a UKI around any file given its release), the config a
# real Debian kernel's. Walked through as an administrator would:
#   1. kernel-install makes the first UKI; status reads its line
#   2. mode = off, apply --regenerate: /etc/kernel/cmdline gets the token,
#      the image's kernel-install rebuilds the UKI, whose .cmdline (read
#      by the image's own `ukify inspect`) has it; check 0
#   3. apply without --regenerate after the UKI was rebuilt by hand
#      without the token: exit 1, the UKI named, nothing claimed
#   4. revert --regenerate: the token out of /etc/kernel/cmdline and of
#      the rebuilt UKI
#   5. the package's plugins in the image, the program with them: a
#      kernel update (kernel-install add, as Debian's hooks run it) after
#      that revert, with the policy still off: the UKI it builds has the
#      token (55-memcg-policy.install ran before 60-ukify.install), and
#      check in the image says in sync
#   6. mode = on, apply --regenerate with those plugins in the image: the
#      rebuild runs them, and they must not wait for the tool's own lock
#   7. a UKI alone to put right: --json says changed, the UKI "rebuilt"
# Prints PASS/FAIL lines and "N passed, N failed".
set -u
build=${1:?usage: tests/uki/rebuild.sh BUILD-DIR}
build=$(cd "$build" && pwd)
TOP=$(cd "$(dirname "$0")/../.." && pwd)
M=$build/memcg-policy
export LC_ALL=C
passed=0
failed=0
pass() { echo "PASS: $1"; passed=$((passed + 1)); }
fail() {
	echo "FAIL: $1"
	shift
	[ $# -eq 0 ] || printf '  %s\n' "$@"
	failed=$((failed + 1))
}
# check NAME CMD... / check_not NAME CMD...: CMD succeeds / fails
check() {
	local n=$1
	shift
	if "$@"; then pass "$n"; else fail "$n" "failed: $*"; fi
}
check_not() {
	local n=$1
	shift
	if "$@"; then fail "$n" "succeeded: $*"; else pass "$n"; fi
}
expect_eq() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got:  $2" "want: $3"; fi; }
# run NAME CODE CMD...: stdout in $OUT, stderr in $ERR
run() {
	local name=$1 code=$2 o e rc
	shift 2
	o=$(mktemp)
	e=$(mktemp)
	"$@" >"$o" 2>"$e"
	rc=$?
	OUT=$(cat "$o")
	ERR=$(cat "$e")
	rm -f "$o" "$e"
	if [ "$rc" -eq "$code" ]; then pass "$name"; else fail "$name" "exit $rc, expected $code: $*" "stdout: $OUT" "stderr: $ERR"; fi
}
finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

if [ "$(id -u)" -ne 0 ] || ! command -v mmdebstrap >/dev/null; then
	fail "check-uki needs root and mmdebstrap"
	finish
fi
cache=${UKI_CACHE:-$TOP/build/uki-trixie}
mkdir -p "$cache"
tarball=$cache/trixie-uki.tar
# the packages: systemd's kernel-install, ukify and the stubs; the
# libraries the program loads (libinih at start, the others when used)
pkgs=systemd,systemd-ukify,systemd-boot-efi,udev,libinih1,libkmod2,libjson-c5
if [ ! -s "$tarball" ] || [ "$(cat "$cache/pkgs" 2>/dev/null)" != "$pkgs" ]; then
	if ! mmdebstrap --variant=minbase --include="$pkgs" trixie "$cache/new.tar" \
		"${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$cache/mmdebstrap.log" 2>&1; then
		fail "mmdebstrap builds a Debian 13 root" "$(tail -n 20 "$cache/mmdebstrap.log")"
		finish
	fi
	mv "$cache/new.tar" "$tarball"
	echo "$pkgs" >"$cache/pkgs"
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/memcg-uki.XXXXXX")
trap 'rm -rf "$W"' EXIT
R=$W/root
mkdir -p "$R"
tar -C "$R" -xf "$tarball"

V=6.12.57+deb13-amd64
MID=0123456789abcdef0123456789abcdef
UKI=/boot/efi/EFI/Linux/$MID-$V.efi
echo "$MID" >"$R/etc/machine-id"
mkdir -p "$R/etc/kernel" "$R/boot/efi/EFI/Linux" "$R/boot/efi/loader" "$R/usr/lib/modules/$V"
printf 'layout=uki\nBOOT_ROOT=/boot/efi\n' >"$R/etc/kernel/install.conf"
echo "root=UUID=5e2a4c1b-0000-4000-8000-000000000001 ro quiet" >"$R/etc/kernel/cmdline"
printf 'a stand-in kernel\n' >"$R/boot/vmlinuz-$V"
printf 'a stand-in initrd\n' >"$R/boot/initrd.img-$V"
xz -dc "$TOP/../shared/corpus/kernel-configs/debian12-bpo-6.12.117-amd64.config.xz" >"$R/boot/config-$V" 2>/dev/null ||
	cp "$TOP/tests/fixtures/configs/mainline-memcg-on.config" "$R/boot/config-$V"
# the image's own tools, run in it (as its admin would, in a chroot)
in_image() { chroot "$R" "$@"; }
inspect_cmdline() { in_image ukify inspect "$UKI" --json=short | jq -r '.[".cmdline"].text'; }
# shellcheck disable=SC2317 # called through check
has_token() { grep -qw -- cgroup_disable=memory <<<"$1"; }

# 1
run "1: the image's kernel-install makes the first UKI" 0 in_image kernel-install add "$V" "/boot/vmlinuz-$V" "/boot/initrd.img-$V"
[ -f "$R$UKI" ] || { fail "1: the UKI is at $UKI" "$(find "$R/boot" -name '*.efi')"; finish; }
run "1: status --json" 0 "$M" --root "$R" status --json
expect_eq "1: the tool's reading of the UKI's line is ukify inspect's" \
	"$(jq -r --arg p "$UKI" '.slots[] | select(.path == $p) | .uki.cmdline' <<<"$OUT")" "$(inspect_cmdline | sed 's/^ *//; s/ *$//')"
expect_eq "1: its kernel is its .uname" "$(jq -r --arg p "$UKI" '.slots[] | select(.path == $p) | .kernel' <<<"$OUT")" "$V"

# 2
printf '[policy]\nmode = off\n' >"$R/etc/memcg-policy.conf"
run "2: mode = off: check says drift before apply" 1 "$M" --root "$R" check
run "2: apply --regenerate" 0 "$M" --root "$R" apply --regenerate
check "2: says it rebuilt the UKI" grep -q "^rebuilt $UKI" <<<"$OUT"
check "2: next boot: memcg off" grep -q "^next boot of the image ($V): memcg off" <<<"$OUT"
check "2: the rebuilt UKI's .cmdline (ukify inspect) has cgroup_disable=memory" has_token "$(inspect_cmdline)"
run "2: check: in sync" 0 "$M" --root "$R" check

# 3: the UKI rebuilt by hand from a line without the token
cp "$R/etc/kernel/cmdline" "$W/cmdline.tool"
echo "root=UUID=5e2a4c1b-0000-4000-8000-000000000001 ro quiet" >"$R/etc/kernel/cmdline"
in_image kernel-install add "$V" "/boot/vmlinuz-$V" "/boot/initrd.img-$V" >/dev/null 2>&1
cp "$W/cmdline.tool" "$R/etc/kernel/cmdline"
run "3: a UKI without the token: check says drift" 1 "$M" --root "$R" check
run "3: apply without --regenerate: exit 1" 1 "$M" --root "$R" apply
check "3: names the UKI not rebuilt" grep -q "$UKI: not carrying the decision" <<<"$ERR"
check "3: the next boot is memcg on, as it is" grep -q "^next boot of the image ($V): memcg on" <<<"$OUT"
run "3: apply --regenerate puts it right" 0 "$M" --root "$R" apply --regenerate
check "3: the UKI has the token again" has_token "$(inspect_cmdline)"

# 4
run "4: revert --regenerate" 0 "$M" --root "$R" revert --regenerate
check_not "4: /etc/kernel/cmdline without the token" has_token "$(cat "$R/etc/kernel/cmdline")"
check_not "4: the UKI rebuilt without the token" has_token "$(inspect_cmdline)"
check "4: next boot: memcg on" grep -q "^next boot of the image ($V): memcg on" <<<"$OUT"

# 5: the package's plugins and program in the image; the policy still
# says off after that revert, so the next kernel update puts the token
# back: into /etc/kernel/cmdline before the UKI is built from it
for h in 55 95; do
	sed 's|@SBINDIR@|/usr/sbin|g' "$TOP/hooks/$h-memcg-policy.install" >"$R/usr/lib/kernel/install.d/$h-memcg-policy.install"
	chmod 0755 "$R/usr/lib/kernel/install.d/$h-memcg-policy.install"
done
install -m 0755 "$M" "$R/usr/sbin/memcg-policy"
run "5: a kernel update: kernel-install add, the plugins in it" 0 in_image kernel-install add "$V" "/boot/vmlinuz-$V" "/boot/initrd.img-$V"
check "5: /etc/kernel/cmdline has the token again" has_token "$(cat "$R/etc/kernel/cmdline")"
check "5: the UKI built in that update has it (55 before 60-ukify)" has_token "$(inspect_cmdline)"
run "5: check in the image: in sync" 0 in_image /usr/sbin/memcg-policy check
run "5: check with --root: in sync" 0 "$M" --root "$R" check

# 6: with the plugins in the image, the tool's own rebuild runs them
# (kernel-install add): they must not wait for the lock the tool holds
printf '[policy]\nmode = on\n' >"$R/etc/memcg-policy.conf"
run "6: apply --regenerate with the package's plugins in the image ends (no wait for its own lock)" 0 \
	timeout 300 "$M" --root "$R" apply --regenerate
check_not "6: the UKI rebuilt without the token" has_token "$(inspect_cmdline)"
run "6: check: in sync" 0 "$M" --root "$R" check

# 7: only the UKI to put right (rebuilt by hand from an older line):
# --json says it changed something, and names the UKI as rebuilt
printf '[policy]\nmode = off\n' >"$R/etc/memcg-policy.conf"
run "7: apply --regenerate" 0 "$M" --root "$R" apply --regenerate
cp "$R/etc/kernel/cmdline" "$W/cmdline.tool"
echo "root=UUID=5e2a4c1b-0000-4000-8000-000000000001 ro quiet" >"$R/etc/kernel/cmdline"
in_image env MEMCG_POLICY_REBUILDING=1 kernel-install add "$V" "/boot/vmlinuz-$V" "/boot/initrd.img-$V" >/dev/null 2>&1
cp "$W/cmdline.tool" "$R/etc/kernel/cmdline"
run "7: apply --regenerate --json, the UKI alone drifting" 0 "$M" --root "$R" --json apply --regenerate
expect_eq "7: --json: changed is true when only a UKI was rebuilt" "$(jq -r .changed <<<"$OUT")" true
expect_eq "7: --json: the UKI is listed as rebuilt" \
	"$(jq -r --arg p "$UKI" '.files[] | select(.path == $p) | .action' <<<"$OUT")" rebuilt
check "7: the UKI has the token" has_token "$(inspect_cmdline)"
finish
