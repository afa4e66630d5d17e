/* SPDX-License-Identifier: ISC */
/*
 * Other programs' filters, named where a filter of this bloom was expected:
 * they fail its magic, and "bad magic" tells a user nothing.  Debian ships
 * another /usr/bin/bloom, DCSO's (golang-github-dcso-bloom-cli), whose
 * files are, little-endian: a 64-bit word of flags whose low byte, the
 * version, is 1; the capacity n; the rate p, an IEEE double; the hashes
 * k; the bits m; the elements added N; ceil(m / 64) 64-bit words of bits;
 * then any data attached with set-data.  With --gzip the whole file is
 * gzip-compressed.  The header is read as hostile: every field is checked
 * before it is shown.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/foreign.h"
#include "lib/endian.h"

#define DCSO_HASHES_MAX	1024	/* more than any rate asks for */

/* Returns 1 if head is the header of a DCSO filter of size bytes. */
static int
is_dcso(const unsigned char *head, size_t len, uint64_t size, double *p)
{
	uint64_t bits, words;
	uint64_t bits_of_p = read_le64(head + 16);

	if (len < FOREIGN_HEAD || head[0] != 1)
		return 0;
	memcpy(p, &bits_of_p, sizeof *p);
	bits = read_le64(head + 32);
	words = bits / 64 + (bits % 64 != 0);
	return read_le64(head + 8) > 0 && *p > 0 && *p < 1 &&
	    read_le64(head + 24) > 0 && read_le64(head + 24) <=
	    DCSO_HASHES_MAX && bits > 0 && size >= FOREIGN_HEAD &&
	    words <= (size - FOREIGN_HEAD) / 8;
}

int
foreign_describe(const unsigned char *head, size_t len, uint64_t size,
    char *out, size_t outsize)
{
	double p;

	if (len >= 3 && head[0] == 0x1f && head[1] == 0x8b && head[2] == 8) {
		snprintf(out, outsize, "gzip-compressed, not a bloom filter: "
		    "DCSO's bloom (Debian's golang-github-dcso-bloom-cli) "
		    "writes its filters so with --gzip; use that program, "
		    "or gunzip the file if it holds a filter of this bloom");
		return 1;
	}
	if (!is_dcso(head, len, size, &p))
		return 0;
	snprintf(out, outsize, "a filter of DCSO's bloom (Debian's "
	    "golang-github-dcso-bloom-cli), not of this bloom: capacity %"
	    PRIu64 ", fpr %g, %" PRIu64 " hashes, %" PRIu64 " bits, %" PRIu64
	    " elements; use that program, or add the original lines to a "
	    "filter of this one", read_le64(head + 8), p, read_le64(head + 24),
	    read_le64(head + 32), read_le64(head + 40));
	return 1;
}

int
foreign_file(const char *path, char *out, size_t outsize)
{
	unsigned char head[FOREIGN_HEAD];
	struct stat st;
	ssize_t got;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1)
		return 0;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (got = pread(fd, head, sizeof head, 0)) < 0) {
		close(fd);
		return 0;
	}
	close(fd);
	return foreign_describe(head, (size_t)got, (uint64_t)st.st_size, out,
	    outsize);
}
