/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/lock/pthread_mutex.h — the POSIX mutex as a syncq lock ("pthread-
 * mutex"), the baseline every lock is compared with. Process-shared locks
 * are PTHREAD_PROCESS_SHARED and robust (000 §3: POSIX mutex packet claim).
 */
#ifndef SYNCQ_LOCK_PTHREAD_MUTEX_H
#define SYNCQ_LOCK_PTHREAD_MUTEX_H

#include "syncq/export.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "syncq/atomic.h"
#include "syncq/lock.h"
#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct syncq_lock_pthread_mutex {
  SYNCQ_CACHELINE_ALIGNED pthread_mutex_t mutex;
  bool robust; /* process-shared locks are robust */
  /* The holder of a private mutex (pthread_self(), 0 when free): unlock by
   * any other thread is SYNCQ_EINVAL, as for every syncq lock, instead of
   * glibc's silent success on a normal mutex (after which the mutex could
   * never be destroyed). Robust mutexes have glibc's own owner check. */
  _Atomic(uintptr_t) owner;
} syncq_lock_pthread_mutex;

/* cfg NULL: a default (private, normal) mutex. Disciplines: DEFAULT and
 * BLOCK (the mutex blocks), COMPETITIVE (glibc's adaptive mutex: spins a
 * while, then blocks). process_shared: PTHREAD_PROCESS_SHARED + robust.
 * A robust lock whose owner died is made consistent and returned held
 * (SYNCQ_OK). SYNCQ_EINVAL: l is NULL, or cfg->wait is no syncq_wait_discipline.
 * SYNCQ_ENOTSUP: cfg->wait is SPIN or YIELD, or the C library refuses an
 * attribute with ENOTSUP. SYNCQ_ESYS: pthread_mutexattr_init, an
 * attribute or pthread_mutex_init failed otherwise (errno says why). */
SYNCQ_API int syncq_lock_pthread_mutex_init(syncq_lock_pthread_mutex *l, const syncq_lock_config *cfg);
/* Destroy the pthread mutex.
 * SYNCQ_EINVAL: l is NULL.
 * SYNCQ_EBUSY: pthread_mutex_destroy refused: the mutex is held.
 */
SYNCQ_API int syncq_lock_pthread_mutex_destroy(syncq_lock_pthread_mutex *l);
/* Acquire the mutex, waiting for it (a robust one whose owner died is made
 * consistent and taken).
 * SYNCQ_EINVAL: l is NULL.
 * SYNCQ_EBUSY: pthread_mutex_lock reported EDEADLK: the calling thread
 * holds the mutex already.
 * SYNCQ_ESYS: pthread_mutex_lock failed otherwise; errno holds why.
 */
SYNCQ_API int syncq_lock_pthread_mutex_lock(syncq_lock_pthread_mutex *l);
/* Acquire the mutex only if it is free, without waiting.
 * SYNCQ_EBUSY: another thread holds the mutex.
 * SYNCQ_EINVAL: l is NULL.
 * SYNCQ_ESYS: pthread_mutex_trylock failed otherwise; errno holds why.
 */
SYNCQ_API int syncq_lock_pthread_mutex_trylock(syncq_lock_pthread_mutex *l);
/* Release the mutex.
 * SYNCQ_EINVAL: l is NULL, or the caller does not hold it (a private mutex:
 * its recorded owner is another thread; a robust one: EPERM).
 * SYNCQ_ESYS: pthread_mutex_unlock failed otherwise; errno holds why.
 */
SYNCQ_API int syncq_lock_pthread_mutex_unlock(syncq_lock_pthread_mutex *l);

#ifdef __cplusplus
}
#endif
#endif
