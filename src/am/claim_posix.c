/*
 * claim_posix.c — the POSIX mutex packet claim of 000, made robust.
 *
 * Contract
 *   Source:      000 §3.1, Figure 2 under "the Solaris implementation of
 *                Posix mutexes" (process-shared; "locks are implicitly
 *                reclaimed after abnormal termination"). Written here, not
 *                through src/lock/pthread_mutex.c: that lock repairs
 *                EOWNERDEAD silently, and the claim must know, to repair
 *                the tail a dying holder may have left half-advanced.
 *   Progress:    blocking, but a holder that dies inside the critical
 *                section does not block the others: the next locker gets
 *                EOWNERDEAD, repairs the queue tail (below) and marks the
 *                mutex consistent.
 *   Atomics:     glibc robust mutex: uncontended lock 1 CAS (plus the
 *                robust-list bookkeeping, no system call), unlock 1
 *                exchange; + the critical section of Figure 2 (1 acquire
 *                load, 1 release store; bulk + 1 load, 1 store).
 *   Memory:      in the segment; never allocates.
 *   Signal-safe: no (pthread_mutex_lock is not async-signal-safe).
 *   Process-shared: yes (PTHREAD_PROCESS_SHARED, PTHREAD_MUTEX_ROBUST).
 *   Limits:      none beyond the queue's.
 */
#include <errno.h>

#include "am_crash.h"
#include "am_internal.h"

int am_posix_init(am_queue *q) {
  pthread_mutexattr_t a;
  if (pthread_mutexattr_init(&a) != 0) return SYNCQ_ESYS;
  int e = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  if (e == 0) e = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  if (e == 0) e = pthread_mutex_init(&q->lock.mutex, &a);
  (void)pthread_mutexattr_destroy(&a);
  if (e != 0) {
    errno = e;
    return e == ENOTSUP ? SYNCQ_ENOTSUP : SYNCQ_ESYS;
  }
  return SYNCQ_OK;
}

int am_claim_posix(void *base, am_queue *q, bool nowait, am_claim_state *cs) {
  (void)nowait; /* holds nothing when it fails */
  int e = pthread_mutex_lock(&q->lock.mutex);
  if (e == EOWNERDEAD) {
    am_claim_repair(base, q); /* claim_lock.c */
    e = pthread_mutex_consistent(&q->lock.mutex);
  }
  if (e == 0) am_crash_point(AM_STEP_LOCKED); /* tests: die holding the mutex */
  if (e != 0) {
    errno = e;
    return SYNCQ_ESYS;
  }
  bool got = am_claim_under_lock(base, q, cs);
  e = pthread_mutex_unlock(&q->lock.mutex);
  if (e != 0) {
    errno = e;
    return SYNCQ_ESYS;
  }
  return got ? SYNCQ_OK : SYNCQ_FULL;
}
