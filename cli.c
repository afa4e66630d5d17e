/*
 * bloom: the command line.  Parses arguments, streams lines through the
 * filter, writes results and says what went wrong.  The only file that
 * prints or exits.
 */
#include <sys/random.h>
#include <sys/stat.h>

#include <ctype.h>
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
#include <unistd.h>

#include "bloom.h"
#include "lines.h"
#include "params.h"

#ifndef BLOOM_VERSION_STRING
#define BLOOM_VERSION_STRING "unknown"
#endif

#define DEFAULT_CAPACITY	1000000
#define DEFAULT_FPR		0.01
#define MAX_DERIVED_FPR		0.5	/* -s with -n: the most we accept */
#define OUTPUT_SIZE		(1 << 18)	/* output buffer */

/* Exit statuses, as grep(1) has them. */
#define EXIT_SELECTED	0
#define EXIT_NONE	1
#define EXIT_TROUBLE	2

/* getopt_long values of the options that have no letter: not chars, so
 * that bad_option can tell them from an unknown letter. */
enum { OPT_SEED = 256, OPT_SYNC, OPT_JSON };

enum command { CMD_CREATE, CMD_ADD, CMD_CHECK, CMD_STATS, CMD_HELP, NCMD };

static const char *const command_name[NCMD] = {
	"create", "add", "check", "stats", "help"
};

/* The SYNOPSIS of bloom(1), line for line. */
static const char *const synopsis[NCMD] = {
	("bloom create [-f] [-k hashes] [-n capacity] [-p fpr] [-s size]\n"
	"             [--seed n] filter"),
	"bloom add [-Nz] [--sync] filter [file ...]",
	"bloom check [-cqvz] filter [file ...]",
	"bloom stats [--json] filter",
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
	"  --seed n     hash seed (default: random)\n"
	"  -f           replace an existing file\n"),
	("Add lines to the filter, creating it with the defaults if missing.\n"
	"  -N, --new    write the lines that were not yet in the filter\n"
	"  -z           lines end with NUL, not newline\n"
	"  --sync       write the filter to stable storage before exiting\n"),
	("Write the lines that may be in the filter.\n"
	"  -v           write the lines that are certainly not in the filter\n"
	"  -c           write only the number of such lines\n"
	"  -q           write nothing; the exit status tells\n"
	"  -z           lines end with NUL, not newline\n"
	"Exit status 0 if a line was selected, 1 if none, 2 on error.\n"),
	("Describe the filter: size, fill, estimated items and error rate.\n"
	"  --json       one JSON object instead of key: value lines\n"),
	"Describe a command, or all of them.\n",
};

static const char *progname = "bloom";

/* The message SIGBUS writes: the mapped filter shrank under us. */
static char sigbus_message[512];

static void
vwarnx(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", progname);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
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
		    " (this bloom reads version %d)", path, h->version,
		    BLOOM_VERSION);
	else
		warnx("%s: %s", path, bloom_strerror(s));
}

/* Parses a whole unsigned number: decimal, or hexadecimal after 0x if hex. */
static int
parse_u64(const char *s, int hex, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int base = 10;

	if (hex && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!isxdigit((unsigned char)*s) || (base == 10 && !isdigit(
	    (unsigned char)*s)))
		return -1;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = (uint64_t)v;
	return 0;
}

/* Parses a byte count with an optional K, M, G or T (1024-based) suffix. */
static int
parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	const char *unit;
	char *end;
	unsigned long long v;
	int shift;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -1;
	shift = 0;
	if (*end != '\0') {
		unit = strchr(units, *end >= 'a' ? *end - 'a' + 'A' : *end);
		if (unit == NULL || end[1] != '\0')
			return -1;
		shift = 10 * (int)(unit - units + 1);
	}
	if (v > UINT64_MAX >> shift)
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static int
parse_fpr(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v > 0.0 && v < 1.0))
		return -1;
	*out = v;
	return 0;
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

