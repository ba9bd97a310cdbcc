/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mbox_two_lock.c — "two-lock": Michael & Scott's two-lock queue with a
 * dummy message and copy-out (002 §4 "Pthread Mutex (Two Locks)",
 * Algorithms 7 and 8): senders take the tail lock, the owner the head
 * lock, so a receiver is not held up by senders.
 *
 * Contract
 *   Source:      002 §4, Algorithms 7 (enqueue) and 8 (dequeue); Michael &
 *                Scott 1996 (001 Figure 2). Both locks are "pthread-mutex"
 *                from the lock registry.
 *   Deviation:   CreateMsg + CopyMsg + DestroyMsg(node) fused: the old
 *                dummy (out of the queue, and no sender can reach it: the
 *                tail is behind the head lock's new head) becomes the
 *                received message and takes the new dummy's fields and
 *                payload buffer (po_copy_out), so dequeue never allocates
 *                or fails; a LIFO free list would have handed back the
 *                same header.
 *   Errors:      a lock that refuses is answered as in "mutex"
 *                (mbox_mutex.c): nothing linked or read.
 *   Progress:    blocking (per end).
 *   Atomics:     enqueue: one lock/unlock of the tail lock + one release
 *                store; dequeue: one lock/unlock of the head lock + one
 *                acquire load.
 *   Memory:      two locks and one dummy header at init; never allocates
 *                after. Headers type-stable (reclaimed at system destroy).
 *   Signal-safe: no.
 *   Process-shared: no.
 *   Limits:      none.
 */
#include <stdlib.h>

#include "po_internal.h"

typedef struct two_lock_mailbox {
  SYNCQ_CACHELINE_ALIGNED syncq_po_msg *head; /* under head_lock */
  void *head_lock;
  SYNCQ_CACHELINE_ALIGNED syncq_po_msg *tail; /* under tail_lock */
  void *tail_lock;
  const syncq_lock_ops *ops;
} two_lock_mailbox;

static void *new_lock(const syncq_lock_ops *ops) {
  void *l = syncq_alloc_aligned(ops->size, ops->align);
  if (l != NULL && ops->init(l, NULL) != SYNCQ_OK) {
    free(l);
    l = NULL;
  }
  return l;
}

static void tl_destroy(void *p, syncq_po_system *sys) {
  (void)sys;
  two_lock_mailbox *mb = p;
  /* The system is going: nobody holds or waits for either lock, so a
   * destroy that fails has nothing left to protect (as mbox_mutex.c's). */
  if (mb->head_lock) (void)mb->ops->destroy(mb->head_lock);
  if (mb->tail_lock) (void)mb->ops->destroy(mb->tail_lock);
  free(mb->head_lock);
  free(mb->tail_lock);
  mb->head_lock = mb->tail_lock = NULL;
}

static int tl_init(void *p, syncq_po_system *sys) {
  two_lock_mailbox *mb = p;
  mb->ops = sys->lock;
  mb->head_lock = new_lock(mb->ops);
  mb->tail_lock = new_lock(mb->ops);
  syncq_po_msg *dummy = po_header_new(sys);
  if (mb->head_lock == NULL || mb->tail_lock == NULL || dummy == NULL) {
    tl_destroy(p, sys); /* a dummy taken stays on the system's list */
    return SYNCQ_ENOMEM;
  }
  atomic_store_explicit(&dummy->next, NULL, memory_order_relaxed); /* published by thread creation */
  mb->head = mb->tail = dummy;
  return SYNCQ_OK;
}

/* Algorithm 7. */
static int tl_enqueue(void *p, syncq_po_msg *m) {
  two_lock_mailbox *mb = p;
  syncq_lock_node node;
  /* relaxed: published by the release store of tail->next below. */
  atomic_store_explicit(&m->next, NULL, memory_order_relaxed);
  int r = mb->ops->lock(mb->tail_lock, &node);
  if (r != SYNCQ_OK) return r; /* not held: nothing was linked, m is the sender's still */
  /* release: pairs with the dequeuer's acquire load of node->next (it
   * holds the other lock, so the lock does not order them). */
  atomic_store_explicit(&mb->tail->next, m, memory_order_release);
  mb->tail = m;
  /* The holder's unlock of a lock it took: it has no failure to answer. */
  (void)mb->ops->unlock(mb->tail_lock, &node);
  return SYNCQ_OK;
}

/* Algorithm 8. */
static int tl_dequeue(void *p, syncq_po_msg **out) {
  two_lock_mailbox *mb = p;
  syncq_lock_node ln;
  int r = mb->ops->lock(mb->head_lock, &ln);
  if (r != SYNCQ_OK) return r; /* not held: the inbox was not read */
  syncq_po_msg *node = mb->head;
  /* acquire: pairs with the enqueuer's release store of the link. */
  syncq_po_msg *new_head = atomic_load_explicit(&node->next, memory_order_acquire);
  if (new_head == NULL) {
    (void)mb->ops->unlock(mb->head_lock, &ln);
    return SYNCQ_EMPTY;
  }
  mb->head = new_head;
  (void)mb->ops->unlock(mb->head_lock, &ln);
  po_copy_out(node, new_head);
  *out = node;
  return SYNCQ_OK;
}

const po_mailbox_ops po_mailbox_two_lock = {
  .name = "two-lock",
  .title = "Michael & Scott two-lock queue (head and tail pthread mutexes), copy-out",
  .paper = "002 §4 Pthread Mutex (Two Locks), Algorithms 7-8 (001 Figure 2)",
  .lock_name = "pthread-mutex",
  .free_list = true,
  .size = sizeof(two_lock_mailbox),
  .align = _Alignof(two_lock_mailbox),
  .init = tl_init,
  .destroy = tl_destroy,
  .enqueue = tl_enqueue,
  .dequeue = tl_dequeue,
};
