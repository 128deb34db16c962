#!/bin/bash
# Bad inputs (issue "Hostile input and faults", part 5): a table of
# malformed inputs across every parser (policy files and their safety, kernel
# configs, BLS entries, command-line files, /etc/default/grub, the journal)
# and every command's arguments. Each row runs on a fresh fixture root and
# checks:
#   - the documented exit code (DESIGN section 3: 2 usage, 3 bad input,
#     4 system failure);
#   - the message: "memcg-policy: FILE:LINE: ..." where a line is known
#     (the row gives the part from the root on, e.g. "etc/memcg-policy.conf:2: ");
#   - the tree is unchanged: type, mode and SHA-256 of every file, link and
#     directory (only the lock file, which the tool may create before it
#     finds the error, is left out).
# The rows' setup code is single-quoted (it runs later, with eval, in the
# root) and uses the variables below:
# shellcheck disable=SC2016,SC2034
. "$TOP/tests/lib.sh"
CFG="$FIX/configs"
E=boot/loader/entries/6a9857a393724b7a981ebb5b8495b9ea-6.7.4-200.fc39.x86_64.conf
C=boot/config-6.7.4-200.fc39.x86_64
J=var/lib/memcg-policy/journal.json
P=etc/memcg-policy.conf
outside=$(mkroot) # files given with --config live outside the root

image() {
	root=$(mkroot)
	local v
	case $1 in
	fedora)
		cp -a "$FIX/roots/fedora/." "$root/"
		for v in 6.5.6-300.fc39.x86_64 6.6.8-200.fc39.x86_64 6.7.4-200.fc39.x86_64; do
			add_kernel "$root" "$v" "$CFG/debian12-amd64.config"
		done ;;
	rpios)
		cp -a "$FIX/roots/rpios/." "$root/"
		add_kernel "$root" 6.6.51+rpt-rpi-2712 "$CFG/rpi-6.6-bcm2712.config" ;;
	raspi-firmware)
		cp -a "$FIX/roots/raspi-firmware/." "$root/"
		add_kernel "$root" 6.1.0-50-rpi "$CFG/debian12-rpi-armel.config" ;;
	esac
	printf '[policy]\nmode = off\n' | write_policy "$root/$P"
}

tree_hash() {
	(cd "$1" && find . -path ./run/memcg-policy.lock -prune -o -path ./run -prune -o -printf '%p %y %m\n' | sort
	 cd "$1" && find . -path ./run -prune -o -type f -print0 | sort -z | xargs -0 -r sha256sum) | sha256sum | cut -c1-16
}

rows=0
# row NAME CODE MESSAGE SETUP CMD...: SETUP is shell code run in the root
# (variables: root, outside); CMD the tool's arguments after --root ROOT
# (a CMD starting with "-noroot" runs without --root). base=NAME picks the
# fixture root (fedora by default).
row() {
	local name=$1 code=$2 msg=$3 setup=$4
	shift 4
	image "${base:-fedora}"
	(cd "$root" && eval "$setup") || { fail "$name: setup failed"; return; }
	local before after o e rc
	before=$(tree_hash "$root")
	o=$(mktemp)
	e=$(mktemp)
	if [ "${1:-}" = -noroot ]; then
		shift
		timeout 20 "$MEMCG_POLICY" "$@" >"$o" 2>"$e"
	else
		timeout 20 "$MEMCG_POLICY" --root "$root" "$@" >"$o" 2>"$e"
	fi
	rc=$?
	OUT=$(cat "$o")
	ERR=$(cat "$e")
	rm -f "$o" "$e"
	after=$(tree_hash "$root")
	rows=$((rows + 1))
	expect_eq "$name: exit $code" "$rc" "$code"
	if grep -qF -- "$msg" <<<"$ERR"; then
		pass "$name: says '$msg'"
	else
		fail "$name: message lacks '$msg'" "stderr: $ERR"
	fi
	expect_eq "$name: tree unchanged" "$after" "$before"
}

# policy FORMAT [ARGS]: the policy file, printf-style
# shellcheck disable=SC2059
policy() { printf "$@" >"$P"; }

