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

/* Checks that src can be ORed into target, both open and refreshed.
 * Returns 0, or -1 with *mm saying why not.  Writes nothing. */
int merge_check(const struct bloom *target, const struct bloom *src,
    struct merge_mismatch *mm);

/* ORs src into target, which merge_check accepted, growing a growable
 * target first to src's segments.  Returns BLOOM_OK or a status. */
int merge_into(struct bloom *target, const struct bloom *src);

#endif
