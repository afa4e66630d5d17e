/* SPDX-License-Identifier: ISC */
/* parse.h: interface of parse.c, the values of command-line options. */
#ifndef BLOOM_PARSE_H
#define BLOOM_PARSE_H

#include <stdint.h>

#define FPR_MAX		0.999999	/* the largest rate -p takes: above
					 * it, %g shows 1 */

/* Parses a whole unsigned number: decimal digits, or hexadecimal ones
 * after 0x if hex, and nothing else.  Returns 0, or -1 if s is not one or
 * does not fit. */
int parse_u64(const char *s, int hex, uint64_t *out);

/* Parses a count of items: a decimal number, with a point or an exponent
 * (2.5, 2e9) if the result is whole, and an optional K, M or G, in either
 * case, for thousands, millions or billions (powers of 1000, as items are
 * counted; sizes take powers of 1024).  Returns 0, or -1 if s is not one
 * or does not fit in 64 bits. */
int parse_count(const char *s, uint64_t *out);

/* Parses a byte count as parse_count, with an optional unit in either
 * case: B; K, M, G, T or KiB, MiB, GiB, TiB for powers of 1024; KB, MB,
 * GB, TB for powers of 1000, as dd(1) reads them.  Returns 0, or -1 if s
 * is not one, is not a whole number of bytes, or does not fit in 64 bits. */
int parse_size(const char *s, uint64_t *out);

/* Parses a yes-or-no word, in any case: 1, yes, true or on is 1; 0, no,
 * false, off or the empty string is 0.  Returns 1, 0, or -1 if s is none
 * of them. */
int parse_switch(const char *s);

/* Parses a plain decimal number (digits, a point, an exponent; no sign,
 * blank, hexadecimal, inf or nan) into *out.  Returns 0, or -1; errno is
 * ERANGE if it is too large or too small for a double. */
int parse_decimal(const char *s, double *out);

/* Parses a false-positive rate, from DBL_MIN to FPR_MAX: a plain decimal
 * (0.01, 1e-3) or a percentage (1%, 0.1%).  Returns 0, or -1 with *why set
 * to a reason beyond not being a number between 0 and 1 (" (too
 * small...)"), or to "". */
int parse_fpr(const char *s, double *out, const char **why);

/* Parses a duration: a positive number as parse_count reads it and a
 * unit s, m, h, d or w, in either case or spelled out (sec, minutes,
 * hours, days, weeks), seconds if none, into milliseconds: a whole number
 * of seconds, at most WINDOW_MS_MAX.  Returns 0, or -1. */
int parse_duration(const char *s, uint64_t *ms);

#endif
