/* SPDX-License-Identifier: ISC
 * bloom add, check and route: their options, the input files, the
 * progress line, and what the engine reports turned into messages.
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
#include "cli/msg.h"
#include "filter/create.h"
#include "lib/clock.h"
#include "cli/report.h"
#include "stream/engine.h"
#include "stream/fields.h"
#include "params.h"
#include "cli/parse.h"
#include "cli/progress.h"
#include "stream/union.h"

static const char *
input_name(const char *file)
{
	return strcmp(file, "-") == 0 ? "(standard input)" : file;
}

/* What check says of each input file, as grep does: its count (-c), and
 * its name before its count and, with -H, before its lines. */
static FILE *file_counts;	/* -c: each file's count goes here */
static int file_names;		/* 1 for -H, 0 for -h (or add, route), -1
				 * for check's default: counts named if
				 * there are several files, lines not */

/* Sets job's label to the name of file if check names files.  Returns 0,
 * or -1 if out of memory. */
static int
label_file(struct engine *job, const char *file)
{
	char *label;

	free((char *)job->label);
	job->label = NULL;
	if (file_names != 1 || file_counts != NULL)
		return 0;
	if (asprintf(&label, "%s:", input_name(file)) == -1)
		return -1;
	job->label = label;
	return 0;
}

/*
 * Whether fd is the regular file that the standard output writes to: a
 * run that writes lines there and reads them back would never end (grep
 * and cat refuse such an input too).
 */
static int
is_own_output(int fd)
{
	struct stat in, out;

	return fstat(STDOUT_FILENO, &out) == 0 && S_ISREG(out.st_mode) &&
	    fstat(fd, &in) == 0 && in.st_dev == out.st_dev &&
	    in.st_ino == out.st_ino;
}

/* Whether fd is the file of one of the job's filters. */
static int
is_filter(const struct engine *job, int fd)
{
	unsigned i;

	if (job->all == NULL)
		return bloom_is_file(job->filter, fd);
	for (i = 0; i < job->all->n; i++)
		if (bloom_is_file(job->all->filter[i], fd))
			return 1;
	return 0;
}

/* Warns once for an input of which no line held the separator of -f:
 * each line was then its own key, whole, as cut(1) prints such a line,
 * or with -s skipped, which is seldom what was meant. */
static void
tell_undelimited(const struct engine *job, const char *file)
{
	unsigned char sep = job->fields->delim;
	char shown[8];

	/* msg_warn shows a byte that is not printable escaped. */
	snprintf(shown, sizeof shown, sep == '\t' ? "TAB" : "'%c'", sep);
	if (job->fields->only_delimited)
		msg_warn("%s: no line holds the separator (%s) of -f: -s "
		    "skipped every line; -d sets the separator",
		    input_name(file), shown);
	else
		msg_warn("%s: no line holds the separator (%s) of -f: each "
		    "whole line was its key, as cut(1) takes it; -d sets the "
		    "separator", input_name(file), shown);
}

/* Whether fd is a regular file that begins as a filter file does: the
 * bytes of some filter, never lines to add or check. */
static int
has_filter_magic(int fd)
{
	struct bloom_header h;
	unsigned char buf[8];
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    pread(fd, buf, sizeof buf, 0) == (ssize_t)sizeof buf &&
	    bloom_header_parse(buf, sizeof buf, (uint64_t)st.st_size, &h) !=
	    BLOOM_EMAGIC;
}

/*
 * Refuses, before add opens or creates filter, the named inputs that are
 * filter files other than filter itself (which stream_files refuses): a
 * filter put after its input ('add --new new.txt seen.bf') would create a
 * filter named for the input and write the other's bytes as lines.
 * Returns 0, or -1 having said which.
 */
