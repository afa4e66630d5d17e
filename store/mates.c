/* SPDX-License-Identifier: ISC
 * The keys of a chunk that add --new tests at once, writes, and only then
 * sets: which of them repeat others of the chunk.  A key whose missing
 * bits the new keys before it in the chunk would have set is no new key,
 * as if the keys had been added one at a time.  Keys in different blocks
 * cannot cover each other's bits, so only the few keys that share a
 * block with another are looked at.
 */
#include <sys/mman.h>

#include <stdlib.h>
#include <string.h>

#include "store/bits.h"
#include "store/kernel.h"
#include "store/mates.h"

/* A key of a chunk that shares a block with another, for
 * mates_chunk.  Its hash travels with it: looked up by key in the
 * chunk's hashes, in the order of blocks, each would be a cache miss of
 * its own (a sorted batch's hashes are tens of MB). */
struct mate {
	uint64_t hash;		/* its hash */
	uint32_t key;		/* its index in the chunk */
	uint32_t bit;		/* what it is sorted by: its block's place
				 * in the run of blocks it lies in, in
				 * 2^MATES_LOG steps */
};

_Static_assert(2 * sizeof(struct mate) <= BLOOM_REPEATS_KEY_BYTES,
    "bloom.h counts what mates_chunk allocates");

/*
 * A bitmap of one bit per key, from its block, finds the few keys of a
 * chunk that share a block with another (the others' bits are alone in
 * their block); those are sorted by block, in file order, and walked
 * block by block, each block's keys in chunk order, each tested against
 * its block and the bits of the keys before it.  The new keys are listed
 * first, without a branch per key (whether a key is new is a coin toss),
 * and the passes after walk that list.
 */
#define MATES_LOG	16	/* log2 of the bits of the bitmap */
#define MATES_MUL	0x9e3779b97f4a7c15ULL	/* 2^64 / the golden ratio:
						 * multiplicative hashing */
#define MATES_WORDS	(((size_t)1 << MATES_LOG) / 64)
#define DROP_BYTES	((uintptr_t)1 << 20)	/* let go of a MiB at a time */
#define PAGE_BYTES	((uintptr_t)4096)	/* a page, or a part of one */
#define MATES_SPAN_MAX	((uint64_t)1 << 24)	/* blocks an exact bitmap
						 * covers, at most: 4 MiB */
#define MATES_AHEAD	16	/* mates whose blocks load ahead of the walk */

static inline uint32_t
mates_bit(uint64_t block)
{
	return (uint32_t)(block * MATES_MUL >> (64 - MATES_LOG));
}

/* Moves the n mates of from into to, in order of the byte of their bit
 * that shift picks, keeping the order of those with the same byte. */
static void
mates_by_byte(const struct mate *from, struct mate *to, size_t n,
    unsigned shift)
{
	size_t count[256] = { 0 }, at, c, i;

	for (i = 0; i < n; i++)
		count[from[i].bit >> shift & 0xff]++;
	for (at = 0, i = 0; i < 256; i++) {
		c = count[i];
		count[i] = at;
		at += c;
	}
	for (i = 0; i < n; i++)
		to[count[from[i].bit >> shift & 0xff]++] = from[i];
}

/*
 * Sorts the n mates, which are in chunk order, by block and then chunk
 * order: by their bit (a radix sort of its two bytes, which keeps the
 * order of equal ones), then by block among equal bits, where two blocks
 * are rarely found (an insertion sort, which costs only what is out of
 * order).  tmp has room for n.
 */
static void
mates_sort(const struct segment *t, struct mate *m, struct mate *tmp,
    size_t n)
{
	struct mate x;
	uint64_t block;
	size_t i, j;

	mates_by_byte(m, tmp, n, 0);
	mates_by_byte(tmp, m, n, 8);
	for (i = 1; i < n; i++) {
		if (m[i - 1].bit != m[i].bit)
			continue;
		x = m[i];
		block = block_index(t, x.hash);
		for (j = i; j > 0 && m[j - 1].bit == x.bit &&
		    block_index(t, m[j - 1].hash) > block; j--)
			m[j] = m[j - 1];
		m[j] = x;
	}
}

/* Sets the bits of the n mates, by which they are sorted, to their
 * blocks' place in the span blocks of segment t from lo on that holds
 * them all: sorted, they are walked in file order, each block read once
 * and the blocks one after another. */
static void
in_file_order(const struct segment *t, struct mate *m, size_t n,
    uint64_t lo, uint64_t span)
{
	unsigned shift = 0;
	size_t i;

	while (shift < 64 && span >> shift > ((uint64_t)1 << MATES_LOG))
		shift++;
	for (i = 0; i < n; i++)
		m[i].bit = (uint32_t)((block_index(t, m[i].hash) - lo) >>
		    shift);
}

/* Where the words of the block of the key with hash h are read: in buf,
 * which holds segment t's blocks from first on, or in the mapping if buf
 * is NULL. */
static inline const uint64_t *
mate_words(const struct segment *t, const unsigned char *buf,
    uint64_t first, uint64_t h)
{
	if (buf == NULL)
		return block_of(t, h);
	return (const uint64_t *)(const void *)(buf + (block_index(t, h) -
	    first) * BLOCK_BYTES);
}

