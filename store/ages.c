/* SPDX-License-Identifier: ISC
 * The generations of an age-partitioned window (LAYOUT_APBF): the sizing
 * of its one array, which slot holds which generation and which count for
 * a reader, and which slots a rotation empties: the window operations of
 * the layout's table (layout.h), which segments.c calls where a window of
 * the blocked layout uses one segment per generation.  The table ends the
 * file, over apbf.c's kernels.
 *
 * Generation g's slot is slot (-g) mod s of every group, so the slot of age
 * a at generation E is (a - E) mod s, and a rotation to E empties one slot
 * and makes it age 0.  An add at E sets ages 0 to k - 1; a key added at t
 * is then found while E - t <= s - k = G - 1, the window's promise kept.
 * Rotation keeps the order of the blocked layout (segments.c, rotate_to):
 * it publishes the new generation, empties the slots, and only then
 * stamps the generations' entries; a reader counts an age younger than G
 * only if its generation's entry is stamped with it, so a slot being
 * emptied, or left unemptied by a process killed, reads as empty, and the
 * next rotation empties it.
 */
#include <math.h>
#include <string.h>

#include "params.h"
#include "store/apbf.h"
#include "store/format.h"
#include "store/handle.h"
#include "store/layout.h"
#include "store/positions.h"

/* The ages that count at generation epoch, the file's newest being
 * file_epoch, given the stamps of the gens generations' entries: those of
 * generations the file has published, stamped whole if younger than gens;
 * ages older than the window's first generation were empty at create. */
static uint64_t
counting_ages(uint64_t epoch, uint64_t file_epoch, unsigned gens,
    unsigned slots, const uint64_t *stamps)
{
	uint64_t ages = 0, g;
	unsigned a;

	for (a = 0; a < slots; a++) {
		if (a <= epoch) {
			g = epoch - a;
			if (g > file_epoch)
				continue;
			if (a < gens && stamps[g % gens] != g + 1)
				continue;
		}
		ages |= (uint64_t)1 << a;
	}
	return ages;
}

/* Sets the view of an age-partitioned window's generations as of the
 * generation now: which slot is the newest, which ages count. */
static void
ages_follow(struct bloom *b, uint64_t file_epoch)
{
	uint64_t stamps[SEGMENTS_MAX];
	struct apbf_view v = b->seg[0].apbf;
	unsigned i;

	for (i = 0; i < b->hdr.slots; i++)
		stamps[i] = format_word_load(b->seg[i].stamp);
	v.newest = apbf_slot_of(b->epoch, v.slots);
	v.ages = counting_ages(b->epoch, file_epoch, b->hdr.slots, v.slots,
	    stamps);
	for (i = 0; i < b->hdr.slots; i++)
		b->seg[i].apbf = v;
}

/* An age-partitioned window: returns the earliest generation among the G
 * before to that a rotation published and did not finish (its entry is
 * not stamped with it), if before start; else start. */
static uint64_t
ages_mend_from(const struct bloom *b, uint64_t start, uint64_t to)
{
	uint64_t e, g = b->hdr.slots;

	for (e = to >= g - 1 ? to - (g - 1) : 0; e < start; e++)
		if (format_word_load(b->seg[e % g].stamp) != e + 1)
			return e;
	return start;
}

/* An age-partitioned window rotating from generation from to to: empties
 * the slots of the generations it enters (those after from, a whole
 * group's at most) and of those from start to from that a rotation left
 * unfinished (not stamped), and the counters of the generations from start
 * on that it empties. */
static void
ages_clear(struct bloom *b, uint64_t start, uint64_t from, uint64_t to)
{
	const struct apbf_view *v = &b->seg[0].apbf;
	uint64_t mask = 0, e, g = b->hdr.slots;
	uint64_t all = v->slots == 64 ? ~(uint64_t)0 :
	    ((uint64_t)1 << v->slots) - 1;
	int stamped = 0;

	/* No generation of the window stamped whole: no line in it is
	 * live, and a rotation killed while it jumped G or more may have
	 * left older slots half emptied; all of them are emptied. */
	for (e = to >= g - 1 ? to - (g - 1) : 0; e <= to && !stamped; e++)
		stamped = format_word_load(b->seg[e % g].stamp) == e + 1;
	for (e = start; e <= to; e++) {
		if (e <= from && format_word_load(b->seg[e % g].stamp) ==
		    e + 1)
			continue;
		mask |= (uint64_t)1 << apbf_slot_of(e, v->slots);
		format_word_store(b->seg[e % g].inserted, 0);
	}
	/* The generations entered before start: no entry of theirs is
	 * left, only their slots. */
	if (to - from >= v->slots || !stamped)
		mask = all;
	else
		for (e = from + 1; e < start; e++)
			mask |= (uint64_t)1 << apbf_slot_of(e, v->slots);
	apbf_clear(v, mask);
}

