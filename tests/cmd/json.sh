#!/bin/bash
# --json, the contract (schema/memcg-policy.schema.json): every command and
# every error prints exactly one object on stdout that the schema accepts
# (expect_exit checks each against it); apply, set and revert report the
# state after the run with the files and tokens; the schema itself rejects
# an object that lost any key.
. "$TOP/tests/lib.sh"
V=6.1.0-18-amd64
root=$(mkroot)
add_kernel "$root" "$V" "$FIX/configs/debian12-amd64.config"
mkdir -p "$root/etc/kernel"
printf 'root=/dev/sda1 ro quiet\n' >"$root/etc/kernel/cmdline"
J=("$MEMCG_POLICY" --root "$root" --json)

expect_exit "status" 0 "${J[@]}" status
status=$OUT
expect_exit "decide" 0 "${J[@]}" decide
expect_eq "decide: decision and kernel at the top" "$(jq -c '[.command, .decision, .kernel]' <<<"$OUT")" "[\"decide\",\"on\",\"$V\"]"
expect_exit "check" 0 "${J[@]}" check

# version 2 of the contract: its version in every object, keys in one
# style, reasons as data, one reboot field
expect_eq "status: schema_version 2" "$(jq -c .schema_version <<<"$status")" 2
expect_eq "status: every key in snake_case" \
	"$(jq -r '[paths | last | strings | select(test("^[a-z0-9_]+$") | not)] | unique | join(" ")' <<<"$status")" ""
expect_eq "status: the reasons as data, the mode's first (no policy file: the built-in default)" \
	"$(jq -c '.kernels[0].reasons[0] | [.rule, .value, .file, .line, (.text | startswith("mode = auto"))]' <<<"$status")" \
	'["mode","auto",null,null,true]'
expect_eq "status: the reason that decided, named" "$(jq -c '.kernels[0].decided_by | [.rule, .value]' <<<"$status")" '["otherwise","keep"]'
expect_eq "status: reboot is not_live in an image" "$(jq -r .reboot <<<"$status")" not_live
expect_eq "status: the version 1 keys are gone" "$(jq -c '[has("reboot_pending"), has("reboot_needed")]' <<<"$status")" '[false,false]'
printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "decide, mode = off in a file" 0 "${J[@]}" decide
expect_eq "decide: the deciding reason with its file (inside the root) and line" \
	"$(jq -c '.kernels[0].decided_by | [.rule, .value, .file, .line]' <<<"$OUT")" '["mode","off","/etc/memcg-policy.conf",2]'
rm "$root/etc/memcg-policy.conf"
expect_exit "apply --dry-run (keep: nothing)" 0 "${J[@]}" apply --dry-run

expect_exit "set off" 0 "${J[@]}" set off
expect_eq "set off: the policy file and the slot, with its tokens" \
	"$(jq -c '[.changed, [.files[] | [.path, .action, .added, .removed]]]' <<<"$OUT")" \
	'[true,[["/etc/memcg-policy.conf","created",[],[]],["/etc/kernel/cmdline","changed",["cgroup_disable=memory"],[]]]]'
expect_eq "set off: the state after the run" "$(jq -c '[.in_sync, .decision, .next_boot.memcg, .reboot]' <<<"$OUT")" '[true,"off","off","not_live"]'
expect_eq "set off: paths inside the root" "$(jq -r '[.policy.files[], .kernels[0].config] | join(" ")' <<<"$OUT")" "/etc/memcg-policy.conf /boot/config-$V"
expect_exit "apply again: nothing" 0 "${J[@]}" apply
expect_eq "apply again: unchanged, no files" "$(jq -c '[.changed, .files]' <<<"$OUT")" '[false,[]]'

expect_exit "revert" 0 "${J[@]}" revert
expect_eq "revert: the file and the token it took out" "$(jq -c '[.changed, [.files[] | [.path, .action, .added, .removed]]]' <<<"$OUT")" \
	'[true,[["/etc/kernel/cmdline","restored",[],["cgroup_disable=memory"]]]]'
expect_eq "revert: the policy would put it back" "$(jq -c '[.in_sync, .reapply_pending]' <<<"$OUT")" '[false,true]'
expect_exit "revert --policy" 0 "${J[@]}" revert --policy
expect_eq "revert --policy: mode = auto recorded, nothing would come back" \
	"$(jq -c '[[.files[].path], .reapply_pending, .policy.mode]' <<<"$OUT")" '[["/etc/memcg-policy.conf"],false,"auto"]'
