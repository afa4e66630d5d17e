/* SPDX-License-Identifier: ISC
 * The on-disk format of a filter, both versions, pure: bytes in, a struct
 * or an error out, so that a fuzzer reaches every byte of it.  All words
 * are little-endian; rates are IEEE 754 binary64.
 *
 * Version 1: a 128-byte header, then one bit array.
 *
 *	offset	size	field
 *	0	8	magic "\211BLOOM\r\n"
 *	8	4	format version (1)
 *	12	4	header size (128)
 *	16	4	layout (1: blocked, 512-bit blocks)
 *	20	4	hash (1: XXH3-64)
 *	24	8	seed
 *	32	8	bit count
 *	40	4	hash count
 *	44	4	reserved, zero
 *	48	8	capacity
 *	56	8	target false-positive rate
 *	64	8	checksum: XXH3-64, seed 0, of bytes 0 to 63
 *	72	8	inserted counter
 *	80	48	reserved, zero
 *
 * Version 2: a 256-byte header, a table of 64-byte segment entries, then
 * the segments, each a bit array starting on a 4096-byte boundary.
 *
 *	0	8	magic
 *	8	4	format version (2)
 *	12	4	header size (256)
 *	16	4	layout (1; 2 for a window of the age-partitioned
 *			layout: table entries 0 to G - 1, the generations,
 *			all describe one array of groups of two blocks, and
 *			the hash count k of each makes k + G - 1 slots, at
 *			most 64, of 1024 / (k + G - 1) bits, at least 8)
 *	20	4	hash (1)
 *	24	8	seed
 *	32	4	mode (0 fixed, 1 grow, 2 window)
 *	36	4	table entries (fixed 1; grow 2 to 64; window G, 2 to 64,
 *			the generations: the table has room for more, the
 *			grown generations, up to 64 entries or the end of
 *			the data offset's page)
 *	40	8	capacity (fixed: keys; grow: of the first segment;
 *			window: distinct keys per window)
 *	48	8	target false-positive rate of the whole filter
 *	56	8	grow: capacity factor F between segments; else 0
 *	64	8	grow: rate factor r between segments; else 0
 *	72	8	window: length in ms, 0 if rotated by hand; else 0
 *	80	8	created, ms since 1970
 *	88	8	data offset: end of the table rounded up to 4096
 *	96	4	slice index I, from 0 (a slice of a fixed filter); else 0
 *	100	4	slice count N; 0 if not a slice
 *	104	8	slice: block count of the whole filter; else 0
 *	112	8	window: bytes the file may grow to, 0 for no limit;
 *			else 0
 *	120	4	window: flags, bit 0 set if sightings do not renew
 *			a key (create --no-renew); else 0
 *	124	4	reserved, zero
 *	128	8	checksum: XXH3-64, seed 0, of bytes 0 to 127
 *	136	8	segments in use (changes as a growable filter grows,
 *			and as a window's generations grow and expire)
 *	144	8	window: newest generation (changes at each rotation)
 *	152	8	timed window: when generation 0 starts by the clock,
 *			ms since 1970, or 0 for created (a rotation by hand
 *			sets it, so that the generation it starts starts
 *			then); else 0
 *	160	96	reserved, zero
 *
 * Segment entry i, at 256 + 64 i:
 *
 *	0	8	offset of the bit array in the file
 *	8	8	block count
 *	16	4	hash count
 *	20	4	reserved, zero
 *	24	8	capacity
 *	32	8	target false-positive rate
 *	40	8	checksum: XXH3-64, seed i, of entry bytes 0 to 39
 *	48	8	inserted counter
 *	56	8	stamp: ms since 1970 when it was made; for a window,
 *			1 + the generation it holds, or 0 if none yet
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>

#include "store/format.h"
#include "hash.h"
#include "lib/endian.h"

#define OFF_MAGIC	0
#define OFF_VERSION	8
#define OFF_HDRSIZE	12
#define OFF_LAYOUT	16
#define OFF_HASH	20
#define OFF_SEED	24

/* Version 1 */
#define V1_OFF_NBITS	32
#define V1_OFF_HASHES	40
#define V1_OFF_RESERVED1 44
#define V1_OFF_CAPACITY	48
#define V1_OFF_FPR	56
#define V1_OFF_CHECKSUM	64
#define V1_OFF_RESERVED2 80

