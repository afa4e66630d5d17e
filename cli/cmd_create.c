/* SPDX-License-Identifier: ISC
 * bloom create: options, sizing a fixed filter, --like and slices (from
 * the options, a template, or a job engine's task index with --slice
 * auto), --dry-run and the free-space check, and the messages of each.
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
#include "filter/fold.h"
#include "params.h"
#include "cli/parse.h"

/* ==== create ==== */

/* Sizes a fixed filter's array, rounded for cut slices if cut is not 0
 * (store/plan.h), or fails with a message; returns 0 or -1. */
static int
solve_fixed(const char *path, struct params *p, enum solve_for what,
    uint32_t cut)
{
	switch (plan_array(p, what, cut)) {
	case PLAN_ARRAY_OK:
		return 0;
	case PLAN_ARRAY_TOO_BIG:
		msg_warn("%s: a filter for %" PRIu64 " items at fpr %g "
		    "would exceed %" PRIu64 " TiB", path, p->capacity,
		    p->target_fpr, NBLOCKS_MAX * BLOCK_BYTES >> 40);
		break;
	case PLAN_ARRAY_OVERFULL:
		msg_warn("%s: %" PRIu64 " items would fill %" PRIu64
		    " bytes completely", path, p->capacity,
		    p->nblocks * BLOCK_BYTES);
		break;
	case PLAN_ARRAY_NO_ROOM:
		msg_warn("%s: %" PRIu64 " bytes cannot hold one item at "
		    "fpr %g", path, p->nblocks * BLOCK_BYTES,
		    p->target_fpr);
		break;
	case PLAN_ARRAY_RATE_HIGH:
		msg_warn("%s: %" PRIu64 " items in %" PRIu64 " bytes would give "
		    "a false-positive rate of %.3g; give a larger -s or a "
		    "smaller -n", path, p->capacity, p->nblocks * BLOCK_BYTES,
		    p->target_fpr);
		break;
	case PLAN_ARRAY_SLICES_TOO_BIG:
		msg_warn("%s: %" PRIu32 " slices would pass %" PRIu64
		    " TiB", path, cut, NBLOCKS_MAX * BLOCK_BYTES >> 40);
		break;
	}
	return -1;
}

/* Says why path could not be created, status s (not BLOOM_OK). */
static void
tell_create_error(const char *path, int s)
{
	if (is_directory(path))
		msg_warn("%s: is a directory, not a filter", path);
	else if (s == BLOOM_ERRNO && errno == EEXIST)
		msg_warn("%s: file exists (use -f to replace it)", path);
	else if (s == BLOOM_ENOTREG || s == BLOOM_ESHORT || s == BLOOM_EMAGIC ||
	    s == BLOOM_EDANGLING)
		msg_warn("%s: will not replace: %s; create -f replaces only bloom "
		    "filters", path, bloom_strerror(s));
	else
		msg_warn("%s: cannot create: %s", path, bloom_strerror(s));
}

