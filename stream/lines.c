/* SPDX-License-Identifier: ISC
 * The line reader.  Reading, splitting and hashing cost about as much as
 * the filter work on the lines, so a helper thread does them while the
 * caller adds or tests the lines read before: LINES_GROUPS groups of lines
 * go round, one being filled, one waiting and one in use.  Each group holds
 * one read(2) of the input and the lines that end in it; the start of a
 * line that does not end there is carried to the next group.
 *
 * When the filter work is the lighter (a check), the helper would be the
 * bottleneck: it then hashes only the first share of each group's lines
 * and the caller hashes the rest when it takes the group.  The share
 * follows whichever side waits for the other (balance), so that both
 * processors are busy whatever the work on the lines costs.  A pretest
 * that allows it (bloom_pretest_shares: a check of a filter of several
 * segments, an add --new to a fixed one) is shared the same way: the
 * helper tests the lines it hashed against the pretest's segments, and
 * the caller tests the others against every segment.
 *
 * A small regular file is read without a thread, as is any input when no
 * thread can be had or only one processor may run this process:
 * lines_next then fills the group itself.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define WIDE_SPLIT	/* an AVX2 split, chosen at run time */
#endif

#include "stream/lines.h"
#include "lib/threads.h"

#ifndef READ_SIZE	/* the fuzzer makes it small, to reach long lines */
#define READ_SIZE	(1 << 20)	/* first size of a group's buffer */
#endif
#define SMALL_INPUT	(1 << 20)	/* files read without a thread */
#define SHARE_ONE	64	/* the whole of a group, in shares */
#define SHARE_STEP	2	/* share moved each time a side waits */

/* Returns 1 if this process may run on more than one processor. */
static int
several_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof set, &set) == -1)
		return 1;	/* more processors than a cpu_set_t holds */
	return CPU_COUNT(&set) > 1;
}

/* Frees the groups and closes the wake pipe, as far as they were made. */
static void
free_buffers(struct lines *r)
{
	unsigned i;

	for (i = 0; i < LINES_GROUPS; i++) {
		free(r->group[i].buf);
		free(r->group[i].line);
		free(r->group[i].hash);
		free(r->group[i].found);
	}
	free(r->key);
	if (r->wake[0] != -1) {
		close(r->wake[0]);
		close(r->wake[1]);
	}
}

int
lines_init(struct lines *r, unsigned char delim, int keep)
{
	unsigned i;
	int saved;

	memset(r, 0, sizeof *r);
	r->delim = delim;
	r->keep = keep;
	/* Buffers that grow for a long line are mapped on their own, so that
	 * growing moves no bytes and shrinking gives the memory back: glibc
	 * would raise this threshold after the first such buffer is freed,
	 * and the next would grow by copying in the heap. */
	mallopt(M_MMAP_THRESHOLD, READ_SIZE);
	r->parallel = several_cpus();
#ifdef WIDE_SPLIT
	r->wide = __builtin_cpu_supports("avx2");
#endif
	r->wake[0] = r->wake[1] = -1;
	for (i = 0; i < LINES_GROUPS; i++) {
		struct line_group *g = &r->group[i];

		g->cap = READ_SIZE;
		g->buf = malloc(g->cap);
		g->line = malloc(LINES_MAX * sizeof g->line[0]);
		g->hash = malloc(LINES_MAX * sizeof g->hash[0]);
		g->found = malloc(LINES_MAX);
		if (g->buf == NULL || g->line == NULL || g->hash == NULL ||
		    g->found == NULL)
			goto fail;
	}
	if (pipe2(r->wake, O_CLOEXEC | O_NONBLOCK) == -1)
		goto fail;
	if ((errno = pthread_mutex_init(&r->lock, NULL)) != 0)
		goto fail;
	if ((errno = pthread_cond_init(&r->filled, NULL)) != 0) {
		pthread_mutex_destroy(&r->lock);
		goto fail;
	}
	if ((errno = pthread_cond_init(&r->freed, NULL)) != 0) {
		pthread_cond_destroy(&r->filled);
		pthread_mutex_destroy(&r->lock);
		goto fail;
	}
	return 0;
fail:
	saved = errno;
	free_buffers(r);
	errno = saved;
	return -1;
}

void
lines_free(struct lines *r)
{
	free_buffers(r);
	pthread_cond_destroy(&r->freed);
	pthread_cond_destroy(&r->filled);
	pthread_mutex_destroy(&r->lock);
}

