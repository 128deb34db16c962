/* show/style.h - colour for states in text output, as bootctl and
 * systemctl show them: only where stdout is a terminal whose TERM is not
 * "dumb", and never with NO_COLOR set to anything but "" (no-color.org). */
#pragma once

enum style {
	STYLE_STATE, /* a memcg state: bold */
	STYLE_GOOD,  /* in sync, no reboot needed: green */
	STYLE_WARN,  /* reboot needed, a warning: yellow */
	STYLE_BAD,   /* not in sync: red */
};

/* The escape that starts the style, or "" without colour. */
const char *style_begin(enum style s);
/* The escape that ends it, or "". */
const char *style_end(void);
