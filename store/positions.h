/* SPDX-License-Identifier: ISC */
/* positions.h: where a key's bits are, drawn from its 64-bit hash: the
 * block by multiply-shift and the bits by SplitMix64, for the blocked
 * layout (params.c says why they are independent).  Pure and inline: the
 * product's kernels and bench/layouts use these, and no other copy. */
#ifndef BLOOM_POSITIONS_H
#define BLOOM_POSITIONS_H

#include <stdint.h>

#include "lib/endian.h"

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

#endif
