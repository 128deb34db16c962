#!/usr/bin/env python3
"""The kernel's parser judges the tool's edits (see README).

    run.py --tool BUILD/memcg-policy --kview KVIEW --limits LIMITS.txt
           [--cases N] [--seed S] [--jobs J] [--mutant MUTANT-TOOL [--mutant-cases N]]

For each generated case: a fixture root with one kernel and one slot
holding a command line; `memcg-policy --root R apply` with mode on or off,
then `revert`. The line the kernel would get from the slot, before, after
and after the revert, goes through kview (the kernel's own parse_args(),
unknown_bootoption() and set_init_arg(), truncated to the architecture's
COMMAND_LINE_SIZE - 1 as the kernel copies it) and the views are compared.
Prints one FAIL line per disagreement (minimized), a PASS line per group
without one, and last "N passed, N failed" (cases). --mutant: then the
same on a build with a deliberately wrong tokenizer, which must disagree
with the kernel somewhere (one more test: kparse/mutant-detected)."""
import argparse
import glob
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from multiprocessing import Pool

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIX = os.path.join(TOP, "tests", "fixtures")
DROPIN = os.path.join(TOP, "grub.d", "99-memcg-policy.cfg")
MEMORY = b"memory"


# ---- kernels --------------------------------------------------------------

class Kernel:
    def __init__(self, name, version, config, arch, profile, rule, default_on, arch_swap=None):
        self.name, self.version, self.config, self.arch = name, version, config, arch
        self.profile = profile      # kview profile: "mainline" (no cgroup_enable=) or "enable"
        self.rule = rule            # disable-wins, last-wins, enable-wins
        self.default_on = default_on
        self.arch_swap = arch_swap  # config text: the architecture symbols replaced


KERNELS = [
    Kernel("mainline-x86", "6.1.0-9-amd64", "debian12-amd64.config", "x86", "mainline", "disable-wins", True),
    Kernel("mainline-arm64", "6.1.0-9-arm64", "debian12-arm64.config", "arm64", "mainline", "disable-wins", True),
    Kernel("mainline-armel", "6.1.0-9-rpi", "debian12-rpi-armel.config", "arm", "mainline", "disable-wins", True),
    Kernel("mainline-riscv", "6.1.0-9-riscv64", "debian12-amd64.config", "riscv", "mainline", "disable-wins", True,
           "CONFIG_RISCV=y\nCONFIG_64BIT=y\n"),
    Kernel("mainline-mips", "6.1.0-9-mips64r2el", "debian12-amd64.config", "mips", "mainline", "disable-wins", True,
           "CONFIG_MIPS=y\nCONFIG_64BIT=y\n"),
    Kernel("debian8-off", "3.16.0-4-amd64", "debian8-3.16-amd64.config", "x86", "enable", "last-wins", False),
    Kernel("suse-off", "4.1.12-1-default", "suse-proposal-4.1-x86_64.config", "x86", "enable", "last-wins", False),
    Kernel("rpi-6.6", "6.6.51+rpt-rpi-2712", "rpi-6.6-bcm2712.config", "arm64", "enable", "enable-wins", False),
    Kernel("rpi-6.12", "6.12.25+rpt-rpi-2712", "rpi-6.12-bcm2712.config", "arm64", "enable", "last-wins", False),
]
# The Foundation's 6.12 kernel booted by the Raspberry Pi firmware with a
# device tree whose /chosen/bootargs come before cmdline.txt: judged with
# its own default (on), the prefix in the line; only in the "cmdline.txt+dt"
# slot (the other slots and GRUB take the firmware's prefix as unknown)
DT_KERNEL = Kernel("rpi-6.12-dt", "6.12.25+rpt-rpi-2712", "rpi-6.12-bcm2712.config", "arm64", "enable", "last-wins",
                   True)
# bcm2712-rpi-5-b.dts of raspberrypi/linux rpi-6.12.y (tests/fixtures/rpi/README)
DT_PREFIX = b"reboot=w coherent_pool=1M 8250.nr_uarts=1 pci=pcie_bus_safe cgroup_disable=memory numa_policy=interleave"
# GRUB menus: the kernels one GRUB command line serves; beside each kernel
# alone, pairs of one architecture where a mainline kernel and a default-off
# kernel (an older one still installed, or the Foundation's) share the menu
GRUB_MENUS = [(k.name,) for k in KERNELS] + [
    ("mainline-x86", "debian8-off"), ("mainline-x86", "suse-off"), ("mainline-arm64", "rpi-6.6"),
    ("mainline-arm64", "rpi-6.12"), ("rpi-6.12", "rpi-6.6"),
]
ARCH_SYMBOLS = re.compile(r"^CONFIG_(X86|X86_64|ARM64|ARM|RISCV|MIPS|PPC|PPC64|S390|64BIT)=.*\n", re.M)


def kernel_config(k):
    with open(os.path.join(FIX, "configs", k.config)) as f:
        text = f.read()
    if k.arch_swap:
        text = re.sub(r"^# Linux/\S+ ", "# Linux/%s " % k.arch, text, count=1, flags=re.M)
        text = ARCH_SYMBOLS.sub("", text) + k.arch_swap
    return text


# ---- slots: where a line lives, and what line the kernel gets from it -----

def ki_read(data):
    """/etc/kernel/cmdline as kernel-install reads it: tr -s "$IFS" ' '
    (space, tab, newline squeezed to one space), then one trailing space
    dropped."""
    out = re.sub(rb"[ \t\n]+", b" ", data)
    return out[:-1] if out.endswith(b" ") else out


def bls_options(data):
    """systemd-boot: every "options" line's value (after the key and its
    whitespace, trailing whitespace off), joined with one space."""
    vals = []
    for line in data.split(b"\n"):
        m = re.match(rb"^options[ \t]+(.*)$", line)
        if m:
            vals.append(m.group(1).rstrip(b" \t\r"))
    return b" ".join(vals)