/* Waits until fd has input or its end.  Returns 0, or -1 with errno
 * set. */
static int
wait_readable(int fd)
{
	struct pollfd pfd;

	pfd.fd = fd;
	pfd.events = POLLIN;
	while (poll(&pfd, 1, -1) == -1)
		if (errno != EINTR)
			return -1;
	return 0;
}

/* Says whether the helper is waiting for input with every line it read
 * handed over, waking a caller in lines_wait. */
static void
set_starved(struct lines *r, int starved)
{
	pthread_mutex_lock(&r->lock);
	r->starved = starved;
	if (starved)
		pthread_cond_broadcast(&r->filled);
	pthread_mutex_unlock(&r->lock);
}

/*
 * Reads what is there, up to len bytes.  The helper first waits for fd to
 * be readable or for lines_stop to write to the wake pipe, so that a stop
 * never waits for input that may not come.  Returns the byte count, 0 at
 * the end of the input or when stopped, or -1 with errno set.
 */
static ssize_t
read_input(struct lines *r, unsigned char *buf, size_t len)
{
	struct pollfd pfd[2];
	ssize_t n;

	for (;;) {
		if (r->threaded) {
			pfd[0].fd = r->fd;
			pfd[0].events = POLLIN;
			pfd[1].fd = r->wake[0];
			pfd[1].events = POLLIN;
			/* Input that stops coming is told to the caller
			 * (lines_wait) before waiting for it. */
			if (poll(pfd, 1, 0) == 0)
				set_starved(r, 1);
			n = poll(pfd, 2, -1);
			set_starved(r, 0);
			if (n == -1) {
				if (errno == EINTR)
					continue;
				return -1;
			}
			if (pfd[1].revents != 0)
				return 0;
		}
		n = read(r->fd, buf, len);
		if (n == -1 && errno == EINTR)
			continue;
		/* A descriptor left non-blocking: the helper polls at the
		 * top of the loop, the caller here. */
		if (n == -1 && errno == EAGAIN && (r->threaded ||
		    wait_readable(r->fd) == 0))
			continue;
		return n;
	}
}

/* Makes g's buffer at least size bytes; it holds no lines yet.  Returns 0,
 * or -1 with errno set. */
static int
group_grow(struct line_group *g, size_t size)
{
	unsigned char *bigger;

	if (size <= g->cap)
		return 0;
	bigger = realloc(g->buf, size);
	if (bigger == NULL)
		return -1;
	g->buf = bigger;
	g->cap = size;
	return 0;
}

/* Gives back the memory a long line made g's buffer take, unless the
 * len bytes to go in it need it. */
static void
shrink(struct line_group *g, size_t len)
{
	unsigned char *smaller;

	if (g->cap <= READ_SIZE || len > READ_SIZE / 2)
		return;
	smaller = realloc(g->buf, READ_SIZE);
	if (smaller != NULL) {
		g->buf = smaller;
		g->cap = READ_SIZE;
	}
}

/*
 * Lists the lines that end in the 64-byte blocks from FROM on, while the
 * group has room for 64 more, with MASK(p) the bits of the terminators in
 * the block at p: each line costs a bit scan, not a call to memchr.  A
 * macro, so that each instruction set gets its own copy of the loop.
 */
#define SPLIT_BLOCKS(MASK) do {						\
	for (; end - from >= 64 && LINES_MAX - n >= 64; from += 64) {	\
		uint64_t mask_ = MASK(from);				\
									\
		for (; mask_ != 0; mask_ &= mask_ - 1) {		\
			nl = from + __builtin_ctzll(mask_);		\
			g->line[n].data = line;				\
			g->line[n++].len = (size_t)(nl - line);		\
			line = nl + 1;					\
		}							\
	}								\
} while (0)

/* Lists the lines of g that end in [from, end), the first starting at
 * line, with memchr, while g has room; then sets *start, *scanned and
 * g->nlines as split says. */
static void
split_rest(const struct lines *r, struct line_group *g, size_t *start,
    size_t *scanned, const unsigned char *line, const unsigned char *from,
    const unsigned char *end, size_t n)
{
	const unsigned char *nl;

	while (n < LINES_MAX &&
	    (nl = memchr(from, r->delim, (size_t)(end - from))) != NULL) {
		g->line[n].data = line;
		g->line[n++].len = (size_t)(nl - line);
		line = from = nl + 1;
	}
	*start = (size_t)(line - g->buf);
	*scanned = n < LINES_MAX ? (size_t)(end - g->buf) :
	    (size_t)(from - g->buf);
	g->nlines = n;
}

