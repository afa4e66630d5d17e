/* SPDX-License-Identifier: ISC
 * The segment list of an open filter: which segments exist, which are
 * live, which takes adds; and the two ways the list changes, growth and
 * rotation, which several processes may attempt at once.
 *
 * Growth.  When the newest segment of a growable filter is full, one
 * process (the one holding the lock on byte 0 of the file) allocates the
 * next segment at the end of the file, writes its table entry, and only
 * then raises the segment count.  A process killed before that leaves a
 * file a little longer than its segments, which the next growth reuses.
 * Others see the new count before their next batch and map the segment.
 *
 * Windows.  A window of G generations keeps one segment per generation.
 * Generation e covers the times created + e W / (G - 1) onwards; the
 * generation now is the later of the clock's and the one the file says,
 * and generations more than G - 1 behind it are expired: empty to every
 * reader, whether or not anyone has written since.  A writer that finds
 * the clock ahead rotates: clears the segments of expired generations and
 * gives them the new ones.  It does so holding byte 0 and, for writing,
 * byte 1, which every adder holds for reading while it adds a chunk; an
 * adder takes byte 0 briefly first, so that a waiting rotation is not
 * starved by adders that keep coming.  So no chunk is ever added into a
 * generation being cleared.
 *
 * Grown generations.  A generation that fills before its time does not
 * close early, which would push the oldest lines out of the window before
 * the window is over: it takes another segment, entry G or later of the
 * table, stamped with the same generation and sized as a generation (the
 * j-th extra entry for 2^min(j, 5) times its capacity, so that a large
 * burst needs few), at a generation's rate.  An extra segment lives and
 * expires with its generation; the next one that fills takes an expired
 * extra segment over before appending one; and a rotation gives back the
 * room of the extra segments at the end of the file once they have been
 * expired a whole generation (so that no reader that saw them live a
 * moment ago is still testing them): it lowers the count, then truncates.
 * Only when the table is full or the file would pass its size limit
 * (max_bytes) does a generation close early, as it did before.
 *
 * A layout may keep a window's generations in one array (the
 * age-partitioned one, ages.c).  Entries 0 to G - 1 then keep their
 * stamps, counters and liveness as above, but all describe that array,
 * mapped once; the layout's window operations (layout.h: follow,
 * mend_from, clear) say which of its slots a reader counts and which a
 * rotation empties, in rotate_to's order, instead of clearing segments.
 * Grown generations are extra segments of the blocked layout, as above.
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/memory.h"
#include "store/holes.h"
#include "store/handle.h"
#include "store/layout.h"
#include "store/locks.h"
#include "store/plan.h"
#include "store/segments.h"
#include "store/timing.h"

#define LOCK_LIST	0	/* byte held to grow or rotate */
#define LOCK_ADD	1	/* byte adders of a window hold */
#define LOCK_READERS	2	/* byte readers of a window hold */
#define ROOM_SHARE	32	/* an adder takes room / this keys at a time */

static uint64_t *
head_word(const struct bloom *b, uint64_t off)
{
	return (uint64_t *)(b->head + off);
}

/* Maps segment i, whose entry is valid, as b->hdr.seg[i] has it, with
 * its layout's table: the generations of a window whose layout shares
 * one array (age-partitioned) share the first one's map. */
