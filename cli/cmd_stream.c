/*
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
#include "stream/engine.h"
#include "stream/fields.h"
#include "filter/merge.h"
#include "params.h"
#include "cli/parse.h"
#include "cli/progress.h"
#include "lib/quote.h"
#include "filter/stats.h"

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
			msg_warn("%s: %s", files[i], strerror(errno));
			trouble = 1;
			continue;
		}
		e = engine_stream(job, fd);
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
			msg_warn("%s: %s", job->filter->path,
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

/* Sets up e's buffers and line reader, or says why not.  Returns 0 or -1. */
static int
engine_setup(struct engine *e)
{
	if (engine_init(e) == 0)
		return 0;
	msg_warn("%s", errno == ENOMEM ? "out of memory" : strerror(errno));
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
		msg_warn("%s: no such filter, and auto-create is off (%s)", path,
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
			msg_warn("%s: created growable, for %" PRIu64 " items "
			    "at first, at fpr %g (%" PRIu64 " bytes); "
			    "--no-create or BLOOM_NO_CREATE=1 turns this off",
			    path,
			    spec.first.capacity, spec.first.target_fpr,
			    h.file_size);
		else if (!(s == BLOOM_ERRNO && errno == EEXIST)) {
			msg_warn("%s: cannot create: %s", path,
			    bloom_strerror(s));
			return -1;
		}
		s = bloom_open(b, path, 1, tell_open_waits);
	}
	if (s != BLOOM_OK) {
		filter_error(path, s, &b->hdr);
		return -1;
	}
	b->on_lock_wait = tell_lock_waits;
	return 0;
}

/* Tells of what an add did to the filter that its user should know. */
void
notice(struct bloom *b, unsigned events)
{
	static int warned_early;

	const struct segment_info *t = &b->seg[b->target].info;

	if (events & BLOOM_EV_FULL)
		msg_warn("%s: warning: past its capacity of %" PRIu64 " items; "
		    "estimated false-positive rate now %.3g (target %g); "
		    "a filter made with --grow grows instead", b->path,
		    b->hdr.capacity, b->full_fpr, b->hdr.target_fpr);
	/* Once a command: a small window may close many generations. */
	if (events & BLOOM_EV_EARLY && !warned_early++)
		msg_warn("%s: warning: a generation filled with %" PRIu64
		    " items before its time and was closed early; lines may "
		    "be forgotten sooner than the window", b->path,
		    t->capacity);
}

/* Tells of the lines a slice passed over. */
static void
elsewhere_note(const struct engine *e)
{
	if (e->elsewhere == 1)
		msg_warn("%s: 1 line belongs to other slices of the filter and "
		    "was passed over (bloom route splits a stream by slice)",
		    e->filter->path);
	else if (e->elsewhere > 1)
		msg_warn("%s: %" PRIu64 " lines belong to other slices of the "
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
			job.sync = 1;
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
		msg_warn("%s: cannot sync: %s", argv[0], strerror(errno));
		rc = -1;
	}
	bloom_close(&filter);
	engine_free(&job);
	return finish(rc == 0 ? 0 : EXIT_TROUBLE);
}

int
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
	if (count_only && !job.quiet) {
		FILE *report = report_open();

		fprintf(report, "%" PRIu64 "\n", job.selected);
		if (report_close(report) == -1)
			return finish(EXIT_TROUBLE);
	}
	/* As grep -q: a selected line wins over trouble with other input. */
	if (job.quiet && job.selected > 0)
		return finish(EXIT_SELECTED);
	if (rc != 0)
		return finish(EXIT_TROUBLE);
	return finish(job.selected > 0 ? EXIT_SELECTED : EXIT_NONE);
}

int
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
		msg_warn("%s: is one of %" PRIu32 " slices, not %" PRIu64, argv[0],
		    filter.hdr.slices, slices);
		goto out;
	}
	if (filter.hdr.slices != 0)
		slices = filter.hdr.slices;
	else if (slices == 0) {
		msg_warn("%s: not a slice: say how many slices with --slices",
		    argv[0]);
		goto out;
	} else if (filter.hdr.mode != MODE_FIXED ||
	    filter.seg[0].info.nblocks % slices != 0) {
		msg_warn("%s: cannot be cut into %" PRIu64 " slices: %s", argv[0],
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
			msg_warn("out of memory");
			goto out;
		}
		for (i = 0; i < slices; i++, opened++) {
			int fd;

			snprintf(name, size, "%s%" PRIu32, prefix, i);
			fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			    0666);
			if (fd == -1 || output_init(&job.routes[i], fd) == -1) {
				msg_warn("%s: %s", name, strerror(errno));
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
			msg_warn("%s%" PRIu32 ": %s", prefix, i, strerror(errno));
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

