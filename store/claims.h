/* SPDX-License-Identifier: ISC */
/* claims.h: interface of claims.c, the short-lived claims of new keys by
 * the live adders of one filter, so that of several processes adding the
 * same new line at once, one writes it. */
#ifndef BLOOM_CLAIMS_H
#define BLOOM_CLAIMS_H

#include <stddef.h>
#include <stdint.h>

struct claims;		/* one adder's view of a filter's claim table */

/* Joins the claim table of the filter open as fd (by its device and
 * inode), making it first if need be, and waits until the adders already
 * there claim too.  Returns the handle, or NULL if there can be none (no
 * /dev/shm, no permission, no memory, a table that is not one): the adder
 * then claims nothing. */
struct claims *claims_join(int fd);

/* Leaves the table and frees c (NULL is a no-op). */
void claims_leave(struct claims *c);

/* Removes the claim table of the filter open as fd, if there is one:
 * for a filter no adder has open (create -f holds it locked exclusively),
 * whose table an adder that was killed left.  Best effort. */
void claims_forget(int fd);

/* Starts a chunk of keys, before they are tested.  Returns 1 if other adders are there, so that
 * the chunk's new keys are to be claimed (claims_take), else 0.  Until
 * claims_end, an adder that joins waits for this chunk. */
int claims_begin(struct claims *c);

/* For a chunk claims_begin said claims nothing, once its keys are tested:
 * returns 1 if other adders joined since, so that its new keys are to be
 * claimed (claims_take) after all, else 0.  Joiners wait until they are. */
int claims_late(struct claims *c);

/* Ends the chunk claims_begin started. */
void claims_end(struct claims *c);

/* Claims each key that isnew marks 1: one another live adder claimed is
 * marked lost (set to lost), as is a repeat of a key claimed in this
 * chunk.  Returns the number claimed.  Adders that joined during a chunk
 * claims_begin said claims nothing go on once its keys are claimed. */
size_t claims_take(struct claims *c, const uint64_t *hashes,
    unsigned char *isnew, size_t n, unsigned char lost);

/* Lets go of the claims of the keys isnew marks 1, once their bits are
 * set. */
void claims_release(struct claims *c, const uint64_t *hashes,
    const unsigned char *isnew, size_t n);

#endif
