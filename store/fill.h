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

/* For a generation i of an age-partitioned window: sets *slot_bits to the
 * bits of its slot over all groups and returns how many are set (0 and 0
 * for any other segment).  Reads a sparse file's holes as it maps them. */
uint64_t fill_slot(struct bloom *b, unsigned i, uint64_t *slot_bits);

#endif
