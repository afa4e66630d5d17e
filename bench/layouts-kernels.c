/* SPDX-License-Identifier: ISC
 * layouts-kernels: the add, test and rotate kernels of the window layouts
 * that bench/layouts measures, over arrays in memory.  Bit i of a 64-bit
 * word is 1 << i in host order; nothing here is written to disk.
 */
#include <immintrin.h>
#include <string.h>

#include "bench/layouts.h"

#define AHEAD_LINES	64		/* lines loading ahead of the key tested */

/* Bytes of one generation's blocks in SEPARATE and INTERLEAVED. */
size_t
gen_bytes(const struct cand *c)
{
	return (size_t)c->ngroups * 64;
}

/* The mask of the key's k positions in a 512-bit block, as the product
 * draws them (store/positions.h), on a little-endian host. */
static inline void
block_mask(uint64_t h, unsigned k, uint64_t m[LINE_WORDS])
{
	unsigned w;

	for (w = 0; w < LINE_WORDS; w++)
		m[w] = 0;
	POSITIONS(h, k, m[word] |= bit);
}

static inline void
block_set(uint64_t *blk, uint64_t h, unsigned k)
{
	uint64_t m[LINE_WORDS];
	unsigned w;

	block_mask(h, k, m);
	for (w = 0; w < LINE_WORDS; w++)
		blk[w] |= m[w];
}

static inline int
mask_in(const uint64_t *blk, const uint64_t m[LINE_WORDS])
{
	uint64_t missing = 0;
	unsigned w;

	for (w = 0; w < LINE_WORDS; w++)
		missing |= m[w] & ~blk[w];
	return missing == 0;
}

/* The word positions of a key in a word of width 64 or 32 bits. */
static inline uint64_t
word_mask(uint64_t h, unsigned k, unsigned width)
{
	uint64_t state = h, b = 0, m = 0;
	unsigned i, shift = width == 64 ? 6 : 5, have = 0;

	for (i = 0; i < k; i++) {
		if (have < shift) {
			state += SPLITMIX_GAMMA;
			b = splitmix(state);
			have = 64;
		}
		m |= (uint64_t)1 << (b & (width - 1));
		b >>= shift;
		have -= shift;
	}
	return m;
}

/* The key's bit in each of the s slots of an APBF group, as the product
 * draws them (store/positions.h): offset in the group of slot j's bit,
 * slot j at bits [j w, j w + w). */
static inline void
apbf_positions(uint64_t h, unsigned s, unsigned w, unsigned pos[POS_MAX])
{
	uint64_t raw[APBF_RAW_MAX];
	unsigned j;

	apbf_draw(h, s, raw);
	for (j = 0; j < s; j++)
		pos[j] = apbf_position(raw, j, w);
}

static inline uint64_t *
group_of(const struct cand *c, uint64_t h)
{
	return c->bits + mul_high(h, c->ngroups) * c->group_lines * LINE_WORDS;
}

/* Ring index of the generation of age a (0 the newest). */
static inline unsigned
ring(const struct cand *c, unsigned a)
{
	unsigned n = c->kind == APBF ? c->slots : c->gens;

	return (c->cur + a) % n;
}

/* The block of generation g in SEPARATE (g-th array) or INTERLEAVED. */
static inline uint64_t *
gen_block(const struct cand *c, unsigned g, uint64_t i)
{
	if (c->kind == INTERLEAVED)
		return c->bits + (i * c->gens + g) * LINE_WORDS;
	return c->bits + ((uint64_t)g * c->ngroups + i) * LINE_WORDS;
}

static inline void
prefetch_key(const struct cand *c, uint64_t h)
{
	uint64_t i = mul_high(h, c->ngroups);
	unsigned g;

	switch (c->kind) {
	case FIXED:
	case WORDS:
	case APBF:
		__builtin_prefetch(group_of(c, h));
		if (c->group_lines == 2)
			__builtin_prefetch(group_of(c, h) + LINE_WORDS);
		break;
	case SEPARATE:
	case SEPARATE_ONE:
	case INTERLEAVED:
		for (g = 0; g < c->gens; g++)
			__builtin_prefetch(gen_block(c, g, i));
		break;
	}
}

