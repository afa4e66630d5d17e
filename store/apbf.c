/* SPDX-License-Identifier: ISC
 * The age-partitioned window layout (LAYOUT_APBF): the kernels that test,
 * add and empty slots over a window's group array.  params.c has the math
 * and why the layout is so; store/ages.c keeps which generation each slot
 * holds, which count for a reader, and when slots are emptied.
 *
 * Where a key's bits are is store/positions.h's.  Bit i of a group is bit
 * i % 8 of its byte i / 8, so an array reads the same on any host.
 */
#include <string.h>

#include "params.h"
#include "store/apbf.h"
#include "store/positions.h"

#ifdef POSITIONS_WIDE
#define APBF_WIDE	/* AVX-512 test, chosen at run time */
#endif

#define GROUP_WORDS	(APBF_GROUP_BITS / 64)	/* words in a group */
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

/* Starts loading the blocks of the key with hash h that blocks lists.  A
 * macro: GCC drops the calls of a function that only prefetches (as
 * store/kernel.h says), and did here. */
#define PREFETCH_BLOCKS(v, h, blocks) do {				\
	const unsigned char *g_ = (const unsigned char *)group_of((v), (h)); \
									\
	if ((blocks) & 1)						\
		__builtin_prefetch(g_);					\
	if ((blocks) & 2)						\
		__builtin_prefetch(g_ + BLOCK_BYTES);			\
} while (0)

/* Turns m, bit j for slot j, to ages (bit a for the slot of age a) and
 * keeps the ages that count. */
static inline uint64_t
to_ages(const struct apbf_view *v, uint64_t m)
{
	unsigned s = v->slots;
	uint64_t full = s == 64 ? ~(uint64_t)0 : ((uint64_t)1 << s) - 1;

	m &= full;
	if (v->newest != 0)
		m = ((m >> v->newest) | (m << (s - v->newest))) & full;
	return m & v->ages;
}

/* The slots that have the key's bit, as a mask turned to ages (bit a:
 * the slot of age a) and kept to the ages that count. */
static inline uint64_t
matched(const struct apbf_view *v, const uint64_t *grp, uint64_t h)
{
	uint64_t raw[APBF_RAW_MAX], m = 0;
	unsigned s = v->slots, j, pos;

	apbf_draw(h, s, raw);
	for (j = 0; j < s; j++) {
		pos = apbf_position(raw, j, v->width);
		m |= ((le64(__atomic_load_n(&grp[pos / 64],
		    __ATOMIC_RELAXED)) >> (pos % 64)) & 1) << j;
	}
	return to_ages(v, m);
}

/* Returns 1 if m has k consecutive bits set: r keeps the bits that start
 * a run of len, len doubling, then of k; no branch that depends on m. */
static inline int
has_run(uint64_t m, unsigned k)
{
	uint64_t r = m;
	unsigned len = 1;

	while (2 * len <= k) {
		r &= r >> len;
		len *= 2;
	}
	if (len < k)
		r &= r >> (k - len);
	return r != 0;
}

#define LISTED(j)	(idx != NULL ? idx[j] : (uint32_t)(j))

/*
 * The loop of apbf_test over the m keys idx lists (or all m), with the
 * slots' bits read by MATCHED (matched or matched_wide): found[key] set
 * to 1 for those present, else 0, count raised by as many.  A macro, so that each
 * kernel is compiled in its own function for its own instructions.
 */
#define TEST_LIST(MATCHED) do {						\
	size_t j_;							\
	uint32_t key_;							\
	int hit_;							\
									\
	for (j_ = 0; j_ < m && j_ < AHEAD; j_++)			\
		PREFETCH_BLOCKS(v, hashes[LISTED(j_)], 3);		\
	for (j_ = 0; j_ < m; j_++) {					\
		key_ = LISTED(j_);					\
		if (j_ + AHEAD < m)					\
			PREFETCH_BLOCKS(v, hashes[LISTED(j_ + AHEAD)], 3); \
		hit_ = has_run(MATCHED(v, group_of(v, hashes[key_]),	\
		    hashes[key_]), v->hashes);				\
		found[key_] = (unsigned char)hit_;			\
		count += (size_t)hit_;					\
	}								\
} while (0)

