#!/bin/bash
# status and decide on the live system (read only): the running kernel's
# config, its built-in command line, its /proc/cmdline and the running memcg
# state are reported as the kernel itself shows them.
. "$TOP/tests/lib.sh"

rel=$(uname -r)
expect_exit "status --json on the live system: exit 0" 0 "$MEMCG_POLICY" --json status
json=$OUT
run=$(jq -c --arg v "$rel" '.kernels[] | select(.version == $v)' <<<"$json")
check "the running kernel is listed and marked running" test "$(jq -r .running <<<"$run")" = true

if [ -r /proc/config.gz ]; then
	expect_eq "its config is /proc/config.gz" "$(jq -r .config <<<"$run")" /proc/config.gz
	cfg=$(zcat /proc/config.gz)
else
	expect_eq "its config is /boot/config-$rel" "$(jq -r .config <<<"$run")" "/boot/config-$rel"
	cfg=$(cat "/boot/config-$rel")
fi

# memcg built and its default, from the config itself
if grep -q '^CONFIG_MEMCG=y' <<<"$cfg"; then
	expect_eq "memcg built, as the config says" "$(jq -r .memcg_built <<<"$run")" true
else
	expect_eq "memcg not built, as the config says" "$(jq -r .memcg_built <<<"$run")" false
fi
if grep -qE '^CONFIG_MEMCG_DISABLED=y|^# CONFIG_MEMCG_DEFAULT_ENABLED is not set' <<<"$cfg"; then want_default=off; else want_default=on; fi
if grep -q '^CONFIG_MEMCG=y' <<<"$cfg"; then
	expect_eq "memcg default, as the config's markers say" "$(jq -r .default <<<"$run")" "$want_default"
fi

# the built-in command line
builtin=$(sed -n 's/^CONFIG_CMDLINE="\(.*\)"$/\1/p' <<<"$cfg")
if grep -q '^CONFIG_CMDLINE_BOOL=y' <<<"$cfg" && [ -n "$builtin" ]; then
	expect_eq "built-in command line" "$(jq -r .builtin_cmdline <<<"$run")" "$builtin"
	if grep -q '^CONFIG_CMDLINE_OVERRIDE=y' <<<"$cfg"; then m=override; else m=prepend; fi
	expect_eq "built-in command line mode" "$(jq -r .builtin_cmdline_mode <<<"$run")" "$m"
else
	expect_eq "no built-in command line" "$(jq -r .builtin_cmdline <<<"$run")" null
fi

# /proc/cmdline, as the kernel has it (a "--" and init's arguments included)
expect_eq "running command line is /proc/cmdline" "$(jq -r .running.cmdline <<<"$json")" "$(sed 's/[[:space:]]*$//' /proc/cmdline)"

# the running memcg state
state=unknown
if [ -r /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
	state=on
else
	row=$(awk '$1 == "memory" { print $4 }' /proc/cgroups 2>/dev/null)
	[ "$row" = 1 ] && state=on
	[ "$row" = 0 ] && state=off
fi
expect_eq "running memcg state" "$(jq -r .running.memcg <<<"$json")" "$state"

# decide --explain names the default and the running kernel's config
expect_exit "decide --explain on the live system: exit 0" 0 "$MEMCG_POLICY" decide --kernel "$rel" --explain
first=$(head -n 1 <<<"$OUT")
check "decide: first line is on or off" test "$first" = on -o "$first" = off
check "decide --explain: names the kernel default" grep -q "^rule: kernel default: memcg $want_default" <<<"$OUT"
check "decide --explain: names the config read" grep -q "^config: $(jq -r .config <<<"$run")\$" <<<"$OUT"
# with the built-in defaults (nothing needs memcg on a test machine,
# otherwise = keep), the decision is the state the configuration gives
if [ ! -e /etc/memcg-policy.conf ] && [ "$(jq -r .keep <<<"$run")" = true ]; then
	expect_eq "keep: the decision is the running state" "$first" "$state"
fi