/* Keys whose lines load ahead: AHEAD_LINES lines in flight. */
static size_t
ahead(const struct cand *c)
{
	unsigned lines = c->kind == SEPARATE_ONE || c->kind == INTERLEAVED ?
	    c->gens : c->group_lines;
	size_t a = AHEAD_LINES / lines;

	return a < 2 ? 2 : a;
}

/* APBF: the slots whose bit the key has (its positions pos), as a mask
 * of s bits turned to logical order (bit i: the slot of age i). */
static inline uint64_t
apbf_matched(const struct cand *c, const uint64_t *grp,
    const unsigned pos[POS_MAX])
{
	unsigned s = c->slots, j;
	uint64_t m = 0, full = s == 64 ? ~0ULL : ((uint64_t)1 << s) - 1;

	for (j = 0; j < s; j++)
		m |= ((grp[pos[j] >> 6] >> (pos[j] & 63)) & 1) << j;
	if (c->cur != 0)
		m = ((m >> c->cur) | (m << (s - c->cur))) & full;
	return m;
}

static inline int
apbf_run(uint64_t m, unsigned k)
{
	uint64_t r = m;
	unsigned j;

	for (j = 1; j < k; j++)
		r &= m >> j;
	return r != 0;
}

/* APBF: sets the key's bits in the k newest slots. */
static inline void
apbf_set(const struct cand *c, uint64_t *grp, const unsigned pos[POS_MAX])
{
	unsigned j, p = c->cur;

	for (j = 0; j < c->hashes; j++) {
		grp[pos[p] >> 6] |= (uint64_t)1 << (pos[p] & 63);
		if (++p == c->slots)
			p = 0;
	}
}

/* Tests one key in every generation, newest first; 1 if found. */
static inline __attribute__((always_inline)) int
test_key(const struct cand *c, uint64_t h, enum kind kind)
{
	uint64_t m[LINE_WORDS], *grp, i;
	unsigned pos[POS_MAX], g, a, k = c->hashes;

	switch (kind) {
	case FIXED:
		return has_bits(group_of(c, h), h, k);
	case SEPARATE:		/* not used: test_sequential */
	case SEPARATE_ONE:
	case INTERLEAVED:
		block_mask(h, k, m);
		i = mul_high(h, c->ngroups);
		for (a = 0, g = c->cur; a < c->gens; a++) {
			if (mask_in(gen_block(c, g, i), m))
				return 1;
			if (++g == c->gens)
				g = 0;
		}
		return 0;
	case WORDS:
		grp = group_of(c, h);
		m[0] = word_mask(h, k, c->width);
		if (c->width == 64) {
			uint64_t hit = 0;

			for (g = 0; g < c->gens; g++)
				hit |= (grp[g] & m[0]) == m[0];
			return (int)hit;
		} else {
			const uint32_t *w32 = (const uint32_t *)grp;
			uint32_t m32 = (uint32_t)m[0], hit = 0;

			for (g = 0; g < c->gens; g++)
				hit |= (w32[g] & m32) == m32;
			return (int)hit;
		}
	case APBF:
		apbf_positions(h, c->slots, c->width, pos);
		return apbf_run(apbf_matched(c, group_of(c, h), pos), k);
	}
	return 0;
}

/* Sets the key in the newest generation. */
static inline __attribute__((always_inline)) void
set_key(const struct cand *c, uint64_t h, enum kind kind)
{
	uint64_t *grp;
	unsigned pos[POS_MAX], k = c->hashes;

	switch (kind) {
	case FIXED:
		block_set(group_of(c, h), h, k);
		break;
	case SEPARATE:
	case SEPARATE_ONE:
	case INTERLEAVED:
		block_set(gen_block(c, c->cur, mul_high(h, c->ngroups)), h, k);
		break;
	case WORDS:
		grp = group_of(c, h);
		if (c->width == 64)
			grp[c->cur] |= word_mask(h, k, 64);
		else
			((uint32_t *)grp)[c->cur] |=
			    (uint32_t)word_mask(h, k, 32);
		break;
	case APBF:
		grp = group_of(c, h);
		apbf_positions(h, c->slots, c->width, pos);
		apbf_set(c, grp, pos);
		break;
	}
}

