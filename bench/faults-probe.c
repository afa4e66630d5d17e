/* SPDX-License-Identifier: ISC
 * bench/faults-probe: the time of the first write to each page of a
 * filter file, mapped shared and writable as bloom maps it; run by
 * bench/faults on a filter `bloom create` has just made (see there).
 *
 *	bench/faults-probe MODE FILE
 *
 * Writes one byte of every 4 KiB page past the first, and puts it back,
 * after, by MODE:
 *
 *	none		nothing: a write fault per page, as a fresh add takes;
 *	populate	madvise(MADV_POPULATE_WRITE) over the mapping: the
 *			kernel maps every page writable in one call;
 *	hugepage	madvise(MADV_HUGEPAGE): huge pages where the file
 *			system gives them;
 *	again		the writes of "none" once, untimed, then again in the
 *			same mapping: pages already mapped writable.
 *
 * Prints the seconds of the advice and of the writes.  Exits 0, or 2 on
 * trouble.
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "bench/helper.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23	/* Linux 5.14 */
#endif

#define PAGE	4096

/* Writes one byte of every page of p past the first, and puts it back. */
static void
touch(volatile unsigned char *p, size_t len)
{
	size_t i;

	for (i = PAGE; i < len; i += PAGE)
		p[i] = (unsigned char)(p[i] + 1);
	for (i = PAGE; i < len; i += PAGE)
		p[i] = (unsigned char)(p[i] - 1);
}

int
main(int argc, char **argv)
{
	struct stat st;
	unsigned char *p;
	const char *mode = argc == 3 ? argv[1] : "";
	double t0, t1, t2;
	size_t len;
	int fd;

	if (strcmp(mode, "none") != 0 && strcmp(mode, "populate") != 0 &&
	    strcmp(mode, "hugepage") != 0 && strcmp(mode, "again") != 0) {
		fprintf(stderr, "usage: bench/faults-probe "
		    "none|populate|hugepage|again FILE\n");
		return 2;
	}
	if ((fd = open(argv[2], O_RDWR)) == -1 || fstat(fd, &st) == -1) {
		fprintf(stderr, "bench/faults-probe: %s: %s\n", argv[2],
		    strerror(errno));
		return 2;
	}
	len = (size_t)st.st_size;
	if (len < 2 * PAGE) {
		fprintf(stderr, "bench/faults-probe: %s: too small\n",
		    argv[2]);
		return 2;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "bench/faults-probe: mmap: %s\n",
		    strerror(errno));
		return 2;
	}
	if (strcmp(mode, "again") == 0)
		touch(p, len);
	t0 = bench_seconds();
	if (strcmp(mode, "populate") == 0 &&
	    madvise(p, len, MADV_POPULATE_WRITE) == -1) {
		fprintf(stderr, "bench/faults-probe: MADV_POPULATE_WRITE: "
		    "%s\n", strerror(errno));
		return 2;
	}
	if (strcmp(mode, "hugepage") == 0 &&
	    madvise(p, len, MADV_HUGEPAGE) == -1) {
		fprintf(stderr, "bench/faults-probe: MADV_HUGEPAGE: %s\n",
		    strerror(errno));
		return 2;
	}
	t1 = bench_seconds();
	touch(p, len);
	t2 = bench_seconds();
	printf("%.6f %.6f\n", t1 - t0, t2 - t1);
	return 0;
}
