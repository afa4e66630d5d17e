/* SPDX-License-Identifier: ISC */
/* batch.h: interface of batch.c, sorted batches: the many lines at a
 * time that a sorted sweep (bloom_sweep_new) adds or tests, with their
 * hashes and answers, and the lines kept or read again to be written. */
#ifndef BLOOM_BATCH_H
#define BLOOM_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "bloom.h"
#include "lib/memory.h"
#include "stream/lines.h"

/* The lines of one batch, their hashes and what the filter said. */
struct batch {
	struct memory_plan plan;	/* budget, window, out of core */
	int keep_lines;		/* the lines are kept, to be written */
	size_t cap;		/* keys it holds at most */
	size_t per_key;		/* bytes a key takes, but its line */
	size_t n;		/* keys in it */
	uint64_t *hash;		/* their hashes, in input order */
	unsigned char *hit;	/* per key: new (add) or found (check) */
	unsigned char *again;	/* add --new: per key, found when tested
				 * again after it was claimed */
	uint64_t bytes;		/* input bytes of its lines */
	uint64_t group_bytes;	/* bytes counted for the lines taken from
				 * the group taken last */
	struct bloom_sweep *sweep;	/* the sweep of its keys */
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
};

/* Sets t up for plan p, keeping the lines if keep_lines, and counting in
 * each key extra bytes its caller takes per key besides (what an add
 * --new takes to find the repeats of a batch, a union's scratch).
 * Returns 0, or -1 with errno set. */
int batch_init(struct batch *t, const struct memory_plan *p,
    int keep_lines, size_t extra);

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

/* Empties the batch for the next lines. */
void batch_clear(struct batch *t);

#endif