/* Today's order: generation after generation, newest first, each a pass
 * over the keys with its blocks loading ahead; a key found is not tested
 * again.  found[] has n entries. */
static size_t
test_sequential(const struct cand *c, const uint64_t *h, size_t n,
    unsigned char *found, int add)
{
	size_t i, hits = 0, ah = AHEAD_LINES;
	unsigned a;

	memset(found, 0, n);
	for (a = 0; a < c->gens; a++) {
		unsigned g = ring(c, a);

		for (i = 0; i < n; i++) {
			if (i + ah < n && !found[i + ah])
				__builtin_prefetch(gen_block(c, g,
				    mul_high(h[i + ah], c->ngroups)));
			if (!found[i] && has_bits(gen_block(c, g,
			    mul_high(h[i], c->ngroups)), h[i], c->hashes))
				found[i] = 1;
		}
	}
	for (i = 0; i < n; i++) {
		hits += found[i];
		if (add && !found[i])
			set_key(c, h[i], c->kind);
	}
	return hits;
}

/* APBF's test, the positions drawn and read in one loop. */
static size_t
apbf_test(const struct cand *c, const uint64_t *h, size_t n)
{
	size_t i, hits = 0, ah = ahead(c);
	unsigned s = c->slots, w = c->width, k = c->hashes, cur = c->cur;
	uint64_t full = s == 64 ? ~0ULL : ((uint64_t)1 << s) - 1;

	for (i = 0; i < n; i++) {
		const uint64_t *grp = group_of(c, h[i]);
		uint64_t raw[APBF_RAW_MAX], m = 0;
		unsigned p, pos;

		if (i + ah < n)
			prefetch_key(c, h[i + ah]);
		apbf_draw(h[i], s, raw);
		for (p = 0; p < s; p++) {
			pos = apbf_position(raw, p, w);
			m |= ((grp[pos >> 6] >> (pos & 63)) & 1) << p;
		}
		if (cur != 0)
			m = ((m >> cur) | (m << (s - cur))) & full;
		hits += (size_t)apbf_run(m, k);
	}
	return hits;
}

/*
 * The end of the vector tests: m, the slots whose bit the key has (bit j:
 * slot j), turned to logical order and searched for a run of k; unless
 * found and if add, the key's bits set in the k newest slots, from raw,
 * the SplitMix64 outputs whose 16-bit pieces are the slots' positions.
 * Returns 1 if found.
 */
static inline int
apbf_found_or_set(const struct cand *c, uint64_t *grp, const uint64_t *raw,
    uint64_t m, int add)
{
	unsigned s = c->slots, cur = c->cur, j, p;
	uint64_t full = s == 64 ? ~0ULL : ((uint64_t)1 << s) - 1;

	m &= full;
	if (cur != 0)
		m = ((m >> cur) | (m << (s - cur))) & full;
	if (apbf_run(m, c->hashes))
		return 1;
	if (add)
		for (j = 0, p = cur; j < c->hashes; j++) {
			unsigned at = apbf_position(raw, p, c->width);

			grp[at >> 6] |= (uint64_t)1 << (at & 63);
			if (++p == s)
				p = 0;
		}
	return 0;
}

/*
 * APBF's test and add --new with AVX2, eight slots at a time: the 16-bit
 * pieces of the SplitMix64 outputs (piece p of the little-endian words is
 * slot p's, as apbf_positions draws them) become positions by a multiply,
 * the line's 32-bit words are picked by a permute within the registers
 * that hold the whole group, and a variable shift brings each slot's bit
 * to a mask.  The same answers as apbf_test, by the same positions.
 */
