/*
 * The filter file: atomic creation, opening and mapping, and add, test
 * and fill over its segments.  The format is format.c's; which segments
 * are live and which takes adds is segments.c's.
 *
 * Bit i of a block is bit i % 8 of its byte i / 8, so an array reads the
 * same on any host.  A key's block is chosen by multiply-shift of its
 * hash; its bits inside the block come from the SplitMix64 sequence seeded
 * with the hash.  Every segment of a filter shares the seed.
 */
#include <sys/file.h>
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
#include "lib/endian.h"
#include "lib/memory.h"
#include "store/holes.h"
#include "store/handle.h"
#include "store/segments.h"

#define PAGE_GUESS	4096	/* bytes in a page, for heuristics */
#define PREFAULT_SHARE	16	/* prefault after pages / this lookups */
#define HEAD_READ	8192	/* bytes read to parse: header and table */
#define ROOM_SHARE	32	/* an add takes room / this keys at a time */

_Static_assert(HEAD_READ >= V2_HEADER_SIZE + SEGMENTS_MAX * SLOT_SIZE,
    "a whole table is read at open");

/*
 * Maps every page of the filter in one call.  For a filter in the page
 * cache that costs a fraction of a second for gigabytes, against a fault
 * per page otherwise, some ten times more for each page touched; so it is
 * done up front for a full scan and, for lookups, once they are many
 * enough to touch a good share of the pages.  Advice only: failure changes
 * nothing but speed.
 */
static void
prefault_range(void *map, size_t size)
{
#ifdef MADV_POPULATE_READ
	if (madvise(map, size, MADV_POPULATE_READ) == 0)
		return;
#endif
	madvise(map, size, MADV_WILLNEED);
}

static void
prefault(struct bloom *b)
{
	unsigned i;

	b->prefaulted = 1;
	if (b->hdr.version == FORMAT_V1) {
		prefault_range(b->head, b->head_size);
		return;
	}
	for (i = 0; i < b->nmapped; i++)
		prefault_range(b->seg[i].map, b->seg[i].map_size);
}

/* Counts n more lookups, and prefaults once they reach PREFAULT_SHARE of
 * the pages. */
static inline void
note_lookups(struct bloom *b, size_t n)
{
	b->lookups += n;
	if (!b->prefaulted && b->lookups >= b->prefault_at)
		prefault(b);
}

int
bloom_flock(int fd, int op, const char *path, void (*on_wait)(const char *))
{
	struct timespec tick = { 0, BLOOM_WAIT_TICK_NS };
	unsigned ticks = 0;

	while (flock(fd, op | LOCK_NB) == -1) {
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		if (++ticks == BLOOM_WAIT_TELL_TICKS && on_wait != NULL)
			on_wait(path);
		nanosleep(&tick, NULL);
	}
	return 0;
}

/* Opens path and takes a shared lock on the file that is at path once the
 * lock is held: a create -f may have replaced it while we waited. */
