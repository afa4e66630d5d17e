/* SPDX-License-Identifier: ISC
 * Merging: the bitwise OR of filters with the same seed, hash, layout and
 * geometry is exactly the filter of the union of their keys.  Segment i
 * of the source goes into segment i of the target; of slices, the blocks
 * of the whole filter that both hold, so that a slice goes into its part
 * of a whole filter, a whole filter's part into a slice, and the slices
 * of one count into those of another.  Everything is checked before anything is
 * written, so that a mismatch leaves the target as it was; and a window
 * target does not rotate from the checks to the end of the writes, or a
 * source's expired generation would be ORed into a fresh one.  Windows
 * merge at the same generation: then the same slot of an age-partitioned
 * array holds the same generation in both, and its live slots are ORed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "filter/merge.h"
#include "store/plan.h"

static int
differ(struct merge_mismatch *mm, const char *field, const char *fmt,
    uint64_t target, uint64_t source)
{
	snprintf(mm->field, sizeof mm->field, "%s", field);
	snprintf(mm->target, sizeof mm->target, fmt, target);
	snprintf(mm->source, sizeof mm->source, fmt, source);
	mm->reason = NULL;
	return -1;
}

static int
differ_rate(struct merge_mismatch *mm, const char *field, double target,
    double source)
{
	snprintf(mm->field, sizeof mm->field, "%s", field);
	snprintf(mm->target, sizeof mm->target, "%.17g", target);
	snprintf(mm->source, sizeof mm->source, "%.17g", source);
	mm->reason = NULL;
	return -1;
}

static int
refuse(struct merge_mismatch *mm, const char *reason)
{
	memset(mm, 0, sizeof *mm);
	mm->reason = reason;
	return -1;
}

static const char *const mode_names[] = { "fixed", "grow", "window" };

/* Compares the geometry of segment i of both. */
static int
same_segment(const struct bloom *t, const struct bloom *s, unsigned i,
    struct merge_mismatch *mm)
{
	const struct segment_info *a = &bloom_header(t)->seg[i];
	const struct segment_info *b = &bloom_header(s)->seg[i];
	char field[64];

	if (a->nblocks != b->nblocks) {
		snprintf(field, sizeof field, "block count of segment %u", i);
		return differ(mm, field, "%" PRIu64, a->nblocks, b->nblocks);
	}
	if (a->hashes != b->hashes) {
		snprintf(field, sizeof field, "hash count of segment %u", i);
		return differ(mm, field, "%" PRIu64, a->hashes, b->hashes);
	}
	return 0;
}

/*
 * Checks src against t where one is a slice: both are cut from the same
 * whole filter.  Slices of the same count must be the same slice; of
 * other counts, the blocks they share are ORed (perhaps none), which is
 * how a filter is cut again into another count.
 */
static int
check_slice(const struct bloom *t, const struct bloom *s,
    struct merge_mismatch *mm)
{
	const struct bloom_header *th = bloom_header(t), *sh = bloom_header(s);
	uint64_t tw, sw;

	if (th->mode != MODE_FIXED || sh->mode != MODE_FIXED)
		return refuse(mm, "a slice merges only with a fixed filter or "
		    "another slice");
	if (th->slices != 0 && th->slices == sh->slices &&
	    th->slice != sh->slice)
		return differ(mm, "slice", "%" PRIu64, th->slice, sh->slice);
	tw = th->slices != 0 ? th->whole_nblocks : th->seg[0].nblocks;
	sw = sh->slices != 0 ? sh->whole_nblocks : sh->seg[0].nblocks;
	if (tw != sw)
		return differ(mm, "block count of the whole filter", "%" PRIu64,
		    tw, sw);
	if (th->seg[0].hashes != sh->seg[0].hashes)
		return differ(mm, "hash count of segment 0", "%" PRIu64,
		    th->seg[0].hashes, sh->seg[0].hashes);
	return 0;
}

static int
check_window(const struct bloom *t, const struct bloom *s,
    struct merge_mismatch *mm)
{
	const struct bloom_header *th = bloom_header(t), *sh = bloom_header(s);
	uint64_t te, se;
	unsigned i;
	char field[64];

	if (th->slots != sh->slots)
		return differ(mm, "generations", "%" PRIu64, th->slots,
		    sh->slots);
	if (th->window_ms != sh->window_ms)
		return differ(mm, "window (ms)", "%" PRIu64, th->window_ms,
		    sh->window_ms);
	if (th->created_ms != sh->created_ms)
		return differ(mm, "creation time (ms)", "%" PRIu64,
		    th->created_ms, sh->created_ms);
	/* Which extra segment holds which generation differs from file to
	 * file: only the generations' own segments line up, and only they
	 * are merged (merge_into); extra segments must hold none live. */
	if (bloom_live_extra(t) || bloom_live_extra(s))
		return refuse(mm, "a window whose generations grew past their "
		    "sizing merges only once those generations have expired");
	/* The generation now, the clock's if later than the file's: a
	 * source no add has rotated since holds fewer live generations. */
	te = bloom_generation(t);
	se = bloom_generation(s);
	if (te != se)
		return differ(mm, "current generation", "%" PRIu64, te, se);
	for (i = 0; i < th->slots; i++) {
		if (same_segment(t, s, i, mm) == -1)
			return -1;
		if (!bloom_is_live(s, i))
			continue;	/* nothing to merge (merge_into) */
		te = bloom_stamp(t, i);
		se = bloom_stamp(s, i);
		if (te != se) {
			snprintf(field, sizeof field, "generation of segment "
			    "%u", i);
			return differ(mm, field, "%" PRIu64, te, se);
		}
	}
	return 0;
}