#define RAW_MAX		((SLOTS_MAX + 7) / 8 * 2)

__attribute__((target("avx2"))) static size_t
apbf_simd(const struct cand *c, const uint64_t *h, size_t n, int add)
{
	size_t i, hits = 0, ah = ahead(c);
	unsigned s = c->slots, p;
	unsigned nraw = (s + 7) / 8 * 2;
	uint32_t base[RAW_MAX * 4] __attribute__((aligned(32)));
	const __m256i wv = _mm256_set1_epi32((int)c->width);
	const __m256i low5 = _mm256_set1_epi32(31);

	for (p = 0; p < RAW_MAX * 4; p++)
		base[p] = p * c->width;
	for (i = 0; i < n; i++) {
		uint64_t *grp = group_of(c, h[i]), m = 0;
		uint64_t raw[RAW_MAX];
		const char *piece = (const char *)raw;
		__m256i w0, w1, w2, w3;

		if (i + ah < n)
			prefetch_key(c, h[i + ah]);
		apbf_draw(h[i], 4 * nraw, raw);
		w0 = _mm256_loadu_si256((const __m256i *)grp);
		w1 = _mm256_loadu_si256((const __m256i *)(grp + 4));
		w2 = w3 = w0;
		if (c->group_lines == 2) {
			w2 = _mm256_loadu_si256((const __m256i *)(grp + 8));
			w3 = _mm256_loadu_si256((const __m256i *)(grp + 12));
		}
		for (p = 0; p < s; p += 8) {
			__m256i pos, idx, v, hi, bit;

			pos = _mm256_cvtepu16_epi32(_mm_loadu_si128(
			    (const __m128i *)(piece + 2 * p)));
			pos = _mm256_add_epi32(_mm256_load_si256(
			    (const __m256i *)(base + p)), _mm256_srli_epi32(
			    _mm256_mullo_epi32(pos, wv), 16));
			idx = _mm256_srli_epi32(pos, 5);
			/* Word idx of the group: bit 3 of idx picks the odd
			 * register of a pair, bit 4 the pair. */
			v = _mm256_castps_si256(_mm256_blendv_ps(
			    _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(w0,
			    idx)), _mm256_castsi256_ps(
			    _mm256_permutevar8x32_epi32(w1, idx)),
			    _mm256_castsi256_ps(_mm256_slli_epi32(idx, 28))));
			if (c->group_lines == 2) {
				hi = _mm256_castps_si256(_mm256_blendv_ps(
				    _mm256_castsi256_ps(
				    _mm256_permutevar8x32_epi32(w2, idx)),
				    _mm256_castsi256_ps(
				    _mm256_permutevar8x32_epi32(w3, idx)),
				    _mm256_castsi256_ps(_mm256_slli_epi32(idx,
				    28))));
				v = _mm256_castps_si256(_mm256_blendv_ps(
				    _mm256_castsi256_ps(v), _mm256_castsi256_ps(hi),
				    _mm256_castsi256_ps(_mm256_slli_epi32(idx,
				    27))));
			}
			bit = _mm256_slli_epi32(_mm256_srlv_epi32(v,
			    _mm256_and_si256(pos, low5)), 31);
			m |= (uint64_t)(unsigned)_mm256_movemask_ps(
			    _mm256_castsi256_ps(bit)) << p;
		}
		if (apbf_found_or_set(c, grp, raw, m, add))
			hits++;
	}
	return hits;
}

/*
 * APBF's test and add --new with AVX-512, for groups of two lines: the
 * SplitMix64 outputs of a key are drawn eight at a time (a vector
 * multiply), their 16-bit pieces become sixteen slots' positions at a
 * time, each picks its 32-bit word from the 32 of the group held in two
 * registers (one two-source permute), and one test makes sixteen bits of
 * the mask.  The same positions as apbf_positions, so the same answers.
 */
