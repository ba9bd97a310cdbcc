/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/stats.h — algorithm-level event counts, per thread.
 *
 * Every algorithm counts what it did in the calling thread's syncq_stats:
 * CAS attempts and failures, retries of a whole operation, backoff waits,
 * yields and blocks, and where a ticket queue's operation spends its time
 * past its ticket (waits on a cell, tickets lost, rings closed). Counting
 * is a plain increment of a thread-local variable (no atomics, no
 * sharing); builds with -DSYNCQ_STATS=OFF compile it out (the one switch:
 * syncq/static/stats.h). These counts are always
 * available, unlike hardware counters.
 */
#ifndef SYNCQ_STATS_H
#define SYNCQ_STATS_H

#include "syncq/export.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* C++ spells C11's _Thread_local thread_local, and its extern thread_local
 * objects are reached through an initialisation wrapper; GNU __thread is
 * the plain storage class in both. */
#ifdef __cplusplus
#define SYNCQ_STATS_THREAD_LOCAL __thread
#else
#define SYNCQ_STATS_THREAD_LOCAL _Thread_local
#endif
#define SYNCQ_STATS_TLS_MODEL __attribute__((tls_model("initial-exec")))

typedef struct syncq_stats {
  uint64_t cas_attempts; /* CAS (single or double width) issued */
  uint64_t cas_failures; /* ... of which failed */
  uint64_t retries;      /* whole-operation retries (loop restarts) */
  uint64_t backoffs;     /* backoff waits */
  uint64_t backoff_ns;   /* ... their total requested length */
  uint64_t yields;       /* sched_yield calls */
  uint64_t blocks;       /* futex or condition-variable sleeps */
  /* The ticket queues' time past their ticket (lcrq, lprq and their -af
   * forms, wfqueue, scq; docs/queues.md): */
  uint64_t deq_waits;       /* waits for a cell not yet written: one a dequeue in the ring queues,
                             * one per empty cell a dequeue examines in wfqueue */
  uint64_t deq_wait_pauses; /* ... the pauses (syncq_pr_relax) those waits spent */
  uint64_t deq_waits_out;   /* ... of which spent the whole spin without seeing the write */
  uint64_t enq_cells_lost;  /* enqueue tickets given up on a cell that held no item (a dequeuer passed it) */
  uint64_t rings_closed;    /* rings an enqueuer closed (full, or out of patience) */
  uint64_t enq_slow;        /* enqueues that left the fast path for a published request (wfqueue) */
} syncq_stats;

/* The calling thread's counters themselves: the variable that
 * syncq_stats_self() returns the address of, and that the algorithms add
 * to when built with SYNCQ_STATS (syncq/static/stats.h: the static inline
 * bodies of a program that defines SYNCQ_STATS count here too). Read and
 * reset them through syncq_stats_self() and syncq_stats_reset().
 * Initial-exec thread-local storage: one thread-pointer-relative access,
 * no call; like libsyncq's own, it needs the library loaded at start-up
 * (or static TLS room left for dlopen).
 * Thread safety: each thread has its own; plain words, written only by
 * their thread (and by a signal handler that interrupts it).
 * Progress: wait-free (one add). */
SYNCQ_API extern SYNCQ_STATS_TLS_MODEL SYNCQ_STATS_THREAD_LOCAL syncq_stats syncq_stats_tls;

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

/* Whether this build of the library counts events: 1 when it does, 0 when
 * built with SYNCQ_STATS=OFF.
 * Thread safety: any thread, any time, from a signal handler too.
 * Progress: wait-free. */
SYNCQ_API int syncq_stats_enabled(void);

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_STATS_H */
