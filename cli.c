/*
 * bloom: the command line.  Parses arguments, streams lines through the
 * filter, writes results and says what went wrong.  The only file that
 * prints or exits.
 */
#include <sys/random.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bloom.h"
#include "create.h"
#include "engine.h"
#include "fields.h"
#include "merge.h"
#include "params.h"
#include "parse.h"
#include "progress.h"
#include "quote.h"
#include "stats.h"

#ifndef BLOOM_VERSION_STRING
#define BLOOM_VERSION_STRING "unknown"
#endif

#define DEFAULT_CAPACITY	1000000
#define DEFAULT_FPR		0.01
#define MAX_DERIVED_FPR		0.5	/* -s with -n: the most we accept */
#define DEFAULT_GROWTH		2.0	/* --grow: capacity factor */

/* Exit statuses, as grep(1) has them. */
#define EXIT_SELECTED	0
#define EXIT_NONE	1
#define EXIT_TROUBLE	2

/* getopt_long values of the options that have no letter: not chars, so
 * that bad_option can tell them from an unknown letter. */
enum { OPT_SEED = 256, OPT_SYNC, OPT_JSON, OPT_GROW, OPT_GROWTH,
    OPT_GENERATIONS, OPT_WINDOW, OPT_LIKE, OPT_SLICE, OPT_SLICES,
    OPT_DRY_RUN, OPT_PROGRESS, OPT_NO_CREATE, OPT_MEMORY };

enum command { CMD_CREATE, CMD_ADD, CMD_CHECK, CMD_STATS, CMD_ROTATE,
    CMD_MERGE, CMD_ROUTE, CMD_HELP, NCMD };

static const char *const command_name[NCMD] = {
	"create", "add", "check", "stats", "rotate", "merge", "route", "help"
};

/* The SYNOPSIS of bloom(1), line for line. */
static const char *const synopsis[NCMD] = {
	("bloom create [-f] [-k hashes] [-n capacity] [-p fpr] [-s size]\n"
	"             [--slices n] [--grow [--growth factor]]\n"
	"             [--generations count [--window duration]] [--seed n]\n"
	"             [--dry-run] filter\n"
	"bloom create --like template [-f] [--slice i/n] filter"),
	("bloom add [-D | -N] [-z] [-f list [-d delim]] [--memory size]\n"
	"          [--no-create] [--progress] [--sync] filter [file ...]"),
	("bloom check [-cqvz] [-f list [-d delim]] [--memory size]\n"
	"            [--progress] filter [file ...]"),
	"bloom stats [--json] filter",
	"bloom rotate filter",
	"bloom merge filter source ...",
	"bloom route [-z] [-o prefix] [--slices n] filter [file ...]",
	"bloom help [command]",
};

static const char *const option_help[NCMD] = {
	("Create an empty filter file sized for the given capacity and false-\n"
	"positive rate; any two of -n, -p and -s determine the third (-s\n"
	"alone keeps the rate of 0.01 and derives the capacity).\n"
	"  -n capacity  items the filter is sized for (default 1000000)\n"
	"  -p fpr       false-positive rate at capacity (default 0.01)\n"
	"  -s size      bytes of bit array, with suffix K, M, G or T (powers of\n"
	"               1024); rounded down to whole 64-byte blocks\n"
	"  -k hashes    bits per item, 1 to 32 (default: the best for the size)\n"
	"  --grow       grow past capacity: -n is the first segment's capacity,\n"
	"               -p bounds the rate of the whole filter at any size\n"
	"  --growth F   each new segment F times the last (default 2; 1.25-16)\n"
	"  --generations G\n"
	"               forget: G generations (2-64), the oldest dropped at\n"
	"               each rotation; -n is distinct lines per window\n"
	"  --window D   rotate by time: remember a line for at least D after it\n"
	"               was last added (90s, 30m, 12h, 7d, 2w); without it,\n"
	"               bloom rotate rotates\n"
	"  --slices n   round the blocks up to a multiple of n, so that the\n"
	"               filter can be cut into n slices (--slice)\n"
	"  --seed n     hash seed (default: random)\n"
	"  --like template\n"
	"               an empty filter with the template's seed, mode,\n"
	"               geometry and generations: one that merge accepts\n"
	"  --slice i/n  with --like: slice i (0 to n-1) of the template's\n"
	"               blocks, for a filter spread over n hosts\n"
	"  --dry-run    print what would be made; make nothing\n"
	"  -f           replace an existing file\n"),
	("Add lines to the filter.  A missing filter is created growable, for\n"
	"1000000 lines at first and a rate of 0.01, unless --no-create is\n"
	"given or BLOOM_NO_CREATE is set to 1.\n"
	"  -N, --new    write the lines that were not yet in the filter\n"
	"  -D, --dups   write the lines that were already in it, every repeat\n"
	"  -f list      the key is these fields (1,3 or 2- as in cut), not the\n"
	"               whole line; missing fields are empty\n"
	"  -d delim     the field separator, one byte (default TAB)\n"
	"  -z           lines end with NUL, not newline\n"
	"  --memory S   bytes bloom may use (K, M, G, T); default: the cgroup\n"
	"               limit or available memory\n"
	"  --no-create  fail if the filter does not exist\n"
	"  --progress   a status line on standard error as it goes\n"
	"  --sync       write the filter to stable storage before exiting\n"
	"SIGUSR1 prints one status line.\n"),
	("Write the lines that may be in the filter.\n"
	"  -v           write the lines that are certainly not in the filter\n"
	"  -c           write only the number of such lines\n"
	"  -q           write nothing; the exit status tells\n"
	"  -f list      the key is these fields (1,3 or 2- as in cut), not the\n"
	"               whole line; missing fields are empty\n"
	"  -d delim     the field separator, one byte (default TAB)\n"
	"  -z           lines end with NUL, not newline\n"
	"  --memory S   bytes bloom may use (K, M, G, T); default: the cgroup\n"
	"               limit or available memory\n"
	"  --progress   a status line on standard error as it goes\n"
	"SIGUSR1 prints one status line.\n"
	"Exit status 0 if a line was selected, 1 if none, 2 on error.\n"),
	("Describe the filter: size, fill, estimated items and error rate, and\n"
	"each of its segments.\n"
	"  --json       one JSON object instead of key: value lines\n"),
	("Start a new generation of a filter made with --generations, now:\n"
	"the oldest generation is forgotten.\n"),
	("OR each source into filter, in place: filter then holds the union of\n"
	"their lines.  Sources must have filter's seed and geometry (create\n"
	"--like); a slice goes into its part of the whole filter.  Safe while\n"
	"other processes add to or check filter.\n"),
	("Split lines by the slice of filter that holds them: each line is\n"
	"written after its slice number and a tab, or with -o to the file\n"
	"prefix followed by the slice number.\n"
	"  -o prefix    write slice i's lines to the file prefix<i>\n"
	"  --slices n   the number of slices, for a whole filter (a slice\n"
	"               knows it)\n"
	"  -z           lines end with NUL, not newline\n"),
	"Describe a command, or all of them.\n",
};

