#!/bin/bash
# apply / check / revert on the fixture roots of tests/fixtures/roots, with
# golden files in tests/fixtures/expected/ROOT-MODE/ (only the files that
# change; every other file must keep its bytes). Then the idempotence,
# token-edit and safety properties of issue "Apply".
. "$TOP/tests/lib.sh"
CFG="$FIX/configs"
EXP="$FIX/expected"

# kernels for each fixture root: "VERSION CONFIG" lines
kernels_of() {
	case $1 in
	fedora)
		echo "6.5.6-300.fc39.x86_64 debian12-amd64.config"
		echo "6.6.8-200.fc39.x86_64 debian12-amd64.config"
		echo "6.7.4-200.fc39.x86_64 debian12-amd64.config" ;;
	systemd-boot-xbootldr)
		echo "6.8.11-300.fc40.x86_64 debian12-amd64.config"
		echo "6.9.7-200.fc40.x86_64 debian12-amd64.config" ;;
	arch) echo "6.7.4-arch1-1 debian12-amd64.config" ;;
	rpios) echo "6.6.51+rpt-rpi-2712 rpi-6.6-bcm2712.config" ;;
	raspi-firmware) echo "6.1.0-50-rpi debian12-rpi-armel.config" ;;
	esac
}

# setup NAME MODE: a copy of the fixture root with its kernels and a policy
setup() {
	local name=$1 mode=$2 ver cfg
	root=$(mkroot)
	cp -a "$FIX/roots/$name/." "$root/"
	while read -r ver cfg; do
		add_kernel "$root" "$ver" "$CFG/$cfg"
	done < <(kernels_of "$name")
	case $mode in
	auto-needs)
		printf '[policy]\nmode = auto\n' | write_policy "$root/etc/memcg-policy.conf"
		mkdir -p "$root/usr/bin"
		printf '#!/bin/sh\n' >"$root/usr/bin/containerd"
		chmod 0755 "$root/usr/bin/containerd" ;;
	*) printf '[policy]\nmode = %s\n' "$mode" | write_policy "$root/etc/memcg-policy.conf" ;;
	esac
	orig=$(mkroot)
	cp -a "$root/." "$orig/"
}

# a file's identity: a link's target, else a hash of its bytes
ident() { if [ -L "$1" ]; then readlink "$1"; else sha256sum <"$1" | cut -c1-16; fi; }

# tree_state DIR: path, inode, mtime and hash of every file, except the
# tool's own journal and lock
tree_state() {
	(cd "$1" && find . \( -path ./var/lib/memcg-policy -o -path ./run \) -prune -o \( -type f -o -type l \) -print |
		sort | while read -r f; do
			printf '%s %s %s\n' "$f" "$(stat -c '%i %Y' "$f")" "$(ident "$f")"
		done)
}
tree_bytes() {
	(cd "$1" && find . \( -path ./var/lib/memcg-policy -o -path ./run \) -prune -o \( -type f -o -type l \) -print |
		sort | while read -r f; do
			printf '%s %s\n' "$f" "$(ident "$f")"
		done)
}

