/* SPDX-License-Identifier: ISC */
/* lines.h: interface of lines.c, the line reader: reads a descriptor in big
 * blocks, splits it into lines and hashes each for the filter, in a helper
 * thread so that this overlaps the filter work. */
#ifndef BLOOM_LINES_H
#define BLOOM_LINES_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "bloom.h"
#include "stream/fields.h"

#define LINES_GROUPS	3	/* groups in flight: read, queued, in use */
#define LINES_MAX	(1 << 16)	/* lines in a group, at most */

/* A line: its bytes, without the terminator, in the reader's buffer. */
struct line {
	const unsigned char *data;	/* first byte (unless keep: of the
					 * bytes the group still has) */
	size_t len;			/* bytes */
};

/* The lines of one read, in order. */
struct line_group {
	unsigned char *buf;	/* the bytes the lines are in */
	size_t cap;		/* size of buf */
	struct line *line;	/* the lines */
	uint64_t *hash;		/* bloom_hash of each line */
	const struct bloom_pretest *pretest;	/* what found holds the
					 * answers of, or NULL */
	unsigned char *found;	/* found by pretest, for the first
				 * hashed lines */
	size_t nlines;		/* lines in line and hash */
	size_t hashed;		/* lines the helper hashed: the caller
				 * hashes the others in lines_next */
	size_t bytes;		/* input bytes of the lines, with their
				 * terminators */
	int err;		/* errno of a read that failed after them, or 0 */
	int last;		/* the input ends after them */
};

/* The reader of one descriptor at a time. */
struct lines {
	const struct bloom *filter;	/* whose hash the lines get */
	const struct bloom_pretest *pretest;	/* what the reader tests
					 * the lines against, or NULL; see
					 * lines_pretest */
	unsigned char delim;		/* line terminator */
	const struct fields *fields;	/* the key is these fields of a
					 * line, or NULL for the whole line */
	unsigned char *key;		/* the key of a line, with fields */
	int delimited;			/* with fields, a line of this input
					 * held the separator */
	int any;			/* this input had a line (a filling
					 * thread's, read after lines_stop) */
	size_t key_cap;			/* size of key */
	int keep;			/* the caller needs the lines' bytes */
	int streaming;			/* the unended line is being hashed
					 * in stream, its start dropped */
	struct hash_state stream;	/* its hash so far */
	int fd;				/* the descriptor read */
	int eof;			/* no more to read: end of input or
					 * an error */
	int err;			/* errno of the failed read, or 0 */
	int parallel;			/* may run on several processors */
	int wide;			/* split with AVX2 */
	int threaded;			/* a helper thread fills the groups */
	pthread_t thread;		/* the helper */
	pthread_mutex_t lock;		/* guards queued, held and stop */
	pthread_cond_t filled;		/* a group was queued */
	pthread_cond_t freed;		/* a group was given back */
	int wake[2];			/* a pipe: written to stop the helper
					 * waiting for input */
	size_t queued;			/* groups filled, not yet taken */
	int held;			/* the caller holds a group */
	int stop;			/* the helper is to stop */
	int starved;			/* the helper waits for input, all
					 * it read handed over */
	unsigned share;			/* of SHARE_ONE, the lines of a group
					 * the helper hashes; see balance */
	unsigned fill;			/* next group to fill */
	unsigned take;			/* next group to take */
	const unsigned char *carry;	/* bytes for the next group: the */
	size_t carry_len;		/* start of a line not yet ended */
	size_t carry_scanned;		/* carry bytes known to hold no
					 * terminator */
	struct line_group group[LINES_GROUPS];	/* the groups */
};

/* Sets r up to read lines ending with delim.  Unless keep, the caller
 * needs only the lines' hashes, not their bytes: a line too long for a
 * read's buffer is then hashed as it comes, in constant memory, and only
 * its last bytes are in the group.  Returns 0, or -1 with errno set. */
int lines_init(struct lines *r, unsigned char delim, int keep);

/* Makes the key of each line the fields f selects (NULL: the whole line);
 * f must stay as it is while r is used. */
void lines_fields(struct lines *r, const struct fields *f);

/* Starts reading fd, hashing the lines for filter and, if pretest is not
 * NULL, testing the lines it hashes against its segments (into each
 * group's found): in a helper thread if one can be had, two processors may
 * run it and fd is not a small file. */
void lines_start(struct lines *r, int fd, const struct bloom *filter,
    const struct bloom_pretest *pretest);

/* Returns 1 if, with fields, the input lines_start began had lines and
 * none held the fields' separator, else 0: the front end warns of it.
 * Call after lines_stop. */
int lines_undelimited(const struct lines *r);

/* Returns the bytes a reader takes, its groups' buffers and arrays, for
 * lines that fit a read's buffer. */
uint64_t lines_memory(void);

/* Returns 1 if a helper thread reads for r (after lines_start), else 0. */
int lines_threaded(const struct lines *r);

/* Makes the groups filled from now on tested against pretest (NULL for
 * none), which must stay as it is until lines_stop. */
void lines_pretest(struct lines *r, const struct bloom_pretest *pretest);

/* Gives back the group returned last, and waits until lines_next would
 * not wait for input, or until the input has stopped coming (a read would
 * block, with every line read so far handed over).  Returns 1 in the
 * first case, 0 in the second: the caller should answer the lines it
 * holds before it calls lines_next. */
int lines_wait(struct lines *r);

/* Returns the next group of lines, waiting for them if need be; the group
 * returned before is given back.  After a group with last set, call
 * lines_stop before reading anything more. */
const struct line_group *lines_next(struct lines *r);

/* Stops reading, whether or not the input was read to the end. */
void lines_stop(struct lines *r);

/* Frees what lines_init allocated. */
void lines_free(struct lines *r);

#endif
