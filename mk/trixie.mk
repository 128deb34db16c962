# trixie.mk - make check inside a Debian 13 container (tests/trixie/check.sh).
#   make check-trixie    needs root, mmdebstrap and the Debian mirror
.PHONY: check-trixie
check-trixie:
	@tests/trixie/check.sh
