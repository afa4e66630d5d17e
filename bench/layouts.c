/* SPDX-License-Identifier: ISC
 * layouts: which memory layout makes a sliding window of G generations
 * as fast as a fixed filter (issue 19).  Each candidate is a set of add,
 * test and rotate kernels over an in-memory array; the program sizes each
 * for a window of n items at a false-positive rate p with the exact math
 * below, fills it to the steady state just before a rotation, measures its
 * false-positive rate over absent keys and times its kernels against a
 * fixed blocked filter of the same n items, in interleaved rounds.
 *
 *	bench/layouts [-r rounds] [-q keys] [-f fpkeys] [-s small] [-l large]
 *	    [-p rate] [-g G]... [-z]
 *
 * -z prints only the sizing (no arrays, no timing).  bench/README.md says
 * what each column means and derives the math.
 *
 * Keys are hashes: SplitMix64 of a counter, as uniform as the XXH3-64 of
 * a line.  The kernels are in layouts-kernels.c, the math in
 * layouts-math.c.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "params.h"
#include "bench/layouts.h"

#define ROUNDS_MAX	31
#define CANDS_MAX	12

/* The hash of key number id. */
static inline uint64_t
key_hash(uint64_t id)
{
	return splitmix(id * SPLITMIX_GAMMA + 0x1234567ULL);
}

/* ==== Timing and randomness ==== */

/* The CPU time of this thread: on a machine shared with other work, the
 * time it was not running is left out (its cache is not, nor the memory
 * bandwidth the others take). */
static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}


static uint64_t rng_state = 42;

static uint64_t
rng(void)
{
	rng_state += SPLITMIX_GAMMA;
	return splitmix(rng_state);
}

