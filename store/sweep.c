/* SPDX-License-Identifier: ISC
 * Sorted sweeps.  A filter that does not fit in memory costs a page
 * fault and a read per key when keys come in input order, and one that
 * fits but passes the kernel's dirty limits is written back page by page
 * as random adds dirty its pages again and again.  So for such filters
 * the engine gathers a large batch of hashed lines, and each visit of a
 * segment takes the batch's keys in the order of their blocks: a bucket
 * sort by window (a power-of-two run of blocks, cut at multiples of its
 * size in the file: struct grid), then the windows in file order.  Each
 * page is then read, and dirtied, at most once per visit, and each of
 * the page cache's folios is in one window.
 *
 * Which segments a key is tested against and added to, and how many keys
 * an adder takes at a time, are bloom.c's, as for the line-by-line pass:
 * a sweep only says how to visit one segment (sweep_visit), and what
 * write-back failed (sweep_end), which bloom.c's operations ask once
 * each, as they end.
 *
 * The sort is stable: the keys of a window keep their input order, and a
 * key's answer depends only on its own block, so every answer is the one
 * the keys would get line by line, a repeated line new only the first
 * time.  Bits are set in the shared mapping with atomic ORs as ever, so
 * concurrent writers lose nothing.
 *
 * Out of core, a helper thread (iothread.c) reads the next window with
 * pread, in one piece, while this one is worked on; the keys are tested
 * against that copy, and only those it does not hold are set, through
 * the mapping (with no read-around on faults: MADV_RANDOM; a window with
 * many keys to set is mapped writable in one call).  After an add the
 * window is unmapped and its write-back started, and two windows later
 * waited for and the pages dropped from the page cache, so that the
 * filter's pages in memory stay within a few windows and the disk reads
 * and writes at once.  Mapped whole, the same thread makes the next
 * windows of an add --new's set sweep writable while this one sets the
 * bits of the window before (populate_ahead).
 *
 * A visit of many keys (SPLIT_KEYS) has two threads: its sort counts and
 * places the batch's first half on this one and its second half on a
 * helper, and mapped whole, a test's windows are split in two runs, one
 * on each (visit_split): a key's answer, and the repeats among a window's
 * keys, depend on its window only.  Each run has its own scratch (struct
 * sweep_lane); the two runs' windows hold different keys, so their
 * scratch for repeats stays within what the batch counts for one.
 */
#include <sys/mman.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/bits.h"
#include "store/holes.h"
#include "store/iothread.h"
#include "store/mates.h"
#include "store/sweep.h"
#include "lib/threads.h"

#define WINDOWS_MAX	((uint64_t)1 << 20)	/* windows in a segment */
#define BEHIND		2	/* windows kept after they are worked on */
#define PAGE		4096	/* alignment of advice */
#define GATHER_AHEAD	32	/* keys whose hashes load ahead */
#define POPULATE_PER	8	/* a window's pages are mapped writable at
				 * once when it has a key to set for every
				 * POPULATE_PER of them */
#define POPULATE_AHEAD	4	/* windows made writable ahead of the one
				 * whose bits are set, mapped whole */
#define SPLIT_KEYS	65536	/* keys of a sort, or of a test mapped
				 * whole, split between two threads (ms of
				 * work; a thread starts in tens of us) */

struct bloom_sweep *
sweep_new(const struct memory_plan *p, size_t cap)
{
	struct bloom_sweep *w = calloc(1, sizeof *w);
	int i, lanes = 1;

	if (w == NULL)
		return NULL;
	w->plan = *p;
	w->cap = cap;
	w->fd = -1;
	w->found = memory_array(cap);
	/* todo and order in one piece: sweep_scratch lends it whole.  Each
	 * is filled from its start. */
	w->todo = cap <= SIZE_MAX / 2 / sizeof w->todo[0] ?
	    malloc(2 * cap * sizeof w->todo[0]) : NULL;
	w->order = w->todo != NULL ? w->todo + cap : NULL;
	memory_huge(w->todo, cap * sizeof w->todo[0]);
	memory_huge(w->order, cap * sizeof w->order[0]);
	/* start, and the second part's counts of a sort in two parts: pages
	 * are touched only as far as a segment has windows. */
	w->start = malloc(2 * (WINDOWS_MAX + 1) * sizeof w->start[0]);
	w->second = w->start != NULL ? w->start + WINDOWS_MAX + 1 : NULL;
	for (i = 0; i < 2; i++) {
		w->lane[i].gathered = malloc(SWEEP_GATHER *
		    sizeof w->lane[i].gathered[0]);
		w->lane[i].got = malloc(SWEEP_GATHER);
		lanes &= w->lane[i].gathered != NULL && w->lane[i].got != NULL;
	}
	/* Out of core, two windows' buffers: one read while the other is
	 * worked on.  Without them the mapping is read, in order. */
	if (p->out_of_core) {
		w->window[0] = malloc((size_t)p->window);
		w->window[1] = malloc((size_t)p->window);
	}
	if (w->found == NULL || w->todo == NULL || w->order == NULL ||
	    w->start == NULL || !lanes) {
		sweep_free(w);
		errno = ENOMEM;
		return NULL;
	}
	return w;
}

