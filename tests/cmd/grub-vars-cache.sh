#!/bin/bash
# status on the live system where GRUB's settings take running code to
# know: the first run sources them with /bin/sh and keeps what it gave,
# with the identity of every file, in /var/lib/memcg-policy/grub-vars.cache;
# a later run with the same files starts no shell; a changed file, or a
# cache that is not root's alone, starts it again. Run in a mount namespace
# of its own, with tmpfs over /etc/default and /var/lib, so that the
# machine's own files are neither read nor touched.
. "$TOP/tests/lib.sh"

if ! private_mounts || ! command -v strace >/dev/null || ! [ -x /usr/sbin/grub-mkconfig ]; then
	echo "SKIP: the GRUB variables' cache (needs root, a private mount namespace, strace and grub-mkconfig)"
	exit 0
fi
d=$(mkroot)
# the runs, inside the namespace; each line "NAME SHELLS EXIT"
cat >"$d/runs.sh" <<'EOF'
set -u
tool=$1 d=$2
# LeakSanitizer cannot run under ptrace (the ASan build): leaks are
# checked by every other test
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
mount -t tmpfs memcg-test /etc/default
mount -t tmpfs memcg-test /var/lib
mkdir -p /etc/default/grub.d /var/lib/memcg-policy
chmod 0755 /var/lib/memcg-policy
# a value only the shell can know
printf 'GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX="$(echo root=/dev/sda1) ro"\nGRUB_CMDLINE_LINUX_DEFAULT="quiet"\n' >/etc/default/grub
printf '[policy]\nmode = on\n' >"$d/policy.conf"
chmod 0600 "$d/policy.conf"
run() { # NAME
	strace -f -qq -e trace=execve -e signal=none -o "$d/$1.trace" "$tool" --config "$d/policy.conf" status >"$d/$1.out" 2>&1
	local rc=$?
	echo "$1 $(grep -c 'execve("/bin/sh"' "$d/$1.trace") $rc"
}
run first
run second
run third
touch -d '2 minutes ago' /etc/default/grub
run touched
printf '# the admin adds a file\n' >/etc/default/grub.d/50-local.cfg
run added
run again
chmod 0666 /var/lib/memcg-policy/grub-vars.cache
run unsafe
EOF
out=$(unshare -m --propagation private bash "$d/runs.sh" "$MEMCG_POLICY" "$d" 2>&1)
shells() { awk -v n="$1" '$1 == n { print $2 }' <<<"$out"; }
expect_eq "the runs ended" "$(awk '$3 != 0 { print $1 }' <<<"$out")" ""
expect_eq "first status: one shell" "$(shells first)" 1
check "first status: shows the value only the shell knew" grep -q 'menu gets:     "root=/dev/sda1 ro"' "$d/first.out"
expect_eq "second status, the same files: no shell" "$(shells second)" 0
check "second status: the same value" grep -q 'menu gets:     "root=/dev/sda1 ro"' "$d/second.out"
expect_eq "third status: no shell" "$(shells third)" 0
expect_eq "/etc/default/grub touched: a shell again" "$(shells touched)" 1
expect_eq "a drop-in added: a shell again" "$(shells added)" 1
expect_eq "then none" "$(shells again)" 0
expect_eq "a cache others may write: not trusted" "$(shells unsafe)" 1
