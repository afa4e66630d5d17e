/* SPDX-License-Identifier: ISC
 * libFuzzer target for the parser of filter headers and segment tables,
 * both versions: any bytes must give a status and never a crash, and what
 * the parser accepts must be sound (the segments in order, on pages,
 * inside the file, no more than the table holds) and be exactly what the
 * builders write for the fields it decoded.  Run with `make fuzz`.
 *
 * The input is tried as a whole file, and, since a v2 file is at least a
 * page of header and table and then its segments (more than -max_len
 * allows), as the start of a longer file: as long as the segments its
 * table claims end, a little longer (which only a growable filter may
 * be), a little shorter, and longer than any table.  The parser gets the
 * input as it is, and the head that bloom_open reads (the rest of it
 * zero); each of these again with the checksums mended, so that the
 * fuzzer gets past them to the checks that follow.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/format.h"
#include "hash.h"
#include "lib/endian.h"

/* What bloom_open reads to parse: the largest header and table. */
#define HEAD_READ	8192

_Static_assert(HEAD_READ >= V2_HEADER_SIZE + SEGMENTS_MAX * SLOT_SIZE,
    "the largest table fits");

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t
page_up(uint64_t n)
{
	return (n + FILE_PAGE - 1) / FILE_PAGE * FILE_PAGE;
}

/* A version 1 header must be the one format_v1_build writes for its
 * fields, but for the inserted counter. */
static void
check_v1(const uint8_t *data, uint64_t file_size,
    const struct bloom_header *h)
{
	unsigned char again[V1_HEADER_SIZE];
	const struct segment_info *s = &h->seg[0];
	struct params p;

	if (h->header_size != V1_HEADER_SIZE || h->mode != MODE_FIXED ||
	    h->slots != 1 || h->nsegments != 1 ||
	    h->data_offset != V1_HEADER_SIZE || s->offset != V1_HEADER_SIZE ||
	    h->nbits != s->nblocks * BLOCK_BITS || s->nblocks == 0 ||
	    s->nblocks > NBLOCKS_MAX || s->hashes == 0 ||
	    s->hashes > HASHES_MAX || h->file_size != file_size ||
	    s->inserted != read_le64(data + V1_OFF_INSERTED) ||
	    h->file_size != V1_HEADER_SIZE + s->nblocks * BLOCK_BYTES)
		abort();
	p.capacity = s->capacity;
	p.target_fpr = s->target_fpr;
	p.nblocks = s->nblocks;
	p.hashes = s->hashes;
	format_v1_build(again, &p, h->seed);
	if (memcmp(again, data, V1_OFF_INSERTED) != 0 ||
	    memcmp(again + V1_OFF_INSERTED + 8, data + V1_OFF_INSERTED + 8,
	    V1_HEADER_SIZE - V1_OFF_INSERTED - 8) != 0)
		abort();
}

/* A version 2 header and table must hold segments in order, each on a
 * page after the table and the one before, inside the file (all of it
 * but for a growable filter or a window, which may be longer: a growth or
 * a giving back killed half-way), and be the bytes the builders write for the
 * decoded fields: all of the header and of each entry in use, counters
 * and stamps included. */