/* Version 2 */
#define V2_OFF_MODE	32
#define V2_OFF_SLOTS	36
#define V2_OFF_CAPACITY	40
#define V2_OFF_FPR	48
#define V2_OFF_GROWTH	56
#define V2_OFF_RATIO	64
#define V2_OFF_WINDOW	72
#define V2_OFF_CREATED	80
#define V2_OFF_DATA	88
#define V2_OFF_SLICE	96
#define V2_OFF_SLICES	100
#define V2_OFF_WHOLE	104
#define V2_OFF_MAX_BYTES 112
#define V2_OFF_FLAGS	120
#define V2_OFF_RESERVED1 124
#define V2_OFF_CHECKSUM	128
#define V2_OFF_RESERVED2 160

/* Segment entry */
#define SLOT_OFF_OFFSET	0
#define SLOT_OFF_NBLOCKS 8
#define SLOT_OFF_HASHES	16
#define SLOT_OFF_RESERVED 20
#define SLOT_OFF_CAPACITY 24
#define SLOT_OFF_FPR	32
#define SLOT_OFF_CHECKSUM 40

static const unsigned char magic[8] = "\211BLOOM\r\n";

static double
read_double(const unsigned char *p)
{
	uint64_t bits = read_le64(p);
	double d;

	memcpy(&d, &bits, sizeof d);
	return d;
}

static void
write_double(unsigned char *p, double d)
{
	uint64_t bits;

	memcpy(&bits, &d, sizeof bits);
	write_le64(p, bits);
}

static int
all_zero(const unsigned char *p, size_t n)
{
	while (n-- > 0)
		if (*p++ != 0)
			return 0;
	return 1;
}

const char *
bloom_strerror(int s)
{
	switch (s) {
	case BLOOM_OK:		return "success";
	case BLOOM_ERRNO:	return strerror(errno);
	case BLOOM_ENOTREG:	return "not a regular file";
	case BLOOM_ESHORT:	return "not a bloom filter (too short)";
	case BLOOM_EMAGIC:	return "not a bloom filter (bad magic)";
	case BLOOM_EVERSION:	return "unsupported format version";
	case BLOOM_EHDRSIZE:	return "corrupt header (bad header size)";
	case BLOOM_ELAYOUT:	return "corrupt header (unknown layout)";
	case BLOOM_EHASH:	return "corrupt header (unknown hash function)";
	case BLOOM_ERESERVED:	return "corrupt header (reserved bytes not zero)";
	case BLOOM_ENBITS:	return "invalid parameters (bit count)";
	case BLOOM_EHASHES:	return "invalid parameters (hash count)";
	case BLOOM_ECAPACITY:	return "invalid parameters (capacity)";
	case BLOOM_EFPR:	return "invalid parameters (target fpr)";
	case BLOOM_ECHECKSUM:	return "corrupt header (checksum mismatch)";
	case BLOOM_ESIZE:	return "size mismatch";
	case BLOOM_ETRUNCATED:
		return "file was truncated or could not be written while in use";
	case BLOOM_EMODE:	return "corrupt header (unknown mode)";
	case BLOOM_ESLOTS:
		return "corrupt header (segment table size absurd for the mode)";
	case BLOOM_EGROWTH:
		return "invalid parameters (growth factor or tightening ratio)";
	case BLOOM_EWINDOW:	return "invalid parameters (window length)";
	case BLOOM_EOFFSET:
		return "corrupt header (data offset is not the end of the "
		    "segment table)";
	case BLOOM_ENSEGMENTS:
		return "corrupt header (segment count absurd for the table)";
	case BLOOM_EEPOCH:	return "corrupt header (generation number)";
	case BLOOM_ESEGCHECKSUM:
		return "corrupt segment table (checksum mismatch)";
	case BLOOM_ESEGRESERVED:
		return "corrupt segment table (reserved bytes not zero)";
	case BLOOM_ESEGALIGN:
		return "corrupt segment table (segment not on a page boundary)";
	case BLOOM_ESEGOVERLAP:
		return "corrupt segment table (segments overlap)";
	case BLOOM_ESEGOUTSIDE:
		return "corrupt segment table (segment past the end of file)";
	case BLOOM_ESEGSTAMP:
		return "corrupt segment table (generation newer than the "
		    "filter's)";
	case BLOOM_ESEGMENTS_FULL:
		return "cannot grow: the segment table is full";
	case BLOOM_ESLICE:
		return "corrupt header (slice fields absurd)";
	case BLOOM_ESLICE_MODE:
		return "only a fixed filter can be sliced";
	case BLOOM_ESLICE_DIVIDE:
		return "its blocks do not divide into that many slices (make it "
		    "with create --slices)";
	case BLOOM_ETOOBIG:
		return "cannot grow: the next segment would pass the size limit";
	case BLOOM_EDANGLING:
		return "a symbolic link to a file that does not exist";
	case BLOOM_EEPOCH_LAST:
		return "the window has reached its last generation (2^62)";
	case BLOOM_EAPBF:
		return "corrupt segment table (age-partitioned generations "
		    "differ)";
	}
	return "unknown error";
}

