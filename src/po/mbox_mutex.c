/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mbox_mutex.c — "mutex": the inbox as a singly-linked list under one
 * pthread mutex (002 §4 "Pthread Mutex", Algorithms 3 and 4). The queue
 * code here is also that of "ttas" (mbox_ttas.c) and "mutex-nofree"
 * (mbox_mutex_nofree.c), which differ only in their lock and free list.
 *
 * Contract
 *   Source:      002 §4, Algorithms 3 (enqueue) and 4 (dequeue): head and
 *                tail NULL when empty; the message itself is dequeued (no
 *                copy-out). The lock is "pthread-mutex" from the lock
 *                registry (a futex-based mutex in glibc, 002 §6.2).
 *   Progress:    blocking (a preempted lock holder stops the inbox).
 *   Atomics:     enqueue and dequeue: one lock + one unlock (glibc: 1 CAS
 *                + 1 swap uncontended) and relaxed accesses under the lock.
 *   Errors:      a lock that refuses (its status: SYNCQ_ESYS from a
 *                failing pthread mutex) is answered: the enqueue links
 *                nothing, the dequeue reads nothing, and the postoffice
 *                passes the status to its caller (postoffice.c).
 *                destroy takes no lock ("mutex-nofree" frees the
 *                messages still linked there), so it cannot be refused.
 *   Memory:      the lock's storage is allocated at init; never allocates
 *                after. Messages are type-stable headers of the system
 *                (po.h); the queue itself never frees one.
 *   Signal-safe: no (pthread_mutex_lock).
 *   Process-shared: no (links hold addresses).
 *   Limits:      none (unbounded list).
 */
#include <stdlib.h>

#include "po_internal.h"

int po_lock1_init(void *p, syncq_po_system *sys) {
  po_lock1_mailbox *mb = p;
  mb->head = NULL;
  mb->tail = NULL;
  mb->lock_ops = sys->lock;
  mb->lock = syncq_alloc_aligned(sys->lock->size, sys->lock->align);
  if (mb->lock == NULL) return SYNCQ_ENOMEM;
  int r = sys->lock->init(mb->lock, NULL);
  if (r != SYNCQ_OK) {
    free(mb->lock);
    mb->lock = NULL;
  }
  return r;
}

void po_lock1_destroy(void *p, syncq_po_system *sys) {
  po_lock1_mailbox *mb = p;
  if (!sys->mb->free_list) { /* "mutex-nofree": what the inbox holds is malloc's */
    /* No lock: nobody else reaches the inbox now (po_mailbox_ops.destroy),
     * and a lock that refused would leak the messages. relaxed: the
     * links were written by senders that the destroy's caller has
     * joined or stopped, which orders their writes before ours. */
    syncq_po_msg *m = mb->head;
    while (m != NULL) {
      syncq_po_msg *next = atomic_load_explicit(&m->next, memory_order_relaxed);
      po_payload_free(m);
      free(m);
      m = next;
    }
    mb->head = mb->tail = NULL;
  }
  if (mb->lock == NULL) return;
  /* Nobody holds or waits for the lock now (as above): a destroy that
   * fails has nothing left to protect, and its memory goes either way. */
  (void)mb->lock_ops->destroy(mb->lock);
  free(mb->lock);
  mb->lock = NULL;
}

/* Algorithm 3. */
int po_lock1_enqueue(void *p, syncq_po_msg *m) {
  po_lock1_mailbox *mb = p;
  syncq_lock_node node;
  /* relaxed: the link is read only under the lock, whose release/acquire
   * orders it (unlock below pairs with the consumer's lock). */
  atomic_store_explicit(&m->next, NULL, memory_order_relaxed);
  int r = mb->lock_ops->lock(mb->lock, &node);
  if (r != SYNCQ_OK) return r; /* not held: nothing was linked, m is the sender's still */
  if (mb->head == NULL) {
    mb->head = m;
    mb->tail = m;
  } else {
    /* relaxed: under the lock (see above). */
    atomic_store_explicit(&mb->tail->next, m, memory_order_relaxed);
    mb->tail = m;
  }
  /* The holder's unlock of a lock it took: it has no failure to answer. */
  (void)mb->lock_ops->unlock(mb->lock, &node);
  return SYNCQ_OK;
}

/* Algorithm 4. */
int po_lock1_dequeue(void *p, syncq_po_msg **out) {
  po_lock1_mailbox *mb = p;
  syncq_lock_node node;
  syncq_po_msg *m = NULL;
  int r = mb->lock_ops->lock(mb->lock, &node);
  if (r != SYNCQ_OK) return r; /* not held: the inbox was not read */
  if (mb->head != NULL) {
    m = mb->head;
    /* relaxed: written under the same lock by an enqueuer (the lock's
     * acquire pairs with that enqueuer's unlock). */
    syncq_po_msg *next = atomic_load_explicit(&m->next, memory_order_relaxed);
    if (next == NULL) {
      mb->head = NULL;
      mb->tail = NULL;
    } else {
      mb->head = next;
    }
  }
  (void)mb->lock_ops->unlock(mb->lock, &node); /* the holder's: as in enqueue */
  if (m == NULL) return SYNCQ_EMPTY;
  *out = m;
  return SYNCQ_OK;
}

const po_mailbox_ops po_mailbox_mutex = {
  .name = "mutex",
  .title = "singly-linked list under one pthread mutex",
  .paper = "002 §4 Pthread Mutex, Algorithms 3-4",
  .lock_name = "pthread-mutex",
  .free_list = true,
  PO_LOCK1_MAILBOX_OPS,
};
