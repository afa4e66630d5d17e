/* SPDX-License-Identifier: ISC
 * The filter: opening and mapping its file, and adding and testing keys
 * over its segments, by one policy for both passes (line by line here,
 * sorted batches in sweep.c): which segments answer, which takes adds,
 * and which keys a slice passes over.  The format is format.c's; which
 * segments are live, which takes adds and how much of its room an adder
 * takes are segments.c's; setting and testing a key's bits is bits.c's;
 * the locks of the processes that share the file are locks.c's.
 */
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bloom.h"
#include "hash.h"
#include "lib/memory.h"
#include "store/bits.h"
#include "store/claims.h"
#include "store/fill.h"
#include "store/holes.h"
#include "store/handle.h"
#include "store/segments.h"
#include "store/sweep.h"
#include "store/locks.h"
#include "store/mates.h"
#include "store/modes.h"

#define PAGE_GUESS	4096	/* bytes in a page, for heuristics */
#define PREFAULT_SHARE	16	/* prefault after pages / this lookups */
#define POPULATE_SHARE	8	/* make an apbf window's pages writable
				 * after pages / this keys stored */
#define POPULATE_PROBE	256	/* keys an add takes first, until then */
#define HEAD_READ	8192	/* bytes read to parse: header and table */
#define BLOOM_CHUNK	(1 << 16)	/* keys a line-by-line pass works on
					 * at a time */
#define PRETEST_MAX	8	/* segments a reader thread tests, at most */

/* Segments that a line reader's thread tests its keys against ahead of
 * bloom_add or bloom_test (bloom_pretest_plan). */
struct bloom_pretest {
	unsigned nseg;			/* segments, 1 or more */
	struct segment seg[PRETEST_MAX];	/* copies, the fullest first */
	uint64_t mask;			/* their indices, as bits */
	int shares;			/* see bloom_pretest_shares */
	size_t chunk;			/* keys of a bloom_add_test, or 0 */
};

/* The pass of an operation: line by line, through the mapping with
 * prefetching, or a sorted sweep's, with the scratch the policy needs. */
struct pass {
	struct bloom_sweep *sweep;	/* the sweep, or NULL: line by line */
	uint32_t *idx;		/* room for max key indices */
	unsigned char *found;	/* room for max flags */
	size_t max;		/* keys taken at a time, at most */
};

_Static_assert(BLOOM_SWEEP_KEY_BYTES == SWEEP_KEY_BYTES,
    "bloom.h says what a sweep takes per key");

#define PRETEST_MATE	0x10	/* a key not found that may repeat another
				 * of its chunk (mates_mark) */

_Static_assert(HEAD_READ >= V2_HEADER_SIZE + SEGMENTS_MAX * SLOT_SIZE,
    "a whole table is read at open");

/*
 * Counts n more lookups, and prefaults once they reach PREFAULT_SHARE of
 * the pages; makes an age-partitioned window's array writable if the
 * adds so far stored enough (note_stores).
 */
static inline void
note_lookups(struct bloom *b, size_t n)
{
	b->lookups += n;
	if (!b->prefaulted && b->lookups >= b->prefault_at)
		segments_prefault(b);
	if (!b->populated && b->stores >= b->populate_at)
		segments_prefault_writes(b);
}

/* Returns 1 if an add may yet make an age-partitioned window's array
 * writable at once (segments_prefault_writes). */
static inline int
may_populate(const struct bloom *b, const struct pass *v)
{
	return v->sweep == NULL && !b->populated &&
	    b->populate_at != UINT64_MAX;
}

/* Returns how many of n keys an add of pass v takes at a time, tried
 * keys taken so far: while the array may yet be made writable, a few to
 * begin with, then as many again as so far (note_stores). */
static inline size_t
add_step(const struct bloom *b, const struct pass *v, size_t n, size_t tried)
{
	size_t step = v->max;

	if (may_populate(b, v))
		step = tried < POPULATE_PROBE ? POPULATE_PROBE : tried;
	if (step > v->max)
		step = v->max;
	return n < step ? n : step;
}

/*
 * Counts n more keys whose bits an add of pass v stored, line by line (a
 * sorted pass makes the windows it writes writable itself, sweep.c), and
 * makes an age-partitioned window's array writable at once when they
 * would reach 1/POPULATE_SHARE of its pages: the stores so far, and those
 * the left keys still to add would make at the rate of this add's (hit
 * of its tried keys stored).  That dirties every page, so it goes by
 * stores, not lookups: keys whose bits are all set already store nothing
 * and leave their pages clean (apbf.c).  A key stores to 1.5 to 1.9
 * pages, so by then a good share of the pages would be written anyway,
 * and a page made writable by a write fault costs 1.9 us, 2 to 3 times
 * what the populate takes a page.  It used to wait for as many lookups
 * as pages: an add --new, 8192 keys a pass, had by then made some 35,000
 * of a 200 MiB array's 51,000 pages writable one fault at a time
 * (bench/windows).
 */
