/* slots/rpi-config.c - config.txt as the Raspberry Pi firmware reads it,
 * see slots/rpi-config.h */
#include "slots/rpi-config.h"

#include <errno.h>
#include <string.h>

#include "lib/diag.h"
#include "lib/util.h"

#define MAX_INCLUDE_DEPTH 8
#define MAX_CONFIG_TXT (1u << 20)

/* The firmware's names first (Raspberry Pi OS copies them to the boot
 * partition), then the mainline kernel's (Debian's raspi-firmware copies
 * those). */
const struct rpi_board rpi_boards[] = {
	{ "5", "raspberrypi,5-model-b", { "pi5" }, { "bcm2712-rpi-5-b.dtb" } },
	{ "500", "raspberrypi,500", { "pi5", "pi500" }, { "bcm2712-rpi-500.dtb" } },
	{ "CM5", "raspberrypi,5-compute-module", { "pi5", "cm5" }, { "bcm2712-rpi-cm5-cm5io.dtb" } },
	{ "4B", "raspberrypi,4-model-b", { "pi4" }, { "bcm2711-rpi-4-b.dtb" } },
	{ "400", "raspberrypi,400", { "pi4", "pi400" }, { "bcm2711-rpi-400.dtb" } },
	{ "CM4",
	  "raspberrypi,4-compute-module",
	  { "pi4", "cm4" },
	  { "bcm2711-rpi-cm4.dtb", "bcm2711-rpi-cm4-io.dtb" } },
	{ "3B+",
	  "raspberrypi,3-model-b-plus",
	  { "pi3", "pi3+" },
	  { "bcm2710-rpi-3-b-plus.dtb", "bcm2837-rpi-3-b-plus.dtb" } },
	{ "3B", "raspberrypi,3-model-b", { "pi3" }, { "bcm2710-rpi-3-b.dtb", "bcm2837-rpi-3-b.dtb" } },
	{ "Zero 2 W",
	  "raspberrypi,model-zero-2-w",
	  { "pi0", "pi02" },
	  { "bcm2710-rpi-zero-2-w.dtb", "bcm2837-rpi-zero-2-w.dtb" } },
};
const size_t rpi_n_boards = ARRAY_SIZE(rpi_boards);

/* Every model filter the firmware knows, also those of boards not in the
 * table (they select none of them). */
static const char *const model_filters[] = {
	"pi1",	"pi2",	"pi3", "pi3+", "pi4",  "pi400", "pi5",	"pi500", "pi0",
	"pi0w", "pi02", "cm1", "cm3",  "cm3+", "cm4",	"cm4s", "cm5",
};

struct filter {
	const char *model; /* NULL: no model filter */
	bool none, tryboot, other;
};

struct values {
	char *os_prefix, *cmdline, *device_tree;
	char *at;	    /* where the last of them was set */
	char *uncertain_at; /* where the first was set under a filter the tool cannot judge */
};

static bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

static bool board_has(const struct rpi_board *b, const char *model)
{
	for (size_t i = 0; i < ARRAY_SIZE(b->filters) && b->filters[i]; i++)
		if (streq(b->filters[i], model))
			return true;
	return false;
}

static bool applies(const struct filter *f, const struct rpi_board *b)
{
	return !f->none && !f->tryboot && (!f->model || board_has(b, f->model));
}

static void section(struct filter *f, const char *name, size_t n)
{
	char buf[64];
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, name, n);
	buf[n] = '\0';
	if (streq(buf, "all")) {
		*f = (struct filter){ 0 };
		return;
	}
	if (streq(buf, "none")) {
		f->none = true;
		return;
	}
	if (streq(buf, "tryboot")) {
		f->tryboot = true;
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(model_filters); i++)
		if (streq(buf, model_filters[i])) {
			f->model = model_filters[i];
			return;
		}
	f->other = true;
}

static void set(char **slot, const char *v, size_t n) { free(*slot), *slot = xstrndup(v, n); }

