#!/bin/bash
# set on|off --dry-run: what set would record and the diff of every file
# apply would then change, nothing written (not the policy, not the lock,
# not the journal); its last line says the next boot as the run would
# leave it, as apply --dry-run's does, never the state now under a diff
# that changes it. Overridden modes, GRUB menus, --json and --no-apply.
. "$TOP/tests/lib.sh"

says() { # NAME TEXT PATTERN
	case $2 in
	*"$3"*) pass "$1" ;;
	*) fail "$1" "$2" ;;
	esac
}
lacks() { # NAME TEXT PATTERN
	case $2 in
	*"$3"*) fail "$1" "$2" ;;
	*) pass "$1" ;;
	esac
}
# snap ROOT: every path of the tree with its bytes' hash and mode
snap() { (cd "$1" && find . -printf '%p %m\n' -type f -exec md5sum {} \; | sort | md5sum); }

VER=6.1.0-41-amd64
ENTRY=boot/loader/entries/debian-$VER.conf
bls_root() { # MODE
	root=$(mkroot)
	add_kernel "$root" "$VER" "$FIX/configs/debian12-amd64.config"
	printf 'ID=debian\n' >"$root/etc/os-release"
	mkdir -p "$root/boot/loader/entries"
	printf 'title Debian\nversion %s\nlinux /vmlinuz-%s\noptions root=/dev/sda1 quiet\n' "$VER" "$VER" >"$root/$ENTRY"
	printf '# the fleet'"'"'s policy\n[policy]\nmode = %s\n' "$1" | write_policy "$root/etc/memcg-policy.conf"
}

# --- a BLS root, mode on: set off --dry-run
bls_root on
s0=$(snap "$root")
expect_exit "set off --dry-run: exit 0" 0 "$MEMCG_POLICY" --root "$root" set off --dry-run
expect_eq "set off --dry-run: nothing written (policy, entry, no lock, no journal)" "$(snap "$root")" "$s0"
check "set off --dry-run: no journal directory" test ! -e "$root/var/lib/memcg-policy"
says "set off --dry-run: says what it would record, and where" "$OUT" "$root/etc/memcg-policy.conf: would record mode = off"
says "set off --dry-run: the policy's diff (header)" "$OUT" "+++ b/etc/memcg-policy.conf"
says "set off --dry-run: the policy's diff (the mode)" "$OUT" "$(printf -- '-mode = on\n+mode = off')"
says "set off --dry-run: the policy's diff keeps the comment" "$OUT" " # the fleet's policy"
says "set off --dry-run: the entry's diff (header)" "$OUT" "+++ b/$ENTRY"
says "set off --dry-run: the entry's diff (the token added)" "$OUT" "+options root=/dev/sda1 quiet cgroup_disable=memory"
says "set off --dry-run: says nothing was written" "$OUT" "a dry run: nothing written"
expect_eq "set off --dry-run: the last line is the next boot once applied" "$(tail -n 1 <<<"$OUT")" \
	"once applied, next boot of the image ($VER): memcg off (now: on)"
lacks "set off --dry-run: no line with the state now (memcg on)" "$OUT" "): memcg on"
expect_eq "set off --dry-run: nothing on stderr" "$ERR" ""

# the same plan as set off would carry out, and then in fact does
dry=$(grep -E '^[-+@ ]' <<<"$OUT")
expect_exit "set off: exit 0" 0 "$MEMCG_POLICY" --root "$root" set off
check "set off: the entry has the token the dry run showed" grep -qx 'options root=/dev/sda1 quiet cgroup_disable=memory' "$root/$ENTRY"
check "set off: the policy says mode = off, the comment kept" \
	test "$(cat "$root/etc/memcg-policy.conf")" = "$(printf "# the fleet's policy\n[policy]\nmode = off")"
check "set off --dry-run showed a diff" test -n "$dry"

# the mode recorded already: nothing would change, the state now is the next boot's
s0=$(snap "$root")
expect_exit "set off --dry-run again: exit 0" 0 "$MEMCG_POLICY" --root "$root" set off --dry-run
says "set off --dry-run again: the mode is recorded already" "$OUT" "mode = off is recorded already"
lacks "set off --dry-run again: no diff" "$OUT" "+++ "
expect_eq "set off --dry-run again: the next boot as it is" "$(tail -n 1 <<<"$OUT")" "next boot of the image ($VER): memcg off"
expect_eq "set off --dry-run again: nothing written" "$(snap "$root")" "$s0"

# --- apply --dry-run ends the same way (the policy changed by hand)
bls_root off
expect_exit "apply --dry-run (mode off by hand): exit 0" 0 "$MEMCG_POLICY" --root "$root" apply --dry-run
expect_eq "apply --dry-run: the last line is the next boot once applied" "$(tail -n 1 <<<"$OUT")" \
	"once applied, next boot of the image ($VER): memcg off (now: on)"

# --- --json: the files it would change, dry_run true, nothing written
bls_root on
s0=$(snap "$root")
json_run "set off --dry-run --json" "$MEMCG_POLICY" --root "$root" --json set off --dry-run
expect_eq "set off --dry-run --json: command set, exit 0, dry_run and changed true" \
	"$(jq -r '[.command, .exit_code, .dry_run, .changed] | @tsv' <<<"$OUT")" "$(printf 'set\t0\ttrue\ttrue')"
