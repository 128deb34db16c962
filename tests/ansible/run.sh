#!/bin/bash
# tests/ansible/run.sh - the Ansible role of contrib/ansible, run with
# Debian's real ansible-playbook (package ansible-core), local connection,
# on a fixture root tree (the role's memcg_policy_root: memcg-policy
# --root), so that the host's boot configuration is never touched:
#   1. check mode on a tree whose policy is in place but not applied:
#      the apply task reports changed (apply --dry-run), nothing is written;
#   2. the first real run: changed, /etc/kernel/cmdline and the BLS entry
#      get cgroup_disable=memory, the recap counts the changes;
#   3. the second run: ok, changed=0, no file written (inodes, mtimes);
#   4. as root, in a private mount namespace on the live system (tmpfs
#      over /boot, /etc/kernel, /var/lib, /run; the policy bound over
#      /etc/memcg-policy.conf): a decision against the running memcg state
#      notifies the reboot handler ("reboot": "needed"), which only reports.
# Each run's recap is printed. Usage: tests/ansible/run.sh [BUILD-DIR]
set -u
export LC_ALL=C.UTF-8 # ansible refuses other encodings
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$TOP/build}
case $BUILD in /*) ;; *) BUILD=$TOP/$BUILD ;; esac
MP=$BUILD/memcg-policy
# shellcheck source-path=SCRIPTDIR source=../tier.sh
. "$TOP/tests/tier.sh"
if ! command -v ansible-playbook >/dev/null; then
	fail "ansible-playbook is installed (package ansible-core)"
	finish
fi
[ -x "$MP" ] || { fail "$MP is built (make)"; finish; }

W=$(mktemp -d /tmp/memcg-ansible.XXXXXX)
trap 'rm -rf "$W"' EXIT
export ANSIBLE_ROLES_PATH=$TOP/contrib/ansible ANSIBLE_NOCOLOR=1 ANSIBLE_LOCALHOST_WARNING=false \
	ANSIBLE_INVENTORY_UNPARSED_WARNING=false ANSIBLE_RETRY_FILES_ENABLED=false \
	ANSIBLE_LOCAL_TEMP=$W/tmp ANSIBLE_REMOTE_TEMP=$W/tmp ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3
echo "ansible-playbook: $(ansible-playbook --version | head -n 1)"

V=6.1.0-18-amd64
R=$W/root
mkdir -p "$R/boot/loader/entries" "$R/etc/kernel" "$R/lib/modules/$V"
: >"$R/boot/vmlinuz-$V"
cp "$TOP/tests/fixtures/configs/debian12-amd64.config" "$R/boot/config-$V"
printf 'root=/dev/sda1 ro quiet\n' >"$R/etc/kernel/cmdline"
printf 'layout=bls\n' >"$R/etc/kernel/install.conf"

cat >"$W/play.yml" <<PLAY
- hosts: localhost
  connection: local
  gather_facts: false
  roles:
    - role: memcg_policy
      vars:
        memcg_policy_install: false
        memcg_policy_program: "{{ program }}"
        memcg_policy_root: "{{ root | default('') }}"
        memcg_policy_mode: "{{ mode }}"
PLAY

# run NAME ARGS...: ansible-playbook, log in $W/NAME.log, recap in $RECAP
run() {
	local name=$1
	shift
	ansible-playbook -i localhost, "$W/play.yml" -e "program=$MP" "$@" >"$W/$name.log" 2>&1
	RC=$?
	RECAP=$(grep -E '^localhost +:' "$W/$name.log" | sed 's/  */ /g')
	echo "# $name: $RECAP"
}
recap_field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$RECAP"; }
tree_state() {
	(cd "$1" && find . -type f -print | sort | while read -r f; do
		printf '%s %s %s\n' "$f" "$(stat -c '%i %Y' "$f")" "$(sha256sum <"$f" | cut -c1-16)"
	done)
}
task_state() { # the state line of a task: ok / changed / skipping
	awk -v t="TASK [memcg_policy : $2]" 'index($0, t) == 1 { getline; while ($0 == "") getline; sub(/:.*/, ""); print; exit }' "$W/$1.log"
}

# ---- 1. check mode: the policy in place, not applied --------------------
printf '# Written by Ansible (role memcg_policy); see memcg-policy.conf(5).\n[policy]\nmode = off\n' >"$R/etc/memcg-policy.conf"
chmod 0644 "$R/etc/memcg-policy.conf"
before=$(tree_state "$R")
sleep 1
run check --check -e "root=$R" -e mode=off
expect_eq "check mode: ansible-playbook exit 0" "$RC" 0
expect_eq "check mode: the policy task is ok (the file is as it would write it)" "$(task_state check 'Write the policy (/etc/memcg-policy.conf, not a package conffile)')" ok
expect_eq "check mode: the apply task reports changed (apply --dry-run)" "$(task_state check 'Apply the policy to the boot configuration')" changed
expect_eq "check mode: recap changed=1" "$(recap_field changed)" 1
expect_eq "check mode: nothing written" "$(tree_state "$R")" "$before"