/* Tests the nm mates, in chunk order, each against its block and the
 * bits of the new keys before it in that block, and sets res of the keys
 * these cover to covered.  The mates lie in the span blocks from lo on;
 * they are walked in file order.  The blocks are read from buf, which
 * holds the segment's blocks from first on, or from the mapping if buf is
 * NULL; if sorted (and buf is NULL), letting go of the pages walked.  tmp
 * has room for nm. */
static void
mates_settle(const struct segment *t, const unsigned char *buf,
    uint64_t first, unsigned char *res, unsigned char covered,
    struct mate *m, struct mate *tmp, size_t nm, uint64_t lo,
    uint64_t span, int sorted)
{
	uint64_t mask[BLOCK_BYTES / 8], have[BLOCK_BYTES / 8], missing;
	const uint64_t *words, *last = NULL;
	uintptr_t behind = 0, at = 0;
	size_t i;
	unsigned w;

	in_file_order(t, m, nm, lo, span);
	mates_sort(t, m, tmp, nm);
	for (i = 0; i < nm; i++) {
		/* The blocks are in file order, but too far apart for the
		 * processor to see the pattern. */
		if (i + MATES_AHEAD < nm)
			__builtin_prefetch(mate_words(t, buf, first,
			    m[i + MATES_AHEAD].hash));
		words = bits_key_mask(t, m[i].hash, mask);
		if (words != last)
			memset(have, 0, sizeof have);
		last = words;
		/* A sorted batch's mates are spread over the whole filter:
		 * the pages walked are let go of behind the walk, so that
		 * they do not stay mapped (and resident) all at once. */
		at = (uintptr_t)words & ~(uintptr_t)(PAGE_BYTES - 1);
		if (sorted && (behind == 0 || at < behind))
			behind = at;
		else if (sorted && at - behind >= DROP_BYTES) {
			madvise((void *)behind, at - behind, MADV_DONTNEED);
			behind = at;
		}
		if (buf != NULL)
			words = mate_words(t, buf, first, m[i].hash);
		missing = 0;
		for (w = 0; w < BLOCK_BYTES / 8; w++)
			missing |= mask[w] & ~(have[w] |
			    __atomic_load_n(&words[w], __ATOMIC_RELAXED));
		if (missing == 0)
			res[m[i].key] = covered;
		for (w = 0; w < BLOCK_BYTES / 8; w++)
			have[w] |= mask[w];
	}
	/* Only pages a mate was in, all in the mapping: the last one's. */
	if (behind != 0)
		madvise((void *)behind, at - behind + PAGE_BYTES,
		    MADV_DONTNEED);
}

/* Keeps of the nm mates, in chunk order, those whose block's bit in a
 * bitmap another has too (the others are alone in their block), and
 * returns how many. */
static size_t
mates_sharing(const struct segment *t, struct mate *m, size_t nm)
{
	uint64_t once[MATES_WORDS], twice[MATES_WORDS], x;
	size_t i, j;

	memset(once, 0, sizeof once);
	memset(twice, 0, sizeof twice);
	for (j = 0; j < nm; j++) {
		x = m[j].bit = mates_bit(block_index(t, m[j].hash));
		twice[x >> 6] |= once[x >> 6] & (uint64_t)1 << (x & 63);
		once[x >> 6] |= (uint64_t)1 << (x & 63);
	}
	for (i = j = 0; j < nm; j++) {
		x = m[j].bit;
		m[i] = m[j];
		i += twice[x >> 6] >> (x & 63) & 1;
	}
	return i;
}

/*
 * The reader thread of an add --new runs this on each chunk it pretests,
 * so that mates_chunk need look only at the few keys it marks: the
 * bitmap pass without a branch per key (whether one was found is a coin
 * toss).
 */
void
mates_mark(const struct segment *t, const uint64_t *hashes,
    unsigned char *found, size_t n, unsigned char flag)
{
	uint64_t once[MATES_WORDS], twice[MATES_WORDS], b;
	size_t i;
	uint32_t x;

	memset(once, 0, sizeof once);
	memset(twice, 0, sizeof twice);
	for (i = 0; i < n; i++) {
		x = mates_bit(block_index(t, hashes[i]));
		b = (uint64_t)(found[i] == 0) << (x & 63);
		twice[x >> 6] |= once[x >> 6] & b;
		once[x >> 6] |= b;
	}
	for (i = 0; i < n; i++) {
		x = mates_bit(block_index(t, hashes[i]));
		b = twice[x >> 6] >> (x & 63) & (found[i] == 0);
		found[i] = b ? flag : found[i];
	}
}

