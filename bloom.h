/* SPDX-License-Identifier: ISC */
/* bloom.h: interface of bloom.c, the filter: open, add and test over its
 * segments, the one policy both passes follow, and what the layers above
 * may read of an open filter.  The handle is opaque: its fields are
 * store/handle.h's, for bloom.c and store/ only. */
#ifndef BLOOM_BLOOM_H
#define BLOOM_BLOOM_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"
#include "params.h"
#include "store/format.h"	/* statuses, struct bloom_header */

/* What bloom_add and bloom_test set for a key that a slice does not hold:
 * neither found nor new. */
#define BLOOM_ELSEWHERE	2

/* What the engine marks a new key with that another adder of the filter
 * has claimed (claims.h): it neither writes nor sets it. */
#define BLOOM_CLAIMED	3

/* Things an add did that the user should hear of (bloom_events). */
#define BLOOM_EV_GREW		0x1	/* this process appended a segment */
#define BLOOM_EV_FULL		0x2	/* it took a fixed filter past its
					 * capacity */
#define BLOOM_EV_EARLY		0x4	/* it closed a generation that filled
					 * before its time */
#define BLOOM_EV_WIDENED	0x8	/* it gave a generation that filled
					 * before its time more room */

struct bloom;		/* an open filter */
struct bloom_pass;		/* a way to visit segments (below) */
struct segment;		/* one of its segments, as mapped */
struct bloom_pretest;	/* segments a reader thread tests ahead */

/* ==== Opening and closing ==== */

/* Takes flock(2) lock op (LOCK_SH or LOCK_EX) on fd, calling on_wait
 * (unless NULL) with path once after a second of waiting, and waiting
 * on.  Returns 0, or -1 with errno set. */
int bloom_flock(int fd, int op, const char *path,
    void (*on_wait)(const char *));

/* Opens and maps the filter at path, for writing if writable, holding a
 * shared lock until bloom_close, and sets *bp to it; if the lock has not
 * come after a second, calls on_wait (unless NULL) once and goes on
 * waiting.  path must outlive the handle.  Returns BLOOM_OK or a status;
 * on failure *bp is NULL, nothing is left open, and seen (unless NULL)
 * holds what of the header could be decoded, for the message. */
int bloom_open(struct bloom **bp, const char *path, int writable,
    void (*on_wait)(const char *path), struct bloom_header *seen);

/* Unmaps and closes b, and frees it (NULL is a no-op). */
void bloom_close(struct bloom *b);

/* Writes b's changes to stable storage.  Returns BLOOM_OK, or BLOOM_ERRNO
 * with errno set. */
int bloom_sync(struct bloom *b);

/* Makes b call on_wait (unless NULL) with its path once, when a wait for
 * another process's growth or rotation has lasted a second. */
void bloom_on_lock_wait(struct bloom *b, void (*on_wait)(const char *path));

/* Makes b call on_wait (unless NULL) with its path once, when add --new
 * has waited a second for other adders of the filter (their claims). */
void bloom_on_claims_wait(struct bloom *b,
    void (*on_wait)(const char *path));

/* ==== What an open filter is ==== */

/* Returns b's header as validated at open, its segments brought up to
 * date by the last refresh (their counters and stamps as read then). */
const struct bloom_header *bloom_header(const struct bloom *b);

/* Returns the path b was opened by. */
const char *bloom_path(const struct bloom *b);

/* Returns the descriptor of b's file, for fstat(2) and for reading its
 * segments with pread(2); b keeps it. */
int bloom_fd(const struct bloom *b);

/* Returns 1 if the open descriptor fd is b's file (same device and
 * inode), else 0. */
int bloom_is_file(const struct bloom *b, int fd);

/* Returns 1 if b's file has holes (holes.c), else 0. */
int bloom_sparse(const struct bloom *b);

/* Returns the number of segments b has mapped, as of the last refresh. */
unsigned bloom_nsegments(const struct bloom *b);

/* Returns the index of the segment adds go to, as of the last refresh. */
unsigned bloom_target(const struct bloom *b);

/* Returns 1 if segment i is live now, else 0. */
int bloom_is_live(const struct bloom *b, unsigned i);

/* Returns 1 if a segment past a window's generations (one a generation
 * grew into) holds a live generation, else 0. */
int bloom_live_extra(const struct bloom *b);

/* Returns segment i's inserted counter as it is now. */
uint64_t bloom_inserted(const struct bloom *b, unsigned i);

/* Returns segment i's stamp as it is now (struct segment_info), 0 for a
 * v1 filter. */
uint64_t bloom_stamp(const struct bloom *b, unsigned i);

