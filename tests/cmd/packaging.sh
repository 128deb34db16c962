#!/bin/bash
# What ships besides the program: the man pages against --help and the
# sources (both ways), mandoc -Tlint, shellcheck, the bash completion, the
# kernel hooks as kernel-install and run-parts call them (with a stand-in
# program, then with the real one on a fixture root), and make install /
# uninstall. Lint tools that are not installed are reported as SKIP lines
# (neither passed nor failed).
# shellcheck disable=SC1091
. "$TOP/tests/lib.sh"
MAN8=$TOP/man/memcg-policy.8
MAN5=$TOP/man/memcg-policy.conf.5
HOOK_KI=$TOP/hooks/95-memcg-policy.install
HOOK_DEB=$TOP/hooks/50-memcg-policy.postinst
COMPLETION=$TOP/completion/memcg-policy
skip() { echo "SKIP: $1 ($2)"; }
have() { command -v "$1" >/dev/null 2>&1; }

# set_eq NAME GOT WANT: two newline-separated sets, compared sorted
set_eq() {
	expect_eq "$1" "$(printf '%s\n' "$2" | sed '/^$/d' | sort -u)" "$(printf '%s\n' "$3" | sed '/^$/d' | sort -u)"
}
# The roff source of one section (.Sh NAME) of a man page.
man_section() { awk -v s=".Sh $2" '$0 == s { on = 1; next } /^\.Sh / { on = 0 } on' "$1"; }
# mdoc: "Fl -root" is --root
man_long_opts() { grep -oE 'Fl -[a-z][a-z0-9-]*' | sed 's/^Fl /-/' | sort -u; }
man_short_opts() { grep -oE '(^|[ ])Fl [a-zA-Z]( |$)' | sed -E 's/^ ?Fl ([a-zA-Z]) ?$/-\1/' | sort -u; }
help_long_opts() { grep -oE -- '--[a-z][a-z0-9-]*' | sort -u; }
help_short_opts() { grep -oE -- '(^|[][ ,|])-[a-zA-Z]([],| |]|$)' | sed -E 's/^.?(-[a-zA-Z]).?$/\1/' | sort -u; }

# ---- lint ----------------------------------------------------------------
if have mandoc; then
	for m in "$MAN8" "$MAN5"; do
		out=$(mandoc -Tlint -Wwarning "$m" 2>&1)
		rc=$?
		expect_eq "mandoc -Tlint -Wwarning $(basename "$m"): clean" "$rc:$out" "0:"
	done
else
	skip "mandoc -Tlint" "mandoc not installed"
fi
if have shellcheck; then
	check "shellcheck -s sh hooks" shellcheck -s sh "$HOOK_KI" "$HOOK_DEB"
	check "shellcheck -s bash completion" shellcheck -s bash "$COMPLETION"
else
	skip "shellcheck" "shellcheck not installed"
fi
if have dash; then
	check "hooks parse with dash -n" dash -n "$HOOK_KI" "$HOOK_DEB"
fi
if have checkbashisms; then
	check "hooks: checkbashisms" checkbashisms -f "$HOOK_KI" "$HOOK_DEB"
else
	skip "checkbashisms" "devscripts not installed"
fi
expect_eq "hooks: /bin/sh scripts" "$(head -n 1 "$HOOK_KI"; head -n 1 "$HOOK_DEB")" "$(printf '#!/bin/sh\n#!/bin/sh')"
check "hooks: executable in the tree" test -x "$HOOK_KI" -a -x "$HOOK_DEB"

# ---- man pages against the sources (no binary needed) --------------------
codes_src=$(sed -nE 's/^[[:space:]]*EXIT_[A-Z]+ = ([0-9]+),?.*/\1/p' "$TOP/src/lib/util.h")
codes_man=$(man_section "$MAN8" "EXIT STATUS" | sed -nE 's/^\.It ([0-9]+)$/\1/p')
set_eq "man 8 EXIT STATUS lists the exit codes of util.h" "$codes_man" "$codes_src"