static int
map_one(struct bloom *b, unsigned i)
{
	struct segment *sg = &b->seg[i];
	int prot = PROT_READ | (b->writable ? PROT_WRITE : 0);

	sg->info = b->hdr.seg[i];
	sg->layout = layout_of(&b->hdr, i);
	sg->whole = sg->info.nblocks;
	sg->lo = 0;
	if (b->hdr.slices != 0) {
		sg->whole = b->hdr.whole_nblocks;
		sg->lo = b->hdr.slice * sg->info.nblocks;
	}
	if (b->hdr.version == FORMAT_V1) {
		sg->bits = b->head + V1_HEADER_SIZE;
		sg->inserted = head_word(b, V1_OFF_INSERTED);
		sg->stamp = NULL;
		return BLOOM_OK;
	}
	sg->map_size = (size_t)(sg->info.nblocks * BLOCK_BYTES);
	sg->inserted = head_word(b, format_slot_offset(i) +
	    SLOT_OFF_INSERTED);
	sg->stamp = head_word(b, format_slot_offset(i) + SLOT_OFF_STAMP);
	if (sg->layout->shared && i > 0) {
		sg->map = NULL;
		sg->bits = b->seg[0].bits;
		sg->layout->attach(sg, &b->hdr);
		return BLOOM_OK;
	}
	sg->map = mmap(NULL, sg->map_size, prot, MAP_SHARED, b->fd,
	    (off_t)sg->info.offset);
	if (sg->map == MAP_FAILED) {
		sg->map = NULL;
		return BLOOM_ERRNO;
	}
#ifdef MADV_HUGEPAGE
	/*
	 * Pages read in for a read-only mapping with this advice come as
	 * large folios, which any later mapping of the file uses whole: it
	 * halves the time of the next lookups in a filter of gigabytes.  Not
	 * for writing: write faults on a huge shared mapping cost more than
	 * they save.
	 */
	if (!b->writable && memory_fits(sg->map_size))
		madvise(sg->map, sg->map_size, MADV_HUGEPAGE);
#endif
	if (!b->writable && b->sparse && holes_hide(b->fd, sg->map,
	    sg->info.offset, sg->map_size) == -1) {
		munmap(sg->map, sg->map_size);
		sg->map = NULL;
		return BLOOM_ERRNO;
	}
	sg->bits = sg->map;
	sg->layout->attach(sg, &b->hdr);
	return BLOOM_OK;
}

int
segments_map(struct bloom *b)
{
	int s;

	if (b->hdr.nsegments > SIZE_MAX / BLOCK_BYTES)
		return BLOOM_ENSEGMENTS;
	while (b->nmapped < b->hdr.nsegments) {
		if ((s = map_one(b, b->nmapped)) != BLOOM_OK)
			return s;
		b->nmapped++;
	}
	return BLOOM_OK;
}

/* Unmaps the segments from index count on. */
static void
unmap_from(struct bloom *b, unsigned count)
{
	while (b->nmapped > count) {
		b->nmapped--;
		if (b->seg[b->nmapped].map != NULL)
			munmap(b->seg[b->nmapped].map,
			    b->seg[b->nmapped].map_size);
		b->seg[b->nmapped].map = NULL;
	}
}

void
segments_unmap(struct bloom *b)
{
	unmap_from(b, 0);
}

/*
 * Maps every page of the filter in one call.  For a filter in the page
 * cache that costs a fraction of a second for gigabytes, against a fault
 * per page otherwise, some ten times more for each page touched; so it is
 * done up front for a full scan and, for lookups, once they are many
 * enough to touch a good share of the pages (bloom.c).  Writable if
 * write, where the kernel can (5.14 on).  Advice only: failure changes
 * nothing but speed.
 */
static void
prefault_range(void *map, size_t size, int write)
{
#ifdef MADV_POPULATE_WRITE
	if (write && madvise(map, size, MADV_POPULATE_WRITE) == 0)
		return;
#endif
#ifdef MADV_POPULATE_READ
	if (madvise(map, size, MADV_POPULATE_READ) == 0)
		return;
#endif
	madvise(map, size, MADV_WILLNEED);
}

void
segments_prefault_one(const struct segment *s)
{
	prefault_range(s->map, s->map_size, 0);
}

void
segments_prefault(struct bloom *b)
{
	unsigned i;

	b->prefaulted = 1;
	if (b->hdr.version == FORMAT_V1)	/* its segment has no map */
		prefault_range(b->head, b->head_size, 0);
	for (i = 0; i < b->nmapped; i++)	/* see segments.h */
		if (b->seg[i].map != NULL && (!b->writable ||
		    !b->seg[i].layout->populate_writes))
			prefault_range(b->seg[i].map, b->seg[i].map_size, 0);
}

/*
 * The lookups so far have mapped pages to read (16 a fault, around the
 * page read), and a page mapped to read takes a write fault of its own to
 * be made writable, MADV_POPULATE_WRITE or not: 1.5 us a page.  Where
 * nothing is mapped, the populate maps a whole folio a fault: a 200 MiB
 * array (51,000 pages) copied by cp(1), read here and there, then made
 * writable, took 80 ms and 54,000 faults; unmapped first, 20 ms and 6,500.
 * (The same array as bloom made it, in larger folios: 1,800 faults
 * either way.)  The mapping is shared: unmapping drops only its entries,
 * the page cache keeps the bits, and those a store made dirty stay
 * dirty.
 */
int
segments_populates(const struct bloom *b)
{
	return b->writable && b->seg[0].layout->populate_writes;
}

