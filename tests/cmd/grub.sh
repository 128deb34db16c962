#!/bin/bash
# GRUB (issue 4) with Debian's real GRUB scripts.
#
# How the menus are generated, and why:
#   grub-mkconfig cannot be pointed at a fixture root: it hardcodes
#   /etc/default/grub, /etc/default/grub.d/*.cfg and /etc/grub.d, and its
#   10_linux finds kernels by globbing /boot/vmlinuz-* and /vmlinuz-*. So each
#   generation runs in a private mount namespace (unshare -m; -r as well when
#   not root) where the fixture's /boot and /etc/default are bind-mounted over
#   the host's (nothing of the host changes; the namespace dies with the
#   command). Two generators, both real:
#   mkconfig  the real /usr/sbin/grub-mkconfig -o /boot/grub/grub.cfg, with
#             all of /etc/grub.d. It probes the devices of / and /boot with
#             grub-probe; where that fails (a container whose / is an
#             overlay), these runs are reported as SKIP (not counted), and
#   10_linux  the real /etc/grub.d/10_linux run alone with the environment
#             grub-mkconfig gives it: the variables grub-mkconfig sets first,
#             then the fixture's /etc/default/grub and /etc/default/grub.d/*.cfg
#             sourced in that order with `set -e`, exactly as grub-mkconfig's
#             loop does, then the same exports. It needs no device probing, so
#             it runs everywhere the namespace works.
#   The drop-in calls `memcg-policy` from PATH, without --root: a wrapper named
#   memcg-policy first in PATH adds --root ROOT and logs each call.
#   Where /etc/default/grub sources the drop-in from $(DATADIR) (GRUB without
#   drop-in support), an overlay mount adds memcg-policy/99-memcg-policy.cfg to
#   that directory inside the namespace.
#
# Every generated linux line, recovery entries included, must carry exactly
# the decided tokens (each added token once, no removed item) with all other
# arguments as in the menu generated before apply; check must agree; a second
# apply changes nothing; revert gives back the original bytes and the menu
# generated after it is the original menu, byte for byte.
# shellcheck disable=SC2016 # single-quoted $ are meant literally here
# shellcheck source=../lib.sh disable=SC1091
. "$TOP/tests/lib.sh"
G="$FIX/grub"
CFG="$FIX/configs"
DROPIN="$TOP/grub.d/99-memcg-policy.cfg"

# ---- the namespace ----
NS=(unshare -m --propagation private)
[ "$(id -u)" -eq 0 ] || NS+=(-r)
have_ns=false
if "${NS[@]}" true 2>/dev/null; then have_ns=true; fi
have_grub=false
if [ -x /usr/sbin/grub-mkconfig ] && [ -x /etc/grub.d/10_linux ] && [ -f /usr/share/grub/grub-mkconfig_lib ]; then
	have_grub=true
fi
have_probe=false
if $have_grub && /usr/sbin/grub-probe --target=device / >/dev/null 2>&1 &&
	/usr/sbin/grub-probe --target=device /boot >/dev/null 2>&1; then
	have_probe=true
fi
skip() { echo "SKIP: $1"; }

W=$(mkroot) # wrappers and logs
mkdir -p "$W/bin"

# wrapper ROOT: memcg-policy with --root ROOT, logging its arguments
wrapper() {
	cat >"$W/bin/memcg-policy" <<EOF
#!/bin/sh
printf '%s\n' "\$*" >>"$W/calls.log"
exec "$MEMCG_POLICY" --root "$1" "\$@"
EOF
	chmod 0755 "$W/bin/memcg-policy"
	: >"$W/calls.log"
}