static int
fpr_ok(double p)
{
	return p > 0.0 && p < 1.0;
}

/* Reads the fields every version has at the same place. */
static int
parse_common(const unsigned char *buf, size_t len, struct bloom_header *h)
{
	if (len < sizeof magic)
		return BLOOM_ESHORT;
	if (memcmp(buf + OFF_MAGIC, magic, sizeof magic) != 0)
		return BLOOM_EMAGIC;
	if (len < OFF_SEED + 8)
		return BLOOM_ESHORT;
	h->version = read_le32(buf + OFF_VERSION);
	h->header_size = read_le32(buf + OFF_HDRSIZE);
	h->layout = read_le32(buf + OFF_LAYOUT);
	h->hash_id = read_le32(buf + OFF_HASH);
	h->seed = read_le64(buf + OFF_SEED);
	if (h->version != FORMAT_V1 && h->version != FORMAT_V2)
		return BLOOM_EVERSION;
	if (h->header_size != (h->version == FORMAT_V1 ? V1_HEADER_SIZE :
	    V2_HEADER_SIZE))
		return BLOOM_EHDRSIZE;
	if (len < h->header_size)
		return BLOOM_ESHORT;
	if (h->layout != LAYOUT_BLOCKED512 && (h->layout != LAYOUT_APBF ||
	    h->version != FORMAT_V2))
		return BLOOM_ELAYOUT;
	if (h->hash_id != HASH_XXH3_64)
		return BLOOM_EHASH;
	return BLOOM_OK;
}

