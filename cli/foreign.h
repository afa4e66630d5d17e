/* SPDX-License-Identifier: ISC */
/* foreign.h: interface of foreign.c, the files of other programs that a
 * filter's name may hold. */
#ifndef BLOOM_FOREIGN_H
#define BLOOM_FOREIGN_H

#include <stddef.h>
#include <stdint.h>

#define FOREIGN_HEAD	48	/* the bytes foreign_describe needs */

/* Says whose file it is, if another program's filter, from head, its
 * first len bytes, and size, its size: writes a sentence into out, of
 * outsize bytes, and returns 1; else returns 0. */
int foreign_describe(const unsigned char *head, size_t len, uint64_t size,
    char *out, size_t outsize);

/* As foreign_describe, for the file at path.  Returns 1, or 0 if it is not
 * a foreign filter or cannot be read. */
int foreign_file(const char *path, char *out, size_t outsize);

#endif
