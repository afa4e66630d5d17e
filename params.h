/* SPDX-License-Identifier: ISC */
/* params.h: interface of params.c, sizing and estimation math for the
 * blocked (512-bit block) Bloom filter layout. */
#ifndef BLOOM_PARAMS_H
#define BLOOM_PARAMS_H

#include <stdint.h>

#define BLOCK_BITS	512		/* bits in one block (a cache line) */
#define BLOCK_BYTES	64		/* bytes in one block */
#define HASHES_MAX	32		/* most bit positions set per key */
#define NBLOCKS_MAX	((uint64_t)1 << 40)	/* 64 TiB of bits */

struct params {
	uint64_t capacity;	/* items the filter is sized for */
	double target_fpr;	/* false-positive rate at capacity */
	uint64_t nblocks;	/* 64-byte blocks in the bit array */
	unsigned hashes;	/* bit positions per key, 1..HASHES_MAX */
};

/*
 * Growable filters (Almeida et al., "Scalable Bloom Filters", 2007):
 * segment i holds capacity F^i keys at rate P (1 - r) r^i, so that the
 * rates of any number of segments sum to less than P.  What new filters
 * get; a file keeps the F and r its header holds.  params.c says why.
 */
#define GROW_FACTOR	2.0	/* F, unless create --growth says */
#define GROW_TIGHTENING	0.9	/* r */
#define GROW_AUTO_CAPACITY	8000000	/* first segment of a filter that
					 * add creates, unless -n says */

/* What the caller fixed; params_solve derives the rest. */
enum solve_for { SOLVE_SIZE, SOLVE_FPR, SOLVE_CAPACITY };

/* Returns nblocks rounded up, by at most 1/128 of it, to a multiple of a
 * power of two (up to 4096), so that bloom fold divides it by small
 * factors; nblocks itself below 256 blocks. */
uint64_t params_foldable(uint64_t nblocks);

/* Returns the expected false-positive rate of a blocked filter of nblocks
 * blocks with hashes (1..HASHES_MAX, else 1.0) after n distinct insertions.
 * The first call fills a 700 KB table, in a few milliseconds, that the
 * later calls share: two threads must not make the first call at once. */
double params_fpr(uint64_t n, uint64_t nblocks, unsigned hashes);

/* Returns the rate p each of parts independent parts may have for a query
 * to be a false positive with probability total: 1 - (1 - p)^parts = total. */
double params_split_fpr(double total, unsigned parts);

/* Completes p: SOLVE_SIZE reads capacity and target_fpr, SOLVE_FPR reads
 * capacity and nblocks, SOLVE_CAPACITY reads target_fpr and nblocks.  If
 * p->hashes is 0 the best count is chosen, otherwise it is kept.  Returns 0,
 * or -1 with errno EINVAL (inputs out of range) or EFBIG (the filter would
 * exceed NBLOCKS_MAX blocks). */
int params_solve(struct params *p, enum solve_for what);

/* Returns the number of distinct items that would leave bits_set of the
 * nblocks*512 bits set, for positions drawn independently. */
double params_estimate_items(uint64_t bits_set, uint64_t nblocks,
    unsigned hashes);

/* Returns the bits that n distinct keys leave set in nblocks blocks with
 * hashes, on average, plus z standard deviations of the spread between
 * filters (blocks filled independently, Poisson keys per block). */
double params_fill_bound(uint64_t n, uint64_t nblocks, unsigned hashes,
    double z);

/* Returns the false-positive rate of a filter whose blocks have the fill
 * given by hist: hist[c] counts the blocks with c bits set, c = 0..512. */
double params_fpr_from_hist(const uint64_t hist[BLOCK_BITS + 1],
    uint64_t nblocks, unsigned hashes);

/* What the fill of a segment, or of a generation's slot of one, says. */
struct params_estimate {
	uint64_t bits;		/* bits counted */
	uint64_t bits_set;	/* of them, set */
	double items;		/* distinct keys the fill suggests */
	double fpr;		/* rate of a test of them, from the fill */
};

/*
 * The age-partitioned window layout (params.c says how it works): a key's
 * bits for every generation in one group of APBF_GROUP_BITS bits, two
 * adjacent blocks, cut into k + G - 1 slots of APBF_GROUP_BITS / (k + G - 1)
 * bits.
 */
#define APBF_GROUP_BITS	1024	/* bits in a group */
#define APBF_GROUP_BLOCKS	2	/* blocks in a group */
#define APBF_K_MAX	16	/* most slots a key sets */
#define APBF_SLOTS_MAX	64	/* most slots in a group: ages fit a word */
#define APBF_W_MIN	8	/* fewest bits in a slot */

/* The sizing of an age-partitioned window. */
struct apbf_params {
	unsigned hashes;	/* k: slots a key sets */
	uint64_t ngroups;	/* groups of APBF_GROUP_BITS */
	double lambda;		/* keys per group and generation at the rate */
};

/* Returns the false-positive rate of an age-partitioned window of gens
 * generations (2 or more) with k hashes, just before a rotation, when each
 * generation put lambda keys in each group on average; 1.0 if k and gens
 * make no valid layout. */
double params_apbf_fpr(unsigned k, unsigned gens, double lambda);

/* The same for any group: k + l slots of w bits (l = gens - 1), as
 * bench/layouts weighs other group sizes; 1.0 if no valid layout. */
double params_apbf_rate(unsigned k, unsigned l, unsigned w, double lambda);

/* Sizes an age-partitioned window of gens generations for capacity
 * distinct keys per window at rate target_fpr: the k with the fewest bits
 * per key, and the groups a generation's capacity / (gens - 1) keys need.
 * Returns 0, or -1 with errno EINVAL (no layout fits) or EFBIG. */
int params_apbf_size(uint64_t capacity, double target_fpr, unsigned gens,
    struct apbf_params *a);

#endif
