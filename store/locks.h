/* SPDX-License-Identifier: ISC */
/* locks.h: interface of locks.c, the locks processes sharing a filter's
 * file take: a flock(2) on the whole file while it is open; the writers'
 * byte, which tells a process that writes the filter whether it is the
 * only one, so that it may set bits with plain stores instead of locked
 * ones; and the bytes by which segments.c orders growth, rotation, adds
 * and reads. */
#ifndef BLOOM_LOCKS_H
#define BLOOM_LOCKS_H

#include <sys/types.h>

#include <time.h>

#include <stddef.h>
#include <stdint.h>

struct bloom;

/* Takes flock(2) lock op on fd as bloom_flock (bloom.h) says. */
int locks_flock(int fd, int op, const char *path,
    void (*on_wait)(const char *));

/* Opens path, for reading and writing if writable, and takes a shared
 * flock on the file that is at path once the lock is held (a create -f
 * may have replaced it meanwhile), waiting as locks_flock does.  Returns
 * the descriptor (of whatever path is, if not a regular file: the caller
 * rejects it), or -1 with errno set. */
int locks_open(const char *path, int writable,
    void (*on_wait)(const char *));

/* Makes the process a writer of the filter open for writing as fd (path
 * for on_wait), until fd is closed: waits until no writer is alone with
 * it, calling on_wait (unless NULL) with path once after a second of
 * waiting.  Returns 1, or 0 if the file system has no such locks (then no
 * writer of it is ever alone), or -1 with errno set. */
int locks_writer_join(int fd, const char *path, void (*on_wait)(const char *));

/* Sets the bits of the m keys that idx lists (indices into hashes), known
 * new, in b's target segment: with plain ORs if b's writer is alone, else
 * with locked ones.  Returns BLOOM_OK, or BLOOM_ERRNO with errno set if
 * it could not let others in again (then b writes no more). */
int locks_set_list(struct bloom *b, const uint64_t *hashes,
    const uint32_t *idx, size_t m);

/* Adds the m keys that idx lists (keys 0 to m if idx is NULL) to b's
 * target segment as bits_add_list does (bits.h), with plain ORs if b's
 * writer is alone, else with locked ones, and sets *fresh to how many
 * were new to it.  Returns as locks_set_list does. */
int locks_add_list(struct bloom *b, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *isnew, size_t *fresh);

/* Takes (type F_RDLCK or F_WRLCK) or drops (F_UNLCK) an OFD lock on byte
 * which of b's file.  A lock another process holds is tried for again as
 * bloom_flock tries, for a second; then b->on_lock_wait is told (once per
 * filter) and the wait goes on in the kernel.  Returns 0, or -1 with
 * errno set. */
int locks_byte(struct bloom *b, short type, off_t which);

/* Sleeps tick_ns in a wait for another adder's claims (claims.c) begun
 * at start (CLOCK_MONOTONIC); once it has lasted a second, tells
 * b->on_claims_wait (unless NULL) once, as *told keeps track of. */
void locks_wait_tick(struct bloom *b, const struct timespec *start,
    long tick_ns, int *told);

/* Takes the lock on byte which of b's file for writing if no other
 * process holds it.  Returns 1 if taken, 0 if not, or -1 with errno set. */
int locks_try_byte(struct bloom *b, off_t which);

/* Lets go of lock byte which of b's file, leaving errno as it was: an
 * unlock ends a step whose own error is the one to report. */
void locks_unbyte(struct bloom *b, off_t which);

#endif