#ifdef APBF_WIDE
/* The slots among 16 whose pieces are in the 16-bit lanes of p that have
 * their bit in the group g0:g1, slot numbers from first. */
__attribute__((target("avx512f"))) static inline uint64_t
sixteen(__m256i p, unsigned first, unsigned w, __m512i g0, __m512i g1)
{
	__m512i pos = apbf_positions16(p, first, w), word;

	word = _mm512_permutex2var_epi32(g0, _mm512_srli_epi32(pos, 5), g1);
	return (uint64_t)_mm512_test_epi32_mask(_mm512_srlv_epi32(word,
	    _mm512_and_si512(pos, _mm512_set1_epi32(31))),
	    _mm512_set1_epi32(1)) << first;
}

/*
 * matched with AVX-512: eight SplitMix64 words drawn in the lanes of one
 * register give 32 pieces of 16 bits, the positions of 32 slots, computed
 * 16 at a time; each lane picks its 32-bit word of the group from the two
 * registers that hold the group (a permute of two sources) and tests its
 * bit.  The same positions as apbf_position(), so the same answers.
 */
__attribute__((target("avx512f,avx512dq"))) static inline uint64_t
matched_wide(const struct apbf_view *v, const uint64_t *grp, uint64_t h)
{
	__m512i g0 = _mm512_loadu_si512((const void *)grp);
	__m512i g1 = _mm512_loadu_si512((const void *)(grp + 8));
	__m512i z;
	uint64_t m = 0;
	unsigned first;

	for (first = 0; first < v->slots; first += 32) {
		z = apbf_draw_wide(h, first / 4);
		m |= sixteen(_mm512_castsi512_si256(z), first, v->width, g0,
		    g1);
		if (first + 16 < v->slots)
			m |= sixteen(_mm512_extracti64x4_epi64(z, 1), first + 16,
			    v->width, g0, g1);
	}
	return to_ages(v, m);
}

__attribute__((target("avx512f,avx512dq"))) static size_t
test_wide(const struct apbf_view *v, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *found)
{
	size_t count = 0;

	TEST_LIST(matched_wide);
	return count;
}

int
apbf_wide_ok(void)
{
	return __builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512dq");
}
#else
int
apbf_wide_ok(void)
{
	return 0;
}
#endif

/* The scalar test (apbf_test), for processors without AVX-512. */
size_t
apbf_test_scalar(const struct apbf_view *v, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *found)
{
	size_t count = 0;

	TEST_LIST(matched);
	return count;
}

size_t
apbf_test(const struct apbf_view *v, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *found)
{
#ifdef APBF_WIDE
	if (apbf_wide_ok())
		return test_wide(v, hashes, idx, m, found);
#endif
	return apbf_test_scalar(v, hashes, idx, m, found);
}

/* Sets pos[j] to the offset in the group of the key's bit in slot j, for
 * the k newest slots, drawing only the SplitMix64 words of those slots. */
static inline void
newest_positions(const struct apbf_view *v, uint64_t h,
    unsigned pos[APBF_SLOTS_MAX])
{
	uint64_t raw = 0;
	unsigned j, a;

	for (a = 0, j = v->newest; a < v->hashes; a++) {
		if (a == 0 || j % 4 == 0)
			raw = apbf_draw_one(h, j / 4);
		pos[j] = apbf_slot_bit(raw, j, v->width);
		if (++j == v->slots)
			j = 0;
	}
}

/* Sets word[a] and bit[a] to where the key's bit is in the slot of age a,
 * for the k newest slots of its group grp, pos[j] its offset in slot j;
 * returns the bits of them that are clear. */
