/* SPDX-License-Identifier: ISC
 * The engine: the per-line path of add and check.  The reader hands over
 * groups of lines with their hashes; the filter adds or tests them, a
 * group at a time (line by line) or, for a filter big for the memory (a
 * union's filters, together), a sorted batch of many groups at a time (a
 * sweep, each filter of a union in turn); the selected lines go
 * to the output in input order.  Both passes are booked alike (book), so
 * that the counts, the events and the progress are the same whichever
 * runs.  The subcommands in cli/ only set the options of struct engine.
 *
 * An add that writes lines (--new, --dups) never marks a line seen before
 * it is written: each chunk (a group, or a batch) is tested whole, a line
 * repeated inside it new once (repeats.c), its selected lines written
 * with write(2) (and synced, with --sync), and only then are its bits
 * set.  Whatever stops it in between leaves the chunk's lines unmarked,
 * to be called new again by the next run: repeated, never lost.
 *
 * To a pipe or a socket, written is not enough: lines the reader has not
 * taken out of the pipe are lost if it dies.  There add --new notes where
 * each new line ends in the output and, after each chunk, asks how many
 * bytes the reader has not taken yet (output_taken): it marks seen the
 * lines taken, and the others wait (pending.c), each marked as soon as a
 * later chunk, a pause of the input or the end finds it taken; at the end
 * it waits for the reader to take them all.  A renewing window's lines
 * seen again wait in line with them, so that the keys are set in input
 * order, as to a file.  Only the marking waits: the lines are written as
 * before.  A line repeated while its first copy waits is not written
 * again: it is a line seen again.  A sorted batch's lines wait in no
 * table: its reader takes them all before any is marked.
 *
 * Whenever the input stops coming (a read would block), the lines held
 * are answered and written at once, a batch too, however small: sorted
 * batches are only as large as the input that is already there.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream/engine.h"
#include "stream/repeats.h"

#define LIVE_CHUNK	8192	/* lines of a group an add --new tests,
				 * writes and sets at a time */
#define MARKS_MAX	(PENDING_MAX + LIVE_CHUNK)	/* keys set at
				 * once: those waiting, and a chunk's */
#define PROCESS_BYTES	((uint64_t)6 << 20)	/* code, libc, stacks */

int
engine_init(struct engine *e)
{
	int saved;

	e->hit = malloc(LINES_MAX);
	e->once = malloc(2 * LINES_MAX * sizeof e->once[0]);
	e->again = malloc(LINES_MAX);
	if (e->hit == NULL || e->once == NULL || e->again == NULL)
		goto fail;
	if (output_init(&e->out, STDOUT_FILENO, e->delim) == -1)
		goto fail;
	/* The other filters of a union hash the lines' bytes themselves. */
	if (lines_init(&e->reader, e->delim, e->emit || e->route != 0 ||
	    e->all != NULL) == -1) {
		saved = errno;
		output_free(&e->out);
		errno = saved;
		goto fail;
	}
	lines_fields(&e->reader, e->fields);
	return 0;
fail:
	saved = errno;
	free(e->hit);
	free(e->once);
	free(e->again);
	e->hit = NULL;
	e->once = NULL;
	e->again = NULL;
	errno = saved;
	return -1;
}

/* Frees the reader's plans; the reader is stopped. */
static void
free_plans(struct engine *e)
{
	while (e->nplans > 0)
		bloom_pretest_free(e->plan[--e->nplans]);
}

/* Starts keeping the lines written and not yet taken, for an add --new
 * to a pipe or socket.  Returns 0, or -1 with errno set. */
static int
pending_start(struct engine *e)
{
	if ((e->pending = malloc(sizeof *e->pending)) == NULL)
		return -1;
	if (pending_init(e->pending) == -1) {
		free(e->pending);
		e->pending = NULL;
		return -1;
	}
	/* Taken since the last set: those waiting then, and a chunk. */
	e->marks = malloc(MARKS_MAX * sizeof e->marks[0]);
	e->marknew = malloc(MARKS_MAX);
	return e->marks == NULL || e->marknew == NULL ? -1 : 0;
}