/* Returns the newest generation of a window as its file says now; 0 for
 * a filter of another mode. */
uint64_t bloom_epoch(const struct bloom *b);

/* Returns the generation a window is in as of the last refresh: the
 * later of the clock's and the file's; 0 for a filter of another mode. */
uint64_t bloom_generation(const struct bloom *b);

/* Returns the BLOOM_EV_* flags raised since the last
 * call, and clears them. */
unsigned bloom_events(struct bloom *b);

/* Returns, after BLOOM_EV_FULL, the rate the fixed filter's fill then
 * gave. */
double bloom_full_fpr(const struct bloom *b);

/* Brings b's view of its segments up to date: growth and rotation by
 * other processes, and generations expired by time.  Returns BLOOM_OK or
 * a status. */
int bloom_refresh(struct bloom *b);

/* ==== Keys ==== */

/* Returns the hash of the len bytes of key that b files it under.  Reads
 * nothing of b that changes while it is open: safe in any thread. */
uint64_t bloom_hash(const struct bloom *b, const void *key, size_t len);

/* Starts st on a key whose bytes come in pieces (hash64_update), for the
 * same hash as bloom_hash gives the whole key.  Safe in any thread. */
void bloom_hash_begin(const struct bloom *b, struct hash_state *st);

/* Returns the slice, from 0, of slices equal slices of b's whole filter
 * that holds the key with hash h. */
uint32_t bloom_slice_of(const struct bloom *b, uint64_t h, uint32_t slices);

/*
 * The four operations on keys: test, add, and add-if-new in its three
 * steps (test, claim, set).  Each is one function, and each takes a pass:
 * NULL to go line by line, through the mapping with prefetching, or a
 * sorted sweep's (struct bloom_pass, below), which visits each segment
 * its own way.  Whichever pass runs, the same policy decides which
 * segments answer and which takes adds, and an error a pass meets on its
 * way (a write-back that failed) is the operation's status.
 */

/* Inserts the n keys with the given hashes in order; isnew[i] is set to
 * 1 if key i was in no live segment before (in a window, in its current
 * generation: the older ones are not tested), else 0 (BLOOM_ELSEWHERE for
 * a key that belongs to another slice, and is not added), and *done to the
 * number of keys added, n unless it fails.  A growable filter
 * grows and a window rotates as needed first.  Safe against other
 * processes adding to and checking the same file at once, though two that
 * add the same new key at the same instant may both call it new.  Takes
 * what bloom_pretest found for p as prefound, or NULL.  Returns BLOOM_OK
 * or a status (BLOOM_ERRNO with errno set). */
int bloom_add(struct bloom *b, const struct bloom_pass *v,
    const struct bloom_pretest *p, const unsigned char *prefound,
    const uint64_t *hashes, size_t n, unsigned char *isnew, size_t *done);

/* The three steps of an add that writes its new lines before it marks
 * them seen (add --new): bloom_add_test says which keys are new, as
 * bloom_add would, and sets no bit; bloom_add_claim keeps two adders at
 * once from both writing a key; once their lines are written,
 * bloom_add_set sets the bits.  Between the steps, another process may
 * add the same keys: a key can be new to both (see claims.h). */

/* Returns 1 if bloom_add_test marks a key 0 where the keys before it in
 * the same call would have set its bits, as adding them one at a time
 * would: it does for a fixed filter.  Else the caller finds the keys
 * repeated in a call (stream/repeats.h). */
int bloom_finds_repeats(const struct bloom *b);

/* Returns 1 if bloom_add_set sets the keys marked 0 too (a window that
 * renews: a key seen again is remembered from now), else 0. */
int bloom_sets_found(const struct bloom *b);

/* Sets isnew[i] to 1 if key i is in no live segment, else 0
 * (BLOOM_ELSEWHERE for a key another slice holds), and sets no bit; if
 * bloom_finds_repeats, a key is 0 too where the keys before it in the n
 * would have set its bits (a repeat).  Takes what bloom_pretest found for
 * p as prefound, or NULL.  Returns BLOOM_OK, or a status before setting
 * any (BLOOM_ERRNO with errno set). */
int bloom_add_test(struct bloom *b, const struct bloom_pass *v,
    const struct bloom_pretest *p, const unsigned char *prefound,
    const uint64_t *hashes, size_t n, unsigned char *isnew);

/* Between bloom_add_test and bloom_add_set: while other processes add to
 * b at once, claims the keys isnew marks 1 (store/claims.h), marking those
 * another live adder claimed BLOOM_CLAIMED, then tests the claimed keys
 * again, and marks 0 those whose bits another adder set meanwhile (again:
 * n bytes of scratch).  bloom_add_set lets go of the claims.  Returns
 * BLOOM_OK or a status. */