void
sweep_free(struct bloom_sweep *w)
{
	int i;

	if (w == NULL)
		return;
	free(w->found);
	free(w->todo);
	free(w->start);
	for (i = 0; i < 2; i++) {
		free(w->lane[i].gathered);
		free(w->lane[i].got);
		free(w->lane[i].mates);
	}
	free(w->window[0]);
	free(w->window[1]);
	free(w);
}

uint32_t *
sweep_scratch(struct bloom_sweep *w)
{
	return w->todo;
}

/*
 * How a segment's blocks are cut into windows: wblocks blocks each, the
 * cuts counted from lead blocks before its first block, so that every
 * window but the first begins at a multiple of the window's size in the
 * file.  The page cache holds a file in folios of up to 2 MiB, aligned
 * in the file; cut from the segment's start, a page into the file, every
 * window shared a folio with the next, and the write-back of the one
 * write-protected the folio's pages in the next, mapped meanwhile for its
 * bits, and the folio stayed in memory: 265,000 TLB flushes, 2.2 times
 * the time and 4 times the memory for an add of 1 M lines out of core
 * into a 4 GiB filter.
 */
struct grid {
	const struct bits_extent *x;
	uint64_t wblocks, lead;
};

/* The number of windows of grid g. */
static uint64_t
grid_windows(const struct grid *g)
{
	return (g->x->nblocks + g->lead + g->wblocks - 1) / g->wblocks;
}

/* The grid of windows of wblocks blocks, or the least power-of-two
 * multiple of that which is a multiple of unit (a window begins where a
 * key's bits may begin) and cuts the segment at x into WINDOWS_MAX
 * windows at most.  Where the cuts cannot be both where bits begin and
 * at multiples of the size in the file, they are counted from the
 * segment's first block. */
static struct grid
grid_of(const struct bits_extent *x, uint64_t wblocks, uint64_t unit)
{
	struct grid g = { x, wblocks, 0 };

	while (g.wblocks % unit != 0)
		g.wblocks *= 2;
	for (;; g.wblocks *= 2) {
		g.lead = 0;
		if (x->offset % BLOCK_BYTES == 0 &&
		    x->offset / BLOCK_BYTES % g.wblocks % unit == 0)
			g.lead = x->offset / BLOCK_BYTES % g.wblocks;
		if (grid_windows(&g) <= WINDOWS_MAX)
			return g;
	}
}

/* The window of grid g that block b is in. */
static inline uint64_t
grid_window(const struct grid *g, uint64_t b)
{
	return (b + g->lead) / g->wblocks;
}

/* The first block of window n of grid g. */
static uint64_t
grid_first(const struct grid *g, uint64_t n)
{
	uint64_t b = n * g->wblocks;

	return b > g->lead ? b - g->lead : 0;
}

/* The block after the last of window n of grid g. */
static uint64_t
grid_end(const struct grid *g, uint64_t n)
{
	uint64_t b = (n + 1) * g->wblocks - g->lead;

	return b < g->x->nblocks ? b : g->x->nblocks;
}

/* Where blocks first..end of the segment at x are, page-aligned: in the
 * mapping and in the file. */