env_src=$(cat "$TOP"/src/*.[ch] "$TOP"/src/*/*.[ch] "$TOP"/src/*/*/*.[ch] "$TOP"/grub.d/* "$TOP"/hooks/* | grep -oE 'MEMCG_POLICY_[A-Z0-9_]+' | sort -u)
# a user's variables in the manual, the test suite's in HACKING.md: each
# documented in one of the two
env_man=$(man_section "$MAN8" ENVIRONMENT | sed -nE 's/^\.It Ev (.*)/\1/p' | grep -oE 'MEMCG_POLICY_[A-Z0-9_]+')
env_hacking=$(sed -n '/^## The program.s test hooks/,/^## /p' "$TOP/HACKING.md" | sed -nE 's/^- `(MEMCG_POLICY_[A-Z0-9_]+).*/\1/p')
set_eq "every MEMCG_POLICY_ variable of the sources, drop-in and hooks is in man 8 ENVIRONMENT or HACKING.md's test hooks" \
	"$(printf '%s\n%s\n' "$env_man" "$env_hacking" | sort)" "$env_src"
expect_eq "man 8 ENVIRONMENT names no test-only variable" \
	"$(grep -c -E 'FAILPOINT|CRASHPOINT|HOLD_MS|TRUST_BOOT|NO_OPENAT2' <<<"$env_man")" 0

keys_src=$(grep -oE '(PKEY\(SEC_[A-Z]+, |KKEY\(|\{ SEC_[A-Z]+, )"[a-z-]+"' "$TOP/src/facts/policy.c" |
	sed -E 's/^PKEY\(SEC_([A-Z]+), "(.*)"$/\1 \2/; s/^KKEY\("(.*)"$/KERNEL \1/; s/^\{ SEC_([A-Z]+), "(.*)"$/\1 \2/' |
	tr '[:upper:]' '[:lower:]')
# keys of the man page, by the .Ss section they are in
keys_man=$(man_section "$MAN5" "SECTIONS AND KEYS" | awk '
	/^\.Ss \[policy\]/ { s = "policy" } /^\.Ss \[auto\]/ { s = "auto" }
	/^\.Ss \[kernel/ { s = "kernel" } /^\.Ss \[bootloaders\]/ { s = "bootloaders" }
	/^\.It Cm [a-z-]+ =/ { print s, $3 }')
set_eq "man 5 documents every key of policy.c, in its section" "$keys_man" "$keys_src"

if [ -f "$TOP/conf/memcg-policy.conf" ]; then
	keys_conf=$(sed -nE 's/^#?([a-z][a-z-]*) *=.*/\1/p' "$TOP/conf/memcg-policy.conf" | sort -u)
	set_eq "conf/memcg-policy.conf shows every key" "$keys_conf" "$(printf '%s\n' "$keys_src" | cut -d' ' -f2 | sort -u)"
	# The defaults the shipped file shows are the ones the man page gives.
	bad=''
	while IFS= read -r line; do
		key=$(printf '%s' "$line" | sed -E 's/^#([a-z-]+) *=.*/\1/')
		val=$(printf '%s' "$line" | sed -E 's/^#[a-z-]+ *= *//; s/ *$//')
		sect=$(awk -v k="$key" '/^#?\[/ { s = $0 } $0 ~ "^#" k " *=" { print s; exit }' "$TOP/conf/memcg-policy.conf")
		case $sect in
		'[policy]' | '[auto]') ;;
		*) continue ;;
		esac
		# the .It block of the key, macros taken off, on one line
		block=$(man_section "$MAN5" "SECTIONS AND KEYS" | awk -v k="$key" '
			/^\.It Cm / { on = ($3 == k) } on' | sed -E 's/^\.(Cm|Ql|Ar) //; s/^\.[A-Z][a-z] ?//' | tr '\n' ' ')
		want="Default: ${val:-empty}"
		case $block in
		*"$want"*) ;;
		*) bad="$bad $key($want)" ;;
		esac
	done < <(grep -E '^#[a-z][a-z-]* *=' "$TOP/conf/memcg-policy.conf" | awk '!seen[$1]++')
	expect_eq "man 5 gives the defaults conf/memcg-policy.conf shows" "$bad" ""
	if grep -qE '^#(grub|systemd-boot|kernel-cmdline|rpi|regenerate) = auto$' "$TOP/conf/memcg-policy.conf" &&
		man_section "$MAN5" "SECTIONS AND KEYS" | grep -q '^All default to$'; then
		pass "man 5: [bootloaders] defaults are auto, as the shipped file shows"
	else
		fail "man 5: [bootloaders] defaults are auto, as the shipped file shows"
	fi
	# shellcheck disable=SC2016
	check "conf/memcg-policy.conf sets nothing (every key commented out)" \
		bash -c '! grep -qE "^[[:space:]]*[a-z][a-z-]*[[:space:]]*[=:]" "$1"' _ "$TOP/conf/memcg-policy.conf"