int bloom_add_claim(struct bloom *b, const struct bloom_pass *v,
    const uint64_t *hashes, unsigned char *isnew, size_t n,
    unsigned char *again);

/* Adds the keys that bloom_add_test found new and isnew still marks 1 (a
 * window: also those it marks 0, so that a key seen again is remembered
 * from now on; never those marked BLOOM_ELSEWHERE or BLOOM_CLAIMED),
 * growing or rotating as bloom_add does, and counts the keys marked 1 as
 * inserted.  Sets *done to the number of keys, from the first, whose bits
 * are set, n unless it fails.  Returns BLOOM_OK or a status. */
int bloom_add_set(struct bloom *b, const struct bloom_pass *v,
    const uint64_t *hashes, const unsigned char *isnew, size_t n,
    size_t *done);

/* Tests the n keys with the given hashes; found[i] is set to 1 if key i
 * may be in the set, 0 if it certainly is not (BLOOM_ELSEWHERE if another
 * slice holds it).  Takes what bloom_pretest found for p as prefound, or
 * NULL.  Returns BLOOM_OK, or a status (BLOOM_ERRNO with errno set). */
int bloom_test(struct bloom *b, const struct bloom_pass *v,
    const struct bloom_pretest *p, const unsigned char *prefound,
    const uint64_t *hashes, size_t n, unsigned char *found);

/* What a pretest is for: a check, a plain add, or an add that tests
 * each line first (bloom_add_test: add --new, --dups). */
enum bloom_pretest_for {
	BLOOM_PRETEST_CHECK,
	BLOOM_PRETEST_ADD,
	BLOOM_PRETEST_ADD_NEW
};

/* Returns the segments a reader thread may test ahead of bloom_add,
 * bloom_add_test or bloom_test of b, to share the work between two
 * processors: copies of segments that no process adds to while this one
 * is adding (all but the newest of a growable filter), or, for an add
 * that tests each line to a fixed filter, its one segment, whose found
 * keys are kept and others tested again.  For that add, chunk is the keys
 * of each bloom_add_test call given what bloom_pretest found: the calls
 * begin at multiples of chunk from the first key pretested, the last one
 * ending with the last (0 if the calls are not so cut).  NULL if none is
 * worth it (or there is no memory for it: it only saves time).  Free with
 * bloom_pretest_free once no reader uses it. */
struct bloom_pretest *bloom_pretest_plan(struct bloom *b,
    enum bloom_pretest_for use, size_t chunk);

/* Returns 1 if a reader may test only a share of each group's lines
 * against p, the caller testing the others (a check, or an add that tests
 * each line into a fixed filter), or 0 if it must test them all (an add
 * to a growable filter: its answers at a growth depend on where its
 * chunks begin, which must not depend on the threads' timing). */
int bloom_pretest_shares(const struct bloom_pretest *p);

/* Frees p (NULL is a no-op). */
void bloom_pretest_free(struct bloom_pretest *p);

/* Tests the n keys against p's segments, setting found[i].  Reads only
 * what does not change while the filter is open: safe in any thread. */
void bloom_pretest(const struct bloom_pretest *p, const uint64_t *hashes,
    size_t n, unsigned char *found);

/* ==== Passes that visit each segment their own way ==== */

/* What a visit does with its keys. */
#define BLOOM_VISIT_TEST	0	/* tests them */
#define BLOOM_VISIT_ADD		1	/* adds them */
#define BLOOM_VISIT_SETTLE	2	/* tests them, then marks found the
				 * ones not found whose bits the ones
				 * before them not found would set
				 * (bloom_settle): an add --new's test */

/*
 * Visits segment s for a pass: does what add says (BLOOM_VISIT_*) with
 * the m keys idx lists (indices into hashes, in increasing order), or
 * keys 0 to m in order if idx is NULL, setting res[k] for each key k
 * visited as bits_test_list or bits_add_list do.  Returns how many were
 * new to s (add; anything for a test).
 */
typedef size_t bloom_visit_fn(void *arg, const struct segment *s,
    const uint64_t *hashes, const uint32_t *idx, size_t m, int add,
    unsigned char *res);

/* Returns 0 if every visit of the pass since the last call wrote back
 * what it set (or wrote nothing), else the errno of the first write-back
 * that failed; forgets it. */
typedef int bloom_pass_end_fn(void *arg);

/* A pass over a filter's segments whose visits the caller makes (the
 * sorted sweeps of sweep.c, with store/bits.h), with the scratch the
 * policy needs.  Every operation above ends by asking end. */