def rpi_line(data):
    return data.split(b"\n", 1)[0]


def make_flashk(k, line):
    """/etc/default/flash-kernel as its package writes it, the line as
    LINUX_KERNEL_CMDLINE's value: single-quoted (a shell takes every byte
    as it is), double-quoted where the line has a single quote."""
    q = b"'" if b"'" not in line else b'"'
    return b"LINUX_KERNEL_CMDLINE=" + q + line + q + b'\nLINUX_KERNEL_CMDLINE_DEFAULTS=""\n'


def flashk_value(data):
    """The value a shell sourcing the file gives LINUX_KERNEL_CMDLINE (the
    last assignment at the start of a line), which flash-kernel puts in the
    boot script's bootargs; read here, never run: a double-quoted value
    with an expansion (which the tool does not edit) is taken as written,
    its \\ escapes undone."""
    val = b""
    for line in data.split(b"\n"):
        m = re.match(rb"^LINUX_KERNEL_CMDLINE=(['\"])(.*)\1[ \t]*$", line)
        if m:
            val = m.group(2)
            if m.group(1) == b'"':
                val = re.sub(rb'\\([$`"\\])', rb"\1", val)
    return val


class Slot:
    def __init__(self, name, path, kernels, make, kline):
        self.name, self.path, self.kernels, self.make, self.kline = name, path, kernels, make, kline


def make_bls(k, line):
    return (b"title Debian GNU/Linux\nversion " + k.version.encode() + b"\nlinux /vmlinuz-" + k.version.encode()
            + b"\ninitrd /initrd.img-" + k.version.encode() + b"\noptions " + line + b"\n")


SLOTS = [
    Slot("bls", "boot/loader/entries/kparse.conf", None, make_bls, bls_options),
    Slot("kernel-cmdline", "etc/kernel/cmdline", None, lambda k, l: l, ki_read),
    Slot("cmdline.txt", "boot/firmware/cmdline.txt", ["rpi-6.6", "rpi-6.12", "mainline-arm64"],
         lambda k, l: l + b"\n", rpi_line),
    # config.txt and the Pi 5's blob with the Foundation's prefix: the
    # kernel gets the prefix, a space, then cmdline.txt's line
    Slot("cmdline.txt+dt", "boot/firmware/cmdline.txt", ["rpi-6.12-dt", "mainline-arm64"],
         lambda k, l: l + b"\n", lambda d: DT_PREFIX + b" " + rpi_line(d)),
    # flash-kernel's LINUX_KERNEL_CMDLINE: the boot script's bootargs
    # line ends in it (its DEFAULTS empty, U-Boot's own bootargs none)
    # (the kernels of the boards it boots: Debian's arm and riscv ones,
    # Ubuntu's Raspberry Pi ones)
    Slot("flash-kernel", "etc/default/flash-kernel",
         ["mainline-arm64", "mainline-armel", "mainline-riscv", "rpi-6.6", "rpi-6.12"], make_flashk, flashk_value),
]


# ---- the kernel's view ----------------------------------------------------

