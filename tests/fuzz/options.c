/* SPDX-License-Identifier: ISC
 * libFuzzer target for the parsers of the numbers options take
 * (parse.c): any string gives a value or a refusal, never a crash, and
 * an accepted value is the one the string says, within its bounds.
 */
#include <float.h>
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

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char s[64], again[64], lower[64];
	const char *why;
	uint64_t v, w;
	double rate;
	size_t i;

	if (size >= sizeof s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
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
	if (parse_fpr(s, &rate, &why) == 0 &&
	    !(rate >= DBL_MIN && rate <= FPR_MAX))
		abort();
	if (parse_duration(s, &v) == 0 &&
	    (v == 0 || v > WINDOW_MS_MAX || v % 1000 != 0))
		abort();
	return 0;
}
