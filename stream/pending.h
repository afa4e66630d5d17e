/* SPDX-License-Identifier: ISC */
/* pending.h: interface of pending.c, the new lines add --new wrote to a
 * pipe or socket whose reader has not taken them yet, to be marked seen
 * once it has. */
#ifndef BLOOM_PENDING_H
#define BLOOM_PENDING_H

#include <stddef.h>
#include <stdint.h>

#define PENDING_MAX	(1 << 16)	/* lines waiting, at most */

/* The lines written and not yet taken, in the order written. */
struct pending {
	uint64_t *hash;		/* ring: each line's key hash */
	uint64_t *end;		/* ring: the output offset just past it */
	size_t first;		/* ring: index of the oldest */
	size_t n;		/* lines waiting */
	uint64_t *table;	/* the hashes waiting, by hash (linear
				 * probing; 0 is a free slot) */
};

/* Sets p up, empty.  Returns 0, or -1 with errno set. */
int pending_init(struct pending *p);

/* Frees what pending_init allocated. */
void pending_free(struct pending *p);

/* Returns 1 if a line with hash h is waiting, else 0. */
int pending_holds(const struct pending *p, uint64_t h);

/* Adds a line with hash h that ends at output offset end, after every
 * line waiting; p holds fewer than PENDING_MAX and not h. */
void pending_push(struct pending *p, uint64_t h, uint64_t end);

/* Removes the oldest lines waiting that end at or before offset taken,
 * storing their hashes at out (room for PENDING_MAX).  Returns how many. */
size_t pending_take(struct pending *p, uint64_t taken, uint64_t *out);

#endif