# ---- policy syntax: exit 3, FILE:LINE ----
row "policy: unknown section" 3 "$P:1: unknown section [polcy]" 'policy "[polcy]\nmode = on\n"' apply
row "policy: unknown key" 3 "$P:2: unknown key 'bogus' in [policy]" 'policy "[policy]\nbogus = 1\n"' apply
row "policy: key of another section" 3 "$P:3: unknown key 'accounting' in [kernel 6.*]" 'policy "[kernel 6.*]\nmode = on\naccounting = lite\n"' apply
row "policy: key outside any section" 3 "$P:1: 'mode' is outside of any section" 'policy "mode = on\n"' apply
row "policy: no '='" 3 "$P:2: expected 'key = value'" 'policy "[policy]\nmode on\n"' apply
row "policy: unterminated section header" 3 "$P:1: expected ']'" 'policy "[policy\nmode = on\n"' apply
row "policy: empty kernel glob" 3 "$P:1: [kernel] needs a glob" 'policy "[kernel ]\nmode = on\n"' apply
row "policy: duplicate key" 3 "$P:3: duplicate key 'mode' in [policy] (already set at line 2)" 'policy "[policy]\nmode = on\nmode = off\n"' apply
row "policy: line over 199 characters" 3 "$P:3: line too long" 'policy "[policy]\nmode = on\n#%0250d\n" 0' apply
row "policy: NUL byte" 3 "$P:2: NUL byte" 'policy "[policy]\nmode = on\0\n"' apply
row "policy: binary data" 3 "$P:1: expected 'key = value'" 'printf "\x89PNG\r\n\x1a\n\0\0\0\rIHDR" >"$P"' apply
row "policy: bad mode" 3 "$P:2: bad value 'sometimes' for mode" 'policy "[policy]\nmode = sometimes\n"' apply
row "policy: bad accounting" 3 "$P:2: bad value 'heavy' for accounting" 'policy "[policy]\naccounting = heavy\n"' apply
row "policy: bad boolean" 3 "$P:2: bad value 'maybe' for strict" 'policy "[policy]\nstrict = maybe\n"' apply
row "policy: bad size" 3 "$P:2: bad value 'lots' for min-ram" 'policy "[auto]\nmin-ram = lots\n"' apply
row "policy: bad otherwise" 3 "$P:2: bad value 'sometimes' for otherwise" 'policy "[auto]\notherwise = sometimes\n"' apply
row "policy: bad default in [kernel]" 3 "$P:2: bad value 'maybe' for default" 'policy "[kernel 6.*]\ndefault = maybe\n"' apply
row "policy: bad tristate in vendor file" 3 "usr/lib/memcg-policy.d/a.conf:2: bad value 'perhaps' for grub" \
	'mkdir -p usr/lib/memcg-policy.d && printf "[bootloaders]\ngrub = perhaps\n" >usr/lib/memcg-policy.d/a.conf' apply
row "policy: a file where the drop-in directory is" 4 "etc/memcg-policy.d: cannot list policy directory" \
	'printf "[policy]\nmode = on\n" >etc/memcg-policy.d' apply
row "policy: error in a drop-in" 3 "etc/memcg-policy.d/10-x.conf:2: bad value 'x' for mode" \
	'mkdir -p etc/memcg-policy.d && printf "[policy]\nmode = x\n" >etc/memcg-policy.d/10-x.conf' apply
row "policy: set refuses to rewrite a broken file" 3 "$P:2: unknown key 'bogus'" 'policy "[policy]\nbogus = 1\n"' set on
# grub-cmdline reads only the data apply recorded, never the policy
row "grub data: grub-cmdline fails without output" 3 "var/lib/memcg-policy/grub.tokens:2: not \"add TOKEN\"" \
	'mkdir -p var/lib/memcg-policy && printf "add cgroup_disable=memory\nadd init=/bin/sh\n" >var/lib/memcg-policy/grub.tokens' \
	grub-cmdline -- "root=/dev/sda1 quiet" ""
expect_eq "grub data: grub-cmdline printed nothing" "$OUT" ""

# ---- unsafe policy files: exit 3 ----
row "unsafe policy: group-writable" 3 "$P: unsafe policy file: writable by group" 'chmod 0664 "$P"' apply
row "unsafe policy: world-writable" 3 "$P: unsafe policy file: writable by others" 'chmod 0666 "$P"' apply
if [ "$(id -u)" -eq 0 ]; then
	row "unsafe policy: another owner" 3 "$P: unsafe policy file: owned by uid 12345" 'chown 12345 "$P"' apply
else
	echo "# not root: no policy file of another owner"
fi
row "unsafe policy: a directory" 3 "$P: unsafe policy file: not a regular file" 'rm "$P" && mkdir "$P"' apply
row "unsafe policy: --config world-writable" 3 "p.conf: unsafe policy file: writable by others" \
	'printf "[policy]\nmode = on\n" >"$outside/p.conf" && chmod 0666 "$outside/p.conf"' --config "$outside/p.conf" apply
row "--config: a missing file" 3 "nothing.conf: cannot open policy file" '' --config "$outside/nothing.conf" apply