static int
parse_v1(const unsigned char *buf, uint64_t file_size, struct bloom_header *h)
{
	struct segment_info *s = &h->seg[0];

	h->nbits = read_le64(buf + V1_OFF_NBITS);
	s->hashes = read_le32(buf + V1_OFF_HASHES);
	s->capacity = read_le64(buf + V1_OFF_CAPACITY);
	s->target_fpr = read_double(buf + V1_OFF_FPR);
	h->checksum = read_le64(buf + V1_OFF_CHECKSUM);
	s->inserted = read_le64(buf + V1_OFF_INSERTED);
	s->offset = V1_HEADER_SIZE;
	h->mode = MODE_FIXED;
	h->slots = 1;
	h->nsegments = 1;
	h->capacity = s->capacity;
	h->target_fpr = s->target_fpr;
	h->data_offset = V1_HEADER_SIZE;

	if (!all_zero(buf + V1_OFF_RESERVED1, 4) ||
	    !all_zero(buf + V1_OFF_RESERVED2, V1_HEADER_SIZE - V1_OFF_RESERVED2))
		return BLOOM_ERESERVED;
	if (h->nbits == 0 || h->nbits % BLOCK_BITS != 0 ||
	    h->nbits / BLOCK_BITS > NBLOCKS_MAX)
		return BLOOM_ENBITS;
	s->nblocks = h->nbits / BLOCK_BITS;
	if (s->hashes == 0 || s->hashes > HASHES_MAX)
		return BLOOM_EHASHES;
	if (s->capacity == 0)
		return BLOOM_ECAPACITY;
	if (!fpr_ok(s->target_fpr))
		return BLOOM_EFPR;
	if (h->checksum != hash64(buf, V1_OFF_CHECKSUM, 0))
		return BLOOM_ECHECKSUM;
	/* No overflow: nbits / 8 is at most 2^46. */
	h->file_size = V1_HEADER_SIZE + h->nbits / 8;
	if (h->file_size != file_size)
		return BLOOM_ESIZE;
	return BLOOM_OK;
}

/* Returns offset rounded up to a page. */
static uint64_t
page_up(uint64_t offset)
{
	return (offset + FILE_PAGE - 1) / FILE_PAGE * FILE_PAGE;
}

uint64_t
format_data_offset(uint32_t slots)
{
	return page_up(V2_HEADER_SIZE + (uint64_t)slots * SLOT_SIZE);
}

uint32_t
format_table_room(uint32_t slots)
{
	uint64_t room = (format_data_offset(slots) - V2_HEADER_SIZE) /
	    SLOT_SIZE;

	return room < SEGMENTS_MAX ? (uint32_t)room : SEGMENTS_MAX;
}

uint64_t
format_segment_end(const struct segment_info *s)
{
	return s->offset + s->nblocks * BLOCK_BYTES;
}

uint64_t
format_next_offset(const struct segment_info *s)
{
	return page_up(format_segment_end(s));
}

uint64_t
format_slot_offset(unsigned i)
{
	return V2_HEADER_SIZE + (uint64_t)i * SLOT_SIZE;
}

int
format_slot_parse(const unsigned char *slot, unsigned index,
    const struct bloom_header *h, uint64_t min_offset, uint64_t file_size,
    struct segment_info *s)
{
	s->offset = read_le64(slot + SLOT_OFF_OFFSET);
	s->nblocks = read_le64(slot + SLOT_OFF_NBLOCKS);
	s->hashes = read_le32(slot + SLOT_OFF_HASHES);
	s->capacity = read_le64(slot + SLOT_OFF_CAPACITY);
	s->target_fpr = read_double(slot + SLOT_OFF_FPR);
	s->inserted = read_le64(slot + SLOT_OFF_INSERTED);
	s->stamp = read_le64(slot + SLOT_OFF_STAMP);

	if (!all_zero(slot + SLOT_OFF_RESERVED, 4))
		return BLOOM_ESEGRESERVED;
	if (s->nblocks == 0 || s->nblocks > NBLOCKS_MAX)
		return BLOOM_ENBITS;
	if (s->hashes == 0 || s->hashes > HASHES_MAX)
		return BLOOM_EHASHES;
	if (s->capacity == 0)
		return BLOOM_ECAPACITY;
	if (!fpr_ok(s->target_fpr))
		return BLOOM_EFPR;
	if (read_le64(slot + SLOT_OFF_CHECKSUM) !=
	    hash64(slot, SLOT_OFF_CHECKSUM, index))
		return BLOOM_ESEGCHECKSUM;
	if (s->offset % FILE_PAGE != 0)
		return BLOOM_ESEGALIGN;
	if (s->offset < min_offset)
		return BLOOM_ESEGOVERLAP;
	/* No overflow: offset is below file_size here, and the array is at
	 * most 2^46 bytes. */
	if (s->offset >= file_size ||
	    s->nblocks * BLOCK_BYTES > file_size - s->offset)
		return BLOOM_ESEGOUTSIDE;
	if (h->mode == MODE_WINDOW && s->stamp > h->epoch &&
	    s->stamp - h->epoch > 1)
		return BLOOM_ESEGSTAMP;
	return BLOOM_OK;
}