# ---- 2. first run --------------------------------------------------------
run first -e "root=$R" -e mode=off
expect_eq "first run: exit 0" "$RC" 0
expect_eq "first run: the apply task changed" "$(task_state first 'Apply the policy to the boot configuration')" changed
expect_eq "first run: recap changed=1, failed=0" "$(recap_field changed):$(recap_field failed)" 1:0
expect_eq "first run: /etc/kernel/cmdline has cgroup_disable=memory" "$(cat "$R/etc/kernel/cmdline")" "root=/dev/sda1 ro quiet cgroup_disable=memory"
if grep -qF '"files"' "$W/first.log" || grep -qF 'files: /etc/kernel/cmdline' "$W/first.log"; then
	pass "first run: the role reports the files from the JSON"
else
	fail "first run: the role reports the files from the JSON" "$(tail -n 20 "$W/first.log")"
fi
expect_exit_check() { "$MP" --root "$R" check >/dev/null 2>&1; echo $?; }
expect_eq "first run: memcg-policy check is in sync afterwards" "$(expect_exit_check)" 0

# ---- 3. second run -------------------------------------------------------
before=$(tree_state "$R")
sleep 1
run second -e "root=$R" -e mode=off
expect_eq "second run: exit 0" "$RC" 0
expect_eq "second run: recap changed=0" "$(recap_field changed)" 0
expect_eq "second run: the apply task ok" "$(task_state second 'Apply the policy to the boot configuration')" ok
expect_eq "second run: no file written (inodes, mtimes, bytes)" "$(tree_state "$R")" "$before"

# ---- 4. reboot handler, on the live system in a private namespace -------
running=
if [ -r /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then running=on
elif awk '$1 == "memory" && $4 == 1 { f = 1 } END { exit !f }' /proc/cgroups 2>/dev/null; then running=on
elif [ -r /proc/cgroups ]; then running=off; fi
if [ "$(id -u)" -ne 0 ] || ! unshare --mount --propagation private true 2>/dev/null || [ -z "$running" ]; then
	echo "# reboot handler: needs root, a mount namespace and a known running memcg state; not run (not counted)"
else
	if [ "$running" = on ]; then other=off; else other=on; fi
	NS=$W/ns
	mkdir -p "$NS"
	cp "$TOP/tests/fixtures/configs/debian12-amd64.config" "$NS/config"
	cat >"$NS/inside.sh" <<INSIDE
set -eu
for d in /boot /etc/kernel /var/lib /run; do mount -t tmpfs memcg-ansible-test "\$d"; done
# /etc as a copy on a tmpfs: the role writes /etc/memcg-policy.conf there
mkdir -p "$NS/etc"
mount -t tmpfs memcg-ansible-test "$NS/etc"
cp -a /etc/. "$NS/etc/"
mount --bind "$NS/etc" /etc
mkdir -p /boot/loader/entries /etc/kernel
cp "$NS/config" /boot/config-$V
printf 'not a kernel\n' >/boot/vmlinuz-$V
printf 'root=UUID=0c1d ro quiet\n' >/etc/kernel/cmdline
printf 'layout=bls\n' >/etc/kernel/install.conf
export MEMCG_POLICY_TRUST_BOOT=1
ansible-playbook -i localhost, "$W/play.yml" -e "program=$MP" -e mode=$other \
	-e '{"memcg_policy_sections": {"bootloaders": {"grub": "no", "rpi": "no"}}}' >"$W/live.log" 2>&1 ||
	echo "ansible-playbook failed: \$?"
cat /etc/kernel/cmdline
INSIDE
	out=$(unshare --mount --propagation private bash "$NS/inside.sh" 2>&1)
	RECAP=$(grep -E '^localhost +:' "$W/live.log" | sed 's/  */ /g')
	echo "# live (namespace): $RECAP"
	if grep -q 'RUNNING HANDLER \[memcg_policy : memcg-policy reboot needed\]' "$W/live.log"; then
		pass "live: reboot \"needed\" notified the reboot handler (memcg $running now, $other decided)"
	else
		fail "live: reboot \"needed\" notified the reboot handler" "$out" "$(tail -n 30 "$W/live.log")"
	fi
	expect_eq "live: the handler only reports (memcg_policy_reboot is false)" \
		"$(grep -c 'a reboot is needed for the memcg change' "$W/live.log")" 1
	check_host=$(grep -c 'memcg-ansible-test' /proc/self/mounts)
	expect_eq "live: the namespace's mounts did not leak to the host" "$check_host" 0
fi
finish
