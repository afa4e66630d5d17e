/* stats.h: interface of stats.c, what bloom stats reports of a filter and
 * its segments, in text or JSON. */
#ifndef BLOOM_STATS_H
#define BLOOM_STATS_H

#include <stdint.h>
#include <stdio.h>

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
	struct segment_stats seg[SEGMENTS_MAX];	/* b->nmapped of them */
};

/* Counts the bits of every segment of b, of file_size bytes, into st. */
void stats_compute(struct bloom *b, uint64_t file_size,
    struct filter_stats *st);

/* Writes st for the filter b at path to fp as key: value lines and a
 * table of segments. */
void stats_print_text(FILE *fp, const char *path, const struct bloom *b,
    const struct filter_stats *st);

/* Writes st to fp as one JSON object on one line. */
void stats_print_json(FILE *fp, const char *path, const struct bloom *b,
    const struct filter_stats *st);

/* Writes what create would make of the planned header h for path:
 * bytes, blocks, hashes, capacity, rate, and the segments of a growable
 * or windowed filter (for a growable one, the next few too). */
void stats_print_plan(FILE *fp, const char *path, const struct bloom_header *h);

/* Writes bytes into buf (size bytes) in 1024-based units, as "1.5 GiB"
 * or "512 B", and returns buf. */
char *stats_human(char *buf, size_t size, double bytes);

/* Returns the name of mode m: "fixed", "grow" or "window". */
const char *stats_mode_name(uint32_t m);

#endif
