/* SPDX-License-Identifier: ISC
 * bloom stats, rotate and merge: commands on whole filters.
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
#include "cli/report.h"
#include "stream/engine.h"
#include "filter/merge.h"
#include "filter/stats.h"

int
cmd_stats(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char shortopts[] = ":h";
	static struct filter_stats st;
	struct bloom_header seen;
	struct bloom *filter;
	struct stat sb;
	FILE *report;
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
	s = bloom_open(&filter, argv[0], 0, tell_open_waits, &seen);
	if (s != BLOOM_OK) {
		filter_error(argv[0], s, &seen);
		return finish(EXIT_TROUBLE);
	}
	if (not_own_output(filter, argv[0]) == -1) {
		bloom_close(filter);
		return finish(EXIT_TROUBLE);
	}
	guard_mapping(argv[0], 0);
	if (fstat(bloom_fd(filter), &sb) == -1)
		sb.st_size = 0;
	if ((s = stats_compute(filter, (uint64_t)sb.st_size, &st)) !=
	    BLOOM_OK) {
		msg_warn("%s: %s", argv[0], bloom_strerror(s));
		bloom_close(filter);
		return finish(EXIT_TROUBLE);
	}
	report = report_open();
	if (json)
		report_stats_json(report, argv[0], bloom_header(filter), &st);
	else
		report_stats_text(report, argv[0], bloom_header(filter), &st);
	bloom_close(filter);
	return finish(report_close(report) == -1 ? EXIT_TROUBLE : 0);
}

int
cmd_rotate(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char shortopts[] = ":h";
	struct bloom_header seen;
	struct bloom *filter;
	uint32_t mode;
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
	s = bloom_open(&filter, argv[0], 1, tell_open_waits, &seen);
	if (s != BLOOM_OK) {
		filter_error(argv[0], s, &seen);
		return finish(EXIT_TROUBLE);
	}
	bloom_on_lock_wait(filter, tell_lock_waits);
	guard_mapping(argv[0], 1);
	if ((mode = bloom_header(filter)->mode) != MODE_WINDOW) {
		msg_warn("%s: cannot rotate: a %s filter has no generations "
		    "(make one with create --generations)", argv[0],
		    mode == MODE_GROW ? "growable" : "fixed");
		bloom_close(filter);
		return finish(EXIT_TROUBLE);
	}
	s = bloom_rotate(filter);
	bloom_close(filter);
	if (s != BLOOM_OK) {
		msg_warn("%s: cannot rotate: %s", argv[0], bloom_strerror(s));
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

int
cmd_merge(int argc, char **argv)
{
	struct merge_mismatch mm;
	struct bloom_header seen;
	struct bloom **src = NULL, *target;
	int i, n, s, rc = EXIT_TROUBLE;

	no_options(CMD_MERGE, argc, argv);
	argc -= optind;
	argv += optind;
	if (argc < 2)
		usage_error(CMD_MERGE, argc == 0 ? "merge: no filter named" :
		    "merge: no source named");
	n = argc - 1;
	s = bloom_open(&target, argv[0], 1, tell_open_waits, &seen);
	if (s != BLOOM_OK) {
		filter_error(argv[0], s, &seen);
		return finish(EXIT_TROUBLE);
	}
	bloom_on_lock_wait(target, tell_lock_waits);
	guard_mapping(argv[0], 1);
	if ((s = merge_begin(target)) != BLOOM_OK) {
		msg_warn("%s: %s", argv[0], bloom_strerror(s));
		bloom_close(target);
		return finish(EXIT_TROUBLE);
	}
	if ((src = calloc((size_t)n, sizeof *src)) == NULL) {
		msg_warn("out of memory");
		goto out;
	}
	/* Every source is opened and checked before anything is written. */
	for (i = 0; i < n; i++) {
		const char *name = argv[i + 1];

		s = bloom_open(&src[i], name, 0, tell_open_waits, &seen);
		if (s != BLOOM_OK) {
			filter_error(name, s, &seen);
			goto out;
		}
		if (bloom_is_file(target, bloom_fd(src[i]))) {
			msg_warn("%s: cannot merge a filter into itself", name);
			goto out;
		}
		if ((s = bloom_refresh(src[i])) != BLOOM_OK ||
		    (s = bloom_refresh(target)) != BLOOM_OK) {
			msg_warn("%s: %s", name, bloom_strerror(s));
			goto out;
		}
		if (merge_check(target, src[i], &mm) == -1) {
			if (mm.reason != NULL)
				msg_warn("%s: cannot merge into %s: %s", name,
				    argv[0], mm.reason);
			else
				msg_warn("%s: %s differs from %s's (%s here, %s "
				    "there)", name, mm.field, argv[0],
				    mm.source, mm.target);
			goto out;
		}
	}
	for (i = 0; i < n; i++) {
		if ((s = merge_into(target, src[i])) != BLOOM_OK) {
			msg_warn("%s: cannot merge %s: %s", argv[0], argv[i + 1],
			    bloom_strerror(s));
			goto out;
		}
		notice(target, bloom_events(target) & ~(unsigned)BLOOM_EV_GREW);
	}
	rc = 0;
out:
	/* Those not opened are NULL. */
	for (i = 0; i < n && src != NULL; i++)
		bloom_close(src[i]);
	free(src);
	merge_end(target);
	bloom_close(target);
	return finish(rc);
}

