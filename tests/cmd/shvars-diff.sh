#!/bin/bash
# The tool's reader of shell assignments (src/lib/shvars.c), which reads an
# image's /etc/default/grub and drop-ins without running them, against
# /bin/sh (dash) and bash: on the real files of the fixtures (Debian's own
# /etc/default/grub, Debian's cloud image's, an Ubuntu cloud image's with its
# drop-in, the GRUB test cases, Fedora's and RHEL 8's) and on generated ones.
# Wherever the reader says it knows a value, the shell gives that value;
# where the shell fails, the reader knows nothing. SHVARS_CASES (default
# 1500) generated cases per shell, SHVARS_SEED (default 1).
# shellcheck source=../lib.sh disable=SC1091
. "$TOP/tests/lib.sh"
dumper="$(dirname "$MEMCG_POLICY")/tests/test-shvars"
[ -x "$dumper" ] || { fail "shvars-diff: $dumper not built"; exit 1; }
real=("$FIX"/grub/debian "$FIX"/grub/debian-cloud "$FIX"/grub/cases/* "$FIX"/roots/fedora/etc/default/grub
	"$FIX"/grub/rhel8/etc/default/grub "$FIX"/grub/upstream/etc/default/grub)
[ -f /usr/share/grub/default/grub ] && real+=(/usr/share/grub/default/grub)
cases=${SHVARS_CASES:-1500}
seed=${SHVARS_SEED:-1}
python3 "$TOP/tests/cmd/shvars-diff.py" --dumper "$dumper" --sh /bin/sh --real "${real[@]}" \
	--cases "$cases" --seed "$seed" | sed '$d'
python3 "$TOP/tests/cmd/shvars-diff.py" --dumper "$dumper" --sh /bin/bash --cases "$cases" \
	--seed "$((seed + 1))" | sed '$d'
