/* batch.h: interface of batch.c, sorted batches: many lines at a time,
 * added to or tested against each segment in the order of its blocks,
 * for filters that do not fit in memory or that would make the kernel
 * write their pages back again and again. */
#ifndef BLOOM_BATCH_H
#define BLOOM_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "bloom.h"
#include "stream/lines.h"
#include "lib/memory.h"

/* The lines of one batch, their hashes and what the filter said. */
struct batch {
	struct memory_plan plan;	/* budget, window, out of core */
	int keep_lines;		/* the lines are kept, to be written */
	size_t cap;		/* keys it holds at most */
	size_t per_key;		/* bytes a key takes, but its line */
	size_t n;		/* keys in it */
	uint64_t *hash;		/* their hashes, in input order */
	unsigned char *hit;	/* per key: new (add) or found (check) */
	unsigned char *found;	/* per key: in a segment not added to */
	uint32_t *todo;		/* the keys a pass visits, input order */
	uint32_t *order;	/* the same, sorted by window */
	uint64_t *start;	/* per window: where its keys end in order */
	unsigned char *text;	/* the kept lines, one after another */
	size_t text_len;	/* bytes of text used */
	size_t text_cap;	/* size of text */
	uint64_t *end;		/* per key: where its line ends, in text
				 * or, re-read, in the file */
	int fd;			/* the lines are re-read from this regular
				 * file, or -1: they are kept in text */
	uint64_t pos;		/* re-read: offset of the next line taken */
	uint64_t first;		/* re-read: offset of the batch's first line */
	unsigned char *back;	/* re-read: bytes of the file read back */
	size_t back_cap;	/* size of back */
	uint64_t back_off;	/* offset of back's first byte */
	size_t back_len;	/* bytes of back read */
	unsigned char *window[2];	/* out of core: windows read with pread */
};

/* Sets t up for plan p, keeping the lines if keep_lines.  Returns 0, or
 * -1 with errno set. */
int batch_init(struct batch *t, const struct memory_plan *p,
    int keep_lines);

/* Frees what batch_init allocated. */
void batch_free(struct batch *t);

/* Makes the (empty) batch take its lines from fd, about to be read from
 * where it is now: if the lines are kept and fd is a regular file, they
 * are read again from it by offset rather than copied; otherwise into
 * memory. */
void batch_source(struct batch *t, int fd);

/* Takes the lines of g from *from on while the batch has room, at least
 * one into an empty batch, and advances *from past them: the batch is
 * full if *from < g->nlines after.  Returns 0, or -1 with errno set. */
int batch_take(struct batch *t, const struct line_group *g, size_t *from);

/* Returns the bytes of line i of the batch (kept lines only), setting
 * *len; lines re-read from a file must be asked for in increasing i, and
 * b is the filter whose hash they must still have.  Returns NULL if the
 * file cannot be read (errno set) or no longer holds the line (errno
 * ESTALE). */
const unsigned char *batch_line(struct batch *t, const struct bloom *b,
    size_t i, size_t *len);

/* Adds the batch to b: t->hit[i] as bloom_add's isnew, *done to the keys
 * added (all unless it fails).  Safe against other processes adding and
 * checking at once.  Returns BLOOM_OK or a status. */
int batch_add(struct batch *t, struct bloom *b, size_t *done);

/* Tests the batch against b: t->hit[i] as bloom_test's found.  Returns
 * BLOOM_OK or a status. */
int batch_test(struct batch *t, struct bloom *b);

/* Empties the batch for the next lines. */
void batch_clear(struct batch *t);

#endif