static int
open_locked(const char *path, int writable, void (*on_wait)(const char *))
{
	struct stat held, now;
	int fd, flags, e;

	flags = (writable ? O_RDWR : O_RDONLY) | O_NONBLOCK | O_CLOEXEC |
	    O_NOCTTY;
	for (;;) {
		fd = open(path, flags);
		if (fd == -1)
			return -1;
		if (fstat(fd, &held) == -1)
			goto fail;
		if (!S_ISREG(held.st_mode))
			return fd;	/* the caller rejects it */
		if (bloom_flock(fd, LOCK_SH, path, on_wait) == -1)
			goto fail;
		if (stat(path, &now) == -1)
			goto fail;
		if (now.st_dev == held.st_dev && now.st_ino == held.st_ino)
			return fd;
		close(fd);
	}
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

/* Reads and validates the header and table of the open file.  A window
 * rotating at this moment may show a generation newer than the epoch
 * read before it: read again. */
static int
read_header(struct bloom *b, uint64_t file_size)
{
	unsigned char buf[HEAD_READ];
	ssize_t got;
	int s, tries;

	for (tries = 0; tries < 3; tries++) {
		got = pread(b->fd, buf, sizeof buf, 0);
		if (got == -1)
			return BLOOM_ERRNO;
		s = bloom_header_parse(buf, (size_t)got, file_size, &b->hdr);
		if (s != BLOOM_ESEGSTAMP)
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
bloom_open(struct bloom *b, const char *path, int writable,
    void (*on_wait)(const char *path))
{
	struct stat st;
	uint64_t total = 0;
	unsigned i;
	int s, e;

	memset(b, 0, sizeof *b);
	b->path = path;
	b->writable = writable;
	b->fd = open_locked(path, writable, on_wait);
	if (b->fd == -1)
		return errno == EISDIR ? BLOOM_ENOTREG : BLOOM_ERRNO;
	if (fstat(b->fd, &st) == -1)
		goto fail_errno;
	if (!S_ISREG(st.st_mode)) {
		s = BLOOM_ENOTREG;
		goto fail;
	}
	if ((s = read_header(b, (uint64_t)st.st_size)) != BLOOM_OK)
		goto fail;
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
	for (i = 0; i < b->nmapped; i++)
		total += b->seg[i].info.nblocks * BLOCK_BYTES;
	b->prefault_at = total / PAGE_GUESS / PREFAULT_SHARE;
	if (!memory_fits(total))
		b->prefault_at = UINT64_MAX;
	return BLOOM_OK;

fail_errno:
	s = BLOOM_ERRNO;
fail:
	e = errno;
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
	segments_unmap(b);
	if (b->head != NULL)
		munmap(b->head, b->head_size);
	if (b->fd != -1)
		close(b->fd);
	free(b->pending);
	free(b->found);
	b->pending = NULL;
	b->found = NULL;
	b->head = NULL;
	b->fd = -1;
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

/* Returns the high 64 bits of a * b. */
static inline uint64_t
mul_high(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
	return (uint64_t)(((unsigned __int128)a * b) >> 64);
#else
	uint64_t a_lo = (uint32_t)a, a_hi = a >> 32;
	uint64_t b_lo = (uint32_t)b, b_hi = b >> 32;
	uint64_t mid = (a_lo * b_lo >> 32) + (uint32_t)(a_hi * b_lo) +
	    (uint32_t)(a_lo * b_hi);

	return a_hi * b_hi + (a_hi * b_lo >> 32) + (a_lo * b_hi >> 32) +
	    (mid >> 32);
#endif
}

/* SplitMix64 (Steele, Lea and Flood, 2014): a bijective 64-bit mixer. */
#define SPLITMIX_GAMMA	0x9e3779b97f4a7c15ULL

static inline uint64_t
splitmix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * The high bits of the key's hash pick its block by multiply-shift.  The
 * bit positions inside the block come from the SplitMix64 sequence seeded
 * with the hash, nine bits each, seven to a word: independent of the block
 * choice and of each other, as params.c assumes.  POSITIONS walks them,
 * running STEP with word (the index of the position's 64-bit word in the
 * block) and bit (its mask, in file byte order); the words are read where
 * they are rather than gathered into a mask, which would cost a trip
 * through memory per key.
 */
#define POSITIONS(h, hashes, STEP) do {					\
	uint64_t state_ = (h);						\
	unsigned left_ = (hashes);					\
									\
	while (left_ > 0) {						\
		uint64_t bits_;						\
		unsigned n_ = left_ < 7 ? left_ : 7;			\
									\
		state_ += SPLITMIX_GAMMA;				\
		bits_ = splitmix(state_);				\
		left_ -= n_;						\
		while (n_-- > 0) {					\
			unsigned word = (unsigned)(bits_ >> 6) & 7;	\
			uint64_t bit = le64((uint64_t)1 << (bits_ & 63)); \
									\
			STEP;						\
			bits_ >>= 9;					\
		}							\
	}								\
} while (0)

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

static inline uint64_t *
block_of(const struct segment *s, uint64_t h)
{
	return (uint64_t *)(s->bits + (mul_high(h, s->whole) - s->lo) *
	    BLOCK_BYTES);
}

/* Lists in idx the keys that slice s holds, marking the others
 * BLOOM_ELSEWHERE in mark; returns how many it holds. */
static size_t
in_slice(const struct segment *s, const uint64_t *hashes, size_t n,
    uint32_t *idx, unsigned char *mark)
{
	size_t i, m = 0;

	for (i = 0; i < n; i++) {
		int in = bloom_block(s, hashes[i]) < s->info.nblocks;

		mark[i] = in ? 0 : BLOOM_ELSEWHERE;
		idx[m] = (uint32_t)i;
		m += (size_t)in;
	}
	return m;
}

/* Returns 1 if all the key's bits are set in block.  Without a branch per
 * bit: whether a bit is set is a coin toss the CPU cannot predict. */
static inline int
has_bits(const uint64_t *block, uint64_t h, unsigned hashes)
{
	uint64_t missing = 0;

	POSITIONS(h, hashes, missing |= bit &
	    ~__atomic_load_n(&block[word], __ATOMIC_RELAXED));
	return missing == 0;
}

/*
 * Sets the key's bits in block; returns 1 if any was clear.  A key found
 * whole writes nothing.  A new one sets each of its bits with an atomic OR
 * (lock or: the bts that a test of the old bit would compile to is
 * microcoded and several times slower), so that other processes adding at
 * once lose nothing; two processes that add the same new key at the same
 * instant may both call it new.
 */
static inline int
set_bits(uint64_t *block, uint64_t h, unsigned hashes)
{
	if (has_bits(block, h, hashes))
		return 0;
	POSITIONS(h, hashes, __atomic_fetch_or(&block[word], bit,
	    __ATOMIC_RELAXED));
	return 1;
}

/*
 * The keys are taken in batches.  While one is tested, the blocks of the
 * keys up to PREFETCH_AHEAD further on are loading.
 */
#define BATCH		16	/* keys tested before the new ones are set */
#define PREFETCH_AHEAD	64	/* keys whose blocks load ahead */

_Static_assert(BATCH <= UCHAR_MAX + 1, "batch index fits a byte");

/*
 * Adds a batch of n <= BATCH keys to segment s.  Whether a key is new is a
 * coin toss when half the input repeats, so the batch is tested first
 * without a branch per key, and only the keys that missed a bit are then
 * visited to set theirs.  Each is tested again just before: a key set
 * earlier in the batch may have set its bits (a repeat, or a false
 * positive), and the answers must be those of adding the keys one at a
 * time.
 */
static size_t
add_batch(const struct segment *s, const uint64_t *hashes, size_t n,
    unsigned char *isnew)
{
	unsigned char missed[BATCH];	/* indices of keys that missed */
	size_t i, j, nmissed = 0, fresh = 0;
	unsigned k = s->info.hashes;

	for (i = 0; i < n; i++) {
		isnew[i] = 0;
		missed[nmissed] = (unsigned char)i;
		nmissed += !has_bits(block_of(s, hashes[i]), hashes[i], k);
	}
	for (j = 0; j < nmissed; j++) {
		i = missed[j];
		isnew[i] = (unsigned char)set_bits(block_of(s, hashes[i]),
		    hashes[i], k);
		fresh += isnew[i];
	}
	return fresh;
}

/*
 * Starts loading the blocks of the keys from the batch at i on that are
 * PREFETCH_AHEAD keys away, or all of the first ones when i is 0; KEY(j)
 * is the hash of key j.  A macro rather than a function: GCC finds that a
 * function that only prefetches has no effect and drops the calls.
 */
#define PREFETCH_BATCH(s, KEY, i, n) do {				\
	size_t from_ = (i) == 0 ? 0 : (i) + PREFETCH_AHEAD - BATCH;	\
	size_t to_ = (i) + PREFETCH_AHEAD < (n) ?			\
	    (i) + PREFETCH_AHEAD : (n);					\
									\
	for (; from_ < to_; from_++)					\
		__builtin_prefetch(block_of((s), KEY(from_)));		\
} while (0)

#define ALL_KEY(j)	(hashes[j])
#define SOME_KEY(j)	(hashes[idx[j]])

/* Adds the n keys to segment s; returns how many were new to it. */
static size_t
seg_add(const struct segment *s, const uint64_t *hashes, size_t n,
    unsigned char *isnew)
{
	size_t i, fresh = 0;

	for (i = 0; i < n; i += BATCH) {
		PREFETCH_BATCH(s, ALL_KEY, i, n);
		fresh += add_batch(s, hashes + i, n - i < BATCH ? n - i : BATCH,
		    isnew + i);
	}
	return fresh;
}

size_t
bloom_add_list(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *isnew)
{
	size_t j, fresh = 0;

	for (j = 0; j < m; j++) {
		if (j % BATCH == 0)
			PREFETCH_BATCH(s, SOME_KEY, j, m);
		isnew[idx[j]] = (unsigned char)set_bits(block_of(s,
		    hashes[idx[j]]), hashes[idx[j]], s->info.hashes);
		fresh += isnew[idx[j]];
	}
	return fresh;
}

/* Tests the n keys against segment s, setting found[i]. */
static void
seg_test(const struct segment *s, const uint64_t *hashes, size_t n,
    unsigned char *found)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (i % BATCH == 0)
			PREFETCH_BATCH(s, ALL_KEY, i, n);
		found[i] = (unsigned char)has_bits(block_of(s, hashes[i]),
		    hashes[i], s->info.hashes);
	}
}

