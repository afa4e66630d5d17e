/* SPDX-License-Identifier: ISC
 * The fill of a segment, which stats and merge read: its bits counted
 * block by block, the holes of a sparse file counted as zero bits without
 * reading them; and what the fill says, through the segment's layout
 * where its generations share one array (store/layout.h).
 */
#include <string.h>

#include "lib/memory.h"
#include "store/bits.h"
#include "store/fill.h"
#include "store/handle.h"
#include "store/holes.h"
#include "store/layout.h"
#include "store/segments.h"

uint64_t
fill_count(struct bloom *b, unsigned i, uint64_t hist[BLOCK_BITS + 1])
{
	const struct segment *s = &b->seg[i];
	const uint64_t *word = (const uint64_t *)s->bits;
	uint64_t off = s->info.offset, end, from, to, total = 0;

	memset(hist, 0, (BLOCK_BITS + 1) * sizeof hist[0]);
	if (!b->sparse) {
		if (s->map != NULL && memory_fits(s->map_size))
			segments_prefault_one(s);
		else if (s->map == NULL && !b->prefaulted &&
		    memory_fits(b->head_size))
			segments_prefault(b);
		return bits_count(word, s->info.nblocks, hist);
	}
	/* Holes are zero bits: counted, not read.  Their bounds are whole
	 * pages, so whole blocks. */
	end = off + s->info.nblocks * BLOCK_BYTES;
	hist[0] = s->info.nblocks;
	while (holes_next_data(b->fd, off, end, &from, &to)) {
		from -= (from - s->info.offset) % BLOCK_BYTES;
		to += (end - to) % BLOCK_BYTES;
		hist[0] -= (to - from) / BLOCK_BYTES;
		total += bits_count(word + (from - s->info.offset) / 8,
		    (to - from) / BLOCK_BYTES, hist);
		off = to;
	}
	return total;
}

int
fill_estimate(struct bloom *b, unsigned i, struct params_estimate *e)
{
	uint64_t hist[BLOCK_BITS + 1];
	const struct segment *s = &b->seg[i];
	uint64_t stamp;

	memset(e, 0, sizeof *e);
	if (s->layout->slot_estimate != NULL) {
		if (s->stamp == NULL)
			return 1;
		stamp = format_word_load(s->stamp);
		if (stamp != 0 && !b->sparse && !b->prefaulted &&
		    memory_fits(s->map_size))
			segments_prefault(b);
		s->layout->slot_estimate(s, stamp, e);
		return 1;
	}
	e->bits = s->info.nblocks * BLOCK_BITS;
	e->bits_set = fill_count(b, i, hist);
	e->items = params_estimate_items(e->bits_set, s->info.nblocks,
	    s->info.hashes);
	e->fpr = params_fpr_from_hist(hist, s->info.nblocks, s->info.hashes);
	return 0;
}

int
fill_estimate_array(struct bloom *b, uint64_t most,
    struct params_estimate *e)
{
	uint64_t hist[BLOCK_BITS + 1];
	unsigned i;

	memset(e, 0, sizeof *e);
	for (i = 0; i < b->nmapped; i++)
		if (b->seg[i].layout->array_fpr != NULL)
			break;
	if (i == b->nmapped)
		return 0;
	e->bits = b->seg[i].info.nblocks * BLOCK_BITS;
	e->bits_set = fill_count(b, i, hist);
	e->fpr = b->seg[i].layout->array_fpr(&b->seg[i], most);
	return 1;
}