#ifdef WIDE_SPLIT
/* split with AVX2 compares, 32 bytes at a time. */
__attribute__((target("avx2"))) static void
split_avx2(const struct lines *r, struct line_group *g, size_t *start,
    size_t *scanned, size_t len)
{
	const unsigned char *line = g->buf + *start, *from = g->buf + *scanned;
	const unsigned char *end = g->buf + len, *nl;
	size_t n = g->nlines;
	__m256i delim = _mm256_set1_epi8((char)r->delim);

#define TERMINATORS_AVX2(p)						\
	((uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(delim, \
	    _mm256_loadu_si256((const __m256i *)(p)))) |			\
	(uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(delim, \
	    _mm256_loadu_si256((const __m256i *)((p) + 32)))) << 32)
	SPLIT_BLOCKS(TERMINATORS_AVX2);
#undef TERMINATORS_AVX2
	split_rest(r, g, start, scanned, line, from, end, n);
}
#endif

#ifdef __SSE2__
/* Returns a mask with bit i set where p[i] is the terminator, 0 <= i < 64. */
static inline uint64_t
terminators64(const unsigned char *p, __m128i delim)
{
	uint64_t m[4];
	int i;

	for (i = 0; i < 4; i++)
		m[i] = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(delim,
		    _mm_loadu_si128((const __m128i *)(p + 16 * i))));
	return m[0] | m[1] << 16 | m[2] << 32 | m[3] << 48;
}
#endif

/*
 * Lists the lines of g->buf that end in [*scanned, len), the first starting
 * at *start, while g has room; the bytes from *start to *scanned hold no
 * terminator.  Moves *start to the first line not listed and *scanned to
 * where the search stopped.  Where SSE2 (or AVX2) is to be had, 64 bytes
 * are searched at once.
 */
static void
split(const struct lines *r, struct line_group *g, size_t *start,
    size_t *scanned, size_t len)
{
	const unsigned char *line = g->buf + *start, *from = g->buf + *scanned;
	const unsigned char *end = g->buf + len, *nl;
	size_t n = g->nlines;
#ifdef __SSE2__
	__m128i delim = _mm_set1_epi8((char)r->delim);
#endif

#ifdef WIDE_SPLIT
	if (r->wide) {
		split_avx2(r, g, start, scanned, len);
		return;
	}
#endif
#ifdef __SSE2__
#define TERMINATORS_SSE2(p)	terminators64((p), delim)
	SPLIT_BLOCKS(TERMINATORS_SSE2);
#undef TERMINATORS_SSE2
#endif
	(void)nl;
	split_rest(r, g, start, scanned, line, from, end, n);
}

/*
 * Hashes the lines of g from from up to to, or with fields the key of
 * each.  Returns 0, or -1 with errno set if no room could be had for a
 * key; the lines before it are hashed and g holds only those.
 */
static int
hash_lines(struct lines *r, struct line_group *g, const struct bloom *filter,
    size_t from, size_t to)
{
	size_t i, need, keylen;
	unsigned char *bigger;

	if (r->fields == NULL) {
		for (i = from; i < to; i++)
			g->hash[i] = bloom_hash(filter, g->line[i].data,
			    g->line[i].len);
		return 0;
	}
	for (i = from; i < to; i++) {
		need = fields_key_max(r->fields, g->line[i].len);
		if (need > r->key_cap) {
			if ((bigger = realloc(r->key, need)) == NULL) {
				g->nlines = i;
				return -1;
			}
			r->key = bigger;
			r->key_cap = need;
		}
		keylen = fields_key(r->fields, g->line[i].data, g->line[i].len,
		    r->key);
		/* Two threads may hash lines of one input: a flag set
		 * once, checked until then. */
		if (!__atomic_load_n(&r->delimited, __ATOMIC_RELAXED) &&
		    fields_delimited(r->fields, g->line[i].data,
		    g->line[i].len))
			__atomic_store_n(&r->delimited, 1, __ATOMIC_RELAXED);
		g->hash[i] = bloom_hash(filter, r->key, keylen);
	}
	return 0;
}

