/* SPDX-License-Identifier: ISC */
/* sweep.h: interface of sweep.c, sorted sweeps: a batch of keys added to
 * or tested against each segment of a filter in the order of its blocks,
 * window by window, for filters that do not fit in memory or that would
 * make the kernel write their pages back again and again. */
#ifndef BLOOM_SWEEP_H
#define BLOOM_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "bloom.h"
#include "lib/memory.h"

/* Keys of a window whose hashes are copied at a time. */
#define SWEEP_GATHER	4096

/* Bytes of scratch a sweep takes per key of its batch. */
#define SWEEP_KEY_BYTES	(1 + 2 * sizeof(uint32_t))

/* A sweep's plan and scratch, for batches of up to cap keys. */
struct sweep {
	struct memory_plan plan;	/* window size, out of core */
	size_t cap;		/* keys a batch has at most */
	int fd;			/* the filter's file, during a pass */
	int sparse;		/* it has holes, during a pass */
	int write_error;	/* errno of the first write-back (or look-up
				 * of repeats, bloom_settle) that failed
				 * during a pass, or 0 */
	unsigned char *found;	/* per key: in a segment not added to */
	uint32_t *todo;		/* the keys a pass visits, input order */
	uint32_t *order;	/* the same, sorted by window (right after
				 * todo, in the same allocation) */
	uint64_t *start;	/* per window: where its keys end in order */
	uint64_t *gathered;	/* SWEEP_GATHER hashes of a window's keys,
				 * copied in order, so that the filter's
				 * kernels read them in sequence */
	unsigned char *got;	/* their answers, before they go to the
				 * caller's flags */
	unsigned char *window[2];	/* out of core: windows read with
				 * pread, one while the other is worked on */
	void *mates;		/* bloom_settle's scratch, kept from one
				 * window to the next */
	size_t mates_size;	/* its bytes */
};

/* Sets w up for plan p and batches of up to cap keys.  Returns 0, or -1
 * with errno set. */
int sweep_init(struct sweep *w, const struct memory_plan *p, size_t cap);

/* Frees what sweep_init allocated. */
void sweep_free(struct sweep *w);

/* Returns 2 * cap entries of w's scratch, free for the caller between
 * its passes. */
uint32_t *sweep_scratch(struct sweep *w);

/* Returns the pass that has bloom.h's operations on b (bloom_test,
 * bloom_add, bloom_add_test, bloom_add_claim, bloom_add_set) visit each
 * segment in the order of its blocks, window by window, for batches of up
 * to cap keys.  An operation whose writing back of a window out of core
 * failed returns BLOOM_ERRNO, the bits then set in memory but not on
 * disk.  Valid while w is and b is open. */
struct bloom_pass sweep_pass(struct sweep *w, const struct bloom *b);

#endif
