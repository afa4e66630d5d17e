/* SPDX-License-Identifier: ISC
 * The I/O of a sorted batch out of core, on a thread of its own.  A pass
 * over a filter bigger than memory reads it window by window, and, for
 * an add, writes back every page it set bits in and drops it, so that
 * the pages in memory stay within a few windows.  Done on the thread that
 * tests and sets the bits, the reads, the submission of the writes and
 * the dropping take turns with the work and with each other, and the
 * disk, which reads and writes at once, sits half idle.  Here a helper
 * thread does them, in the order they are queued, while the caller works
 * on the window it has: the next window is read into a second buffer,
 * and the one before is written back.  For a filter mapped whole, the
 * page faults of an add are its I/O: the thread makes the next windows'
 * pages writable (MADV_POPULATE_WRITE) while the caller sets the bits of
 * the window before; the caller waits for it only in io_stop, and
 * without a thread nothing is populated (advice: the caller's own faults
 * do it).
 *
 * The caller does not use a buffer it has queued a read into until the
 * read is done, and works on no window it has queued a write-back or a
 * release of.  Windows of a version 1 file, whose bits do not start on a
 * page, may share a page at their ends; the jobs on that page only start
 * its write-back or drop it from the cache, which leaves its bits as
 * they are, so at worst the caller waits for a write-back to finish
 * before it sets a bit there.  The bits themselves are set by the
 * caller, through the shared mapping, with atomic ORs as ever.
 *
 * A write-back that fails is the caller's to hear of: sync_file_range
 * that waits takes the file's error report, so the fsync of an add
 * --sync would find none, and dropping the pages would throw away the
 * only copy of their bits.  So the first error is kept for io_stop, and
 * the pages of a window whose write-back failed are not dropped.
 */
#include <sys/mman.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "store/iothread.h"
#include "lib/threads.h"

/* Reads r.len bytes at r.off into buf; returns 0, or -1. */
static int
read_range(int fd, struct io_range r, unsigned char *buf)
{
	size_t done = 0;
	ssize_t got;

	while (done < r.len) {
		got = pread(fd, buf + done, r.len - done,
		    r.off + (off_t)done);
		if (got == -1 && errno == EINTR)
			continue;
		if (got <= 0)
			return -1;
		done += (size_t)got;
	}
	return 0;
}

/* Starts (wait 0) or waits for (wait 1) the write-back of r.  Returns 0,
 * or -1 with errno set if it failed; a file system that cannot start it
 * is no failure. */
static int
write_back(int fd, struct io_range r, int wait)
{
	unsigned flags = SYNC_FILE_RANGE_WRITE;

	if (wait)
		flags |= SYNC_FILE_RANGE_WAIT_BEFORE |
		    SYNC_FILE_RANGE_WAIT_AFTER;
	while (sync_file_range(fd, r.off, (off_t)r.len, flags) == -1) {
		if (errno == EINTR)
			continue;
		return errno == EINVAL || errno == ENOSYS ||
		    errno == ESPIPE ? 0 : -1;
	}
	return 0;
}

/* Does job j; returns 0, or -1 if it failed (errno set if a write). */
static int
run(int fd, const struct io_job *j)
{
	switch (j->op) {
	case IO_READ:
		return read_range(fd, j->r, j->buf);
	case IO_WRITE:
		return write_back(fd, j->r, 0);
	case IO_RELEASE:
		if (j->written && write_back(fd, j->r, 1) == -1)
			return -1;
		madvise(j->r.addr, j->r.len, MADV_DONTNEED);
		posix_fadvise(fd, j->r.off, (off_t)j->r.len,
		    POSIX_FADV_DONTNEED);
		return 0;
	case IO_POPULATE:
#ifdef MADV_POPULATE_WRITE
		madvise(j->r.addr, j->r.len, MADV_POPULATE_WRITE);
#endif
		return 0;
	}
	return 0;
}

/* Notes that job j, the ticket-th, failed with errno e. */
static void
note_failure(struct iothread *io, const struct io_job *j, uint64_t ticket,
    int e)
{
	if (j->op == IO_READ)
		io->failed = ticket + 1;
	else if (io->write_error == 0)
		io->write_error = e != 0 ? e : EIO;
}

