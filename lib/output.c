/* SPDX-License-Identifier: ISC
 * The output of add --new and check: selected lines gathered into one
 * large buffer and written with write(2), one system call per OUTPUT_SIZE
 * bytes, or straight from the reader's buffer for a line longer than that.
 *
 * A write is never cut short.  SIGTERM, SIGINT and SIGHUP are held while
 * one is under way and take effect as soon as it is done: the buffer only
 * ever holds whole lines, so the reader of the output never gets half a
 * line.  add --new marks its lines seen only once output_flush (or
 * output_sync) returned: a line the kernel did not take is not marked.
 * A descriptor left non-blocking by another program is waited for with
 * poll(2).
 *
 * A pipe whose reader stops taking lines must not hold those signals off
 * for ever (timeout(1), kill(1)): it is written only as much as it has
 * room for, cut at a line's end, and while it is full after a whole line
 * the signals are let through, ending us between two lines.
 */
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/output.h"

int
output_init(struct output *out, int fd, unsigned char delim)
{
	struct stat st;

	memset(out, 0, sizeof *out);
	out->fd = fd;
	out->delim = delim;
	if (fstat(fd, &st) == 0) {
		out->pipe = S_ISFIFO(st.st_mode);
		out->regular = S_ISREG(st.st_mode);
		out->queue = out->pipe ? OUTPUT_PIPE :
		    S_ISSOCK(st.st_mode) ? OUTPUT_SOCKET : 0;
	}
	out->cap = OUTPUT_SIZE;
	out->buf = malloc(out->cap);
	return out->buf == NULL ? -1 : 0;
}

/* Whether the reader of out has gone: a pipe says POLLERR, a socket
 * POLLHUP. */
static int
reader_gone(const struct output *out)
{
	struct pollfd pfd;

	pfd.fd = out->fd;
	pfd.events = 0;
	pfd.revents = 0;
	return poll(&pfd, 1, 0) == 1 && pfd.revents & (POLLERR | POLLHUP);
}

uint64_t
output_taken(struct output *out)
{
	int unread;

	if (out->queue == 0 || ioctl(out->fd, out->queue == OUTPUT_PIPE ?
	    FIONREAD : TIOCOUTQ, &unread) == -1 || unread < 0)
		return out->written;
	/* A socket's queue is dropped once its reader has gone, unread:
	 * then only what was known before counts.  Its reader closes after
	 * it says so, so a count asked before that is still true. */
	if (out->queue == OUTPUT_SOCKET && reader_gone(out))
		return out->taken;
	if ((uint64_t)unread < out->written &&
	    out->written - (uint64_t)unread > out->taken)
		out->taken = out->written - (uint64_t)unread;
	return out->taken;
}

int
output_wait_taken(struct output *out, int ms)
{
	struct pollfd pfd;

	pfd.fd = out->fd;
	pfd.events = 0;
	pfd.revents = 0;
	if (poll(&pfd, 1, ms) == 1 && pfd.revents & (POLLERR | POLLHUP)) {
		out->failed = 1;
		out->err = EPIPE;
		return -1;
	}
	return 0;
}

void
output_free(struct output *out)
{
	free(out->buf);
	out->buf = NULL;
}

/* Waits until fd may be written without blocking.  Returns 0, or -1 with
 * errno set. */
static int
wait_writable(int fd)
{
	struct pollfd pfd;

	pfd.fd = fd;
	pfd.events = POLLOUT;
	while (poll(&pfd, 1, -1) == -1)
		if (errno != EINTR)
			return -1;
	return 0;
}

/* Waits until the pipe fd has room, with the signal mask open while
 * waiting (NULL: the mask as it is).  Returns 0, or -1 with errno set. */
static int
wait_room(int fd, const sigset_t *open)
{
	struct pollfd pfd;

	pfd.fd = fd;
	pfd.events = POLLOUT;
	while (ppoll(&pfd, 1, NULL, open) == -1)
		if (errno != EINTR)
			return -1;
	return 0;
}

/*
 * How many of the len bytes of p to write to out's pipe now: no more than
 * it surely has room for, all of it if empty (its size may have changed),
 * PIPE_BUF if poll(2) says it has some, cut back to the end of a line if
 * one ends in them; 0 if it is full.  All of them where its fill cannot
 * be known, or its reader has gone (the write then fails).
 */
