/* SPDX-License-Identifier: ISC
 * The bit arrays of the segments: the entry points of bits.h, which call
 * through each segment's layout table (layout.h), and the blocked layout
 * (LAYOUT_BLOCKED512, layout_blocked): where a key's bits are, and
 * testing and setting them.  The hot loops of add and check are here.
 *
 * Bit i of a block is bit i % 8 of its byte i / 8, so an array reads the
 * same on any host.  A key's block is chosen by multiply-shift of its
 * hash; its bits inside the block come from the SplitMix64 sequence seeded
 * with the hash.  Every segment of a filter shares the seed.
 */
#include <sys/mman.h>

#include <limits.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "store/bits.h"
#include "store/kernel.h"
#include "store/layout.h"
#include "store/wide.h"

/*
 * Sets the key's bits in block; returns 1 if any was clear.  A key found
 * whole writes nothing.  A new one sets each of its bits with an atomic OR
 * (lock or: the bts that a test of the old bit would compile to is
 * microcoded and several times slower), so that other processes adding at
 * once lose nothing; two processes that add the same new key at the same
 * instant may both call it new.
 */
static inline int
set_bits(uint64_t *block, uint64_t h, unsigned hashes)
{
	if (has_bits(block, h, hashes))
		return 0;
	POSITIONS(h, hashes, __atomic_fetch_or(&block[word], bit,
	    __ATOMIC_RELAXED));
	return 1;
}

_Static_assert(BATCH <= UCHAR_MAX + 1, "batch index fits a byte");

/*
 * Adds a batch of n <= BATCH keys to segment s.  Whether a key is new is a
 * coin toss when half the input repeats, so the batch is tested first
 * without a branch per key, and only the keys that missed a bit are then
 * visited to set theirs.  Each is tested again just before: a key set
 * earlier in the batch may have set its bits (a repeat, or a false
 * positive), and the answers must be those of adding the keys one at a
 * time.
 */
static size_t
add_batch(const struct segment *s, const uint64_t *hashes, size_t n,
    unsigned char *isnew)
{
	unsigned char missed[BATCH];	/* indices of keys that missed */
	size_t i, j, nmissed = 0, fresh = 0;
	unsigned k = s->info.hashes;

	for (i = 0; i < n; i++) {
		isnew[i] = 0;
		missed[nmissed] = (unsigned char)i;
		nmissed += !has_bits(block_of(s, hashes[i]), hashes[i], k);
	}
	for (j = 0; j < nmissed; j++) {
		i = missed[j];
		isnew[i] = (unsigned char)set_bits(block_of(s, hashes[i]),
		    hashes[i], k);
		fresh += isnew[i];
	}
	return fresh;
}

/* Adds the n keys to s in order (layout_blocked.add of them all). */
static size_t
add_all(const struct segment *s, const uint64_t *hashes, size_t n,
    unsigned char *isnew)
{
	size_t i, fresh = 0;

	for (i = 0; i < n; i += BATCH) {
		PREFETCH_BATCH(s, ALL_KEY, i, n);
		fresh += add_batch(s, hashes + i, n - i < BATCH ? n - i : BATCH,
		    isnew + i);
	}
	return fresh;
}

/* Adds the m keys idx lists to s in that order. */
static size_t
add_list(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *isnew)
{
	size_t j, fresh = 0;

	for (j = 0; j < m; j++) {
		if (j % BATCH == 0)
			PREFETCH_BATCH(s, SOME_KEY, j, m);
		isnew[idx[j]] = (unsigned char)set_bits(block_of(s,
		    hashes[idx[j]]), hashes[idx[j]], s->info.hashes);
		fresh += isnew[idx[j]];
	}
	return fresh;
}

const uint64_t *
bits_key_mask(const struct segment *s, uint64_t h,
    uint64_t mask[BLOCK_BYTES / 8])
{
	memset(mask, 0, BLOCK_BYTES);
	POSITIONS(h, s->info.hashes, mask[word] |= bit);
	return block_of(s, h);
}