/* Returns 1 if generation i of an age-partitioned window h is as the
 * layout needs: the array of entry 0, in whole groups, with a hash count
 * that makes a layout of h's generations (params.h). */
static int
apbf_entry_ok(const struct bloom_header *h, unsigned i)
{
	const struct segment_info *s = &h->seg[i], *first = &h->seg[0];
	unsigned slots = s->hashes + h->slots - 1;

	if (s->offset != first->offset || s->nblocks != first->nblocks ||
	    s->hashes != first->hashes)
		return 0;
	return s->nblocks % APBF_GROUP_BLOCKS == 0 &&
	    s->hashes <= APBF_K_MAX && slots <= APBF_SLOTS_MAX &&
	    APBF_GROUP_BITS / slots >= APBF_W_MIN;
}

/* Checks the fields of a v2 header that say what the filter is. */
static int
check_v2_mode(const struct bloom_header *h)
{
	switch (h->mode) {
	case MODE_FIXED:
		if (h->slots != 1)
			return BLOOM_ESLOTS;
		if (h->growth != 0.0 || h->ratio != 0.0)
			return BLOOM_EGROWTH;
		if (h->window_ms != 0)
			return BLOOM_EWINDOW;
		break;
	case MODE_GROW:
		if (h->slots < 2 || h->slots > SEGMENTS_MAX)
			return BLOOM_ESLOTS;
		if (!(h->growth >= GROWTH_MIN && h->growth <= GROWTH_MAX) ||
		    !(h->ratio > 0.0 && h->ratio < 1.0))
			return BLOOM_EGROWTH;
		if (h->window_ms != 0)
			return BLOOM_EWINDOW;
		break;
	case MODE_WINDOW:
		if (h->slots < 2 || h->slots > SEGMENTS_MAX)
			return BLOOM_ESLOTS;
		if (h->growth != 0.0 || h->ratio != 0.0)
			return BLOOM_EGROWTH;
		/* A generation lasts window / (G - 1): at least 1 ms. */
		if (h->window_ms > WINDOW_MS_MAX || (h->window_ms != 0 &&
		    h->window_ms < h->slots - 1))
			return BLOOM_EWINDOW;
		break;
	default:
		return BLOOM_EMODE;
	}
	/* Only a window has a size limit: elsewhere the bytes are reserved. */
	if (h->mode != MODE_WINDOW && h->max_bytes != 0)
		return BLOOM_ERESERVED;
	/* Flags are a window's, and a flag this version does not know would
	 * change what its adds mean: refused, as an older bloom does. */
	if ((h->flags & ~(uint32_t)WINDOW_FLAGS_KNOWN) != 0 ||
	    (h->mode != MODE_WINDOW && h->flags != 0))
		return BLOOM_ERESERVED;
	return BLOOM_OK;
}

static int
parse_v2(const unsigned char *buf, size_t len, uint64_t file_size,
    struct bloom_header *h)
{
	uint64_t min_offset, end;
	unsigned i;
	int s;

