/* SPDX-License-Identifier: ISC
 * Sparse filter files.  create allocates every byte of a filter, so a
 * filter with holes was copied sparse or made to hurt: a file of 64 TiB
 * with 4 KiB on disk.  Reading a hole through a shared mapping allocates a
 * page for it on tmpfs, and counting the bits of terabytes of holes takes
 * hours; so the read-only commands map holes as private zero pages and
 * the count skips them, both found with SEEK_DATA and SEEK_HOLE.
 *
 * But SEEK_HOLE also reports as holes the extents that posix_fallocate
 * allocated and nothing has written yet, once their pages are out of the
 * page cache (ext4, XFS; on tmpfs, pages not read yet): every filter just
 * created or grown, after a reboot or an eviction.  Those are not holes:
 * a writer fills them through its shared mapping, and a reader that had
 * mapped them as private zero pages would never see its bits.  So a file
 * whose blocks cover its size (st_blocks) has no holes at all, whatever
 * SEEK_HOLE says, and in a file that has some, a range SEEK_HOLE calls a
 * hole is one only if FIEMAP finds no extent there either (where FIEMAP
 * cannot tell, as on tmpfs, SEEK_HOLE's word stands).
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <linux/fiemap.h>
#include <linux/fs.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "store/holes.h"

int
holes_any(int fd, uint64_t size)
{
	struct stat st;
	uint64_t at = 0, from, to;

	if (fstat(fd, &st) == -1 || st.st_blocks < 0 ||
	    (uint64_t)st.st_blocks >= (size + 511) / 512)
		return 0;	/* every byte has a block */
	while (holes_next_data(fd, at, size, &from, &to)) {
		if (from > at)
			return 1;
		at = to;
	}
	return at < size;
}

/* Returns in *at the start of the first extent of fd that overlaps
 * [off, end) and in *to its end, and 1; 0 if there is none; -1 if FIEMAP
 * cannot tell. */
static int
first_extent(int fd, uint64_t off, uint64_t end, uint64_t *at, uint64_t *to)
{
	union {
		struct fiemap map;
		unsigned char room[sizeof(struct fiemap) +
		    sizeof(struct fiemap_extent)];
	} u;
	struct fiemap_extent *x = &u.map.fm_extents[0];

	memset(&u, 0, sizeof u);
	u.map.fm_start = off;
	u.map.fm_length = end - off;
	u.map.fm_extent_count = 1;
	if (ioctl(fd, FS_IOC_FIEMAP, &u.map) == -1)
		return -1;
	if (u.map.fm_mapped_extents == 0 || x->fe_logical >= end)
		return 0;
	*at = x->fe_logical;
	*to = x->fe_logical + x->fe_length;
	return 1;
}

int
holes_next_data(int fd, uint64_t off, uint64_t end, uint64_t *from,
    uint64_t *to)
{
	off_t data, hole;
	uint64_t start, stop;

	if (off >= end)
		return 0;
	data = lseek(fd, (off_t)off, SEEK_DATA);
	if (data == -1 && errno != ENXIO) {
		*from = off;	/* cannot tell: all data */
		*to = end;
		return 1;
	}
	/* ENXIO: a hole to the end of the file. */
	stop = data == -1 || (uint64_t)data > end ? end : (uint64_t)data;
	/* [off, stop) is a hole to SEEK_HOLE: an extent there, unwritten,
	 * is data all the same. */
	if (stop > off && first_extent(fd, off, stop, &start, to) == 1) {
		*from = start < off ? off : start;
		if (*to > stop)
			*to = stop;
		return 1;
	}
	if (stop == end)
		return 0;
	hole = lseek(fd, data, SEEK_HOLE);
	*from = (uint64_t)data;
	*to = hole == -1 || (uint64_t)hole > end ? end : (uint64_t)hole;
	return 1;
}

int
holes_hide(int fd, unsigned char *map, uint64_t off, size_t size)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), end = off + size;
	uint64_t at = off, from, to, lo, hi;
	unsigned count = 0;

	while (at < end) {
		if (!holes_next_data(fd, at, end, &from, &to))
			from = to = end;
		/* The hole [at, from), in whole pages. */
		lo = (at + page - 1) / page * page;
		hi = from / page * page;
		if (lo < hi) {
			if (++count > HOLES_MAX) {
				errno = E2BIG;
				return -1;
			}
			if (mmap(map + (lo - off), (size_t)(hi - lo), PROT_READ,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
			    MAP_FAILED)
				return -1;
		}
		at = to;
	}
	return 0;
}
