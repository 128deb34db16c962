#!/bin/bash
# Concurrency (issue "Hostile input and faults", part 4): eight runs of
# `set on`, `set off` and `apply` at once against one root, a few rounds.
#   - no torn file: a sampler reads the boot entries, /etc/kernel/cmdline
#     and the policy file over and over while the runs go on; every sample
#     is one of the contents that some sequence of uninterrupted runs gives
#     (computed first, and checked to be closed under further runs), and the
#     journal always parses as JSON;
#   - every run exits 0; afterwards `check` exits 0 and `decide` says what
#     the policy file says: the files match the final policy; no temp file
#     is left; revert gives back the original bytes;
#   - a run that waits says so: with MEMCG_POLICY_LOCK_HOLD_MS (test only:
#     a run sleeps that long after taking the lock, src/util.c) some run
#     prints "waiting for the lock". The last round runs without it.
#   - apply's first look (no lock file yet: it looks, then takes the lock)
#     stands under the lock only when nothing it looked at changed: with
#     MEMCG_POLICY_LOOK_HOLD_MS (test only: apply sleeps between the look
#     and the lock) another run changes the policy, or touches a config,
#     meanwhile, and apply looks again and does what the files say then.
. "$TOP/tests/lib.sh"
CFG="$FIX/configs"
ENTRIES=boot/loader/entries
watched=(
	"$ENTRIES/6a9857a393724b7a981ebb5b8495b9ea-6.5.6-300.fc39.x86_64.conf"
	"$ENTRIES/6a9857a393724b7a981ebb5b8495b9ea-6.6.8-200.fc39.x86_64.conf"
	"$ENTRIES/6a9857a393724b7a981ebb5b8495b9ea-6.7.4-200.fc39.x86_64.conf"
	etc/kernel/cmdline
	etc/memcg-policy.conf
)

orig=$(mkroot)
cp -a "$FIX/roots/fedora/." "$orig/"
for v in 6.5.6-300.fc39.x86_64 6.6.8-200.fc39.x86_64 6.7.4-200.fc39.x86_64; do
	add_kernel "$orig" "$v" "$CFG/debian12-amd64.config"
done
printf '[policy]\nmode = off\n' | write_policy "$orig/etc/memcg-policy.conf"

copy() {
	local d
	d=$(mkroot)
	rm -rf "$d"
	cp -a "$1" "$d"
	echo "$d"
}
hash_of() { sha256sum <"$1" | cut -c1-16; }
record() {
	local f
	for f in "${watched[@]}"; do echo "$f $(hash_of "$1/$f")"; done
}
tree_bytes() {
	(cd "$1" && find . \( -path ./var/lib/memcg-policy -o -path ./run \) -prune -o -type f -print | sort |
		while read -r f; do echo "$f $(hash_of "$f")"; done)
}

# ---- the valid contents: every state a sequence of uninterrupted runs reaches ----
valid=$(mktemp)
record "$orig" >"$valid"
for seq in "on" "off" "on off" "off on" "on off on" "off on off" "on apply off apply on"; do
	t=$(copy "$orig")
	for m in $seq; do
		if [ "$m" = apply ]; then
			"$MEMCG_POLICY" --root "$t" apply >/dev/null 2>&1
		else
			"$MEMCG_POLICY" --root "$t" set "$m" >/dev/null 2>&1
		fi
		record "$t" >>"$valid"
	done
	rm -rf "$t"
done
sort -u -o "$valid" "$valid"
# closed: four more switches reach nothing new
t=$(copy "$orig")
new=0
for m in on off on off; do
	"$MEMCG_POLICY" --root "$t" set "$m" >/dev/null 2>&1
	new=$((new + $(record "$t" | sort | comm -23 - "$valid" | wc -l)))
done
rm -rf "$t"
expect_eq "valid contents: closed under further runs" "$new" 0
nvalid=$(wc -l <"$valid")
if [ "$nvalid" -ge 8 ]; then pass "valid contents: $nvalid (file, content) pairs"; else fail "valid contents: only $nvalid"; fi

# ---- the rounds ----
root=$(copy "$orig")
sampler() {
	local f
	while [ ! -e "$1" ]; do
		for f in "${watched[@]}"; do
			[ -e "$root/$f" ] && echo "$f $(hash_of "$root/$f")"
		done
		if [ -e "$root/var/lib/memcg-policy/journal.json" ] &&
			! jq empty "$root/var/lib/memcg-policy/journal.json" 2>/dev/null; then
			echo "BAD-JSON journal"
		fi
	done
}

