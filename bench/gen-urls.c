/* SPDX-License-Identifier: ISC
 * gen-urls: writes a deterministic, crawler-like stream of URLs for the
 * benchmark.  Each line is either a URL never written before or, with
 * probability FRACTION, a repeat of one written earlier.
 *
 * URL number id (the id-th distinct URL, counting from --unique-from) is a
 * pure function of id: the same id gives the same URL whatever the seed,
 * and different ids give different URLs, because the last path segment
 * ends in "-<id in base 36>" and nothing after it contains a '-'.  So runs
 * with disjoint ranges [K, K + N) give disjoint sets of URLs.  The seed
 * only decides which lines repeat and what they repeat.
 *
 * A repeat is drawn uniformly among the distinct URLs written so far (not
 * among the lines, and with no bias towards recent ones), which needs no
 * memory: they are exactly the ids K .. K + distinct - 1.
 *
 * At the end one line goes to standard error:
 *	gen-urls: N lines, D distinct, B bytes
 * where D is the number of distinct URLs written.
 *
 * C11 and libc only: cc -O2 -o gen-urls gen-urls.c
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/positions.h"

#define OUTPUT_SIZE	(1 << 20)	/* bytes buffered between writes */
#define URL_MAX		256		/* longest URL we can produce, with room */
#define DEFAULT_DUP	0.5

/* A string with its length, so that the hot loop never calls strlen. */
struct word {
	const char *s;		/* the text */
	size_t len;		/* its length */
};

#define W(s)	{ s, sizeof(s) - 1 }
#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/* Hosts, most popular first: the pick below favours the front. */
static const struct word hosts[] = {
	W("www.example.com"), W("news.example.org"), W("shop.example.net"),
	W("blog.example.io"), W("wiki.example.org"), W("m.example.jp"),
	W("docs.example.com"), W("forum.example.de"), W("api.example.dev"),
	W("cdn.example.net"), W("www.example.co.uk"), W("media.example.fr"),
	W("store.example.ca"), W("img.example.net"), W("search.example.com"),
	W("jobs.example.com"), W("travel.example.es"), W("music.example.se"),
	W("video.example.tv"), W("maps.example.com"),
};

/* Sections: the first one or two path segments (32 of them). */
static const struct word sections[] = {
	W("news"), W("sports"), W("tech"), W("science"), W("world"),
	W("business"), W("health"), W("travel"), W("food"), W("style"),
	W("arts"), W("books"), W("music"), W("movies"), W("games"),
	W("opinion"), W("politics"), W("weather"), W("autos"), W("homes"),
	W("edu"), W("jobs"), W("video"), W("photos"), W("blog"), W("wiki"),
	W("forum"), W("shop"), W("p"), W("c"), W("tag"), W("archive"),
};

/* Slugs: the start of the last path segment (32 of them). */
static const struct word slugs[] = {
	W("how-to"), W("review"), W("guide"), W("top-10"), W("best"),
	W("update"), W("report"), W("interview"), W("analysis"), W("news"),
	W("release"), W("tutorial"), W("faq"), W("overview"), W("vs"),
	W("preview"), W("recap"), W("item"), W("story"), W("profile"),
	W("history"), W("tips"), W("deal"), W("offer"), W("event"),
	W("page"), W("results"), W("photos"), W("live"), W("explained"),
	W("index"), W("post"),
};

static const struct word extensions[] = {
	W(""), W(".html"), W(""), W(".php"),
};

static const char usage_text[] =
    "usage: gen-urls N [--dup FRACTION] [--seed S] [--unique-from K]\n";

/* SplitMix64 (Steele, Lea and Flood, 2014), the product's
 * (store/positions.h): the generator's state walks by a fixed odd gamma
 * and each step is scrambled by its bijective mixer. */
static inline uint64_t
next_random(uint64_t *state)
{
	*state += SPLITMIX_GAMMA;
	return splitmix(*state);
}

/* Picks one of n entries from 5 random bits, favouring the front: the
 * smaller of two uniform picks, so entry i has weight 2(n - i) - 1. */
static inline size_t
pick_skewed(uint64_t bits, size_t n)
{
	size_t a = (size_t)(bits & 31) % n, b = (size_t)((bits >> 5) & 31) % n;

	return a < b ? a : b;
}

static inline char *
put(char *p, const struct word *w)
{
	memcpy(p, w->s, w->len);
	return p + w->len;
}

/* Writes v in base 36, lower case, most significant digit first. */
static inline char *
put_base36(char *p, uint64_t v)
{
	char digits[16];
	size_t n = 0;

	do {
		digits[n++] = "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36];
		v /= 36;
	} while (v != 0);
	while (n > 0)
		*p++ = digits[--n];
	return p;
}

static inline char *
put_decimal(char *p, unsigned v)
{
	char digits[12];
	size_t n = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n > 0)
		*p++ = digits[--n];
	return p;
}

/*
 * Writes URL number id and a newline at p; returns the end.  The shape is
 *	https://HOST/SECTION[/SECTION]/SLUG-ID36[EXT]?q=N
 * with everything but ID36 picked by bits of a hash of id.
 */
