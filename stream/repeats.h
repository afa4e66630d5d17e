/* SPDX-License-Identifier: ISC */
/* repeats.h: interface of repeats.c, the keys of one chunk of lines that
 * are new to the filter, each called new once: a line repeated inside the
 * chunk is new only the first time, as if the chunk were added line by
 * line. */
#ifndef BLOOM_REPEATS_H
#define BLOOM_REPEATS_H

#include <stddef.h>
#include <stdint.h>

/* Keeps isnew[i] == 1 only for the first of the keys 0..n with the same
 * hash that it marks 1, setting the others' to 0, with table (entries
 * slots of scratch, at least twice the keys marked 1) as a hash set.  Other
 * values of isnew are left alone. */
void repeats_once(const uint64_t *hashes, unsigned char *isnew, size_t n,
    uint32_t *table, size_t entries);

#endif
