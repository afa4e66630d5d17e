/*
 * Creating a filter file: sized, fully allocated, written whole and only
 * then given its name, so that it appears whole or not at all; and
 * replacing one (create -f) only once its users have let go of it.
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
#include <unistd.h>

#include "create.h"
#include "memory.h"
#include "segments.h"

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

	if (!memory_fits(size) || size > SIZE_MAX)
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
	e = write_all(fd, head, (size_t)h->data_offset, 0);
	free(head);
	if (e == -1 || fsync(fd) == -1)
		return -1;
	warm_cache(fd, h->file_size);
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
bloom_plan(const struct bloom_spec *spec, struct bloom_header *h)
{
	uint64_t offset;
	unsigned i, made;
	int s;

	memset(h, 0, sizeof *h);
	h->version = FORMAT_V2;
	h->header_size = V2_HEADER_SIZE;
	h->layout = LAYOUT_BLOCKED512;
	h->hash_id = HASH_XXH3_64;
	h->seed = spec->seed;
	h->mode = spec->mode;
	h->capacity = spec->first.capacity;
	h->target_fpr = spec->first.target_fpr;
	h->created_ms = spec->created_ms;
	switch (spec->mode) {
	case MODE_FIXED:
		h->slots = 1;
		break;
	case MODE_GROW:
		h->slots = SEGMENTS_MAX;
		h->growth = spec->growth;
		h->ratio = GROW_RATIO;
		break;
	case MODE_WINDOW:
		h->slots = spec->generations;
		h->window_ms = spec->window_ms;
		break;
	}
	h->data_offset = format_data_offset(h->slots);
	made = spec->mode == MODE_GROW ? 1 : h->slots;
	offset = h->data_offset;
	for (i = 0; i < made; i++) {
		if (spec->mode == MODE_FIXED) {
			h->seg[0].nblocks = spec->first.nblocks;
			h->seg[0].hashes = spec->first.hashes;
			h->seg[0].capacity = spec->first.capacity;
			h->seg[0].target_fpr = spec->first.target_fpr;
			h->seg[0].offset = offset;
		} else if ((s = segments_plan(h, i, offset, &h->seg[i])) !=
		    BLOOM_OK)
			return s;
		h->seg[i].stamp = spec->mode == MODE_WINDOW ?
		    (i == 0 ? 1 : 0) : h->created_ms;
		offset = h->seg[i].offset + h->seg[i].nblocks * BLOCK_BYTES;
		h->file_size = offset;
		offset = (offset + FILE_PAGE - 1) / FILE_PAGE * FILE_PAGE;
	}
	h->nsegments = made;
	return BLOOM_OK;
}

int
bloom_create(const char *path, const struct bloom_spec *spec, int force)
{
	struct bloom_header h;
	int s;

	if ((s = bloom_plan(spec, &h)) != BLOOM_OK)
		return s;
	return bloom_create_header(path, &h, force);
}

/* Lays out h's segments from its data offset on, each on a page. */
static void
lay_out(struct bloom_header *h)
{
	uint64_t offset = h->data_offset;
	unsigned i;

	for (i = 0; i < h->nsegments; i++) {
		h->seg[i].offset = offset;
		offset += h->seg[i].nblocks * BLOCK_BYTES;
		h->file_size = offset;
		offset = (offset + FILE_PAGE - 1) / FILE_PAGE * FILE_PAGE;
	}
}

int
bloom_plan_like(const struct bloom *tmpl, uint32_t slice, uint32_t slices,
    struct bloom_header *h)
{
	const struct bloom_header *t = &tmpl->hdr;
	unsigned i;

	*h = *t;
	h->version = FORMAT_V2;
	h->header_size = V2_HEADER_SIZE;
	h->nsegments = tmpl->nmapped;
	h->epoch = 0;
	if (t->mode == MODE_WINDOW)
		h->epoch = counter_read((const uint64_t *)(tmpl->head +
		    V2_OFF_EPOCH));
	for (i = 0; i < h->nsegments; i++) {
		h->seg[i] = tmpl->seg[i].info;
		h->seg[i].inserted = 0;
		h->seg[i].stamp = tmpl->seg[i].stamp == NULL ? 0 :
		    counter_read(tmpl->seg[i].stamp);
	}
	h->data_offset = format_data_offset(h->slots);
	if (slices != 0) {
		if (t->mode != MODE_FIXED || t->slices != 0)
			return BLOOM_ESLICE_MODE;
		if (t->seg[0].nblocks % slices != 0 ||
		    t->seg[0].nblocks < slices)
			return BLOOM_ESLICE_DIVIDE;
		h->slice = slice;
		h->slices = slices;
		h->whole_nblocks = t->seg[0].nblocks;
		h->seg[0].nblocks = t->seg[0].nblocks / slices;
	}
	lay_out(h);
	return BLOOM_OK;
}

int
bloom_create_header(const char *path, const struct bloom_header *hp,
    int force)
{
	char dir[PATH_MAX], tmp[PATH_MAX];
	struct bloom_header h = *hp;
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
	if (fill_new(fd, &h) == -1 ||
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

