/* SPDX-License-Identifier: ISC
 * Creating a filter file: sized, fully allocated, written whole and only
 * then given its name, so that it appears whole or not at all; and
 * replacing one (create -f) only once its users have let go of it.
 */
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>

#include <linux/capability.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "filter/create.h"

/* Bytes of a hidden temporary name, ".bloom-" 16 hex digits ".tmp". */
#define TEMP_NAME_SIZE	32

/*
 * Where the new file goes: its directory, open for the *at calls, and its
 * name there.  Names are taken relative to the directory so that the
 * temporary name is as short as the last component allows, whatever the
 * length of the path.
 */
struct place {
	int dir;			/* O_PATH descriptor of the directory */
	char dirname[PATH_MAX];		/* its path, to sync it */
	char base[NAME_MAX + 1];	/* the file's name in it */
	char tmp[TEMP_NAME_SIZE];	/* a hidden name in use, or "" */
};

/* The temporary name to remove if a signal ends us (see on_signal). */
static volatile sig_atomic_t temp_dir = -1;
static char temp_name_held[TEMP_NAME_SIZE];

/*
 * Splits path into directory and last component, opening the directory.
 * Only the directory's search and write permissions are needed, not read
 * (a 0333 directory).  Returns 0, or -1 with errno set.
 */
static int
place_open(struct place *pl, const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash == NULL ? path : slash + 1;
	size_t len;

	pl->dir = -1;
	pl->tmp[0] = '\0';
	if (slash == NULL)
		strcpy(pl->dirname, ".");
	else {
		len = slash == path ? 1 : (size_t)(slash - path);
		if (len >= sizeof pl->dirname) {
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(pl->dirname, path, len);
		pl->dirname[len] = '\0';
	}
	if (strlen(base) >= sizeof pl->base) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (*base == '\0') {
		errno = EISDIR;
		return -1;
	}
	strcpy(pl->base, base);
	pl->dir = open(pl->dirname, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return pl->dir == -1 ? -1 : 0;
}

/* Writes a fresh hidden name into name. */
static int
temp_name(char *name)
{
	uint64_t r;

	if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
		return -1;
	snprintf(name, TEMP_NAME_SIZE, ".bloom-%016llx.tmp",
	    (unsigned long long)r);
	return 0;
}

/* Returns 1 if this process may give an unnamed file a name without
 * /proc: linkat with AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH. */
static int
can_link_empty_path(void)
{
	struct __user_cap_header_struct head;
	struct __user_cap_data_struct data[2];

	memset(&head, 0, sizeof head);
	head.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capget, &head, data) == -1)
		return 0;
	return data[CAP_DAC_READ_SEARCH / 32].effective >>
	    (CAP_DAC_READ_SEARCH % 32) & 1;
}

/* Removes the hidden file, then dies of the signal as we would have. */
static void
on_signal(int sig)
{
	int e = errno;

	if (temp_dir != -1)
		unlinkat(temp_dir, temp_name_held, 0);
	signal(sig, SIG_DFL);
	raise(sig);
	errno = e;
}

/* While a hidden name exists, SIGTERM, SIGINT and SIGHUP remove it before
 * they end us; hold (1) or release (0). */
static void
guard_temp(const struct place *pl, int hold)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
	static struct sigaction saved[3];
	struct sigaction sa;
	unsigned i;

	if (hold) {
		memcpy(temp_name_held, pl->tmp, sizeof temp_name_held);
		temp_dir = pl->dir;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		for (i = 0; i < 3; i++)
			sigaction(sigs[i], &sa, &saved[i]);
		return;
	}
	temp_dir = -1;
	for (i = 0; i < 3; i++)
		sigaction(sigs[i], &saved[i], NULL);
}

/*
 * Opens a new file in pl's directory that no other process can see: an
 * O_TMPFILE where the file system has them and it can be named later
 * (through /proc/self/fd, or AT_EMPTY_PATH), so that an interrupted create
 * leaves nothing behind; else a hidden name, in pl->tmp, removed on
 * failure and on the signals that end us.
 */
