/*
 * Sorted batches.  A filter that does not fit in memory costs a page
 * fault and a read per key when keys come in input order, and one that
 * fits but passes the kernel's dirty limits is written back page by page
 * as random adds dirty its pages again and again.  So for such filters
 * the engine gathers a large batch of hashed lines, and each pass over a
 * segment visits the batch's keys in the order of their blocks: a bucket
 * sort by window (a power-of-two run of blocks, from the high bits of the
 * multiply-shift block index), then the windows in file order.  Each page
 * is then read, and dirtied, at most once per batch.
 *
 * The sort is stable: the keys of a window keep their input order, and a
 * key's answer depends only on its own block, so every answer is the one
 * the keys would get line by line, a repeated line new only the first
 * time.  Bits are set in the shared mapping with atomic ORs as ever, so
 * concurrent writers lose nothing, and all of a batch's bits are set
 * before any of its lines is written.
 *
 * Out of core, a helper thread (iothread.c) reads the next window with
 * pread, in one piece, while this one is worked on; the keys are tested
 * against that copy, and only those it does not hold are set, through
 * the mapping (with no read-around on faults: MADV_RANDOM; a window with
 * many keys to set is mapped writable in one call).  After an add the
 * window is unmapped and its write-back started, and two windows later
 * waited for and the pages dropped from the page cache, so that the
 * filter's pages in memory stay within a few windows and the disk reads
 * and writes at once.
 *
 * Lines to be written are kept in the batch, or, read from a regular
 * file, read again from it by offset when they are written.
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream/batch.h"
#include "store/iothread.h"
#include "store/segments.h"

#define KEYS_MAX	((size_t)1 << 26)	/* keys in a batch, at most */
#define WINDOWS_MAX	((uint64_t)1 << 20)	/* windows in a segment */
#define BEHIND		2	/* windows kept after they are worked on */
#define PAGE		4096	/* alignment of advice */
#define REREAD		((size_t)1 << 20)	/* bytes read back at once */
#define POPULATE_PER	8	/* a window's pages are mapped writable at
				 * once when it has a key to set for every
				 * POPULATE_PER of them */