static void
pending_stop(struct engine *e)
{
	if (e->pending != NULL)
		pending_free(e->pending);
	free(e->pending);
	free(e->marks);
	free(e->marknew);
	e->pending = NULL;
	e->marks = NULL;
	e->marknew = NULL;
}

void
engine_free(struct engine *e)
{
	free_plans(e);
	pending_stop(e);
	if (e->batch != NULL) {
		batch_free(e->batch);
		free(e->batch);
		e->batch = NULL;
	}
	if (e->hit == NULL)
		return;
	lines_free(&e->reader);
	output_free(&e->out);
	free(e->hit);
	free(e->once);
	free(e->again);
	e->hit = NULL;
	e->once = NULL;
	e->again = NULL;
}

int
engine_flush(struct engine *e)
{
	uint32_t i;
	int rc = output_flush(&e->out);

	for (i = 0; e->routes != NULL && i < e->route; i++)
		if (output_flush(&e->routes[i]) == -1) {
			e->out.err = e->routes[i].err;
			rc = -1;
		}
	return rc;
}

/* Tells e->notice of what the filter's adds since the last call did. */
static void
tell_events(struct engine *e)
{
	unsigned events = bloom_events(e->filter);

	if (events != 0 && e->notice != NULL)
		e->notice(e->filter, events);
}

/*
 * Books n lines of bytes input bytes that the filter answered, hit[i]
 * for line i (NULL for lines routed, not answered): counts the lines,
 * the bytes, the lines selected and those other slices hold, and tells
 * of what the filter's adds did.  Both passes book here.
 */
static void
book(struct engine *e, const unsigned char *hit, size_t n, uint64_t bytes)
{
	unsigned char want = e->invert ? 0 : 1;
	size_t i = 0, j, selected = 0, elsewhere = 0;

	if (hit != NULL) {
		tell_events(e);
		/* 64 lines at a time into byte counters: a loop the compiler
		 * makes a few vector instructions. */
		for (; n - i >= 64; i += 64) {
			unsigned char in_block = 0, elsewhere_block = 0;

			for (j = 0; j < 64; j++) {
				in_block = (unsigned char)(in_block +
				    (hit[i + j] == want));
				elsewhere_block = (unsigned char)(elsewhere_block +
				    (hit[i + j] == BLOOM_ELSEWHERE));
			}
			selected += in_block;
			elsewhere += elsewhere_block;
		}
		for (; i < n; i++) {
			selected += hit[i] == want;
			elsewhere += hit[i] == BLOOM_ELSEWHERE;
		}
	}
	e->lines += n;
	e->bytes += bytes;
	e->selected += selected;
	e->elsewhere += elsewhere;
}

/* Writes each line of g where its slice goes: to that slice's output, or
 * to out after the slice's number and a tab. */
static enum stream_end
route_group(struct engine *e, const struct line_group *g)
{
	char prefix[16];
	size_t i;
	int len, rc;

	for (i = 0; i < g->nlines; i++) {
		uint32_t slice = bloom_slice_of(e->filter, g->hash[i],
		    e->route);

		if (e->routes != NULL)
			rc = output_line(&e->routes[slice], g->line[i].data,
			    g->line[i].len, e->delim);
		else {
			len = snprintf(prefix, sizeof prefix, "%" PRIu32 "\t",
			    slice);
			rc = output_bytes(&e->out, prefix, (size_t)len);
			if (rc == 0)
				rc = output_line(&e->out, g->line[i].data,
				    g->line[i].len, e->delim);
		}
		if (rc == -1) {
			if (e->routes != NULL)
				e->out.err = e->routes[slice].err;
			return STREAM_WRITE_ERROR;
		}
	}
	book(e, NULL, g->nlines, g->bytes);
	return STREAM_DONE;
}

