/* SPDX-License-Identifier: ISC
 * Sizing and estimation math for the blocked Bloom filter.
 *
 * Every key picks one block of BLOCK_BITS = 512 bits and sets hashes = k
 * bits in it, each drawn independently and uniformly, with replacement.  A
 * block that received i keys has had j = k i balls thrown into its 512
 * cells; call X_j the number of cells they occupy.  A query for an absent
 * key lands in a uniformly random block and is a false positive if its k
 * positions all hit set bits, which in a block of i keys has probability
 *
 *	f_k(i) = E[(X_{k i} / 512)^k].
 *
 * With n keys over B blocks a block receives Poisson(lambda = n / B) keys.
 * The true count is binomial, whose smaller spread gives a slightly lower
 * rate, so the Poisson errs on the safe side.  The false-positive rate is
 *
 *	FPR(n, B, k) = sum_i Pois(i; lambda) * f_k(i).
 *
 * Putze, Sanders and Singler ("Cache-, Hash- and Space-Efficient Bloom
 * Filters", 2007) take f_k(i) = (1 - (1 - 1/512)^(k i))^k, the mean fill
 * raised to the k-th power.  That understates the mean of the k-th power:
 * a filter sized with it for 1e6 keys at 1 % has 1.0092 %.  Here f_k(i) is
 * exact, from the distribution of X_j that fill_table_build computes once
 * per process.
 *
 * The classic formula m = -n ln p / (ln 2)^2 assumes the bits of a key are
 * spread over the whole array; blocks fill unevenly, so it undershoots.  For
 * 1e6 keys, bits per key and k from each, and the rate a blocked filter of
 * the classic size really has (tests/params.bats):
 *
 *	target	classic		blocked		blocked rate at classic size
 *	0.1	4.79, k=3	4.84, k=3	0.102
 *	0.01	9.59, k=7	9.92, k=6	0.0117
 *	0.001	14.38, k=10	15.55, k=9	0.00164
 *	0.0001	19.17, k=13	22.03, k=12	0.000291
 *	1e-6	28.76, k=20	38.82, k=16	0.0000209
 */