/* Sets the bits of the m keys that idx lists in segment s, with locked
 * ORs, or if alone with a plain load and store of each word (relaxed
 * atomic ones, which compile to plain moves: this process's reader thread
 * may be testing the same words, bloom.c's pretest). */
static inline void
set_list(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, int alone)
{
	size_t j;

	for (j = 0; j < m; j++) {
		uint64_t *block = block_of(s, hashes[idx[j]]);

		if (j % BATCH == 0)
			PREFETCH_BATCH(s, SOME_KEY, j, m);
		if (alone)
			POSITIONS(hashes[idx[j]], s->info.hashes,
			    __atomic_store_n(&block[word], bit |
			    __atomic_load_n(&block[word], __ATOMIC_RELAXED),
			    __ATOMIC_RELAXED));
		else
			POSITIONS(hashes[idx[j]], s->info.hashes,
			    __atomic_fetch_or(&block[word], bit,
			    __ATOMIC_RELAXED));
	}
}

/* Sets found[i] for keys 0 to n. */
static void
test_all(const struct segment *s, const uint64_t *hashes, size_t n,
    unsigned char *found)
{
	size_t i;

	if (wide_ok()) {
		wide_test(s, hashes, n, found);
		return;
	}
	for (i = 0; i < n; i++) {
		if (i % BATCH == 0)
			PREFETCH_BATCH(s, ALL_KEY, i, n);
		found[i] = (unsigned char)has_bits(block_of(s, hashes[i]),
		    hashes[i], s->info.hashes);
	}
}

/* Sets found[idx[j]] for the m keys idx lists. */
static void
test_list(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *found)
{
	size_t j;

	if (wide_ok()) {
		wide_test_list(s, hashes, idx, m, found);
		return;
	}
	for (j = 0; j < m; j++) {
		if (j % BATCH == 0)
			PREFETCH_BATCH(s, SOME_KEY, j, m);
		found[idx[j]] = (unsigned char)has_bits(block_of(s,
		    hashes[idx[j]]), hashes[idx[j]], s->info.hashes);
	}
}

/* ==== Keys against several segments at once ==== */

/*
 * A window's generations (its burst's extra segments among them) are
 * tested several in a pass over the keys.  A key's bits inside its block
 * do not depend on the segment, so its mask is made once (once per
 * distinct hash count: a count's mask is a prefix of a larger one's
 * positions), and each segment's block is then tested with one AND over
 * its eight words.  The segments that choose blocks alike (a window's
 * generations all do) share the key's block number, found once (an extra
 * segment, larger, has its own).  The blocks of every segment of the pass
 * for the keys MULTI_AHEAD_BLOCKS / nseg ahead are loading meanwhile, so
 * an absent key's misses overlap; a key found in the first segment has had
 * the others' blocks loaded all the same.
 *
 * So which segments share a pass matters: each pass tests only the keys
 * the passes before did not find, and the pages a pass touches matter as
 * much as its blocks (the second level TLB of a core maps 1536 to 3072
 * pages of 4 KiB, 6 to 12 MiB).  Segments of MULTI_ALONE_BYTES or less are
 * tested in passes of MULTI_GROUP_BYTES at most, so that a pass's pages
 * stay mapped.  Larger segments, whose pages soon outnumber the entries,
 * are tested MULTI_PASS_SEGMENTS at a time if they choose blocks alike (a
 * window's generations), the fullest first; else each in its own pass,
 * which measured faster for segments of different sizes (a growable
 * filter's, grown 32 times to 413 MB: 0.237 s against 0.246).  Measured on
 * windows with every generation live (task-clock of check -c of 2 M keys,
 * half absent, and of add --new of a stream half new; bench/windows's
 * inputs): of 31 generations of 13 MiB, one pass took 0.91 and 2.77 s,
 * passes of 2 0.54 and 1.55, passes of 4 0.41 and 1.15; of 31 of 6.7 MiB,
 * a pass per generation 0.73 and 1.10, passes of 4 0.38 and 0.53; of 31 of
 * 3.2 MiB, a pass per generation 0.67 and 0.52, passes of 4 0.31 and 0.26;
 * of 8 of 25 MiB, one pass 0.170 and 1.59, passes of 4 0.140 and 1.18, of
 * 3 0.155 and 1.24; of 8 of 1.5 MiB, passes of 4 MiB (2 generations) 0.130
 * and 0.079, passes of 4 0.097 and 0.072.  Small ones gain from passes of
 * 4 MiB: 31 generations of 0.13 MiB took 0.164 s in one pass against 0.234
 * in passes of 4, and 31 of 0.78 MiB 0.280 s in passes of 4 MiB against
 * 0.650 in one.
 */
