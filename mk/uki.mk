# uki.mk - unified kernel images on a real Debian 13 root, built and
# rebuilt by its own kernel-install and ukify (tests/uki/rebuild.sh).
#   make check-uki    needs root, mmdebstrap and the Debian mirror
.PHONY: check-uki
check-uki: $(BUILD)/memcg-policy
	@tests/uki/rebuild.sh $(BUILD)
