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
 * The table is a file in /dev/shm named for the filter's device and
 * inode, HEAD_BYTES of adders' slots and then NBUCKETS buckets of one
 * cache line: a lock word and BUCKET_KEYS claims.  A claim is a word: the
 * claimer's slot and that slot's generation, and 50 bits of the key's
 * hash.  An adder holds an open file description lock (F_OFD_SETLK) on
 * the byte of its slot for as long as it lives: the kernel lets go of it
 * when the adder dies however it dies, which is how the others tell.  The
 * last adder to leave removes the table; one killed leaves it for the
 * next adder of the filter to remove when it leaves.
 *
 * Claims cost a shared cache miss a key, so an adder alone claims
 * nothing: it says so in its slot (unclaimed) for each chunk, and one
 * that joins waits until every chunk of that kind is over.  A chunk that
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/claims.h"

#define MAGIC		0x31736d69616c6362ULL	/* "bclaims1" */
#define OWNERS		63		/* adders at once that claim */
#define NBUCKETS	((uint64_t)1 << 16)
#define BUCKET_KEYS	7		/* claims a bucket holds */
#define HEAD_BYTES	4096
#define TABLE_BYTES	(HEAD_BYTES + NBUCKETS * 64)
#define FP_BITS		50
#define FP_MASK		(((uint64_t)1 << FP_BITS) - 1)
#define PATH_SIZE	64		/* bytes of a table's name */
#define SPINS		1000		/* tries at a bucket's lock before
					 * asking if its holder lives */

/* An adder's slot. */
struct slot {
	uint64_t gen;		/* bumped by each adder that takes it */
	uint64_t unclaimed;	/* 1 during a chunk that claims nothing */
	uint64_t pad[6];
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

struct claims {
	char path[PATH_SIZE];	/* the table's name */
	int fd;			/* the table, holding our slot's lock */
	unsigned char *map;	/* the table, mapped */
	struct head *head;	/* its head */
	unsigned slot;		/* our slot */
	uint64_t tag;		/* our claims' high bits: slot + 1 and gen */
	signed char alive[OWNERS];	/* this chunk: whether each slot's
				 * adder lives, -1 if not asked yet */
};

/* Returns 1 if the adder whose slot's byte is i holds its lock (not us:
 * our own lock never conflicts), else 0. */
static int
slot_locked(int fd, unsigned i)
{
	struct flock fl;

	memset(&fl, 0, sizeof fl);
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = (off_t)i;
	fl.l_len = 1;
	if (fcntl(fd, F_OFD_GETLK, &fl) == -1)
		return 1;	/* cannot tell: assume it lives */
	return fl.l_type != F_UNLCK;
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
	uint64_t gen = w >> FP_BITS & 0xff;

	if (slot >= OWNERS)
		return 0;
	if ((__atomic_load_n(&c->head->slot[slot].gen, __ATOMIC_ACQUIRE) &
	    0xff) != gen)
		return 0;	/* its slot was taken again since */
	if (slot == c->slot)
		return 1;
	if (fresh || c->alive[slot] < 0)
		c->alive[slot] = (signed char)slot_locked(c->fd, slot);
	return c->alive[slot];
}

/* The name of the claim table of the filter with status st. */
static void
table_path(char *path, size_t size, const struct stat *st)
{
	snprintf(path, size, "/dev/shm/bloom-claims-%jx-%jx",
	    (uintmax_t)st->st_dev, (uintmax_t)st->st_ino);
}

struct claims *
claims_join(int fd)
{
	struct stat st, own;
	struct claims *c;
	struct flock fl;
	unsigned i;
	struct timespec tick = { 0, 1000000 };
	unsigned tries;

	if (fstat(fd, &st) == -1 || (c = calloc(1, sizeof *c)) == NULL)
		return NULL;
	table_path(c->path, sizeof c->path, &st);
	/* The last adder to leave removes the table (claims_leave), under
	 * its lock: one opened just before is then no one's, and is opened
	 * again. */
	for (tries = 0;; tries++) {
		c->fd = open(c->path, O_RDWR | O_CREAT | O_CLOEXEC |
		    O_NOFOLLOW | O_NOCTTY, st.st_mode & 0666);
		if (c->fd == -1 || flock(c->fd, LOCK_EX) == -1 ||
		    fstat(c->fd, &own) == -1)
			goto fail;
		if (own.st_nlink > 0)
			break;
		close(c->fd);
		c->fd = -1;
		if (tries == 100)
			goto fail;
	}
	/* Anyone may make a file in /dev/shm: a table another user made
	 * than the filter's owner or us is not trusted. */
	if (!S_ISREG(own.st_mode) || (own.st_uid != st.st_uid &&
	    own.st_uid != geteuid()))
		goto fail;
	if (own.st_size == 0) {
		if (fchmod(c->fd, st.st_mode & 0666) == -1 ||
		    ftruncate(c->fd, TABLE_BYTES) == -1)
			goto fail;
	} else if (own.st_size != TABLE_BYTES)
		goto fail;
	c->map = mmap(NULL, TABLE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED,
	    c->fd, 0);
	if (c->map == MAP_FAILED) {
		c->map = NULL;
		goto fail;
	}
	c->head = (struct head *)c->map;
	if (own.st_size == 0)
		c->head->magic = MAGIC;
	if (c->head->magic != MAGIC)
		goto fail;
	/* The first slot whose lock is free is ours. */
	memset(&fl, 0, sizeof fl);
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_len = 1;
	for (i = 0; i < OWNERS; i++) {
		fl.l_start = (off_t)i;
		if (fcntl(c->fd, F_OFD_SETLK, &fl) == 0)
			break;
	}
	if (i == OWNERS)
		goto fail;
	c->slot = i;
	c->tag = (uint64_t)(i + 1) << 58 |
	    ((__atomic_add_fetch(&c->head->slot[i].gen, 1, __ATOMIC_SEQ_CST) &
	    0xff) << FP_BITS);
	__atomic_store_n(&c->head->slot[i].unclaimed, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&c->head->adders, count_live(c, 1), __ATOMIC_SEQ_CST);
	flock(c->fd, LOCK_UN);
	/* Wait out the chunks other adders began alone. */
	for (i = 0; i < OWNERS; i++)
		while (i != c->slot && __atomic_load_n(
		    &c->head->slot[i].unclaimed, __ATOMIC_SEQ_CST) &&
		    slot_locked(c->fd, i))
			nanosleep(&tick, NULL);
	return c;
fail:
	if (c->map != NULL)
		munmap(c->map, TABLE_BYTES);
	if (c->fd != -1)
		close(c->fd);
	free(c);
	return NULL;
}

void
claims_leave(struct claims *c)
{
	uint64_t live;

	if (c == NULL)
		return;
	if (flock(c->fd, LOCK_EX) == 0) {
		live = count_live(c, 0);
		__atomic_store_n(&c->head->adders, live, __ATOMIC_SEQ_CST);
		/* The last one out removes the table: 4 MiB of memory that
		 * would stay until a reboot.  One that joins meanwhile waits
		 * for this lock and then finds the table gone. */
		if (live == 0)
			(void)unlink(c->path);
		flock(c->fd, LOCK_UN);
	}
	munmap(c->map, TABLE_BYTES);
	close(c->fd);	/* lets go of our slot */
	free(c);
}

void
claims_forget(int fd)
{
	char path[PATH_SIZE];
	struct stat st;

	if (fstat(fd, &st) == -1)
		return;
	table_path(path, sizeof path, &st);
	(void)unlink(path);
}

int
claims_begin(struct claims *c)
{
	uint64_t *unclaimed = &c->head->slot[c->slot].unclaimed;

	__atomic_store_n(unclaimed, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->head->adders, __ATOMIC_SEQ_CST) <= 1)
		return 0;
	__atomic_store_n(unclaimed, 0, __ATOMIC_SEQ_CST);
	memset(c->alive, -1, sizeof c->alive);
	return 1;
}

