/* SPDX-License-Identifier: ISC */
/* memory.h: interface of memory.c, the memory bloom may use and how a
 * filter is worked on within it: mapped whole, or in sorted batches. */
#ifndef BLOOM_MEMORY_H
#define BLOOM_MEMORY_H

#include <stddef.h>
#include <stdint.h>

/* How add and check work on a filter. */
struct memory_plan {
	uint64_t budget;	/* bytes this process may use */
	uint64_t usable;	/* of them, what the filter and the batch may
				 * take: the budget less the fixed bytes */
	int sorted;		/* in sorted batches, not line by line */
	int out_of_core;	/* the filter does not fit the budget: read
				 * it a window at a time and let each go */
	uint64_t batch_bytes;	/* bytes a batch may hold: keys, lines */
	uint64_t window;	/* bytes of filter visited at once, a power
				 * of two and a multiple of the page */
};

/* Returns 1 if size bytes of filter take at most half of the machine's
 * memory; a filter larger than that is left to fault in only what it
 * needs. */
int memory_fits(uint64_t size);

/* Returns the bytes this process may use: the least of its cgroup's
 * limits (v1 memory.limit_in_bytes, v2 memory.max, up to the root) and
 * MemAvailable; UINT64_MAX if none can be read. */
uint64_t memory_budget(void);

/* Returns the dirty bytes past which the kernel throttles writers: half
 * way between vm.dirty_background and vm.dirty (bytes, or ratio of
 * available memory), UINT64_MAX if unknown. */
uint64_t memory_dirty_limit(void);

/* Plans the work on a filter of filter_bytes within budget bytes (0 to
 * find the budget), of which the process takes fixed bytes whatever the
 * plan (its code, the reader, buffers, a claim table): mapped as today if
 * the filter fits in half of what is left and, for adding, its pages
 * dirtied at random stay under the dirty limit; in sorted batches
 * otherwise, sized from what is left. */
void memory_plan(uint64_t filter_bytes, uint64_t budget, uint64_t fixed,
    int adding, struct memory_plan *p);

/* Asks the kernel for the pages of array, size bytes that a batch or a
 * sweep fills from its start, key by key, as huge ones past its first
 * 4 MiB (MADV_HUGEPAGE where the kernel has it): a fault for each 2 MiB
 * touched rather than for each 4 KiB, and a trickle's few keys still in
 * small pages.  No page reaches past the array, whose whole size is what
 * a plan counts.  Advice only: nothing fails. */
void memory_huge(void *array, size_t size);

/* Returns malloc(size), memory_huge's advice taken: NULL, errno set, if
 * malloc fails.  free takes it back. */
void *memory_array(size_t size);

#endif