static inline void
note_stores(struct bloom *b, const struct pass *v, size_t n, size_t tried,
    size_t hit, size_t left)
{
	if (v->sweep != NULL)
		return;
	b->stores += n;
	if (left > 0 && tried > 0 && may_populate(b, v) && b->stores +
	    (uint64_t)((double)left * (double)hit / (double)tried) >=
	    b->populate_at)
		segments_prefault_writes(b);
}

int
bloom_flock(int fd, int op, const char *path, void (*on_wait)(const char *))
{
	return locks_flock(fd, op, path, on_wait);
}

/* Reads and validates the header and table of the open file, and its
 * size into st after them: a growth allocates before it raises the count,
 * so the size covers the segments read.  A window rotating at this moment
 * may show a generation newer than the epoch read before it, or give back
 * room after its count was read: read again. */
static int
read_header(struct bloom *b, struct stat *st)
{
	unsigned char buf[HEAD_READ];
	ssize_t got;
	int s, tries;

	for (tries = 0; tries < 3; tries++) {
		if ((got = pread(b->fd, buf, sizeof buf, 0)) == -1 ||
		    fstat(b->fd, st) == -1)
			return BLOOM_ERRNO;
		s = bloom_header_parse(buf, (size_t)got, (uint64_t)st->st_size,
		    &b->hdr);
		if (s != BLOOM_ESEGSTAMP && s != BLOOM_ESIZE)
			break;
	}
	return s;
}

/* Maps what is before the segments: for v1 that is the whole file. */
static int
map_head(struct bloom *b)
{
	int prot = PROT_READ | (b->writable ? PROT_WRITE : 0);
	uint64_t size = b->hdr.version == FORMAT_V1 ? b->hdr.file_size :
	    b->hdr.data_offset;

	if (size > SIZE_MAX) {
		errno = EFBIG;
		return -1;
	}
	b->head_size = (size_t)size;
	b->head = mmap(NULL, b->head_size, prot, MAP_SHARED, b->fd, 0);
	if (b->head == MAP_FAILED) {
		b->head = NULL;
		return -1;
	}
	return 0;
}

int
bloom_open(struct bloom **bp, const char *path, int writable,
    void (*on_wait)(const char *path), struct bloom_header *seen)
{
	struct bloom *b;
	struct stat st;
	uint64_t total = 0;
	unsigned i;
	int s, e;

	*bp = NULL;
	if (seen != NULL)
		memset(seen, 0, sizeof *seen);
	if ((b = calloc(1, sizeof *b)) == NULL)
		return BLOOM_ERRNO;
	b->path = path;
	b->writable = writable;
	b->fd = locks_open(path, writable, on_wait);
	if (b->fd == -1) {
		s = errno == EISDIR ? BLOOM_ENOTREG : BLOOM_ERRNO;
		goto fail;
	}
	if (fstat(b->fd, &st) == -1)
		goto fail_errno;
	if (!S_ISREG(st.st_mode)) {
		s = BLOOM_ENOTREG;
		goto fail;
	}
	if (writable && (b->writers = locks_writer_join(b->fd, path,
	    on_wait)) == -1)
		goto fail_errno;
	if ((s = read_header(b, &st)) != BLOOM_OK)
		goto fail;
	b->mode = mode_policy(&b->hdr);
	b->seed = b->hdr.seed;
	b->sparse = holes_any(b->fd, (uint64_t)st.st_size);
	b->pending = malloc(BLOOM_CHUNK * sizeof b->pending[0]);
	b->found = malloc(BLOOM_CHUNK);
	if (b->pending == NULL || b->found == NULL || map_head(b) == -1)
		goto fail_errno;
	if (b->hdr.version == FORMAT_V1 && !writable && b->sparse &&
	    holes_hide(b->fd, b->head, 0, b->head_size) == -1)
		goto fail_errno;
	if ((s = segments_map(b)) != BLOOM_OK ||
	    (s = segments_refresh(b)) != BLOOM_OK)
		goto fail;
	for (i = 0; i < b->nmapped; i++)	/* an array shared once */
		if (i == 0 || b->seg[i].bits != b->seg[0].bits)
			total += b->seg[i].info.nblocks * BLOCK_BYTES;
	b->prefault_at = total / PAGE_GUESS / PREFAULT_SHARE;
	b->populate_at = total / PAGE_GUESS / POPULATE_SHARE + 1;
	if (!memory_fits(total))
		b->prefault_at = b->populate_at = UINT64_MAX;
	if (!segments_populates(b))
		b->populate_at = UINT64_MAX;
	*bp = b;
	return BLOOM_OK;

fail_errno:
	s = BLOOM_ERRNO;
fail:
	e = errno;
	if (seen != NULL)
		*seen = b->hdr;
	bloom_close(b);
	errno = e;
	return s;
}