#define MULTI_ALONE_BYTES	((uint64_t)1 << 20)	/* largest segment
						 * grouped by size */
#define MULTI_GROUP_BYTES	((uint64_t)4 << 20)	/* bytes of the small
						 * segments a pass tests */
#define MULTI_PASS_SEGMENTS	4	/* larger segments a pass tests, at
					 * most */

/*
 * A key's mask, as block_has reads it: with GCC's vector extensions, four
 * pairs of words, tested a pair at a time (SSE2 on x86-64).  The block is
 * read with plain loads rather than relaxed atomic ones, which cannot be
 * paired: other processes only set bits, and a word read while one is set
 * holds it or not, either of which a test racing that add may answer.
 */
#ifdef __GNUC__
typedef uint64_t lanes __attribute__((vector_size(16)));
#define MASK_LANES	4

/* Returns 1 if block has every bit of mask. */
static inline int
block_has(const unsigned char *block, const lanes mask[MASK_LANES])
{
	lanes w0, w1, w2, w3, missing;

	memcpy(&w0, block, sizeof w0);
	memcpy(&w1, block + 16, sizeof w1);
	memcpy(&w2, block + 32, sizeof w2);
	memcpy(&w3, block + 48, sizeof w3);
	missing = (mask[0] & ~w0) | (mask[1] & ~w1) | (mask[2] & ~w2) |
	    (mask[3] & ~w3);
	return (missing[0] | missing[1]) == 0;
}
#else
typedef uint64_t lanes;
#define MASK_LANES	(BLOCK_BYTES / 8)

static inline int
block_has(const unsigned char *block, const lanes mask[MASK_LANES])
{
	const uint64_t *word = (const uint64_t *)(const void *)block;
	uint64_t missing = 0;
	unsigned i;

	for (i = 0; i < MASK_LANES; i++)
		missing |= mask[i] & ~__atomic_load_n(&word[i],
		    __ATOMIC_RELAXED);
	return missing == 0;
}
#endif

_Static_assert(MASK_LANES * sizeof(lanes) == BLOCK_BYTES,
    "a mask is a block");

/* Sets masks[d] to the bits of the key with hash h for k[d] hashes, for
 * each of the nk >= 1 counts that k lists in increasing order. */
static inline void
key_masks(uint64_t h, const unsigned *k, unsigned nk,
    lanes masks[][MASK_LANES])
{
	uint64_t mask[BLOCK_BYTES / 8] = { 0 };
	unsigned made = 0, d = 0;

	if (nk == 1) {
		POSITIONS(h, k[0], mask[word] |= bit);
		memcpy(masks[0], mask, sizeof mask);
		return;
	}
	POSITIONS(h, k[nk - 1], {
		mask[word] |= bit;
		if (++made == k[d])
			memcpy(masks[d++], mask, sizeof mask);
	});
}

/* Sets the bits of mask in block with plain stores, unless it has them
 * all; returns 1 if it did.  Only for a process that no other sets bits
 * of the block's segment meanwhile. */
