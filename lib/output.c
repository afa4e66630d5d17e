/*
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
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/output.h"

int
output_init(struct output *out, int fd)
{
	memset(out, 0, sizeof *out);
	out->fd = fd;
	out->cap = OUTPUT_SIZE;
	out->buf = malloc(out->cap);
	return out->buf == NULL ? -1 : 0;
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

/* Writes the len bytes of p whole, however many write(2)s it takes. */
static int
write_all(struct output *out, const unsigned char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(out->fd, p, len);

		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN && wait_writable(out->fd) == 0)
				continue;
			out->failed = 1;
			out->err = errno;
			return -1;
		}
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
	rc = write_all(out, p, len);
	if (rc == 0)
		rc = write_all(out, p2, len2);
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
