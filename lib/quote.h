/* SPDX-License-Identifier: ISC */
/* quote.h: interface of quote.c, which makes file names and other strings
 * from outside safe to show in a message or a line of text output. */
#ifndef BLOOM_QUOTE_H
#define BLOOM_QUOTE_H

#include <stddef.h>
#include <stdio.h>

/* Copies s into buf of size bytes (size > 0), always terminated and cut
 * short if need be, with every byte that could end a line or act on a
 * terminal written as a C escape: \n, \t, \r, \\ and \xHH for other
 * control characters, DEL, C1 controls and bytes that are not UTF-8.
 * Returns buf. */
char *quote_string(char *buf, size_t size, const char *s);

/* Writes s to fp quoted as quote_string does, however long. */
void quote_fputs(FILE *fp, const char *s);

#endif
