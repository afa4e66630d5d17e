/* SPDX-License-Identifier: ISC
 * Claims: which live adder of a filter writes a new line that several
 * add at once.  add --new tests a chunk of keys, writes the new ones and
 * only then sets their bits (at least once: a line is never marked seen
 * before it is written), so two adders of the same stream would both find
 * a key new.  While more than one adder is there, each claims the new
 * keys of its chunk before it writes them, in a table every adder of the
 * filter maps, and tests them again once claimed:
 *
 *	test, claim, test again, write, set the bits, let go of the claims.
 *
 * A key another live adder holds is lost to it; one whose bits were set
 * since the first test was written by another.  Whoever claims a key
 * after its holder let go finds its bits set; whoever claims it before
 * finds the claim.  So of the live adders one writes each line.  A claim
 * whose adder died (killed, or crashed) is disregarded: the key was not
 * marked seen, so another adder, or the next run, writes it.  What a
 * death can cause is a repeat (the dead adder wrote the line, nobody set
 * its bits), never a loss.
 *
 * The table is a file in /dev/shm named for the filter's device, inode
 * and header checksum, HEAD_BYTES of adders' slots and then NBUCKETS
 * buckets of one cache line: a lock word and BUCKET_KEYS claims.  A claim
 * is a word: the claimer's slot and 16 bits of that slot's generation,
 * and 42 bits of the key's hash.  Its trust follows the filter's: only
 * who may read the filter knows the checksum; a table is made unnamed
 * and whole, with the filter's group if that group may write it, then
 * linked; one found is used only if made by, and open only to, those who
 * may write the filter.  Where there is none to trust, or adders of the
 * filter use another table (a /dev/shm of their own), chunks go alone
 * through the gate (GATE_BYTE below), which needs no table.  An adder holds an open file description lock (F_OFD_SETLK) on
 * the byte of its slot for as long as it lives: the kernel lets go of it
 * when the adder dies however it dies, which is how the others tell.  The
 * last adder to leave removes the table, whether it exits or SIGTERM,
 * SIGINT or SIGHUP ends it; one killed otherwise leaves it for the next
 * adder of the filter to remove when it leaves.
 *
 * Claims cost a shared cache miss a key, so an adder alone claims
 * nothing: it says so in its slot (unclaimed) for each chunk, and one
 * that joins waits until every chunk of that kind is over (a second at
 * most: then its chunks go through the gate while one lasts).  A chunk that
 * sees another adder in the count (adders) claims.  The store of one
 * and the load of the other are sequentially consistent, so one of the
 * two always sees the other.  A chunk begins before its keys are tested:
 * an adder leaves only after it set the bits of its last chunk, so a
 * chunk that begins alone finds in its test every line the adders that
 * left wrote.  (Begun after the test, a chunk tested while another adder
 * was at work but begun once it had left claimed nothing and wrote its
 * lines again.)  Once tested, a chunk begun alone looks at the count
 * again: if an adder joined meanwhile, it claims its new keys and tests
 * them again as any other, and the joiner goes on, rather than waiting
 * for its lines to be written (to a reader that may not read).
 */
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/claims.h"
#include "store/handle.h"
#include "store/locks.h"
#include "lib/endian.h"

#define MAGIC		0x32736d69616c6362ULL	/* "bclaims2" */
#define OWNERS		63		/* adders at once that claim */
#define NBUCKETS	((uint64_t)1 << 16)
#define BUCKET_KEYS	7		/* claims a bucket holds */
#define HEAD_BYTES	4096
#define TABLE_BYTES	(HEAD_BYTES + NBUCKETS * 64)
#define FP_BITS		42		/* of the key's hash in a claim */
#define FP_MASK		(((uint64_t)1 << FP_BITS) - 1)
#define GEN_MASK	0xffffu		/* of a slot's generation in a claim */
#define PATH_SIZE	96		/* bytes of a table's name */
#define SPINS		1000		/* tries at a bucket's lock before
					 * asking if its holder lives */
#define TICK_NS		1000000L	/* between tries of a wait */

/*
 * Bytes of the filter's own file, far past its end (locks.c holds 2^62),
 * that adders lock.  The gate: held shared by a chunk that shares out its
 * keys through a table, exclusively by one that cannot (no table it may
 * trust, adders of the filter with another table, a chunk whose claims
 * overflow the table).  The ids: each adder holds a shared lock on the
 * byte of its table for as long as it adds (ID_NONE without one), so that
 * one adder sees that another shares out its keys elsewhere.
 */