int
bloom_is_file(const struct bloom *b, int fd)
{
	struct stat mine, other;

	return fstat(b->fd, &mine) == 0 && fstat(fd, &other) == 0 &&
	    mine.st_dev == other.st_dev && mine.st_ino == other.st_ino;
}

void
bloom_close(struct bloom *b)
{
	if (b == NULL)
		return;
	claims_leave(b->claims);
	b->claims = NULL;
	segments_unmap(b);
	if (b->head != NULL)
		munmap(b->head, b->head_size);
	if (b->fd != -1)
		close(b->fd);
	free(b->pending);
	free(b->found);
	free(b);
}

int
bloom_sync(struct bloom *b)
{
	unsigned i;

	if (msync(b->head, b->head_size, MS_SYNC) == -1)
		return BLOOM_ERRNO;
	for (i = 0; i < b->nmapped; i++)
		if (b->seg[i].map != NULL && msync(b->seg[i].map,
		    b->seg[i].map_size, MS_SYNC) == -1)
			return BLOOM_ERRNO;
	if (fsync(b->fd) == -1)
		return BLOOM_ERRNO;
	return BLOOM_OK;
}

uint64_t
bloom_hash(const struct bloom *b, const void *key, size_t len)
{
	return hash64(key, len, b->seed);
}

void
bloom_hash_begin(const struct bloom *b, struct hash_state *st)
{
	hash64_begin(st, b->seed);
}

/* Lists in idx the keys that slice s holds, marking the others
 * BLOOM_ELSEWHERE in mark; returns how many it holds. */
static size_t
in_slice(const struct segment *s, const uint64_t *hashes, size_t n,
    uint32_t *idx, unsigned char *mark)
{
	size_t i, m = 0;

	for (i = 0; i < n; i++) {
		int in = bits_block(s, hashes[i]) < s->info.nblocks;

		mark[i] = in ? 0 : BLOOM_ELSEWHERE;
		idx[m] = (uint32_t)i;
		m += (size_t)in;
	}
	return m;
}

/* ==== The add and test policy, for both passes ==== */

/*
 * Visits segment s for pass v: tests (add 0) or adds (add 1) the m keys
 * idx lists, or keys 0 to m in order if idx is NULL.  Returns how many
 * were new to s (add).  The line-by-line pass works on the mapping with
 * prefetching; a sorted pass visits its own way (sweep.c).
 */
static size_t
visit(const struct pass *v, const struct segment *s,
    const uint64_t *hashes, const uint32_t *idx, size_t m, int add,
    unsigned char *res)
{
	if (v->sweep != NULL)
		return sweep_visit(v->sweep, s, hashes, idx, m, add, res);
	if (idx == NULL && add)
		return bits_add(s, hashes, m, res);
	if (idx == NULL) {
		bits_test(s, hashes, m, res);
		return 0;
	}
	if (add)
		return bits_add_list(s, hashes, idx, m, res);
	bits_test_list(s, hashes, idx, m, res);
	return 0;
}

/*
 * Tests the n keys against the nseg segments, the fullest first, each
 * pass only over the keys no segment has found yet: all n to begin with
 * if all, else the m that idx lists (found holds what is found so far).
 * Line by line, bits_test_rest chooses the order and the passes.  Sets
 * found and leaves in idx the keys found nowhere; returns how many.
 */
static size_t
test_passes(const struct pass *v, const struct segment *const *seg,
    unsigned nseg, const uint64_t *hashes, size_t n, unsigned char *found,
    uint32_t *idx, size_t m, int all)
{
	unsigned i;

	if (v->sweep == NULL)
		return bits_test_rest(seg, nseg, hashes, n, found, idx, m, all);
	for (i = 0; i < nseg && m > 0; i++) {
		if (bits_shared(seg, i))
			continue;
		visit(v, seg[i], hashes, all ? NULL : idx, m, 0, found);
		m = bits_missing(idx, all ? n : m, found, all);
		all = 0;
	}
	return all ? bits_missing(idx, n, found, 1) : m;
}

/*
 * Tests the n keys against every live segment but those in skip (a bit
 * per segment index), the fullest first, a key no further than the first
 * segment that has it: a present key usually costs one lookup, an absent
 * one a lookup per segment.  Line by line, a window's keys are tested
 * against several generations in a pass (bits_test_segments); a growable
 * filter's keys, and a sorted pass, visit one segment after another
 * (test_passes): the keys present in a grown filter are spread over its
 * segments, and one segment at a time costs them 0.31 s against 0.41 for
 * 10 M lines.  Line by line, a chunk whose keys a sample says are mostly
 * absent is the exception (bits_test_rest).
 * Starts from what a pretest found, if prefound is not NULL.  Sets
 * found[i] and leaves the keys found nowhere in v->idx; returns how many.
 */
