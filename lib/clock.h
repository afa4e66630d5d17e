/* SPDX-License-Identifier: ISC */
/* clock.h: interface of clock.c, the time of day as the file stores it. */
#ifndef BLOOM_CLOCK_H
#define BLOOM_CLOCK_H

#include <stdint.h>

/* Returns the time now, in ms since 1970 (the realtime clock). */
uint64_t now_ms(void);

#endif
