/* SPDX-License-Identifier: ISC
 * What bloom stats finds: the fill of every segment and what it says,
 * estimated keys and false-positive rate, and the sums over the live
 * segments, which are what a check consults.
 */
#include <stdint.h>
#include <string.h>

#include "filter/stats.h"

const char *
stats_mode_name(uint32_t m)
{
	switch (m) {
	case MODE_FIXED:	return "fixed";
	case MODE_GROW:		return "grow";
	case MODE_WINDOW:	return "window";
	}
	return "unknown";
}

/* Sets the times of segment i of a window: generation e starts at
 * created + e W / (G - 1) and is forgotten G generations later. */
static void
window_times(const struct bloom *b, unsigned i, struct segment_stats *ss)
{
	const struct bloom_header *h = bloom_header(b);
	uint64_t stamp = bloom_stamp(b, i), gen, g = h->slots - 1;

	ss->created_ms = ss->expires_ms = ss->generation = -1;
	if (stamp == 0)
		return;
	gen = stamp - 1;
	ss->generation = (int64_t)gen;
	if (h->window_ms == 0)
		return;
	if (gen > (uint64_t)INT64_MAX / h->window_ms / (g + 1))
		return;
	ss->created_ms = (int64_t)(format_clock_base(h) + gen *
	    h->window_ms / g);
	ss->expires_ms = (int64_t)(format_clock_base(h) + (gen + g + 1) *
	    h->window_ms / g);
}

/*
 * The generations of a window whose generations share one array (the
 * core says which: bloom_estimate): each row shows the slot its
 * generation took when it began, whose bits are one for each key of it
 * and of the k - 1 generations after it; the array is counted once in the
 * sums, its keys from the counters of the live generations (a slot's fill
 * mixes k generations) and its rate from the fullest generation's load,
 * as if every generation held as many (bloom_estimate_array).  Returns
 * that rate, or 0 if no generation shares an array.
 */
static double
shared_sums(struct bloom *b, const unsigned char *shared,
    struct filter_stats *st)
{
	struct params_estimate e;
	uint64_t most = 0;
	unsigned i;

	for (i = 0; i < st->nsegments; i++)
		if (shared[i] && st->seg[i].live) {
			if (st->seg[i].inserted > most)
				most = st->seg[i].inserted;
			st->estimated_items += (double)st->seg[i].inserted;
		}
	if (!bloom_estimate_array(b, most, &e))
		return 0.0;
	st->bits += e.bits;
	st->bits_set += e.bits_set;
	for (i = 0; i < st->nsegments; i++)
		if (shared[i]) {
			st->seg[i].estimated_fpr = e.fpr;
			if (st->seg[i].live)
				st->inserted += st->seg[i].inserted;
		}
	return e.fpr;
}

int
stats_compute(struct bloom *b, uint64_t file_size, struct filter_stats *st)
{
	const struct bloom_header *h = bloom_header(b);
	unsigned char shared[SEGMENTS_MAX];
	struct params_estimate e;
	double pass = 1.0;
	unsigned i;
	int s;

	memset(st, 0, sizeof *st);
	/* Every segment is read, the expired ones too, which a rotation
	 * would otherwise give back meanwhile. */
	if ((s = bloom_read_begin(b)) != BLOOM_OK) {
		bloom_read_end(b);
		return s;
	}
	st->bytes = file_size;
	st->sparse = bloom_sparse(b);
	st->nsegments = bloom_nsegments(b);
	st->generation = bloom_generation(b);
	st->hashes = h->seg[h->mode == MODE_FIXED ? 0 : bloom_target(b)].hashes;
	if (h->slices != 0)
		st->slice_lo = (uint64_t)h->slice * h->seg[0].nblocks;
	for (i = 0; i < st->nsegments; i++) {
		struct segment_stats *ss = &st->seg[i];
		const struct segment_info *info = &h->seg[i];

		ss->live = bloom_is_live(b, i);
		ss->hashes = info->hashes;
		ss->capacity = info->capacity;
		ss->target_fpr = info->target_fpr;
		ss->inserted = bloom_inserted(b, i);
		shared[i] = (unsigned char)bloom_estimate(b, i, &e);
		ss->bits = e.bits;
		ss->bits_set = e.bits_set;
		ss->estimated_items = e.items;
		ss->estimated_fpr = e.fpr;
		ss->created_ms = ss->expires_ms = ss->generation = -1;
		if (h->mode == MODE_WINDOW)
			window_times(b, i, ss);
		else if (h->version != FORMAT_V1)
			ss->created_ms = (int64_t)bloom_stamp(b, i);
		if (h->mode == MODE_GROW)
			st->capacity += ss->capacity;
		if (!ss->live || shared[i])
			continue;
		st->bits += ss->bits;
		st->bits_set += ss->bits_set;
		st->estimated_items += ss->estimated_items;
		st->inserted += ss->inserted;
		pass *= 1.0 - ss->estimated_fpr;
	}
	pass *= 1.0 - shared_sums(b, shared, st);
	if (h->mode != MODE_GROW)
		st->capacity = h->capacity;
	st->fill = st->bits == 0 ? 0.0 : (double)st->bits_set /
	    (double)st->bits;
	st->estimated_fpr = 1.0 - pass;
	/* The fill of a filter at capacity scatters around the target: a
	 * fixed filter is over only once more keys went in than it was
	 * sized for and the rate shows it. */
	st->over_capacity = st->estimated_fpr > h->target_fpr &&
	    (h->mode != MODE_FIXED || st->inserted > st->capacity);
	bloom_read_end(b);
	return BLOOM_OK;
}