static struct io_range
blocks_range(const struct bits_extent *x, uint64_t first, uint64_t end)
{
	struct io_range r;
	uint64_t from = first * BLOCK_BYTES, to = end * BLOCK_BYTES;
	uint64_t skew = (x->offset + from) % PAGE;

	r.addr = x->bits + from - skew;
	r.off = (off_t)(x->offset + from - skew);
	r.len = (size_t)(to - from + skew);
	return r;
}

/* Where window n of grid g is, page-aligned. */
static struct io_range
window_range(const struct grid *g, uint64_t n)
{
	return blocks_range(g->x, grid_first(g, n), grid_end(g, n));
}

/* Where the blocks of window n of grid g are in the file, exactly: what
 * is read into a buffer. */
static struct io_range
window_blocks(const struct grid *g, uint64_t n)
{
	struct io_range r;
	uint64_t first = grid_first(g, n);

	r.addr = g->x->bits + first * BLOCK_BYTES;
	r.off = (off_t)(g->x->offset + first * BLOCK_BYTES);
	r.len = (size_t)((grid_end(g, n) - first) * BLOCK_BYTES);
	return r;
}

/* Returns key j of a visit: idx[j], or j if idx is NULL. */
static inline uint32_t
key_at(const uint32_t *idx, size_t j)
{
	return idx != NULL ? idx[j] : (uint32_t)j;
}

/* The keys from..to of a sort by window: idx[j] (j if idx is NULL) for j
 * in that range.  Counted into count[n] for each window n, then put at
 * order[count[n]++] (count then holds where each window's keys of this
 * part begin). */
struct sort_part {
	const struct segment *s;
	const uint64_t *hashes;
	const uint32_t *idx;
	size_t from, to;
	const struct grid *g;
	uint64_t *count;
	uint32_t *order;
	int place;		/* 0: count them, 1: put them in order */
};

static void *
sort_part(void *arg)
{
	const struct sort_part *p = arg;
	bits_block_fn *block = bits_block_of(p->s);
	const uint32_t *idx = p->idx;
	size_t j;

	for (j = p->from; j < p->to; j++) {
		uint32_t k = key_at(idx, j);
		uint64_t n = grid_window(p->g, block(p->s, p->hashes[k]));

		if (p->place)
			p->order[p->count[n]++] = k;
		else
			p->count[n]++;
	}
	return NULL;
}

/* Runs part[1] on a helper thread and part[0] on this one, or both here
 * if the helper cannot start. */
static void
both_parts(struct sort_part part[2])
{
	pthread_t t;
	int helper = thread_start(&t, sort_part, &part[1]) == 0;

	sort_part(&part[0]);
	if (helper)
		pthread_join(t, NULL);
	else
		sort_part(&part[1]);
}

/*
 * Sorts the m keys that idx lists (keys 0 to m if NULL) into w->order by
 * window of segment s, cut as g cuts it, stably; after it, window n's
 * keys are order[start[n] .. start[n + 1]).  Returns the number of
 * windows.  A bucket sort, its count and its placing each in two parts
 * when the keys are many (SPLIT_KEYS), the first half of the keys on
 * this thread and the second on a helper: in each window the first
 * half's keys go before the second's, so the order is the same.
 */
static uint64_t
sort_by_window(struct bloom_sweep *w, const struct segment *s,
    const struct grid *g, const uint64_t *hashes, const uint32_t *idx,
    size_t m)
{
	struct sort_part part[2];
	uint64_t *start = w->start, *second = NULL, nwin, n, sum, a, b;
	int i;

	nwin = grid_windows(g);
	if (m >= SPLIT_KEYS) {
		second = w->second;
		memset(second, 0, (size_t)nwin * sizeof second[0]);
	}
	memset(start, 0, (size_t)(nwin + 1) * sizeof start[0]);
	for (i = 0; i < 2; i++) {
		part[i].s = s;
		part[i].hashes = hashes;
		part[i].idx = idx;
		part[i].g = g;
		part[i].order = w->order;
		part[i].place = 0;
	}
	part[0].count = start;
	part[1].count = second;
	part[0].from = 0;
	part[0].to = part[1].from = second != NULL ? m / 2 : m;
	part[1].to = m;
	if (second != NULL)
		both_parts(part);
	else
		sort_part(&part[0]);
	/* Where each part's keys of each window begin. */
	for (n = 0, sum = 0; n < nwin; n++) {
		a = start[n];
		b = second != NULL ? second[n] : 0;
		start[n] = sum;
		if (second != NULL)
			second[n] = sum + a;
		sum += a + b;
	}
	part[0].place = part[1].place = 1;
	if (second != NULL)
		both_parts(part);
	else
		sort_part(&part[0]);
	/* The last part's counts now end their windows. */
	for (n = nwin; n > 0; n--)
		start[n] = second != NULL ? second[n - 1] : start[n - 1];
	start[0] = 0;
	return nwin;
}

