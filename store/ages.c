/*
 * The generations of an age-partitioned window (LAYOUT_APBF): the sizing
 * of its one array, which slot holds which generation and which count for
 * a reader, and which slots a rotation empties.  segments.c calls these
 * where a window of the blocked layout uses one segment per generation.
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
#include <string.h>

#include "store/ages.h"
#include "store/apbf.h"
#include "store/format.h"
#include "store/handle.h"

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
void
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
uint64_t
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
void
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