# gen_menu ROOT mkconfig|10_linux OUT [MENU]: generate a menu as described
# above; OUT receives it. The overlay for $(DATADIR) is set when $DATADIR is.
gen_menu() {
	local root=$1 how=$2 out=$3 menu=${4:-/boot/grub/grub.cfg}
	local ov=""
	if [ -n "${DATADIR:-}" ]; then
		mkdir -p "$W/ov/up/memcg-policy" "$W/ov/work"
		cp "$DROPIN" "$W/ov/up/memcg-policy/99-memcg-policy.cfg"
		ov="mount -t overlay overlay -o lowerdir=$DATADIR,upperdir=$W/ov/up,workdir=$W/ov/work $DATADIR"
	fi
	if [ "$how" = mkconfig ]; then
		"${NS[@]}" env PATH="$W/bin:$PATH" sh -c "
			set -e
			mount --bind '$root/boot' /boot
			mount --bind '$root/etc/default' /etc/default
			$ov
			grub-mkconfig -o '$menu'" >"$W/gen.log" 2>&1 || return 1
		cp "$root$menu" "$out"
	else
		"${NS[@]}" env PATH="$W/bin:$PATH" sh -c "
			set -e
			mount --bind '$root/boot' /boot
			$ov
			# what grub-mkconfig sets before it sources the configuration
			GRUB_DEVICE=/dev/sda2 GRUB_DEVICE_UUID=0b9c3a2e-5d4f-4f8e-9a51-2c1d6e7f8a90
			GRUB_DEVICE_BOOT=/dev/sda2 GRUB_DEVICE_BOOT_UUID=\$GRUB_DEVICE_UUID GRUB_FS=ext2
			GRUB_DISABLE_OS_PROBER=true
			if [ -f '$root/etc/default/grub' ]; then . '$root/etc/default/grub'; fi
			for x in '$root'/etc/default/grub.d/*.cfg; do
				if [ -e \"\$x\" ]; then . \"\$x\"; fi
			done
			if [ \"x\$GRUB_RECOVERY_TITLE\" = x ]; then GRUB_RECOVERY_TITLE='recovery mode'; fi
			export GRUB_DEVICE GRUB_DEVICE_UUID GRUB_DEVICE_BOOT GRUB_DEVICE_BOOT_UUID GRUB_FS \
				GRUB_DISABLE_OS_PROBER GRUB_DEFAULT GRUB_DISTRIBUTOR GRUB_CMDLINE_LINUX \
				GRUB_CMDLINE_LINUX_DEFAULT GRUB_DISABLE_RECOVERY GRUB_DISABLE_SUBMENU \
				GRUB_RECOVERY_TITLE GRUB_DISABLE_LINUX_UUID GRUB_DISABLE_LINUX_PARTUUID \
				GRUB_GFXPAYLOAD_LINUX GRUB_EARLY_INITRD_LINUX_STOCK GRUB_EARLY_INITRD_LINUX_CUSTOM
			pkgdatadir=/usr/share/grub grub_probe=/usr/sbin/grub-probe
			export pkgdatadir grub_probe
			/etc/grub.d/10_linux" >"$out" 2>"$W/gen.log" || return 1
	fi
}

# The words of each linux line after the command: one line per menu line.
linux_args() {
	awk '$1 == "linux" || $1 == "linux16" || $1 == "linuxefi" { $1 = ""; print substr($0, 2) }' "$1"
}

norm() { printf '%s' "${1//-/_}"; }

# strip_items WORD NAME ITEM: WORD with ITEM taken out of NAME's comma list;
# empty output: the word goes
strip_items() {
	local word=$1 name=$2 item=$3
	case $word in *=*) ;; *) printf '%s' "$word"; return ;; esac
	local wn=${word%%=*} wv=${word#*=}
	if [ "$(norm "$wn")" != "$(norm "$name")" ]; then printf '%s' "$word"; return; fi
	local out="" it
	local IFS=,
	for it in $wv; do
		[ "$it" = "$item" ] && continue
		out=${out:+$out,}$it
	done
	[ -n "$out" ] && printf '%s=%s' "$wn" "$out"
}

# check_menu NAME BASE AFTER: every linux line of AFTER is the line of BASE
# with the ADD tokens once each and the REMOVE items gone, all else equal
check_menu() {
	local name=$1 base=$2 after=$3
	local -a bl al
	mapfile -t bl < <(linux_args "$base")
	mapfile -t al < <(linux_args "$after")
	if [ "${#al[@]}" -eq 0 ] || [ "${#bl[@]}" -ne "${#al[@]}" ]; then
		fail "$name: linux lines" "before: ${#bl[@]}, after: ${#al[@]}"
		return
	fi
	local i recovery=0
	local -a bad=()
	for ((i = 0; i < ${#al[@]}; i++)); do
		local -a bw aw
		read -r -a bw <<<"${bl[i]}"
		read -r -a aw <<<"${al[i]}"
		case " ${al[i]} " in *" single "* | *" recovery "*) recovery=$((recovery + 1)) ;; esac
		local t w n r ri
		# each added token exactly once
		for t in "${ADD[@]}"; do
			n=0
			for w in "${aw[@]}"; do [ "$w" = "$t" ] && n=$((n + 1)); done
			[ "$n" -eq 1 ] || bad+=("line $i: $t $n times: ${al[i]}")
		done
		# no removed item
		for r in "${REMOVE[@]}"; do
			for w in "${aw[@]}"; do
				[ "$(strip_items "$w" "${r%%=*}" "${r#*=}")" = "$w" ] || bad+=("line $i: has $r: ${al[i]}")
			done
		done
		# all else unchanged, in order
		local want="" got=""
		for w in "${bw[@]}"; do
			for t in "${ADD[@]}"; do [ "$w" = "$t" ] && w=""; done
			for r in "${REMOVE[@]}"; do [ -n "$w" ] && w=$(strip_items "$w" "${r%%=*}" "${r#*=}"); done
			[ -n "$w" ] && want="$want $w"
		done
		for w in "${aw[@]}"; do
			ri=$w
			for t in "${ADD[@]}"; do [ "$w" = "$t" ] && ri=""; done
			[ -n "$ri" ] && got="$got $ri"
		done
		[ "$want" = "$got" ] || bad+=("line $i: other arguments changed: want '$want' got '$got'")
	done
	if [ "${#bad[@]}" -eq 0 ]; then
		pass "$name: ${#al[@]} linux lines ($recovery recovery) carry exactly the decision"
	else
		fail "$name: linux lines" "${bad[@]}"
	fi
}

# setup CASE-DIR: a root from tests/fixtures/grub/cases/NAME (or a root
# skeleton with an expect file); sets root, ADD, REMOVE, MODE, DRIFT
setup() {
	local src=$1 cfg vers
	root=$(mkroot)
	ADD=()
	REMOVE=()
	DRIFT=""
	MODE=""
	while read -r key rest; do
		case $key in
		mode) MODE=$rest ;;
		kernels) read -r cfg vers <<<"$rest" ;;
		add) ADD+=("$rest") ;;
		remove) REMOVE+=("$rest") ;;
		drift) DRIFT=$rest ;;
		esac
	done <"$src/expect"
	local v
	for v in $vers; do
		add_kernel "$root" "$v" "$CFG/$cfg"
		: >"$root/boot/initrd.img-$v"
	done
	mkdir -p "$root/etc/default" "$root/usr/sbin" "$root/boot/grub"
	image_program "$root"
	if [ -f "$src/default-grub" ]; then
		cp "$src/default-grub" "$root/etc/default/grub"
		cp /usr/sbin/grub-mkconfig /usr/sbin/update-grub "$root/usr/sbin/" 2>/dev/null ||
			printf '#! /bin/sh\nfor x in ${sysconfdir}/default/grub.d/*.cfg ; do :; done\n' >"$root/usr/sbin/grub-mkconfig"
		chmod 0755 "$root/usr/sbin/"*
	fi
	if [ -d "$src/grub.d" ]; then
		mkdir -p "$root/etc/default/grub.d"
		cp "$src/grub.d/"*.cfg "$root/etc/default/grub.d/"
	fi
	[ "$MODE" = keep ] || printf '[policy]\nmode = %s\n' "$MODE" | write_policy "$root/etc/memcg-policy.conf"
	wrapper "$root"
}

# snapshot DIR: path and hash of every file but the tool's journal, lock and
# the generated menus
snapshot() {
	(cd "$1" && find . \( -path ./var/lib/memcg-policy -o -path ./run -o -name grub.cfg \) -prune -o \
		\( -type f -o -type l \) -print | sort | while read -r f; do
		if [ -L "$f" ]; then
			printf '%s %s\n' "$f" "$(readlink "$f")"
		else
			printf '%s %s\n' "$f" "$(sha256sum <"$f" | cut -c1-16)"
		fi
	done)
}
# inodes and mtimes too: a second apply must not rewrite anything
tree_state() {
	(cd "$1" && find . -path ./run -prune -o -type f -print | sort | while read -r f; do
		printf '%s %s\n' "$f" "$(stat -c '%i %Y.%y' "$f")"
	done)
}

# ---- the drop-in itself ----

dropin_tests() {
	check "drop-in: sh -n" sh -n "$DROPIN"
	if command -v shellcheck >/dev/null; then
		check "drop-in: shellcheck -s sh" shellcheck -s sh "$DROPIN"
	else
		fail "drop-in: shellcheck" "shellcheck is not installed"
	fi
	local d
	d=$(mkroot)
	mkdir -p "$d/ok" "$d/bad" "$d/none"
	# a working program: echoes both values back in brackets, one a line
	cat >"$d/ok/memcg-policy" <<'EOF'
#!/bin/sh
img=
if [ "$1" = --root ] && [ "$2" = / ]; then img=" image"; shift 2; fi
[ "$1" = grub-cmdline ] || exit 9
shift
[ "$1" = -- ] || exit 9
shift
[ $# -eq 2 ] || exit 9
printf '[%s] added%s\n[%s] nodefault%s\n' "$1" "$img" "$2" "$img"
EOF
	printf '#!/bin/sh\necho garbage\nexit 3\n' >"$d/bad/memcg-policy"
	chmod 0755 "$d/ok/memcg-policy" "$d/bad/memcg-policy"
	# sourced as grub-mkconfig does: set -e, then the variables printed
	cat >"$d/run.sh" <<EOF
set -e
GRUB_CMDLINE_LINUX='-x "a b" \$y'
GRUB_CMDLINE_LINUX_DEFAULT="quiet splash"
. "$DROPIN"
printf 'L=%s\nD=%s\nleft=%s%s%s%s\n' "\$GRUB_CMDLINE_LINUX" "\$GRUB_CMDLINE_LINUX_DEFAULT" "\${memcg_policy_bin-}" "\${memcg_policy_dir-}" "\${memcg_policy_value-}" "\$(command -v memcg_policy_run || :)"
EOF
	local fixed=""
	for p in /usr/sbin /usr/local/sbin /sbin; do [ -e "$p/memcg-policy" ] && fixed="$fixed $p"; done
	local sh out
	for sh in dash bash; do
		if ! command -v $sh >/dev/null; then
			fail "drop-in: $sh" "$sh is not installed"
			continue
		fi
		out=$(PATH="$d/ok:/usr/bin:/bin" $sh "$d/run.sh" 2>&1)
		expect_eq "drop-in ($sh): both variables through grub-cmdline" "$out" \
			"$(printf 'L=[-x "a b" $y] added\nD=[quiet splash] nodefault\nleft=')"
		out=$(MEMCG_POLICY_IMAGE=1 PATH="$d/ok:/usr/bin:/bin" $sh "$d/run.sh" 2>&1)
		expect_eq "drop-in ($sh): MEMCG_POLICY_IMAGE=1 reads the tree as an image (--root /)" "$out" \
			"$(printf 'L=[-x "a b" $y] added image\nD=[quiet splash] nodefault image\nleft=')"
		out=$(PATH="$d/bad:/usr/bin:/bin" $sh "$d/run.sh" 2>/dev/null)
		expect_eq "drop-in ($sh): unchanged when the program fails" "$out" \
			"$(printf 'L=-x "a b" $y\nD=quiet splash\nleft=')"
		if [ -z "$fixed" ]; then
			out=$(PATH="$d/none:/usr/bin:/bin" $sh "$d/run.sh" 2>&1)
			expect_eq "drop-in ($sh): unchanged when the program is missing" "$out" \
				"$(printf 'L=-x "a b" $y\nD=quiet splash\nleft=')"
		else
			skip "drop-in ($sh): missing program (this host has memcg-policy in$fixed)"
		fi
	done
	# the real program, through the wrapper, with `set -e` in dash: it
	# applies what apply recorded, and nothing without that data
	local r
	r=$(mkroot)
	add_kernel "$r" 6.1.0-13-amd64 "$CFG/debian12-amd64.config"
	mkdir -p "$r/usr/sbin" "$r/etc/default/grub.d" "$r/boot/grub"
	cp /usr/sbin/grub-mkconfig "$r/usr/sbin/"
	image_program "$r"
	printf 'GRUB_CMDLINE_LINUX=""\n' >"$r/etc/default/grub"
	: >"$r/boot/grub/grub.cfg"
	wrapper "$r"
	local prog="set -e; GRUB_CMDLINE_LINUX='console=ttyS0 cgroup_enable=memory'; GRUB_CMDLINE_LINUX_DEFAULT='quiet cgroup-enable=memory splash'; . '$DROPIN'; printf '%s|%s' \"\$GRUB_CMDLINE_LINUX\" \"\$GRUB_CMDLINE_LINUX_DEFAULT\""
	out=$(PATH="$W/bin:/usr/bin:/bin" dash -c "$prog" 2>&1)
	expect_eq "drop-in + grub-cmdline without recorded data: unchanged" "$out" \
		"console=ttyS0 cgroup_enable=memory|quiet cgroup-enable=memory splash"
	printf '[policy]\nmode = off\n' | write_policy "$r/etc/memcg-policy.conf"
	"$MEMCG_POLICY" --root "$r" apply >/dev/null 2>&1
	out=$(PATH="$W/bin:/usr/bin:/bin" dash -c "$prog" 2>"$W/err")
	expect_eq "drop-in + grub-cmdline: recorded tokens set, others kept" "$out" "console=ttyS0 cgroup_disable=memory|quiet splash"
	expect_eq "drop-in + grub-cmdline: says on stderr (update-grub's output) what it took out of each" \
		"$(sed 's/ taken out for the menu.*//' "$W/err")" \
		"$(printf 'memcg-policy: GRUB_CMDLINE_LINUX: cgroup_enable=memory\nmemcg-policy: GRUB_CMDLINE_LINUX_DEFAULT: cgroup-enable=memory')"
	# a policy error: the drop-in never reads the policy; the last applied state stays
	printf '[policy]\nmode = sometimes\n' | write_policy "$r/etc/memcg-policy.conf"
	out=$(PATH="$W/bin:/usr/bin:/bin" dash -c "$prog" 2>/dev/null)
	expect_eq "drop-in + grub-cmdline with a bad policy: the last applied state" "$out" "console=ttyS0 cgroup_disable=memory|quiet splash"
	# bad data: grub-cmdline fails, no output, the values stay, and it says so
	printf 'add init=/bin/sh\n' >"$r/var/lib/memcg-policy/grub.tokens"
	out=$(PATH="$W/bin:/usr/bin:/bin" dash -c "$prog" 2>"$W/err")
	expect_eq "drop-in + grub-cmdline with bad data: unchanged" "$out" "console=ttyS0 cgroup_enable=memory|quiet cgroup-enable=memory splash"
	check "drop-in + grub-cmdline with bad data: says why" grep -q 'grub.tokens:1: ' "$W/err"
}