/* The first window after n that has keys, or nwin. */
static uint64_t
next_window(const struct bloom_sweep *w, uint64_t n, uint64_t nwin)
{
	for (n++; n < nwin && w->start[n] == w->start[n + 1]; n++)
		;
	return n;
}

/* Whether keys keys to set are many for len bytes of the mapping: one
 * at least, and one for every POPULATE_PER pages, enough that its pages
 * are better made writable in one call than faulted one at a time. */
static int
many_keys(uint64_t keys, size_t len)
{
	return keys > 0 && keys >= len / PAGE / POPULATE_PER;
}

/* Finds the repeats among the keys order[lo..hi) of a window just
 * tested (VISIT_SETTLE) in lane l, from the same copy of its blocks, or
 * the mapping if buf is NULL: a window holds whole blocks, and its keys
 * are in input order. */
static void
settle_window(const struct bloom_sweep *w, struct sweep_lane *l,
    const struct segment *s, const uint64_t *hashes,
    const unsigned char *buf, uint64_t first, size_t lo, size_t hi,
    unsigned char *res)
{
	if (mates_list(s, buf, first, hashes, w->order + lo, hi - lo,
	    res, &l->mates, &l->mates_size) == -1 && l->error == 0)
		l->error = errno;
}

/* Copies the hashes of the n keys order[from..from + n), n at most
 * SWEEP_GATHER, into l->gathered, loading those further on ahead: looked
 * up through order by the kernels, each would be a cache miss of its own
 * (a batch's hashes are far larger than the cache). */
static void
gather(const struct bloom_sweep *w, struct sweep_lane *l,
    const uint64_t *hashes, size_t from, size_t n)
{
	const uint32_t *order = w->order + from;
	size_t j;

	for (j = 0; j < n; j++) {
		if (j + GATHER_AHEAD < n)
			__builtin_prefetch(&hashes[order[j + GATHER_AHEAD]]);
		l->gathered[j] = hashes[order[j]];
	}
}

/* Gives the answers in l->got of the n keys order[from..from + n) to the
 * caller's flags res. */
static void
scatter(const struct bloom_sweep *w, const struct sweep_lane *l,
    size_t from, size_t n, unsigned char *res)
{
	size_t j;

	for (j = 0; j < n; j++)
		res[w->order[from + j]] = l->got[j];
}

/*
 * The first window after n that has keys to read for a test of the
 * segment at x, or nwin: in a sparse file, the keys of a window that
 * lies wholly in a hole are not found, and the window is not read (19 GB
 * of reads for 300 keys of a crafted 512 GiB filter, else).
 */
static uint64_t
next_to_read(struct bloom_sweep *w, const struct segment *s,
    const struct grid *g, const uint64_t *hashes, uint64_t n, uint64_t nwin,
    int add, unsigned char *res)
{
	struct io_range r;
	uint64_t from, to, j;

	for (n = next_window(w, n, nwin); n < nwin && w->sparse;
	    n = next_window(w, n, nwin)) {
		r = window_blocks(g, n);
		if (holes_next_data(w->fd, (uint64_t)r.off, (uint64_t)r.off +
		    r.len, &from, &to))
			break;
		for (j = w->start[n]; j < w->start[n + 1]; j++)
			res[w->order[j]] = 0;
		/* Its blocks are zeros, which the mapping gives unread. */
		if (add == VISIT_SETTLE)
			settle_window(w, &w->lane[0], s, hashes, NULL, 0,
			    (size_t)w->start[n], (size_t)w->start[n + 1],
			    res);
	}
	return n;
}

/*
 * Adds the keys order[lo..hi) of window r to segment s, whose blocks from
 * first on buf holds as read: the keys buf already holds (as an add of
 * s's layout would find them) are not new and write nothing.  The others
 * are set in the shared mapping with atomic ORs, as ever, so that
 * concurrent writers lose nothing and say which are new.  Returns how
 * many were.
 */
