/* SPDX-License-Identifier: ISC */
/* holes.h: interface of holes.c, the holes of a sparse filter file: found
 * with SEEK_DATA and SEEK_HOLE, read as zero bits without reading. */
#ifndef BLOOM_HOLES_H
#define BLOOM_HOLES_H

#include <stddef.h>
#include <stdint.h>

#define HOLES_MAX	4096	/* holes a read-only mapping hides, at most */

/* Returns 1 if the file fd of size bytes has a hole, else 0 (also where
 * the file system cannot tell). */
int holes_any(int fd, uint64_t size);

/* Finds the first data at or after off and before end in fd: sets *from
 * and *to to its bounds (clipped to [off, end)) and returns 1, or returns
 * 0 if the rest is a hole.  Where the file system cannot tell, all of it
 * is data. */
int holes_next_data(int fd, uint64_t off, uint64_t end, uint64_t *from,
    uint64_t *to);

/* Replaces the pages of map, a read-only mapping of size bytes of fd from
 * file offset off (page-aligned), that lie in holes of the file with
 * private zero pages, so that reading them allocates nothing, not even on
 * tmpfs.  Returns 0, or -1 with errno set (E2BIG: more than HOLES_MAX
 * holes). */
int holes_hide(int fd, unsigned char *map, uint64_t off, size_t size);

#endif
