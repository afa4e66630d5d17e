/* SPDX-License-Identifier: ISC */
/* msg.h: interface of msg.c, the front end's messages to stderr: every
 * warning and error bloom writes goes through here, its bytes quoted. */
#ifndef BLOOM_MSG_H
#define BLOOM_MSG_H

#include <stdarg.h>

/* The program's name, which starts every message. */
extern const char *progname;

/* Writes "bloom: " and the message, its bytes quoted (quote.c), and a
 * newline to stderr. */
void msg_vwarn(const char *fmt, va_list ap)
    __attribute__((format(printf, 1, 0)));
void msg_warn(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* Writes the message as msg_warn and exits with status. */
_Noreturn void msg_fatal(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
