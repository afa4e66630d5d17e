/* bloom.h: interface of bloom.c, the filter file: create, open, add,
 * test and fill counting over its segments. */
#ifndef BLOOM_BLOOM_H
#define BLOOM_BLOOM_H

#include <stddef.h>
#include <stdint.h>

#include "store/format.h"
#include "store/handle.h"	/* until the front end uses accessors */
#include "store/segments.h"	/* BLOOM_EV_* */
#include "hash.h"
#include "params.h"

#define BLOOM_CHUNK	(1 << 16)	/* keys bloom_add and bloom_test work
					 * on at a time */

/* What bloom_add and bloom_test set for a key that a slice does not hold:
 * neither found nor new. */
#define BLOOM_ELSEWHERE	2

#define PRETEST_MAX	8	/* segments a reader thread tests, at most */

/* Segments that a line reader's thread tests its keys against ahead of
 * bloom_add or bloom_test, to share the work of a filter of many
 * segments between two processors: copies of segments that no process
 * adds to while this one is adding (all but the newest of a growable
 * filter), or that it may test early (checking). */
struct bloom_pretest {
	unsigned nseg;			/* segments, 0 for none */
	struct segment seg[PRETEST_MAX];	/* copies, the fullest first */
	uint64_t mask;			/* their indices, as bits */
};

/* Takes flock(2) lock op (LOCK_SH or LOCK_EX) on fd, calling on_wait
 * (unless NULL) with path once after a second of waiting, and waiting
 * on.  Returns 0, or -1 with errno set. */
int bloom_flock(int fd, int op, const char *path,
    void (*on_wait)(const char *));

/* Opens and maps the filter at path, for writing if writable, holding a
 * shared lock until bloom_close; if the lock has not come after a second,
 * calls on_wait (unless NULL) once and goes on waiting.  Returns BLOOM_OK
 * or a status; on failure b->hdr holds what could be decoded and nothing
 * is left open. */
int bloom_open(struct bloom *b, const char *path, int writable,
    void (*on_wait)(const char *path));

/* Returns 1 if the open descriptor fd is b's file (same device and
 * inode), else 0. */
int bloom_is_file(const struct bloom *b, int fd);

/* Unmaps and closes b. */
void bloom_close(struct bloom *b);

/* Returns the hash of the len bytes of key that b files it under.  Reads
 * nothing of b that changes while it is open: safe in any thread. */
uint64_t bloom_hash(const struct bloom *b, const void *key, size_t len);

/* Starts st on a key whose bytes come in pieces (hash64_update), for the
 * same hash as bloom_hash gives the whole key.  Safe in any thread. */
void bloom_hash_begin(const struct bloom *b, struct hash_state *st);

/* Chooses the segments a reader thread may test for an add (if adding)
 * or a check of b, into p; p->nseg is 0 if none is worth it. */
void bloom_pretest_plan(struct bloom *b, int adding, struct bloom_pretest *p);

/* Tests the n keys against p's segments, setting found[i].  Reads only
 * what does not change while the filter is open: safe in any thread. */
void bloom_pretest(const struct bloom_pretest *p, const uint64_t *hashes,
    size_t n, unsigned char *found);

/* Inserts the n keys with the given hashes in order; isnew[i] is set to
 * 1 if key i was in no live segment before, else 0 (BLOOM_ELSEWHERE for a
 * key that belongs to another slice, and is not added), and *done to the
 * number of keys added, n unless it fails.  A growable filter
 * grows and a window rotates as needed first.  Safe against other
 * processes adding to and checking the same file at once, though two that
 * add the same new key at the same instant may both call it new.  Returns
 * BLOOM_OK or a status (BLOOM_ERRNO with errno set). */
int bloom_add(struct bloom *b, const struct bloom_pretest *p,
    const unsigned char *prefound, const uint64_t *hashes, size_t n,
    unsigned char *isnew, size_t *done);

/* Inserts and tests take what bloom_pretest found for p as prefound, or
 * NULL. */

/* Tests the n keys with the given hashes; found[i] is set to 1 if key i
 * may be in the set, 0 if it certainly is not (BLOOM_ELSEWHERE if another
 * slice holds it).  Returns BLOOM_OK, or a
 * status before testing any (BLOOM_ERRNO with errno set). */
int bloom_test(struct bloom *b, const struct bloom_pretest *p,
    const unsigned char *prefound, const uint64_t *hashes, size_t n,
    unsigned char *found);

/* For sorted batches (batch.c), which visit a segment's keys in the
 * order of its blocks. */

/* Returns the block of segment s, from its first, that the key with hash
 * h belongs to: s->info.nblocks or more if another slice holds it. */
uint64_t bloom_block(const struct segment *s, uint64_t h);

/* Tests the m keys that idx lists (indices into hashes) against segment
 * s, setting found[idx[j]]; returns how many were found. */
size_t bloom_test_list(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *found);

/* Keeps in idx[0..m) only the keys that found does not mark; returns how
 * many. */
size_t bloom_keep_missing(uint32_t *idx, size_t m,
    const unsigned char *found);

/* Adds the m keys that idx lists to segment s in that order, setting
 * isnew[idx[j]] to 1 if one of its bits was clear, else 0; returns how
 * many were new to it. */
size_t bloom_add_list(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *isnew);

/* ORs segment si of src into segment di of b, from block lo of di on
 * (for a slice into its whole filter; 0 otherwise), with atomic ORs so
 * that processes adding to b at once lose nothing.  The caller has
 * checked that the geometry agrees. */
void bloom_or(struct bloom *b, unsigned di, uint64_t lo,
    const struct bloom *src, unsigned si);

/* Raises segment i's inserted counter to the keys its fill suggests, if
 * that is more: after a merge, counters cannot be summed, since the
 * sources may share keys. */
void bloom_recount(struct bloom *b, unsigned i);

/* Returns the slice, from 0, of slices equal slices of b's whole filter
 * that holds the key with hash h. */
uint32_t bloom_slice_of(const struct bloom *b, uint64_t h, uint32_t slices);

/* Returns the BLOOM_EV_* flags raised since the last call, and clears
 * them. */
unsigned bloom_events(struct bloom *b);

/* Starts a new generation of a window now, forgetting the oldest.
 * Returns BLOOM_OK or a status. */
int bloom_rotate(struct bloom *b);

/* Brings b's view of its segments up to date: growth and rotation by
 * other processes, and generations expired by time.  Returns BLOOM_OK or
 * a status. */
int bloom_refresh(struct bloom *b);

/* Returns segment i's inserted counter as it is now. */
uint64_t bloom_inserted(const struct bloom *b, unsigned i);

/* Returns segment i's stamp as it is now (struct segment_info), 0 for a
 * v1 filter. */
uint64_t bloom_stamp(const struct bloom *b, unsigned i);

/* Returns the newest generation of a window as its file says now; 0 for
 * a filter of another mode. */
uint64_t bloom_epoch(const struct bloom *b);

/* Returns 1 if segment i is live now, else 0. */
int bloom_is_live(const struct bloom *b, unsigned i);

/* Fills hist[c] with the number of blocks of segment i that have c bits
 * set, c = 0..512, and returns the total number of bits set. */
uint64_t bloom_fill(struct bloom *b, unsigned i,
    uint64_t hist[BLOCK_BITS + 1]);

/* Writes b's changes to stable storage.  Returns BLOOM_OK, or BLOOM_ERRNO
 * with errno set. */
int bloom_sync(struct bloom *b);

#endif