/*
 * With fields that skip a line without the separator (cut -s), drops such
 * lines from g, the others keeping their order: the engine never sees
 * them, so they are neither keys nor output nor counted.
 */
static void
drop_undelimited(struct lines *r, struct line_group *g)
{
	size_t i, kept = 0;

	for (i = 0; i < g->nlines; i++)
		if (fields_delimited(r->fields, g->line[i].data,
		    g->line[i].len))
			g->line[kept++] = g->line[i];
	g->nlines = kept;
}

/*
 * Waits until the caller holds no group and none is queued, so that the
 * helper may change every group's buffer (or until lines_stop).  Without
 * the helper the caller holds none while lines_next fills.
 */
static void
wait_all_given_back(struct lines *r)
{
	if (!r->threaded)
		return;
	pthread_mutex_lock(&r->lock);
	while (!r->stop && (r->queued > 0 || r->held))
		pthread_cond_wait(&r->freed, &r->lock);
	pthread_mutex_unlock(&r->lock);
}

/* Returns 1 if the carry not yet taken is in g's buffer, else 0. */
static int
holds_carry(const struct lines *r, const struct line_group *g)
{
	uintptr_t at = (uintptr_t)r->carry, from = (uintptr_t)g->buf;

	return r->carry != NULL && at >= from && at - from < g->cap;
}

/*
 * Makes room in g for a long line whose bytes the caller needs, so that
 * the memory taken is about that of one line, not of one per group: once
 * every other group is given back, a long carry is taken over with the
 * buffer it is in rather than copied, and the others' grown buffers are
 * given back.  Returns 1 if the carry is now at the start of g's buffer,
 * else 0.
 */
static int
long_line_room(struct lines *r, struct line_group *g)
{
	struct line_group *prev, *other;
	unsigned char *buf;
	size_t cap;
	unsigned i;

	wait_all_given_back(r);
	for (i = 0; i < LINES_GROUPS; i++) {
		other = &r->group[i];
		if (other != g && !holds_carry(r, other))
			shrink(other, 0);
	}
	if (r->carry_len <= READ_SIZE / 2)
		return 0;
	prev = &r->group[(g - r->group + LINES_GROUPS - 1) % LINES_GROUPS];
	if (!holds_carry(r, prev))
		return 0;
	buf = prev->buf;
	cap = prev->cap;
	prev->buf = g->buf;
	prev->cap = g->cap;
	g->buf = buf;
	g->cap = cap;
	memmove(g->buf, r->carry, r->carry_len);
	shrink(prev, 0);
	return 1;
}

/*
 * Hashes the bytes of an unended line that the caller does not need, and
 * drops them: the line's hash goes on in r->stream.
 */
static void
stream_out(struct lines *r, const unsigned char *p, size_t len,
    const struct bloom *filter)
{
	if (!r->streaming) {
		bloom_hash_begin(filter, &r->stream);
		r->streaming = 1;
	}
	hash64_update(&r->stream, p, len);
}

/*
 * Fills g with the next lines: the bytes carried from the group before,
 * then one read's worth, or more while no line has ended.  At the end of
 * the input a last line without a terminator is still a line; after a
 * failed read the unended line is dropped and g->err says why.  A line
 * longer than a read's buffer grows the buffer if the caller keeps the
 * bytes, else it is hashed in stream and only its end is kept.
 */
