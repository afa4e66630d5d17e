/* SPDX-License-Identifier: ISC */
/*
 * The plan of a filter: the one place every kind is sized.  A fixed
 * filter's array from two of its capacity, rate and size, rounded for the
 * slices it may be cut into; the header and segment table create writes
 * for each mode; a growable filter's next segments and a window's
 * generations and extra entries, which the segment list asks for as it
 * grows; a slice of a fixed filter; and the limits a plan must keep.
 * Pure: nothing here opens, maps or prints.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "params.h"
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
	uint64_t offset;
	unsigned i, made;
	int s;

	memset(h, 0, sizeof *h);
	h->version = FORMAT_V2;
	h->header_size = V2_HEADER_SIZE;
	h->layout = spec->mode == MODE_WINDOW && spec->layout == LAYOUT_APBF ?
	    LAYOUT_APBF : LAYOUT_BLOCKED512;
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
		} else if (h->layout == LAYOUT_APBF && i > 0) {
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

/* ==== Slices ==== */

void
plan_lay_out(struct bloom_header *h)
{
	uint64_t offset = h->data_offset;
	unsigned i;

	for (i = 0; i < h->nsegments; i++) {
		if (h->layout == LAYOUT_APBF && i > 0 && i < h->slots)
			offset = h->data_offset;
		h->seg[i].offset = offset;
		h->file_size = format_segment_end(&h->seg[i]);
		offset = format_next_offset(&h->seg[i]);
	}
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