static size_t
add_window(struct bloom_sweep *w, const struct segment *s,
    const uint64_t *hashes, const unsigned char *buf, uint64_t first,
    struct io_range r, size_t lo, size_t hi, unsigned char *res)
{
	struct sweep_lane *l = &w->lane[0];
	uint32_t *order = w->order;
	size_t at, n, j, left = lo, count = 0;

	for (at = lo; at < hi; at += n) {
		n = hi - at < SWEEP_GATHER ? hi - at : SWEEP_GATHER;
		gather(w, l, hashes, at, n);
		bits_held_copy(s, buf, first, l->gathered, NULL, n, l->got);
		for (j = 0; j < n; j++) {
			uint32_t k = order[at + j];

			order[left] = k;
			left += !l->got[j];
			res[k] = 0;
		}
	}
#ifdef MADV_POPULATE_WRITE
	/* Set one page at a time, a page first read through the mapping
	 * costs a write fault of its own, and the kernel dirties the whole
	 * of its (large) folio for each: when many keys are to be set, the
	 * window's pages are mapped writable at once instead. */
	if (many_keys(left - lo, r.len))
		madvise(r.addr, r.len, MADV_POPULATE_WRITE);
#endif
	for (at = lo; at < left; at += n) {
		n = left - at < SWEEP_GATHER ? left - at : SWEEP_GATHER;
		gather(w, l, hashes, at, n);
		count += bits_add(s, l->gathered, n, l->got);
		scatter(w, l, at, n, res);
	}
	return count;
}

/* Visits the keys order[lo..hi) of window r of s in lane l: added
 * (res[k] as isnew) or tested (res[k] as found), the window's blocks from
 * first on read from buf if it is not NULL; SWEEP_GATHER keys at a time,
 * their hashes copied in order.  Returns how many were new. */
static size_t
visit_window(struct bloom_sweep *w, struct sweep_lane *l,
    const struct segment *s, const uint64_t *hashes,
    const unsigned char *buf, uint64_t first, struct io_range r, size_t lo,
    size_t hi, int add, unsigned char *res)
{
	size_t at, n, count = 0;

	if (add == VISIT_ADD && buf != NULL)
		return add_window(w, s, hashes, buf, first, r, lo, hi, res);
	for (at = lo; at < hi; at += n) {
		n = hi - at < SWEEP_GATHER ? hi - at : SWEEP_GATHER;
		gather(w, l, hashes, at, n);
		if (add == VISIT_ADD)
			count += bits_add(s, l->gathered, n, l->got);
		else if (buf != NULL)
			bits_test_copy(s, buf, first, l->gathered, NULL, n,
			    l->got);
		else
			bits_test(s, l->gathered, n, l->got);
		scatter(w, l, at, n, res);
	}
	if (add == VISIT_SETTLE)
		settle_window(w, l, s, hashes, buf, first, lo, hi, res);
	return count;
}

/* The windows from..to of a test of segment s mapped whole, visited in
 * lane l. */
struct half {
	struct bloom_sweep *w;
	struct sweep_lane *l;
	const struct segment *s;
	const struct grid *g;
	const uint64_t *hashes;
	uint64_t from, to;
	int what;		/* VISIT_TEST or VISIT_SETTLE */
	unsigned char *res;
};

static void *
visit_half(void *arg)
{
	const struct half *h = arg;
	uint64_t n;

	for (n = h->from; n < h->to; n++)
		visit_window(h->w, h->l, h->s, h->hashes, NULL, 0,
		    window_range(h->g, n),
		    (size_t)h->w->start[n], (size_t)h->w->start[n + 1],
		    h->what, h->res);
	return NULL;
}

/*
 * Tests the m keys sorted into the nwin windows of segment s cut by g,
 * mapped whole (VISIT_TEST or VISIT_SETTLE), the windows from the one holding
 * the middle key on in a helper thread (lane 1) and the others in this
 * one: a key's answer, and the repeats among a window's keys, depend only
 * on its window, and nothing is written but each key's own flag.  If no
 * thread can start, this one visits them all.
 */
