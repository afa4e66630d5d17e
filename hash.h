/* SPDX-License-Identifier: ISC */
/* hash.h: interface of hash.c, the XXH3-64 hash. */
#ifndef BLOOM_HASH_H
#define BLOOM_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Returns XXH3-64 of len bytes at data with the given seed, bit-exact with
 * the reference implementation on any host. */
uint64_t hash64(const void *data, size_t len, uint64_t seed);

#define HASH_BUFFER	256	/* input bytes a stream holds back */

/* XXH3-64 of an input given in pieces: hash64_begin, hash64_update for
 * each piece, then hash64_digest gives what hash64 gives for the whole. */
struct hash_state {
	uint64_t acc[8];		/* the accumulators */
	uint64_t seed;			/* as given to hash64_begin */
	uint64_t total;			/* bytes given so far */
	size_t buffered;		/* bytes of buf not consumed */
	unsigned stripes;		/* stripes of this block consumed */
	uint8_t secret[192];		/* the secret of the seed */
	uint8_t buf[HASH_BUFFER];	/* the input's last bytes */
	uint8_t prev[64];		/* the 64 bytes consumed last */
};

/* Starts st on an empty input with the given seed. */
void hash64_begin(struct hash_state *st, uint64_t seed);

/* Appends the len bytes at data to st's input. */
void hash64_update(struct hash_state *st, const void *data, size_t len);

/* Returns the hash of st's input so far; st is left as it was. */
uint64_t hash64_digest(const struct hash_state *st);

#endif
