# fuzz.mk - libFuzzer harnesses for every parser and editor (tests/fuzz/).
#
#   make fuzz                  each harness for FUZZ_SECONDS (default 60)
#   make fuzz FUZZ=cmdline     only tests/fuzz/fuzz-cmdline.c
#   make check-fuzz            the CI round: FUZZ_SMOKE_SECONDS (10) each
#   make fuzz-build            only build them
#
# The program's objects (all of src/ but main.c) are compiled again with
# clang and -fsanitize=fuzzer-no-link,address,undefined into $(FUZZ_BUILD)/;
# each harness links them with -fsanitize=fuzzer. tests/fuzz/run.sh runs a
# harness on a working copy of its seed corpus (tests/fuzz/corpus/NAME, left
# untouched), prints executions and findings, and fails on any finding
# (crash, sanitizer report, broken property, leak, timeout); what it found is
# kept in $(FUZZ_BUILD)/artifacts/NAME/. Needs clang and libclang-rt-dev.

FUZZ_BUILD ?= build-fuzz
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 10
FUZZ ?= $(patsubst tests/fuzz/fuzz-%.c,%,$(wildcard tests/fuzz/fuzz-*.c))

FUZZ_SAN    = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# clang's warnings are shown but never fatal here (WERROR=1 is for the
# gcc build): a clang-only warning must not stop the fuzzing
FUZZ_CFLAGS = -std=gnu11 -D_GNU_SOURCE -DVERSION='"$(VERSION)"' $(filter-out -Werror,$(WARN)) $(PKG_CFLAGS) \
              -O1 -g $(FUZZ_SAN) $(INCLUDES) -I $(BUILD)/gen \
              -DGRUB_DROPIN_DATA_PATH='"$(DATADIR)/memcg-policy/99-memcg-policy.cfg"'
FUZZ_OBJS   = $(patsubst src/%.c,$(FUZZ_BUILD)/obj/%.o,$(filter-out src/main.c,$(SRCS)))
FUZZ_BINS   = $(patsubst %,$(FUZZ_BUILD)/fuzz-%,$(FUZZ))

.PHONY: fuzz fuzz-build check-fuzz harness-syntax

# the GRUB and u-boot-menu drop-ins as C arrays: mk/grub.mk
$(FUZZ_BUILD)/obj/%.o: src/%.c $(HDRS) $(BUILD)/gen/dropin.h $(BUILD)/gen/uboot-dropin.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_BUILD)/fuzz-%: tests/fuzz/fuzz-%.c tests/fuzz/*.h $(FUZZ_OBJS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJS) $(PKG_LIBS) $(shell $(PKG_CONFIG) --libs zlib) -lpthread -lm

fuzz-build: $(FUZZ_BINS)

# Every harness compiled with the build's own compiler, syntax only (no
# clang needed, under a second): a changed interface a harness calls fails
# `make check` at once, not only the fuzz tier at the end of check-all.
harness-syntax: $(BUILD)/gen/dropin.h
	$(CC) -fsyntax-only -std=gnu11 -D_GNU_SOURCE -DVERSION='"$(VERSION)"' $(WARN) $(PKG_CFLAGS) \
	  $(INCLUDES) -I $(BUILD)/gen -DGRUB_DROPIN_DATA_PATH='"$(DATADIR)/memcg-policy/99-memcg-policy.cfg"' \
	  $(wildcard tests/fuzz/fuzz-*.c)

fuzz: fuzz-build
	tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ)

check-fuzz: fuzz-build
	tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SMOKE_SECONDS) $(FUZZ)
