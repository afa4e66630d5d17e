/*
 * Sparse filter files.  create allocates every byte of a filter, so a
 * filter with holes was copied sparse or made to hurt: a file of 64 TiB
 * with 4 KiB on disk.  Reading a hole through a shared mapping allocates a
 * page for it on tmpfs, and counting the bits of terabytes of holes takes
 * hours; so the read-only commands map holes as private zero pages and
 * the count skips them, both found with SEEK_DATA and SEEK_HOLE.
 */
#include <sys/mman.h>

#include <errno.h>
#include <unistd.h>

#include "store/holes.h"

int
holes_any(int fd, uint64_t size)
{
	off_t hole = lseek(fd, 0, SEEK_HOLE);

	return hole != -1 && (uint64_t)hole < size;
}

int
holes_next_data(int fd, uint64_t off, uint64_t end, uint64_t *from,
    uint64_t *to)
{
	off_t data, hole;

	if (off >= end)
		return 0;
	data = lseek(fd, (off_t)off, SEEK_DATA);
	if (data == -1) {
		if (errno == ENXIO)
			return 0;	/* a hole to the end of the file */
		*from = off;	/* cannot tell: all data */
		*to = end;
		return 1;
	}
	if ((uint64_t)data >= end)
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
