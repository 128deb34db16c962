/* cmd/grub-cmdline.c - plumbing for the GRUB drop-in:
 *   grub-cmdline [--no-add] [--] LINUX [DEFAULT]
 * prints GRUB_CMDLINE_LINUX (and GRUB_CMDLINE_LINUX_DEFAULT, on a second
 * line) with the tokens the last apply recorded for GRUB (GRUB_TOKENS_PATH)
 * applied, read as one line (grub_filter); it never reads the policy.
 * Without recorded data the values are printed as they are. --no-add with
 * one VALUE only takes contradicting tokens out of it (a
 * GRUB_CMDLINE_LINUX_DEFAULT alone). On any error: no output and a
 * non-zero exit, so the drop-in keeps the values unchanged. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/commands.h"
#include "io/jsonc.h"

#include "lib/cmdline.h"
#include "lib/diag.h"
#include "slots/grub/grub.h"
#include "show/report.h"
#include "lib/util.h"

#include "facts/context.h"

/* The recorded tokens; *have false where there are none. */
static int load_tokens(const struct context *ctx, struct grub_tokens *t, bool *have)
{
	memset(t, 0, sizeof(*t));
	*have = false;
	const char *override = getenv(ENV_GRUB_TOKENS);
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int e = override && *override ? read_host_file(override, 64u << 10, &text, &len)
				      : root_read_file(&ctx->root, GRUB_TOKENS_PATH, 64u << 10, &text, &len);
	if (e == -ENOENT)
		return 0;
	_cleanup_free_ char *disp =
		override && *override ? xstrdup(override) : root_display(&ctx->root, GRUB_TOKENS_PATH);
	if (e < 0)
		return diag_error(EXIT_SYSTEM, "%s: cannot read: %s", disp, strerror(-e));
	unsigned bad;
	e = grub_tokens_parse(text, len, t, &bad);
	if (e < 0)
		return diag_error(EXIT_BADINPUT, "%s:%u: " GRUB_TOKENS_BAD, disp, bad);
	*have = true;
	return 0;
}

static bool has_token(const struct cmdline *c, const char *t, size_t n)
{
	for (size_t j = 0; j < c->n; j++)
		if (c->tok[j].len == n && memcmp(c->line + c->tok[j].start, t, n) == 0)
			return true;
	return false;
}

/* What the filter took out of the administrator's value (tokens of
 * before that after lacks, in order; one it only trimmed, with what is
 * left of it), said on stderr: update-grub shows it while it runs, and the
 * file that sets the variable keeps it. */
static void say_taken_out(const char *var, const char *before, const char *after)
{
	struct cmdline b, a;
	cmdline_split(before, strlen(before), &b);
	cmdline_split(after, strlen(after), &a);
	struct strbuf sb = { 0 };
	for (size_t i = 0; i < b.n; i++) {
		const char *t = b.line + b.tok[i].start;
		size_t n = b.tok[i].len;
		if (has_token(&a, t, n))
			continue;
		sb_appendf(&sb, "%s%.*s", sb.len ? ", " : "", (int)n, t);
		/* trimmed: a token of after by the same name that before lacks */
		_cleanup_free_ char *name = cmdline_token_name(&b, i);
		for (size_t j = 0; j < a.n && name; j++) {
			_cleanup_free_ char *an = cmdline_token_name(&a, j);
			const char *at = a.line + a.tok[j].start;
			if (an && param_name_eq(an, strlen(an), name, strlen(name)) &&
			    !has_token(&b, at, a.tok[j].len)) {
				sb_appendf(&sb, " (%.*s left)", (int)a.tok[j].len, at);
				break;
			}
		}
	}
	if (sb.len)
		fprintf(stderr,
			"%s: %s: %s taken out for the menu, by the decision the last apply recorded (%s); "
			"the file that sets it keeps it\n",
			program_name, var, esc(sb.s), GRUB_TOKENS_PATH);
	sb_free(&sb);
	cmdline_free(&b);
	cmdline_free(&a);
}

/* The line the kernel gets from the pair: normal entries get
 * "LINUX DEFAULT", recovery entries "single LINUX" (10_linux's default
 * GRUB_CMDLINE_LINUX_RECOVERY). Would the edit (lo, dout) make either
 * longer than the limit, and longer than it was? */
