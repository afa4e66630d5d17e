/* SPDX-License-Identifier: ISC
 * The values of command-line options: whole numbers, byte sizes, rates and
 * durations.  Pure: each returns 0 or -1, and cli.c says what was wrong;
 * tests/fuzz/options.c reaches every byte of them.
 */
#include <errno.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/parse.h"
#include "store/format.h"

/* Parses a whole unsigned number: decimal, or hexadecimal after 0x if hex. */
int
parse_u64(const char *s, int hex, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int base = 10;

	if (hex && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	/* Digits only: strtoull would take a sign, spaces, or a second 0x. */
	if (*s == '\0' || strspn(s, base == 16 ? "0123456789abcdefABCDEF" :
	    "0123456789") != strlen(s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = (uint64_t)v;
	return 0;
}

/* Parses a count with an optional K, M or G (1000-based) suffix. */
int
parse_count(const char *s, uint64_t *out)
{
	static const char units[] = "KMG";
	const char *unit;
	char *end;
	unsigned long long v;
	uint64_t per = 1;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -1;
	if (*end != '\0') {
		unit = strchr(units, *end >= 'a' ? *end - 'a' + 'A' : *end);
		if (unit == NULL || end[1] != '\0')
			return -1;
		for (; unit >= units; unit--)
			per *= 1000;
	}
	if (v > UINT64_MAX / per)
		return -1;
	*out = (uint64_t)v * per;
	return 0;
}

/* Parses a byte count with an optional K, M, G or T (1024-based) suffix. */
int
parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	const char *unit;
	char *end;
	unsigned long long v;
	int shift;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -1;
	shift = 0;
	if (*end != '\0') {
		unit = strchr(units, *end >= 'a' ? *end - 'a' + 'A' : *end);
		if (unit == NULL || end[1] != '\0')
			return -1;
		shift = 10 * (int)(unit - units + 1);
	}
	if (v > UINT64_MAX >> shift)
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

/* Parses a yes-or-no word: 1, 0, or -1 if it is neither. */
int
parse_switch(const char *s)
{
	static const char *const on[] = { "1", "yes", "true", "on" };
	static const char *const off[] = { "", "0", "no", "false", "off" };
	size_t i;

	for (i = 0; i < sizeof on / sizeof on[0]; i++)
		if (strcasecmp(s, on[i]) == 0)
			return 1;
	for (i = 0; i < sizeof off / sizeof off[0]; i++)
		if (strcasecmp(s, off[i]) == 0)
			return 0;
	return -1;
}

int
parse_decimal(const char *s, double *out)
{
	char *end;

	/* strtod would also take leading blanks, hexadecimal, inf and
	 * nan, which no rate or factor is written as. */
	if (!((*s >= '0' && *s <= '9') || *s == '.') ||
	    s[strspn(s, "0123456789.eE+-")] != '\0')
		return -1;
	errno = 0;
	*out = strtod(s, &end);
	return end == s || *end != '\0' ? -1 : 0;
}

/* Parses a false-positive rate; returns 0, or -1 with *why set to a reason
 * beyond not being a number between 0 and 1, or to "". */
int
parse_fpr(const char *s, double *out, const char **why)
{
	double v;

	*why = "";
	if (parse_decimal(s, &v) == -1 || !(v > 0.0 && v < 1.0))
		return -1;
	if (errno == ERANGE || v < DBL_MIN) {
		*why = " (too small: the smallest rate is 2.2e-308)";
		return -1;
	}
	if (v > FPR_MAX) {
		*why = " (too close to 1: the largest rate is 0.999999)";
		return -1;
	}
	*out = v;
	return 0;
}

/* Parses a duration: a number and a unit s, m, h, d or w (seconds if
 * none), into milliseconds. */
int
parse_duration(const char *s, uint64_t *ms)
{
	static const struct { char unit; uint64_t ms; } units[] = {
		{ 's', 1000 }, { 'm', 60000 }, { 'h', 3600000 },
		{ 'd', 86400000 }, { 'w', 604800000 }
	};
	uint64_t v, per = 1000;
	char *end;
	size_t i;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || v == 0)
		return -1;
	if (*end != '\0') {
		for (i = 0; i < sizeof units / sizeof units[0]; i++)
			if (units[i].unit == *end)
				break;
		if (i == sizeof units / sizeof units[0] || end[1] != '\0')
			return -1;
		per = units[i].ms;
	}
	if (v > WINDOW_MS_MAX / per)
		return -1;
	*ms = v * per;
	return 0;
}