int
mates_chunk(const struct segment *t, const uint64_t *hashes,
    unsigned char *isnew, size_t n, const unsigned char *marked,
    unsigned char flag, int sorted)
{
	uint64_t nblocks = bits_extent(t).nblocks;
	struct mate *m;
	size_t i, j, nm = 0;

	/* The keys marked are few: a branch on the mark is well predicted,
	 * one on whether the key is new would not be. */
	if (marked != NULL)
		for (i = 0; i < n; i++)
			nm += marked[i] == flag;
	else
		for (i = 0; i < n; i++)
			nm += isnew[i] == 1;
	if (nm < 2)
		return 0;
	if ((m = malloc(2 * nm * sizeof m[0])) == NULL)
		return -1;
	if (marked != NULL) {
		for (i = j = 0; i < n; i++)
			if (marked[i] == flag && isnew[i] == 1) {
				m[j].hash = hashes[i];
				m[j++].key = (uint32_t)i;
			}
		mates_settle(t, NULL, 0, isnew, 0, m, m + nm, j, 0, nblocks,
		    sorted);
		free(m);
		return 0;
	}
	for (i = j = 0; i < n && j < nm; i++) {
		m[j].hash = hashes[i];
		m[j].key = (uint32_t)i;
		j += isnew[i] == 1;
	}
	mates_settle(t, NULL, 0, isnew, 0, m, m + nm, mates_sharing(t, m, nm),
	    0, nblocks, sorted);
	free(m);
	return 0;
}

/*
 * Keeps of the nm mates, in chunk order, those that share their block
 * with another, exactly: a bitmap of one bit per block of the span
 * blocks from lo on that holds them all, in once, which has room for
 * 2 * (span + 63) / 64 words.  The keys of a sorted pass's window lie in
 * such a run, and are too many for mates_sharing's bitmap, which they
 * would fill (16 keys a bit at 1 M): nearly every key would be sorted
 * and looked up.  Returns how many are kept.
 */
static size_t
mates_sharing_in(const struct segment *t, struct mate *m, size_t nm,
    uint64_t lo, uint64_t span, uint64_t *once)
{
	size_t words = (size_t)((span + 63) / 64), i, j;
	uint64_t *twice = once + words, x;

	memset(once, 0, 2 * words * sizeof once[0]);
	for (j = 0; j < nm; j++) {
		x = block_index(t, m[j].hash) - lo;
		twice[x >> 6] |= once[x >> 6] & (uint64_t)1 << (x & 63);
		once[x >> 6] |= (uint64_t)1 << (x & 63);
	}
	for (i = j = 0; j < nm; j++) {
		x = block_index(t, m[j].hash) - lo;
		m[i] = m[j];
		i += twice[x >> 6] >> (x & 63) & 1;
	}
	return i;
}

/* Makes *scratch, of *size bytes, at least need bytes, keeping what it
 * holds.  Returns 0, or -1 with errno set and *scratch as it was. */
static int
scratch_room(void **scratch, size_t *size, size_t need)
{
	void *p;

	if (*size >= need)
		return 0;
	if ((p = realloc(*scratch, need)) == NULL)
		return -1;
	*scratch = p;
	*size = need;
	return 0;
}

/* Key j of a list: idx[j], or j if idx is NULL. */
#define LISTED(j)	(idx != NULL ? idx[j] : (uint32_t)(j))

int
mates_list(const struct segment *t, const unsigned char *buf,
    uint64_t first, const uint64_t *hashes, const uint32_t *idx, size_t m,
    unsigned char *found, void **scratch, size_t *size)
{
	struct mate *mt;
	size_t j, nm = 0, sharing, words = 0;
	uint64_t lo = UINT64_MAX, hi = 0, block;

	/* The mates, room to sort them, then the bitmap of the span they
	 * lie in: the scratch of the calls before, grown if need be (a
	 * sorted pass calls once per window).  The keys listed are spread
	 * over the batch, each hash and flag a cache miss of its own: they
	 * are read once, loaded ahead. */
	if (scratch_room(scratch, size, 2 * m * sizeof mt[0]) == -1)
		return -1;
	mt = *scratch;
	for (j = 0; j < m; j++) {
		if (j + MATES_AHEAD < m) {
			__builtin_prefetch(&hashes[LISTED(j + MATES_AHEAD)]);
			__builtin_prefetch(&found[LISTED(j + MATES_AHEAD)]);
		}
		mt[nm].hash = hashes[LISTED(j)];
		mt[nm].key = LISTED(j);
		nm += found[LISTED(j)] == 0;
	}
	if (nm < 2)
		return 0;
	for (j = 0; j < nm; j++) {
		block = block_index(t, mt[j].hash);
		lo = block < lo ? block : lo;
		hi = block > hi ? block : hi;
	}
	if (hi - lo < MATES_SPAN_MAX)
		words = (size_t)((hi - lo + 1 + 63) / 64);
	if (words > 0 && scratch_room(scratch, size, 2 * nm * sizeof mt[0] +
	    2 * words * sizeof(uint64_t)) == -1)
		return -1;
	mt = *scratch;
	sharing = words > 0 ? mates_sharing_in(t, mt, nm, lo, hi - lo + 1,
	    (uint64_t *)(void *)(mt + 2 * nm)) : mates_sharing(t, mt, nm);
	mates_settle(t, buf, first, found, 1, mt, mt + nm, sharing, lo,
	    hi - lo + 1, 0);
	return 0;
}
