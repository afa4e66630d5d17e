/* SPDX-License-Identifier: ISC
 * bloom fold: a smaller filter from a larger one.  A key's block is
 * mul_high(h, nblocks) = floor(h nblocks / 2^64) and its bits inside the
 * block depend on h alone (store/bits.c).  With nblocks = n m,
 * floor(floor(h n m / 2^64) / n) = floor(h m / 2^64): the key of block j
 * of the large filter is in block j / n of the filter of m blocks.  So
 * ORing blocks n i to n i + n - 1 into block i gives, bit for bit, the
 * filter that m blocks would have held after the same adds; fold does
 * that for each segment, into a new file written as create writes one.
 *
 * The same holds of the other units a key's place is drawn in: the
 * groups of an age-partitioned window (store/apbf.c) are chosen as blocks
 * are and a key's bits in a group depend on its hash alone, so groups
 * fold whole.  A window's generations fold alike and keep their stamps
 * and the window's generation; a slice folds by n into the same slice of
 * its whole filter folded by n, since its blocks are a range of the
 * whole's that n divides.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "filter/create.h"
#include "filter/fold.h"
#include "lib/clock.h"

#define IN_BLOCKS	16384	/* blocks read at a time: 1 MiB */
#define OUT_BLOCKS	16384	/* blocks written at a time */

/* Returns the most keys nblocks blocks of hashes bits a key hold at rate
 * fpr or below, at least 1 (a capacity is never 0). */
static uint64_t
capacity_at(uint64_t nblocks, unsigned hashes, double fpr)
{
	uint64_t lo = 0, hi = nblocks * BLOCK_BITS, mid;

	/* params_fpr grows with the keys: the last count within fpr. */
	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (params_fpr(mid, nblocks, hashes) <= fpr)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo == 0 ? 1 : lo;
}

/* Returns the largest factor d of nblocks for which nblocks / d blocks
 * hold keys keys (at least 1) at rate fpr or below; 1 if none does. */
static uint64_t
largest_fold(uint64_t nblocks, unsigned hashes, double fpr, uint64_t keys)
{
	uint64_t d, best = 1;

	if (keys == 0)
		keys = 1;
	/* Each factor d up to the square root pairs with nblocks / d; the
	 * rate only falls as the blocks grow, so the first fit from the
	 * largest factor down is the answer, but the factors come in no
	 * order here: keep the largest that fits. */
	for (d = 1; d <= nblocks / d; d++) {
		if (nblocks % d != 0)
			continue;
		if (d > best && params_fpr(keys, nblocks / d, hashes) <= fpr)
			best = d;
		if (nblocks / d > best &&
		    params_fpr(keys, d, hashes) <= fpr)
			best = nblocks / d;
	}
	return best;
}

/* Returns the blocks of the unit fold ORs whole in segment i of h: a
 * group of the age-partitioned array, else a block. */
static uint64_t
unit_of(const struct bloom_header *h, unsigned i)
{
	return h->layout == LAYOUT_APBF && i < h->slots ? APBF_GROUP_BLOCKS :
	    1;
}

/* Returns the most keys a window of an age-partitioned array of ngroups
 * groups holds at h's rate and generations with k hashes, at least 1. */