# ---- Debian family: the drop-in in /etc/default/grub.d ----

debian_case() {
	local name=$1 gens=(10_linux)
	$have_probe && gens=(mkconfig 10_linux)
	setup "$G/cases/$name"
	local after="$W/$name.after" how
	# the menus before, from each generator (they differ in root=); the
	# first one's is the root's menu
	for how in "${gens[@]}"; do
		gen_menu "$root" "$how" "$W/$name.base-$how" || { fail "$name: baseline $how" "$(cat "$W/gen.log")"; return; }
	done
	cp "$W/$name.base-${gens[0]}" "$root/boot/grub/grub.cfg"
	local before_menu="$W/$name.menu0"
	cp "$root/boot/grub/grub.cfg" "$before_menu"
	local orig
	orig=$(snapshot "$root")

	if [ "$MODE" = keep ]; then
		expect_exit "$name: check (keep: in sync)" 0 "$MEMCG_POLICY" --root "$root" check
		expect_exit "$name: apply (keep)" 0 "$MEMCG_POLICY" --root "$root" apply
		expect_eq "$name: apply (keep) changes nothing" "$(changes_of "$OUT")" "nothing to change"
		expect_eq "$name: keep installs no drop-in" "$(ls "$root/etc/default/grub.d" 2>/dev/null)" ""
		expect_eq "$name: keep: every file as it was" "$(snapshot "$root")" "$orig"
		return
	fi

	expect_exit "$name: check before apply: drift" 1 "$MEMCG_POLICY" --root "$root" check
	# a later drop-in that overrides ours: apply writes its files, but the
	# next boot will not have the decision, so it is no success (exit 1,
	# naming the menu and the override)
	local applied=0
	[ -z "$DRIFT" ] || applied=1
	expect_exit "$name: apply" "$applied" "$MEMCG_POLICY" --root "$root" apply
	if [ -n "$DRIFT" ]; then
		case $ERR in
		*"/boot/grub/grub.cfg does not carry the decision: "*"$DRIFT"*) pass "$name: apply names the override" ;;
		*) fail "$name: apply names the override" "stderr: $ERR" ;;
		esac
	fi
	expect_eq "$name: apply installs the drop-in and records the tokens" "$(changes_of "$OUT")" \
		"$(printf 'created /etc/default/grub.d/99-memcg-policy.cfg\ncreated /var/lib/memcg-policy/grub.tokens')"
	check "$name: the drop-in is the package's file" cmp -s "$DROPIN" "$root/etc/default/grub.d/99-memcg-policy.cfg"
	case $ERR in
	*"GRUB menu not regenerated in $root (--root): run update-grub inside it"*) pass "$name: --root: not regenerated, and says so" ;;
	*) fail "$name: --root: not regenerated, and says so" "stderr: $ERR" ;;
	esac
	check "$name: menu untouched by apply --root" cmp -s "$before_menu" "$root/boot/grub/grub.cfg"
	if [ -n "$DRIFT" ]; then
		expect_exit "$name: check after apply, before regenerating: drift" 1 "$MEMCG_POLICY" --root "$root" check
		case $OUT in
		*"drift: /boot/grub/grub.cfg"*"$DRIFT"*) pass "$name: drift says why" ;;
		*) fail "$name: drift says why" "$OUT" ;;
		esac
	else
		# an image whose build runs update-grub later: right, not drift
		expect_exit "$name: check after apply, before regenerating: exit 0" 0 "$MEMCG_POLICY" --root "$root" check
		case $OUT in
		*"not-regenerated: /boot/grub/grub.cfg: menu not regenerated yet"*"stale menu: regenerate with update-grub"*"in sync")
			pass "$name: check says: menu not regenerated yet" ;;
		*) fail "$name: check says: menu not regenerated yet" "$OUT" ;;
		esac
	fi

	for how in "${gens[@]}"; do
		: >"$W/calls.log"
		if ! gen_menu "$root" "$how" "$after"; then
			fail "$name ($how): generate" "$(cat "$W/gen.log")"
			continue
		fi
		[ "$how" = mkconfig ] || cp "$after" "$root/boot/grub/grub.cfg"
		if [ "$(grep -c -- '^grub-cmdline -- ' "$W/calls.log")" -eq 1 ] && [ "$(wc -l <"$W/calls.log")" -eq 1 ]; then
			pass "$name ($how): the drop-in called grub-cmdline once, with both variables"
		else
			fail "$name ($how): the drop-in called grub-cmdline once, with both variables" "$(cat "$W/calls.log")"
		fi
		if [ -n "$DRIFT" ]; then
			expect_exit "$name ($how): check finds the override" 1 "$MEMCG_POLICY" --root "$root" check
			case $OUT in
			*"$DRIFT"*) pass "$name ($how): drift names the later drop-in" ;;
			*) fail "$name ($how): drift names the later drop-in" "$OUT" ;;
			esac
			continue
		fi
		check_menu "$name ($how)" "$W/$name.base-$how" "$after"
		expect_exit "$name ($how): check: in sync" 0 "$MEMCG_POLICY" --root "$root" check
	done

	local st
	st=$(tree_state "$root")
	expect_exit "$name: second apply" "$applied" "$MEMCG_POLICY" --root "$root" apply
	expect_eq "$name: second apply changes nothing" "$(changes_of "$OUT")" "nothing to change"
	expect_eq "$name: second apply writes no file" "$(tree_state "$root")" "$st"

	expect_exit "$name: revert" 0 "$MEMCG_POLICY" --root "$root" revert
	expect_eq "$name: revert gives back every byte" "$(snapshot "$root")" "$orig"
	if [ -z "$DRIFT" ]; then
		gen_menu "$root" "${gens[0]}" "$after" || fail "$name: regenerate after revert" "$(cat "$W/gen.log")"
		check "$name: menu after revert is the original menu" cmp -s "$W/$name.base-${gens[0]}" "$after"
	fi
}

# ---- the administrator's transcript, on a Debian root ----

# menu_args MENU: what follows the command on each linux line, as it is
menu_args() { sed -n 's/^[[:space:]]*linux[[:space:]]\{1,\}//p' "$1"; }
# snapshot without the policy file (set writes it)
snap_admin() { snapshot "$1" | grep -v '^\./etc/memcg-policy\.conf '; }