/*
 * Gives the reader a new plan of segments to test ahead when the filter
 * has grown since the last: a plan the reader may still be using is
 * never changed, so each size gets its own.
 */
static void
replan(struct engine *e)
{
	struct bloom_pretest *p;

	/* A union's filters are tested in the engine, none ahead. */
	if (e->all != NULL)
		return;
	if (e->nplans > 0 && e->planned_for == bloom_nsegments(e->filter))
		return;
	if (e->nplans == sizeof e->plan / sizeof e->plan[0])
		return;
	/* An add --new's plan for a fixed filter has the caller test again
	 * what the pretest did not find: worth it only in another thread. */
	p = bloom_pretest_plan(e->filter, !e->adding ? BLOOM_PRETEST_CHECK :
	    e->emit && lines_threaded(&e->reader) ? BLOOM_PRETEST_ADD_NEW :
	    BLOOM_PRETEST_ADD, LIVE_CHUNK);
	e->plan[e->nplans++] = p;
	e->planned_for = bloom_nsegments(e->filter);
	lines_pretest(&e->reader, p);
}

/* Writes a selected line, after the label if there is one and the name
 * of the filter that holds it (check --which) if not NULL.  Returns 0, or
 * -1 if the output failed. */
static int
put_line(struct engine *e, const unsigned char *line, size_t len,
    const char *which)
{
	if (e->label != NULL && output_bytes(&e->out, e->label,
	    strlen(e->label)) == -1)
		return -1;
	if (which != NULL && (output_bytes(&e->out, which,
	    strlen(which)) == -1 || output_bytes(&e->out, "\t", 1) == -1))
		return -1;
	return output_line(&e->out, line, len, e->delim);
}

/* Returns the name of the filter that holds line i of the chunk just
 * tested (of its group, or of the batch), if check --which asks for it,
 * else NULL. */
static const char *
which_name(const struct engine *e, size_t i)
{
	if (!e->which)
		return NULL;
	if (e->all == NULL)
		return bloom_path(e->filter);
	return bloom_path(e->all->filter[e->all->which[i]]);
}

/* Writes the lines of g that e->hit selects, of the n from the first. */
static enum stream_end
write_selected(struct engine *e, const struct line_group *g, size_t first,
    size_t n)
{
	const unsigned char *hit = e->hit;
	unsigned char want = e->invert ? 0 : 1, sel[64];
	size_t i, j, k, nsel;
	int plain = e->label == NULL && !e->which;

	n += first;
	for (i = first; i < n; i += k) {
		k = n - i < sizeof sel ? n - i : sizeof sel;
		/* Which lines are selected is often a coin toss: list them
		 * without a branch per line. */
		for (j = nsel = 0; j < k; j++) {
			sel[nsel] = (unsigned char)j;
			nsel += hit[i + j] == want;
		}
		/* Without a label or a name, each line is one copy. */
		for (j = 0; plain && j < nsel; j++)
			if (output_line(&e->out, g->line[i + sel[j]].data,
			    g->line[i + sel[j]].len, e->delim) == -1)
				return STREAM_WRITE_ERROR;
		for (j = 0; !plain && j < nsel; j++)
			if (put_line(e, g->line[i + sel[j]].data,
			    g->line[i + sel[j]].len,
			    which_name(e, i + sel[j])) == -1)
				return STREAM_WRITE_ERROR;
	}
	return STREAM_DONE;
}

/* Hands what is written over to the kernel, and with --sync to the
 * disk: after this the lines written may be marked seen. */
static enum stream_end
deliver(struct engine *e)
{
	int rc = e->sync ? output_sync(&e->out) : output_flush(&e->out);

	return rc == -1 ? STREAM_WRITE_ERROR : STREAM_DONE;
}

/*
 * Returns how many of the n lines of g from line from on have had the
 * pretest that line has had, at most n: the reader tests only the lines
 * it hashed.  Sets *pre to their answers, or to NULL if they had none.
 */
