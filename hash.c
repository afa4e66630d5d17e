/* SPDX-License-Identifier: ISC
 * hash.c: XXH3-64 (XXH3_64bits_withSeed), one-shot and streaming, written
 * from the xxHash specification, doc/xxhash_spec.md.  Every multi-byte read is little-endian
 * whatever the host, so a filter built on one machine is valid on any other.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hash.h"
#include "lib/endian.h"

#define PRIME32_1	0x9E3779B1U
#define PRIME32_2	0x85EBCA77U
#define PRIME32_3	0xC2B2AE3DU
#define PRIME64_1	0x9E3779B185EBCA87ULL
#define PRIME64_2	0xC2B2AE3D27D4EB4FULL
#define PRIME64_3	0x165667B19E3779F9ULL
#define PRIME64_4	0x85EBCA77C2B2AE63ULL
#define PRIME64_5	0x27D4EB2F165667C5ULL
#define PRIME_MX1	0x165667919E3779F9ULL
#define PRIME_MX2	0x9FB21C651E98DF25ULL

#define SECRET_SIZE	192	/* bytes in the default secret */
#define STRIPE_LEN	64	/* bytes consumed by one accumulate() */
#define STRIPES_PER_BLOCK ((SECRET_SIZE - STRIPE_LEN) / 8)
#define BLOCK_LEN	(STRIPE_LEN * STRIPES_PER_BLOCK)

static const uint8_t default_secret[SECRET_SIZE] = {
	0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe,
	0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
	0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb,
	0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
	0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78,
	0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
	0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e,
	0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
	0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb,
	0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
	0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e,
	0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
	0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f,
	0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
	0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31,
	0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
	0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3,
	0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
	0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49,
	0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
	0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc,
	0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
	0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28,
	0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
};

static uint64_t
rotl64(uint64_t x, unsigned int r)
{
	return (x << r) | (x >> (64 - r));
}

/*
 * Returns the low half of the 128-bit product of a and b xored with its high
 * half.  __extension__ only keeps -pedantic from warning about __int128.
 */
static uint64_t
mul128_fold64(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
	__extension__ unsigned __int128 product = (unsigned __int128)a * b;

	return (uint64_t)product ^ (uint64_t)(product >> 64);
#else
	/*
	 * Schoolbook multiplication on 32-bit halves.  The middle sum cannot
	 * overflow: it is at most (2^32 - 1)^2 + 2 * (2^32 - 1) = 2^64 - 1.
	 */
	uint64_t lo_lo = (a & 0xffffffffU) * (b & 0xffffffffU);
	uint64_t hi_lo = (a >> 32) * (b & 0xffffffffU);
	uint64_t lo_hi = (a & 0xffffffffU) * (b >> 32);
	uint64_t hi_hi = (a >> 32) * (b >> 32);
	uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xffffffffU) + lo_hi;
	uint64_t high = (hi_lo >> 32) + (cross >> 32) + hi_hi;
	uint64_t low = cross << 32 | (lo_lo & 0xffffffffU);

	return low ^ high;
#endif
}

/* The final mix of XXH3 for inputs of 9 bytes and more. */
static uint64_t
avalanche(uint64_t x)
{
	x ^= x >> 37;
	x *= PRIME_MX1;
	x ^= x >> 32;
	return x;
}

/* The final mix of XXH64, which XXH3 reuses for inputs of 0 to 3 bytes. */
static uint64_t
avalanche_xxh64(uint64_t x)
{
	x ^= x >> 33;
	x *= PRIME64_2;
	x ^= x >> 29;
	x *= PRIME64_3;
	x ^= x >> 32;
	return x;
}

/* Mixes 16 bytes of input with 16 bytes of secret and the seed. */
static uint64_t
mix16(const uint8_t *in, const uint8_t *secret, uint64_t seed)
{
	uint64_t lo = read_le64(in) ^ (read_le64(secret) + seed);
	uint64_t hi = read_le64(in + 8) ^ (read_le64(secret + 8) - seed);

	return mul128_fold64(lo, hi);
}

static uint64_t
hash_empty(uint64_t seed)
{
	return avalanche_xxh64(seed ^ read_le64(default_secret + 56) ^
	    read_le64(default_secret + 64));
}

static uint64_t
hash_1to3(const uint8_t *in, size_t len, uint64_t seed)
{
	uint32_t combined = (uint32_t)in[len - 1] | (uint32_t)len << 8 |
	    (uint32_t)in[0] << 16 | (uint32_t)in[len >> 1] << 24;
	uint64_t flip = (uint64_t)(read_le32(default_secret) ^
	    read_le32(default_secret + 4)) + seed;

	return avalanche_xxh64(flip ^ combined);
}

static uint64_t
hash_4to8(const uint8_t *in, size_t len, uint64_t seed)
{
	uint64_t first = read_le32(in);
	uint64_t last = read_le32(in + len - 4);
	uint64_t modified = seed ^ (uint64_t)bswap32((uint32_t)seed) << 32;
	uint64_t flip = (read_le64(default_secret + 8) ^
	    read_le64(default_secret + 16)) - modified;
	uint64_t x = (last | first << 32) ^ flip;

	x ^= rotl64(x, 49) ^ rotl64(x, 24);
	x *= PRIME_MX2;
	x ^= (x >> 35) + len;
	x *= PRIME_MX2;
	x ^= x >> 28;
	return x;
}