transcript_case() {
	local how=10_linux t=transcript
	$have_probe && how=mkconfig
	setup "$G/cases/dquote"
	rm -f "$root/etc/memcg-policy.conf"
	gen_menu "$root" "$how" "$W/$t.base" || { fail "$t: baseline" "$(cat "$W/gen.log")"; return; }
	cp "$W/$t.base" "$root/boot/grub/grub.cfg"
	local orig st
	orig=$(snap_admin "$root")

	expect_exit "$t: set off --no-apply" 0 "$MEMCG_POLICY" --root "$root" set off --no-apply
	st=$(tree_state "$root")
	# apply --dry-run shows the data and what will boot, and writes nothing
	expect_exit "$t: apply --dry-run" 0 "$MEMCG_POLICY" --root "$root" apply --dry-run
	local dry=$OUT
	case $dry in
	*"+++ b/var/lib/memcg-policy/grub.tokens"*"+add cgroup_disable=memory"*"+remove cgroup_enable=memory"*)
		pass "$t: dry-run diffs the data file" ;;
	*) fail "$t: dry-run diffs the data file" "$dry" ;;
	esac
	expect_eq "$t: dry-run writes nothing" "$(tree_state "$root")" "$st"
	expect_eq "$t: dry-run: before lines are the menu's linux lines" \
		"$(sed -n 's/^\/boot\/grub\/grub\.cfg:[0-9]*: before: //p' <<<"$dry")" "$(menu_args "$root/boot/grub/grub.cfg")"
	local after_dry
	after_dry=$(sed -n 's/^\/boot\/grub\/grub\.cfg:[0-9]*: after:  //p' <<<"$dry")
	expect_eq "$t: dry-run: an after line for each linux line" "$(wc -l <<<"$after_dry")" \
		"$(menu_args "$root/boot/grub/grub.cfg" | wc -l)"

	# --json apply reports the change
	expect_exit "$t: --json apply" 0 "$MEMCG_POLICY" --root "$root" --json apply
	expect_eq "$t: --json apply: changed" "$(jq -r .changed <<<"$OUT")" true
	expect_eq "$t: --json apply: files[] has the data file" \
		"$(jq -r '.files[].path' <<<"$OUT" | grep -c '^/var/lib/memcg-policy/grub.tokens$')" 1
	# the image's update-grub: the menu is what the dry-run said
	gen_menu "$root" "$how" "$W/$t.off" || fail "$t: generate" "$(cat "$W/gen.log")"
	cp "$W/$t.off" "$root/boot/grub/grub.cfg"
	expect_eq "$t: dry-run's after lines are the linux lines of the menu apply then gives" \
		"$(menu_args "$W/$t.off")" "$after_dry"
	ADD=(cgroup_disable=memory) REMOVE=(cgroup_enable=memory)
	check_menu "$t: off" "$W/$t.base" "$W/$t.off"
	expect_exit "$t: check: in sync" 0 "$MEMCG_POLICY" --root "$root" check
	expect_exit "$t: second apply" 0 "$MEMCG_POLICY" --root "$root" apply
	expect_eq "$t: second apply changes nothing" "$(changes_of "$OUT")" "nothing to change"

	# keep keeps across update-grub
	expect_exit "$t: set auto (nothing needs memcg: keep)" 0 "$MEMCG_POLICY" --root "$root" set auto
	expect_eq "$t: set auto changes no boot file" "$(grep -c '^changed\|^created\|^removed' <<<"$OUT")" 0
	gen_menu "$root" "$how" "$W/$t.keep" || fail "$t: generate (keep)" "$(cat "$W/gen.log")"
	check "$t: keep: update-grub keeps the last applied state" cmp -s "$W/$t.off" "$W/$t.keep"
	expect_exit "$t: keep: check: in sync" 0 "$MEMCG_POLICY" --root "$root" check

	# a typo in the policy, then a kernel update: the last applied state stays
	printf '[policy]\nmode = of\n' | write_policy "$root/etc/memcg-policy.conf"
	expect_exit "$t: typo: the kernel hook does not fail the package" 0 "$MEMCG_POLICY" --root "$root" apply --hook
	gen_menu "$root" "$how" "$W/$t.typo" || fail "$t: generate (typo)" "$(cat "$W/gen.log")"
	check "$t: typo: update-grub keeps the last applied state" cmp -s "$W/$t.off" "$W/$t.typo"
	# strict = yes is honoured although its file has the error, before or after it
	local pol tokens
	tokens=$(cat "$root/var/lib/memcg-policy/grub.tokens")
	for pol in '[policy]\nmode = of\nstrict = yes\n' '[policy]\nstrict = yes\nmdoe = off\n'; do
		# shellcheck disable=SC2059
		printf "$pol" | write_policy "$root/etc/memcg-policy.conf"
		expect_exit "$t: typo + strict: the kernel hook fails" 3 "$MEMCG_POLICY" --root "$root" apply --hook
		case $ERR in
		*"memcg-policy.conf:"*"the error above fails the hook: strict = yes at $root/etc/memcg-policy.conf:"*", although its file has the error"*)
			pass "$t: typo + strict: says the error and why it fails" ;;
		*) fail "$t: typo + strict: says the error and why it fails" "$ERR" ;;
		esac
		expect_eq "$t: typo + strict: the data stays the last applied" "$(cat "$root/var/lib/memcg-policy/grub.tokens")" "$tokens"
	done
	# strict elsewhere than in [policy] is no strict
	printf '[policy]\nmode = of\n[auto]\nstrict = yes\n' | write_policy "$root/etc/memcg-policy.conf"
	expect_exit "$t: typo, strict outside [policy]: the hook does not fail" 0 "$MEMCG_POLICY" --root "$root" apply --hook

	# revert undoes all of it
	printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
	expect_exit "$t: revert" 0 "$MEMCG_POLICY" --root "$root" revert
	case $OUT in
	*"removed /var/lib/memcg-policy/grub.tokens"*) pass "$t: revert removes the data" ;;
	*) fail "$t: revert removes the data" "$OUT" ;;
	esac
	expect_eq "$t: revert: every other file as it was" "$(snap_admin "$root")" "$orig"
	gen_menu "$root" "$how" "$W/$t.rev" || fail "$t: generate (revert)" "$(cat "$W/gen.log")"
	check "$t: revert: the menu is the original menu" cmp -s "$W/$t.base" "$W/$t.rev"

	# the admin's own cgroup_disable=memory: set on takes it out of the
	# menu, revert gives it back
	setup "$G/cases/dquote"
	rm -f "$root/etc/memcg-policy.conf"
	sed -i 's/^GRUB_CMDLINE_LINUX="/GRUB_CMDLINE_LINUX="cgroup_disable=memory /' "$root/etc/default/grub"
	gen_menu "$root" "$how" "$W/$t.adm" || { fail "$t: admin baseline" "$(cat "$W/gen.log")"; return; }
	cp "$W/$t.adm" "$root/boot/grub/grub.cfg"
	check "$t: admin: the baseline menu has cgroup_disable=memory" grep -q 'cgroup_disable=memory' "$W/$t.adm"
	orig=$(snap_admin "$root")
	expect_exit "$t: admin: set on" 0 "$MEMCG_POLICY" --root "$root" set on
	gen_menu "$root" "$how" "$W/$t.on" || fail "$t: generate (on)" "$(cat "$W/gen.log")"
	expect_eq "$t: admin: on: no cgroup_disable=memory in the menu" "$(grep -c 'cgroup_disable=memory' "$W/$t.on")" 0
	expect_eq "$t: admin: on: the admin's file unchanged" "$(snap_admin "$root")" \
		"$(printf '%s\n' "$orig" "./etc/default/grub.d/99-memcg-policy.cfg $(sha256sum <"$DROPIN" | cut -c1-16)" | sort)"
	cp "$W/$t.on" "$root/boot/grub/grub.cfg"
	expect_exit "$t: admin: revert" 0 "$MEMCG_POLICY" --root "$root" revert
	expect_eq "$t: admin: revert: every file as it was" "$(snap_admin "$root")" "$orig"
	gen_menu "$root" "$how" "$W/$t.adm2" || fail "$t: generate (admin revert)" "$(cat "$W/gen.log")"
	check "$t: admin: revert: the admin's token is back, the menu is the original" cmp -s "$W/$t.adm" "$W/$t.adm2"
}

# ---- GRUB without drop-in support: the marked line in /etc/default/grub ----

# install_datadir_dropin ROOT: what the package does there: the drop-in in
# /usr/share/memcg-policy/ (Debian's and the RPM's prefix, whatever this
# build's $(DATADIR) is). The marked line `apply --dry-run` would add must
# source it from there: the image's own file. Sets DATADIR (gen_menu
# overlays that directory of the host with the drop-in).
install_datadir_dropin() {
	local line want=/usr/share/memcg-policy/99-memcg-policy.cfg
	mkdir -p "$1/usr/share/memcg-policy"
	cp "$DROPIN" "$1$want"
	DATADIR=/usr/share
	line=$("$MEMCG_POLICY" --root "$1" apply --dry-run 2>/dev/null | grep '^+if \[ -r /.*# added by memcg-policy$')
	expect_eq "the marked line sources the drop-in where the image has it" "$line" \
		"+if [ -r $want ]; then . $want; fi  # added by memcg-policy"
}

