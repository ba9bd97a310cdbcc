/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * single_lock.c — a linked queue behind one lock.
 *
 * Contract
 *   Source:      Michael & Scott (001) §4-5: the "single lock" queue every
 *                other queue is normalized to (their experiments time each
 *                structure relative to it); the list with a dummy node of
 *                001 Figure 2, with one lock for both ends.
 *   Progress:    blocking (a lock). The lock is any registered lock, found
 *                by name at init; the registered "single-lock" uses "ttas"
 *                (001: test-and-test-and-set with bounded exponential
 *                backoff).
 *   Atomics:     those of one lock acquire/release per operation.
 *   Memory:      one malloc per enqueue, one free per dequeue; a dummy node
 *                allocated at init.
 *   Signal-safe: no. Process-shared: no (pointers).
 *   Limits:      unbounded; items non-NULL; capacity is ignored.
 *   Stats:       those of the lock.
 */
#include "lock_queue_internal.h"
#include "syncq/queue.h"

#define SINGLE_LOCK_MAGIC UINT64_C(0x53494e474c4c4f43)

int syncq_queue_single_lock_init(syncq_queue_single_lock *q, const char *lock_name) {
  if (q == NULL || ((uintptr_t)q % _Alignof(syncq_queue_single_lock)) != 0) return SYNCQ_EINVAL;
  const syncq_lock_ops *lops;
  int r = lockq_find(lock_name, &lops);
  if (r != SYNCQ_OK) return r;
  syncq_queue_lnode *dummy = lockq_node(NULL);
  if (dummy == NULL) return SYNCQ_ENOMEM;
  if ((r = lops->init(q->lock, NULL)) != SYNCQ_OK) {
    free(dummy);
    return r;
  }
  q->head = q->tail = dummy;
  q->lock_ops = lops;
  q->magic = SINGLE_LOCK_MAGIC;
  return SYNCQ_OK;
}

int syncq_queue_single_lock_destroy(syncq_queue_single_lock *q) {
  if (q == NULL || q->magic != SINGLE_LOCK_MAGIC) return SYNCQ_EINVAL;
  const syncq_lock_ops *lops = q->lock_ops;
  for (syncq_queue_lnode *n = q->head, *next; n != NULL; n = next) {
    next = atomic_load_explicit(&n->next, memory_order_relaxed); /* relaxed: no concurrent user */
    free(n);
  }
  lops->destroy(q->lock);
  q->magic = 0;
  return SYNCQ_OK;
}

int syncq_queue_single_lock_enqueue(syncq_queue_single_lock *q, void *item) {
  if (q == NULL || item == NULL) return SYNCQ_EINVAL;
  const syncq_lock_ops *lops = q->lock_ops;
  syncq_queue_lnode *node = lockq_node(item);
  if (node == NULL) return SYNCQ_ENOMEM;
  syncq_lock_node ln;
  int r = lops->lock(q->lock, &ln);
  if (r != SYNCQ_OK) { /* not held (a lock's limit, ESYS): nothing was linked */
    free(node);
    return r;
  }
  /* relaxed: every access to next is under the lock, which orders them. */
  atomic_store_explicit(&q->tail->next, node, memory_order_relaxed);
  q->tail = node;
  lops->unlock(q->lock, &ln);
  return SYNCQ_OK;
}

int syncq_queue_single_lock_dequeue(syncq_queue_single_lock *q, void **item) {
  if (q == NULL || item == NULL) return SYNCQ_EINVAL;
  const syncq_lock_ops *lops = q->lock_ops;
  syncq_lock_node ln;
  int r = lops->lock(q->lock, &ln);
  if (r != SYNCQ_OK) return r; /* not held: the queue was not read */
  syncq_queue_lnode *node = q->head;
  /* relaxed: under the lock, which orders it after the enqueuer's store. */
  syncq_queue_lnode *new_head = atomic_load_explicit(&node->next, memory_order_relaxed);
  if (new_head == NULL) {
    lops->unlock(q->lock, &ln);
    return SYNCQ_EMPTY;
  }
  *item = new_head->value;
  q->head = new_head;
  lops->unlock(q->lock, &ln);
  free(node);
  return SYNCQ_OK;
}

/* The registry's init takes a capacity, which a linked queue does not
 * use; the lock is the default one (NULL). */
static int init_default_lock(syncq_queue_single_lock *q, size_t capacity) {
  (void)capacity;
  return syncq_queue_single_lock_init(q, NULL);
}

SYNCQ_QUEUE_REGISTER_FIXED_FNS(single_lock, "single-lock", "linked queue behind one lock (ttas)",
                               "001 §4-5 (the single-lock queue)", BLOCKING,
                               SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES,
                               syncq_queue_single_lock, init_default_lock, syncq_queue_single_lock_destroy,
                               syncq_queue_single_lock_enqueue, syncq_queue_single_lock_dequeue);