__attribute__((target("avx512f,avx512dq,avx512bw"))) static size_t
apbf_wide(const struct cand *c, const uint64_t *h, size_t n, int add)
{
	size_t i, hits = 0, ah = ahead(c);
	unsigned s = c->slots, j, q;
	unsigned nq = (s + 15) / 16, nv = (s + 31) / 32;
	const __m512i low5 = _mm512_set1_epi32(31), one = _mm512_set1_epi32(1);

	for (i = 0; i < n; i++) {
		uint64_t *grp = group_of(c, h[i]), m = 0;
		uint64_t raw[SLOTS_MAX / 4] __attribute__((aligned(64)));
		__m512i lo = _mm512_loadu_si512((const void *)grp);
		__m512i hi = _mm512_loadu_si512((const void *)(grp + 8));

		if (i + ah < n)
			prefetch_key(c, h[i + ah]);
		for (j = 0; j < nv; j++)
			_mm512_store_si512((void *)(raw + 8 * j),
			    apbf_draw_wide(h[i], 8 * j));
		for (q = 0; q < nq; q++) {
			__m512i pos = apbf_positions16(_mm256_load_si256(
			    (const __m256i *)(raw + 4 * q)), 16 * q, c->width);

			m |= (uint64_t)_mm512_test_epi32_mask(
			    _mm512_permutex2var_epi32(lo, _mm512_srli_epi32(pos,
			    5), hi), _mm512_sllv_epi32(one, _mm512_and_si512(pos,
			    low5))) << (16 * q);
		}
		if (apbf_found_or_set(c, grp, raw, m, add))
			hits++;
	}
	return hits;
}

/* The fixed filter's test with AVX-512, the product's (has_bits_wide,
 * store/positions.h); add --new sets the bits of a key not found with the
 * scalar block_set. */
__attribute__((target("avx512f"))) static size_t
fixed_wide(const struct cand *c, const uint64_t *h, size_t n, int add)
{
	size_t i, hits = 0, ah = ahead(c);

	for (i = 0; i < n; i++) {
		uint64_t *blk = group_of(c, h[i]);

		if (i + ah < n)
			prefetch_key(c, h[i + ah]);
		if (has_bits_wide(blk, h[i], c->hashes))
			hits++;
		else if (add)
			block_set(blk, h[i], c->hashes);
	}
	return hits;
}

/* The loop of test (add 0) and add --new (add 1) for the kinds without
 * their own, made once per kind so that each is compiled for its kind. */
static inline __attribute__((always_inline)) size_t
keys_loop(const struct cand *c, const uint64_t *h, size_t n, int add,
    enum kind kind)
{
	size_t i, hits = 0, ah = ahead(c);

	for (i = 0; i < n; i++) {
		int f;

		if (i + ah < n)
			prefetch_key(c, h[i + ah]);
		f = test_key(c, h[i], kind);
		hits += (size_t)f;
		if (add && !f)
			set_key(c, h[i], kind);
	}
	return hits;
}

static __attribute__((noinline, noclone)) size_t
keys_fixed(const struct cand *c, const uint64_t *h, size_t n, int add)
{
	return keys_loop(c, h, n, add, FIXED);
}

static __attribute__((noinline, noclone)) size_t
keys_one_pass(const struct cand *c, const uint64_t *h, size_t n, int add)
{
	return keys_loop(c, h, n, add, SEPARATE_ONE);
}

static __attribute__((noinline, noclone)) size_t
keys_interleaved(const struct cand *c, const uint64_t *h, size_t n, int add)
{
	return keys_loop(c, h, n, add, INTERLEAVED);
}

static __attribute__((noinline, noclone)) size_t
keys_words(const struct cand *c, const uint64_t *h, size_t n, int add)
{
	return keys_loop(c, h, n, add, WORDS);
}

/* APBF's add --new: the positions drawn once for the test and the set. */
static size_t
apbf_add(const struct cand *c, const uint64_t *h, size_t n)
{
	size_t i, hits = 0, ah = ahead(c);
	unsigned pos[POS_MAX];

	for (i = 0; i < n; i++) {
		uint64_t *grp = group_of(c, h[i]);
		int f;

		if (i + ah < n)
			prefetch_key(c, h[i + ah]);
		apbf_positions(h[i], c->slots, c->width, pos);
		f = apbf_run(apbf_matched(c, grp, pos), c->hashes);
		hits += (size_t)f;
		if (!f)
			apbf_set(c, grp, pos);
	}
	return hits;
}