static int parse(const struct root *r, const char *dir, const char *path, int depth, const struct rpi_board *b,
		 struct filter *f, struct values *v)
{
	_cleanup_free_ char *disp = root_display(r, path);
	if (depth > MAX_INCLUDE_DEPTH)
		return diag_error(EXIT_BADINPUT, "%s: included more than %d deep", disp, MAX_INCLUDE_DEPTH);
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int e = root_read_file(r, path, MAX_CONFIG_TXT, &text, &len);
	if (e == -ENOENT && depth > 0)
		return 0; /* the firmware skips an include that is not there */
	if (e < 0)
		return diag_error(root_error_exit(e), "%s: cannot read: %s", disp, root_strerror(e));
	size_t pos = 0, n;
	const char *line;
	unsigned no = 0;
	while (text_next_line(text, len, &pos, &line, &n)) {
		no++;
		while (n && blank(line[0]))
			line++, n--;
		while (n && blank(line[n - 1]))
			n--;
		if (!n || line[0] == '#')
			continue;
		if (line[0] == '[') {
			const char *close = memchr(line, ']', n);
			if (close)
				section(f, line + 1, (size_t)(close - line - 1));
			continue;
		}
		if (!applies(f, b))
			continue;
		if (n > 8 && memcmp(line, "include", 7) == 0 && blank(line[7])) {
			const char *name = line + 8;
			size_t nl = n - 8;
			while (nl && blank(name[0]))
				name++, nl--;
			_cleanup_free_ char *rel = xstrndup(name, nl);
			_cleanup_free_ char *inc = path_join(dir, rel);
			e = parse(r, dir, inc, depth + 1, b, f, v);
			if (e < 0)
				return e;
			continue;
		}
		const char *eq = memchr(line, '=', n);
		if (!eq)
			continue;
		size_t kl = (size_t)(eq - line);
		while (kl && blank(line[kl - 1]))
			kl--;
		const char *val = eq + 1;
		size_t vl = n - (size_t)(val - line);
		while (vl && blank(val[0]))
			val++, vl--;
		char **slot = kl == 9 && !memcmp(line, "os_prefix", 9)	     ? &v->os_prefix
			      : kl == 7 && !memcmp(line, "cmdline", 7)	     ? &v->cmdline
			      : kl == 11 && !memcmp(line, "device_tree", 11) ? &v->device_tree
									     : NULL;
		if (!slot)
			continue;
		set(slot, val, vl);
		free(v->at);
		v->at = xasprintf("%s:%u", disp, no);
		if (f->other && !v->uncertain_at)
			v->uncertain_at = xstrdup(v->at);
	}
	return 0;
}

static void values_free(struct values *v)
{
	free(v->os_prefix);
	free(v->cmdline);
	free(v->device_tree);
	free(v->at);
	free(v->uncertain_at);
}

/* The live system's board, by the first compatible of its device tree. */
static const struct rpi_board *running_board(const struct root *r)
{
	if (!r->live)
		return NULL;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (read_host_file("/sys/firmware/devicetree/base/compatible", 4096, &text, &len) < 0)
		return NULL;
	for (size_t i = 0; i < rpi_n_boards; i++)
		if (strnlen(text, len) == strlen(rpi_boards[i].compatible) && streq(text, rpi_boards[i].compatible))
			return &rpi_boards[i];
	return NULL;
}

bool rpi_boot_counts(const struct rpi_config *c, size_t i)
{
	if (c->running_on)
		return c->boot[i].board == c->running_on;
	bool any = false;
	for (size_t j = 0; j < c->n; j++)
		any |= c->boot[j].dtb_path != NULL;
	return !any || c->boot[i].dtb_path != NULL;
}

int rpi_config_read(const struct root *r, struct rpi_config *out)
{
	memset(out, 0, sizeof(*out));
	static const char *const dirs[] = { "/boot/firmware", "/boot" };
	for (size_t i = 0; i < ARRAY_SIZE(dirs) && !out->dir; i++) {
		_cleanup_free_ char *p = path_join(dirs[i], "config.txt");
		if (root_is_reg(r, p)) {
			out->dir = xstrdup(dirs[i]);
			out->config_path = TAKE_PTR(p);
		}
	}
	if (!out->dir)
		return 0;
	out->running_on = running_board(r);
	out->boot = xcalloc(rpi_n_boards, sizeof(*out->boot));
	out->n = rpi_n_boards;
	for (size_t i = 0; i < rpi_n_boards; i++) {
		const struct rpi_board *b = &rpi_boards[i];
		struct filter f = { 0 };
		struct values v = { 0 };
		int e = parse(r, out->dir, out->config_path, 0, b, &f, &v);
		if (e < 0) {
			values_free(&v);
			rpi_config_free(out);
			return e;
		}
		struct rpi_boot *bt = &out->boot[i];
		bt->board = b;
		const char *prefix = v.os_prefix ? v.os_prefix : "";
		_cleanup_free_ char *cl =
			xasprintf("%s%s", prefix, v.cmdline && *v.cmdline ? v.cmdline : "cmdline.txt");
		bt->cmdline_path = path_join(out->dir, cl);
		if (v.device_tree) {
			/* device_tree= with nothing: no blob at all */
			_cleanup_free_ char *dt = xasprintf("%s%s", prefix, v.device_tree);
			_cleanup_free_ char *p = path_join(out->dir, dt);
			if (*v.device_tree && root_is_reg(r, p))
				bt->dtb_path = TAKE_PTR(p);
		} else {
			for (size_t j = 0; j < ARRAY_SIZE(b->dtbs) && b->dtbs[j] && !bt->dtb_path; j++) {
				_cleanup_free_ char *dt = xasprintf("%s%s", prefix, b->dtbs[j]);
				_cleanup_free_ char *p = path_join(out->dir, dt);
				if (root_is_reg(r, p))
					bt->dtb_path = TAKE_PTR(p);
			}
		}
		bt->config_at = TAKE_PTR(v.at);
		bt->uncertain_at = TAKE_PTR(v.uncertain_at);
		values_free(&v);
	}
	return 0;
}

void rpi_config_free(struct rpi_config *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->boot[i].cmdline_path);
		free(c->boot[i].dtb_path);
		free(c->boot[i].config_at);
		free(c->boot[i].uncertain_at);
	}
	free(c->boot);
	free(c->dir);
	free(c->config_path);
	memset(c, 0, sizeof(*c));
}