static size_t
pretested(const struct line_group *g, size_t from, size_t n,
    const unsigned char **pre)
{
	*pre = NULL;
	if (g->pretest == NULL || from >= g->hashed)
		return n;
	*pre = g->found + from;
	return g->hashed - from < n ? g->hashed - from : n;
}

/* Writes the first n lines of the batch that t->hit selects.  Returns
 * STREAM_DONE, or how it failed. */
static enum stream_end
write_batch(struct engine *e, size_t n)
{
	struct batch *t = e->batch;
	unsigned char want = e->invert ? 0 : 1;
	const unsigned char *line;
	size_t i, len;

	for (i = 0; i < n; i++) {
		if (t->hit[i] != want)
			continue;
		if ((line = batch_line(t, e->filter, i, &len)) == NULL)
			return errno == ESTALE ? STREAM_CHANGED :
			    STREAM_READ_ERROR;
		if (put_line(e, line, len, which_name(e, i)) == -1)
			return STREAM_WRITE_ERROR;
	}
	return STREAM_DONE;
}

/* A chunk of lines the filter answers at once: a piece of a group, line
 * by line, or a sorted batch. */
struct chunk {
	struct bloom_sweep *sweep;	/* the batch's sorted sweep, or NULL:
				 * line by line */
	const struct bloom_pretest *pretest;	/* what the reader tested
				 * ahead, or NULL */
	const unsigned char *prefound;	/* its answers for these lines, or
				 * NULL */
	const uint64_t *hash;	/* the lines' hashes */
	unsigned char *hit;	/* their answers */
	size_t n;		/* lines */
	const struct line_group *g;	/* where they are: g's lines from
				 * first on, or NULL: the batch's */
	size_t first;		/* g's first line of the chunk */
	uint32_t *once;		/* scratch of repeats_once */
	size_t once_cap;	/* entries of once */
	unsigned char *again;	/* scratch of bloom_add_claim: n bytes */
};

/*
 * add --new to a pipe or socket: writes the new lines of the n of g from
 * the first, and puts in line to be set, in input order, each with the
 * output offset the reader must take first, the new ones and (a window
 * that renews) those seen again.
 */
static enum stream_end
write_waiting(struct engine *e, const struct line_group *g, size_t first,
    size_t n)
{
	int renews = bloom_sets_found(e->filter);
	size_t i;

	for (i = first; i < first + n; i++) {
		if (e->hit[i] == 1 && output_line(&e->out, g->line[i].data,
		    g->line[i].len, e->delim) == -1)
			return STREAM_WRITE_ERROR;
		if (e->hit[i] == 1 || (e->hit[i] == 0 && renews))
			pending_push(e->pending, g->hash[i],
			    output_offset(&e->out), e->hit[i]);
	}
	return STREAM_DONE;
}

/* Writes the selected lines of the first n of chunk c. */
static enum stream_end
write_chunk(struct engine *e, const struct chunk *c, size_t n)
{
	if (!e->emit)
		return STREAM_DONE;
	if (c->g != NULL && e->pending != NULL)
		return write_waiting(e, c->g, c->first, n);
	if (c->g != NULL)
		return write_selected(e, c->g, c->first, n);
	return write_batch(e, n);
}

/* Marks as found, a line seen again, the new lines of a chunk whose
 * first copy waits to be taken: as to a file, where it would have been
 * set by now. */
static void
drop_waiting(const struct pending *p, const uint64_t *hash,
    unsigned char *hit, size_t k)
{
	size_t i;

	for (i = 0; p->n > 0 && i < k; i++)
		if (hit[i] == 1 && pending_holds(p, hash[i]))
			hit[i] = 0;
}

/* Moves into e->marks the keys waiting that the reader has taken. */
static void
take_taken(struct engine *e)
{
	e->nmarks += pending_take(e->pending, output_taken(&e->out),
	    e->marks + e->nmarks, e->marknew + e->nmarks);
}

