/*
 * The keys new to the filter within one chunk, each new once.  A chunk is
 * tested whole before any of its bits is set (its lines are written in
 * between), so a line repeated inside it finds the filter without itself:
 * a small hash set of the chunk's new keys, by their hash, calls all but
 * the first copy a repeat.  It is open addressing with linear probing,
 * sized for the chunk's new keys, at most a quarter full when room
 * allows; an entry is the index of a key, the slot its hash's low bits.
 *
 * Whether a key is new is a coin toss when half the input repeats: the
 * new keys are first listed without a branch per key, at the top of the
 * scratch when it has room for both, and the set is filled from the list.
 */
#include <string.h>

#include "stream/repeats.h"

#define EMPTY	UINT32_MAX	/* a slot holding no key */

/* Puts key i in the set of slots (a power of two) unless a key with its
 * hash is there; returns 1 if it was, else 0. */
static inline int
seen(const uint64_t *hashes, uint32_t *table, size_t mask, uint32_t i)
{
	size_t at;

	for (at = hashes[i] & mask; table[at] != EMPTY; at = (at + 1) & mask)
		if (hashes[table[at]] == hashes[i])
			return 1;
	table[at] = i;
	return 0;
}

void
repeats_once(const uint64_t *hashes, unsigned char *isnew, size_t n,
    uint32_t *table, size_t entries)
{
	size_t i, j, fresh = 0, slots = 1, room;
	uint32_t *list;

	for (i = 0; i < n; i++)
		fresh += isnew[i] == 1;
	if (fresh < 2)
		return;
	/* Room for the list above the set, if the scratch has it. */
	room = entries - fresh >= 2 * fresh ? entries - fresh : entries;
	/* The largest power of two within room is more than fresh. */
	while (slots < 4 * fresh && slots * 2 <= room)
		slots *= 2;
	memset(table, 0xff, slots * sizeof table[0]);
	if (room == entries) {
		for (i = 0; i < n; i++)
			if (isnew[i] == 1 && seen(hashes, table, slots - 1,
			    (uint32_t)i))
				isnew[i] = 0;
		return;
	}
	list = table + entries - fresh;
	for (i = j = 0; i < n && j < fresh; i++) {
		list[j] = (uint32_t)i;
		j += isnew[i] == 1;
	}
	for (j = 0; j < fresh; j++)
		if (seen(hashes, table, slots - 1, list[j]))
			isnew[list[j]] = 0;
}
