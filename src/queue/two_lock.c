/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * two_lock.c — Michael & Scott's two-lock concurrent queue.
 *
 * Contract
 *   Source:      Michael & Scott (001) Figure 2 (the two-lock queue of their
 *                PODC'96 paper): a singly linked list with a dummy node at
 *                the head; Head is protected by H_lock and touched only by
 *                dequeuers, Tail by T_lock and touched only by enqueuers.
 *   Progress:    blocking (locks). The lock is any registered lock, found
 *                by name at init; the registered "two-lock" uses "ttas"
 *                (test-and-test-and-set, bounded exponential backoff, as
 *                every lock in 001).
 *   Atomics:     those of one lock acquire/release per operation, plus a
 *                release store (enqueue) or acquire load (dequeue) of a
 *                node's next pointer.
 *   Memory:      one malloc per enqueue, one free per dequeue (the paper's
 *                new_node()/free()); the dummy node is allocated at init.
 *   Signal-safe: no (locks, malloc). Process-shared: no (pointers).
 *   Limits:      unbounded; items non-NULL; capacity is ignored.
 *   Stats:       those of the lock.
 *   Note:        when the queue holds one item, the dequeuer reads the
 *                dummy's next while the enqueuer may be writing the last
 *                node's next (the same node when the queue is empty): that
 *                field is atomic, release by the enqueuer, acquire by the
 *                dequeuer, which also publishes the node's value.
 */
#include "lock_queue_internal.h"
#include "syncq/queue.h"

#define TWO_LOCK_MAGIC UINT64_C(0x54574f4c4f434b51)

int syncq_queue_two_lock_init(syncq_queue_two_lock *q, const char *lock_name) {
  if (q == NULL || ((uintptr_t)q % _Alignof(syncq_queue_two_lock)) != 0) return SYNCQ_EINVAL;
  const syncq_lock_ops *lops;
  int r = lockq_find(lock_name, &lops);
  if (r != SYNCQ_OK) return r;
  syncq_queue_lnode *dummy = lockq_node(NULL);
  if (dummy == NULL) return SYNCQ_ENOMEM;
  if ((r = lops->init(q->h_lock, NULL)) != SYNCQ_OK) {
    free(dummy);
    return r;
  }
  if ((r = lops->init(q->t_lock, NULL)) != SYNCQ_OK) {
    lops->destroy(q->h_lock);
    free(dummy);
    return r;
  }
  q->head = q->tail = dummy;
  q->lock_ops = lops;
  q->magic = TWO_LOCK_MAGIC;
  return SYNCQ_OK;
}

int syncq_queue_two_lock_destroy(syncq_queue_two_lock *q) {
  if (q == NULL || q->magic != TWO_LOCK_MAGIC) return SYNCQ_EINVAL;
  const syncq_lock_ops *lops = q->lock_ops;
  for (syncq_queue_lnode *n = q->head, *next; n != NULL; n = next) {
    next = atomic_load_explicit(&n->next, memory_order_relaxed); /* relaxed: no concurrent user */
    free(n);
  }
  lops->destroy(q->h_lock);
  lops->destroy(q->t_lock);
  q->magic = 0;
  return SYNCQ_OK;
}

int syncq_queue_two_lock_enqueue(syncq_queue_two_lock *q, void *item) {
  if (q == NULL || item == NULL) return SYNCQ_EINVAL;
  const syncq_lock_ops *lops = q->lock_ops;
  syncq_queue_lnode *node = lockq_node(item);
  if (node == NULL) return SYNCQ_ENOMEM;
  syncq_lock_node ln;
  int r = lops->lock(q->t_lock, &ln);
  if (r != SYNCQ_OK) { /* not held (a lock's limit, ESYS): nothing was linked */
    free(node);
    return r;
  }
  /* release: pairs with the dequeuer's acquire load of next; publishes the
   * node's value and next = NULL. */
  atomic_store_explicit(&q->tail->next, node, memory_order_release);
  q->tail = node;
  lops->unlock(q->t_lock, &ln);
  return SYNCQ_OK;
}

int syncq_queue_two_lock_dequeue(syncq_queue_two_lock *q, void **item) {
  if (q == NULL || item == NULL) return SYNCQ_EINVAL;
  const syncq_lock_ops *lops = q->lock_ops;
  syncq_lock_node ln;
  int r = lops->lock(q->h_lock, &ln);
  if (r != SYNCQ_OK) return r; /* not held: the queue was not read */
  syncq_queue_lnode *node = q->head;
  /* acquire: pairs with the enqueuer's release store of next. */
  syncq_queue_lnode *new_head = atomic_load_explicit(&node->next, memory_order_acquire);
  if (new_head == NULL) {
    lops->unlock(q->h_lock, &ln);
    return SYNCQ_EMPTY;
  }
  *item = new_head->value;
  q->head = new_head; /* new_head becomes the dummy */
  lops->unlock(q->h_lock, &ln);
  free(node);
  return SYNCQ_OK;
}

/* The registry's init takes a capacity, which a linked queue does not
 * use; the lock is the default one (NULL). */
static int init_default_lock(syncq_queue_two_lock *q, size_t capacity) {
  (void)capacity;
  return syncq_queue_two_lock_init(q, NULL);
}

SYNCQ_QUEUE_REGISTER_FIXED_FNS(two_lock, "two-lock", "Michael & Scott two-lock queue (head and tail locks, ttas)",
                               "001 Figure 2", BLOCKING,
                               SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES, syncq_queue_two_lock,
                               init_default_lock, syncq_queue_two_lock_destroy, syncq_queue_two_lock_enqueue,
                               syncq_queue_two_lock_dequeue);