size_t
bloom_test_list(const struct segment *s, const uint64_t *hashes,
    const uint32_t *idx, size_t m, unsigned char *found)
{
	size_t j, count = 0;

	for (j = 0; j < m; j++) {
		if (j % BATCH == 0)
			PREFETCH_BATCH(s, SOME_KEY, j, m);
		found[idx[j]] = (unsigned char)has_bits(block_of(s,
		    hashes[idx[j]]), hashes[idx[j]], s->info.hashes);
		count += found[idx[j]];
	}
	return count;
}

uint64_t
bloom_block(const struct segment *s, uint64_t h)
{
	return mul_high(h, s->whole) - s->lo;
}

size_t
bloom_keep_missing(uint32_t *idx, size_t m, const unsigned char *found)
{
	size_t j, left = 0;

	for (j = 0; j < m; j++) {
		idx[left] = idx[j];
		left += !found[idx[j]];
	}
	return left;
}

/*
 * Tests the keys idx lists (m of them, or all n when m is n and none is
 * found yet) against the nseg segments in turn, each pass only over the
 * keys no segment has found yet, with its own prefetching.  Sets found and
 * leaves in idx the keys found nowhere; returns how many.
 */
static size_t
test_passes(const struct segment *const *seg, unsigned nseg,
    const uint64_t *hashes, size_t n, uint32_t *idx, size_t m,
    unsigned char *found)
{
	unsigned i;

	for (i = 0; i < nseg && m > 0; i++) {
		if (m == n)
			seg_test(seg[i], hashes, n, found);
		else
			bloom_test_list(seg[i], hashes, idx, m, found);
		m = bloom_keep_missing(idx, m, found);
	}
	return m;
}