/* ==== The age-partitioned layout's table (layout.h), over apbf.c's
 * kernels ==== */

/* A generation of window h: the view of its array, which ages.c turns
 * to the generation now at each refresh. */
static void
layout_attach(struct segment *s, const struct bloom_header *h)
{
	memset(&s->apbf, 0, sizeof s->apbf);
	s->apbf.bits = s->bits;
	s->apbf.ngroups = s->info.nblocks / APBF_GROUP_BLOCKS;
	s->apbf.hashes = s->info.hashes;
	s->apbf.slots = s->info.hashes + h->slots - 1;
	s->apbf.width = APBF_GROUP_BITS / s->apbf.slots;
}

static uint64_t
layout_block(const struct segment *s, uint64_t h)
{
	return mul_high(h, s->apbf.ngroups) * APBF_GROUP_BLOCKS;
}

static void
layout_test(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *found)
{
	apbf_test(&s->apbf, hashes, idx, m, found);
}

static void
layout_held(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *held)
{
	apbf_held(&s->apbf, hashes, idx, m, held);
}

/* The view of a copy of the array from block first on, in buf: its
 * groups where the array's would be if buf were its part from first on.
 * Only the groups of the copy are read through it; the address of group
 * 0 is worked out as an integer, without a pointer outside buf, so that
 * a key costs what it costs against the mapping. */
static void
layout_rebase(struct segment *copy, const unsigned char *buf, uint64_t first)
{
	copy->apbf.bits = (unsigned char *)((uintptr_t)buf -
	    (uintptr_t)(first * BLOCK_BYTES));
}

static size_t
layout_add(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *isnew, int alone)
{
	return apbf_add(&s->apbf, hashes, idx, m, isnew, alone);
}

static void
layout_set(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, int alone)
{
	apbf_set(&s->apbf, hashes, idx, m, alone);
}

/*
 * A generation's slot, taken when it began: its bits are one for each key
 * of it and of the k - 1 generations after it, which the fill estimates,
 * slot by slot of w bits in each group, as for a Bloom filter of one
 * hash.
 */
static void
layout_slot_estimate(const struct segment *s, uint64_t stamp,
    struct params_estimate *e)
{
	unsigned w = s->apbf.width;
	uint64_t slot_bits = s->apbf.ngroups * w, set = 0;
	double groups = (double)slot_bits / w;

	if (stamp != 0)
		set = apbf_slot_bits(&s->apbf, apbf_slot_of(stamp - 1,
		    s->apbf.slots));
	e->bits = slot_bits;
	e->bits_set = set;
	e->items = set >= slot_bits ? groups * w * 64.0 :
	    groups * log1p(-(double)set / (double)slot_bits) /
	    log1p(-1.0 / w);
	e->fpr = 0.0;
}

/* The rate of the whole array as if every generation held as many keys
 * as the fullest live one (params.c). */
static double
layout_array_fpr(const struct segment *s, uint64_t most)
{
	return params_apbf_fpr(s->apbf.hashes, s->apbf.slots -
	    s->apbf.hashes + 1, (double)most / (double)s->apbf.ngroups);
}

/* A window's generations are the slots of one array, mapped once by its
 * first and tested once for all; a key's bits span a group of two
 * blocks; an add tests the k newest slots, not the ages a test counts. */
const struct layout layout_apbf = {
	.attach = layout_attach,
	.block = layout_block,
	.test = layout_test,
	.held = layout_held,
	.rebase = layout_rebase,
	.add = layout_add,
	.set = layout_set,
	.slot_estimate = layout_slot_estimate,
	.array_fpr = layout_array_fpr,
	.follow = ages_follow,
	.mend_from = ages_mend_from,
	.clear = ages_clear,
	.unit_blocks = APBF_GROUP_BLOCKS,
	.shared = 1,
	.probes = 0,
	.populate_writes = 1,
};
