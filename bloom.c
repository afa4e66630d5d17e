/*
 * The filter file: format, atomic creation, mapping, add, test and fill.
 *
 * A filter is a BLOOM_HEADER_SIZE-byte little-endian header followed by the
 * bit array, nbits / 512 blocks of 64 bytes.  Bit i of a block is bit i % 8
 * of its byte i / 8, so the array reads the same on any host.
 *
 *	offset	size	field
 *	0	8	magic "\211BLOOM\r\n"
 *	8	4	format version (1)
 *	12	4	header size (128)
 *	16	4	layout (1: blocked, 512-bit blocks)
 *	20	4	hash (1: XXH3-64)
 *	24	8	seed
 *	32	8	bit count
 *	40	4	hash count
 *	44	4	reserved, zero
 *	48	8	capacity
 *	56	8	target false-positive rate, IEEE 754 binary64
 *	64	8	checksum: XXH3-64, seed 0, of bytes 0 to 63
 *	72	8	inserted counter
 *	80	48	reserved, zero
 */
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bloom.h"
#include "hash.h"

#define OFF_MAGIC	0
#define OFF_VERSION	8
#define OFF_HDRSIZE	12
#define OFF_LAYOUT	16
#define OFF_HASH	20
#define OFF_SEED	24
#define OFF_NBITS	32
#define OFF_HASHES	40
#define OFF_RESERVED1	44
#define OFF_CAPACITY	48
#define OFF_FPR		56
#define OFF_CHECKSUM	64
#define OFF_INSERTED	72
#define OFF_RESERVED2	80

#define PAGE_GUESS	4096	/* bytes in a page, for heuristics */
#define PREFAULT_SHARE	16	/* prefault after pages / this lookups */

static const unsigned char magic[8] = "\211BLOOM\r\n";

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_BIG_ENDIAN	1
#else
#define HOST_BIG_ENDIAN	0
#endif

static uint32_t
read_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static uint64_t
read_le64(const unsigned char *p)
{
	return (uint64_t)read_le32(p) | (uint64_t)read_le32(p + 4) << 32;
}

static void
write_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static void
write_le64(unsigned char *p, uint64_t v)
{
	write_le32(p, (uint32_t)v);
	write_le32(p + 4, (uint32_t)(v >> 32));
}

/* Converts between host order and the file's little-endian words. */
static uint64_t
le64(uint64_t v)
{
#if HOST_BIG_ENDIAN
	return __builtin_bswap64(v);
#else
	return v;
#endif
}

static int
all_zero(const unsigned char *p, size_t n)
{
	while (n-- > 0)
		if (*p++ != 0)
			return 0;
	return 1;
}

const char *
bloom_strerror(int s)
{
	switch (s) {
	case BLOOM_OK:		return "success";
	case BLOOM_ERRNO:	return strerror(errno);
	case BLOOM_ENOTREG:	return "not a regular file";
	case BLOOM_ESHORT:	return "not a bloom filter (too short)";
	case BLOOM_EMAGIC:	return "not a bloom filter (bad magic)";
	case BLOOM_EVERSION:	return "unsupported format version";
	case BLOOM_EHDRSIZE:	return "corrupt header (bad header size)";
	case BLOOM_ELAYOUT:	return "corrupt header (unknown layout)";
	case BLOOM_EHASH:	return "corrupt header (unknown hash function)";
	case BLOOM_ERESERVED:	return "corrupt header (reserved bytes not zero)";
	case BLOOM_ENBITS:	return "invalid parameters (bit count)";
	case BLOOM_EHASHES:	return "invalid parameters (hash count)";
	case BLOOM_ECAPACITY:	return "invalid parameters (capacity)";
	case BLOOM_EFPR:	return "invalid parameters (target fpr)";
	case BLOOM_ECHECKSUM:	return "corrupt header (checksum mismatch)";
	case BLOOM_ESIZE:	return "size mismatch";
	case BLOOM_ETRUNCATED:
		return "file was truncated or could not be written while in use";
	}
	return "unknown error";
}