static uint64_t
hash_9to16(const uint8_t *in, size_t len, uint64_t seed)
{
	uint64_t low = ((read_le64(default_secret + 24) ^
	    read_le64(default_secret + 32)) + seed) ^ read_le64(in);
	uint64_t high = ((read_le64(default_secret + 40) ^
	    read_le64(default_secret + 48)) - seed) ^ read_le64(in + len - 8);

	return avalanche(len + bswap64(low) + high + mul128_fold64(low, high));
}

/*
 * Pairs 16-byte chunks from the front with chunks from the back, meeting in
 * the middle (they overlap when len is not a multiple of 32).  The spec walks
 * the pairs from the middle outwards; the sum is the same either way.
 */
static uint64_t
hash_17to128(const uint8_t *in, size_t len, uint64_t seed)
{
	uint64_t acc = (uint64_t)len * PRIME64_1;
	size_t i, rounds = ((len - 1) >> 5) + 1;

	for (i = 0; i < rounds; i++) {
		acc += mix16(in + 16 * i, default_secret + 32 * i, seed);
		acc += mix16(in + len - 16 * i - 16,
		    default_secret + 32 * i + 16, seed);
	}
	return avalanche(acc);
}

/*
 * The first 128 bytes use the secret as it is; the rest of the chunks use it
 * again from offset 3, as the secret is only 192 bytes long.
 */
static uint64_t
hash_129to240(const uint8_t *in, size_t len, uint64_t seed)
{
	uint64_t acc = (uint64_t)len * PRIME64_1;
	size_t i, chunks = len >> 4;

	for (i = 0; i < 8; i++)
		acc += mix16(in + 16 * i, default_secret + 16 * i, seed);
	acc = avalanche(acc);
	for (i = 8; i < chunks; i++)
		acc += mix16(in + 16 * i, default_secret + 16 * (i - 8) + 3,
		    seed);
	acc += mix16(in + len - 16, default_secret + 119, seed);
	return avalanche(acc);
}

/* Folds one 64-byte stripe into the eight accumulators. */
static void
accumulate(uint64_t acc[8], const uint8_t *stripe, const uint8_t *secret)
{
	uint64_t data, key;
	int i;

	for (i = 0; i < 8; i++) {
		data = read_le64(stripe + 8 * i);
		key = data ^ read_le64(secret + 8 * i);
		acc[i ^ 1] += data;
		acc[i] += (key & 0xffffffffU) * (key >> 32);
	}
}

/* Stirs the accumulators at the end of every full block. */
static void
scramble(uint64_t acc[8], const uint8_t *secret)
{
	int i;

	for (i = 0; i < 8; i++) {
		acc[i] ^= acc[i] >> 47;
		acc[i] ^= read_le64(secret + SECRET_SIZE - STRIPE_LEN + 8 * i);
		acc[i] *= PRIME32_1;
	}
}

/*
 * Derives the secret of a seed; seed 0 yields the default secret, which is
 * why hash_long skips the derivation for it.
 */
static void
derive_secret(uint8_t secret[SECRET_SIZE], uint64_t seed)
{
	int i;

	for (i = 0; i < SECRET_SIZE / 16; i++) {
		write_le64(secret + 16 * i,
		    read_le64(default_secret + 16 * i) + seed);
		write_le64(secret + 16 * i + 8,
		    read_le64(default_secret + 16 * i + 8) - seed);
	}
}

/* Merges the accumulators of an input of len bytes into the hash. */
static uint64_t
merge(const uint64_t acc[8], const uint8_t *secret, uint64_t len)
{
	uint64_t result = len * PRIME64_1;
	int i;

	for (i = 0; i < 4; i++)
		result += mul128_fold64(
		    acc[2 * i] ^ read_le64(secret + 11 + 16 * i),
		    acc[2 * i + 1] ^ read_le64(secret + 11 + 16 * i + 8));
	return avalanche(result);
}

/*
 * The last block, full or not, is left out of the block loop: its stripes are
 * accumulated without a scramble, then the last 64 bytes of the input, which
 * may overlap stripes already done, are accumulated once more.
 */
static uint64_t
hash_long(const uint8_t *in, size_t len, uint64_t seed)
{
	uint64_t acc[8] = {
		PRIME32_3, PRIME64_1, PRIME64_2, PRIME64_3,
		PRIME64_4, PRIME32_2, PRIME64_5, PRIME32_1,
	};
	uint8_t derived[SECRET_SIZE];
	const uint8_t *secret = default_secret;
	const uint8_t *block;
	size_t blocks = (len - 1) / BLOCK_LEN, stripes, b, n;

	if (seed != 0) {
		derive_secret(derived, seed);
		secret = derived;
	}
	for (b = 0; b < blocks; b++) {
		block = in + b * BLOCK_LEN;
		for (n = 0; n < STRIPES_PER_BLOCK; n++)
			accumulate(acc, block + n * STRIPE_LEN, secret + 8 * n);
		scramble(acc, secret);
	}
	block = in + blocks * BLOCK_LEN;
	stripes = (len - 1 - blocks * BLOCK_LEN) / STRIPE_LEN;
	for (n = 0; n < stripes; n++)
		accumulate(acc, block + n * STRIPE_LEN, secret + 8 * n);
	accumulate(acc, in + len - STRIPE_LEN,
	    secret + SECRET_SIZE - STRIPE_LEN - 7);
	return merge(acc, secret, len);
}

