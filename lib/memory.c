/* SPDX-License-Identifier: ISC
 * The memory bloom may use, and the plan that follows from it.  A filter
 * that fits in memory is mapped and worked on line by line, as it always
 * was.  One that does not, or whose pages, dirtied at random, would pass
 * the kernel's dirty limits (every page written back again and again), is
 * worked on in sorted batches (batch.c) that touch each page once.
 *
 * The budget is the least of the memory cgroup's limits, from the
 * process's own cgroup up to the root (cgroup v1 and v2 both), and of
 * MemAvailable; --memory overrides it.  It bounds the whole process:
 * what the process takes whatever the plan (its code, the reader's
 * groups, the output buffer, a claim table: the caller's fixed bytes) is
 * taken off first, and the filter's mapping and the batches share the
 * rest.  So bloom in a memory cgroup, whose limit is then its budget,
 * fits in it.  The arrays a batch fills key by key ask the kernel for
 * huge pages (memory_huge): fewer faults, the same bytes.
 */
#include <sys/mman.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/memory.h"

#define CGROUP_ROOT_V1	"/sys/fs/cgroup/memory"
#define CGROUP_ROOT_V2	"/sys/fs/cgroup"
#define BATCH_SHARE	4	/* a batch takes 4/8 of what is usable */
#define WINDOW_SHARE	32	/* a window takes 1/32 of it: four
				 * are in memory at once */
#define WINDOW_MIN	((uint64_t)4096)
#define WINDOW_MAX	((uint64_t)64 << 20)
#define WINDOW_MAPPED	((uint64_t)1 << 20)	/* a window of a filter
				 * mapped whole: what a core's cache holds */
#define BATCH_MAX	((uint64_t)(SIZE_MAX / 4))	/* bytes of a batch a
						 * 32-bit host can address */
#define HUGE_PAGE	((uintptr_t)2 << 20)	/* x86-64's and arm64's
						 * (4 KiB pages) huge page */
#define SMALL_START	((uintptr_t)4 << 20)	/* bytes of an array in
						 * small pages, at its start */
#define USABLE_LEAST	4	/* the filter and batches take at least
				 * a 4th of a budget, however small */

/* Returns the bytes of the machine's memory, or UINT64_MAX if unknown. */
static uint64_t
physical_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || page_size <= 0)
		return UINT64_MAX;
	return (uint64_t)pages * (uint64_t)page_size;
}

int
memory_fits(uint64_t size)
{
	return size / 2 <= physical_bytes();
}

/* Reads the first number in file path into *v; "max" is UINT64_MAX.
 * Returns 0, or -1 if there is none. */
static int
read_number(const char *path, uint64_t *v)
{
	char buf[64];
	FILE *fp = fopen(path, "re");
	int ok;

	if (fp == NULL)
		return -1;
	ok = fgets(buf, sizeof buf, fp) != NULL;
	fclose(fp);
	if (!ok)
		return -1;
	if (strncmp(buf, "max", 3) == 0) {
		*v = UINT64_MAX;
		return 0;
	}
	return sscanf(buf, "%" SCNu64, v) == 1 ? 0 : -1;
}

/* Lowers *least to the limit in file name of cgroup dir under root and
 * of each of its ancestors. */
static void
cgroup_limit(const char *root, const char *dir, const char *name,
    uint64_t *least)
{
	char path[PATH_MAX], *slash;
	uint64_t v;

	if ((size_t)snprintf(path, sizeof path, "%s%s", root, dir) >=
	    sizeof path)
		return;
	for (;;) {
		size_t len = strlen(path);

		if ((size_t)snprintf(path + len, sizeof path - len, "/%s",
		    name) < sizeof path - len && read_number(path, &v) == 0 &&
		    v < *least)
			*least = v;
		path[len] = '\0';
		if (len <= strlen(root) || (slash = strrchr(path, '/')) ==
		    NULL)
			break;
		*slash = '\0';
	}
}

/* Lowers *least to the memory limits of the cgroups this process is in,
 * as /proc/self/cgroup names them: "N:memory:/path" for v1 (the
 * controller may share its line), "0::/path" for v2. */
static void
cgroup_limits(uint64_t *least)
{
	char line[PATH_MAX + 64], *ctl, *dir;
	FILE *fp = fopen("/proc/self/cgroup", "re");

	if (fp == NULL)
		return;
	while (fgets(line, sizeof line, fp) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((ctl = strchr(line, ':')) == NULL ||
		    (dir = strchr(ctl + 1, ':')) == NULL)
			continue;
		*dir++ = '\0';
		ctl++;
		if (*ctl == '\0')
			cgroup_limit(CGROUP_ROOT_V2, dir, "memory.max", least);
		else if (strcmp(ctl, "memory") == 0 ||
		    strstr(ctl, "memory,") != NULL ||
		    strstr(ctl, ",memory") != NULL)
			cgroup_limit(CGROUP_ROOT_V1, dir,
			    "memory.limit_in_bytes", least);
	}
	fclose(fp);
}