# compare_golden NAME-MODE: every file is its golden copy if there is one,
# else its original bytes
compare_golden() {
	local case=$1 bad=""
	while read -r f; do
		f=${f#./}
		local want="$orig/$f"
		[ -f "$EXP/$case/$f" ] && want="$EXP/$case/$f"
		if ! cmp -s "$root/$f" "$want"; then
			bad="$bad $f"
			diff -u "$want" "$root/$f" | head -20 | sed 's/^/    /'
		fi
	done < <(cd "$root" && find . \( -path ./var/lib/memcg-policy -o -path ./run \) -prune -o -type f -print | sort)
	# golden files that were not produced
	if [ -d "$EXP/$case" ]; then
		while read -r f; do
			[ -f "$root/${f#./}" ] || bad="$bad missing:${f#./}"
		done < <(cd "$EXP/$case" && find . -type f)
	fi
	if [ -z "$bad" ]; then pass "$case: files match the golden files"; else fail "$case: files differ:$bad"; fi
}

for name in fedora systemd-boot-xbootldr arch rpios raspi-firmware; do
	for mode in on off auto-needs auto; do
		case_name="$name-$mode"
		golden="$case_name"
		[ "$mode" = auto-needs ] && golden="$name-on"
		setup "$name" "$mode"
		expect_exit "$case_name: check before apply" "$(if [ -d "$EXP/$golden" ] && [ "$mode" != auto ]; then echo 1; else echo 0; fi)" \
			"$MEMCG_POLICY" --root "$root" check
		expect_exit "$case_name: apply" 0 "$MEMCG_POLICY" --root "$root" apply
		if [ "$mode" = auto ]; then
			# nothing needs memcg and otherwise = keep: nothing changes
			expect_eq "$case_name: keep changes nothing" "$(tree_bytes "$root")" "$(tree_bytes "$orig")"
		else
			compare_golden "$golden"
		fi
		before=$(tree_state "$root")
		expect_exit "$case_name: second apply" 0 "$MEMCG_POLICY" --root "$root" apply
		expect_eq "$case_name: second apply says nothing to change" "$(head -n 1 <<<"$OUT")" "nothing to change"
		check "$case_name: second apply ends with what the next boot of the image gives" \
			grep -qxE 'next boot of the image \([^)]+\): memcg (on|off)' <<<"$(tail -n 1 <<<"$OUT")"
		expect_eq "$case_name: second apply prints two lines" "$(wc -l <<<"$OUT")" 2
		expect_eq "$case_name: second apply writes nothing (inodes, mtimes)" "$(tree_state "$root")" "$before"
		expect_exit "$case_name: check after apply" 0 "$MEMCG_POLICY" --root "$root" check
		expect_exit "$case_name: revert" 0 "$MEMCG_POLICY" --root "$root" revert
		expect_eq "$case_name: revert gives back the original bytes" "$(tree_bytes "$root")" "$(tree_bytes "$orig")"
	done
done

# ---- the state apply reports is what a new look finds ----
# apply reports the state after its commit from what it wrote (without
# reading the root again where the decisions cannot depend on the slots'
# bytes): its --json evaluation must be the one status gives right after,
# on every layout, for every mode (keep included), when files are changed
# and when a file is created.
state_of() { jq -S 'del(.command, .changed, .files, .dry_run, .exit_code)'; }
for name in fedora systemd-boot-xbootldr arch rpios raspi-firmware; do
	for mode in on off auto-needs auto; do
		setup "$name" "$mode"
		expect_exit "$name-$mode: apply --json" 0 "$MEMCG_POLICY" --root "$root" --json apply
		reported=$(state_of <<<"$OUT")
		expect_exit "$name-$mode: status --json after it" 0 "$MEMCG_POLICY" --root "$root" --json status
		expect_eq "$name-$mode: the state apply reported is the state status finds" "$reported" "$(state_of <<<"$OUT")"
	done
done
setup fedora off
rm -f "$root/etc/kernel/cmdline"
expect_exit "fedora-off, /etc/kernel/cmdline missing: apply --json" 0 "$MEMCG_POLICY" --root "$root" --json apply
reported=$(state_of <<<"$OUT")
check "fedora-off, /etc/kernel/cmdline missing: apply created it" test -f "$root/etc/kernel/cmdline"
expect_exit "fedora-off, /etc/kernel/cmdline missing: status --json after it" 0 "$MEMCG_POLICY" --root "$root" --json status
expect_eq "fedora-off, /etc/kernel/cmdline missing: the state apply reported is the state status finds" \
	"$reported" "$(state_of <<<"$OUT")"

# ---- dry run: a unified diff, nothing written ----
setup fedora off
before=$(tree_state "$root")
expect_exit "dry-run: exit 0" 0 "$MEMCG_POLICY" --root "$root" apply --dry-run
expect_eq "dry-run: nothing written" "$(tree_state "$root")" "$before"
check "dry-run: diff header for the entry" grep -q '^+++ b/boot/loader/entries/6a9857a393724b7a981ebb5b8495b9ea-6.7.4-200.fc39.x86_64.conf' <<<"$OUT"
check "dry-run: the added token on a + line" grep -q '^+options .*cgroup_disable=memory$' <<<"$OUT"
if [ -e "$root/var/lib/memcg-policy/journal.json" ]; then fail "dry-run: no journal"; else pass "dry-run: no journal"; fi

# ---- JSON for apply and check ----
setup systemd-boot-xbootldr off
expect_exit "json check: drift exit 1" 1 "$MEMCG_POLICY" --root "$root" --json check
expect_eq "json check: in_sync false, slots listed" "$(jq -c '[.in_sync, ([.slots[] | select(.state == "drift")] | length)]' <<<"$OUT")" '[false,2]'
expect_exit "json apply: exit 0" 0 "$MEMCG_POLICY" --root "$root" --json apply
# two entries, and /etc/kernel/cmdline created from the default entry (layout=bls)
expect_eq "json apply: changed and files" "$(jq -c '[.changed, (.files | length), .kernels[0].decision]' <<<"$OUT")" '[true,3,"off"]'
expect_eq "json apply: UKI reported unmanaged" "$(jq -r '.slots[] | select(.kind == "uki") | .state' <<<"$OUT")" unmanaged
expect_exit "json apply again: exit 0" 0 "$MEMCG_POLICY" --root "$root" --json apply
expect_eq "json apply again: nothing changed" "$(jq -c '[.changed, .files, .in_sync]' <<<"$OUT")" '[false,[],true]'

# ---- token edits keep everything else ----
setup fedora on
expect_exit "on: apply fedora" 0 "$MEMCG_POLICY" --root "$root" apply
check "on: cgroup_disable=memory,pressure becomes cgroup_disable=pressure" \
	grep -q '^options root=UUID=8f2b7c1e-4d3a-4b8e-9c1f-2a6d5e7f8a9b ro rootflags=subvol=root cgroup_disable=pressure rhgb quiet$' \
	"$root/boot/loader/entries/6a9857a393724b7a981ebb5b8495b9ea-6.6.8-200.fc39.x86_64.conf"

edit_root() {
	root=$(mkroot)
	add_kernel "$root" 6.1.0-41-amd64 "$CFG/debian12-amd64.config"
	mkdir -p "$root/boot/loader/entries"
	printf '[policy]\nmode = %s\n' "$1" | write_policy "$root/etc/memcg-policy.conf"
}
edit_root off
cat >"$root/boot/loader/entries/debian.conf" <<'X'
#  a comment that says cgroup_disable=memory
title   Debian

version 6.1.0-41-amd64
linux   /vmlinuz-6.1.0-41-amd64
options  root=/dev/sda1   quiet	foo="cgroup_disable=memory bar"  -- init-arg cgroup_enable=memory
X
expect_exit "edit: apply off" 0 "$MEMCG_POLICY" --root "$root" apply
expect_eq "edit: quoted value left alone, new token before --, init args kept, spacing kept" \
	"$(cat "$root/boot/loader/entries/debian.conf")" "$(cat <<'X'
#  a comment that says cgroup_disable=memory
title   Debian

version 6.1.0-41-amd64
linux   /vmlinuz-6.1.0-41-amd64
options  root=/dev/sda1   quiet	foo="cgroup_disable=memory bar"  cgroup_disable=memory -- init-arg cgroup_enable=memory
X
)"