/* Creates path for p, or fails with a message; returns 0 or -1. */
static int
create_filter(const char *path, struct params *p, enum solve_for what,
    uint64_t seed, int force)
{
	int s;

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
	s = bloom_create(path, p, seed, force);
	if (s != BLOOM_OK) {
		if (s == BLOOM_ERRNO && errno == EEXIST)
			warnx("%s: file exists (use -f to replace it)", path);
		else
			warnx("%s: cannot create: %s", path, bloom_strerror(s));
		return -1;
	}
	return 0;
}

static int
cmd_create(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char shortopts[] = ":fhk:n:p:s:";
	struct params p = { DEFAULT_CAPACITY, DEFAULT_FPR, 0, 0 };
	uint64_t v, seed = 0, size = 0;
	int ch, force = 0, have_n = 0, have_p = 0, have_s = 0, have_seed = 0;
	enum solve_for what;

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
			p.hashes = (unsigned)v;
			break;
		case 'n':
			if (parse_u64(optarg, 0, &p.capacity) == -1 ||
			    p.capacity == 0)
				usage_error(CMD_CREATE, "create: -n takes a "
				    "positive whole number, not '%s'", optarg);
			have_n = 1;
			break;
		case 'p':
			if (parse_fpr(optarg, &p.target_fpr) == -1)
				usage_error(CMD_CREATE, "create: -p takes a "
				    "rate between 0 and 1, not '%s'", optarg);
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
			if (parse_u64(optarg, 1, &seed) == -1)
				usage_error(CMD_CREATE, "create: --seed takes "
				    "a 64-bit number, not '%s'", optarg);
			have_seed = 1;
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
	if (have_n && have_p && have_s)
		usage_error(CMD_CREATE, "create: give at most two of -n, -p "
		    "and -s");
	what = SOLVE_SIZE;
	if (have_s) {
		p.nblocks = size / BLOCK_BYTES;
		what = have_n ? SOLVE_FPR : SOLVE_CAPACITY;
	}
	if (!have_seed)
		seed = random_seed();
	if (create_filter(argv[0], &p, what, seed, force) == -1)
		return finish(EXIT_TROUBLE);
	return finish(0);
}

/* Buffered output written with write(2): one syscall per OUTPUT_SIZE. */
struct output {
	unsigned char *buf;	/* pending bytes */
	size_t len;		/* bytes pending */
	size_t cap;		/* size of buf */
	int failed;		/* a write failed; errno was saved in err */
	int err;		/* errno of the failed write */
};

