/* SPDX-License-Identifier: ISC */
/* progress.h: interface of progress.c, the status line of a long add or
 * check: when it is due and what it says. */
#ifndef BLOOM_PROGRESS_H
#define BLOOM_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#define PROGRESS_TTY_MS		250	/* between redraws on a terminal */
#define PROGRESS_LOG_MS		5000	/* between lines otherwise */

/* The progress of one run. */
struct progress {
	uint64_t start_ns;	/* when the run began, monotonic */
	uint64_t next_ns;	/* when the next status line is due */
	uint64_t interval_ns;	/* between status lines */
	uint64_t total;		/* input bytes, or 0 if not known */
};

/* Returns the monotonic clock in nanoseconds. */
uint64_t progress_now(void);

/* Starts p now for an input of total bytes (0 if not known), a status
 * line due every interval_ms. */
void progress_start(struct progress *p, uint64_t total, unsigned interval_ms);

/* Returns 1 if a status line is due at now, and then makes the next one
 * due an interval later; else 0. */
int progress_due(struct progress *p, uint64_t now);

/* Makes SIGUSR1 ask for a status line, from now on (see progress_wanted).
 * Returns 0, or -1 with errno set. */
int progress_catch_signal(void);

/* Returns 1 if a status line is wanted now: SIGUSR1 asked for one (then
 * *asked is 1, and the request is taken) or, if periodic, one is due;
 * *now is then the time.  Else 0, cheaply: no clock is read unless
 * periodic or asked. */
int progress_wanted(struct progress *p, int periodic, uint64_t *now,
    int *asked);

/* Returns the bytes left to read in the named files (the standard input
 * if none, "-" for it too), or 0 if one is not a regular file. */
uint64_t progress_input_size(int nfiles, char **files);

/* Writes into buf (size bytes, NUL-terminated) the status line at now
 * after lines lines of bytes bytes: counts, rate, elapsed time, and
 * percent and time left if the size is known; if final, a summary
 * instead.  Returns the length of the text. */
size_t progress_format(const struct progress *p, uint64_t now,
    uint64_t lines, uint64_t bytes, int final, char *buf, size_t size);

#endif