else
	fail "conf/memcg-policy.conf exists"
fi

# ---- man page against --help (needs the binary) --------------------------
empty_root=$(mkroot)
if [ -x "$MEMCG_POLICY" ]; then
	expect_exit "--help exits 0" 0 "$MEMCG_POLICY" --help
	main_help=$OUT
	help_cmds=$(printf '%s\n' "$main_help" | sed -n '/^Commands:/,/^$/p' | sed -nE 's/^  ([a-z][a-z-]*) .*/\1/p; s/^  ([a-z][a-z-]*)$/\1/p')
	man_cmds=$(man_section "$MAN8" COMMANDS | sed -nE 's/^\.It Cm ([a-z][a-z-]*).*/\1/p')
	set_eq "man 8 COMMANDS = the commands of --help" "$man_cmds" "$help_cmds"
	# Each command's own --help where it has one; run inside an empty root
	# so that a command that does not know --help cannot touch the host.
	all_help=$main_help
	for c in $help_cmds; do
		if o=$("$MEMCG_POLICY" --root "$empty_root" "$c" --help 2>/dev/null); then
			all_help=$all_help$'\n'$o
		fi
	done
	man_text=$(man_section "$MAN8" OPTIONS; man_section "$MAN8" COMMANDS)
	set_eq "long options: --help and man 8 OPTIONS/COMMANDS agree" \
		"$(printf '%s\n' "$man_text" | man_long_opts)" "$(printf '%s\n' "$all_help" | help_long_opts)"
	set_eq "short options: --help and man 8 OPTIONS/COMMANDS agree" \
		"$(printf '%s\n' "$man_text" | man_short_opts)" "$(printf '%s\n' "$all_help" | help_short_opts)"
	set_eq "global options: --help Options = man 8 OPTIONS" \
		"$(man_section "$MAN8" OPTIONS | man_long_opts)" \
		"$(printf '%s\n' "$main_help" | sed -n '/^Options:/,/^$/p' | help_long_opts)"
	man_syn=$(man_section "$MAN8" SYNOPSIS | man_long_opts)
	set_eq "man 8 SYNOPSIS = the usage line of --help" "$man_syn" \
		"$(printf '%s\n' "$main_help" | head -n 1 | help_long_opts)"
	expect_exit "--version exits 0" 0 "$MEMCG_POLICY" --version
	case $OUT in
	"memcg-policy "[0-9]*) pass "--version prints memcg-policy VERSION" ;;
	*) fail "--version prints memcg-policy VERSION" "got: $OUT" ;;
	esac
else
	fail "man page against --help: $MEMCG_POLICY is not built"
fi

