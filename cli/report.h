/* SPDX-License-Identifier: ISC */
/* report.h: interface of report.c, what the commands write on stdout
 * besides selected lines: a filter's stats, create's plan, and the
 * buffer they are gathered in. */
#ifndef BLOOM_REPORT_H
#define BLOOM_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "store/format.h"
#include "store/plan.h"
#include "filter/stats.h"

/* Opens a report for stdout (stats, create --dry-run, check -c's count):
 * gathered in memory, then written by report_close as the selected lines
 * are (output.c), so that a non-blocking stdout is waited for, where
 * stdio would drop what it could not write.  Without the memory for it,
 * returns stdout itself. */
FILE *report_open(void);

/* Writes and closes the report fp.  Returns 0, or -1 after saying why
 * (nothing for a closed pipe). */
int report_close(FILE *fp);

/* Writes st, the stats of the filter at path whose header is h, to fp as
 * key: value lines and a table of segments. */
void report_stats_text(FILE *fp, const char *path,
    const struct bloom_header *h, const struct filter_stats *st);

/* Writes the same to fp as one JSON object on one line. */
void report_stats_json(FILE *fp, const char *path,
    const struct bloom_header *h, const struct filter_stats *st);

/* Writes what create would make of the planned header h for path:
 * bytes, blocks, hashes, capacity, rate, and the segments of a growable
 * or windowed filter (for a growable one, the next few too); for a
 * window, its layout and why, from chosen. */
void report_plan(FILE *fp, const char *path, const struct bloom_header *h,
    const struct plan_layout *chosen);

/* Writes bytes into buf (size bytes) in 1024-based units, as "1.5 GiB"
 * or "512 B", and returns buf. */
char *report_human(char *buf, size_t size, double bytes);

#endif
