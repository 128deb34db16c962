# bench-tool.mk - the tool's own figures (bench/README-tool.md): `make
# bench-tool` builds the program and runs every bench/tool-*.sh script and
# bench/grubby-compare.sh, printing their tables. Not part of `all` or
# `check`: it times things, and takes a few minutes. Needs hyperfine, jq,
# strace and /usr/bin/time (time); tool-profile.sh also cc, pkg-config and,
# for its last part, valgrind. Roots are made under $(BENCH_DIR).
BENCH_DIR ?= /var/tmp

.PHONY: bench-tool bench-tool-live bench-tool-apply bench-tool-grubby bench-tool-profile bench-tool-floor \
	bench-kconfig-speed

BENCH_ENV = MEMCG_POLICY=$(abspath $(BUILD))/memcg-policy BENCH_DIR=$(BENCH_DIR)

# one after the other, never in parallel (make -j): each times the machine
bench-tool: $(BUILD)/memcg-policy $(BUILD)/bench/kconfig-speed
	$(MAKE) -s bench-kconfig-speed
	$(BENCH_ENV) bench/tool-live.sh
	$(BENCH_ENV) bench/tool-apply.sh
	$(BENCH_ENV) bench/grubby-compare.sh
	$(BENCH_ENV) bench/tool-floor.sh
	$(BENCH_ENV) bench/tool-profile.sh

bench-tool-live: $(BUILD)/memcg-policy
	$(BENCH_ENV) bench/tool-live.sh

bench-tool-apply: $(BUILD)/memcg-policy
	$(BENCH_ENV) bench/tool-apply.sh

bench-tool-grubby: $(BUILD)/memcg-policy
	$(BENCH_ENV) bench/grubby-compare.sh

bench-tool-profile: $(BUILD)/memcg-policy
	$(BENCH_ENV) bench/tool-profile.sh

bench-tool-floor: $(BUILD)/memcg-policy
	$(BENCH_ENV) bench/tool-floor.sh

# The config reader's own speed, in-process (bench/kconfig-speed.c): the
# whole Debian 12 amd64 config (bench/data), parsed in a loop.
$(BUILD)/bench/kconfig-speed: bench/kconfig-speed.c $(LIB_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB_OBJS) $(LDFLAGS) $(LIBS)

bench-kconfig-speed: $(BUILD)/bench/kconfig-speed
	@xz -dc bench/data/debian12-6.1.192-amd64.config.xz >$(BUILD)/bench/config-debian12-amd64
	$(BUILD)/bench/kconfig-speed $(BUILD)/bench/config-debian12-amd64