#define GATE_BYTE	(((off_t)1 << 62) + 1)
#define ID_BASE		(((off_t)1 << 62) + ((off_t)1 << 40))
#define ID_SPAN		((off_t)1 << 40)
#define ID_NONE		(ID_SPAN - 1)

/* An adder's slot. */
struct slot {
	uint64_t gen;		/* bumped by each adder that takes it */
	uint64_t unclaimed;	/* 1 during a chunk that claims nothing */
	uint64_t dirty;		/* 1 while an adder has it: one that finds
				 * it set took the slot of a dead one, and
				 * clears its claims */
	uint64_t pad[5];
};

/* The table's first HEAD_BYTES. */
struct head {
	uint64_t magic;		/* MAGIC */
	uint64_t adders;	/* live adders, as counted at the last join
				 * or leave */
	uint64_t pad[6];
	struct slot slot[OWNERS];
};

_Static_assert(sizeof(struct head) == HEAD_BYTES, "head fills its page");
_Static_assert(TABLE_BYTES == BLOOM_CLAIMS_BYTES, "bloom.h has its size");

struct claims {
	struct bloom *b;	/* the filter, whose locks we take */
	char path[PATH_SIZE];	/* the table's name */
	int fd;			/* the table, holding our slot's lock, or
				 * -1: every chunk of ours takes the gate */
	unsigned char *map;	/* the table, mapped, or NULL */
	struct head *head;	/* its head */
	unsigned slot;		/* our slot */
	uint64_t tag;		/* our claims' high bits: slot + 1 and gen */
	off_t id;		/* the byte of our table among the ids */
	int gated;		/* this chunk holds the gate exclusively */
	int in_chunk;		/* between claims_begin and claims_end */
	int told;		/* b->on_claims_wait was called */
	int wary;		/* an adder's chunk begun alone outlasted
				 * our join's wait: our chunks take the gate
				 * while one such is in the table */
	uint64_t stale;		/* a bucket lock word found held a second
				 * in this chunk: taken over at once
				 * wherever found, until the chunk ends */
	signed char alive[OWNERS];	/* this chunk: whether each slot's
				 * adder lives, -1 if not asked yet */
};

/* ==== Locks ==== */

/* Asks for (cmd F_OFD_GETLK) or sets (F_OFD_SETLK) a lock of type on
 * bytes [start, start + len) of fd.  Returns what fcntl(2) does; for a
 * question, *type is what holds them, F_UNLCK if nothing. */
static int
lock_range(int fd, int cmd, short *type, off_t start, off_t len)
{
	struct flock fl;
	int rc;

	memset(&fl, 0, sizeof fl);
	fl.l_type = *type;
	fl.l_whence = SEEK_SET;
	fl.l_start = start;
	fl.l_len = len;
	while ((rc = fcntl(fd, cmd, &fl)) == -1 && errno == EINTR)
		;
	*type = fl.l_type;
	return rc;
}

/* Takes a lock of type on byte which of the filter, waiting for other
 * processes as long as they hold it, told after a second.  Returns 0, or
 * -1 with errno set (a file system without such locks). */
static int
filter_lock(struct claims *c, short type, off_t which)
{
	struct timespec start;
	short t = type;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (lock_range(c->b->fd, F_OFD_SETLK, &t, which, 1) == -1) {
		if (errno != EAGAIN && errno != EACCES)
			return -1;
		locks_wait_tick(c->b, &start, TICK_NS, &c->told);
		t = type;
	}
	return 0;
}

static void
filter_unlock(struct claims *c, off_t which)
{
	short t = F_UNLCK;

	(void)lock_range(c->b->fd, F_OFD_SETLK, &t, which, 1);
}

/* Returns 1 if a process other than us holds a lock on an id other than
 * ours: an adder that shares out its keys in another table, or none. */
static int
foreign_adder(struct claims *c)
{
	short t = F_WRLCK;

	if (lock_range(c->b->fd, F_OFD_GETLK, &t, ID_BASE, c->id) == -1 ||
	    t != F_UNLCK)
		return 1;
	t = F_WRLCK;
	if (lock_range(c->b->fd, F_OFD_GETLK, &t, ID_BASE + c->id + 1,
	    ID_SPAN - c->id - 1) == -1 || t != F_UNLCK)
		return 1;
	return 0;
}