static size_t
pipe_piece(const struct output *out, const unsigned char *p, size_t len)
{
	struct pollfd pfd;
	const unsigned char *end;
	size_t room;
	int unread, size, ready;

	if (ioctl(out->fd, FIONREAD, &unread) == -1)
		return len;
	if (unread == 0) {
		if ((size = fcntl(out->fd, F_GETPIPE_SZ)) <= 0)
			return len;
		room = (size_t)size;
	} else {
		pfd.fd = out->fd;
		pfd.events = POLLOUT;
		pfd.revents = 0;
		ready = poll(&pfd, 1, 0);
		if (ready == 0 || (ready == -1 && errno == EINTR))
			return 0;
		if (ready == -1 || pfd.revents & (POLLERR | POLLNVAL))
			return len;
		room = PIPE_BUF;
	}
	if (len <= room)
		return len;
	end = memrchr(p, out->delim, room);
	return end != NULL ? (size_t)(end - p) + 1 : room;
}

/* Counts the n bytes of p just written. */
static void
note_written(struct output *out, const unsigned char *p, size_t n)
{
	const unsigned char *last = memrchr(p, out->delim, n);

	out->written += n;
	out->tail = last != NULL ? (uint64_t)(p + n - 1 - last) :
	    out->tail + n;
	out->midline = out->tail != 0;
}

/*
 * After a failed write to a regular file, cuts off the part of a line
 * written before it (a full disk takes what fits): the file ends with a
 * whole line, so that a rerun appending to it glues no two lines.  Only
 * if the file still ends where we wrote last: another writer's bytes
 * after ours are left alone.
 */
static void
cut_partial_line(struct output *out)
{
	struct stat st;
	off_t at;

	if (!out->regular || out->tail == 0)
		return;
	if ((at = lseek(out->fd, 0, SEEK_CUR)) == -1 ||
	    fstat(out->fd, &st) == -1 || st.st_size != at ||
	    (uint64_t)at < out->tail)
		return;
	if (ftruncate(out->fd, at - (off_t)out->tail) == 0) {
		(void)lseek(out->fd, at - (off_t)out->tail, SEEK_SET);
		out->written -= out->tail;
		out->tail = 0;
		out->midline = 0;
	}
}

/* Writes the len bytes of p whole, however many write(2)s it takes; open
 * is the signal mask to wait with at a line's end for room in a pipe. */
static int
write_fully(struct output *out, const unsigned char *p, size_t len,
    const sigset_t *open)
{
	while (len > 0) {
		size_t want = len;
		ssize_t n;

		if (out->pipe && (want = pipe_piece(out, p, len)) == 0) {
			/* Full: a signal may end us here, between lines. */
			if (wait_room(out->fd, out->midline ? NULL : open) == 0)
				continue;
			out->failed = 1;
			out->err = errno;
			return -1;
		}
		n = write(out->fd, p, want);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN && wait_writable(out->fd) == 0)
				continue;
			out->failed = 1;
			out->err = errno;
			cut_partial_line(out);
			return -1;
		}
		if (n > 0)
			note_written(out, p, (size_t)n);
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Writes the bytes of p, then the len2 bytes of p2, holding the signals
 * that end us until both are written.  Returns 0, or -1 as output_flush.
 */
static int
write_whole(struct output *out, const unsigned char *p, size_t len,
    const unsigned char *p2, size_t len2)
{
	sigset_t held, old;
	int rc, e;

	sigemptyset(&held);
	sigaddset(&held, SIGTERM);
	sigaddset(&held, SIGINT);
	sigaddset(&held, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &held, &old);
	rc = write_fully(out, p, len, &old);
	if (rc == 0)
		rc = write_fully(out, p2, len2, &old);
	e = errno;
	/* A signal that came meanwhile is delivered here. */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return rc;
}

int
output_flush(struct output *out)
{
	size_t len = out->len;

	out->len = 0;
	if (out->failed)
		return -1;
	return write_whole(out, out->buf, len, NULL, 0);
}

int
output_sync(struct output *out)
{
	if (output_flush(out) == -1)
		return -1;
	while (fdatasync(out->fd) == -1) {
		if (errno == EINTR)
			continue;
		if (errno == EINVAL || errno == EROFS)
			break;	/* nothing that can be synced */
		out->failed = 1;
		out->err = errno;
		return -1;
	}
	return 0;
}

int
output_bytes(struct output *out, const void *data, size_t len)
{
	if (out->cap - out->len < len) {
		if (output_flush(out) == -1)
			return -1;
		if (len > out->cap)
			return write_whole(out, data, len, NULL, 0);
	}
	memcpy(out->buf + out->len, data, len);
	out->len += len;
	return 0;
}

int
output_line_long(struct output *out, const unsigned char *line, size_t len,
    unsigned char delim)
{
	if (output_flush(out) == -1)
		return -1;
	/* A line longer than the buffer goes out from where it is, with its
	 * terminator in the same held stretch. */
	if (len >= out->cap)
		return write_whole(out, line, len, &delim, 1);
	memcpy(out->buf + out->len, line, len);
	out->len += len;
	out->buf[out->len++] = delim;
	return 0;
}