upstream_case() {
	setup "$G/upstream"
	cp -a "$G/upstream/etc/." "$root/etc/"
	rm -f "$root/usr/sbin/grub-mkconfig" "$root/usr/sbin/update-grub"
	mkdir -p "$root/usr/bin"
	# upstream / Arch grub-mkconfig: Debian's without its grub.d loop
	sed '/default\/grub.d\/\*\.cfg/,/^done/d' /usr/sbin/grub-mkconfig >"$root/usr/bin/grub-mkconfig"
	chmod 0755 "$root/usr/bin/grub-mkconfig"
	if grep -q 'grub.d/\*.cfg' "$root/usr/bin/grub-mkconfig"; then fail "upstream: fixture mkconfig" "loop still there"; fi
	local base="$W/up.base" after="$W/up.after"
	gen_menu "$root" 10_linux "$base" || { fail "upstream: baseline" "$(cat "$W/gen.log")"; return; }
	cp "$base" "$root/boot/grub/grub.cfg"
	install_datadir_dropin "$root"
	local orig origgrub="$W/up.grub"
	orig=$(snapshot "$root")
	cp "$root/etc/default/grub" "$origgrub"

	expect_exit "upstream: apply" 0 "$MEMCG_POLICY" --root "$root" apply
	expect_eq "upstream: apply changes /etc/default/grub and records the tokens" "$(changes_of "$OUT")" \
		"$(printf 'changed /etc/default/grub\ncreated /var/lib/memcg-policy/grub.tokens')"
	local n line
	n=$(stat -c %s "$origgrub")
	check "upstream: every byte of /etc/default/grub kept" cmp -s -n "$n" "$origgrub" "$root/etc/default/grub"
	line=$(tail -n 1 "$root/etc/default/grub")
	case $line in
	"if [ -r /"*"/memcg-policy/99-memcg-policy.cfg ]; then . /"*"/memcg-policy/99-memcg-policy.cfg; fi  # added by memcg-policy")
		pass "upstream: one marked line at the end" ;;
	*) fail "upstream: one marked line at the end" "$line" ;;
	esac
	expect_eq "upstream: only one line added" "$(($(wc -l <"$root/etc/default/grub") - $(wc -l <"$origgrub")))" 1
	expect_exit "upstream: check before regenerating: not regenerated yet, exit 0" 0 "$MEMCG_POLICY" --root "$root" check
	case $OUT in
	*"not-regenerated: /boot/grub/grub.cfg: menu not regenerated yet"*"grub-mkconfig -o /boot/grub/grub.cfg"*)
		pass "upstream: check says how to regenerate" ;;
	*) fail "upstream: check says how to regenerate" "$OUT" ;;
	esac

	gen_menu "$root" 10_linux "$after" || fail "upstream: generate" "$(cat "$W/gen.log")"
	cp "$after" "$root/boot/grub/grub.cfg"
	check_menu "upstream (10_linux)" "$base" "$after"
	expect_exit "upstream: check: in sync" 0 "$MEMCG_POLICY" --root "$root" check
	if $have_probe; then
		# the real grub-mkconfig sources /etc/default/grub, hence the marked line
		local base_mk="$W/up.base-mk"
		"$MEMCG_POLICY" --root "$root" revert >/dev/null 2>&1
		gen_menu "$root" mkconfig "$base_mk" || fail "upstream (mkconfig): baseline" "$(cat "$W/gen.log")"
		"$MEMCG_POLICY" --root "$root" apply >/dev/null 2>&1
		gen_menu "$root" mkconfig "$after" || fail "upstream (mkconfig): generate" "$(cat "$W/gen.log")"
		check_menu "upstream (mkconfig)" "$base_mk" "$after"
		expect_exit "upstream (mkconfig): check: in sync" 0 "$MEMCG_POLICY" --root "$root" check
	else
		skip "upstream (mkconfig): grub-probe cannot probe / here"
	fi

	local st
	st=$(tree_state "$root")
	expect_exit "upstream: second apply" 0 "$MEMCG_POLICY" --root "$root" apply
	expect_eq "upstream: second apply changes nothing" "$(changes_of "$OUT")" "nothing to change"
	expect_eq "upstream: second apply writes no file" "$(tree_state "$root")" "$st"

	expect_exit "upstream: revert" 0 "$MEMCG_POLICY" --root "$root" revert
	expect_eq "upstream: revert gives back every byte" "$(snapshot "$root")" "$orig"
	gen_menu "$root" 10_linux "$after"
	check "upstream: menu after revert is the original menu" cmp -s "$base" "$after"

	# the admin edits /etc/default/grub after apply: revert takes out
	# exactly the marked line
	"$MEMCG_POLICY" --root "$root" apply >/dev/null 2>&1
	printf 'GRUB_TIMEOUT_STYLE=menu\n' >>"$root/etc/default/grub"
	expect_exit "upstream: revert after an admin edit" 0 "$MEMCG_POLICY" --root "$root" revert
	expect_eq "upstream: only the marked line is gone" "$(cat "$root/etc/default/grub")" \
		"$(cat "$origgrub"; printf 'GRUB_TIMEOUT_STYLE=menu')"
	unset DATADIR
}

# ---- status: the GRUB variables as written (file:line) and as the menu gets them ----

status_case() {
	setup "$G/cases/cloudimg"
	gen_menu "$root" 10_linux "$root/boot/grub/grub.cfg" || { fail "status: baseline menu" "$(cat "$W/gen.log")"; return; }
	local c=/etc/default/grub.d/50-cloudimg-settings.cfg
	expect_exit "status (cloud image): before apply" 0 "$MEMCG_POLICY" --root "$root" status
	local want
	want=$(printf '%s\n' \
		"GRUB command line (GRUB_CMDLINE_LINUX, then GRUB_CMDLINE_LINUX_DEFAULT: one line at boot):" \
		"  GRUB_CMDLINE_LINUX" \
		"    written:       /etc/default/grub:11: GRUB_CMDLINE_LINUX=\"\"" \
		"    as written:    \"\"" \
		"    menu gets:     \"\"" \
		"    after apply:   \"cgroup_disable=memory\"" \
		"  GRUB_CMDLINE_LINUX_DEFAULT" \
		"    written:       /etc/default/grub:10: GRUB_CMDLINE_LINUX_DEFAULT=\"quiet splash\"" \
		"    written:       $c:11: GRUB_CMDLINE_LINUX_DEFAULT=\"console=tty1 console=ttyS0\"" \
		"    as written:    \"console=tty1 console=ttyS0\"" \
		"    menu gets:     \"console=tty1 console=ttyS0\"")
	expect_eq "status (cloud image): each assignment with file:line, the values, what apply changes" \
		"$(sed -n '/^GRUB command line/,/^In sync/p' <<<"$OUT" | sed '$d')" "$want"
	expect_exit "status (cloud image): apply" 0 "$MEMCG_POLICY" --root "$root" apply
	expect_exit "status (cloud image): after apply" 0 "$MEMCG_POLICY" --root "$root" status
	want=$(printf '%s\n' \
		"GRUB command line (GRUB_CMDLINE_LINUX, then GRUB_CMDLINE_LINUX_DEFAULT: one line at boot):" \
		"  GRUB_CMDLINE_LINUX" \
		"    written:       /etc/default/grub:11: GRUB_CMDLINE_LINUX=\"\"" \
		"    as written:    \"\"" \
		"    menu gets:     \"cgroup_disable=memory\" (through the drop-in's data)" \
		"  GRUB_CMDLINE_LINUX_DEFAULT" \
		"    written:       /etc/default/grub:10: GRUB_CMDLINE_LINUX_DEFAULT=\"quiet splash\"" \
		"    written:       $c:11: GRUB_CMDLINE_LINUX_DEFAULT=\"console=tty1 console=ttyS0\"" \
		"    as written:    \"console=tty1 console=ttyS0\"" \
		"    menu gets:     \"console=tty1 console=ttyS0\"")
	expect_eq "status (cloud image): after apply the menu gets the data's token" \
		"$(sed -n '/^GRUB command line/,/^In sync/p' <<<"$OUT" | sed '$d')" "$want"
	# what status says the menu gets is what update-grub gives it (GRUB
	# 2.12, Debian 13's, adds dis_ucode_ldr to x86 recovery entries)
	gen_menu "$root" 10_linux "$W/status.after" || fail "status: regenerate" "$(cat "$W/gen.log")"
	local normal recovery
	normal=$(grep -E '^\s*linux\s' "$W/status.after" | grep -vc ' single ')
	recovery=$(grep -E '^\s*linux\s' "$W/status.after" | grep -c ' single ')
	expect_eq "status (cloud image): every normal linux line ends with LINUX DEFAULT as status said" \
		"$(grep -cE '^\s*linux\s.* ro cgroup_disable=memory console=tty1 console=ttyS0$' "$W/status.after")" "$normal"
	expect_eq "status (cloud image): every recovery linux line ends with LINUX as status said" \
		"$(grep -cE '^\s*linux\s.* ro single( dis_ucode_ldr)? cgroup_disable=memory$' "$W/status.after")" "$recovery"
	check "status (cloud image): the menu has both kinds of lines" test "$normal" -ge 2 -a "$recovery" -ge 2
}

# ---- RHEL 8: kernelopts in grubenv, written by the tool itself ----