static size_t
test_live(struct bloom *b, const struct pass *v,
    const uint64_t *hashes, size_t n, unsigned char *found, uint64_t skip,
    const unsigned char *prefound)
{
	const struct segment *seg[SEGMENTS_MAX];
	size_t m = n;
	unsigned li, nseg = 0;
	size_t i;

	if (prefound != NULL) {
		for (i = 0; i < n; i++)
			found[i] = prefound[i] & 1;	/* less PRETEST_MATE */
		m = bits_missing(v->idx, n, found, 1);
	} else
		memset(found, 0, n);
	for (li = 0; li < b->nlive; li++)
		if (!(skip >> b->live[li] & 1))
			seg[nseg++] = &b->seg[b->live[li]];
	if (v->sweep == NULL && b->mode->tests_together)
		return bits_test_segments(seg, nseg, hashes, n, found, v->idx,
		    m, prefound == NULL);
	return test_passes(v, seg, nseg, hashes, n, found, v->idx, m,
	    prefound == NULL);
}

/*
 * Tests the n <= v->max keys: a slice only those it holds, passing the
 * others over; else against the live segments, less those a pretest
 * tested if prefound is not NULL.
 */
static void
test_some(struct bloom *b, const struct pass *v,
    const struct bloom_pretest *p, const unsigned char *prefound,
    const uint64_t *hashes, size_t n, unsigned char *found, int how)
{
	const struct segment *s = &b->seg[0];

	if (b->mode->slice)
		visit(v, s, hashes, v->idx, in_slice(s, hashes, n, v->idx,
		    found), how, found);
	else if (b->nlive == 1 && prefound == NULL)
		visit(v, &b->seg[b->live[0]], hashes, NULL, n, how, found);
	else
		test_live(b, v, hashes, n, found, prefound != NULL ? p->mask :
		    0, prefound);
}

/* Tests the n keys, v->max at a time, against the segments live now, as
 * a reader of the list (segments_read_begin): no segment is given back
 * while it is read.  how is VISIT_TEST, or VISIT_SETTLE for a
 * sorted pass's visit of a filter of one segment (or a slice) to find the
 * repeats among the keys as it tests them.  Returns BLOOM_OK or a
 * status. */
static int
test_keys(struct bloom *b, const struct pass *v,
    const struct bloom_pretest *p, const unsigned char *prefound,
    const uint64_t *hashes, size_t n, unsigned char *found, int how)
{
	size_t pos, m;
	int s = segments_read_begin(b);

	for (pos = 0; s == BLOOM_OK && pos < n; pos += m) {
		m = n - pos < v->max ? n - pos : v->max;
		test_some(b, v, p, prefound != NULL ? prefound + pos : NULL,
		    hashes + pos, m, found + pos, how);
	}
	segments_read_end(b);
	return s;
}

/*
 * Adds the n keys, which the target segment has room for, to it.  A key
 * is new if no live segment had it (in a window: its current generation).
 * A slice adds only the keys it holds.  A growable filter, and a window
 * that does not renew, add only the keys no older segment holds; a window
 * that renews adds every key to the current generation, so that a key
 * seen again is remembered from now on.  Returns how many were new to the
 * target.
 */
static size_t
add_some(struct bloom *b, const struct pass *v,
    const struct bloom_pretest *p, const unsigned char *prefound,
    const uint64_t *hashes, size_t n, unsigned char *isnew)
{
	const struct segment *t = &b->seg[b->target];
	uint64_t skip = (uint64_t)1 << b->target;
	size_t j, left, fresh;

	if (b->mode->slice)
		return visit(v, t, hashes, v->idx, in_slice(t, hashes, n,
		    v->idx, isnew), 1, isnew);
	/* A window adds every key to its current generation, and the older
	 * ones would only say whether the key was new to the window, which
	 * an add that writes no lines does not ask (the *_test passes do). */
	if ((b->nlive == 1 || b->mode->adds_all) && prefound == NULL)
		return visit(v, t, hashes, NULL, n, 1, isnew);
	if (prefound != NULL)
		skip |= p->mask;
	left = test_live(b, v, hashes, n, v->found, skip, prefound);
	if (b->mode->adds_unseen) {
		memset(isnew, 0, n);
		return visit(v, t, hashes, v->idx, left, 1, isnew);
	}
	fresh = visit(v, t, hashes, NULL, n, 1, isnew);
	for (j = 0; j < n; j++)
		isnew[j] &= (unsigned char)!v->found[j];
	return fresh;
}

/*
 * Adds the n keys in turns: each takes what segments_begin_add grants of
 * the target's room (a share, as other processes may be adding too), at
 * most v->max keys, and counts the keys new to the target.  Line by line,
 * the keys of a window, or of a filter of one segment, all go to the
 * target as add_some would send them, with plain ORs when no other
 * process writes the filter (locks.c).
 */