/* Waits up to *ms for the reader to take more, doubling *ms up to 64.
 * Returns STREAM_DONE, or STREAM_WRITE_ERROR if the reader has gone. */
static enum stream_end
wait_reader(struct engine *e, int *ms)
{
	if (output_wait_taken(&e->out, *ms) == -1)
		return STREAM_WRITE_ERROR;
	*ms = *ms < 64 ? 2 * *ms : *ms;
	take_taken(e);
	return STREAM_DONE;
}

/* Before the new lines of a chunk of k are written: leaves room for them
 * among the lines waiting, waiting for the reader as a full pipe would. */
static enum stream_end
make_room(struct engine *e, size_t k)
{
	enum stream_end end;
	int ms = 1;

	take_taken(e);
	while (e->pending->n + k > PENDING_MAX)
		if ((end = wait_reader(e, &ms)) != STREAM_DONE)
			return end;
	return STREAM_DONE;
}

/*
 * Once the lines of chunk c are written: sets, in one bloom_add_set, the
 * keys waiting that the reader has taken the lines before of; the others,
 * the chunk's among them, wait (write_waiting put them there).  Sets
 * *done to c->n unless it fails.
 */
static enum stream_end
mark_taken(struct engine *e, const struct chunk *c, size_t *done)
{
	size_t set;

	take_taken(e);
	e->status = bloom_add_set(e->filter, NULL, e->marks, e->marknew,
	    e->nmarks, &set);
	e->nmarks = 0;
	if (e->status != BLOOM_OK)
		return STREAM_FILTER_ERROR;
	*done = c->n;
	return STREAM_DONE;
}

/* Marks seen the lines waiting that the reader has taken; with wait,
 * waits until it has taken them all.  Returns as engine_drain. */
static enum stream_end
settle(struct engine *e, int wait)
{
	enum stream_end end = STREAM_DONE;
	size_t done;
	int ms = 1;

	while (e->pending != NULL) {
		take_taken(e);
		if (e->nmarks > 0) {
			e->status = bloom_add_set(e->filter, NULL, e->marks,
			    e->marknew, e->nmarks, &done);
			e->nmarks = 0;
			tell_events(e);
			if (e->status != BLOOM_OK)
				return STREAM_FILTER_ERROR;
		}
		if (end != STREAM_DONE || e->pending->n == 0 || !wait)
			break;
		/* Gone: once more for what it took before it went. */
		end = wait_reader(e, &ms);
	}
	return end;
}

enum stream_end
engine_drain(struct engine *e)
{
	enum stream_end end;

	if (!e->out.failed && engine_flush(e) == 0)
		return settle(e, 1);
	/* The output failed: what the reader took is still marked. */
	end = settle(e, 0);
	return end == STREAM_DONE ? STREAM_WRITE_ERROR : end;
}

/* A sorted batch's lines, written, wait in no table: to a pipe or socket,
 * its reader takes them all before any is marked.  Returns STREAM_DONE,
 * or STREAM_WRITE_ERROR if the reader has gone. */
static enum stream_end
wait_all_taken(struct engine *e)
{
	while (output_taken(&e->out) < e->out.written)
		if (output_wait_taken(&e->out, 10) == -1)
			return STREAM_WRITE_ERROR;
	return STREAM_DONE;
}

/*
 * Adds the lines of chunk c, writing the new ones (or, --dups, the
 * others) before it sets any bit: test, once, claim, write, deliver, set.
 * Sets *done to the lines whose bits are set.  To a pipe or socket
 * (--new), the new lines of a chunk line by line wait to be marked until
 * the reader took them (mark_taken); a sorted batch's, until it took all.
 */