edit_root on
cat >"$root/boot/loader/entries/debian.conf" <<'X'
title Debian
version 6.1.0-41-amd64
linux /vmlinuz-6.1.0-41-amd64
options root=/dev/sda1 cgroup-disable=memory quiet
options cgroup_disable=pressure,memory splash
X
expect_exit "edit: apply on, two options lines" 0 "$MEMCG_POLICY" --root "$root" apply
expect_eq "edit: '-' spelling and list items removed in every options line" \
	"$(cat "$root/boot/loader/entries/debian.conf")" "$(printf 'title Debian\nversion 6.1.0-41-amd64\nlinux /vmlinuz-6.1.0-41-amd64\noptions root=/dev/sda1 quiet\noptions cgroup_disable=pressure splash')"
expect_exit "edit: revert" 0 "$MEMCG_POLICY" --root "$root" revert
check "edit: revert puts the admin's tokens back" grep -q '^options root=/dev/sda1 cgroup-disable=memory quiet$' "$root/boot/loader/entries/debian.conf"

# ---- check exit 5: in sync but the running kernel runs otherwise ----
# This reads the live host (read-only): its running memcg state decides
# which exit code is right. In a chroot (a build chroot) there is no live
# host to read: the tool reads / as an image there (tests/cmd/chroot.sh),
# and says so in its report.
if [ "$("$MEMCG_POLICY" --json decide 2>/dev/null | jq -r .chroot)" = true ]; then
	echo "SKIP: check on the live host (this runs in a chroot)"
