# bench.mk - the yardstick for `memcg-policy bench`: build/pft-plain, the
# plainest page-fault loop (bench/pft-plain.c). Not part of `all`.
.PHONY: pft-plain
pft-plain: $(BUILD)/pft-plain

$(BUILD)/pft-plain: bench/pft-plain.c | $(BUILD)
	$(CC) -std=gnu11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(CPPFLAGS) -o $@ $< $(LDFLAGS)

# What memcg costs in a guest booted with memcg on and off, rounds
# alternating (bench/guest-onoff.sh; root, QEMU, the Debian mirror)
.PHONY: bench-guest
bench-guest: $(BUILD)/memcg-policy
	bench/guest-onoff.sh $(ROUNDS)
