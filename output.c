/*
 * The output of add --new and check: selected lines gathered into one
 * large buffer and written with write(2), one system call per OUTPUT_SIZE
 * bytes, or straight from the reader's buffer for a line longer than that.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output.h"

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

static int
write_fully(struct output *out, const unsigned char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(out->fd, p, len);

		if (n == -1) {
			if (errno == EINTR)
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

int
output_flush(struct output *out)
{
	size_t len = out->len;

	out->len = 0;
	if (out->failed)
		return -1;
	return write_fully(out, out->buf, len);
}

int
output_bytes(struct output *out, const void *data, size_t len)
{
	if (out->cap - out->len < len) {
		if (output_flush(out) == -1)
			return -1;
		if (len > out->cap)
			return write_fully(out, data, len);
	}
	memcpy(out->buf + out->len, data, len);
	out->len += len;
	return 0;
}

int
output_line(struct output *out, const unsigned char *line, size_t len,
    unsigned char delim)
{
	if (out->cap - out->len <= len) {
		if (output_flush(out) == -1)
			return -1;
		if (len >= out->cap) {
			if (write_fully(out, line, len) == -1)
				return -1;
			len = 0;
		}
	}
	memcpy(out->buf + out->len, line, len);
	out->len += len;
	out->buf[out->len++] = delim;
	return 0;
}
