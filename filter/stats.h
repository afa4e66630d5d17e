/* SPDX-License-Identifier: ISC */
/* stats.h: interface of stats.c, what bloom stats finds of a filter and
 * its segments (cli/report.c writes it out). */
#ifndef BLOOM_STATS_H
#define BLOOM_STATS_H

#include <stdint.h>

#include "bloom.h"

/* One segment as stats sees it. */
struct segment_stats {
	int live;		/* answers checks now */
	uint64_t bits;		/* bits in its array */
	unsigned hashes;	/* bit positions per key */
	uint64_t capacity;	/* keys it is sized for */
	double target_fpr;	/* its rate at capacity */
	uint64_t inserted;	/* keys that set a bit in it */
	uint64_t bits_set;	/* bits set */
	double estimated_items;	/* keys the fill suggests */
	double estimated_fpr;	/* its rate from its fill */
	int64_t created_ms;	/* when its keys started to come, or -1 */
	int64_t expires_ms;	/* window: when it is forgotten, or -1 */
	int64_t generation;	/* window: the generation it holds, or -1 */
};

/* The whole filter: the sums over its live segments. */
struct filter_stats {
	uint64_t bytes;		/* size of the file */
	uint64_t bits;		/* bits in live segments */
	uint64_t bits_set;	/* bits set in them */
	double fill;		/* bits_set / bits */
	double estimated_items;	/* keys the fill suggests */
	double estimated_fpr;	/* rate now: any live segment answers */
	uint64_t inserted;	/* keys that set a bit, live segments */
	uint64_t capacity;	/* fixed: keys; grow: of the segments made
				 * so far; window: per window */
	int over_capacity;	/* the rate is past the target */
	int sparse;		/* the file has holes */
	unsigned hashes;	/* of the segment adds go to (the first of
				 * a fixed filter) */
	unsigned nsegments;	/* segments mapped */
	uint64_t generation;	/* window: the generation now */
	uint64_t slice_lo;	/* a slice: its first block of the whole */
	struct segment_stats seg[SEGMENTS_MAX];	/* nsegments of them */
};

/* Counts the bits of every segment of b, of file_size bytes, into st.
 * Returns BLOOM_OK or a status. */
int stats_compute(struct bloom *b, uint64_t file_size,
    struct filter_stats *st);

/* Returns the name of mode m: "fixed", "grow" or "window". */
const char *stats_mode_name(uint32_t m);

#endif
