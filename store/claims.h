/* SPDX-License-Identifier: ISC */
/* claims.h: interface of claims.c, the short-lived claims of new keys by
 * the live adders of one filter, so that of several processes adding the
 * same new line at once, one writes it. */
#ifndef BLOOM_CLAIMS_H
#define BLOOM_CLAIMS_H

#include <stddef.h>
#include <stdint.h>

struct bloom;
struct claims;		/* one adder's view of a filter's claim table */

/* Joins the claim table of the filter b, open for writing (by its device,
 * inode and header checksum), making it first if need be, and waits until
 * the adders already there claim too, telling b->on_claims_wait after a
 * second.  Without a table it may trust (none in /dev/shm, one made or
 * open to someone who may not write the filter, a full /dev/shm), each
 * chunk of the adder goes alone (claims_begin).  Returns the handle, or
 * NULL with no memory: the adder then claims nothing. */
struct claims *claims_join(struct bloom *b);

/* Begins a chunk of an add --new of b before its keys are tested (see
 * claims.c for why before): joins the filter's claim table the first
 * time, and sets b->claiming if other adders are at work now. */
void claims_start(struct bloom *b);

/* Ends the chunk claims_start began, letting go of the claims of the n
 * keys isnew marks new once their bits are set. */
void claims_done(struct bloom *b, const uint64_t *hashes,
    const unsigned char *isnew, size_t n);

/* Leaves the table and frees c (NULL is a no-op). */
void claims_leave(struct claims *c);

/* Removes the claim table of the filter open as fd, if there is one:
 * for a filter no adder has open (create -f holds it locked exclusively),
 * whose table an adder that was killed left.  Best effort. */
void claims_forget(int fd);

/* Starts a chunk of keys, before they are tested.  Returns 1 if other
 * adders are there, so that the chunk's new keys are to be claimed
 * (claims_take), else 0: alone, or going alone (without a table, or with
 * adders of the filter that share out their keys in another table), once
 * the chunks of the others are over, told after a second.  Until
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
 * chunk.  Returns the number claimed; or, when the table has no room for
 * them, lets go of them, goes alone as claims_begin does, and returns n:
 * every key isnew still marks is to be tested again.  Adders that joined during a chunk
 * claims_begin said claims nothing go on once its keys are claimed. */
size_t claims_take(struct claims *c, const uint64_t *hashes,
    unsigned char *isnew, size_t n, unsigned char lost);

/* Lets go of the claims of the keys isnew marks 1, once their bits are
 * set. */
void claims_release(struct claims *c, const uint64_t *hashes,
    const unsigned char *isnew, size_t n);

#endif
