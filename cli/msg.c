/* SPDX-License-Identifier: ISC */
/* The front end's messages: "bloom: ", the text, its bytes quoted, so
 * that the names and values in it, which come from outside, can neither
 * forge a line nor reach the terminal raw. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/msg.h"
#include "lib/quote.h"

const char *progname = "bloom";

/* Writes "bloom: ", msg quoted, and a newline to fp. */
static void
put_message(FILE *fp, const char *msg)
{
	fprintf(fp, "%s: ", progname);
	quote_fputs(fp, msg);
	fputc('\n', fp);
}

void
msg_vwarn(const char *fmt, va_list ap)
{
	char buf[1024], *msg = buf, *text = NULL;
	size_t size = 0;
	va_list again;
	FILE *mem;
	int len;

	va_copy(again, ap);
	len = vsnprintf(buf, sizeof buf, fmt, ap);
	if (len >= (int)sizeof buf && (msg = malloc((size_t)len + 1)) != NULL)
		vsnprintf(msg, (size_t)len + 1, fmt, again);
	va_end(again);
	if (msg == NULL)
		msg = buf;	/* cut short */
	/* Written whole, in one write(2) to the unbuffered standard error,
	 * so that the messages of processes sharing it do not interleave
	 * byte by byte; piece by piece if memory is short. */
	if ((mem = open_memstream(&text, &size)) != NULL) {
		put_message(mem, len >= 0 ? msg : "");
		if (fclose(mem) == 0)
			fwrite(text, 1, size, stderr);
		else
			put_message(stderr, len >= 0 ? msg : "");
		free(text);
	} else
		put_message(stderr, len >= 0 ? msg : "");
	if (msg != buf)
		free(msg);
}

void
msg_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_vwarn(fmt, ap);
	va_end(ap);
}

_Noreturn void
msg_fatal(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_vwarn(fmt, ap);
	va_end(ap);
	exit(status);
}