# ---- bash completion -----------------------------------------------------
BC=/usr/share/bash-completion/bash_completion
if [ -f "$BC" ]; then
	# complete WORDS...: the completions of the last word
	complete_words() {
		# shellcheck disable=SC2016
		env -i HOME="$HOME" PATH="$PATH" BC="$BC" COMPLETION="$COMPLETION" bash -c '
			. "$BC"; . "$COMPLETION"
			COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
			COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
			_memcg_policy; printf "%s\n" "${COMPREPLY[@]}"' _ "$@"
	}
	croot=$(mkroot)
	mkdir -p "$croot/lib/modules/6.1.0-41-amd64" "$croot/usr/lib/modules/6.12.25+rpt-rpi-2712" "$croot/lib/modules/notadir"
	rmdir "$croot/lib/modules/notadir"
	: >"$croot/boot/vmlinuz-6.6.51+rpt-rpi-v8"
	: >"$croot/boot/vmlinuz-6.1.0-41-amd64"
	: >"$croot/boot/config-5.10.0-ignored"
	want_k=$(printf '%s\n' 6.1.0-41-amd64 6.12.25+rpt-rpi-2712 6.6.51+rpt-rpi-v8)
	set_eq "completion: --kernel versions from --root DIR" \
		"$(complete_words memcg-policy --root "$croot" apply --kernel "")" "$want_k"
	set_eq "completion: --kernel versions from --root=DIR, prefix" \
		"$(complete_words memcg-policy "--root=$croot" -q decide --kernel 6.1)" "$(printf '%s\n' 6.1.0-41-amd64 6.12.25+rpt-rpi-2712)"
	sroot="$croot/with space"
	mkdir -p "$sroot/lib/modules/6.2.0-space"
	set_eq "completion: --root with a quoted path" \
		"$(complete_words memcg-policy --root "'$sroot'" check --kernel "")" "6.2.0-space"
	set_eq "completion: set offers the modes" "$(complete_words memcg-policy set "")" "$(printf '%s\n' on off auto)"
	set_eq "completion: set MODE then options (its own and the global ones)" "$(complete_words memcg-policy set off -)" \
		"$(printf '%s\n' --no-apply --dry-run --help --root --config --json --quiet --verbose)"
	if [ -x "$MEMCG_POLICY" ]; then
		set_eq "completion: the commands of --help" "$(complete_words memcg-policy "")" "$help_cmds"
		set_eq "completion: the global long options of --help" \
			"$(complete_words memcg-policy --)" \
			"$(printf '%s\n' "$main_help" | sed -n '/^Options:/,/^$/p' | help_long_opts)"
		for c in $help_cmds; do
			# options of the command: its args in --help, and its own --help
			want=$(printf '%s\n' "$main_help" | sed -n '/^Commands:/,/^$/p' | grep -E "^  $c( |$)" | help_long_opts)
			if o=$("$MEMCG_POLICY" --root "$empty_root" "$c" --help 2>/dev/null); then
				# its usage lines and option lines, not the prose
				want=$(printf '%s\n%s\n' "$want" "$(printf '%s\n' "$o" |
					grep -E '^[[:space:]]*(Usage:|-|[^[:space:]]*memcg-policy )' | help_long_opts)")
			fi
			[ "$c" = set ] && args=(set on --) || args=("$c" --)
			set_eq "completion: options of $c" "$(complete_words memcg-policy "${args[@]}")" "$want"
		done
	fi
else
	skip "bash completion" "bash-completion not installed"
fi

# ---- the hooks with a stand-in program -----------------------------------
# Installs hook SRC as DEST with @SBINDIR@ pointing at directory SBIN.
put_hook() { mkdir -p "$(dirname "$3")" && sed "s|@SBINDIR@|$2|g" "$1" >"$3" && chmod 0755 "$3"; }
fake=$(mkroot)
mkdir -p "$fake/sbin"
cat >"$fake/sbin/memcg-policy" <<EOF
#!/bin/sh
echo "memcg \$*" >>"$fake/log"
echo "stdout of the program"
exit \${FAKE_RC:-0}
EOF
chmod 0755 "$fake/sbin/memcg-policy"
log() { cat "$fake/log" 2>/dev/null; }
ki=$fake/install.d/95-memcg-policy.install
put_hook "$HOOK_KI" "$fake/sbin" "$ki"

: >"$fake/log"
expect_exit "plugin add: exit 0" 0 "$ki" add 6.1.0-41-amd64 /boot/efi/abc/6.1.0-41-amd64 /boot/vmlinuz-6.1.0-41-amd64
expect_eq "plugin add: runs apply --kernel VER --hook" "$(log)" "memcg apply --kernel 6.1.0-41-amd64 --hook"
: >"$fake/log"
FAKE_RC=3 expect_exit "plugin add: passes the exit code of apply through" 3 \
	"$ki" add 6.1.0-41-amd64 /boot/efi/abc/6.1.0-41-amd64 /boot/vmlinuz-6.1.0-41-amd64
: >"$fake/log"
KERNEL_INSTALL_VERBOSE=1 expect_exit "plugin add, verbose: exit 0" 0 "$ki" add 6.1.0-41-amd64 /e /boot/vmlinuz-6.1.0-41-amd64
expect_eq "plugin add, verbose: runs memcg-policy -v" "$(log)" "memcg -v apply --kernel 6.1.0-41-amd64 --hook"
: >"$fake/log"
expect_exit "plugin remove: exit 0" 0 "$ki" remove 6.1.0-41-amd64 /boot/efi/abc/6.1.0-41-amd64
expect_eq "plugin remove: drops the kernel's records (revert --kernel VER)" "$(log)" "memcg -q revert --kernel 6.1.0-41-amd64"
: >"$fake/log"
FAKE_RC=4 expect_exit "plugin remove: a failing revert never fails the removal" 0 "$ki" remove 6.1.0-41-amd64 /e
: >"$fake/log"
expect_exit "plugin, other command: exit 0" 0 "$ki" inspect 6.1.0-41-amd64
expect_exit "plugin add without a version: exit 0" 0 "$ki" add
expect_eq "plugin, other command / no version: runs nothing" "$(log)" ""
put_hook "$HOOK_KI" "$fake/nonexistent" "$fake/install.d/gone.install"
expect_exit "plugin add, program removed: exit 0" 0 "$fake/install.d/gone.install" add 6.1.0-41-amd64 /e /k

