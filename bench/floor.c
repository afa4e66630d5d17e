/* SPDX-License-Identifier: ISC
 * floor: the least a check -c could cost on one thread.  Reads a file in
 * 1 MiB blocks, splits it into lines with memchr and hashes each line with
 * XXH3-64, then prints the line count and a checksum of the hashes (so
 * that the compiler keeps the work).  No filter: what bloom does beyond
 * this is the filter lookup and the hand-over between its two threads.
 *
 *	bench/floor file
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hash.h"

#define BLOCK	(1 << 20)

int
main(int argc, char **argv)
{
	unsigned char *buf;
	size_t have = 0, cap = 2 * BLOCK, start, end;
	uint64_t lines = 0, sum = 0;
	unsigned char *nl;
	ssize_t n;
	int fd;

	if (argc != 2 || (fd = open(argv[1], O_RDONLY)) == -1) {
		fprintf(stderr, "usage: floor file\n");
		return 2;
	}
	if ((buf = malloc(cap)) == NULL)
		return 2;
	for (;;) {
		if (cap - have < BLOCK) {
			cap *= 2;
			if ((buf = realloc(buf, cap)) == NULL)
				return 2;
		}
		n = read(fd, buf + have, BLOCK);
		if (n < 0)
			return 2;
		end = have + (size_t)n;
		for (start = 0; (nl = memchr(buf + start, '\n', end - start)) !=
		    NULL; start = (size_t)(nl - buf) + 1) {
			sum += hash64(buf + start, (size_t)(nl - buf) - start, 1);
			lines++;
		}
		if (n == 0) {
			if (start < end) {
				sum += hash64(buf + start, end - start, 1);
				lines++;
			}
			break;
		}
		memmove(buf, buf + start, end - start);
		have = end - start;
	}
	printf("%" PRIu64 " %016" PRIx64 "\n", lines, sum);
	return 0;
}