expect_exit "grub-cmdline" 0 "${J[@]}" grub-cmdline "ro quiet"
expect_eq "grub-cmdline: the value in the object" "$(jq -r .grub_value <<<"$OUT")" "ro quiet"

# errors: still one object, with the message, file and line
expect_exit "usage error: unknown command" 2 "${J[@]}" frobnicate
expect_eq "unknown command: command null, the message" "$(jq -c '[.command, .errors[0].message]' <<<"$OUT")" \
	"[null,\"unknown command 'frobnicate' (see --help)\"]"
expect_exit "usage error: unexpected argument" 2 "${J[@]}" status extra
expect_exit "usage error: unknown option" 2 "${J[@]}" apply --frobnicate
expect_exit "--json after the command name" 0 "$MEMCG_POLICY" --root "$root" status --json
printf '[policy]\nmode = sometimes\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "bad policy: revert needs no policy, exit 0" 0 "${J[@]}" revert
expect_eq "bad policy: revert: the policy error is a warning, the state after unknown" \
	"$(jq -c '[.errors, .warnings[0].file, .warnings[0].line, .reapply_pending]' <<<"$OUT")" '[[],"/etc/memcg-policy.conf",2,null]'
for cmd in status decide check apply set; do
	args=$cmd
	[ "$cmd" = set ] && args="set on"
	# shellcheck disable=SC2086
	expect_exit "bad policy: $cmd" 3 "${J[@]}" $args
	expect_eq "bad policy: $cmd: the error's file (inside the root) and line" \
		"$(jq -c '[.errors[0].file, .errors[0].line, .kernels]' <<<"$OUT")" '["/etc/memcg-policy.conf",2,null]'
done
# apply --hook: the policy error is demoted to a warning in one place,
# before anything prints it: one object, exit 0, nothing called an error
expect_exit "bad policy: apply --hook: exit 0" 0 "${J[@]}" apply --hook
expect_eq "bad policy: apply --hook: no error, the policy error first among the warnings (file, line)" \
	"$(jq -c '[.exit_code, (.errors | length), .warnings[0].file, .warnings[0].line]' <<<"$OUT")" \
	'[0,0,"/etc/memcg-policy.conf",2]'
expect_exit "bad policy: apply --hook on stderr: exit 0" 0 "$MEMCG_POLICY" --root "$root" apply --hook
check "bad policy: apply --hook says it as a warning" grep -q "^memcg-policy: warning: .*memcg-policy.conf:2: bad value" <<<"$ERR"
if grep -qv "^memcg-policy: warning: " <<<"$ERR"; then
	fail "bad policy: apply --hook prints nothing but warnings" "$ERR"
else
	pass "bad policy: apply --hook prints nothing but warnings"
fi
expect_exit "no such root" 2 "$MEMCG_POLICY" --root "$root/nonexistent" --json status

# The schema is strict: an object without any one of its keys is refused.
o=$(mktemp)
_tmpdirs+=("$o")
printf '%s\n' "$status" >"$o"
check "the status object validates as it is" /usr/bin/python3 "$TOP/tests/json-validate.py" "$TOP/schema/memcg-policy.schema.json" "$o" 0
missing=""
for key in $(jq -r 'keys[]' <<<"$status") kernels/0/version slots/0/state next_boot/memcg; do
	path=$(jq -c --arg k "$key" '$k | split("/") | map(tonumber? // .)' <<<null)
	jq --argjson p "$path" 'delpaths([$p])' <<<"$status" >"$o"
	if /usr/bin/python3 "$TOP/tests/json-validate.py" "$TOP/schema/memcg-policy.schema.json" "$o" 0 >/dev/null; then
		missing="$missing $key"
	fi
done
expect_eq "the schema refuses an object that lost any key (every top-level key, and some nested)" "$missing" ""
jq '. + {"surprise": 1}' <<<"$status" >"$o"
check "the schema refuses an unknown key" sh -c "! /usr/bin/python3 '$TOP/tests/json-validate.py' '$TOP/schema/memcg-policy.schema.json' '$o' 0 >/dev/null"