static int
refuse_filter_inputs(const char *filter, int nfiles, char **files)
{
	static char *stdin_only[] = { "-" };
	struct stat f, in;
	int i, fd, bad = 0, known = stat(filter, &f) == 0;

	if (nfiles == 0) {
		nfiles = 1;
		files = stdin_only;
	}
	for (i = 0; i < nfiles; i++) {
		if (strcmp(files[i], "-") == 0)
			fd = STDIN_FILENO;
		else if ((fd = open(files[i], O_RDONLY | O_NONBLOCK |
		    O_CLOEXEC)) == -1)
			continue;	/* stream_files says why */
		if (has_filter_magic(fd) && !(known && fstat(fd, &in) == 0 &&
		    in.st_dev == f.st_dev && in.st_ino == f.st_ino)) {
			msg_warn("%s: input file is a filter: nothing added "
			    "(the filter comes first: bloom add [options] "
			    "filter [file ...])", input_name(files[i]));
			bad = 1;
		}
		if (fd != STDIN_FILENO)
			close(fd);
	}
	return bad ? -1 : 0;
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
	int i, fd, own, magic, trouble = 0;
	enum stream_end e;
	uint64_t before;
	int name_counts = file_names == 1 || (file_names == -1 && nfiles > 1);
	int writes = job->emit || (job->route != 0 && job->routes == NULL);

	if (nfiles == 0) {
		nfiles = 1;
		files = stdin_only;
	}
	for (i = 0; i < nfiles; i++) {
		if (strcmp(files[i], "-") == 0)
			fd = STDIN_FILENO;
		else if ((fd = open(files[i], O_RDONLY | O_CLOEXEC)) == -1) {
			msg_warn("%s: %s", files[i], strerror(errno));
			trouble = 1;
			continue;
		}
		/* A filter's own bytes are never lines to add or check: a
		 * glob or a slip put it among the inputs. */
		own = is_filter(job, fd);
		magic = !own && has_filter_magic(fd);
		if (own || magic || (writes && is_own_output(fd))) {
			msg_warn("%s: input file is %s", input_name(files[i]),
			    own ? "also a filter" : magic ? "a filter" :
			    "also the output");
			if (fd != STDIN_FILENO)
				close(fd);
			trouble = 1;
			continue;
		}
		if (label_file(job, files[i]) == -1) {
			msg_warn("out of memory");
			if (fd != STDIN_FILENO)
				close(fd);
			return -2;
		}
		before = job->selected;
		e = engine_stream(job, fd);
		if (e == STREAM_DONE && job->fields != NULL &&
		    lines_undelimited(&job->reader))
			tell_undelimited(job, files[i]);
		if (file_counts != NULL && e != STREAM_FILTER_ERROR &&
		    e != STREAM_WRITE_ERROR) {
			if (name_counts)
				fprintf(file_counts, "%s:",
				    input_name(files[i]));
			fprintf(file_counts, "%" PRIu64 "\n",
			    job->selected - before);
		}
		if (e == STREAM_READ_ERROR) {
			msg_warn("%s: read error: %s", input_name(files[i]),
			    strerror(errno));
			trouble = 1;
		}
		if (e == STREAM_CHANGED) {
			msg_warn("%s: changed while it was read",
			    input_name(files[i]));
			trouble = 1;
		}
		if (e == STREAM_FILTER_ERROR) {
			msg_warn("%s: %s", bloom_path(job->failed != NULL ?
			    job->failed : job->filter),
			    bloom_strerror(job->status));
			if (fd != STDIN_FILENO)
				close(fd);
			engine_flush(job);
			return -2;
		}
		if (fd != STDIN_FILENO)
			close(fd);
		if (e == STREAM_WRITE_ERROR) {
			/* The lines the reader took are marked all the same. */
			engine_drain(job);
			return -1;
		}
		if (e == STREAM_STOP)
			break;
	}
	/* add --new to a pipe: the lines its reader takes are marked. */
	if ((e = engine_drain(job)) == STREAM_FILTER_ERROR) {
		msg_warn("%s: %s", bloom_path(job->filter),
		    bloom_strerror(job->status));
		return -2;
	}
	return e == STREAM_DONE ? trouble : -1;
}

/* Sets up e's buffers and line reader, or says why not.  Returns 0 or -1. */
static int
engine_setup(struct engine *e)
{
	if (engine_init(e) == 0)
		return 0;
	msg_warn("%s", errno == ENOMEM ? "out of memory" : strerror(errno));
	return -1;
}

/* The key fields of add, check and route -f, and the status line. */
static struct fields key_fields;
static int key_delim_given;	/* -d was given */
static int key_only_delimited;	/* -s was given */
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

/* Takes option ch (its argument arg) of add, check or route, if it is one
 * of the key's: -f, -d or -s.  Returns 1 if it was, else 0. */
static int
key_flag(enum command cmd, int ch, const char *arg, struct engine *job)
{
	switch (ch) {
	case 'f':
		key_option(cmd, arg, NULL);
		job->fields = &key_fields;
		return 1;
	case 'd':
		key_option(cmd, NULL, arg);
		return 1;
	case 's':
		key_only_delimited = 1;
		return 1;
	default:
		return 0;
	}
}