static int
open_unnamed(struct place *pl)
{
	int fd = -1, tries;

	if (access("/proc/self/fd", F_OK) == 0 || can_link_empty_path()) {
		fd = openat(pl->dir, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
		if (fd != -1 || (errno != EOPNOTSUPP && errno != EISDIR &&
		    errno != EINVAL))
			return fd;
	}
	for (tries = 0; tries < 100; tries++) {
		if (temp_name(pl->tmp) == -1)
			return -1;
		guard_temp(pl, 1);
		fd = openat(pl->dir, pl->tmp, O_CREAT | O_EXCL | O_RDWR |
		    O_CLOEXEC, 0666);
		if (fd != -1)
			return fd;
		guard_temp(pl, 0);
		if (errno != EEXIST)
			break;
	}
	pl->tmp[0] = '\0';
	return -1;
}

/* Gives the unnamed file fd the name name in pl's directory. */
static int
link_unnamed(const struct place *pl, int fd, const char *name)
{
	char proc[64];

	if (access("/proc/self/fd", F_OK) == 0) {
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
		return linkat(AT_FDCWD, proc, pl->dir, name, AT_SYMLINK_FOLLOW);
	}
	return linkat(fd, "", pl->dir, name, AT_EMPTY_PATH);
}

int
write_at(int fd, const unsigned char *buf, size_t len, uint64_t off)
{
	ssize_t put;

	while (len > 0) {
		put = pwrite(fd, buf, len, (off_t)off);
		if (put == -1 && errno == EINTR)
			continue;
		if (put == -1)
			return -1;
		buf += put;
		len -= (size_t)put;
		off += (uint64_t)put;
	}
	return 0;
}

/*
 * Brings the new file's zeroed pages into the page cache in one pass.
 * Populated in bulk, before anything touched them, they come as large
 * folios that later mappings use whole; a first add that faulted them in
 * page by page would leave 4 KiB pages, a TLB miss per lookup, for as long
 * as the file stays cached.  For 10 M keys into 2 GiB that is about 3.4 s
 * against 1 s for add, and 1.2 s against 0.6 s for check.  With
 * MADV_HUGEPAGE the folios come larger still, as a read-only mapping with
 * that advice reads them in (store/segments.c): check -c of 10 M absent
 * lines took 1 to 2 % less processor time in a filter of 50 M URLs, and
 * 3 % less in the filter add grew to 50 M URLs from it.  Advice only.
 */
static void
warm_cache(int fd, uint64_t size)
{
	bloom_warm(fd, 0, size);
}

/* Allocates the whole file of h and writes its header and table. */
static int
fill_new(int fd, const struct bloom_header *h)
{
	unsigned char *head;
	unsigned i;
	int e;

	e = posix_fallocate(fd, 0, (off_t)h->file_size);
	if (e != 0) {
		errno = e;
		return -1;
	}
	head = calloc(1, (size_t)h->data_offset);
	if (head == NULL)
		return -1;
	format_header_build(head, h);
	for (i = 0; i < h->slots; i++)
		format_slot_build(head + V2_HEADER_SIZE + i * SLOT_SIZE, i,
		    &h->seg[i]);
	e = write_at(fd, head, (size_t)h->data_offset, 0);
	free(head);
	if (e == -1 || fsync(fd) == -1)
		return -1;
	warm_cache(fd, h->file_size);
	return 0;
}

/* Returns 1 if the readable regular file fd may be replaced: empty, or
 * starting with the magic of a filter, damaged or not; else 0. */
static int
holds_a_filter(int fd, const struct stat *st, int *why)
{
	unsigned char buf[8];
	struct bloom_header h;
	ssize_t got;

	if (st->st_size == 0)
		return 1;
	got = pread(fd, buf, sizeof buf, 0);
	if (got == -1) {
		*why = BLOOM_ERRNO;
		return 0;
	}
	*why = bloom_header_parse(buf, (size_t)got, (uint64_t)st->st_size, &h);
	/* A whole magic and too short for a header is a damaged filter. */
	if (*why == BLOOM_EMAGIC || (size_t)got < sizeof buf) {
		if (*why != BLOOM_EMAGIC)
			*why = BLOOM_ESHORT;
		return 0;
	}
	return 1;
}

/*
 * Opens the file create -f is to replace, if any, into *old (NO_FILE if
 * there is none) and its status into st, after checking that it is a
 * filter: a regular file, empty or with the magic.  A file its owner may
 * not read (mode 0200 or 000) is opened for writing, or not at all, and
 * replaced as its owner's own.  Returns BLOOM_OK or a status.
 */
#define NO_FILE	(-2)

static int
open_old(const struct place *pl, int *old, struct stat *st)
{
	const int how = O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC;
	struct stat now;
	int fd, readable = 1, why = BLOOM_OK;

	*old = NO_FILE;
	if (fstatat(pl->dir, pl->base, st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? BLOOM_OK : BLOOM_ERRNO;
	if (S_ISDIR(st->st_mode)) {
		errno = EISDIR;
		return BLOOM_ERRNO;
	}
	if (!S_ISREG(st->st_mode))
		return BLOOM_ENOTREG;	/* never opened: a device may act */
	fd = openat(pl->dir, pl->base, O_RDONLY | how);
	if (fd == -1 && errno == EACCES) {
		readable = 0;
		fd = openat(pl->dir, pl->base, O_WRONLY | how);
		if (fd == -1 && errno == EACCES)
			fd = openat(pl->dir, pl->base, O_PATH | how);
	}
	if (fd == -1)
		return BLOOM_ERRNO;
	if (fstat(fd, &now) == -1 || !S_ISREG(now.st_mode) ||
	    now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
		close(fd);
		return BLOOM_ENOTREG;	/* replaced meanwhile */
	}
	if (readable ? !holds_a_filter(fd, &now, &why) :
	    now.st_uid != geteuid()) {
		close(fd);
		if (!readable)
			errno = EACCES;
		return readable ? why : BLOOM_ERRNO;
	}
	*old = fd;
	*st = now;
	return BLOOM_OK;
}

/*
 * Waits for an exclusive lock on the old file: until no add, check or
 * stats uses it.  Says so through on_wait after a second.  A file
 * opened without read or write permission cannot be locked: nobody else
 * can have it open through bloom either but from before a chmod.  Returns
 * 0, or -1 with errno set.
 */
static int
lock_old(int old, const char *path, void (*on_wait)(const char *))
{
	if ((fcntl(old, F_GETFL) & O_PATH) != 0)
		return 0;
	return bloom_flock(old, LOCK_EX, path, on_wait);
}

/* Gives the new file fd the mode of the file it replaces, and its group
 * where we may; advice only. */
static void
keep_owner(int fd, const struct stat *old)
{
	if (fchown(fd, (uid_t)-1, old->st_gid) == -1) {
		/* Not a group of ours: the new file keeps our group. */
	}
	if (fchmod(fd, old->st_mode & 07777) == -1) {
		/* The umask's mode stays. */
	}
}

/*
 * Makes the finished file fd (or pl->tmp, if named) appear under pl's
 * name.  To replace a file (force), it first waits for that file's users
 * to let go of it, and only then gives the new file a name, so that a
 * create interrupted while waiting leaves nothing behind.
 */
static int
publish(int fd, struct place *pl, int force, int old, const char *path,
    void (*on_wait)(const char *))
{
	char name[TEMP_NAME_SIZE];
	int rc;

	if (!force) {
		if (pl->tmp[0] == '\0')
			return link_unnamed(pl, fd, pl->base);
		return linkat(pl->dir, pl->tmp, pl->dir, pl->base, 0);
	}
	if (old >= 0 && lock_old(old, path, on_wait) == -1)
		return -1;
	if (pl->tmp[0] != '\0')
		rc = renameat(pl->dir, pl->tmp, pl->dir, pl->base);
	else {
		if (temp_name(name) == -1 || link_unnamed(pl, fd, name) == -1)
			return -1;
		rc = renameat(pl->dir, name, pl->dir, pl->base);
		if (rc == -1)
			unlinkat(pl->dir, name, 0);
	}
	/* No adder has the old file open: a claim table it has is one an
	 * adder killed left, and no adder will open that file again. */
	if (rc == 0 && old >= 0 && (fcntl(old, F_GETFL) & O_PATH) == 0)
		bloom_forget_claims(old);
	return rc;
}

/* Syncs the directory where we may: a directory we may not read (0333)
 * cannot be opened to sync, and some file systems cannot sync one.  The
 * file is there all the same. */
static void
sync_dir(const struct place *pl)
{
	int fd = openat(pl->dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd == -1)
		return;
	if (fsync(fd) == -1) {
		/* Nothing more to be done. */
	}
	close(fd);
}

/* Writes into where the path create -f replaces: path itself, or the file
 * a symbolic link at path leads to.  A link to nothing is not written
 * through (as cp(1) will not): whoever made it chose where the new file
 * would go.  Returns BLOOM_OK, BLOOM_EDANGLING, or BLOOM_ERRNO. */
static int
resolve(const char *path, char *where)
{
	struct stat st;

	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		if (realpath(path, where) != NULL)
			return BLOOM_OK;
		return errno == ENOENT ? BLOOM_EDANGLING : BLOOM_ERRNO;
	}
	if (strlen(path) >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return BLOOM_ERRNO;
	}
	strcpy(where, path);
	return BLOOM_OK;
}

int
bloom_create(const char *path, const struct bloom_spec *spec, int force,
    void (*on_wait)(const char *))
{
	struct bloom_header h;
	int s;

	if ((s = plan_filter(spec, &h)) != BLOOM_OK)
		return s;
	return bloom_create_header(path, &h, force, on_wait);
}

int
bloom_plan_like(const struct bloom *tmpl, uint32_t slice, uint32_t slices,
    struct bloom_header *h)
{
	const struct bloom_header *t = bloom_header(tmpl);
	unsigned i;

	*h = *t;
	h->version = FORMAT_V2;
	h->header_size = V2_HEADER_SIZE;
	h->nsegments = bloom_nsegments(tmpl);
	/* A window's grown generations are not part of its geometry. */
	if (t->mode == MODE_WINDOW)
		h->nsegments = t->slots;
	h->epoch = bloom_epoch(tmpl);
	for (i = 0; i < h->nsegments; i++) {
		h->seg[i].inserted = 0;
		h->seg[i].stamp = bloom_stamp(tmpl, i);
	}
	h->data_offset = format_data_offset(h->slots);
	if (slices != 0)
		return plan_slice(h, slice, slices);
	plan_lay_out(h);
	return BLOOM_OK;
}

int
bloom_create_header(const char *path, const struct bloom_header *hp,
    int force, void (*on_wait)(const char *))
{
	return bloom_create_filled(path, hp, force, on_wait, NULL, NULL);
}

int
bloom_create_filled(const char *path, const struct bloom_header *hp,
    int force, void (*on_wait)(const char *), bloom_fill_fn *fill,
    void *arg)
{
	char where[PATH_MAX];
	struct sigaction ign, xfsz;
	struct bloom_header h = *hp;
	struct place pl;
	struct stat old_st;
	int fd = -1, old = NO_FILE, e, s;

	if (force && (s = resolve(path, where)) != BLOOM_OK)
		return s;
	if (!force && strlen(path) >= sizeof where) {
		errno = ENAMETOOLONG;
		return BLOOM_ERRNO;
	}
	if (!force)
		strcpy(where, path);
	if (place_open(&pl, where) == -1) {
		e = errno;
		if (pl.dir != -1)
			close(pl.dir);
		errno = e;
		return BLOOM_ERRNO;
	}
	/* A file too large for RLIMIT_FSIZE is an error to clean up after,
	 * not a signal that leaves it behind. */
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigaction(SIGXFSZ, &ign, &xfsz);
	s = BLOOM_ERRNO;
	/* Fail early, before allocating, when the name is taken. */
	if (!force && fstatat(pl.dir, pl.base, &old_st,
	    AT_SYMLINK_NOFOLLOW) == 0) {
		errno = EEXIST;
		goto out;
	}
	if (force && (s = open_old(&pl, &old, &old_st)) != BLOOM_OK)
		goto out;
	s = BLOOM_ERRNO;
	if ((fd = open_unnamed(&pl)) == -1 || fill_new(fd, &h) == -1)
		goto out;
	if (fill != NULL && ((s = fill(arg, fd, &h)) != BLOOM_OK ||
	    fsync(fd) == -1)) {
		if (s == BLOOM_OK)
			s = BLOOM_ERRNO;
		goto out;
	}
	s = BLOOM_ERRNO;
	if (old != NO_FILE)
		keep_owner(fd, &old_st);
	if (publish(fd, &pl, force, old, path, on_wait) == -1)
		goto out;
	if (pl.tmp[0] != '\0' && !force)
		unlinkat(pl.dir, pl.tmp, 0);
	if (pl.tmp[0] != '\0')
		guard_temp(&pl, 0);
	pl.tmp[0] = '\0';
	sync_dir(&pl);
	s = BLOOM_OK;
out:
	e = errno;
	if (pl.tmp[0] != '\0') {
		unlinkat(pl.dir, pl.tmp, 0);
		guard_temp(&pl, 0);
	}
	if (fd != -1)
		close(fd);
	if (old >= 0)
		close(old);
	close(pl.dir);
	sigaction(SIGXFSZ, &xfsz, NULL);
	errno = e;
	return s;
}


int
bloom_free_space(const char *path, uint64_t *free_bytes)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	struct statvfs sv;
	size_t len;

	if (slash == NULL)
		strcpy(dir, ".");
	else {
		len = slash == path ? 1 : (size_t)(slash - path);
		if (len >= sizeof dir) {
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(dir, path, len);
		dir[len] = '\0';
	}
	if (statvfs(dir, &sv) == -1)
		return -1;
	if (sv.f_frsize != 0 && sv.f_bavail > UINT64_MAX / sv.f_frsize)
		*free_bytes = UINT64_MAX;
	else
		*free_bytes = (uint64_t)sv.f_bavail * sv.f_frsize;
	return 0;
}
