/* SPDX-License-Identifier: ISC */
/* pending.h: interface of pending.c, the keys add --new is to set once
 * the reader of its pipe or socket has taken the lines written before
 * them: the new lines it wrote, and a renewing window's lines seen
 * again. */
#ifndef BLOOM_PENDING_H
#define BLOOM_PENDING_H

#include <stddef.h>
#include <stdint.h>

#define PENDING_MAX	(1 << 16)	/* keys waiting, at most */

/* The keys waiting, in input order. */
struct pending {
	uint64_t *hash;		/* ring: each key's hash */
	uint64_t *end;		/* ring: the output offset the reader must
				 * have taken first: past the key's line if
				 * written, else where the output was */
	unsigned char *mark;	/* ring: 1 for a new line written, 0 for a
				 * line seen again that a window sets */
	size_t first;		/* ring: index of the oldest */
	size_t n;		/* lines waiting */
	uint64_t *table;	/* the hashes of the new lines waiting
				 * (linear probing; 0 is a free slot) */
};

/* Sets p up, empty.  Returns 0, or -1 with errno set. */
int pending_init(struct pending *p);

/* The bytes pending_init allocates, for the memory budget. */
uint64_t pending_memory(void);

/* Frees what pending_init allocated. */
void pending_free(struct pending *p);

/* Returns 1 if a new line with hash h is waiting, else 0. */
int pending_holds(const struct pending *p, uint64_t h);

/* Adds key h, mark 1 (a new line, not waiting yet) or 0, that waits
 * until the reader has taken the output up to offset end, after every
 * key waiting; p holds fewer than PENDING_MAX. */
void pending_push(struct pending *p, uint64_t h, uint64_t end,
    unsigned char mark);

/* Removes the oldest keys waiting up to offset taken, storing their
 * hashes at out and their marks at marks (room for PENDING_MAX each).
 * Returns how many. */
size_t pending_take(struct pending *p, uint64_t taken, uint64_t *out,
    unsigned char *marks);

#endif
