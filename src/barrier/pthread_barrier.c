/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pthread_barrier.c — the POSIX barrier behind the barrier ops table.
 *
 * Contract
 *   Source:      POSIX pthread_barrier_wait; the baseline of np99-barrier.
 *   Progress:    blocking.
 *   Atomics:     the C library's (glibc: a counter RMW per arrival, futex).
 *   Memory:      caller's storage; never allocates.
 *   Signal-safe: no. Process-shared: yes (PTHREAD_PROCESS_SHARED).
 *   Waiting:     the C library's blocking; SPIN, YIELD, COMPETITIVE:
 *                SYNCQ_ENOTSUP.
 *   Timeout:     none: POSIX has no timed barrier wait, and a thread
 *                inside pthread_barrier_wait cannot leave it, so a timed
 *                wait cannot be built on it without replacing it (then it
 *                is no longer the baseline). wait_timed and reset return
 *                SYNCQ_ENOTSUP at once; the plain wait waits forever for
 *                a thread that never arrives.
 *   Limits:      threads <= SYNCQ_BARRIER_MAX_THREADS.
 *   Stats:       none.
 */
#include "syncq/barrier/pthread_barrier.h"

#include <errno.h>
#include <pthread.h>

#include "barrier_internal.h"

_Static_assert(sizeof(pthread_barrier_t) <= SYNCQ_BARRIER_PTHREAD_STORAGE, "pthread_barrier_t fits");
_Static_assert(_Alignof(pthread_barrier_t) <= SYNCQ_CACHELINE, "and is aligned");

static inline pthread_barrier_t *pb(syncq_barrier_pthread *b) { return (pthread_barrier_t *)(void *)b->storage; }

int syncq_barrier_pthread_init(syncq_barrier_pthread *b, const syncq_barrier_config *cfg) {
  if (b == NULL) return SYNCQ_EINVAL;
  int wait, ps;
  int r = barrier_parse_config(cfg, SYNCQ_WAIT_BLOCK, BAR_WAIT_BIT(SYNCQ_WAIT_BLOCK), 1, &wait, &ps);
  if (r != SYNCQ_OK) return r;
  pthread_barrierattr_t a;
  if (pthread_barrierattr_init(&a) != 0) return SYNCQ_ESYS;
  int e = ps ? pthread_barrierattr_setpshared(&a, PTHREAD_PROCESS_SHARED) : 0;
  if (e == 0) e = pthread_barrier_init(pb(b), &a, cfg->threads);
  pthread_barrierattr_destroy(&a);
  if (e != 0) {
    errno = e;
    return SYNCQ_ESYS;
  }
  b->threads = cfg->threads;
  return SYNCQ_OK;
}

int syncq_barrier_pthread_destroy(syncq_barrier_pthread *b) {
  if (b == NULL) return SYNCQ_EINVAL;
  return pthread_barrier_destroy(pb(b)) == 0 ? SYNCQ_OK : SYNCQ_EBUSY;
}

int syncq_barrier_pthread_wait(syncq_barrier_pthread *b, unsigned id) {
  if (b == NULL || id >= b->threads) return SYNCQ_EINVAL;
  int e = pthread_barrier_wait(pb(b));
  if (e == 0 || e == PTHREAD_BARRIER_SERIAL_THREAD) return SYNCQ_OK;
  errno = e;
  return SYNCQ_ESYS;
}

int syncq_barrier_pthread_wait_timed(syncq_barrier_pthread *b, unsigned id, uint64_t timeout_ns) {
  if (b == NULL || id >= b->threads || timeout_ns == 0) return SYNCQ_EINVAL;
  return SYNCQ_ENOTSUP;
}

int syncq_barrier_pthread_reset(syncq_barrier_pthread *b) { return b == NULL ? SYNCQ_EINVAL : SYNCQ_ENOTSUP; }

SYNCQ_BARRIER_REGISTER(pthread, "pthread-barrier", "POSIX barrier", "POSIX", BLOCKING, SYNCQ_PROP_PROCESS_SHARED);
