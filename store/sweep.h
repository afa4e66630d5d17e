/* SPDX-License-Identifier: ISC */
/* sweep.h: interface of sweep.c, sorted sweeps: a batch of keys added to
 * or tested against one segment of a filter in the order of its blocks,
 * window by window, for filters that do not fit in memory or that would
 * make the kernel write their pages back again and again.  bloom.c's
 * operations visit segments through it (bloom.h's struct bloom_sweep is
 * this one, opaque above the core).  For bloom.c only. */
#ifndef BLOOM_SWEEP_H
#define BLOOM_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "lib/memory.h"

struct segment;

/* What a visit of a segment does with its keys. */
#define VISIT_TEST	0	/* tests them */
#define VISIT_ADD	1	/* adds them */
#define VISIT_SETTLE	2	/* tests them, then marks found the ones not
				 * found whose bits the ones before them not
				 * found would set (mates_list): an add
				 * --new's test */
#define VISIT_SET	3	/* adds them, known new (none held): each
				 * sets bits, so their pages may be made
				 * writable ahead (populate_ahead) */

/* Keys of a window whose hashes are copied at a time. */
#define SWEEP_GATHER	4096

/* Bytes of scratch a sweep takes per key of its batch. */
#define SWEEP_KEY_BYTES	(1 + 2 * sizeof(uint32_t))

/* What one thread visiting windows works in: a sweep's tests of a
 * filter mapped whole are split between two (sweep.c's SPLIT_KEYS). */
struct sweep_lane {
	uint64_t *gathered;	/* SWEEP_GATHER hashes of a window's keys,
				 * copied in order, so that the filter's
				 * kernels read them in sequence */
	unsigned char *got;	/* their answers, before they go to the
				 * caller's flags */
	void *mates;		/* mates_list's scratch, kept from one
				 * window to the next */
	size_t mates_size;	/* its bytes */
	int error;		/* errno of the first look-up of repeats
				 * that failed, or 0 */
};

/* A sweep's plan and scratch, for batches of up to cap keys. */
struct bloom_sweep {
	struct memory_plan plan;	/* window size, out of core */
	size_t cap;		/* keys a batch has at most */
	int fd;			/* the filter's file, during an operation */
	int sparse;		/* it has holes, during an operation */
	int write_error;	/* errno of the first write-back (or look-up
				 * of repeats, mates_list) that failed
				 * during an operation, or 0 */
	unsigned char *found;	/* per key: in a segment not added to */
	uint32_t *todo;		/* the keys a pass visits, input order */
	uint32_t *order;	/* the same, sorted by window (right after
				 * todo, in the same allocation) */
	uint64_t *start;	/* per window: where its keys end in order */
	uint64_t *second;	/* per window: a sort's count of its keys
				 * in the second part (SPLIT_KEYS), in the
				 * same allocation as start */
	struct sweep_lane lane[2];	/* this thread's, a helper's */
	unsigned char *window[2];	/* out of core: windows read with
				 * pread, one while the other is worked on */
};

/* Returns a sweep for plan p and batches of up to cap keys, or NULL
 * with errno set. */
struct bloom_sweep *sweep_new(const struct memory_plan *p, size_t cap);

/* Frees w and what it holds (NULL is a no-op). */
void sweep_free(struct bloom_sweep *w);

/* Returns 2 * cap entries of w's scratch, free for the caller between
 * its operations. */
uint32_t *sweep_scratch(struct bloom_sweep *w);

/* Begins an operation of w on the filter whose file is fd (with holes if
 * sparse): the visits until sweep_end read and write back through it. */
void sweep_begin(struct bloom_sweep *w, int fd, int sparse);

/*
 * Visits segment s: does what what says (VISIT_*) with the m keys idx
 * lists (indices into hashes, in increasing order), or keys 0 to m in
 * order if idx is NULL, setting res[k] for each key k visited as
 * bits_test_list or bits_add_list do, window by window in file order.
 * Returns how many were new to s (an add; 0 for a test).  A write-back
 * that fails is kept for sweep_end.
 */
size_t sweep_visit(struct bloom_sweep *w, const struct segment *s,
    const uint64_t *hashes, const uint32_t *idx, size_t m, int what,
    unsigned char *res);

/* Returns 0 if every visit since sweep_begin wrote back what it set (or
 * wrote nothing), else the errno of the first write-back that failed;
 * forgets it. */
int sweep_end(struct bloom_sweep *w);

#endif
