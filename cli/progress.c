/* SPDX-License-Identifier: ISC
 * The status line of --progress and SIGUSR1, as dd(1) and pv(1) give one:
 * lines and bytes so far, the rate, the time taken and, for an input of
 * known size, how far along and how long to go.  Pure formatting and
 * timing: cli.c decides where it goes.
 */
#include <sys/stat.h>

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/progress.h"
#include "cli/report.h"

#define NS	1000000000.0

static volatile sig_atomic_t asked_by_signal;	/* SIGUSR1 came */

static void
on_sigusr1(int sig)
{
	(void)sig;
	asked_by_signal = 1;
}

int
progress_catch_signal(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigusr1;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	return sigaction(SIGUSR1, &sa, NULL);
}

int
progress_wanted(struct progress *p, int periodic, uint64_t *now, int *asked)
{
	*asked = asked_by_signal != 0;
	if (!*asked && !periodic)
		return 0;
	*now = progress_now();
	if (*asked) {
		asked_by_signal = 0;
		return 1;
	}
	return progress_due(p, *now);
}

uint64_t
progress_input_size(int nfiles, char **files)
{
	struct stat st;
	uint64_t total = 0;
	off_t at;
	int i;

	if (nfiles == 0) {
		if (fstat(STDIN_FILENO, &st) == -1 || !S_ISREG(st.st_mode))
			return 0;
		at = lseek(STDIN_FILENO, 0, SEEK_CUR);
		return at >= 0 && st.st_size > at ?
		    (uint64_t)(st.st_size - at) : 0;
	}
	for (i = 0; i < nfiles; i++) {
		if (strcmp(files[i], "-") == 0 || stat(files[i], &st) == -1 ||
		    !S_ISREG(st.st_mode))
			return 0;
		total += (uint64_t)st.st_size;
	}
	return total;
}

uint64_t
progress_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void
progress_start(struct progress *p, uint64_t total, unsigned interval_ms)
{
	p->start_ns = progress_now();
	p->interval_ns = (uint64_t)interval_ms * 1000000u;
	p->next_ns = p->start_ns + p->interval_ns;
	p->total = total;
}

int
progress_due(struct progress *p, uint64_t now)
{
	if (now < p->next_ns)
		return 0;
	p->next_ns = now + p->interval_ns;
	return 1;
}

/* Writes a duration of s seconds: "4.25 s" or "42.5 s" under a minute, else m:ss or
 * h:mm:ss. */
static void
duration(char *buf, size_t size, double s)
{
	uint64_t t;

	if (s < 60.0) {
		snprintf(buf, size, s < 10.0 ? "%.2f s" : "%.1f s", s);
		return;
	}
	t = (uint64_t)s;
	if (t < 3600)
		snprintf(buf, size, "%" PRIu64 ":%02" PRIu64, t / 60, t % 60);
	else
		snprintf(buf, size, "%" PRIu64 ":%02" PRIu64 ":%02" PRIu64,
		    t / 3600, t / 60 % 60, t % 60);
}

size_t
progress_format(const struct progress *p, uint64_t now, uint64_t lines,
    uint64_t bytes, int final, char *buf, size_t size)
{
	char amount[32], rate[32], spent[32], left[32];
	double elapsed = (double)(now - p->start_ns) / NS, done;
	int n;

	report_human(amount, sizeof amount, (double)bytes);
	report_human(rate, sizeof rate, elapsed > 0.0 ? (double)bytes / elapsed :
	    0.0);
	duration(spent, sizeof spent, elapsed);
	n = snprintf(buf, size, "%s%" PRIu64 " lines, %s in %s, %s/s, "
	    "%.2f M lines/s", final ? "done: " : "", lines, amount, spent, rate,
	    elapsed > 0.0 ? (double)lines / elapsed / 1e6 : 0.0);
	if (!final && p->total > 0 && n >= 0 && (size_t)n < size) {
		done = bytes >= p->total ? 1.0 : (double)bytes /
		    (double)p->total;
		if (done > 0.0)
			duration(left, sizeof left, elapsed * (1.0 - done) /
			    done);
		n += snprintf(buf + n, size - (size_t)n, ", %.0f %%, ETA %s",
		    100.0 * done, done > 0.0 ? left : "unknown");
	}
	return n < 0 ? 0 : (size_t)n >= size ? size - 1 : (size_t)n;
}
