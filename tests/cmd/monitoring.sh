#!/bin/bash
# check --monitoring (one status line, the monitoring plugin convention's
# exit codes) and check --prometheus FILE (node_exporter textfile metrics,
# written atomically), on fixture roots and, read only, on the live host.
. "$TOP/tests/lib.sh"
V=6.1.0-18-amd64

setup() {
	root=$(mkroot)
	add_kernel "$root" "$V" "$FIX/configs/debian12-amd64.config"
	mkdir -p "$root/etc/kernel"
	printf 'root=/dev/sda1 ro quiet\n' >"$root/etc/kernel/cmdline"
	printf '[policy]\nmode = %s\n' "$1" | write_policy "$root/etc/memcg-policy.conf"
}

# ---- --monitoring ----
setup off
expect_exit "drift: CRITICAL (2)" 2 "$MEMCG_POLICY" --root "$root" check --monitoring
expect_eq "drift: the one line names the slot and the fix" "$OUT" \
	"MEMCG-POLICY CRITICAL - drift: 1 boot slot not as decided (memcg off for $V): /etc/kernel/cmdline; memcg-policy apply fixes it | drift_slots=1;;1;0 reboot_pending=0;1;;0;1"
"$MEMCG_POLICY" --root "$root" apply >/dev/null 2>&1
expect_exit "in sync: OK (0)" 0 "$MEMCG_POLICY" --root "$root" check --monitoring
expect_eq "in sync: the line" "$OUT" "MEMCG-POLICY OK - in sync: memcg off for $V | drift_slots=0;;1;0 reboot_pending=0;1;;0;1"
expect_eq "in sync: nothing on stderr" "$ERR" ""

# the admin's link to where node_exporter reads: the link's target is
# written (replaced by rename), the link stays, nothing else appears
tdir=$(mkroot)/textfile
ldir=$(mkroot)/links
mkdir -p "$tdir" "$ldir"
printf 'old\n' >"$tdir/memcg.prom"
ln -s "$tdir/memcg.prom" "$ldir/memcg.prom"
ln -s "$tdir/new.prom" "$ldir/new.prom"
ln -s textfile/memcg.prom "$tdir/../rel.prom"
expect_exit "prometheus through a link: exit 0" 0 "$MEMCG_POLICY" --root "$root" check --prometheus "$ldir/memcg.prom"
check "prometheus through a link: the link stays a link" test -L "$ldir/memcg.prom"
check "prometheus through a link: its target has the metrics" grep -qx 'memcg_policy_in_sync 1' "$tdir/memcg.prom"
expect_eq "prometheus through a link: nothing else in the link's directory" "$(ls -A "$ldir")" "$(printf 'memcg.prom\nnew.prom')"
expect_eq "prometheus through a link: nothing else in the target's directory" "$(ls -A "$tdir")" memcg.prom
expect_exit "prometheus through a link to a file not there yet: exit 0" 0 "$MEMCG_POLICY" --root "$root" check --prometheus "$ldir/new.prom"
check "prometheus through a link to a file not there yet: the file is made" grep -qx 'memcg_policy_in_sync 1' "$tdir/new.prom"
rm -f "$tdir/memcg.prom"
expect_exit "prometheus through a relative link: exit 0" 0 "$MEMCG_POLICY" --root "$root" check --prometheus "$tdir/../rel.prom"
check "prometheus through a relative link: its target has the metrics" grep -qx 'memcg_policy_in_sync 1' "$tdir/memcg.prom"
check "prometheus through a relative link: the link stays a link" test -L "$tdir/../rel.prom"

# another run writing the same directory (its temp file there, the
# directory's shared lock held, as every run holds it while it writes):
# its temp file is not taken; with no run writing, a leftover goes
tmpf="$tdir/.memcg.prom.memcg-policy.Ab12Cd"
printf 'another run\n' >"$tmpf"
expect_exit "prometheus while another run writes: exit 0" 0 \
	flock -s "$tdir" "$MEMCG_POLICY" --root "$root" check --prometheus "$tdir/busy.prom"
check "prometheus while another run writes: the file is written" grep -qx 'memcg_policy_in_sync 1' "$tdir/busy.prom"
check "prometheus while another run writes: its temp file is left to it" test -f "$tmpf"
expect_exit "prometheus with a leftover of a killed run: exit 0" 0 "$MEMCG_POLICY" --root "$root" check --prometheus "$tdir/other.prom"
check "prometheus with a leftover of a killed run: the leftover is removed" test ! -e "$tmpf"

printf '[policy]\nmode = sometimes\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "bad policy: UNKNOWN (3)" 3 "$MEMCG_POLICY" --root "$root" check --monitoring
expect_eq "bad policy: the line carries the error" "$OUT" \
	"MEMCG-POLICY UNKNOWN - $root/etc/memcg-policy.conf:2: bad value 'sometimes' for mode (expected on, off or auto)"
