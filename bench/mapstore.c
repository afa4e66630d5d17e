/* SPDX-License-Identifier: ISC
 * bench/mapstore: the machine's cost of dirtying a file through a shared
 * mapping, what setting a big filter's bits costs at least (issue 39): the
 * write faults (the kernel's page_mkwrite, a page made writable and
 * dirty), the dirty limit's throttling and the write-back the kernel does
 * meanwhile, with no filter code at all.
 *
 *	bench/mapstore FILE SIZE [STORES]
 *
 * Makes FILE (which must not exist) of SIZE bytes (suffix K, M, G) as
 * bloom create does: allocated with posix_fallocate, then read into the
 * page cache through a mapping advised MADV_HUGEPAGE.  Then twice, as an
 * add --new into a just-created filter (fresh) and another after it
 * (warm): maps the file MAP_SHARED and writable, ORs one bit, atomically,
 * into the 8 bytes at each of STORES (default 5000000) positions drawn by
 * SplitMix64 and taken in file order (as a sorted batch sets its keys),
 * and unmaps it, leaving the dirty pages to the kernel as bloom does.
 * Prints the two passes' seconds, "FRESH WARM", and removes FILE.
 * Exits 0, or 2 on trouble.
 */
#include <sys/mman.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/helper.h"

static uint64_t
splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int
by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Draws n word positions in size bytes, in file order. */
static void
draw(uint64_t *pos, uint64_t n, uint64_t size, uint64_t *seed)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		pos[i] = splitmix64(seed) % (size / 8);
	qsort(pos, n, sizeof pos[0], by_value);
}

/* One pass: the file mapped, a bit ORed at each position, unmapped.
 * Returns its seconds, or -1 with errno set. */
static double
pass(int fd, uint64_t size, const uint64_t *pos, uint64_t n)
{
	uint64_t *map, i;
	double t0 = bench_seconds();

	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -1;
	for (i = 0; i < n; i++)
		__atomic_fetch_or(&map[pos[i]], (uint64_t)1 << (i & 63),
		    __ATOMIC_RELAXED);
	munmap(map, size);
	return bench_seconds() - t0;
}

int
main(int argc, char **argv)
{
	uint64_t size, stores = 5000000, seed = 1, *pos;
	double fresh, warm;
	void *map;
	int fd, e;

	if (argc < 3 || argc > 4 || bench_size(argv[2], &size) == -1 ||
	    (argc == 4 && (stores = strtoull(argv[3], NULL, 10)) == 0)) {
		fprintf(stderr, "usage: bench/mapstore FILE SIZE [STORES]\n");
		return 2;
	}
	if ((pos = malloc(stores * sizeof pos[0])) == NULL) {
		perror("bench/mapstore: malloc");
		return 2;
	}
	if ((fd = open(argv[1], O_RDWR | O_CREAT | O_EXCL, 0600)) == -1) {
		fprintf(stderr, "bench/mapstore: %s: %s\n", argv[1],
		    strerror(errno));
		return 2;
	}
	if ((e = posix_fallocate(fd, 0, (off_t)size)) != 0 || fsync(fd) == -1) {
		fprintf(stderr, "bench/mapstore: %s: %s\n", argv[1],
		    strerror(e != 0 ? e : errno));
		goto fail;
	}
	/* Into the page cache as create leaves a filter (filter/create.c). */
	if ((map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0)) !=
	    MAP_FAILED) {
#ifdef MADV_HUGEPAGE
		madvise(map, size, MADV_HUGEPAGE);
#endif
#ifdef MADV_POPULATE_READ
		madvise(map, size, MADV_POPULATE_READ);
#endif
		munmap(map, size);
	}
	draw(pos, stores, size, &seed);
	if ((fresh = pass(fd, size, pos, stores)) < 0)
		goto fail_errno;
	draw(pos, stores, size, &seed);
	if ((warm = pass(fd, size, pos, stores)) < 0)
		goto fail_errno;
	printf("%.3f %.3f\n", fresh, warm);
	close(fd);
	unlink(argv[1]);
	free(pos);
	return 0;
fail_errno:
	fprintf(stderr, "bench/mapstore: %s: %s\n", argv[1], strerror(errno));
fail:
	close(fd);
	unlink(argv[1]);
	free(pos);
	return 2;
}
