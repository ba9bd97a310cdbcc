/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/pqueue/skew_lock.h — a skew heap (Sleator & Tarjan 1986) under a
 * single lock taken from the lock registry by name (default "ttas"), the
 * lock-based priority queue of 001 §4.3. Blocking.
 */
#ifndef SYNCQ_PQUEUE_SKEW_LOCK_H
#define SYNCQ_PQUEUE_SKEW_LOCK_H

#include "syncq/export.h"

#include <stdint.h>

#include "syncq/lock.h"
#include "syncq/pqueue.h"
#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

struct syncq_pqueue_skew_lock_node;

typedef struct syncq_pqueue_skew_lock {
  SYNCQ_CACHELINE_ALIGNED void *lock; /* the lock's storage */
  const syncq_lock_ops *lock_ops;
  const syncq_algo *lock_algo;
  struct syncq_pqueue_skew_lock_node *nodes; /* capacity nodes */
  uint32_t root;                             /* index + 1, 0 when empty; guarded by lock */
  uint32_t free_head;                        /* free nodes linked through left; guarded by lock */
} syncq_pqueue_skew_lock;

/* cfg as syncq_pqueue_create's; the lock is cfg->lock (default "ttas"),
 * made with its defaults. SYNCQ_EINVAL: q is NULL, cfg->capacity is above
 * SYNCQ_PQUEUE_MAX_CAPACITY, or cfg->max_threads above SYNCQ_PQUEUE_MAX_THREADS.
 * SYNCQ_ENOENT: cfg->lock names no registered lock. SYNCQ_ENOMEM: the lock
 * or the node pool could not be allocated. SYNCQ_ENOTSUP: the lock's init
 * needs a double-width CAS the CPU lacks. SYNCQ_ESYS: the lock's init
 * failed in the C library (pthread-mutex). */
SYNCQ_API int syncq_pqueue_skew_lock_init(syncq_pqueue_skew_lock *q, const syncq_pqueue_config *cfg);
/* Destroy the priority queue, freeing its nodes.
 * SYNCQ_EINVAL: q is NULL.
 * SYNCQ_EBUSY: the lock is held (an insert or delete_min has not returned);
 * nothing is freed.
 */
SYNCQ_API int syncq_pqueue_skew_lock_destroy(syncq_pqueue_skew_lock *q);
/* Insert payload with priority key (the least key comes out first).
 * SYNCQ_EINVAL: q is NULL.
 * SYNCQ_ENOMEM: the pool has no free node (the queue holds capacity items);
 * the item is not inserted.
 * SYNCQ_ELIMIT: the queue's lock is "anderson" and is held and waited for
 * by as many threads as it has places (64).
 * SYNCQ_ESYS: the queue's lock is "pthread-mutex" and pthread_mutex_lock
 * failed; errno holds why.
 */
SYNCQ_API int syncq_pqueue_skew_lock_insert(syncq_pqueue_skew_lock *q, uint64_t key, void *payload);
/* Remove an item of least key into *key and *payload.
 * SYNCQ_EMPTY: the priority queue held no item.
 * SYNCQ_EINVAL: q, key or payload is NULL.
 * SYNCQ_ELIMIT: the queue's lock is "anderson" and is held and waited for
 * by as many threads as it has places (64).
 * SYNCQ_ESYS: the queue's lock is "pthread-mutex" and pthread_mutex_lock
 * failed; errno holds why.
 */
SYNCQ_API int syncq_pqueue_skew_lock_delete_min(syncq_pqueue_skew_lock *q, uint64_t *key, void **payload);

#ifdef __cplusplus
}
#endif
#endif