/* Returns 1 if the adder whose slot's byte is i holds its lock (not us:
 * our own lock never conflicts), else 0. */
static int
slot_locked(int fd, unsigned i)
{
	short t = F_WRLCK;

	if (lock_range(fd, F_OFD_GETLK, &t, (off_t)i, 1) == -1)
		return 1;	/* cannot tell: assume it lives */
	return t != F_UNLCK;
}

/* Counts the adders that live, us included if mine. */
static uint64_t
count_live(struct claims *c, int mine)
{
	uint64_t n = mine ? 1 : 0;
	unsigned i;

	for (i = 0; i < OWNERS; i++)
		if (i != c->slot && slot_locked(c->fd, i))
			n++;
	return n;
}

/* Returns 1 if the claim (or lock) word w is of an adder that lives: as
 * first asked in this chunk, or as now if fresh. */
static int
owner_lives(struct claims *c, uint64_t w, int fresh)
{
	unsigned slot = (unsigned)(w >> 58) - 1;
	uint64_t gen = w >> FP_BITS & GEN_MASK;

	if (slot >= OWNERS)
		return 0;
	if ((__atomic_load_n(&c->head->slot[slot].gen, __ATOMIC_ACQUIRE) &
	    GEN_MASK) != gen)
		return 0;	/* its slot was taken again since */
	if (slot == c->slot)
		return 1;
	if (fresh || c->alive[slot] < 0)
		c->alive[slot] = (signed char)slot_locked(c->fd, slot);
	return c->alive[slot];
}

/* Returns the ms since start by the monotonic clock. */
static int64_t
ms_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)(now.tv_sec - start->tv_sec) * 1000 +
	    (now.tv_nsec - start->tv_nsec) / 1000000;
}

/* Returns 1 if the adder in slot i, not ours, is in a chunk it began
 * alone, claiming nothing. */
static int
alone_elsewhere(struct claims *c, unsigned i)
{
	return i != c->slot && __atomic_load_n(&c->head->slot[i].unclaimed,
	    __ATOMIC_SEQ_CST) && slot_locked(c->fd, i);
}

/* ==== The table: where it is, whom it is trusted from ==== */

/* The name of the claim table of the filter with status st and header
 * checksum sum: the checksum is of its seed and its time of making, so
 * that a filter made again on the same inode has a table of its own, and
 * no one who cannot read the filter knows its table's name. */
static void
table_path(char *path, size_t size, const struct stat *st, uint64_t sum)
{
	snprintf(path, size, "/dev/shm/bloom-claims-%jx-%jx-%016" PRIx64,
	    (uintmax_t)st->st_dev, (uintmax_t)st->st_ino, sum);
}

/* Returns 1 if the table t may be trusted by an adder of the filter f:
 * made by one who may write the filter, and open to no one who may not;
 * else 0. */
static int
table_trusted(const struct stat *t, const struct stat *f)
{
	int group = (f->st_mode & S_IWGRP) && t->st_gid == f->st_gid;
	int others = (f->st_mode & S_IWOTH) != 0;

	if (!S_ISREG(t->st_mode) || t->st_size != (off_t)TABLE_BYTES ||
	    t->st_nlink > 1)
		return 0;
	if (t->st_uid != f->st_uid && t->st_uid != geteuid() &&
	    t->st_uid != 0 && !group && !others)
		return 0;
	if ((t->st_mode & 0070) != 0 && !group)
		return 0;
	return (t->st_mode & 0007) == 0 || others;
}

/* Makes the table at c->path, whole (no hole for a full /dev/shm to turn
 * into SIGBUS) before anyone can see it.  Returns its descriptor, or -1
 * with errno set (EEXIST: another adder made it first). */
static int
table_make(struct claims *c, const struct stat *f)
{
	char proc[64];
	mode_t mode = 0600;
	unsigned char *map;
	int fd, e;

	fd = open("/dev/shm", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd == -1)
		return -1;
	if ((f->st_mode & S_IWGRP) && fchown(fd, (uid_t)-1, f->st_gid) == 0)
		mode |= 0060;
	if (f->st_mode & S_IWOTH)
		mode |= 0006;
	if (fchmod(fd, mode) == -1 ||
	    (errno = posix_fallocate(fd, 0, TABLE_BYTES)) != 0)
		goto fail;
	map = mmap(NULL, TABLE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
	    0);
	if (map == MAP_FAILED)
		goto fail;
	((struct head *)map)->magic = MAGIC;
	munmap(map, TABLE_BYTES);
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, c->path, AT_SYMLINK_FOLLOW) ==
	    -1 && (errno == EEXIST || linkat(fd, "", AT_FDCWD, c->path,
	    AT_EMPTY_PATH) == -1))
		goto fail;
	return fd;
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

