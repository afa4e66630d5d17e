/* SPDX-License-Identifier: ISC */
/* kernel.h: the inline kernels of store/bits.c and store/wide.c over a
 * segment as mapped: a key's block, prefetching, and what the passes over
 * several segments read (store/positions.h draws the positions and tests
 * a block).  For store/ only. */
#ifndef BLOOM_KERNEL_H
#define BLOOM_KERNEL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "params.h"
#include "store/handle.h"
#include "store/positions.h"

/* Returns the block of segment s, from its first, of the key with hash
 * h (bits_block). */
static inline uint64_t
block_index(const struct segment *s, uint64_t h)
{
	return mul_high(h, s->whole) - s->lo;
}

static inline uint64_t *
block_of(const struct segment *s, uint64_t h)
{
	return (uint64_t *)(s->bits + block_index(s, h) * BLOCK_BYTES);
}

/*
 * The keys are taken in batches.  While one is tested, the blocks of the
 * keys up to PREFETCH_AHEAD further on are loading.
 */
#define BATCH		16	/* keys tested before the new ones are set */
#define PREFETCH_AHEAD	64	/* keys whose blocks load ahead */

/*
 * Starts loading the blocks of the keys from the batch at i on that are
 * PREFETCH_AHEAD keys away, or all of the first ones when i is 0; KEY(j)
 * is the hash of key j.  A macro rather than a function: GCC finds that a
 * function that only prefetches has no effect and drops the calls.
 */
#define PREFETCH_BATCH(s, KEY, i, n) do {				\
	size_t from_ = (i) == 0 ? 0 : (i) + PREFETCH_AHEAD - BATCH;	\
	size_t to_ = (i) + PREFETCH_AHEAD < (n) ?			\
	    (i) + PREFETCH_AHEAD : (n);					\
									\
	for (; from_ < to_; from_++)					\
		__builtin_prefetch(block_of((s), KEY(from_)));		\
} while (0)

#define ALL_KEY(j)	(hashes[j])
#define SOME_KEY(j)	(hashes[idx[j]])

#define MULTI_AHEAD_BLOCKS	96	/* blocks loading ahead in a pass over
					 * several segments, at most */

/* The segments as the multi-segment test reads them. */
struct probes {
	unsigned nseg;				/* segments */
	const unsigned char *bits[SEGMENTS_MAX];	/* their first blocks */
	unsigned char shape[SEGMENTS_MAX];	/* index of each one's
						 * block choice */
	unsigned char mask[SEGMENTS_MAX];	/* index of each one's hash
						 * count */
	unsigned nshape;			/* distinct block choices */
	uint64_t whole[SEGMENTS_MAX];		/* theirs: as segment's */
	uint64_t lo[SEGMENTS_MAX];		/* theirs: as segment's */
	unsigned nk;				/* distinct hash counts */
	unsigned k[HASHES_MAX];			/* theirs, increasing */
};

/* Sets off[c] to the byte offset of the key with hash h's block in the
 * segments of block choice c, for the first nshape choices. */
static inline void
key_offsets(const struct probes *p, unsigned nshape, uint64_t h, size_t *off)
{
	unsigned c;

	for (c = 0; c < nshape; c++)
		off[c] = (size_t)(mul_high(h, p->whole[c]) - p->lo[c]) *
		    BLOCK_BYTES;
}

#endif