/* Creates path for spec, or fails with a message; returns 0 or -1. */
static int
create_filter(const char *path, struct bloom_spec *spec, int force)
{
	int s;

	spec->created_ms = now_ms();
	s = bloom_create(path, spec, force, tell_create_waits);
	if (s == BLOOM_OK)
		return 0;
	if (s == BLOOM_ETOOBIG)
		msg_warn("%s: a filter for %" PRIu64 " items at fpr %g would "
		    "exceed %" PRIu64 " TiB", path, spec->first.capacity,
		    spec->first.target_fpr, NBLOCKS_MAX * BLOCK_BYTES >> 40);
	else
		tell_create_error(path, s);
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

/* The variables that hold a task's index, in the order looked at: Slurm
 * job arrays, Kubernetes Indexed Jobs, parallel-ssh, and by hand. */
static const char *const task_vars[] = {
	"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "PSSH_NODENUM",
	"BLOOM_SLICE"
};

/*
 * Sets *slice, for --slice auto, from the task index the job engine gives
 * its tasks: the first of task_vars that is set, less SLURM_ARRAY_TASK_MIN
 * for a Slurm array that does not start at 0.  Returns 0, or -1 with a
 * message if none is set or it is not a slice of slices.
 */
static int
task_slice(const char *path, uint32_t slices, uint32_t *slice)
{
	const char *name = NULL, *value = NULL, *min;
	uint64_t index, base = 0;
	size_t i;

	for (i = 0; i < sizeof task_vars / sizeof task_vars[0]; i++)
		if ((value = getenv(task_vars[i])) != NULL && *value != '\0') {
			name = task_vars[i];
			break;
		}
	if (name == NULL) {
		msg_warn("%s: --slice auto: no task index: none of "
		    "SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX, PSSH_NODENUM "
		    "or BLOOM_SLICE is set", path);
		return -1;
	}
	if (parse_u64(value, 0, &index) == -1) {
		msg_warn("%s: --slice auto: %s is '%s', not a task index", path,
		    name, value);
		return -1;
	}
	min = getenv("SLURM_ARRAY_TASK_MIN");
	if (i == 0 && min != NULL && *min != '\0' &&
	    (parse_u64(min, 0, &base) == -1 || base > index)) {
		msg_warn("%s: --slice auto: SLURM_ARRAY_TASK_MIN is '%s', not "
		    "a task index up to SLURM_ARRAY_TASK_ID's %" PRIu64, path,
		    min, index);
		return -1;
	}
	if (index - base >= slices) {
		if (base != 0)
			msg_warn("%s: --slice auto: task %" PRIu64 " (%s %"
			    PRIu64 " less SLURM_ARRAY_TASK_MIN %" PRIu64 ") is "
			    "not one of the %" PRIu32 " slices (0 to %" PRIu32
			    ")", path, index - base, name, index, base, slices,
			    slices - 1);
		else
			msg_warn("%s: --slice auto: task %" PRIu64 " (%s) is "
			    "not one of the %" PRIu32 " slices (0 to %" PRIu32
			    ")", path, index, name, slices, slices - 1);
		return -1;
	}
	*slice = (uint32_t)(index - base);
	return 0;
}

/*
 * Writes into msg, if the filter have was not made as want plans, the
 * first parameter that differs, as the option that sets it, with both
 * values.  The seed counts only if given (seeded), and a window's layout
 * only if --layout named it (layout_given): a window made before the
 * default layout changed is the one asked for (store/plan.c).  Returns 1
 * if one differs, else 0.
 */
static int
differs(char *msg, size_t size, const struct bloom_header *have,
    const struct bloom_header *want, int seeded, int layout_given)
{
	static const char *const mode[] = { "fixed", "growable", "window" };
	const struct segment_info *h = &have->seg[0], *w = &want->seg[0];

#define NUMBER(cond, name, a, b) if (cond) return snprintf(msg, size, \
	"%s %" PRIu64 ", not %" PRIu64, name, (uint64_t)(a), (uint64_t)(b)) > 0
#define RATE(field, name) if (have->field != want->field) return \
	snprintf(msg, size, "%s %g, not %g", name, have->field, \
	want->field) > 0
	if (have->mode != want->mode && have->mode <= MODE_WINDOW &&
	    want->mode <= MODE_WINDOW)
		return snprintf(msg, size, "a %s filter, not a %s one",
		    mode[have->mode], mode[want->mode]) > 0;
	if (have->layout != want->layout && layout_given)
		return snprintf(msg, size, "--layout %s, not %s",
		    format_layout_option(have->layout),
		    format_layout_option(want->layout)) > 0;
	NUMBER(have->mode == MODE_WINDOW && have->slots != want->slots,
	    "--generations", have->slots, want->slots);
	NUMBER(have->window_ms != want->window_ms, "--window (ms)",
	    have->window_ms, want->window_ms);
	NUMBER(have->capacity != want->capacity, "-n", have->capacity,
	    want->capacity);
	RATE(target_fpr, "-p");
	RATE(growth, "--growth");
	NUMBER(have->mode == MODE_FIXED && h->nblocks != w->nblocks,
	    "-s (bytes)", h->nblocks * BLOCK_BYTES, w->nblocks * BLOCK_BYTES);
	NUMBER(have->mode == MODE_FIXED && h->hashes != w->hashes, "-k",
	    h->hashes, w->hashes);
	if (have->slice != want->slice || have->slices != want->slices)
		return snprintf(msg, size, "--slice %" PRIu32 "/%" PRIu32
		    ", not %" PRIu32 "/%" PRIu32, have->slice, have->slices,
		    want->slice, want->slices) > 0;
	NUMBER(have->whole_nblocks != want->whole_nblocks,
	    "--slices (blocks of the whole)", have->whole_nblocks,
	    want->whole_nblocks);
	NUMBER(have->max_bytes != want->max_bytes, "--max-size",
	    have->max_bytes, want->max_bytes);
	if ((have->flags ^ want->flags) & WINDOW_NO_RENEW)
		return snprintf(msg, size, "%s, not %s", have->flags &
		    WINDOW_NO_RENEW ? "--no-renew" : "renewal",
		    want->flags & WINDOW_NO_RENEW ? "--no-renew" :
		    "renewal") > 0;
	NUMBER(seeded && have->seed != want->seed, "--seed", have->seed,
	    want->seed);
#undef NUMBER
#undef RATE
	return 0;
}