# ---- kernel configs: exit 3, naming the file (and the line) ----
row "config: corrupt gzip" 3 "$C: corrupt gzip data" 'printf "\x1f\x8b\x08\x00garbage" >"$C"' apply
row "config: truncated gzip" 3 "$C: corrupt gzip data" 'gzip -c "$C" | head -c 600 >x && mv x "$C"' apply
row "config: binary data" 3 "$C:1: not a kernel config" 'printf "\x7fELF\x02\x01\x01\0\0\0\n" >"$C"' apply
row "config: no CONFIG_ line" 3 "$C:1: not a kernel config" 'printf "hello\n" >"$C"' apply
row "config: empty" 3 "$C: not a kernel config" ': >"$C"' apply
row "config: a line that is no assignment" 3 "$C:2: not a kernel config" 'printf "CONFIG_MEMCG=y\nthis is not a config line\n" >"$C"' apply
row "config: unterminated string" 3 "$C:2: not a kernel config" 'printf "CONFIG_CGROUPS=y\nCONFIG_CMDLINE=\"abc\n" >"$C"' apply
row "config: NUL byte" 3 "$C:2: not a kernel config" 'printf "CONFIG_A=y\n\0\n" >"$C"' apply
row "config: gzip of binary data" 3 "$C:1: not a kernel config" 'printf "\x89PNG\r\n\x1a\n" | gzip >"$C"' decide
row "config: --kernel of a kernel without one" 3 "no kernel config for 9.9.9-none" '' decide --kernel 9.9.9-none

# ---- BLS entries: exit 3, FILE:LINE ----
row "entry: NUL byte" 3 "$E:3: NUL byte" 'printf "title x\nversion 6.7.4-200.fc39.x86_64\n\0\n" >"$E"' apply
row "entry: line of 70000 bytes" 3 "$E:2: line longer than 65536 bytes" \
	'{ printf "title x\noptions "; head -c 70000 /dev/zero | tr "\0" a; echo; } >"$E"' apply
row "entry: FIFO" 3 "$E: not a regular file" 'rm "$E" && mkfifo "$E"' apply
row "entry: a directory named *.conf" 3 "boot/loader/entries/dir.conf: not a regular file" 'mkdir boot/loader/entries/dir.conf' apply
row "entry: quote across options lines" 3 "$E:3: a quote opened in this options line runs on" \
	'printf "title x\nlinux /vmlinuz\noptions a=\"b\noptions c\" cgroup_enable=memory\n" >"$E"' apply
row "entry: check refuses it too" 3 "$E:3: a quote opened" \
	'printf "title x\nlinux /vmlinuz\noptions a=\"b\noptions c\" d\n" >"$E"' check

# ---- command-line files: exit 3, FILE:LINE ----
row "/etc/kernel/cmdline: NUL byte" 3 "etc/kernel/cmdline:1: NUL byte" 'printf "root=/dev/sda1\0\n" >etc/kernel/cmdline' apply
base=rpios row "cmdline.txt: two lines" 3 "boot/firmware/cmdline.txt:2: more than one line" \
	'printf "console=tty1 root=/dev/mmcblk0p2\nquiet\n" >boot/firmware/cmdline.txt' apply
base=rpios row "cmdline.txt: NUL byte" 3 "boot/firmware/cmdline.txt:1: NUL byte" \
	'printf "root=/dev/mmcblk0p2\0 quiet\n" >boot/firmware/cmdline.txt' apply
base=raspi-firmware row "raspi-extra-cmdline: two lines" 3 "etc/default/raspi-extra-cmdline:2: more than one line" \
	'printf "a\nb\n" >etc/default/raspi-extra-cmdline' apply

# ---- /etc/default/grub: exit 3, FILE:LINE ----
row "/etc/default/grub: NUL byte" 3 "etc/default/grub:9: NUL byte" 'printf "GRUB_CMDLINE_LINUX=\"a\0\"\n" >>etc/default/grub' apply
row "/etc/default/grub: binary data" 3 "etc/default/grub:1: NUL byte" '{ printf "\0"; head -c 3000 /dev/urandom; } >etc/default/grub' apply

# ---- the journal: exit 3, naming it ----
row "journal: not JSON" 3 "$J: corrupt journal: not valid JSON" 'mkdir -p "${J%/*}" && echo "{not json" >"$J"' apply
row "journal: empty" 3 "$J: corrupt journal: not valid JSON" 'mkdir -p "${J%/*}" && : >"$J"' revert
row "journal: trailing garbage" 3 "$J: corrupt journal: not valid JSON" 'mkdir -p "${J%/*}" && echo "{\"version\": 1, \"files\": []} x" >"$J"' revert
row "journal: another version" 3 "$J: corrupt journal: unknown version" 'mkdir -p "${J%/*}" && echo "{\"version\": 2, \"files\": []}" >"$J"' revert
row "journal: relative path" 3 "$J: corrupt journal: a path that is not absolute" \
	'mkdir -p "${J%/*}" && echo "{\"version\": 1, \"files\": [{\"path\": \"etc/x\", \"had_original\": false, \"written\": null}]}" >"$J"' revert