static double
fpr_from_bits(uint64_t bits)
{
	double d;

	memcpy(&d, &bits, sizeof d);
	return d;
}

static uint64_t
fpr_to_bits(double d)
{
	uint64_t bits;

	memcpy(&bits, &d, sizeof bits);
	return bits;
}

int
bloom_header_parse(const unsigned char *buf, size_t len, uint64_t file_size,
    struct bloom_header *h)
{
	memset(h, 0, sizeof *h);
	if (len > file_size)
		len = (size_t)file_size;
	if (len < sizeof magic)
		return BLOOM_ESHORT;
	if (memcmp(buf + OFF_MAGIC, magic, sizeof magic) != 0)
		return BLOOM_EMAGIC;
	if (len < BLOOM_HEADER_SIZE)
		return BLOOM_ESHORT;

	h->version = read_le32(buf + OFF_VERSION);
	h->header_size = read_le32(buf + OFF_HDRSIZE);
	h->layout = read_le32(buf + OFF_LAYOUT);
	h->hash_id = read_le32(buf + OFF_HASH);
	h->seed = read_le64(buf + OFF_SEED);
	h->nbits = read_le64(buf + OFF_NBITS);
	h->hashes = read_le32(buf + OFF_HASHES);
	h->capacity = read_le64(buf + OFF_CAPACITY);
	h->target_fpr = fpr_from_bits(read_le64(buf + OFF_FPR));
	h->checksum = read_le64(buf + OFF_CHECKSUM);
	h->inserted = read_le64(buf + OFF_INSERTED);

	if (h->version != BLOOM_VERSION)
		return BLOOM_EVERSION;
	if (h->header_size != BLOOM_HEADER_SIZE)
		return BLOOM_EHDRSIZE;
	if (h->layout != BLOOM_LAYOUT_BLOCKED512)
		return BLOOM_ELAYOUT;
	if (h->hash_id != BLOOM_HASH_XXH3_64)
		return BLOOM_EHASH;
	if (!all_zero(buf + OFF_RESERVED1, 4) ||
	    !all_zero(buf + OFF_RESERVED2, BLOOM_HEADER_SIZE - OFF_RESERVED2))
		return BLOOM_ERESERVED;
	if (h->nbits == 0 || h->nbits % BLOCK_BITS != 0 ||
	    h->nbits / BLOCK_BITS > NBLOCKS_MAX)
		return BLOOM_ENBITS;
	if (h->hashes == 0 || h->hashes > HASHES_MAX)
		return BLOOM_EHASHES;
	if (h->capacity == 0)
		return BLOOM_ECAPACITY;
	if (!(h->target_fpr > 0.0 && h->target_fpr < 1.0))
		return BLOOM_EFPR;
	if (h->checksum != hash64(buf, OFF_CHECKSUM, 0))
		return BLOOM_ECHECKSUM;
	/* No overflow: nbits / 8 is at most 2^46. */
	h->file_size = BLOOM_HEADER_SIZE + h->nbits / 8;
	if (h->file_size != file_size)
		return BLOOM_ESIZE;
	return BLOOM_OK;
}

void
bloom_header_build(unsigned char *buf, const struct params *p, uint64_t seed)
{
	memset(buf, 0, BLOOM_HEADER_SIZE);
	memcpy(buf + OFF_MAGIC, magic, sizeof magic);
	write_le32(buf + OFF_VERSION, BLOOM_VERSION);
	write_le32(buf + OFF_HDRSIZE, BLOOM_HEADER_SIZE);
	write_le32(buf + OFF_LAYOUT, BLOOM_LAYOUT_BLOCKED512);
	write_le32(buf + OFF_HASH, BLOOM_HASH_XXH3_64);
	write_le64(buf + OFF_SEED, seed);
	write_le64(buf + OFF_NBITS, p->nblocks * BLOCK_BITS);
	write_le32(buf + OFF_HASHES, p->hashes);
	write_le64(buf + OFF_CAPACITY, p->capacity);
	write_le64(buf + OFF_FPR, fpr_to_bits(p->target_fpr));
	write_le64(buf + OFF_CHECKSUM, hash64(buf, OFF_CHECKSUM, 0));
}

