/* SPDX-License-Identifier: ISC */
/* segments.h: interface of segments.c, the segment list of an open
 * filter: which segments exist and are live, which takes adds, and growth
 * and rotation. */
#ifndef BLOOM_SEGMENTS_H
#define BLOOM_SEGMENTS_H

#include <stddef.h>
#include <stdint.h>

#include "store/format.h"

/* Things an add did that the user should hear of: bloom.h gives them to
 * the layers above as BLOOM_EV_*, of the same values. */
#define SEG_EV_GREW	0x1	/* this process appended a segment */
#define SEG_EV_FULL	0x2	/* it took a fixed filter past its capacity */
#define SEG_EV_EARLY	0x4	/* it closed a generation that filled before
				 * its time */
#define SEG_EV_WIDENED	0x8	/* it gave a generation that filled before
				 * its time more room */

struct bloom;
struct segment;

/* Maps the segments b->hdr lists, after the header is mapped.  Returns
 * BLOOM_OK or a status. */
int segments_map(struct bloom *b);

/* Unmaps every segment. */
void segments_unmap(struct bloom *b);

/* Maps every page of b's segments (or of a version 1 file) into the
 * process ahead of its lookups, and notes it in b->prefaulted.  Not the
 * array of an age-partitioned window that adds write: mapped to read,
 * each page would fault again to be written, even when made writable all
 * at once (segments_prefault_writes), which maps a whole folio a fault
 * where nothing is mapped yet. */
void segments_prefault(struct bloom *b);

/* Maps every page of an age-partitioned window's array (mapped with
 * generation 0) writable in one call, ahead of adds many enough to write
 * most of them: a fault per page for writing costs more.  What lookups
 * mapped to read is unmapped first, so that a fault maps a whole folio.
 * It makes every page dirty, to be written back whether an add changed it
 * or not.  Notes it in b->populated. */
void segments_prefault_writes(struct bloom *b);

/* Returns 1 if segments_prefault_writes would make b's array writable:
 * an age-partitioned window open to write. */
int segments_populates(const struct bloom *b);

/* Maps every page of segment s, which is mapped on its own. */
void segments_prefault_one(const struct segment *s);

/* Brings the len bytes of file fd at offset, just allocated, into the
 * page cache in one pass, before any process maps them to write: create
 * does it for a new file, growth for a new segment.  Advice only: failure
 * changes nothing but speed. */
void segments_warm(int fd, uint64_t offset, uint64_t len);

/* Brings the list up to date: maps segments other processes appended,
 * works out the generation now and which segments are live.  Returns
 * BLOOM_OK or a status. */
int segments_refresh(struct bloom *b);

/* Before adding want keys (1 or more): makes sure the target segment can
 * take a key, growing the filter or rotating a window that is due (or
 * full) as needed, and sets *take to how many of the keys the adder takes
 * now, 1 or more: all of them into a fixed filter; else a share of the
 * target's room, for every pass alike, so that adders at once pass its
 * capacity by little.  For a window, holds the lock that rotation waits
 * for until segments_end_add.  Returns BLOOM_OK or a status. */
int segments_begin_add(struct bloom *b, size_t want, size_t *take);

/* Lets rotation go on after segments_begin_add. */
void segments_end_add(struct bloom *b);

/* Counts fresh new keys in segment i, noting SEG_EV_FULL if that took
 * a fixed filter past its capacity. */
void segments_count(struct bloom *b, unsigned i, uint64_t fresh);

/* Appends segments to a growable filter until it has count.  Returns
 * BLOOM_OK or a status. */
int segments_grow_to(struct bloom *b, unsigned count);

/* Raises segment i's inserted counter to at least count, noting
 * SEG_EV_FULL as segments_count does. */
void segments_raise(struct bloom *b, unsigned i, uint64_t count);

/* Starts the generation of window b that is due, if any, then holds off
 * its rotation, by this process or any other, until segments_unhold
 * (adders go on), and refreshes the list: what a merge checks then stays
 * true while it writes.  Returns BLOOM_OK or a status; a no-op for other
 * modes. */
int segments_hold(struct bloom *b);

/* Lets rotation go on after segments_hold. */
void segments_unhold(struct bloom *b);

/* Refreshes the list of b for a reader, which may then read any segment
 * of it until segments_read_end: no rotation gives a window's room back
 * meanwhile (adders and rotations go on).  Returns BLOOM_OK or a status;
 * segments_read_end is due either way. */
int segments_read_begin(struct bloom *b);

/* Ends what segments_read_begin began. */
void segments_read_end(struct bloom *b);

/* Starts a new generation of a window now.  Returns BLOOM_OK or a
 * status. */
int segments_rotate(struct bloom *b);

/* Returns 1 if segment i of b is live as of the last refresh. */
int segments_is_live(const struct bloom *b, unsigned i);

#endif