static void
fill(struct lines *r, struct line_group *g, const struct bloom *filter)
{
	size_t len = r->carry_len, start = 0, scanned = r->carry_scanned, i;
	size_t cap;
	ssize_t n;

	g->nlines = 0;
	g->err = 0;
	g->last = 0;
	if (r->keep && len > READ_SIZE / 2 && long_line_room(r, g))
		;	/* the carry is in place */
	else {
		shrink(g, len);
		if (group_grow(g, len) == -1) {
			r->eof = 1;
			r->err = errno;
			len = scanned = 0;
		} else if (len > 0)
			memcpy(g->buf, r->carry, len);
	}
	r->carry = NULL;	/* taken */
	/* Lines the carry already holds go out before any read that may
	 * wait, and keep the carry from growing. */
	split(r, g, &start, &scanned, len);
	while (!r->eof && g->nlines == 0) {
		if (len == g->cap && !r->keep && r->fields == NULL) {
			stream_out(r, g->buf, len, filter);
			len = scanned = 0;
		} else if (len == g->cap) {
			cap = g->cap > SIZE_MAX / 2 ? SIZE_MAX : 2 * g->cap;
			if (cap > READ_SIZE)
				long_line_room(r, g);
			if (group_grow(g, cap) == -1) {
				r->eof = 1;
				r->err = errno;
				break;
			}
		}
		n = read_input(r, g->buf + len, g->cap - len);
		if (n == -1) {
			r->eof = 1;
			r->err = errno;
		} else if (n == 0)
			r->eof = 1;
		else
			len += (size_t)n;
		split(r, g, &start, &scanned, len);
	}
	if (r->eof) {
		split(r, g, &start, &scanned, len);
		if (scanned == len) {
			if (r->err != 0) {
				g->err = r->err;
				start = len;
				r->streaming = 0;
			} else if ((start < len || (r->streaming &&
			    g->nlines == 0)) && g->nlines < LINES_MAX) {
				g->line[g->nlines].data = g->buf + start;
				g->line[g->nlines++].len = len - start;
				start = len;
			}
			g->last = start == len;
		}
	}
	i = 0;
	if (r->streaming && g->nlines > 0) {
		hash64_update(&r->stream, g->line[0].data, g->line[0].len);
		g->hash[0] = hash64_digest(&r->stream);
		r->streaming = 0;
		i = 1;
	}
	if (g->nlines > 0)
		r->any = 1;
	if (r->fields != NULL && r->fields->only_delimited)
		drop_undelimited(r, g);
	/* The keys of fields are made in r->key, which is the helper's; a
	 * pretest that is not shared needs every hash. */
	g->pretest = __atomic_load_n(&r->pretest, __ATOMIC_ACQUIRE);
	g->hashed = g->nlines;
	if (r->threaded && r->fields == NULL && (g->pretest == NULL ||
	    bloom_pretest_shares(g->pretest))) {
		g->hashed = g->nlines * __atomic_load_n(&r->share,
		    __ATOMIC_RELAXED) / SHARE_ONE;
		if (g->hashed < i)
			g->hashed = i;
	}
	if (hash_lines(r, g, filter, i, g->hashed) == -1) {
		g->hashed = g->nlines;
		r->eof = 1;
		r->err = g->err = errno;
		g->last = 0;
		start = g->nlines > 0 ? (size_t)(g->line[g->nlines - 1].data +
		    g->line[g->nlines - 1].len - g->buf) : 0;
	}
	g->bytes = start;
	if (g->pretest != NULL)
		bloom_pretest(g->pretest, g->hash, g->hashed, g->found);
	r->carry = g->buf + start;
	r->carry_len = len - start;
	r->carry_scanned = scanned - start;
}

/*
 * Moves the share of the hashing the helper does by delta: up when the
 * helper waits for the caller to give a group back, down when the caller
 * waits for a group while the helper is not waiting for input.
 */
static void
balance(struct lines *r, int delta)
{
	unsigned share = __atomic_load_n(&r->share, __ATOMIC_RELAXED);

	if (delta > 0)
		share = share + SHARE_STEP > SHARE_ONE ? SHARE_ONE :
		    share + SHARE_STEP;
	else
		share = share < SHARE_STEP ? 0 : share - SHARE_STEP;
	__atomic_store_n(&r->share, share, __ATOMIC_RELAXED);
}

/* The helper thread: fills the groups in turn until the input ends or
 * lines_stop says to stop. */
static void *
helper(void *arg)
{
	struct lines *r = arg;
	struct line_group *g;
	int last;

	do {
		pthread_mutex_lock(&r->lock);
		if (!r->stop && r->queued + (size_t)r->held == LINES_GROUPS)
			balance(r, 1);
		while (!r->stop && r->queued + (size_t)r->held == LINES_GROUPS)
			pthread_cond_wait(&r->freed, &r->lock);
		if (r->stop) {
			pthread_mutex_unlock(&r->lock);
			break;
		}
		pthread_mutex_unlock(&r->lock);
		g = &r->group[r->fill];
		fill(r, g, r->filter);
		last = g->last;
		r->fill = (r->fill + 1) % LINES_GROUPS;
		pthread_mutex_lock(&r->lock);
		r->queued++;
		pthread_cond_signal(&r->filled);
		pthread_mutex_unlock(&r->lock);
	} while (!last);
	return NULL;
}

