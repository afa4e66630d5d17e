/* SPDX-License-Identifier: ISC */
/* ages.h: interface of ages.c, the generations of an age-partitioned
 * window: following which slots hold which generation,
 * and emptying them at rotation.  For segments.c. */
#ifndef BLOOM_AGES_H
#define BLOOM_AGES_H

#include <stdint.h>

struct bloom;
struct segment;

/* Sets the view (store/apbf.h) of b's generations as of b->epoch, the
 * file's newest generation being file_epoch, after the list is mapped. */
void ages_follow(struct bloom *b, uint64_t file_epoch);

/* Returns the earliest generation among the G before to (inclusive) that
 * a rotation published and did not finish, if earlier than start; else
 * start. */
uint64_t ages_mend_from(const struct bloom *b, uint64_t start, uint64_t to);

/* Returns the stamp of segment t, the generation now of window b, as an
 * adder is to see it: 0, so that the window is mended before it adds,
 * if b is age-partitioned and an earlier generation of its window was
 * published and not stamped (a rotation cut short, or a hand edit):
 * readers count no bit of such a generation, which an add now sets. */
uint64_t ages_stamp(const struct bloom *b, const struct segment *t);

/* Empties, rotating from generation from to to, the slots of the
 * generations after from (a whole group's at most) and of those from start
 * on, and zeroes the inserted counters of the generations from start on.
 * Called holding both of the window's locks. */
void ages_clear(struct bloom *b, uint64_t start, uint64_t from,
    uint64_t to);

#endif
