/* SPDX-License-Identifier: ISC */
/* merge.h: interface of merge.c, ORing filters of the same geometry into
 * one: the filter of the union of their keys. */
#ifndef BLOOM_MERGE_H
#define BLOOM_MERGE_H

#include "bloom.h"

/* Why two filters cannot be merged: the field and both values, as text. */
struct merge_mismatch {
	char field[64];		/* e.g. "seed", "block count of segment 2" */
	char target[64];	/* the target's value */
	char source[64];	/* the source's value */
	const char *reason;	/* or a reason that is no field, or NULL */
};

/* Holds off the rotation of a window target until merge_end, for the
 * checks and the writes of a merge: a generation checked is the one
 * written into.  Returns BLOOM_OK or a status (nothing to do for other
 * modes). */
int merge_begin(struct bloom *target);

/* Lets target rotate again after merge_begin. */
void merge_end(struct bloom *target);

/* Checks that src can be ORed into target, both open and refreshed.
 * Returns 0, or -1 with *mm saying why not.  Writes nothing. */
int merge_check(const struct bloom *target, const struct bloom *src,
    struct merge_mismatch *mm);

/* ORs src into target, which merge_check accepted, growing a growable
 * target first to src's segments.  Returns BLOOM_OK or a status. */
int merge_into(struct bloom *target, const struct bloom *src);

#endif
