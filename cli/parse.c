/* SPDX-License-Identifier: ISC
 * The values of command-line options: whole numbers, byte sizes, rates and
 * durations.  Pure: each returns 0 or -1, and cli.c says what was wrong;
 * tests/fuzz/options.c reaches every byte of them.
 *
 * Counts, sizes and durations go through one parser, parse_scaled, as
 * coreutils' dd, sort -S and numfmt read them: a decimal number, with a
 * point and an exponent if the result is whole, then a unit in either
 * case.  The arithmetic is exact in 64 bits, never through a double.
 */
#include <errno.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/parse.h"
#include "store/format.h"

/* A unit a number may end with, and what it multiplies the number by. */
struct unit {
	const char *name;		/* matched in either case */
	uint64_t times;
};

#define KI	(UINT64_C(1) << 10)
#define E3	UINT64_C(1000)

/* Items are counted in powers of 1000. */
static const struct unit count_units[] = {
	{ "", 1 }, { "K", E3 }, { "M", E3 * E3 }, { "G", E3 * E3 * E3 },
	{ NULL, 0 }
};

/* Bytes: K and KiB in powers of 1024, KB in powers of 1000, as dd(1). */
static const struct unit size_units[] = {
	{ "", 1 }, { "B", 1 },
	{ "K", KI }, { "KiB", KI }, { "KB", E3 },
	{ "M", KI * KI }, { "MiB", KI * KI }, { "MB", E3 * E3 },
	{ "G", KI * KI * KI }, { "GiB", KI * KI * KI }, { "GB", E3 * E3 * E3 },
	{ "T", KI * KI * KI * KI }, { "TiB", KI * KI * KI * KI },
	{ "TB", E3 * E3 * E3 * E3 },
	{ NULL, 0 }
};

/* Durations, in milliseconds; a number alone is seconds. */
static const struct unit duration_units[] = {
	{ "", 1000 }, { "s", 1000 }, { "sec", 1000 }, { "second", 1000 },
	{ "seconds", 1000 }, { "m", 60000 }, { "min", 60000 },
	{ "minute", 60000 }, { "minutes", 60000 }, { "h", 3600000 },
	{ "hour", 3600000 }, { "hours", 3600000 }, { "d", 86400000 },
	{ "day", 86400000 }, { "days", 86400000 }, { "w", 604800000 },
	{ "week", 604800000 }, { "weeks", 604800000 },
	{ NULL, 0 }
};

/* Sets *v to *v * by; returns 0, or -1 if that does not fit. */
static int
times_checked(uint64_t *v, uint64_t by)
{
	if (by != 0 && *v > UINT64_MAX / by)
		return -1;
	*v *= by;
	return 0;
}

/*
 * Parses a decimal number, with a point and an exponent if need be,
 * followed by one of units, into the whole number it is; returns 0, or -1
 * if s is not one, is not whole, or does not fit in 64 bits.
 */
static int
parse_scaled(const char *s, const struct unit *units, uint64_t *out)
{
	uint64_t mantissa = 0, times;
	long scale = 0, exponent = 0, zeros = 0;
	int digits = 0, point = 0, negative = 0;

	/* The significant digits go to mantissa; trailing zeros, and the
	 * places after the point, to the power of ten, scale. */
	for (;; s++) {
		if (*s == '.' && !point) {
			point = 1;
			continue;
		}
		if (*s < '0' || *s > '9')
			break;
		digits++;
		scale -= point;
		if (*s == '0') {
			zeros++;
			continue;
		}
		for (zeros++; zeros > 0; zeros--)
			if (times_checked(&mantissa, 10) == -1)
				return -1;
		if (mantissa > UINT64_MAX - (uint64_t)(*s - '0'))
			return -1;
		mantissa += (uint64_t)(*s - '0');
	}
	if (digits == 0)
		return -1;
	scale += zeros;
	if ((*s == 'e' || *s == 'E') && (s[1] == '+' || s[1] == '-' ||
	    (s[1] >= '0' && s[1] <= '9'))) {
		s++;
		negative = *s == '-';
		s += *s == '+' || *s == '-';
		if (*s < '0' || *s > '9')
			return -1;
		for (; *s >= '0' && *s <= '9'; s++)
			if (exponent < 100000)
				exponent = exponent * 10 + (*s - '0');
		scale += negative ? -exponent : exponent;
	}
	for (; units->name != NULL; units++)
		if (strcasecmp(s, units->name) == 0)
			break;
	if (units->name == NULL)
		return -1;
	times = units->times;
	if (mantissa == 0) {
		*out = 0;
		return 0;
	}
	/* A negative power of ten must divide mantissa * times exactly:
	 * take its twos and fives out of either factor. */
	for (; scale < 0; scale++) {
		if (times % 2 == 0)
			times /= 2;
		else if (mantissa % 2 == 0)
			mantissa /= 2;
		else
			return -1;
		if (times % 5 == 0)
			times /= 5;
		else if (mantissa % 5 == 0)
			mantissa /= 5;
		else
			return -1;
	}
	if (times_checked(&mantissa, times) == -1)
		return -1;
	for (; scale > 0; scale--)
		if (times_checked(&mantissa, 10) == -1)
			return -1;
	*out = mantissa;
	return 0;
}

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

/* Parses a count: a whole number, with K, M or G for powers of 1000. */
int
parse_count(const char *s, uint64_t *out)
{
	return parse_scaled(s, count_units, out);
}

/* Parses a byte count: K, M, G, T or KiB... for powers of 1024, KB...
 * for powers of 1000. */
int
parse_size(const char *s, uint64_t *out)
{
	return parse_scaled(s, size_units, out);
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

/* Parses a false-positive rate, a decimal or a percentage; returns 0, or
 * -1 with *why set to a reason beyond not being a number between 0 and 1,
 * or to "". */
int
parse_fpr(const char *s, double *out, const char **why)
{
	char number[64];
	size_t len = strlen(s);
	double v;
	int percent = len > 0 && s[len - 1] == '%';

	*why = "";
	if (percent) {
		if (len > sizeof number)
			return -1;
		memcpy(number, s, len - 1);
		number[len - 1] = '\0';
		s = number;
	}
	if (parse_decimal(s, &v) == -1)
		return -1;
	if (percent)
		v /= 100;
	if (!(v > 0.0 && v < 1.0))
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

/* Parses a duration: a number and a unit (seconds if none) into
 * milliseconds, a positive whole number of seconds. */
int
parse_duration(const char *s, uint64_t *ms)
{
	uint64_t v;

	if (parse_scaled(s, duration_units, &v) == -1 || v == 0 ||
	    v % 1000 != 0 || v > WINDOW_MS_MAX)
		return -1;
	*ms = v;
	return 0;
}
