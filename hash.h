/* hash.h: interface of hash.c, the XXH3-64 hash. */
#ifndef BLOOM_HASH_H
#define BLOOM_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Returns XXH3-64 of len bytes at data with the given seed, bit-exact with
 * the reference implementation on any host. */
uint64_t hash64(const void *data, size_t len, uint64_t seed);

#endif
