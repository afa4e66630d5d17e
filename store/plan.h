/* SPDX-License-Identifier: ISC */
/* plan.h: interface of plan.c, the one place a filter of every kind is
 * sized: the array of a fixed filter, its slices, the segments of a
 * growable filter, the generations of a window in either layout, and the
 * limits a plan must keep.  Pure: a spec in, a header and segment table
 * out.  Public, as store/format.h is: create, its dry run and the segment
 * list all call it. */
#ifndef BLOOM_PLAN_H
#define BLOOM_PLAN_H

#include <stdint.h>

#include "params.h"
#include "store/format.h"

#define PLAN_DERIVED_FPR_MAX	0.5	/* -s with -n: the rate we accept */
#define PLAN_APBF_ROOM_MAX	3	/* times the blocked layout's room an
					 * age-partitioned window may take */
#define PLAN_APBF_DEFAULT_ROOM	1.75	/* ... and takes by default, at most
					 * (bench/README.md, "the default") */

/* What a v2 create makes: the header fields of the mode, and the first
 * segment's sizing for a fixed filter. */
struct bloom_spec {
	enum filter_mode mode;	/* fixed, grow or window */
	struct params first;	/* fixed: the whole array; grow: the first
				 * segment's capacity and the filter's
				 * rate; window: capacity per window and
				 * the filter's rate */
	double growth;		/* grow: capacity factor F */
	unsigned generations;	/* window: G */
	uint32_t layout;	/* window: LAYOUT_APBF or
				 * LAYOUT_BLOCKED512; 0 for the default,
				 * plan_window_layout's choice */
	uint64_t window_ms;	/* window: length, 0 if rotated by hand */
	uint64_t max_bytes;	/* window: bytes its file may grow to as
				 * generations grow; 0 for no limit */
	uint32_t flags;		/* window: WINDOW_* flags (format.h) */
	uint64_t seed;		/* hash seed */
	uint64_t created_ms;	/* now, in ms since 1970 */
};

/* Why plan_array cannot size a fixed filter. */
enum plan_array_refusal {
	PLAN_ARRAY_OK,
	PLAN_ARRAY_TOO_BIG,	/* past NBLOCKS_MAX blocks */
	PLAN_ARRAY_OVERFULL,	/* SOLVE_FPR: the keys fill the bits */
	PLAN_ARRAY_NO_ROOM,	/* SOLVE_CAPACITY: not one key fits */
	PLAN_ARRAY_RATE_HIGH,	/* SOLVE_FPR: past PLAN_DERIVED_FPR_MAX */
	PLAN_ARRAY_SLICES_TOO_BIG	/* rounded for cut slices, too big */
};

/* Completes p, a fixed filter's array, as params_solve(p, what) does; if
 * cut is not 0, rounds its blocks up to a multiple of cut (and of a count
 * of slices it may later be cut into, when that costs at most 1 %).
 * Returns PLAN_ARRAY_OK or why not. */
enum plan_array_refusal plan_array(struct params *p, enum solve_for what,
    uint32_t cut);

/* Why a window has the layout it has. */
enum plan_layout_reason {
	PLAN_LAYOUT_GIVEN,	/* create --layout */
	PLAN_LAYOUT_APBF_FITS,	/* default: the age-partitioned layout
				 * takes at most PLAN_APBF_DEFAULT_ROOM
				 * times the blocked layout's room */
	PLAN_LAYOUT_APBF_ROOM,	/* default: blocked, the age-partitioned
				 * one would take more */
	PLAN_LAYOUT_APBF_NONE	/* default: blocked, the age-partitioned
				 * one cannot be made (past a file's
				 * bytes: few hashes fit in its groups) */
};

/* The layout a window gets, and why. */
struct plan_layout {
	uint32_t layout;	/* LAYOUT_APBF or LAYOUT_BLOCKED512 */
	enum plan_layout_reason reason;
	uint64_t blocked_bytes;	/* default: the file in each layout, */
	uint64_t apbf_bytes;	/* 0 if it cannot be made */
};

/* Chooses the layout of spec, a window: the one it names, or by default
 * the age-partitioned layout, which tests every generation of a line in
 * two cache lines, wherever it takes at most PLAN_APBF_DEFAULT_ROOM times
 * the blocked layout's room, and the blocked one elsewhere.  Returns
 * BLOOM_OK, or BLOOM_ETOOBIG if the blocked window cannot be made. */
int plan_window_layout(const struct bloom_spec *spec, struct plan_layout *c);

/* Computes the header and segment table that create makes for spec, into
 * h (h->file_size is the file's size).  Returns BLOOM_OK, or BLOOM_ETOOBIG
 * if a segment cannot be made. */
int plan_filter(const struct bloom_spec *spec, struct bloom_header *h);

/* Sizes segment i of a v2 filter whose header fields (mode, capacity,
 * target_fpr, growth, ratio, slots, layout, data_offset) are in h,
 * starting at offset: a growable filter's next segment, a window's
 * generation or extra entry.  Returns BLOOM_OK, or BLOOM_ETOOBIG if it
 * cannot be made. */
int plan_segment(const struct bloom_header *h, unsigned i, uint64_t offset,
    struct segment_info *s);

/* Makes h, the header of a fixed filter, whole or a slice, that of slice
 * slice (< slices) of slices of its whole filter, laid out anew.  Returns
 * BLOOM_OK, BLOOM_ESLICE_MODE or BLOOM_ESLICE_DIVIDE. */
int plan_slice(struct bloom_header *h, uint32_t slice, uint32_t slices);

/* Returns the most slices, of the counts --slices rounds a whole filter
 * for (720720, 5040, 240, ...), that nblocks divide into, or 1: for a
 * message naming the count that does divide. */
uint64_t plan_most_slices(uint64_t nblocks);

/* Lays out h's segments from its data offset on, each on a page; the
 * generations of an age-partitioned window on one. */
void plan_lay_out(struct bloom_header *h);

/* Returns 1 if segment i of a filter with header h lies on segment 0's
 * array: a window's generation after the first, in a layout whose
 * generations share one array (the age-partitioned one); else 0. */
int plan_shares_array(const struct bloom_header *h, unsigned i);

/* Returns the blocks a key's bits span in segment i of a filter with
 * header h, aligned: the unit fold ORs whole (a group of two blocks of
 * the age-partitioned array, else one). */
unsigned plan_unit_blocks(const struct bloom_header *h, unsigned i);

/* Returns the largest factor that segment i of a filter with header h
 * folds by (fold.c) and keeps its target rate with keys keys (at least 1;
 * of a window, those of its fullest generation): a factor of its blocks,
 * or of the age-partitioned array's groups; 1 if none but 1 does. */
uint64_t plan_fold_by(const struct bloom_header *h, unsigned i,
    uint64_t keys);

/* Folds h's segments, segment i by by[i] (which divides its blocks, or
 * its groups): their blocks, their capacities and the filter's, as create
 * would size them (a slice: its whole filter's blocks too, by by[0]). */
void plan_fold(struct bloom_header *h, const uint64_t *by);

/* Returns 1 if h, the age-partitioned window spec plans, takes more than
 * PLAN_APBF_ROOM_MAX times the room of the blocked layout for the same
 * lines and rate, setting *blocked_bytes to that room; else 0. */
int plan_apbf_too_big(const struct bloom_spec *spec,
    const struct bloom_header *h, uint64_t *blocked_bytes);

#endif