static inline int
block_add_alone(unsigned char *block, const lanes mask[MASK_LANES])
{
	lanes w;
	unsigned i;

	if (block_has(block, mask))
		return 0;
	for (i = 0; i < MASK_LANES; i++) {
		memcpy(&w, block + i * sizeof w, sizeof w);
		w |= mask[i];
		memcpy(block + i * sizeof w, &w, sizeof w);
	}
	return 1;
}

#define LISTED(j)	(idx != NULL ? idx[j] : (j))	/* key j of the keys
							 * idx lists, or of all */
#define LISTED_KEY(j)	(hashes[LISTED(j)])

/* Adds the keys idx lists (or 0 to m) to s with plain stores. */
static size_t
add_alone(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *isnew)
{
	lanes mask[1][MASK_LANES];
	unsigned k = s->info.hashes;
	size_t j, key, fresh = 0;

	for (j = 0; j < m; j++) {
		key = LISTED(j);
		if (j % BATCH == 0)
			PREFETCH_BATCH(s, LISTED_KEY, j, m);
		key_masks(hashes[key], &k, 1, mask);
		isnew[key] = (unsigned char)block_add_alone((unsigned char *)
		    block_of(s, hashes[key]), mask[0]);
		fresh += isnew[key];
	}
	return fresh;
}

/* Fills p from the nseg segments seg lists. */
static void
probes_make(struct probes *p, const struct segment *const *seg,
    unsigned nseg)
{
	unsigned char has[HASHES_MAX + 1] = { 0 };
	unsigned i, c;

	p->nseg = nseg;
	p->nshape = p->nk = 0;
	for (i = 0; i < nseg; i++)
		has[seg[i]->info.hashes] = 1;
	for (c = 1; c <= HASHES_MAX; c++)
		if (has[c])
			p->k[p->nk++] = c;
	for (i = 0; i < nseg; i++) {
		p->bits[i] = seg[i]->bits;
		for (c = 0; p->k[c] != seg[i]->info.hashes; c++)
			;
		p->mask[i] = (unsigned char)c;
		for (c = 0; c < p->nshape && (p->whole[c] != seg[i]->whole ||
		    p->lo[c] != seg[i]->lo); c++)
			;
		if (c == p->nshape) {
			p->whole[c] = seg[i]->whole;
			p->lo[c] = seg[i]->lo;
			p->nshape++;
		}
		p->shape[i] = (unsigned char)c;
	}
}

/*
 * Tests the m keys that idx lists, or keys 0 to m if idx is NULL, against
 * p's segments, setting found[key], and if hits is not NULL adding to
 * hits[i] the keys found first in segment i.  With alike (a constant
 * once inlined), all of p's segments share one block choice and one hash
 * count, as a window's generations do: one block number and one mask per
 * key, the mask kept in registers.  Inlined twice, once for each.
 */
#ifdef __GNUC__
__attribute__((always_inline))
#endif
static inline void
test_probes(const struct probes *p, int alike, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *found, size_t *hits)
{
	lanes masks[HASHES_MAX][MASK_LANES];
	size_t off[SEGMENTS_MAX], j, ahead, next = 0;
	unsigned i, nseg = p->nseg, nshape = alike ? 1 : p->nshape;

	ahead = MULTI_AHEAD_BLOCKS / nseg > 0 ? MULTI_AHEAD_BLOCKS / nseg : 1;
	for (j = 0; j < m; j++) {
		size_t key = idx != NULL ? idx[j] : j;
		int has = 0;

		for (; next < m && next <= j + ahead; next++) {
			key_offsets(p, nshape, hashes[idx != NULL ? idx[next] :
			    next], off);
			for (i = 0; i < nseg; i++)
				__builtin_prefetch(p->bits[i] +
				    off[alike ? 0 : p->shape[i]]);
		}
		key_offsets(p, nshape, hashes[key], off);
		key_masks(hashes[key], p->k, alike ? 1 : p->nk, masks);
		for (i = 0; i < nseg && !has; i++)
			has = block_has(p->bits[i] + off[alike ? 0 :
			    p->shape[i]], masks[alike ? 0 : p->mask[i]]);
		found[key] = (unsigned char)has;
		if (hits != NULL && has)
			hits[i - 1]++;
	}
}

