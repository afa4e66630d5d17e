/* SPDX-License-Identifier: ISC
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
 * scratch when it has room for both.  A bitmap of one bit per key, in the
 * first-level cache, then leaves in the list only the keys whose bit
 * another shares (suspects), and only those go through the set.
 */
#include <string.h>

#include "stream/repeats.h"

#define EMPTY	UINT32_MAX	/* a slot holding no key */
#define PREFILTER_LOG	16	/* log2 of the bits of the prefilter */
#define PREFILTER_BITS	((size_t)1 << PREFILTER_LOG)
#define PREFILTER_KEYS	(PREFILTER_BITS / 8)	/* new keys a chunk may
				 * have for the prefilter to pay */

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

/*
 * Keeps in list only the keys that may repeat: those whose PREFILTER_BITS
 * bit, from their hash's high bits, another key of the list has too.  A
 * chunk of a few thousand new keys keeps a few percent of them, and only
 * those go through the set.  Returns how many are kept, in their order.
 */
static size_t
suspects(const uint64_t *hashes, uint32_t *list, size_t m)
{
	uint64_t once[PREFILTER_BITS / 64], twice[PREFILTER_BITS / 64];
	size_t j, kept = 0;

	memset(once, 0, sizeof once);
	memset(twice, 0, sizeof twice);
	for (j = 0; j < m; j++) {
		uint64_t x = hashes[list[j]] >> (64 - PREFILTER_LOG);
		uint64_t bit = (uint64_t)1 << (x & 63);

		twice[x >> 6] |= once[x >> 6] & bit;
		once[x >> 6] |= bit;
	}
	for (j = 0; j < m; j++) {
		uint64_t x = hashes[list[j]] >> (64 - PREFILTER_LOG);

		list[kept] = list[j];
		kept += (twice[x >> 6] >> (x & 63)) & 1;
	}
	return kept;
}

void
repeats_once(const uint64_t *hashes, unsigned char *isnew, size_t n,
    uint32_t *table, size_t entries)
{
	size_t i, j, fresh = 0, kept, slots = 1;
	uint32_t *list;

	for (i = 0; i < n; i++)
		fresh += isnew[i] == 1;
	if (fresh < 2)
		return;
	if (entries - fresh < 2 * fresh) {
		/* No room for the list: the set, from the keys. */
		while (slots < 4 * fresh && slots * 2 <= entries)
			slots *= 2;
		memset(table, 0xff, slots * sizeof table[0]);
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
	kept = fresh <= PREFILTER_KEYS ? suspects(hashes, list, fresh) : fresh;
	/* The largest power of two within the room below the list is more
	 * than fresh. */
	while (slots < 4 * kept && slots * 2 <= entries - fresh)
		slots *= 2;
	memset(table, 0xff, slots * sizeof table[0]);
	for (j = 0; j < kept; j++)
		if (seen(hashes, table, slots - 1, list[j]))
			isnew[list[j]] = 0;
}