static enum stream_end
live_chunk(struct engine *e, const struct chunk *c, size_t *done)
{
	struct bloom *b = e->filter;
	enum stream_end end;
	int taking = e->out.queue != 0 && !e->invert;

	if (taking && c->sweep == NULL && e->pending == NULL &&
	    pending_start(e) == -1) {
		pending_stop(e);
		e->status = BLOOM_ERRNO;
		return STREAM_FILTER_ERROR;
	}
	e->status = bloom_add_test(b, c->sweep, c->pretest, c->prefound,
	    c->hash, c->n, c->hit);
	if (e->status != BLOOM_OK)
		return STREAM_FILTER_ERROR;
	if (!bloom_finds_repeats(b))
		repeats_once(c->hash, c->hit, c->n, c->once, c->once_cap);
	if (e->pending != NULL)
		drop_waiting(e->pending, c->hash, c->hit, c->n);
	e->status = bloom_add_claim(b, c->sweep, c->hash, c->hit, c->n,
	    c->again);
	if (e->status != BLOOM_OK)
		return STREAM_FILTER_ERROR;
	if (e->pending != NULL && (end = make_room(e, c->n)) != STREAM_DONE)
		return end;
	if ((end = write_chunk(e, c, c->n)) != STREAM_DONE ||
	    (end = deliver(e)) != STREAM_DONE)
		return end;
	if (e->pending != NULL)
		return mark_taken(e, c, done);
	if (taking && (end = wait_all_taken(e)) != STREAM_DONE)
		return end;
	e->status = bloom_add_set(b, c->sweep, c->hash, c->hit, c->n, done);
	return e->status == BLOOM_OK ? STREAM_DONE : STREAM_FILTER_ERROR;
}

/*
 * Tests the lines of chunk c against the filter, or, checked against
 * several (check -F), against each of them in turn (a union), line by
 * line or sorted as the filter would be: a group's lines hashed for the
 * union's other seeds first, a batch's as it took them.  Returns BLOOM_OK
 * or a status, e->failed set to the filter that failed.
 */
static int
test_chunk(struct engine *e, const struct chunk *c)
{
	size_t at = c->g != NULL ? c->first : 0;
	int status;

	if (e->all == NULL)
		return bloom_test(e->filter, c->sweep, c->pretest, c->prefound,
		    c->hash, c->n, c->hit);
	if (c->g != NULL && union_hash(e->all, c->g, c->first, c->n, at) ==
	    -1)
		status = BLOOM_ERRNO;
	else
		status = union_test(e->all, c->sweep, c->hash, at, c->n,
		    c->hit);
	if (status != BLOOM_OK)
		e->failed = e->all->filter[e->all->failed];
	return status;
}

/*
 * The one path of every chunk, line by line or sorted: adds or tests its
 * lines and writes the selected ones, setting *done to the lines the
 * filter answered (those before a failure, written too).  For add, a line
 * is selected if it was new; for check, if it may be in the set (or, with
 * -v, if it certainly is not).
 */
static enum stream_end
run_chunk(struct engine *e, const struct chunk *c, size_t *done)
{
	enum stream_end end;

	*done = 0;
	if (e->adding && e->emit)
		return live_chunk(e, c, done);
	if (e->adding)
		e->status = bloom_add(e->filter, c->sweep, c->pretest,
		    c->prefound, c->hash, c->n, c->hit, done);
	else if ((e->status = test_chunk(e, c)) == BLOOM_OK)
		*done = c->n;
	if ((end = write_chunk(e, c, *done)) != STREAM_DONE)
		return end;
	return e->status == BLOOM_OK ? STREAM_DONE : STREAM_FILTER_ERROR;
}

/*
 * Adds or tests the lines of g and writes the selected ones: the lines
 * the reader pretested, then the others, each a chunk; an add that
 * writes lines, pieces of LIVE_CHUNK lines, whose blocks are still in the
 * processor's cache when their bits are set (the output is written about
 * as often as when it fills).
 */