static int
add_keys(struct bloom *b, const struct pass *v,
    const struct bloom_pretest *p, const unsigned char *prefound,
    const uint64_t *hashes, size_t n, unsigned char *isnew, size_t *done)
{
	size_t pos, m, fresh, hit = 0;
	int s;

	for (pos = 0; pos < n; pos += m) {
		*done = pos;
		if ((s = segments_begin_add(b, add_step(b, v, n - pos, pos),
		    &m)) != BLOOM_OK)
			return s;
		if (v->sweep == NULL && (b->mode->adds_all ||
		    b->nlive == 1) && !b->mode->slice && prefound == NULL)
			s = locks_add_list(b, hashes + pos, NULL, m,
			    isnew + pos, &fresh);
		else
			fresh = add_some(b, v, p, prefound != NULL ?
			    prefound + pos : NULL, hashes + pos, m,
			    isnew + pos);
		segments_count(b, b->target, fresh);
		segments_end_add(b);
		if (s != BLOOM_OK)
			return s;
		hit += fresh;
		note_stores(b, v, fresh, pos + m, hit, n - pos - m);
	}
	*done = n;
	return BLOOM_OK;
}

/*
 * Lists in v->idx the keys of n that bloom_add_set is to set: the ones
 * isnew marks new; in a window that renews also the ones it marks found,
 * which are remembered from now on.  Returns how many.
 */
static size_t
list_to_set(const struct bloom *b, const struct pass *v,
    const unsigned char *isnew, size_t n)
{
	size_t i, m = 0;

	if (b->mode->sets_found) {
		for (i = 0; i < n; i++) {
			v->idx[m] = (uint32_t)i;
			m += isnew[i] <= 1;
		}
		return m;
	}
	for (i = 0; i < n; i++) {
		v->idx[m] = (uint32_t)i;
		m += isnew[i] == 1;
	}
	return m;
}

/*
 * Sets the keys that isnew says to, v->max at a time, in turns as add_keys
 * does: the keys found new were tested against every live segment, so
 * they go to the target alone, with no more tests.  A fixed or growable
 * filter, or a window that does not renew, counts as inserted the keys
 * found new, which are the lines the caller wrote; a window that renews,
 * the keys new to its generation, which it tests there as it sets them.  Line by line, both set bits with plain ORs
 * when no other process writes the filter (locks.c).
 */
static int
set_keys(struct bloom *b, const struct pass *v, const uint64_t *hashes,
    const unsigned char *isnew, size_t n, size_t *done)
{
	size_t pos, chunk, m, j, take, fresh, tried = 0, hit = 0;
	int s;

	for (pos = 0; pos < n; pos += chunk) {
		*done = pos;
		chunk = n - pos < v->max ? n - pos : v->max;
		m = list_to_set(b, v, isnew + pos, chunk);
		for (j = 0; j < m; j += take) {
			if ((s = segments_begin_add(b, add_step(b, v, m - j,
			    tried), &take)) != BLOOM_OK)
				return s;
			/* Line by line, keys found new need no test: only
			 * a window that renews counts the keys new to its
			 * generation, most of which older ones held. */
			if (v->sweep == NULL && !b->mode->counts_fresh) {
				s = locks_set_list(b, hashes + pos,
				    v->idx + j, take);
				fresh = take;
			} else if (v->sweep == NULL) {
				s = locks_add_list(b, hashes + pos,
				    v->idx + j, take, v->found, &fresh);
			} else {
				/* Keys found new, and only those, set bits
				 * wherever they go: their pages may be made
				 * writable ahead (VISIT_SET). */
				fresh = visit(v, &b->seg[b->target],
				    hashes + pos, v->idx + j, take,
				    b->mode->sets_found ? VISIT_ADD :
				    VISIT_SET, v->found);
				if (!b->mode->counts_fresh)
					fresh = take;
			}
			segments_count(b, b->target, fresh);
			segments_end_add(b);
			if (s != BLOOM_OK)
				return s;
			tried += take;
			hit += fresh;
			note_stores(b, v, fresh, tried, hit, m - j - take +
			    (n - pos - chunk));
		}
	}
	*done = n;
	return BLOOM_OK;
}

/* Turns what a test found into what an add would call new. */
static void
found_to_new(unsigned char *found, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		found[i] = (unsigned char)(found[i] <= 1 ? !found[i] :
		    found[i]);
}

/* Turns the found flags of a chunk just tested into new flags, as adding
 * its keys one at a time would have answered.  Returns BLOOM_OK, or
 * BLOOM_ERRNO (no memory). */