/*
 * Without -f, a path that exists: a filter made as want plans is left as
 * it is and create succeeds, as mkdir -p does with a directory, so that a
 * daily job may create before each run; one made otherwise is an error
 * naming what differs.  Returns 0 if path is not there or not a filter
 * (create then refuses it), 1 if it is the filter asked for, or -1 having
 * said why not.
 */
static int
exists_as_planned(const char *path, const struct bloom_header *want,
    int seeded, int layout_given)
{
	struct bloom *b;
	struct bloom_header h;
	struct stat st;
	char what[160];
	int other;

	/* Not there, or not a filter: create says why not, if it cannot. */
	if (stat(path, &st) == -1 || !S_ISREG(st.st_mode) ||
	    bloom_open(&b, path, 0, tell_open_waits, &h) != BLOOM_OK)
		return 0;
	other = differs(what, sizeof what, bloom_header(b), want, seeded,
	    layout_given);
	bloom_close(b);
	if (!other)
		return 1;
	msg_warn("%s: exists and differs: %s (use -f to replace it, losing "
	    "its lines)", path, what);
	return -1;
}

/* exists_as_planned for what spec (slice of slices, if slices is not 0)
 * plans; 0 if it plans nothing (create then says why). */
static int
exists_as_asked(const char *path, const struct bloom_spec *spec,
    uint32_t slice, uint32_t slices, int seeded)
{
	static struct bloom_header h;

	if (plan_filter(spec, &h) != BLOOM_OK || (slices != 0 &&
	    plan_slice(&h, slice, slices) != BLOOM_OK))
		return 0;
	return exists_as_planned(path, &h, seeded, spec->layout != 0);
}

/* Creates path like the filter at template, or slice slice of slices of
 * its whole filter if slices is not 0; with slice_auto, the slice is the
 * task's, of slices or else of the template's count.  Returns an exit
 * status. */
static int
create_like(const char *path, const char *template, uint32_t slice,
    uint32_t slices, int slice_auto, int force)
{
	struct bloom *tmpl;
	struct bloom_header h;
	int s;

	s = bloom_open(&tmpl, template, 0, tell_open_waits, &h);
	if (s != BLOOM_OK) {
		filter_error(template, s, &h);
		return EXIT_TROUBLE;
	}
	if (slice_auto && slices == 0 &&
	    (slices = bloom_header(tmpl)->slices) == 0) {
		msg_warn("%s: --slice auto: %s is not a slice: say how many "
		    "slices with --slices", path, template);
		bloom_close(tmpl);
		return EXIT_TROUBLE;
	}
	if (slice_auto && task_slice(path, slices, &slice) == -1) {
		bloom_close(tmpl);
		return EXIT_TROUBLE;
	}
	s = bloom_refresh(tmpl);
	if (s == BLOOM_OK)
		s = bloom_plan_like(tmpl, slice, slices, &h);
	bloom_close(tmpl);
	if (s != BLOOM_OK) {
		msg_warn("%s: cannot make a filter like it: %s", template,
		    bloom_strerror(s));
		return EXIT_TROUBLE;
	}
	if (!force && (s = exists_as_planned(path, &h, 1, 1)) != 0)
		return s == 1 ? 0 : EXIT_TROUBLE;
	s = bloom_create_header(path, &h, force, tell_create_waits);
	if (s != BLOOM_OK) {
		tell_create_error(path, s);
		return EXIT_TROUBLE;
	}
	return 0;
}