static enum stream_end
run_group(struct engine *e, const struct line_group *g)
{
	enum stream_end end = STREAM_DONE;
	struct chunk c;
	size_t done = 0, from, part, most;

	memset(&c, 0, sizeof c);
	c.pretest = g->pretest;
	c.g = g;
	c.once = e->once;
	c.once_cap = 2 * LINES_MAX;
	c.again = e->again;
	for (from = 0; end == STREAM_DONE && from < g->nlines; from += c.n) {
		most = g->nlines - from;
		if (e->adding && e->emit && most > LIVE_CHUNK)
			most = LIVE_CHUNK;
		c.n = pretested(g, from, most, &c.prefound);
		c.hash = g->hash + from;
		c.hit = e->hit + from;
		c.first = from;
		end = run_chunk(e, &c, &part);
		done = from + part;
	}
	replan(e);
	book(e, e->hit, done, g->bytes);
	return end;
}

/*
 * The bytes the process takes whatever its plan: its code, libc and
 * stacks (PROCESS_BYTES, measured: 4.1 MB resident for a plain add of a
 * few lines), the reader's groups, this engine's arrays and output, and
 * for add --new the claim table it may share (charged to the memory
 * cgroup of the adder that made it).
 */
static uint64_t
fixed_memory(const struct engine *e)
{
	uint64_t fixed = PROCESS_BYTES + lines_memory() + OUTPUT_SIZE +
	    (uint64_t)LINES_MAX * (2 + 2 * sizeof e->once[0]);

	if (e->adding && e->emit)
		fixed += BLOOM_CLAIMS_BYTES;
	/* To a pipe or socket, the lines waiting for their reader and the
	 * marks of those it took (pending_start). */
	if (e->adding && e->emit && e->out.queue != 0 && !e->invert)
		fixed += pending_memory() + (uint64_t)MARKS_MAX *
		    (sizeof e->marks[0] + 1);
	return fixed;
}

/* Returns the bytes of the filters the lines go through: the filter's,
 * or the sum of a union's, which are mapped together. */
static uint64_t
filter_bytes(const struct engine *e)
{
	uint64_t sum = 0, size;
	unsigned i;

	if (e->all == NULL)
		return bloom_header(e->filter)->file_size;
	for (i = 0; i < e->all->n; i++) {
		size = bloom_header(e->all->filter[i])->file_size;
		sum = size > UINT64_MAX - sum ? UINT64_MAX : sum + size;
	}
	return sum;
}

/* Returns the bytes a key of a sorted batch takes beyond its own: what an
 * add --new takes to find a batch's repeats, or the scratch of a union,
 * its keys' hashes for the other seeds among them. */
static size_t
key_extra(const struct engine *e)
{
	if (e->all != NULL)
		return union_key_bytes(e->all);
	return e->adding && e->emit ? BLOOM_REPEATS_KEY_BYTES : 0;
}

/*
 * Chooses, once, between line by line and sorted batches, from the size
 * of the filter (of a union's filters together) and the memory.  Returns
 * 0, or -1 with errno set.
 */
static int
choose_mode(struct engine *e)
{
	struct memory_plan plan;

	if (e->planned)
		return 0;
	e->planned = 1;
	if (e->route != 0)
		return 0;
	memory_plan(filter_bytes(e), e->memory, fixed_memory(e), e->adding,
	    &plan);
	if (!plan.sorted)
		return 0;
	if ((e->batch = malloc(sizeof *e->batch)) == NULL)
		return -1;
	if (batch_init(e->batch, &plan, e->emit, key_extra(e)) == -1) {
		free(e->batch);
		e->batch = NULL;
		return -1;
	}
	/* One sweep serves each filter of a union in turn. */
	if (e->all != NULL && union_resize(e->all, e->batch->cap) == -1) {
		batch_free(e->batch);
		free(e->batch);
		e->batch = NULL;
		return -1;
	}
	return 0;
}

/*
 * Adds or tests the batch as one chunk, a sorted one, and writes its
 * selected lines, as run_group does for a group; then empties it.
 */
