/* SPDX-License-Identifier: ISC */
/* fields.h: interface of fields.c, keys made of some fields of a line, as
 * cut(1) selects them. */
#ifndef BLOOM_FIELDS_H
#define BLOOM_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#define FIELDS_RANGES	32		/* ranges in a list, at most */
#define FIELD_MAX	((uint64_t)1 << 20)	/* highest field number */

/* A field list: ranges of 1-based field numbers, sorted and disjoint. */
struct fields {
	uint64_t lo[FIELDS_RANGES];	/* first field of each range */
	uint64_t hi[FIELDS_RANGES];	/* last field, UINT64_MAX if open */
	unsigned nranges;		/* ranges in lo and hi */
	uint64_t named;			/* highest field the list names: a
					 * line with fewer fields (but the
					 * separator) is read as if empty
					 * fields followed */
	unsigned char delim;		/* field separator */
	int only_delimited;		/* -s: a line without the separator
					 * is skipped, as cut -s does: no
					 * key, no line */
};

/* Parses a cut(1) field list such as "2", "1,3" or "2-" into f, with
 * separator delim.  Returns 0, or -1 if list is not a valid list. */
int fields_parse(struct fields *f, const char *list, unsigned char delim);

/* Returns 1 if the line of len bytes holds f's separator, else 0. */
int fields_delimited(const struct fields *f, const unsigned char *line,
    size_t len);

/* The most bytes fields_key adds to a line of len bytes. */
size_t fields_key_max(const struct fields *f, size_t len);

/* Writes the key of the line of len bytes into key, which has room for
 * fields_key_max(f, len) bytes: its selected fields in order, joined by
 * the separator, fields past its last read as empty; or, if the line does
 * not hold the separator, the whole line, as cut(1) prints it.  Returns
 * the key's length. */
size_t fields_key(const struct fields *f, const unsigned char *line,
    size_t len, unsigned char *key);

#endif
