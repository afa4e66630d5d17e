/* SPDX-License-Identifier: ISC */
/*
 * The modes of a filter as the policies of its segment list: what each
 * asks of the add and test passes of bloom.c, so that they ask the
 * policy, never the mode.  Which segments are live and which takes adds,
 * growth and rotation, are segments.c's.
 */
#include "store/modes.h"

/* One segment that takes every key. */
static const struct mode_policy fixed = {
	.finds_repeats = 1,
	.pretests_target = 1,
};

/* A fixed filter's share of blocks: a key of another slice is passed
 * over, and a reader's pretest would not know which. */
static const struct mode_policy slice = {
	.slice = 1,
	.finds_repeats = 1,
};

/* Segments appended as it fills: a key goes to the newest only if no
 * older one holds it, and the older ones, which no process adds to,
 * may be tested ahead. */
static const struct mode_policy grow = {
	.adds_unseen = 1,
	.pretests_older = 1,
};

/* Generations: every key goes to the current one, so that a key seen
 * again is remembered as long as the window from now on; each counts the
 * keys new to it.  Its generations choose blocks alike, and are tested
 * several at once. */
static const struct mode_policy window = {
	.adds_all = 1,
	.sets_found = 1,
	.counts_fresh = 1,
	.tests_together = 1,
};

/* A window that does not renew (create --no-renew): a key is remembered
 * from its first add, so only the keys no live generation holds go to
 * the current one, as in a growable filter, counted as the keys found
 * new. */
static const struct mode_policy window_once = {
	.adds_unseen = 1,
	.tests_together = 1,
};

const struct mode_policy *
mode_policy(const struct bloom_header *h)
{
	if (h->slices != 0)
		return &slice;
	switch (h->mode) {
	case MODE_GROW:
		return &grow;
	case MODE_WINDOW:
		return h->flags & WINDOW_NO_RENEW ? &window_once : &window;
	default:
		return &fixed;
	}
}