# The Debian hook, run the way a kernel package's postinst runs its hooks.
pd=$fake/postinst.d
put_hook "$HOOK_DEB" "$fake/sbin" "$pd/50-memcg-policy"
cat >"$pd/zz-update-grub" <<EOF
#!/bin/sh
echo "zz-update-grub \$*" >>"$fake/log"
EOF
chmod 0755 "$pd/zz-update-grub"
if have run-parts; then
	expect_eq "run-parts accepts the hook's name, before zz-update-grub" \
		"$(run-parts --test "$pd" | sed 's|.*/||')" "$(printf '%s\n' 50-memcg-policy zz-update-grub)"
	: >"$fake/log"
	rp=(run-parts --report --exit-on-error --arg=6.1.0-41-amd64 --arg=/boot/vmlinuz-6.1.0-41-amd64 "$pd")
	expect_exit "run-parts postinst.d: exit 0" 0 "${rp[@]}"
	expect_eq "postinst.d: apply --hook --no-regenerate, then zz-update-grub" "$(log)" \
		"$(printf '%s\n' "memcg apply --kernel 6.1.0-41-amd64 --hook --no-regenerate" \
			"zz-update-grub 6.1.0-41-amd64 /boot/vmlinuz-6.1.0-41-amd64")"
	case $OUT in
	*"stdout of the program"*) fail "postinst.d: nothing on stdout (debconf)" "stdout: $OUT" ;;
	*) pass "postinst.d: nothing on stdout (debconf)" ;;
	esac
	case $ERR in
	*"stdout of the program"*) pass "postinst.d: the program's output goes to stderr" ;;
	*) fail "postinst.d: the program's output goes to stderr" "stderr: $ERR" ;;
	esac
	: >"$fake/log"
	FAKE_RC=3 "${rp[@]}" >/dev/null 2>&1
	rc=$?
	if [ "$rc" -ne 0 ]; then
		pass "postinst.d: a failing apply (strict) fails run-parts"
	else
		fail "postinst.d: a failing apply (strict) fails run-parts" "exit $rc"
	fi
	expect_eq "postinst.d: zz-update-grub does not run after a failure" "$(log)" \
		"memcg apply --kernel 6.1.0-41-amd64 --hook --no-regenerate"
	put_hook "$HOOK_DEB" "$fake/nonexistent" "$pd/50-memcg-policy"
	: >"$fake/log"
	expect_exit "postinst.d, program removed (conffile left): exit 0" 0 "${rp[@]}"
	expect_eq "postinst.d, program removed: update-grub still runs" "$(log)" \
		"zz-update-grub 6.1.0-41-amd64 /boot/vmlinuz-6.1.0-41-amd64"
else
	skip "postinst.d through run-parts" "run-parts not installed"
fi

# ---- the hooks with the real program on a fixture root ------------------
REL=6.1.0-41-amd64
# A root with a mainline kernel, memcg wanted off, one BLS entry.
real_root() {
	local root
	root=$(mkroot)
	add_kernel "$root" "$REL" "$FIX/configs/debian12-amd64.config"
	printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
	mkdir -p "$root/boot/loader/entries"
	printf 'title Debian\nversion %s\noptions root=UUID=0c1d ro quiet\nlinux /vmlinuz-%s\n' "$REL" "$REL" \
		>"$root/boot/loader/entries/debian-$REL.conf"
	echo "$root"
}
# A directory with "memcg-policy" that runs the program under test on ROOT.
wrapper() {
	local d
	d=$(mkroot)
	mkdir -p "$d/sbin"
	printf '#!/bin/sh\nexec "%s" --root "%s" "$@"\n' "$MEMCG_POLICY" "$1" >"$d/sbin/memcg-policy"
	chmod 0755 "$d/sbin/memcg-policy"
	echo "$d/sbin"
}
options_of() { sed -n 's/^options[[:space:]]*//p' "$1"; }
has_token() { printf ' %s ' "$1" | grep -qF " $2 "; }

