/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/counter/lock.h — lock-based counters: a plain add under any
 * registered lock (001 §5's "single lock" counter; 003 §4.1's locked
 * counter), found by name in the lock registry: syncq_counter_lock_init
 * takes any lock name and config. Registered (so np99-counter and the
 * counter driver run them) as
 *   "lock-ttas"         TTAS with bounded exponential backoff (001's lock)
 *   "lock-ticket"       ticket lock, competitive spinning
 *   "lock-futex-mutex"  three-state futex mutex, immediate blocking
 * (plus "mutex", the pthread one, in syncq/counter/mutex.h). The ticket
 * lock uses competitive spinning: under oversubscription a FIFO lock that
 * busy-waits hands the lock to preempted threads (a convoy). The queue
 * locks (MCS, array) are not registered as counters: even competitive,
 * their FIFO hand-over to a preempted thread costs a context switch per
 * increment once threads outnumber processors (16-19 s for np99-counter's
 * million empty-loop increments at 4 threads on 2 cores).
 */
#ifndef SYNCQ_COUNTER_LOCK_H
#define SYNCQ_COUNTER_LOCK_H

#include "syncq/export.h"

#include <stdint.h>

#include "syncq/lock.h"
#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct syncq_counter_lock {
  SYNCQ_CACHELINE_ALIGNED int64_t value; /* guarded by the lock */
  const syncq_lock_ops *ops;
  void *lock; /* the lock's storage, allocated by init */
} syncq_counter_lock;

/* A counter under a lock of the named algorithm with the given config
 * (NULL: defaults). Its statuses past the first three are the lock's
 * init's for cfg.
 * SYNCQ_EINVAL: c or lock_name is NULL, or the lock's init finds cfg bad
 * (an unknown discipline). SYNCQ_ENOENT: no lock of that name is
 * registered. SYNCQ_ENOMEM: the lock's storage could not be allocated.
 * SYNCQ_ENOTSUP: the lock's init refuses cfg's discipline or
 * process_shared, or needs a double-width CAS the CPU lacks.
 * SYNCQ_ELIMIT: the lock's init refuses cfg->max_threads. SYNCQ_ESYS: the
 * lock's init failed in the C library (pthread-mutex). */
SYNCQ_API int syncq_counter_lock_init(syncq_counter_lock *c, int64_t initial, const char *lock_name,
                                      const syncq_lock_config *cfg);
/* Destroy the counter, freeing its lock.
 * SYNCQ_EINVAL: c is NULL or has no lock (never initialised, or destroyed
 * already).
 * SYNCQ_EBUSY: the lock's destroy sees it held or awaited (a fetch_add or
 * load has not returned); nothing is freed.
 */
SYNCQ_API int syncq_counter_lock_destroy(syncq_counter_lock *c);
/* Add delta under the lock; *old (if not NULL) gets the value before.
 * SYNCQ_EINVAL: c is NULL or has no lock (never initialised, or destroyed
 * already).
 * SYNCQ_ELIMIT: the lock is "anderson" and is held and waited for by as
 * many threads as cfg->max_threads allows.
 * SYNCQ_EBUSY: the lock is "pthread-mutex" and pthread_mutex_lock reported
 * EDEADLK (the calling thread holds it already).
 * SYNCQ_ESYS: the lock is "pthread-mutex" and pthread_mutex_lock failed
 * otherwise; errno holds why.
 */
SYNCQ_API int syncq_counter_lock_fetch_add(syncq_counter_lock *c, int64_t delta, int64_t *old);
/* Read the current value under the lock into *value.
 * SYNCQ_EINVAL: c or value is NULL, or c has no lock (never initialised, or
 * destroyed already).
 * SYNCQ_ELIMIT: the lock is "anderson" and is held and waited for by as
 * many threads as cfg->max_threads allows.
 * SYNCQ_EBUSY: the lock is "pthread-mutex" and pthread_mutex_lock reported
 * EDEADLK (the calling thread holds it already).
 * SYNCQ_ESYS: the lock is "pthread-mutex" and pthread_mutex_lock failed
 * otherwise; errno holds why.
 */
SYNCQ_API int syncq_counter_lock_load(syncq_counter_lock *c, int64_t *value);

#ifdef __cplusplus
}
#endif
#endif