/* Returns MemAvailable in bytes, or UINT64_MAX if unknown. */
static uint64_t
mem_available(void)
{
	char line[128];
	uint64_t kib, v = UINT64_MAX;
	FILE *fp = fopen("/proc/meminfo", "re");

	if (fp == NULL)
		return v;
	while (fgets(line, sizeof line, fp) != NULL)
		if (sscanf(line, "MemAvailable: %" SCNu64, &kib) == 1 &&
		    kib < UINT64_MAX / 1024) {
			v = kib * 1024;
			break;
		}
	fclose(fp);
	return v;
}

uint64_t
memory_budget(void)
{
	uint64_t least = mem_available();

	cgroup_limits(&least);
	return least;
}

/* Returns the dirty threshold given as bytes in file bytes, or as a
 * percentage of available memory in file ratio. */
static uint64_t
dirty_threshold(const char *bytes, const char *ratio, uint64_t available)
{
	uint64_t v;

	if (read_number(bytes, &v) == 0 && v > 0)
		return v;
	if (read_number(ratio, &v) == 0 && v <= 100)
		return available / 100 * v;
	return UINT64_MAX;
}

uint64_t
memory_dirty_limit(void)
{
	uint64_t available = mem_available(), background, limit;

	if (available == UINT64_MAX)
		return UINT64_MAX;
	background = dirty_threshold("/proc/sys/vm/dirty_background_bytes",
	    "/proc/sys/vm/dirty_background_ratio", available);
	limit = dirty_threshold("/proc/sys/vm/dirty_bytes",
	    "/proc/sys/vm/dirty_ratio", available);
	if (background == UINT64_MAX || limit == UINT64_MAX)
		return UINT64_MAX;
	return background / 2 + limit / 2;
}

void
memory_plan(uint64_t filter_bytes, uint64_t budget, uint64_t fixed,
    int adding, struct memory_plan *p)
{
	uint64_t w, u;

	memset(p, 0, sizeof *p);
	p->budget = budget != 0 ? budget : memory_budget();
	u = p->budget > fixed && p->budget - fixed > p->budget / USABLE_LEAST ?
	    p->budget - fixed : p->budget / USABLE_LEAST;
	p->usable = u;
	p->out_of_core = filter_bytes > u / 2;
	p->sorted = p->out_of_core ||
	    (adding && filter_bytes > memory_dirty_limit());
	/* As large as the budget allows, so that a sweep of the whole filter
	 * serves as many lines as can be had: out of core the filter takes
	 * only its windows; mapped whole it takes its size, and the batch
	 * half of what is left.  A --memory larger than the machine is held
	 * to half of the machine, which the batch is allocated for. */
	p->batch_bytes = u / 8 * BATCH_SHARE;
	if (!p->out_of_core && (u - filter_bytes) / 2 < p->batch_bytes)
		p->batch_bytes = (u - filter_bytes) / 2;
	if (p->batch_bytes > physical_bytes() / 2)
		p->batch_bytes = physical_bytes() / 2;
	if (p->batch_bytes > BATCH_MAX)
		p->batch_bytes = BATCH_MAX;
	for (w = WINDOW_MIN; w < WINDOW_MAX && w * 2 <= u / WINDOW_SHARE;
	    w *= 2)
		;
	/* Mapped whole, a window is only what the sort groups keys by:
	 * small, the blocks a window's test reads are in the cache still
	 * when its repeats are looked for and its pages are set.  A warm 4 GiB add --new of 10 M lines took 0.9 s
	 * of user time in windows of 1 MiB against 1.2 s in 64 MiB ones
	 * (issue 39). */
	if (!p->out_of_core && w > WINDOW_MAPPED)
		w = WINDOW_MAPPED;
	p->window = w;
}

void
memory_huge(void *array, size_t size)
{
#ifdef MADV_HUGEPAGE
	/* Whole huge pages only, within the array past its first
	 * SMALL_START bytes: a trickle's batches, which touch only the start
	 * of each array, stay in small pages, and no huge page reaches past
	 * the array's end into memory a plan does not count. */
	if (array != NULL && size > SMALL_START + HUGE_PAGE) {
		uintptr_t from = ((uintptr_t)array + SMALL_START + HUGE_PAGE -
		    1) & ~(HUGE_PAGE - 1);
		uintptr_t to = ((uintptr_t)array + size) & ~(HUGE_PAGE - 1);
		int saved = errno;

		/* Advice only: refused, pages are as small as ever. */
		if (to > from)
			(void)madvise((void *)from, to - from, MADV_HUGEPAGE);
		errno = saved;
	}
#else
	(void)array;
	(void)size;
#endif
}

void *
memory_array(size_t size)
{
	void *p = malloc(size);

	memory_huge(p, size);
	return p;
}