static int
write_fully(const unsigned char *p, size_t len, struct output *out)
{
	while (len > 0) {
		ssize_t n = write(STDOUT_FILENO, p, len);

		if (n == -1) {
			if (errno == EINTR)
				continue;
			out->failed = 1;
			out->err = errno;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int
output_flush(struct output *out)
{
	size_t len = out->len;

	out->len = 0;
	if (out->failed)
		return -1;
	return write_fully(out->buf, len, out);
}

/* Appends a line and its terminator. */
static int
output_line(struct output *out, const unsigned char *line, size_t len,
    unsigned char delim)
{
	if (out->cap - out->len <= len) {
		if (output_flush(out) == -1)
			return -1;
		if (len >= out->cap) {
			if (write_fully(line, len, out) == -1)
				return -1;
			len = 0;
		}
	}
	memcpy(out->buf + out->len, line, len);
	out->len += len;
	out->buf[out->len++] = delim;
	return 0;
}

/* One add or check run over its inputs. */
struct job {
	struct bloom *filter;	/* the open filter */
	int adding;		/* add, rather than test, the keys */
	int invert;		/* select the keys not found (check -v) */
	int emit;		/* write the selected lines */
	int quiet;		/* stop at the first selected line */
	unsigned char delim;	/* line terminator */
	uint64_t selected;	/* lines selected so far */
	struct output out;	/* where selected lines go */
	struct lines lines;	/* the line reader */
	unsigned char *hit;	/* per line of a group: new, or found */
};

/*
 * Adds or tests the lines of g and writes the selected ones.  For add, a
 * line is selected if it was new; for check, if it may be in the set (or,
 * with -v, if it certainly is not).  Returns -1 if the output failed.
 */
static int
run_group(struct job *job, const struct line_group *g)
{
	unsigned char *hit = job->hit, sel[64];
	size_t i, j, n, nsel;

	if (job->adding)
		bloom_add(job->filter, g->hash, g->nlines, hit);
	else
		bloom_test(job->filter, g->hash, g->nlines, hit);
	for (i = 0; i < g->nlines; i += n) {
		n = g->nlines - i < sizeof sel ? g->nlines - i : sizeof sel;
		/* Which lines are selected is often a coin toss: list them
		 * without a branch per line. */
		for (j = nsel = 0; j < n; j++) {
			sel[nsel] = (unsigned char)j;
			nsel += hit[i + j] != job->invert;
		}
		job->selected += nsel;
		if (!job->emit)
			continue;
		for (j = 0; j < nsel; j++)
			if (output_line(&job->out, g->line[i + sel[j]].data,
			    g->line[i + sel[j]].len, job->delim) == -1)
				return -1;
	}
	return 0;
}

/* How a stream ended. */
enum stream_end { STREAM_DONE, STREAM_STOP, STREAM_READ_ERROR,
    STREAM_WRITE_ERROR };

/* Streams the lines of fd through the filter.  After STREAM_READ_ERROR,
 * errno says why. */
static enum stream_end
stream(struct job *job, int fd)
{
	const struct line_group *g;
	enum stream_end e;
	int err = 0;

	lines_start(&job->lines, fd, job->filter);
	for (;;) {
		/* Before waiting for input, let the lines selected so far
		 * go on down the pipeline. */
		if (!lines_ready(&job->lines) &&
		    output_flush(&job->out) == -1) {
			e = STREAM_WRITE_ERROR;
			break;
		}
		g = lines_next(&job->lines);
		if (run_group(job, g) == -1) {
			e = STREAM_WRITE_ERROR;
			break;
		}
		if (job->quiet && job->selected > 0) {
			e = STREAM_STOP;
			break;
		}
		if (g->err != 0) {
			err = g->err;
			e = STREAM_READ_ERROR;
			break;
		}
		if (g->last) {
			e = STREAM_DONE;
			break;
		}
	}
	lines_stop(&job->lines);
	errno = err;
	return e;
}

static void
on_sigbus(int sig)
{
	(void)sig;
	if (write(STDERR_FILENO, sigbus_message, strlen(sigbus_message)) < 0)
		_exit(EXIT_TROUBLE);
	_exit(EXIT_TROUBLE);
}

/* Arms the SIGBUS handler with a message naming path. */
static void
guard_mapping(const char *path)
{
	struct sigaction sa;

	snprintf(sigbus_message, sizeof sigbus_message, "%s: %s: %s\n",
	    progname, path, bloom_strerror(BLOOM_ETRUNCATED));
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
stream_files(struct job *job, int nfiles, char **files)
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
		e = stream(job, fd);
		if (e == STREAM_READ_ERROR) {
			warnx("%s: read error: %s", input_name(files[i]),
			    strerror(errno));
			trouble = 1;
		}
		if (fd != STDIN_FILENO)
			close(fd);
		if (e == STREAM_WRITE_ERROR)
			return -1;
		if (e == STREAM_STOP)
			break;
	}
	if (output_flush(&job->out) == -1)
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

/* Sets up job's buffers and line reader; job_free undoes it.  Returns 0,
 * or -1 after saying why not. */
static int
job_init(struct job *job)
{
	job->out.cap = OUTPUT_SIZE;
	job->out.buf = malloc(job->out.cap);
	job->hit = malloc(LINES_MAX);
	if (job->out.buf == NULL || job->hit == NULL) {
		errno = ENOMEM;
		goto fail;
	}
	if (lines_init(&job->lines, job->delim) == -1)
		goto fail;
	return 0;
fail:
	warnx("%s", errno == ENOMEM ? "out of memory" : strerror(errno));
	free(job->out.buf);
	free(job->hit);
	job->out.buf = NULL;
	job->hit = NULL;
	return -1;
}

static void
job_free(struct job *job)
{
	if (job->out.buf == NULL)
		return;
	lines_free(&job->lines);
	free(job->out.buf);
	free(job->hit);
}

/* Opens the filter for add, creating it with the defaults if missing. */
static int
open_for_add(struct bloom *b, const char *path)
{
	struct params p = { DEFAULT_CAPACITY, DEFAULT_FPR, 0, 0 };
	int s;

	s = bloom_open(b, path, 1);
	if (s == BLOOM_ERRNO && errno == ENOENT) {
		if (params_solve(&p, SOLVE_SIZE) == -1)
			return -1;
		s = bloom_create(path, &p, random_seed(), 0);
		if (s == BLOOM_OK)
			warnx("%s: created for %" PRIu64 " items at fpr %g "
			    "(%" PRIu64 " bytes)", path, p.capacity,
			    p.target_fpr,
			    BLOOM_HEADER_SIZE + p.nblocks * BLOCK_BYTES);
		else if (!(s == BLOOM_ERRNO && errno == EEXIST)) {
			warnx("%s: cannot create: %s", path,
			    bloom_strerror(s));
			return -1;
		}
		s = bloom_open(b, path, 1);
	}
	if (s != BLOOM_OK) {
		filter_error(path, s, &b->hdr);
		return -1;
	}
	return 0;
}

static int
cmd_add(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "new", no_argument, NULL, 'N' },
		{ "sync", no_argument, NULL, OPT_SYNC },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char shortopts[] = ":Nhz";
	struct bloom filter;
	struct job job;
	int ch, rc, sync = 0;

	memset(&job, 0, sizeof job);
	job.adding = 1;
	job.delim = '\n';
	while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (ch) {
		case 'N':
			job.emit = 1;
			break;
		case 'z':
			job.delim = '\0';
			break;
		case OPT_SYNC:
			sync = 1;
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
	if (job_init(&job) == -1 || open_for_add(&filter, argv[0]) == -1) {
		job_free(&job);
		return finish(EXIT_TROUBLE);
	}
	guard_mapping(argv[0]);
	job.filter = &filter;
	rc = stream_files(&job, argc - 1, argv + 1);
	if (rc == -1)
		output_error(&job.out);
	if (sync && bloom_sync(&filter) != BLOOM_OK) {
		warnx("%s: cannot sync: %s", argv[0], strerror(errno));
		rc = -1;
	}
	bloom_close(&filter);
	job_free(&job);
	return finish(rc == 0 ? 0 : EXIT_TROUBLE);
}

static int
cmd_check(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char shortopts[] = ":chqvz";
	struct bloom filter;
	struct job job;
	int ch, rc, s, count_only = 0;

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
	if (count_only || job.quiet)
		job.emit = 0;
	if (job_init(&job) == -1) {
		job_free(&job);
		return finish(EXIT_TROUBLE);
	}
	s = bloom_open(&filter, argv[0], 0);
	if (s != BLOOM_OK) {
		filter_error(argv[0], s, &filter.hdr);
		job_free(&job);
		return finish(EXIT_TROUBLE);
	}
	guard_mapping(argv[0]);
	job.filter = &filter;
	rc = stream_files(&job, argc - 1, argv + 1);
	bloom_close(&filter);
	job_free(&job);
	if (rc == -1) {
		output_error(&job.out);
		return finish(EXIT_TROUBLE);
	}
	if (count_only && !job.quiet)
		printf("%" PRIu64 "\n", job.selected);
	/* As grep -q: a selected line wins over trouble with other input. */
	if (job.quiet && job.selected > 0)
		return finish(EXIT_SELECTED);
	if (rc != 0)
		return finish(EXIT_TROUBLE);
	return finish(job.selected > 0 ? EXIT_SELECTED : EXIT_NONE);
}

/* What stats reports. */
struct stats {
	uint64_t bytes;		/* file size */
	uint64_t bits_set;	/* bits set in the array */
	double fill;		/* bits_set / bits */
	double estimated_items;	/* distinct items the fill suggests */
	double estimated_fpr;	/* false-positive rate the fill gives */
	uint64_t inserted;	/* the header's counter */
};

/* Returns the length of the well-formed UTF-8 sequence at s, or 0. */
static size_t
utf8_length(const unsigned char *s)
{
	size_t len, i;
	unsigned min, cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		min = 0x80;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		min = 0x800;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		min = 0x10000;
	} else
		return 0;
	cp = s[0] & (0x7fu >> len);
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* Writes s as a JSON string; a byte that is not UTF-8 becomes U+FFFD. */
static void
json_string(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	putchar('"');
	while (*s != '\0') {
		size_t len = utf8_length(s);

		if (len == 0) {
			fputs("\\ufffd", stdout);
			len = 1;
		} else if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if (*s < 0x20)
			printf("\\u%04x", *s);
		else
			fwrite(s, 1, len, stdout);
		s += len;
	}
	putchar('"');
}

static void
print_stats_json(const char *path, const struct bloom_header *h,
    const struct stats *st)
{
	printf("{\"file\":");
	json_string(path);
	printf(",\"layout\":\"blocked512\",\"hash\":\"xxh3-64\""
	    ",\"bytes\":%" PRIu64 ",\"bits\":%" PRIu64 ",\"hashes\":%" PRIu32
	    ",\"seed\":%" PRIu64 ",\"capacity\":%" PRIu64
	    ",\"target_fpr\":%.6g,\"inserted\":%" PRIu64
	    ",\"bits_set\":%" PRIu64 ",\"fill\":%.6f"
	    ",\"estimated_items\":%.0f,\"estimated_fpr\":%.6g"
	    ",\"over_capacity\":%s}\n",
	    st->bytes, h->nbits, h->hashes, h->seed, h->capacity,
	    h->target_fpr, st->inserted, st->bits_set, st->fill,
	    st->estimated_items, st->estimated_fpr,
	    st->estimated_items > (double)h->capacity ? "true" : "false");
}

static void
print_stats_text(const char *path, const struct bloom_header *h,
    const struct stats *st)
{
	printf("file: %s\n", path);
	printf("layout: blocked512 (512-bit blocks)\n");
	printf("hash: xxh3-64\n");
	printf("bytes: %" PRIu64 "\n", st->bytes);
	printf("bits: %" PRIu64 "\n", h->nbits);
	printf("hashes: %" PRIu32 "\n", h->hashes);
	printf("seed: %" PRIu64 "\n", h->seed);
	printf("capacity: %" PRIu64 "\n", h->capacity);
	printf("target_fpr: %.6g\n", h->target_fpr);
	printf("inserted: %" PRIu64 "\n", st->inserted);
	printf("bits_set: %" PRIu64 "\n", st->bits_set);
	printf("fill: %.6f\n", st->fill);
	printf("estimated_items: %.0f\n", st->estimated_items);
	printf("estimated_fpr: %.6g\n", st->estimated_fpr);
	if (st->estimated_items > (double)h->capacity)
		printf("warning: over capacity: about %.0f items in a filter "
		    "sized for %" PRIu64 "; false positives are above the "
		    "target rate\n", st->estimated_items, h->capacity);
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
	static uint64_t hist[BLOCK_BITS + 1];
	struct bloom filter;
	struct stats st;
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
	s = bloom_open(&filter, argv[0], 0);
	if (s != BLOOM_OK) {
		filter_error(argv[0], s, &filter.hdr);
		return finish(EXIT_TROUBLE);
	}
	guard_mapping(argv[0]);
	st.bytes = filter.hdr.file_size;
	st.inserted = bloom_inserted(&filter);
	st.bits_set = bloom_fill(&filter, hist);
	st.fill = (double)st.bits_set / (double)filter.hdr.nbits;
	st.estimated_items = params_estimate_items(st.bits_set,
	    filter.nblocks, filter.hashes);
	st.estimated_fpr = params_fpr_from_hist(hist, filter.nblocks,
	    filter.hashes);
	if (json)
		print_stats_json(argv[0], &filter.hdr, &st);
	else
		print_stats_text(argv[0], &filter.hdr, &st);
	bloom_close(&filter);
	return finish(0);
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
	case CMD_HELP:
	case NCMD:
		break;
	}
	return cmd_help(argc, argv);
}
