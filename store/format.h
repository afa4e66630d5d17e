/* SPDX-License-Identifier: ISC */
/* format.h: interface of format.c, the on-disk format of a filter file:
 * encoding and validating its header and segment table, bytes in, struct
 * or error out.  Pure: no I/O. */
#ifndef BLOOM_FORMAT_H
#define BLOOM_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "params.h"

#define FORMAT_V1		1	/* one array after a 128-byte header */
#define FORMAT_V2		2	/* a segment table, segments on pages */
#define V1_HEADER_SIZE		128	/* bytes before a v1 bit array */
#define V2_HEADER_SIZE		256	/* bytes before a v2 segment table */
#define SLOT_SIZE		64	/* bytes of a segment table entry */
#define SEGMENTS_MAX		64	/* entries in a segment table, at most */
#define FILE_PAGE		4096	/* v2 segments start on multiples */
#define LAYOUT_BLOCKED512	1	/* layout id: 512-bit blocks */
#define LAYOUT_APBF		2	/* layout id: a window whose
					 * generations share one
					 * age-partitioned array (params.h) */
#define HASH_XXH3_64		1	/* hash id: XXH3-64 */
#define WINDOW_NO_RENEW		1	/* window flag: a key is remembered
					 * from when it was first added; a
					 * sighting does not renew it */
#define WINDOW_FLAGS_KNOWN	WINDOW_NO_RENEW
#define GROWTH_MIN		1.25	/* growth factor of a growable filter */
#define GROWTH_MAX		16.0
#define WINDOW_MS_MAX	((uint64_t)1 << 52)	/* about 142 000 years */
#define EPOCH_MAX	((uint64_t)1 << 62)	/* generations a window may
						 * reach: never wraps */
#define FORMAT_FILE_MAX	((uint64_t)1 << 47)	/* bytes a filter may have */

/* Offsets of the fields that change while a v2 filter is in use, outside
 * the checksums, for the code that updates them in place. */
#define V2_OFF_NSEGMENTS	136	/* segments in use */
#define V2_OFF_EPOCH		144	/* newest generation of a window */
#define V2_OFF_BASE		152	/* when a timed window's generation 0
					 * starts by the clock, 0: created */
#define V1_OFF_INSERTED		72	/* the v1 inserted counter */
#define SLOT_OFF_INSERTED	48	/* a segment's inserted counter */
#define SLOT_OFF_STAMP		56	/* when made, or its generation */

/* What a filter does when it fills. */
enum filter_mode {
	MODE_FIXED = 0,		/* one segment; never grows */
	MODE_GROW = 1,		/* appends larger, tighter segments */
	MODE_WINDOW = 2		/* G generations, the oldest forgotten */
};

/* What format and open can fail with; FORMAT_ERRNO means see errno. */
enum bloom_status {
	BLOOM_OK = 0,
	BLOOM_ERRNO,		/* a system call failed; errno says why */
	BLOOM_ENOTREG,		/* not a regular file */
	BLOOM_ESHORT,		/* shorter than a header */
	BLOOM_EMAGIC,		/* bad magic */
	BLOOM_EVERSION,		/* unsupported format version */
	BLOOM_EHDRSIZE,		/* header size is not ours */
	BLOOM_ELAYOUT,		/* unknown layout id */
	BLOOM_EHASH,		/* unknown hash id */
	BLOOM_ERESERVED,	/* reserved header bytes are not zero */
	BLOOM_ENBITS,		/* bit count zero, not whole blocks, too large */
	BLOOM_EHASHES,		/* hash count out of range */
	BLOOM_ECAPACITY,	/* capacity zero */
	BLOOM_EFPR,		/* target fpr not in (0, 1) */
	BLOOM_ECHECKSUM,	/* header checksum mismatch */
	BLOOM_ESIZE,		/* file size differs from the header's */
	BLOOM_ETRUNCATED,	/* file shrank while mapped */
	BLOOM_EMODE,		/* unknown mode */
	BLOOM_ESLOTS,		/* table size absurd for the mode */
	BLOOM_EGROWTH,		/* growth factor or ratio out of range */
	BLOOM_EWINDOW,		/* window length absurd */
	BLOOM_EOFFSET,		/* data offset is not where the table ends */
	BLOOM_ENSEGMENTS,	/* segments in use absurd for the table */
	BLOOM_EEPOCH,		/* generation number absurd */
	BLOOM_ESEGCHECKSUM,	/* a segment entry's checksum mismatch */
	BLOOM_ESEGRESERVED,	/* a segment entry's reserved bytes set */
	BLOOM_ESEGALIGN,	/* a segment not on a page boundary */
	BLOOM_ESEGOVERLAP,	/* a segment overlaps the table or another */
	BLOOM_ESEGOUTSIDE,	/* a segment reaches past the end of file */
	BLOOM_ESEGSTAMP,	/* a generation newer than the filter's */
	BLOOM_ESEGMENTS_FULL,	/* a growable filter has no free entry */
	BLOOM_ETOOBIG,		/* the next segment would pass the limit */
	BLOOM_ESLICE,		/* slice fields absurd */
	BLOOM_ESLICE_MODE,	/* only a whole fixed filter is sliced */
	BLOOM_ESLICE_DIVIDE,	/* the slices do not divide the blocks */
	BLOOM_EDANGLING,	/* create -f: a symbolic link to nothing */
	BLOOM_EEPOCH_LAST,	/* a window at its last generation */
	BLOOM_EAPBF		/* age-partitioned generations differ, or
				 * their hash count makes no layout */
};