static int
found_to_new_in_chunk(const struct bloom *b, const uint64_t *hashes,
    unsigned char *isnew, size_t n, const unsigned char *marked, int sorted)
{
	found_to_new(isnew, n);
	/* A growable filter may grow, and a window rotate, in the middle
	 * of a chunk, whose keys then go to more than one segment: there a
	 * line whose bits only lines of its own chunk set is new. */
	if (bloom_finds_repeats(b) && mates_chunk(&b->seg[b->target],
	    hashes, isnew, n, marked, PRETEST_MATE, sorted) == -1)
		return BLOOM_ERRNO;
	return BLOOM_OK;
}

int
bloom_finds_repeats(const struct bloom *b)
{
	return b->mode->finds_repeats;
}

int
bloom_sets_found(const struct bloom *b)
{
	return b->mode->sets_found;
}

/* ==== The operations: one entry point each, for both passes ==== */

/*
 * Begins an operation on sweep w, or line by line if w is NULL (counting
 * the n lookups), filling in *v, its pass.  Returns v.
 */
static const struct pass *
pass_begin(struct bloom *b, struct bloom_sweep *w, struct pass *v, size_t n)
{
	v->sweep = w;
	if (w != NULL) {
		sweep_begin(w, b->fd, b->sparse);
		v->idx = w->todo;
		v->found = w->found;
		v->max = w->cap;
		return v;
	}
	v->idx = b->pending;
	v->found = b->found;
	v->max = BLOOM_CHUNK;
	note_lookups(b, n);
	return v;
}

/*
 * Ends an operation of status s on pass v: a write-back the sweep found
 * failed makes it fail, whichever operation it was, so that no bit set in
 * memory but not on disk is ever reported done.  Every operation ends
 * here, once.
 */
static int
pass_end(const struct pass *v, int s)
{
	int err;

	if (v->sweep == NULL || (err = sweep_end(v->sweep)) == 0 ||
	    s != BLOOM_OK)
		return s;
	errno = err;
	return BLOOM_ERRNO;
}

int
bloom_test(struct bloom *b, struct bloom_sweep *w,
    const struct bloom_pretest *p, const unsigned char *prefound,
    const uint64_t *hashes, size_t n, unsigned char *found)
{
	struct pass pass;
	const struct pass *v = pass_begin(b, w, &pass, n);

	return pass_end(v, test_keys(b, v, p, prefound, hashes, n, found,
	    VISIT_TEST));
}

int
bloom_add(struct bloom *b, struct bloom_sweep *w,
    const struct bloom_pretest *p, const unsigned char *prefound,
    const uint64_t *hashes, size_t n, unsigned char *isnew, size_t *done)
{
	struct pass pass;
	const struct pass *v = pass_begin(b, w, &pass, n);

	return pass_end(v, add_keys(b, v, p, prefound, hashes, n, isnew,
	    done));
}

int
bloom_add_test(struct bloom *b, struct bloom_sweep *w,
    const struct bloom_pretest *p, const unsigned char *prefound,
    const uint64_t *hashes, size_t n, unsigned char *isnew)
{
	struct pass pass;
	const struct pass *v;
	int s, sorted;

	claims_start(b);
	v = pass_begin(b, w, &pass, n);
	/* A sorted pass finds the repeats as it tests, each block's keys
	 * in the window read for them (VISIT_SETTLE): looking them up in
	 * the mapping after it would fault in a filter that does not fit
	 * at random (issue 39). */
	sorted = v->sweep != NULL && prefound == NULL &&
	    bloom_finds_repeats(b) && n <= v->max;
	s = test_keys(b, v, p, prefound, hashes, n, isnew, sorted ?
	    VISIT_SETTLE : VISIT_TEST);
	if (s == BLOOM_OK && sorted)
		found_to_new(isnew, n);
	else if (s == BLOOM_OK)
		s = found_to_new_in_chunk(b, hashes, isnew, n,
		    prefound != NULL && p->chunk != 0 ? prefound : NULL,
		    v->sweep != NULL);
	return pass_end(v, s);
}

/*
 * Claims the keys isnew marks new, if other adders were at work when the
 * chunk began (claims_start) or have joined since, and tests the claimed
 * ones again into again: those found now were written by another adder,
 * which set their bits after bloom_add_test; they are let go of and
 * marked 0.
 */
int
bloom_add_claim(struct bloom *b, struct bloom_sweep *w,
    const uint64_t *hashes, unsigned char *isnew, size_t n,
    unsigned char *again)
{
	struct pass pass;
	const struct pass *v;
	size_t i;
	int s;

	if (!b->claiming && (b->claims == NULL ||
	    !(b->claiming = claims_late(b->claims))))
		return BLOOM_OK;
	if (claims_take(b->claims, hashes, isnew, n, BLOOM_CLAIMED) == 0)
		return BLOOM_OK;
	v = pass_begin(b, w, &pass, n);
	/* Another adder may have grown the filter since. */
	if ((s = test_keys(b, v, NULL, NULL, hashes, n, again,
	    VISIT_TEST)) != BLOOM_OK)
		return pass_end(v, s);
	for (i = 0; i < n; i++)
		again[i] = isnew[i] == 1 && again[i] == 1;
	claims_release(b->claims, hashes, again, n);
	for (i = 0; i < n; i++)
		isnew[i] = again[i] ? 0 : isnew[i];
	return pass_end(v, BLOOM_OK);
}

