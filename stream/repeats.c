/*
 * The keys new to the filter within one chunk, each new once.  A chunk is
 * tested whole before any of its bits is set (its lines are written in
 * between), so a line repeated inside it finds the filter without itself:
 * a small hash set of the chunk's new keys, by their hash, calls all but
 * the first copy a repeat.  It is open addressing with linear probing,
 * sized for the chunk's new keys, at most half full when room allows; an
 * entry is the index of a key, the slot its hash's low bits.
 */
#include <string.h>

#include "stream/repeats.h"

#define EMPTY	UINT32_MAX	/* a slot holding no key */

void
repeats_once(const uint64_t *hashes, unsigned char *isnew, size_t n,
    uint32_t *table, size_t entries)
{
	size_t i, fresh = 0, slots = 1, mask, at;

	for (i = 0; i < n; i++)
		fresh += isnew[i] == 1;
	if (fresh < 2)
		return;
	/* The largest power of two within entries is more than fresh. */
	while (slots < 2 * fresh && slots * 2 <= entries)
		slots *= 2;
	mask = slots - 1;
	memset(table, 0xff, slots * sizeof table[0]);
	for (i = 0; i < n; i++) {
		if (isnew[i] != 1)
			continue;
		for (at = hashes[i] & mask; table[at] != EMPTY;
		    at = (at + 1) & mask)
			if (hashes[table[at]] == hashes[i])
				break;
		if (table[at] == EMPTY)
			table[at] = (uint32_t)i;
		else
			isnew[i] = 0;
	}
}