else
	running=$(awk '$1 == "memory" { print $4 }' /proc/cgroups 2>/dev/null)
	if [ -r /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then running=1; fi
	pol=$(mkroot)/p.conf
	if [ "$running" = 1 ]; then other=off; else other=on; fi
	printf '[policy]\nmode = %s\n' "$other" | write_policy "$pol"
	json_run "live check --json" "$MEMCG_POLICY" --config "$pol" --json check
	rc=$RC
	json_run "live status --json" "$MEMCG_POLICY" --config "$pol" --json status
	in_sync=$(jq -r .in_sync <<<"$OUT")
	if [ "$in_sync" = true ]; then want=5; else want=1; fi
	expect_eq "check on the live host: policy '$other' against running memcg gives $want" "$rc" "$want"
fi

# ---- safety ----
# an absolute symlink inside the image points into the image
host=$(mkroot)
echo "host file: must not change" >"$host/cmdline"
setup fedora off
rm "$root/etc/kernel/cmdline"
mkdir -p "$root$host"
echo "root=/dev/image ro" >"$root$host/cmdline"
ln -s "$host/cmdline" "$root/etc/kernel/cmdline"
expect_exit "symlink: apply" 0 "$MEMCG_POLICY" --root "$root" apply
expect_eq "symlink: the image's target is edited" "$(cat "$root$host/cmdline")" "root=/dev/image ro cgroup_disable=memory"
expect_eq "symlink: the host file is unchanged" "$(cat "$host/cmdline")" "host file: must not change"
check "symlink: the link itself is kept" test -L "$root/etc/kernel/cmdline"

host=$(mkroot)
mkdir -p "$host/entries"
printf 'title host\nversion 6.1.0-41-amd64\nlinux /vmlinuz\noptions root=/dev/host\n' >"$host/entries/host.conf"
edit_root off
mkdir -p "$root$host/entries"
printf 'title image\nversion 6.1.0-41-amd64\nlinux /vmlinuz\noptions root=/dev/image\n' >"$root$host/entries/image.conf"
rmdir "$root/boot/loader/entries"
ln -s "$host/entries" "$root/boot/loader/entries"
expect_exit "symlinked entries dir: apply" 0 "$MEMCG_POLICY" --root "$root" apply
check "symlinked entries dir: the image's entry is edited" grep -q '^options root=/dev/image cgroup_disable=memory$' "$root$host/entries/image.conf"
expect_eq "symlinked entries dir: the host's entries are unchanged" "$(cat "$host/entries/host.conf")" "$(printf 'title host\nversion 6.1.0-41-amd64\nlinux /vmlinuz\noptions root=/dev/host')"
expect_eq "symlinked entries dir: nothing new on the host" "$(ls "$host/entries")" "host.conf"

# a failure injected at each step leaves every file as it was, exit 4
setup fedora off
before=$(tree_bytes "$root")
MEMCG_POLICY_FAILPOINT=1000000 "$MEMCG_POLICY" --root "$root" apply >/dev/null 2>&1
steps_ok=$?
root_steps=$root
setup fedora off
for n in 1 2 3 4 5 6 7 8 9 10 11 12; do
	MEMCG_POLICY_FAILPOINT=$n "$MEMCG_POLICY" --root "$root" apply >/dev/null 2>"$root/../err.$n"
	rc=$?
	if [ "$rc" = 0 ]; then
		# the failpoint is past the last step: the run completed
		break
	fi
	expect_eq "failpoint $n: exit 4" "$rc" 4
	expect_eq "failpoint $n: every file as it was" "$(tree_bytes "$root")" "$before"
	leftovers=$(find "$root" -name '*.memcg-policy.*' | wc -l)
	expect_eq "failpoint $n: no temp file left" "$leftovers" 0
done
if [ "$n" -gt 3 ]; then pass "failpoints: more than three steps exercised ($((n - 1)))"; else fail "failpoints: only $((n - 1)) steps"; fi
expect_eq "failpoints: the uninterrupted run succeeds" "$steps_ok" 0
[ -n "$root_steps" ]

# a read-only target: exit 4, nothing changed
setup systemd-boot-xbootldr off
before=$(tree_bytes "$root")
if private_mounts; then
	unshare -m bash -c "mount --bind '$root/boot' '$root/boot' && mount -o remount,bind,ro '$root/boot' && exec '$MEMCG_POLICY' --root '$root' apply" >/dev/null 2>"$root/../ro.err"
	expect_eq "read-only /boot: exit 4" "$?" 4
	expect_eq "read-only /boot: nothing changed" "$(tree_bytes "$root")" "$before"
	check "read-only /boot: the message names the file system problem" grep -qi 'read-only' "$root/../ro.err"
else
	echo "SKIP: read-only /boot (needs root and a private mount namespace)"
fi

# --hook: an input error is a warning and exit 0, unless strict
setup arch off
printf '[policy]\nmode = bogus\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "hook: policy error exits 0" 0 "$MEMCG_POLICY" --root "$root" apply --hook
check "hook: with a warning" grep -q 'warning' <<<"$ERR"
check "hook: the warning keeps file:line" grep -q 'memcg-policy.conf:2' <<<"$ERR"
expect_exit "no hook: policy error exits 3" 3 "$MEMCG_POLICY" --root "$root" apply
setup arch off
printf '[policy]\nmode = off\nstrict = yes\n' | write_policy "$root/etc/memcg-policy.conf"
printf 'garbage\n' >"$root/boot/config-6.7.4-arch1-1"
expect_exit "hook + strict: input error exits 3" 3 "$MEMCG_POLICY" --root "$root" apply --hook
setup arch off
expect_exit "hook: quiet on success" 0 "$MEMCG_POLICY" --root "$root" apply --hook
expect_eq "hook: prints nothing" "$OUT$ERR" ""
expect_exit "hook: --kernel of an installed kernel" 0 "$MEMCG_POLICY" --root "$root" apply --kernel 6.7.4-arch1-1 --hook

# ---- set ----
setup arch auto
cat >"$root/etc/memcg-policy.conf" <<'X'
# site policy, managed by hand
[policy]
# we keep the lite mode
mode = auto   # was on
accounting = lite

[auto]
otherwise = keep
X
expect_exit "set off: exit 0" 0 "$MEMCG_POLICY" --root "$root" set off
expect_eq "set off: comments and other keys kept" "$(cat "$root/etc/memcg-policy.conf")" "$(cat <<'X'
# site policy, managed by hand
[policy]
# we keep the lite mode
mode = off   # was on
accounting = lite

[auto]
otherwise = keep
X
)"
check "set off: applied" grep -q 'cgroup_disable=memory' "$root/boot/loader/entries/arch.conf"
expect_exit "set on --no-apply: exit 0" 0 "$MEMCG_POLICY" --root "$root" set on --no-apply
check "set on --no-apply: recorded" grep -q '^mode = on' "$root/etc/memcg-policy.conf"
check "set on --no-apply: not applied" grep -q 'cgroup_disable=memory' "$root/boot/loader/entries/arch.conf"
expect_exit "set on: check says drift first" 1 "$MEMCG_POLICY" --root "$root" check
rm "$root/etc/memcg-policy.conf"
expect_exit "set off: creates the policy file" 0 "$MEMCG_POLICY" --root "$root" set off --no-apply
expect_eq "set off: created file" "$(cat "$root/etc/memcg-policy.conf")" "$(printf '[policy]\nmode = off')"
expect_eq "set off: created file mode 0644" "$(stat -c %a "$root/etc/memcg-policy.conf")" 644
expect_exit "set: bad value exit 2" 2 "$MEMCG_POLICY" --root "$root" set sometimes
expect_exit "set: no value exit 2" 2 "$MEMCG_POLICY" --root "$root" set
printf '[policy]\nmode = on\nbogus = 1\n' >"$root/etc/memcg-policy.conf"
before=$(tree_bytes "$root")
expect_exit "set: a broken policy is not rewritten (exit 3)" 3 "$MEMCG_POLICY" --root "$root" set off
expect_eq "set: nothing written" "$(tree_bytes "$root")" "$before"