size_t
bits_missing(uint32_t *idx, size_t m, const unsigned char *found, int all)
{
	size_t j, left = 0;

	for (j = 0; j < m; j++) {
		idx[left] = all ? (uint32_t)j : idx[j];
		left += !found[idx[left]];
	}
	return left;
}

/* Tests the keys against the g segments seg lists in one pass, as
 * bits_test_segments does; returns how many are left.  One segment alone
 * goes to bits_test, whose bursts of prefetches measured faster there
 * (a 111 MiB segment: 224 samples against 374).  Of two segments or more,
 * adds to hits[i], if hits is not NULL, the keys found first in seg[i]. */
static size_t
test_pass(const struct segment *const *seg, unsigned g,
    const uint64_t *hashes, size_t n, unsigned char *found, uint32_t *idx,
    size_t m, int all, size_t *hits)
{
	struct probes p;
	const uint32_t *list = all ? NULL : idx;
	size_t keys = all ? n : m;

	if (g == 1 && all)
		bits_test(seg[0], hashes, n, found);
	else if (g == 1)
		bits_test_list(seg[0], hashes, idx, m, found);
	else {
		probes_make(&p, seg, g);
		/* A window's generations share their block choice and hash
		 * count, and test fastest with one mask made once a key; the
		 * segments of a growable filter, of several counts, with the
		 * positions drawn once in vector registers where there are
		 * (measured: bench/run's filter grown 32 times, add --new 0.39
		 * s against 0.33). */
		if (p.nshape == 1 && p.nk == 1)
			test_probes(&p, 1, hashes, list, keys, found, hits);
		else if (wide_ok())
			wide_test_probes(&p, hashes, list, keys, found, hits);
		else
			test_probes(&p, 0, hashes, list, keys, found, hits);
	}
	return bits_missing(idx, keys, found, all);
}

/* Tests the m keys that idx lists against the nseg segments in turn, a
 * segment at a time, adding to hits[i] the keys segment i found; returns
 * how many are left. */
static size_t
each_segment(const struct segment *const *seg, unsigned nseg,
    const uint64_t *hashes, unsigned char *found, uint32_t *idx, size_t m,
    size_t *hits)
{
	size_t left;
	unsigned i;

	for (i = 0; i < nseg && m > 0; i++) {
		bits_test_list(seg[i], hashes, idx, m, found);
		left = bits_missing(idx, m, found, 0);
		hits[i] += m - left;
		m = left;
	}
	return m;
}

/*
 * An absent key is tested in every segment, and such keys are faster in
 * one pass (test_pass), each key's bits found once for all the segments;
 * present keys are faster a segment at a time, the likeliest first, most
 * of them found before the last.  Which segments a chunk's keys lie in
 * depends on the input: lines checked in the order they were added lie
 * in the segment that was newest then, not spread as the segments' counts
 * are.  So the first 1 in SAMPLE_SHARE of the keys go in one pass, which
 * counts the keys each segment found first (the fullest first), and the
 * others in one pass if most of those were found nowhere, else a segment
 * at a time, the one that found the most of the sample first.  On the 4
 * segments of 50 M URLs grown by add (bench/growth; the 2-core VM, load
 * 1.2 to 2.1), check -c of 10 M absent lines took 0.64 s of processor
 * time, against 0.72 a segment at a time.  The sample in one pass rather
 * than a segment at a time: on the 3 segments of add's filter of 8 M keys
 * at first, 0.375 s against 0.402 (15 paired runs, load 2.5), and the
 * same time for the 100 M lines (3.03 and 3.04 s against 2.99 and 3.04).
 */
#define SAMPLE_SHARE	8	/* 1 in this many keys is the sample */
#define SAMPLE_MIN	64	/* fewest keys worth a sample */