expect_exit "bad option: UNKNOWN (3)" 3 "$MEMCG_POLICY" --root "$root" check --monitoring --bogus
expect_exit "--monitoring with --json: usage error" 2 "$MEMCG_POLICY" --root "$root" --json check --monitoring

# Live host (read only): a policy against the running state gives drift
# (CRITICAL) or, where the configuration already says it, reboot pending
# (WARNING).
running=$(awk '$1 == "memory" { print $4 }' /proc/cgroups 2>/dev/null)
if [ -r /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then running=1; fi
pol=$(mkroot)/p.conf
if [ "$running" = 1 ]; then other=off; else other=on; fi
printf '[policy]\nmode = %s\n' "$other" | write_policy "$pol"
"$MEMCG_POLICY" --config "$pol" check >/dev/null 2>&1
rc=$?
case $rc in
1) want=2 ;;
5) want=1 ;;
*) want=3 ;;
esac
expect_exit "live: check exit $rc is plugin status $want" "$want" "$MEMCG_POLICY" --config "$pol" check --monitoring
case $want in
1) check "live: WARNING line says a reboot is pending" grep -qE '^MEMCG-POLICY WARNING - reboot pending: .*running kernel has memcg (on|off) \|' <<<"$OUT" ;;
2) check "live: CRITICAL line says drift" grep -qE '^MEMCG-POLICY CRITICAL - drift: ' <<<"$OUT" ;;
*) check "live: UNKNOWN line" grep -qE '^MEMCG-POLICY UNKNOWN - ' <<<"$OUT" ;;
esac
expect_eq "live: one line" "$(wc -l <<<"$OUT")" 1

