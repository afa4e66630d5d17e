/* SPDX-License-Identifier: ISC
 * bloom: the command line.  main, the usage and help of every command,
 * messages and exit codes; the commands themselves are in cli_create.c,
 * cli_stream.c and cli_filter.c.  These files are the only ones that
 * print or exit.
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


#include "cli.h"
#include "cli/foreign.h"
#include "cli/msg.h"
#include "stream/engine.h"
#include "lib/quote.h"

const char *const command_name[NCMD] = {
	"create", "add", "check", "stats", "rotate", "merge", "fold", "route",
	"help"
};

/* The SYNOPSIS of bloom(1), line for line. */
static const char *const synopsis[NCMD] = {
	("bloom create [-f] [-k hashes] [-n capacity] [-p fpr] [-s size]\n"
	"             [--slices n] [--slice i/n | auto] [--seed n]\n"
	"             [--grow [--growth factor]]\n"
	"             [--generations count [--window duration] [--max-size size]\n"
	"              [--layout blocked | apbf] [--no-renew]] [--dry-run] filter\n"
	"bloom create --like template [-f] [--slice i/n | auto] [--slices n]\n"
	"             filter"),
	("bloom add [-D | -N] [-z] [-f list [-d delim] [-s]] [-n capacity]\n"
	"          [-p fpr] [--memory size] [--no-create] [--pass-over]\n"
	"          [--progress] [--sync] filter [file ...]"),
	("bloom check [-cHhqvz] [-f list [-d delim] [-s]] [--memory size]\n"
	"            [--progress] [--which] filter [file ...]\n"
	"bloom check -F filter [-F filter ...] [-cHhqvz]\n"
	"            [-f list [-d delim] [-s]] [--memory size] [--progress]\n"
	"            [--which] [file ...]"),
	"bloom stats [--json] filter",
	"bloom rotate filter",
	"bloom merge filter source ...",
	"bloom fold [-f] [--by n] filter output",
	("bloom route [-z] [-f list [-d delim] [-s]] [-o prefix] [--slices n]\n"
	"            filter [file ...]"),
	"bloom help [command]",
};

