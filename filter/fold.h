/* SPDX-License-Identifier: ISC */
/* fold.h: interface of fold.c, bloom fold: a filter made smaller by
 * ORing groups of its blocks together, exactly the filter that fewer
 * blocks would have given the same keys. */
#ifndef BLOOM_FOLD_H
#define BLOOM_FOLD_H

#include <stdint.h>

#include "bloom.h"

/* Why a filter cannot be folded (fold_plan). */
enum fold_refusal {
	FOLD_OK = 0,
	FOLD_WINDOW_GROWN,	/* a window with a live extra segment */
	FOLD_SLICE_BY,		/* a slice, without a factor given */
	FOLD_INDIVISIBLE	/* --by n does not divide a segment's blocks
				 * (of a window: its generations' blocks, or
				 * groups of the age-partitioned layout) */
};

/* The plan of a fold: the new header, and the factor of each segment. */
struct fold_plan {
	struct bloom_header h;		/* the folded filter's header */
	uint64_t by[SEGMENTS_MAX];	/* each segment's blocks / the new */
	unsigned refusal;		/* enum fold_refusal, if not FOLD_OK */
	unsigned segment;		/* FOLD_INDIVISIBLE: which segment */
};

/*
 * Plans the fold of b: by n (1 or more) if n is not 0; else each segment
 * folded by the largest factor of its blocks that keeps its rate at its
 * target with the keys it holds (a window: all its generations by the
 * factor its fullest live one allows; a slice needs n).  Each folded
 * segment's capacity is what its blocks hold at its target rate.  Returns
 * 0, or -1 with fp->refusal saying why not.
 */
int fold_plan(struct bloom *b, uint64_t n, struct fold_plan *fp);

/* Writes the folded filter fp planned for b to path, atomically, as
 * create does (replacing a filter there if force).  b is only read.
 * Returns BLOOM_OK or a status (BLOOM_ERRNO with errno set). */
int fold_write(struct bloom *b, const struct fold_plan *fp, const char *path,
    int force, void (*on_wait)(const char *path));

#endif