static bool grows_past(const char *lin, const char *def, const char *lo, const char *dout, size_t limit)
{
	size_t before = strlen(lin) + 1 + strlen(def), after = strlen(lo) + 1 + strlen(dout);
	size_t rbefore = strlen("single ") + strlen(lin), rafter = strlen("single ") + strlen(lo);
	return (after > limit && after > before) || (rafter > limit && rafter > rbefore);
}

/* The filter where the data records the bytes the menu's kernels keep:
 * an edit that would make a line longer than that is made without its
 * additions (taking out never lengthens), with a warning (check then
 * reports the menu); a pair already over it is warned about. */
static int filter_within(struct grub_tokens *t, const char *lin, const char *def, char **lo, char **dout)
{
	int r = grub_filter(t, lin, def, lo, dout);
	if (r < 0 || !t->limit)
		return r;
	if (grows_past(lin, def, *lo, *dout, t->limit)) {
		diag_warn("grub-cmdline: GRUB_CMDLINE_LINUX and GRUB_CMDLINE_LINUX_DEFAULT with the recorded decision "
			  "would "
			  "be longer than the %zu bytes the menu's kernels keep: nothing added, only taken out (memcg "
			  "may not be as decided: see memcg-policy check)",
			  t->limit);
		free(*lo);
		free(*dout);
		strv_free(&t->add);
		r = grub_filter(t, lin, def, lo, dout);
		if (r < 0)
			return r;
	}
	size_t before = strlen(lin) + 1 + strlen(def);
	if (before > t->limit)
		diag_warn("grub-cmdline: GRUB_CMDLINE_LINUX and GRUB_CMDLINE_LINUX_DEFAULT are %zu bytes, longer than "
			  "the "
			  "%zu the menu's kernels keep: the end of the line is lost at boot",
			  before, t->limit);
	return 0;
}

int cmd_grub_cmdline(struct context *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "no-add", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	bool no_add = false;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n': no_add = true; break;
		default: return bad_option("grub-cmdline", opts, argc, argv);
		}
	}
	int nv = argc - optind;
	if (nv < 1 || nv > 2 || (no_add && nv != 1)) {
		diag_error(EXIT_USAGE, "grub-cmdline: LINUX [DEFAULT] expected (--no-add: one VALUE)");
		return EXIT_USAGE;
	}
	const char *lin = no_add ? "" : argv[optind];
	const char *def = no_add ? argv[optind] : nv == 2 ? argv[optind + 1] : "";
	struct grub_tokens t;
	bool have;
	int r = load_tokens(ctx, &t, &have);
	if (r < 0)
		return -r;
	_cleanup_free_ char *lo = NULL, *dout = NULL;
	if (have && no_add)
		strv_free(&t.add);
	if (have) {
		if (no_add)
			t.limit = 0; /* one value alone: not the line */
		r = filter_within(&t, lin, def, &lo, &dout);
		grub_tokens_free(&t);
		if (r < 0) {
			return -diag_error(EXIT_BADINPUT,
					   "grub-cmdline: GRUB_CMDLINE_LINUX and GRUB_CMDLINE_LINUX_DEFAULT "
					   "cannot be edited safely (a line break, or a quote left open across "
					   "them on a memcg argument): left unchanged");
		}
	} else {
		lo = xstrdup(lin);
		dout = xstrdup(def);
	}
	if (have && log_verbosity >= 0 && !ctx->json) {
		if (!no_add)
			say_taken_out("GRUB_CMDLINE_LINUX", lin, lo);
		say_taken_out("GRUB_CMDLINE_LINUX_DEFAULT", def, dout);
	}
	if (ctx->json) {
		/* the first value printed */
		struct json_object *o = json_report_new(ctx, "grub-cmdline");
		json_report_set(o, "grub_value", json_object_new_string(no_add ? dout : lo));
		return json_report_emit(o, EXIT_OK);
	}
	if (no_add)
		printf("%s\n", dout);
	else if (nv == 1)
		printf("%s\n", lo);
	else
		printf("%s\n%s\n", lo, dout);
	return EXIT_OK;
}