static void
visit_split(struct bloom_sweep *w, const struct segment *s,
    const struct grid *g, const uint64_t *hashes, uint64_t nwin, size_t m,
    int what, unsigned char *res)
{
	struct half h[2];
	pthread_t t;
	uint64_t mid;
	int i, helper;

	for (mid = 0; mid < nwin && w->start[mid + 1] < m / 2; mid++)
		;
	for (i = 0; i < 2; i++) {
		h[i].w = w;
		h[i].l = &w->lane[i];
		h[i].s = s;
		h[i].g = g;
		h[i].hashes = hashes;
		h[i].what = what;
		h[i].res = res;
	}
	h[0].from = 0;
	h[0].to = h[1].from = mid;
	h[1].to = nwin;
	helper = thread_start(&t, visit_half, &h[1]) == 0;
	if (!helper)
		h[0].to = nwin;
	visit_half(&h[0]);
	if (!helper)
		return;
	pthread_join(t, NULL);
	/* The helper's scratch for repeats goes with its visit: kept, it
	 * and this thread's would be twice what a batch's budget counts. */
	free(w->lane[1].mates);
	w->lane[1].mates = NULL;
	w->lane[1].mates_size = 0;
}

/*
 * Mapped whole, the windows of keys known new (VISIT_SET: add --new's
 * set sweep) are made writable by the helper thread, up to
 * POPULATE_AHEAD windows ahead of window n, whose bits this thread is
 * about to set: the kernel's share of setting bits in a page cache page
 * (a write fault a page, and on ext4 its buffers made dirty) is then
 * done on the other processor.  Only windows with a key for every
 * POPULATE_PER pages, and only while the thread keeps up: a window it has
 * not reached is faulted in here, as without it.  Not for a plain add,
 * whose keys may all be held already: made writable, a page is dirty
 * and the file's mtime moves, though no bit changes.  Making a page
 * writable sets none of its bits, so a line is still marked seen only
 * once its bits are set.  Returns the first window not yet looked at,
 * the queued of the next call.
 */
static uint64_t
populate_ahead(struct bloom_sweep *w, struct iothread *io,
    const struct grid *g, uint64_t n, uint64_t nwin, uint64_t queued)
{
	struct io_range r;

	if (queued <= n)
		queued = n + 1;
	for (; queued < nwin && queued <= n + POPULATE_AHEAD; queued++) {
		r = window_range(g, queued);
		if (many_keys(w->start[queued + 1] - w->start[queued], r.len) &&
		    !io_populate(io, r))
			break;
	}
	return queued;
}

/*
 * Visits segment s (sweep_visit): the m keys idx lists, window by window
 * in file order, added or tested.
 *
 * Out of core, the I/O thread reads each window into one of two buffers
 * while the window before is worked on; its keys are tested against that
 * copy, and only the ones it does not hold are set, through the mapping.
 * An add then starts the window's write-back, and BEHIND windows later
 * it is dropped, so that the filter's pages in memory stay within a few
 * windows.  Mapped whole, a test of many keys is split between this
 * thread and a helper (visit_split).
 */