if [ -x "$MEMCG_POLICY" ] && have run-parts; then
	root=$(real_root)
	w=$(wrapper "$root")
	hooks=$(mkroot)
	put_hook "$HOOK_DEB" "$w" "$hooks/postinst.d/50-memcg-policy"
	entry=$root/boot/loader/entries/debian-$REL.conf
	expect_exit "real program, postinst.d: exit 0" 0 \
		run-parts --report --exit-on-error --arg="$REL" --arg="/boot/vmlinuz-$REL" "$hooks/postinst.d"
	if has_token "$(options_of "$entry")" cgroup_disable=memory; then
		pass "real program, postinst.d: the entry gets cgroup_disable=memory"
	else
		fail "real program, postinst.d: the entry gets cgroup_disable=memory" "$(cat "$entry")"
	fi
	expect_eq "real program, postinst.d: the admin's options kept" \
		"$(options_of "$entry" | sed 's/ *cgroup_disable=memory//')" "root=UUID=0c1d ro quiet"
	check "real program, postinst.d: journal written" test -s "$root/var/lib/memcg-policy/journal.json"
	before=$(cat "$entry")
	expect_exit "real program, postinst.d again: exit 0" 0 \
		run-parts --exit-on-error --arg="$REL" --arg="/boot/vmlinuz-$REL" "$hooks/postinst.d"
	expect_eq "real program, postinst.d again: nothing changes" "$(cat "$entry")" "$before"

	# A boot file that cannot be parsed safely: a warning and exit 0,
	# unless the policy is strict; the file is never written.
	root=$(real_root)
	w=$(wrapper "$root")
	put_hook "$HOOK_DEB" "$w" "$hooks/postinst.d/50-memcg-policy"
	entry=$root/boot/loader/entries/debian-$REL.conf
	printf 'title x\nversion %s\noptions ro\0quiet\n' "$REL" >"$entry"
	before=$(od -c "$entry")
	expect_exit "real program, bad entry, not strict: exit 0" 0 \
		run-parts --exit-on-error --arg="$REL" "$hooks/postinst.d"
	expect_eq "real program, bad entry: untouched" "$(od -c "$entry")" "$before"
	printf '[policy]\nmode = off\nstrict = yes\n' | write_policy "$root/etc/memcg-policy.conf"
	"$MEMCG_POLICY" --root "$root" apply --kernel "$REL" --hook >/dev/null 2>&1
	want_rc=$?
	expect_eq "real program, bad entry, strict: apply --hook exits 3" "$want_rc" 3
	run-parts --exit-on-error --arg="$REL" "$hooks/postinst.d" >/dev/null 2>&1
	got_rc=$?
	# what this run-parts makes of a part that exits 3: 1 (Debian 12's),
	# or the part's own status passed through (Debian 13's)
	probe=$(mktemp -d)
	printf '#!/bin/sh\nexit 3\n' >"$probe/fails" && chmod 0755 "$probe/fails"
	run-parts --exit-on-error "$probe" >/dev/null 2>&1
	rp_rc=$?
	rm -rf "$probe"
	expect_eq "real program, bad entry, strict: the hook fails run-parts as a part exiting 3 does ($rp_rc)" \
		"$got_rc" "$rp_rc"
	expect_eq "real program, bad entry, strict: run-parts fails" "$([ "$got_rc" -ne 0 ] && echo yes || echo no)" yes
	expect_eq "real program, bad entry, strict: untouched" "$(od -c "$entry")" "$before"
else
	fail "hooks with the real program: $MEMCG_POLICY not built or run-parts missing"
fi

# The real kernel-install (systemd) with our plugin after its entry writer,
# on a test boot directory; the plugin runs the program on the fixture root.
LOADERENTRY=''
for d in /usr/lib/kernel/install.d /lib/kernel/install.d; do
	[ -x "$d/90-loaderentry.install" ] && LOADERENTRY=$d/90-loaderentry.install && break
done
if ! have kernel-install || [ -z "$LOADERENTRY" ]; then
	skip "kernel-install" "systemd's kernel-install or 90-loaderentry.install not installed"
elif [ ! -x "$MEMCG_POLICY" ]; then
	fail "kernel-install plugin with the real program: $MEMCG_POLICY is not built"
