/* facts/ikconfig.c - the IKCONFIG block in kernel images and configs.ko
 * (facts/ikconfig.h). kernel/configs.c puts "IKCFG_ST", the gzip-compressed
 * config and "IKCFG_ED" into the kernel's read-only data; in a compressed
 * image that data is inside the payload, which is found from the image's
 * header where it has one (x86 bzImage's setup header, EFI zboot), else by
 * the magic bytes of each format, as scripts/extract-ikconfig does. The
 * payload is inflated as a stream and the inflation stops at the end of
 * the block: the rest of the kernel is never produced. */
#include "facts/ikconfig.h"
#include "lib/util.h"

#include <errno.h>
#include <stdint.h>

#define MARK_ST "IKCFG_ST\x1f\x8b"
#define MARK_ST_LEN 10 /* the marker and gzip's magic, as extract-ikconfig looks for it */
#define MARK_ED "IKCFG_ED"
#define MARK_ED_LEN 8
#define BLOCK_MAX ((size_t)16 << 20)  /* the compressed config: ~30 KiB in practice */
#define CONFIG_MAX ((size_t)16 << 20) /* the inflated config: ~300 KiB in practice */
#define PAYLOAD_MAX ((size_t)1 << 30) /* what an image's payload may inflate to */
#define PAYLOAD_MIN ((size_t)1 << 20) /* a complete stream this large is the kernel */
#define TRIES_PER_FORMAT 8

struct scan {
	unsigned char tail[MARK_ST_LEN - 1]; /* the last bytes seen, for a marker across pieces */
	size_t tail_len;
	bool capturing;
	struct strbuf block; /* after "IKCFG_ST": the gzip data, then "IKCFG_ED" */
};

static void keep_tail(struct scan *s, const unsigned char *buf, size_t len)
{
	const size_t keep = sizeof(s->tail);
	if (len >= keep) {
		memcpy(s->tail, buf + len - keep, keep);
		s->tail_len = keep;
		return;
	}
	size_t old = s->tail_len + len > keep ? keep - len : s->tail_len;
	memmove(s->tail, s->tail + s->tail_len - old, old);
	memcpy(s->tail + old, buf, len);
	s->tail_len = old + len;
}

/* Appends to the block; returns 1 once "IKCFG_ED" is in it. */
static int capture(struct scan *s, const unsigned char *buf, size_t len)
{
	size_t from = s->block.len >= MARK_ED_LEN - 1 ? s->block.len - (MARK_ED_LEN - 1) : 0;
	sb_appendn(&s->block, (const char *)buf, len);
	const char *ed = memmem(s->block.s + from, s->block.len - from, MARK_ED, MARK_ED_LEN);
	if (ed) {
		s->block.len = (size_t)(ed - s->block.s);
		s->block.s[s->block.len] = '\0';
		return 1;
	}
	return s->block.len > BLOCK_MAX ? -EFBIG : 0;
}

static int scan_sink(void *data, const unsigned char *buf, size_t len)
{
	struct scan *s = data;
	if (s->capturing)
		return capture(s, buf, len);
	/* a marker that starts in the tail of the previous piece */
	unsigned char join[2 * (MARK_ST_LEN - 1)];
	size_t head = len < MARK_ST_LEN - 1 ? len : MARK_ST_LEN - 1;
	memcpy(join, s->tail, s->tail_len);
	memcpy(join + s->tail_len, buf, head);
	const unsigned char *m = memmem(join, s->tail_len + head, MARK_ST, MARK_ST_LEN);
	if (m && (size_t)(m - join) < s->tail_len) {
		size_t at = (size_t)(m - join) + MARK_ST_LEN - 2; /* the gzip data */
		s->capturing = true;
		if (at < s->tail_len) {
			sb_appendn(&s->block, (const char *)s->tail + at, s->tail_len - at);
			return capture(s, buf, len);
		}
		return capture(s, buf + (at - s->tail_len), len - (at - s->tail_len));
	}
	m = memmem(buf, len, MARK_ST, MARK_ST_LEN);
	if (m) {
		s->capturing = true;
		size_t at = (size_t)(m - buf) + MARK_ST_LEN - 2;
		return capture(s, buf + at, len - at);
	}
	keep_tail(s, buf, len);
	return 0;
}

/* The block found: inflate it into out. */
static int finish(struct scan *s, struct ikconfig *out)
{
	int r = decompress_buffer(COMP_GZIP, (const unsigned char *)s->block.s, s->block.len, CONFIG_MAX, &out->text,
				  &out->len);
	sb_free(&s->block);
	return r;
}

