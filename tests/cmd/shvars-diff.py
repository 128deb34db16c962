#!/usr/bin/env python3
"""The shell-assignment reader (src/lib/shvars.c) against /bin/sh.

For every case (one or more files sourced in order, as grub-mkconfig
sources /etc/default/grub and its drop-ins), a shell with `set -e` sources
them and prints the variables; the reader says of each variable "known:
VALUE", "unset" or "unknown". Wherever the reader says it knows, the shell
must agree (value, or unset); where the shell fails (a syntax error, a
failing command under set -e), the reader must not claim to know, unless the text has code that may be what
failed (a command substitution under set -e stops the shell; the reader
knows the values as they are when it does not fail). The
reader may say "unknown" where the shell would know (it does not run
code): those are counted, and for the real files they must not touch the
two GRUB_CMDLINE variables.

Cases: every real file given with --real (each alone, in a root's order),
then N generated ones from a seed. Prints PASS/FAIL lines and a summary
for tests/run.sh."""
import argparse
import os
import random
import subprocess
import sys
import tempfile

NAMES = ["A", "B", "C", "GRUB_CMDLINE_LINUX", "GRUB_CMDLINE_LINUX_DEFAULT", "GRUB_DISTRIBUTOR",
         "GRUB_TIMEOUT", "GRUB_DEFAULT", "GRUB_TERMINAL", "GRUB_ENABLE_BLSCFG", "GRUB_DISABLE_RECOVERY"]


def shell_batch(sh, cases, names):
    """One shell for every case: each in a subshell with set -e, its values
    NUL-separated, then FAILED if the subshell failed, then \\036."""
    script = ""
    for files in cases:
        script += "(\nset -e\n"
        for f in files:
            script += '. "%s"\n' % f
        for n in names:
            script += ('if [ -n "${%s+x}" ]; then printf "%%s=known:%%s\\0" %s "$%s"; '
                       'else printf "%%s=unset\\0" %s; fi\n') % (n, n, n, n)
        script += ")\n[ $? -eq 0 ] || printf FAILED\nprintf '\\036'\n"
    with tempfile.NamedTemporaryFile("w", suffix=".sh") as fh:
        fh.write(script)
        fh.flush()
        p = subprocess.run([sh, fh.name], capture_output=True, env={"PATH": "/usr/bin:/bin"},
                           timeout=600, cwd=tempfile.gettempdir())
    out = []
    for rec in p.stdout.split(b"\036")[:len(cases)]:
        out.append(None if rec.endswith(b"FAILED") else parse(rec))
    return out


def reader_batch(dumper, cases, names, d):
    manifest = os.path.join(d, "manifest")
    with open(manifest, "w") as fh:
        for files in cases:
            fh.write("\t".join(files) + "\n")
    p = subprocess.run([dumper, "--dump-batch", manifest] + names, capture_output=True, timeout=600)
    if p.returncode != 0:
        raise SystemExit("test-shvars --dump-batch failed: %r" % p.stderr)
    return [parse(rec) for rec in p.stdout.split(b"\036")[:len(cases)]]


def shell_values(sh, files, names):
    script = 'set -e\nfor memcg_f in "$@"; do . "$memcg_f"; done\n'
    for n in names:
        script += ('if [ -n "${%s+x}" ]; then printf "%%s=known:%%s\\0" %s "$%s"; '
                   'else printf "%%s=unset\\0" %s; fi\n') % (n, n, n, n)
    p = subprocess.run([sh, "-c", script, "sh"] + files, capture_output=True, env={"PATH": "/usr/bin:/bin"},
                       timeout=20, cwd=tempfile.gettempdir())
    if p.returncode != 0:
        return None
    return parse(p.stdout)


def parse(out):
    d = {}
    for item in out.split(b"\0"):
        if not item:
            continue
        k, _, v = item.partition(b"=")
        d[k.decode()] = v
    return d


def reader_values(dumper, files, names):
    p = subprocess.run([dumper, "--dump"] + names + ["--"] + files, capture_output=True, timeout=20)
    if p.returncode != 0:
        raise SystemExit("test-shvars --dump failed: %r" % p.stderr)
    return parse(p.stdout)


WORDS = ["quiet", "splash", "root=/dev/sda1", "cgroup_disable=memory", "a,b", "x.y", "-", "--", "=", "ro",
         "console=ttyS0,115200n8", "init=/bin/sh", "1", "", "*", "?", "[ab]", "~", "a:~", "%", "@", "{", "}"]


def gen_part(r, defined):
    k = r.randrange(15)
    w = r.choice(WORDS)
    if k == 0:
        return "'" + w.replace("'", "'\\''") + " " + r.choice(WORDS) + "'"
    if k == 1:
        inner = r.choice(["", "\\\"", "\\$", "\\\\", "\\`", "\\x", "$"]) + w
        if defined and r.random() < 0.5:
            inner += r.choice(["$", "${"]) + r.choice(defined) + ("}" if inner.endswith("${") else "")
            if inner.endswith("${" + inner.split("${")[-1]) and not inner.endswith("}"):
                inner += "}"
        return '"' + inner.replace("${" + "}", "") + " " + r.choice(WORDS) + '"'
    if k == 2 and defined:
        return "$" + r.choice(defined)
    if k == 3 and defined:
        return "${" + r.choice(defined) + "}"
    if k == 4:
        return "\\" + r.choice([" ", "\"", "'", "$", "a", "\\\n"])
    if k == 5:
        return r.choice(["$(echo sub)", "`echo bq`", "${A:-dflt}", "$1", "$((1+2))", "\"$(echo q)\""])
    if k == 6:
        return "\\\n" + w
    return "".join(c for c in w if c not in " ;&|<>()'\"\\$`#")