struct bloom_pass {
	bloom_visit_fn *visit;	/* visits one segment */
	bloom_pass_end_fn *end;	/* the pass's write-back error, or NULL */
	void *arg;		/* given to visit and end */
	uint32_t *idx;		/* room for max key indices */
	unsigned char *found;	/* room for max flags */
	size_t max;		/* keys taken at a time, at most */
};

/* For a visit of BLOOM_VISIT_SETTLE, once it has tested the m keys idx
 * lists (in increasing order; keys 0 to m if NULL) against segment s:
 * marks found (1) each of them not found whose missing bits the ones
 * before it not found would set, as adding them one at a time would,
 * reading their blocks from buf, which holds s's blocks from block first
 * on, or from the mapping if buf is NULL.  The keys of one block must all
 * be in one call.  It works in *scratch, of *size bytes (NULL and 0 at
 * first), which it grows as needed and the caller frees with free(3).
 * Returns 0, or -1 with errno set (no memory) and found as it was. */
int bloom_settle(const struct segment *s, const unsigned char *buf,
    uint64_t first, const uint64_t *hashes, const uint32_t *idx, size_t m,
    unsigned char *found, void **scratch, size_t *size);

/* ==== Whole segments ==== */

/* ORs segment si of src into segment di of b (of slices, the blocks of
 * the whole filter that both hold, which may be none), with atomic ORs
 * so that processes adding to b at once lose nothing; of age-partitioned
 * windows at the same generation, the slots of src's array whose ages
 * count for its readers, into b's array (once for all generations).
 * The caller has checked that the geometry agrees. */
void bloom_or(struct bloom *b, unsigned di, const struct bloom *src,
    unsigned si);

/* Raises segment i's inserted counter to the keys its fill suggests, if
 * that is more: after a merge, counters cannot be summed, since the
 * sources may share keys.  A fill no more than the capacity's keys leave,
 * with 3 standard deviations of noise, suggests at most the capacity. */
void bloom_recount(struct bloom *b, unsigned i);

/* Raises the count of keys in segment i of b to count, if it is below
 * (a union's at least its source's). */
void bloom_raise(struct bloom *b, unsigned i, uint64_t count);

/* Fills hist[c] with the number of blocks of segment i that have c bits
 * set, c = 0..512, and returns the total number of bits set. */
uint64_t bloom_fill(struct bloom *b, unsigned i,
    uint64_t hist[BLOCK_BITS + 1]);

/* For generation i of an age-partitioned window (LAYOUT_APBF): sets
 * *slot_bits to the bits of the slot it took when it began, over all
 * groups, and returns how many of them are set: one for each key of it
 * and of the k - 1 generations after it.  0 and 0 for other segments. */
uint64_t bloom_slot_fill(struct bloom *b, unsigned i, uint64_t *slot_bits);

/* Starts a new generation of a window now, forgetting the oldest.
 * Returns BLOOM_OK or a status. */
int bloom_rotate(struct bloom *b);


/* ==== The segment list and the file, for filter/ and the front end ====
 * What the layers above need of store/, through the core: store/'s own
 * headers are private to it (.ci/layers). */

/* Starts the generation of window b that is due, if any, then holds off
 * its rotation, by this process or any other, until bloom_unhold (adders
 * go on), and refreshes the list: what a merge checks then stays what it
 * writes into.  Returns BLOOM_OK or a status; nothing to do for other
 * modes. */
int bloom_hold(struct bloom *b);

/* Lets rotation go on after bloom_hold. */
void bloom_unhold(struct bloom *b);

/* Grows growable filter b to count segments, as adds would.  Returns
 * BLOOM_OK or a status. */
int bloom_grow_to(struct bloom *b, unsigned count);

/* Refreshes the list of b for a reader, which may then read any segment
 * of it until bloom_read_end: no rotation gives a window's room back
 * meanwhile (adders and rotations go on).  Returns BLOOM_OK or a status;
 * bloom_read_end is due either way. */
int bloom_read_begin(struct bloom *b);

/* Ends what bloom_read_begin began. */
void bloom_read_end(struct bloom *b);

/* Brings the len bytes of the new filter file fd at offset, just
 * allocated, into the page cache in one pass, before any process maps
 * them to write.  Advice only: failure changes nothing but speed. */
void bloom_warm(int fd, uint64_t offset, uint64_t len);

/* Removes the claim table of the filter open as fd, if there is one: for
 * a filter no adder has open (create -f holds it locked exclusively),
 * whose table an adder that was killed left.  Best effort. */
void bloom_forget_claims(int fd);

#endif
