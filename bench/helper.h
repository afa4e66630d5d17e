/* SPDX-License-Identifier: ISC
 * bench/helper.h: what the bench's C helpers (randread, mapstore,
 * firsttouch, faults-probe) share: their size argument, a number of bytes
 * or of KiB, MiB or GiB with a suffix K, M or G; and their clock.
 */
#ifndef BENCH_HELPER_H
#define BENCH_HELPER_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* Sets *v to the size s gives and returns 0; returns -1 if s is not a
 * size, is below a page or would not fit half the address space. */
static inline int
bench_size(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long n;
	int shift = 0;

	if (*s < '0' || *s > '9')
		return -1;
	n = strtoull(s, &end, 10);
	switch (*end) {
	case 'G': shift = 30; end++; break;
	case 'M': shift = 20; end++; break;
	case 'K': shift = 10; end++; break;
	default: break;
	}
	if (*end != '\0' || n > (SIZE_MAX / 2) >> shift)
		return -1;
	n <<= shift;
	if (n < 4096)
		return -1;
	*v = n;
	return 0;
}

/* Returns the seconds of the monotonic clock. */
static inline double
bench_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

#endif