# ---- --prometheus ----
setup off
d=$(mkroot)
rmdir "$d/etc" "$d/boot"
prom=$d/memcg_policy.prom
expect_exit "prometheus: drift, exit 1 as check" 1 "$MEMCG_POLICY" --root "$root" check --prometheus "$prom"
norm() { sed -E 's/^(memcg_policy_last_check_timestamp_seconds) [0-9]+$/\1 TIME/' "$1"; }
expect_eq "prometheus: the metrics" "$(norm "$prom")" "# HELP memcg_policy_check_exit_code Exit code of memcg-policy check: 0 in sync, 1 drift, 3 bad input, 4 system failure, 5 reboot pending.
# TYPE memcg_policy_check_exit_code gauge
memcg_policy_check_exit_code 1
# HELP memcg_policy_decision Decision for the default kernel: 1 memcg on, 0 off.
# TYPE memcg_policy_decision gauge
memcg_policy_decision{kernel=\"$V\"} 0
# HELP memcg_policy_in_sync 1 when every boot slot matches the decisions.
# TYPE memcg_policy_in_sync gauge
memcg_policy_in_sync 0
# HELP memcg_policy_drift_slots Boot slots that do not match the decisions.
# TYPE memcg_policy_drift_slots gauge
memcg_policy_drift_slots 1
# HELP memcg_policy_reboot_pending 1 when the running kernel does not have the decided state.
# TYPE memcg_policy_reboot_pending gauge
memcg_policy_reboot_pending 0
# HELP memcg_policy_last_check_timestamp_seconds When the check ran (Unix time).
# TYPE memcg_policy_last_check_timestamp_seconds gauge
memcg_policy_last_check_timestamp_seconds TIME"
ts=$(sed -n 's/^memcg_policy_last_check_timestamp_seconds //p' "$prom")
now=$(date +%s)
check "prometheus: the timestamp is now" test "$((now - ts))" -ge 0 -a "$((now - ts))" -le 60
expect_eq "prometheus: mode 0644" "$(stat -c %a "$prom")" 644
# the text format: every sample line is NAME[{label="..."}] VALUE
bad=$(grep -v '^#' "$prom" | grep -cvE '^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*"\})? -?[0-9]+$')
expect_eq "prometheus: every sample line is in the text format" "$bad" 0

ino=$(stat -c %i "$prom")
"$MEMCG_POLICY" --root "$root" apply >/dev/null 2>&1
expect_exit "prometheus: in sync, exit 0" 0 "$MEMCG_POLICY" --root "$root" check --prometheus "$prom"
check "prometheus: in sync" grep -qx 'memcg_policy_in_sync 1' "$prom"
check "prometheus: replaced by rename (a new inode), not rewritten in place" test "$(stat -c %i "$prom")" != "$ino"
expect_eq "prometheus: no temporary file left" "$(ls -A "$d")" memcg_policy.prom
expect_exit "prometheus with --monitoring: OK" 0 "$MEMCG_POLICY" --root "$root" check --monitoring --prometheus "$prom"
check "prometheus with --monitoring: the file is written too" grep -qx 'memcg_policy_check_exit_code 0' "$prom"

before=$(cat "$prom")
expect_exit "prometheus: a directory that does not exist is a system failure (4)" 4 \
	"$MEMCG_POLICY" --root "$root" check --prometheus "$d/nodir/x.prom"
check "prometheus: the message names the directory" grep -qF "$d/nodir" <<<"$ERR"
expect_exit "prometheus: unwritable, with --monitoring: UNKNOWN (3)" 3 \
	"$MEMCG_POLICY" --root "$root" check --monitoring --prometheus "$d/nodir/x.prom"
check "prometheus: UNKNOWN line names the directory" grep -qE "^MEMCG-POLICY UNKNOWN - .*$d/nodir" <<<"$OUT"
expect_eq "prometheus: the earlier file is untouched" "$(cat "$prom")" "$before"

# the admin's link to where node_exporter reads: the link's target is
# written (replaced by rename), the link stays, nothing else appears
tdir=$(mkroot)/textfile
ldir=$(mkroot)/links
mkdir -p "$tdir" "$ldir"
printf 'old\n' >"$tdir/memcg.prom"
ln -s "$tdir/memcg.prom" "$ldir/memcg.prom"
ln -s "$tdir/new.prom" "$ldir/new.prom"
ln -s textfile/memcg.prom "$tdir/../rel.prom"
expect_exit "prometheus through a link: exit 0" 0 "$MEMCG_POLICY" --root "$root" check --prometheus "$ldir/memcg.prom"
check "prometheus through a link: the link stays a link" test -L "$ldir/memcg.prom"
check "prometheus through a link: its target has the metrics" grep -qx 'memcg_policy_in_sync 1' "$tdir/memcg.prom"
expect_eq "prometheus through a link: nothing else in the link's directory" "$(ls -A "$ldir")" "$(printf 'memcg.prom\nnew.prom')"
expect_eq "prometheus through a link: nothing else in the target's directory" "$(ls -A "$tdir")" memcg.prom
expect_exit "prometheus through a link to a file not there yet: exit 0" 0 "$MEMCG_POLICY" --root "$root" check --prometheus "$ldir/new.prom"
check "prometheus through a link to a file not there yet: the file is made" grep -qx 'memcg_policy_in_sync 1' "$tdir/new.prom"
rm -f "$tdir/memcg.prom"
expect_exit "prometheus through a relative link: exit 0" 0 "$MEMCG_POLICY" --root "$root" check --prometheus "$tdir/../rel.prom"
check "prometheus through a relative link: its target has the metrics" grep -qx 'memcg_policy_in_sync 1' "$tdir/memcg.prom"
check "prometheus through a relative link: the link stays a link" test -L "$tdir/../rel.prom"

# another run writing the same directory (its temp file there, the
# directory's shared lock held, as every run holds it while it writes):
# its temp file is not taken; with no run writing, a leftover goes
tmpf="$tdir/.memcg.prom.memcg-policy.Ab12Cd"
printf 'another run\n' >"$tmpf"
expect_exit "prometheus while another run writes: exit 0" 0 \
	flock -s "$tdir" "$MEMCG_POLICY" --root "$root" check --prometheus "$tdir/busy.prom"
check "prometheus while another run writes: the file is written" grep -qx 'memcg_policy_in_sync 1' "$tdir/busy.prom"
check "prometheus while another run writes: its temp file is left to it" test -f "$tmpf"
expect_exit "prometheus with a leftover of a killed run: exit 0" 0 "$MEMCG_POLICY" --root "$root" check --prometheus "$tdir/other.prom"
check "prometheus with a leftover of a killed run: the leftover is removed" test ! -e "$tmpf"

printf '[policy]\nmode = sometimes\n' | write_policy "$root/etc/memcg-policy.conf"
expect_exit "prometheus: bad policy, exit 3" 3 "$MEMCG_POLICY" --root "$root" check --prometheus "$prom"
check "prometheus: bad policy: the exit code is recorded" grep -qx 'memcg_policy_check_exit_code 3' "$prom"
check "prometheus: bad policy: no decision is claimed" sh -c "! grep -q '^memcg_policy_decision' '$prom'"

# a kernel release with a quote and a backslash: escaped in the label
setup off
q='6.1.0-1"x\y'
rm -f "$root/boot/vmlinuz-$V" "$root/boot/config-$V"
rm -rf "$root/lib/modules/$V"
add_kernel "$root" "$q" "$FIX/configs/debian12-amd64.config"
expect_exit "prometheus: odd kernel name: exit 1" 1 "$MEMCG_POLICY" --root "$root" check --prometheus "$prom"
expect_eq "prometheus: the label value is escaped" "$(grep '^memcg_policy_decision' "$prom")" 'memcg_policy_decision{kernel="6.1.0-1\"x\\y"} 0'