void
segments_prefault_writes(struct bloom *b)
{
	b->populated = 1;
	if (!segments_populates(b))
		return;
#ifdef MADV_POPULATE_WRITE
	madvise(b->seg[0].map, b->seg[0].map_size, MADV_DONTNEED);
#endif
	prefault_range(b->seg[0].map, b->seg[0].map_size, 1);
}

/* Maps the segments another process appended since the last look. */
static int
map_appended(struct bloom *b, uint64_t count)
{
	unsigned char slot[SLOT_SIZE];
	struct stat st;
	uint64_t min_offset;
	int s;

	if (count > (b->hdr.mode == MODE_WINDOW ?
	    format_table_room(b->hdr.slots) : b->hdr.slots))
		return BLOOM_ENSEGMENTS;
	if (fstat(b->fd, &st) == -1)
		return BLOOM_ERRNO;
	while (b->nmapped < count) {
		min_offset = format_next_offset(&b->hdr.seg[b->nmapped - 1]);
		memcpy(slot, b->head + format_slot_offset(b->nmapped),
		    SLOT_SIZE);
		s = format_slot_parse(slot, b->nmapped, &b->hdr, min_offset,
		    (uint64_t)st.st_size, &b->hdr.seg[b->nmapped]);
		if (s != BLOOM_OK)
			return s;
		if ((s = map_one(b, b->nmapped)) != BLOOM_OK)
			return s;
		b->nmapped++;
		b->hdr.nsegments = b->nmapped;
	}
	return BLOOM_OK;
}

/* Returns 1 if segment i has taken as many keys as it was sized for. */
static int
is_full(const struct bloom *b, unsigned i)
{
	return format_word_load(b->seg[i].inserted) >=
	    b->seg[i].info.capacity;
}

/* Follows a window's segment count, which growth and rotation change. */
static int
window_follow(struct bloom *b, uint64_t file_epoch)
{
	uint64_t count = format_word_load(head_word(b, V2_OFF_NSEGMENTS));

	if (count < b->hdr.slots || count > format_table_room(b->hdr.slots))
		return BLOOM_ENSEGMENTS;
	/* An entry is valid if stamped no later than the file's epoch. */
	b->hdr.epoch = file_epoch;
	if (count > b->nmapped)
		return map_appended(b, count);
	unmap_from(b, (unsigned)count);
	b->hdr.nsegments = count;
	return BLOOM_OK;
}

/* Returns the layout of a window's generations (its first's), whose
 * window operations, where it has them, a rotation calls. */
static const struct layout *
generations(const struct bloom *b)
{
	return layout_of(&b->hdr, 0);
}

/* Returns the stamp of segment t, the generation now of window b, as an
 * adder is to see it: 0, so that the window is mended before it adds, if
 * its layout keeps the generations in one array and an earlier one was
 * published and not stamped (a rotation cut short, or a hand edit):
 * readers count no bit of such a generation, which an add now sets. */
static uint64_t
adder_stamp(const struct bloom *b, const struct segment *t)
{
	if (generations(b)->mend_from != NULL &&
	    generations(b)->mend_from(b, b->epoch, b->epoch) != b->epoch)
		return 0;
	return format_word_load(t->stamp);
}

/* Sets a window's target: the generation's own segment, or when that is
 * full, the first extra one holding the generation that is not, or the
 * last one holding it. */
static void
window_target(struct bloom *b)
{
	unsigned i;

	b->target = (unsigned)(b->epoch % b->hdr.slots);
	for (i = b->hdr.slots; i < b->nmapped; i++)
		if (is_full(b, b->target) &&
		    format_word_load(b->seg[i].stamp) == b->epoch + 1)
			b->target = i;
}

/* Returns 1 if segment i of a window holds a generation that is live
 * when the generation now is epoch. */
static int
generation_live(const struct bloom *b, unsigned i, uint64_t epoch)
{
	uint64_t stamp = format_word_load(b->seg[i].stamp);

	/* A stamp is 1 + the generation held, or 0 for none yet. */
	return stamp != 0 && stamp - 1 <= epoch &&
	    epoch - (stamp - 1) < b->hdr.slots;
}

int
segments_is_live(const struct bloom *b, unsigned i)
{
	unsigned li;

	for (li = 0; li < b->nlive; li++)
		if (b->live[li] == i)
			return 1;
	return 0;
}

/* Orders b->live by inserted counter, the fullest first: a present key
 * is then most often found in the first segment tested. */
