/*
 * The age-partitioned window layout (LAYOUT_APBF): the kernels that test,
 * add and empty slots over a window's group array.  params.c has the math
 * and why the layout is so; store/segments.c keeps which generation each
 * slot holds and when slots are emptied.
 *
 * A key's group is chosen by multiply-shift of its hash, as a block is.
 * Its bit in slot j is j w + (piece_j w >> 16), piece_j the j-th 16-bit
 * piece of the SplitMix64 sequence seeded with the hash, four to a word:
 * independent of the group and of each other.  Bit i of a group is bit
 * i % 8 of its byte i / 8, so an array reads the same on any host.
 */
#include <string.h>

#include "params.h"
#include "store/apbf.h"
#include "store/kernel.h"

#define GROUP_WORDS	(APBF_GROUP_BITS / 64)	/* words in a group */
#define RAW_MAX		(APBF_SLOTS_MAX / 4)	/* SplitMix64 words a key
						 * draws, at most */
#define AHEAD		32	/* keys whose groups load ahead */

unsigned
apbf_slot_of(uint64_t g, unsigned slots)
{
	unsigned r = (unsigned)(g % slots);

	return r == 0 ? 0 : slots - r;
}

static inline uint64_t *
group_of(const struct apbf_view *v, uint64_t h)
{
	return (uint64_t *)(v->bits + mul_high(h, v->ngroups) *
	    (APBF_GROUP_BITS / 8));
}

static inline void
prefetch_group(const struct apbf_view *v, uint64_t h)
{
	const unsigned char *g = (const unsigned char *)group_of(v, h);

	__builtin_prefetch(g);
	__builtin_prefetch(g + BLOCK_BYTES);
}

/* Draws the SplitMix64 words whose 16-bit pieces place the key's bit in
 * each of the s slots. */
static inline void
draw(uint64_t h, unsigned s, uint64_t raw[RAW_MAX])
{
	uint64_t state = h;
	unsigned i;

	for (i = 0; i < (s + 3) / 4; i++) {
		state += SPLITMIX_GAMMA;
		raw[i] = splitmix(state);
	}
}

/* The offset in the group of the key's bit in slot j. */
static inline unsigned
position(const uint64_t raw[RAW_MAX], unsigned j, unsigned w)
{
	uint64_t piece = (raw[j / 4] >> (16 * (j % 4))) & 0xffff;

	return j * w + (unsigned)((piece * w) >> 16);
}

/* The slots that have the key's bit, as a mask turned to ages (bit a:
 * the slot of age a) and kept to the ages that count. */
static inline uint64_t
matched(const struct apbf_view *v, const uint64_t *grp, uint64_t h)
{
	uint64_t raw[RAW_MAX], m = 0, full;
	unsigned s = v->slots, j, pos;

	draw(h, s, raw);
	for (j = 0; j < s; j++) {
		pos = position(raw, j, v->width);
		m |= ((le64(__atomic_load_n(&grp[pos / 64],
		    __ATOMIC_RELAXED)) >> (pos % 64)) & 1) << j;
	}
	if (v->newest != 0) {
		full = s == 64 ? ~(uint64_t)0 : ((uint64_t)1 << s) - 1;
		m = ((m >> v->newest) | (m << (s - v->newest))) & full;
	}
	return m & v->ages;
}

/* Returns 1 if m has k consecutive bits set. */
static inline int
has_run(uint64_t m, unsigned k)
{
	uint64_t r = m;
	unsigned j;

	for (j = 1; j < k && r != 0; j++)
		r &= m >> j;
	return r != 0;
}

#define LISTED(j)	(idx != NULL ? idx[j] : (uint32_t)(j))

size_t
apbf_test(const struct apbf_view *v, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *found)
{
	size_t j, count = 0;
	uint32_t key;

	for (j = 0; j < m && j < AHEAD; j++)
		prefetch_group(v, hashes[LISTED(j)]);
	for (j = 0; j < m; j++) {
		key = LISTED(j);
		if (j + AHEAD < m)
			prefetch_group(v, hashes[LISTED(j + AHEAD)]);
		if (has_run(matched(v, group_of(v, hashes[key]),
		    hashes[key]), v->hashes)) {
			found[key] = 1;
			count++;
		}
	}
	return count;
}

/* Sets the key's bit in the k newest slots of its group; returns 1 if
 * one was clear. */
static inline int
set_key(const struct apbf_view *v, uint64_t h, int alone)
{
	uint64_t raw[RAW_MAX], *grp = group_of(v, h), bit, word;
	unsigned j, a, pos;
	int fresh = 0;

	draw(h, v->slots, raw);
	for (a = 0, j = v->newest; a < v->hashes; a++) {
		pos = position(raw, j, v->width);
		bit = le64((uint64_t)1 << (pos % 64));
		word = __atomic_load_n(&grp[pos / 64], __ATOMIC_RELAXED);
		if (!(word & bit)) {
			fresh = 1;
			if (alone)
				__atomic_store_n(&grp[pos / 64], word | bit,
				    __ATOMIC_RELAXED);
			else
				__atomic_fetch_or(&grp[pos / 64], bit,
				    __ATOMIC_RELAXED);
		}
		if (++j == v->slots)
			j = 0;
	}
	return fresh;
}

size_t
apbf_add(const struct apbf_view *v, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *isnew, int alone)
{
	size_t j, fresh = 0;
	uint32_t key;

	for (j = 0; j < m && j < AHEAD; j++)
		prefetch_group(v, hashes[LISTED(j)]);
	for (j = 0; j < m; j++) {
		key = LISTED(j);
		if (j + AHEAD < m)
			prefetch_group(v, hashes[LISTED(j + AHEAD)]);
		isnew[key] = (unsigned char)set_key(v, hashes[key], alone);
		fresh += isnew[key];
	}
	return fresh;
}

/* Sets keep to the words of a group with the bits of the slots mask
 * lists cleared, in file byte order. */
static void
keep_mask(const struct apbf_view *v, uint64_t mask,
    uint64_t keep[GROUP_WORDS])
{
	unsigned j, b;

	memset(keep, 0xff, GROUP_WORDS * sizeof keep[0]);
	for (j = 0; j < v->slots; j++)
		if (mask >> j & 1)
			for (b = j * v->width; b < (j + 1) * v->width; b++)
				keep[b / 64] &= ~le64((uint64_t)1 << (b % 64));
}

void
apbf_clear(const struct apbf_view *v, uint64_t mask)
{
	uint64_t keep[GROUP_WORDS], *grp;
	uint64_t g;
	unsigned i;

	if (mask == 0)
		return;
	keep_mask(v, mask, keep);
	for (g = 0; g < v->ngroups; g++) {
		grp = (uint64_t *)(v->bits + g * (APBF_GROUP_BITS / 8));
		for (i = 0; i < GROUP_WORDS; i++)
			if (keep[i] != ~(uint64_t)0)
				__atomic_store_n(&grp[i], grp[i] & keep[i],
				    __ATOMIC_RELAXED);
	}
}

uint64_t
apbf_slot_bits(const struct apbf_view *v, unsigned j)
{
	uint64_t keep[GROUP_WORDS], total = 0, g;
	const uint64_t *grp;
	unsigned i;

	keep_mask(v, (uint64_t)1 << j, keep);
	for (g = 0; g < v->ngroups; g++) {
		grp = (const uint64_t *)(v->bits + g * (APBF_GROUP_BITS / 8));
		for (i = 0; i < GROUP_WORDS; i++)
			total += (uint64_t)__builtin_popcountll(grp[i] &
			    ~keep[i]);
	}
	return total;
}
