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
	uint64_t keys = 1, d;
	unsigned i;

	for (i = 0; i < h->slots; i++)
		if (bloom_is_live(b, i) && h->seg[i].inserted > keys)
			keys = h->seg[i].inserted;
	if (n != 0 && h->seg[0].nblocks / plan_unit_blocks(h, 0) % n != 0) {
		fp->refusal = FOLD_INDIVISIBLE;
		return -1;
	}
	d = n != 0 ? n : plan_fold_by(h, 0, keys);
	for (i = 0; i < h->slots; i++)
		fp->by[i] = d;
	plan_fold(h, fp->by);
	return 0;
}

/* Plans each segment of a fixed or growable filter (a slice too) alone. */
static int
plan_segments(uint64_t n, struct fold_plan *fp)
{
	struct bloom_header *h = &fp->h;
	unsigned i;

	for (i = 0; i < h->nsegments; i++) {
		if (n != 0 && h->seg[i].nblocks % n != 0) {
			fp->refusal = FOLD_INDIVISIBLE;
			fp->segment = i;
			return -1;
		}
		fp->by[i] = n != 0 ? n : plan_fold_by(h, i, h->seg[i].inserted);
	}
	plan_fold(h, fp->by);
	return 0;
}

int
fold_plan(struct bloom *b, uint64_t n, struct fold_plan *fp)
{
	const struct bloom_header *src = bloom_header(b);
	struct bloom_header *h = &fp->h;
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
	/* Laid out as create lays out. */
	plan_lay_out(h);
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
	uint64_t n = job->fp->by[i], u = plan_unit_blocks(&job->fp->h, i);
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
		if (plan_shares_array(h, i))
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
