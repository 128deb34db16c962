#!/bin/bash
# grub-cmdline: the plumbing the GRUB drop-in calls. One command line serves
# every kernel of the menu: kernels decided alike get the union of their
# tokens; kernels decided differently get the default kernel's, with a
# warning; any error gives no output and a non-zero exit.
. "$TOP/tests/lib.sh"
CFG="$FIX/configs"

root=$(mkroot)
add_kernel "$root" 3.16.0-11-amd64 "$CFG/debian8-3.16-amd64.config"
add_kernel "$root" 6.1.0-41-amd64 "$CFG/debian12-amd64.config"

printf '[policy]\nmode = on\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "on, old and new kernels: exit 0" 0 "$MEMCG_POLICY" --root "$root" grub-cmdline 'quiet cgroup_disable=memory splash'
expect_eq "on: the old kernel's cgroup_enable=memory for all, disable removed" "$OUT" "quiet splash cgroup_enable=memory"
expect_exit "on --no-add: exit 0" 0 "$MEMCG_POLICY" --root "$root" grub-cmdline --no-add 'quiet cgroup_disable=memory'
expect_eq "on --no-add: only takes out" "$OUT" "quiet"

printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "off: exit 0" 0 "$MEMCG_POLICY" --root "$root" grub-cmdline 'root=/dev/sda1 cgroup_enable=memory -- single'
expect_eq "off: disable added before --, enable removed" "$OUT" "root=/dev/sda1 cgroup_disable=memory -- single"

printf '[policy]\nmode = off\n[kernel 3.*]\nmode = on\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "mixed decisions: exit 0" 0 "$MEMCG_POLICY" --root "$root" grub-cmdline 'quiet'
expect_eq "mixed decisions: the default kernel's decision" "$OUT" "quiet cgroup_disable=memory"
check "mixed decisions: a warning says so" grep -q 'decided differently' <<<"$ERR"

printf '[policy]\nmode = auto\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "keep: exit 0" 0 "$MEMCG_POLICY" --root "$root" grub-cmdline 'quiet  "a b"   cgroup_disable=memory'
expect_eq "keep: every byte as it was" "$OUT" 'quiet  "a b"   cgroup_disable=memory'

printf '[policy]\nmode = maybe\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "bad policy: exit 3" 3 "$MEMCG_POLICY" --root "$root" grub-cmdline 'quiet'
expect_eq "bad policy: no output" "$OUT" ""
expect_exit "no VALUE: exit 2" 2 "$MEMCG_POLICY" --root "$root" grub-cmdline
expect_exit "two VALUEs: exit 2" 2 "$MEMCG_POLICY" --root "$root" grub-cmdline a b
