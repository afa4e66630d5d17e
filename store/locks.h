/* locks.h: interface of locks.c, the locks processes sharing a filter's
 * file take: a flock(2) on the whole file while it is open, and the
 * writers' byte, which tells a process that writes the filter whether it
 * is the only one, so that it may set bits with plain stores instead of
 * locked ones. */
#ifndef BLOOM_LOCKS_H
#define BLOOM_LOCKS_H

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

#endif