static void
order_live(struct bloom *b)
{
	uint64_t ins[SEGMENTS_MAX];
	unsigned i, j, v;

	for (i = 0; i < b->nlive; i++)
		ins[i] = format_word_load(b->seg[b->live[i]].inserted);
	for (i = 1; i < b->nlive; i++) {
		uint64_t key = ins[i];

		v = b->live[i];
		for (j = i; j > 0 && ins[j - 1] < key; j--) {
			ins[j] = ins[j - 1];
			b->live[j] = b->live[j - 1];
		}
		ins[j] = key;
		b->live[j] = v;
	}
}

/* Sets the live segments and the target of window b at generation
 * b->epoch, the file's newest being file_epoch, and for an
 * age-partitioned window which of its slots count (ages.c). */
static void
window_live(struct bloom *b, uint64_t file_epoch)
{
	unsigned i;

	b->nlive = 0;
	for (i = 0; i < b->nmapped; i++)
		if (generation_live(b, i, b->epoch))
			b->live[b->nlive++] = i;
	window_target(b);
	if (generations(b)->follow != NULL)
		generations(b)->follow(b, file_epoch);
	order_live(b);
}

int
segments_refresh(struct bloom *b)
{
	uint64_t count, file_epoch;
	unsigned i;
	int s;

	switch (b->hdr.mode) {
	case MODE_FIXED:
		b->nlive = 1;
		b->live[0] = b->target = 0;
		return BLOOM_OK;
	case MODE_GROW:
		count = format_word_load(head_word(b, V2_OFF_NSEGMENTS));
		if (count > b->nmapped &&
		    (s = map_appended(b, count)) != BLOOM_OK)
			return s;
		b->nlive = b->nmapped;
		for (i = 0; i < b->nmapped; i++)
			b->live[i] = i;
		b->target = b->nmapped - 1;
		break;
	case MODE_WINDOW:
		/* Another process may have written anything there. */
		file_epoch = format_epoch(b->head);
		if (file_epoch > EPOCH_MAX)
			return BLOOM_EEPOCH;
		b->hdr.base_ms = format_word_load(head_word(b, V2_OFF_BASE));
		b->epoch = timing_epoch(&b->hdr, now_ms());
		if (b->epoch > EPOCH_MAX)
			b->epoch = EPOCH_MAX;
		if (b->epoch < file_epoch)
			b->epoch = file_epoch;
		if ((s = window_follow(b, file_epoch)) != BLOOM_OK)
			return s;
		window_live(b, file_epoch);
		return BLOOM_OK;
	}
	order_live(b);
	return BLOOM_OK;
}

/* Empties segment i: its bits and its counter. */
static void
clear_segment(struct bloom *b, unsigned i)
{
	struct segment *sg = &b->seg[i];

#ifdef FALLOC_FL_ZERO_RANGE
	/* Zeroing the range in the file costs no write of the old pages. */
	if (fallocate(b->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
	    (off_t)sg->info.offset, (off_t)sg->map_size) == -1)
#endif
		memset(sg->bits, 0, sg->map_size);
	format_word_store(sg->inserted, 0);
}

/* Writes the header and table to stable storage. */
static int
sync_head(struct bloom *b)
{
	return msync(b->head, b->head_size, MS_SYNC) == -1 ? BLOOM_ERRNO :
	    BLOOM_OK;
}

/*
 * Writes to disk a segment's entry in the table and the space allocated
 * for it, before the count that makes it part of the filter: the header's
 * pages, and the file's size and allocation with them.  On Linux,
 * msync(MS_SYNC) of a range is fdatasync(2) of that range
 * (vfs_fsync_range): it writes the metadata fdatasync writes, but only
 * the dirty pages of the range.  fdatasync of the file wrote back every
 * page the adds had made dirty: an add --new whose generation filled
 * before its time waited 45 ms for a 200 MiB window's whole array
 * (bench/windows), whose pages were then clean and read-only, each a
 * write fault again at its next store.  The bits set are the kernel's to
 * write back, as ever without --sync (bloom(1)).
 */
static int
sync_space(struct bloom *b)
{
#ifdef __linux__
	return sync_head(b);
#else
	return fdatasync(b->fd) == -1 ? BLOOM_ERRNO : BLOOM_OK;
#endif
}

/* Returns 1 if extra segment i of a window holds no generation, or one
 * that has been expired for a whole generation when the newest is to. */
