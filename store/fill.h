/* SPDX-License-Identifier: ISC */
/* fill.h: interface of fill.c, the fill of a segment: its bits counted,
 * holes read as zero bits without reading them. */
#ifndef BLOOM_FILL_H
#define BLOOM_FILL_H

#include <stdint.h>

#include "params.h"

struct bloom;

/* Fills hist[c] with the number of blocks of segment i of b that have c
 * bits set, c = 0..512, and returns the total number of bits set. */
uint64_t fill_count(struct bloom *b, unsigned i,
    uint64_t hist[BLOCK_BITS + 1]);

/* Sets e from the fill of segment i of b and returns 0; or, for a
 * generation of a window whose generations are slots of one array (its
 * layout's slot_estimate), from the fill of its slot, with fpr 0, and
 * returns 1: the array is counted once (fill_estimate_array).  Reads a
 * sparse file's holes as zero bits without reading them. */
int fill_estimate(struct bloom *b, unsigned i, struct params_estimate *e);

/* For a window whose generations share one array: sets e to the array's
 * bits, how many are set, and the rate of a test of it when the live
 * generation with the most keys holds most (items 0), and returns 1;
 * returns 0, e zeroed, if b has no such array. */
int fill_estimate_array(struct bloom *b, uint64_t most,
    struct params_estimate *e);

#endif
