/* SPDX-License-Identifier: ISC */
/* threads.h: interface of threads.c, how bloom starts its helper threads
 * (the line reader, the out-of-core I/O). */
#ifndef BLOOM_THREADS_H
#define BLOOM_THREADS_H

#include <pthread.h>

/* Starts fn(arg) on a new thread *t that takes none of the signals that
 * end us: they go to the caller's thread only, which holds them while it
 * writes (output.c); faults stay with the thread that causes them.
 * Returns 0, or an error number as pthread_create. */
int thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

#endif