int
batch_init(struct batch *t, const struct memory_plan *p, int keep_lines)
{
	size_t per_key = sizeof t->hash[0] + 2 + 2 * sizeof t->todo[0];
	uint64_t cap;

	memset(t, 0, sizeof *t);
	t->plan = *p;
	t->keep_lines = keep_lines;
	t->fd = -1;
	if (keep_lines)
		per_key += sizeof t->end[0];
	t->per_key = per_key;
	cap = p->batch_bytes / per_key;
	t->cap = cap < 1 ? 1 : cap > KEYS_MAX ? KEYS_MAX : (size_t)cap;
	t->hash = malloc(t->cap * sizeof t->hash[0]);
	t->hit = malloc(t->cap);
	t->found = malloc(t->cap);
	t->todo = malloc(t->cap * sizeof t->todo[0]);
	t->order = malloc(t->cap * sizeof t->order[0]);
	t->start = malloc((WINDOWS_MAX + 1) * sizeof t->start[0]);
	if (keep_lines) {
		t->end = malloc(t->cap * sizeof t->end[0]);
		t->text_cap = (size_t)p->batch_bytes;
		t->text = malloc(t->text_cap);
	}
	/* Out of core, two windows' buffers: one read while the other is
	 * worked on.  Without them the mapping is read, in order. */
	if (p->out_of_core) {
		t->window[0] = malloc((size_t)p->window);
		t->window[1] = malloc((size_t)p->window);
	}
	if (t->hash == NULL || t->hit == NULL || t->found == NULL ||
	    t->todo == NULL || t->order == NULL || t->start == NULL ||
	    (keep_lines && (t->end == NULL || t->text == NULL))) {
		batch_free(t);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void
batch_free(struct batch *t)
{
	free(t->hash);
	free(t->hit);
	free(t->found);
	free(t->todo);
	free(t->order);
	free(t->start);
	free(t->end);
	free(t->text);
	free(t->back);
	free(t->window[0]);
	free(t->window[1]);
	memset(t, 0, sizeof *t);
	t->fd = -1;
}

void
batch_source(struct batch *t, int fd)
{
	struct stat st;
	off_t at;

	t->fd = -1;
	t->back_len = 0;
	if (!t->keep_lines || fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (at = lseek(fd, 0, SEEK_CUR)) == -1)
		return;
	t->fd = fd;
	t->pos = (uint64_t)at;
}

void
batch_clear(struct batch *t)
{
	t->n = 0;
	t->text_len = 0;
}

/* Returns 1 if a line of len bytes more fits in the batch: its key, and
 * its bytes if kept, within the batch's share of the budget. */
static int
has_room(const struct batch *t, size_t len)
{
	uint64_t used = (uint64_t)(t->n + 1) * t->per_key + t->text_len;

	if (t->n == t->cap)
		return 0;
	return !t->keep_lines || t->fd >= 0 || (len <= t->text_cap - t->text_len &&
	    len <= t->plan.batch_bytes - used);
}

int
batch_take(struct batch *t, const struct line_group *g, size_t *from)
{
	size_t i;

	for (i = *from; i < g->nlines; i++) {
		const struct line *l = &g->line[i];

		if (t->n == 0)
			t->first = t->pos;
		if (!has_room(t, l->len)) {
			if (t->n > 0)
				break;
			/* One line longer than the whole batch. */
			free(t->text);
			t->text_cap = l->len;
			if ((t->text = malloc(t->text_cap)) == NULL)
				return -1;
		}
		t->hash[t->n] = g->hash[i];
		if (t->fd >= 0) {
			/* Lines lie one after another in the file, each but
			 * the input's last followed by the terminator. */
			t->end[t->n] = t->pos + l->len;
			t->pos += (uint64_t)l->len + 1;
		} else if (t->keep_lines) {
			memcpy(t->text + t->text_len, l->data, l->len);
			t->text_len += l->len;
			t->end[t->n] = t->text_len;
		}
		t->n++;
	}
	*from = i;
	return 0;
}

/* Returns the len bytes of the file at offset from, reading a large
 * piece of it back if they are not in t->back yet; NULL if the read
 * fails (errno set) or the file ends before them (ESTALE). */
static const unsigned char *
read_back(struct batch *t, uint64_t from, size_t len)
{
	size_t want = len > REREAD ? len : REREAD, done = 0;
	ssize_t got;

	if (from >= t->back_off && from - t->back_off <= t->back_len &&
	    len <= t->back_len - (from - t->back_off))
		return t->back + (from - t->back_off);
	if (want > t->back_cap) {
		unsigned char *p = realloc(t->back, want);

		if (p == NULL)
			return NULL;
		t->back = p;
		t->back_cap = want;
	}
	t->back_len = 0;
	while (done < want) {
		got = pread(t->fd, t->back + done, want - done,
		    (off_t)(from + done));
		if (got == -1 && errno == EINTR)
			continue;
		if (got == -1)
			return NULL;
		if (got == 0)
			break;
		done += (size_t)got;
	}
	if (done < len) {
		errno = ESTALE;
		return NULL;
	}
	t->back_off = from;
	t->back_len = done;
	return t->back;
}

const unsigned char *
batch_line(struct batch *t, const struct bloom *b, size_t i, size_t *len)
{
	const unsigned char *line;
	uint64_t from;

	if (t->fd < 0) {
		from = i == 0 ? 0 : t->end[i - 1];
		*len = (size_t)(t->end[i] - from);
		return t->text + from;
	}
	from = i == 0 ? t->first : t->end[i - 1] + 1;
	*len = (size_t)(t->end[i] - from);
	if ((line = read_back(t, from, *len)) == NULL)
		return NULL;
	/* A file rewritten since it was read would give other lines than
	 * the ones decided on: it is told, not written. */
	if (bloom_hash(b, line, *len) != t->hash[i]) {
		errno = ESTALE;
		return NULL;
	}
	return line;
}

/* Where window w of segment s is, page-aligned: in the mapping and in
 * the file. */
static struct io_range
window_range(const struct segment *s, uint64_t wbytes, uint64_t w)
{
	struct io_range r;
	uint64_t from = w * wbytes, size = s->info.nblocks * BLOCK_BYTES;
	uint64_t to = size - from < wbytes ? size : from + wbytes;
	uint64_t skew = (s->info.offset + from) % PAGE;

	r.addr = s->bits + from - skew;
	r.off = (off_t)(s->info.offset + from - skew);
	r.len = (size_t)(to - from + skew);
	return r;
}

/* Where the blocks of window w of segment s are in the file, exactly:
 * what is read into a buffer. */
static struct io_range
window_blocks(const struct segment *s, uint64_t wblocks, uint64_t w)
{
	struct io_range r;
	uint64_t first = w * wblocks, n = s->info.nblocks - first;

	if (n > wblocks)
		n = wblocks;
	r.addr = s->bits + first * BLOCK_BYTES;
	r.off = (off_t)(s->info.offset + first * BLOCK_BYTES);
	r.len = (size_t)(n * BLOCK_BYTES);
	return r;
}

/*
 * Sorts the m keys that t->todo lists into t->order by window of segment
 * s, stably; after it, window w's keys are order[start[w] ..
 * start[w + 1]).  Returns the number of windows.
 */
static uint64_t
sort_by_window(struct batch *t, const struct segment *s, size_t m,
    uint64_t wblocks)
{
	uint64_t *start = t->start, nwin, w, sum, c;
	size_t j;

	nwin = (s->info.nblocks + wblocks - 1) / wblocks;
	memset(start, 0, (size_t)(nwin + 1) * sizeof start[0]);
	for (j = 0; j < m; j++)
		start[bloom_block(s, t->hash[t->todo[j]]) / wblocks + 1]++;
	for (w = 0, sum = 0; w <= nwin; w++) {
		c = start[w];
		start[w] = sum;
		sum += c;
	}
	/* start[w + 1] is now where window w begins; filling it moves it
	 * to where window w ends. */
	for (j = 0; j < m; j++) {
		uint32_t k = t->todo[j];

		t->order[start[bloom_block(s, t->hash[k]) / wblocks + 1]++] =
		    k;
	}
	return nwin;
}

/* The first window after w that has keys, or nwin. */
static uint64_t
next_window(const struct batch *t, uint64_t w, uint64_t nwin)
{
	for (w++; w < nwin && t->start[w] == t->start[w + 1]; w++)
		;
	return w;
}

/*
 * Adds the keys order[lo..hi) of window r to segment s, whose bits
 * copy holds as read: the keys copy already holds are not new and write
 * nothing.  The others are set in the shared mapping with atomic ORs, as
 * ever, so that concurrent writers lose nothing and say which are new.
 * Returns how many were.
 */
static size_t
add_window(struct batch *t, const struct segment *s,
    const struct segment *copy, struct io_range r, size_t lo, size_t hi,
    unsigned char *res)
{
	uint32_t *order = t->order;
	size_t j, left = lo;

	bloom_test_list(copy, t->hash, order + lo, hi - lo, res);
	for (j = lo; j < hi; j++) {
		uint32_t k = order[j];

		order[left] = k;
		left += !res[k];
		res[k] = 0;
	}
#ifdef MADV_POPULATE_WRITE
	/* Set one page at a time, a page first read through the mapping
	 * costs a write fault of its own, and the kernel dirties the whole
	 * of its (large) folio for each: when many keys are to be set, the
	 * window's pages are mapped writable at once instead. */
	if (left > lo && left - lo >= r.len / PAGE / POPULATE_PER)
		madvise(r.addr, r.len, MADV_POPULATE_WRITE);
#endif
	return bloom_add_list(s, t->hash, order + lo, left - lo, res);
}

/* Visits the keys order[lo..hi) of window r of s: added (res[k] as
 * isnew) or tested (res[k] as found), the window's bits read from copy
 * if it is not NULL.  Returns how many were new, or found. */
static size_t
visit_window(struct batch *t, const struct segment *s,
    const struct segment *copy, struct io_range r, size_t lo, size_t hi,
    int add, unsigned char *res)
{
	if (add && copy != NULL)
		return add_window(t, s, copy, r, lo, hi, res);
	if (add)
		return bloom_add_list(s, t->hash, t->order + lo, hi - lo, res);
	return bloom_test_list(copy != NULL ? copy : s, t->hash,
	    t->order + lo, hi - lo, res);
}

/*
 * One pass over segment s: the m keys t->todo lists, window by window in
 * file order, added (setting res[k] as isnew) or tested (res[k] as
 * found).  Returns how many were new, or found.
 *
 * Out of core, the I/O thread reads each window into one of two buffers
 * while the window before is worked on; its keys are tested against that
 * copy, and only the ones it does not hold are set, through the mapping.
 * An add then starts the window's write-back, and BEHIND windows later
 * it is dropped, so that the filter's pages in memory stay within a few
 * windows.
 */
static size_t
sweep(struct batch *t, const struct bloom *b, const struct segment *s,
    size_t m, int add, unsigned char *res)
{
	uint64_t wblocks = t->plan.window / BLOCK_BYTES, nwin, w, next;
	uint64_t behind[BEHIND], ticket = 0;
	struct segment copy;
	struct iothread io;
	struct io_range all, r;
	size_t count = 0, nbehind = 0;
	int buffered, cur = 0;	/* the buffer of window w */

	if (m == 0)
		return 0;
	while ((s->info.nblocks + wblocks - 1) / wblocks > WINDOWS_MAX)
		wblocks *= 2;
	nwin = sort_by_window(t, s, m, wblocks);
	if (!t->plan.out_of_core) {
		for (w = 0; w < nwin; w++)
			count += visit_window(t, s, NULL, window_range(s,
			    wblocks * BLOCK_BYTES, w), (size_t)t->start[w],
			    (size_t)t->start[w + 1], add, res);
		return count;
	}
	/* A segment of more than WINDOWS_MAX windows of the buffers' size
	 * is read through the mapping, in order. */
	buffered = t->window[0] != NULL && t->window[1] != NULL &&
	    wblocks * BLOCK_BYTES <= t->plan.window;
	all = window_range(s, s->info.nblocks * BLOCK_BYTES, 0);
	madvise(all.addr, all.len, buffered ? MADV_RANDOM : MADV_SEQUENTIAL);
#ifdef MADV_NOHUGEPAGE
	madvise(all.addr, all.len, MADV_NOHUGEPAGE);
#endif
	io_start(&io, b->fd);
	w = next_window(t, UINT64_MAX, nwin);	/* the first with keys */
	if (buffered && w < nwin)
		ticket = io_read(&io, window_blocks(s, wblocks, w),
		    t->window[cur]);
	for (; w < nwin; w = next) {
		const struct segment *read = NULL;

		next = next_window(t, w, nwin);
		if (buffered && io_wait(&io, ticket) == 0) {
			copy = *s;
			copy.bits = t->window[cur];
			copy.lo = s->lo + w * wblocks;
			read = &copy;
		}
		if (buffered && next < nwin)
			ticket = io_read(&io, window_blocks(s, wblocks, next),
			    t->window[!cur]);
		else if (next < nwin) {
			r = window_range(s, wblocks * BLOCK_BYTES, next);
			madvise(r.addr, r.len, MADV_WILLNEED);
		}
		r = window_range(s, wblocks * BLOCK_BYTES, w);
		count += visit_window(t, s, read, r, (size_t)t->start[w],
		    (size_t)t->start[w + 1], add, res);
		cur = !cur;
		if (add) {
			/* Unmapped here, in one go, the pages are written
			 * back with no write-protecting of each one, nor a
			 * TLB flush on this CPU for each from the I/O
			 * thread's.  They stay dirty in the page cache. */
			madvise(r.addr, r.len, MADV_DONTNEED);
			io_write(&io, r);
		}
		if (nbehind == BEHIND) {
			io_release(&io, window_range(s, wblocks * BLOCK_BYTES,
			    behind[0]), add);
			memmove(behind, behind + 1, sizeof behind[0] *
			    (BEHIND - 1));
			nbehind--;
		}
		behind[nbehind++] = w;
	}
	while (nbehind > 0)
		io_release(&io, window_range(s, wblocks * BLOCK_BYTES,
		    behind[--nbehind]), add);
	io_stop(&io);
	return count;
}

/* Lists in t->todo the keys from pos to pos + m that slice s holds,
 * marking the others BLOOM_ELSEWHERE in res; returns how many it holds. */
static size_t
in_slice(struct batch *t, const struct segment *s, size_t pos, size_t m,
    unsigned char *res)
{
	size_t i, k = 0;

	for (i = pos; i < pos + m; i++) {
		int in = bloom_block(s, t->hash[i]) < s->info.nblocks;

		res[i] = in ? 0 : BLOOM_ELSEWHERE;
		t->todo[k] = (uint32_t)i;
		k += (size_t)in;
	}
	return k;
}

/* Lists the keys from pos to pos + m in t->todo. */
static void
list_range(struct batch *t, size_t pos, size_t m)
{
	size_t i;

	for (i = 0; i < m; i++)
		t->todo[i] = (uint32_t)(pos + i);
}

int
batch_test(struct batch *t, struct bloom *b)
{
	size_t m = t->n;
	unsigned li;
	int s;

	if ((s = bloom_refresh(b)) != BLOOM_OK)
		return s;
	if (b->hdr.slices != 0) {
		sweep(t, b, &b->seg[0], in_slice(t, &b->seg[0], 0, t->n,
		    t->hit), 0, t->hit);
		return BLOOM_OK;
	}
	list_range(t, 0, m);
	memset(t->hit, 0, t->n);
	/* The fullest segment first: a present key is then most often
	 * found in the first pass, and not visited again. */
	for (li = 0; li < b->nlive && m > 0; li++) {
		sweep(t, b, &b->seg[b->live[li]], m, 0, t->hit);
		m = bloom_keep_missing(t->todo, m, t->hit);
	}
	return BLOOM_OK;
}

/*
 * Adds the m keys from pos on to the target segment, as bloom_add does:
 * a key is new if no live segment had it; a growable filter adds only
 * the keys no older segment holds, a window adds every key to the
 * generation now.  Returns how many were new to the target.
 */
static size_t
add_range(struct batch *t, struct bloom *b, size_t pos, size_t m)
{
	const struct segment *target = &b->seg[b->target];
	unsigned char *isnew = t->hit;
	size_t i, left = m, fresh;
	unsigned li;

	if (b->hdr.slices != 0)
		return sweep(t, b, target, in_slice(t, target, pos, m, isnew),
		    1, isnew);
	list_range(t, pos, m);
	memset(t->found + pos, 0, m);
	for (li = 0; li < b->nlive && left > 0; li++) {
		if (b->live[li] == b->target)
			continue;
		sweep(t, b, &b->seg[b->live[li]], left, 0, t->found);
		left = bloom_keep_missing(t->todo, left, t->found);
	}
	if (b->hdr.mode == MODE_GROW) {
		memset(isnew + pos, 0, m);
		return sweep(t, b, target, left, 1, isnew);
	}
	list_range(t, pos, m);
	fresh = sweep(t, b, target, m, 1, isnew);
	for (i = pos; i < pos + m; i++)
		isnew[i] &= (unsigned char)!t->found[i];
	return fresh;
}

int
batch_add(struct batch *t, struct bloom *b, size_t *done)
{
	uint64_t room;
	size_t pos, m;
	int s;

	for (pos = 0; pos < t->n; pos += m) {
		*done = pos;
		if ((s = segments_begin_add(b, &room)) != BLOOM_OK)
			return s;
		/* A growable filter's segment, or a generation, takes no
		 * more than its room: the rest waits for the next. */
		m = t->n - pos;
		if (m > room)
			m = (size_t)room;
		segments_count(b, b->target, add_range(t, b, pos, m));
		segments_end_add(b);
	}
	*done = t->n;
	return BLOOM_OK;
}