size_t
bits_test_rest(const struct segment *const *seg, unsigned nseg,
    const uint64_t *hashes, size_t n, unsigned char *found, uint32_t *idx,
    size_t m, int all)
{
	const struct segment *order[SEGMENTS_MAX], *s;
	size_t hits[SEGMENTS_MAX] = { 0 }, sample, left, rest, h;
	unsigned i, j;

	/* One segment has nothing to sample or order: all n keys are then
	 * tested in turn, without a list (a fixed filter's pretest). */
	if (all && nseg == 1) {
		bits_test(seg[0], hashes, n, found);
		return bits_missing(idx, n, found, 1);
	}
	if (all) {
		memset(found, 0, n);
		m = bits_missing(idx, n, found, 1);
	}
	if (nseg < 2 || m < SAMPLE_MIN)
		return each_segment(seg, nseg, hashes, found, idx, m, hits);
	sample = m / SAMPLE_SHARE;
	left = test_pass(seg, nseg, hashes, n, found, idx, sample, 0, hits);
	if (left > sample / 2)
		rest = test_pass(seg, nseg, hashes, n, found, idx + sample,
		    m - sample, 0, NULL);
	else {
		/* The segments by the sample's keys they found, the most
		 * first; of equal counts, in the order given. */
		for (i = 0; i < nseg; i++) {
			s = seg[i];
			h = hits[i];
			for (j = i; j > 0 && hits[j - 1] < h; j--) {
				order[j] = order[j - 1];
				hits[j] = hits[j - 1];
			}
			order[j] = s;
			hits[j] = h;
		}
		rest = each_segment(order, nseg, hashes, found, idx + sample,
		    m - sample, hits);
	}
	memmove(idx + left, idx + sample, rest * sizeof idx[0]);
	return left + rest;
}

int
bits_shared(const struct segment *const *seg, unsigned i)
{
	unsigned j;

	for (j = 0; j < i; j++)
		if (seg[j]->bits == seg[i]->bits &&
		    seg[j]->layout == seg[i]->layout)
			return 1;
	return 0;
}

size_t
bits_test_segments(const struct segment *const *seg, unsigned nseg,
    const uint64_t *hashes, size_t n, unsigned char *found, uint32_t *idx,
    size_t m, int all)
{
	const struct segment *big[SEGMENTS_MAX], *small[SEGMENTS_MAX];
	const struct segment *alone[SEGMENTS_MAX];
	unsigned i, g, nbig = 0, nalone = 0, nsmall = 0;
	uint64_t bytes;

	if (all)
		memset(found, 0, n);
	for (i = 0; i < nseg; i++) {
		/* A segment of another layout goes alone, through its table;
		 * segments that share one array (an age-partitioned window's
		 * generations) once for all of them. */
		if (!seg[i]->layout->probes) {
			if (bits_shared(seg, i))
				continue;
			if (all)
				m = bits_missing(idx, n, found, 1);
			seg[i]->layout->test(seg[i], hashes, idx, m, found);
			m = bits_missing(idx, m, found, 0);
			all = 0;
		} else if (seg[i]->info.nblocks * BLOCK_BYTES <= MULTI_ALONE_BYTES)
			small[nsmall++] = seg[i];
		else if (nbig == 0 || (seg[i]->whole == big[0]->whole &&
		    seg[i]->lo == big[0]->lo &&
		    seg[i]->info.hashes == big[0]->info.hashes))
			big[nbig++] = seg[i];
		else
			alone[nalone++] = seg[i];
	}
	for (i = 0; i < nbig && (all || m > 0); i += g) {
		g = nbig - i < MULTI_PASS_SEGMENTS ? nbig - i :
		    MULTI_PASS_SEGMENTS;
		m = test_pass(big + i, g, hashes, n, found, idx, m, all,
		    NULL);
		all = 0;
	}
	for (i = 0; i < nalone && m > 0; i++)
		m = test_pass(alone + i, 1, hashes, n, found, idx, m, 0,
		    NULL);
	for (i = 0; i < nsmall && (all || m > 0); i += g) {
		bytes = small[i]->info.nblocks * BLOCK_BYTES;
		for (g = 1; i + g < nsmall && bytes + small[i + g]->info.nblocks
		    * BLOCK_BYTES <= MULTI_GROUP_BYTES; g++)
			bytes += small[i + g]->info.nblocks * BLOCK_BYTES;
		m = test_pass(small + i, g, hashes, n, found, idx, m, all,
		    NULL);
		all = 0;
	}
	return all ? bits_missing(idx, n, found, 1) : m;
}