# ---- revert --kernel: one kernel's files only ----
setup fedora off
expect_exit "revert --kernel: apply" 0 "$MEMCG_POLICY" --root "$root" apply
e5="boot/loader/entries/6a9857a393724b7a981ebb5b8495b9ea-6.5.6-300.fc39.x86_64.conf"
e7="boot/loader/entries/6a9857a393724b7a981ebb5b8495b9ea-6.7.4-200.fc39.x86_64.conf"
expect_exit "revert --kernel: exit 0" 0 "$MEMCG_POLICY" --root "$root" revert --kernel 6.5.6-300.fc39.x86_64
check "revert --kernel: that kernel's entry has its original bytes" cmp -s "$root/$e5" "$orig/$e5"
check "revert --kernel: another kernel's entry keeps the decision" grep -q 'cgroup_disable=memory' "$root/$e7"
check "revert --kernel: /etc/kernel/cmdline (global) keeps the decision" grep -q 'cgroup_disable=memory' "$root/etc/kernel/cmdline"
expect_exit "revert --kernel: the rest reverts later" 0 "$MEMCG_POLICY" --root "$root" revert
check "revert --kernel, then revert: the other entry is back too" cmp -s "$root/$e7" "$orig/$e7"
setup fedora off
expect_exit "revert --kernel, entry gone: apply" 0 "$MEMCG_POLICY" --root "$root" apply
rm "$root/$e5"
expect_exit "revert --kernel, entry gone: exit 0" 0 "$MEMCG_POLICY" --root "$root" revert --kernel 6.5.6-300.fc39.x86_64
check "revert --kernel, entry gone: its record is dropped" sh -c "! grep -q '6.5.6-300.fc39.x86_64.conf' '$root/var/lib/memcg-policy/journal.json'"
check "revert --kernel, entry gone: other records stay" grep -q '6.7.4-200.fc39.x86_64.conf' "$root/var/lib/memcg-policy/journal.json"

# ---- nothing to change writes nothing, not even the lock file ----
setup arch on
expect_exit "in sync: apply" 0 "$MEMCG_POLICY" --root "$root" apply
check "in sync: no lock file created" test ! -e "$root/run/memcg-policy.lock"
check "in sync: no journal created" test ! -e "$root/var/lib/memcg-policy"
setup arch off
expect_exit "changes: apply" 0 "$MEMCG_POLICY" --root "$root" apply
check "changes: the lock file is made" test -f "$root/run/memcg-policy.lock"
# with the lock file there, a run takes the lock first; a read-only image
# still answers
if private_mounts; then
	unshare -m bash -c "mount --bind '$root' '$root' && mount -o remount,bind,ro '$root' && exec '$MEMCG_POLICY' --root '$root' apply" >/dev/null 2>"$root/../ro2.err"
	expect_eq "read-only image in sync: apply exits 0" "$?" 0
else
	echo "SKIP: read-only image in sync (needs root and a private mount namespace)"
fi
