/* SPDX-License-Identifier: ISC
 * bench/randread: the machine's rate of random 64-byte reads in an array
 * of a given size, what a Bloom filter's test costs at least (issue 39:
 * "random reads into a big array cost what they cost").
 *
 *	bench/randread SIZE [READS]
 *
 * Allocates SIZE bytes (suffix K, M, G), writes every page, then reads
 * READS (default 20000000) 64-byte lines at positions drawn by SplitMix64,
 * 16 independent reads in flight at a time (as bloom's prefetching keeps
 * them), and prints the nanoseconds per read.  Exits 0, or 2 on trouble.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/helper.h"

#define LINE	64
#define AHEAD	16

static uint64_t
splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int
main(int argc, char **argv)
{
	uint64_t size, reads = 20000000, lines, seed = 1, sum = 0, i, pos[AHEAD];
	unsigned char *a;
	struct timespec t0, t1;
	unsigned j;

	if (argc < 2 || argc > 3 || bench_size(argv[1], &size) == -1 ||
	    (argc == 3 && (reads = strtoull(argv[2], NULL, 10)) == 0)) {
		fprintf(stderr, "usage: bench/randread SIZE [READS]\n");
		return 2;
	}
	if ((a = malloc(size)) == NULL) {
		perror("bench/randread: malloc");
		return 2;
	}
	memset(a, 1, size);
	lines = size / LINE;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < reads; i += AHEAD) {
		for (j = 0; j < AHEAD; j++) {
			pos[j] = (splitmix64(&seed) % lines) * LINE;
			__builtin_prefetch(a + pos[j]);
		}
		for (j = 0; j < AHEAD; j++)
			sum += a[pos[j]];
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* The sum is printed to stderr if it is never 0, so that the
	 * reads are not optimized away. */
	if (sum == 0)
		fputs("bench/randread: no reads\n", stderr);
	printf("%.2f\n", ((double)(t1.tv_sec - t0.tv_sec) * 1e9 +
	    (double)(t1.tv_nsec - t0.tv_nsec)) / (double)reads);
	free(a);
	return 0;
}