int
bloom_add_set(struct bloom *b, struct bloom_sweep *w,
    const uint64_t *hashes, const unsigned char *isnew, size_t n,
    size_t *done)
{
	struct pass pass;
	const struct pass *v = pass_begin(b, w, &pass, 0);
	int s;

	s = set_keys(b, v, hashes, isnew, n, done);
	claims_done(b, hashes, isnew, *done);
	return pass_end(v, s);
}

/* ==== Sorted sweeps ==== */

struct bloom_sweep *
bloom_sweep_new(const struct memory_plan *p, size_t cap)
{
	return sweep_new(p, cap);
}

void
bloom_sweep_free(struct bloom_sweep *w)
{
	sweep_free(w);
}

uint32_t *
bloom_sweep_scratch(struct bloom_sweep *w)
{
	return sweep_scratch(w);
}

/* ==== Reader threads' pretests ==== */

/*
 * The plan of an add that tests each line, to a fixed filter: the reader
 * tests its one segment, which this very add is setting bits in.  A bit
 * once set stays set, so a key the reader finds is there; one it does not
 * find may have been set since (by an earlier line of the stream), and
 * its mask of 0 makes bloom_add_test test it again.  Most repeated lines
 * are then found without the main thread, which sets bits and writes
 * lines.  The answers do not depend on where a fixed filter's chunks
 * begin, so the reader may test only a share of a group's keys, the share
 * that keeps both threads busy.  Without a reader thread it would only
 * test twice (stream/engine.c asks for it only with one).  It also marks
 * in each chunk the keys not found that may share a block with another
 * (mates_mark): the main thread looks only at those for repeats.
 */
static struct bloom_pretest *
plan_fixed(const struct bloom *b, size_t chunk)
{
	struct bloom_pretest *p;

	if (b->nlive != 1 || (p = calloc(1, sizeof *p)) == NULL)
		return NULL;
	p->seg[0] = b->seg[b->live[0]];
	p->nseg = 1;
	p->shares = 1;
	p->chunk = chunk;
	return p;
}

struct bloom_pretest *
bloom_pretest_plan(struct bloom *b, enum bloom_pretest_for use,
    size_t chunk)
{
	struct bloom_pretest *p;
	unsigned li, ncand = 0, want;
	int adding = use != BLOOM_PRETEST_CHECK;

	if (b->mode->pretests_target && use == BLOOM_PRETEST_ADD_NEW)
		return plan_fixed(b, chunk);
	if (!b->mode->pretests_older || segments_refresh(b) != BLOOM_OK)
		return NULL;
	/*
	 * A check takes every segment, and its reader tests the lines it
	 * hashes, a share that follows whichever thread waits (lines.c):
	 * the threads split the lines, not the segments.  An add's reader
	 * tests every line, against some segments: its main thread also sets
	 * bits and writes lines, and measured on a filter grown 32 times
	 * (bench/run), the best share was 2 of 5 older segments: about two
	 * fifths.
	 */
	ncand = b->nlive - (adding ? 1 : 0);
	want = adding ? (2 * ncand + 3) / 5 : ncand > 1 ? ncand : 0;
	if (want > ncand)
		want = ncand;
	if (want > PRETEST_MAX)
		want = PRETEST_MAX;
	if (want == 0 || (p = calloc(1, sizeof *p)) == NULL)
		return NULL;
	for (li = 0; li < b->nlive && p->nseg < want; li++) {
		if (adding && b->live[li] == b->target)
			continue;
		p->seg[p->nseg++] = b->seg[b->live[li]];
		p->mask |= (uint64_t)1 << b->live[li];
	}
	p->shares = !adding;
	return p;
}

int
bloom_pretest_shares(const struct bloom_pretest *p)
{
	return p->shares;
}

void
bloom_pretest_free(struct bloom_pretest *p)
{
	free(p);
}

void
bloom_pretest(const struct bloom_pretest *p, const uint64_t *hashes,
    size_t n, unsigned char *found)
{
	const struct segment *seg[PRETEST_MAX];
	uint32_t idx[BLOOM_CHUNK];
	struct pass v;
	unsigned i;
	size_t at;

	if (n > BLOOM_CHUNK)
		return;
	memset(&v, 0, sizeof v);
	for (i = 0; i < p->nseg; i++)
		seg[i] = &p->seg[i];
	test_passes(&v, seg, p->nseg, hashes, n, found, idx, n, 1);
	for (at = 0; p->chunk != 0 && at < n; at += p->chunk)
		mates_mark(&p->seg[0], hashes + at, found + at,
		    n - at < p->chunk ? n - at : p->chunk, PRETEST_MATE);
}