/* Opens the table at c->path, or makes it, and takes its flock
 * exclusively, waiting for the adders that hold it, told after a second.
 * Returns 0, or -1 if there is no table to trust. */
static int
table_open(struct claims *c, const struct stat *f)
{
	struct timespec start;
	struct stat own;
	unsigned tries;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (tries = 0; tries < 100; tries++) {
		c->fd = open(c->path, O_RDWR | O_CLOEXEC | O_NOFOLLOW |
		    O_NOCTTY | O_NONBLOCK);
		if (c->fd == -1 && errno == ENOENT &&
		    (c->fd = table_make(c, f)) == -1 && errno == EEXIST)
			continue;
		/* Whoever may not write the filter has no say in it: a
		 * table it made, or may open, is never locked or mapped. */
		if (c->fd == -1 || fstat(c->fd, &own) == -1 ||
		    !table_trusted(&own, f))
			return -1;
		while (flock(c->fd, LOCK_EX | LOCK_NB) == -1) {
			if (errno != EWOULDBLOCK && errno != EINTR)
				return -1;
			locks_wait_tick(c->b, &start, TICK_NS, &c->told);
		}
		/* The last adder to leave removes the table (claims_leave),
		 * under its lock: one opened just before is then no one's,
		 * and is opened again. */
		if (fstat(c->fd, &own) == 0 && own.st_nlink > 0)
			return 0;
		close(c->fd);
		c->fd = -1;
	}
	return -1;
}

/* Clears what claims of our slot an adder that died there left. */
static void
clear_dead_claims(struct claims *c)
{
	uint64_t b, *bucket, w;
	unsigned j;

	for (b = 0; b < NBUCKETS; b++) {
		bucket = (uint64_t *)(c->map + HEAD_BYTES + b * 64);
		for (j = 0; j <= BUCKET_KEYS; j++) {
			w = __atomic_load_n(&bucket[j], __ATOMIC_RELAXED);
			if (w != 0 && (unsigned)(w >> 58) == c->slot + 1 &&
			    w != c->tag)
				(void)__atomic_compare_exchange_n(&bucket[j],
				    &w, 0, 0, __ATOMIC_SEQ_CST,
				    __ATOMIC_RELAXED);
		}
	}
}

/* Takes a slot in the table c->fd holds locked.  Returns 0, or -1 if
 * the table is not one or is full. */
static int
table_enter(struct claims *c)
{
	short t;
	unsigned i;

	c->map = mmap(NULL, TABLE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED,
	    c->fd, 0);
	if (c->map == MAP_FAILED) {
		c->map = NULL;
		return -1;
	}
	c->head = (struct head *)c->map;
	if (c->head->magic != MAGIC)
		return -1;
	/* The first slot whose lock is free is ours. */
	for (i = 0; i < OWNERS; i++) {
		t = F_WRLCK;
		if (lock_range(c->fd, F_OFD_SETLK, &t, (off_t)i, 1) == 0)
			break;
	}
	if (i == OWNERS)
		return -1;
	c->slot = i;
	c->tag = (uint64_t)(i + 1) << 58 |
	    ((__atomic_add_fetch(&c->head->slot[i].gen, 1, __ATOMIC_SEQ_CST) &
	    GEN_MASK) << FP_BITS);
	if (__atomic_exchange_n(&c->head->slot[i].dirty, 1, __ATOMIC_SEQ_CST))
		clear_dead_claims(c);
	__atomic_store_n(&c->head->slot[i].unclaimed, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&c->head->adders, count_live(c, 1), __ATOMIC_SEQ_CST);
	return 0;
}

/* Mixes a table's device and inode into its byte among the ids. */
static off_t
table_id(int fd)
{
	struct stat st;
	uint64_t h;

	if (fstat(fd, &st) == -1)
		return ID_NONE;
	h = ((uint64_t)st.st_dev * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)st.st_ino;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (off_t)(h % (uint64_t)ID_NONE);
}

/* ==== Signals ==== */