/*
 * Tests the n <= BLOOM_CHUNK keys against every live segment but those in
 * skip (a bit per segment index), one segment after another, the fullest
 * first, each pass only over the keys no segment has found yet: a present
 * key usually costs one lookup, an absent one a lookup per segment, each
 * pass prefetching its own blocks.  Starts from what a pretest found, if
 * prefound is not NULL.  Sets found[i] and leaves the keys found nowhere
 * in b->pending; returns how many.
 */
static size_t
test_live(struct bloom *b, const uint64_t *hashes, size_t n,
    unsigned char *found, uint64_t skip, const unsigned char *prefound)
{
	const struct segment *seg[SEGMENTS_MAX];
	uint32_t *idx = b->pending;
	size_t j, m = n;
	unsigned li, nseg = 0;

	for (j = 0; j < n; j++)
		idx[j] = (uint32_t)j;
	if (prefound != NULL) {
		memcpy(found, prefound, n);
		m = bloom_keep_missing(idx, n, found);
	} else
		memset(found, 0, n);
	for (li = 0; li < b->nlive; li++)
		if (!(skip >> b->live[li] & 1))
			seg[nseg++] = &b->seg[b->live[li]];
	return test_passes(seg, nseg, hashes, n, idx, m, found);
}

void
bloom_pretest_plan(struct bloom *b, int adding, struct bloom_pretest *p)
{
	unsigned li, ncand = 0, want;

	p->nseg = 0;
	p->mask = 0;
	if (b->hdr.mode != MODE_GROW || segments_refresh(b) != BLOOM_OK)
		return;
	/*
	 * The reader also reads, splits and hashes; the main thread of an
	 * add also sets bits and writes lines.  Measured on a filter grown
	 * 32 times (bench/run), the best shares were 2 of 5 older segments
	 * for add and 1 of 6 for check: about two fifths and one sixth.
	 */
	ncand = b->nlive - (adding ? 1 : 0);
	want = adding ? (2 * ncand + 3) / 5 : (ncand + 1) / 5;
	if (want > ncand)
		want = ncand;
	if (want > PRETEST_MAX)
		want = PRETEST_MAX;
	for (li = 0; li < b->nlive && p->nseg < want; li++) {
		if (adding && b->live[li] == b->target)
			continue;
		p->seg[p->nseg++] = b->seg[b->live[li]];
		p->mask |= (uint64_t)1 << b->live[li];
	}
}

