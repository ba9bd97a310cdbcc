/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/stats.h — algorithm-level event counts, per thread.
 *
 * Every algorithm counts what it did in the calling thread's syncq_stats:
 * CAS attempts and failures, retries of a whole operation, backoff waits,
 * yields and blocks. Counting is a plain increment of a thread-local
 * variable (no atomics, no sharing); builds with -DSYNCQ_STATS=OFF compile
 * it out. These counts are always available, unlike hardware counters.
 */
#ifndef SYNCQ_STATS_H
#define SYNCQ_STATS_H

#include "syncq/export.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct syncq_stats {
  uint64_t cas_attempts; /* CAS (single or double width) issued */
  uint64_t cas_failures; /* ... of which failed */
  uint64_t retries;      /* whole-operation retries (loop restarts) */
  uint64_t backoffs;     /* backoff waits */
  uint64_t backoff_ns;   /* ... their total requested length */
  uint64_t yields;       /* sched_yield calls */
  uint64_t blocks;       /* futex or condition-variable sleeps */
} syncq_stats;

/* The calling thread's counters (never NULL).
 * Thread safety: any thread: each gets its own counters (thread-local
 * storage, initial-exec model, so a signal handler may call it too and
 * reads the interrupted thread's counters). Another thread may read the
 * returned counters only once this thread is done counting (they are plain
 * words).
 * Progress: wait-free. */
SYNCQ_API syncq_stats *syncq_stats_self(void);

/* Zero the calling thread's counters.
 * Thread safety: any thread, for its own counters; from a signal handler
 * too (it then zeroes the interrupted thread's counters).
 * Progress: wait-free. */
SYNCQ_API void syncq_stats_reset(void);

/* *into += *from, field by field. No-op if either is NULL.
 * Thread safety: any thread; into and from must not be written by another
 * thread meanwhile (plain words).
 * Progress: wait-free. */
SYNCQ_API void syncq_stats_add(syncq_stats *into, const syncq_stats *from);

/* 1 when this build counts events, 0 when built with SYNCQ_STATS=OFF.
 * Thread safety: any thread, any time, from a signal handler too.
 * Progress: wait-free. */
SYNCQ_API int syncq_stats_enabled(void);

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_STATS_H */