/*
 * SIGTERM, SIGINT and SIGHUP end an adder as kill -9 would as far as its
 * lines go (a line it wrote but did not mark seen is written again by the
 * next adder), but first it leaves the table as claims_leave does, with
 * system calls alone: the last adder to go removes it, whatever ends it.
 * Then it dies of the signal, as it would have.
 */
static const int leave_signals[] = { SIGTERM, SIGINT, SIGHUP };
#define NSIGNALS	(sizeof leave_signals / sizeof leave_signals[0])
static struct claims *volatile joined;	/* the table joined, or NULL */
static struct sigaction saved[NSIGNALS];	/* the actions before */

/* Lets go of our slot's lock. */
static void
slot_unlock(struct claims *c)
{
	short t = F_UNLCK;

	(void)lock_range(c->fd, F_OFD_SETLK, &t, (off_t)c->slot, 1);
}

static void
leave_on_signal(int sig)
{
	struct timespec tick = { 0, 10 * TICK_NS };
	struct claims *c = joined;
	int e = errno, tries = 0;
	unsigned i;

	/* A second at most for the table's lock (a joiner holds it a few
	 * system calls): then the table is left, as kill -9 leaves it. */
	while (c != NULL && flock(c->fd, LOCK_EX | LOCK_NB) == -1 &&
	    ++tries < 100)
		nanosleep(&tick, NULL);
	if (c != NULL && tries < 100) {
		slot_unlock(c);
		for (i = 0; i < OWNERS && !slot_locked(c->fd, i); i++)
			;
		if (i == OWNERS)
			(void)unlink(c->path);
		(void)flock(c->fd, LOCK_UN);
	}
	signal(sig, SIG_DFL);
	raise(sig);
	errno = e;
}

/* Leaves the table c on the signals that end us, from now on: those
 * ignored stay so. */
static void
claims_hold(struct claims *c)
{
	struct sigaction sa;
	unsigned i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = leave_on_signal;
	sigfillset(&sa.sa_mask);
	joined = c;
	for (i = 0; i < NSIGNALS; i++)
		if (sigaction(leave_signals[i], NULL, &saved[i]) == 0 &&
		    saved[i].sa_handler != SIG_IGN)
			sigaction(leave_signals[i], &sa, NULL);
}

/* Gives the signals back the actions they had before claims_hold. */
static void
claims_unhold(struct claims *c)
{
	unsigned i;

	if (joined != c)
		return;
	for (i = 0; i < NSIGNALS; i++)
		if (saved[i].sa_handler != SIG_IGN)
			sigaction(leave_signals[i], &saved[i], NULL);
	joined = NULL;
}

/* ==== Joining and leaving ==== */

struct claims *
claims_join(struct bloom *b)
{
	struct timespec start;
	struct stat st;
	struct claims *c;
	unsigned i;

	if ((c = calloc(1, sizeof *c)) == NULL)
		return NULL;
	c->b = b;
	c->fd = -1;
	c->id = ID_NONE;
	if (fstat(b->fd, &st) == -1)
		goto alone;
	table_path(c->path, sizeof c->path, &st, b->hdr.checksum);
	if (table_open(c, &st) == -1 || table_enter(c) == -1) {
		if (c->map != NULL)
			munmap(c->map, TABLE_BYTES);
		if (c->fd != -1)
			close(c->fd);
		c->map = NULL;
		c->head = NULL;
		c->fd = -1;
		goto alone;
	}
	c->id = table_id(c->fd);
	flock(c->fd, LOCK_UN);
	/* Wait out the chunks other adders began alone, a second at most:
	 * one longer (an adder writing to a slow reader, or a flag written
	 * by hand) is waited for through the gate instead. */
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (i = 0; i < OWNERS && !c->wary; i++)
		while (!(c->wary = ms_since(&start) >= 1000) &&
		    alone_elsewhere(c, i))
			locks_wait_tick(b, &start, TICK_NS, &c->told);
	claims_hold(c);
alone:
	/* Held until we close the filter. */
	(void)filter_lock(c, F_RDLCK, ID_BASE + c->id);
	return c;
}

