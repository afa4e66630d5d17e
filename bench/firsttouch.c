/* SPDX-License-Identifier: ISC
 * bench/firsttouch: the machine's cost of memory a process has not used
 * before, what a sorted batch's arrays cost at least on their first write
 * (issue 39).  On bare metal that is the kernel zeroing a page; in a
 * virtual machine whose host takes back the memory the guest frees (free
 * page reporting, a balloon), it is also the host's fault that backs the
 * page again, many times the zeroing.
 *
 *	bench/firsttouch SIZE
 *
 * Maps SIZE bytes (suffix K, M, G) anonymous and private, advised
 * MADV_HUGEPAGE as bloom's batch arrays are, writes one byte of each
 * 4 KiB page, then writes them all again, and prints the nanoseconds per
 * 4 KiB page of each pass, "FIRST AGAIN".  Exits 0, or 2 on trouble.
 */
#include <sys/mman.h>

#include <stdint.h>
#include <stdio.h>

#include "bench/helper.h"

#define PAGE	4096

/* Writes one byte of each page of a, of size bytes; returns the seconds. */
static double
touch(volatile unsigned char *a, uint64_t size, unsigned char v)
{
	double t0 = bench_seconds();
	uint64_t i;

	for (i = 0; i < size; i += PAGE)
		a[i] = v;
	return bench_seconds() - t0;
}

int
main(int argc, char **argv)
{
	uint64_t size;
	unsigned char *a;
	double first, again, pages;

	if (argc != 2 || bench_size(argv[1], &size) == -1) {
		fprintf(stderr, "usage: bench/firsttouch SIZE\n");
		return 2;
	}
	a = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED) {
		perror("bench/firsttouch: mmap");
		return 2;
	}
#ifdef MADV_HUGEPAGE
	(void)madvise(a, (size_t)size, MADV_HUGEPAGE);
#endif
	pages = (double)(size / PAGE);
	first = touch(a, size, 1);
	again = touch(a, size, 2);
	printf("%.1f %.1f\n", first * 1e9 / pages, again * 1e9 / pages);
	munmap(a, (size_t)size);
	return 0;
}
