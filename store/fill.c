/* SPDX-License-Identifier: ISC
 * The fill of a segment, which stats and merge read: its bits counted
 * block by block, the holes of a sparse file counted as zero bits without
 * reading them; and the fill of one generation's slot of an
 * age-partitioned window.
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

uint64_t
fill_slot(struct bloom *b, unsigned i, uint64_t *slot_bits)
{
	const struct segment *s = &b->seg[i];
	uint64_t stamp;

	*slot_bits = 0;
	if (s->layout->slot_fill == NULL || s->stamp == NULL)
		return 0;
	stamp = format_word_load(s->stamp);
	if (stamp != 0 && !b->sparse && !b->prefaulted &&
	    memory_fits(s->map_size))
		segments_prefault(b);
	return s->layout->slot_fill(s, stamp, slot_bits);
}