void
claims_leave(struct claims *c)
{
	uint64_t live;

	if (c == NULL)
		return;
	claims_unhold(c);
	if (c->map != NULL) {
		if (!c->in_chunk)
			__atomic_store_n(&c->head->slot[c->slot].dirty, 0,
			    __ATOMIC_SEQ_CST);
		if (flock(c->fd, LOCK_EX) == 0) {
			/* Our slot first, under the table's lock: of adders
			 * that leave together, the last to take it counts
			 * none and removes the table. */
			slot_unlock(c);
			live = count_live(c, 0);
			__atomic_store_n(&c->head->adders, live,
			    __ATOMIC_SEQ_CST);
			/* The last one out removes the table: 4 MiB of
			 * memory that would stay until a reboot.  One that
			 * joins meanwhile waits for this lock and then finds
			 * the table gone. */
			if (live == 0)
				(void)unlink(c->path);
			flock(c->fd, LOCK_UN);
		}
		munmap(c->map, TABLE_BYTES);
	}
	if (c->fd != -1)
		close(c->fd);	/* lets go of our slot */
	free(c);
}

void
claims_forget(int fd)
{
	unsigned char buf[8];
	char path[PATH_SIZE];
	struct stat st;
	off_t at;

	if (fstat(fd, &st) == -1 || pread(fd, buf, 4, 8) != 4)
		return;
	at = read_le32(buf) == FORMAT_V1 ? 64 : 128;
	if (pread(fd, buf, 8, at) != 8)
		return;
	table_path(path, sizeof path, &st, read_le64(buf));
	(void)unlink(path);
}

/* ==== Chunks ==== */

void
claims_start(struct bloom *b)
{
	if (!b->claims_tried) {
		b->claims_tried = 1;
		b->claims = claims_join(b);
	}
	b->claiming = b->claims != NULL && claims_begin(b->claims);
}

void
claims_done(struct bloom *b, const uint64_t *hashes,
    const unsigned char *isnew, size_t n)
{
	if (b->claims == NULL)
		return;
	if (b->claiming)
		claims_release(b->claims, hashes, isnew, n);
	claims_end(b->claims);
	b->claiming = 0;
}

int
claims_begin(struct claims *c)
{
	uint64_t *unclaimed;
	unsigned i;

	c->in_chunk = 1;
	if (c->wary) {
		for (i = 0; i < OWNERS && !alone_elsewhere(c, i); i++)
			;
		c->wary = i < OWNERS;
	}
	c->gated = c->map == NULL || c->wary || foreign_adder(c);
	if (filter_lock(c, c->gated ? F_WRLCK : F_RDLCK, GATE_BYTE) == -1) {
		/* No such locks here: claims are all there is. */
		if (c->map == NULL)
			return 0;
		c->gated = 0;
	}
	if (c->gated)
		return 0;	/* no other adder is in a chunk */
	unclaimed = &c->head->slot[c->slot].unclaimed;
	__atomic_store_n(unclaimed, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->head->adders, __ATOMIC_SEQ_CST) <= 1)
		return 0;
	__atomic_store_n(unclaimed, 0, __ATOMIC_SEQ_CST);
	memset(c->alive, -1, sizeof c->alive);
	c->stale = 0;
	return 1;
}

int
claims_late(struct claims *c)
{
	if (c->gated ||
	    __atomic_load_n(&c->head->adders, __ATOMIC_SEQ_CST) <= 1)
		return 0;
	memset(c->alive, -1, sizeof c->alive);
	c->stale = 0;
	return 1;
}

void
claims_end(struct claims *c)
{
	if (c->map != NULL)
		__atomic_store_n(&c->head->slot[c->slot].unclaimed, 0,
		    __ATOMIC_SEQ_CST);
	filter_unlock(c, GATE_BYTE);
	c->gated = 0;
	c->in_chunk = 0;
}

/* Returns the bucket of the key with hash h. */
static uint64_t *
bucket_of(struct claims *c, uint64_t h)
{
	uint64_t b = (h * 0x9e3779b97f4a7c15ULL) >> 48;

	return (uint64_t *)(c->map + HEAD_BYTES + b * 64);
}

/*
 * Takes bucket b's lock, from a dead holder too.  A live one holds it for
 * the few loads and stores of one claim: a word that stays a second is
 * not a holder's but a state no adder leaves (one written by hand, or by
 * a writer of the filter that means harm), or one of an adder stopped,
 * and is taken over, at once in every other bucket where it is found in
 * this chunk: a state written by hand costs a second a chunk.
 */
