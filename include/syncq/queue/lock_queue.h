/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/queue/lock_queue.h — linked queues behind locks from the registry:
 *   "single-lock"  one lock around a linked list with a dummy node
 *                  (001 §4's "single lock" queue);
 *   "two-lock"     Michael & Scott's two-lock queue (001 Figure 2): a dummy
 *                  node, a head lock for dequeuers and a tail lock for
 *                  enqueuers, so one enqueue and one dequeue run at once.
 * The lock is any registered lock, found by name (default "ttas": 001 uses
 * test-and-test-and-set with bounded exponential backoff for every lock).
 * Contracts: src/queue/single_lock.c, src/queue/two_lock.c.
 */
#ifndef SYNCQ_QUEUE_LOCK_QUEUE_H
#define SYNCQ_QUEUE_LOCK_QUEUE_H

#include "syncq/export.h"

#include <stddef.h>
#include <stdint.h>

#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of lock storage a lock queue reserves per lock; a registered lock
 * that needs more (or an alignment above a cache line) is SYNCQ_ENOTSUP. */
#define SYNCQ_QUEUE_LOCK_BYTES 256
/* The lock the registered "single-lock" and "two-lock" queues use. */
#define SYNCQ_QUEUE_DEFAULT_LOCK "ttas"

typedef struct syncq_queue_lnode syncq_queue_lnode; /* a list node (opaque) */

typedef struct syncq_queue_two_lock {
  SYNCQ_CACHELINE_ALIGNED unsigned char h_lock[SYNCQ_QUEUE_LOCK_BYTES]; /* dequeuers' lock */
  SYNCQ_CACHELINE_ALIGNED unsigned char t_lock[SYNCQ_QUEUE_LOCK_BYTES]; /* enqueuers' lock */
  SYNCQ_CACHELINE_ALIGNED syncq_queue_lnode *head;                      /* the dummy; under h_lock */
  SYNCQ_CACHELINE_ALIGNED syncq_queue_lnode *tail;                      /* the last node; under t_lock */
  SYNCQ_CACHELINE_ALIGNED const void *lock_ops;                         /* the lock's syncq_lock_ops, read-only */
  uint64_t magic;
} syncq_queue_two_lock;

typedef struct syncq_queue_single_lock {
  SYNCQ_CACHELINE_ALIGNED unsigned char lock[SYNCQ_QUEUE_LOCK_BYTES];
  SYNCQ_CACHELINE_ALIGNED syncq_queue_lnode *head; /* the dummy; under lock */
  syncq_queue_lnode *tail;                         /* the last node; under lock */
  const void *lock_ops;                            /* the lock's syncq_lock_ops, read-only */
  uint64_t magic;
} syncq_queue_single_lock;

/* Initialise with the named registered lock (NULL: SYNCQ_QUEUE_DEFAULT_LOCK),
 * each lock made with its defaults. SYNCQ_EINVAL: q is NULL or not aligned as its type.
 * SYNCQ_ENOENT: no lock of that name is registered. SYNCQ_ENOTSUP: the
 * lock needs more storage than SYNCQ_QUEUE_LOCK_BYTES or an alignment
 * above a cache line, or its init needs a double-width CAS the CPU lacks.
 * SYNCQ_ENOMEM: the dummy node could not be allocated. SYNCQ_ESYS: the
 * lock's init failed in the C library (pthread-mutex). */
SYNCQ_API int syncq_queue_two_lock_init(syncq_queue_two_lock *q, const char *lock_name);
/* Destroy the queue, freeing the nodes left (items still queued are the
 * caller's) and its locks.
 * SYNCQ_EINVAL: q is NULL or was not initialised.
 */
SYNCQ_API int syncq_queue_two_lock_destroy(syncq_queue_two_lock *q);
/* Enqueue item (non-NULL) under the tail lock.
 * SYNCQ_EINVAL: q or item is NULL.
 * SYNCQ_ENOMEM: no node could be allocated; the item is not queued.
 * SYNCQ_ELIMIT: the queue's lock has a fixed number of places (anderson,
 * array-cas, array-faa, sc-queue) and that many threads hold it or wait
 * for it; the item is not queued.
 * SYNCQ_ESYS: the queue's lock is "pthread-mutex" and pthread_mutex_lock
 * failed (errno holds why); the item is not queued.
 */
SYNCQ_API int syncq_queue_two_lock_enqueue(syncq_queue_two_lock *q, void *item);
/* Dequeue the oldest item into *item under the head lock.
 * SYNCQ_EMPTY: the queue held no item.
 * SYNCQ_EINVAL: q or item is NULL.
 * SYNCQ_ELIMIT: the queue's lock has a fixed number of places (anderson,
 * array-cas, array-faa, sc-queue) and that many threads hold it or wait
 * for it; the queue is not read.
 * SYNCQ_ESYS: the queue's lock is "pthread-mutex" and pthread_mutex_lock
 * failed (errno holds why); the queue is not read.
 */
SYNCQ_API int syncq_queue_two_lock_dequeue(syncq_queue_two_lock *q, void **item);

/* Initialise with the named registered lock (NULL: SYNCQ_QUEUE_DEFAULT_LOCK),
 * made with its defaults. SYNCQ_EINVAL: q is NULL or not aligned as its type.
 * SYNCQ_ENOENT: no lock of that name is registered. SYNCQ_ENOTSUP: the
 * lock needs more storage than SYNCQ_QUEUE_LOCK_BYTES or an alignment
 * above a cache line, or its init needs a double-width CAS the CPU lacks.
 * SYNCQ_ENOMEM: the dummy node could not be allocated. SYNCQ_ESYS: the
 * lock's init failed in the C library (pthread-mutex). */
SYNCQ_API int syncq_queue_single_lock_init(syncq_queue_single_lock *q, const char *lock_name);
/* Destroy the queue, freeing the nodes left (items still queued are the
 * caller's) and its lock.
 * SYNCQ_EINVAL: q is NULL or was not initialised.
 */
SYNCQ_API int syncq_queue_single_lock_destroy(syncq_queue_single_lock *q);

/* Enqueue item (non-NULL) under the queue's lock.
 * SYNCQ_EINVAL: q or item is NULL.
 * SYNCQ_ENOMEM: no node could be allocated; the item is not queued.
 * SYNCQ_ELIMIT: the queue's lock has a fixed number of places (anderson,
 * array-cas, array-faa, sc-queue) and that many threads hold it or wait
 * for it; the item is not queued.
 * SYNCQ_ESYS: the queue's lock is "pthread-mutex" and pthread_mutex_lock
 * failed (errno holds why); the item is not queued.
 */
SYNCQ_API int syncq_queue_single_lock_enqueue(syncq_queue_single_lock *q, void *item);

/* Dequeue the oldest item into *item under the queue's lock.
 * SYNCQ_EMPTY: the queue held no item.
 * SYNCQ_EINVAL: q or item is NULL.
 * SYNCQ_ELIMIT: the queue's lock has a fixed number of places (anderson,
 * array-cas, array-faa, sc-queue) and that many threads hold it or wait
 * for it; the queue is not read.
 * SYNCQ_ESYS: the queue's lock is "pthread-mutex" and pthread_mutex_lock
 * failed (errno holds why); the queue is not read.
 */
SYNCQ_API int syncq_queue_single_lock_dequeue(syncq_queue_single_lock *q, void **item);

#ifdef __cplusplus
}
#endif
#endif