/* Tests the n keys (add 0), or does add --new of them (add 1): tests
 * every generation for the answer, then sets the key in the newest unless
 * found.  A key found in an older generation only is found for the answer
 * but must be set again to stay; this bench adds only new keys, whose
 * false positives it leaves unset as a filter without refresh would,
 * which changes nothing measurable at 1 %.  Returns the keys found. */
static size_t
run_keys(const struct cand *c, const uint64_t *h, size_t n,
    unsigned char *scratch, int add)
{
	switch (c->kind) {
	case FIXED:
		if (c->simd)
			return fixed_wide(c, h, n, add);
		return keys_fixed(c, h, n, add);
	case SEPARATE:
		return test_sequential(c, h, n, scratch, add);
	case SEPARATE_ONE:
		return keys_one_pass(c, h, n, add);
	case INTERLEAVED:
		return keys_interleaved(c, h, n, add);
	case WORDS:
		return keys_words(c, h, n, add);
	case APBF:
		if (c->simd == SIMD_AVX512)
			return apbf_wide(c, h, n, add);
		if (c->simd)
			return apbf_simd(c, h, n, add);
		return add ? apbf_add(c, h, n) : apbf_test(c, h, n);
	}
	return 0;
}

size_t
test_keys(const struct cand *c, const uint64_t *h, size_t n,
    unsigned char *scratch)
{
	return run_keys(c, h, n, scratch, 0);
}

size_t
add_keys(const struct cand *c, const uint64_t *h, size_t n,
    unsigned char *scratch)
{
	return run_keys(c, h, n, scratch, 1);
}

/* Sets the keys in the newest generation without testing: the fill. */
void
fill_keys(const struct cand *c, const uint64_t *h, size_t n)
{
	size_t i, ah = AHEAD_LINES / c->group_lines;

	for (i = 0; i < n; i++) {
		if (i + ah < n)
			__builtin_prefetch(c->kind == SEPARATE ||
			    c->kind == INTERLEAVED ? gen_block(c, c->cur,
			    mul_high(h[i + ah], c->ngroups)) :
			    group_of(c, h[i + ah]));
		set_key(c, h[i], c->kind);
	}
}

/* Drops the oldest generation and makes its room the newest. */
void
rotate(struct cand *c)
{
	uint64_t i, *grp;
	unsigned n = c->kind == APBF ? c->slots : c->gens, old, lo, hi;

	old = (c->cur + n - 1) % n;
	switch (c->kind) {
	case FIXED:
	case SEPARATE_ONE:
		return;
	case SEPARATE:
		memset(gen_block(c, old, 0), 0, gen_bytes(c));
		break;
	case INTERLEAVED:
		for (i = 0; i < c->ngroups; i++)
			memset(gen_block(c, old, i), 0, 64);
		break;
	case WORDS:
		for (i = 0; i < c->ngroups; i++) {
			grp = c->bits + i * c->group_lines * LINE_WORDS;
			if (c->width == 64)
				grp[old] = 0;
			else
				((uint32_t *)grp)[old] = 0;
		}
		break;
	case APBF:
		lo = old * c->width;
		hi = lo + c->width;	/* bits [lo, hi) */
		for (i = 0; i < c->ngroups; i++) {
			unsigned b = lo;

			grp = c->bits + i * c->group_lines * LINE_WORDS;
			while (b < hi) {
				unsigned end = (b | 63) + 1 < hi ?
				    (b | 63) + 1 : hi;
				uint64_t m = (end - b == 64 ? ~0ULL :
				    (((uint64_t)1 << (end - b)) - 1)) <<
				    (b & 63);

				grp[b >> 6] &= ~m;
				b = end;
			}
		}
		break;
	}
	c->cur = old;
}