static enum stream_end
run_batch(struct engine *e)
{
	struct batch *t = e->batch;
	enum stream_end end;
	struct chunk c;
	size_t done;

	if (t->n == 0)
		return STREAM_DONE;
	memset(&c, 0, sizeof c);
	c.sweep = t->sweep;
	c.hash = t->hash;
	c.hit = t->hit;
	c.n = t->n;
	c.once = bloom_sweep_scratch(t->sweep);
	c.once_cap = 2 * t->cap;
	c.again = t->again;
	end = run_chunk(e, &c, &done);
	book(e, t->hit, done, t->bytes);
	batch_clear(t);
	if (end != STREAM_DONE)
		return end;
	/* Lines come out a batch at a time: let these go on now. */
	return engine_flush(e) == -1 ? STREAM_WRITE_ERROR : STREAM_DONE;
}

/*
 * Takes the lines of g into the batch, running it each time it is full,
 * and once more at the end of the input (or a failed read).
 */
static enum stream_end
batch_group(struct engine *e, const struct line_group *g)
{
	enum stream_end end;
	size_t from = 0;

	for (;;) {
		size_t at = e->batch->n, was = from;

		if (batch_take(e->batch, g, &from) == -1) {
			e->status = BLOOM_ERRNO;
			return STREAM_FILTER_ERROR;
		}
		/* A union's other seeds hash the lines while they are here. */
		if (e->all != NULL && union_hash(e->all, g, was, from - was,
		    at) == -1) {
			e->failed = e->all->filter[e->all->failed];
			e->status = BLOOM_ERRNO;
			return STREAM_FILTER_ERROR;
		}
		if (from == g->nlines)
			break;
		if ((end = run_batch(e)) != STREAM_DONE)
			return end;
		if (e->quiet && e->selected > 0)
			return STREAM_STOP;
	}
	if (g->err == 0 && !g->last)
		return STREAM_DONE;
	return run_batch(e);
}

/* Answers the lines of a batch that is not full, and writes what is
 * pending: the input stopped coming. */
static enum stream_end
answer_held(struct engine *e)
{
	enum stream_end end;

	if (e->batch != NULL && (end = run_batch(e)) != STREAM_DONE)
		return end;
	if (e->quiet && e->selected > 0)
		return STREAM_STOP;
	if (engine_flush(e) == -1)
		return STREAM_WRITE_ERROR;
	return settle(e, 0);
}

enum stream_end
engine_stream(struct engine *e, int fd)
{
	const struct line_group *g;
	enum stream_end end;
	int err = 0;

	if (choose_mode(e) == -1) {
		e->status = BLOOM_ERRNO;
		return STREAM_FILTER_ERROR;
	}
	free_plans(e);
	if (e->batch != NULL)
		batch_source(e->batch, e->fields == NULL ? fd : -1);
	lines_start(&e->reader, fd, e->filter, NULL);
	if (e->batch == NULL && e->route == 0 && e->all == NULL)
		replan(e);
	for (;;) {
		/* Before waiting for input, answer the lines held and let
		 * the lines selected so far go on down the pipeline. */
		if (!lines_wait(&e->reader) && (end = answer_held(e)) !=
		    STREAM_DONE) {
			err = errno;
			break;
		}
		g = lines_next(&e->reader);
		if (e->route != 0)
			end = route_group(e, g);
		else if (e->batch != NULL)
			end = batch_group(e, g);
		else
			end = run_group(e, g);
		if (end != STREAM_DONE)
			err = errno;
		if (e->tick != NULL)
			e->tick(e);
		if (end != STREAM_DONE)
			break;
		if (e->quiet && e->selected > 0) {
			end = STREAM_STOP;
			break;
		}
		if (g->err != 0) {
			err = g->err;
			end = STREAM_READ_ERROR;
			break;
		}
		if (g->last)
			break;
	}
	if (e->batch != NULL && e->batch->n > 0)
		batch_clear(e->batch);
	lines_stop(&e->reader);
	errno = err;
	return end;
}
