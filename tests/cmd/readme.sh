#!/bin/bash
# The README is for the people who use the tool: its first screen (60
# lines) has install, the three recipes and "reboot and check"; its
# install command names every library the package builds with
# (debian/control's Build-Depends), so that a newcomer's build works; its
# test command ends in make check-all, what .ci/run runs.
. "$TOP/tests/lib.sh"
R=$TOP/README.md
first=$(head -n 60 "$R")
for h in "## Install" "## Three recipes" "## Reboot and check"; do
	check "the first screen has \"$h\"" grep -qx "$h" <<<"$first"
done
check "the first screen has the commands after the reboot" grep -q "memcg-policy check " <<<"$first"
install=$(grep -m1 -E '^ +sudo apt-get install .*&& make && \./build/memcg-policy status$' "$R")
check "one command installs, builds and runs the tool" test -n "$install"
missing=""
for p in $(sed -n '/^Build-Depends:/,/^[A-Z]/p' "$TOP/debian/control" | grep -oE '^ [a-z0-9.+-]+-dev' | tr -d ' '); do
	grep -qw -- "$p" <<<"$install" || missing="$missing $p"
done
expect_eq "the install command names every -dev package of Build-Depends" "$missing" ""
check "the test command is there, ending in make check-all as .ci/run does" grep -qE '^ +sudo .*make check-all$' "$R"
