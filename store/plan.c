/* SPDX-License-Identifier: ISC */
/*
 * The plan of a filter: the one place every kind is sized.  A fixed
 * filter's array from two of its capacity, rate and size, rounded for the
 * slices it may be cut into; the header and segment table create writes
 * for each mode; a growable filter's next segments and a window's
 * generations and extra entries, which the segment list asks for as it
 * grows; a slice of a fixed filter; the layout a window gets without
 * --layout; and the limits a plan must keep.
 * Pure: nothing here opens, maps or prints.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "params.h"
#include "store/layout.h"
#include "store/plan.h"

#define PLAN_EXTRA_DOUBLINGS	5	/* extra entry j of a window holds
					 * 2^min(j, this) generations' keys */

/* ==== A fixed filter's array ==== */

/* Counts of slices that a filter made with --slices n can also be cut
 * into, when rounding up to them costs little: 720720 is divisible by
 * every count up to 16, 5040 by those up to 10, and so on. */
static const uint64_t also_slices[] = { 720720, 5040, 240, 48, 16, 8, 4, 2 };

uint64_t
plan_most_slices(uint64_t nblocks)
{
	size_t i;

	for (i = 0; i < sizeof also_slices / sizeof also_slices[0]; i++)
		if (nblocks % also_slices[i] == 0 && nblocks >= also_slices[i])
			return also_slices[i];
	return 1;
}

/*
 * Returns nblocks rounded up to a multiple of cut, and of the first of
 * also_slices whose multiple adds at most 1% to the blocks, so that the
 * filter can later be cut again into that many slices (create --like
 * slice --slice j/m).  More blocks only lower the rate.
 */
static uint64_t
round_for_slices(uint64_t nblocks, uint32_t cut)
{
	uint64_t a, b, t, unit, up;
	size_t i;

	for (i = 0; i < sizeof also_slices / sizeof also_slices[0]; i++) {
		/* unit = lcm(cut, also_slices[i]), below 2^52. */
		for (a = cut, b = also_slices[i]; b != 0; t = a % b, a = b,
		    b = t)
			;
		unit = cut / a * also_slices[i];
		up = (nblocks + unit - 1) / unit * unit;
		if (up - nblocks <= nblocks / 100)
			return up;
	}
	return (nblocks + cut - 1) / cut * cut;
}

enum plan_array_refusal
plan_array(struct params *p, enum solve_for what, uint32_t cut)
{
	if (params_solve(p, what) == -1) {
		if (errno == EFBIG)
			return PLAN_ARRAY_TOO_BIG;
		return what == SOLVE_FPR ? PLAN_ARRAY_OVERFULL :
		    PLAN_ARRAY_NO_ROOM;
	}
	/* A filter that passes most absent keys is not worth a file. */
	if (what == SOLVE_FPR && p->target_fpr > PLAN_DERIVED_FPR_MAX)
		return PLAN_ARRAY_RATE_HIGH;
	if (cut != 0) {
		p->nblocks = round_for_slices(p->nblocks, cut);
		if (p->nblocks > NBLOCKS_MAX)
			return PLAN_ARRAY_SLICES_TOO_BIG;
	}
	return PLAN_ARRAY_OK;
}

/* ==== Segments: a growable filter's, a window's generations ==== */

/* Sizes the generations of an age-partitioned window h (format.c): all
 * one array at the data offset, each entry a generation's share of the
 * capacity, at the window's rate. */
static int
plan_apbf(const struct bloom_header *h, struct segment_info *s)
{
	struct apbf_params a;

	if (params_apbf_size(h->capacity, h->target_fpr, h->slots, &a) == -1)
		return BLOOM_ETOOBIG;
	memset(s, 0, sizeof *s);
	s->offset = h->data_offset;
	s->nblocks = a.ngroups * APBF_GROUP_BLOCKS;
	s->hashes = a.hashes;
	s->capacity = h->capacity / (h->slots - 1) +
	    (h->capacity % (h->slots - 1) != 0);
	s->target_fpr = h->target_fpr;
	if (s->nblocks * BLOCK_BYTES > FORMAT_FILE_MAX - s->offset)
		return BLOOM_ETOOBIG;
	return BLOOM_OK;
}

int
plan_segment(const struct bloom_header *h, unsigned i, uint64_t offset,
    struct segment_info *s)
{
	struct params p;
	double capacity;