static int
long_expired(const struct bloom *b, unsigned i, uint64_t to)
{
	uint64_t stamp = format_word_load(b->seg[i].stamp);

	return stamp == 0 || (stamp - 1 < to && to - (stamp - 1) > b->hdr.slots);
}

/*
 * Gives back the room of the extra segments at the end of a window that
 * have been expired a whole generation when the newest is to: lowers the
 * count and writes it to disk, then truncates the file.  A process killed
 * between the two leaves a file longer than its segments, which the next
 * growth reuses.  Not while a reader holds LOCK_READERS: a test or stats
 * may take a long time over segments it found in the file, and a page cut
 * off under it would fail it; a later rotation gives the room back.
 * Called holding both locks.
 */
static int
give_back(struct bloom *b, uint64_t to)
{
	unsigned count;
	int s, taken;

	if ((taken = locks_try_byte(b, LOCK_READERS)) != 1)
		return taken == 0 ? BLOOM_OK : BLOOM_ERRNO;
	/* Another process may have appended segments this one has not
	 * mapped yet. */
	if ((s = window_follow(b, format_epoch(b->head))) != BLOOM_OK)
		goto out;
	count = b->nmapped;
	while (count > b->hdr.slots && long_expired(b, count - 1, to))
		count--;
	if (count == b->nmapped)
		goto out;
	format_word_store(head_word(b, V2_OFF_NSEGMENTS), count);
	if ((s = sync_head(b)) != BLOOM_OK)
		goto out;
	unmap_from(b, count);
	b->hdr.nsegments = count;
	if (ftruncate(b->fd, (off_t)format_segment_end(&b->hdr.seg[count -
	    1])) == -1)
		s = BLOOM_ERRNO;
out:
	locks_unbyte(b, LOCK_READERS);
	return s;
}

/*
 * Makes generation to the newest, if no process has gone further: first
 * publishes the new generation, which expires the generations it pushes
 * out, and writes it to disk; then clears their segments, and writes
 * that to disk; then stamps the segments with their new generations.  A
 * process killed, or a machine that stops, at any point leaves a file
 * whose live generations hold all their keys: the new epoch on disk
 * before any segment is cleared, the segments cleared on disk before any
 * says it holds a new generation (which also keeps a stamp on the
 * table's second page from reaching the disk before its epoch).  A
 * generation published but not yet stamped is empty to every reader,
 * and mended by the next adder.  Rotating past EPOCH_MAX is refused.
 */
static int
rotate_to(struct bloom *b, uint64_t to, unsigned event)
{
	uint64_t from, start, e, g = b->hdr.slots;
	int s = BLOOM_OK;

	if (locks_byte(b, F_WRLCK, LOCK_LIST) == -1)
		return BLOOM_ERRNO;
	if (locks_byte(b, F_WRLCK, LOCK_ADD) == -1) {
		s = BLOOM_ERRNO;
		goto out;
	}
	from = format_epoch(b->head);
	if (from > EPOCH_MAX) {
		s = BLOOM_EEPOCH;
		goto done;
	}
	if (to < from)
		to = from;
	if (to > EPOCH_MAX) {
		s = BLOOM_EEPOCH_LAST;
		goto done;
	}
	start = to >= g - 1 ? to - (g - 1) : 0;
	if (start <= from)
		start = from + 1;
	if (generations(b)->mend_from != NULL)
		start = generations(b)->mend_from(b, start, to);
	if (start > to) {
		/* Another process rotated first, unless the generation now
		 * is not stamped as such: then it is mended. */
		if (format_word_load(b->seg[to % g].stamp) == to + 1)
			goto done;
		start = to;
	}
	format_word_store(head_word(b, V2_OFF_EPOCH), to);
	if ((s = sync_head(b)) != BLOOM_OK)
		goto done;
	if (generations(b)->clear != NULL)
		generations(b)->clear(b, start, from, to);
	else
		for (e = start; e <= to; e++)
			clear_segment(b, (unsigned)(e % g));
	if (fdatasync(b->fd) == -1) {
		s = BLOOM_ERRNO;
		goto done;
	}
	for (e = start; e <= to; e++)
		format_word_store(b->seg[e % g].stamp, e + 1);
	b->events |= event;
	s = give_back(b, to);
done:
	locks_unbyte(b, LOCK_ADD);
out:
	locks_unbyte(b, LOCK_LIST);
	return s;
}

