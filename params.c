/*
 * Sizing and estimation math for the blocked Bloom filter.
 *
 * Every key sets hashes bits, drawn independently (with replacement), in one
 * block of BLOCK_BITS bits.  With n keys over B blocks a block receives
 * Poisson(lambda = n / B) keys, and a block that received i keys has about
 * a fraction 1 - (1 - 1/512)^(k i) of its bits set.  A query for an absent
 * key lands in a random block, so the false-positive rate is the Poisson
 * mixture
 *
 *	FPR(n, B, k) = sum_i Pois(i; lambda) * (1 - (1 - 1/512)^(k i))^k
 *
 * (Putze, Sanders and Singler, "Cache-, Hash- and Space-Efficient Bloom
 * Filters", 2007).  The classic formula m = -n ln p / (ln 2)^2 assumes the
 * bits of a key are spread over the whole array; blocks fill unevenly, so it
 * undershoots.  For 1e6 keys, bits per key and k from each, and the rate a
 * blocked filter of the classic size really has (tests/params.bats):
 *
 *	target	classic		blocked		blocked rate at classic size
 *	0.1	4.79, k=3	4.83, k=3	0.102
 *	0.01	9.59, k=7	9.90, k=6	0.0116
 *	0.001	14.38, k=10	15.49, k=9	0.00160
 *	0.0001	19.17, k=13	21.91, k=12	0.000279
 *	1e-6	28.76, k=20	38.51, k=16	0.0000192
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "params.h"

/* Poisson terms further than this many standard deviations from the mean
 * weigh less than 1e-30 and are left out of the sum. */
#define TAIL_SIGMAS	12.0

/* Keys per block beyond which the rate is 1 to double precision: even one
 * hash sets all but (1 - 1/512)^1e5 < 1e-84 of the bits. */
#define LAMBDA_FULL	1e5

double
params_fpr(uint64_t n, uint64_t nblocks, unsigned hashes)
{
	double lambda, log_lambda, log_keep, sd, lo, hi, i, sum;

	if (n == 0 || nblocks == 0 || hashes == 0)
		return 0.0;
	lambda = (double)n / (double)nblocks;
	/* With this many keys a block holds every bit set, whatever the
	 * spread around lambda: skip the sum of some 24 sqrt(lambda) terms. */
	if (lambda > LAMBDA_FULL)
		return 1.0;
	log_lambda = log(lambda);
	log_keep = log1p(-1.0 / BLOCK_BITS);	/* ln(1 - 1/512) */
	sd = sqrt(lambda);
	lo = floor(lambda - TAIL_SIGMAS * sd - 20.0);
	if (lo < 1.0)
		lo = 1.0;	/* an empty block gives no false positive */
	hi = ceil(lambda + TAIL_SIGMAS * sd + 20.0);
	sum = 0.0;
	for (i = lo; i <= hi; i++) {
		double log_pois = i * log_lambda - lambda - lgamma(i + 1.0);
		double set = -expm1((double)hashes * i * log_keep);

		sum += exp(log_pois + (double)hashes * log(set));
	}
	return sum > 1.0 ? 1.0 : sum;
}

/* Returns the fewest blocks that keep the rate of n keys with hashes at or
 * below fpr, or 0 if that takes more than NBLOCKS_MAX blocks. */