#ifdef __GNUC__
__attribute__((always_inline))	/* into add_wide too: 40 ns a key out of
				 * the caches as a call, 31 inlined */
#endif
static inline uint64_t
newest_bits(const struct apbf_view *v, const uint64_t *grp,
    const unsigned pos[APBF_SLOTS_MAX], unsigned word[APBF_K_MAX],
    uint64_t bit[APBF_K_MAX])
{
	uint64_t clear = 0;
	unsigned j, a;

	for (a = 0, j = v->newest; a < v->hashes; a++) {
		word[a] = pos[j] / 64;
		bit[a] = le64((uint64_t)1 << (pos[j] % 64));
		clear |= bit[a] & ~__atomic_load_n(&grp[word[a]],
		    __ATOMIC_RELAXED);
		if (++j == v->slots)
			j = 0;
	}
	return clear;
}

/* Sets the key's bit in the k newest slots of its group grp, pos[j] its
 * offset in slot j; returns 1 if one was clear.  A key whose bits are all
 * set stores nothing, as the blocked layout's adds: lines seen again in
 * their generation leave a page they alone touch clean (unless the adds
 * were many enough to make every page writable up front).  One branch a
 * key, not one a bit, which cost a mispredict for bits set by chance. */
#ifdef __GNUC__
__attribute__((always_inline))
#endif
static inline int
set_key(const struct apbf_view *v, uint64_t *grp,
    const unsigned pos[APBF_SLOTS_MAX], int alone)
{
	uint64_t bit[APBF_K_MAX];
	unsigned a, word[APBF_K_MAX];

	if (newest_bits(v, grp, pos, word, bit) == 0)
		return 0;
	for (a = 0; a < v->hashes; a++) {
		if (alone)
			__atomic_store_n(&grp[word[a]], __atomic_load_n(
			    &grp[word[a]], __ATOMIC_RELAXED) | bit[a],
			    __ATOMIC_RELAXED);
		else if (!(__atomic_load_n(&grp[word[a]], __ATOMIC_RELAXED) &
		    bit[a]))
			__atomic_fetch_or(&grp[word[a]], bit[a],
			    __ATOMIC_RELAXED);
	}
	return 1;
}

/* The blocks of a group (bit 0 the first, bit 1 the second) that the k
 * newest slots lie in: an add touches only those. */
static unsigned
newest_blocks(const struct apbf_view *v)
{
	unsigned first = v->newest * v->width;
	unsigned last = (v->newest + v->hashes) * v->width - 1;

	if (v->newest + v->hashes > v->slots)
		return 3;
	return (1u << (first / BLOCK_BITS)) | (1u << (last / BLOCK_BITS));
}


/*
 * The loop of apbf_add over the m keys idx lists (or all m): each key's
 * bit set in the k newest slots of its group, its positions found by
 * POSITIONS (newest_positions or all_positions_wide); isnew[key] set if
 * isnew is not NULL, fresh raised by the keys that had a bit clear.  A
 * macro, as TEST_LIST.
 */
#define ADD_LIST(POSITIONS) do {					\
	unsigned blocks_ = newest_blocks(v), pos_[APBF_SLOTS_MAX];	\
	size_t j_;							\
	uint32_t key_;							\
	int new_;							\
									\
	for (j_ = 0; j_ < m && j_ < AHEAD; j_++)			\
		PREFETCH_BLOCKS(v, hashes[LISTED(j_)], blocks_);	\
	for (j_ = 0; j_ < m; j_++) {					\
		key_ = LISTED(j_);					\
		if (j_ + AHEAD < m)					\
			PREFETCH_BLOCKS(v, hashes[LISTED(j_ + AHEAD)],	\
			    blocks_);					\
		POSITIONS(v, hashes[key_], pos_);			\
		new_ = set_key(v, group_of(v, hashes[key_]), pos_, alone); \
		if (isnew != NULL)					\
			isnew[key_] = (unsigned char)new_;		\
		fresh += (size_t)new_;					\
	}								\
} while (0)