expect_eq "set off --dry-run --json: the policy and the entry would change" \
	"$(jq -r '.files[] | "\(.path) \(.action) \(.added | join(","))"' <<<"$OUT")" \
	"$(printf '/etc/memcg-policy.conf changed \n/%s changed cgroup_disable=memory' "$ENTRY")"
expect_eq "set off --dry-run --json: the decision is the one the mode would give" "$(jq -r .decision <<<"$OUT")" off
expect_eq "set off --dry-run --json: nothing written" "$(snap "$root")" "$s0"

# --- no policy file yet: it would be created
bls_root on
rm "$root/etc/memcg-policy.conf"
s0=$(snap "$root")
expect_exit "set off --dry-run, no policy file: exit 0" 0 "$MEMCG_POLICY" --root "$root" set off --dry-run
says "set off --dry-run, no policy file: would record" "$OUT" "would record mode = off"
says "set off --dry-run, no policy file: the file it would create, as a diff" "$OUT" "$(printf -- '--- /dev/null\n+++ b/etc/memcg-policy.conf')"
check "set off --dry-run, no policy file: not created" test ! -e "$root/etc/memcg-policy.conf"
expect_eq "set off --dry-run, no policy file: nothing written" "$(snap "$root")" "$s0"

# --- a [kernel] section overrides the mode: nothing would be applied, exit 1
bls_root on
printf '[kernel %s]\nmode = on\n' "$VER" | write_policy "$root/etc/memcg-policy.d/50-pin.conf"
s0=$(snap "$root")
expect_exit "set off --dry-run under a [kernel] mode = on: exit 1" 1 "$MEMCG_POLICY" --root "$root" set off --dry-run
says "set off --dry-run overridden: names the overriding file" "$ERR" "mode = off would be recorded, but $root/etc/memcg-policy.d/50-pin.conf:2 sets mode = on for $VER"
says "set off --dry-run overridden: nothing would be applied" "$ERR" "nothing would be applied"
lacks "set off --dry-run overridden: no boot file's diff" "$OUT" "+++ b/$ENTRY"
expect_eq "set off --dry-run overridden: nothing written" "$(snap "$root")" "$s0"

# --- usage: --dry-run with --no-apply, and a bad mode
bls_root on
s0=$(snap "$root")
expect_exit "set off --dry-run --no-apply: usage error, exit 2" 2 "$MEMCG_POLICY" --root "$root" set off --dry-run --no-apply
says "set --dry-run --no-apply: says why" "$ERR" "--dry-run and --no-apply do not go together"
expect_exit "set maybe --dry-run: usage error, exit 2" 2 "$MEMCG_POLICY" --root "$root" set maybe --dry-run
expect_eq "usage errors wrote nothing" "$(snap "$root")" "$s0"
expect_exit "set --help: exit 0" 0 "$MEMCG_POLICY" set --help
says "set --help lists --dry-run" "$OUT" "--dry-run"

# --- a policy file set would refuse to rewrite: refused the same way
bls_root on
chmod 0666 "$root/etc/memcg-policy.conf"
s0=$(snap "$root")
expect_exit "set off --dry-run over a group/world-writable policy: exit 3" 3 "$MEMCG_POLICY" --root "$root" set off --dry-run
says "set off --dry-run: names the unsafe file" "$ERR" "unsafe policy file"
expect_eq "set off --dry-run over an unsafe policy: nothing written" "$(snap "$root")" "$s0"

# --- GRUB: the menu is regenerated by apply; the dry run says so
root=$(mkroot)
add_kernel "$root" 6.8.0-57-generic "$FIX/configs/debian12-cloud-amd64.config"
: >"$root/boot/initrd.img-6.8.0-57-generic"
mkdir -p "$root/etc/default/grub.d" "$root/usr/sbin" "$root/boot/grub"
image_program "$root"
cp "$FIX/grub/cases/cloudimg/default-grub" "$root/etc/default/grub"
cp "$FIX/grub/cases/cloudimg/grub.d/"*.cfg "$root/etc/default/grub.d/"
printf '#! /bin/sh\nexit 0\n' >"$root/usr/sbin/grub-mkconfig"
chmod 0755 "$root/usr/sbin/grub-mkconfig"
printf '[policy]\nmode = on\n' | write_policy "$root/etc/memcg-policy.conf"
s0=$(snap "$root")
expect_exit "GRUB: set off --dry-run: exit 0" 0 "$MEMCG_POLICY" --root "$root" set off --dry-run
says "GRUB: set off --dry-run: the recorded tokens' diff" "$OUT" "+add cgroup_disable=memory"
expect_eq "GRUB: set off --dry-run: the last line is what the regenerated menu is to carry" "$(tail -n 1 <<<"$OUT")" \
	"once applied and the menu regenerated, next boot of the image (6.8.0-57-generic): memcg off"
expect_eq "GRUB: set off --dry-run: nothing written" "$(snap "$root")" "$s0"