void
bloom_or(struct bloom *b, unsigned di, const struct bloom *src, unsigned si)
{
	bits_or(&b->seg[di], &src->seg[si]);
}

void
bloom_recount(struct bloom *b, unsigned i)
{
	static uint64_t hist[BLOCK_BITS + 1];
	const struct segment_info *info = &b->seg[i].info;
	uint64_t set = fill_count(b, i, hist);
	double items = params_estimate_items(set, info->nblocks, info->hashes);

	/* The estimate scatters by hundreds: a fill within 3 standard
	 * deviations of the capacity's counts as the capacity. */
	if (items > (double)info->capacity && (double)set <=
	    params_fill_bound(info->capacity, info->nblocks, info->hashes,
	    3.0))
		items = (double)info->capacity;
	segments_raise(b, i, items < 0x1p63 ? (uint64_t)(items + 0.5) :
	    UINT64_MAX);
}

void
bloom_raise(struct bloom *b, unsigned i, uint64_t count)
{
	segments_raise(b, i, count);
}

uint32_t
bloom_slice_of(const struct bloom *b, uint64_t h, uint32_t slices)
{
	return bits_slice_of(&b->seg[0], h, slices);
}

int
bloom_rotate(struct bloom *b)
{
	return segments_rotate(b);
}

/* ==== What an open filter is ==== */

void
bloom_on_lock_wait(struct bloom *b, void (*on_wait)(const char *path))
{
	b->on_lock_wait = on_wait;
}

void
bloom_on_claims_wait(struct bloom *b, void (*on_wait)(const char *path))
{
	b->on_claims_wait = on_wait;
}

const struct bloom_header *
bloom_header(const struct bloom *b)
{
	return &b->hdr;
}

const char *
bloom_path(const struct bloom *b)
{
	return b->path;
}

int
bloom_fd(const struct bloom *b)
{
	return b->fd;
}

int
bloom_sparse(const struct bloom *b)
{
	return b->sparse;
}

unsigned
bloom_nsegments(const struct bloom *b)
{
	return b->nmapped;
}

unsigned
bloom_target(const struct bloom *b)
{
	return b->target;
}

_Static_assert(BLOOM_EV_GREW == SEG_EV_GREW && BLOOM_EV_FULL == SEG_EV_FULL &&
    BLOOM_EV_EARLY == SEG_EV_EARLY && BLOOM_EV_WIDENED == SEG_EV_WIDENED,
    "bloom_events passes the segment list's events on as they are");

unsigned
bloom_events(struct bloom *b)
{
	unsigned ev = b->events;

	b->events = 0;
	return ev;
}

double
bloom_full_fpr(const struct bloom *b)
{
	return b->full_fpr;
}

int
bloom_refresh(struct bloom *b)
{
	return segments_refresh(b);
}

int
bloom_is_live(const struct bloom *b, unsigned i)
{
	return segments_is_live(b, i);
}

int
bloom_live_extra(const struct bloom *b)
{
	unsigned i;

	for (i = b->hdr.slots; i < b->nmapped; i++)
		if (segments_is_live(b, i))
			return 1;
	return 0;
}

uint64_t
bloom_inserted(const struct bloom *b, unsigned i)
{
	return format_word_load(b->seg[i].inserted);
}

uint64_t
bloom_stamp(const struct bloom *b, unsigned i)
{
	return b->seg[i].stamp == NULL ? 0 : format_word_load(b->seg[i].stamp);
}

uint64_t
bloom_epoch(const struct bloom *b)
{
	return b->hdr.mode == MODE_WINDOW ? format_epoch(b->head) : 0;
}

uint64_t
bloom_generation(const struct bloom *b)
{
	return b->hdr.mode == MODE_WINDOW ? b->epoch : 0;
}

int
bloom_estimate(struct bloom *b, unsigned i, struct params_estimate *e)
{
	return fill_estimate(b, i, e);
}

int
bloom_estimate_array(struct bloom *b, uint64_t most,
    struct params_estimate *e)
{
	return fill_estimate_array(b, most, e);
}

/* ==== The segment list and the file, for filter/ and the front end ==== */

int
bloom_hold(struct bloom *b)
{
	return segments_hold(b);
}

void
bloom_unhold(struct bloom *b)
{
	segments_unhold(b);
}

int
bloom_grow_to(struct bloom *b, unsigned count)
{
	return segments_grow_to(b, count);
}

int
bloom_read_begin(struct bloom *b)
{
	return segments_read_begin(b);
}

void
bloom_read_end(struct bloom *b)
{
	segments_read_end(b);
}

void
bloom_warm(int fd, uint64_t offset, uint64_t len)
{
	segments_warm(fd, offset, len);
}

void
bloom_forget_claims(int fd)
{
	claims_forget(fd);
}
