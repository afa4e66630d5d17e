/* parse.h: interface of parse.c, the values of command-line options. */
#ifndef BLOOM_PARSE_H
#define BLOOM_PARSE_H

#include <stdint.h>

/* Parses a whole unsigned number: decimal, or hexadecimal after 0x if hex.
 * Returns 0, or -1 if s is not one that fits in 64 bits. */
int parse_u64(const char *s, int hex, uint64_t *out);

/* Parses a byte count with an optional K, M, G or T (1024-based) suffix.
 * Returns 0 or -1. */
int parse_size(const char *s, uint64_t *out);

/* Parses a rate greater than 0 and less than 1.  Returns 0 or -1. */
int parse_fpr(const char *s, double *out);

/* Parses a duration: a positive number and a unit s, m, h, d or w
 * (seconds if none), into milliseconds, at most WINDOW_MS_MAX.  Returns 0
 * or -1. */
int parse_duration(const char *s, uint64_t *ms);

#endif