/* Returns 1, having said why, if the age-partitioned window h that spec
 * plans takes too much more room than the blocked layout would
 * (plan_apbf_too_big): near 64 generations a group's 64 slots leave room
 * for few hashes, and the array grows to keep the rate (6470 bits a line
 * at 1 % for 64 generations, against 23). */
static int
apbf_too_big(const char *path, const struct bloom_spec *spec,
    const struct bloom_header *h)
{
	uint64_t blocked;

	if (!plan_apbf_too_big(spec, h, &blocked))
		return 0;
	msg_warn("%s: an age-partitioned window of %u generations at fpr "
	    "%g would take %.1f times the room of the blocked layout (%"
	    PRIu64 " bytes against %" PRIu64 "): few hashes fit in its groups;"
	    " use --layout blocked, or fewer generations", path,
	    spec->generations, spec->first.target_fpr, (double)h->file_size /
	    (double)blocked, h->file_size, blocked);
	return 1;
}

/*
 * Settles the layout of spec, a window given none (plan_window_layout);
 * prints what create would make of spec, and for a window why it has its
 * layout, if dry_run; else refuses a filter larger than the free space
 * where it would go, before anything is allocated.  Returns 1 if done (a
 * dry run), 0 to go on, or -1.
 */
static int
check_plan(const char *path, struct bloom_spec *spec, int dry_run)
{
	static struct bloom_header h;
	struct plan_layout chosen;
	char need[32], have[32];
	uint64_t free_bytes;
	FILE *report;
	int s;

	if (spec->mode == MODE_WINDOW &&
	    plan_window_layout(spec, &chosen) == BLOOM_OK)
		spec->layout = chosen.layout;
	if ((s = plan_filter(spec, &h)) != BLOOM_OK) {
		if (!dry_run)
			return 0;	/* create_filter says why */
		msg_warn("%s: %s", path, bloom_strerror(s));
		return -1;
	}
	if (spec->layout == LAYOUT_APBF && apbf_too_big(path, spec, &h))
		return -1;
	if (spec->max_bytes != 0 && h.file_size > spec->max_bytes) {
		msg_warn("%s: --max-size %" PRIu64 " (%s) is less than the "
		    "window takes at the start, %" PRIu64 " bytes (%s): no "
		    "generation could ever widen", path, spec->max_bytes,
		    report_human(have, sizeof have, (double)spec->max_bytes),
		    h.file_size, report_human(need, sizeof need,
		    (double)h.file_size));
		return -1;
	}
	if (dry_run) {
		report = report_open();
		report_plan(report, path, &h, spec->mode == MODE_WINDOW ?
		    &chosen : NULL);
		return report_close(report) == -1 ? -1 : 1;
	}
	if (bloom_free_space(path, &free_bytes) == 0 &&
	    h.file_size > free_bytes) {
		msg_warn("%s: needs %" PRIu64 " bytes (%s) but its file system "
		    "has %" PRIu64 " bytes (%s) free", path, h.file_size,
		    report_human(need, sizeof need, (double)h.file_size),
		    free_bytes, report_human(have, sizeof have,
		    (double)free_bytes));
		return -1;
	}
	return 0;
}

/*
 * Creates path, slice slice of slices of the fixed filter spec sizes
 * (whose blocks divide into slices): the bytes create --like of that
 * filter with --slice makes, but for the time it was made.  With dry_run,
 * prints the plan instead.  Returns an exit status.
 */