static uint64_t
fewest_blocks(uint64_t n, double fpr, unsigned hashes)
{
	uint64_t lo, hi;
	double guess;

	/* Start from the classic size, which is too small, and double. */
	guess = (double)n * -log(fpr) / (M_LN2 * M_LN2) / BLOCK_BITS;
	hi = guess < 1.0 ? 1 : guess > (double)NBLOCKS_MAX ? NBLOCKS_MAX :
	    (uint64_t)guess;
	lo = 0;	/* known too small, or none */
	while (params_fpr(n, hi, hashes) > fpr) {
		if (hi == NBLOCKS_MAX)
			return 0;
		lo = hi;
		hi = hi > NBLOCKS_MAX / 2 ? NBLOCKS_MAX : hi * 2;
	}
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (params_fpr(n, mid, hashes) > fpr)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

/* Returns the most keys that nblocks hold at or below fpr with hashes, or 0
 * if not even one. */
static uint64_t
most_keys(uint64_t nblocks, double fpr, unsigned hashes)
{
	uint64_t lo, hi;

	lo = 0;	/* known to fit */
	hi = 1;
	while (params_fpr(hi, nblocks, hashes) <= fpr) {
		if (hi >= UINT64_MAX / 2)
			return hi;
		lo = hi;
		hi *= 2;
	}
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (params_fpr(mid, nblocks, hashes) <= fpr)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* The hash counts to try: the one fixed in p, or all. */
static void
hash_range(const struct params *p, unsigned *first, unsigned *last)
{
	*first = *last = p->hashes;
	if (p->hashes == 0) {
		*first = 1;
		*last = HASHES_MAX;
	}
}

static int
solve_size(struct params *p)
{
	unsigned k, first, last;
	uint64_t best = 0;

	hash_range(p, &first, &last);
	for (k = first; k <= last; k++) {
		uint64_t nblocks = fewest_blocks(p->capacity, p->target_fpr, k);

		if (nblocks == 0)
			continue;
		if (best == 0 || nblocks < best || (nblocks == best &&
		    params_fpr(p->capacity, nblocks, k) <
		    params_fpr(p->capacity, nblocks, p->hashes))) {
			best = nblocks;
			p->hashes = k;
		}
	}
	if (best == 0) {
		errno = EFBIG;
		return -1;
	}
	p->nblocks = best;
	return 0;
}

static int
solve_fpr(struct params *p)
{
	unsigned k, first, last;
	double fpr, best = 2.0;

	hash_range(p, &first, &last);
	for (k = first; k <= last; k++) {
		fpr = params_fpr(p->capacity, p->nblocks, k);
		if (fpr < best) {
			best = fpr;
			p->hashes = k;
		}
	}
	if (best >= 1.0) {
		errno = EINVAL;
		return -1;
	}
	p->target_fpr = best < DBL_MIN ? DBL_MIN : best;
	return 0;
}

static int
solve_capacity(struct params *p)
{
	unsigned k, first, last;
	uint64_t n, best = 0;

	hash_range(p, &first, &last);
	for (k = first; k <= last; k++) {
		n = most_keys(p->nblocks, p->target_fpr, k);
		if (n > best) {
			best = n;
			p->hashes = k;
		}
	}
	if (best == 0) {
		errno = EINVAL;
		return -1;
	}
	p->capacity = best;
	return 0;
}

int
params_solve(struct params *p, enum solve_for what)
{
	if (p->hashes > HASHES_MAX)
		goto invalid;
	if (what != SOLVE_FPR &&
	    !(p->target_fpr > 0.0 && p->target_fpr < 1.0))
		goto invalid;
	if (what != SOLVE_CAPACITY && p->capacity == 0)
		goto invalid;
	if (what != SOLVE_SIZE && p->nblocks == 0)
		goto invalid;
	if (what != SOLVE_SIZE && p->nblocks > NBLOCKS_MAX) {
		errno = EFBIG;
		return -1;
	}
	switch (what) {
	case SOLVE_SIZE:
		return solve_size(p);
	case SOLVE_FPR:
		return solve_fpr(p);
	case SOLVE_CAPACITY:
		return solve_capacity(p);
	}
invalid:
	errno = EINVAL;
	return -1;
}

/*
 * A bit stays clear with probability (1 - 1/512)^(k i) in a block of i keys;
 * over Poisson(lambda) keys that is exp(-lambda (1 - (1 - 1/512)^k)).  Solve
 * the observed clear fraction for lambda, and n = lambda * nblocks.
 */
double
params_estimate_items(uint64_t bits_set, uint64_t nblocks, unsigned hashes)
{
	double nbits = (double)nblocks * BLOCK_BITS;
	double set = (double)bits_set;
	double per_key;

	if (nblocks == 0 || hashes == 0)
		return 0.0;
	if (set > nbits - 1.0)
		set = nbits - 1.0;	/* a full filter: report a lower bound */
	per_key = -expm1((double)hashes * log1p(-1.0 / BLOCK_BITS));
	return (double)nblocks * -log1p(-set / nbits) / per_key;
}

/* A query for an absent key lands in a uniformly random block and finds all
 * of its hashes bits set with probability (c / 512)^k. */
double
params_fpr_from_hist(const uint64_t hist[BLOCK_BITS + 1], uint64_t nblocks,
    unsigned hashes)
{
	double sum = 0.0;
	unsigned c;

	if (nblocks == 0)
		return 0.0;
	for (c = 1; c <= BLOCK_BITS; c++)
		if (hist[c] != 0)
			sum += (double)hist[c] *
			    pow((double)c / BLOCK_BITS, (double)hashes);
	return sum / (double)nblocks;
}