static void
check_v2(const uint8_t *data, size_t len, uint64_t file_size,
    const struct bloom_header *h)
{
	unsigned char again[V2_HEADER_SIZE], slot[SLOT_SIZE];
	const struct segment_info *s;
	uint64_t min_offset, end = 0;
	unsigned i;

	if (h->header_size != V2_HEADER_SIZE || h->mode > MODE_WINDOW ||
	    h->nsegments == 0 || h->slots > SEGMENTS_MAX ||
	    (h->mode == MODE_FIXED && h->slots != 1) ||
	    (h->mode == MODE_WINDOW ? h->nsegments < h->slots ||
	    h->nsegments > format_table_room(h->slots) :
	    h->nsegments > h->slots) ||
	    (h->mode == MODE_FIXED && h->nsegments != h->slots) ||
	    (h->mode != MODE_WINDOW && h->epoch != 0) ||
	    h->data_offset != format_data_offset(h->slots) ||
	    h->data_offset % FILE_PAGE != 0 ||
	    h->data_offset < V2_HEADER_SIZE + (uint64_t)h->slots * SLOT_SIZE ||
	    len < V2_HEADER_SIZE + (uint64_t)(h->nsegments > h->slots ?
	    h->nsegments : h->slots) * SLOT_SIZE)
		abort();
	if (h->layout != LAYOUT_BLOCKED512 && (h->layout != LAYOUT_APBF ||
	    h->mode != MODE_WINDOW))
		abort();
	min_offset = h->data_offset;
	for (i = 0; i < h->nsegments; i++) {
		s = &h->seg[i];
		/* The generations of an age-partitioned window share the
		 * first one's array, of whole groups, in at most 64 slots of
		 * at least 8 bits. */
		if (h->layout == LAYOUT_APBF && i < h->slots) {
			if (s->offset != h->seg[0].offset ||
			    s->nblocks != h->seg[0].nblocks ||
			    s->hashes != h->seg[0].hashes ||
			    s->nblocks % APBF_GROUP_BLOCKS != 0 ||
			    s->hashes > APBF_K_MAX ||
			    s->hashes + h->slots - 1 > APBF_SLOTS_MAX ||
			    APBF_GROUP_BITS / (s->hashes + h->slots - 1) <
			    APBF_W_MIN)
				abort();
			if (i > 0)
				min_offset = h->seg[0].offset;
		}
		if (s->offset % FILE_PAGE != 0 || s->offset < min_offset ||
		    s->nblocks == 0 || s->nblocks > NBLOCKS_MAX ||
		    s->hashes == 0 || s->hashes > HASHES_MAX ||
		    s->capacity == 0 ||
		    !(s->target_fpr > 0.0 && s->target_fpr < 1.0) ||
		    s->offset > file_size ||
		    s->nblocks * BLOCK_BYTES > file_size - s->offset)
			abort();
		if (h->mode == MODE_WINDOW && s->stamp > h->epoch &&
		    s->stamp - h->epoch > 1)
			abort();
		end = s->offset + s->nblocks * BLOCK_BYTES;
		min_offset = page_up(end);
		format_slot_build(slot, i, s);
		if (memcmp(slot, data + V2_HEADER_SIZE + i * SLOT_SIZE,
		    SLOT_SIZE) != 0)
			abort();
	}
	if (h->file_size != end || end > file_size ||
	    (h->mode == MODE_FIXED && end != file_size))
		abort();
	/* A slice is a fixed filter holding its share of the whole's blocks. */
	if (h->slices == 0 ? h->slice != 0 || h->whole_nblocks != 0 :
	    h->mode != MODE_FIXED || h->slice >= h->slices ||
	    h->whole_nblocks % h->slices != 0 ||
	    h->seg[0].nblocks != h->whole_nblocks / h->slices)
		abort();
	format_header_build(again, h);
	if (memcmp(again, data, V2_HEADER_SIZE) != 0)
		abort();
}

/* Parses the first len bytes of a file of file_size bytes. */
static void
check(const uint8_t *data, size_t len, uint64_t file_size)
{
	struct bloom_header h;
	int s;

	s = bloom_header_parse(data, len, file_size, &h);
	if (bloom_strerror(s) == NULL)
		abort();
	if (s != BLOOM_OK)
		return;
	if (len > file_size)
		len = (size_t)file_size;
	if (h.version == FORMAT_V1)
		check_v1(data, file_size, &h);
	else if (h.version == FORMAT_V2)
		check_v2(data, len, file_size, &h);
	else
		abort();
}

/* Returns where the segments a v2 table claims end, read without any
 * check, or 0 if there is no table to read. */