rhel8_case() {
	local variant=$1 # plain: a file (and a hard link to it); own-tools: the root has its own grub2-editenv, never run
	setup "$G/rhel8"
	cp -a "$G/rhel8/." "$root/"
	rm -f "$root/expect" "$root/usr/sbin/grub-mkconfig" "$root/usr/sbin/update-grub"
	sed '/default\/grub.d\/\*\.cfg/,/^done/d' /usr/sbin/grub-mkconfig >"$root/usr/sbin/grub2-mkconfig"
	chmod 0755 "$root/usr/sbin/grub2-mkconfig"
	local env="$root/boot/grub2/grubenv"
	if [ "$variant" = own-tools ]; then
		# the root's own tool, which must not run: a script that logs
		mkdir -p "$root/usr/bin"
		printf '#!/bin/sh\necho "$@" >>/editenv.log\nexit 1\n' >"$root/usr/bin/grub2-editenv"
		chmod 0755 "$root/usr/bin/grub2-editenv"
	else
		# a hard link to grubenv keeps its bytes: the file is replaced, never written in place
		mkdir -p "$W/links"
		ln -f "$env" "$W/links/grubenv.$variant"
	fi
	install_datadir_dropin "$root"
	unset DATADIR
	local orig
	orig=$(snapshot "$root")
	local before want="root=/dev/mapper/rhel-root ro crashkernel=auto resume=/dev/mapper/rhel-swap rd.lvm.lv=rhel/root rd.lvm.lv=rhel/swap rhgb quiet cgroup_disable=memory"
	before=$(grub-editenv "$env" list)
	# what the real grub-editenv writes for the same value
	cp "$env" "$W/grubenv.editenv"
	grub-editenv "$W/grubenv.editenv" set "kernelopts=$want"
	expect_exit "rhel8 ($variant): apply" 0 "$MEMCG_POLICY" --root "$root" apply
	expect_eq "rhel8 ($variant): apply output" "$(changes_of "$OUT")" \
		"$(printf 'changed /etc/default/grub\ncreated /var/lib/memcg-policy/grub.tokens\nchanged /boot/grub2/grubenv +cgroup_disable=memory -cgroup_enable=memory')"
	expect_eq "rhel8 ($variant): grubenv still 1024 bytes" "$(stat -c %s "$env")" 1024
	check "rhel8 ($variant): grubenv byte for byte what grub-editenv set writes" cmp "$env" "$W/grubenv.editenv"
	expect_eq "rhel8 ($variant): grub-editenv list reads the new kernelopts" "$(grub-editenv "$env" list | grep '^kernelopts=')" \
		"kernelopts=$want"
	expect_eq "rhel8 ($variant): other grubenv variables kept" "$(grub-editenv "$env" list | grep -v '^kernelopts=')" \
		"$(printf '%s\n' "$before" | grep -v '^kernelopts=')"
	if [ "$variant" = own-tools ]; then
		expect_eq "rhel8 (own-tools): no program of the root ran" "$(cat "$root/editenv.log" 2>/dev/null)" ""
	else
		check "rhel8 ($variant): the hard link keeps the original block" cmp "$W/links/grubenv.$variant" "$G/rhel8/boot/grub2/grubenv"
	fi
	expect_eq "rhel8 ($variant): BLS entries keep \$kernelopts" \
		"$(cat "$root"/boot/loader/entries/*.conf | grep -c '^options \$kernelopts \$tuned_params$')" 2
	expect_eq "rhel8 ($variant): marked line added" "$(tail -n 1 "$root/etc/default/grub" | grep -c '# added by memcg-policy$')" 1
	# the menu's own fallback kernelopts is stale until grub2-mkconfig runs
	expect_exit "rhel8 ($variant): check: menu not regenerated yet, exit 0" 0 "$MEMCG_POLICY" --root "$root" check
	case $OUT in
	*"not-regenerated: /boot/grub2/grub.cfg: menu not regenerated yet"*"stale menu: regenerate with grub2-mkconfig -o /boot/grub2/grub.cfg"*)
		pass "rhel8 ($variant): check says: menu not regenerated yet" ;;
	*) fail "rhel8 ($variant): check says: menu not regenerated yet" "$OUT" ;;
	esac
	local st
	st=$(tree_state "$root")
	expect_exit "rhel8 ($variant): second apply" 0 "$MEMCG_POLICY" --root "$root" apply
	expect_eq "rhel8 ($variant): second apply changes nothing" "$(changes_of "$OUT")" "nothing to change"
	expect_eq "rhel8 ($variant): second apply writes no file" "$(tree_state "$root")" "$st"
	expect_exit "rhel8 ($variant): revert" 0 "$MEMCG_POLICY" --root "$root" revert
	case $OUT in
	*"restored kernelopts in /boot/grub2/grubenv"*) pass "rhel8 ($variant): revert says it restored kernelopts" ;;
	*) fail "rhel8 ($variant): revert says it restored kernelopts" "$OUT" ;;
	esac
	expect_eq "rhel8 ($variant): revert gives back every byte (grubenv too)" "$(snapshot "$root" | grep -v editenv.log)" "$orig"
	check "rhel8 ($variant): revert leaves no journal" test ! -e "$root/var/lib/memcg-policy/journal.json"
	[ "$variant" = plain ] || return 0

	# grubenv goes through the same commit: a failure at any step of it
	# leaves every file as it was (grubenv, /etc/default/grub, the data)
	local n=1 rolled=true
	while [ $n -lt 60 ]; do
		if MEMCG_POLICY_FAILPOINT=$n "$MEMCG_POLICY" --root "$root" apply >/dev/null 2>"$W/fp.err"; then
			break
		fi
		if [ "$(snapshot "$root")" != "$orig" ] || [ -e "$root/var/lib/memcg-policy/grub.tokens" ]; then
			rolled=false
			fail "rhel8: failure at step $n rolls every file back" "$(cat "$W/fp.err")"
			break
		fi
		n=$((n + 1))
	done
	$rolled && [ $n -gt 3 ] && [ $n -lt 60 ] && pass "rhel8: a failure at each of the $((n - 1)) steps of the commit rolls every file back"
	[ $n -le 3 ] && fail "rhel8: failure steps" "the commit succeeded at step $n: the failpoints were not reached"
	check "rhel8: then applied: grubenv as grub-editenv writes it" cmp "$env" "$W/grubenv.editenv"
	"$MEMCG_POLICY" --root "$root" revert >/dev/null 2>&1

	# kernelopts that no longer fits in the block: exit 4, nothing written
	# (a variable filling the padding: the edit grows kernelopts by a byte)
	local fill free
	free=$(perl -0777 -ne '/(#*)\z/; print length $1' "$env")
	fill=$(head -c $((free - 6)) /dev/zero | tr '\0' x)
	grub-editenv "$env" set "fill=$fill" || fail "rhel8: fill the block" "grub-editenv set failed"
	orig=$(snapshot "$root")
	expect_exit "rhel8: kernelopts too long for the block: exit 4" 4 "$MEMCG_POLICY" --root "$root" apply
	case $ERR in
	*"/boot/grub2/grubenv: the new kernelopts ("*" bytes) does not fit in the 1024-byte environment block"*)
		pass "rhel8: kernelopts too long: says so" ;;
	*) fail "rhel8: kernelopts too long: says so" "$ERR" ;;
	esac
	expect_eq "rhel8: kernelopts too long: nothing written" "$(snapshot "$root")" "$orig"
	check "rhel8: kernelopts too long: no data file" test ! -e "$root/var/lib/memcg-policy/grub.tokens"
}

# ---- a live system: apply on "/" runs the real update-grub ----

# live CMD...: CMD in a namespace that looks like a Debian machine with the
# fixture's /boot and /etc/default, the program in /usr/local/sbin (not in
# the clean PATH update-grub gets: the drop-in's fixed list finds it), and
# overlays keeping every write (policy, journal, lock) off the host
live() {
	local L=$W/live
	mkdir -p "$L/sbin" "$L/etc" "$L/var" "$L/run" "$L/w1" "$L/w2" "$L/w3" "$L/w4"
	ln -sf "$MEMCG_POLICY" "$L/sbin/memcg-policy"
	"${NS[@]}" sh -c '
		L=$0 root=$1; shift
		set -e
		mount -t overlay overlay -o lowerdir=/usr/local/sbin,upperdir=$L/sbin,workdir=$L/w1 /usr/local/sbin
		mount -t overlay overlay -o lowerdir=/etc,upperdir=$L/etc,workdir=$L/w2 /etc
		mount -t overlay overlay -o lowerdir=/var,upperdir=$L/var,workdir=$L/w3 /var
		mount -t overlay overlay -o lowerdir=/run,upperdir=$L/run,workdir=$L/w4 /run
		mount --bind "$root/boot" /boot
		mount --bind "$root/etc/default" /etc/default
		exec "$@"' "$L" "$root" "$@"
}

