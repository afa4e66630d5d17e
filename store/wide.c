/* SPDX-License-Identifier: ISC
 * The tests of store/bits.c with AVX-512, for processors that have it
 * (wide_ok): the same positions, so the same answers, in fewer
 * instructions.  tests/kernels checks them against the scalar test.
 */
#include <stddef.h>
#include <stdint.h>

#include "store/kernel.h"
#include "store/wide.h"

#ifdef POSITIONS_WIDE
#define WIDE_TEST	/* AVX-512 kernels, chosen at run time */
#endif

#ifdef WIDE_TEST
/* bits_test with has_bits_wide. */
__attribute__((target("avx512f"))) void
wide_test(const struct segment *s, const uint64_t *hashes, size_t n,
    unsigned char *found)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (i % BATCH == 0)
			PREFETCH_BATCH(s, ALL_KEY, i, n);
		found[i] = (unsigned char)has_bits_wide(block_of(s,
		    hashes[i]), hashes[i], s->info.hashes);
	}
}

/* bits_test_list with has_bits_wide. */
__attribute__((target("avx512f"))) size_t
wide_test_list(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *found)
{
	size_t j, count = 0;

	for (j = 0; j < m; j++) {
		if (j % BATCH == 0)
			PREFETCH_BATCH(s, SOME_KEY, j, m);
		found[idx[j]] = (unsigned char)has_bits_wide(block_of(s,
		    hashes[idx[j]]), hashes[idx[j]], s->info.hashes);
		count += found[idx[j]];
	}
	return count;
}

#define WIDE_DRAWS	((HASHES_MAX + 6) / 7)	/* SplitMix64 outputs a
						 * key's positions take */

/* A key's positions as wide_has reads them: for each output of its
 * SplitMix64 sequence, each lane's word of the block and bit in it. */
struct wide_positions {
	__m512i word[WIDE_DRAWS];
	__m512i bit[WIDE_DRAWS];
};

/* Draws the first hashes positions of the key with hash h, seven lanes
 * at a time, as has_bits_wide does. */
__attribute__((target("avx512f"))) static inline void
wide_positions(uint64_t h, unsigned hashes, struct wide_positions *w)
{
	uint64_t state = h;
	unsigned d;

	for (d = 0; d < (hashes + 6) / 7; d++) {
		state += SPLITMIX_GAMMA;
		wide_draw(splitmix(state), &w->word[d], &w->bit[d]);
	}
}

/* Returns 1 if block has the first hashes of the positions w holds. */
__attribute__((target("avx512f"))) static inline int
wide_has(const unsigned char *block, const struct wide_positions *w,
    unsigned hashes)
{
	__m512i words = _mm512_loadu_si512((const void *)block), lack;
	__mmask8 missing = 0;
	unsigned d, n;

	for (d = 0; hashes > 0; d++, hashes -= n) {
		n = hashes < 7 ? hashes : 7;
		lack = _mm512_andnot_si512(_mm512_permutexvar_epi64(
		    w->word[d], words), w->bit[d]);
		missing |= _mm512_mask_test_epi64_mask((__mmask8)((1u << n) -
		    1), lack, lack);
	}
	return missing == 0;
}

/* test_probes (bits.c) for segments of several hash counts: each key's
 * positions drawn once, and each block tested against as many of them
 * as its segment's count. */
__attribute__((target("avx512f"))) void
wide_test_probes(const struct probes *p, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *found, size_t *hits)
{
	struct wide_positions w;
	size_t off[SEGMENTS_MAX], j, ahead, next = 0;
	unsigned i, nseg = p->nseg, kmax = p->k[p->nk - 1];

	ahead = MULTI_AHEAD_BLOCKS / nseg > 0 ? MULTI_AHEAD_BLOCKS / nseg : 1;
	for (j = 0; j < m; j++) {
		size_t key = idx != NULL ? idx[j] : j;
		int has = 0;

		for (; next < m && next <= j + ahead; next++) {
			key_offsets(p, p->nshape, hashes[idx != NULL ?
			    idx[next] : next], off);
			for (i = 0; i < nseg; i++)
				__builtin_prefetch(p->bits[i] +
				    off[p->shape[i]]);
		}
		key_offsets(p, p->nshape, hashes[key], off);
		wide_positions(hashes[key], kmax, &w);
		for (i = 0; i < nseg && !has; i++)
			has = wide_has(p->bits[i] + off[p->shape[i]], &w,
			    p->k[p->mask[i]]);
		found[key] = (unsigned char)has;
		if (hits != NULL && has)
			hits[i - 1]++;
	}
}

int
wide_ok(void)
{
	return __builtin_cpu_supports("avx512f");
}

#else

/* Without AVX-512 in the compiler, the scalar tests of bits.c run. */
int
wide_ok(void)
{
	return 0;
}

void
wide_test(const struct segment *s, const uint64_t *hashes, size_t n,
    unsigned char *found)
{
	(void)s, (void)hashes, (void)n, (void)found;
}

size_t
wide_test_list(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *found)
{
	(void)s, (void)hashes, (void)idx, (void)m, (void)found;
	return 0;
}

void
wide_test_probes(const struct probes *p, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *found, size_t *hits)
{
	(void)p, (void)hashes, (void)idx, (void)m, (void)found, (void)hits;
}
#endif