row "journal: a path twice" 3 "$J: corrupt journal: a path listed twice" \
	'mkdir -p "${J%/*}" && echo "{\"version\": 1, \"files\": [{\"path\": \"/etc/kernel/cmdline\", \"had_original\": false, \"written\": null}, {\"path\": \"/etc/kernel/cmdline\", \"had_original\": false, \"written\": null}]}" >"$J"' revert
row "journal: not a regular file" 3 "$J: corrupt journal: not a regular file" 'mkdir -p "$J"' revert

# ---- every command's arguments: exit 2 ----
row "args: status extra" 2 "status: unexpected argument 'extra'" '' status extra
row "args: decide --kernel without value" 2 "memcg-policy: decide: option '--kernel' needs a value (see memcg-policy decide --help)" '' decide --kernel
row "args: decide --explain extra" 2 "decide: unexpected argument 'extra'" '' decide --explain extra
row "args: apply --bogus" 2 "memcg-policy: apply: unknown option '--bogus' (see memcg-policy apply --help)" '' apply --bogus
row "args: apply --kernel without value" 2 "memcg-policy: apply: option '--kernel' needs a value (see memcg-policy apply --help)" '' apply --kernel
row "args: check extra" 2 "check: unexpected argument 'extra'" '' check extra
row "args: check --kernel without value" 2 "memcg-policy: check: option '--kernel' needs a value (see memcg-policy check --help)" '' check --kernel
row "args: set bad mode" 2 "set: 'sometimes' is not one of on, off, auto" '' set sometimes
row "args: set without mode" 2 "set: expected one of on, off, auto" '' set
row "args: set two modes" 2 "set: expected one of on, off, auto" '' set on off
row "args: revert extra" 2 "revert: unexpected argument 'extra'" '' revert extra
row "args: revert --bogus" 2 "memcg-policy: revert: unknown option '--bogus' (see memcg-policy revert --help)" '' revert --bogus
row "args: bench bad option" 2 "memcg-policy: bench: unknown option '--bogus' (see memcg-policy bench --help)" '' bench --bogus
row "args: set off --regenerate (apply's, not an option of set)" 2 "memcg-policy: set: unknown option '--regenerate' (see memcg-policy set --help)" '' set off --regenerate
row "args: set off --dry-run --no-apply" 2 "set: --dry-run and --no-apply do not go together" '' set off --dry-run --no-apply
row "args: a value given to a flag" 2 "memcg-policy: apply: option '--dry-run' takes no value (see memcg-policy apply --help)" '' apply --dry-run=1
row "args: bench --threads 0" 2 "bench: bad --threads '0'" '' bench --threads 0
row "args: bench --size bogus" 2 "bench: bad --size 'bogus'" '' bench --size bogus
row "args: grub-cmdline without VALUE" 2 "grub-cmdline: LINUX [DEFAULT] expected" '' grub-cmdline
expect_eq "args: grub-cmdline without VALUE printed nothing" "$OUT" ""
row "args: grub-cmdline three VALUEs" 2 "grub-cmdline: LINUX [DEFAULT] expected" '' grub-cmdline a b c
row "args: grub-cmdline --no-add with two VALUEs" 2 "grub-cmdline: LINUX [DEFAULT] expected" '' grub-cmdline --no-add a b
row "args: unknown command" 2 "unknown command 'frobnicate'" '' frobnicate
row "args: no command" 2 "no command given" ''
row "args: unknown option after the command" 2 "memcg-policy: status: unknown option '--frob' (see memcg-policy status --help)" '' status --frob
row "args: unknown global option" 2 "memcg-policy: unknown option '--bogus' (see memcg-policy --help)" '' -noroot --root "$outside" --bogus status
row "args: --root a missing directory" 2 "/nonexistent-root: cannot open root" '' -noroot --root /nonexistent-root status
row "args: --root empty" 2 "--root needs a directory" '' -noroot --root "" status
row "args: --root without value" 2 "memcg-policy: option '--root' needs a value (see memcg-policy --help)" '' -noroot --root
row "args: --root a file" 2 ": cannot open root: Not a directory" '' -noroot --root "$FIX/configs/README" status

echo "# bad inputs: $rows rows"
if [ "$rows" -ge 40 ]; then pass "bad inputs: $rows rows"; else fail "bad inputs: only $rows rows"; fi