/*
 * Allocates len bytes of fd from offset on.  Past RLIMIT_FSIZE that is
 * an error, EFBIG, for the caller to report with the filter as it was,
 * not SIGXFSZ, which would kill the process without a word.  Returns 0
 * or an errno value.
 */
static int
allocate(int fd, uint64_t offset, uint64_t len)
{
	struct sigaction ign, old;
	int e;

	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGXFSZ, &ign, &old);
	e = posix_fallocate(fd, (off_t)offset, (off_t)len);
	sigaction(SIGXFSZ, &old, NULL);
	return e;
}

/*
 * Populated in bulk, with the advice, the pages come as large folios that
 * later mappings use whole, where the adds' faults would leave 4 KiB
 * pages for as long as the file stays cached.  On the 3 segments of 50 M
 * URLs grown by add (bench/growth), check -c of 10 M absent lines then
 * took 0.40 s of processor time against 0.45 (0.42 without the advice);
 * the add itself took the same time.  Advice only: failure changes
 * nothing but speed.
 */
void
segments_warm(int fd, uint64_t offset, uint64_t len)
{
	void *map;

	if (!memory_fits(len) || len > SIZE_MAX || offset > (uint64_t)
	    INT64_MAX)
		return;
	map = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd,
	    (off_t)offset);
	if (map == MAP_FAILED)
		return;
#ifdef MADV_HUGEPAGE
	madvise(map, (size_t)len, MADV_HUGEPAGE);
#endif
#ifdef MADV_POPULATE_READ
	madvise(map, (size_t)len, MADV_POPULATE_READ);
#else
	madvise(map, (size_t)len, MADV_WILLNEED);
#endif
	munmap(map, (size_t)len);
}

/*
 * Appends the next segment of a growable filter, unless another process
 * did so since the list was last refreshed.
 */
static int
grow(struct bloom *b)
{
	unsigned char slot[SLOT_SIZE];
	struct segment_info next;
	uint64_t count, offset;
	int s, e;

	if (locks_byte(b, F_WRLCK, LOCK_LIST) == -1)
		return BLOOM_ERRNO;
	count = format_word_load(head_word(b, V2_OFF_NSEGMENTS));
	if (count != b->nmapped) {
		s = BLOOM_OK;	/* another process grew it */
		goto out;
	}
	if (count >= b->hdr.slots) {
		s = BLOOM_ESEGMENTS_FULL;
		goto out;
	}
	offset = format_next_offset(&b->hdr.seg[count - 1]);
	if ((s = plan_segment(&b->hdr, (unsigned)count, offset, &next)) !=
	    BLOOM_OK)
		goto out;
	next.stamp = now_ms();
	if ((e = allocate(b->fd, offset, next.nblocks * BLOCK_BYTES)) != 0) {
		errno = e;
		s = BLOOM_ERRNO;
		goto out;
	}
	segments_warm(b->fd, offset, next.nblocks * BLOCK_BYTES);
	format_slot_build(slot, (unsigned)count, &next);
	memcpy(b->head + format_slot_offset((unsigned)count), slot, SLOT_SIZE);
	/* The entry and the space reach the disk before the count that
	 * makes them part of the filter (sync_space). */
	if ((s = sync_space(b)) != BLOOM_OK)
		goto out;
	format_word_store(head_word(b, V2_OFF_NSEGMENTS), count + 1);
	b->events |= SEG_EV_GREW;
out:
	locks_unbyte(b, LOCK_LIST);
	return s;
}

/* Returns the index of an extra segment of window b that no live
 * generation holds, or 0 if there is none. */
static unsigned
expired_extra(const struct bloom *b)
{
	unsigned i;

	for (i = b->hdr.slots; i < b->nmapped; i++)
		if (!generation_live(b, i, b->epoch))
			return i;
	return 0;
}

/* Appends an extra segment to window b for the generation now, if the
 * table has room and the file may grow.  Called holding both locks. */
