/* SPDX-License-Identifier: ISC
 * hashsum: prints the hash64() of files, so that the tests can compare it
 * with xxhsum -H3 and with known answers (with -c, the streaming form's,
 * given the file in pieces of that many bytes); also writes the xxHash sanity
 * buffer those known answers are computed over.
 */
#include <err.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hash.h"

/*
 * The generator of xxhsum's sanity buffer.  Its multiplier is written there
 * in decimal, 11400714785074694797, which is 0x9E3779B185EBCA8D and not the
 * PRIME64_1 of the hash (0x9E3779B185EBCA87); the known answers need this one.
 */
#define SANITY_START	0x9E3779B1U
#define SANITY_MUL	0x9E3779B185EBCA8DULL

static void
usage(void)
{
	fprintf(stderr, "usage: hashsum [-c chunk] [-s seed] [file ...]\n"
	    "       hashsum --pattern length\n");
	exit(2);
}

/* Returns 0 with *n set to the number in s, or -1 if s is not one. */
static int
parse_u64(const char *s, uint64_t *n)
{
	unsigned long long v;
	char *end;

	/* strtoull would accept a sign and quietly negate. */
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0')
		return -1;
	*n = v;
	return 0;
}

/*
 * Writes the first len bytes of the buffer that xxHash's sanity check
 * (cli/xsum_sanity_check.c) hashes: the top byte of a 64-bit generator that
 * starts at SANITY_START and is multiplied by SANITY_MUL after every byte.
 */
static void
pattern(uint64_t len)
{
	uint64_t gen = SANITY_START, i;

	for (i = 0; i < len; i++) {
		putchar((int)(gen >> 56));
		gen *= SANITY_MUL;
	}
}

/* Returns the whole content of fp in a malloc'd buffer, or NULL on error. */
static unsigned char *
slurp(FILE *fp, size_t *lenp)
{
	unsigned char *buf = NULL, *grown;
	size_t len = 0, cap = 0, n;

	do {
		if (len == cap) {
			cap = cap ? 2 * cap : 65536;
			if ((grown = realloc(buf, cap)) == NULL)
				goto fail;
			buf = grown;
		}
		n = fread(buf + len, 1, cap - len, fp);
		len += n;
	} while (n > 0);
	if (ferror(fp))
		goto fail;
	*lenp = len;
	return buf;
fail:
	free(buf);
	return NULL;
}

/*
 * Prints the hash of the file name, "-" being stdin; returns 0, or -1 after
 * a warning.
 */
/* Returns the streaming form's hash of the len bytes of buf, given in
 * pieces of chunk bytes. */
static uint64_t
stream(const unsigned char *buf, size_t len, uint64_t seed, uint64_t chunk)
{
	struct hash_state st;
	size_t off, n;

	hash64_begin(&st, seed);
	for (off = 0; off < len; off += n) {
		n = len - off < chunk ? len - off : (size_t)chunk;
		hash64_update(&st, buf + off, n);
	}
	return hash64_digest(&st);
}

static int
sum(const char *name, uint64_t seed, uint64_t chunk)
{
	FILE *fp = stdin;
	unsigned char *buf;
	size_t len;

	if (strcmp(name, "-") != 0 && (fp = fopen(name, "rb")) == NULL) {
		warn("%s", name);
		return -1;
	}
	buf = slurp(fp, &len);
	if (buf == NULL)
		warn("%s", name);
	else
		printf("%016" PRIx64 "  %s\n", chunk == 0 ?
		    hash64(buf, len, seed) : stream(buf, len, seed, chunk),
		    name);
	free(buf);
	if (fp != stdin)
		fclose(fp);
	return buf == NULL ? -1 : 0;
}

int
main(int argc, char *argv[])
{
	uint64_t seed = 0, chunk = 0, len;
	int ch, status = 0;

	if (argc > 1 && strcmp(argv[1], "--pattern") == 0) {
		if (argc != 3)
			usage();
		if (parse_u64(argv[2], &len) == -1)
			errx(2, "bad length: %s", argv[2]);
		pattern(len);
	} else {
		while ((ch = getopt(argc, argv, "c:s:")) != -1) {
			switch (ch) {
			case 'c':
				if (parse_u64(optarg, &chunk) == -1 ||
				    chunk == 0)
					errx(2, "bad chunk size: %s", optarg);
				break;
			case 's':
				if (parse_u64(optarg, &seed) == -1)
					errx(2, "bad seed: %s", optarg);
				break;
			default:
				usage();
			}
		}
		argc -= optind;
		argv += optind;
		if (argc == 0 && sum("-", seed, chunk) == -1)
			status = 2;
		for (; argc > 0; argc--, argv++)
			if (sum(*argv, seed, chunk) == -1)
				status = 2;
	}
	if (fflush(stdout) == EOF || ferror(stdout))
		err(2, "stdout");
	return status;
}
