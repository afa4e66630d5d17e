/* SPDX-License-Identifier: ISC
 * layouts-math: the exact false-positive rates of the window layouts that
 * bench/layouts measures, and their sizing (bench/README.md, "The math").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/layouts.h"
#include "params.h"

/* Pois(i; lambda). */
static double
poisson(double lambda, unsigned i)
{
	if (lambda <= 0.0)
		return i == 0 ? 1.0 : 0.0;
	return exp((double)i * log(lambda) - lambda - lgamma((double)i + 1.0));
}

/*
 * The false-positive rate of one block of width bits with k positions per
 * key, the block's load Poisson(lambda): sum_i Pois(i) E[(X_{ki}/width)^k],
 * X_j the bits j balls occupy, by the same recurrence over balls as
 * params.c (written again here for any width).
 */
double
block_fpr(unsigned width, unsigned k, double lambda)
{
	double occ[1025] = { 1.0 }, sum = 0.0, mass = 0.0;
	unsigned i, j, x, top = (unsigned)(lambda + 12.0 * sqrt(lambda) + 30.0);

	for (i = 0; i <= top; i++) {
		double pi = poisson(lambda, i), f = 0.0;

		for (x = 1; x <= width; x++)
			f += occ[x] * pow((double)x / width, (double)k);
		sum += pi * f;
		mass += pi;
		for (j = 0; j < k; j++) {	/* k more balls */
			for (x = width; x > 0; x--)
				occ[x] = occ[x] * ((double)x / width) +
				    occ[x - 1] * ((double)(width + 1 - x) / width);
			occ[0] = 0.0;
		}
	}
	return sum + (1.0 - mass);
}

/* The exact false-positive rate of a blocked age-partitioned filter just
 * before a rotation (bench/README.md, "The math"): params.c's, for any
 * slot width. */
double
apbf_fpr(unsigned k, unsigned l, unsigned w, double lambda)
{
	return params_apbf_rate(k, l, w, lambda);
}

/* The largest lambda with rate(lambda) <= p, by bisection on a rate that
 * grows with lambda. */
static double
solve_lambda(double (*rate)(const void *, double), const void *arg, double p)
{
	double lo = 0.0, hi = 1.0;
	int i;

	while (rate(arg, hi) <= p && hi < 1e6)
		lo = hi, hi *= 2.0;
	for (i = 0; i < 36; i++) {
		double mid = 0.5 * (lo + hi);

		if (rate(arg, mid) <= p)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

struct apbf_arg { unsigned k, l, w; };
struct word_arg { unsigned width, k, gens; };

static double
apbf_rate(const void *arg, double lambda)
{
	const struct apbf_arg *a = arg;

	return apbf_fpr(a->k, a->l, a->w, lambda);
}

/* A word per generation: the generations' words are independent given
 * their loads, which are independent, so 1 - (1 - f)^G. */
double
words_fpr(unsigned width, unsigned k, unsigned gens, double lambda)
{
	return -expm1((double)gens * log1p(-block_fpr(width, k, lambda)));
}

static double
word_rate(const void *arg, double lambda)
{
	const struct word_arg *a = arg;

	return words_fpr(a->width, a->k, a->gens, lambda);
}

/* The best k for an APBF of l + 1 generations in lines of line_bits. */
struct sizing
size_apbf(unsigned gens, unsigned line_bits, double p, int verbose)
{
	struct sizing best = { 0, 0, 0, 0.0, 1e300 };
	struct apbf_arg arg;
	unsigned k, l = gens - 1;

	/* The bits per item fall to one minimum and rise after it; stop
	 * once they are a fifth above it. */
	for (k = 2; k <= 12 && k + l <= SLOTS_MAX; k++) {
		double lambda, bits;

		arg.k = k;
		arg.l = l;
		arg.w = line_bits / (k + l);
		if (arg.w < 4)
			break;
		lambda = solve_lambda(apbf_rate, &arg, p);
		bits = line_bits / ((double)l * lambda);
		if (verbose)
			printf("#   apbf G=%u %u-bit k=%2u slots=%2u of %2u bits:"
			    " %.3f items/line/gen, %.2f bits/item\n", gens,
			    line_bits, k, k + l, arg.w, lambda, bits);
		if (bits > 1.2 * best.bits)
			break;
		if (bits < best.bits) {
			best.k = k;
			best.w = arg.w;
			best.s = k + l;
			best.lambda = lambda;
			best.bits = bits;
		}
	}
	return best;
}

struct sizing
size_words(unsigned gens, double p, int verbose)
{
	struct sizing best = { 0, 0, 0, 0.0, 1e300 };
	struct word_arg arg;
	unsigned k, width = gens <= 8 ? 64 : 32;
	unsigned line_bits = gens * width <= 512 ? 512 : 1024;

	for (k = 1; k <= 16; k++) {
		double lambda, bits;

		arg.width = width;
		arg.k = k;
		arg.gens = gens;
		lambda = solve_lambda(word_rate, &arg, p);
		bits = line_bits / ((double)(gens - 1) * lambda);
		if (verbose)
			printf("#   words G=%u %u-bit words k=%2u: %.3f"
			    " items/line/gen, %.2f bits/item\n", gens, width,
			    k, lambda, bits);
		if (bits < best.bits) {
			best.k = k;
			best.w = width;
			best.s = line_bits / 512;
			best.lambda = lambda;
			best.bits = bits;
		}
	}
	return best;
}

