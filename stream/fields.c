/* SPDX-License-Identifier: ISC
 * Keys from fields: add -f and check -f take the key of a line from some
 * of its fields, as cut(1) selects them, so that a log or a CSV can be
 * deduplicated by a column while the whole line is what is written.  The
 * reader thread makes the keys, next to the split and the hash.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stream/fields.h"

/* Parses a field number at *s, moving *s past it.  Returns 0 or -1. */
static int
parse_number(const char **s, uint64_t *out)
{
	uint64_t v = 0;

	if (!isdigit((unsigned char)**s))
		return -1;
	for (; isdigit((unsigned char)**s); (*s)++) {
		v = v * 10 + (uint64_t)(**s - '0');
		if (v > FIELD_MAX)
			return -1;
	}
	if (v == 0)
		return -1;
	*out = v;
	return 0;
}

/* Sorts the ranges of f by their first field and merges those that touch
 * or overlap, so that fields_key walks them once in order. */
static void
normalize(struct fields *f)
{
	unsigned i, j, n;
	uint64_t lo, hi;

	for (i = 1; i < f->nranges; i++)
		for (j = i; j > 0 && f->lo[j - 1] > f->lo[j]; j--) {
			lo = f->lo[j], hi = f->hi[j];
			f->lo[j] = f->lo[j - 1], f->hi[j] = f->hi[j - 1];
			f->lo[j - 1] = lo, f->hi[j - 1] = hi;
		}
	for (i = 1, n = 1; i < f->nranges; i++) {
		if (f->hi[n - 1] == UINT64_MAX || f->lo[i] <= f->hi[n - 1] + 1) {
			if (f->hi[i] > f->hi[n - 1])
				f->hi[n - 1] = f->hi[i];
			continue;
		}
		f->lo[n] = f->lo[i];
		f->hi[n++] = f->hi[i];
	}
	f->nranges = f->nranges == 0 ? 0 : n;
	f->named = 0;
	for (i = 0; i < f->nranges; i++)
		f->named = f->hi[i] == UINT64_MAX ? f->lo[i] : f->hi[i];
}

int
fields_parse(struct fields *f, const char *list, unsigned char delim)
{
	const char *s = list;
	uint64_t lo, hi;
	int have_lo;

	memset(f, 0, sizeof *f);
	f->delim = delim;
	do {
		if (f->nranges == FIELDS_RANGES)
			return -1;
		lo = 1;
		have_lo = *s != '-';
		if (have_lo && parse_number(&s, &lo) == -1)
			return -1;
		hi = lo;
		if (*s == '-') {
			s++;
			hi = UINT64_MAX;
			if (*s != ',' && *s != '\0') {
				if (parse_number(&s, &hi) == -1)
					return -1;
			} else if (!have_lo)
				return -1;	/* "-" alone */
		}
		if (hi < lo)
			return -1;
		f->lo[f->nranges] = lo;
		f->hi[f->nranges++] = hi;
	} while (*s++ == ',');
	if (s[-1] != '\0')
		return -1;
	normalize(f);
	return 0;
}

size_t
fields_key_max(const struct fields *f, size_t len)
{
	return len + (size_t)f->named;
}

int
fields_delimited(const struct fields *f, const unsigned char *line,
    size_t len)
{
	return memchr(line, f->delim, len) != NULL;
}

size_t
fields_key(const struct fields *f, const unsigned char *line, size_t len,
    unsigned char *key)
{
	const unsigned char *p = line, *end = line + len, *e = line;
	uint64_t i;
	unsigned r = 0;
	size_t n = 0;
	int more = 1, any = 0;

	for (i = 1;; i++) {
		while (r < f->nranges && f->hi[r] < i)
			r++;
		if (r == f->nranges)
			break;
		/* Past the line's fields, only empty ones: skip to the
		 * next selected, up to the last the list names. */
		if (!more && i < f->lo[r])
			i = f->lo[r];
		if (!more && i > f->named)
			break;
		if (more && (e = memchr(p, f->delim, (size_t)(end - p))) ==
		    NULL) {
			/* A line without the separator is one field that
			 * every list selects, as cut(1) prints it. */
			if (i == 1) {
				memcpy(key, line, len);
				return len;
			}
			e = end;
		}
		if (i >= f->lo[r]) {
			if (any)
				key[n++] = f->delim;
			any = 1;
			if (more) {
				memcpy(key + n, p, (size_t)(e - p));
				n += (size_t)(e - p);
			}
		}
		if (more) {
			more = e != end;
			p = e + (more ? 1 : 0);
		}
	}
	return n;
}
