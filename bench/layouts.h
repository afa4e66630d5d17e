/* SPDX-License-Identifier: ISC */
/* layouts.h: what the three files of bench/layouts share: the
 * candidate layouts, their kernels (layouts-kernels.c) and their math
 * (layouts-math.c).  Where a key's bits are is store/positions.h's, the
 * product's own. */
#ifndef BENCH_LAYOUTS_H
#define BENCH_LAYOUTS_H

#include <stddef.h>
#include <stdint.h>

#include "store/positions.h"	/* the product's draws: mul_high, splitmix,
				 * a key's bits in either layout */

#define LINE_WORDS	8		/* 64-bit words in a 64-byte line */
#define SLOTS_MAX	APBF_SLOTS_MAX	/* age-partitioned slots per line group */
#define POS_MAX		(SLOTS_MAX + 4)	/* positions drawn, in fours */
#define K_MAX		16		/* hashes the age-partitioned DP allows */

#define SIMD_AVX2	1	/* the AVX2 test */
#define SIMD_AVX512	2	/* the AVX-512 test */

enum kind {
	FIXED,		/* one blocked filter of the window's n items */
	SEPARATE,	/* today: G blocked filters, tested one after another */
	SEPARATE_ONE,	/* the same arrays, the key's mask made once */
	INTERLEAVED,	/* generation g's block i next to the others' block i */
	WORDS,		/* a word per generation inside one or two lines */
	APBF		/* a blocked age-partitioned filter */
};

struct cand {
	const char *name;	/* as the table prints it */
	enum kind kind;
	unsigned gens;		/* G, generations live at once (1: fixed) */
	unsigned hashes;	/* k */
	uint64_t ngroups;	/* blocks per generation, or line groups */
	unsigned group_lines;	/* lines a key's group spans (1 or 2) */
	unsigned slots;		/* APBF: k + G - 1; WORDS: words per group */
	unsigned width;		/* APBF: bits per slot; WORDS: bits per word */
	unsigned cur;		/* ring index of the newest generation/slot */
	double fpr;		/* computed false-positive rate */
	uint64_t *bits;		/* the array */
	size_t bytes;		/* its size */
	int shares;		/* 1: the arrays of the candidate before */
	int simd;		/* 0, SIMD_AVX2 (APBF) or SIMD_AVX512 */
};

/* A layout's best sizing: k, slot or word bits w, slots or lines s, the
 * Poisson mean of keys per group and generation, bits per window item. */
struct sizing { unsigned k, w, s; double lambda, bits; };

/* The rate of one block of width bits, k positions a key, Poisson(lambda)
 * keys in it. */
double block_fpr(unsigned width, unsigned k, double lambda);

/* The rate of G words of width bits per group, one per generation. */
double words_fpr(unsigned width, unsigned k, unsigned gens, double lambda);

/* The exact rate of a blocked APBF of k + l slots of w bits, Poisson(lambda)
 * keys per group and generation, just before a rotation (params.c's
 * params_apbf_rate); 1 if k > K_MAX or the slots pass SLOTS_MAX. */
double apbf_fpr(unsigned k, unsigned l, unsigned w, double lambda);

/* The k of fewest bits per window item at rate p; verbose prints each k. */
struct sizing size_apbf(unsigned gens, unsigned line_bits, double p,
    int verbose);
struct sizing size_words(unsigned gens, double p, int verbose);

/* Bytes of one generation of SEPARATE and INTERLEAVED. */
size_t gen_bytes(const struct cand *c);

/* Test (keys found), add --new (keys found; the others set in the newest
 * generation), fill (set, no test) and rotation.  scratch: n bytes. */
size_t test_keys(const struct cand *c, const uint64_t *h, size_t n,
    unsigned char *scratch);
size_t add_keys(const struct cand *c, const uint64_t *h, size_t n,
    unsigned char *scratch);
void fill_keys(const struct cand *c, const uint64_t *h, size_t n);
void rotate(struct cand *c);

#endif
