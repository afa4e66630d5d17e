/* SPDX-License-Identifier: ISC */
/* create.h: interface of create.c, making filter files atomically, as
 * store/plan.h sizes them. */
#ifndef BLOOM_CREATE_H
#define BLOOM_CREATE_H

#include <stdint.h>

#include "bloom.h"
#include "store/format.h"
#include "store/plan.h"

/* Creates the filter file path for spec, fully allocated, atomically: the
 * file appears whole or not at all.  Unless force, an existing path is
 * left alone and the call fails with errno EEXIST.  With force it replaces
 * only a filter (BLOOM_ENOTREG, BLOOM_ESHORT or BLOOM_EMAGIC otherwise;
 * errno EISDIR for a directory), keeping its mode and group, and the
 * file a symbolic link leads to rather than the link (BLOOM_EDANGLING if
 * it leads to nothing).  Calls on_wait (unless NULL) once if it has
 * waited a second for the users of the file it replaces.  Returns BLOOM_OK, or
 * BLOOM_ERRNO with errno set, or the status of a spec that cannot be
 * sized. */
int bloom_create(const char *path, const struct bloom_spec *spec, int force,
    void (*on_wait)(const char *path));

/* Writes the header, for bloom_create_header, of an empty filter like
 * tmpl: its seed, mode, geometry and segments, generations lined up; if
 * slices is not 0, slice slice of slices of tmpl's whole filter (tmpl is
 * a fixed filter, whole or a slice of any count; one slice of one is the
 * whole).  Returns BLOOM_OK, BLOOM_ESLICE_MODE or BLOOM_ESLICE_DIVIDE. */
int bloom_plan_like(const struct bloom *tmpl, uint32_t slice,
    uint32_t slices, struct bloom_header *h);

/* Creates the filter file path with the header and segments of h, as
 * bloom_create does. */
int bloom_create_header(const char *path, const struct bloom_header *h,
    int force, void (*on_wait)(const char *path));

/* Writes the segments of a new file fd of header h before it is given its
 * name.  Returns BLOOM_OK or a status (BLOOM_ERRNO with errno set). */
typedef int bloom_fill_fn(void *arg, int fd, const struct bloom_header *h);

/* Creates path as bloom_create_header does, calling fill (unless NULL)
 * with arg to write its segments once it is allocated, before it appears
 * under its name. */
int bloom_create_filled(const char *path, const struct bloom_header *h,
    int force, void (*on_wait)(const char *path), bloom_fill_fn *fill,
    void *arg);

/* Sets *free_bytes to the space an unprivileged user may still take on the
 * file system path would be created in.  Returns 0, or -1 with errno
 * set. */
int bloom_free_space(const char *path, uint64_t *free_bytes);

/* Writes the len bytes of buf to fd at offset off, however many pwrite(2)s
 * it takes.  Returns 0, or -1 with errno set. */
int write_at(int fd, const unsigned char *buf, size_t len, uint64_t off);

#endif