static int
create_slice(const char *path, struct bloom_spec *spec, uint32_t slice,
    uint32_t slices, int force, int dry_run)
{
	struct bloom_header h;
	uint64_t free_bytes, most;
	char need[32], have[32];
	FILE *report;
	int s;

	spec->created_ms = dry_run ? 0 : now_ms();
	if ((s = plan_filter(spec, &h)) == BLOOM_OK)
		s = plan_slice(&h, slice, slices);
	if (s == BLOOM_ESLICE_DIVIDE && (most = plan_most_slices(
	    spec->first.nblocks)) > 1) {
		msg_warn("%s: the whole filter's %" PRIu64 " blocks do not "
		    "divide into %" PRIu32 " slices; of the counts --slices "
		    "rounds for, the most they divide into is %" PRIu64
		    " (--slice %" PRIu32 "/%" PRIu64 ")", path,
		    spec->first.nblocks, slices, most, slice < most ? slice : 0,
		    most);
		return EXIT_TROUBLE;
	}
	if (s != BLOOM_OK) {
		msg_warn("%s: %s", path, bloom_strerror(s));
		return EXIT_TROUBLE;
	}
	if (dry_run) {
		report = report_open();
		report_plan(report, path, &h, NULL);
		return report_close(report) == -1 ? EXIT_TROUBLE : 0;
	}
	if (bloom_free_space(path, &free_bytes) == 0 &&
	    h.file_size > free_bytes) {
		msg_warn("%s: needs %" PRIu64 " bytes (%s) but its file system "
		    "has %" PRIu64 " bytes (%s) free", path, h.file_size,
		    report_human(need, sizeof need, (double)h.file_size),
		    free_bytes, report_human(have, sizeof have,
		    (double)free_bytes));
		return EXIT_TROUBLE;
	}
	s = bloom_create_header(path, &h, force, tell_create_waits);
	if (s != BLOOM_OK) {
		tell_create_error(path, s);
		return EXIT_TROUBLE;
	}
	return 0;
}