else
	root=$(mkroot)
	printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
	mkdir -p "$root/lib/modules/$REL" "$root/etc/kernel" "$root/boot/loader/entries"
	cp "$FIX/configs/debian12-amd64.config" "$root/boot/config-$REL"
	printf 'root=UUID=0c1d ro quiet\n' >"$root/etc/kernel/cmdline"
	printf 'layout=bls\n' >"$root/etc/kernel/install.conf"
	printf 'memcgtest\n' >"$root/etc/kernel/entry-token"
	img=$(mkroot)/vmlinuz-$REL
	printf 'not a kernel\n' >"$img"
	w=$(wrapper "$root")
	put_hook "$HOOK_KI" "$w" "$root/plugins/95-memcg-policy.install"
	ki_env=(env KERNEL_INSTALL_PLUGINS="$LOADERENTRY $root/plugins/95-memcg-policy.install"
		KERNEL_INSTALL_CONF_ROOT="$root/etc/kernel" BOOT_ROOT="$root/boot"
		MACHINE_ID=0123456789abcdef0123456789abcdef)
	expect_exit "kernel-install add: exit 0" 0 "${ki_env[@]}" kernel-install add "$REL" "$img"
	entry=$root/boot/loader/entries/memcgtest-$REL.conf
	if [ -f "$entry" ]; then
		pass "kernel-install add: 90-loaderentry wrote the entry"
		if has_token "$(options_of "$entry")" cgroup_disable=memory; then
			pass "kernel-install add: the plugin put cgroup_disable=memory in the new entry"
		else
			fail "kernel-install add: the plugin put cgroup_disable=memory in the new entry" "$(cat "$entry")"
		fi
	else
		fail "kernel-install add: 90-loaderentry wrote the entry" "$(ls -R "$root/boot")"
	fi
	if has_token "$(cat "$root/etc/kernel/cmdline")" cgroup_disable=memory; then
		pass "kernel-install add: /etc/kernel/cmdline updated for the next kernels"
	else
		fail "kernel-install add: /etc/kernel/cmdline updated for the next kernels" "$(cat "$root/etc/kernel/cmdline")"
	fi
	expect_exit "kernel-install add again: exit 0" 0 "${ki_env[@]}" kernel-install add "$REL" "$img"
	if [ "$(options_of "$entry" | grep -o 'cgroup_disable=memory' | wc -l)" -eq 1 ]; then
		pass "kernel-install add again: the token once"
	else
		fail "kernel-install add again: the token once" "$(cat "$entry")"
	fi
	check "kernel-install add: the journal has a record of the entry" grep -q "\"kernel\": \"$REL\"" "$root/var/lib/memcg-policy/journal.json"
	expect_exit "kernel-install remove: exit 0" 0 "${ki_env[@]}" kernel-install remove "$REL"
	check "kernel-install remove: the entry is gone" test ! -e "$entry"
	if grep -q "\"kernel\": \"$REL\"" "$root/var/lib/memcg-policy/journal.json" 2>/dev/null; then
		fail "kernel-install remove: the journal's records of the kernel are dropped" "$(cat "$root/var/lib/memcg-policy/journal.json")"
	else
		pass "kernel-install remove: the journal's records of the kernel are dropped"
	fi
fi

# ---- make install / uninstall --------------------------------------------
if have make; then
	stage=$(mkroot)
	stub=$(mkroot)
	printf '#!/bin/sh\necho stub\n' >"$stub/memcg-policy"
	chmod 0755 "$stub/memcg-policy"
	# the real build is not needed here: a stand-in binary, marked up to date
	# (a make running this test, as in a package build, exports its
	# command-line directories: unset them so that the defaults are tested)
	mk() {
		env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u PREFIX -u SBINDIR -u DATADIR -u MANDIR -u SYSCONFDIR \
			-u LIBDIR_KERNEL -u BASHCOMPDIR -u KERNEL_POSTINST_DIR -u GRUB_DROPIN_DIR -u DESTDIR \
			make -s -C "$TOP" -o "$stub/memcg-policy" BUILD="$stub" DESTDIR="$stage/d" "$@"
	}
	expect_exit "make install PREFIX=/usr: exit 0" 0 mk install PREFIX=/usr
	files=$(cd "$stage/d" && find . \( -type f -o -type l \) -printf '%m %p\n' | sort -k2)
	want="755 ./etc/kernel/postinst.d/50-memcg-policy