/*
 * The growth of a growable filter (GROW_FACTOR F, GROW_TIGHTENING r,
 * GROW_AUTO_CAPACITY C in params.h).  A key that add --new is given for
 * the first time is left out when the filter says it has it: with j full
 * segments it is, with probability about p_0 + ... + p_(j-1) plus the rate
 * of the newest, still filling.  Every full segment thus costs its rate
 * on every key that comes after it: over D distinct keys, segment i
 * leaves out about p_i (D - C (F^(i+1) - 1) / (F - 1)) of them.  The
 * early segments weigh most, and with p_i = P (1 - r) r^i they are the
 * loosest; r near 1 makes them tighter (P (1 - r) for the first) at a
 * small cost in bits, since log(1 / p_i) grows by log(1 / r) a segment.
 * A larger first capacity means fewer segments: fewer full ones to
 * leave keys out, and fewer to look in for an absent key, one cache
 * miss each.  Pagh, Segev and Wieder ("How to Approximate a Set Without
 * Knowing Its Size in Advance", 2013) take p_i proportional to
 * 1 / (i + 1)^2, which costs O(log log n) bits per key over a sized
 * filter where a geometric r costs O(log n); but it spends more of P on
 * the first segments, and over the 2 to 7 segments of 5 to 100 M keys it
 * leaves out more keys than r = 0.9, and takes more bits (at 50 M
 * distinct keys, C = 1 M, F = 2: 0.83 % and 24.4 bits against 0.33 %
 * and 21.1).
 *
 * For the default path (add on a missing filter, P = 0.01), D distinct
 * keys, the share left out (exact rates of the segments as they fill,
 * the blocked rate of params_fpr) and the bits per key, against 0.19 %
 * and 9.9 bits for a fixed filter sized for D:
 *
 *	C, F, r		D = 5 M		D = 50 M	segments at 50 M
 *	1 M, 2, 0.8	0.24 %, 20.5	0.56 %, 20.4	6 (before)
 *	1 M, 2, 0.9	0.12 %, 22.4	0.33 %, 21.1	6
 *	1 M, 4, 0.9	0.09 %, 67.4	0.23 %, 27.8	4
 *	2 M, 2, 0.9	0.07 %, 18.9	0.27 %, 20.4	5
 *	4 M, 2, 0.85	0.05 %, 35.5	0.29 %, 18.6	4
 *	4 M, 2, 0.9	0.03 %, 37.8	0.20 %, 19.5	4 (before)
 *	4 M, 3, 0.9	0.03 %, 50.6	0.16 %, 16.7	3
 *	4 M, 4, 0.9	0.03 %, 63.2	0.15 %, 27.0	3
 *	8 M, 2, 0.9	0.00 %, 25.0	0.14 %, 17.9	3
 *	16 M, 2, 0.9	0.00 %, 49.9	0.08 %, 35.8	3
 *
 * An absent key costs a cache miss in every segment, and those misses
 * already overlap as far as the processor lets them (bench/README.md):
 * checking absent lines at 100 M lines (50 M distinct) took 2.5 to 2.8
 * times a sized filter's time with 4 segments, and only fewer segments
 * bring it under 2 (3 segments: 1.8 to 1.86, with the new segments read
 * in as large folios, store/segments.c, and bits_test_rest's sample in
 * one pass).  Doubling the first capacity takes a segment off at
 * most sizes past 4 M keys (all but the 4 M after each full segment: 8
 * to 12 M keys, 24 to 28, 56 to 60, ...), for fewer bits per key and
 * fewer keys left out at 5, 50 and 100 M distinct keys (at 100 M: 0.20 %,
 * 19.5 bits and 4 segments against 0.27 %, 20.4 and 5).  F = 3 or 4
 * saves a segment too, but allocates up to three or four times what the
 * keys need until bloom fold takes it back (F = 3 from 4 M: 26.0 bits
 * per key at 100 M).  So 8 M, 2, 0.9.  Its cost is a first segment of
 * 15.6 MB for a filter that stays small (4 M: 7.8 MB); that segment's
 * block count is one fold divides, so that bloom fold brings such a
 * filter down to what its count needs (100 000 keys: 15.6 MB to
 * 0.24 MB).  The rows of 8 and 16 M round the first segment too to a
 * count fold divides (at most 1/128 more bits); the shares left out that
 * bench/growth measured agree with the table's within 0.005 %.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "params.h"

#define FOLD_UNIT_MAX	4096	/* blocks a count is rounded to, at most */
#define FOLD_COST_SHARE	128	/* a count grows by 1/this at most */

/* Poisson terms further than this many standard deviations from the mean
 * weigh less than 1e-30 and are left out of the sum. */
#define TAIL_SIGMAS	12.0

/*
 * Balls in one block from which on every f_k is 1 to double precision.  A
 * query position finds no ball with probability (1 - 1/512)^j, so by the
 * union bound 1 - f_k <= k (1 - 1/512)^j, and 32 (511/512)^21504 < 1.8e-17
 * is under 2^-54, half the spacing of the doubles just below 1.
 */
#define BALLS_FULL	(42u * BLOCK_BITS)

/* Entries of fill_table: row k holds f_k(i) for i = 0..BALLS_FULL / k, so
 * all rows hold at most BALLS_FULL times the harmonic number H_32 = 4.0585
 * plus one entry per row. */
#define TABLE_SIZE	(BALLS_FULL * 4059 / 1000 + HASHES_MAX)

/*
 * Occupancy probabilities below this are dropped from the recurrence, which
 * keeps it to the counts that matter: a hundred or two rather than 513.  The
 * recurrence only moves probability between counts, so an error never grows;
 * each ball drops less than 513e-80, and every f_k(i) is off by less than
 * BALLS_FULL * 513e-80 < 1e-72.  The entries grow with i and shrink with
 * k, so the smallest nonzero one is f_32(1) >= P(X_32 = 32) (32/512)^32 >
 * 1e-39: the relative error stays below 1e-33.
 */
#define NEGLIGIBLE	1e-80

/* The cache, filled on the first call of params_fpr. */
static double fill_table[TABLE_SIZE];	/* f_k(i) at row_start[k] + i */
static size_t row_start[HASHES_MAX + 1];	/* where row k begins */
static int fill_table_ready;		/* 1 once fill_table is filled */

