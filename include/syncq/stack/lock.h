/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/stack/lock.h — the single-lock stack of 001 §4.2: a linked list
 * with a Top pointer, every push and pop under one lock taken from the
 * lock registry by name (default "ttas", 001's test-and-test-and-set lock
 * with bounded exponential backoff). Blocking.
 */
#ifndef SYNCQ_STACK_LOCK_H
#define SYNCQ_STACK_LOCK_H

#include "syncq/export.h"

#include <stdint.h>

#include "syncq/lock.h"
#include "syncq/pr.h"
#include "syncq/stack.h"

#ifdef __cplusplus
extern "C" {
#endif

struct syncq_stack_lock_node;

typedef struct syncq_stack_lock {
  SYNCQ_CACHELINE_ALIGNED void *lock; /* the lock's storage (aligned allocation) */
  const syncq_lock_ops *lock_ops;
  const syncq_algo *lock_algo;
  struct syncq_stack_lock_node *nodes; /* capacity nodes */
  uint32_t top;                        /* index + 1, 0 when empty; guarded by lock */
  uint32_t free_head;                  /* free nodes, linked by next; guarded by lock */
} syncq_stack_lock;

/* cfg as syncq_stack_create's; the lock is cfg->lock (default "ttas"),
 * made with its defaults. SYNCQ_EINVAL: s is NULL, cfg->capacity is above
 * SYNCQ_STACK_MAX_CAPACITY, or cfg->max_threads above SYNCQ_STACK_MAX_THREADS.
 * SYNCQ_ENOENT: cfg->lock names no registered lock. SYNCQ_ENOMEM: the lock
 * or the node pool could not be allocated. SYNCQ_ENOTSUP: the lock's init
 * needs a double-width CAS the CPU lacks. SYNCQ_ESYS: the lock's init
 * failed in the C library (pthread-mutex). */
SYNCQ_API int syncq_stack_lock_init(syncq_stack_lock *s, const syncq_stack_config *cfg);
/* Destroy the stack, freeing its pool and its lock.
 * SYNCQ_EINVAL: s is NULL.
 * SYNCQ_EBUSY: the lock is held (a push or pop has not returned); nothing
 * is freed.
 */
SYNCQ_API int syncq_stack_lock_destroy(syncq_stack_lock *s);
/* Push item (non-NULL) on the stack.
 * SYNCQ_EINVAL: s or item is NULL.
 * SYNCQ_ENOMEM: every node of its pool (capacity nodes) is in the stack;
 * the item is not pushed.
 * SYNCQ_ELIMIT: the stack's lock is "anderson" and is held and waited for
 * by as many threads as it has places (64).
 * SYNCQ_ESYS: the stack's lock is "pthread-mutex" and pthread_mutex_lock
 * failed; errno holds why.
 */
SYNCQ_API int syncq_stack_lock_push(syncq_stack_lock *s, void *item);
/* Pop the newest item into *item.
 * SYNCQ_EMPTY: the stack held no item.
 * SYNCQ_EINVAL: s or item is NULL.
 * SYNCQ_ELIMIT: the stack's lock is "anderson" and is held and waited for
 * by as many threads as it has places (64).
 * SYNCQ_ESYS: the stack's lock is "pthread-mutex" and pthread_mutex_lock
 * failed; errno holds why.
 */
SYNCQ_API int syncq_stack_lock_pop(syncq_stack_lock *s, void **item);

#ifdef __cplusplus
}
#endif
#endif
