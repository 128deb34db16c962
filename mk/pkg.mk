# pkg.mk - `make check-pkg`: the Debian package built, linted, installed,
# exercised (status, apply --dry-run, kernel-install, the Debian kernel hook),
# removed and purged, and the RPM built (tests/pkg/run.sh). Runs as root on a
# machine it may change; PKG_NOCHECK=1 skips the test suite inside the
# package build.
.PHONY: check-pkg
check-pkg:
	tests/pkg/run.sh
