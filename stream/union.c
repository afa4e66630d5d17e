/* SPDX-License-Identifier: ISC
 * check against several filters at once (check -F, repeatable): the lines
 * are read once, hashed once for each distinct seed among the filters
 * (the reader hashes them for the first), and each filter tests them with
 * the hashes of its seed.  A line is selected if any filter may hold it.
 * The filters may differ in geometry and mode: each answers for itself.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stream/union.h"

int
union_init(struct filter_union *u, struct bloom **filters, unsigned n,
    const struct fields *f)
{
	unsigned i, j;

	memset(u, 0, sizeof *u);
	u->filter = filters;
	u->n = n;
	u->fields = f;
	u->seed_of = calloc(n, sizeof u->seed_of[0]);
	u->hashes = calloc(n, sizeof u->hashes[0]);
	u->found = malloc(LINES_MAX);
	u->which = malloc(LINES_MAX * sizeof u->which[0]);
	if (u->seed_of == NULL || u->hashes == NULL || u->found == NULL ||
	    u->which == NULL)
		goto fail;
	u->nseeds = 1;
	for (i = 1; i < n; i++) {
		uint64_t seed = bloom_header(filters[i])->seed;

		for (j = 0; j < i; j++)
			if (bloom_header(filters[j])->seed == seed)
				break;
		if (j < i) {
			u->seed_of[i] = u->seed_of[j];
			continue;
		}
		u->seed_of[i] = u->nseeds;
		u->hashes[u->nseeds] = malloc(LINES_MAX * sizeof(uint64_t));
		if (u->hashes[u->nseeds++] == NULL)
			goto fail;
	}
	return 0;
fail:
	union_free(u);
	errno = ENOMEM;
	return -1;
}

void
union_free(struct filter_union *u)
{
	unsigned i;

	for (i = 0; u->hashes != NULL && i < u->nseeds; i++)
		free(u->hashes[i]);
	free(u->hashes);
	free(u->seed_of);
	free(u->found);
	free(u->which);
	free(u->key);
	memset(u, 0, sizeof *u);
}

/* Hashes the lines of g for filter b, the first of its seed, into out.
 * Returns 0, or -1 with errno set if no room could be had for a key. */
static int
hash_for(struct filter_union *u, const struct bloom *b,
    const struct line_group *g, uint64_t *out)
{
	unsigned char *bigger;
	size_t i, need, len;

	for (i = 0; i < g->nlines; i++) {
		if (u->fields == NULL) {
			out[i] = bloom_hash(b, g->line[i].data, g->line[i].len);
			continue;
		}
		need = fields_key_max(u->fields, g->line[i].len);
		if (need > u->key_cap) {
			if ((bigger = realloc(u->key, need)) == NULL)
				return -1;
			u->key = bigger;
			u->key_cap = need;
		}
		len = fields_key(u->fields, g->line[i].data, g->line[i].len,
		    u->key);
		out[i] = bloom_hash(b, u->key, len);
	}
	return 0;
}

int
union_test(struct filter_union *u, const struct line_group *g,
    unsigned char *hit)
{
	const uint64_t *hashes;
	unsigned f, s, hashed = 1;
	size_t i;
	int status;

	/* Not yet answered: every filter passed the line on so far. */
	memset(hit, BLOOM_ELSEWHERE, g->nlines);
	for (f = 0; f < u->n; f++) {
		s = u->seed_of[f];
		if (s == 0)
			hashes = g->hash;
		else {
			/* Seeds are numbered in the order of their first
			 * filter, so each is hashed once. */
			if (s == hashed && hash_for(u, u->filter[f], g,
			    u->hashes[s]) == -1) {
				u->failed = f;
				return BLOOM_ERRNO;
			}
			hashed += s == hashed;
			hashes = u->hashes[s];
		}
		status = bloom_test(u->filter[f], NULL, NULL, hashes,
		    g->nlines, u->found);
		if (status != BLOOM_OK) {
			u->failed = f;
			return status;
		}
		for (i = 0; i < g->nlines; i++) {
			if (hit[i] == 1 || u->found[i] == BLOOM_ELSEWHERE)
				continue;
			hit[i] = u->found[i];
			if (u->found[i] == 1)
				u->which[i] = f;
		}
	}
	return BLOOM_OK;
}