waited=0
for round in 1 2 3 4; do
	hold=150
	[ "$round" -eq 4 ] && hold=""
	stop=$(mktemp -u)
	samples=$(mktemp)
	sampler "$stop" >"$samples" &
	spid=$!
	pids=()
	errs=()
	for i in 0 1 2 3 4 5 6 7; do
		case $(((i + round) % 3)) in
		0) cmd=(set on) ;;
		1) cmd=(set off) ;;
		2) cmd=(apply) ;;
		esac
		errs[i]=$(mktemp)
		MEMCG_POLICY_LOCK_HOLD_MS=$hold timeout 60 "$MEMCG_POLICY" --root "$root" "${cmd[@]}" >/dev/null 2>"${errs[i]}" &
		pids[i]=$!
	done
	bad=""
	for i in 0 1 2 3 4 5 6 7; do
		wait "${pids[i]}" || bad="$bad run$i:$?"
	done
	touch "$stop"
	wait "$spid"
	rm -f "$stop"
	if [ -z "$bad" ]; then pass "round $round: eight runs exit 0"; else fail "round $round: failed:$bad" "$(cat "${errs[@]}")"; fi
	n=$(grep -c . "$samples")
	torn=$(sort -u "$samples" | comm -23 - "$valid")
	if [ -z "$torn" ] && [ "$n" -gt 0 ]; then
		pass "round $round: $n samples, every file one of the valid contents"
	else
		fail "round $round: $n samples, unexpected:" "$torn"
	fi
	w=$(cat "${errs[@]}" | grep -c 'waiting for the lock')
	waited=$((waited + w))
	other=$(cat "${errs[@]}" | grep -v 'waiting for the lock')
	expect_eq "round $round: no other message" "$other" ""
	if [ -n "$hold" ]; then
		if [ "$w" -ge 1 ]; then pass "round $round: $w runs said they were waiting for the lock"; else fail "round $round: no run reported waiting for the lock"; fi
	fi
	rm -f "$samples" "${errs[@]}"
	expect_exit "round $round: check after the runs: in sync" 0 "$MEMCG_POLICY" --root "$root" check
	mode=$(sed -n 's/^mode = //p' "$root/etc/memcg-policy.conf")
	expect_exit "round $round: decide" 0 "$MEMCG_POLICY" --root "$root" decide
	expect_eq "round $round: the decision is the policy file's mode ($mode)" "$(head -n 1 <<<"$OUT")" "$mode"
	expect_eq "round $round: no temp file left" "$(find "$root" -name '*.memcg-policy.*' | wc -l)" 0
	check "round $round: the journal parses" jq empty "$root/var/lib/memcg-policy/journal.json"
done
echo "# lock waits reported: $waited"

expect_exit "revert after the rounds" 0 "$MEMCG_POLICY" --root "$root" revert
# revert undoes the boot files, not the policy `set` recorded: put that back by hand
printf '[policy]\nmode = off\n' >"$root/etc/memcg-policy.conf"
expect_eq "revert after the rounds: the original bytes" "$(tree_bytes "$root")" "$(tree_bytes "$orig")"
rm -f "$valid"

# ---- apply's first look, then the lock ----
with_token() { grep -l 'cgroup_disable=memory' "$1/$ENTRIES"/*.conf 2>/dev/null | wc -l; }
stands="the plan stands"
# nothing changes meanwhile: the first look's plan is committed as it is
t=$(copy "$orig")
sleep 0.1 # the copy's ctimes settle (inputs.h: older than the look by 1 ms)
expect_exit "look then lock, nothing changed: apply" 0 env MEMCG_POLICY_LOOK_HOLD_MS=200 \
	"$MEMCG_POLICY" -v --root "$t" apply
if [ "$(grep -c "$stands" <<<"$ERR")" = 1 ]; then
	pass "look then lock, nothing changed: the first look's plan stands"
else
	fail "look then lock, nothing changed: the first look's plan stands" "$ERR" \
		"$(cd "$t" && find . -printf '%p %y ctime %C@\n' | sort)"
fi
expect_eq "look then lock, nothing changed: every entry has the token" "$(with_token "$t")" 3
expect_exit "look then lock, nothing changed: check" 0 "$MEMCG_POLICY" --root "$t" check
# set on while apply (for off) sleeps between its look and the lock: apply
# looks again and has nothing to do; with its first plan it would add the
# token that `set on` has just ruled out
for what in policy config; do
	t=$(copy "$orig")
	sleep 0.1
	e=$(mktemp)
	MEMCG_POLICY_LOOK_HOLD_MS=3000 "$MEMCG_POLICY" -v --root "$t" apply >/dev/null 2>"$e" &
	apid=$!
	sleep 0.5
	if [ "$what" = policy ]; then
		"$MEMCG_POLICY" --root "$t" set on >/dev/null 2>&1
		want=0 mode=on
	else
		touch "$t/boot/config-6.6.8-200.fc39.x86_64"
		want=3 mode=off
	fi
	wait "$apid"
	expect_eq "look then lock, $what changed meanwhile: apply exits 0" "$?" 0
	expect_eq "look then lock, $what changed meanwhile: apply looked again" "$(grep -c "$stands" "$e")" 0
	expect_eq "look then lock, $what changed meanwhile: entries with the token" "$(with_token "$t")" "$want"
	expect_exit "look then lock, $what changed meanwhile: check" 0 "$MEMCG_POLICY" --root "$t" check
	expect_exit "look then lock, $what changed meanwhile: decide" 0 "$MEMCG_POLICY" --root "$t" decide
	expect_eq "look then lock, $what changed meanwhile: the decision is $mode" "$(head -n 1 <<<"$OUT")" "$mode"
	rm -f "$e"
done
