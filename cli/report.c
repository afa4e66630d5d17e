/* SPDX-License-Identifier: ISC
 * What the commands report on stdout, other than selected lines: stats
 * of a filter in text or JSON, the plan of create --dry-run, and the
 * report buffer they are gathered in, written as selected lines are.
 * Reads a filter only through what filter/stats.c computed and the
 * header bloom_header gives.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/output.h"
#include "lib/quote.h"
#include "store/plan.h"
#include "filter/stats.h"
#include "cli.h"
#include "cli/msg.h"
#include "cli/report.h"

/* The report being gathered for report_close, if any. */
static char *report_text;
static size_t report_len;

FILE *
report_open(void)
{
	FILE *fp = open_memstream(&report_text, &report_len);

	return fp != NULL ? fp : stdout;
}

int
report_close(FILE *fp)
{
	struct output out;
	int failed;

	if (fp == stdout)
		return 0;
	if (fclose(fp) == EOF ||
	    output_init(&out, STDOUT_FILENO, '\n') == -1) {
		msg_warn("%s", strerror(errno));
		free(report_text);
		report_text = NULL;
		return -1;
	}
	failed = output_bytes(&out, report_text, report_len) == -1 ||
	    output_flush(&out) == -1;
	if (failed)
		output_error(&out);
	output_free(&out);
	free(report_text);
	report_text = NULL;
	return failed ? -1 : 0;
}

