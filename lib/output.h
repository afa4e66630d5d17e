/* SPDX-License-Identifier: ISC */
/* output.h: interface of output.c, the buffered writer of the lines a run
 * selects. */
#ifndef BLOOM_OUTPUT_H
#define BLOOM_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define OUTPUT_SIZE	(1 << 18)	/* bytes buffered before a write */

/* Lines buffered for one descriptor and written with write(2). */
struct output {
	int fd;			/* where the lines go */
	unsigned char *buf;	/* pending bytes */
	size_t len;		/* bytes pending */
	size_t cap;		/* size of buf */
	int failed;		/* a write failed; err says why */
	int err;		/* errno of the failed write */
	unsigned char delim;	/* the line terminator */
	int pipe;		/* fd is a pipe or a FIFO */
	int midline;		/* the last byte written ended no line */
	int queue;		/* OUTPUT_PIPE or OUTPUT_SOCKET: how many
				 * bytes its reader has not taken can be
				 * asked; else 0 */
	int regular;		/* fd is a regular file */
	uint64_t written;	/* bytes write(2) took so far */
	uint64_t tail;		/* of those, the bytes after the last
				 * terminator */
	uint64_t taken;		/* of those, the most its reader was known
				 * to have taken (output_taken) */
};

#define OUTPUT_PIPE	1	/* a pipe or FIFO: FIONREAD */
#define OUTPUT_SOCKET	2	/* a socket: SIOCOUTQ */

/* Sets out up to write lines ending with delim to fd.  Returns 0, or -1
 * with errno set. */
int output_init(struct output *out, int fd, unsigned char delim);

/* Writes what is pending.  Returns 0, or -1 once a write has failed (then
 * out->err says why and nothing more is written). */
int output_flush(struct output *out);

/* Writes what is pending and waits until the file holds it on stable
 * storage (fdatasync(2)); a pipe, socket or terminal, which cannot be
 * synced, counts as synced once written.  Returns 0, or -1 as
 * output_flush. */
int output_sync(struct output *out);

/* What output_line does with a line that does not fit what is left of
 * the buffer. */
int output_line_long(struct output *out, const unsigned char *line,
    size_t len, unsigned char delim);

/* Appends a line of len bytes and its terminator delim.  Returns 0, or -1
 * as output_flush.  Inline: it is called for each line written. */
static inline int
output_line(struct output *out, const unsigned char *line, size_t len,
    unsigned char delim)
{
	if (out->cap - out->len <= len)
		return output_line_long(out, line, len, delim);
	memcpy(out->buf + out->len, line, len);
	out->len += len;
	out->buf[out->len++] = delim;
	return 0;
}

/* Appends len bytes as they are.  Returns 0, or -1 as output_flush. */
int output_bytes(struct output *out, const void *data, size_t len);

/* Returns the offset in out's stream just past what was appended so far
 * (written or pending). */
static inline uint64_t
output_offset(const struct output *out)
{
	return out->written + out->len;
}

/* Returns how many of the bytes written so far the reader of out's pipe
 * or socket has taken (on Linux, a pipe's FIONREAD; a socket's SIOCOUTQ,
 * which for TCP counts what the peer's kernel acknowledged): all of them
 * where that cannot be asked.  Bytes another writer left unread count as
 * ours.  Once a socket's reader has gone, what was known before. */
uint64_t output_taken(struct output *out);

/* Waits up to ms milliseconds for the reader of out to take more.
 * Returns 0, or -1 with out->err set to EPIPE (and nothing more written)
 * if the reader has gone. */
int output_wait_taken(struct output *out, int ms);

/* Frees what output_init allocated; writes nothing. */
void output_free(struct output *out);

#endif
