#!/usr/bin/env python3
"""Takes the kernel's command-line parser out of Debian's linux-source
tarball, at test time (nothing of the kernel is kept in this repository).

    extract.py TARBALL OUTDIR

Extracts only the files named below, cuts out the functions and variables
the harness needs, and writes
    OUTDIR/kernel-parse.c   those pieces, verbatim, in source order
    OUTDIR/limits.txt       "ARCH COMMAND_LINE_SIZE" per architecture, and
                            "init-env-arg-limit N" (MAX_INIT_ARGS/ENVS)
The harness (kview.c) includes kernel-parse.c after its shims (kshim.h)."""
import os
import re
import subprocess
import sys

FUNCS = {
    "lib/ctype.c": [("var", "const unsigned char _ctype[]")],
    "lib/string_helpers.c": [("func", "skip_spaces")],
    "lib/cmdline.c": [("func", "next_arg")],
    "kernel/params.c": [("func", "dash2underscore"), ("func", "parameqn"), ("func", "parameq"),
                        ("func", "parse_one"), ("func", "parse_args")],
    "init/main.c": [("line", "#define MAX_INIT_ARGS"), ("line", "#define MAX_INIT_ENVS"),
                    ("line", "static char *execute_command;"),
                    ("line", "static char *ramdisk_execute_command"),
                    ("line", "static const char *argv_init["), ("line", "const char *envp_init["),
                    ("line", "static const char *panic_later"),
                    ("func", "obsolete_checksetup"), ("func", "repair_env_string"),
                    ("func", "set_init_arg"), ("func", "unknown_bootoption"),
                    ("func", "init_setup"), ("func", "rdinit_setup")],
}
CTYPE_H = "include/linux/ctype.h"
KCONFIG = "init/Kconfig"


def cut_func(lines, name, path):
    """The definition of function name: from its first line (at column 0,
    the name followed by '(') to the first line that is '}'."""
    pat = re.compile(r"^[A-Za-z_][\w \t\*]*\b%s\(" % re.escape(name))
    for i, l in enumerate(lines):
        if pat.match(l) and not l.rstrip().endswith(";"):
            for j in range(i, len(lines)):
                if lines[j].rstrip() == "}":
                    return lines[i:j + 1]
    sys.exit("extract.py: %s not found in %s" % (name, path))


def cut_var(lines, decl, path):
    for i, l in enumerate(lines):
        if l.startswith(decl):
            for j in range(i, len(lines)):
                if lines[j].rstrip().endswith(";"):
                    return lines[i:j + 1]
    sys.exit("extract.py: %s not found in %s" % (decl, path))


def cut_line(lines, prefix, path):
    for l in lines:
        if l.startswith(prefix):
            return [l]
    sys.exit("extract.py: %r not found in %s" % (prefix, path))


def main():
    tarball, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    src = os.path.join(out, "src")
    # the top directory, from the first member (tar stops when the pipe closes)
    with subprocess.Popen(["tar", "-tJf", tarball], stdout=subprocess.PIPE, text=True) as p:
        first = p.stdout.readline()
        p.kill()
    prefix = first.split("/")[0] + "/"
    wanted = [prefix + f for f in list(FUNCS) + [CTYPE_H, KCONFIG]]
    wanted += [prefix + "arch/*/include/asm/setup.h", prefix + "arch/*/include/uapi/asm/setup.h",
               prefix + "include/uapi/asm-generic/setup.h"]
    subprocess.run(["tar", "-xJf", tarball, "-C", out, "--wildcards", "--no-wildcards-match-slash",
                    "--transform", "s,^%s,src/," % prefix.rstrip("/")] + wanted, check=True)
    setups = []
    for d, _, files in os.walk(src):
        if "setup.h" in files:
            rel = os.path.relpath(os.path.join(d, "setup.h"), src)
            if re.match(r"^(arch/[^/]+/include/(uapi/)?asm/setup\.h|include/uapi/asm-generic/setup\.h)$", rel):
                setups.append(rel)

    def read(rel):
        with open(os.path.join(src, rel), encoding="utf-8", errors="surrogateescape") as f:
            return f.read().split("\n")

    pieces = ["/* Cut from the kernel's sources by tests/kparse/extract.py; see kview.c. */"]
    ctype = read(CTYPE_H)
    pieces.append("/* --- %s --- */" % CTYPE_H)
    pieces += [l for l in ctype if re.match(r"#define (_[CULDPXS]|_SP|__ismask|isspace)\b", l)]
    for rel, items in FUNCS.items():
        lines = read(rel)
        pieces.append("/* --- %s --- */" % rel)
        for kind, what in items:
            if kind == "func":
                pieces += cut_func(lines, what, rel)
            elif kind == "var":
                pieces += cut_var(lines, what, rel)
            else:
                pieces += cut_line(lines, what, rel)
            pieces.append("")
    with open(os.path.join(out, "kernel-parse.c"), "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write("\n".join(pieces) + "\n")

    limits = {}
    define = re.compile(r"^\s*#\s*define\s+COMMAND_LINE_SIZE\s+(\S+)")
    for rel in sorted(setups):
        arch = rel.split("/")[1] if rel.startswith("arch/") else "generic"
        for l in read(rel):
            mm = define.match(l)
            if mm:
                # sparc: 2048 for sparc64, 256 for sparc32 (#ifdef); keep the first
                limits.setdefault(arch, mm.group(1))
    kconfig = "\n".join(read(KCONFIG))
    mm = re.search(r"config INIT_ENV_ARG_LIMIT\n\tint\n\tdefault (\d+) if !UML", kconfig)
    if not mm:
        sys.exit("extract.py: INIT_ENV_ARG_LIMIT not found in init/Kconfig")
    with open(os.path.join(out, "limits.txt"), "w") as f:
        for arch in sorted(limits):
            f.write("%s %s\n" % (arch, limits[arch]))
        f.write("init-env-arg-limit %s\n" % mm.group(1))


if __name__ == "__main__":
    main()
