/* SPDX-License-Identifier: ISC */
/* apbf.h: interface of apbf.c, the age-partitioned window layout
 * (LAYOUT_APBF, params.c says how it works): where a key's bits are, and
 * testing, adding and emptying slots over a group array as mapped.  Its
 * table of operations on a segment is layout_apbf (layout.h, in ages.c). */
#ifndef BLOOM_APBF_H
#define BLOOM_APBF_H

#include <stddef.h>
#include <stdint.h>

/* A window's group array as a reader or adder sees it at one generation.
 * Generation g's slot is slot (-g) mod s of every group, so the slot of
 * age a (0 the newest) at generation E is (a - E) mod s. */
struct apbf_view {
	unsigned char *bits;	/* the first group, as mapped; NULL if the
				 * segment is not of this layout */
	uint64_t ngroups;	/* groups of APBF_GROUP_BITS */
	unsigned hashes;	/* k: slots an add sets */
	unsigned slots;		/* s = k + G - 1 */
	unsigned width;		/* w = APBF_GROUP_BITS / s: bits of a slot */
	unsigned newest;	/* the slot of age 0 now */
	uint64_t ages;		/* bit a: the slot of age a holds what it
				 * should (a generation stamped whole) */
};

/* Returns the slot generation g takes in a group of slots slots. */
unsigned apbf_slot_of(uint64_t g, unsigned slots);

/* Tests the m keys that idx lists (or keys 0 to m if idx is NULL) against
 * v, setting found[key] to 1 for those present (k consecutive ages that
 * count have the key's bit), else 0; returns how many it found. */
size_t apbf_test(const struct apbf_view *v, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *found);

/* Returns 1 if this processor runs apbf_test with AVX-512, else 0. */
int apbf_wide_ok(void);

/* apbf_test without AVX-512, whatever the processor: for tests/kernels. */
size_t apbf_test_scalar(const struct apbf_view *v, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *found);

/* Adds the m keys that idx lists (or keys 0 to m) to v's k newest slots,
 * setting isnew[key] to 1 if one of those bits was clear, else 0; returns
 * how many were new.  With atomic ORs, or plain stores if alone (no other
 * process sets bits meanwhile). */
size_t apbf_add(const struct apbf_view *v, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *isnew, int alone);

/* Sets the bit of each of the m keys that idx lists (or keys 0 to m) in
 * v's k newest slots: an add of keys known new, apbf_add's test of them
 * being what skips the stores of keys already there.  alone as apbf_add's. */
void apbf_set(const struct apbf_view *v, const uint64_t *hashes,
    const uint32_t *idx, size_t m, int alone);

/* Sets held[key] to 1 if the m keys that idx lists (or keys 0 to m) have
 * their bit in each of v's k newest slots (apbf_add would call them not
 * new), else 0. */
void apbf_held(const struct apbf_view *v, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *held);

/* Empties the slots that mask lists (bit j: slot j) in every group. */
void apbf_clear(const struct apbf_view *v, uint64_t mask);

/* ORs the slots of the ages that count in from (what a reader of from
 * tests, and no other) of every group into the same slots of to, a view
 * of the same geometry at the same generation, with atomic ORs. */
void apbf_or(const struct apbf_view *to, const struct apbf_view *from);

/* Counts the bits set in slot j of every group. */
uint64_t apbf_slot_bits(const struct apbf_view *v, unsigned j);

#endif