/* ==== The blocked layout's table ==== */

static void
blocked_attach(struct segment *s, const struct bloom_header *h)
{
	(void)s;
	(void)h;
}

static uint64_t
blocked_block(const struct segment *s, uint64_t h)
{
	return block_index(s, h);
}

static void
blocked_test(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *found)
{
	if (idx == NULL)
		test_all(s, hashes, m, found);
	else
		test_list(s, hashes, idx, m, found);
}

static void
blocked_rebase(struct segment *copy, const unsigned char *buf,
    uint64_t first)
{
	copy->bits = (unsigned char *)(uintptr_t)buf;
	copy->lo += first;
}

static size_t
blocked_add(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *isnew, int alone)
{
	if (alone)
		return add_alone(s, hashes, idx, m, isnew);
	if (idx == NULL)
		return add_all(s, hashes, m, isnew);
	return add_list(s, hashes, idx, m, isnew);
}

static void
blocked_set(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, int alone)
{
	set_list(s, hashes, idx, m, alone);
}

/* A key adds what it tests: what an add holds is what a test finds. */
const struct layout layout_blocked = {
	.attach = blocked_attach,
	.block = blocked_block,
	.test = blocked_test,
	.held = blocked_test,
	.rebase = blocked_rebase,
	.add = blocked_add,
	.set = blocked_set,
	.slot_estimate = NULL,
	.array_fpr = NULL,
	.unit_blocks = 1,
	.shared = 0,
	.probes = 1,
	.populate_writes = 0,
};

/* ==== The entry points, through each segment's layout ==== */

uint64_t
bits_block(const struct segment *s, uint64_t h)
{
	return s->layout->block(s, h);
}

bits_block_fn *
bits_block_of(const struct segment *s)
{
	return s->layout->block;
}

void
bits_test(const struct segment *s, const uint64_t *hashes, size_t n,
    unsigned char *found)
{
	s->layout->test(s, hashes, NULL, n, found);
}

void
bits_test_list(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *found)
{
	s->layout->test(s, hashes, idx, m, found);
}

void
bits_test_copy(const struct segment *s, const unsigned char *buf,
    uint64_t first, const uint64_t *hashes, const uint32_t *idx, size_t m,
    unsigned char *found)
{
	struct segment copy = *s;

	s->layout->rebase(&copy, buf, first);
	s->layout->test(&copy, hashes, idx, m, found);
}

unsigned
bits_unit_blocks(const struct segment *s)
{
	return s->layout->unit_blocks;
}

void
bits_held_copy(const struct segment *s, const unsigned char *buf,
    uint64_t first, const uint64_t *hashes, const uint32_t *idx, size_t m,
    unsigned char *held)
{
	struct segment copy = *s;

	s->layout->rebase(&copy, buf, first);
	s->layout->held(&copy, hashes, idx, m, held);
}

size_t
bits_add(const struct segment *s, const uint64_t *hashes, size_t n,
    unsigned char *isnew)
{
	return s->layout->add(s, hashes, NULL, n, isnew, 0);
}

size_t
bits_add_list(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *isnew)
{
	return s->layout->add(s, hashes, idx, m, isnew, 0);
}

size_t
bits_add_alone(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *isnew)
{
	return s->layout->add(s, hashes, idx, m, isnew, 1);
}

void
bits_set_list(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m)
{
	s->layout->set(s, hashes, idx, m, 0);
}

