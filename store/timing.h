/* SPDX-License-Identifier: ISC */
/* timing.h: interface of timing.c, which generation of a window by time
 * the clock says it is. */
#ifndef BLOOM_TIMING_H
#define BLOOM_TIMING_H

#include <stdint.h>

#include "store/format.h"

/* Returns the generation of window h that the clock says it is at now
 * (ms since 1970): 0 for a window rotated by hand only. */
uint64_t timing_epoch(const struct bloom_header *h, uint64_t now);

/* Returns the base (header word V2_OFF_BASE) that makes generation to of
 * window by time h start at now, or 0 if none can. */
uint64_t timing_restart(const struct bloom_header *h, uint64_t to,
    uint64_t now);

#endif