/* Writes d with the fewest digits that read back as d. */
static void
print_rate(FILE *fp, double d)
{
	char buf[40];
	int digits;

	for (digits = 6; digits < 17; digits++) {
		snprintf(buf, sizeof buf, "%.*g", digits, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	fprintf(fp, "%.*g", digits, d);
}

/* Writes a length in ms as seconds, in full: 1209600, not 1.2096e+06. */
static void
print_seconds(FILE *fp, uint64_t ms)
{
	fprintf(fp, "%" PRIu64, ms / 1000);
	if (ms % 1000 != 0)
		fprintf(fp, ".%03" PRIu64, ms % 1000);
}

/* Writes ms since 1970 as an ISO 8601 UTC time, or "-" for -1. */
static void
print_time(FILE *fp, int64_t ms, const char *none)
{
	char buf[32];
	struct tm tm;
	time_t t = (time_t)(ms / 1000);

	if (ms < 0 || gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
		fputs(none, fp);
		return;
	}
	fprintf(fp, "%s%s%s", *none == 'n' ? "\"" : "", buf,
	    *none == 'n' ? "\"" : "");
}

/* Writes lead and generation gen, or none for -1. */
static void
print_generation(FILE *fp, const char *lead, int64_t gen, const char *none)
{
	fputs(lead, fp);
	if (gen < 0)
		fputs(none, fp);
	else
		fprintf(fp, "%" PRId64, gen);
}

char *
report_human(char *buf, size_t size, double bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB",
	    "PiB", "EiB" };
	unsigned u = 0;

	while (bytes >= 1024.0 && u < sizeof unit / sizeof unit[0] - 1) {
		bytes /= 1024.0;
		u++;
	}
	snprintf(buf, size, u == 0 ? "%.0f %s" : "%.1f %s", bytes, unit[u]);
	return buf;
}

/* Writes n bytes in 1024-based units. */
static void
print_human(FILE *fp, uint64_t n)
{
	char buf[32];

	fputs(report_human(buf, sizeof buf, (double)n), fp);
}

/* Returns inserted as a percentage of capacity. */
static double
percent_of_capacity(const struct filter_stats *st)
{
	return st->capacity == 0 ? 0.0 : 100.0 * (double)st->inserted /
	    (double)st->capacity;
}

void
report_stats_text(FILE *fp, const char *path, const struct bloom_header *h,
    const struct filter_stats *st)
{
	char detail[80];
	unsigned i;

	fputs("file: ", fp);
	quote_fputs(fp, path);
	fputc('\n', fp);
	fprintf(fp, "format: %" PRIu32 "\n", h->version);
	format_layout_detail(h, detail, sizeof detail);
	fprintf(fp, "layout: %s (%s)\n", format_layout_name(h->layout),
	    detail);
	fprintf(fp, "hash: xxh3-64\n");
	fprintf(fp, "mode: %s\n", stats_mode_name(h->mode));
	if (h->slices != 0)
		fprintf(fp, "slice: %" PRIu32 "/%" PRIu32 " (blocks %" PRIu64
		    " to %" PRIu64 " of %" PRIu64 ")\n", h->slice, h->slices,
		    st->slice_lo, st->slice_lo + h->seg[0].nblocks - 1,
		    h->whole_nblocks);
	if (h->mode == MODE_GROW) {
		fputs("growth: ", fp);
		print_rate(fp, h->growth);
		fputs("\ntightening: ", fp);
		print_rate(fp, h->ratio);
		fputc('\n', fp);
	}
	if (h->mode == MODE_WINDOW) {
		fprintf(fp, "generations: %" PRIu32 "\n", h->slots);
		if (h->window_ms != 0) {
			fputs("window_seconds: ", fp);
			print_seconds(fp, h->window_ms);
			fputc('\n', fp);
		} else
			fprintf(fp, "window_seconds: none (rotated by "
			    "bloom rotate)\n");
	fprintf(fp, "generation: %" PRIu64 "\n", st->generation);
		fprintf(fp, "renew: %s\n", h->flags & WINDOW_NO_RENEW ? "no" :
		    "yes");
	}
	fprintf(fp, "bytes: %" PRIu64 " (", st->bytes);
	print_human(fp, st->bytes);
	fputs(")\n", fp);
	fprintf(fp, "bits: %" PRIu64 "\n", st->bits);
	fprintf(fp, "hashes: %u\n", st->hashes);
	fprintf(fp, "seed: %" PRIu64 "\n", h->seed);
	fprintf(fp, "capacity: %" PRIu64 "\n", st->capacity);
	fputs("target_fpr: ", fp);
	print_rate(fp, h->target_fpr);
	fputc('\n', fp);
	fprintf(fp, "inserted: %" PRIu64 "\n", st->inserted);
	fprintf(fp, "percent_of_capacity: %.1f\n", percent_of_capacity(st));
	/* A growable filter's capacity is no limit: it grows past it. */
	if (h->mode == MODE_GROW)
		fputs("note: it grows: capacity and percent_of_capacity are of "
		    "its segments so far\n", fp);
	fprintf(fp, "bits_set: %" PRIu64 "\n", st->bits_set);
	fprintf(fp, "fill: %.6f\n", st->fill);
	fprintf(fp, "estimated_items: %.0f\n", st->estimated_items);
	fprintf(fp, "estimated_fpr: %.6g\n", st->estimated_fpr);
	fprintf(fp, "segments: %u\n", st->nsegments);
	if (h->mode != MODE_FIXED) {
		fprintf(fp, "%4s %4s %14s %6s %12s %10s %12s %14s %12s  %s\n",
		    "#", "live", "bits", "hashes", "capacity", "target_fpr",
		    "inserted", "bits_set", "est_items",
		    h->mode == MODE_WINDOW ? "created               expires"
		    "               generation" : "created");
		for (i = 0; i < st->nsegments; i++) {
			const struct segment_stats *ss = &st->seg[i];

			fprintf(fp, "%4u %4s %14" PRIu64 " %6u %12" PRIu64
			    " %10.3g %12" PRIu64 " %14" PRIu64 " %12.0f  ",
			    i, ss->live ? "yes" : "no", ss->bits, ss->hashes,
			    ss->capacity, ss->target_fpr, ss->inserted,
			    ss->bits_set, ss->estimated_items);
			print_time(fp, ss->created_ms, h->mode == MODE_WINDOW ?
			    "-                   " : "-");
			if (h->mode == MODE_WINDOW) {
				fputs("  ", fp);
				print_time(fp, ss->expires_ms,
				    "-                   ");
				print_generation(fp, "  ", ss->generation, "-");
			}
			fputc('\n', fp);
		}
	}
	if (st->sparse)
		fprintf(fp, "warning: sparse file: its holes read as empty "
		    "bits (a filter bloom creates has none; it was copied "
		    "sparse or damaged)\n");
	if (st->over_capacity)
		fprintf(fp, "warning: over capacity: about %.0f items in a "
		    "filter sized for %" PRIu64 "; false positives are above "
		    "the target rate\n", st->estimated_items, st->capacity);
}

/* Returns the length of the well-formed UTF-8 sequence at s, or 0. */
static size_t
json_utf8_length(const unsigned char *s)
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
json_string(FILE *fp, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	putc('"', fp);
	while (*s != '\0') {
		size_t len = json_utf8_length(s);

		if (len == 0) {
			fputs("\\ufffd", fp);
			len = 1;
		} else if (*s == '"' || *s == '\\')
			fprintf(fp, "\\%c", *s);
		else if (*s < 0x20 || *s == 0x7f)
			fprintf(fp, "\\u%04x", *s);
		else if (*s == 0xc2 && s[1] <= 0x9f)
			fprintf(fp, "\\u%04x", s[1]);	/* C1 control */
		else
			fwrite(s, 1, len, fp);
		s += len;
	}
	putc('"', fp);
}

void
report_stats_json(FILE *fp, const char *path, const struct bloom_header *h,
    const struct filter_stats *st)
{
	unsigned i;

	fputs("{\"file\":", fp);
	json_string(fp, path);
	fprintf(fp, ",\"format\":%" PRIu32 ",\"layout\":\"%s\""
	    ",\"hash\":\"xxh3-64\",\"mode\":\"%s\"", h->version,
	    format_layout_name(h->layout), stats_mode_name(h->mode));
	if (h->slices != 0)
		fprintf(fp, ",\"slice\":%" PRIu32 ",\"slices\":%" PRIu32
		    ",\"whole_bits\":%" PRIu64, h->slice, h->slices,
		    h->whole_nblocks * BLOCK_BITS);
	if (h->mode == MODE_GROW) {
		fputs(",\"growth\":", fp);
		print_rate(fp, h->growth);
		fputs(",\"tightening\":", fp);
		print_rate(fp, h->ratio);
	}
	if (h->mode == MODE_WINDOW) {
		fprintf(fp, ",\"generations\":%" PRIu32, h->slots);
		if (h->window_ms != 0) {
			fputs(",\"window_seconds\":", fp);
			print_seconds(fp, h->window_ms);
		} else
			fputs(",\"window_seconds\":null", fp);
		fprintf(fp, ",\"renew\":%s", h->flags & WINDOW_NO_RENEW ?
		    "false" : "true");
	fprintf(fp, ",\"generation\":%" PRIu64, st->generation);
	}
	fprintf(fp, ",\"bytes\":%" PRIu64 ",\"bits\":%" PRIu64
	    ",\"hashes\":%u,\"seed\":\"%" PRIu64 "\",\"capacity\":%" PRIu64
	    ",\"target_fpr\":", st->bytes, st->bits,
	    st->hashes, h->seed, st->capacity);
	print_rate(fp, h->target_fpr);
	fprintf(fp, ",\"inserted\":%" PRIu64 ",\"percent_of_capacity\":%.1f"
	    ",\"bits_set\":%" PRIu64 ",\"fill\":%.6f"
	    ",\"estimated_items\":%.0f,\"estimated_fpr\":%.6g"
	    ",\"over_capacity\":%s,\"sparse\":%s,\"grows\":%s"
	    ",\"segments\":[",
	    st->inserted, percent_of_capacity(st), st->bits_set,
	    st->fill, st->estimated_items, st->estimated_fpr,
	    st->over_capacity ? "true" : "false",
	    st->sparse ? "true" : "false",
	    h->mode == MODE_GROW ? "true" : "false");
	for (i = 0; i < st->nsegments; i++) {
		const struct segment_stats *ss = &st->seg[i];

		fprintf(fp, "%s{\"live\":%s,\"bits\":%" PRIu64 ",\"hashes\":%u"
		    ",\"capacity\":%" PRIu64 ",\"target_fpr\":",
		    i == 0 ? "" : ",", ss->live ? "true" : "false", ss->bits,
		    ss->hashes, ss->capacity);
		print_rate(fp, ss->target_fpr);
		fprintf(fp, ",\"inserted\":%" PRIu64 ",\"bits_set\":%" PRIu64
		    ",\"estimated_items\":%.0f,\"estimated_fpr\":%.6g"
		    ",\"created\":", ss->inserted, ss->bits_set,
		    ss->estimated_items, ss->estimated_fpr);
		print_time(fp, ss->created_ms, "null");
		if (h->mode == MODE_WINDOW) {
			fputs(",\"expires\":", fp);
			print_time(fp, ss->expires_ms, "null");
			print_generation(fp, ",\"generation\":", ss->generation,
			    "null");
		}
		fputc('}', fp);
	}
	fputs("]}\n", fp);
}

/* Writes one planned segment: its size, hashes, capacity and rate. */
static void
print_planned(FILE *fp, const char *lead, const struct segment_info *s)
{
	fprintf(fp, "%s%" PRIu64 " bytes (", lead, s->nblocks * BLOCK_BYTES);
	print_human(fp, s->nblocks * BLOCK_BYTES);
	fprintf(fp, "), %" PRIu64 " blocks, %u hashes, capacity %" PRIu64
	    ", fpr %.3g\n", s->nblocks, s->hashes, s->capacity, s->target_fpr);
}

/* Writes why a window has its layout: named by --layout, or the
 * default's rule (plan_window_layout) with the bits a line of -n each
 * layout would take. */
static void
print_layout_reason(FILE *fp, const struct bloom_header *h,
    const struct plan_layout *chosen)
{
	double blocked = (double)chosen->blocked_bytes * 8.0 /
	    (double)h->capacity;
	double apbf = (double)chosen->apbf_bytes * 8.0 / (double)h->capacity;

	fputs("layout_reason: ", fp);
	if (chosen->reason == PLAN_LAYOUT_GIVEN) {
		fprintf(fp, "--layout %s\n",
		    format_layout_option(h->layout));
		return;
	}
	fprintf(fp, "the default for %" PRIu32 " generations at fpr ",
	    h->slots);
	print_rate(fp, h->target_fpr);
	switch (chosen->reason) {
	case PLAN_LAYOUT_APBF_FITS:
		fprintf(fp, ": apbf takes %.1f bits a line, %.2f times "
		    "blocked's %.1f (at most %.2f), and tests every generation "
		    "of a line in one read\n", apbf, apbf / blocked, blocked,
		    PLAN_APBF_DEFAULT_ROOM);
		break;
	case PLAN_LAYOUT_APBF_ROOM:
		fprintf(fp, ": blocked takes %.1f bits a line; apbf would take "
		    "%.1f, %.2f times as many (more than %.2f)\n", blocked,
		    apbf, apbf / blocked, PLAN_APBF_DEFAULT_ROOM);
		break;
	default:
		fprintf(fp, ": blocked takes %.1f bits a line; apbf cannot be "
		    "made for it (more than %" PRIu64 " TiB)\n", blocked,
		    FORMAT_FILE_MAX >> 40);
		break;
	}
}

void
report_plan(FILE *fp, const char *path, const struct bloom_header *h,
    const struct plan_layout *chosen)
{
	struct segment_info next;
	uint64_t offset, blocks = 0;
	char detail[80];
	unsigned i;

	/* The generations of the age-partitioned layout share one array. */
	for (i = 0; i < h->nsegments; i++)
		if (!plan_shares_array(h, i))
			blocks += h->seg[i].nblocks;
	fputs("file: ", fp);
	quote_fputs(fp, path);
	fputs(" (not created: --dry-run)\n", fp);
	fprintf(fp, "mode: %s\n", stats_mode_name(h->mode));
	format_layout_detail(h, detail, sizeof detail);
	if (h->mode == MODE_WINDOW)
		fprintf(fp, "layout: %s (%s%s)\n", format_layout_name(h->layout),
		    detail, plan_shares_array(h, 1) ?
		    "; the generations share one array" : "");
	if (chosen != NULL && h->mode == MODE_WINDOW)
		print_layout_reason(fp, h, chosen);
	if (h->slices != 0)
		fprintf(fp, "slice: %" PRIu32 "/%" PRIu32 " (blocks %" PRIu64
		    " to %" PRIu64 " of %" PRIu64 ")\n", h->slice, h->slices,
		    h->slice * blocks, (h->slice + 1) * blocks - 1,
		    h->whole_nblocks);
	fprintf(fp, "bytes: %" PRIu64 " (", h->file_size);
	print_human(fp, h->file_size);
	fputs(")\n", fp);
	fprintf(fp, "blocks: %" PRIu64 "\n", blocks);
	fprintf(fp, "hashes: %u\n", h->seg[0].hashes);
	fprintf(fp, "capacity: %" PRIu64 "%s\n", h->capacity,
	    h->mode == MODE_GROW ? " (first segment)" : h->mode == MODE_WINDOW ?
	    " (per window)" : "");
	fputs("target_fpr: ", fp);
	print_rate(fp, h->target_fpr);
	fputc('\n', fp);
	if (h->mode == MODE_FIXED)
		return;
	if (h->mode == MODE_WINDOW)
		fprintf(fp, "generations: %" PRIu32 "\nrenew: %s\n", h->slots,
		    h->flags & WINDOW_NO_RENEW ? "no" : "yes");
	fprintf(fp, "segments: %" PRIu64 "\n", h->nsegments);
	for (i = 0; i < h->nsegments; i++) {
		fprintf(fp, "  %u: ", i);
		print_planned(fp, "", &h->seg[i]);
	}
	/* A growable filter adds segments as it fills: show the next few. */
	offset = h->file_size;
	for (i = (unsigned)h->nsegments; h->mode == MODE_GROW && i < 4 &&
	    i < h->slots; i++) {
		if (plan_segment(h, i, offset, &next) != BLOOM_OK)
			break;
		fprintf(fp, "  %u, when the one before fills: ", i);
		print_planned(fp, "", &next);
		offset = next.offset + next.nblocks * BLOCK_BYTES;
	}
}