static const char *const option_help[NCMD] = {
	("Create an empty filter file sized for the given capacity and false-\n"
	"positive rate; any two of -n, -p and -s determine the third (-s\n"
	"alone keeps the rate of 0.01 and derives the capacity).\n"
	"  -n capacity  items the filter is sized for (default 1000000), with\n"
	"               suffix K, M or G (powers of 1000: 5M is 5000000),\n"
	"               with a point or an exponent if whole: 2.5M, 2e9\n"
	"  -p fpr       false-positive rate at capacity (default 0.01), or a\n"
	"               percentage: 1% is 0.01\n"
	"  -s size      bytes of bit array, with suffix K, M, G or T (powers of\n"
	"               1024, also KiB...) or KB, MB, GB, TB (powers of 1000);\n"
	"               rounded down to whole 64-byte blocks\n"
	"  -k hashes    bits per item, 1 to 32 (default: the best for the size)\n"
	"  --grow       grow past capacity: -n is the first segment's capacity,\n"
	"               -p bounds the rate of the whole filter at any size\n"
	"  --growth F   each new segment F times the last (default 2; 1.25-16)\n"
	"  --generations G\n"
	"               forget: G generations (2-64), the oldest dropped at\n"
	"               each rotation; -n is distinct lines per window\n"
	"  --window D   rotate by time: remember a line for at least D after it\n"
	"               was last added (90s, 30m, 1.5h, 7D, 2w); without it,\n"
	"               bloom rotate rotates\n"
	"  --layout L   with --generations: blocked, a segment per generation;\n"
	"               or apbf, age-partitioned: every generation's bits for\n"
	"               a line in two adjacent cache lines, read once whatever\n"
	"               G, for 22 to 25 bits per line at 1 % from 7 to 56\n"
	"               generations (44 at 2; near 64 few hashes fit: refused\n"
	"               past 3 times blocked's room); a line fades over k - 1\n"
	"               generations once forgotten.  Default: apbf where it\n"
	"               takes at most 1.75 times blocked's room, else blocked\n"
	"               (--dry-run says which); at 8 generations and 1 %,\n"
	"               24.6 bits per line, check -c 1.2-1.4 times a fixed\n"
	"               filter's time, add --new 1.6-1.7 (blocked: 17.3 bits,\n"
	"               2.5-3.8 and 1.9-2.3)\n"
	"  --no-renew   with --generations: remember a line for its window from\n"
	"               when it was first added; sightings do not renew it, so\n"
	"               add --new passes it again once the window has passed\n"
	"  --max-size S with --generations: the bytes (as -s) the file may\n"
	"               grow to when a generation fills before its time; past\n"
	"               them it closes early instead (default: no limit)\n"
	"  --slices n   round the blocks up to a multiple of n, so that the\n"
	"               filter can be cut into n slices (--slice), and of\n"
	"               more counts up to 16 where that adds at most 1%;\n"
	"               with --like, the count for --slice auto\n"
	"  --seed n     hash seed (default: random)\n"
	"  --slice i/n  make only slice i (0 to n-1) of the n slices of the\n"
	"               filter, for a filter spread over n hosts: from -n,\n"
	"               -p, -s and --seed (needed), or of the template's\n"
	"               whole filter, which may itself be a slice of any count\n"
	"  --slice auto the slice of this task of a job engine: its index from\n"
	"               SLURM_ARRAY_TASK_ID (less SLURM_ARRAY_TASK_MIN),\n"
	"               JOB_COMPLETION_INDEX, PSSH_NODENUM or BLOOM_SLICE; the\n"
	"               count from --slices or a template that is a slice\n"
	"  --like template\n"
	"               an empty filter with the template's seed, mode,\n"
	"               geometry and generations: one that merge accepts\n"
	"  --dry-run    print what would be made; make nothing\n"
	"  -f           replace an existing file; without it, an existing\n"
	"               filter made as asked is left as it is (exit 0), one\n"
	"               made otherwise refused, naming what differs\n"),
	("Add lines to the filter.  A missing filter is created growable, for\n"
	"8000000 lines at first (-n) and a rate of 0.01 (-p), unless\n"
	"--no-create is given or BLOOM_NO_CREATE is set to 1, yes, true or on.\n"
	"  -N, --new    write the lines that were not yet in the filter; a\n"
	"               line is added only once written (to a pipe, once its\n"
	"               reader took it), and written as soon as the input\n"
	"               stops coming\n"
	"  -D, --dups   write the lines that were already in it: every repeat,\n"
	"               not the first occurrence (as awk 'seen[$0]++')\n"
	"  -f list      the key is these fields (1,3 or 2- as in cut), not the\n"
	"               whole line; missing fields are empty; a line without\n"
	"               the separator is one field, as in cut\n"
	"  -d delim     the field separator, one byte (default TAB)\n"
	"  -s, --only-delimited\n"
	"               skip a line without the separator, as cut -s: no\n"
	"               key, not added, not written (not even with -N or -D)\n"
	"  -z           lines end with NUL, not newline\n"
	"  -n capacity  a missing filter's first segment is for this many\n"
	"               lines (K, M, G: powers of 1000); an existing filter\n"
	"               must have this capacity\n"
	"  -p fpr       a missing filter's rate (0.01 or 1%); an existing one\n"
	"               must have it\n"
	"  --memory S   bytes bloom may use (512M, 1GB); default: the cgroup\n"
	"               limit or available memory\n"
	"  --no-create  fail if the filter does not exist\n"
	"  --pass-over  a slice passes over the lines of other slices and\n"
	"               says so; without it they are an error (exit 2)\n"
	"  --progress   a status line on standard error as it goes\n"
	"  --sync       write the filter to stable storage before exiting;\n"
	"               with -N or -D, sync the output before adding its lines\n"
	"SIGUSR1 prints one status line.\n"),
	("Write the lines that may be in the filter.\n"
	"  -v           write the lines that are certainly not in the filter\n"
	"  -c           write only the number of such lines: of each file,\n"
	"               after its name and a colon if there are several\n"
	"  -H           name the file before each count or line, always\n"
	"  -h           never name the file\n"	"  -F filter    the filter, in place of the first operand (every\n"
	"               operand is then an input file); repeated, a line is\n"
	"               selected if any of the filters may hold it (-v: if\n"
	"               none does), each line hashed once for each seed\n"
	"  --which      write the name of the first filter that may hold the\n"
	"               line, and a tab, before it\n"
	"  -q           write nothing; the exit status tells\n"
	"  -f list      the key is these fields (1,3 or 2- as in cut), not the\n"
	"               whole line; missing fields are empty; a line without\n"
	"               the separator is one field, as in cut\n"
	"  -d delim     the field separator, one byte (default TAB)\n"
	"  -s, --only-delimited\n"
	"               skip a line without the separator, as cut -s: not\n"
	"               selected (not even with -v), not counted by -c\n"
	"  -z           lines end with NUL, not newline\n"
	"  --memory S   bytes bloom may use (512M, 1GB); default: the cgroup\n"
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
	("Write to output a smaller filter holding the same lines: blocks n i to\n"
	"n i + n - 1 ORed into block i, exactly the filter made with 1/n of\n"
	"the blocks; each segment of a growable filter is folded alone, a\n"
	"window's generations alike, a slice into the same slice of its whole\n"
	"filter folded.  The output is written whole or not at all; filter is\n"
	"only read.\n"
	"  --by n       fold by n, which must divide the blocks of every\n"
	"               segment (default: each segment as far as the lines it\n"
	"               holds allow at its target rate; a slice needs it; if\n"
	"               none can fold, nothing is written and fold exits 2)\n"
	"  -f           replace an existing output file\n"),
	("Split lines by the slice of filter that holds them: each line is\n"
	"written after its slice number and a tab, or with -o to the file\n"
	"prefix followed by the slice number.\n"
	"  -o prefix    write slice i's lines to the file prefix<i>; needs\n"
	"               --slices\n"
	"  -f list      route by the key of these fields, as add -f and check\n"
	"               -f take it (cut's lists; a line without the separator\n"
	"               is one field)\n"
	"  -d delim     the field separator, one byte (default TAB)\n"
	"  -s, --only-delimited\n"
	"               skip a line without the separator, as cut -s: not\n"
	"               written\n"
	"  --slices n   the number of slices, which must divide the whole\n"
	"               filter's blocks (without -o, a slice routes for its\n"
	"               own count unless told)\n"
	"  -z           lines end with NUL, not newline\n"),
	"Describe a command, or all of them.\n",
};

/* The message SIGBUS writes: the mapped filter shrank under us. */
static char sigbus_message[512];

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
_Noreturn void
usage_error(int cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_vwarn(fmt, ap);
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
_Noreturn void
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

void
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
			msg_warn("write error: %s", strerror(errno));
		return -1;
	}
	if (fclose(stdout) == EOF) {
		msg_warn("write error: %s", strerror(errno));
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

void
output_error(const struct output *out)
{
	if (out->err != EPIPE)
		msg_warn("write error: %s", strerror(out->err));
}

int
finish(int status)
{
	if (close_stdout() == -1)
		return EXIT_TROUBLE;
	return status;
}

int
is_directory(const char *path)
{
	struct stat sb;
	int saved = errno, dir;

	dir = stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
	errno = saved;
	return dir;
}

/* Reports a failure of the filter at path with status s. */
void
filter_error(const char *path, int s, const struct bloom_header *h)
{
	char why[512];

	if (s != BLOOM_OK && is_directory(path))
		msg_warn("%s: is a directory, not a filter", path);
	else if (s == BLOOM_ESIZE)
		msg_warn("%s: size mismatch (file is not the %" PRIu64
		    " bytes its header says)", path, h->file_size);
	else if (s == BLOOM_EVERSION)
		msg_warn("%s: unsupported format version %" PRIu32
		    " (this bloom reads versions 1 and 2)", path, h->version);
	else if (s == BLOOM_EMAGIC && foreign_file(path, why, sizeof why))
		msg_warn("%s: %s", path, why);
	else
		msg_warn("%s: %s", path, bloom_strerror(s));
}

/* Refuses a filter that is also the standard output, which writing would
 * destroy; returns 0, or -1 after saying so. */
int
not_own_output(const struct bloom *b, const char *path)
{
	if (!bloom_is_file(b, STDOUT_FILENO))
		return 0;
	msg_warn("%s: is also the standard output: refusing to write into the "
	    "filter", path);
	return -1;
}

uint64_t
random_seed(void)
{
	uint64_t seed;

	if (getrandom(&seed, sizeof seed, 0) != (ssize_t)sizeof seed)
		msg_fatal(EXIT_TROUBLE, "cannot get a random seed: %s",
		    strerror(errno));
	return seed;
}

/* Tells that a command has waited a second for its shared lock. */
void
tell_open_waits(const char *path)
{
	msg_warn("%s: waiting for a lock: another process holds the filter "
	    "exclusively (a create -f replacing it, an adder alone with it, "
	    "or any process that may open it)", path);
}

/* Tells that a writer has waited a second for another process to finish
 * growing or rotating the filter. */
void
tell_lock_waits(const char *path)
{
	msg_warn("%s: waiting for a lock: another process is adding a segment to "
	    "the filter or rotating its generations", path);
}

/* Tells that add --new has waited a second for the other adders of the
 * filter: a chunk of lines another one is writing alone, or the claims
 * of its new lines. */
void
tell_claims_waits(const char *path)
{
	msg_warn("%s: waiting for a lock: another add --new of the filter is "
	    "writing its new lines, or a process holds its lock", path);
}

/* Tells that create -f has waited a second for the file's users. */
void
tell_create_waits(const char *path)
{
	msg_warn("%s: waiting for a lock: another process has the filter open, "
	    "and create -f replaces it only once nothing uses it", path);
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
void
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
	/* A write past ulimit -f fails with EFBIG, which the command reports
	 * naming the file, rather than killing us without a word. */
	signal(SIGXFSZ, SIG_IGN);
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
	case CMD_FOLD:
		return cmd_fold(argc, argv);
	case CMD_ROUTE:
		return cmd_route(argc, argv);
	case CMD_HELP:
	case NCMD:
		break;
	}
	return cmd_help(argc, argv);
}

