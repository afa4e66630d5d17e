/*
 * kernels: checks that the vector tests of a key's bits in its block
 * (store/wide.c: has_bits_wide, and wide_has of the positions drawn once
 * for segments of several hash counts) answer as the scalar one
 * (has_bits, store/kernel.h) on this processor, for every hash count from
 * 1 to 24, over blocks from empty to full and blocks that hold the key.  Exits 0 if they agree,
 * 1 if they do not, 2 if the processor has no vector test to check.
 *
 * It includes store/wide.c, whose kernels are its own.
 */
#include "store/wide.c"

#include <stdio.h>

/* SplitMix64 of a counter: the test's own keys and block words. */
static uint64_t
next(uint64_t *state)
{
	*state += SPLITMIX_GAMMA;
	return splitmix(*state);
}

int
main(void)
{
#ifdef WIDE_TEST
	uint64_t block[BLOCK_BYTES / 8] __attribute__((aligned(64)));
	uint64_t state = 1, h, kept, answers[2] = { 0, 0 };
	struct wide_positions w;
	unsigned k, i, round, fill;
	int a, b, c;

	if (!wide_ok()) {
		printf("kernels: no AVX-512 here\n");
		return 2;
	}
	for (round = 0; round < 200000; round++) {
		h = next(&state);
		k = 1 + round % 24;
		fill = round / 24 % 5;	/* 0: empty ... 4: all ones */
		for (i = 0; i < BLOCK_BYTES / 8; i++) {
			kept = next(&state);
			block[i] = fill == 0 ? 0 : fill == 4 ? ~(uint64_t)0 :
			    fill == 1 ? kept & next(&state) :
			    fill == 2 ? kept : kept | next(&state);
		}
		/* One round in three, the key's own bits are set. */
		if (round % 3 == 0)
			POSITIONS(h, k, block[word] |= bit);
		a = has_bits(block, h, k);
		b = has_bits_wide(block, h, k);
		wide_positions(h, HASHES_MAX, &w);
		c = wide_has((const unsigned char *)block, &w, k);
		if (a != b || a != c) {
			printf("kernels: hash %016jx, %u hashes: scalar %d, "
			    "vector %d, drawn once %d\n", (uintmax_t)h, k, a,
			    b, c);
			return 1;
		}
		answers[a]++;
	}
	printf("kernels: 200000 keys, %ju found, %ju not: the same answers\n",
	    (uintmax_t)answers[1], (uintmax_t)answers[0]);
	return answers[0] > 0 && answers[1] > 0 ? 0 : 1;
#else
	printf("kernels: no vector test in this build\n");
	return 2;
#endif
}