live_case() {
	if [ ! -e /proc/config.gz ] && [ ! -e "/boot/config-$(uname -r)" ]; then
		skip "live: the running kernel's config is not readable here"
		return
	fi
	setup "$G/cases/dquote"
	rm -f "$root/etc/memcg-policy.conf"
	mkdir -p "$W/live/etc"
	printf '[policy]\nmode = off\n' | write_policy "$W/live/etc/memcg-policy.conf"
	# the environment memcg-policy gives it (00_header writes $LANG into the menu)
	if ! live env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C /usr/sbin/update-grub >"$W/gen.log" 2>&1; then
		fail "live: baseline update-grub" "$(cat "$W/gen.log")"
		return
	fi
	local base="$W/live.base"
	cp "$root/boot/grub/grub.cfg" "$base"
	local orig
	orig=$(snapshot "$root")
	expect_exit "live: apply" 0 live memcg-policy apply
	expect_eq "live: apply installs the drop-in, records the tokens, regenerates the menu" "$(changes_of "$OUT")" \
		"$(printf 'created /etc/default/grub.d/99-memcg-policy.cfg\ncreated /var/lib/memcg-policy/grub.tokens\nregenerated /boot/grub/grub.cfg')"
	check_menu "live: update-grub run by apply" "$base" "$root/boot/grub/grub.cfg"
	expect_exit "live: check" 5 live memcg-policy check
	case $OUT in
	*drift*) fail "live: check finds no drift" "$OUT" ;;
	*) pass "live: check finds no drift (5: the running kernel still runs with memcg on)" ;;
	esac
	local st
	st=$(tree_state "$root")
	expect_exit "live: second apply" 0 live memcg-policy apply
	expect_eq "live: second apply changes nothing" "$(changes_of "$OUT")" "nothing to change"
	expect_eq "live: second apply runs no update-grub (menu untouched)" "$(tree_state "$root")" "$st"
	expect_exit "live: revert" 0 live memcg-policy revert
	expect_eq "live: revert gives back every byte" "$(snapshot "$root")" "$orig"
	if cmp -s "$base" "$root/boot/grub/grub.cfg"; then
		pass "live: revert regenerated the original menu"
	else
		fail "live: revert regenerated the original menu" "$(diff -u "$base" "$root/boot/grub/grub.cfg" | head -20)"
	fi
}

# ---- apply --regenerate with --root: the image's update-grub, in a private
# mount namespace with /dev, /proc, /sys, chrooted ----

# tree: the image's files (what nothing but --regenerate may change)
tree() {
	(cd "$root" && find . \( -path ./regen.log -o -path ./regen.env -o -path ./regen.ns \) -prune \
		-o -type f -print0 | sort -z | xargs -0 sha256sum)
}