	memset(&p, 0, sizeof p);
	if (h->layout == LAYOUT_APBF && i < h->slots)
		return plan_apbf(h, s);
	if (h->mode == MODE_GROW) {
		capacity = ceil((double)h->capacity * pow(h->growth, i));
		if (!(capacity < 0x1p62))
			return BLOOM_ETOOBIG;
		p.capacity = (uint64_t)capacity;
		p.target_fpr = h->target_fpr * (1.0 - h->ratio) *
		    pow(h->ratio, i);
	} else {
		/* A generation holds what arrives in W / (G - 1). */
		p.capacity = h->capacity / (h->slots - 1) +
		    (h->capacity % (h->slots - 1) != 0);
		p.target_fpr = params_split_fpr(h->target_fpr, h->slots);
		if (i > h->slots) {
			i -= h->slots;
			if (i > PLAN_EXTRA_DOUBLINGS)
				i = PLAN_EXTRA_DOUBLINGS;
			if (p.capacity > UINT64_MAX >> i)
				return BLOOM_ETOOBIG;
			p.capacity <<= i;
		}
	}
	if (!(p.target_fpr >= DBL_MIN) || params_solve(&p, SOLVE_SIZE) == -1)
		return BLOOM_ETOOBIG;
	/* Every segment of a growable filter, the first too, is a count
	 * fold divides, for at most 1/128 more bits: fold takes back the
	 * newest segment's unused room, and the first segment of the filter
	 * add creates (8 M keys) is most of a filter that stays small.
	 * Below 256 blocks a count stays as params_solve gives it. */
	if (h->mode == MODE_GROW)
		p.nblocks = params_foldable(p.nblocks);
	memset(s, 0, sizeof *s);
	s->offset = offset;
	s->nblocks = p.nblocks;
	s->hashes = p.hashes;
	s->capacity = p.capacity;
	s->target_fpr = p.target_fpr;
	if (offset > FORMAT_FILE_MAX ||
	    s->nblocks * BLOCK_BYTES > FORMAT_FILE_MAX - offset)
		return BLOOM_ETOOBIG;
	return BLOOM_OK;
}

/* ==== The whole filter ==== */

int
plan_filter(const struct bloom_spec *spec, struct bloom_header *h)
{
	struct plan_layout chosen;
	uint64_t offset;
	unsigned i, made;
	int s;

	chosen.layout = LAYOUT_BLOCKED512;
	if (spec->mode == MODE_WINDOW &&
	    (s = plan_window_layout(spec, &chosen)) != BLOOM_OK)
		return s;
	memset(h, 0, sizeof *h);
	h->version = FORMAT_V2;
	h->header_size = V2_HEADER_SIZE;
	h->layout = chosen.layout;
	h->hash_id = HASH_XXH3_64;
	h->seed = spec->seed;
	h->mode = spec->mode;
	h->capacity = spec->first.capacity;
	h->target_fpr = spec->first.target_fpr;
	h->created_ms = spec->created_ms;
	switch (spec->mode) {
	case MODE_FIXED:
		h->slots = 1;
		break;
	case MODE_GROW:
		h->slots = SEGMENTS_MAX;
		h->growth = spec->growth;
		h->ratio = GROW_TIGHTENING;
		break;
	case MODE_WINDOW:
		h->slots = spec->generations;
		h->window_ms = spec->window_ms;
		h->max_bytes = spec->max_bytes;
		h->flags = spec->flags;
		break;
	}
	h->data_offset = format_data_offset(h->slots);
	made = spec->mode == MODE_GROW ? 1 : h->slots;
	offset = h->data_offset;
	for (i = 0; i < made; i++) {
		if (spec->mode == MODE_FIXED) {
			h->seg[0].nblocks = spec->first.nblocks;
			h->seg[0].hashes = spec->first.hashes;
			h->seg[0].capacity = spec->first.capacity;
			h->seg[0].target_fpr = spec->first.target_fpr;
			h->seg[0].offset = offset;
		} else if (plan_shares_array(h, i)) {
			/* The generations share the first one's array, which
			 * takes a search over k to size. */
			h->seg[i] = h->seg[0];
		} else if ((s = plan_segment(h, i, offset, &h->seg[i])) !=
		    BLOOM_OK)
			return s;
		h->seg[i].stamp = spec->mode == MODE_WINDOW ?
		    (i == 0 ? 1 : 0) : h->created_ms;
		h->file_size = format_segment_end(&h->seg[i]);
		offset = format_next_offset(&h->seg[i]);
	}
	h->nsegments = made;
	return BLOOM_OK;
}

/* ==== Folding: a filter made smaller by a factor ==== */