static size_t
add_scalar(const struct apbf_view *v, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *isnew, int alone)
{
	size_t fresh = 0;

	ADD_LIST(newest_positions);
	return fresh;
}

#ifdef APBF_WIDE
/*
 * Sets pos[j] to the offset in the group of the key's bit in every slot j
 * (and in slots past the last, up to a multiple of 16): sixteen at a
 * time, as matched_wide draws them, the same as newest_positions finds.
 * The scalar draws and products of the k newest slots were most of an
 * add's time, in the caches or not.
 */
__attribute__((target("avx512f,avx512dq"))) static inline void
all_positions_wide(const struct apbf_view *v, uint64_t h,
    unsigned pos[APBF_SLOTS_MAX])
{
	__m512i z;
	unsigned first;

	for (first = 0; first < v->slots; first += 32) {
		z = apbf_draw_wide(h, first / 4);
		_mm512_storeu_si512((void *)(pos + first), apbf_positions16(
		    _mm512_castsi512_si256(z), first, v->width));
		if (first + 16 < v->slots)
			_mm512_storeu_si512((void *)(pos + first + 16),
			    apbf_positions16(_mm512_extracti64x4_epi64(z, 1),
			    first + 16, v->width));
	}
}

__attribute__((target("avx512f,avx512dq"))) static size_t
add_wide(const struct apbf_view *v, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *isnew, int alone)
{
	size_t fresh = 0;

	ADD_LIST(all_positions_wide);
	return fresh;
}
#endif

/* Also apbf_set's loop, with isnew NULL. */
size_t
apbf_add(const struct apbf_view *v, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *isnew, int alone)
{
#ifdef APBF_WIDE
	if (apbf_wide_ok())
		return add_wide(v, hashes, idx, m, isnew, alone);
#endif
	return add_scalar(v, hashes, idx, m, isnew, alone);
}

void
apbf_held(const struct apbf_view *v, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *held)
{
	uint64_t bit[APBF_K_MAX];
	unsigned word[APBF_K_MAX], pos[APBF_SLOTS_MAX];
	size_t j;
	uint32_t key;

	for (j = 0; j < m; j++) {
		key = LISTED(j);
		newest_positions(v, hashes[key], pos);
		held[key] = newest_bits(v, group_of(v, hashes[key]), pos,
		    word, bit) == 0;
	}
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

void
apbf_or(const struct apbf_view *to, const struct apbf_view *from)
{
	uint64_t take[GROUP_WORDS], *dst, w, mask = 0;
	const uint64_t *src;
	uint64_t g;
	unsigned i;

	/* The slot of age a is newest + a, around the group. */
	for (i = 0; i < from->slots; i++)
		if (from->ages >> i & 1)
			mask |= (uint64_t)1 << (from->newest + i) % from->slots;
	if (mask == 0)
		return;
	keep_mask(from, mask, take);
	for (i = 0; i < GROUP_WORDS; i++)
		take[i] = ~take[i];
	for (g = 0; g < from->ngroups; g++) {
		dst = (uint64_t *)(to->bits + g * (APBF_GROUP_BITS / 8));
		src = (const uint64_t *)(from->bits + g *
		    (APBF_GROUP_BITS / 8));
		/* As bits_or: a word writes only where the source has a bit
		 * the target lacks, atomically, for adders at work. */
		for (i = 0; i < GROUP_WORDS; i++) {
			w = src[i] & take[i];
			if ((w & ~__atomic_load_n(&dst[i], __ATOMIC_RELAXED)) !=
			    0)
				__atomic_fetch_or(&dst[i], w, __ATOMIC_RELAXED);
		}
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

void
apbf_set(const struct apbf_view *v, const uint64_t *hashes,
    const uint32_t *idx, size_t m, int alone)
{
	(void)apbf_add(v, hashes, idx, m, NULL, alone);
}