regen_case() {
	setup "$G/cases/dquote"
	if [ -z "$root" ] || [ "$root" = / ]; then fail "--regenerate: fixture root" "no root"; return; fi
	# a root that can run sh, memcg-policy and a small update-grub that does
	# what grub-mkconfig does with the variables (the real one needs devices)
	local f lib
	for f in /usr/bin/dash "$MEMCG_POLICY"; do
		local dest
		dest="$root/usr/bin/$(basename "$f")"
		mkdir -p "$root/usr/bin"
		cp "$f" "$dest"
		for lib in $(ldd "$f" | grep -o '/[^ ]*'); do
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
	done
	# empty mount points, as in a debootstrapped tree: the tool prepares them
	mkdir -p "$root/bin" "$root/usr/sbin" "$root/dev" "$root/proc" "$root/sys"
	ln -sf /usr/bin/dash "$root/bin/sh"
	ln -sf /usr/bin/memcg-policy "$root/usr/sbin/memcg-policy"
	cat >"$root/usr/sbin/update-grub" <<'UPDATE_GRUB'
#!/bin/sh
set -e
echo "update-grub $*" >>/regen.log
export -p >/regen.env
{ [ -c /dev/null ] && echo dev; [ -r /proc/self/mountinfo ] && echo proc; [ -d /sys/kernel ] && echo sys; } >/regen.ns
if [ -e /fail ]; then echo "grub-probe: error: failed to get canonical path of /dev/root." >&2; exit 1; fi
echo "Generating grub configuration file ..." >&2
. /etc/default/grub
for x in /etc/default/grub.d/*.cfg; do
	if [ -e "${x}" ]; then . "${x}"; fi
done
for k in /boot/vmlinuz-*; do
	echo "menuentry '${k#/boot/vmlinuz-}' {"
	echo "	linux	$k root=/dev/sda1 ro ${GRUB_CMDLINE_LINUX} ${GRUB_CMDLINE_LINUX_DEFAULT}"
	echo "}"
	echo "menuentry '${k#/boot/vmlinuz-} (recovery mode)' {"
	echo "	linux	$k root=/dev/sda1 ro single ${GRUB_CMDLINE_LINUX}"
	echo "}"
done >/boot/grub/grub.cfg
echo "done" >&2
UPDATE_GRUB
	chmod 0755 "$root/usr/sbin/update-grub"
	printf '# empty\n' >"$root/boot/grub/grub.cfg"
	if ! chroot "$root" /bin/sh -c true 2>/dev/null; then
		fail "--regenerate: chroot into the fixture" "chroot is not possible here"
		return
	fi
	# the image's menu as its build made it, before the tool
	chroot "$root" /usr/sbin/update-grub || fail "--regenerate: the image's first menu" "update-grub failed"
	rm -f "$root/regen.log" "$root/regen.env" "$root/regen.ns" "$root/dev/null"
	local menu0
	menu0=$(grep -c 'cgroup_enable=memory' "$root/boot/grub/grub.cfg")
	expect_eq "--regenerate: the image's first menu has the admin's cgroup_enable=memory" "$menu0" 6

	# regenerate = yes in the image's policy: ignored with --root, and said
	printf '[policy]\nmode = off\n[bootloaders]\nregenerate = yes\n' | write_policy "$root/etc/memcg-policy.conf"
	expect_exit "regenerate = yes with --root: apply" 0 "$MEMCG_POLICY" --root "$root" apply
	expect_eq "regenerate = yes with --root: no program of the image ran" "$(cat "$root/regen.log" 2>/dev/null)" ""
	case $ERR in
	*"$root/etc/memcg-policy.conf:4: regenerate = yes is ignored with --root"*"apply --regenerate"*)
		pass "regenerate = yes with --root: ignored, with file:line, and says how" ;;
	*) fail "regenerate = yes with --root: ignored, with file:line, and says how" "$ERR" ;;
	esac
	expect_exit "regenerate = yes with --root: check: not regenerated yet, exit 0" 0 "$MEMCG_POLICY" --root "$root" check
	printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"

	export LEAKED_VARIABLE=from-the-test
	local mounts_before
	mounts_before=$(wc -l </proc/self/mountinfo)
	expect_exit "--regenerate: apply" 0 "$MEMCG_POLICY" --root "$root" apply --regenerate
	expect_eq "--regenerate: update-grub ran once, in the root" "$(cat "$root/regen.log" 2>/dev/null)" "update-grub "
	case $OUT in
	*"regenerated /boot/grub/grub.cfg"*) pass "--regenerate: says the menu was regenerated" ;;
	*) fail "--regenerate: says the menu was regenerated" "$OUT" ;;
	esac
	expect_eq "--regenerate: a line says update-grub runs before it does; its output only under -v" "$ERR" \
		"memcg-policy: running update-grub to regenerate the GRUB menu of the image (-v shows its output)..."
	expect_eq "--regenerate: /dev, /proc and /sys prepared inside" "$(tr '\n' ' ' <"$root/regen.ns" 2>/dev/null)" "dev proc sys "
	expect_eq "--regenerate: no mount left on the host" "$(grep -c " $root/" /proc/self/mountinfo)" 0
	expect_eq "--regenerate: the host's mount table as before" "$(wc -l </proc/self/mountinfo)" "$mounts_before"
	expect_eq "--regenerate: the image's mount points empty again" "$(find "$root/proc" "$root/sys" "$root/dev" -mindepth 1)" ""
	expect_eq "--regenerate: clean environment" "$(grep -c 'LEAKED_VARIABLE' "$root/regen.env" 2>/dev/null)" 0
	expect_eq "--regenerate: MEMCG_POLICY_IMAGE=1 for the drop-in" \
		"$(grep -c "^export MEMCG_POLICY_IMAGE='1'$" "$root/regen.env" 2>/dev/null)" 1
	expect_eq "--regenerate: PATH and LC_ALL set" \
		"$(grep -E '^export (PATH|LC_ALL)=' "$root/regen.env" 2>/dev/null | tr '\n' ' ')" \
		"export LC_ALL='C' export PATH='/usr/sbin:/usr/bin:/sbin:/bin' "
	unset LEAKED_VARIABLE
	expect_eq "--regenerate: the menu carries the decision (drop-in ran inside)" \
		"$(grep -c 'cgroup_disable=memory' "$root/boot/grub/grub.cfg")" 6
	expect_eq "--regenerate: no cgroup_enable=memory left" "$(grep -c 'cgroup_enable=memory' "$root/boot/grub/grub.cfg")" 0
	expect_exit "--regenerate: check: in sync" 0 "$MEMCG_POLICY" --root "$root" check

	# an image builder that mounted proc in the image already: mounted over
	rm -f "$root/regen.log" "$root/etc/default/grub.d/99-memcg-policy.cfg"
	expect_exit "--regenerate: proc already mounted in the image (-q)" 0 unshare -m --propagation private \
		sh -c 'mount -t proc proc "$0/proc" && exec "$@"' "$root" "$MEMCG_POLICY" -q --root "$root" apply --regenerate
	expect_eq "--regenerate -q: no line about update-grub" "$ERR" ""
	expect_eq "--regenerate: proc already mounted: update-grub ran" "$(cat "$root/regen.log" 2>/dev/null)" "update-grub "
	# a mount point that is a symbolic link out of the image: refused
	rmdir "$root/sys"
	ln -s /sys "$root/sys"
	rm -f "$root/regen.log" "$root/etc/default/grub.d/99-memcg-policy.cfg"
	expect_exit "--regenerate: /sys a symbolic link: exit 4" 4 "$MEMCG_POLICY" --root "$root" apply --regenerate
	case $ERR in
	*"--regenerate: $root/sys: not a directory (or a symbolic link)"*) pass "--regenerate: /sys a symbolic link: says so" ;;
	*) fail "--regenerate: /sys a symbolic link: says so" "$ERR" ;;
	esac
	check "--regenerate: /sys a symbolic link: nothing written" test ! -e "$root/etc/default/grub.d/99-memcg-policy.cfg"
	rm "$root/sys"
	mkdir "$root/sys"
	"$MEMCG_POLICY" --root "$root" apply --regenerate >/dev/null 2>&1

	rm -f "$root/regen.log"
	expect_exit "--regenerate: second apply" 0 "$MEMCG_POLICY" --root "$root" apply --regenerate
	expect_eq "--regenerate: second apply runs no tool" "$(cat "$root/regen.log" 2>/dev/null)" ""

	# the decision changes, the drop-in does not: the stale menu is regenerated
	printf '[policy]\nmode = on\n' | write_policy "$root/etc/memcg-policy.conf"
	expect_exit "--regenerate: apply -v after set on" 0 "$MEMCG_POLICY" -v --root "$root" apply --regenerate
	expect_eq "--regenerate -v: update-grub's output, a line each, led by its name" \
		"$(grep '^memcg-policy: update-grub: ' <<<"$ERR")" \
		"$(printf 'memcg-policy: update-grub: Generating grub configuration file ...\nmemcg-policy: update-grub: done')"
	expect_eq "--regenerate: stale menu regenerated" "$(cat "$root/regen.log" 2>/dev/null)" "update-grub "
	expect_eq "--regenerate: menu now without cgroup_disable=memory" "$(grep -c 'cgroup_disable=memory' "$root/boot/grub/grub.cfg")" 0
	expect_exit "--regenerate: check after set on: in sync" 0 "$MEMCG_POLICY" --root "$root" check

	expect_exit "--regenerate with --no-regenerate: usage error" 2 "$MEMCG_POLICY" --root "$root" apply --regenerate --no-regenerate

	# what cannot work is refused before anything is written
	printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
	rm -f "$root/regen.log"
	local before
	before=$(tree)
	rmdir "$root/sys"
	expect_exit "--regenerate: no /sys in the image: exit 4" 4 "$MEMCG_POLICY" --root "$root" apply --regenerate
	case $ERR in
	*"--regenerate: $root/sys: No such file or directory: no directory to mount sys on"*)
		pass "--regenerate: no /sys in the image: says so" ;;
	*) fail "--regenerate: no /sys in the image: says so" "$ERR" ;;
	esac
	expect_eq "--regenerate: no /sys in the image: nothing written" "$(tree)" "$before"
	mkdir "$root/sys"
	sed -i '1s|.*|#!/bin/bash|' "$root/usr/sbin/update-grub"
	before=$(tree)
	expect_exit "--regenerate: the tool's interpreter missing in the image: exit 4" 4 \
		"$MEMCG_POLICY" --root "$root" apply --regenerate
	case $ERR in
	*"--regenerate: $root/bin/bash, the interpreter of update-grub, cannot be run inside the image"*)
		pass "--regenerate: the tool's interpreter missing: says so" ;;
	*) fail "--regenerate: the tool's interpreter missing: says so" "$ERR" ;;
	esac
	expect_eq "--regenerate: the tool's interpreter missing: nothing written" "$(tree)" "$before"
	expect_eq "--regenerate: the tool's interpreter missing: nothing ran" "$(cat "$root/regen.log" 2>/dev/null)" ""
	sed -i '1s|.*|#!/bin/sh|' "$root/usr/sbin/update-grub"
	if command -v setpriv >/dev/null; then
		# what lets the run get as far as the namespace: the lock it takes
		find "$root" -type d -exec chmod a+rx {} +
		chmod 0666 "$root/run/memcg-policy.lock"
		before=$(tree)
		expect_exit "--regenerate: no privilege for a mount namespace: exit 4" 4 \
			setpriv --reuid=65534 --regid=65534 --clear-groups "$MEMCG_POLICY" --root "$root" apply --regenerate
		case $ERR in
		*"--regenerate: cannot create a private mount namespace: Operation not permitted"*)
			pass "--regenerate: no privilege: says so" ;;
		*) fail "--regenerate: no privilege: says so" "$ERR" ;;
		esac
		expect_eq "--regenerate: no privilege: nothing written" "$(tree)" "$before"
	else
		fail "--regenerate: no privilege" "setpriv (util-linux) is missing"
	fi

	# --no-regenerate: nothing runs
	rm -f "$root/regen.log"
	expect_exit "--no-regenerate: apply" 0 "$MEMCG_POLICY" --root "$root" apply --no-regenerate
	expect_eq "--no-regenerate: no tool ran" "$(cat "$root/regen.log" 2>/dev/null)" ""
	printf '[policy]\nmode = on\n' | write_policy "$root/etc/memcg-policy.conf"

	# a failing tool: exit 4, its output shown
	: >"$root/fail"
	expect_exit "--regenerate: a failing update-grub is exit 4" 4 "$MEMCG_POLICY" --root "$root" apply --regenerate
	case $ERR in
	*"update-grub failed (exit status 1)"*"grub-probe: error: failed to get canonical path of /dev/root."*)
		pass "--regenerate: the tool's output is shown" ;;
	*) fail "--regenerate: the tool's output is shown" "$ERR" ;;
	esac
	rm -f "$root/fail"

	# update-grub succeeds, but the image's program fails when its drop-in
	# runs it: the regenerated menu lacks the decision, and apply says so
	# (exit 4) instead of success
	printf '[policy]\nmode = off\n' | write_policy "$root/etc/memcg-policy.conf"
	rm "$root/usr/sbin/memcg-policy"
	image_program "$root"
	rm -f "$root/regen.log"
	expect_exit "--regenerate: the menu does not carry the decision: exit 4" 4 \
		"$MEMCG_POLICY" --root "$root" apply --regenerate
	expect_eq "--regenerate: the menu does not carry it: update-grub ran" "$(cat "$root/regen.log" 2>/dev/null)" "update-grub "
	case $ERR in
	*"/boot/grub/grub.cfg: regenerated, but its linux lines do not carry the decision"*)
		pass "--regenerate: the menu does not carry it: says so, naming the menu" ;;
	*) fail "--regenerate: the menu does not carry it: says so, naming the menu" "$ERR" ;;
	esac
	ln -sf /usr/bin/memcg-policy "$root/usr/sbin/memcg-policy"
}

dropin_tests
if ! $have_grub; then
	fail "GRUB's scripts" "grub-common (grub-mkconfig, /etc/grub.d/10_linux) is not installed"
elif ! $have_ns; then
	skip "the real GRUB scripts on fixtures (needs root and a private mount namespace: unshare -m --propagation private fails here)"
else
	$have_probe || skip "grub-mkconfig runs: grub-probe cannot probe / and /boot here; 10_linux runs only"
	for c in dquote squote varref conflict dropins override oldkernel keep cloudimg; do
		debian_case "$c"
	done
	transcript_case
	status_case
	upstream_case
	if $have_probe; then live_case; else skip "live: grub-probe cannot probe / here"; fi
fi
rhel8_case plain
rhel8_case own-tools
if $have_ns; then
	regen_case
else
	skip "apply --regenerate (needs root and a private mount namespace, as the tool itself does)"
fi
