#!/bin/bash
# The path walk rootfs.c uses where the kernel has no openat2(2): the
# confinement and apply tests once more with MEMCG_POLICY_NO_OPENAT2=1, so
# both ways of resolving a path inside the root are held to the same checks.
set -u
: "${TOP:?run through tests/run.sh}"
export MEMCG_POLICY_NO_OPENAT2=1
for t in confine apply; do
	bash "$TOP/tests/cmd/$t.sh" 2>&1 | sed -E "s/^(PASS|FAIL): /\\1: without openat2: $t: /"
done
