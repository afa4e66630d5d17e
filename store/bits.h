/* SPDX-License-Identifier: ISC */
/* bits.h: interface of bits.c, the bit arrays of the segments: where a
 * key's block and bits are, and testing and setting keys in a segment,
 * with prefetching, each through the segment's layout (layout.h), and
 * the passes over several segments.  A segment is store/handle.h's,
 * opaque here. */
#ifndef BLOOM_BITS_H
#define BLOOM_BITS_H

#include <stddef.h>
#include <stdint.h>

#include "params.h"

struct segment;

/* Where a segment's blocks lie. */
struct bits_extent {
	unsigned char *bits;	/* its first block, as mapped */
	uint64_t offset;	/* that block's offset in the file */
	uint64_t nblocks;	/* its blocks */
};

/* Returns where segment s's blocks lie. */
struct bits_extent bits_extent(const struct segment *s);

/* Returns the block of segment s, from its first, that the key with hash
 * h belongs to (where its bits begin): s's block count or more if another
 * slice holds it. */
uint64_t bits_block(const struct segment *s, uint64_t h);

/* bits_block as a function of segment s's layout, to be chosen once for
 * s and called for each key (a sorted batch's sort). */
typedef uint64_t bits_block_fn(const struct segment *s, uint64_t h);
bits_block_fn *bits_block_of(const struct segment *s);

/* Returns the slice, from 0, of slices equal slices of the whole filter
 * s is (or is a slice of) that holds the key with hash h. */
uint32_t bits_slice_of(const struct segment *s, uint64_t h,
    uint32_t slices);

/* Tests the n keys with the given hashes against segment s, setting
 * found[i] to 1 if key i may be in it, else 0. */
void bits_test(const struct segment *s, const uint64_t *hashes, size_t n,
    unsigned char *found);

/* Tests the m keys that idx lists (indices into hashes) against segment
 * s, setting found[idx[j]] to 1 if key idx[j] may be in it, else 0. */
void bits_test_list(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *found);

/* Tests as bits_test_list does, against a copy of segment s's blocks
 * from block first on, in buf, for keys of those blocks only; first is a
 * multiple of bits_unit_blocks(s). */
void bits_test_copy(const struct segment *s, const unsigned char *buf,
    uint64_t first, const uint64_t *hashes, const uint32_t *idx, size_t m,
    unsigned char *found);

/* Sets held[idx[j]] to 1 if adding key idx[j] to segment s would set no
 * bit (bits_add_list would call it not new), else 0, against a copy as
 * bits_test_copy. */
void bits_held_copy(const struct segment *s, const unsigned char *buf,
    uint64_t first, const uint64_t *hashes, const uint32_t *idx, size_t m,
    unsigned char *held);

/* Returns the blocks a key's bits of segment s may span, aligned: a copy
 * of its blocks begins at a multiple of it. */
unsigned bits_unit_blocks(const struct segment *s);

/* Keeps in idx[0..m) only the keys that found does not mark, or if all
 * lists there the keys of 0 to m that it does not mark; returns how
 * many. */
size_t bits_missing(uint32_t *idx, size_t m, const unsigned char *found,
    int all);

/* Returns 1 if a segment before seg[i] shares its array and its layout
 * (an age-partitioned window's generations), and so answers as it does:
 * a pass tests it no more. */
int bits_shared(const struct segment *const *seg, unsigned i);

/* Tests the n keys against the nseg segments seg lists, the likeliest
 * first: all n if all, else the m that idx lists (indices into hashes;
 * found holds what is found so far).  Sets found[i] to 1 if a segment may
 * have key i, else 0; leaves in idx the keys found nowhere and returns how
 * many.  A key's bits are found once for all the segments. */
size_t bits_test_segments(const struct segment *const *seg, unsigned nseg,
    const uint64_t *hashes, size_t n, unsigned char *found, uint32_t *idx,
    size_t m, int all);

/* Tests the n keys against the nseg segments of a growable filter, the
 * fullest first, a key until one has it: all n if all, else the m that
 * idx lists (indices into hashes; found holds what is found so far).  A
 * segment at a time, or in one pass if a sample of the keys says most are
 * absent.  Sets found[i] to 1 if a segment may have key i; leaves in idx,
 * in order, the keys found nowhere and returns how many. */
size_t bits_test_rest(const struct segment *const *seg, unsigned nseg,
    const uint64_t *hashes, size_t n, unsigned char *found, uint32_t *idx,
    size_t m, int all);

/* Adds the n keys to segment s in order, setting isnew[i] to 1 if one of
 * key i's bits was clear, else 0; returns how many were new to it.  Bits
 * are set with atomic ORs: processes adding at once lose nothing. */
size_t bits_add(const struct segment *s, const uint64_t *hashes, size_t n,
    unsigned char *isnew);

/* Adds the m keys that idx lists to segment s in that order, setting
 * isnew[idx[j]] as bits_add does; returns how many were new to it. */
size_t bits_add_list(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *isnew);

/* Adds the m keys that idx lists, or keys 0 to m if idx is NULL, as
 * bits_add_list or bits_add do, with plain stores: only for a process that
 * no other sets bits of s meanwhile (locks.h). */
size_t bits_add_alone(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *isnew);

/* Sets mask[0..BLOCK_BYTES/8) to the bits of the key with hash h in its
 * block of segment s, in file byte order, and returns that block's words
 * (read them with relaxed atomic loads: other processes set bits). */
const uint64_t *bits_key_mask(const struct segment *s, uint64_t h,
    uint64_t mask[BLOCK_BYTES / 8]);

/* Sets the bits of the m keys that idx lists in segment s, keys known to
 * be new (tested just before), with atomic ORs and without testing them
 * again. */
void bits_set_list(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m);

/* Sets them as bits_set_list does, with plain ORs: only for a process
 * that no other sets bits of s meanwhile (locks.h). */
void bits_set_list_alone(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m);

/* ORs the bits of segment from into segment to, with atomic ORs: the
 * blocks of their whole filter that both hold (each holds nblocks from
 * its lo on), which may be none; of age-partitioned generations, the
 * slots of the ages that count in from (apbf_or). */
void bits_or(const struct segment *to, const struct segment *from);

/* Counts the bits of each of nblocks blocks from word into hist (which it
 * adds to); returns the total. */
uint64_t bits_count(const uint64_t *word, uint64_t nblocks,
    uint64_t hist[BLOCK_BITS + 1]);

#endif