/* One segment: a blocked bit array and what it was sized for. */
struct segment_info {
	uint64_t offset;	/* bytes from the start of the file */
	uint64_t nblocks;	/* 64-byte blocks */
	unsigned hashes;	/* bit positions per key */
	uint64_t capacity;	/* keys it is sized for */
	double target_fpr;	/* its false-positive rate at capacity */
	uint64_t inserted;	/* keys that set a bit in it, when read */
	uint64_t stamp;		/* v2: ms it was made (grow, fixed), or
				 * 1 + the generation it holds (window) */
};

/* The header of a filter file, decoded to host order.  A v1 file is read
 * as a fixed filter of one segment. */
struct bloom_header {
	uint32_t version;	/* FORMAT_V1 or FORMAT_V2 */
	uint32_t header_size;	/* V1_HEADER_SIZE or V2_HEADER_SIZE */
	uint32_t layout;	/* LAYOUT_BLOCKED512, or LAYOUT_APBF (v2
				 * windows only) */
	uint32_t hash_id;	/* HASH_XXH3_64 */
	uint64_t seed;		/* hash seed of every segment */
	uint32_t mode;		/* enum filter_mode */
	uint32_t slots;		/* entries in the segment table */
	uint64_t capacity;	/* fixed: keys; grow: of the first segment;
				 * window: distinct keys per window */
	double target_fpr;	/* the whole filter's false-positive rate */
	double growth;		/* grow: capacity factor between segments */
	double ratio;		/* grow: rate factor between segments */
	uint64_t window_ms;	/* window: its length, 0 if by hand */
	uint64_t created_ms;	/* when it was made, ms since 1970 */
	uint64_t data_offset;	/* where the first segment starts */
	uint32_t slice;		/* a slice: which, from 0 */
	uint32_t slices;	/* a slice: of how many; 0 if not one */
	uint64_t whole_nblocks;	/* a slice: blocks of the whole filter */
	uint64_t max_bytes;	/* window: bytes the file may grow to, as
				 * generations grow; 0 for no limit */
	uint32_t flags;		/* window: WINDOW_* flags; else 0 */
	uint64_t checksum;	/* of the fields that never change */
	uint64_t nsegments;	/* segments in use, when read */
	uint64_t epoch;		/* window: the newest generation, when read */
	uint64_t base_ms;	/* timed window: when generation 0 starts by
				 * the clock, as stored, when read: 0 for the
				 * creation time (format_clock_base) */
	uint64_t file_size;	/* bytes the file needs (at least, for grow) */
	struct segment_info seg[SEGMENTS_MAX];	/* the segments in use */
	/* For messages about a v1 header: */
	uint64_t nbits;		/* v1: bits in the array */
};

/* Returns a short lower-case description of status s. */
const char *bloom_strerror(int s);