static int
append_extra(struct bloom *b)
{
	unsigned char slot[SLOT_SIZE];
	struct segment_info next;
	uint64_t offset;
	unsigned count = b->nmapped;
	int s, e;

	if (count >= format_table_room(b->hdr.slots))
		return BLOOM_ESEGMENTS_FULL;
	offset = format_next_offset(&b->hdr.seg[count - 1]);
	if ((s = plan_segment(&b->hdr, count, offset, &next)) != BLOOM_OK)
		return s;
	if (b->hdr.max_bytes != 0 && format_segment_end(&next) >
	    b->hdr.max_bytes)
		return BLOOM_ETOOBIG;
	next.stamp = b->epoch + 1;
	if ((e = allocate(b->fd, offset, next.nblocks * BLOCK_BYTES)) != 0) {
		errno = e;
		return BLOOM_ERRNO;
	}
	format_slot_build(slot, count, &next);
	memcpy(b->head + format_slot_offset(count), slot, SLOT_SIZE);
	/* The entry and the space reach the disk before the count that
	 * makes them part of the filter (sync_space). */
	if ((s = sync_space(b)) != BLOOM_OK)
		return s;
	format_word_store(head_word(b, V2_OFF_NSEGMENTS), count + 1);
	return BLOOM_OK;
}

/*
 * Gives the generation now of window b, whose target is full before its
 * time, one more segment: an extra one no live generation holds, cleared
 * (on disk before it is stamped, as a rotation does), or a new one at the
 * end.  Unless another process did so first.  If neither can be, closes
 * the generation early instead.
 */
static int
widen(struct bloom *b)
{
	uint64_t epoch = b->epoch;
	unsigned i;
	int s;

	if (locks_byte(b, F_WRLCK, LOCK_LIST) == -1)
		return BLOOM_ERRNO;
	if (locks_byte(b, F_WRLCK, LOCK_ADD) == -1) {
		s = BLOOM_ERRNO;
		goto out;
	}
	if ((s = segments_refresh(b)) != BLOOM_OK || b->epoch != epoch ||
	    format_epoch(b->head) != epoch || !is_full(b, b->target))
		goto done;
	if ((i = expired_extra(b)) != 0) {
		clear_segment(b, i);
		if (fdatasync(b->fd) == -1) {
			s = BLOOM_ERRNO;
			goto done;
		}
		format_word_store(b->seg[i].stamp, epoch + 1);
	} else if ((s = append_extra(b)) != BLOOM_OK) {
		if (s != BLOOM_ESEGMENTS_FULL && s != BLOOM_ETOOBIG)
			goto done;
		locks_byte(b, F_UNLCK, LOCK_ADD);
		locks_byte(b, F_UNLCK, LOCK_LIST);
		return rotate_to(b, epoch + 1, SEG_EV_EARLY);
	}
	b->events |= SEG_EV_WIDENED;
done:
	locks_unbyte(b, LOCK_ADD);
out:
	locks_unbyte(b, LOCK_LIST);
	return s;
}

/* Takes the lock adders of a window hold, after passing the turnstile
 * that a rotation closes. */
static int
enter_add(struct bloom *b)
{
	if (locks_byte(b, F_RDLCK, LOCK_LIST) == -1)
		return -1;
	if (locks_byte(b, F_RDLCK, LOCK_ADD) == -1) {
		locks_byte(b, F_UNLCK, LOCK_LIST);
		return -1;
	}
	locks_byte(b, F_UNLCK, LOCK_LIST);
	return 0;
}

int
segments_grow_to(struct bloom *b, unsigned count)
{
	int s;

	while ((s = segments_refresh(b)) == BLOOM_OK && b->nmapped < count)
		if ((s = grow(b)) != BLOOM_OK)
			break;
	return s;
}

/* Returns how many of want keys an adder takes for a segment with room
 * for room more: a share of the room, since other processes may be adding
 * to it too, so that together they pass its capacity by little (by at
 * most a share each). */
static size_t
share_of(uint64_t room, size_t want)
{
	uint64_t share = room / ROOM_SHARE + 1;

	return want < share ? want : (size_t)share;
}