/* Writes the directory part of path into dir. */
static int
dir_of(const char *path, char *dir, size_t size)
{
	const char *slash = strrchr(path, '/');
	size_t len;

	if (slash == NULL) {
		dir[0] = '.';
		dir[1] = '\0';
		return 0;
	}
	len = slash == path ? 1 : (size_t)(slash - path);
	if (len >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(dir, path, len);
	dir[len] = '\0';
	return 0;
}

/* Writes a fresh hidden name in dir into name. */
static int
temp_name(const char *dir, char *name, size_t size)
{
	uint64_t r;
	int len;

	if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
		return -1;
	len = snprintf(name, size, "%s/.bloom-%016llx.tmp", dir,
	    (unsigned long long)r);
	if (len < 0 || (size_t)len >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/*
 * Opens a new file in dir that no other process can see: an O_TMPFILE
 * where the file system has them, so that an interrupted create leaves
 * nothing behind; else a hidden name, written to tmp, for the caller to
 * remove on failure.
 */
static int
open_unnamed(const char *dir, char *tmp, size_t size)
{
	int fd = -1, tries;

	tmp[0] = '\0';
	/* An O_TMPFILE is given its name through /proc/self/fd. */
	if (access("/proc/self/fd", F_OK) == 0) {
		fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
		if (fd != -1 || (errno != EOPNOTSUPP && errno != EISDIR &&
		    errno != EINVAL))
			return fd;
	}
	for (tries = 0; tries < 100; tries++) {
		if (temp_name(dir, tmp, size) == -1)
			return -1;
		fd = open(tmp, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0666);
		if (fd != -1 || errno != EEXIST)
			break;
	}
	if (fd == -1)
		tmp[0] = '\0';
	return fd;
}

static int
write_all(int fd, const unsigned char *buf, size_t len, off_t off)
{
	while (len > 0) {
		ssize_t n = pwrite(fd, buf, len, off);

		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/* Returns 1 if size bytes take at most half of the machine's memory: a
 * filter larger than that is left to fault in only what it needs. */
static int
fits_in_ram(uint64_t size)
{
	long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);

	return pages <= 0 || page_size <= 0 ||
	    size / 2 <= (uint64_t)pages * (uint64_t)page_size;
}

/*
 * Brings the new file's zeroed pages into the page cache in one pass.
 * Populated in bulk, before anything touched them, they come as large
 * folios that later mappings use whole; a first add that faulted them in
 * page by page would leave 4 KiB pages, a TLB miss per lookup, for as long
 * as the file stays cached.  For 10 M keys into 2 GiB that is about 3.4 s
 * against 1 s for add, and 1.2 s against 0.6 s for check.  Advice only.
 */
static void
warm_cache(int fd, uint64_t size)
{
	void *map;

	if (!fits_in_ram(size) || size > SIZE_MAX)
		return;
	map = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return;
#ifdef MADV_POPULATE_READ
	madvise(map, (size_t)size, MADV_POPULATE_READ);
#else
	madvise(map, (size_t)size, MADV_WILLNEED);
#endif
	munmap(map, (size_t)size);
}

/* Allocates every block of the file and writes its header. */
static int
fill_new(int fd, const struct params *p, uint64_t seed)
{
	unsigned char hdr[BLOOM_HEADER_SIZE];
	/* No overflow: nblocks is at most NBLOCKS_MAX, 2^40. */
	uint64_t size = BLOOM_HEADER_SIZE + p->nblocks * BLOCK_BYTES;
	int e;

	e = posix_fallocate(fd, 0, (off_t)size);
	if (e != 0) {
		errno = e;
		return -1;
	}
	bloom_header_build(hdr, p, seed);
	if (write_all(fd, hdr, sizeof hdr, 0) == -1 || fsync(fd) == -1)
		return -1;
	warm_cache(fd, size);
	return 0;
}

/* Opens the file at path, if any, and waits for an exclusive lock on it:
 * until no add, check or stats uses it.  Returns the locked descriptor,
 * NO_FILE if there is no file, or -1 with errno set. */
#define NO_FILE	(-2)

static int
lock_old(const char *path)
{
	int old, e;

	old = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (old == -1)
		return errno == ENOENT ? NO_FILE : -1;
	while (flock(old, LOCK_EX) == -1) {
		if (errno != EINTR) {
			e = errno;
			close(old);
			errno = e;
			return -1;
		}
	}
	return old;
}

/*
 * Makes the finished file fd (or tmp, if named) appear at path.  To
 * replace a file, it first waits for that file's users to let go of it,
 * and only then gives the new file a name, so that a create interrupted
 * while waiting leaves nothing behind.
 */
static int
publish(int fd, const char *tmp, const char *dir, const char *path,
    int force)
{
	char proc[64], name[PATH_MAX];
	const char *src = tmp;
	int old, rc = -1, e;

	if (tmp[0] == '\0') {
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
		src = proc;
	}
	if (!force)
		return linkat(AT_FDCWD, src, AT_FDCWD, path, AT_SYMLINK_FOLLOW);

	old = lock_old(path);
	if (old == -1)
		return -1;
	if (tmp[0] == '\0') {
		if (temp_name(dir, name, sizeof name) == -1 ||
		    linkat(AT_FDCWD, src, AT_FDCWD, name, AT_SYMLINK_FOLLOW))
			goto out;
		src = name;
	}
	rc = rename(src, path);
	if (rc == -1 && src == name)
		unlink(name);
out:
	e = errno;
	if (old >= 0)
		close(old);
	errno = e;
	return rc;
}

static int
sync_dir(const char *dir)
{
	int fd, rc;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

int
bloom_create(const char *path, const struct params *p, uint64_t seed,
    int force)
{
	char dir[PATH_MAX], tmp[PATH_MAX];
	int fd, e;

	if (dir_of(path, dir, sizeof dir) == -1)
		return BLOOM_ERRNO;
	/* Fail early, before allocating, when the name is taken. */
	if (!force && access(path, F_OK) == 0) {
		errno = EEXIST;
		return BLOOM_ERRNO;
	}
	fd = open_unnamed(dir, tmp, sizeof tmp);
	if (fd == -1)
		return BLOOM_ERRNO;
	if (fill_new(fd, p, seed) == -1 ||
	    publish(fd, tmp, dir, path, force) == -1)
		goto fail;
	if (tmp[0] != '\0' && !force)
		unlink(tmp);
	close(fd);
	/* Some file systems cannot sync a directory (EINVAL); the file is
	 * there all the same. */
	if (sync_dir(dir) == -1 && errno != EINVAL)
		return BLOOM_ERRNO;
	return BLOOM_OK;

fail:
	e = errno;
	if (tmp[0] != '\0')
		unlink(tmp);
	close(fd);
	errno = e;
	return BLOOM_ERRNO;
}

/*
 * Maps every page of the filter in one call.  For a filter in the page
 * cache that costs a fraction of a second for gigabytes, against a fault
 * per page otherwise, some ten times more for each page touched; so it is
 * done up front for a full scan and, for lookups, once they are many
 * enough to touch a good share of the pages.  Advice only: failure changes
 * nothing but speed.
 */
static void
prefault(struct bloom *b)
{
	b->prefaulted = 1;
#ifdef MADV_POPULATE_READ
	if (madvise(b->map, b->map_size, MADV_POPULATE_READ) == 0)
		return;
#endif
	madvise(b->map, b->map_size, MADV_WILLNEED);
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

/* Opens path and takes a shared lock on the file that is at path once the
 * lock is held: a create -f may have replaced it while we waited. */
static int
open_locked(const char *path, int writable)
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
		while (flock(fd, LOCK_SH) == -1)
			if (errno != EINTR)
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

int
bloom_open(struct bloom *b, const char *path, int writable)
{
	unsigned char buf[BLOOM_HEADER_SIZE];
	struct stat st;
	ssize_t got;
	int s, prot, e;

	memset(b, 0, sizeof *b);
	b->fd = open_locked(path, writable);
	if (b->fd == -1)
		return errno == EISDIR ? BLOOM_ENOTREG : BLOOM_ERRNO;
	if (fstat(b->fd, &st) == -1)
		goto fail_errno;
	if (!S_ISREG(st.st_mode)) {
		s = BLOOM_ENOTREG;
		goto fail;
	}
	got = pread(b->fd, buf, sizeof buf, 0);
	if (got == -1)
		goto fail_errno;
	s = bloom_header_parse(buf, (size_t)got, (uint64_t)st.st_size, &b->hdr);
	if (s != BLOOM_OK)
		goto fail;
	if (b->hdr.file_size > SIZE_MAX) {
		errno = EFBIG;
		goto fail_errno;
	}
	b->map_size = (size_t)b->hdr.file_size;
	prot = PROT_READ | (writable ? PROT_WRITE : 0);
	b->map = mmap(NULL, b->map_size, prot, MAP_SHARED, b->fd, 0);
	if (b->map == MAP_FAILED)
		goto fail_errno;
#ifdef MADV_HUGEPAGE
	/*
	 * Pages read in for a read-only mapping with this advice come as
	 * large folios, which any later mapping of the file uses whole, as
	 * after warm_cache: it halves the time of the next lookups in a
	 * filter of gigabytes.  Not for writing: write faults on a huge
	 * shared mapping cost more than they save.
	 */
	if (!writable && fits_in_ram(b->map_size))
		madvise(b->map, b->map_size, MADV_HUGEPAGE);
#endif
	b->bits = b->map + BLOOM_HEADER_SIZE;
	b->nblocks = b->hdr.nbits / BLOCK_BITS;
	b->hashes = b->hdr.hashes;
	b->seed = b->hdr.seed;
	b->prefault_at = b->map_size / PAGE_GUESS / PREFAULT_SHARE;
	if (!fits_in_ram(b->map_size))
		b->prefault_at = UINT64_MAX;
	return BLOOM_OK;

fail_errno:
	s = BLOOM_ERRNO;
fail:
	e = errno;
	close(b->fd);
	b->fd = -1;
	errno = e;
	return s;
}

void
bloom_close(struct bloom *b)
{
	if (b->map != NULL)
		munmap(b->map, b->map_size);
	if (b->fd != -1)
		close(b->fd);
	b->map = NULL;
	b->fd = -1;
}

int
bloom_sync(struct bloom *b)
{
	if (msync(b->map, b->map_size, MS_SYNC) == -1 || fsync(b->fd) == -1)
		return BLOOM_ERRNO;
	return BLOOM_OK;
}

uint64_t
bloom_inserted(const struct bloom *b)
{
	const uint64_t *counter = (const uint64_t *)(b->map + OFF_INSERTED);

	return le64(__atomic_load_n(counter, __ATOMIC_RELAXED));
}

static void
count_inserted(struct bloom *b, uint64_t count)
{
	uint64_t *counter = (uint64_t *)(b->map + OFF_INSERTED);
#if HOST_BIG_ENDIAN
	uint64_t old = __atomic_load_n(counter, __ATOMIC_RELAXED);

	while (!__atomic_compare_exchange_n(counter, &old,
	    le64(le64(old) + count), 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		continue;
#else
	__atomic_fetch_add(counter, count, __ATOMIC_RELAXED);
#endif
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

static inline uint64_t *
block_of(const struct bloom *b, uint64_t h)
{
	return (uint64_t *)(b->bits + mul_high(h, b->nblocks) * BLOCK_BYTES);
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
 * Adds a batch of n <= BATCH keys.  Whether a key is new is a coin toss
 * when half the input repeats, so the batch is tested first without a
 * branch per key, and only the keys that missed a bit are then visited to
 * set theirs.  Each is tested again just before: a key set earlier in the
 * batch may have set its bits (a repeat, or a false positive), and the
 * answers must be those of adding the keys one at a time.
 */
static size_t
add_batch(struct bloom *b, const uint64_t *hashes, size_t n,
    unsigned char *isnew)
{
	unsigned char missed[BATCH];	/* indices of keys that missed */
	size_t i, j, nmissed = 0, fresh = 0;

	for (i = 0; i < n; i++) {
		isnew[i] = 0;
		missed[nmissed] = (unsigned char)i;
		nmissed += !has_bits(block_of(b, hashes[i]), hashes[i],
		    b->hashes);
	}
	for (j = 0; j < nmissed; j++) {
		i = missed[j];
		isnew[i] = (unsigned char)set_bits(block_of(b, hashes[i]),
		    hashes[i], b->hashes);
		fresh += isnew[i];
	}
	return fresh;
}

/*
 * Starts loading the blocks of the keys from the batch at i on that are
 * PREFETCH_AHEAD keys away, or all of the first ones when i is 0.  A macro
 * rather than a function: GCC finds that a function that only prefetches
 * has no effect and drops the calls.
 */
#define PREFETCH_BATCH(b, hashes, i, n) do {				\
	size_t from_ = (i) == 0 ? 0 : (i) + PREFETCH_AHEAD - BATCH;	\
	size_t to_ = (i) + PREFETCH_AHEAD < (n) ?			\
	    (i) + PREFETCH_AHEAD : (n);					\
									\
	for (; from_ < to_; from_++)					\
		__builtin_prefetch(block_of((b), (hashes)[from_]));	\
} while (0)

size_t
bloom_add(struct bloom *b, const uint64_t *hashes, size_t n,
    unsigned char *isnew)
{
	size_t i, fresh = 0;

	note_lookups(b, n);
	for (i = 0; i < n; i += BATCH) {
		PREFETCH_BATCH(b, hashes, i, n);
		fresh += add_batch(b, hashes + i, n - i < BATCH ? n - i : BATCH,
		    isnew + i);
	}
	if (fresh > 0)
		count_inserted(b, fresh);
	return fresh;
}

size_t
bloom_test(struct bloom *b, const uint64_t *hashes, size_t n,
    unsigned char *found)
{
	size_t i, count = 0;

	note_lookups(b, n);
	for (i = 0; i < n; i++) {
		if (i % BATCH == 0)
			PREFETCH_BATCH(b, hashes, i, n);
		found[i] = (unsigned char)has_bits(block_of(b, hashes[i]),
		    hashes[i], b->hashes);
		count += found[i];
	}
	return count;
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

uint64_t
bloom_fill(struct bloom *b, uint64_t hist[BLOCK_BITS + 1])
{
	const uint64_t *word = (const uint64_t *)b->bits;

	if (!b->prefaulted && fits_in_ram(b->map_size))
		prefault(b);
	memset(hist, 0, (BLOCK_BITS + 1) * sizeof hist[0]);
#ifdef HAVE_POPCNT_DISPATCH
	if (__builtin_cpu_supports("popcnt"))
		return count_popcnt(word, b->nblocks, hist);
#endif
	return count_portable(word, b->nblocks, hist);
}