	h->mode = read_le32(buf + V2_OFF_MODE);
	h->slots = read_le32(buf + V2_OFF_SLOTS);
	h->capacity = read_le64(buf + V2_OFF_CAPACITY);
	h->target_fpr = read_double(buf + V2_OFF_FPR);
	h->growth = read_double(buf + V2_OFF_GROWTH);
	h->ratio = read_double(buf + V2_OFF_RATIO);
	h->window_ms = read_le64(buf + V2_OFF_WINDOW);
	h->created_ms = read_le64(buf + V2_OFF_CREATED);
	h->data_offset = read_le64(buf + V2_OFF_DATA);
	h->slice = read_le32(buf + V2_OFF_SLICE);
	h->slices = read_le32(buf + V2_OFF_SLICES);
	h->whole_nblocks = read_le64(buf + V2_OFF_WHOLE);
	h->max_bytes = read_le64(buf + V2_OFF_MAX_BYTES);
	h->flags = read_le32(buf + V2_OFF_FLAGS);
	h->checksum = read_le64(buf + V2_OFF_CHECKSUM);
	h->nsegments = read_le64(buf + V2_OFF_NSEGMENTS);
	h->epoch = read_le64(buf + V2_OFF_EPOCH);
	h->base_ms = read_le64(buf + V2_OFF_BASE);

	if (!all_zero(buf + V2_OFF_RESERVED1, V2_OFF_CHECKSUM -
	    V2_OFF_RESERVED1) || !all_zero(buf + V2_OFF_RESERVED2,
	    V2_HEADER_SIZE - V2_OFF_RESERVED2) || (h->base_ms != 0 &&
	    (h->mode != MODE_WINDOW || h->window_ms == 0)))
		return BLOOM_ERESERVED;
	/* The age-partitioned layout is a window's: on a fixed or growable
	 * filter, the layout is what is wrong, whatever else is. */
	if (h->layout == LAYOUT_APBF && (h->mode == MODE_FIXED ||
	    h->mode == MODE_GROW))
		return BLOOM_ELAYOUT;
	if ((s = check_v2_mode(h)) != BLOOM_OK)
		return s;
	if (h->capacity == 0)
		return BLOOM_ECAPACITY;
	if (!fpr_ok(h->target_fpr))
		return BLOOM_EFPR;
	if (h->data_offset != format_data_offset(h->slots))
		return BLOOM_EOFFSET;
	if (h->slices == 0 ? h->slice != 0 || h->whole_nblocks != 0 :
	    h->mode != MODE_FIXED || h->slice >= h->slices ||
	    h->whole_nblocks == 0 || h->whole_nblocks > NBLOCKS_MAX ||
	    h->whole_nblocks % h->slices != 0)
		return BLOOM_ESLICE;
	if (h->checksum != hash64(buf, V2_OFF_CHECKSUM, 0))
		return BLOOM_ECHECKSUM;
	if (h->nsegments == 0 || (h->mode == MODE_WINDOW ? h->nsegments <
	    h->slots || h->nsegments > format_table_room(h->slots) :
	    h->nsegments > h->slots || (h->mode == MODE_FIXED &&
	    h->nsegments != h->slots)))
		return BLOOM_ENSEGMENTS;
	if (h->mode != MODE_WINDOW ? h->epoch != 0 : h->epoch > EPOCH_MAX)
		return BLOOM_EEPOCH;
	if (len < V2_HEADER_SIZE + (uint64_t)(h->nsegments > h->slots ?
	    h->nsegments : h->slots) * SLOT_SIZE)
		return BLOOM_ESHORT;
	/* The table is read as if the file were as long as a filter may
	 * be, so that a file cut short says how long it should be. */
	min_offset = h->data_offset;
	for (i = 0; i < h->nsegments; i++) {
		/* The generations of the age-partitioned layout share the
		 * first one's array. */
		if (h->layout == LAYOUT_APBF && i > 0 && i < h->slots)
			min_offset = h->seg[0].offset;
		s = format_slot_parse(buf + V2_HEADER_SIZE + i * SLOT_SIZE, i,
		    h, min_offset, file_size > FORMAT_FILE_MAX ? file_size :
		    FORMAT_FILE_MAX, &h->seg[i]);
		if (s != BLOOM_OK)
			return s;
		if (h->layout == LAYOUT_APBF && i < h->slots &&
		    !apbf_entry_ok(h, i))
			return BLOOM_EAPBF;
		end = format_segment_end(&h->seg[i]);
		min_offset = format_next_offset(&h->seg[i]);
	}
	if (h->slices != 0 &&
	    h->seg[0].nblocks != h->whole_nblocks / h->slices)
		return BLOOM_ESLICE;
	/* A growable filter or a window may be longer than its segments: a
	 * growth that was killed before it took its table entry leaves the
	 * space it allocated, which the next growth uses, and so does a
	 * window killed as it gave back the room of expired generations. */
	h->file_size = end;
	if (h->mode != MODE_FIXED ? file_size < end : file_size != end)
		return BLOOM_ESIZE;
	return BLOOM_OK;
}