static const char *progname = "bloom";

/* The message SIGBUS writes: the mapped filter shrank under us. */
static char sigbus_message[512];

/* Writes a message, its bytes quoted (quote.c): the names and values in
 * it come from outside and must not forge a line or reach the terminal
 * raw. */
static void
vwarnx(const char *fmt, va_list ap)
{
	char buf[1024], *msg = buf;
	va_list again;
	int len;

	va_copy(again, ap);
	len = vsnprintf(buf, sizeof buf, fmt, ap);
	if (len >= (int)sizeof buf && (msg = malloc((size_t)len + 1)) != NULL)
		vsnprintf(msg, (size_t)len + 1, fmt, again);
	va_end(again);
	if (msg == NULL)
		msg = buf;	/* cut short */
	fprintf(stderr, "%s: ", progname);
	if (len >= 0)
		quote_fputs(stderr, msg);
	fputc('\n', stderr);
	if (msg != buf)
		free(msg);
}

static void
warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarnx(fmt, ap);
	va_end(ap);
}

static void
errx(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarnx(fmt, ap);
	va_end(ap);
	exit(status);
}

static void
print_synopsis(FILE *fp, enum command cmd, const char *lead)
{
	const char *s;

	fputs(lead, fp);
	for (s = synopsis[cmd]; *s != '\0'; s++) {
		fputc(*s, fp);
		if (*s == '\n')
			fprintf(fp, "%*s", (int)strlen(lead), "");
	}
	fputc('\n', fp);
}

static void
print_usage(FILE *fp)
{
	int cmd;

	for (cmd = 0; cmd < NCMD; cmd++)
		print_synopsis(fp, (enum command)cmd,
		    cmd == 0 ? "usage: " : "       ");
	fprintf(fp, "       bloom --version\n");
}

/* A usage error: the message, then the synopsis of cmd (or all). */
static void
usage_error(int cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarnx(fmt, ap);
	va_end(ap);
	if (cmd < 0 || cmd == CMD_HELP)
		print_usage(stderr);
	else
		print_synopsis(stderr, (enum command)cmd, "usage: ");
	exit(EXIT_TROUBLE);
}

/*
 * Reports the option getopt_long returned ch (':' or '?') for.  optopt is 0
 * for an unknown long option, the val of a long option given a value it
 * does not take, or else the option letter.
 */
static void
bad_option(enum command cmd, int ch, char **argv, const char *shortopts,
    const struct option *longopts)
{
	const char *name = command_name[cmd];
	const struct option *o;

	if (ch == ':' && optopt < 256 && strchr(shortopts, optopt) != NULL)
		usage_error((int)cmd, "%s: option '-%c' needs a value", name,
		    optopt);
	if (ch == ':')
		usage_error((int)cmd, "%s: option '%s' needs a value", name,
		    argv[optind - 1]);
	if (optopt == 0)
		usage_error((int)cmd, "%s: unknown option '%s'", name,
		    argv[optind - 1]);
	/* A letter getopt knows is a long option given a value: as a short
	 * one it would have been accepted. */
	if (optopt >= 256 || strchr(shortopts, optopt) != NULL)
		for (o = longopts; o->name != NULL; o++)
			if (o->val == optopt)
				usage_error((int)cmd, "%s: option '--%s' takes no "
				    "value", name, o->name);
	usage_error((int)cmd, "%s: unknown option '-%c'", name, optopt);
}

static void
print_help(enum command cmd)
{
	print_synopsis(stdout, cmd, "usage: ");
	fputc('\n', stdout);
	fputs(option_help[cmd], stdout);
}

static void
print_help_all(void)
{
	int cmd;

	print_usage(stdout);
	fputs("\nA Bloom filter in a file: add lines, then ask whether a line "
	    "was seen.\nFalse positives at the rate the filter was sized for;"
	    " never a false\nnegative.  'bloom help command' or 'man bloom' "
	    "for more.\n", stdout);
	for (cmd = 0; cmd < CMD_HELP; cmd++)
		printf("\n%s: %s", command_name[cmd], option_help[cmd]);
}

