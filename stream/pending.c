/* SPDX-License-Identifier: ISC */
/*
 * Pending keys: add --new writing to a pipe marks a new line seen only
 * once the reader has taken it out of the pipe (engine.c), so the lines
 * written and still in the pipe wait here, with the offset where each
 * ends.  So that the keys are set in input order, as to a file (which
 * segment a key goes to, as a generation or a growable filter fills,
 * depends on it), a renewing window's lines seen again wait in line with
 * them, each until the lines written before it are taken.  As the reader
 * takes bytes, the oldest leave.  A line repeated while its first copy
 * waits must not be written again: the new lines' hashes are also kept
 * in a table, looked up for every new line.
 *
 * At most PENDING_MAX keys wait (2.1 MiB for the ring and the table): the
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
	p->mark = malloc(PENDING_MAX);
	p->table = calloc(TABLE_SLOTS, sizeof p->table[0]);
	if (p->hash != NULL && p->end != NULL && p->mark != NULL &&
	    p->table != NULL)
		return 0;
	pending_free(p);
	return -1;
}

uint64_t
pending_memory(void)
{
	const struct pending *p = NULL;

	return (uint64_t)PENDING_MAX * (sizeof p->hash[0] + sizeof p->end[0] +
	    1) + (uint64_t)TABLE_SLOTS * sizeof p->table[0];
}

void
pending_free(struct pending *p)
{
	free(p->hash);
	free(p->end);
	free(p->mark);
	free(p->table);
	p->hash = p->end = p->table = NULL;
	p->mark = NULL;
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
pending_push(struct pending *p, uint64_t h, uint64_t end,
    unsigned char mark)
{
	uint64_t key = key_of(h);
	size_t i, at = (p->first + p->n) & (PENDING_MAX - 1);

	p->hash[at] = h;
	p->end[at] = end;
	p->mark[at] = mark;
	p->n++;
	if (mark != 1)
		return;
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
pending_take(struct pending *p, uint64_t taken, uint64_t *out,
    unsigned char *marks)
{
	size_t k = 0;

	while (p->n > 0 && p->end[p->first] <= taken) {
		marks[k] = p->mark[p->first];
		out[k++] = p->hash[p->first];
		if (p->mark[p->first] == 1)
			forget(p, p->hash[p->first]);
		p->first = (p->first + 1) & (PENDING_MAX - 1);
		p->n--;
	}
	return k;
}