/* Returns the most keys nblocks blocks of hashes bits a key hold at rate
 * fpr or below, at least 1 (a capacity is never 0). */
static uint64_t
capacity_at(uint64_t nblocks, unsigned hashes, double fpr)
{
	uint64_t lo = 0, hi = nblocks * BLOCK_BITS, mid;

	/* params_fpr grows with the keys: the last count within fpr. */
	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (params_fpr(mid, nblocks, hashes) <= fpr)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo == 0 ? 1 : lo;
}

/* Returns the largest factor d of nblocks for which nblocks / d blocks
 * hold keys keys (at least 1) at rate fpr or below; 1 if none does. */
static uint64_t
largest_fold(uint64_t nblocks, unsigned hashes, double fpr, uint64_t keys)
{
	uint64_t d, best = 1;

	if (keys == 0)
		keys = 1;
	/* Each factor d up to the square root pairs with nblocks / d; the
	 * rate only falls as the blocks grow, so the first fit from the
	 * largest factor down is the answer, but the factors come in no
	 * order here: keep the largest that fits. */
	for (d = 1; d <= nblocks / d; d++) {
		if (nblocks % d != 0)
			continue;
		if (d > best && params_fpr(keys, nblocks / d, hashes) <= fpr)
			best = d;
		if (nblocks / d > best &&
		    params_fpr(keys, d, hashes) <= fpr)
			best = nblocks / d;
	}
	return best;
}

/* Returns the most keys a window of an age-partitioned array of ngroups
 * groups holds at h's rate and generations with k hashes, at least 1. */
