/* SPDX-License-Identifier: ISC
 * libFuzzer target for the parsers of the numbers options take
 * (parse.c): any string gives a value or a refusal, never a crash, and
 * an accepted value is the one the string says, within its bounds: the
 * exact 64-bit arithmetic of parse_scaled is held against strtold and a
 * table of units of its own.
 */
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/format.h"
#include "cli/parse.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* Returns s without its leading zeros, or "0" if it is all zeros. */
static const char *
unpadded(const char *s)
{
	while (s[0] == '0' && s[1] != '\0')
		s++;
	return s;
}

/* What unit multiplies a number by, for a count if count, else a size;
 * 0 if it is not one. */
static long double
multiplier(const char *unit, int count)
{
	static const char *const letters = "KMGT";
	char up[8];
	const char *at;
	size_t i, len = strlen(unit);
	long double base;

	if (len >= sizeof up)
		return 0;
	for (i = 0; i <= len; i++)
		up[i] = (char)toupper((unsigned char)unit[i]);
	if (len == 0)
		return 1;
	if (!count && strcmp(up, "B") == 0)
		return 1;
	if ((at = strchr(letters, up[0])) == NULL || up[0] == '\0')
		return 0;
	if (count && (len != 1 || at - letters > 2))
		return 0;
	if (len == 1 || strcmp(up + 1, "IB") == 0)
		base = count ? 1000 : 1024;
	else if (strcmp(up + 1, "B") == 0)
		base = 1000;
	else
		return 0;
	return powl(base, (long double)(at - letters + 1));
}

/* Aborts if s, a count (if count) or a size that parse.c took as v, is
 * not v within the precision of a long double. */
static void
same_as_strtold(const char *s, uint64_t v, int count)
{
	char *end;
	long double want, times;

	want = strtold(s, &end);
	if (end == s || (times = multiplier(end, count)) == 0)
		abort();
	want *= times;
	if (fabsl(want - (long double)v) > want * 1e-15L)
		abort();
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char s[64], again[64], lower[64], upper[64];
	const char *why;
	uint64_t v, w;
	double rate, percent;
	size_t i;

	if (size >= sizeof s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	size = strlen(s);
	if (parse_u64(s, 0, &v) == 0) {
		snprintf(again, sizeof again, "%llu", (unsigned long long)v);
		if (strcmp(again, unpadded(s)) != 0)
			abort();
	}
	if (parse_u64(s, 1, &v) == 0 && (s[1] == 'x' || s[1] == 'X')) {
		snprintf(again, sizeof again, "%llx", (unsigned long long)v);
		for (i = 0; s[2 + i] != '\0'; i++)
			lower[i] = s[2 + i] >= 'A' && s[2 + i] <= 'F' ?
			    (char)(s[2 + i] - 'A' + 'a') : s[2 + i];
		lower[i] = '\0';
		if (strcmp(again, unpadded(lower)) != 0)
			abort();
	}
	if (parse_size(s, &v) == 0 && parse_u64(s, 0, &w) == 0 && v != w)
		abort();
	if (parse_count(s, &v) == 0 && parse_u64(s, 0, &w) == 0 && v != w)
		abort();
	if (parse_count(s, &v) == 0 && parse_size(s, &w) == 0 && v > w)
		abort();
	if (parse_count(s, &v) == 0)
		same_as_strtold(s, v, 1);
	if (parse_size(s, &v) == 0)
		same_as_strtold(s, v, 0);
	/* Units are read in either case, and so is the exponent's e. */
	for (i = 0; i <= size; i++)
		upper[i] = (char)toupper((unsigned char)s[i]);
	if (parse_size(s, &v) == 0 && (parse_size(upper, &w) != 0 || v != w))
		abort();
	if (parse_count(s, &v) == 0 && (parse_count(upper, &w) != 0 || v != w))
		abort();
	if (parse_duration(s, &v) == 0 &&
	    (parse_duration(upper, &w) != 0 || v != w))
		abort();
	if (parse_fpr(s, &rate, &why) == 0 &&
	    !(rate >= DBL_MIN && rate <= FPR_MAX))
		abort();
	/* A percentage is the rate of its number over 100. */
	if (size + 2 <= sizeof s) {
		memcpy(again, s, size);
		again[size] = '%';
		again[size + 1] = '\0';
		if (parse_fpr(again, &percent, &why) == 0 &&
		    (parse_decimal(s, &rate) != 0 || percent != rate / 100))
			abort();
	}
	if (parse_duration(s, &v) == 0 &&
	    (v == 0 || v > WINDOW_MS_MAX || v % 1000 != 0))
		abort();
	return 0;
}
