/* SPDX-License-Identifier: ISC */
/* wide.h: interface of wide.c, the AVX-512 forms of store/bits.c's
 * tests.  Call them only where wide_ok says they may run. */
#ifndef BLOOM_WIDE_H
#define BLOOM_WIDE_H

#include <stddef.h>
#include <stdint.h>

struct segment;
struct probes;

/* Returns 1 if this processor runs the functions below, else 0. */
int wide_ok(void);

/* bits_test (store/bits.h). */
void wide_test(const struct segment *s, const uint64_t *hashes, size_t n,
    unsigned char *found);

/* bits_test_list (store/bits.h). */
size_t wide_test_list(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *found);

/* Tests the m keys that idx lists, or keys 0 to m if idx is NULL,
 * against p's segments (store/kernel.h), setting found[key] and, if hits
 * is not NULL, counting in hits[i] the keys segment i found first. */
void wide_test_probes(const struct probes *p, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *found, size_t *hits);

#endif