/* Decodes and validates the header and segment table in the first len
 * bytes of a file of file_size bytes (len may be less than the file: the
 * bytes up to the end of the table are enough).  Returns BLOOM_OK or the
 * first problem found; h holds what was decoded. */
int bloom_header_parse(const unsigned char *buf, size_t len,
    uint64_t file_size, struct bloom_header *h);

/* Returns the bytes of header and table a v2 file of h's mode needs
 * before its first segment: a multiple of FILE_PAGE. */
uint64_t format_data_offset(uint32_t slots);

/* Returns the entries the table of a window of slots generations has
 * room for, the grown generations' included: up to SEGMENTS_MAX, within
 * the data offset. */
uint32_t format_table_room(uint32_t slots);

/* Returns the offset just past segment s's bit array. */
uint64_t format_segment_end(const struct segment_info *s);

/* Returns where the segment after s starts, at the earliest: v2 segments
 * start on a page, the first one after s's end. */
uint64_t format_next_offset(const struct segment_info *s);

/* Returns the offset of table entry i of a v2 file. */
uint64_t format_slot_offset(unsigned i);

/* Decodes and validates table entry index of a v2 filter h, which must
 * start at or after min_offset, in a file of file_size bytes.  Returns
 * BLOOM_OK or the problem. */
int format_slot_parse(const unsigned char *slot, unsigned index,
    const struct bloom_header *h, uint64_t min_offset, uint64_t file_size,
    struct segment_info *s);

/* Encodes a fresh v2 header for h (every field but checksum, nsegments,
 * epoch and file_size read) into buf[V2_HEADER_SIZE], with nsegments and
 * epoch as given. */
void format_header_build(unsigned char *buf, const struct bloom_header *h);

/* Encodes table entry index for s into slot[SLOT_SIZE]. */
void format_slot_build(unsigned char *slot, unsigned index,
    const struct segment_info *s);

/* Encodes a v1 header for one array of p and seed into
 * buf[V1_HEADER_SIZE]. */
void format_v1_build(unsigned char *buf, const struct params *p,
    uint64_t seed);

/*
 * The words that change while a filter is in use (the *_OFF_ fields
 * above, in a mapping of the file), which other processes read and change
 * at once: little-endian, and read and written whole, atomically.
 */

/* Returns the value of word. */
uint64_t format_word_load(const uint64_t *word);

/* Sets word to v. */
void format_word_store(uint64_t *word, uint64_t v);

/* Adds v to word, stopping at UINT64_MAX rather than wrapping; returns
 * the value before. */
uint64_t format_word_add(uint64_t *word, uint64_t v);

/* Raises word to v if it is less; returns the value before. */
uint64_t format_word_raise(uint64_t *word, uint64_t v);

/* Returns the newest generation that the mapped header head of a window
 * says now. */
uint64_t format_epoch(const unsigned char *head);

/* When generation 0 of timed window h starts by the clock: its stored
 * base, or its creation time if none was stored. */
uint64_t format_clock_base(const struct bloom_header *h);

/* ==== Layouts by name ==== */

/* Returns the name create --layout takes for layout l ("blocked",
 * "apbf"), or NULL if the format knows no such layout. */
const char *format_layout_option(uint32_t l);

/* Returns the name stats gives layout l ("blocked512", "apbf"), or NULL
 * if the format knows no such layout. */
const char *format_layout_name(uint32_t l);

/* Sets *l to the layout whose create --layout name is name.  Returns 0,
 * or -1 if no layout has that name. */
int format_layout_parse(const char *name, uint32_t *l);

/* Writes into buf, of size bytes (with its NUL), what a block of h's
 * layout holds, for stats and the dry run: "512-bit blocks", or for an
 * age-partitioned window "age-partitioned: S slots of W bits in
 * 1024-bit groups".  Returns what snprintf(3) does. */
int format_layout_detail(const struct bloom_header *h, char *buf,
    size_t size);

/* Memory that add --new takes beyond the caller's: the claim table it
 * shares with the other adders of the filter (claims.c), and per new key
 * of a chunk tested at once, what finding repeats in it may take
 * (mates.c). */
#define BLOOM_CLAIMS_BYTES	((uint64_t)4096 + ((uint64_t)1 << 16) * 64)
#define BLOOM_REPEATS_KEY_BYTES	32

#endif