/*
 * The target gains the segments it lacks, sized from its header fields:
 * each must be the source's, checked here, before the target grows, so
 * that a source whose table was crafted leaves the target as it was.
 */
static int
check_growth(const struct bloom *t, const struct bloom *s,
    struct merge_mismatch *mm)
{
	const struct bloom_header *th = bloom_header(t);
	const struct segment_info *b;
	struct segment_info next;
	uint64_t offset;
	unsigned i;
	char field[64];

	offset = format_next_offset(&th->seg[bloom_nsegments(t) - 1]);
	for (i = bloom_nsegments(t); i < bloom_nsegments(s); i++) {
		if (plan_segment(th, i, offset, &next) != BLOOM_OK)
			return refuse(mm, "the target cannot grow to the "
			    "source's segments");
		b = &bloom_header(s)->seg[i];
		if (next.nblocks != b->nblocks) {
			snprintf(field, sizeof field, "block count of segment "
			    "%u", i);
			return differ(mm, field, "%" PRIu64, next.nblocks,
			    b->nblocks);
		}
		if (next.hashes != b->hashes) {
			snprintf(field, sizeof field, "hash count of segment "
			    "%u", i);
			return differ(mm, field, "%" PRIu64, next.hashes,
			    b->hashes);
		}
		offset = format_next_offset(&next);
	}
	return 0;
}

int
merge_check(const struct bloom *t, const struct bloom *s,
    struct merge_mismatch *mm)
{
	const struct bloom_header *th = bloom_header(t), *sh = bloom_header(s);
	unsigned i, n;

	if (th->layout != sh->layout) {
		snprintf(mm->field, sizeof mm->field, "layout");
		snprintf(mm->target, sizeof mm->target, "%s",
		    format_layout_option(th->layout));
		snprintf(mm->source, sizeof mm->source, "%s",
		    format_layout_option(sh->layout));
		mm->reason = NULL;
		return -1;
	}
	if (th->seed != sh->seed)
		return differ(mm, "seed", "%" PRIu64, th->seed, sh->seed);
	if (sh->slices != 0 || th->slices != 0)
		return check_slice(t, s, mm);
	if (th->mode != sh->mode) {
		snprintf(mm->field, sizeof mm->field, "mode");
		snprintf(mm->target, sizeof mm->target, "%s",
		    mode_names[th->mode]);
		snprintf(mm->source, sizeof mm->source, "%s",
		    mode_names[sh->mode]);
		mm->reason = NULL;
		return -1;
	}
	switch (th->mode) {
	case MODE_FIXED:
		return same_segment(t, s, 0, mm);
	case MODE_WINDOW:
		return check_window(t, s, mm);
	case MODE_GROW:
		break;
	}
	if (th->capacity != sh->capacity)
		return differ(mm, "first capacity", "%" PRIu64, th->capacity,
		    sh->capacity);
	if (th->target_fpr != sh->target_fpr)
		return differ_rate(mm, "target rate", th->target_fpr,
		    sh->target_fpr);
	if (th->growth != sh->growth)
		return differ_rate(mm, "growth factor", th->growth,
		    sh->growth);
	if (th->ratio != sh->ratio)
		return differ_rate(mm, "tightening ratio", th->ratio,
		    sh->ratio);
	if (th->slots != sh->slots)
		return differ(mm, "segment table size", "%" PRIu64, th->slots,
		    sh->slots);
	n = bloom_nsegments(t) < bloom_nsegments(s) ? bloom_nsegments(t) :
	    bloom_nsegments(s);
	for (i = 0; i < n; i++)
		if (same_segment(t, s, i, mm) == -1)
			return -1;
	return check_growth(t, s, mm);
}

int
merge_begin(struct bloom *t)
{
	return bloom_hold(t);
}

void
merge_end(struct bloom *t)
{
	bloom_unhold(t);
}

int
merge_into(struct bloom *t, const struct bloom *s)
{
	struct merge_mismatch mm;
	unsigned i, n = bloom_nsegments(s);
	int st;

	if (bloom_header(t)->mode == MODE_GROW && bloom_nsegments(t) < n) {
		if ((st = bloom_grow_to(t, n)) != BLOOM_OK)
			return st;
		for (i = 0; i < n; i++)
			if (same_segment(t, s, i, &mm) == -1)
				return BLOOM_EGROWTH;
	}
	if (bloom_header(t)->mode == MODE_WINDOW)
		n = bloom_header(t)->slots;	/* no extra segment is live */
	/* The generations of an age-partitioned window share one array:
	 * ORed once, the slots of the source's live ages.  A generation's
	 * counter cannot be summed either (shared keys): it is raised to
	 * the source's, the most the union may hold at the least. */
	if (plan_shares_array(bloom_header(t), 1)) {
		bloom_or(t, 0, s, 0);
		for (i = 0; i < n; i++)
			if (bloom_is_live(s, i))
				bloom_raise(t, i, bloom_inserted(s, i));
		return BLOOM_OK;
	}
	for (i = 0; i < n; i++) {
		if (bloom_header(t)->mode == MODE_WINDOW && !bloom_is_live(s, i))
			continue;
		bloom_or(t, i, s, i);
		bloom_recount(t, i);
	}
	return BLOOM_OK;
}