644 ./etc/memcg-policy.conf
755 ./usr/lib/kernel/install.d/55-memcg-policy.install
755 ./usr/lib/kernel/install.d/95-memcg-policy.install
755 ./usr/sbin/memcg-policy
644 ./usr/share/bash-completion/completions/memcg-policy
644 ./usr/share/man/man5/memcg-policy.conf.5
644 ./usr/share/man/man8/memcg-policy.8
644 ./usr/lib/systemd/system/memcg-policy-metrics.service
644 ./usr/lib/systemd/system/memcg-policy-metrics.timer"
	if [ -f "$TOP/grub.d/99-memcg-policy.cfg" ]; then
		want="$want
644 ./etc/default/grub.d/99-memcg-policy.cfg
644 ./usr/share/memcg-policy/99-memcg-policy.cfg"
	else
		fail "grub.d/99-memcg-policy.cfg exists (the GRUB drop-in to install)"
	fi
	set_eq "make install: files and modes" "$files" "$want"
	expect_eq "make install: hooks run the installed program" \
		"$(grep -h '^memcg_policy=' "$stage/d/usr/lib/kernel/install.d/55-memcg-policy.install" "$stage/d/usr/lib/kernel/install.d/95-memcg-policy.install" "$stage/d/etc/kernel/postinst.d/50-memcg-policy")" \
		"$(printf 'memcg_policy=/usr/sbin/memcg-policy\nmemcg_policy=/usr/sbin/memcg-policy\nmemcg_policy=/usr/sbin/memcg-policy')"
	check "make install: the metrics service runs the installed program" \
		grep -qx 'ExecStart=/usr/sbin/memcg-policy -q check --prometheus /var/lib/prometheus/node-exporter/memcg-policy.prom' \
		"$stage/d/usr/lib/systemd/system/memcg-policy-metrics.service"
	check "make install: the man page is the tree's" \
		cmp -s "$TOP/man/memcg-policy.8" "$stage/d/usr/share/man/man8/memcg-policy.8"
	echo "# the admin's" >"$stage/d/etc/memcg-policy.conf"
	expect_exit "make install again: exit 0" 0 mk install PREFIX=/usr
	expect_eq "make install again: the admin's policy is kept" "$(cat "$stage/d/etc/memcg-policy.conf")" "# the admin's"
	expect_exit "make uninstall: exit 0" 0 mk uninstall PREFIX=/usr
	expect_eq "make uninstall: only the admin's policy is left" \
		"$(cd "$stage/d" && find . -type f | sort)" "./etc/memcg-policy.conf"

	stage=$(mkroot)
	expect_exit "make install PREFIX=/opt/mp SYSCONFDIR=/opt/mp/etc: exit 0" 0 \
		mk install PREFIX=/opt/mp SYSCONFDIR=/opt/mp/etc KERNEL_POSTINST_DIR= GRUB_DROPIN_DIR=
	check "PREFIX=/opt/mp: binary in /opt/mp/sbin" test -x "$stage/d/opt/mp/sbin/memcg-policy"
	check "PREFIX=/opt/mp: man page in /opt/mp/share/man" test -f "$stage/d/opt/mp/share/man/man8/memcg-policy.8"
	check "PREFIX=/opt/mp: policy in SYSCONFDIR" test -f "$stage/d/opt/mp/etc/memcg-policy.conf"
	expect_eq "PREFIX=/opt/mp: the plugin runs /opt/mp/sbin/memcg-policy" \
		"$(grep '^memcg_policy=' "$stage/d/usr/lib/kernel/install.d/95-memcg-policy.install")" \
		"memcg_policy=/opt/mp/sbin/memcg-policy"
	check "KERNEL_POSTINST_DIR= and GRUB_DROPIN_DIR=: neither installed" \
		test ! -e "$stage/d/opt/mp/etc/kernel" -a ! -e "$stage/d/opt/mp/etc/default"
	expect_exit "make uninstall PREFIX=/opt/mp: exit 0" 0 \
		mk uninstall PREFIX=/opt/mp SYSCONFDIR=/opt/mp/etc KERNEL_POSTINST_DIR= GRUB_DROPIN_DIR=
	expect_eq "make uninstall PREFIX=/opt/mp: only the policy left" \
		"$(cd "$stage/d" && find . -type f | sort)" "./opt/mp/etc/memcg-policy.conf"
else
	skip "make install" "make not installed"
fi