/* After the options: a usage error if -d or -s came without -f (fields
 * is 1 if it came), else makes -s the rule of the key fields. */
static void
key_finish(enum command cmd, int fields)
{
	if (!fields && key_delim_given)
		usage_error((int)cmd, "%s: -d needs -f", command_name[cmd]);
	if (!fields && key_only_delimited)
		usage_error((int)cmd, "%s: -s needs -f", command_name[cmd]);
	key_fields.only_delimited = key_only_delimited;
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

/* The sizing add -n and -p ask for: 0 if not given. */
struct add_sizing {
	uint64_t capacity;	/* -n: of the first segment */
	double target_fpr;	/* -p: of the whole filter */
};

/*
 * Refuses a filter that add -n or -p would have made another way: they
 * size the filter add creates, and cannot change one.  Returns 0, or -1
 * after saying so.
 */
static int
same_sizing(const struct bloom *b, const char *path,
    const struct add_sizing *want)
{
	const struct bloom_header *h = bloom_header(b);

	if (want->capacity != 0 && want->capacity != h->capacity) {
		msg_warn("%s: -n %" PRIu64 " would change the filter's capacity "
		    "of %" PRIu64 ": add -n sizes only a filter it creates",
		    path, want->capacity, h->capacity);
		return -1;
	}
	if (want->target_fpr != 0 && want->target_fpr != h->target_fpr) {
		msg_warn("%s: -p %.15g would change the filter's false-positive "
		    "rate of %.15g: add -p sizes only a filter it creates", path,
		    want->target_fpr, h->target_fpr);
		return -1;
	}
	return 0;
}

/* Opens the filter for add, creating it growable, sized as want says or
 * with the defaults, if missing and may_create is 1; 0 is --no-create,
 * -1 BLOOM_NO_CREATE. */
static int
open_for_add(struct bloom **bp, const char *path, int may_create,
    const struct add_sizing *want)
{
	struct bloom_spec spec;
	struct bloom_header h;
	int s;

	s = bloom_open(bp, path, 1, tell_open_waits, &h);
	if (s == BLOOM_ERRNO && errno == ENOENT && may_create != 1) {
		msg_warn("%s: no such filter, and auto-create is off (%s)", path,
		    may_create == 0 ? "--no-create" : "BLOOM_NO_CREATE");
		return -1;
	}
	if (s == BLOOM_ERRNO && errno == ENOENT) {
		memset(&spec, 0, sizeof spec);
		spec.mode = MODE_GROW;
		spec.growth = GROW_FACTOR;
		spec.first.capacity = want->capacity != 0 ? want->capacity :
		    GROW_AUTO_CAPACITY;
		spec.first.target_fpr = want->target_fpr != 0 ?
		    want->target_fpr : DEFAULT_FPR;
		spec.seed = random_seed();
		spec.created_ms = now_ms();
		s = bloom_create(path, &spec, 0, NULL);
		if (s == BLOOM_OK && plan_filter(&spec, &h) == BLOOM_OK)
			msg_warn("%s: created growable, for %" PRIu64 " items "
			    "at first, at fpr %g (%" PRIu64 " bytes); "
			    "--no-create or BLOOM_NO_CREATE=1 turns this off",
			    path,
			    spec.first.capacity, spec.first.target_fpr,
			    h.file_size);
		else if (s == BLOOM_ETOOBIG) {
			msg_warn("%s: a filter for %" PRIu64 " items at fpr %g "
			    "would exceed %" PRIu64 " TiB", path,
			    spec.first.capacity, spec.first.target_fpr,
			    NBLOCKS_MAX * BLOCK_BYTES >> 40);
			return -1;
		} else if (!(s == BLOOM_ERRNO && errno == EEXIST)) {
			msg_warn("%s: cannot create: %s", path,
			    bloom_strerror(s));
			return -1;
		}
		s = bloom_open(bp, path, 1, tell_open_waits, &h);
	}
	if (s != BLOOM_OK) {
		filter_error(path, s, &h);
		return -1;
	}
	if (same_sizing(*bp, path, want) == -1) {
		bloom_close(*bp);
		*bp = NULL;
		return -1;
	}
	bloom_on_lock_wait(*bp, tell_lock_waits);
	bloom_on_claims_wait(*bp, tell_claims_waits);
	return 0;
}

/* Tells of what an add did to the filter that its user should know. */
void
notice(struct bloom *b, unsigned events)
{
	static int warned_early, warned_widened;
	const struct bloom_header *h = bloom_header(b);
	const struct segment_info *t = &h->seg[bloom_target(b)];

	if (events & BLOOM_EV_FULL)
		msg_warn("%s: warning: past its capacity of %" PRIu64 " items; "
		    "estimated false-positive rate now %.3g (target %g); "
		    "a filter made with --grow grows instead", bloom_path(b),
		    h->capacity, bloom_full_fpr(b), h->target_fpr);
	/* Once a command: a burst may grow or close many generations. */
	if (events & BLOOM_EV_WIDENED && !warned_widened++)
		msg_warn("%s: warning: a generation filled before its time and "
		    "took more room: the window has grown past its sizing, "
		    "and its false-positive rate may pass its target until "
		    "that generation expires", bloom_path(b));
	if (events & BLOOM_EV_EARLY && !warned_early++)
		msg_warn("%s: warning: a generation filled with %" PRIu64
		    " items before its time and was closed early, the window "
		    "being at its size limit; lines may be forgotten sooner "
		    "than the window", bloom_path(b), t->capacity);
}

/* Tells of the lines a slice passed over: in a union, a slice of the
 * first whole filter that passed over a line no filter may hold. */
static void
elsewhere_note(const struct engine *e)
{
	const char *path = bloom_path(e->filter);

	if (e->all != NULL && e->all->passer != 0)
		path = bloom_path(e->all->filter[e->all->passer - 1]);
	if (e->elsewhere == 1)
		msg_warn("%s: 1 line belongs to other slices of the filter and "
		    "was passed over (bloom route splits a stream by slice)",
		    path);
	else if (e->elsewhere > 1)
		msg_warn("%s: %" PRIu64 " lines belong to other slices of the "
		    "filter and were passed over (bloom route splits a stream "
		    "by slice)", path, e->elsewhere);
}

/* Parses the value of --memory for cmd: a size of at least a page. */
static uint64_t
parse_memory(enum command cmd, const char *arg)
{
	uint64_t v;

	if (parse_size(arg, &v) == -1 || v < 4096)
		usage_error((int)cmd, "%s: --memory takes a size of 4K or more, "
		    "such as 512M or 1GB, not '%s'", command_name[cmd], arg);
	return v;
}

/* A SIGPIPE that kill(1) sent ends us as before; the kernel's, for a write
 * to a pipe whose reader left (sent as if by ourselves), is left to the
 * EPIPE that write(2) returns. */
static void
on_sigpipe(int sig, siginfo_t *si, void *context)
{
	(void)context;
	if (si->si_code == SI_USER && si->si_pid == getpid())
		return;
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * For add --new: lets a write to a pipe whose reader left fail with EPIPE
 * rather than kill us, so that the lines the reader took are marked seen
 * before we go.  Returns 1 if SIGPIPE was to kill us.
 */
static int
hold_sigpipe(void)
{
	struct sigaction sa, old;

	if (sigaction(SIGPIPE, NULL, &old) == -1 || old.sa_handler != SIG_DFL)
		return 0;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigpipe;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGPIPE, &sa, NULL) == 0;
}

int
cmd_add(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "new", no_argument, NULL, 'N' },
		{ "dups", no_argument, NULL, 'D' },
		{ "memory", required_argument, NULL, OPT_MEMORY },
		{ "sync", no_argument, NULL, OPT_SYNC },
		{ "progress", no_argument, NULL, OPT_PROGRESS },
		{ "no-create", no_argument, NULL, OPT_NO_CREATE },
		{ "pass-over", no_argument, NULL, OPT_PASS_OVER },
		{ "only-delimited", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char shortopts[] = ":DNd:f:hn:p:sz";
	const char *env = getenv("BLOOM_NO_CREATE");
	struct add_sizing want = { 0, 0 };
	const char *why;
	struct bloom *filter;
	struct engine job;
	int ch, rc, sync = 0, dups = 0, shown = 0, may_create = 1, sigpipe;
	int pass_over = 0;

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
		case 'z':
			job.delim = '\0';
			break;
		case 'n':
			if (parse_count(optarg, &want.capacity) == -1 ||
			    want.capacity == 0)
				usage_error(CMD_ADD, "add: -n takes a positive "
				    "whole number such as 1000000, 1M or 1e6 (K, "
				    "M, G: powers of 1000), not '%s'", optarg);
			break;
		case 'p':
			if (parse_fpr(optarg, &want.target_fpr, &why) == -1)
				usage_error(CMD_ADD, "add: -p takes a rate "
				    "between 0 and 1 such as 0.01, 1e-3 or 1%%, "
				    "not '%s'%s", optarg, why);
			break;
		case OPT_SYNC:
			sync = 1;
			job.sync = 1;
			break;
		case OPT_PROGRESS:
			shown = 1;
			break;
		case OPT_PASS_OVER:
			pass_over = 1;
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
			if (!key_flag(CMD_ADD, ch, optarg, &job))
				bad_option(CMD_ADD, ch, argv, shortopts,
				    longopts);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		usage_error(CMD_ADD, "add: no filter named");
	if (dups && job.emit)
		usage_error(CMD_ADD, "add: --new and --dups do not go together");
	key_finish(CMD_ADD, job.fields != NULL);
	job.emit |= dups;
	job.invert = dups;
	if (env != NULL && parse_switch(env) == -1)
		msg_fatal(EXIT_TROUBLE, "BLOOM_NO_CREATE is '%s': set it to 1, "
		    "yes, true or on to turn auto-create off, or to 0, no, "
		    "false, off or nothing to leave it on", env);
	if (may_create == 1 && env != NULL && parse_switch(env) == 1)
		may_create = -1;
	if (refuse_filter_inputs(argv[0], argc - 1, argv + 1) == -1)
		return finish(EXIT_TROUBLE);
	if (engine_setup(&job) == -1 ||
	    open_for_add(&filter, argv[0], may_create, &want) == -1) {
		engine_free(&job);
		return finish(EXIT_TROUBLE);
	}
	if (job.emit && not_own_output(filter, argv[0]) == -1) {
		bloom_close(filter);
		engine_free(&job);
		return finish(EXIT_TROUBLE);
	}
	guard_mapping(argv[0], 1);
	job.filter = filter;
	job.notice = notice;
	start_progress(&job, shown, argc - 1, argv + 1);
	sigpipe = job.emit && !dups && hold_sigpipe();
	rc = stream_files(&job, argc - 1, argv + 1);
	if (shown)
		show_status(&job, progress_now(), 1, 0);
	if (rc == -1)
		output_error(&job.out);
	if (pass_over || job.elsewhere == 0)
		elsewhere_note(&job);
	else {
		/* The stage would lose them: a router that does not match. */
		msg_warn("%s: %" PRIu64 " line%s of other slices of the filter "
		    "not added (bloom route splits a stream by slice; "
		    "--pass-over passes them over)", argv[0], job.elsewhere,
		    job.elsewhere == 1 ? "" : "s");
		rc = rc == 0 ? 1 : rc;
	}
	if (sync && bloom_sync(filter) != BLOOM_OK) {
		msg_warn("%s: cannot sync: %s", argv[0], strerror(errno));
		rc = -1;
	}
	bloom_close(filter);
	engine_free(&job);
	if (rc == -1 && job.out.err == EPIPE && sigpipe) {
		signal(SIGPIPE, SIG_DFL);	/* as the write would have */
		raise(SIGPIPE);
	}
	return finish(rc == 0 ? 0 : EXIT_TROUBLE);
}

/* Closes and frees the n filters open_filters opened. */
static void
close_filters(struct bloom **filters, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		bloom_close(filters[i]);
	free(filters);
}

/*
 * Opens the n filters names for check, each refused if it is also the
 * standard output and written is 1.  Returns 0 with *out set, or -1
 * after saying why, with none left open.
 */
static int
open_filters(struct bloom ***out, char *const *names, unsigned n,
    int written)
{
	struct bloom_header seen;
	struct bloom **filters;
	unsigned i;
	int s;

	if ((filters = calloc(n, sizeof *filters)) == NULL) {
		msg_warn("out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		s = bloom_open(&filters[i], names[i], 0, tell_open_waits, &seen);
		if (s != BLOOM_OK) {
			filter_error(names[i], s, &seen);
			goto fail;
		}
		if (written && not_own_output(filters[i], names[i]) == -1) {
			i++;
			goto fail;
		}
	}
	/* The message of a SIGBUS names the first. */
	guard_mapping(names[0], 0);
	*out = filters;
	return 0;
fail:
	close_filters(filters, i);
	return -1;
}

int
cmd_check(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "progress", no_argument, NULL, OPT_PROGRESS },
		{ "memory", required_argument, NULL, OPT_MEMORY },
		{ "which", no_argument, NULL, OPT_WHICH },
		{ "only-delimited", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 }
	};
	static const char shortopts[] = ":F:Hcd:f:hqsvz";
	struct bloom **filters;
	struct filter_union all;
	struct engine job;
	FILE *report = NULL;
	char **names;
	unsigned nnames = 0;
	int ch, rc, count_only = 0, shown = 0;

	/* The filters of -F, or the first operand: at most one a word. */
	if ((names = calloc((size_t)argc + 1, sizeof *names)) == NULL)
		msg_fatal(EXIT_TROUBLE, "out of memory");
	memset(&job, 0, sizeof job);
	job.emit = 1;
	job.delim = '\n';
	file_names = -1;
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
		case OPT_PROGRESS:
			shown = 1;
			break;
		case OPT_MEMORY:
			job.memory = parse_memory(CMD_CHECK, optarg);
			break;
		case 'F':
			names[nnames++] = optarg;
			break;
		case OPT_WHICH:
			job.which = 1;
			break;
		case 'H':
			file_names = 1;
			break;
		case 'h':
			file_names = 0;
			break;
		case OPT_HELP:
			free(names);
			print_help(CMD_CHECK);
			return finish(0);
		default:
			if (!key_flag(CMD_CHECK, ch, optarg, &job))
				bad_option(CMD_CHECK, ch, argv, shortopts,
				    longopts);
		}
	}
	argc -= optind;
	argv += optind;
	if (nnames == 0) {
		if (argc < 1)
			usage_error(CMD_CHECK, "check: no filter named");
		names[nnames++] = argv[0];
		argc--;
		argv++;
	}
	key_finish(CMD_CHECK, job.fields != NULL);
	if (job.which && (job.invert || count_only || job.quiet))
		usage_error(CMD_CHECK, "check: --which names the filter that "
		    "holds each line written: not with -v, -c or -q");
	if (count_only || job.quiet)
		job.emit = 0;
	rc = open_filters(&filters, names, nnames, !job.quiet);
	free(names);
	if (rc == -1)
		return finish(EXIT_TROUBLE);
	job.filter = filters[0];
	if (nnames > 1 && union_init(&all, filters, nnames, job.fields) == -1) {
		msg_warn("out of memory");
		close_filters(filters, nnames);
		return finish(EXIT_TROUBLE);
	}
	if (nnames > 1)
		job.all = &all;
	if (engine_setup(&job) == -1) {
		engine_free(&job);
		if (job.all != NULL)
			union_free(&all);
		close_filters(filters, nnames);
		return finish(EXIT_TROUBLE);
	}
	if (count_only && !job.quiet)
		file_counts = report = report_open();
	start_progress(&job, shown, argc, argv);
	rc = stream_files(&job, argc, argv);
	elsewhere_note(&job);
	if (shown)
		show_status(&job, progress_now(), 1, 0);
	free((char *)job.label);
	engine_free(&job);
	if (job.all != NULL)
		union_free(&all);
	close_filters(filters, nnames);
	if (rc == -1)
		output_error(&job.out);
	if (report != NULL && (report_close(report) == -1 || rc < 0))
		return finish(EXIT_TROUBLE);
	if (rc < 0)
		return finish(EXIT_TROUBLE);
	/* As grep -q: a selected line wins over trouble with other input. */
	if (job.quiet && job.selected > 0)
		return finish(EXIT_SELECTED);
	if (rc != 0)
		return finish(EXIT_TROUBLE);
	return finish(job.selected > 0 ? EXIT_SELECTED : EXIT_NONE);
}