int
cmd_create(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "grow", no_argument, NULL, OPT_GROW },
		{ "growth", required_argument, NULL, OPT_GROWTH },
		{ "generations", required_argument, NULL, OPT_GENERATIONS },
		{ "window", required_argument, NULL, OPT_WINDOW },
		{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
		{ "layout", required_argument, NULL, OPT_LAYOUT },
		{ "no-renew", no_argument, NULL, OPT_NO_RENEW },
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
	int have_growth = 0, have_layout = 0, sizing = 0, dry_run = 0, s;
	enum solve_for what;
	const char *like = NULL;
	uint32_t slice = 0, slices = 0, cut = 0;
	int slice_auto = 0;
	const char *why;

	memset(&spec, 0, sizeof spec);
	spec.mode = MODE_FIXED;
	spec.growth = GROW_FACTOR;
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
			if (parse_count(optarg, &p->capacity) == -1 ||
			    p->capacity == 0)
				usage_error(CMD_CREATE, "create: -n takes a "
				    "positive whole number such as 1000000, 1M "
				    "or 1e6 (K, M, G: powers of 1000), not '%s'",
				    optarg);
			have_n = 1;
			break;
		case 'p':
			if (parse_fpr(optarg, &p->target_fpr, &why) == -1)
				usage_error(CMD_CREATE, "create: -p takes a "
				    "rate between 0 and 1 such as 0.01, 1e-3 or "
				    "1%%, not '%s'%s", optarg,
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
			if (parse_decimal(optarg, &spec.growth) == -1 ||
			    errno != 0 || !(spec.growth >= GROWTH_MIN &&
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
		case OPT_LAYOUT:
			if (format_layout_parse(optarg, &spec.layout) == -1)
				usage_error(CMD_CREATE, "create: --layout takes "
				    "blocked or apbf, not '%s'", optarg);
			have_layout = 1;
			break;
		case OPT_NO_RENEW:
			spec.flags |= WINDOW_NO_RENEW;
			break;
		case OPT_MAX_SIZE:
			if (parse_size(optarg, &spec.max_bytes) == -1 ||
			    spec.max_bytes == 0 ||
			    spec.max_bytes > FORMAT_FILE_MAX)
				usage_error(CMD_CREATE, "create: --max-size "
				    "takes a size from 1 byte to %" PRIu64 "T, "
				    "such as 64M, not '%s'",
				    FORMAT_FILE_MAX >> 40, optarg);
			break;
		case OPT_LIKE:
			like = optarg;
			break;
		case OPT_SLICE:
			slice_auto = strcmp(optarg, "auto") == 0;
			if (!slice_auto &&
			    parse_slice(optarg, &slice, &slices) == -1)
				usage_error(CMD_CREATE, "create: --slice takes "
				    "i/n with 0 <= i < n, such as 0/4, or auto, "
				    "not '%s'", optarg);
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
	    spec.max_bytes != 0 || have_layout || spec.flags != 0;
	if (like != NULL && sizing)
		usage_error(CMD_CREATE, "create: --like takes everything from "
		    "the template: no -n, -p, -s, -k, --seed, --grow, "
		    "--generations or their options");
	if (like != NULL && slices != 0 && cut != 0 && slices != cut)
		usage_error(CMD_CREATE, "create: --slice %" PRIu32 "/%" PRIu32
		    " is not one of --slices %" PRIu32, slice, slices, cut);
	if (slice_auto)
		slices = cut;
	if (like != NULL && cut != 0 && slices == 0)
		usage_error(CMD_CREATE, "create: --slices with --like needs "
		    "--slice");
	if (like != NULL)
		return finish(create_like(argv[0], like, slice, slices,
		    slice_auto, force));
	if (slice_auto && slices == 0)
		usage_error(CMD_CREATE, "create: --slice auto needs --slices n "
		    "(or --like a slice)");
	if (slices != 0) {
		if (spec.mode != MODE_FIXED)
			usage_error(CMD_CREATE, "create: --slice is for fixed "
			    "filters");
		if (!have_seed)
			usage_error(CMD_CREATE, "create: --slice without "
			    "--like needs --seed, the same for every slice");
		if (slice_auto && task_slice(argv[0], slices, &slice) == -1)
			return finish(EXIT_TROUBLE);
		/* --slices rounds the blocks; --slice cuts them. */
		if (cut == 0)
			cut = slices;
	}
	if (cut != 0 && spec.mode != MODE_FIXED)
		usage_error(CMD_CREATE, "create: --slices is for fixed filters");
	if (have_growth && spec.mode != MODE_GROW)
		usage_error(CMD_CREATE, "create: --growth needs --grow");
	if (spec.window_ms != 0 && spec.mode != MODE_WINDOW)
		usage_error(CMD_CREATE, "create: --window needs --generations");
	if (spec.max_bytes != 0 && spec.mode != MODE_WINDOW)
		usage_error(CMD_CREATE, "create: --max-size needs "
		    "--generations");
	if (spec.flags != 0 && spec.mode != MODE_WINDOW)
		usage_error(CMD_CREATE, "create: --no-renew needs "
		    "--generations");
	if (spec.layout == LAYOUT_APBF && spec.mode != MODE_WINDOW)
		usage_error(CMD_CREATE, "create: --layout apbf needs "
		    "--generations");
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
		if (solve_fixed(argv[0], p, what, cut) == -1)
			return finish(EXIT_TROUBLE);
	}
	if (!force && !dry_run && (s = exists_as_asked(argv[0], &spec, slice,
	    slices, have_seed)) != 0)
		return finish(s == 1 ? 0 : EXIT_TROUBLE);
	if (slices != 0)
		return finish(create_slice(argv[0], &spec, slice, slices,
		    force, dry_run));
	if ((s = check_plan(argv[0], &spec, dry_run)) != 0)
		return finish(s == 1 ? 0 : EXIT_TROUBLE);
	if (create_filter(argv[0], &spec, force) == -1)
		return finish(EXIT_TROUBLE);
	return finish(0);
}

/* ==== fold: a smaller filter, written as create writes ==== */

/* Says why the filter at path cannot be folded as fp asked. */
static void
tell_fold_refusal(const char *path, const struct fold_plan *fp, uint64_t by)
{
	const struct segment_info *s = &fp->h.seg[fp->segment];
	unsigned unit;

	switch (fp->refusal) {
	case FOLD_WINDOW_GROWN:
		msg_warn("%s: cannot fold a window whose generations grew past "
		    "their sizing until those generations expire (bloom "
		    "rotate)", path);
		break;
	case FOLD_SLICE_BY:
		msg_warn("%s: cannot fold a slice without --by: fold every "
		    "slice of the filter by the same --by n", path);
		break;
	default:
		/* A layout whose keys span groups of blocks folds groups. */
		if ((unit = plan_unit_blocks(&fp->h, fp->segment)) > 1) {
			msg_warn("%s: cannot fold by %" PRIu64 ": the window "
			    "has %" PRIu64 " groups of %u blocks, not a "
			    "multiple of %" PRIu64, path, by, s->nblocks /
			    unit, unit, by);
			break;
		}
		msg_warn("%s: cannot fold by %" PRIu64 ": segment %u has %"
		    PRIu64 " blocks, not a multiple of %" PRIu64, path, by,
		    fp->segment, s->nblocks, by);
		break;
	}
}

/* Warns of each folded segment that holds more keys than its blocks hold
 * at its target rate (--by chose too much). */
static void
tell_fold_overfull(const char *path, const struct fold_plan *fp)
{
	const struct segment_info *s;
	unsigned i;

	for (i = 0; i < fp->h.nsegments; i++) {
		s = &fp->h.seg[i];
		if (s->inserted > s->capacity)
			msg_warn("%s: warning: segment %u holds %" PRIu64
			    " items, past the %" PRIu64 " its %" PRIu64
			    " blocks hold at fpr %g", path, i, s->inserted,
			    s->capacity, s->nblocks, s->target_fpr);
	}
}

/* Returns 1 if path names the file of filter b. */
static int
same_file(const struct bloom *b, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), same;

	if (fd == -1)
		return 0;
	same = bloom_is_file(b, fd);
	close(fd);
	return same;
}

/* Whether the fold fp planned leaves every segment as it is. */
static int
folds_nothing(const struct fold_plan *fp)
{
	uint64_t i;

	for (i = 0; i < fp->h.nsegments && i < SEGMENTS_MAX; i++)
		if (fp->by[i] > 1)
			return 0;
	return 1;
}

int
cmd_fold(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "by", required_argument, NULL, OPT_BY },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char shortopts[] = ":fh";
	struct bloom_header seen;
	struct fold_plan *fp;
	struct bloom *filter;
	uint64_t by = 0;
	int ch, force = 0, s, rc = EXIT_TROUBLE;

	while ((ch = getopt_long(argc, argv, shortopts, longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'f':
			force = 1;
			break;
		case OPT_BY:
			if (parse_u64(optarg, 0, &by) == -1 || by == 0 ||
			    by > NBLOCKS_MAX)
				usage_error(CMD_FOLD, "fold: --by takes a "
				    "positive whole number, not '%s'", optarg);
			break;
		case 'h':
			print_help(CMD_FOLD);
			return finish(0);
		default:
			bad_option(CMD_FOLD, ch, argv, shortopts, longopts);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 2)
		usage_error(CMD_FOLD, argc == 0 ? "fold: no filter named" :
		    argc == 1 ? "fold: no output named" :
		    "fold: one filter and one output");
	s = bloom_open(&filter, argv[0], 0, tell_open_waits, &seen);
	if (s != BLOOM_OK) {
		filter_error(argv[0], s, &seen);
		return finish(EXIT_TROUBLE);
	}
	guard_mapping(argv[0], 0);
	if ((fp = malloc(sizeof *fp)) == NULL) {
		msg_warn("out of memory");
		goto out;
	}
	if (same_file(filter, argv[1])) {
		msg_warn("%s: cannot fold a filter into itself", argv[1]);
		goto out;
	}
	if (fold_plan(filter, by, fp) == -1) {
		tell_fold_refusal(argv[0], fp, by);
		goto out;
	}
	/* A same-size copy is no fold: say so, as cmp or rsync would. */
	if (by == 0 && folds_nothing(fp)) {
		msg_warn("%s: no segment folds and keeps its rate with the keys "
		    "it holds: nothing written (--by n folds past the rate)",
		    argv[0]);
		goto out;
	}
	if ((s = fold_write(filter, fp, argv[1], force,
	    tell_create_waits)) != BLOOM_OK) {
		tell_create_error(argv[1], s);
		goto out;
	}
	tell_fold_overfull(argv[1], fp);
	rc = 0;
out:
	free(fp);
	bloom_close(filter);
	return finish(rc);
}