class KView:
    def __init__(self, kview):
        self.p = subprocess.Popen([kview], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def view(self, profile, line):
        self.p.stdin.write(profile.encode() + b" " + line.hex().encode() + b"\n")
        self.p.stdin.flush()
        import json
        j = json.loads(self.p.stdout.readline())
        h = lambda x: None if x is None else bytes.fromhex(x)  # noqa: E731
        return {
            "p": [(h(a), h(b)) for a, b in j["p"]],
            "s": [(h(a), h(b)) for a, b in j["s"]],
            "a": [h(a) for a in j["a"]],
            "e": [h(a) for a in j["e"]],
            "x": h(j["x"]),
        }


def param_eq(a, b):
    return a.replace(b"-", b"_") == b.replace(b"-", b"_")


def items(val):
    return [i for i in (val or b"").split(b",") if i]


def memcg_state(k, v):
    """By the handlers' calls, in order, and the kernel's rule."""
    dis = en = False
    last = None
    for setup, arg in v["s"]:
        if MEMORY in items(arg):
            if setup == b"cgroup_disable=":
                dis, last = True, "off"
            else:
                en, last = True, "on"
    if k.rule == "disable-wins":
        return "off" if dis else "on"
    if k.rule == "enable-wins":
        return "on" if en else ("off" if dis or not k.default_on else "on")
    return last or ("on" if k.default_on else "off")


MANAGED = (b"cgroup_disable", b"cgroup_enable")
# accounting = full (the default) with mode on: cgroup.memory's nokmem and
# nosocket are decided too
ACCOUNTING = (b"nokmem", b"nosocket")


def norm_param(name, val, mode):
    """A parameter without the items the decision owns: the memory item of
    cgroup_disable=/cgroup_enable= lists, and with mode on cgroup.memory's
    nokmem and nosocket; None when nothing else is left."""
    if val is None:
        return (name, val)
    if any(param_eq(name, m) for m in MANAGED):
        own = (MEMORY,)
    elif mode == "on" and param_eq(name, b"cgroup.memory"):
        own = ACCOUNTING
    else:
        return (name, val)
    rest = [i for i in items(val) if i not in own]
    return (name.replace(b"-", b"_"), b",".join(rest)) if rest else None


def norm_params(v, mode):
    out = [norm_param(n, val, mode) for n, val in v["p"]]
    return [p for p in out if p]


def norm_env(v, mode):
    """The environment without cgroup_enable=/cgroup_disable= variables
    (on a kernel without such a parameter they are variables nobody reads;
    removing cgroup_enable=memory may bring back an earlier value of the
    same name, which it replaced)."""
    return [e for e in v["e"] if not any(param_eq(e.partition(b"=")[0], m) for m in MANAGED)]


def compare(k, vo, vn, mode, revert, shared=False, owns=None):
    """What differs between the views, "" if nothing that matters. mode:
    the decision ("on"/"off") for an apply; for a revert the original's
    memcg state, and the parameters are compared in any order (revert puts
    what it restores at the end)."""
    want = memcg_state(k, vo) if revert else mode
    if memcg_state(k, vn) != want:
        return "memcg %s, not %s" % (memcg_state(k, vn), want)
    nmode = None if revert else (owns or mode)
    po, pn = norm_params(vo, nmode), norm_params(vn, nmode)
    if revert:
        po, pn = sorted(po, key=repr), sorted(pn, key=repr)
    if po != pn:
        return "parameters changed"
    if mode == "on" and not revert:
        for name, val in vn["p"]:
            if param_eq(name, b"cgroup.memory") and set(items(val)) & set(ACCOUNTING):
                return "cgroup.memory= still turns accounting off"
    if vo["x"]:
        # the old line already panics at boot (too many init arguments or
        # variables): init's lists were cut there; only no new panic counts
        return "" if not vn["x"] or vn["x"] == vo["x"] else "boot panics: too many init %s" % vn["x"].decode()
    if vn["a"] != vo["a"]:
        return "init arguments changed"
    eo, en = norm_env(vo, nmode), norm_env(vn, nmode)
    if revert:
        eo, en = sorted(eo, key=repr), sorted(en, key=repr)
    if eo != en:
        return "init environment changed"
    names = set(e.partition(b"=")[0] for e in vo["e"])
    if shared:
        # one GRUB line serves a kernel that needs cgroup_enable=memory:
        # on the others it is a variable of init nobody reads
        names.add(b"cgroup_enable")
    if any(e.partition(b"=")[0] not in names for e in vn["e"]):
        return "init environment variable added"
    if vn["x"] and vn["x"] != vo["x"]:
        return "boot panics: too many init %s" % vn["x"].decode()
    return ""


# ---- running the tool -----------------------------------------------------

POLICY = "[policy]\nmode = %s\n"


class Runner:
    def __init__(self, tool, kview, limits, base):
        self.tool, self.kv, self.limits, self.base = tool, KView(kview), limits, base
        self.roots = {}

    def limit(self, k):
        return int(self.limits.get(k.arch, self.limits["generic"]))

    def root(self, k, slot):
        key = (k.name, slot.name)
        if key not in self.roots:
            r = tempfile.mkdtemp(prefix="kparse-", dir=self.base)
            for d in ("etc/kernel", "boot/firmware", "boot/loader/entries", "lib/modules/" + k.version, "etc/default"):
                os.makedirs(os.path.join(r, d), exist_ok=True)
            if slot.name == "flash-kernel":
                # flash-kernel installed: a stand-in never run (no
                # program of the image runs without --regenerate)
                os.makedirs(os.path.join(r, "usr", "sbin"), exist_ok=True)
                fk = os.path.join(r, "usr", "sbin", "flash-kernel")
                with open(fk, "w") as f:
                    f.write("#!/bin/sh\nexit 1\n")
                os.chmod(fk, 0o755)
            open(os.path.join(r, "boot", "vmlinuz-" + k.version), "w").close()
            if slot.name == "cmdline.txt+dt":
                with open(os.path.join(r, "boot", "firmware", "config.txt"), "w") as f:
                    f.write("arm_64bit=1\n[all]\n")
                blob = os.path.join(r, "boot", "firmware", "bcm2712-rpi-5-b.dtb")
                shutil.copyfile(os.path.join(FIX, "rpi", "bcm2712-rpi-5-b.dtb"), blob)
                subprocess.run(["fdtput", "-t", "s", blob, "/chosen", "bootargs", DT_PREFIX.decode()], check=True)
            with open(os.path.join(r, "boot", "config-" + k.version), "w") as f:
                f.write(kernel_config(k))
            self.roots[key] = r
        return self.roots[key]

    def run(self, r, *args):
        p = subprocess.run([self.tool, "--root", r] + list(args), capture_output=True,
                           env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"})
        return p.returncode, p.stderr.decode(errors="replace")

    def case(self, k, slot, mode, data):
        """Applies mode to data in slot, then reverts; returns the reason it
        is wrong ("" if right)."""
        r = self.root(k, slot)
        shutil.rmtree(os.path.join(r, "var"), ignore_errors=True)
        with open(os.path.join(r, "etc", "memcg-policy.conf"), "w") as f:
            f.write(POLICY % mode)
        path = os.path.join(r, slot.path)
        content = slot.make(k, data)
        with open(path, "wb") as f:
            f.write(content)
        lim = self.limit(k) - 1
        rc, err = self.run(r, "apply")
        with open(path, "rb") as f:
            new = f.read()
        old_line = slot.kline(content)
        # a line already over the limit: the tool warns; its edit is judged
        # on the whole line (the kernel loses the end either way)
        over = len(old_line) > lim
        cut = len(old_line) if over else lim
        vo = self.kv.view(k.profile, old_line[:cut])
        if rc != 0:
            if new != content:
                return "exit %d and the file changed" % rc
            if slot.name == "flash-kernel" and rc == 1 and "none it may edit" in err:
                # a value the tool does not edit: one a shell would not
                # take as written (an expansion, an escape, a quote)
                plain = not re.search(rb'[$`"\\]', content.split(b"\n")[0][len(b"LINUX_KERNEL_CMDLINE=") + 1:-1])
                return "" if not plain else "a plain value not managed: %s" % err.strip().split("\n")[-1]
            why = refusal_ok(k, old_line, lim, mode, vo, rc, err)
            return why
        new_line = slot.kline(new)
        if len(old_line) > lim and "longer than" not in err:
            return "no warning for a line over %d bytes" % lim
        if len(new_line) > lim and len(new_line) > len(old_line):
            return "line grew past %d bytes" % lim
        vn = self.kv.view(k.profile, new_line[:cut])
        why = compare(k, vo, vn, mode, False)
        if why:
            return "%s: %s -> %s" % (mode, why, show(new_line))
        rc, err = self.run(r, "revert")
        with open(path, "rb") as f:
            back = f.read()
        if rc != 0:
            return "revert exit %d: %s" % (rc, err.strip().split("\n")[-1])
        back_line = slot.kline(back)
        vb = self.kv.view(k.profile, back_line[:cut])
        why = compare(k, vo, vb, mode, True)
        if why:
            return "revert: %s -> %s" % (why, show(back_line))
        return ""


    # ---- GRUB: GRUB_CMDLINE_LINUX and _DEFAULT through the real drop-in ----

    def grub_root(self, ks):
        key = (tuple(k.name for k in ks), "grub")
        if key not in self.roots:
            r = tempfile.mkdtemp(prefix="kparse-grub-", dir=self.base)
            for d in ("etc/default/grub.d", "boot/grub", "usr/sbin", "usr/share/memcg-policy"):
                os.makedirs(os.path.join(r, d), exist_ok=True)
            for k in ks:
                os.makedirs(os.path.join(r, "lib", "modules", k.version), exist_ok=True)
                open(os.path.join(r, "boot", "vmlinuz-" + k.version), "w").close()
                with open(os.path.join(r, "boot", "config-" + k.version), "w") as f:
                    f.write(kernel_config(k))
            # the package's files in the image: a program that must not run
            # (no file of an image is run with --root) and its drop-in
            with open(os.path.join(r, "usr", "sbin", "memcg-policy"), "w") as f:
                f.write("#!/bin/sh\nexit 1\n")
            os.chmod(os.path.join(r, "usr", "sbin", "memcg-policy"), 0o755)
            shutil.copy(DROPIN, os.path.join(r, "usr", "share", "memcg-policy"))
            # Debian's grub-mkconfig (sources /etc/default/grub.d/*.cfg):
            # the system's where it is installed, else its loop alone
            mk = os.path.join(r, "usr", "sbin", "grub-mkconfig")
            if os.path.exists("/usr/sbin/grub-mkconfig"):
                shutil.copy("/usr/sbin/grub-mkconfig", mk)
            else:
                with open(mk, "w") as f:
                    f.write("#! /bin/sh\nfor x in ${sysconfdir}/default/grub.d/*.cfg ; do :; done\n")
            os.chmod(mk, 0o755)
            # what grub-mkconfig's drop-in runs: this build, reading the root
            w = os.path.join(self.base, os.path.basename(r) + ".filter")
            with open(w, "w") as f:
                f.write('#!/bin/sh\nexec "%s" --root "%s" "$@"\n' % (self.tool, r))
            os.chmod(w, 0o755)
            self.roots[key] = r
        return self.roots[key]

    def grub_values(self, r):
        """GRUB_CMDLINE_LINUX and _DEFAULT as grub-mkconfig has them: the
        root's /etc/default/grub and grub.d/*.cfg sourced by /bin/sh (set -e),
        the drop-in running this build; (values, stderr)."""
        script = ('set -e; . "$1/etc/default/grub"; for x in "$1"/etc/default/grub.d/*.cfg; do '
                  'if [ -e "$x" ]; then . "$x"; fi; done; '
                  'printf "%s" "${GRUB_CMDLINE_LINUX-}" | od -An -tx1 -v | tr -d " \n"; echo; '
                  'printf "%s" "${GRUB_CMDLINE_LINUX_DEFAULT-}" | od -An -tx1 -v | tr -d " \n"; echo')
        p = subprocess.run(["/bin/sh", "-c", script, "sh", r], capture_output=True,
                           env={"PATH": "/usr/bin:/bin", "LC_ALL": "C",
                                "MEMCG_POLICY_FILTER": os.path.join(self.base, os.path.basename(r) + ".filter")})
        if p.returncode != 0:
            return None, p.stderr.decode(errors="replace")
        lin, dflt = p.stdout.decode().split("\n")[:2]
        return (bytes.fromhex(lin), bytes.fromhex(dflt)), p.stderr.decode(errors="replace")

    def grub_case(self, ks, modes, lin, dflt):
        """GRUB: lin and dflt in /etc/default/grub, a policy deciding modes
        (one per kernel of ks), apply, the drop-in, then revert and the
        drop-in again. Each kernel's normal entry gets lin + " " + dflt,
        its recovery entry "single " + lin (10_linux). Returns the reason
        it is wrong ("" if right)."""
        r = self.grub_root(ks)
        shutil.rmtree(os.path.join(r, "var"), ignore_errors=True)
        for f in glob.glob(os.path.join(r, "etc", "default", "grub.d", "*")):
            os.unlink(f)
        if len(set(modes)) == 1:
            pol = POLICY % modes[0]
        else:
            pol = "[policy]\nmode = on\n" + "".join(
                "[kernel %s]\nmode = %s\n" % (k.version, m) for k, m in zip(ks, modes))
        with open(os.path.join(r, "etc", "memcg-policy.conf"), "w") as f:
            f.write(pol)
        q = lambda b: b"'" + b.replace(b"'", b"'\\''") + b"'"  # noqa: E731
        content = (b"GRUB_DEFAULT=0\nGRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX_DEFAULT=" + q(dflt)
                   + b"\nGRUB_CMDLINE_LINUX=" + q(lin) + b"\n")
        path = os.path.join(r, "etc", "default", "grub")
        with open(path, "wb") as f:
            f.write(content)
        lim = min(self.limit(k) for k in ks) - 1
        old = {"normal": lin + b" " + dflt, "recovery": b"single " + lin}
        if not grub_script_ok(ks, old):
            # GRUB's own parser refuses such a menu line (an odd number of
            # quotes): grub-mkconfig fails with or without the tool
            rc, err = self.run(r, "apply")
            return "" if rc in (0, 3) else "exit %d: %s" % (rc, err.strip().split("\n")[-1])
        over = len(old["normal"]) > lim
        cut = {e: max(len(old[e]), lim) for e in old}
        views = {(k.name, e): self.kv.view(k.profile, old[e][:cut[e]]) for k in ks for e in old}
        rc, err = self.run(r, "apply")
        with open(path, "rb") as f:
            if f.read() != content:
                return "apply changed /etc/default/grub"
        if rc != 0:
            if os.path.exists(os.path.join(r, "var", "lib", "memcg-policy", "grub.tokens")):
                return "exit %d and the GRUB data written" % rc
            return grub_refusal_ok(self, ks, modes, lin, dflt, lim, rc, err)
        vals, derr = self.grub_values(r)
        if vals is None:
            return "grub-mkconfig would fail: %s" % derr.strip().split("\n")[-1]
        new = {"normal": vals[0] + b" " + vals[1], "recovery": b"single " + vals[0]}
        if not grub_script_ok(ks, new):
            return "the menu line is no longer GRUB script (grub-script-check) -> %s" % show(new["normal"])
        if over and "longer than" not in err:
            return "no warning from apply for a line over %d bytes" % lim
        if over and "longer than" not in derr:
            return "no warning from the drop-in for a line over %d bytes" % lim
        for e in new:
            if len(new[e]) > lim and len(new[e]) > len(old[e]):
                return "%s line grew past %d bytes" % (e, lim)
        shared = len(ks) > 1 and any(m == "on" and k.profile == "enable" for k, m in zip(ks, modes))
        # one line serves them all: what one kernel's decision owns
        # (cgroup.memory's accounting items with memcg on) is owned for all
        owns = "on" if "on" in modes else None
        for k, m in zip(ks, modes):
            for e in new:
                vn = self.kv.view(k.profile, new[e][:cut[e]])
                why = compare(k, views[(k.name, e)], vn, m, False, shared, owns)
                if why:
                    return "%s: %s %s entry: %s -> %s" % (m, k.name, e, why, show(new[e]))
        rc, err = self.run(r, "revert")
        if rc != 0:
            return "revert exit %d: %s" % (rc, err.strip().split("\n")[-1])
        vals, derr = self.grub_values(r)
        if vals is None:
            return "after revert grub-mkconfig would fail: %s" % derr.strip().split("\n")[-1]
        back = {"normal": vals[0] + b" " + vals[1], "recovery": b"single " + vals[0]}
        for k in ks:
            for e in back:
                vb = self.kv.view(k.profile, back[e][:cut[e]])
                why = compare(k, views[(k.name, e)], vb, None, True)
                if why:
                    return "revert: %s %s entry: %s -> %s" % (k.name, e, why, show(back[e]))
        return ""


def grub_script_ok(ks, lines):
    """grub-script-check (GRUB's own parser) on each entry 10_linux writes
    from the values, alone: true when it accepts every one."""
    k = ks[0]
    for e, line in sorted(lines.items()):
        text = (b"menuentry 'Debian GNU/Linux, " + e.encode() + b"' {\n\tlinux\t/boot/vmlinuz-" + k.version.encode()
                + b" root=UUID=0a1b2c3d ro " + line + b"\n\tinitrd\t/boot/initrd.img-" + k.version.encode() + b"\n}\n")
        if subprocess.run(["grub-script-check"], input=text, capture_output=True).returncode != 0:
            return False
    return True


def grub_resolvable(runner, ks, modes):
    """Is there one line that gives every kernel of the menu its mode?
    The memcg arguments reduced to a sequence of cgroup_disable=memory and
    cgroup_enable=memory, each kernel judged by its own view and rule."""
    seqs = [[], [b"cgroup_disable=memory"], [b"cgroup_enable=memory"],
            [b"cgroup_disable=memory", b"cgroup_enable=memory"], [b"cgroup_enable=memory", b"cgroup_disable=memory"]]
    for s in seqs:
        if all(memcg_state(k, runner.kv.view(k.profile, b" ".join(s))) == m for k, m in zip(ks, modes)):
            return True
    return False


def grub_refusal_ok(runner, ks, modes, lin, dflt, lim, rc, err):
    """A GRUB refusal is right when it is exit 3 for a cause the case has:
    one of refusal_ok's, GRUB_CMDLINE_LINUX's open quote or "--" (which
    would carry an edit of _DEFAULT into a value or to init), or kernels
    that no one line can serve, named."""
    msg = err.strip().split("\n")[-1] if err.strip() else ""
    if rc != 3:
        return "exit %d: %s" % (rc, msg)
    line = lin + b" " + dflt
    for k, m in zip(ks, modes):
        # the normal entries' line, or the recovery entries' (10_linux)
        if not refusal_ok(k, line, lim, m, None, rc, err) or not refusal_ok(k, b"single " + lin, lim, m, None, rc, err):
            return ""
    if len(ks) > 1 and "COMMAND_LINE_SIZE" in err and len(line) + 2 * len(b" cgroup_disable=memory") > lim:
        return ""  # kernels of other rules: both switches, in order
    if len(ks) > 1 and "variables of init" in err and env_names(line) >= 30:
        return ""
    c = kline_split(lin)
    if "GRUB_CMDLINE_LINUX" in err and (c["open"] or c["dashdash"]):
        return ""
    if len(set(modes)) > 1 and all(k.version in err for k in ks) and not grub_resolvable(runner, ks, modes):
        return ""
    return "refused (exit 3) without a cause: %s" % msg


def env_names(b):
    """The distinct names of name=value arguments without a '.' before a
    bare "--": every one a variable of init on a kernel without such a
    parameter (what the tool must assume, not knowing the kernel's
    parameters)."""
    names = set()
    for t in b.split():
        if t.replace(b'"', b"") == b"--":
            break
        n, eq, _ = t.lstrip(b'"').partition(b"=")
        if eq and n and b"." not in n:
            names.add(n.replace(b"-", b"_"))
    return len(names)


def kline_split(b):
    """Does a line end inside an open quote, does it hold a bare "--"
    (next_arg's rules: whitespace outside quotes separates, a quote
    toggles)?"""
    toks, cur, inq, has = [], b"", False, False
    for ch in b:
        c = bytes([ch])
        if not inq and c in b" \t\n\v\f\r\xa0":
            if has:
                toks.append(cur)
            cur, has = b"", False
            continue
        has = True
        if c == b'"':
            inq = not inq
        cur += c
    if has:
        toks.append(cur)
    return {"open": inq, "dashdash": any(t.replace(b'"', b"") == b"--" for t in toks)}


def refusal_ok(k, line, lim, mode, vo, rc, err):
    """A refusal is right when it is exit 3 for a reason the case has:
    the token to add does not fit in the limit, or the memory item of a
    list cannot be taken out without changing how the kernel reads the
    other items."""
    msg = err.strip().split("\n")[-1] if err.strip() else ""
    if rc != 3:
        return "exit %d: %s" % (rc, msg)
    token = b"cgroup_disable=memory" if mode == "off" else b"cgroup_enable=memory"
    if "COMMAND_LINE_SIZE" in err and len(line) + 1 + len(token) > lim:
        return ""
    if "list" in err and re.search(rb"cgroup[-_](dis|en)able=[^ \t]*\"", line):
        return ""
    if (mode == "on" and k.rule == "disable-wins" and vo is not None and memcg_state(k, vo) == "off"
            and "/chosen/bootargs" in err):
        return ""  # the firmware's prefix turns it off, and this kernel cannot turn it on
    return "refused (exit 3) without a cause: %s" % msg


def show(b):
    s = repr(b)[2:-1]
    return s if len(s) <= 160 else s[:70] + "...(%d bytes)..." % len(b) + s[-70:]


# ---- generators -----------------------------------------------------------

def seed_lines():
    """Command lines of real bootloader configurations: the fixture roots'
    entries, cmdline files and GRUB defaults."""
    lines = []
    for f in sorted(glob.glob(os.path.join(FIX, "roots", "**", "*"), recursive=True)):
        if not os.path.isfile(f):
            continue
        with open(f, "rb") as fh:
            data = fh.read()
        if b"\0" in data:
            continue
        if "/loader/entries/" in f:
            lines += [m.group(1) for m in re.finditer(rb"^options[ \t]+(.*)$", data, re.M)]
        elif f.endswith(("/cmdline", "/cmdline.txt", "raspi-extra-cmdline")) and b"DO NOT EDIT" not in data:
            lines.append(data.strip())
    for f in sorted(glob.glob(os.path.join(FIX, "grub", "**", "*"), recursive=True)):
        if os.path.isfile(f):
            with open(f, "rb") as fh:
                for m in re.finditer(rb"^GRUB_CMDLINE_LINUX(?:_DEFAULT)?=([\"'])([^$\"']*)\1", fh.read(), re.M):
                    if m.group(2).strip():
                        lines.append(m.group(2))
    return sorted(set(lines))


MEMCG_TOKENS = [b"cgroup_disable=memory", b"cgroup_enable=memory", b"cgroup-disable=memory",
                b"cgroup_disable=memory,pressure", b"cgroup_disable=cpu,memory", b"cgroup_enable=cpuset,memory",
                b"cgroup.memory=nokmem", b"cgroup_memory=1", b"swapaccount=1", b"cgroup_disable=memory,memory",
                b"cgroup_disable=,memory,", b"cgroup_enable=memory,cpu"]
SOUP = MEMCG_TOKENS + [
    b"root=/dev/sda1", b"ro", b"rw", b"quiet", b"splash", b"init=/bin/sh", b"single", b"--", b'"--"', b'x="a b"',
    b'foo="cgroup_disable=memory"', b'"cgroup_disable=memory"', b'cgroup_disable="memory"', b'cgroup_disable="memory,cpu"',
    b'cgroup_disable=memory,"x",cpu', b'cgroup_disable=memory,"a b",cpu', b"cgroup_disable=memory\"", b'"', b"=", b"a=",
    b"=memory", b"cgroup_disable=", b"Cgroup_disable=memory", b"cgroup_disable=Memory", b"FOO=bar", b"LANG=C.UTF-8",
    b"systemd.unified_cgroup_hierarchy=1", b"console=ttyS0,115200", b"BOOT_IMAGE=/vmlinuz", b"x=", b"a=b=c",
    b"rdinit=/init", b"cgroup_enable", b"cgroup_disable", b'e="a"b"', b"cgroup_enable=memory\xa0x",
]
SPACES = [b" ", b" ", b" ", b"  ", b"\t", b" \t ", b"\xa0", b"\v", b"\f", b"\r"]
MUTATE = [b'"', b" ", b"=", b",", b"-", b"_", b"\t", b"\xa0", b"m", b"-", b"memory"]


def join(rnd, toks, slot):
    out = b""
    for i, t in enumerate(toks):
        if i:
            sp = rnd.choice(SPACES)
            if slot.name == "kernel-cmdline" and rnd.random() < 0.1:
                sp = rnd.choice([b"\n", b" \n", b"\n\n", b"\n "])
            out += sp
        out += t
    return out


def gen_realistic(rnd, seeds, slot, k, lim):
    toks = rnd.choice(seeds).split()
    for _ in range(rnd.randrange(0, 3)):
        toks.insert(rnd.randrange(0, len(toks) + 1), rnd.choice(MEMCG_TOKENS))
    return b" ".join(toks) if rnd.random() < 0.7 else join(rnd, toks, slot)


def gen_soup(rnd, seeds, slot, k, lim):
    return join(rnd, [rnd.choice(SOUP) for _ in range(rnd.randrange(1, 9))], slot)


def gen_mutation(rnd, seeds, slot, k, lim):
    b = bytearray(gen_realistic(rnd, seeds, slot, k, lim) if rnd.random() < 0.5 else gen_soup(rnd, seeds, slot, k, lim))
    for _ in range(rnd.randrange(1, 4)):
        op, pos = rnd.randrange(3), rnd.randrange(0, len(b) + 1)
        if op == 0:
            b[pos:pos] = rnd.choice(MUTATE)
        elif op == 1 and pos < len(b):
            del b[pos]
        elif pos < len(b):
            b[pos:pos + 1] = rnd.choice(MUTATE)
    return bytes(b)


def gen_near_limit(rnd, seeds, slot, k, lim):
    """A line whose length is around lim minus what an edit adds (and a
    few already over it), filled with parameters and init arguments."""
    base = gen_realistic(rnd, seeds, slot, k, lim)
    target = lim - rnd.choice([0, 1, 2, 20, 21, 22, 23, 30, -1, -5]) - rnd.randrange(0, 3)
    tail = b""
    if rnd.random() < 0.3:
        tail = b" -- single"
    line = base
    i = 0
    while len(line) + len(tail) < target:
        i += 1
        line += b" p%d=%s" % (i, b"x" * rnd.randrange(1, 40))
    line = (line + tail)[:max(target, 1)] if rnd.random() < 0.5 else line + tail
    return line.rstrip()


def gen_envs(rnd, seeds, slot, k, lim):
    """Init environment variables near MAX_INIT_ENVS."""
    n = rnd.randrange(26, 32)
    toks = [b"root=/dev/vda1", b"ro"] + [b"E%d=v" % i for i in range(n)]
    if rnd.random() < 0.5:
        toks.insert(rnd.randrange(len(toks) + 1), rnd.choice(MEMCG_TOKENS))
    return b" ".join(toks)


GENERATORS = [("realistic", gen_realistic, 3), ("soup", gen_soup, 3), ("mutation", gen_mutation, 3),
              ("near-limit", gen_near_limit, 1), ("init-env", gen_envs, 1)]


def plan(n, seed):
    """The cases: (index, generator, kernel, slot, mode), deterministic."""
    rnd = random.Random(seed)
    weighted = [g for g in GENERATORS for _ in range(g[2])]
    combos = [(k, s) for k in KERNELS + [DT_KERNEL] for s in SLOTS
              if (not s.kernels and k is not DT_KERNEL) or k.name in (s.kernels or [])]
    return [(i, rnd.choice(weighted)[0], *rnd.choice(combos), rnd.choice(["on", "off"])) for i in range(n)]


def plan_grub(n, seed):
    """The GRUB cases: (index, generator, kernels, "grub", modes), their own
    deterministic stream. A menu of two kernels is decided alike or apart
    ([kernel VERSION] sections)."""
    rnd = random.Random("grub:%d" % seed)
    weighted = [g for g in GENERATORS for _ in range(g[2])]
    out = []
    for i in range(n):
        gen, menu = rnd.choice(weighted)[0], rnd.choice(GRUB_MENUS)
        modes = tuple(rnd.choice(["on", "off"]) for _ in menu)
        if len(menu) > 1 and rnd.random() < 0.5:
            modes = (modes[0],) * len(menu)
        out.append((i, "grub-" + gen, ",".join(menu), "grub", ",".join(modes)))
    return out


GRUB_SLOT = Slot("grub", "etc/default/grub", None, None, None)
GRUB_DEFAULTS = [b"quiet", b"quiet splash", b"", b"quiet loglevel=3", b"splash cgroup_disable=memory",
                 b"cgroup_enable=memory quiet"]


def grub_pair(rnd, line):
    """GRUB_CMDLINE_LINUX and _DEFAULT from a line: all of it in the first;
    cut at any byte (an open quote or a "--" may run on into the second);
    or the second a distribution's own value."""
    r = rnd.random()
    if r < 0.2:
        return line, b""
    if r < 0.7:
        p = rnd.randrange(0, len(line) + 1)
        return line[:p], line[p:]
    return line, rnd.choice(GRUB_DEFAULTS)


# ---- workers ----------------------------------------------------------------

W = {}


def worker_init(args):
    W["args"] = args
    W["seeds"] = seed_lines()
    W["base"] = tempfile.mkdtemp(prefix="kparse-", dir=args["tmp"])
    W["runner"] = Runner(args["tool"], args["kview"], args["limits"], W["base"])


def line_of(i, gen, k, slot, seed):
    rnd = random.Random("%d:%d" % (seed, i))
    g = dict((n, f) for n, f, _ in GENERATORS)[gen]
    line = g(rnd, W["seeds"], slot, k, W["runner"].limit(k) - 1)
    if slot.name != "kernel-cmdline":
        line = line.replace(b"\n", b" ")
    return line.replace(b"\0", b"")


def minimize(k, slot, mode, line, why):
    """Greedy: drop tokens, then bytes, while the case still fails the same
    way (same first word of the reason); at most a few hundred runs."""
    r = W["runner"]
    cls = why.split(":")[0]
    budget = [300]

    def fails(cand):
        if budget[0] <= 0:
            return False
        budget[0] -= 1
        w = r.case(k, slot, mode, cand)
        return bool(w) and w.split(":")[0] == cls

    parts = re.split(rb"([ \t\n]+)", line)
    i = 0
    while i < len(parts):
        cand = b"".join(parts[:i] + parts[i + 2:])
        if parts[i].strip() and fails(cand):
            parts = parts[:i] + parts[i + 2:]
        else:
            i += 2
    line = b"".join(parts)
    if len(line) < 200:
        i = 0
        while i < len(line):
            cand = line[:i] + line[i + 1:]
            if fails(cand):
                line = cand
            else:
                i += 1
    return line, r.case(k, slot, mode, line) or why


def grub_values_of(i, gen, ks, seed):
    rnd = random.Random("grub:%d:%d" % (seed, i))
    g = dict((n, f) for n, f, _ in GENERATORS)[gen[len("grub-"):]]
    lim = min(W["runner"].limit(k) for k in ks) - 1
    line = g(rnd, W["seeds"], GRUB_SLOT, ks[0], lim).replace(b"\n", b" ").replace(b"\0", b"")
    return grub_pair(rnd, line)


def minimize_grub(ks, modes, lin, dflt, why):
    """minimize() for the pair: tokens of each value, while it fails the
    same way."""
    r = W["runner"]
    cls = why.split(":")[0]
    budget = [300]

    def fails(a, b):
        if budget[0] <= 0:
            return False
        budget[0] -= 1
        w = r.grub_case(ks, modes, a, b)
        return bool(w) and w.split(":")[0] == cls

    vals = [lin, dflt]
    for v in (0, 1):
        parts = re.split(rb"([ \t]+)", vals[v])
        i = 0
        while i < len(parts):
            cand = b"".join(parts[:i] + parts[i + 2:])
            trial = list(vals)
            trial[v] = cand
            if parts[i].strip() and fails(*trial):
                parts = parts[:i] + parts[i + 2:]
                vals[v] = cand
            else:
                i += 2
    return vals[0], vals[1], r.grub_case(ks, modes, vals[0], vals[1]) or why


def work(c):
    i, gen, kname, sname, mode = c
    if sname == "grub":
        ks = [next(x for x in KERNELS if x.name == n) for n in kname.split(",")]
        modes = mode.split(",")
        lin, dflt = grub_values_of(i, gen, ks, W["args"]["seed"])
        why = W["runner"].grub_case(ks, modes, lin, dflt)
        if why and W["args"]["minimize"]:
            lin, dflt, why = minimize_grub(ks, modes, lin, dflt, why)
        return (i, gen, kname, sname, mode, (lin, dflt), why)
    k = next(x for x in KERNELS + [DT_KERNEL] if x.name == kname)
    slot = next(x for x in SLOTS if x.name == sname)
    seed = W["args"]["seed"]
    line = line_of(i, gen, k, slot, seed)
    why = W["runner"].case(k, slot, mode, line)
    if why and W["args"]["minimize"]:
        small, swhy = minimize(k, slot, mode, line, why)
        return (i, gen, kname, sname, mode, small, swhy)
    return (i, gen, kname, sname, mode, line, why)


def run_cases(a, limits, tool, n, ngrub, minimize):
    """Runs n cases on tool; returns (results, failed)."""
    tmp = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    base = tempfile.mkdtemp(prefix="kparse-run-", dir=tmp)
    args = {"tool": os.path.abspath(tool), "kview": os.path.abspath(a.kview), "limits": limits,
            "seed": a.seed, "tmp": base, "minimize": False}
    cases = [(i, g, k.name, s.name, m) for i, g, k, s, m in plan(n, a.seed)] + plan_grub(ngrub, a.seed)
    try:
        with Pool(a.jobs, worker_init, (args,)) as pool:
            results = pool.map(work, cases, chunksize=16)
        failed = [r for r in results if r[6]]
        if failed and minimize:
            args["minimize"] = True
            with Pool(a.jobs, worker_init, (args,)) as pool:
                small = pool.map(work, [r[:5] for r in failed[:a.max_minimize]])
            failed = small + failed[a.max_minimize:]
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return results, failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--kview", required=True)
    ap.add_argument("--limits", required=True)
    ap.add_argument("--cases", type=int, default=int(os.environ.get("KPARSE_CASES", "3000")))
    ap.add_argument("--grub-cases", type=int, default=int(os.environ.get("KPARSE_GRUB_CASES", "3000")))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("KPARSE_SEED", "16")))
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("KPARSE_JOBS", "2")))
    ap.add_argument("--max-minimize", type=int, default=20)
    ap.add_argument("--mutant")
    ap.add_argument("--mutant-cases", type=int, default=800)
    a = ap.parse_args()
    limits = {}
    with open(a.limits) as f:
        for l in f:
            name, val = l.split()
            limits[name] = val
    results, failed = run_cases(a, limits, a.tool, a.cases, a.grub_cases, True)
    groups = {}
    for r in results:
        groups.setdefault(r[1], [0, 0])[1 if r[6] else 0] += 1
    for i, gen, kname, sname, mode, line, why in sorted(failed):
        if sname == "grub":
            print("FAIL: kparse/%s/%d %s %s %s: %s | GRUB_CMDLINE_LINUX: %s | GRUB_CMDLINE_LINUX_DEFAULT: %s"
                  % (gen, i, kname, sname, mode, why, show(line[0]), show(line[1])))
            continue
        print("FAIL: kparse/%s/%d %s %s %s: %s | line: %s" % (gen, i, kname, sname, mode, why, show(line)))
    for g, (p, f) in sorted(groups.items()):
        if not f:
            print("PASS: kparse/%s (%d cases)" % (g, p))
    npass, nfail = len(results) - len(failed), len(failed)
    print("kparse: %d cases (%d GRUB; seed %d), %d disagree with the kernel"
          % (len(results), sum(1 for r in results if r[3] == "grub"), a.seed, nfail))
    if a.mutant:
        mres, mfailed = run_cases(a, limits, a.mutant, a.mutant_cases, a.mutant_cases // 4, False)
        print("kparse mutant ('-' and '_' differ): %d of %d cases disagree with the kernel"
              % (len(mfailed), len(mres)))
        for r in sorted(mfailed)[:3]:
            print("  e.g. kparse/%s/%d %s %s %s: %s" % (r[1], r[0], r[2], r[3], r[4], r[6]))
        if mfailed:
            print("PASS: kparse/mutant-detected")
            npass += 1
        else:
            print("FAIL: kparse/mutant-detected: the wrong tokenizer passed every case")
            nfail += 1
    print("%d passed, %d failed" % (npass, nfail))
    return 0 if nfail == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