int
segments_begin_add(struct bloom *b, size_t want, size_t *take)
{
	const struct segment *t;
	uint64_t inserted, stamp, file_epoch;
	int s, rotated = 0;

	if (b->hdr.mode == MODE_FIXED) {
		*take = want;
		return BLOOM_OK;
	}
	if (b->hdr.mode == MODE_WINDOW && enter_add(b) == -1)
		return BLOOM_ERRNO;
	for (;;) {
		if ((s = segments_refresh(b)) != BLOOM_OK)
			break;
		t = &b->seg[b->target];
		inserted = format_word_load(t->inserted);
		if (b->hdr.mode == MODE_GROW) {
			if (inserted < t->info.capacity)
				break;
			if ((s = grow(b)) != BLOOM_OK)
				return s;
			continue;
		}
		file_epoch = format_epoch(b->head);
		/* Once it has rotated, an adder adds to the generation the
		 * file is at though the clock has gone on meanwhile: were a
		 * rotation slower than a generation, it would otherwise
		 * rotate for ever and add nothing. */
		if (rotated && file_epoch < b->epoch) {
			b->epoch = file_epoch;
			window_live(b, file_epoch);
			t = &b->seg[b->target];
			inserted = format_word_load(t->inserted);
		}
		stamp = adder_stamp(b, t);
		if (file_epoch == b->epoch && stamp == b->epoch + 1 &&
		    inserted < t->info.capacity)
			break;
		/* Due, or the generation is full before its time. */
		locks_byte(b, F_UNLCK, LOCK_ADD);
		if (file_epoch == b->epoch && stamp == b->epoch + 1)
			s = widen(b);
		else {
			s = rotate_to(b, b->epoch, 0);
			rotated = 1;
		}
		if (s != BLOOM_OK)
			return s;
		if (enter_add(b) == -1)
			return BLOOM_ERRNO;
	}
	if (s != BLOOM_OK) {
		segments_end_add(b);
		return s;
	}
	*take = share_of(t->info.capacity - inserted, want);
	return BLOOM_OK;
}

void
segments_end_add(struct bloom *b)
{
	if (b->hdr.mode == MODE_WINDOW)
		locks_byte(b, F_UNLCK, LOCK_ADD);
}

void
segments_count(struct bloom *b, unsigned i, uint64_t fresh)
{
	struct segment *sg = &b->seg[i];
	uint64_t before;

	if (fresh == 0)
		return;
	before = format_word_add(sg->inserted, fresh);
	if (b->hdr.mode == MODE_FIXED && before <= sg->info.capacity &&
	    before + fresh > sg->info.capacity) {
		b->events |= SEG_EV_FULL;
		b->full_fpr = params_fpr(before + fresh, sg->info.nblocks,
		    sg->info.hashes);
	}
}

void
segments_raise(struct bloom *b, unsigned i, uint64_t count)
{
	struct segment *sg = &b->seg[i];
	uint64_t old = format_word_raise(sg->inserted, count);

	/* A count from the fill scatters around the truth: only a rate
	 * past the target is worth a warning. */
	if (old >= count)
		return;
	if (b->hdr.mode == MODE_FIXED && old <= sg->info.capacity &&
	    count > sg->info.capacity) {
		b->full_fpr = params_fpr(count, sg->info.nblocks,
		    sg->info.hashes);
		if (b->full_fpr > sg->info.target_fpr)
			b->events |= SEG_EV_FULL;
	}
}

int
segments_hold(struct bloom *b)
{
	int s;

	if (b->hdr.mode != MODE_WINDOW)
		return BLOOM_OK;
	/* First the generation the clock says, as an add would start it. */
	if ((s = segments_refresh(b)) != BLOOM_OK)
		return s;
	if ((format_epoch(b->head) != b->epoch ||
	    adder_stamp(b, &b->seg[b->epoch % b->hdr.slots]) !=
	    b->epoch + 1) && (s = rotate_to(b, b->epoch, 0)) != BLOOM_OK)
		return s;
	if (enter_add(b) == -1)
		return BLOOM_ERRNO;
	return segments_refresh(b);
}

void
segments_unhold(struct bloom *b)
{
	segments_end_add(b);
}

int
segments_read_begin(struct bloom *b)
{
	if (b->hdr.mode == MODE_WINDOW && locks_byte(b, F_RDLCK, LOCK_READERS) ==
	    -1)
		return BLOOM_ERRNO;
	return segments_refresh(b);
}

void
segments_read_end(struct bloom *b)
{
	if (b->hdr.mode == MODE_WINDOW)
		locks_unbyte(b, LOCK_READERS);
}

int
segments_rotate(struct bloom *b)
{
	uint64_t base;
	int s;

	if (b->hdr.mode != MODE_WINDOW)
		return BLOOM_EMODE;
	if ((s = segments_refresh(b)) != BLOOM_OK)
		return s;
	if ((s = rotate_to(b, b->epoch + 1, 0)) != BLOOM_OK ||
	    (base = timing_restart(&b->hdr, format_epoch(b->head),
	    now_ms())) == 0)
		return s;
	/* The generation started by hand starts now (timing.c). */
	format_word_store(head_word(b, V2_OFF_BASE), base);
	return sync_head(b);
}
