#!/bin/bash
# The metrics service and timer (systemd/): systemd-analyze verify finds
# nothing to say about either; the service's command, run as the unit
# runs it (on the live system, in a private mount namespace whose
# node_exporter directory is a tmpfs), exits with a code the unit counts
# as success and writes the file; and the real node_exporter's textfile
# collector reads that file without a scrape error (a broken file makes
# one: the collector does judge it).
. "$TOP/tests/lib.sh"
W=$(mkroot)
svc="$W/units/memcg-policy-metrics.service"
mkdir -p "$W/units" "$W/man/man8"
sed "s|@SBINDIR@|$(dirname "$MEMCG_POLICY")|" "$TOP/systemd/memcg-policy-metrics.service.in" >"$svc"
cp "$TOP/systemd/memcg-policy-metrics.timer" "$W/units/"
cp "$TOP/man/memcg-policy.8" "$W/man/man8/"

if command -v systemd-analyze >/dev/null; then
	# the man page the units name is looked up too (MANPATH: this tree's)
	MANPATH="$W/man" systemd-analyze verify "$svc" "$W/units/memcg-policy-metrics.timer" >"$W/verify.out" 2>&1
	expect_eq "systemd-analyze verify: exit 0" "$?" 0
	expect_eq "systemd-analyze verify: nothing to say" "$(cat "$W/verify.out")" ""
else
	fail "systemd-analyze is installed (systemd)"
fi
check "the timer can be enabled: WantedBy=timers.target (the packages leave it off)" \
	grep -qx 'WantedBy=timers.target' "$W/units/memcg-policy-metrics.timer"

exec_line=$(sed -n 's/^ExecStart=//p' "$svc")
read -r -a cmd <<<"$exec_line"
prom=${cmd[${#cmd[@]} - 1]}
expect_eq "the service writes node_exporter's Debian textfile directory" "$(dirname "$prom")" /var/lib/prometheus/node-exporter
ok_codes=" 0 $(sed -n 's/^SuccessExitStatus=//p' "$svc") "

if [ "$(id -u)" -ne 0 ] || ! unshare -m true 2>/dev/null; then
	echo "SKIP: the service's command needs root and a mount namespace"
	exit 0
fi
mkdir -p "$W/textfile"
# shellcheck disable=SC2016 # the script's variables are its own
unshare -m --propagation private bash -c '
	mkdir -p /var/lib/prometheus/node-exporter && mount --bind "$1" /var/lib/prometheus/node-exporter || exit 90
	shift
	"$@"' - "$W/textfile" "${cmd[@]}" >"$W/run.out" 2>&1
rc=$?
case $ok_codes in
*" $rc "*) pass "the service's command exits with a code the unit counts as success ($rc)" ;;
*) fail "the service's command exits with a code the unit counts as success" "exit $rc" "$(cat "$W/run.out")" ;;
esac
check "the service's command wrote memcg-policy.prom" test -s "$W/textfile/memcg-policy.prom"

ne=/usr/bin/prometheus-node-exporter
if [ ! -x "$ne" ]; then
	fail "prometheus-node-exporter is installed (.ci/packages)"
	exit 0
fi
# scrape TEXTFILE-DIR: node_exporter's metrics with only its textfile collector
scrape() {
	local port=$((20000 + RANDOM % 20000)) pid out
	"$ne" --collector.disable-defaults --collector.textfile --collector.textfile.directory="$1" \
		--web.listen-address="127.0.0.1:$port" >"$W/ne.log" 2>&1 &
	pid=$!
	for _ in $(seq 50); do
		out=$(python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=2).read().decode())' \
			"http://127.0.0.1:$port/metrics" 2>/dev/null) && break
		sleep 0.1
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	printf '%s\n' "$out"
}
m=$(scrape "$W/textfile")
check "node_exporter: the file read without a scrape error" grep -qx 'node_textfile_scrape_error 0' <<<"$m"
check "node_exporter: memcg_policy_check_exit_code exported" grep -q "^memcg_policy_check_exit_code $rc\$" <<<"$m"
check "node_exporter: memcg_policy_last_check_timestamp_seconds exported" \
	grep -q '^memcg_policy_last_check_timestamp_seconds ' <<<"$m"
mkdir -p "$W/broken"
printf 'memcg_policy_check_exit_code{kernel="x} 1\n' >"$W/broken/memcg-policy.prom"
m=$(scrape "$W/broken")
check "node_exporter: a broken file is a scrape error (the parser judges the file)" \
	grep -qx 'node_textfile_scrape_error 1' <<<"$m"

# --- check --nfd FILE: a node-feature-discovery feature file, one line in
# NFD's features.d format (name=value, a valid Kubernetes label value)
nfd_line() { grep -xE '[A-Za-z0-9][-A-Za-z0-9_.]*=[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?' "$1"; }
root=$(mkroot)
add_kernel "$root" 6.1.0-40-amd64 "$FIX/configs/debian12-amd64.config"
mkdir -p "$root/etc/kernel"
printf 'root=/dev/sda1 ro\n' >"$root/etc/kernel/cmdline"
printf '[policy]\nmode = off\n[bootloaders]\nkernel-cmdline = yes\n' | write_policy "$root/etc/memcg-policy.conf"
"$MEMCG_POLICY" --root "$root" apply >/dev/null 2>&1
expect_exit "--nfd with --root, in sync: exit 0" 0 "$MEMCG_POLICY" --root "$root" check --nfd "$W/nfd"
expect_eq "--nfd: one line in NFD's format, the image's next boot: off" "$(nfd_line "$W/nfd")" "memcg-policy.memcg=off"
printf '[policy]\nmode = on\n' | write_policy "$root/etc/memcg-policy.conf"
"$MEMCG_POLICY" --root "$root" apply >/dev/null 2>&1
expect_exit "--nfd after mode = on: exit 0" 0 "$MEMCG_POLICY" --root "$root" check --nfd "$W/nfd"
expect_eq "--nfd: on" "$(nfd_line "$W/nfd")" "memcg-policy.memcg=on"
printf '[policy]\nmode = bogus\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "--nfd with a bad policy: exit 3" 3 "$MEMCG_POLICY" --root "$root" check --nfd "$W/nfd"
expect_eq "--nfd with a bad policy: unknown, not a stale state" "$(nfd_line "$W/nfd")" "memcg-policy.memcg=unknown"
expect_exit "--nfd without a file name: usage (2)" 2 "$MEMCG_POLICY" --root "$root" check --nfd ""
