/* Names for matching (norm.h). */
#include <string.h>

#include <utf8proc.h>

#include "model/norm.h"

/*
 * Append one code point, or a separator for one that is not a letter or
 * digit. Returns -1 when it does not fit: the name ends there.
 */
static int put(char *out, size_t *o, int *sep, utf8proc_int32_t cp)
{
	utf8proc_uint8_t enc[4];
	utf8proc_ssize_t len;
	int cat = utf8proc_category(cp);

	if (cat == UTF8PROC_CATEGORY_MN || cat == UTF8PROC_CATEGORY_MC ||
	    cat == UTF8PROC_CATEGORY_ME)
		return 0; /* a mark left after decomposition */
	if (!(cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO) &&
	    !(cat >= UTF8PROC_CATEGORY_ND && cat <= UTF8PROC_CATEGORY_NO)) {
		*sep = *o > 0;
		return 0;
	}
	len = utf8proc_encode_char(cp, enc);
	if (*o + (size_t)*sep + (size_t)len > NAME_CAP)
		return -1;
	if (*sep)
		out[(*o)++] = ' ';
	*sep = 0;
	memcpy(out + *o, enc, (size_t)len);
	*o += (size_t)len;
	return 0;
}

size_t name_norm(const char *s, size_t n, char *out)
{
	const utf8proc_uint8_t *p = (const utf8proc_uint8_t *)s;
	size_t i = 0, o = 0;
	int sep = 0;

	while (i < n && o < NAME_CAP) {
		utf8proc_int32_t cp, d[32];
		utf8proc_ssize_t len, nd;

		if (p[i] < 0x80) { /* ASCII */
			unsigned char c = p[i++];

			if (c >= 'A' && c <= 'Z')
				c = (unsigned char)(c - 'A' + 'a');
			if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
				if (o + (size_t)sep + 1 > NAME_CAP)
					break;
				if (sep)
					out[o++] = ' ';
				sep = 0;
				out[o++] = (char)c;
			} else {
				sep = o > 0;
			}
			continue;
		}
		len = utf8proc_iterate(p + i, (utf8proc_ssize_t)(n - i), &cp);
		if (len <= 0) { /* not UTF-8 (values are checked before they get here): skip a byte */
			i++;
			continue;
		}
		i += (size_t)len;
		nd = utf8proc_decompose_char(cp, d, 32,
					     UTF8PROC_COMPAT | UTF8PROC_CASEFOLD | UTF8PROC_STRIPMARK |
						     UTF8PROC_IGNORE | UTF8PROC_DECOMPOSE,
					     NULL);
		if (nd < 0 || nd > 32) {
			d[0] = cp;
			nd = 1;
		}
		for (utf8proc_ssize_t j = 0; j < nd; j++)
			if (put(out, &o, &sep, d[j]))
				return o;
	}
	return o;
}

unsigned name_distance(const char *a, size_t an, const char *b, size_t bn, unsigned max)
{
	unsigned rows[3][NAME_CAP + 2], *pp, *prev, *cur;

	if (an > NAME_CAP || bn > NAME_CAP)
		return max + 1;
	if ((an > bn ? an - bn : bn - an) > max)
		return max + 1;
	pp = rows[0];
	prev = rows[1];
	cur = rows[2];
	for (size_t j = 0; j <= bn; j++)
		prev[j] = (unsigned)j;
	for (size_t i = 1; i <= an; i++) {
		unsigned low;
		unsigned *t;

		cur[0] = (unsigned)i;
		low = cur[0];
		for (size_t j = 1; j <= bn; j++) {
			unsigned v = prev[j - 1] + (a[i - 1] != b[j - 1]);

			if (prev[j] + 1 < v)
				v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    pp[j - 2] + 1 < v)
				v = pp[j - 2] + 1;
			cur[j] = v;
			if (v < low)
				low = v;
		}
		if (low > max)
			return max + 1;
		t = pp;
		pp = prev;
		prev = cur;
		cur = t;
	}
	return prev[bn] > max ? max + 1 : prev[bn];
}
