/*
 * syncq/barrier.h — barriers: the family's ops table and the generic API.
 *
 * A barrier is created for a fixed number of threads; each episode, every
 * thread calls wait(b, id) with its own id in [0, threads), and no call
 * returns before all `threads` calls of that episode have begun. Episodes
 * repeat without re-initialisation.
 *
 *   "central-cas"     sense-reversing centralized, arrival by CAS loop   syncq/barrier/central.h
 *   "central-faa"     sense-reversing centralized, arrival by FAA        syncq/barrier/central.h
 *   "mcs-tree"        MCS tree barrier, arrival fan-in 4, wake fan-out 2 syncq/barrier/mcs_tree.h
 *   "dissemination"   dissemination barrier (Hensgen, Finkel & Manber)  syncq/barrier/dissemination.h
 *   "pthread-barrier" POSIX barrier, the baseline                       syncq/barrier/pthread_barrier.h
 *
 * Each takes a waiting discipline (syncq/wait.h) in its config; with
 * SYNCQ_WAIT_COMPETITIVE a waiter spins for a time proportional to the
 * threads not yet arrived (one context-switch time each, as 003 §3.4
 * does), then blocks.
 */
#ifndef SYNCQ_BARRIER_H
#define SYNCQ_BARRIER_H

#include "syncq/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncq/registry.h"
#include "syncq/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most threads a barrier can be created for. */
#define SYNCQ_BARRIER_MAX_THREADS 4096u

typedef struct syncq_barrier_config {
  unsigned threads;    /* participants, 1 .. SYNCQ_BARRIER_MAX_THREADS (0: SYNCQ_EINVAL) */
  int wait;            /* a syncq_wait_discipline; 0 = the algorithm's default */
  bool process_shared; /* will live in memory shared between processes (SYNCQ_ENOTSUP if it cannot) */
} syncq_barrier_config;

/* The barrier family's ops table (syncq_algo.ops of a barrier). Every
 * function returns a syncq_status and validates its arguments. */
typedef struct syncq_barrier_ops {
  size_t size;  /* bytes of one barrier */
  size_t align; /* its alignment */
  /* SYNCQ_EINVAL: NULL, threads 0, unknown discipline; SYNCQ_ELIMIT:
   * threads > SYNCQ_BARRIER_MAX_THREADS; SYNCQ_ENOTSUP: discipline or
   * process_shared not possible; SYNCQ_ENOMEM. */
  int (*init)(void *b, const syncq_barrier_config *cfg);
  int (*destroy)(void *b);
  /* SYNCQ_OK after every thread arrived; SYNCQ_EINVAL for NULL or id out
   * of range (the episode is not joined then). */
  int (*wait)(void *b, unsigned id);
} syncq_barrier_ops;

SYNCQ_API extern const syncq_algo syncq_barrier_central_cas_algo;
SYNCQ_API extern const syncq_algo syncq_barrier_central_faa_algo;
SYNCQ_API extern const syncq_algo syncq_barrier_mcs_tree_algo;
SYNCQ_API extern const syncq_algo syncq_barrier_dissemination_algo;
SYNCQ_API extern const syncq_algo syncq_barrier_pthread_algo;

/* ---- the generic API ---- */
typedef struct syncq_barrier syncq_barrier;

/* Create a barrier of the named algorithm. SYNCQ_EINVAL for NULL
 * arguments, SYNCQ_ENOENT for an unknown name, SYNCQ_ENOMEM, or the init
 * status. Created barriers are private to the process. */
SYNCQ_API int syncq_barrier_create(const char *algo, const syncq_barrier_config *cfg, syncq_barrier **out);
SYNCQ_API int syncq_barrier_destroy(syncq_barrier *b); /* SYNCQ_EINVAL for NULL */
SYNCQ_API int syncq_barrier_wait(syncq_barrier *b, unsigned id);
SYNCQ_API const syncq_algo *syncq_barrier_algo(const syncq_barrier *b); /* NULL for NULL */

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_BARRIER_H */
