/* SPDX-License-Identifier: ISC
 * Quoting for messages.  A file name may hold any byte but '/' and NUL: a
 * newline in it would forge a line of stats output or of a message, and
 * an escape sequence would reach the terminal raw.  Such bytes are shown
 * as C escapes; so is the backslash, so that the escapes cannot be forged
 * either.  Printable ASCII and well-formed UTF-8 (but for the C1
 * controls) are shown as they are.
 */
#include <string.h>

#include "lib/quote.h"

/* Returns the length of the well-formed UTF-8 sequence at s, not a C1
 * control, or 0 if there is none. */
static size_t
utf8_length(const unsigned char *s)
{
	size_t len, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	for (i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (s[0] == 0xc2 && s[1] <= 0x9f)
		return 0;	/* U+0080 to U+009F: C1 controls */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xf0 && s[1] < 0x90) ||
	    (s[0] == 0xf4 && s[1] > 0x8f) || (s[0] == 0xed && s[1] > 0x9f))
		return 0;	/* overlong, past U+10FFFF, or a surrogate */
	return len;
}

/* Writes the shown form of the byte or sequence at s into out (at least 5
 * bytes); returns its length and sets *used to the bytes of s taken. */
static size_t
shown(const unsigned char *s, char *out, size_t *used)
{
	static const char hex[] = "0123456789abcdef";
	size_t len;

	*used = 1;
	if (*s == '\\' || *s == '\n' || *s == '\t' || *s == '\r') {
		out[0] = '\\';
		out[1] = *s == '\\' ? '\\' : *s == '\n' ? 'n' : *s == '\t' ?
		    't' : 'r';
		return 2;
	}
	if (*s >= 0x20 && *s < 0x7f) {
		out[0] = (char)*s;
		return 1;
	}
	if ((len = utf8_length(s)) > 0) {
		memcpy(out, s, len);
		*used = len;
		return len;
	}
	out[0] = '\\';
	out[1] = 'x';
	out[2] = hex[*s >> 4];
	out[3] = hex[*s & 15];
	return 4;
}

char *
quote_string(char *buf, size_t size, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char piece[8];
	size_t at = 0, len, used;

	for (; *p != '\0'; p += used) {
		len = shown(p, piece, &used);
		if (len >= size - at)
			break;
		memcpy(buf + at, piece, len);
		at += len;
	}
	buf[at] = '\0';
	return buf;
}

void
quote_fputs(FILE *fp, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char piece[8];
	size_t len, used;

	for (; *p != '\0'; p += used) {
		len = shown(p, piece, &used);
		fwrite(piece, 1, len, fp);
	}
}
