/* SPDX-License-Identifier: ISC
 * kernels: checks that the vector tests of a key's bits in its block
 * (store/wide.c: has_bits_wide, and wide_has of the positions drawn once
 * for segments of several hash counts) answer as the scalar one
 * (has_bits, store/kernel.h) on this processor, for every hash count from
 * 1 to 24, over blocks from empty to full and blocks that hold the key;
 * and that the vector test of the age-partitioned layout (store/apbf.c,
 * matched_wide) finds the same slots as the scalar one (matched), and
 * its vector draw of an add's positions (all_positions_wide) the same as
 * the scalar one (newest_positions), for layouts from 2 to 64
 * generations.  Exits 0 if they agree, 1 if they do
 * not, 2 if the processor has no vector test to check.
 *
 * It includes store/wide.c and store/apbf.c, whose kernels are its own.
 */
#include "store/wide.c"
#include "store/apbf.c"

#include <stdio.h>

/* SplitMix64 of a counter: the test's own keys and block words. */
static uint64_t
next(uint64_t *state)
{
	*state += SPLITMIX_GAMMA;
	return splitmix(*state);
}

#ifdef APBF_WIDE
/* Checks matched_wide against matched over groups from empty to full,
 * for layouts of k hashes and g generations, at every newest slot and
 * with ages left out at random.  Returns 0 if they agree, else 1. */
static int
check_apbf(void)
{
	static const unsigned layout[][2] = { { 7, 8 }, { 9, 31 }, { 1, 64 },
	    { 16, 2 }, { 13, 4 }, { 4, 33 }, { 16, 49 }, { 2, 30 } };
	uint64_t group[16] __attribute__((aligned(64)));
	uint64_t state = 7, h, a, b, kept, runs[2] = { 0, 0 };
	struct apbf_view v;
	unsigned round, i, j, fill, n = sizeof layout / sizeof layout[0];
	unsigned pos[APBF_SLOTS_MAX], wide[APBF_SLOTS_MAX];

	for (round = 0; round < 200000; round++) {
		memset(&v, 0, sizeof v);
		v.bits = (unsigned char *)group;
		v.ngroups = 1;
		v.hashes = layout[round % n][0];
		v.slots = v.hashes + layout[round % n][1] - 1;
		v.width = APBF_GROUP_BITS / v.slots;
		v.newest = (unsigned)(next(&state) % v.slots);
		v.ages = round % 3 == 0 ? next(&state) : ~(uint64_t)0;
		h = next(&state);
		fill = round / n % 5;
		for (i = 0; i < 16; i++) {
			kept = next(&state);
			group[i] = fill == 0 ? 0 : fill == 4 ? ~(uint64_t)0 :
			    fill == 1 ? kept & next(&state) :
			    fill == 2 ? kept : kept | next(&state);
		}
		newest_positions(&v, h, pos);
		all_positions_wide(&v, h, wide);
		for (i = 0, j = v.newest; i < v.hashes; i++) {
			if (pos[j] != wide[j]) {
				printf("kernels: apbf hash %016jx, k %u, %u "
				    "slots: slot %u at %u, vector %u\n",
				    (uintmax_t)h, v.hashes, v.slots, j, pos[j],
				    wide[j]);
				return 1;
			}
			j = j + 1 == v.slots ? 0 : j + 1;
		}
		if (round % 4 == 0)
			set_key(&v, group, pos, 1);
		a = matched(&v, group, h);
		b = matched_wide(&v, group, h);
		if (a != b) {
			printf("kernels: apbf hash %016jx, k %u, %u slots: "
			    "scalar %016jx, vector %016jx\n", (uintmax_t)h,
			    v.hashes, v.slots, (uintmax_t)a, (uintmax_t)b);
			return 1;
		}
		runs[has_run(a, v.hashes)]++;
	}
	printf("kernels: apbf 200000 keys, %ju found, %ju not: the same "
	    "slots\n", (uintmax_t)runs[1], (uintmax_t)runs[0]);
	return runs[0] > 0 && runs[1] > 0 ? 0 : 1;
}
#endif

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
	if (!apbf_wide_ok() || check_apbf() != 0)
		return 1;
	printf("kernels: 200000 keys, %ju found, %ju not: the same answers\n",
	    (uintmax_t)answers[1], (uintmax_t)answers[0]);
	return answers[0] > 0 && answers[1] > 0 ? 0 : 1;
#else
	printf("kernels: no vector test in this build\n");
	return 2;
#endif
}