static size_t
visit_segment(struct bloom_sweep *w, const struct segment *s,
    const uint64_t *hashes, const uint32_t *idx, size_t m, int add,
    unsigned char *res)
{
	struct bits_extent x = bits_extent(s);
	struct grid g = grid_of(&x, w->plan.window / BLOCK_BYTES,
	    bits_unit_blocks(s));
	uint64_t behind[BEHIND], ticket = 0, nwin, n, next;
	struct iothread io;
	struct io_range all, r;
	size_t count = 0, nbehind = 0;
	int buffered, cur = 0;	/* the buffer of window n */
	int known_new = add == VISIT_SET, many;

	if (m == 0)
		return 0;
	if (known_new)
		add = VISIT_ADD;
	nwin = sort_by_window(w, s, &g, hashes, idx, m);
	/* A few keys, as when input trickles in, fault in the few pages
	 * they need rather than read whole windows. */
	all = blocks_range(&x, 0, x.nblocks);
	many = many_keys(m, all.len);
	if (w->plan.out_of_core && !many)
		madvise(all.addr, all.len, MADV_RANDOM);
	if (!w->plan.out_of_core && add != VISIT_ADD && many && nwin > 1 &&
	    m >= SPLIT_KEYS) {
		visit_split(w, s, &g, hashes, nwin, m, add, res);
		return 0;
	}
	if (!w->plan.out_of_core || !many) {
		uint64_t queued = 0;
		int ahead = known_new && !w->plan.out_of_core && nwin > 1 && many;

		if (ahead)
			io_start(&io, w->fd);
		for (n = 0; n < nwin; n++) {
			if (ahead)
				queued = populate_ahead(w, &io, &g, n, nwin,
				    queued);
			count += visit_window(w, &w->lane[0], s, hashes,
			    NULL, 0,
			    window_range(&g, n), (size_t)w->start[n], (size_t)w->start[n + 1], add,
			    res);
		}
		if (ahead)
			io_stop(&io);	/* it only populated: no error; waits
					 * for the jobs still queued */
		return count;
	}
	/* A segment of more than WINDOWS_MAX windows of the buffers' size
	 * is read through the mapping, in order. */
	buffered = w->window[0] != NULL && w->window[1] != NULL &&
	    g.wblocks * BLOCK_BYTES <= w->plan.window;
	madvise(all.addr, all.len, buffered ? MADV_RANDOM : MADV_SEQUENTIAL);
#ifdef MADV_NOHUGEPAGE
	madvise(all.addr, all.len, MADV_NOHUGEPAGE);
#endif
	io_start(&io, w->fd);
	n = add == VISIT_ADD ? next_window(w, UINT64_MAX, nwin) :
	    next_to_read(w, s, &g, hashes, UINT64_MAX, nwin, add, res);
	if (buffered && n < nwin)
		ticket = io_read(&io, window_blocks(&g, n), w->window[cur]);
	for (; n < nwin; n = next) {
		const unsigned char *read = NULL;

		next = add == VISIT_ADD ? next_window(w, n, nwin) :
		    next_to_read(w, s, &g, hashes, n, nwin, add, res);
		if (buffered && io_wait(&io, ticket) == 0)
			read = w->window[cur];
		if (buffered && next < nwin)
			ticket = io_read(&io, window_blocks(&g, next),
			    w->window[!cur]);
		else if (next < nwin) {
			r = window_range(&g, next);
			madvise(r.addr, r.len, MADV_WILLNEED);
		}
		r = window_range(&g, n);
		count += visit_window(w, &w->lane[0], s, hashes, read,
		    grid_first(&g, n), r,
		    (size_t)w->start[n], (size_t)w->start[n + 1], add, res);
		cur = !cur;
		if (add == VISIT_ADD) {
			/* Unmapped here, in one go, the pages are written
			 * back with no write-protecting of each one, nor a
			 * TLB flush on this CPU for each from the I/O
			 * thread's.  They stay dirty in the page cache. */
			madvise(r.addr, r.len, MADV_DONTNEED);
			io_write(&io, r);
		}
		if (nbehind == BEHIND) {
			io_release(&io, window_range(&g, behind[0]),
			    add == VISIT_ADD);
			memmove(behind, behind + 1, sizeof behind[0] *
			    (BEHIND - 1));
			nbehind--;
		}
		behind[nbehind++] = n;
	}
	while (nbehind > 0)
		io_release(&io, window_range(&g, behind[--nbehind]),
		    add == VISIT_ADD);
	if (io_stop(&io) == -1 && w->write_error == 0)
		w->write_error = errno;
	return count;
}

size_t
sweep_visit(struct bloom_sweep *w, const struct segment *s,
    const uint64_t *hashes, const uint32_t *idx, size_t m, int add,
    unsigned char *res)
{
	size_t count = visit_segment(w, s, hashes, idx, m, add, res);
	int i;

	/* The lanes' errors come after any before this visit, lane 0's
	 * (the first windows) first. */
	for (i = 0; i < 2; i++) {
		if (w->write_error == 0)
			w->write_error = w->lane[i].error;
		w->lane[i].error = 0;
	}
	return count;
}

int
sweep_end(struct bloom_sweep *w)
{
	int err = w->write_error;

	w->write_error = 0;
	return err;
}

void
sweep_begin(struct bloom_sweep *w, int fd, int sparse)
{
	w->fd = fd;
	w->sparse = sparse;
	w->write_error = 0;
}
