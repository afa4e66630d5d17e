/* SPDX-License-Identifier: ISC */
/* modes.h: interface of modes.c, each mode of a filter (fixed, slice,
 * growable, window) as the policy of its segment list that the add and
 * test passes (bloom.c) follow: chosen once at open, asked by the passes
 * instead of the mode.  For bloom.c and store/ only. */
#ifndef BLOOM_MODES_H
#define BLOOM_MODES_H

#include "store/format.h"

struct mode_policy {
	int slice;		/* the keys of other slices are passed over
				 * (BLOOM_ELSEWHERE) */
	int adds_all;		/* an add sends every key to the target: a
				 * window's current generation remembers a
				 * key seen again from now on */
	int adds_unseen;	/* an add sends the target only the keys no
				 * older live segment holds (growable) */
	int sets_found;		/* bloom_add_set also sets the keys found,
				 * as adds_all */
	int counts_fresh;	/* bloom_add_set counts the keys new to the
				 * target, not the keys found new */
	int finds_repeats;	/* adds go to one segment, whose bits a
				 * chunk's earlier keys set: bloom_add_test
				 * finds the repeats of a chunk there */
	int tests_together;	/* line by line, the live segments are
				 * tested several in a pass */
	int pretests_older;	/* a reader thread may test the older
				 * segments ahead */
	int pretests_target;	/* an add --new's reader thread may test
				 * the one segment ahead */
};

/* Returns the policy of the mode of a filter with header h. */
const struct mode_policy *mode_policy(const struct bloom_header *h);

#endif
