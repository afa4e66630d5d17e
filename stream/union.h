/* SPDX-License-Identifier: ISC */
/* union.h: interface of union.c, check against several filters at once:
 * a line is selected if any of them may hold it. */
#ifndef BLOOM_UNION_H
#define BLOOM_UNION_H

#include <stddef.h>
#include <stdint.h>

#include "bloom.h"
#include "stream/fields.h"
#include "stream/lines.h"

/* Filters checked together, and the scratch for a group of lines. */
struct filter_union {
	struct bloom **filter;	/* the filters, in the order given; the
				 * reader hashes the lines for the first */
	unsigned n;		/* how many */
	unsigned *seed_of;	/* per filter: whose hashes it takes, 0
				 * for the reader's, else i for hashes[i] */
	uint64_t **hashes;	/* per seed beyond the first: LINES_MAX
				 * hashes, hashes[0] unused */
	unsigned nseeds;	/* distinct seeds */
	unsigned char *hashed;	/* per seed: hashed for this group of
				 * lines (the reader's, 0, is at once) */
	unsigned *family;	/* per filter: the first of the slices of
				 * its whole filter (union.c), itself if it
				 * is no slice */
	unsigned sliced;	/* families of slices */
	const struct fields *fields;	/* the key is these fields of a
				 * line, or NULL for the whole line */
	unsigned char *key;	/* the key of a line, with fields */
	size_t key_cap;		/* size of key */
	unsigned char *found;	/* LINES_MAX answers of one filter */
	unsigned char *answered;	/* LINES_MAX: some slice of the
				 * family tested answered for the line */
	uint32_t *unknown;	/* LINES_MAX: 1 + the first family none
				 * of whose slices holds the line, or 0 */
	unsigned passer;	/* 1 + the first family that passed over
				 * a line no filter may hold, or 0 */
	uint32_t *which;	/* LINES_MAX: the first filter that may
				 * hold each line of the group */
	unsigned failed;	/* after a failure: the filter that failed */
};

/* Sets u up to check lines, their key the fields f (NULL: the whole line),
 * against the n open filters, which stay open while u is used.  Returns 0,
 * or -1 with errno set. */
int union_init(struct filter_union *u, struct bloom **filters, unsigned n,
    const struct fields *f);

/* Frees what union_init allocated. */
void union_free(struct filter_union *u);

/*
 * Tests the n lines of g from line first on, hashed by the reader for
 * u->filter[0], against every filter (bloom_test, line by line), each
 * line hashed once for each other seed: hit[i] is set to 1 if some filter
 * may hold line first + i, and u->which[first + i] to the first that
 * may; else to BLOOM_ELSEWHERE if the slices of some whole filter are
 * among the filters and none of them holds the line's blocks (that
 * filter may hold it: union.c), u->passer then set if it was 0; else to
 * 0, every filter certainly not holding it.  Needs the lines' bytes (a
 * reader that keeps them).  Returns BLOOM_OK, or a status with u->failed
 * set (BLOOM_ERRNO with errno set).
 */
int union_test(struct filter_union *u, const struct line_group *g,
    size_t first, size_t n, unsigned char *hit);

#endif
