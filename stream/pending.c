/* SPDX-License-Identifier: ISC */
/*
 * Pending lines: add --new writing to a pipe marks a new line seen only
 * once the reader has taken it out of the pipe (engine.c), so the lines
 * written and still in the pipe wait here, in the order written, with
 * the offset where each ends.  As the reader takes bytes, the oldest
 * leave.  A line repeated while its first copy waits must not be written
 * again: the hashes waiting are also kept in a table, looked up for
 * every new line.
 *
 * At most PENDING_MAX lines wait (2 MiB for the ring and the table): the
 * engine waits for the reader rather than write more, as a full pipe
 * would make it wait.  A pipe of 1 MiB holds more lines than that only
 * if they average under 16 bytes.
 */
#include <stdlib.h>

#include "stream/pending.h"

#define TABLE_BITS	17		/* 2 * PENDING_MAX slots */
#define TABLE_SLOTS	((size_t)1 << TABLE_BITS)

/* The table's value for hash h: never 0, the free slot. */
static uint64_t
key_of(uint64_t h)
{
	return h != 0 ? h : 1;
}

static size_t
home_of(uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> (64 - TABLE_BITS));
}

int
pending_init(struct pending *p)
{
	p->first = p->n = 0;
	p->hash = malloc(PENDING_MAX * sizeof p->hash[0]);
	p->end = malloc(PENDING_MAX * sizeof p->end[0]);
	p->table = calloc(TABLE_SLOTS, sizeof p->table[0]);
	if (p->hash != NULL && p->end != NULL && p->table != NULL)
		return 0;
	pending_free(p);
	return -1;
}

void
pending_free(struct pending *p)
{
	free(p->hash);
	free(p->end);
	free(p->table);
	p->hash = p->end = p->table = NULL;
}

int
pending_holds(const struct pending *p, uint64_t h)
{
	uint64_t key = key_of(h);
	size_t i;

	for (i = home_of(key); p->table[i] != 0; i = (i + 1) & (TABLE_SLOTS - 1))
		if (p->table[i] == key)
			return 1;
	return 0;
}

void
pending_push(struct pending *p, uint64_t h, uint64_t end)
{
	uint64_t key = key_of(h);
	size_t i, at = (p->first + p->n) & (PENDING_MAX - 1);

	p->hash[at] = h;
	p->end[at] = end;
	p->n++;
	for (i = home_of(key); p->table[i] != 0; i = (i + 1) & (TABLE_SLOTS - 1))
		;
	p->table[i] = key;
}

/* Removes hash h from the table, moving back the keys after it that
 * probing would no longer reach (Knuth's algorithm R). */
static void
forget(struct pending *p, uint64_t h)
{
	uint64_t key = key_of(h);
	size_t i, j, home, mask = TABLE_SLOTS - 1;

	for (i = home_of(key); p->table[i] != key; i = (i + 1) & mask)
		if (p->table[i] == 0)
			return;
	p->table[i] = 0;
	for (j = (i + 1) & mask; p->table[j] != 0; j = (j + 1) & mask) {
		home = home_of(p->table[j]);
		/* The key at j stays if its home lies cyclically in (i, j]. */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		p->table[i] = p->table[j];
		p->table[j] = 0;
		i = j;
	}
}

size_t
pending_take(struct pending *p, uint64_t taken, uint64_t *out)
{
	size_t k = 0;

	while (p->n > 0 && p->end[p->first] <= taken) {
		out[k++] = p->hash[p->first];
		forget(p, p->hash[p->first]);
		p->first = (p->first + 1) & (PENDING_MAX - 1);
		p->n--;
	}
	return k;
}
