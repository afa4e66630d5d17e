/* SPDX-License-Identifier: ISC
 * libFuzzer target for the line reader (lines.c), built with a 64-byte
 * read buffer so that short inputs reach long lines, growth and hashing
 * in stream.  The first byte chooses the terminator, whether the bytes
 * are kept and whether a helper thread reads a pipe; the rest is the
 * input.  The lines must be the input split at the terminator, each with
 * the hash of its bytes.
 */
#include <sys/mman.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bloom.h"
#include "store/handle.h"	/* white box: a handle with only a seed */
#include "hash.h"
#include "stream/lines.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* Checks the lines the reader gives for in[0..len) against a split of our
 * own; aborts on a difference. */
static void
compare(struct lines *r, const struct bloom *b, const unsigned char *in,
    size_t len, unsigned char delim, int keep)
{
	const struct line_group *g;
	const unsigned char *p = in, *end = in + len, *nl;
	size_t i, n;

	do {
		g = lines_next(r);
		if (g->err != 0)
			abort();
		for (i = 0; i < g->nlines; i++) {
			if (p >= end)
				abort();	/* a line too many */
			nl = memchr(p, delim, (size_t)(end - p));
			n = nl == NULL ? (size_t)(end - p) : (size_t)(nl - p);
			if (g->hash[i] != bloom_hash(b, p, n))
				abort();
			if (keep && (g->line[i].len != n ||
			    memcmp(g->line[i].data, p, n) != 0))
				abort();
			p += n + (nl != NULL);
		}
	} while (!g->last);
	if (p != end)
		abort();	/* a line missing */
	lines_stop(r);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static struct lines readers[4];	/* by terminator and keep */
	static int ready[4];
	static struct bloom b;
	struct lines *r;
	unsigned char delim;
	int keep, piped, fd, pipefd[2];

	if (size < 1 || size > 60000)
		return 0;
	delim = data[0] & 1 ? '\0' : '\n';
	keep = data[0] >> 1 & 1;
	piped = data[0] >> 2 & 1;
	data++;
	size--;
	b.seed = size > 0 ? 0x9e3779b97f4a7c15ULL * data[0] : 0;
	/* Made once each, as engine.c does for a run over many inputs. */
	r = &readers[data[-1] & 3];
	if (!ready[data[-1] & 3] && lines_init(r, delim, keep) == -1)
		abort();
	ready[data[-1] & 3] = 1;
	if (piped) {
		/* A pipe holds 64 KiB: written whole before reading. */
		if (pipe(pipefd) == -1 ||
		    write(pipefd[1], data, size) != (ssize_t)size)
			abort();
		close(pipefd[1]);
		fd = pipefd[0];
	} else {
		fd = memfd_create("input", 0);
		if (fd == -1 || write(fd, data, size) != (ssize_t)size ||
		    lseek(fd, 0, SEEK_SET) != 0)
			abort();
	}
	lines_start(r, fd, &b, NULL);
	compare(r, &b, data, size, delim, keep);
	close(fd);
	return 0;
}
