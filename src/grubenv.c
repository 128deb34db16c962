/* grubenv.c - GRUB's environment block (grub.h). Pure. */
#include "grub.h"

char *grubenv_get(const char *text, size_t len, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < len;) {
		size_t e = i;
		/* a line ends at an unescaped '\n' */
		while (e < len && text[e] != '\n') {
			if (text[e] == '\\' && e + 1 < len)
				e++;
			e++;
		}
		if (e > len)
			e = len;
		if (e - i > n && memcmp(text + i, name, n) == 0 && text[i + n] == '=') {
			struct strbuf sb = {0};
			sb_append(&sb, "");
			for (size_t j = i + n + 1; j < e; j++) {
				if (text[j] == '\\' && j + 1 < e)
					j++;
				sb_appendc(&sb, text[j]);
			}
			return sb_take(&sb);
		}
		i = e + 1;
	}
	return NULL;
}