void
bloom_pretest(const struct bloom_pretest *p, const uint64_t *hashes,
    size_t n, unsigned char *found)
{
	const struct segment *seg[PRETEST_MAX];
	uint32_t idx[BLOOM_CHUNK];
	size_t j;
	unsigned i;

	if (n > BLOOM_CHUNK)
		return;
	for (j = 0; j < n; j++)
		idx[j] = (uint32_t)j;
	for (i = 0; i < p->nseg; i++)
		seg[i] = &p->seg[i];
	test_passes(seg, p->nseg, hashes, n, idx, n, found);
}

int
bloom_test(struct bloom *b, const struct bloom_pretest *p,
    const unsigned char *prefound, const uint64_t *hashes, size_t n,
    unsigned char *found)
{
	size_t pos, m;
	int s;

	if ((s = segments_refresh(b)) != BLOOM_OK)
		return s;
	note_lookups(b, n);
	for (pos = 0; pos < n; pos += m) {
		m = n - pos < BLOOM_CHUNK ? n - pos : BLOOM_CHUNK;
		if (b->hdr.slices != 0) {
			const struct segment *sg = &b->seg[0];
			size_t k = in_slice(sg, hashes + pos, m, b->pending,
			    found + pos);

			bloom_test_list(sg, hashes + pos, b->pending, k,
			    found + pos);
		} else if (b->nlive == 1 && prefound == NULL)
			seg_test(&b->seg[b->live[0]], hashes + pos, m,
			    found + pos);
		else
			test_live(b, hashes + pos, m, found + pos,
			    prefound != NULL ? p->mask : 0,
			    prefound != NULL ? prefound + pos : NULL);
	}
	return BLOOM_OK;
}