int
claims_late(struct claims *c)
{
	if (__atomic_load_n(&c->head->adders, __ATOMIC_SEQ_CST) <= 1)
		return 0;
	memset(c->alive, -1, sizeof c->alive);
	return 1;
}

void
claims_end(struct claims *c)
{
	__atomic_store_n(&c->head->slot[c->slot].unclaimed, 0,
	    __ATOMIC_SEQ_CST);
}

/* Returns the bucket of the key with hash h. */
static uint64_t *
bucket_of(struct claims *c, uint64_t h)
{
	uint64_t b = (h * 0x9e3779b97f4a7c15ULL) >> 48;

	return (uint64_t *)(c->map + HEAD_BYTES + b * 64);
}

/* Takes bucket b's lock, from a dead holder too. */
static void
lock_bucket(struct claims *c, uint64_t *b)
{
	uint64_t held;
	unsigned spins = 0;

	for (;;) {
		held = 0;
		if (__atomic_compare_exchange_n(&b[0], &held, c->tag, 0,
		    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			return;
		/* Asked afresh: its holder may have died since it was
		 * last asked, holding the lock. */
		if (++spins % SPINS == 0 && !owner_lives(c, held, 1) &&
		    __atomic_compare_exchange_n(&b[0], &held, c->tag, 0,
		    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			return;
		sched_yield();
	}
}

size_t
claims_take(struct claims *c, const uint64_t *hashes, unsigned char *isnew,
    size_t n, unsigned char lost)
{
	size_t i, claimed = 0;
	uint64_t *b, w, fp, *free_at;
	unsigned j;

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
		/* With no room the key goes unclaimed: another adder may
		 * write it too. */
		__atomic_store_n(&b[0], 0, __ATOMIC_SEQ_CST);
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