def gen_statement(r, defined):
    k = r.randrange(20)
    name = r.choice(NAMES[:6])
    if k == 0:
        return "# " + r.choice(WORDS)
    if k == 1:
        return ""
    if k == 2:
        return "export " + " ".join(r.sample(NAMES[:5], 2))
    if k == 3:
        return "unset " + name
    if k == 4:
        return r.choice(["true", ":", "echo x >/dev/null", "if true; then A=1; fi", "A=1 true",
                         "A=1 && B=2", "readonly Z", "f() { :; }"])
    value = "".join(gen_part(r, defined) for _ in range(r.randrange(0, 4)))
    stmt = ("export " if k == 5 else "") + name + "=" + value
    if k == 6:
        stmt += " " + r.choice(NAMES[:3]) + "=" + gen_part(r, defined + [name])
    if k == 7:
        stmt += "; " + r.choice(NAMES[:3]) + "=$" + name
    if k == 8:
        stmt = "  " + stmt + "  # trailing"
    return stmt


def gen_case(r):
    files = []
    defined = []
    for _ in range(r.randrange(1, 4)):
        lines = []
        for _ in range(r.randrange(1, 7)):
            s = gen_statement(r, defined)
            lines.append(s)
            for n in NAMES:
                if s.startswith(n + "=") or s.startswith("export " + n + "="):
                    defined.append(n)
        files.append("\n".join(lines) + ("\n" if r.random() < 0.9 else ""))
    return files


def compare(sh, dumper, files, names, shv=0, rv=None):
    """None when they agree, else a text saying where not; and how many
    variables the reader left unknown."""
    if shv == 0:
        shv = shell_values(sh, files, names)
    if rv is None:
        rv = reader_values(dumper, files, names)
    unknown = [n for n in names if rv.get(n) == b"unknown"]
    for n in names:
        got = rv.get(n)
        if got is None:
            return "the reader printed nothing for %s" % n, unknown
        if got == b"unknown":
            continue
        if shv is None:
            # a command substitution that fails stops a set -e shell: the
            # reader knows the values only as they are if it does not
            if rv.get(".code") == b"yes":
                continue
            return "the shell fails on it, the reader says %s=%r" % (n, got), unknown
        if shv.get(n) != got:
            return "%s: shell %r, reader %r" % (n, shv.get(n), got), unknown
    return None, unknown


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dumper", required=True)
    ap.add_argument("--sh", default="/bin/sh")
    ap.add_argument("--real", nargs="*", default=[])
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    passed = failed = 0
    for f in a.real:
        files = [f]
        if os.path.isdir(f):
            dg = os.path.join(f, "default-grub")
            dd = os.path.join(f, "grub.d")
            files = ([dg] if os.path.exists(dg) else []) + \
                (sorted(os.path.join(dd, x) for x in os.listdir(dd) if x.endswith(".cfg")) if os.path.isdir(dd) else [])
        bad, unknown = compare(a.sh, a.dumper, files, NAMES)
        cmdline_unknown = [n for n in unknown if n.startswith("GRUB_CMDLINE_LINUX")]
        name = "real files %s" % os.path.relpath(f)
        if bad or cmdline_unknown:
            failed += 1
            print("FAIL: %s: %s" % (name, bad or "the reader cannot know %s" % cmdline_unknown))
        else:
            passed += 1
            print("PASS: %s: the reader agrees with %s (unknown: %s)" % (name, a.sh, ", ".join(unknown) or "none"))
    r = random.Random(a.seed)
    disagreements = []
    unknown_total = 0
    with tempfile.TemporaryDirectory() as d:
        cases, texts_of = [], []
        for i in range(a.cases):
            texts = gen_case(r)
            paths = []
            for j, t in enumerate(texts):
                p = os.path.join(d, "c%d-f%d" % (i, j))
                with open(p, "w") as fh:
                    fh.write(t)
                paths.append(p)
            cases.append(paths)
            texts_of.append(texts)
        shv = shell_batch(a.sh, cases, NAMES[:6])
        rv = reader_batch(a.dumper, cases, NAMES[:6], d)
        for i, paths in enumerate(cases):
            bad, unknown = compare(a.sh, a.dumper, paths, NAMES[:6], shv[i], rv[i])
            unknown_total += len(unknown)
            if bad:
                disagreements.append((i, bad, texts_of[i]))
    for i, bad, texts in disagreements[:5]:
        print("  case %d: %s\n    %r" % (i, bad, texts))
    name = "%d generated cases (seed %d): the reader never claims a value the shell does not give" % (a.cases, a.seed)
    if disagreements:
        failed += 1
        print("FAIL: %s (%d disagree)" % (name, len(disagreements)))
    else:
        passed += 1
        print("PASS: %s (%d variables left unknown of %d)" % (name, unknown_total, a.cases * 6))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
