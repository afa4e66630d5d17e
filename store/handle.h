/* SPDX-License-Identifier: ISC */
/* handle.h: the private definition of an open filter (struct bloom) and
 * of its segments as mapped: for bloom.c and the files of store/ only.
 * Everyone else holds a struct bloom * and asks bloom.h's accessors. */
#ifndef BLOOM_HANDLE_H
#define BLOOM_HANDLE_H

#include <stddef.h>
#include <stdint.h>

#include "store/apbf.h"
#include "store/format.h"

struct layout;
struct mode_policy;

/* One segment as mapped. */
struct segment {
	struct segment_info info;	/* as validated from the table */
	const struct layout *layout;	/* its layout's operations
					 * (store/layout.h) */
	unsigned char *bits;		/* its bit array */
	unsigned char *map;		/* its own mapping, or NULL (v1) */
	size_t map_size;		/* bytes of map */
	uint64_t *inserted;		/* its counter, in the mapped table */
	uint64_t *stamp;		/* its stamp, or NULL (v1) */
	uint64_t whole;			/* blocks a key's block is chosen
					 * among: nblocks, or a slice's
					 * whole filter's */
	uint64_t lo;			/* the first of those it holds */
	struct apbf_view apbf;		/* a generation of an age-partitioned
					 * window: its group array as of the
					 * last refresh (layout_apbf) */
};

/* An open filter. */
struct bloom {
	const char *path;	/* as opened, for the caller's messages */
	int fd;			/* the open file, holding a shared flock */
	int writable;		/* opened for add */
	int sparse;		/* the file has holes (holes.c): read-only,
				 * they are mapped as private zero pages */
	unsigned char *head;	/* v2: header and table; v1: the file */
	size_t head_size;	/* bytes of head */
	struct bloom_header hdr;	/* the header as validated at open */
	const struct mode_policy *mode;	/* its mode's policy (modes.h) */
	uint64_t seed;		/* hash seed */
	struct segment seg[SEGMENTS_MAX];	/* the segments mapped */
	unsigned nmapped;	/* segments mapped: those in use at the last
				 * refresh */
	unsigned nlive;		/* segments live now */
	unsigned live[SEGMENTS_MAX];	/* their indices, the fullest first */
	unsigned target;	/* index of the segment adds go to */
	uint64_t epoch;		/* window: the generation now */
	uint32_t *pending;	/* BLOOM_CHUNK key indices, for passes */
	unsigned char *found;	/* BLOOM_CHUNK flags, for passes */
	uint64_t lookups;	/* keys added or tested so far */
	uint64_t prefault_at;	/* lookups after which to map all pages */
	int prefaulted;		/* all pages were mapped */
	uint64_t stores;	/* keys an add stored bits of so far, line
				 * by line */
	uint64_t populate_at;	/* stores after which to map an apbf
				 * window's pages writable */
	int populated;		/* they were */
	unsigned events;	/* SEG_EV_* not yet taken */
	double full_fpr;	/* with SEG_EV_FULL: the estimated rate */
	void (*on_lock_wait)(const char *path);	/* unless NULL, called
				 * once when a wait for another process's
				 * growth or rotation has lasted a second;
				 * set by the caller after bloom_open */
	int lock_wait_told;	/* on_lock_wait was called */
	void (*on_claims_wait)(const char *path);	/* unless NULL,
				 * called once a wait for other adders'
				 * claims (claims.c) has lasted a second */
	struct claims *claims;	/* add --new: the filter's claim table,
				 * or NULL */
	int claims_tried;	/* claims_join was called */
	int claiming;		/* the chunk being added claims its keys */
	int writers;		/* locks_writer_join said 1 (may be alone), 0
				 * (never), or -1 (failed: write no more) */
};

/* Waits for a lock another process holds: tried every BLOOM_WAIT_TICK_NS,
 * and told once after BLOOM_WAIT_TELL_MS. */
#define BLOOM_WAIT_TICK_NS	10000000L	/* 10 ms between tries */
#define BLOOM_WAIT_TELL_MS	1000		/* ms before saying so */

#endif