/*
 * Fills fill_table by the recurrence over balls: with x of the 512 bits set,
 * the next ball sets one more with probability (512 - x) / 512 and lands on
 * a set one otherwise.  After j balls, occupied[x] = P(X_j = x), and
 * f_k(j / k) = sum_x P(X_j = x) (x / 512)^k for every k that divides j.
 */
static void
fill_table_build(void)
{
	static double power[HASHES_MAX + 1][BLOCK_BITS + 1];	/* (x/512)^k */
	double occupied[BLOCK_BITS + 1] = { 1.0 };	/* no ball: no bit set */
	unsigned countdown[HASHES_MAX + 1];	/* balls to the next multiple */
	unsigned balls, lo = 0, hi = 0, x, k;
	size_t start = 0;

	for (k = 1; k <= HASHES_MAX; k++) {
		countdown[k] = k;
		row_start[k] = start;
		fill_table[start] = 0.0;	/* no key: nothing to find */
		start += BALLS_FULL / k + 1;
	}
	for (x = 0; x <= BLOCK_BITS; x++) {
		double share = (double)x / BLOCK_BITS, prod = 1.0;

		for (k = 1; k <= HASHES_MAX; k++)
			power[k][x] = prod *= share;
	}
	for (balls = 1; balls <= BALLS_FULL; balls++) {
		/* Descending, so that occupied[x - 1] still holds P(X_{j-1}). */
		if (hi < BLOCK_BITS)
			hi++;
		for (x = hi; x > lo; x--)
			occupied[x] = occupied[x] * ((double)x / BLOCK_BITS) +
			    occupied[x - 1] *
			    ((double)(BLOCK_BITS + 1 - x) / BLOCK_BITS);
		occupied[lo] *= (double)lo / BLOCK_BITS;
		while (lo < hi && occupied[lo] < NEGLIGIBLE)
			occupied[lo++] = 0.0;
		while (hi > lo && occupied[hi] < NEGLIGIBLE)
			occupied[hi--] = 0.0;
		/* A count down to the next multiple of k rather than balls % k,
		 * whose divisions took a third of the time. */
		for (k = 1; k <= HASHES_MAX; k++) {
			double sum = 0.0;

			if (--countdown[k] != 0)
				continue;
			countdown[k] = k;
			for (x = lo; x <= hi; x++)
				sum += occupied[x] * power[k][x];
			fill_table[row_start[k] + balls / k] = sum;
		}
	}
	fill_table_ready = 1;
}

/* Returns f_k(i), the rate in a block that received keys keys. */
static double
fill_rate(unsigned hashes, double keys)
{
	if (keys > (double)(BALLS_FULL / hashes))
		return 1.0;
	return fill_table[row_start[hashes] + (size_t)keys];
}

