/* SPDX-License-Identifier: ISC */
/* positions.h: where a key's bits are, drawn from its 64-bit hash, the
 * scalar and the vector draws side by side: the block by multiply-shift
 * and the bits by SplitMix64 for the blocked layout, and the group and
 * each slot's bit for the age-partitioned one (params.c says why these
 * are independent).  Pure and inline, for store/'s kernels, tests/kernels
 * and bench/layouts alike: there is no other copy. */
#ifndef BLOOM_POSITIONS_H
#define BLOOM_POSITIONS_H

#include <stdint.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define POSITIONS_WIDE	/* the AVX-512 draws below exist */
#endif

#include "lib/endian.h"
#include "params.h"

/* ==== Multiply-shift and SplitMix64 ==== */

/* Returns the high 64 bits of a * b. */
static inline uint64_t
mul_high(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
	return (uint64_t)(((unsigned __int128)a * b) >> 64);
#else
	uint64_t a_lo = (uint32_t)a, a_hi = a >> 32;
	uint64_t b_lo = (uint32_t)b, b_hi = b >> 32;
	uint64_t mid = (a_lo * b_lo >> 32) + (uint32_t)(a_hi * b_lo) +
	    (uint32_t)(a_lo * b_hi);

	return a_hi * b_hi + (a_hi * b_lo >> 32) + (a_lo * b_hi >> 32) +
	    (mid >> 32);
#endif
}

/* SplitMix64 (Steele, Lea and Flood, 2014): a bijective 64-bit mixer. */
#define SPLITMIX_GAMMA	0x9e3779b97f4a7c15ULL

static inline uint64_t
splitmix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* ==== The blocked layout: a key's bits in its block ==== */

/*
 * The high bits of the key's hash pick its block by multiply-shift.  The
 * bit positions inside the block come from the SplitMix64 sequence seeded
 * with the hash, nine bits each, seven to a word: independent of the block
 * choice and of each other, as params.c assumes.  POSITIONS walks them,
 * running STEP with word (the index of the position's 64-bit word in the
 * block) and bit (its mask, in file byte order); the words are read where
 * they are rather than gathered into a mask, which would cost a trip
 * through memory per key.
 */
#define POSITIONS(h, hashes, STEP) do {					\
	uint64_t state_ = (h);						\
	unsigned left_ = (hashes);					\
									\
	while (left_ > 0) {						\
		uint64_t bits_;						\
		unsigned n_ = left_ < 7 ? left_ : 7;			\
									\
		state_ += SPLITMIX_GAMMA;				\
		bits_ = splitmix(state_);				\
		left_ -= n_;						\
		while (n_-- > 0) {					\
			unsigned word = (unsigned)(bits_ >> 6) & 7;	\
			uint64_t bit = le64((uint64_t)1 << (bits_ & 63)); \
									\
			STEP;						\
			bits_ >>= 9;					\
		}							\
	}								\
} while (0)

/* Returns 1 if all the key's bits are set in block.  Without a branch per
 * bit: whether a bit is set is a coin toss the CPU cannot predict. */
static inline int
has_bits(const uint64_t *block, uint64_t h, unsigned hashes)
{
	uint64_t missing = 0;

	POSITIONS(h, hashes, missing |= bit &
	    ~__atomic_load_n(&block[word], __ATOMIC_RELAXED));
	return missing == 0;
}

#ifdef POSITIONS_WIDE
/* Draws the seven positions of the SplitMix64 output r, a lane each (a
 * variable shift): each one's word of the block and bit in it. */
__attribute__((target("avx512f"))) static inline void
wide_draw(uint64_t r, __m512i *word, __m512i *bit)
{
	const __m512i shift = _mm512_set_epi64(0, 54, 45, 36, 27, 18, 9, 0);
	__m512i pos = _mm512_and_si512(_mm512_srlv_epi64(_mm512_set1_epi64(
	    (long long)r), shift), _mm512_set1_epi64(511));

	*word = _mm512_srli_epi64(pos, 6);
	*bit = _mm512_sllv_epi64(_mm512_set1_epi64(1), _mm512_and_si512(pos,
	    _mm512_set1_epi64(63)));
}

/*
 * has_bits with AVX-512: the seven positions of a SplitMix64 output are
 * drawn in seven lanes at once (wide_draw), each lane picks its word of
 * the block from a register that holds the whole block (a permute), and
 * one test finds the bits missing.  The same positions as
 * POSITIONS, so the same answers; a third of the instructions.
 */
