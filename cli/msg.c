/* The front end's messages: "bloom: ", the text, its bytes quoted, so
 * that the names and values in it, which come from outside, can neither
 * forge a line nor reach the terminal raw. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/msg.h"
#include "lib/quote.h"

const char *progname = "bloom";

void
msg_vwarn(const char *fmt, va_list ap)
{
	char buf[1024], *msg = buf;
	va_list again;
	int len;

	va_copy(again, ap);
	len = vsnprintf(buf, sizeof buf, fmt, ap);
	if (len >= (int)sizeof buf && (msg = malloc((size_t)len + 1)) != NULL)
		vsnprintf(msg, (size_t)len + 1, fmt, again);
	va_end(again);
	if (msg == NULL)
		msg = buf;	/* cut short */
	fprintf(stderr, "%s: ", progname);
	if (len >= 0)
		quote_fputs(stderr, msg);
	fputc('\n', stderr);
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
