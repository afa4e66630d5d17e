/* SPDX-License-Identifier: ISC */
/* engine.h: interface of engine.c, the per-line path that add and check
 * configure: reader, keys, filter, output. */
#ifndef BLOOM_ENGINE_H
#define BLOOM_ENGINE_H

#include <stdint.h>

#include "bloom.h"
#include "lib/output.h"
#include "stream/batch.h"
#include "stream/lines.h"
#include "stream/pending.h"
#include "stream/union.h"

/* One add or check run over its inputs. */
struct engine {
	struct bloom *filter;	/* the open filter */
	int adding;		/* add, rather than test, the keys */
	int invert;		/* select the keys not found (check -v) */
	int emit;		/* write the selected lines */
	int quiet;		/* stop at the first selected line */
	unsigned char delim;	/* line terminator */
	const struct fields *fields;	/* the key is these fields of a
				 * line, or NULL for the whole line */
	uint64_t lines;		/* lines added, tested or routed so far */
	uint64_t bytes;		/* input bytes of those lines */
	uint64_t selected;	/* lines selected so far */
	uint64_t elsewhere;	/* lines that other slices hold */
	struct output out;	/* where selected lines go */
	struct lines reader;	/* the line reader */
	struct bloom_pretest *plan[SEGMENTS_MAX + 1];	/* what the
				 * reader tests too, one plan (or NULL) for
				 * each size the filter had, kept until the
				 * stream ends */
	unsigned nplans;	/* plans made in this stream */
	unsigned planned_for;	/* segments when the last was made */
	unsigned char *hit;	/* per line of a group: new, or found */
	uint32_t route;		/* route: slices to split the lines into,
				 * or 0 to add or check them */
	struct output *routes;	/* route: one output per slice, or NULL
				 * to write "slice TAB line" to out */
	int status;		/* after STREAM_FILTER_ERROR: the bloom
				 * status */
	void (*notice)(struct bloom *, unsigned);	/* told of the
				 * BLOOM_EV_* events of each add, if set */
	void (*tick)(const struct engine *);	/* called after each group
				 * of lines read, if set, in both passes:
				 * cheap, it sees lines and bytes */
	uint64_t memory;	/* bytes it may use (--memory), or 0 to
				 * find out */
	const char *label;	/* written before each selected line (check
				 * -H: "file:"), or NULL */
	struct filter_union *all;	/* check: the filters whose union
				 * answers, the first being filter, or NULL
				 * for filter alone */
	int which;		/* write the name of the first filter of
				 * all that holds a line, and a tab, before
				 * it */
	const struct bloom *failed;	/* after STREAM_FILTER_ERROR: the
				 * filter that failed */
	int sync;		/* add: the output is synced, not only
				 * written, before its lines are marked
				 * seen (--sync) */
	uint32_t *once;		/* scratch of repeats_once for a group */
	unsigned char *again;	/* scratch of bloom_add_claim */
	int planned;		/* line by line or sorted was chosen */
	struct batch *batch;	/* sorted batches, or NULL: line by line */
	struct pending *pending;	/* add --new to a pipe or socket: the
				 * lines its reader has not taken, not yet
				 * marked seen; else NULL */
	uint64_t *marks;	/* with pending: the hashes to mark */
	unsigned char *marknew;	/* with pending: which of them to mark */
	size_t nmarks;		/* with pending: lines taken, not yet
				 * marked */
};

/* How a stream ended. */
enum stream_end {
	STREAM_DONE,		/* the input was read to its end */
	STREAM_STOP,		/* quiet, and a line was selected */
	STREAM_READ_ERROR,	/* reading failed; errno says why */
	STREAM_CHANGED,		/* a file read again for its lines no
				 * longer held them */
	STREAM_WRITE_ERROR,	/* the output failed; out.err says why */
	STREAM_FILTER_ERROR	/* the filter failed; status says why */
};

/* Sets up e's buffers and line reader for the options already set in e
 * (delim and fields); engine_free undoes it.  Returns 0, or -1 with errno
 * set. */
int engine_init(struct engine *e);

/* Streams the lines of fd through e->filter, writing the selected ones:
 * line by line, or in sorted batches if the filter (a union's filters
 * together) is big for the memory (memory_plan), with the same output.  Whenever the input stops coming,
 * the lines read so far are answered and written before it waits.  An
 * add that writes lines writes each chunk's (a group, or a batch) before
 * it sets their bits: a line is marked seen only once write(2) took it
 * (with sync, once it is synced too); to a pipe or socket, only once its
 * reader took it out (pending.h). */
enum stream_end engine_stream(struct engine *e, int fd);

/* Writes what is pending.  Returns 0, or -1 if the output failed. */
int engine_flush(struct engine *e);

/* Ends a run: writes what is pending and, for an add --new to a pipe or
 * socket, waits until its reader has taken every line written, marking
 * them seen as it takes them.  Returns STREAM_DONE, STREAM_WRITE_ERROR
 * (out.err EPIPE: the reader left, and the lines it did not take are not
 * marked) or STREAM_FILTER_ERROR. */
enum stream_end engine_drain(struct engine *e);

/* Frees what engine_init allocated. */
void engine_free(struct engine *e);

#endif