void
lines_start(struct lines *r, int fd, const struct bloom *filter,
    const struct bloom_pretest *pretest)
{
	struct stat st;

	r->fd = fd;
	r->filter = filter;
	r->delimited = 0;
	r->any = 0;
	lines_pretest(r, pretest);
	r->threaded = 0;
	if (fstat(fd, &st) == -1)
		st.st_mode = 0;
#ifdef F_SETPIPE_SZ
	/* A pipe holds 64 KiB unless asked for more: a read of the group's
	 * size then takes 16 times fewer wake-ups of the writer and the
	 * reader.  Advice: a pipe may stay as it is. */
	if (S_ISFIFO(st.st_mode) && fcntl(fd, F_GETPIPE_SZ) < READ_SIZE)
		(void)fcntl(fd, F_SETPIPE_SZ, READ_SIZE);
#endif
	if (!r->parallel || (S_ISREG(st.st_mode) && st.st_size < SMALL_INPUT))
		return;
	/* Set before the thread starts, which reads them. */
	r->share = SHARE_ONE;
	r->threaded = 1;
	if (thread_start(&r->thread, helper, r) != 0)
		r->threaded = 0;
}

void
lines_fields(struct lines *r, const struct fields *f)
{
	r->fields = f;
}

int
lines_undelimited(const struct lines *r)
{
	return r->any && !__atomic_load_n(&r->delimited, __ATOMIC_RELAXED);
}

uint64_t
lines_memory(void)
{
	return (uint64_t)LINES_GROUPS * (READ_SIZE + LINES_MAX *
	    (sizeof(struct line) + sizeof(uint64_t) + 1));
}

int
lines_threaded(const struct lines *r)
{
	return r->threaded;
}

void
lines_pretest(struct lines *r, const struct bloom_pretest *pretest)
{
	__atomic_store_n(&r->pretest, pretest, __ATOMIC_RELEASE);
}

int
lines_wait(struct lines *r)
{
	struct pollfd pfd;
	int ready;

	if (!r->threaded) {
		/* lines_next reads only if the carry holds no line. */
		if (r->eof || r->carry_scanned < r->carry_len)
			return 1;
		pfd.fd = r->fd;
		pfd.events = POLLIN;
		return poll(&pfd, 1, 0) != 0;
	}
	pthread_mutex_lock(&r->lock);
	/* The group taken last is done with: the helper may need it. */
	if (r->held) {
		r->held = 0;
		pthread_cond_signal(&r->freed);
	}
	if (r->queued == 0 && !r->starved)
		balance(r, -1);
	while (r->queued == 0 && !r->starved)
		pthread_cond_wait(&r->filled, &r->lock);
	ready = r->queued > 0;
	pthread_mutex_unlock(&r->lock);
	return ready;
}

const struct line_group *
lines_next(struct lines *r)
{
	struct line_group *g = &r->group[r->take];

	r->take = (r->take + 1) % LINES_GROUPS;
	if (!r->threaded) {
		fill(r, g, r->filter);
		return g;
	}
	pthread_mutex_lock(&r->lock);
	if (r->held) {
		r->held = 0;
		pthread_cond_signal(&r->freed);
	}
	while (r->queued == 0)
		pthread_cond_wait(&r->filled, &r->lock);
	r->queued--;
	r->held = 1;
	pthread_mutex_unlock(&r->lock);
	/* The helper hashed only its share; fields are not shared. */
	hash_lines(r, g, r->filter, g->hashed, g->nlines);
	return g;
}

void
lines_stop(struct lines *r)
{
	unsigned char byte = 0, drain[64];

	if (r->threaded) {
		pthread_mutex_lock(&r->lock);
		r->stop = 1;
		pthread_cond_signal(&r->freed);
		pthread_mutex_unlock(&r->lock);
		/* The pipe is empty and non-blocking: this cannot fail but
		 * for a signal. */
		while (write(r->wake[1], &byte, 1) == -1 && errno == EINTR)
			continue;
		pthread_join(r->thread, NULL);
		/* Empty the pipe for the next input. */
		while (read(r->wake[0], drain, sizeof drain) > 0 ||
		    errno == EINTR)
			continue;
	}
	r->threaded = 0;
	r->eof = 0;
	r->err = 0;
	r->queued = 0;
	r->held = 0;
	r->stop = 0;
	r->starved = 0;
	r->fill = 0;
	r->take = 0;
	r->carry = NULL;
	r->carry_len = 0;
	r->carry_scanned = 0;
	r->streaming = 0;
}
