# kparse.mk - the kernel's own command-line parser judges every edit
# (tests/kparse/README).
#
#   make check-kparse                 KPARSE_CASES (3000) generated cases of the
#                                     slots that hold one line, KPARSE_GRUB_CASES
#                                     (3000) of GRUB's pair through the drop-in,
#                                     then the mutant check (KPARSE_MUTANT_CASES, 800)
#   make check-kparse KPARSE_CASES=48000 KPARSE_GRUB_CASES=48000 KPARSE_SEED=7
#
# At test time tests/kparse/extract.py takes lib/cmdline.c's next_arg(),
# kernel/params.c's parse_args(), init/main.c's unknown_bootoption() and
# init argument handling, and every arch's COMMAND_LINE_SIZE out of
# Debian's linux-source tarball into $(KPARSE_BUILD)/kernel/ (nothing of
# the kernel is kept in the repository); tests/kparse/kview.c compiles them
# with tests/kparse/kshim.h. The mutant is the tool built with
# -DCMDLINE_MUTANT_DASH ('-' and '_' differ in names), which must fail.
# Needs linux-source-6.1 (or another linux-source-*), xz-utils, python3,
# and grub-script-check (grub-common) for the GRUB cases.

KPARSE_SRC ?= $(lastword $(sort $(wildcard /usr/src/linux-source-*.tar.xz)))
KPARSE_BUILD ?= build-kparse
KPARSE_CASES ?= 3000
KPARSE_GRUB_CASES ?= 3000
KPARSE_SEED ?= 16
KPARSE_MUTANT_CASES ?= 800

.PHONY: check-kparse kparse-mutant clean-kparse

$(KPARSE_BUILD)/kernel/kernel-parse.c: tests/kparse/extract.py
	@test -n "$(KPARSE_SRC)" || { echo "check-kparse: no /usr/src/linux-source-*.tar.xz (apt-get install linux-source-6.1)"; exit 1; }
	rm -rf $(KPARSE_BUILD)/kernel
	python3 tests/kparse/extract.py $(KPARSE_SRC) $(KPARSE_BUILD)/kernel

$(KPARSE_BUILD)/kview: tests/kparse/kview.c tests/kparse/kshim.h $(KPARSE_BUILD)/kernel/kernel-parse.c
	$(CC) -std=gnu11 -O2 -g -Wall -Wno-unused-parameter \
	  -DKP_INIT_ENV_ARG_LIMIT=$$(awk '$$1 == "init-env-arg-limit" { print $$2 }' $(KPARSE_BUILD)/kernel/limits.txt) \
	  -Itests/kparse -I$(KPARSE_BUILD)/kernel -o $@ tests/kparse/kview.c

kparse-mutant:
	@$(MAKE) -s BUILD=$(KPARSE_BUILD)/mutant CPPFLAGS='$(CPPFLAGS) -DCMDLINE_MUTANT_DASH' all

check-kparse: $(BUILD)/memcg-policy $(KPARSE_BUILD)/kview kparse-mutant
	@python3 tests/kparse/run.py --tool $(BUILD)/memcg-policy --kview $(KPARSE_BUILD)/kview \
	  --limits $(KPARSE_BUILD)/kernel/limits.txt --cases $(KPARSE_CASES) --grub-cases $(KPARSE_GRUB_CASES) --seed $(KPARSE_SEED) \
	  --mutant $(KPARSE_BUILD)/mutant/memcg-policy --mutant-cases $(KPARSE_MUTANT_CASES)

clean: clean-kparse
clean-kparse:
	rm -rf $(KPARSE_BUILD)
