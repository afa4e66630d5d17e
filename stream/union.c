/* SPDX-License-Identifier: ISC
 * check against several filters at once (check -F, repeatable): the lines
 * are read once, hashed once for each distinct seed among the filters
 * (the reader hashes them for the first), and each filter tests them with
 * the hashes of its seed.  A line is selected if any filter may hold it.
 * The filters may differ in geometry and mode: each answers for itself.
 *
 * Slices answer together.  Slices of the same seed, hash count and whole
 * geometry are taken for slices of one filter (a family): each answers
 * for the blocks it holds, and a line that no slice of a family holds is
 * one that filter was not asked about.  Such a line is not certainly
 * absent from the union, since the missing slice may hold it: unless
 * another filter may hold it, it is passed over (BLOOM_ELSEWHERE), as
 * check passes over the lines of other slices of one slice alone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stream/union.h"

/* Returns 1 if a and b are slices of the same whole filter, as far as
 * their headers tell: the same seed, hash, layout, hash count and whole
 * block count. */
static int
same_whole(const struct bloom *a, const struct bloom *b)
{
	const struct bloom_header *ha = bloom_header(a), *hb = bloom_header(b);

	return ha->slices != 0 && hb->slices != 0 && ha->seed == hb->seed &&
	    ha->hash_id == hb->hash_id && ha->layout == hb->layout &&
	    ha->whole_nblocks == hb->whole_nblocks &&
	    ha->seg[0].hashes == hb->seg[0].hashes;
}

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
	u->family = calloc(n, sizeof u->family[0]);
	u->hashed = malloc(n);
	u->found = malloc(LINES_MAX);
	u->answered = malloc(LINES_MAX);
	u->unknown = malloc(LINES_MAX * sizeof u->unknown[0]);
	u->which = malloc(LINES_MAX * sizeof u->which[0]);
	if (u->seed_of == NULL || u->hashes == NULL || u->family == NULL ||
	    u->hashed == NULL ||
	    u->found == NULL || u->answered == NULL || u->unknown == NULL ||
	    u->which == NULL)
		goto fail;
	for (i = 0; i < n; i++) {
		u->family[i] = i;
		for (j = 0; j < i; j++)
			if (same_whole(filters[j], filters[i])) {
				u->family[i] = u->family[j];
				break;
			}
		u->sliced += u->family[i] == i &&
		    bloom_header(filters[i])->slices != 0;
	}
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
	free(u->family);
	free(u->hashed);
	free(u->found);
	free(u->answered);
	free(u->unknown);
	free(u->which);
	free(u->key);
	memset(u, 0, sizeof *u);
}

/* Hashes the n lines of g from first on for filter b, the first of its
 * seed, into out.  Returns 0, or -1 with errno set if no room could be had
 * for a key. */
static int
hash_for(struct filter_union *u, const struct bloom *b,
    const struct line *line, size_t n, uint64_t *out)
{
	unsigned char *bigger;
	size_t i, need, len;

	for (i = 0; i < n; i++) {
		if (u->fields == NULL) {
			out[i] = bloom_hash(b, line[i].data, line[i].len);
			continue;
		}
		need = fields_key_max(u->fields, line[i].len);
		if (need > u->key_cap) {
			if ((bigger = realloc(u->key, need)) == NULL)
				return -1;
			u->key = bigger;
			u->key_cap = need;
		}
		len = fields_key(u->fields, line[i].data, line[i].len,
		    u->key);
		out[i] = bloom_hash(b, u->key, len);
	}
	return 0;
}

/* Returns the hashes of the n lines of g from first on for filter f,
 * hashing them if no filter of its seed has yet, or NULL with errno set. */
static const uint64_t *
hashes_for(struct filter_union *u, unsigned f, const struct line_group *g,
    size_t first, size_t n)
{
	unsigned s = u->seed_of[f];

	if (s == 0)
		return g->hash + first;
	if (!u->hashed[s]) {
		if (hash_for(u, u->filter[f], g->line + first, n,
		    u->hashes[s]) == -1)
			return NULL;
		u->hashed[s] = 1;
	}
	return u->hashes[s];
}

/* Marks line i of the n answers of filter f, testing for u, in hit and
 * which: the first filter in the order given that may hold it. */
static void
take_answers(struct filter_union *u, unsigned f, size_t n,
    unsigned char *hit, uint32_t *which)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (u->found[i] == 1 && (hit[i] != 1 || which[i] > f)) {
			hit[i] = 1;
			which[i] = f;
		}
}

int
union_test(struct filter_union *u, const struct line_group *g, size_t first,
    size_t n, unsigned char *hit)
{
	const uint64_t *hashes;
	unsigned fam, f;
	size_t i;
	int status, sliced;

	memset(hit, 0, n);
	if (u->sliced)
		memset(u->unknown, 0, n * sizeof u->unknown[0]);
	memset(u->hashed, 0, u->n);
	/* A family at a time (a filter that is no slice is one alone), its
	 * members and the families in the order given, so that which names
	 * the first filter in that order that may hold a line. */
	for (fam = 0; fam < u->n; fam++) {
		if (u->family[fam] != fam)
			continue;
		sliced = bloom_header(u->filter[fam])->slices != 0;
		if (sliced)
			memset(u->answered, 0, n);
		for (f = fam; f < u->n; f++) {
			if (u->family[f] != fam)
				continue;
			if ((hashes = hashes_for(u, f, g, first, n)) == NULL) {
				u->failed = f;
				return BLOOM_ERRNO;
			}
			status = bloom_test(u->filter[f], NULL, NULL, NULL, hashes, n,
			    u->found);
			if (status != BLOOM_OK) {
				u->failed = f;
				return status;
			}
			for (i = 0; sliced && i < n; i++)
				u->answered[i] |= u->found[i] != BLOOM_ELSEWHERE;
			take_answers(u, f, n, hit, u->which + first);
		}
		/* What no slice of the family holds, it may hold all the
		 * same: not certainly absent. */
		for (i = 0; sliced && i < n; i++)
			if (!u->answered[i] && u->unknown[i] == 0)
				u->unknown[i] = fam + 1;
	}
	for (i = 0; u->sliced && i < n; i++)
		if (hit[i] != 1 && u->unknown[i] != 0) {
			hit[i] = BLOOM_ELSEWHERE;
			if (u->passer == 0)
				u->passer = u->unknown[i];
		}
	return BLOOM_OK;
}