/* The block in uncompressed bytes. Returns 0 found, -ENOENT, or an error. */
static int scan_plain(const unsigned char *p, size_t len, struct ikconfig *out)
{
	struct scan s = { 0 };
	int r = scan_sink(&s, p, len);
	if (r == 1)
		return finish(&s, out);
	sb_free(&s.block);
	if (r < 0)
		return r;
	return s.capturing ? -EBADMSG : -ENOENT; /* a start marker without its end */
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

struct payload {
	size_t off, len;
	enum comp_format f;
	const char *container;
};

/* x86 bzImage: the setup header (boot protocol 2.08+) says where the
 * payload is, relative to the protected-mode code after the setup sectors. */
static bool bzimage_payload(const unsigned char *img, size_t len, struct payload *pl)
{
	if (len < 0x250 || memcmp(img + 0x202, "HdrS", 4) != 0)
		return false;
	unsigned version = (unsigned)img[0x206] | (unsigned)img[0x207] << 8;
	if (version < 0x208)
		return false;
	size_t setup = img[0x1f1] ? img[0x1f1] : 4;
	size_t start = (setup + 1) * 512 + le32(img + 0x248);
	size_t n = le32(img + 0x24c);
	if (start >= len)
		return false;
	if (n > len - start)
		n = len - start; /* a truncated file: its stream ends early */
	*pl = (struct payload){ start, n, comp_detect(img + start, n), "bzImage" };
	return pl->f != COMP_NONE;
}

/* EFI zboot (arm64, riscv, loongarch vmlinuz.efi): "MZ", "zimg", then
 * the payload's offset and size. */
static bool zboot_payload(const unsigned char *img, size_t len, struct payload *pl)
{
	if (len < 64 || memcmp(img, "MZ", 2) != 0 || memcmp(img + 4, "zimg", 4) != 0)
		return false;
	size_t start = le32(img + 8), n = le32(img + 12);
	if (start >= len)
		return false;
	if (n > len - start)
		n = len - start;
	*pl = (struct payload){ start, n, comp_detect(img + start, n), "zboot" };
	return pl->f != COMP_NONE;
}

enum try_result { TRY_FOUND, TRY_PAYLOAD, TRY_NOT };

/* Inflates one candidate. TRY_FOUND: *rc is finish()'s result; TRY_PAYLOAD:
 * a kernel-sized stream without the block; TRY_NOT: not the payload (*rc:
 * why). */
static enum try_result try_payload(const unsigned char *img, const struct payload *pl, struct ikconfig *out, int *rc)
{
	struct scan s = { 0 };
	size_t produced = 0;
	int r = decompress_stream(pl->f, img + pl->off, pl->len, PAYLOAD_MAX, scan_sink, &s, &produced);
	out->packing = pl->f;
	out->container = pl->container;
	if (r == 1) {
		*rc = finish(&s, out);
		return TRY_FOUND;
	}
	sb_free(&s.block);
	*rc = r;
	if (r == 0 &&
	    (produced >= PAYLOAD_MIN || strcmp(pl->container, "bzImage") == 0 || strcmp(pl->container, "zboot") == 0))
		return TRY_PAYLOAD;
	return TRY_NOT;
}

int ikconfig_from_image(const unsigned char *img, size_t len, struct ikconfig *out)
{
	memset(out, 0, sizeof(*out));
	struct payload pl, located = { 0 };
	int rc = 0, last = -ENOMSG, located_rc = 0;
	enum try_result t;
	/* a payload the header locates, or a file that is one stream (a
	 * gzip-packed arm64 Image) */
	if (bzimage_payload(img, len, &pl) || zboot_payload(img, len, &pl) ||
	    (pl = (struct payload){ 0, len, comp_detect(img, len), "packed Image" }).f != COMP_NONE) {
		t = try_payload(img, &pl, out, &rc);
		if (t == TRY_FOUND)
			return rc;
		if (t == TRY_PAYLOAD)
			return -ENOENT;
		if (rc == -EFBIG || rc == -ENOMEM)
			return rc;
		located = pl;
		located_rc = rc;
	}

	/* uncompressed: vmlinux, an arm64 Image. The markers can also show
	 * through a compressed stream (the gzip block does not compress
	 * further): only a block that inflates counts. */
	rc = scan_plain(img, len, out);
	if (rc == 0) {
		out->container = len >= 4 && memcmp(img,
						    "\x7f"
						    "ELF",
						    4) == 0
					 ? "vmlinux"
					 : "Image";
		return 0;
	}
	if (rc == -ENOMEM)
		return rc;

	/* no header says where: the first streams of each format that
	 * inflate (arm zImage, other self-extracting images) */
	unsigned tries[COMP_COUNT] = { 0 };
	bool short_stream = false;
	for (size_t i = 0; i + 4 <= len; i++) {
		enum comp_format f = comp_detect(img + i, len - i);
		if (f == COMP_NONE || tries[f] >= TRIES_PER_FORMAT)
			continue;
		tries[f]++;
		pl = (struct payload){ i, len - i, f, "image" };
		t = try_payload(img, &pl, out, &rc);
		if (t == TRY_FOUND)
			return rc;
		if (t == TRY_PAYLOAD)
			return -ENOENT;
		if (rc == 0)
			short_stream = true;
		else if (rc == -EFBIG || rc == -ENOMEM)
			return rc;
		else if (last == -ENOMSG || rc == -ENOPKG)
			last = rc;
	}
	out->packing = COMP_NONE;
	out->container = NULL;
	if (located_rc < 0 && located_rc != -ENOPKG && last != -ENOPKG) {
		/* the payload the header locates is corrupt or truncated */
		out->packing = located.f;
		out->container = located.container;
		return located_rc;
	}
	if (last == -ENOPKG || located_rc == -ENOPKG)
		return -ENOPKG;
	return short_stream ? -ENOENT : -ENOMSG;
}

int ikconfig_from_module(const unsigned char *ko, size_t len, struct ikconfig *out)
{
	memset(out, 0, sizeof(*out));
	out->container = "module";
	enum comp_format f = comp_detect(ko, len);
	if (f == COMP_NONE)
		return scan_plain(ko, len, out);
	out->packing = f;
	_cleanup_free_ char *raw = NULL;
	size_t raw_len = 0;
	int r = decompress_buffer(f, ko, len, PAYLOAD_MAX / 16, &raw, &raw_len);
	if (r < 0)
		return r;
	return scan_plain((const unsigned char *)raw, raw_len, out);
}

void ikconfig_free(struct ikconfig *c)
{
	if (!c)
		return;
	free(c->text);
	memset(c, 0, sizeof(*c));
}