double
params_fpr(uint64_t n, uint64_t nblocks, unsigned hashes)
{
	double lambda, log_lambda, sd, lo, hi, i, sum;

	if (n == 0 || nblocks == 0 || hashes == 0)
		return 0.0;
	if (hashes > HASHES_MAX)
		return 1.0;
	lambda = (double)n / (double)nblocks;
	sd = sqrt(lambda);
	lo = floor(lambda - TAIL_SIGMAS * sd - 20.0);
	if (lo < 1.0)
		lo = 1.0;	/* an empty block gives no false positive */
	/* Every term left has f_k = 1, and their weights sum to 1 (less
	 * 1e-30): skip the sum of some 24 sqrt(lambda) terms. */
	if (lo > BALLS_FULL)
		return 1.0;
	hi = ceil(lambda + TAIL_SIGMAS * sd + 20.0);
	if (!fill_table_ready)
		fill_table_build();
	log_lambda = log(lambda);
	sum = 0.0;
	for (i = lo; i <= hi; i++)
		sum += exp(i * log_lambda - lambda - lgamma(i + 1.0)) *
		    fill_rate(hashes, i);
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
 * Rounds up to a multiple of the largest power of two, up to
 * FOLD_UNIT_MAX, that adds at most 1/FOLD_COST_SHARE: what bloom fold
 * divides by.  Fewer than 2 FOLD_COST_SHARE blocks stay as they are.
 */
uint64_t
params_foldable(uint64_t nblocks)
{
	uint64_t unit = 1, up;

	while (unit < FOLD_UNIT_MAX && unit * 2 <= nblocks / FOLD_COST_SHARE)
		unit *= 2;
	up = (nblocks + unit - 1) / unit * unit;
	return up <= NBLOCKS_MAX ? up : nblocks;
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

/*
 * The bits set by n keys: a block takes j ~ Poisson(n / nblocks) of them,
 * whose j k positions among its 512 bits set, on average, 512 (1 - q^jk)
 * with q = 1 - 1/512, and vary as for balls in bins; the blocks are taken
 * as independent, which overstates the spread a little.
 */
double
params_fill_bound(uint64_t n, uint64_t nblocks, unsigned hashes, double z)
{
	const double q = 1.0 - 1.0 / BLOCK_BITS, q2 = 1.0 - 2.0 / BLOCK_BITS;
	double lambda, spread, from, to, j, pj, m, mean, var, sum = 0.0;
	double sum2 = 0.0;

	if (nblocks == 0 || hashes == 0 || n == 0)
		return 0.0;
	lambda = (double)n / (double)nblocks;
	spread = 12.0 * sqrt(lambda) + 30.0;
	from = lambda > spread ? floor(lambda - spread) : 0.0;
	to = ceil(lambda + spread);
	for (j = from; j <= to; j++) {
		pj = exp(j * log(lambda) - lambda - lgamma(j + 1.0));
		m = j * hashes;
		mean = BLOCK_BITS * (1.0 - pow(q, m));
		var = BLOCK_BITS * pow(q, m) * (1.0 - pow(q, m)) +
		    BLOCK_BITS * (BLOCK_BITS - 1.0) * (pow(q2, m) -
		    pow(q, 2.0 * m));
		sum += pj * mean;
		sum2 += pj * (var + mean * mean);
	}
	var = sum2 - sum * sum;
	return (double)nblocks * sum + z * sqrt((double)nblocks *
	    (var > 0.0 ? var : 0.0));
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

/* A query is a false positive of the whole if any of the parts answers it
 * wrongly: 1 - total = (1 - p)^parts, so p = 1 - exp(log1p(-total) / parts),
 * through log1p and expm1 to keep the digits of small rates. */
double
params_split_fpr(double total, unsigned parts)
{
	if (parts <= 1)
		return total;
	return -expm1(log1p(-total) / (double)parts);
}

/*
 * The age-partitioned layout (Shtul, Baquero and Almeida, "Age-Partitioned
 * Bloom Filters", 2020), blocked: a key's bits for every generation lie in
 * one group of APBF_GROUP_BITS bits (two adjacent blocks), cut into s = k +
 * l slots of w = APBF_GROUP_BITS / s bits, l = G - 1.  An add sets one bit
 * (uniform in w) in each of the k newest slots; a rotation empties the
 * oldest slot and makes it the newest; a key is present if k consecutive
 * slots have its bit.  bench/README.md ("bench/layouts") chose it.
 *
 * The rate, just before a rotation, all s generations' loads of a group
 * Poisson(lambda): given the loads c_a of the ages, slot i holds N_i = the
 * sum of c_a over its k ages, and has the query's bit with probability
 * 1 - x^N_i, x = 1 - 1/w, independently of the other slots.  The query is
 * missed if no k consecutive slots have it:
 * sum over strings m without a run of k of prod_i [m_i ? 1 - x^N_i : x^N_i].
 * Expanding each 1 - x^N_i chooses a set U of slots with factor +-x^N_i,
 * and E x^(sum over U of N_i) = prod_a exp(-lambda (1 - x^|U cap [a,
 * a + k - 1]|)).  A walk over the slots with state (which of the last k
 * slots are in U, length of the current run) sums it exactly.
 */
double
params_apbf_rate(unsigned k, unsigned l, unsigned w, double lambda)
{
	unsigned s = k + l, nu = 1u << k, i, u, r, a;
	size_t nstates = (size_t)nu * k;
	double *cur, *next, age_factor[APBF_K_MAX + 1], x, total = 0.0;

	if (k == 0 || k > APBF_K_MAX || l == 0 || s > APBF_SLOTS_MAX || w < 2)
		return 1.0;
	x = 1.0 - 1.0 / (double)w;
	cur = calloc(nstates, sizeof *cur);
	next = calloc(nstates, sizeof *next);
	if (cur == NULL || next == NULL) {
		free(cur);
		free(next);
		return 1.0;
	}
	for (i = 0; i <= k; i++)
		age_factor[i] = exp(-lambda * (1.0 - pow(x, (double)i)));
	cur[0] = 1.0;
	for (i = 0; i < s; i++) {
		memset(next, 0, nstates * sizeof *next);
		for (u = 0; u < nu; u++)
			for (r = 0; r < k; r++) {
				double v = cur[(size_t)u * k + r];
				unsigned in = ((u << 1) & (nu - 1)) | 1;
				unsigned out = (u << 1) & (nu - 1);

				if (v == 0.0)
					continue;
				/* m_i = 0: x^N_i, the slot in U, the run
				 * ends. */
				next[(size_t)in * k] += v;
				if (r + 1 < k) {
					/* m_i = 1: 1 - x^N_i. */
					next[(size_t)out * k + r + 1] += v;
					next[(size_t)in * k + r + 1] -= v;
				}
			}
		/* Age i - k + 1 has all its slots decided. */
		if (i + 1 >= k)
			for (u = 0; u < nu; u++)
				for (r = 0; r < k; r++)
					next[(size_t)u * k + r] *= age_factor[
					    __builtin_popcount(u)];
		memcpy(cur, next, nstates * sizeof *cur);
	}
	/* The ages whose slots run past the oldest. */
	for (u = 0; u < nu; u++)
		for (r = 0; r < k; r++) {
			double v = cur[(size_t)u * k + r];

			for (a = s - k + 1; a < s; a++)
				v *= age_factor[__builtin_popcount(u &
				    ((1u << (s - a)) - 1))];
			total += v;
		}
	free(cur);
	free(next);
	/* The sum cancels to within rounding of 1 at low loads. */
	return total < 1.0 ? 1.0 - total : 0.0;
}

double
params_apbf_fpr(unsigned k, unsigned gens, double lambda)
{
	if (k == 0 || gens < 2 || k + gens - 1 > APBF_SLOTS_MAX)
		return 1.0;
	return params_apbf_rate(k, gens - 1, APBF_GROUP_BITS / (k + gens -
	    1), lambda);
}

/* The most keys per group and generation at which k hashes and gens
 * generations keep the rate at most p, by bisection. */
static double
apbf_lambda(unsigned k, unsigned gens, double p)
{
	double lo = 0.0, hi = 1.0;
	int i;

	while (params_apbf_fpr(k, gens, hi) <= p && hi < 1e6)
		lo = hi, hi *= 2.0;
	for (i = 0; i < 30; i++) {
		double mid = 0.5 * (lo + hi);

		if (params_apbf_fpr(k, gens, mid) <= p)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

int
params_apbf_size(uint64_t capacity, double target_fpr, unsigned gens,
    struct apbf_params *a)
{
	double best_bits = HUGE_VAL, lambda, bits, groups;
	uint64_t per_gen;
	unsigned k;

	memset(a, 0, sizeof *a);
	if (capacity == 0 || gens < 2 || !(target_fpr > 0.0 &&
	    target_fpr < 1.0)) {
		errno = EINVAL;
		return -1;
	}
	per_gen = capacity / (gens - 1) + (capacity % (gens - 1) != 0);
	/* The search stops where the bits per key first rise: each more k
	 * costs twice the time.  With the slots' widths rounded down they
	 * are not quite unimodal: for G = 40 and 48 at 1 %, k = 12 and 13
	 * would take 0.7 % and 1.2 % fewer bits than the k = 9 found here,
	 * for 0.2 s and 0.6 s more of create. */
	for (k = 1; k <= APBF_K_MAX && k + gens - 1 <= APBF_SLOTS_MAX; k++) {
		if (APBF_GROUP_BITS / (k + gens - 1) < APBF_W_MIN)
			break;
		lambda = apbf_lambda(k, gens, target_fpr);
		if (!(lambda > 0.0))
			continue;
		bits = APBF_GROUP_BITS / lambda;
		if (bits > best_bits)
			break;
		{
			best_bits = bits;
			a->hashes = k;
			a->lambda = lambda;
		}
	}
	if (a->hashes == 0) {
		errno = EINVAL;
		return -1;
	}
	groups = ceil((double)per_gen / a->lambda);
	if (!(groups * 2.0 <= (double)NBLOCKS_MAX)) {
		errno = EFBIG;
		return -1;
	}
	a->ngroups = (uint64_t)groups;
	return 0;
}
