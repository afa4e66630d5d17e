/* SPDX-License-Identifier: ISC
 * check against several filters at once (check -F, repeatable): the lines
 * are read once, hashed once for each distinct seed among the filters
 * (the reader hashes them for the first), and each filter tests them with
 * the hashes of its seed.  A line is selected if any filter may hold it.
 * The filters may differ in geometry and mode: each answers for itself.
 * A filter tests only the lines no filter before it may hold, a chunk at
 * a time: a group's lines, or, for filters big for the memory, a sorted
 * batch's, each filter in turn sweeping the batch's open keys in the
 * order of its blocks (the sweep serves one filter an operation).  The
 * other seeds' hashes of a batch are made as it takes its lines, which
 * it may not keep.
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

#include "lib/memory.h"
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
	if (u->seed_of == NULL || u->hashes == NULL || u->family == NULL)
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
		u->seed_of[i] = j < i ? u->seed_of[j] : u->nseeds++;
	}
	if (union_resize(u, LINES_MAX) == 0)
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
	free(u->keys);
	free(u->found);
	free(u->answered);
	free(u->unknown);
	free(u->which);
	free(u->key);
	memset(u, 0, sizeof *u);
}

size_t
union_key_bytes(const struct filter_union *u)
{
	size_t bytes = u->nseeds * sizeof u->keys[0] + 1 + sizeof u->which[0];

	if (u->sliced)
		bytes += 1 + sizeof u->unknown[0];
	return bytes;
}

int
union_resize(struct filter_union *u, size_t cap)
{
	unsigned s;
	int ok;

	free(u->keys);
	free(u->found);
	free(u->which);
	free(u->answered);
	free(u->unknown);
	u->keys = memory_array(cap * sizeof u->keys[0]);
	u->found = memory_array(cap);
	u->which = memory_array(cap * sizeof u->which[0]);
	u->answered = u->sliced ? memory_array(cap) : NULL;
	u->unknown = u->sliced ? memory_array(cap * sizeof u->unknown[0]) : NULL;
	ok = u->keys != NULL && u->found != NULL && u->which != NULL &&
	    (!u->sliced || (u->answered != NULL && u->unknown != NULL));
	for (s = 1; s < u->nseeds; s++) {
		free(u->hashes[s]);
		u->hashes[s] = memory_array(cap * sizeof u->hashes[s][0]);
		ok = ok && u->hashes[s] != NULL;
	}
	u->cap = cap;
	if (ok)
		return 0;
	errno = ENOMEM;
	return -1;
}

/* Hashes the n lines from line on for filter b, the first of its seed,
 * into out.  Returns 0, or -1 with errno set if no room could be had for
 * a key. */
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

int
union_hash(struct filter_union *u, const struct line_group *g,
    size_t first, size_t n, size_t at)
{
	unsigned f, next = 1;

	/* Seeds are numbered as their first filter comes. */
	for (f = 1; f < u->n && next < u->nseeds; f++) {
		if (u->seed_of[f] != next)
			continue;
		if (hash_for(u, u->filter[f], g->line + first, n,
		    u->hashes[next] + at) == -1) {
			u->failed = f;
			return -1;
		}
		next++;
	}
	return 0;
}

/* Returns 1 if filter f's answer for key i of a chunk still counts: no
 * filter before it in the order given may hold the key, as far as the
 * filters tested so far say. */
static inline int
still_open(const unsigned char *hit, const uint32_t *which, size_t i,
    unsigned f)
{
	return hit[i] != 1 || which[i] > f;
}

/*
 * Tests against filter f, through sweep w (or line by line if NULL), the
 * keys of the n of the chunk, their hashes those of f's seed, whose
 * answer is still open, and takes its answers: into hit and which where
 * it may hold a key, and, for a slice, into u->answered.  Returns
 * BLOOM_OK or a status.
 */
static int
test_filter(struct filter_union *u, unsigned f, struct bloom_sweep *w,
    const uint64_t *hashes, size_t n, unsigned char *hit, uint32_t *which,
    int sliced)
{
	size_t i, m;
	int status;

	for (i = m = 0; i < n; i++)
		if (still_open(hit, which, i, f))
			u->keys[m++] = hashes[i];
	/* Tested even with no key open: the test refreshes the filter's
	 * view, and a filter damaged or shrunk since must fail the check
	 * though the filters before it hold every line. */
	status = bloom_test(u->filter[f], w, NULL, NULL, u->keys, m,
	    u->found);
	if (status != BLOOM_OK)
		return status;
	for (i = m = 0; i < n; i++) {
		unsigned char found;

		if (!still_open(hit, which, i, f))
			continue;
		found = u->found[m++];
		if (sliced)
			u->answered[i] |= found != BLOOM_ELSEWHERE;
		if (found == 1) {
			hit[i] = 1;
			which[i] = f;
		}
	}
	return BLOOM_OK;
}

int
union_test(struct filter_union *u, struct bloom_sweep *w,
    const uint64_t *hashes, size_t at, size_t n, unsigned char *hit)
{
	uint32_t *which = u->which + at;
	unsigned fam, f, s;
	size_t i;
	int status, sliced;

	memset(hit, 0, n);
	if (u->sliced)
		memset(u->unknown, 0, n * sizeof u->unknown[0]);
	/* A family at a time (a filter that is no slice is one alone), its
	 * members and the families in the order given; a filter tests only
	 * the keys that no filter before it in that order may hold, so that
	 * which names the first that may. */
	for (fam = 0; fam < u->n; fam++) {
		if (u->family[fam] != fam)
			continue;
		sliced = bloom_header(u->filter[fam])->slices != 0;
		if (sliced)
			memset(u->answered, 0, n);
		for (f = fam; f < u->n; f++) {
			if (u->family[f] != fam)
				continue;
			s = u->seed_of[f];
			status = test_filter(u, f, w, s == 0 ? hashes :
			    u->hashes[s] + at, n, hit, which, sliced);
			if (status != BLOOM_OK) {
				u->failed = f;
				return status;
			}
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