/*
 * Whether fd is one of the nfiles input files (standard input if none),
 * so that route -o must not truncate it before it is read.
 */
static int
is_input(int fd, int nfiles, char **files)
{
	struct stat out, in;
	int i, s;

	if (fstat(fd, &out) == -1)
		return 0;
	for (i = 0; i < (nfiles == 0 ? 1 : nfiles); i++) {
		if (nfiles == 0 || strcmp(files[i], "-") == 0)
			s = fstat(STDIN_FILENO, &in);
		else
			s = stat(files[i], &in);
		if (s == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
			return 1;
	}
	return 0;
}

/* Says which of route's n outputs could not be written, and why. */
static void
route_output_error(const struct output *routes, uint32_t n,
    const char *prefix)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (routes[i].failed) {
			if (routes[i].err != EPIPE)
				msg_warn("%s%" PRIu32 ": write error: %s",
				    prefix, i, strerror(routes[i].err));
			return;
		}
}

int
cmd_route(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "slices", required_argument, NULL, OPT_SLICES },
		{ "only-delimited", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char shortopts[] = ":d:f:ho:sz";
	struct engine job;
	struct bloom_header seen;
	const struct bloom_header *h;
	struct bloom *filter = NULL;
	const char *prefix = NULL;
	uint64_t v, slices = 0, whole;
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
			if (!key_flag(CMD_ROUTE, ch, optarg, &job))
				bad_option(CMD_ROUTE, ch, argv, shortopts,
				    longopts);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		usage_error(CMD_ROUTE, "route: no filter named");
	/* A router is often a slice of thousands: say how many files. */
	if (prefix != NULL && slices == 0)
		usage_error(CMD_ROUTE, "route: -o writes a file for each slice: "
		    "say how many with --slices");
	key_finish(CMD_ROUTE, job.fields != NULL);
	s = bloom_open(&filter, argv[0], 0, tell_open_waits, &seen);
	if (s != BLOOM_OK) {
		filter_error(argv[0], s, &seen);
		return finish(EXIT_TROUBLE);
	}
	guard_mapping(argv[0], 0);
	h = bloom_header(filter);
	/* A slice knows its whole filter: it routes for its own slicing,
	 * or for another that divides the whole. */
	whole = h->slices != 0 ? h->whole_nblocks : h->seg[0].nblocks;
	if (h->slices != 0 && slices == 0)
		slices = h->slices;
	else if (slices == 0) {
		msg_warn("%s: not a slice: say how many slices with --slices",
		    argv[0]);
		goto out;
	} else if (h->mode != MODE_FIXED || whole % slices != 0) {
		msg_warn("%s: cannot be cut into %" PRIu64 " slices: %s", argv[0],
		    slices, bloom_strerror(h->mode != MODE_FIXED ?
		    BLOOM_ESLICE_MODE : BLOOM_ESLICE_DIVIDE));
		goto out;
	}
	job.filter = filter;
	job.route = (uint32_t)slices;
	if (engine_setup(&job) == -1)
		goto out;
	if (prefix != NULL) {
		size_t size = strlen(prefix) + 16;

		job.routes = calloc(slices, sizeof job.routes[0]);
		name = malloc(size);
		if (job.routes == NULL || name == NULL) {
			msg_warn("out of memory");
			goto out;
		}
		for (i = 0; i < slices; i++, opened++) {
			int fd, own;

			snprintf(name, size, "%s%" PRIu32, prefix, i);
			/* Truncated only once none is known to be an input. */
			fd = open(name, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
			if (fd != -1 && ((own = bloom_is_file(filter, fd)) ||
			    is_input(fd, argc - 1, argv + 1))) {
				msg_warn("%s: is also %s: refusing to "
				    "truncate it", name, own ? "the filter" :
				    "an input");
				close(fd);
				goto out;
			}
			if (fd == -1 || output_init(&job.routes[i], fd,
			    job.delim) == -1) {
				msg_warn("%s: %s", name, strerror(errno));
				if (fd != -1)
					close(fd);
				goto out;
			}
		}
		/* A pipe or a device has nothing to truncate (EINVAL). */
		for (i = 0; i < slices; i++)
			if (ftruncate(job.routes[i].fd, 0) == -1 &&
			    errno != EINVAL) {
				msg_warn("%s%" PRIu32 ": %s", prefix, i,
				    strerror(errno));
				goto out;
			}
	}
	rc = stream_files(&job, argc - 1, argv + 1);
	if (rc == -1 && job.routes != NULL)
		route_output_error(job.routes, opened, prefix);
	else if (rc == -1)
		output_error(&job.out);
out:
	for (i = 0; i < opened; i++) {
		if (close(job.routes[i].fd) == -1 && rc == 0) {
			msg_warn("%s%" PRIu32 ": %s", prefix, i, strerror(errno));
			rc = -1;
		}
		output_free(&job.routes[i]);
	}
	free(job.routes);
	free(name);
	engine_free(&job);
	bloom_close(filter);
	return finish(rc == 0 ? 0 : EXIT_TROUBLE);
}