/* Flushes stdout and fails loudly if anything written to it was lost. */
static int
close_stdout(void)
{
	if (fflush(stdout) == EOF || ferror(stdout)) {
		if (errno != EPIPE)
			warnx("write error: %s", strerror(errno));
		return -1;
	}
	if (fclose(stdout) == EOF) {
		warnx("write error: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Keeps descriptors 0 to 2 taken, so that no file we open, above all the
 * mapped filter, becomes a standard stream.  A closed one is opened on
 * /dev/null the wrong way round, so that using it still fails.
 */
static void
reserve_std_fds(void)
{
	int fd;

	for (fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
		if (fcntl(fd, F_GETFD) == -1 && open("/dev/null",
		    fd == STDIN_FILENO ? O_WRONLY : O_RDONLY) != fd)
			exit(EXIT_TROUBLE);
}

static int
finish(int status)
{
	if (close_stdout() == -1)
		return EXIT_TROUBLE;
	return status;
}

/* Reports a failure of the filter at path with status s. */
static void
filter_error(const char *path, int s, const struct bloom_header *h)
{
	if (s == BLOOM_ESIZE)
		warnx("%s: size mismatch (file is not the %" PRIu64
		    " bytes its header says)", path, h->file_size);
	else if (s == BLOOM_EVERSION)
		warnx("%s: unsupported format version %" PRIu32
		    " (this bloom reads versions 1 and 2)", path, h->version);
	else
		warnx("%s: %s", path, bloom_strerror(s));
}

/* Refuses a filter that is also the standard output, which writing would
 * destroy; returns 0, or -1 after saying so. */
static int
not_own_output(const struct bloom *b, const char *path)
{
	if (!bloom_is_file(b, STDOUT_FILENO))
		return 0;
	warnx("%s: is also the standard output: refusing to write into the "
	    "filter", path);
	return -1;
}

static uint64_t
random_seed(void)
{
	uint64_t seed;

	if (getrandom(&seed, sizeof seed, 0) != (ssize_t)sizeof seed)
		errx(EXIT_TROUBLE, "cannot get a random seed: %s",
		    strerror(errno));
	return seed;
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Sizes a fixed filter's array, or fails with a message; returns 0 or
 * -1. */
static int
solve_fixed(const char *path, struct params *p, enum solve_for what)
{
	if (params_solve(p, what) == -1) {
		if (errno == EFBIG)
			warnx("%s: a filter for %" PRIu64 " items at fpr %g "
			    "would exceed %" PRIu64 " TiB", path, p->capacity,
			    p->target_fpr, NBLOCKS_MAX * BLOCK_BYTES >> 40);
		else if (what == SOLVE_FPR)
			warnx("%s: %" PRIu64 " items would fill %" PRIu64
			    " bytes completely", path, p->capacity,
			    p->nblocks * BLOCK_BYTES);
		else
			warnx("%s: %" PRIu64 " bytes cannot hold one item at "
			    "fpr %g", path, p->nblocks * BLOCK_BYTES,
			    p->target_fpr);
		return -1;
	}
	/* A filter that passes most absent keys is not worth a file. */
	if (what == SOLVE_FPR && p->target_fpr > MAX_DERIVED_FPR) {
		warnx("%s: %" PRIu64 " items in %" PRIu64 " bytes would give "
		    "a false-positive rate of %.3g; give a larger -s or a "
		    "smaller -n", path, p->capacity, p->nblocks * BLOCK_BYTES,
		    p->target_fpr);
		return -1;
	}
	return 0;
}

/* Tells that a command has waited a second for its shared lock. */
static void
tell_open_waits(const char *path)
{
	warnx("%s: waiting for a lock: another process holds the filter "
	    "exclusively (a create -f replacing it, or any process that "
	    "may read it)", path);
}

/* Tells that create -f has waited a second for the file's users. */
static void
tell_create_waits(const char *path)
{
	warnx("%s: waiting for a lock: another process has the filter open, "
	    "and create -f replaces it only once nothing uses it", path);
}

/* Creates path for spec, or fails with a message; returns 0 or -1. */
static int
create_filter(const char *path, struct bloom_spec *spec, int force)
{
	int s;

	spec->created_ms = now_ms();
	spec->on_wait = tell_create_waits;
	s = bloom_create(path, spec, force);
	if (s == BLOOM_OK)
		return 0;
	if (s == BLOOM_ERRNO && errno == EEXIST)
		warnx("%s: file exists (use -f to replace it)", path);
	else if (s == BLOOM_ENOTREG || s == BLOOM_ESHORT || s == BLOOM_EMAGIC)
		warnx("%s: will not replace: %s; create -f replaces only bloom "
		    "filters", path, bloom_strerror(s));
	else if (s == BLOOM_ETOOBIG)
		warnx("%s: a filter for %" PRIu64 " items at fpr %g would "
		    "exceed %" PRIu64 " TiB", path, spec->first.capacity,
		    spec->first.target_fpr, NBLOCKS_MAX * BLOCK_BYTES >> 40);
	else
		warnx("%s: cannot create: %s", path, bloom_strerror(s));
	return -1;
}

/* Parses i/n, 0 <= i < n. */
static int
parse_slice(const char *s, uint32_t *slice, uint32_t *slices)
{
	char buf[64], *slash;
	uint64_t i, n;

	if (strlen(s) >= sizeof buf)
		return -1;
	strcpy(buf, s);
	if ((slash = strchr(buf, '/')) == NULL)
		return -1;
	*slash = '\0';
	if (parse_u64(buf, 0, &i) == -1 || parse_u64(slash + 1, 0, &n) == -1 ||
	    n == 0 || i >= n || n > UINT32_MAX)
		return -1;
	*slice = (uint32_t)i;
	*slices = (uint32_t)n;
	return 0;
}

/* Creates path like the filter at template; returns an exit status. */
static int
create_like(const char *path, const char *template, uint32_t slice,
    uint32_t slices, int force)
{
	struct bloom tmpl;
	struct bloom_header h;
	int s;

	s = bloom_open(&tmpl, template, 0, tell_open_waits);
	if (s != BLOOM_OK) {
		filter_error(template, s, &tmpl.hdr);
		return EXIT_TROUBLE;
	}
	s = bloom_refresh(&tmpl);
	if (s == BLOOM_OK)
		s = bloom_plan_like(&tmpl, slice, slices, &h);
	bloom_close(&tmpl);
	if (s != BLOOM_OK) {
		warnx("%s: cannot make a filter like it: %s", template,
		    bloom_strerror(s));
		return EXIT_TROUBLE;
	}
	s = bloom_create_header(path, &h, force, tell_create_waits);
	if (s == BLOOM_ERRNO && errno == EEXIST) {
		warnx("%s: file exists (use -f to replace it)", path);
		return EXIT_TROUBLE;
	}
	if (s != BLOOM_OK) {
		warnx("%s: cannot create: %s", path, bloom_strerror(s));
		return EXIT_TROUBLE;
	}
	return 0;
}

/*
 * Prints what create would make of spec if dry_run; else refuses a filter
 * larger than the free space where it would go, before anything is
 * allocated.  Returns 1 if done (a dry run), 0 to go on, or -1.
 */
static int
check_plan(const char *path, const struct bloom_spec *spec, int dry_run)
{
	static struct bloom_header h;
	char need[32], have[32];
	uint64_t free_bytes;
	int s;

	if ((s = bloom_plan(spec, &h)) != BLOOM_OK) {
		if (!dry_run)
			return 0;	/* create_filter says why */
		warnx("%s: %s", path, bloom_strerror(s));
		return -1;
	}
	if (dry_run) {
		stats_print_plan(stdout, path, &h);
		return 1;
	}
	if (bloom_free_space(path, &free_bytes) == 0 &&
	    h.file_size > free_bytes) {
		warnx("%s: needs %" PRIu64 " bytes (%s) but its file system "
		    "has %" PRIu64 " bytes (%s) free", path, h.file_size,
		    stats_human(need, sizeof need, (double)h.file_size),
		    free_bytes, stats_human(have, sizeof have,
		    (double)free_bytes));
		return -1;
	}
	return 0;
}

static int
cmd_create(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "grow", no_argument, NULL, OPT_GROW },
		{ "growth", required_argument, NULL, OPT_GROWTH },
		{ "generations", required_argument, NULL, OPT_GENERATIONS },
		{ "window", required_argument, NULL, OPT_WINDOW },
		{ "like", required_argument, NULL, OPT_LIKE },
		{ "slice", required_argument, NULL, OPT_SLICE },
		{ "slices", required_argument, NULL, OPT_SLICES },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char shortopts[] = ":fhk:n:p:s:";
	struct bloom_spec spec;
	struct params *p = &spec.first;
	uint64_t v, size = 0;
	int ch, force = 0, have_n = 0, have_p = 0, have_s = 0, have_seed = 0;
	int have_growth = 0, sizing = 0, dry_run = 0, s;
	enum solve_for what;
	const char *like = NULL;
	uint32_t slice = 0, slices = 0, cut = 0;
	const char *why;
	char *end;

	memset(&spec, 0, sizeof spec);
	spec.mode = MODE_FIXED;
	spec.growth = DEFAULT_GROWTH;
	p->capacity = DEFAULT_CAPACITY;
	p->target_fpr = DEFAULT_FPR;
	while ((ch = getopt_long(argc, argv, shortopts, longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'f':
			force = 1;
			break;
		case 'k':
			if (parse_u64(optarg, 0, &v) == -1 || v == 0 ||
			    v > HASHES_MAX)
				usage_error(CMD_CREATE, "create: -k takes a "
				    "number of hashes from 1 to %d, not '%s'",
				    HASHES_MAX, optarg);
			p->hashes = (unsigned)v;
			break;
		case 'n':
			if (parse_u64(optarg, 0, &p->capacity) == -1 ||
			    p->capacity == 0)
				usage_error(CMD_CREATE, "create: -n takes a "
				    "positive whole number, not '%s'", optarg);
			have_n = 1;
			break;
		case 'p':
			if (parse_fpr(optarg, &p->target_fpr, &why) == -1)
				usage_error(CMD_CREATE, "create: -p takes a "
				    "rate between 0 and 1, not '%s'%s", optarg,
				    why);
			have_p = 1;
			break;
		case 's':
			if (parse_size(optarg, &size) == -1 ||
			    size < BLOCK_BYTES ||
			    size / BLOCK_BYTES > NBLOCKS_MAX)
				usage_error(CMD_CREATE, "create: -s takes a "
				    "size from 64 bytes to %" PRIu64 "T, such "
				    "as 64M, not '%s'",
				    NBLOCKS_MAX * BLOCK_BYTES >> 40, optarg);
			have_s = 1;
			break;
		case OPT_SEED:
			if (parse_u64(optarg, 1, &spec.seed) == -1)
				usage_error(CMD_CREATE, "create: --seed takes "
				    "a 64-bit number, not '%s'", optarg);
			have_seed = 1;
			break;
		case OPT_GROW:
			if (spec.mode == MODE_WINDOW)
				usage_error(CMD_CREATE, "create: --grow and "
				    "--generations do not go together");
			spec.mode = MODE_GROW;
			break;
		case OPT_GROWTH:
			errno = 0;
			spec.growth = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    !(spec.growth >= GROWTH_MIN &&
			    spec.growth <= GROWTH_MAX))
				usage_error(CMD_CREATE, "create: --growth takes "
				    "a factor from %g to %g, not '%s'",
				    GROWTH_MIN, GROWTH_MAX, optarg);
			have_growth = 1;
			break;
		case OPT_GENERATIONS:
			if (spec.mode == MODE_GROW)
				usage_error(CMD_CREATE, "create: --grow and "
				    "--generations do not go together");
			if (parse_u64(optarg, 0, &v) == -1 || v < 2 ||
			    v > SEGMENTS_MAX)
				usage_error(CMD_CREATE, "create: --generations "
				    "takes a count from 2 to %d, not '%s'",
				    SEGMENTS_MAX, optarg);
			spec.mode = MODE_WINDOW;
			spec.generations = (unsigned)v;
			break;
		case OPT_WINDOW:
			if (parse_duration(optarg, &spec.window_ms) == -1)
				usage_error(CMD_CREATE, "create: --window takes "
				    "a duration such as 90s, 30m, 12h, 7d or "
				    "2w, not '%s'", optarg);
			break;
		case OPT_LIKE:
			like = optarg;
			break;
		case OPT_SLICE:
			if (parse_slice(optarg, &slice, &slices) == -1)
				usage_error(CMD_CREATE, "create: --slice takes "
				    "i/n with 0 <= i < n, such as 0/4, not "
				    "'%s'", optarg);
			break;
		case OPT_SLICES:
			if (parse_u64(optarg, 0, &v) == -1 || v == 0 ||
			    v > NBLOCKS_MAX)
				usage_error(CMD_CREATE, "create: --slices takes "
				    "a positive whole number, not '%s'", optarg);
			cut = (uint32_t)(v > UINT32_MAX ? UINT32_MAX : v);
			break;
		case OPT_DRY_RUN:
			dry_run = 1;
			break;
		case 'h':
			print_help(CMD_CREATE);
			return finish(0);
		default:
			bad_option(CMD_CREATE, ch, argv, shortopts, longopts);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 1)
		usage_error(CMD_CREATE, argc == 0 ? "create: no filter named" :
		    "create: one filter at a time");
	sizing = have_n || have_p || have_s || have_seed || have_growth ||
	    p->hashes != 0 || spec.mode != MODE_FIXED || spec.window_ms != 0 ||
	    cut != 0;
	if (like != NULL && sizing)
		usage_error(CMD_CREATE, "create: --like takes everything from "
		    "the template: no -n, -p, -s, -k, --seed, --slices, "
		    "--grow or --generations");
	if (slices != 0 && like == NULL)
		usage_error(CMD_CREATE, "create: --slice needs --like");
	if (like != NULL)
		return finish(create_like(argv[0], like, slice, slices, force));
	if (cut != 0 && spec.mode != MODE_FIXED)
		usage_error(CMD_CREATE, "create: --slices is for fixed filters");
	if (have_growth && spec.mode != MODE_GROW)
		usage_error(CMD_CREATE, "create: --growth needs --grow");
	if (spec.window_ms != 0 && spec.mode != MODE_WINDOW)
		usage_error(CMD_CREATE, "create: --window needs --generations");
	if (spec.mode != MODE_FIXED && (have_s || p->hashes != 0))
		usage_error(CMD_CREATE, "create: -s and -k are for fixed "
		    "filters: a %s filter sizes each segment from -n and -p",
		    spec.mode == MODE_GROW ? "growable" : "windowed");
	if (have_n && have_p && have_s)
		usage_error(CMD_CREATE, "create: give at most two of -n, -p "
		    "and -s");
	if (!have_seed)
		spec.seed = random_seed();
	if (spec.mode == MODE_FIXED) {
		what = SOLVE_SIZE;
		if (have_s) {
			p->nblocks = size / BLOCK_BYTES;
			what = have_n ? SOLVE_FPR : SOLVE_CAPACITY;
		}
		if (solve_fixed(argv[0], p, what) == -1)
			return finish(EXIT_TROUBLE);
		/* More blocks only lower the rate. */
		if (cut != 0 && p->nblocks % cut != 0)
			p->nblocks += cut - p->nblocks % cut;
		if (cut != 0 && p->nblocks > NBLOCKS_MAX) {
			warnx("%s: %" PRIu32 " slices would pass %" PRIu64
			    " TiB", argv[0], cut,
			    NBLOCKS_MAX * BLOCK_BYTES >> 40);
			return finish(EXIT_TROUBLE);
		}
	}
	if ((s = check_plan(argv[0], &spec, dry_run)) != 0)
		return finish(s == 1 ? 0 : EXIT_TROUBLE);
	if (create_filter(argv[0], &spec, force) == -1)
		return finish(EXIT_TROUBLE);
	return finish(0);
}

static void
on_sigbus(int sig)
{
	(void)sig;
	if (write(STDERR_FILENO, sigbus_message, strlen(sigbus_message)) < 0)
		_exit(EXIT_TROUBLE);
	_exit(EXIT_TROUBLE);
}

/* Arms the SIGBUS handler with a message naming path, for a filter open
 * for writing or only for reading. */
static void
guard_mapping(const char *path, int writable)
{
	struct sigaction sa;
	char name[256];

	snprintf(sigbus_message, sizeof sigbus_message, "%s: %s: %s\n",
	    progname, quote_string(name, sizeof name, path), writable ? bloom_strerror(BLOOM_ETRUNCATED) :
	    "file was truncated, or could not be read, while in use");
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigbus;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

static const char *
input_name(const char *file)
{
	return strcmp(file, "-") == 0 ? "(standard input)" : file;
}

/*
 * Runs job over the files (standard input if none).  A file that cannot be
 * read is reported and the others are still processed.  Returns 0, 1 if
 * some input failed, or -1 if the output failed and the run was abandoned.
 */
static int
stream_files(struct engine *job, int nfiles, char **files)
{
	static char *stdin_only[] = { "-" };
	int i, fd, trouble = 0;
	enum stream_end e;

	if (nfiles == 0) {
		nfiles = 1;
		files = stdin_only;
	}
	for (i = 0; i < nfiles; i++) {
		if (strcmp(files[i], "-") == 0)
			fd = STDIN_FILENO;
		else if ((fd = open(files[i], O_RDONLY | O_CLOEXEC)) == -1) {
			warnx("%s: %s", files[i], strerror(errno));
			trouble = 1;
			continue;
		}
		e = engine_stream(job, fd);
		if (e == STREAM_READ_ERROR) {
			warnx("%s: read error: %s", input_name(files[i]),
			    strerror(errno));
			trouble = 1;
		}
		if (e == STREAM_CHANGED) {
			warnx("%s: changed while it was read",
			    input_name(files[i]));
			trouble = 1;
		}
		if (e == STREAM_FILTER_ERROR) {
			warnx("%s: %s", job->filter->path,
			    bloom_strerror(job->status));
			if (fd != STDIN_FILENO)
				close(fd);
			engine_flush(job);
			return -2;
		}
		if (fd != STDIN_FILENO)
			close(fd);
		if (e == STREAM_WRITE_ERROR)
			return -1;
		if (e == STREAM_STOP)
			break;
	}
	if (engine_flush(job) == -1)
		return -1;
	return trouble;
}

/* Reports a failed output; a closed pipe ends us quietly. */
static void
output_error(const struct output *out)
{
	if (out->err != EPIPE)
		warnx("write error: %s", strerror(out->err));
}

/* Sets up e's buffers and line reader, or says why not.  Returns 0 or -1. */
static int
engine_setup(struct engine *e)
{
	if (engine_init(e) == 0)
		return 0;
	warnx("%s", errno == ENOMEM ? "out of memory" : strerror(errno));
	return -1;
}

/* The key fields of add -f and check -f, and the status line. */
static struct fields key_fields;
static int key_delim_given;	/* -d was given */
static struct progress progress;
static int progress_shown;	/* --progress: 1 a line at a time, 2 in place */

/* Sets the field list of add or check -f, or the separator of -d (then
 * list is NULL); a usage error if bad. */
static void
key_option(enum command cmd, const char *list, const char *delim)
{
	static const char *fields_list;
	static unsigned char sep = '\t';

	if (delim != NULL && strlen(delim) != 1)
		usage_error((int)cmd, "%s: -d takes one byte, not '%s'",
		    command_name[cmd], delim);
	if (delim != NULL) {
		sep = (unsigned char)delim[0];
		key_delim_given = 1;
	}
	if (list != NULL)
		fields_list = list;
	if (fields_list != NULL && fields_parse(&key_fields, fields_list,
	    sep) == -1)
		usage_error((int)cmd, "%s: -f takes a list of fields such as "
		    "2, 1,3 or 2- (at most %d ranges, fields from 1 to %"
		    PRIu64 "), not '%s'", command_name[cmd], FIELDS_RANGES,
		    FIELD_MAX, fields_list);
}

/* Writes the status line after e's lines so far: in place on a terminal,
 * unless asked for by SIGUSR1; final adds the summary's newline. */
static void
show_status(const struct engine *e, uint64_t now, int final, int asked)
{
	char line[256];

	progress_format(&progress, now, e->lines, e->bytes, final, line,
	    sizeof line);
	if (progress_shown == 2 && !asked)
		fprintf(stderr, "\r%s: %s\033[K%s", progname, line,
		    final ? "\n" : "");
	else
		fprintf(stderr, "%s%s: %s\n", progress_shown == 2 ? "\r" : "",
		    progname, line);
}

/* After each group of lines: a status line if --progress has one due or
 * SIGUSR1 asked for one. */
static void
tick(const struct engine *e)
{
	uint64_t now;
	int asked;

	if (progress_wanted(&progress, progress_shown != 0, &now, &asked))
		show_status(e, now, 0, asked);
}

/* Makes e report its progress: on SIGUSR1 always, as it goes if shown. */
static void
start_progress(struct engine *e, int shown, int nfiles, char **files)
{
	progress_shown = shown ? (isatty(STDERR_FILENO) ? 2 : 1) : 0;
	progress_start(&progress, progress_input_size(nfiles, files),
	    progress_shown == 2 ? PROGRESS_TTY_MS : PROGRESS_LOG_MS);
	progress_catch_signal();
	e->tick = tick;
}

/* Opens the filter for add, creating it growable with the defaults if
 * missing and may_create is 1; 0 is --no-create, -1 BLOOM_NO_CREATE. */
static int
open_for_add(struct bloom *b, const char *path, int may_create)
{
	struct bloom_spec spec;
	struct bloom_header h;
	int s;

	s = bloom_open(b, path, 1, tell_open_waits);
	if (s == BLOOM_ERRNO && errno == ENOENT && may_create != 1) {
		warnx("%s: no such filter, and auto-create is off (%s)", path,
		    may_create == 0 ? "--no-create" : "BLOOM_NO_CREATE");
		return -1;
	}
	if (s == BLOOM_ERRNO && errno == ENOENT) {
		memset(&spec, 0, sizeof spec);
		spec.mode = MODE_GROW;
		spec.growth = DEFAULT_GROWTH;
		spec.first.capacity = DEFAULT_CAPACITY;
		spec.first.target_fpr = DEFAULT_FPR;
		spec.seed = random_seed();
		spec.created_ms = now_ms();
		s = bloom_create(path, &spec, 0);
		if (s == BLOOM_OK && bloom_plan(&spec, &h) == BLOOM_OK)
			warnx("%s: created growable, for %" PRIu64 " items "
			    "at first, at fpr %g (%" PRIu64 " bytes); "
			    "--no-create or BLOOM_NO_CREATE=1 turns this off",
			    path,
			    spec.first.capacity, spec.first.target_fpr,
			    h.file_size);
		else if (!(s == BLOOM_ERRNO && errno == EEXIST)) {
			warnx("%s: cannot create: %s", path,
			    bloom_strerror(s));
			return -1;
		}
		s = bloom_open(b, path, 1, tell_open_waits);
	}
	if (s != BLOOM_OK) {
		filter_error(path, s, &b->hdr);
		return -1;
	}
	return 0;
}

/* Tells of what an add did to the filter that its user should know. */
static void
notice(struct bloom *b, unsigned events)
{
	static int warned_early;

	const struct segment_info *t = &b->seg[b->target].info;

	if (events & BLOOM_EV_FULL)
		warnx("%s: warning: past its capacity of %" PRIu64 " items; "
		    "estimated false-positive rate now %.3g (target %g); "
		    "a filter made with --grow grows instead", b->path,
		    b->hdr.capacity, b->full_fpr, b->hdr.target_fpr);
	/* Once a command: a small window may close many generations. */
	if (events & BLOOM_EV_EARLY && !warned_early++)
		warnx("%s: warning: a generation filled with %" PRIu64
		    " items before its time and was closed early; lines may "
		    "be forgotten sooner than the window", b->path,
		    t->capacity);
}

/* Tells of the lines a slice passed over. */
static void
elsewhere_note(const struct engine *e)
{
	if (e->elsewhere > 0)
		warnx("%s: %" PRIu64 " lines belong to other slices of the "
		    "filter and were passed over (bloom route splits a stream "
		    "by slice)", e->filter->path, e->elsewhere);
}

/* Parses the value of --memory for cmd: a size of at least a page. */
static uint64_t
parse_memory(enum command cmd, const char *arg)
{
	uint64_t v;

	if (parse_size(arg, &v) == -1 || v < 4096)
		usage_error((int)cmd, "%s: --memory takes a size of 4K or more "
		    "(K, M, G or T): '%s'", command_name[cmd], arg);
	return v;
}

static int
cmd_add(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "new", no_argument, NULL, 'N' },
		{ "dups", no_argument, NULL, 'D' },
		{ "memory", required_argument, NULL, OPT_MEMORY },
		{ "sync", no_argument, NULL, OPT_SYNC },
		{ "progress", no_argument, NULL, OPT_PROGRESS },
		{ "no-create", no_argument, NULL, OPT_NO_CREATE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char shortopts[] = ":DNd:f:hz";
	const char *env = getenv("BLOOM_NO_CREATE");
	struct bloom filter;
	struct engine job;
	int ch, rc, sync = 0, dups = 0, shown = 0, may_create = 1;

	memset(&job, 0, sizeof job);
	job.adding = 1;
	job.delim = '\n';
	while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (ch) {
		case 'N':
			job.emit = 1;
			break;
		case 'D':
			dups = 1;
			break;
		case 'f':
			key_option(CMD_ADD, optarg, NULL);
			job.fields = &key_fields;
			break;
		case 'd':
			key_option(CMD_ADD, NULL, optarg);
			break;
		case 'z':
			job.delim = '\0';
			break;
		case OPT_SYNC:
			sync = 1;
			break;
		case OPT_PROGRESS:
			shown = 1;
			break;
		case OPT_NO_CREATE:
			may_create = 0;
			break;
		case OPT_MEMORY:
			job.memory = parse_memory(CMD_ADD, optarg);
			break;
		case 'h':
			print_help(CMD_ADD);
			return finish(0);
		default:
			bad_option(CMD_ADD, ch, argv, shortopts, longopts);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		usage_error(CMD_ADD, "add: no filter named");
	if (dups && job.emit)
		usage_error(CMD_ADD, "add: --new and --dups do not go together");
	if (job.fields == NULL && key_delim_given)
		usage_error(CMD_ADD, "add: -d needs -f");
	job.emit |= dups;
	job.invert = dups;
	if (may_create == 1 && env != NULL && strcmp(env, "1") == 0)
		may_create = -1;
	if (engine_setup(&job) == -1 ||
	    open_for_add(&filter, argv[0], may_create) == -1) {
		engine_free(&job);
		return finish(EXIT_TROUBLE);
	}
	if (job.emit && not_own_output(&filter, argv[0]) == -1) {
		bloom_close(&filter);
		engine_free(&job);
		return finish(EXIT_TROUBLE);
	}
	guard_mapping(argv[0], 1);
	job.filter = &filter;
	job.notice = notice;
	start_progress(&job, shown, argc - 1, argv + 1);
	rc = stream_files(&job, argc - 1, argv + 1);
	if (shown)
		show_status(&job, progress_now(), 1, 0);
	if (rc == -1)
		output_error(&job.out);
	elsewhere_note(&job);
	if (sync && bloom_sync(&filter) != BLOOM_OK) {
		warnx("%s: cannot sync: %s", argv[0], strerror(errno));
		rc = -1;
	}
	bloom_close(&filter);
	engine_free(&job);
	return finish(rc == 0 ? 0 : EXIT_TROUBLE);
}

static int
cmd_check(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "progress", no_argument, NULL, OPT_PROGRESS },
		{ "memory", required_argument, NULL, OPT_MEMORY },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char shortopts[] = ":cd:f:hqvz";
	struct bloom filter;
	struct engine job;
	int ch, rc, s, count_only = 0, shown = 0;

	memset(&job, 0, sizeof job);
	job.emit = 1;
	job.delim = '\n';
	while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			count_only = 1;
			break;
		case 'q':
			job.quiet = 1;
			break;
		case 'v':
			job.invert = 1;
			break;
		case 'z':
			job.delim = '\0';
			break;
		case 'f':
			key_option(CMD_CHECK, optarg, NULL);
			job.fields = &key_fields;
			break;
		case 'd':
			key_option(CMD_CHECK, NULL, optarg);
			break;
		case OPT_PROGRESS:
			shown = 1;
			break;
		case OPT_MEMORY:
			job.memory = parse_memory(CMD_CHECK, optarg);
			break;
		case 'h':
			print_help(CMD_CHECK);
			return finish(0);
		default:
			bad_option(CMD_CHECK, ch, argv, shortopts, longopts);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		usage_error(CMD_CHECK, "check: no filter named");
	if (job.fields == NULL && key_delim_given)
		usage_error(CMD_CHECK, "check: -d needs -f");
	if (count_only || job.quiet)
		job.emit = 0;
	if (engine_setup(&job) == -1) {
		engine_free(&job);
		return finish(EXIT_TROUBLE);
	}
	s = bloom_open(&filter, argv[0], 0, tell_open_waits);
	if (s != BLOOM_OK) {
		filter_error(argv[0], s, &filter.hdr);
		engine_free(&job);
		return finish(EXIT_TROUBLE);
	}
	if (!job.quiet && not_own_output(&filter, argv[0]) == -1) {
		bloom_close(&filter);
		engine_free(&job);
		return finish(EXIT_TROUBLE);
	}
	guard_mapping(argv[0], 0);
	job.filter = &filter;
	start_progress(&job, shown, argc - 1, argv + 1);
	rc = stream_files(&job, argc - 1, argv + 1);
	elsewhere_note(&job);
	if (shown)
		show_status(&job, progress_now(), 1, 0);
	bloom_close(&filter);
	engine_free(&job);
	if (rc == -1)
		output_error(&job.out);
	if (rc < 0)
		return finish(EXIT_TROUBLE);
	if (count_only && !job.quiet)
		printf("%" PRIu64 "\n", job.selected);
	/* As grep -q: a selected line wins over trouble with other input. */
	if (job.quiet && job.selected > 0)
		return finish(EXIT_SELECTED);
	if (rc != 0)
		return finish(EXIT_TROUBLE);
	return finish(job.selected > 0 ? EXIT_SELECTED : EXIT_NONE);
}

static int
cmd_stats(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char shortopts[] = ":h";
	static struct filter_stats st;
	struct bloom filter;
	struct stat sb;
	int ch, s, json = 0;

	while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (ch) {
		case OPT_JSON:
			json = 1;
			break;
		case 'h':
			print_help(CMD_STATS);
			return finish(0);
		default:
			bad_option(CMD_STATS, ch, argv, shortopts, longopts);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 1)
		usage_error(CMD_STATS, argc == 0 ? "stats: no filter named" :
		    "stats: one filter at a time");
	s = bloom_open(&filter, argv[0], 0, tell_open_waits);
	if (s != BLOOM_OK) {
		filter_error(argv[0], s, &filter.hdr);
		return finish(EXIT_TROUBLE);
	}
	if (not_own_output(&filter, argv[0]) == -1) {
		bloom_close(&filter);
		return finish(EXIT_TROUBLE);
	}
	guard_mapping(argv[0], 0);
	if (fstat(filter.fd, &sb) == -1)
		sb.st_size = 0;
	stats_compute(&filter, (uint64_t)sb.st_size, &st);
	if (json)
		stats_print_json(stdout, argv[0], &filter, &st);
	else
		stats_print_text(stdout, argv[0], &filter, &st);
	bloom_close(&filter);
	return finish(0);
}

static int
cmd_rotate(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char shortopts[] = ":h";
	struct bloom filter;
	int ch, s;

	while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			print_help(CMD_ROTATE);
			return finish(0);
		default:
			bad_option(CMD_ROTATE, ch, argv, shortopts, longopts);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 1)
		usage_error(CMD_ROTATE, argc == 0 ? "rotate: no filter named" :
		    "rotate: one filter at a time");
	s = bloom_open(&filter, argv[0], 1, tell_open_waits);
	if (s != BLOOM_OK) {
		filter_error(argv[0], s, &filter.hdr);
		return finish(EXIT_TROUBLE);
	}
	guard_mapping(argv[0], 1);
	if (filter.hdr.mode != MODE_WINDOW) {
		warnx("%s: cannot rotate: a %s filter has no generations "
		    "(make one with create --generations)", argv[0],
		    stats_mode_name(filter.hdr.mode));
		bloom_close(&filter);
		return finish(EXIT_TROUBLE);
	}
	s = bloom_rotate(&filter);
	bloom_close(&filter);
	if (s != BLOOM_OK) {
		warnx("%s: cannot rotate: %s", argv[0], bloom_strerror(s));
		return finish(EXIT_TROUBLE);
	}
	return finish(0);
}

/* Parses the options of a command that takes none but --help. */
static void
no_options(enum command cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char shortopts[] = ":h";
	int ch;

	while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (ch == 'h') {
			print_help(cmd);
			exit(finish(0));
		}
		bad_option(cmd, ch, argv, shortopts, longopts);
	}
}

/* Returns 1 if the open filters are one file. */
static int
same_file(const struct bloom *a, const struct bloom *b)
{
	struct stat sa, sb;

	return fstat(a->fd, &sa) == 0 && fstat(b->fd, &sb) == 0 &&
	    sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static int
cmd_merge(int argc, char **argv)
{
	struct merge_mismatch mm;
	struct bloom *src = NULL, target;
	int i, n, opened = 0, s, rc = EXIT_TROUBLE;

	no_options(CMD_MERGE, argc, argv);
	argc -= optind;
	argv += optind;
	if (argc < 2)
		usage_error(CMD_MERGE, argc == 0 ? "merge: no filter named" :
		    "merge: no source named");
	n = argc - 1;
	s = bloom_open(&target, argv[0], 1, tell_open_waits);
	if (s != BLOOM_OK) {
		filter_error(argv[0], s, &target.hdr);
		return finish(EXIT_TROUBLE);
	}
	guard_mapping(argv[0], 1);
	if ((src = calloc((size_t)n, sizeof *src)) == NULL) {
		warnx("out of memory");
		goto out;
	}
	/* Every source is opened and checked before anything is written. */
	for (i = 0; i < n; i++, opened++) {
		const char *name = argv[i + 1];

		s = bloom_open(&src[i], name, 0, tell_open_waits);
		if (s != BLOOM_OK) {
			filter_error(name, s, &src[i].hdr);
			goto out;
		}
		if (same_file(&target, &src[i])) {
			warnx("%s: cannot merge a filter into itself", name);
			bloom_close(&src[i]);
			goto out;
		}
		if ((s = bloom_refresh(&src[i])) != BLOOM_OK ||
		    (s = bloom_refresh(&target)) != BLOOM_OK) {
			warnx("%s: %s", name, bloom_strerror(s));
			bloom_close(&src[i]);
			goto out;
		}
		if (merge_check(&target, &src[i], &mm) == -1) {
			if (mm.reason != NULL)
				warnx("%s: cannot merge into %s: %s", name,
				    argv[0], mm.reason);
			else
				warnx("%s: %s differs from %s's (%s here, %s "
				    "there)", name, mm.field, argv[0],
				    mm.source, mm.target);
			bloom_close(&src[i]);
			goto out;
		}
	}
	for (i = 0; i < n; i++) {
		if ((s = merge_into(&target, &src[i])) != BLOOM_OK) {
			warnx("%s: cannot merge %s: %s", argv[0], argv[i + 1],
			    bloom_strerror(s));
			goto out;
		}
		notice(&target, bloom_events(&target) & ~(unsigned)BLOOM_EV_GREW);
	}
	rc = 0;
out:
	for (i = 0; i < opened; i++)
		bloom_close(&src[i]);
	free(src);
	bloom_close(&target);
	return finish(rc);
}

static int
cmd_route(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "slices", required_argument, NULL, OPT_SLICES },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char shortopts[] = ":ho:z";
	struct engine job;
	struct bloom filter;
	const char *prefix = NULL;
	uint64_t v, slices = 0;
	uint32_t i, opened = 0;
	char *name = NULL;
	int ch, s, rc = -2;

	memset(&job, 0, sizeof job);
	job.delim = '\n';
	while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			prefix = optarg;
			break;
		case 'z':
			job.delim = '\0';
			break;
		case OPT_SLICES:
			if (parse_u64(optarg, 0, &v) == -1 || v == 0 ||
			    v > UINT32_MAX)
				usage_error(CMD_ROUTE, "route: --slices takes "
				    "a positive whole number, not '%s'", optarg);
			slices = v;
			break;
		case 'h':
			print_help(CMD_ROUTE);
			return finish(0);
		default:
			bad_option(CMD_ROUTE, ch, argv, shortopts, longopts);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		usage_error(CMD_ROUTE, "route: no filter named");
	s = bloom_open(&filter, argv[0], 0, tell_open_waits);
	if (s != BLOOM_OK) {
		filter_error(argv[0], s, &filter.hdr);
		return finish(EXIT_TROUBLE);
	}
	guard_mapping(argv[0], 0);
	if (filter.hdr.slices != 0 && slices != 0 &&
	    slices != filter.hdr.slices) {
		warnx("%s: is one of %" PRIu32 " slices, not %" PRIu64, argv[0],
		    filter.hdr.slices, slices);
		goto out;
	}
	if (filter.hdr.slices != 0)
		slices = filter.hdr.slices;
	else if (slices == 0) {
		warnx("%s: not a slice: say how many slices with --slices",
		    argv[0]);
		goto out;
	} else if (filter.hdr.mode != MODE_FIXED ||
	    filter.seg[0].info.nblocks % slices != 0) {
		warnx("%s: cannot be cut into %" PRIu64 " slices: %s", argv[0],
		    slices, bloom_strerror(filter.hdr.mode != MODE_FIXED ?
		    BLOOM_ESLICE_MODE : BLOOM_ESLICE_DIVIDE));
		goto out;
	}
	job.filter = &filter;
	job.route = (uint32_t)slices;
	if (engine_setup(&job) == -1)
		goto out;
	if (prefix != NULL) {
		size_t size = strlen(prefix) + 16;

		job.routes = calloc(slices, sizeof job.routes[0]);
		name = malloc(size);
		if (job.routes == NULL || name == NULL) {
			warnx("out of memory");
			goto out;
		}
		for (i = 0; i < slices; i++, opened++) {
			int fd;

			snprintf(name, size, "%s%" PRIu32, prefix, i);
			fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			    0666);
			if (fd == -1 || output_init(&job.routes[i], fd) == -1) {
				warnx("%s: %s", name, strerror(errno));
				if (fd != -1)
					close(fd);
				goto out;
			}
		}
	}
	rc = stream_files(&job, argc - 1, argv + 1);
	if (rc == -1)
		output_error(&job.out);
out:
	for (i = 0; i < opened; i++) {
		if (close(job.routes[i].fd) == -1 && rc == 0) {
			warnx("%s%" PRIu32 ": %s", prefix, i, strerror(errno));
			rc = -1;
		}
		output_free(&job.routes[i]);
	}
	free(job.routes);
	free(name);
	engine_free(&job);
	bloom_close(&filter);
	return finish(rc == 0 ? 0 : EXIT_TROUBLE);
}

static int
find_command(const char *name)
{
	int cmd;

	for (cmd = 0; cmd < NCMD; cmd++)
		if (strcmp(name, command_name[cmd]) == 0)
			return cmd;
	return -1;
}

static int
cmd_help(int argc, char **argv)
{
	int cmd;

	if (argc > 2)
		usage_error(CMD_HELP, "help: one command at a time");
	if (argc < 2) {
		print_help_all();
		return finish(0);
	}
	cmd = find_command(argv[1]);
	if (cmd == -1)
		usage_error(-1, "help: unknown command '%s'", argv[1]);
	print_help((enum command)cmd);
	return finish(0);
}

int
main(int argc, char **argv)
{
	int cmd;

	reserve_std_fds();
	if (argc < 2)
		usage_error(-1, "no command given");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		print_help_all();
		return finish(0);
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("bloom %s\n", BLOOM_VERSION_STRING);
		return finish(0);
	}
	cmd = find_command(argv[1]);
	if (cmd == -1)
		usage_error(-1, "unknown command '%s'", argv[1]);
	opterr = 0;
	argc--;
	argv++;
	switch ((enum command)cmd) {
	case CMD_CREATE:
		return cmd_create(argc, argv);
	case CMD_ADD:
		return cmd_add(argc, argv);
	case CMD_CHECK:
		return cmd_check(argc, argv);
	case CMD_STATS:
		return cmd_stats(argc, argv);
	case CMD_ROTATE:
		return cmd_rotate(argc, argv);
	case CMD_MERGE:
		return cmd_merge(argc, argv);
	case CMD_ROUTE:
		return cmd_route(argc, argv);
	case CMD_HELP:
	case NCMD:
		break;
	}
	return cmd_help(argc, argv);
}
