/* SPDX-License-Identifier: ISC */
/* mates.h: interface of mates.c, the keys of a chunk tested at once that
 * repeat others of the chunk.  A segment is store/handle.h's, opaque
 * here. */
#ifndef BLOOM_MATES_H
#define BLOOM_MATES_H

#include <stddef.h>
#include <stdint.h>

struct segment;

/* Marks with flag (not 0 or 1) each key of the n that is not found
 * (found[i] 0) and may share its block in segment t with another such
 * key: what mates_chunk needs to look at in a chunk of these keys
 * whose new ones are among those not found. */
void mates_mark(const struct segment *t, const uint64_t *hashes,
    unsigned char *found, size_t n, unsigned char flag);

/* Makes the answers of a chunk of n keys tested against segment t at once
 * (isnew[i] 1 for a new key) those of its keys added to t one at a time:
 * a key marked 1 is marked 0 if the keys marked 1 before it set its
 * missing bits, as a repeat of one does.  If marked is not NULL, only the
 * keys it marks flag (mates_mark over a superset of the new
 * keys) are looked at.  A sorted chunk (a sorted batch's, whose keys are
 * spread over the whole of t) walks t in file order and lets go of its
 * pages behind the walk, so that they do not stay mapped all at once.
 * Returns 0, or -1 with errno set (no memory) and isnew as it was. */
int mates_chunk(const struct segment *t, const uint64_t *hashes,
    unsigned char *isnew, size_t n, const unsigned char *marked,
    unsigned char flag, int sorted);

/* Marks found (1) each of the m keys that idx lists, in increasing
 * order (keys 0 to m if idx is NULL), that found marks 0 (not in segment
 * t) and whose missing bits the keys before it in the list that found
 * marks 0 would set: the answers of adding the keys one at a time, for a
 * sorted pass that tests a block's keys together.  The keys' blocks are
 * read from buf, which holds t's blocks from first on, or from the
 * mapping if buf is NULL.  It works in *scratch, of *size bytes (NULL
 * and 0 at first), which it grows as needed and the caller frees: a
 * sorted pass calls it once per window.  Returns 0, or -1 with errno set
 * (no memory) and found as it was. */
int mates_list(const struct segment *t, const unsigned char *buf,
    uint64_t first, const uint64_t *hashes, const uint32_t *idx, size_t m,
    unsigned char *found, void **scratch, size_t *size);

#endif
