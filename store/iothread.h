/* SPDX-License-Identifier: ISC */
/* iothread.h: interface of iothread.c, a helper thread that does a
 * sorted batch's file I/O out of core (reading the next window, writing
 * back and dropping the ones worked on), or mapped whole makes the next
 * windows writable, while the caller works on the window it has. */
#ifndef BLOOM_IOTHREAD_H
#define BLOOM_IOTHREAD_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define IO_QUEUE	8	/* jobs waiting at most */

enum io_op { IO_READ, IO_WRITE, IO_RELEASE, IO_POPULATE };

/* A range of the filter file, mapped at addr: page-aligned for
 * io_write and io_release; a read needs only off and len. */
struct io_range {
	unsigned char *addr;	/* where it is in the mapping */
	off_t off;		/* where it is in the file */
	size_t len;		/* its bytes */
};

struct io_job {
	enum io_op op;
	struct io_range r;
	unsigned char *buf;	/* IO_READ: where to */
	int written;		/* IO_RELEASE: wait for its write-back */
};

struct iothread {
	int fd;			/* the filter file */
	int running;		/* the thread runs; else jobs run inline */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t queued;	/* a job was queued, or stop */
	pthread_cond_t done;	/* a job was done */
	struct io_job job[IO_QUEUE];
	uint64_t head;		/* jobs queued, ever */
	uint64_t tail;		/* jobs done, ever */
	uint64_t failed;	/* the last read that failed, plus one */
	int write_error;	/* errno of the first write-back that
				 * failed, or 0 */
	int stop;		/* io_stop was called */
};

/* Starts io for file fd.  If no thread can be started, the jobs are done
 * by the caller as they are queued: slower, as correct. */
void io_start(struct iothread *io, int fd);

/* Queues a read of r.len bytes at r.off into buf; returns a ticket for
 * io_wait. */
uint64_t io_read(struct iothread *io, struct io_range r, unsigned char *buf);

/* Waits for the read with that ticket; returns 0, or -1 if it failed.
 * One read is waited for before the next is queued. */
int io_wait(struct iothread *io, uint64_t ticket);

/* Queues the start of the write-back of r's dirty pages. */
void io_write(struct iothread *io, struct io_range r);

/* Queues the release of r: its write-back, if written, waited for, then
 * its pages dropped from the mapping and the page cache (kept if the
 * write-back failed). */
void io_release(struct iothread *io, struct io_range r, int written);

/* Queues the mapping of r's pages writable (advice: nothing fails),
 * unless IO_QUEUE jobs wait already or there is no thread (then it is
 * not done at all, not done by the caller); returns 1 if queued, else
 * 0. */
int io_populate(struct iothread *io, struct io_range r);

/* Waits for every job queued, and stops the thread.  Returns 0, or -1
 * with errno set if a write-back failed: the error the kernel reports
 * once, which a later fsync of the file no longer sees. */
int io_stop(struct iothread *io);

#endif
