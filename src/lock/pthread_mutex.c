/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pthread_mutex.c — the POSIX mutex behind the lock ops table.
 *
 * Contract
 *   Source:      POSIX; 000 §3.1 (process-shared POSIX mutex claim) and the
 *                baseline of syncq's lock-cost benchmark.
 *   Progress:    blocking.
 *   Atomics:     glibc: uncontended lock 1 CAS, unlock 1 exchange.
 *   Memory:      caller's storage; never allocates.
 *   Signal-safe: no (POSIX does not make pthread_mutex_* async-signal-safe).
 *   Process-shared: yes: PTHREAD_PROCESS_SHARED and PTHREAD_MUTEX_ROBUST;
 *                an owner that died leaves EOWNERDEAD, which lock() repairs
 *                with pthread_mutex_consistent and reports as SYNCQ_OK.
 *   Waiting:     the C library's own (futex); COMPETITIVE picks glibc's
 *                adaptive mutex (spin, then block). SPIN/YIELD: ENOTSUP.
 *   Limits:      none. Unlock by a thread that does not hold the mutex
 *                is SYNCQ_EINVAL (private: an owner word kept beside the
 *                mutex, two relaxed stores per hold; robust: glibc's check).
 *   Stats:       none (the C library does not tell).
 */
#include "syncq/lock/pthread_mutex.h"

#include <errno.h>

#include "lock_internal.h"

int syncq_lock_pthread_mutex_init(syncq_lock_pthread_mutex *l, const syncq_lock_config *cfg) {
  if (l == NULL) return SYNCQ_EINVAL;
  int wait, ps;
  int r = lock_parse_config(cfg, SYNCQ_WAIT_BLOCK,
                            LOCK_WAIT_BIT(SYNCQ_WAIT_BLOCK) | LOCK_WAIT_BIT(SYNCQ_WAIT_COMPETITIVE), 1, &wait, &ps);
  if (r != SYNCQ_OK) return r;
  pthread_mutexattr_t a;
  if (pthread_mutexattr_init(&a) != 0) return SYNCQ_ESYS;
  int e = 0;
#if defined(PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP)
  if (wait == SYNCQ_WAIT_COMPETITIVE) e = pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
  if (e == 0 && ps) e = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  if (e == 0 && ps) e = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  if (e == 0) e = pthread_mutex_init(&l->mutex, &a);
  pthread_mutexattr_destroy(&a);
  if (e != 0) {
    errno = e;
    return e == ENOTSUP ? SYNCQ_ENOTSUP : SYNCQ_ESYS;
  }
  l->robust = ps != 0;
  atomic_init(&l->owner, 0);
  return SYNCQ_OK;
}

int syncq_lock_pthread_mutex_destroy(syncq_lock_pthread_mutex *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  /* a held mutex must not be destroyed: probe it first */
  int e = pthread_mutex_trylock(&l->mutex);
  if (e == EBUSY) return SYNCQ_EBUSY;
  if (e == EOWNERDEAD) pthread_mutex_consistent(&l->mutex);
  pthread_mutex_unlock(&l->mutex);
  return pthread_mutex_destroy(&l->mutex) == 0 ? SYNCQ_OK : SYNCQ_EBUSY;
}

/* Record the holder of a private mutex, just acquired. */
static int held_by_me(syncq_lock_pthread_mutex *l) {
  /* relaxed: read back by this thread only (unlock) or compared by a
   * misusing one; the mutex's acquire orders it after the previous holder's
   * clearing store. */
  if (!l->robust) atomic_store_explicit(&l->owner, (uintptr_t)pthread_self(), memory_order_relaxed);
  return SYNCQ_OK;
}

/* The bodies, one for the exported function and the ops table each (an
 * exported function is not inlined into the table's wrapper: the wrapper
 * would be one more jump per call). */
static inline int pmutex_lock(syncq_lock_pthread_mutex *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  int e = pthread_mutex_lock(&l->mutex);
  if (e == EOWNERDEAD) e = pthread_mutex_consistent(&l->mutex);
  if (e == 0) return held_by_me(l);
  errno = e;
  return e == EDEADLK ? SYNCQ_EBUSY : SYNCQ_ESYS;
}

static inline int pmutex_trylock(syncq_lock_pthread_mutex *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  int e = pthread_mutex_trylock(&l->mutex);
  if (e == EOWNERDEAD) e = pthread_mutex_consistent(&l->mutex);
  if (e == 0) return held_by_me(l);
  if (e == EBUSY) return SYNCQ_EBUSY;
  errno = e;
  return SYNCQ_ESYS;
}

static inline int pmutex_unlock(syncq_lock_pthread_mutex *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  if (!l->robust) {
    /* relaxed: the owner's own store (held_by_me) is the value that matters
     * here, and a thread reads its own stores; another thread's store can
     * only make the comparison fail, which is the point. */
    if (atomic_load_explicit(&l->owner, memory_order_relaxed) != (uintptr_t)pthread_self()) return SYNCQ_EINVAL;
    /* relaxed: written while holding the mutex, before the release below
     * (pthread_mutex_unlock) publishes it to the next holder. */
    atomic_store_explicit(&l->owner, 0, memory_order_relaxed);
  }
  int e = pthread_mutex_unlock(&l->mutex);
  SYNCQ_RACE_POINT("lock.handover");
  if (e == 0) return SYNCQ_OK;
  errno = e;
  return e == EPERM ? SYNCQ_EINVAL : SYNCQ_ESYS; /* robust: not the owner */
}

int syncq_lock_pthread_mutex_lock(syncq_lock_pthread_mutex *l) { return pmutex_lock(l); }
int syncq_lock_pthread_mutex_trylock(syncq_lock_pthread_mutex *l) { return pmutex_trylock(l); }
int syncq_lock_pthread_mutex_unlock(syncq_lock_pthread_mutex *l) { return pmutex_unlock(l); }

/* The ops table calls the bodies, not the exported functions. */
SYNCQ_LOCK_REGISTER_NODELESS_FNS(pthread_mutex, "pthread-mutex", "POSIX mutex (process-shared: robust)",
                                 "POSIX; 000 §3.1", BLOCKING, SYNCQ_PROP_PROCESS_SHARED | SYNCQ_PROP_SLEEPS_BY_DEFAULT,
                                 syncq_lock_pthread_mutex, syncq_lock_pthread_mutex_init,
                                 syncq_lock_pthread_mutex_destroy, pmutex_lock, pmutex_trylock, pmutex_unlock);
