# memcg-policy - build, test, install.
# make                 build build/memcg-policy
# make check-fast      unit + command tests, normal build
# make check           unit + command tests, then again under ASan/UBSan
# make install DESTDIR=... PREFIX=...

VERSION   = 0.1.0
CC       ?= cc
PKG_CONFIG ?= pkg-config
PKGS      = inih blkid libkmod zlib json-c

BUILD    ?= build
CFLAGS   ?= -O2 -g
WARN      = -Wall -Wextra -Wshadow -Wformat=2 -Wmissing-prototypes \
            -Wstrict-prototypes -Wwrite-strings -Wvla -Wpointer-arith \
            -Wundef -Wcast-align -Wnull-dereference
ifeq ($(WERROR),1)
WARN     += -Werror
endif
ifeq ($(SAN),1)
CFLAGS   += -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS  += -fsanitize=address,undefined
endif
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS))
# libkmod, libblkid, zlib and json-c are loaded with dlopen() when first
# needed (src/io/dynlib.h): starting the program links only libinih and libc
DLOPEN_PKGS = libkmod blkid zlib json-c
PKG_LIBS   := $(shell $(PKG_CONFIG) --libs $(filter-out $(DLOPEN_PKGS),$(PKGS)))
ALL_CFLAGS = -std=gnu11 -D_GNU_SOURCE -DVERSION='"$(VERSION)"' $(WARN) $(INCLUDES) $(PKG_CFLAGS) $(CFLAGS) $(CPPFLAGS)
# libm only where a build still calls it (sqrt is inlined below)
LIBS       = $(PKG_LIBS) -ldl -lpthread -Wl,--as-needed -lm -Wl,--no-as-needed

# src/ is in folders that read as the pipeline (HACKING.md); includes
# name their folder ("io/rootfs.h"), so src/ is the one include path.
# Objects go to $(BUILD)/obj/ in the same folders, with dependencies made
# by the compiler (-MMD)
SRCS      = $(wildcard src/*.c src/*/*.c src/*/*/*.c)
HDRS      = $(wildcard src/*.h src/*/*.h src/*/*/*.h)
INCLUDES  = -Isrc
OBJS      = $(SRCS:src/%.c=$(BUILD)/obj/%.o)
LIB_OBJS  = $(filter-out $(BUILD)/obj/main.o,$(OBJS))
UNIT_SRCS = $(wildcard tests/unit/test-*.c)
UNIT_BINS = $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

PREFIX   ?= /usr/local
SBINDIR  ?= $(PREFIX)/sbin
DATADIR  ?= $(PREFIX)/share
MANDIR   ?= $(DATADIR)/man
SYSCONFDIR ?= /etc
LIBDIR_KERNEL ?= /usr/lib/kernel
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions


.PHONY: all check check-fast check-all check-one check-san unit clean install-bin uninstall-bin lint format

all: $(BUILD)/memcg-policy

$(BUILD)/memcg-policy: $(OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

-include $(OBJS:.o=.d)

# sqrt of a variance (never negative): the instruction, no call into libm
$(BUILD)/obj/pft/run.o: ALL_CFLAGS += -fno-math-errno

# the unit tests make their gzip fixtures with zlib's deflate
UNIT_LIBS  = $(LIBS) $(shell $(PKG_CONFIG) --libs zlib)

$(BUILD)/tests/%: tests/unit/%.c tests/unit/test.h $(LIB_OBJS) | $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) -MMD -MP -o $@ $< $(LIB_OBJS) $(LDFLAGS) $(UNIT_LIBS)

-include $(UNIT_BINS:=.d)

$(BUILD) $(BUILD)/tests:
	mkdir -p $@

unit: $(UNIT_BINS)

# One pass of every test against one build.
check-one: $(BUILD)/memcg-policy $(UNIT_BINS) harness-syntax
	tests/run.sh $(BUILD)

check-fast:
	@$(MAKE) -s BUILD=build all unit check-one

check-san:
	$(MAKE) BUILD=build-san SAN=1 check-one

check:
	@tests/check-all.sh

# Everything CI runs: check, then boots, packages, fuzzing and linters
# (needs root and the packages in .ci/packages).
check-all:
	@tests/check-all.sh all

lint: $(BUILD)/memcg-policy
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability \
	  --inline-suppr --std=c11 -D_GNU_SOURCE $(INCLUDES) -I $(BUILD)/gen src tests/unit
	printf '%s\n' $(SRCS) | xargs -P "$$(nproc)" -n 6 sh -c 'clang-tidy -quiet "$$@" -- -std=gnu11 \
	  -D_GNU_SOURCE -DVERSION='"'"'"$(VERSION)"'"'"' $(INCLUDES) $(PKG_CFLAGS) -I$(BUILD)/gen' clang-tidy
	shellcheck -s sh grub.d/99-memcg-policy.cfg u-boot-menu/99-memcg-policy.conf hooks/*
	shellcheck -x tests/*.sh tests/cmd/*.sh tests/boot/*.sh tests/pkg/*.sh tests/ansible/*.sh tests/system/*.sh tests/powerloss/*.sh tests/powerloss/init tests/uki/*.sh bench/guest-init bench/*.sh
	mandoc -Tlint -Wwarning man/memcg-policy.8 man/memcg-policy.conf.5
	$(CLANG_FORMAT) --dry-run -Werror $(SRCS) $(HDRS)
	@echo "lint: clean"

# The house style (.clang-format): the one version it is checked with, as
# another version formats some lines otherwise
CLANG_FORMAT ?= clang-format-14
format:
	$(CLANG_FORMAT) -i $(SRCS) $(HDRS)

install-bin: $(BUILD)/memcg-policy
	install -D -m 0755 $(BUILD)/memcg-policy $(DESTDIR)$(SBINDIR)/memcg-policy

uninstall-bin:
	rm -f $(DESTDIR)$(SBINDIR)/memcg-policy

clean:
	rm -rf build build-san build-fuzz

# Fragments of the build owned by one part of the project each
# (install layout, fuzzing, boot tests, bench...).
-include mk/*.mk