void
bits_set_list_alone(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m)
{
	s->layout->set(s, hashes, idx, m, 1);
}

struct bits_extent
bits_extent(const struct segment *s)
{
	struct bits_extent x;

	x.bits = s->bits;
	x.offset = s->info.offset;
	x.nblocks = s->info.nblocks;
	return x;
}

static inline unsigned
popcount_portable(uint64_t x)
{
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (unsigned)((x * 0x0101010101010101ULL) >> 56);
}

/* Counts the bits of each block into hist; returns the total. */
static inline uint64_t
count_blocks(const uint64_t *word, uint64_t nblocks,
    uint64_t hist[BLOCK_BITS + 1], unsigned (*popcount)(uint64_t))
{
	uint64_t i, total = 0;

	for (i = 0; i < nblocks; i++, word += 8) {
		unsigned c = popcount(word[0]) + popcount(word[1]) +
		    popcount(word[2]) + popcount(word[3]) +
		    popcount(word[4]) + popcount(word[5]) +
		    popcount(word[6]) + popcount(word[7]);

		hist[c]++;
		total += c;
	}
	return total;
}

static uint64_t
count_portable(const uint64_t *word, uint64_t nblocks,
    uint64_t hist[BLOCK_BITS + 1])
{
	return count_blocks(word, nblocks, hist, popcount_portable);
}

/* The same with the x86 POPCNT instruction, where the CPU has it. */
#if defined(__GNUC__) && defined(__x86_64__)
#define HAVE_POPCNT_DISPATCH
__attribute__((target("popcnt"))) static inline unsigned
popcount_popcnt(uint64_t x)
{
	return (unsigned)__builtin_popcountll(x);
}

__attribute__((target("popcnt"))) static uint64_t
count_popcnt(const uint64_t *word, uint64_t nblocks,
    uint64_t hist[BLOCK_BITS + 1])
{
	return count_blocks(word, nblocks, hist, popcount_popcnt);
}
#endif

uint64_t
bits_count(const uint64_t *word, uint64_t nblocks,
    uint64_t hist[BLOCK_BITS + 1])
{
#ifdef HAVE_POPCNT_DISPATCH
	if (__builtin_cpu_supports("popcnt"))
		return count_popcnt(word, nblocks, hist);
#endif
	return count_portable(word, nblocks, hist);
}

uint32_t
bits_slice_of(const struct segment *s, uint64_t h, uint32_t slices)
{
	return (uint32_t)(mul_high(h, s->whole) / (s->whole / slices));
}

void
bits_or(const struct segment *to, const struct segment *from)
{
	uint64_t lo, hi, i, nwords;
	uint64_t *dst;
	const uint64_t *word;

	/* An age-partitioned window's generations share one array: only
	 * the slots the source's readers count are ORed. */
	if (from->apbf.bits != NULL) {
		apbf_or(&to->apbf, &from->apbf);
		return;
	}
	/* The blocks of the whole filter that both hold. */
	lo = to->lo > from->lo ? to->lo : from->lo;
	hi = to->lo + to->info.nblocks < from->lo + from->info.nblocks ?
	    to->lo + to->info.nblocks : from->lo + from->info.nblocks;
	if (lo >= hi)
		return;
	dst = (uint64_t *)(to->bits + (lo - to->lo) * BLOCK_BYTES);
	word = (const uint64_t *)(from->bits + (lo - from->lo) * BLOCK_BYTES);
	nwords = (hi - lo) * (BLOCK_BYTES / 8);
	if (from->map != NULL)
		madvise(from->map, from->map_size, MADV_SEQUENTIAL);
	/* A word writes only where the source has a bit the target lacks:
	 * most words of a sparse or overlapping source cost one compare. */
	for (i = 0; i < nwords; i++) {
		uint64_t w = word[i];

		if ((w & ~__atomic_load_n(&dst[i], __ATOMIC_RELAXED)) != 0)
			__atomic_fetch_or(&dst[i], w, __ATOMIC_RELAXED);
	}
}