/*
 * Adds the n <= room keys to the target segment.  A key is new if no live
 * segment had it.  A growable filter adds only the keys no older segment
 * holds; a window adds every key to the current generation, so that a key
 * seen again is remembered from now on.
 */
static size_t
add_some(struct bloom *b, const struct bloom_pretest *p,
    const unsigned char *prefound, const uint64_t *hashes, size_t n,
    unsigned char *isnew)
{
	const struct segment *t = &b->seg[b->target];
	uint64_t skip = (uint64_t)1 << b->target;
	size_t j, left, fresh;

	if (b->hdr.slices != 0)
		return bloom_add_list(t, hashes, b->pending, in_slice(t, hashes,
		    n, b->pending, isnew), isnew);
	if (b->nlive == 1 && prefound == NULL)
		return seg_add(t, hashes, n, isnew);
	if (prefound != NULL)
		skip |= p->mask;
	left = test_live(b, hashes, n, b->found, skip, prefound);
	if (b->hdr.mode == MODE_GROW) {
		memset(isnew, 0, n);
		return bloom_add_list(t, hashes, b->pending, left, isnew);
	}
	fresh = seg_add(t, hashes, n, isnew);
	for (j = 0; j < n; j++)
		isnew[j] &= (unsigned char)!b->found[j];
	return fresh;
}

int
bloom_add(struct bloom *b, const struct bloom_pretest *p,
    const unsigned char *prefound, const uint64_t *hashes, size_t n,
    unsigned char *isnew, size_t *done)
{
	uint64_t room;
	size_t pos, m, fresh;
	int s;

	note_lookups(b, n);
	for (pos = 0; pos < n; pos += m) {
		*done = pos;
		if ((s = segments_begin_add(b, &room)) != BLOOM_OK)
			return s;
		m = n - pos < BLOOM_CHUNK ? n - pos : BLOOM_CHUNK;
		if (m > room)
			m = (size_t)room;
		/* Other processes may be adding to the segment too: take a
		 * share of the room at a time, so that together they pass
		 * its capacity by little (at most a share each). */
		if (room != UINT64_MAX && m > room / ROOM_SHARE + 1)
			m = (size_t)(room / ROOM_SHARE + 1);
		fresh = add_some(b, p, prefound != NULL ? prefound + pos : NULL,
		    hashes + pos, m, isnew + pos);
		segments_count(b, b->target, fresh);
		segments_end_add(b);
	}
	*done = n;
	return BLOOM_OK;
}

void
bloom_or(struct bloom *b, unsigned di, uint64_t lo, const struct bloom *src,
    unsigned si)
{
	const struct segment *from = &src->seg[si];
	uint64_t *to = (uint64_t *)(b->seg[di].bits + lo * BLOCK_BYTES);
	const uint64_t *word = (const uint64_t *)from->bits;
	uint64_t i, nwords = from->info.nblocks * (BLOCK_BYTES / 8);

	if (from->map != NULL)
		madvise(from->map, from->map_size, MADV_SEQUENTIAL);
	/* A word writes only where the source has a bit the target lacks:
	 * most words of a sparse or overlapping source cost one compare. */
	for (i = 0; i < nwords; i++) {
		uint64_t w = word[i];

		if ((w & ~__atomic_load_n(&to[i], __ATOMIC_RELAXED)) != 0)
			__atomic_fetch_or(&to[i], w, __ATOMIC_RELAXED);
	}
}

void
bloom_recount(struct bloom *b, unsigned i)
{
	static uint64_t hist[BLOCK_BITS + 1];
	const struct segment_info *info = &b->seg[i].info;
	double items = params_estimate_items(bloom_fill(b, i, hist),
	    info->nblocks, info->hashes);

	segments_raise(b, i, items < 0x1p63 ? (uint64_t)(items + 0.5) :
	    UINT64_MAX);
}

uint32_t
bloom_slice_of(const struct bloom *b, uint64_t h, uint32_t slices)
{
	uint64_t whole = b->seg[0].whole;

	return (uint32_t)(mul_high(h, whole) / (whole / slices));
}