static char *
put_url(char *p, uint64_t id)
{
	static const struct word scheme = W("https://");
	uint64_t h = splitmix(id ^ 0x5bd1e9955bd1e995ULL);

	p = put(p, &scheme);
	p = put(p, &hosts[pick_skewed(h, NELEM(hosts))]);
	h >>= 10;
	*p++ = '/';
	p = put(p, &sections[h & 31]);
	h >>= 5;
	if (h & 1) {
		*p++ = '/';
		p = put(p, &sections[(h >> 1) & 31]);
	}
	h >>= 6;
	*p++ = '/';
	p = put(p, &slugs[h & 31]);
	h >>= 5;
	*p++ = '-';
	p = put_base36(p, id);
	p = put(p, &extensions[h & 3]);
	h >>= 2;
	memcpy(p, "?q=", 3);
	p = put_decimal(p + 3, (unsigned)(h % 1000));
	*p++ = '\n';
	return p;
}

static void
write_all(const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(STDOUT_FILENO, buf, len);

		if (n == -1) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "gen-urls: write error: %s\n",
			    strerror(errno));
			exit(1);
		}
		buf += n;
		len -= (size_t)n;
	}
}

static void
usage(void)
{
	fputs(usage_text, stderr);
	exit(2);
}

/* Parses a whole unsigned number: decimal, or hex with 0x if base is 0. */
static int
parse_u64(const char *s, int base, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = (uint64_t)v;
	return 0;
}

static int
parse_fraction(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v >= 0.0 && v <= 1.0))
		return -1;
	*out = v;
	return 0;
}

/* Returns the value of option name at argv[*i], as "--name V" or
 * "--name=V", advancing *i past it; NULL if argv[*i] is not that option. */
static const char *
option_value(int argc, char **argv, int *i, const char *name)
{
	size_t len = strlen(name);
	const char *arg = argv[*i];

	if (strncmp(arg, name, len) != 0)
		return NULL;
	if (arg[len] == '=')
		return arg + len + 1;
	if (arg[len] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		fprintf(stderr, "gen-urls: %s needs a value\n", name);
		usage();
	}
	return argv[++*i];
}

int
main(int argc, char **argv)
{
	uint64_t lines = 0, seed = 0, first_id = 0, distinct = 0, bytes = 0;
	uint64_t i, state, threshold;
	double dup = DEFAULT_DUP;
	const char *v;
	char *buf, *p, *limit;
	int a, have_lines = 0;

	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "-h") == 0 ||
		    strcmp(argv[a], "--help") == 0) {
			fputs(usage_text, stdout);
			return 0;
		}
		if ((v = option_value(argc, argv, &a, "--dup")) != NULL) {
			if (parse_fraction(v, &dup) == -1) {
				fprintf(stderr, "gen-urls: --dup takes a "
				    "fraction from 0 to 1, not '%s'\n", v);
				usage();
			}
		} else if ((v = option_value(argc, argv, &a, "--seed")) !=
		    NULL) {
			if (parse_u64(v, 0, &seed) == -1) {
				fprintf(stderr, "gen-urls: --seed takes a "
				    "64-bit number, not '%s'\n", v);
				usage();
			}
		} else if ((v = option_value(argc, argv, &a,
		    "--unique-from")) != NULL) {
			if (parse_u64(v, 10, &first_id) == -1) {
				fprintf(stderr, "gen-urls: --unique-from "
				    "takes a whole number, not '%s'\n", v);
				usage();
			}
		} else if (argv[a][0] == '-') {
			fprintf(stderr, "gen-urls: unknown option '%s'\n",
			    argv[a]);
			usage();
		} else if (!have_lines) {
			if (parse_u64(argv[a], 10, &lines) == -1) {
				fprintf(stderr, "gen-urls: N is a whole "
				    "number of lines, not '%s'\n", argv[a]);
				usage();
			}
			have_lines = 1;
		} else {
			fprintf(stderr, "gen-urls: one N at a time\n");
			usage();
		}
	}
	if (!have_lines) {
		fprintf(stderr, "gen-urls: N not given\n");
		usage();
	}
	if (first_id > UINT64_MAX - lines) {
		fprintf(stderr, "gen-urls: --unique-from plus N passes "
		    "2^64\n");
		usage();
	}

	buf = malloc(OUTPUT_SIZE);
	if (buf == NULL) {
		fprintf(stderr, "gen-urls: out of memory\n");
		return 1;
	}
	/* A line repeats when 53 random bits fall below dup * 2^53. */
	threshold = (uint64_t)(dup * 9007199254740992.0);
	state = seed;
	p = buf;
	limit = buf + OUTPUT_SIZE - URL_MAX;

	/* The hot loop: one random draw, maybe a second, and one URL. */
	for (i = 0; i < lines; i++) {
		uint64_t id;

		if (distinct > 0 && (next_random(&state) >> 11) < threshold)
			id = first_id + next_random(&state) % distinct;
		else
			id = first_id + distinct++;
		p = put_url(p, id);
		if (p > limit) {
			write_all(buf, (size_t)(p - buf));
			bytes += (uint64_t)(p - buf);
			p = buf;
		}
	}
	write_all(buf, (size_t)(p - buf));
	bytes += (uint64_t)(p - buf);
	free(buf);
	fprintf(stderr, "gen-urls: %" PRIu64 " lines, %" PRIu64 " distinct, %"
	    PRIu64 " bytes\n", lines, distinct, bytes);
	return 0;
}