static uint64_t
apbf_capacity_at(const struct bloom_header *h, uint64_t ngroups, unsigned k)
{
	struct apbf_params a;
	uint64_t lo = 1, hi = ngroups * APBF_GROUP_BITS, mid;

	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (params_apbf_size(mid, h->target_fpr, h->slots, &a) == 0 &&
		    a.hashes == k && a.ngroups <= ngroups)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Returns the largest factor of units units that leaves at least need of
 * them. */
static uint64_t
largest_fold_to(uint64_t units, uint64_t need)
{
	uint64_t d, best = 1;

	for (d = 1; d <= units / d; d++) {
		if (units % d != 0)
			continue;
		if (units / d >= need && d > best)
			best = d;
		if (d >= need && units / d > best)
			best = units / d;
	}
	return best;
}

/*
 * A window's generations share one geometry, so that a rotation reuses
 * any of them: all fold by one factor, by default the largest that keeps
 * the rate with the keys of its fullest live generation.  Its extra
 * segments must hold no live generation (fold_plan).
 */
static int
plan_window(struct bloom *b, uint64_t n, struct fold_plan *fp)
{
	struct bloom_header *h = &fp->h;
	struct segment_info *s = &h->seg[0];
	struct apbf_params a;
	uint64_t keys = 1, units, d;
	unsigned i;

	for (i = 0; i < h->slots; i++)
		if (bloom_is_live(b, i) && h->seg[i].inserted > keys)
			keys = h->seg[i].inserted;
	units = s->nblocks / unit_of(h, 0);
	if (n != 0 && units % n != 0) {
		fp->refusal = FOLD_INDIVISIBLE;
		return -1;
	}
	if (n != 0)
		d = n;
	else if (h->layout == LAYOUT_APBF)
		d = params_apbf_size(keys > UINT64_MAX / (h->slots - 1) ?
		    UINT64_MAX : keys * (h->slots - 1), h->target_fpr,
		    h->slots, &a) == 0 && a.hashes == s->hashes ?
		    largest_fold_to(units, a.ngroups) : 1;
	else
		d = largest_fold(s->nblocks, s->hashes, s->target_fpr, keys);
	for (i = 0; i < h->slots; i++) {
		fp->by[i] = d;
		h->seg[i].nblocks /= d;
		h->seg[i].capacity = h->layout == LAYOUT_APBF ? 0 :
		    capacity_at(h->seg[i].nblocks, h->seg[i].hashes,
		    h->seg[i].target_fpr);
	}
	/* The window's capacity, whose share sizes a generation that grows
	 * and is what stats tells: what the folded generations hold. */
	if (h->layout == LAYOUT_APBF)
		h->capacity = apbf_capacity_at(h, s->nblocks /
		    APBF_GROUP_BLOCKS, s->hashes);
	else
		h->capacity = s->capacity > UINT64_MAX / (h->slots - 1) ?
		    UINT64_MAX : s->capacity * (h->slots - 1);
	for (i = 0; i < h->slots && h->layout == LAYOUT_APBF; i++)
		h->seg[i].capacity = h->capacity / (h->slots - 1) +
		    (h->capacity % (h->slots - 1) != 0);
	return 0;
}

/* Plans each segment of a fixed or growable filter (a slice too) alone. */
static int
plan_segments(uint64_t n, struct fold_plan *fp)
{
	struct bloom_header *h = &fp->h;
	struct segment_info *s;
	unsigned i;

	for (i = 0; i < h->nsegments; i++) {
		s = &h->seg[i];
		if (n != 0 && s->nblocks % n != 0) {
			fp->refusal = FOLD_INDIVISIBLE;
			fp->segment = i;
			return -1;
		}
		fp->by[i] = n != 0 ? n : largest_fold(s->nblocks, s->hashes,
		    s->target_fpr, s->inserted);
		s->nblocks /= fp->by[i];
		s->capacity = capacity_at(s->nblocks, s->hashes,
		    s->target_fpr);
	}
	/* A fixed filter's capacity is its one segment's; a growable one's
	 * is its first segment's as made, which sizes the next ones. */
	if (h->mode == MODE_FIXED)
		h->capacity = h->seg[0].capacity;
	/* A slice is the same cut of the folded whole filter: its blocks
	 * are its share of the whole's, both divided by n. */
	if (h->slices != 0)
		h->whole_nblocks /= n;
	return 0;
}

int
fold_plan(struct bloom *b, uint64_t n, struct fold_plan *fp)
{
	const struct bloom_header *src = bloom_header(b);
	struct bloom_header *h = &fp->h;
	uint64_t offset;
	unsigned i;

	memset(fp, 0, sizeof *fp);
	/* Which extra segment holds which generation is the file's own:
	 * one grown past its sizing folds once it has expired. */
	if (src->mode == MODE_WINDOW && bloom_live_extra(b)) {
		fp->refusal = FOLD_WINDOW_GROWN;
		return -1;
	}
	/* Every slice of a filter must fold alike to stay its slice. */
	if (src->slices != 0 && n == 0) {
		fp->refusal = FOLD_SLICE_BY;
		return -1;
	}
	*h = *src;
	if (src->version == FORMAT_V1)
		h->created_ms = now_ms();
	h->version = FORMAT_V2;
	h->header_size = V2_HEADER_SIZE;
	h->nsegments = bloom_nsegments(b);
	if (src->mode == MODE_WINDOW)
		h->nsegments = src->slots;	/* no extra one is live */
	h->data_offset = format_data_offset(h->slots);
	h->epoch = bloom_epoch(b);
	for (i = 0; i < h->nsegments; i++) {
		h->seg[i].inserted = bloom_inserted(b, i);
		h->seg[i].stamp = src->version == FORMAT_V1 ? h->created_ms :
		    bloom_stamp(b, i);
	}
	if ((src->mode == MODE_WINDOW ? plan_window(b, n, fp) :
	    plan_segments(n, fp)) == -1)
		return -1;
	/* Laid out as create lays out: each on a page, the generations of
	 * an age-partitioned window on one array. */
	offset = h->data_offset;
	for (i = 0; i < h->nsegments; i++) {
		if (h->layout == LAYOUT_APBF && i > 0 && i < h->slots)
			offset = h->data_offset;
		h->seg[i].offset = offset;
		h->file_size = format_segment_end(&h->seg[i]);
		offset = format_next_offset(&h->seg[i]);
	}
	return 0;
}

/* Reads len bytes of fd at off into buf; a file that ends first is an
 * error, EIO: it shrank under us. */
static int
read_all(int fd, unsigned char *buf, size_t len, uint64_t off)
{
	ssize_t got;

	while (len > 0) {
		got = pread(fd, buf, len, (off_t)off);
		if (got == -1 && errno == EINTR)
			continue;
		if (got == -1)
			return -1;
		if (got == 0) {
			errno = EIO;
			return -1;
		}
		buf += got;
		len -= (size_t)got;
		off += (uint64_t)got;
	}
	return 0;
}

/* What fill_folded needs: the source and the plan. */
struct fold_job {
	struct bloom *b;		/* the filter folded */
	const struct fold_plan *fp;	/* its plan */
	unsigned char *in;		/* IN_BLOCKS blocks */
	unsigned char *out;		/* OUT_BLOCKS blocks */
};

/* Folds segment i of the job's filter by n into the new file fd at the
 * offset of its folded segment. */
static int
fold_segment(struct fold_job *job, unsigned i, int fd)
{
	const struct segment_info *from = &bloom_header(job->b)->seg[i];
	const struct segment_info *to = &job->fp->h.seg[i];
	uint64_t n = job->fp->by[i], u = unit_of(&job->fp->h, i);
	uint64_t at, got, j, o, out_lo = 0, k;
	int src = bloom_fd(job->b);

	memset(job->out, 0, OUT_BLOCKS * BLOCK_BYTES);
	for (at = 0; at < from->nblocks; at += got) {
		got = from->nblocks - at < IN_BLOCKS ? from->nblocks - at :
		    IN_BLOCKS;
		if (read_all(src, job->in, (size_t)(got * BLOCK_BYTES),
		    from->offset + at * BLOCK_BYTES) == -1)
			return BLOOM_ERRNO;
		for (j = 0; j < got; j++) {
			/* Unit q of the source goes into unit q / n, each
			 * block of it in its place. */
			o = (at + j) / u / n * u + (at + j) % u;
			if (o - out_lo == OUT_BLOCKS) {
				if (write_at(fd, job->out, OUT_BLOCKS *
				    BLOCK_BYTES, to->offset + out_lo *
				    BLOCK_BYTES) == -1)
					return BLOOM_ERRNO;
				memset(job->out, 0, OUT_BLOCKS * BLOCK_BYTES);
				out_lo = o;
			}
			for (k = 0; k < BLOCK_BYTES; k++)
				job->out[(o - out_lo) * BLOCK_BYTES + k] |=
				    job->in[j * BLOCK_BYTES + k];
		}
	}
	if (write_at(fd, job->out, (size_t)((to->nblocks - out_lo) *
	    BLOCK_BYTES), to->offset + out_lo * BLOCK_BYTES) == -1)
		return BLOOM_ERRNO;
	return BLOOM_OK;
}

/* bloom_fill_fn: writes every folded segment. */
static int
fill_folded(void *arg, int fd, const struct bloom_header *h)
{
	struct fold_job *job = arg;
	unsigned i;
	int s;

	for (i = 0; i < h->nsegments; i++) {
		/* The generations of an age-partitioned window are one
		 * array: written once, as the first. */
		if (h->layout == LAYOUT_APBF && i > 0 && i < h->slots)
			continue;
		if ((s = fold_segment(job, i, fd)) != BLOOM_OK)
			return s;
	}
	return BLOOM_OK;
}

int
fold_write(struct bloom *b, const struct fold_plan *fp, const char *path,
    int force, void (*on_wait)(const char *path))
{
	struct fold_job job;
	int s, e;

	job.b = b;
	job.fp = fp;
	job.in = malloc(IN_BLOCKS * BLOCK_BYTES);
	job.out = malloc(OUT_BLOCKS * BLOCK_BYTES);
	if (job.in == NULL || job.out == NULL)
		s = BLOOM_ERRNO;
	else
		s = bloom_create_filled(path, &fp->h, force, on_wait,
		    fill_folded, &job);
	e = errno;
	free(job.in);
	free(job.out);
	errno = e;
	return s;
}
