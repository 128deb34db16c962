#!/bin/sh
# memcg-observe: run once by memcg-observe.service early in boot. Writes
# what the kernel got (its command line, the memory row of /proc/cgroups,
# the cgroup2 root's controllers) and what the installed memcg-policy says
# (check's exit code) to the serial console, one "MEMCG: key=value" line
# each, then powers the machine off.
exec >/dev/ttyS0 2>&1
echo "MEMCG: begin"
echo "MEMCG: kernel=$(uname -r)"
echo "MEMCG: cmdline=$(cat /proc/cmdline)"
echo "MEMCG: cgroups-memory=$(grep '^memory[[:space:]]' /proc/cgroups | tr '\t' ' ')"
echo "MEMCG: controllers=$(cat /sys/fs/cgroup/cgroup.controllers 2>/dev/null || echo none)"
if command -v memcg-policy >/dev/null 2>&1; then
	memcg-policy check >/run/memcg-check.out 2>&1
	rc=$?
	echo "MEMCG: check=$rc"
	sed 's/^/MEMCG: check-output: /' /run/memcg-check.out
else
	echo "MEMCG: check=absent"
fi
echo "MEMCG: end"
sync
systemctl poweroff --force --force
