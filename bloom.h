/* bloom.h: interface of bloom.c, the filter file: format, create, open,
 * add, test and fill counting. */
#ifndef BLOOM_BLOOM_H
#define BLOOM_BLOOM_H

#include <stddef.h>
#include <stdint.h>

#include "params.h"

#define BLOOM_HEADER_SIZE	128	/* bytes before the bit array */
#define BLOOM_VERSION		1	/* file format version */
#define BLOOM_LAYOUT_BLOCKED512	1	/* layout id: 512-bit blocks */
#define BLOOM_HASH_XXH3_64	1	/* hash id: XXH3-64 */

/* What a bloom function can fail with; BLOOM_ERRNO means see errno. */
enum bloom_status {
	BLOOM_OK = 0,
	BLOOM_ERRNO,		/* a system call failed; errno says why */
	BLOOM_ENOTREG,		/* not a regular file */
	BLOOM_ESHORT,		/* shorter than a header */
	BLOOM_EMAGIC,		/* bad magic */
	BLOOM_EVERSION,		/* unsupported format version */
	BLOOM_EHDRSIZE,		/* header size is not ours */
	BLOOM_ELAYOUT,		/* unknown layout id */
	BLOOM_EHASH,		/* unknown hash id */
	BLOOM_ERESERVED,	/* reserved header bytes are not zero */
	BLOOM_ENBITS,		/* bit count zero, not whole blocks, too large */
	BLOOM_EHASHES,		/* hash count out of range */
	BLOOM_ECAPACITY,	/* capacity zero */
	BLOOM_EFPR,		/* target fpr not in (0, 1) */
	BLOOM_ECHECKSUM,	/* header checksum mismatch */
	BLOOM_ESIZE,		/* file size differs from the header's */
	BLOOM_ETRUNCATED	/* file shrank while mapped */
};

/* The header of a filter file, decoded to host order. */
struct bloom_header {
	uint32_t version;	/* BLOOM_VERSION */
	uint32_t header_size;	/* BLOOM_HEADER_SIZE */
	uint32_t layout;	/* BLOOM_LAYOUT_BLOCKED512 */
	uint32_t hash_id;	/* BLOOM_HASH_XXH3_64 */
	uint64_t seed;		/* hash seed */
	uint64_t nbits;		/* bits in the array, a multiple of 512 */
	uint32_t hashes;	/* bit positions per key */
	uint64_t capacity;	/* items the filter was sized for */
	double target_fpr;	/* false-positive rate at capacity */
	uint64_t checksum;	/* XXH3-64 of the fields that never change */
	uint64_t inserted;	/* keys whose insertion set a bit */
	uint64_t file_size;	/* bytes the whole file must have */
};

/* An open filter: the file mapped whole, header then bits. */
struct bloom {
	int fd;			/* the open file, holding a flock */
	unsigned char *map;	/* mapping of the whole file */
	size_t map_size;	/* bytes mapped */
	unsigned char *bits;	/* map + header_size */
	uint64_t nblocks;	/* 64-byte blocks in bits */
	unsigned hashes;	/* bit positions per key */
	uint64_t seed;		/* hash seed */
	uint64_t lookups;	/* keys added or tested so far */
	uint64_t prefault_at;	/* lookups after which to map all pages */
	int prefaulted;		/* all pages were mapped */
	struct bloom_header hdr;	/* the header as validated at open */
};

/* Returns a short lower-case description of status s. */
const char *bloom_strerror(int s);

/* Decodes and validates the header in the first len bytes of a file of
 * file_size bytes.  Pure: touches nothing but *h.  Returns BLOOM_OK or the
 * first problem found. */
int bloom_header_parse(const unsigned char *buf, size_t len,
    uint64_t file_size, struct bloom_header *h);

/* Encodes a fresh header for p and seed into buf[BLOOM_HEADER_SIZE]. */
void bloom_header_build(unsigned char *buf, const struct params *p,
    uint64_t seed);

/* Creates the filter file path for p and seed, fully allocated, atomically:
 * the file appears whole or not at all.  Unless force, an existing path is
 * left alone and the call fails with errno EEXIST.  Returns BLOOM_OK, or
 * BLOOM_ERRNO with errno set. */
int bloom_create(const char *path, const struct params *p, uint64_t seed,
    int force);

/* Opens and maps the filter at path, for writing if writable, holding a
 * shared lock until bloom_close.  Returns BLOOM_OK or a status; on failure
 * b->hdr holds what could be decoded and nothing is left open. */
int bloom_open(struct bloom *b, const char *path, int writable);

/* Unmaps and closes b. */
void bloom_close(struct bloom *b);

/* Returns the hash of the len bytes of key that b files it under.  Reads
 * nothing of b that changes while it is open: safe in any thread. */
uint64_t bloom_hash(const struct bloom *b, const void *key, size_t len);

/* Inserts the n keys with the given hashes in order; isnew[i] is set to
 * 1 if key i missed a bit before, else 0, and the header's inserted
 * counter grows by the number of such keys.  Safe against other processes
 * adding to the same file at once, though two that add the same new key
 * at the same instant may both call it new.  Returns the number of new
 * keys. */
size_t bloom_add(struct bloom *b, const uint64_t *hashes, size_t n,
    unsigned char *isnew);

/* Tests the n keys with the given hashes; found[i] is set to 1 if key i
 * may be in the set, 0 if it certainly is not.  Returns the number
 * found. */
size_t bloom_test(struct bloom *b, const uint64_t *hashes, size_t n,
    unsigned char *found);

/* Returns the header's inserted counter as it is now. */
uint64_t bloom_inserted(const struct bloom *b);

/* Fills hist[c] with the number of blocks that have c bits set, c = 0..512,
 * and returns the total number of bits set. */
uint64_t bloom_fill(struct bloom *b, uint64_t hist[BLOCK_BITS + 1]);

/* Writes b's changes to stable storage.  Returns BLOOM_OK, or BLOOM_ERRNO
 * with errno set. */
int bloom_sync(struct bloom *b);

#endif
