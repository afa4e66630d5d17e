/* SPDX-License-Identifier: ISC */
/* endian.h: byte order, made explicit: the file and the hash are
 * little-endian on every host, so that a filter written on one machine
 * reads the same on any other.  Header only: the hash's inner loop reads
 * through these, and they must cost a load. */
#ifndef BLOOM_ENDIAN_H
#define BLOOM_ENDIAN_H

#include <stdint.h>
#include <string.h>

/* Returns x with its bytes in the opposite order. */
static inline uint32_t
bswap32(uint32_t x)
{
	return (x >> 24) | (x >> 8 & 0x0000ff00U) | (x << 8 & 0x00ff0000U) |
	    (x << 24);
}

static inline uint64_t
bswap64(uint64_t x)
{
	return (uint64_t)bswap32((uint32_t)x) << 32 |
	    bswap32((uint32_t)(x >> 32));
}

/* Converts a 64-bit word between host order and little-endian, either
 * way: for the words of a mapped file, read and written whole. */
static inline uint64_t
le64(uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return bswap64(v);
#else
	return v;
#endif
}

/*
 * Reads and writes little-endian values at any alignment.  On a host
 * known to be little-endian a memcpy is a single load or store; anywhere
 * else the value is assembled byte by byte, which is right on every host.
 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
static inline uint32_t
read_le32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof v);
	return v;
}

static inline uint64_t
read_le64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof v);
	return v;
}

static inline void
write_le32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof v);
}

static inline void
write_le64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, sizeof v);
}
#else
static inline uint32_t
read_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static inline uint64_t
read_le64(const unsigned char *p)
{
	return (uint64_t)read_le32(p) | (uint64_t)read_le32(p + 4) << 32;
}

static inline void
write_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static inline void
write_le64(unsigned char *p, uint64_t v)
{
	write_le32(p, (uint32_t)v);
	write_le32(p + 4, (uint32_t)(v >> 32));
}
#endif

#endif