int
bloom_header_parse(const unsigned char *buf, size_t len, uint64_t file_size,
    struct bloom_header *h)
{
	int s;

	memset(h, 0, sizeof *h);
	if (len > file_size)
		len = (size_t)file_size;
	if ((s = parse_common(buf, len, h)) != BLOOM_OK)
		return s;
	if (h->version == FORMAT_V1)
		return parse_v1(buf, file_size, h);
	return parse_v2(buf, len, file_size, h);
}

void
format_header_build(unsigned char *buf, const struct bloom_header *h)
{
	memset(buf, 0, V2_HEADER_SIZE);
	memcpy(buf + OFF_MAGIC, magic, sizeof magic);
	write_le32(buf + OFF_VERSION, FORMAT_V2);
	write_le32(buf + OFF_HDRSIZE, V2_HEADER_SIZE);
	write_le32(buf + OFF_LAYOUT, h->layout == LAYOUT_APBF ? LAYOUT_APBF :
	    LAYOUT_BLOCKED512);
	write_le32(buf + OFF_HASH, HASH_XXH3_64);
	write_le64(buf + OFF_SEED, h->seed);
	write_le32(buf + V2_OFF_MODE, h->mode);
	write_le32(buf + V2_OFF_SLOTS, h->slots);
	write_le64(buf + V2_OFF_CAPACITY, h->capacity);
	write_double(buf + V2_OFF_FPR, h->target_fpr);
	write_double(buf + V2_OFF_GROWTH, h->growth);
	write_double(buf + V2_OFF_RATIO, h->ratio);
	write_le64(buf + V2_OFF_WINDOW, h->window_ms);
	write_le64(buf + V2_OFF_CREATED, h->created_ms);
	write_le64(buf + V2_OFF_DATA, format_data_offset(h->slots));
	write_le32(buf + V2_OFF_SLICE, h->slice);
	write_le32(buf + V2_OFF_SLICES, h->slices);
	write_le64(buf + V2_OFF_WHOLE, h->whole_nblocks);
	write_le64(buf + V2_OFF_MAX_BYTES, h->max_bytes);
	write_le32(buf + V2_OFF_FLAGS, h->flags);
	write_le64(buf + V2_OFF_CHECKSUM, hash64(buf, V2_OFF_CHECKSUM, 0));
	write_le64(buf + V2_OFF_NSEGMENTS, h->nsegments);
	write_le64(buf + V2_OFF_EPOCH, h->epoch);
	write_le64(buf + V2_OFF_BASE, h->base_ms);
}

uint64_t
format_clock_base(const struct bloom_header *h)
{
	return h->base_ms != 0 ? h->base_ms : h->created_ms;
}

/* ==== Layouts by name ==== */

/* Each layout the format knows: its id, create --layout's name for it and
 * the name stats gives it. */
static const struct layout_name {
	uint32_t id;
	const char *option;
	const char *name;
} layouts[] = {
	{ LAYOUT_BLOCKED512, "blocked", "blocked512" },
	{ LAYOUT_APBF, "apbf", "apbf" },
};

