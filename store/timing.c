/* SPDX-License-Identifier: ISC */
/*
 * The clock of a window by time: generation e starts at base + e W /
 * (G - 1), base being the creation time until a rotation by hand moves it
 * so that the generation that rotation starts starts then.  Left at the
 * creation time, a rotation by hand would put the file's generation ahead
 * of the clock's, and the clock would not rotate again until it caught up.
 */
#include "store/timing.h"

uint64_t
timing_epoch(const struct bloom_header *h, uint64_t now)
{
	uint64_t t, w = h->window_ms, g = h->slots - 1;
	uint64_t base = format_clock_base(h);

	if (w == 0 || now <= base)
		return 0;
	t = now - base;
	/* t (G - 1) / W without overflow: t % W < 2^52, G - 1 < 64. */
	return t / w * g + t % w * g / w;
}

/*
 * The base is now less the ms of to generations, rounded up, which
 * timing_epoch counts as to exactly: a generation lasts W / (G - 1), at
 * least 1 ms.
 */
uint64_t
timing_restart(const struct bloom_header *h, uint64_t to, uint64_t now)
{
	uint64_t w = h->window_ms, g = h->slots - 1, whole, part;

	if (w == 0 || __builtin_mul_overflow(to / g, w, &whole))
		return 0;
	part = (to % g * w + g - 1) / g;	/* below 2^58 */
	if (whole > now || part > now - whole)
		return 0;
	return now - whole - part;
}
