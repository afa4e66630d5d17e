/* SPDX-License-Identifier: ISC */
/*
 * layout.h: a layout's operations on one segment (struct layout), the
 * table segments.c chooses once for each segment it maps.  The passes
 * (bits.h's entry points, which bloom.c and sweep.c call) go through it
 * and never ask which layout a segment has.  Each layout is its own file:
 * bits.c the blocked one (LAYOUT_BLOCKED512), apbf.c the age-partitioned
 * one (LAYOUT_APBF).  For store/ only.
 *
 * A key list is the m keys that idx lists (indices into hashes), or keys
 * 0 to m in order if idx is NULL.
 */
#ifndef BLOOM_LAYOUT_H
#define BLOOM_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "store/format.h"

struct bloom;
struct segment;

struct layout {
	/* Sets up what the layout keeps of segment s, whose info and bits
	 * are set, of a filter with header h. */
	void (*attach)(struct segment *s, const struct bloom_header *h);
	/* Returns the block of s, from its first, that the bits of the key
	 * with hash h lie in (or begin in): a sorted batch visits keys in
	 * this order.  s's block count or more if another slice holds it. */
	uint64_t (*block)(const struct segment *s, uint64_t h);
	/* Tests the keys listed against s, setting found[key] to 1 if the
	 * key may be in it, else 0. */
	void (*test)(const struct segment *s, const uint64_t *hashes,
	    const uint32_t *idx, size_t m, unsigned char *found);
	/* Sets held[key] to 1 if adding the key to s would set no bit (what
	 * add finds not new), else 0. */
	void (*held)(const struct segment *s, const uint64_t *hashes,
	    const uint32_t *idx, size_t m, unsigned char *held);
	/* Makes copy, a copy of s, read s's blocks from block first on (a
	 * multiple of unit_blocks) in buf, a copy of them: test and held of
	 * copy then answer for keys of those blocks only. */
	void (*rebase)(struct segment *copy, const unsigned char *buf,
	    uint64_t first);
	/* Adds the keys listed to s in that order, setting isnew[key] to 1
	 * if one of its bits was clear, else 0; returns how many were new.
	 * With atomic ORs, so that processes adding at once lose nothing,
	 * or if alone (no other process sets bits of s meanwhile, locks.h)
	 * with plain stores. */
	size_t (*add)(const struct segment *s, const uint64_t *hashes,
	    const uint32_t *idx, size_t m, unsigned char *isnew, int alone);
	/* Sets the bits of the keys listed, known to be new (tested just
	 * before), without testing them again; atomic or alone as add. */
	void (*set)(const struct segment *s, const uint64_t *hashes,
	    const uint32_t *idx, size_t m, int alone);
	/* For a segment of a window whose generations are slots of one
	 * array: sets e from the fill of the slot of the generation stamped
	 * stamp: its bits, how many are set and the keys they suggest (fpr
	 * 0: a test reads the whole array, array_fpr).  NULL otherwise: the
	 * segment's blocks are its own, and their fill says it all. */
	void (*slot_estimate)(const struct segment *s, uint64_t stamp,
	    struct params_estimate *e);
	/* For such a segment: the rate of a test of the whole array when
	 * the live generation with the most keys holds most.  NULL
	 * otherwise. */
	double (*array_fpr)(const struct segment *s, uint64_t most);
	/*
	 * For a window whose generations are in this layout (layout_of(h,
	 * 0)), what its rotation does instead of giving each generation a
	 * segment of its own: NULL, all three, if it does not (the blocked
	 * layout).  Called by segments.c, holding what it holds there.
	 */
	/* Sets the view of b's generations as of b->epoch, the file's newest
	 * generation being file_epoch, after the list is mapped. */
	void (*follow)(struct bloom *b, uint64_t file_epoch);
	/* Returns the earliest generation among the G before to (inclusive)
	 * that a rotation published and did not finish, if earlier than
	 * start; else start.  An adder sees the current generation of a
	 * window with such a generation as not stamped, so that the window
	 * is mended before it adds. */
	uint64_t (*mend_from)(const struct bloom *b, uint64_t start,
	    uint64_t to);
	/* Empties, rotating from generation from to to, what the generations
	 * after from (a whole window's at most) and those from start on hold,
	 * and zeroes the inserted counters of the generations from start on,
	 * in place of clearing their segments.  Called holding both of the
	 * window's locks. */
	void (*clear)(struct bloom *b, uint64_t start, uint64_t from,
	    uint64_t to);
	unsigned unit_blocks;	/* blocks a key's bits may span, aligned */
	int shared;		/* a window's generations after the first
				 * share its array: mapped and tested once */
	int probes;		/* its segments may be tested several in a
				 * pass (bits_test_segments, wide.c) */
	int populate_writes;	/* its array is made writable up front once
				 * adds are many, not read ahead if writable
				 * (segments_prefault_writes) */
};

extern const struct layout layout_blocked;	/* bits.c */
extern const struct layout layout_apbf;		/* ages.c */

/* Returns the table of segment i of a filter with header h: a window's
 * grown generations (extra segments) are blocked whatever its layout. */
static inline const struct layout *
layout_of(const struct bloom_header *h, unsigned i)
{
	if (h->layout == LAYOUT_APBF && i < h->slots)
		return &layout_apbf;
	return &layout_blocked;
}

#endif
