/* SPDX-License-Identifier: ISC
 * The locks of processes that share a filter's file.  Each holds a shared
 * flock(2) on it while it has it open; create -f takes an exclusive one
 * to replace it, and growth, rotation, adds and reads locks on bytes 0 to
 * 2, which segments.c orders and locks_byte takes.
 *
 * The writers' byte.  Bits are set with locked ORs (lock or), so that
 * processes adding to one filter at once lose none of each other's bits;
 * on a filter in the processor's cache they cost a quarter of an add
 * --new.  A plain OR reads a word and writes it back, and would lose a
 * bit another process set in between: it is safe only for a process that
 * knows no other writes the filter meanwhile.
 *
 * Every process that opens a filter for writing holds a shared open file
 * description lock (fcntl F_OFD_SETLK) on one byte of the file far past
 * its end, WRITERS_BYTE, for as long as it has it open: the kernel lets go
 * of it when the process closes the file or dies.  To set a run of bits
 * with plain ORs a writer turns its lock into an exclusive one, without
 * waiting: that succeeds only when no other process holds the byte, and
 * while it is held no other writer can come in.  It turns it back into a
 * shared one as soon as the bits are set, so that a writer that opens the
 * filter meanwhile waits for those bits, no longer.  Both turns are done
 * in place by the kernel: the lock is never let go of in between.
 *
 * A writer alone never blocks while it holds the byte exclusively (it
 * sets bits, nothing else), so the wait cannot be long; and one that
 * waits to come in holds nothing the other needs.  Where the file system
 * has no such locks no writer can hold the byte, and every one uses
 * locked ORs.  Writers of bloom versions from before these locks do not
 * take them: they must not write a filter at the same time as this one.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/locks.h"
#include "store/bits.h"
#include "store/format.h"	/* BLOOM_OK, BLOOM_ERRNO */
#include "store/handle.h"

/* A wait for a lock another process holds, tried every tick_ns: told once
 * BLOOM_WAIT_TELL_MS have passed since it began, by the monotonic clock
 * rather than by counting tries, which a loaded machine makes longer. */
struct lock_wait {
	struct timespec start;
	long tick_ns;
	int told;
};

static void
wait_begin(struct lock_wait *w, long tick_ns)
{
	clock_gettime(CLOCK_MONOTONIC, &w->start);
	w->tick_ns = tick_ns;
	w->told = 0;
}

/* Sleeps a tick; returns 1 the first time the wait has lasted long enough
 * to say so, else 0. */
static int
wait_tick(struct lock_wait *w)
{
	struct timespec tick = { 0, w->tick_ns }, now;
	int64_t ms;

	nanosleep(&tick, NULL);
	if (w->told)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (int64_t)(now.tv_sec - w->start.tv_sec) * 1000 +
	    (now.tv_nsec - w->start.tv_nsec) / 1000000;
	return w->told = ms >= BLOOM_WAIT_TELL_MS;
}

int
locks_flock(int fd, int op, const char *path, void (*on_wait)(const char *))
{
	struct lock_wait w;

	wait_begin(&w, BLOOM_WAIT_TICK_NS);
	while (flock(fd, op | LOCK_NB) == -1) {
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		if (wait_tick(&w) && on_wait != NULL)
			on_wait(path);
	}
	return 0;
}

#define OVERLAYFS_MAGIC	0x794c7630	/* statfs(2) f_type of overlayfs */

/*
 * On overlayfs, the first open of a lower layer's file for writing copies
 * it up to the upper layer, and a reader that opened it before goes on
 * reading the lower copy, blind to what is added since.  So a reader that
 * may write the file opens it for writing first, and at once closes it:
 * the copy is made, if it is to be, before the reader opens it.
 */
static void
copy_up(const char *path)
{
	struct statfs fs;
	int fd;

	if (statfs(path, &fs) == -1 || fs.f_type != OVERLAYFS_MAGIC)
		return;
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd != -1)
		close(fd);
}