/* Returns the entry of layouts[] for id l, or NULL. */
static const struct layout_name *
layout_named(uint32_t l)
{
	size_t i;

	for (i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
		if (layouts[i].id == l)
			return &layouts[i];
	return NULL;
}

const char *
format_layout_option(uint32_t l)
{
	const struct layout_name *n = layout_named(l);

	return n != NULL ? n->option : NULL;
}

const char *
format_layout_name(uint32_t l)
{
	const struct layout_name *n = layout_named(l);

	return n != NULL ? n->name : NULL;
}

int
format_layout_parse(const char *name, uint32_t *l)
{
	size_t i;

	for (i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
		if (strcmp(layouts[i].option, name) == 0) {
			*l = layouts[i].id;
			return 0;
		}
	return -1;
}

int
format_layout_detail(const struct bloom_header *h, char *buf, size_t size)
{
	unsigned slots = h->seg[0].hashes + h->slots - 1;

	if (h->layout == LAYOUT_APBF)
		return snprintf(buf, size, "age-partitioned: %u slots of %u "
		    "bits in %u-bit groups", slots, APBF_GROUP_BITS / slots,
		    APBF_GROUP_BITS);
	return snprintf(buf, size, "%u-bit blocks", BLOCK_BITS);
}

void
format_slot_build(unsigned char *slot, unsigned index,
    const struct segment_info *s)
{
	memset(slot, 0, SLOT_SIZE);
	write_le64(slot + SLOT_OFF_OFFSET, s->offset);
	write_le64(slot + SLOT_OFF_NBLOCKS, s->nblocks);
	write_le32(slot + SLOT_OFF_HASHES, s->hashes);
	write_le64(slot + SLOT_OFF_CAPACITY, s->capacity);
	write_double(slot + SLOT_OFF_FPR, s->target_fpr);
	write_le64(slot + SLOT_OFF_CHECKSUM, hash64(slot, SLOT_OFF_CHECKSUM,
	    index));
	write_le64(slot + SLOT_OFF_INSERTED, s->inserted);
	write_le64(slot + SLOT_OFF_STAMP, s->stamp);
}

void
format_v1_build(unsigned char *buf, const struct params *p, uint64_t seed)
{
	memset(buf, 0, V1_HEADER_SIZE);
	memcpy(buf + OFF_MAGIC, magic, sizeof magic);
	write_le32(buf + OFF_VERSION, FORMAT_V1);
	write_le32(buf + OFF_HDRSIZE, V1_HEADER_SIZE);
	write_le32(buf + OFF_LAYOUT, LAYOUT_BLOCKED512);
	write_le32(buf + OFF_HASH, HASH_XXH3_64);
	write_le64(buf + OFF_SEED, seed);
	write_le64(buf + V1_OFF_NBITS, p->nblocks * BLOCK_BITS);
	write_le32(buf + V1_OFF_HASHES, p->hashes);
	write_le64(buf + V1_OFF_CAPACITY, p->capacity);
	write_double(buf + V1_OFF_FPR, p->target_fpr);
	write_le64(buf + V1_OFF_CHECKSUM, hash64(buf, V1_OFF_CHECKSUM, 0));
}

uint64_t
format_word_load(const uint64_t *word)
{
	return le64(__atomic_load_n(word, __ATOMIC_ACQUIRE));
}

void
format_word_store(uint64_t *word, uint64_t v)
{
	__atomic_store_n(word, le64(v), __ATOMIC_RELEASE);
}

uint64_t
format_word_add(uint64_t *word, uint64_t v)
{
	uint64_t old = __atomic_load_n(word, __ATOMIC_RELAXED), sum;

	do {
		sum = le64(old) + v;
		if (sum < v)
			sum = UINT64_MAX;
	} while (!__atomic_compare_exchange_n(word, &old, le64(sum), 1,
	    __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return le64(old);
}

uint64_t
format_word_raise(uint64_t *word, uint64_t v)
{
	uint64_t old = __atomic_load_n(word, __ATOMIC_RELAXED);

	do {
		if (le64(old) >= v)
			break;
	} while (!__atomic_compare_exchange_n(word, &old, le64(v), 1,
	    __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return le64(old);
}

uint64_t
format_epoch(const unsigned char *head)
{
	return format_word_load((const uint64_t *)(const void *)(head +
	    V2_OFF_EPOCH));
}