uint64_t
hash64(const void *data, size_t len, uint64_t seed)
{
	const uint8_t *in = data;

	if (len == 0)
		return hash_empty(seed);
	if (len <= 3)
		return hash_1to3(in, len, seed);
	if (len <= 8)
		return hash_4to8(in, len, seed);
	if (len <= 16)
		return hash_9to16(in, len, seed);
	if (len <= 128)
		return hash_17to128(in, len, seed);
	if (len <= 240)
		return hash_129to240(in, len, seed);
	return hash_long(in, len, seed);
}

/*
 * The streaming form.  It keeps the input's last bytes, at least one and
 * at most HASH_BUFFER, unconsumed, so that the digest can tell a short
 * input from a long one and handle the last stripe as the one-shot form
 * does: the stripes before it are accumulated as they come, with a
 * scramble after every STRIPES_PER_BLOCK of them, which is where the
 * one-shot form scrambles too.
 */
_Static_assert(HASH_BUFFER % STRIPE_LEN == 0 && HASH_BUFFER >= 240,
    "the buffer holds whole stripes and any short input");

void
hash64_begin(struct hash_state *st, uint64_t seed)
{
	static const uint64_t init[8] = {
		PRIME32_3, PRIME64_1, PRIME64_2, PRIME64_3,
		PRIME64_4, PRIME32_2, PRIME64_5, PRIME32_1,
	};

	memset(st, 0, sizeof *st);
	memcpy(st->acc, init, sizeof st->acc);
	st->seed = seed;
	if (seed != 0)
		derive_secret(st->secret, seed);
	else
		memcpy(st->secret, default_secret, SECRET_SIZE);
}

/* Accumulates n whole stripes at in into acc, scrambling at the end of
 * each block; *done counts the stripes of the block so far. */
static void
consume(uint64_t acc[8], unsigned *done, const uint8_t *in, size_t n,
    const uint8_t *secret)
{
	for (; n > 0; n--, in += STRIPE_LEN) {
		accumulate(acc, in, secret + 8 * *done);
		if (++*done == STRIPES_PER_BLOCK) {
			scramble(acc, secret);
			*done = 0;
		}
	}
}

void
hash64_update(struct hash_state *st, const void *data, size_t len)
{
	const uint8_t *in = data;
	size_t n, room;

	st->total += len;
	if (len <= HASH_BUFFER - st->buffered) {
		memcpy(st->buf + st->buffered, in, len);
		st->buffered += len;
		return;
	}
	/* There is more than the buffer holds: fill and consume it whole,
	 * then whole stripes of the input, keeping at least a byte. */
	room = HASH_BUFFER - st->buffered;
	memcpy(st->buf + st->buffered, in, room);
	in += room;
	len -= room;
	consume(st->acc, &st->stripes, st->buf, HASH_BUFFER / STRIPE_LEN,
	    st->secret);
	memcpy(st->prev, st->buf + HASH_BUFFER - STRIPE_LEN, STRIPE_LEN);
	st->buffered = 0;
	if (len > HASH_BUFFER) {
		n = (len - 1) / STRIPE_LEN;
		consume(st->acc, &st->stripes, in, n, st->secret);
		in += n * STRIPE_LEN;
		len -= n * STRIPE_LEN;
		memcpy(st->prev, in - STRIPE_LEN, STRIPE_LEN);
	}
	memcpy(st->buf, in, len);
	st->buffered = len;
}

uint64_t
hash64_digest(const struct hash_state *st)
{
	uint8_t last[STRIPE_LEN];
	uint64_t acc[8];
	unsigned done = st->stripes;
	size_t n;

	if (st->total <= 240)
		return hash64(st->buf, (size_t)st->total, st->seed);
	memcpy(acc, st->acc, sizeof acc);
	n = (st->buffered - 1) / STRIPE_LEN;
	consume(acc, &done, st->buf, n, st->secret);
	/* The last stripe is the input's last 64 bytes, some of them from
	 * before the buffer if it holds fewer. */
	if (st->buffered >= STRIPE_LEN)
		memcpy(last, st->buf + st->buffered - STRIPE_LEN, STRIPE_LEN);
	else {
		memcpy(last, st->prev + st->buffered,
		    STRIPE_LEN - st->buffered);
		memcpy(last + STRIPE_LEN - st->buffered, st->buf,
		    st->buffered);
	}
	accumulate(acc, last, st->secret + SECRET_SIZE - STRIPE_LEN - 7);
	return merge(acc, st->secret, st->total);
}