int
locks_open(const char *path, int writable, void (*on_wait)(const char *))
{
	struct stat held, now;
	int fd, flags, e;

	if (!writable)
		copy_up(path);
	flags = (writable ? O_RDWR : O_RDONLY) | O_NONBLOCK | O_CLOEXEC |
	    O_NOCTTY;
	for (;;) {
		fd = open(path, flags);
		if (fd == -1)
			return -1;
		if (fstat(fd, &held) == -1)
			goto fail;
		if (!S_ISREG(held.st_mode))
			return fd;	/* the caller rejects it */
		if (locks_flock(fd, LOCK_SH, path, on_wait) == -1)
			goto fail;
		if (stat(path, &now) == -1)
			goto fail;
		if (now.st_dev == held.st_dev && now.st_ino == held.st_ino)
			return fd;
		close(fd);
	}
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

/* ==== The writers' byte ==== */

#define WRITERS_BYTE	((off_t)1 << 62)

/* Sets the open file description lock of fd on byte which to type, by
 * cmd (F_OFD_SETLK or F_OFD_SETLKW).  Returns what fcntl(2) does. */
static int
set_byte(int fd, int cmd, short type, off_t which)
{
	struct flock fl;

	memset(&fl, 0, sizeof fl);
	fl.l_type = type;
	fl.l_whence = SEEK_SET;
	fl.l_start = which;
	fl.l_len = 1;
	return fcntl(fd, cmd, &fl);
}

/* Sets the lock of fd on WRITERS_BYTE to type, without waiting.  Returns
 * 0, or -1 with errno set (EAGAIN: another process holds the byte). */
static int
lock_byte(int fd, short type)
{
	return set_byte(fd, F_OFD_SETLK, type, WRITERS_BYTE);
}

int
locks_writer_join(int fd, const char *path, void (*on_wait)(const char *))
{
	/* Another writer holds the byte alone for the time it takes to set
	 * a chunk's bits: tried every millisecond, told after a second. */
	struct lock_wait w;

	wait_begin(&w, 1000000L);
	while (lock_byte(fd, F_RDLCK) == -1) {
		if (errno == EINVAL || errno == EOPNOTSUPP || errno == ENOSYS)
			return 0;
		if (errno != EAGAIN && errno != EACCES && errno != EINTR)
			return -1;
		if (wait_tick(&w) && on_wait != NULL)
			on_wait(path);
	}
	return 1;
}

/* For a writer that joined: returns 1 if no other writer has the filter
 * open, and none can until locks_writer_share; else 0. */
static int
locks_writer_alone(int fd)
{
	return lock_byte(fd, F_WRLCK) == 0;
}

/* Ends what locks_writer_alone began.  Returns 0, or -1 with errno set:
 * then others may be kept waiting. */
static int
locks_writer_share(int fd)
{
	int tries;

	/* Turning an exclusive lock into a shared one of the same byte
	 * conflicts with nothing; retried in case of a signal. */
	for (tries = 0; tries < 100; tries++)
		if (lock_byte(fd, F_RDLCK) == 0)
			return 0;
		else if (errno != EINTR && errno != ENOLCK)
			break;
	return -1;
}

/* Takes b's writers' byte alone if b's writer may be and no other process
 * has the filter open for writing.  Returns 1 if it did: the caller sets
 * bits with plain stores, then calls share_again. */
static int
take_alone(struct bloom *b)
{
	return b->writers == 1 && locks_writer_alone(b->fd);
}

/* Ends what take_alone began.  Returns BLOOM_OK, or BLOOM_ERRNO (then b
 * no longer takes the byte alone). */
static int
share_again(struct bloom *b)
{
	if (locks_writer_share(b->fd) == -1) {
		b->writers = -1;
		return BLOOM_ERRNO;
	}
	return BLOOM_OK;
}

int
locks_set_list(struct bloom *b, const uint64_t *hashes,
    const uint32_t *idx, size_t m)
{
	const struct segment *t = &b->seg[b->target];

	if (!take_alone(b)) {
		bits_set_list(t, hashes, idx, m);
		return BLOOM_OK;
	}
	bits_set_list_alone(t, hashes, idx, m);
	return share_again(b);
}

int
locks_add_list(struct bloom *b, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *isnew, size_t *fresh)
{
	const struct segment *t = &b->seg[b->target];

	if (!take_alone(b)) {
		*fresh = idx != NULL ? bits_add_list(t, hashes, idx, m, isnew) :
		    bits_add(t, hashes, m, isnew);
		return BLOOM_OK;
	}
	*fresh = bits_add_alone(t, hashes, idx, m, isnew);
	return share_again(b);
}

/* ==== Locks on single bytes of the file ==== */

int
locks_byte(struct bloom *b, short type, off_t which)
{
	struct lock_wait w;
	int cmd = F_OFD_SETLK;

	wait_begin(&w, BLOOM_WAIT_TICK_NS);
	while (set_byte(b->fd, cmd, type, which) == -1) {
		if (errno == EINTR)
			continue;
		if (cmd == F_OFD_SETLKW || (errno != EAGAIN && errno != EACCES))
			return -1;
		if (!wait_tick(&w))
			continue;
		if (b->on_lock_wait != NULL && !b->lock_wait_told) {
			b->lock_wait_told = 1;
			b->on_lock_wait(b->path);
		}
		cmd = F_OFD_SETLKW;
	}
	return 0;
}

void
locks_wait_tick(struct bloom *b, const struct timespec *start, long tick_ns,
    int *told)
{
	struct lock_wait w;

	w.start = *start;
	w.tick_ns = tick_ns;
	w.told = *told;
	if (wait_tick(&w) && b->on_claims_wait != NULL)
		b->on_claims_wait(b->path);
	*told = w.told;
}

int
locks_try_byte(struct bloom *b, off_t which)
{
	while (set_byte(b->fd, F_OFD_SETLK, F_WRLCK, which) == -1)
		if (errno != EINTR)
			return errno == EAGAIN || errno == EACCES ? 0 : -1;
	return 1;
}

void
locks_unbyte(struct bloom *b, off_t which)
{
	int e = errno;

	locks_byte(b, F_UNLCK, which);
	errno = e;
}
