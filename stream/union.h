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

/* Filters checked together, and the scratch for a chunk of keys: a
 * group's lines, or a sorted batch's. */
struct filter_union {
	struct bloom **filter;	/* the filters, in the order given; the
				 * reader hashes the lines for the first */
	unsigned n;		/* how many */
	unsigned *seed_of;	/* per filter: whose hashes it takes, 0
				 * for the reader's, else i for hashes[i] */
	uint64_t **hashes;	/* per seed beyond the first: cap hashes,
				 * a chunk's keys', hashes[0] unused */
	unsigned nseeds;	/* distinct seeds */
	size_t cap;		/* keys of a chunk at most, the size of
				 * the arrays below */
	unsigned *family;	/* per filter: the first of the slices of
				 * its whole filter (union.c), itself if it
				 * is no slice */
	unsigned sliced;	/* families of slices */
	const struct fields *fields;	/* the key is these fields of a
				 * line, or NULL for the whole line */
	unsigned char *key;	/* the key of a line, with fields */
	size_t key_cap;		/* size of key */
	uint64_t *keys;		/* cap: the hashes of the keys one filter
				 * tests, those whose answer is still open */
	unsigned char *found;	/* cap: their answers */
	unsigned char *answered;	/* cap, with slices: some slice of
				 * the family tested answered for the key */
	uint32_t *unknown;	/* cap, with slices: 1 + the first family
				 * none of whose slices holds the key, or 0 */
	unsigned passer;	/* 1 + the first family that passed over
				 * a line no filter may hold, or 0 */
	uint32_t *which;	/* cap: the first filter that may hold
				 * each key of the chunk */
	unsigned failed;	/* after a failure: the filter that failed */
};

/* Sets u up to check lines, their key the fields f (NULL: the whole line),
 * against the n open filters, which stay open while u is used, in chunks
 * of up to LINES_MAX keys.  Returns 0, or -1 with errno set. */
int union_init(struct filter_union *u, struct bloom **filters, unsigned n,
    const struct fields *f);

/* Frees what union_init allocated. */
void union_free(struct filter_union *u);

/* Returns the bytes of scratch u takes per key of a chunk. */
size_t union_key_bytes(const struct filter_union *u);

/* Makes u take chunks of up to cap keys (a sorted batch's) rather than
 * LINES_MAX.  Returns 0, or -1 with errno set. */
int union_resize(struct filter_union *u, size_t cap);

/*
 * Hashes the n lines of g from line first on, for every seed of u's
 * filters but the reader's, as keys at to at + n of the chunk: for the
 * sorted batch that takes them, while the lines are still at hand.  Needs
 * the lines' bytes (a reader that keeps them).  Returns 0, or -1 with
 * errno set and u->failed set.
 */
int union_hash(struct filter_union *u, const struct line_group *g,
    size_t first, size_t n, size_t at);

/*
 * Tests keys at to at + n of the chunk, hashes their hashes for
 * u->filter[0] (union_hash gave the other seeds'), against every filter,
 * through sorted sweep w or line by line if w is NULL (bloom_test), each
 * filter only the keys whose answer is still open: hit[i] is set to 1 if
 * some filter may hold key at + i, and u->which[at + i] to the first that
 * may; else to BLOOM_ELSEWHERE if the slices of some whole filter are
 * among the filters and none of them holds the key's blocks (that filter
 * may hold it: union.c), u->passer then set if it was 0; else to 0, every
 * filter certainly not holding it.  Returns BLOOM_OK, or a status with
 * u->failed set (BLOOM_ERRNO with errno set).
 */
int union_test(struct filter_union *u, struct bloom_sweep *w,
    const uint64_t *hashes, size_t at, size_t n, unsigned char *hit);

#endif