static void
lock_bucket(struct claims *c, uint64_t *b)
{
	struct timespec start;
	uint64_t held, first = 0;
	unsigned spins = 0;

	for (;;) {
		held = 0;
		if (__atomic_compare_exchange_n(&b[0], &held, c->tag, 0,
		    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			return;
		if (held == c->stale &&
		    __atomic_compare_exchange_n(&b[0], &held, c->tag, 0,
		    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			return;
		if (++spins % SPINS == 0) {
			/* Asked afresh: its holder may have died since it
			 * was last asked, holding the lock. */
			if (spins == SPINS || held != first) {
				first = held;
				clock_gettime(CLOCK_MONOTONIC, &start);
			}
			if (!owner_lives(c, held, 1) ||
			    ms_since(&start) >= 1000) {
				if (owner_lives(c, held, 0))
					c->stale = held;
				if (__atomic_compare_exchange_n(&b[0], &held,
				    c->tag, 0, __ATOMIC_SEQ_CST,
				    __ATOMIC_RELAXED))
					return;
			}
		}
		sched_yield();
	}
}

/* Lets go of the claims of the first n keys isnew marks 1. */
static void
release_keys(struct claims *c, const uint64_t *hashes,
    const unsigned char *isnew, size_t n)
{
	uint64_t *b, mine;
	size_t i;
	unsigned j;

	for (i = 0; i < n; i++) {
		if (isnew[i] != 1)
			continue;
		b = bucket_of(c, hashes[i]);
		mine = c->tag | (hashes[i] & FP_MASK);
		for (j = 1; j <= BUCKET_KEYS; j++)
			if (__atomic_load_n(&b[j], __ATOMIC_RELAXED) == mine) {
				__atomic_store_n(&b[j], 0, __ATOMIC_SEQ_CST);
				break;
			}
	}
}

/*
 * A chunk with more new keys than a bucket has room for (a sorted batch
 * claims hundreds of thousands at once) lets go of its claims and takes
 * the gate exclusively: once every other adder's chunk is over, none
 * tests or writes until it is, and its keys, tested again, are its own.
 * Returns 0, or -1 if the gate cannot be taken.
 */
static int
take_gate(struct claims *c, const uint64_t *hashes,
    const unsigned char *isnew, size_t n)
{
	release_keys(c, hashes, isnew, n);
	__atomic_store_n(&c->head->slot[c->slot].unclaimed, 0,
	    __ATOMIC_SEQ_CST);
	filter_unlock(c, GATE_BYTE);
	if (filter_lock(c, F_WRLCK, GATE_BYTE) == -1)
		return -1;
	c->gated = 1;
	return 0;
}

size_t
claims_take(struct claims *c, const uint64_t *hashes, unsigned char *isnew,
    size_t n, unsigned char lost)
{
	size_t i, claimed = 0;
	uint64_t *b, w, fp, *free_at;
	unsigned j;

	if (c->gated)
		return 0;
	for (i = 0; i < n; i++) {
		if (isnew[i] != 1)
			continue;
		fp = hashes[i] & FP_MASK;
		b = bucket_of(c, hashes[i]);
		lock_bucket(c, b);
		free_at = NULL;
		for (j = 1; j <= BUCKET_KEYS; j++) {
			w = __atomic_load_n(&b[j], __ATOMIC_SEQ_CST);
			if (w != 0 && (w & FP_MASK) == fp &&
			    (w >> FP_BITS == c->tag >> FP_BITS ||
			    owner_lives(c, w, 0))) {
				isnew[i] = lost;
				break;
			}
			if (free_at == NULL && (w == 0 ||
			    !owner_lives(c, w, 0)))
				free_at = &b[j];
		}
		if (isnew[i] == 1 && free_at != NULL) {
			__atomic_store_n(free_at, c->tag | fp,
			    __ATOMIC_SEQ_CST);
			claimed++;
		}
		__atomic_store_n(&b[0], 0, __ATOMIC_SEQ_CST);
		if (isnew[i] == 1 && free_at == NULL) {
			/* No room: the chunk goes alone instead, and its
			 * new keys are all to be tested again. */
			if (take_gate(c, hashes, isnew, i) == 0)
				return n;
			break;	/* no such locks: may be written twice */
		}
	}
	/* A chunk begun alone (claims_late) has claimed its keys: the
	 * adders that joined meanwhile may go on. */
	__atomic_store_n(&c->head->slot[c->slot].unclaimed, 0,
	    __ATOMIC_SEQ_CST);
	return claimed;
}

void
claims_release(struct claims *c, const uint64_t *hashes,
    const unsigned char *isnew, size_t n)
{
	if (!c->gated && c->map != NULL)
		release_keys(c, hashes, isnew, n);
}
