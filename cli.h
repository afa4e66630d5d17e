/* SPDX-License-Identifier: ISC */
/* cli.h: what the files of the command line share: cli.c (main, usage,
 * messages, exit codes), cli_create.c (create), cli_stream.c (add, check,
 * route) and cli_filter.c (stats, rotate, merge).  These are the only
 * files that print messages or exit. */
#ifndef BLOOM_CLI_H
#define BLOOM_CLI_H

#include <getopt.h>
#include <stdint.h>

#include "bloom.h"
#include "lib/output.h"

#ifndef BLOOM_VERSION_STRING
#define BLOOM_VERSION_STRING "unknown"
#endif

#define DEFAULT_CAPACITY	1000000
#define DEFAULT_FPR		0.01

/* Exit statuses, as grep(1) has them. */
#define EXIT_SELECTED	0
#define EXIT_NONE	1
#define EXIT_TROUBLE	2

/* getopt_long values of the options that have no letter: not chars, so
 * that bad_option can tell them from an unknown letter. */
enum { OPT_SEED = 256, OPT_SYNC, OPT_JSON, OPT_GROW, OPT_GROWTH,
    OPT_GENERATIONS, OPT_WINDOW, OPT_LIKE, OPT_SLICE, OPT_SLICES,
    OPT_DRY_RUN, OPT_PROGRESS, OPT_NO_CREATE, OPT_MEMORY, OPT_HELP,
    OPT_WHICH, OPT_MAX_SIZE, OPT_BY, OPT_LAYOUT, OPT_NO_RENEW,
    OPT_PASS_OVER };

enum command { CMD_CREATE, CMD_ADD, CMD_CHECK, CMD_STATS, CMD_ROTATE,
    CMD_MERGE, CMD_FOLD, CMD_ROUTE, CMD_HELP, NCMD };

/* The name of each command, for messages. */
extern const char *const command_name[NCMD];


/* Writes the message and the synopsis of cmd (all of them if cmd is -1)
 * and exits 2. */
_Noreturn void usage_error(int cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Reports the option getopt_long returned ch (':' or '?') for, as a usage
 * error. */
_Noreturn void bad_option(enum command cmd, int ch, char **argv,
    const char *shortopts, const struct option *longopts);

/* Writes the synopsis and option help of cmd to stdout. */
void print_help(enum command cmd);

/* Flushes stdout; returns status, or 2 if the output failed. */
int finish(int status);

/* Reports a failed output; a closed pipe ends us quietly. */
void output_error(const struct output *out);

/* Returns 1 if path is a directory (or a link to one), else 0: to say so
 * when a filter was asked for.  Leaves errno as it was. */
int is_directory(const char *path);

/* Reports a failure of the filter at path with status s. */
void filter_error(const char *path, int s, const struct bloom_header *h);

/* Refuses a filter that is also the standard output; returns 0, or -1
 * after saying so. */
int not_own_output(const struct bloom *b, const char *path);

/* Returns a random 64-bit seed, or exits 2. */
uint64_t random_seed(void);

/* Tell that an open, a create -f, or a growth or rotation has waited a
 * second for a lock. */
void tell_open_waits(const char *path);
void tell_create_waits(const char *path);
void tell_lock_waits(const char *path);

/* Tells that add --new has waited a second for the other adders. */
void tell_claims_waits(const char *path);

/* Arms the SIGBUS handler with a message naming path, a filter open for
 * writing if writable. */
void guard_mapping(const char *path, int writable);

/* Tells of what an add did to the filter that its user should know. */
void notice(struct bloom *b, unsigned events);

/* The commands: each parses its options and returns an exit status. */
int cmd_create(int argc, char **argv);
int cmd_add(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_route(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_rotate(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_fold(int argc, char **argv);

#endif
