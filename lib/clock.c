/* SPDX-License-Identifier: ISC */
/* The time of day in ms, as a filter's creation time and stamps hold it. */
#include <time.h>

#include "lib/clock.h"

uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}