/* The thread: does the jobs in the order they were queued, until io_stop
 * and none is left. */
static void *
loop(void *arg)
{
	struct iothread *io = arg;
	struct io_job j;
	int failed, e;

	pthread_mutex_lock(&io->lock);
	for (;;) {
		while (io->tail == io->head && !io->stop)
			pthread_cond_wait(&io->queued, &io->lock);
		if (io->tail == io->head)
			break;
		j = io->job[io->tail % IO_QUEUE];
		pthread_mutex_unlock(&io->lock);
		errno = 0;
		failed = run(io->fd, &j);
		e = errno;
		pthread_mutex_lock(&io->lock);
		if (failed)
			note_failure(io, &j, io->tail, e);
		io->tail++;
		pthread_cond_broadcast(&io->done);
	}
	pthread_mutex_unlock(&io->lock);
	return NULL;
}

void
io_start(struct iothread *io, int fd)
{
	memset(io, 0, sizeof *io);
	io->fd = fd;
	if (pthread_mutex_init(&io->lock, NULL) != 0)
		return;
	if (pthread_cond_init(&io->queued, NULL) != 0)
		goto no_queued;
	if (pthread_cond_init(&io->done, NULL) != 0)
		goto no_done;
	io->running = thread_start(&io->thread, loop, io) == 0;
	if (io->running)
		return;
	pthread_cond_destroy(&io->done);
no_done:
	pthread_cond_destroy(&io->queued);
no_queued:
	pthread_mutex_destroy(&io->lock);
}

/* Queues job j, or does it now if there is no thread; returns its
 * ticket. */
static uint64_t
queue(struct iothread *io, const struct io_job *j)
{
	uint64_t ticket;

	if (!io->running) {
		errno = 0;
		if (run(io->fd, j))
			note_failure(io, j, io->head, errno);
		io->tail = ++io->head;
		return io->head - 1;
	}
	pthread_mutex_lock(&io->lock);
	while (io->head - io->tail == IO_QUEUE)
		pthread_cond_wait(&io->done, &io->lock);
	ticket = io->head;
	io->job[io->head++ % IO_QUEUE] = *j;
	pthread_cond_signal(&io->queued);
	pthread_mutex_unlock(&io->lock);
	return ticket;
}

uint64_t
io_read(struct iothread *io, struct io_range r, unsigned char *buf)
{
	struct io_job j = { IO_READ, r, buf, 0 };

	return queue(io, &j);
}

int
io_wait(struct iothread *io, uint64_t ticket)
{
	int failed;

	if (io->running) {
		pthread_mutex_lock(&io->lock);
		while (io->tail <= ticket)
			pthread_cond_wait(&io->done, &io->lock);
	}
	failed = io->failed == ticket + 1;
	if (io->running)
		pthread_mutex_unlock(&io->lock);
	return failed ? -1 : 0;
}

void
io_write(struct iothread *io, struct io_range r)
{
	struct io_job j = { IO_WRITE, r, NULL, 0 };

	queue(io, &j);
}

void
io_release(struct iothread *io, struct io_range r, int written)
{
	struct io_job j = { IO_RELEASE, r, NULL, written };

	queue(io, &j);
}

int
io_populate(struct iothread *io, struct io_range r)
{
	struct io_job j = { IO_POPULATE, r, NULL, 0 };
	int room;

	if (!io->running)
		return 0;
	pthread_mutex_lock(&io->lock);
	room = io->head - io->tail < IO_QUEUE;
	pthread_mutex_unlock(&io->lock);
	if (room)
		queue(io, &j);
	return room;
}

int
io_stop(struct iothread *io)
{
	if (io->running) {
		pthread_mutex_lock(&io->lock);
		io->stop = 1;
		pthread_cond_signal(&io->queued);
		pthread_mutex_unlock(&io->lock);
		pthread_join(io->thread, NULL);
		pthread_cond_destroy(&io->done);
		pthread_cond_destroy(&io->queued);
		pthread_mutex_destroy(&io->lock);
		io->running = 0;
	}
	if (io->write_error != 0) {
		errno = io->write_error;
		return -1;
	}
	return 0;
}
