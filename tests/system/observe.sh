#!/bin/sh
# memcg-observe: run once by memcg-observe.service early in boot. Writes
# what the kernel got (its command line, the memory row of /proc/cgroups,
# the cgroup2 root's controllers) and what the installed memcg-policy says
# (check's exit code) to the serial console, one "MEMCG: key=value" line
# each, then powers the machine off. printf, not echo: dash's echo reads
# backslash escapes, and systemd-boot's command line holds the entry's
# initrd path with backslashes ("initrd=\c8f5...\" ended the line at \c).
exec >/dev/ttyS0 2>&1
echo "MEMCG: begin"
printf 'MEMCG: kernel=%s\n' "$(uname -r)"
printf 'MEMCG: cmdline=%s\n' "$(cat /proc/cmdline)"
printf 'MEMCG: cgroups-memory=%s\n' "$(grep '^memory[[:space:]]' /proc/cgroups | tr '\t' ' ')"
printf 'MEMCG: controllers=%s\n' "$(cat /sys/fs/cgroup/cgroup.controllers 2>/dev/null || echo none)"
if command -v memcg-policy >/dev/null 2>&1; then
	memcg-policy check >/run/memcg-check.out 2>&1
	rc=$?
	echo "MEMCG: check=$rc"
	sed 's/^/MEMCG: check-output: /' /run/memcg-check.out
else
	echo "MEMCG: check=absent"
fi
echo "MEMCG: end"
# A forced poweroff does not wait for the serial port: what is still in
# the tty's buffer is lost (a boot's "MEMCG: end" once was). stty sets
# the port's own settings again, which waits until all is sent (drain).
stty -F /dev/ttyS0 drain "$(stty -F /dev/ttyS0 -g)" 2>/dev/null || sleep 2
sync
systemctl poweroff --force --force