static double
median(double *v, int n)
{
	int i, j;

	for (i = 1; i < n; i++)
		for (j = i; j > 0 && v[j] < v[j - 1]; j--) {
			double t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void
load_avg(char *buf, size_t size)
{
	FILE *f = fopen("/proc/loadavg", "r");

	buf[0] = '\0';
	if (f != NULL) {
		if (fgets(buf, (int)size, f) != NULL)
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
}

/* Arrays up to this size are read whole before each timed kernel, so that
 * they are in the caches as far as they fit: the small window's case. */
#define WARM_MAX	((size_t)64 << 20)

static volatile uint64_t warm_sink;

static void
warm(const struct cand *c)
{
	uint64_t sum = 0;
	size_t i;

	if (c->bytes > WARM_MAX)
		return;
	for (i = 0; i < c->bytes / 8; i += 8)
		sum += c->bits[i];
	warm_sink = sum;
}


/* The candidate whose array candidate j uses: itself, or the first of
 * the run of candidates that share it. */
static int
owner(const struct cand *c, int j)
{
	while (c[j].shares)
		j--;
	return j;
}

static int
cand_alloc(struct cand *c)
{
	c->bytes = (size_t)c->ngroups * c->group_lines * 64;
	if (c->kind == SEPARATE || c->kind == INTERLEAVED)
		c->bytes = gen_bytes(c) * c->gens;
	if (c->shares)
		return 0;
	if (posix_memalign((void **)&c->bits, 4096, c->bytes) != 0)
		return -1;
	memset(c->bits, 0, c->bytes);
	return 0;
}

/* Fills in the candidates of a window of n items in gens generations at
 * rate p; returns how many. */
static int
make_cands(struct cand *c, unsigned gens, uint64_t n, double p)
{
	struct params fixed = { n, p, 0, 0 }, gen;
	struct sizing s;
	uint64_t per_gen = (n + gens - 2) / (gens - 1);
	int nc = 0, i;
	unsigned lines;

	memset(c, 0, CANDS_MAX * sizeof *c);
	params_solve(&fixed, SOLVE_SIZE);
	c[nc++] = (struct cand){ "fixed", FIXED, 1, fixed.hashes,
	    fixed.nblocks, 1, 0, 0, 0, params_fpr(n, fixed.nblocks,
	    fixed.hashes), NULL, 0, 0, 0 };

	memset(&gen, 0, sizeof gen);
	gen.capacity = per_gen;
	gen.target_fpr = params_split_fpr(p, gens);
	params_solve(&gen, SOLVE_SIZE);
	c[nc] = (struct cand){ "separate", SEPARATE, gens, gen.hashes,
	    gen.nblocks, 1, 0, 0, 0, 0.0, NULL, 0, 0, 0 };
	c[nc].fpr = -expm1((double)gens * log1p(-params_fpr(per_gen,
	    gen.nblocks, gen.hashes)));
	c[nc + 1] = c[nc];
	c[nc + 1].name = "separate, 1 pass";
	c[nc + 1].kind = SEPARATE_ONE;
	c[nc + 1].shares = 1;
	c[nc + 2] = c[nc];
	c[nc + 2].name = "interleaved";
	c[nc + 2].kind = INTERLEAVED;
	nc += 3;

	s = size_words(gens, p, 0);
	lines = s.s;
	c[nc++] = (struct cand){ lines == 1 ? "word/gen, 1 line" :
	    "word/gen, 2 lines", WORDS, gens, s.k,
	    (uint64_t)ceil((double)per_gen / s.lambda), lines, gens, s.w, 0,
	    0.0, NULL, 0, 0, 0 };

	for (lines = 1; lines <= 2; lines++) {
		s = size_apbf(gens, 512 * lines, p, 0);
		c[nc++] = (struct cand){ lines == 1 ? "apbf, 1 line" :
		    "apbf, 2 lines", APBF, gens, s.k,
		    (uint64_t)ceil((double)per_gen / s.lambda), lines, s.s,
		    s.w, 0, 0.0, NULL, 0, 0, 0 };
	}
	/* The two-line APBF again, tested with AVX2 where the CPU has it. */
	if (__builtin_cpu_supports("avx2")) {
		c[nc] = c[nc - 1];
		c[nc].name = "apbf, 2 lines, avx2";
		c[nc].shares = 1;
		c[nc].simd = SIMD_AVX2;
		nc++;
	}
	/* And with AVX-512, against the fixed filter's AVX-512 test (which
	 * bloom uses where the CPU has it, store/wide.c). */
	if (__builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512dq") &&
	    __builtin_cpu_supports("avx512bw")) {
		c[nc] = c[nc - 1];
		c[nc].name = "apbf, 2 lines, avx512";
		c[nc].simd = SIMD_AVX512;
		nc++;
		c[nc] = c[0];
		c[nc].name = "fixed, avx512";
		c[nc].shares = 0;
		c[nc].simd = SIMD_AVX512;
		nc++;
	}
	/* The computed rates at the counts used (rounded up). */
	for (i = 0; i < nc; i++) {
		double lambda = (double)per_gen / (double)c[i].ngroups;

		if (c[i].kind == WORDS)
			c[i].fpr = words_fpr(c[i].width, c[i].hashes, gens,
			    lambda);
		else if (c[i].kind == APBF)
			c[i].fpr = apbf_fpr(c[i].hashes, gens - 1, c[i].width,
			    lambda);
	}
	return nc;
}

/* ==== The measurement ==== */

struct result {
	double absent[ROUNDS_MAX], present[ROUNDS_MAX], add[ROUNDS_MAX];
	double rotate_ms_mib;	/* median of the fill's rotations */
	double fp_measured;
	uint64_t misses;	/* present keys not found: must be 0 */
};

/* Fills c to the steady state just before a rotation: the last gens
 * generations hold keys [a g, (a + 1) g) at age a; an APBF first takes k - 1
 * older generations (keys from 2^40 on), which it has forgotten by then
 * except in the slots the rate counts. */
static void
fill(struct cand *c, uint64_t per_gen, uint64_t *h, size_t hcap,
    struct result *r)
{
	unsigned steps = c->kind == APBF ? c->slots : c->gens, st;
	double rot[SLOTS_MAX];
	int nrot = 0;

	for (st = 0; st < steps; st++) {
		unsigned age = steps - 1 - st;
		uint64_t base = age < c->gens ? (uint64_t)age * per_gen :
		    ((uint64_t)1 << 40) + (uint64_t)age * per_gen, j;

		for (j = 0; j < per_gen; j += hcap) {
			size_t m = per_gen - j < hcap ? per_gen - j : hcap, i;

			for (i = 0; i < m; i++)
				h[i] = key_hash(base + j + i);
			fill_keys(c, h, m);
		}
		if (st + 1 < steps) {
			double t0 = now_s();

			rotate(c);
			rot[nrot++] = (now_s() - t0) * 1e3 /
			    ((double)c->bytes / (1 << 20));
		}
	}
	r->rotate_ms_mib = c->kind == FIXED ? 0.0 : median(rot, nrot);
}

static void
absent_keys(uint64_t *h, size_t n, uint64_t from)
{
	size_t i;

	for (i = 0; i < n; i++)
		h[i] = key_hash(((uint64_t)1 << 50) + from + i);
}

static void
present_keys(uint64_t *h, size_t n, uint64_t live)
{
	size_t i;

	for (i = 0; i < n; i++)
		h[i] = key_hash(mul_high(rng(), live));
}

static void
usage(void)
{
	fprintf(stderr, "usage: layouts [-r rounds] [-q keys] [-f fpkeys]"
	    " [-s small] [-l large] [-p rate] [-g G]... [-z]\n");
	exit(2);
}

static void
print_sizing(unsigned gens, double p)
{
	struct sizing s;

	printf("# sizing at p = %g, G = %u (exact rates; items/line/gen is"
	    " the Poisson mean)\n", p, gens);
	s = size_words(gens, p, 1);
	printf("#  best word/gen: k=%u, %.2f bits/item\n", s.k, s.bits);
	s = size_apbf(gens, 512, p, 1);
	printf("#  best apbf 512: k=%u, %u slots of %u bits, %.2f bits/item\n",
	    s.k, s.s, s.w, s.bits);
	s = size_apbf(gens, 1024, p, 1);
	printf("#  best apbf 1024: k=%u, %u slots of %u bits, %.2f"
	    " bits/item\n", s.k, s.s, s.w, s.bits);
	s = size_apbf(gens, 2048, p, 0);
	printf("#  best apbf 2048: k=%u, %u slots of %u bits, %.2f"
	    " bits/item\n", s.k, s.s, s.w, s.bits);
	/* Groups so large that blocking costs nothing: the unblocked
	 * filter of the paper, the least an APBF of G - 1 slots can take. */
	s = size_apbf(gens, 1u << 24, p, 0);
	printf("#  best apbf unblocked (the limit): k=%u, %.2f bits/item\n",
	    s.k, s.bits);
}

int
main(int argc, char **argv)
{
	unsigned gens_list[8] = { 8, 31 }, ngens = 2, gi, user_gens = 0;
	uint64_t sizes[2] = { 1000000, 88000000 };
	size_t q = 1000000, fpkeys = 4000000, hcap;
	int rounds = 5, sizing_only = 0, opt, si;
	double p = 0.01;
	char load[128];
	uint64_t *h;
	unsigned char *scratch;

	while ((opt = getopt(argc, argv, "r:q:f:s:l:p:g:z")) != -1) {
		switch (opt) {
		case 'r':
			rounds = atoi(optarg);
			if (rounds < 1 || rounds > ROUNDS_MAX)
				usage();
			break;
		case 'q':
			q = strtoull(optarg, NULL, 10);
			break;
		case 'f':
			fpkeys = strtoull(optarg, NULL, 10);
			break;
		case 's':
			sizes[0] = strtoull(optarg, NULL, 10);
			break;
		case 'l':
			sizes[1] = strtoull(optarg, NULL, 10);
			break;
		case 'p':
			p = atof(optarg);
			break;
		case 'g':
			if (user_gens == 0)
				ngens = 0;
			user_gens = 1;
			if (ngens == 8)
				usage();
			gens_list[ngens] = (unsigned)atoi(optarg);
			if (gens_list[ngens] < 2 || gens_list[ngens] > 48)
				usage();
			ngens++;
			break;
		case 'z':
			sizing_only = 1;
			break;
		default:
			usage();
		}
	}
	/* A window of fewer items than this has generations of no item. */
	if (q == 0 || fpkeys == 0 || !(p > 0.0 && p < 1.0) ||
	    sizes[0] < 1000 || sizes[1] < 1000)
		usage();
	load_avg(load, sizeof load);
	printf("# bench/layouts: p = %g, rounds = %d, %zu keys per timing,"
	    " %zu absent keys for the rate; load at start: %s\n", p, rounds,
	    q, fpkeys, load);
	for (gi = 0; gi < ngens; gi++)
		print_sizing(gens_list[gi], p);
	if (sizing_only)
		return 0;

	hcap = q > fpkeys ? q : fpkeys;
	h = malloc(hcap * sizeof *h);
	scratch = malloc(hcap);
	if (h == NULL || scratch == NULL)
		return 2;
	printf("\n%-3s %-6s %-18s %3s %9s %6s %7s %7s %7s %6s %6s %6s %6s"
	    " %9s %9s %8s\n", "G", "n", "layout", "k", "MiB", "bits",
	    "absent", "present", "add", "x abs", "x pres", "x add", "lines",
	    "fp calc", "fp meas", "rot ms/MiB");
	for (gi = 0; gi < ngens; gi++)
		for (si = 0; si < 2; si++) {
			unsigned gens = gens_list[gi];
			uint64_t n = sizes[si];
			uint64_t per_gen = (n + gens - 2) / (gens - 1);
			struct cand c[CANDS_MAX];
			struct result r[CANDS_MAX];
			uint64_t *snap[CANDS_MAX];
			int nc = make_cands(c, gens, n, p), i, round;

			memset(r, 0, sizeof r);
			for (i = 0; i < nc; i++) {
				if (c[i].shares) {
					c[i].bits = c[i - 1].bits;
					c[i].bytes = c[i - 1].bytes;
					continue;
				}
				if (cand_alloc(&c[i]) == -1) {
					fprintf(stderr, "layouts: out of"
					    " memory\n");
					return 2;
				}
				fill(&c[i], c[i].kind == FIXED ? n : per_gen,
				    h, hcap, &r[i]);
			}
			for (i = 0; i < nc; i++)
				if (c[i].shares) {
					c[i].cur = c[i - 1].cur;
					r[i].rotate_ms_mib =
					    r[i - 1].rotate_ms_mib;
				}
			/* A copy of each array, to undo the timed adds. */
			for (i = 0; i < nc; i++) {
				snap[i] = NULL;
				if (c[i].shares)
					continue;
				if ((snap[i] = malloc(c[i].bytes)) == NULL)
					return 2;
				memcpy(snap[i], c[i].bits, c[i].bytes);
			}
			/* The rate, and no false negative. */
			absent_keys(h, fpkeys, 0);
			for (i = 0; i < nc; i++) {
				r[i].fp_measured = (double)test_keys(&c[i], h,
				    fpkeys, scratch) / (double)fpkeys;
			}
			for (i = 0; i < nc; i++) {
				uint64_t live = c[i].kind == FIXED ? n :
				    (uint64_t)gens * per_gen;

				present_keys(h, q, live);
				r[i].misses += q - test_keys(&c[i], h, q,
				    scratch);
			}
			for (round = 0; round < rounds; round++)
				for (i = 0; i < nc; i++) {
					int j = (i + round) % nc;
					struct cand *cj = &c[j];
					uint64_t live = cj->kind == FIXED ? n :
					    (uint64_t)gens * per_gen;
					double t0;

					absent_keys(h, q, fpkeys +
					    (uint64_t)round * q);
					warm(cj);
					t0 = now_s();
					test_keys(cj, h, q, scratch);
					r[j].absent[round] = (now_s() - t0) *
					    1e9 / (double)q;
					present_keys(h, q, live);
					warm(cj);
					t0 = now_s();
					test_keys(cj, h, q, scratch);
					r[j].present[round] = (now_s() - t0) *
					    1e9 / (double)q;
					/* Adds of new keys, undone after. */
					absent_keys(h, q, ((uint64_t)1 << 45) +
					    (uint64_t)round * q);
					warm(cj);
					t0 = now_s();
					add_keys(cj, h, q, scratch);
					r[j].add[round] = (now_s() - t0) *
					    1e9 / (double)q;
					memcpy(cj->bits, snap[owner(c, j)],
					    cj->bytes);
				}
			{
				double fa = median(r[0].absent, rounds);
				double fp = median(r[0].present, rounds);
				double fd = median(r[0].add, rounds);

				for (i = 0; i < nc; i++) {
					double a = median(r[i].absent, rounds);
					double pr = median(r[i].present,
					    rounds);
					double d = median(r[i].add, rounds);
					unsigned lines = c[i].kind ==
					    SEPARATE || c[i].kind ==
					    SEPARATE_ONE || c[i].kind ==
					    INTERLEAVED ? c[i].gens :
					    c[i].group_lines;

					printf("%-3u %-6s %-18s %3u %9.1f %6.2f"
					    " %7.1f %7.1f %7.1f %6.2f %6.2f"
					    " %6.2f %6u %9.5f %9.5f %8.2f%s\n",
					    gens, n >= 10000000 ? "large" :
					    "small", c[i].name, c[i].hashes,
					    (double)c[i].bytes / (1 << 20),
					    (double)c[i].bytes * 8 / (double)n,
					    a, pr, d, a / fa, pr / fp, d / fd,
					    lines, c[i].fpr, r[i].fp_measured,
					    r[i].rotate_ms_mib,
					    r[i].misses ? "  FALSE NEGATIVES" :
					    "");
				}
				fflush(stdout);
			}
			for (i = 0; i < nc; i++)
				if (!c[i].shares) {
					free(c[i].bits);
					free(snap[i]);
				}
		}
	load_avg(load, sizeof load);
	printf("# load at end: %s\n", load);
	return 0;
}