__attribute__((target("avx512f"))) static inline int
has_bits_wide(const uint64_t *block, uint64_t h, unsigned hashes)
{
	__m512i words = _mm512_loadu_si512((const void *)block);
	__m512i word, bit, lack;
	__mmask8 missing = 0;
	uint64_t state = h;
	unsigned left = hashes, n;

	while (left > 0) {
		n = left < 7 ? left : 7;
		state += SPLITMIX_GAMMA;
		wide_draw(splitmix(state), &word, &bit);
		lack = _mm512_andnot_si512(_mm512_permutexvar_epi64(word,
		    words), bit);
		missing |= _mm512_mask_test_epi64_mask((__mmask8)((1u << n) -
		    1), lack, lack);
		left -= n;
	}
	return missing == 0;
}
#endif

/* ==== The age-partitioned layout: a key's bit in each slot ==== *
 *
 * A key's group is chosen by multiply-shift of its hash, as a block is.
 * Its bit in slot j is j w + (piece_j w >> 16), piece_j the j-th 16-bit
 * piece of the SplitMix64 sequence seeded with the hash, four to a word:
 * independent of the group and of each other. */

#define APBF_RAW_MAX	(APBF_SLOTS_MAX / 4)	/* SplitMix64 words a key
						 * draws, at most */

/* Draws the SplitMix64 words whose 16-bit pieces place the key's bit in
 * each of the s slots. */
static inline void
apbf_draw(uint64_t h, unsigned s, uint64_t raw[APBF_RAW_MAX])
{
	uint64_t state = h;
	unsigned i;

	for (i = 0; i < (s + 3) / 4; i++) {
		state += SPLITMIX_GAMMA;
		raw[i] = splitmix(state);
	}
}

/* The offset in the group of the key's bit in slot j of w bits, raw the
 * SplitMix64 word of slot j (word j / 4 of apbf_draw's). */
static inline unsigned
apbf_slot_bit(uint64_t raw, unsigned j, unsigned w)
{
	uint64_t piece = (raw >> (16 * (j % 4))) & 0xffff;

	return j * w + (unsigned)((piece * w) >> 16);
}

/* The offset in the group of the key's bit in slot j. */
static inline unsigned
apbf_position(const uint64_t raw[APBF_RAW_MAX], unsigned j, unsigned w)
{
	return apbf_slot_bit(raw[j / 4], j, w);
}

/* Word d of apbf_draw's, drawn alone: that of slots 4 d to 4 d + 3. */
static inline uint64_t
apbf_draw_one(uint64_t h, unsigned d)
{
	return splitmix(h + SPLITMIX_GAMMA * (d + 1));
}

#ifdef POSITIONS_WIDE
/* Words from to from + 7 of apbf_draw's, a lane each (AVX-512DQ's 64-bit
 * multiply). */
__attribute__((target("avx512f,avx512dq"))) static inline __m512i
apbf_draw_wide(uint64_t h, unsigned from)
{
	const __m512i step = _mm512_set_epi64(8, 7, 6, 5, 4, 3, 2, 1);
	__m512i z = _mm512_add_epi64(_mm512_set1_epi64((long long)h),
	    _mm512_mullo_epi64(_mm512_add_epi64(step, _mm512_set1_epi64(
	    from)), _mm512_set1_epi64((long long)SPLITMIX_GAMMA)));

	z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 30)),
	    _mm512_set1_epi64((long long)0xbf58476d1ce4e5b9ULL));
	z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 27)),
	    _mm512_set1_epi64((long long)0x94d049bb133111ebULL));
	return _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
}

/* The offsets in the group of the key's bits in the 16 slots from first,
 * of w bits, whose 16-bit pieces are the lanes of p: apbf_slot_bit, 16
 * at once. */
__attribute__((target("avx512f"))) static inline __m512i
apbf_positions16(__m256i p, unsigned first, unsigned w)
{
	const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7,
	    6, 5, 4, 3, 2, 1, 0);
	__m512i wv = _mm512_set1_epi32((int)w);

	return _mm512_add_epi32(_mm512_mullo_epi32(_mm512_add_epi32(lane,
	    _mm512_set1_epi32((int)first)), wv), _mm512_srli_epi32(
	    _mm512_mullo_epi32(_mm512_cvtepu16_epi32(p), wv), 16));
}
#endif

#endif