static uint64_t
apbf_capacity_at(const struct bloom_header *h, uint64_t ngroups, unsigned k)
{
	struct apbf_params a;
	uint64_t lo = 1, hi = ngroups * APBF_GROUP_BITS, mid;

	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (params_apbf_size(mid, h->target_fpr, h->slots, &a) == 0 &&
		    a.hashes == k && a.ngroups <= ngroups)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Returns the largest factor of units units that leaves at least need of
 * them. */
static uint64_t
largest_fold_to(uint64_t units, uint64_t need)
{
	uint64_t d, best = 1;

	for (d = 1; d <= units / d; d++) {
		if (units % d != 0)
			continue;
		if (units / d >= need && d > best)
			best = d;
		if (d >= need && units / d > best)
			best = units / d;
	}
	return best;
}

uint64_t
plan_fold_by(const struct bloom_header *h, unsigned i, uint64_t keys)
{
	const struct segment_info *s = &h->seg[i];
	struct apbf_params a;
	uint64_t all;

	if (!(h->layout == LAYOUT_APBF && i < h->slots))
		return largest_fold(s->nblocks, s->hashes, s->target_fpr, keys);
	/* The array holds the G - 1 generations a reader counts. */
	if (keys == 0)
		keys = 1;
	all = keys > UINT64_MAX / (h->slots - 1) ? UINT64_MAX :
	    keys * (h->slots - 1);
	if (params_apbf_size(all, h->target_fpr, h->slots, &a) == -1 ||
	    a.hashes != s->hashes)
		return 1;
	return largest_fold_to(s->nblocks / APBF_GROUP_BLOCKS, a.ngroups);
}

void
plan_fold(struct bloom_header *h, const uint64_t *by)
{
	unsigned i, gens = h->slots - 1;
	int aged = h->mode == MODE_WINDOW && h->layout == LAYOUT_APBF;

	for (i = 0; i < h->nsegments; i++) {
		h->seg[i].nblocks /= by[i];
		h->seg[i].capacity = aged ? 0 : capacity_at(h->seg[i].nblocks,
		    h->seg[i].hashes, h->seg[i].target_fpr);
	}
	/* A fixed filter's capacity is its one segment's; a growable one's
	 * is its first segment's as made, which sizes the next ones; a
	 * window's, whose share sizes a generation that grows and is what
	 * stats tells, what the folded generations hold. */
	if (h->mode == MODE_FIXED)
		h->capacity = h->seg[0].capacity;
	else if (aged)
		h->capacity = apbf_capacity_at(h, h->seg[0].nblocks /
		    APBF_GROUP_BLOCKS, h->seg[0].hashes);
	else if (h->mode == MODE_WINDOW)
		h->capacity = h->seg[0].capacity > UINT64_MAX / gens ?
		    UINT64_MAX : h->seg[0].capacity * gens;
	for (i = 0; aged && i < h->slots; i++)
		h->seg[i].capacity = h->capacity / gens +
		    (h->capacity % gens != 0);
	/* A slice is the same cut of the folded whole filter: its blocks
	 * are its share of the whole's, both divided by the factor. */
	if (h->slices != 0)
		h->whole_nblocks /= by[0];
}

/* ==== The layout of a window ==== */

int
plan_window_layout(const struct bloom_spec *spec, struct plan_layout *c)
{
	static struct bloom_header h;
	struct bloom_spec alt = *spec;
	int s;

	memset(c, 0, sizeof *c);
	if (spec->layout != 0) {
		c->layout = spec->layout;
		c->reason = PLAN_LAYOUT_GIVEN;
		return BLOOM_OK;
	}
	c->layout = LAYOUT_BLOCKED512;
	alt.layout = LAYOUT_BLOCKED512;
	if ((s = plan_filter(&alt, &h)) != BLOOM_OK)
		return s;
	c->blocked_bytes = h.file_size;
	/* Near 64 generations, and at low rates, few hashes fit in a
	 * group's 64 slots: the array grows to keep the rate, past a file's
	 * bytes if the window is big. */
	c->reason = PLAN_LAYOUT_APBF_NONE;
	alt.layout = LAYOUT_APBF;
	if (plan_filter(&alt, &h) != BLOOM_OK)
		return BLOOM_OK;
	c->reason = PLAN_LAYOUT_APBF_ROOM;
	c->apbf_bytes = h.file_size;
	if ((double)c->apbf_bytes <= PLAN_APBF_DEFAULT_ROOM *
	    (double)c->blocked_bytes) {
		c->layout = LAYOUT_APBF;
		c->reason = PLAN_LAYOUT_APBF_FITS;
	}
	return BLOOM_OK;
}

/* ==== Slices ==== */

void
plan_lay_out(struct bloom_header *h)
{
	uint64_t offset = h->data_offset;
	unsigned i;

	for (i = 0; i < h->nsegments; i++) {
		if (plan_shares_array(h, i))
			offset = h->data_offset;
		h->seg[i].offset = offset;
		h->file_size = format_segment_end(&h->seg[i]);
		offset = format_next_offset(&h->seg[i]);
	}
}

int
plan_shares_array(const struct bloom_header *h, unsigned i)
{
	return i > 0 && layout_of(h, i)->shared;
}

unsigned
plan_unit_blocks(const struct bloom_header *h, unsigned i)
{
	return layout_of(h, i)->unit_blocks;
}

/* Turns h, a slice, into the header of its whole filter: the blocks of
 * the whole, and the keys of all the slices (each was given its share,
 * rounded up, so this may pass the whole's own count by less than one a
 * slice). */
static void
unslice(struct bloom_header *h)
{
	uint64_t capacity = h->capacity;

	capacity = capacity > UINT64_MAX / h->slices ? UINT64_MAX :
	    capacity * h->slices;
	h->seg[0].nblocks = h->whole_nblocks;
	h->capacity = h->seg[0].capacity = capacity;
	h->slice = h->slices = 0;
	h->whole_nblocks = 0;
}

int
plan_slice(struct bloom_header *h, uint32_t slice, uint32_t slices)
{
	if (h->mode != MODE_FIXED)
		return BLOOM_ESLICE_MODE;
	if (h->slices != 0)
		unslice(h);
	if (h->seg[0].nblocks % slices != 0 || h->seg[0].nblocks < slices)
		return BLOOM_ESLICE_DIVIDE;
	/* One slice of one is the whole filter. */
	if (slices > 1) {
		h->slice = slice;
		h->slices = slices;
		h->whole_nblocks = h->seg[0].nblocks;
		h->seg[0].nblocks /= slices;
		/* A slice holds its share of the keys. */
		h->capacity = h->capacity / slices +
		    (h->capacity % slices != 0);
		h->seg[0].capacity = h->capacity;
	}
	plan_lay_out(h);
	return BLOOM_OK;
}

/* ==== Limits ==== */

int
plan_apbf_too_big(const struct bloom_spec *spec, const struct bloom_header *h,
    uint64_t *blocked_bytes)
{
	static struct bloom_header blocked;
	struct bloom_spec alt = *spec;

	alt.layout = LAYOUT_BLOCKED512;
	if (plan_filter(&alt, &blocked) != BLOOM_OK ||
	    h->file_size <= PLAN_APBF_ROOM_MAX * blocked.file_size)
		return 0;
	*blocked_bytes = blocked.file_size;
	return 1;
}