static uint64_t
claimed_end(const uint8_t *data, size_t size)
{
	uint64_t slots, nsegments, offset, bytes, end = 0, i;
	const uint8_t *slot;

	if (size < V2_HEADER_SIZE)
		return 0;
	slots = (uint64_t)data[36] | (uint64_t)data[37] << 8 |
	    (uint64_t)data[38] << 16 | (uint64_t)data[39] << 24;
	nsegments = read_le64(data + V2_OFF_NSEGMENTS);
	if (nsegments > slots)
		nsegments = slots;
	for (i = 0; i < nsegments && i < SEGMENTS_MAX &&
	    V2_HEADER_SIZE + (i + 1) * SLOT_SIZE <= size; i++) {
		slot = data + V2_HEADER_SIZE + i * SLOT_SIZE;
		offset = read_le64(slot);
		bytes = read_le64(slot + 8);
		if (bytes > UINT64_MAX / BLOCK_BYTES)
			return UINT64_MAX;
		bytes *= BLOCK_BYTES;
		if (offset > UINT64_MAX - bytes)
			return UINT64_MAX;
		if (offset + bytes > end)
			end = offset + bytes;
	}
	return end;
}

static uint32_t
le32_at(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

/* Rewrites the checksums of the len bytes of head, for the version its
 * version field says: a v1 header's, or a v2 header's and those of the
 * table entries it holds. */
static void
mend(unsigned char *head, size_t len)
{
	uint64_t slots, i;
	unsigned char *slot;

	if (len >= 12 && le32_at(head + 8) == FORMAT_V1) {
		if (len >= 72)
			write_le64(head + 64, hash64(head, 64, 0));
		return;
	}
	if (len < V2_HEADER_SIZE)
		return;
	write_le64(head + 128, hash64(head, 128, 0));
	slots = le32_at(head + 36);
	for (i = 0; i < slots && i < SEGMENTS_MAX &&
	    V2_HEADER_SIZE + (i + 1) * SLOT_SIZE <= len; i++) {
		slot = head + V2_HEADER_SIZE + i * SLOT_SIZE;
		write_le64(slot + 40, hash64(slot, 40, i));
	}
}

/* Parses copies of the first len bytes of data as the start of a file
 * of file_size bytes: as they are, and with their checksums mended.  The
 * copies are no longer, so that a read past what the parser was given is
 * caught. */
static void
check_copies(const uint8_t *data, size_t size, size_t len, uint64_t file_size)
{
	unsigned char *head;

	if ((head = malloc(len > 0 ? len : 1)) == NULL)
		abort();
	memset(head, 0, len);
	memcpy(head, data, size < len ? size : len);
	check(head, len, file_size);
	mend(head, len);
	check(head, len, file_size);
	free(head);
}

/* Parses data, size bytes, as the start of a file of file_size bytes:
 * the bytes given, then what bloom_open reads of such a file, at most
 * HEAD_READ bytes, the bytes past size zero. */
static void
check_file(const uint8_t *data, size_t size, uint64_t file_size)
{
	size_t len = file_size < size ? (size_t)file_size : size;

	check_copies(data, size, len, file_size);
	if (file_size > size && size < HEAD_READ)
		check_copies(data, size, file_size < HEAD_READ ?
		    (size_t)file_size : HEAD_READ, file_size);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t end, more;

	check(data, size, size);
	check_file(data, size, size);
	if (size < V2_HEADER_SIZE)
		return 0;
	end = claimed_end(data, size);
	more = data[size - 1];
	if (end != size)
		check_file(data, size, end);
	if (end <= UINT64_MAX - more - 1)
		check_file(data, size, end + more + 1);
	if (end > 0)
		check_file(data, size, end - 1);
	/* Longer than any header and table, whatever the segments. */
	check_file(data, size, 2 * HEAD_READ);
	return 0;
}