unsigned
bloom_events(struct bloom *b)
{
	unsigned ev = b->events;

	b->events = 0;
	return ev;
}

int
bloom_refresh(struct bloom *b)
{
	return segments_refresh(b);
}

int
bloom_rotate(struct bloom *b)
{
	return segments_rotate(b);
}

int
bloom_is_live(const struct bloom *b, unsigned i)
{
	return segments_is_live(b, i);
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

static inline unsigned
popcount_portable(uint64_t x)
{
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (unsigned)((x * 0x0101010101010101ULL) >> 56);
}

/* Counts the bits of each block into hist; returns the total. */
static inline uint64_t
count_blocks(const uint64_t *word, uint64_t nblocks,
    uint64_t hist[BLOCK_BITS + 1], unsigned (*popcount)(uint64_t))
{
	uint64_t i, total = 0;

	for (i = 0; i < nblocks; i++, word += 8) {
		unsigned c = popcount(word[0]) + popcount(word[1]) +
		    popcount(word[2]) + popcount(word[3]) +
		    popcount(word[4]) + popcount(word[5]) +
		    popcount(word[6]) + popcount(word[7]);

		hist[c]++;
		total += c;
	}
	return total;
}

static uint64_t
count_portable(const uint64_t *word, uint64_t nblocks,
    uint64_t hist[BLOCK_BITS + 1])
{
	return count_blocks(word, nblocks, hist, popcount_portable);
}

/* The same with the x86 POPCNT instruction, where the CPU has it. */
#if defined(__GNUC__) && defined(__x86_64__)
#define HAVE_POPCNT_DISPATCH
__attribute__((target("popcnt"))) static inline unsigned
popcount_popcnt(uint64_t x)
{
	return (unsigned)__builtin_popcountll(x);
}

__attribute__((target("popcnt"))) static uint64_t
count_popcnt(const uint64_t *word, uint64_t nblocks,
    uint64_t hist[BLOCK_BITS + 1])
{
	return count_blocks(word, nblocks, hist, popcount_popcnt);
}
#endif

/* Counts the bits of nblocks blocks from word into hist; returns the
 * total. */
static uint64_t
count_range(const uint64_t *word, uint64_t nblocks,
    uint64_t hist[BLOCK_BITS + 1])
{
#ifdef HAVE_POPCNT_DISPATCH
	if (__builtin_cpu_supports("popcnt"))
		return count_popcnt(word, nblocks, hist);
#endif
	return count_portable(word, nblocks, hist);
}

uint64_t
bloom_fill(struct bloom *b, unsigned i, uint64_t hist[BLOCK_BITS + 1])
{
	const struct segment *s = &b->seg[i];
	const uint64_t *word = (const uint64_t *)s->bits;
	uint64_t off = s->info.offset, end, from, to, total = 0;

	memset(hist, 0, (BLOCK_BITS + 1) * sizeof hist[0]);
	if (!b->sparse) {
		if (s->map != NULL && memory_fits(s->map_size))
			prefault_range(s->map, s->map_size);
		else if (s->map == NULL && !b->prefaulted &&
		    memory_fits(b->head_size))
			prefault(b);
		return count_range(word, s->info.nblocks, hist);
	}
	/* Holes are zero bits: counted, not read.  Their bounds are whole
	 * pages, so whole blocks. */
	end = off + s->info.nblocks * BLOCK_BYTES;
	hist[0] = s->info.nblocks;
	while (holes_next_data(b->fd, off, end, &from, &to)) {
		from -= (from - s->info.offset) % BLOCK_BYTES;
		to += (end - to) % BLOCK_BYTES;
		hist[0] -= (to - from) / BLOCK_BYTES;
		total += count_range(word + (from - s->info.offset) / 8,
		    (to - from) / BLOCK_BYTES, hist);
		off = to;
	}
	return total;
}
