/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mbox_nonblocking.c — "nonblocking": Michael & Scott's queue with a dummy
 * message and copy-out (002 §4 "Non-Blocking", Algorithms 5 and 6), one
 * consumer (the owner) and many producers (senders).
 *
 * Contract
 *   Source:      002 §4, Algorithms 5 (enqueue) and 6 (dequeue), which are
 *                Michael & Scott 1996 (001 Figure 1) for one dequeuer.
 *   Deviations:  (1) Counted pointers (001 Figure 1), not 002's plain ones,
 *                on tail and on every next link: 002 argues ABA cannot
 *                happen with a single reader, but once dequeued dummies
 *                are recycled (a COPY sender takes the recipient's free
 *                messages, which is where the dummies go) a sender
 *                stalled between reading tail and tail->next can see the
 *                same header come back as this inbox's tail (or another
 *                inbox's), and a plain CAS would then swing tail to, or
 *                link into, a message that is no longer in this queue.
 *                The 64-bit counts make those CASes fail.
 *                (2) 002's DestroyMsg(head) would free the old dummy
 *                while a stalled sender may still read head->next: here
 *                headers are type-stable (po.h), so that read is safe and
 *                the counted CAS that follows fails. The old dummy itself
 *                is the fresh message of the copy-out (CreateMsg and
 *                DestroyMsg fused), so dequeue never allocates.
 *                (3) head is written only by the owner, so 002's CAS on
 *                head is a plain store.
 *   Progress:    lock-free enqueue; dequeue is lock-free (it only helps a
 *                lagging tail).
 *   Atomics:     enqueue uncontended: 2 double-width CAS (link, swing
 *                tail) and 3 double-width loads; dequeue: 2 double-width
 *                loads, no CAS (one CAS when it helps the tail).
 *   Memory:      one dummy header taken at init; never allocates after.
 *                Headers type-stable (reclaimed at system destroy).
 *   Signal-safe: no (the postoffice around it is not).
 *   Process-shared: no (links hold addresses).
 *   Limits:      needs double-width CAS (the system checks it).
 */
#include "../stats_internal.h"
#include "po_internal.h"

typedef struct nb_mailbox {
  SYNCQ_CACHELINE_ALIGNED syncq_po_msg *head;      /* the owner's alone */
  SYNCQ_CACHELINE_ALIGNED syncq_pr_dw_atomic tail; /* lo: address, hi: count */
} nb_mailbox;

static inline syncq_po_msg *ptr_of(uint64_t lo) { return (syncq_po_msg *)(uintptr_t)lo; }
static inline uint64_t lo_of(const syncq_po_msg *m) { return (uint64_t)(uintptr_t)m; }
static inline bool dw_eq(syncq_pr_dw a, syncq_pr_dw b) { return a.lo == b.lo && a.hi == b.hi; }

static int nb_init(void *p, syncq_po_system *sys) {
  nb_mailbox *mb = p;
  syncq_po_msg *dummy = po_header_new(sys);
  if (dummy == NULL) return SYNCQ_ENOMEM;
  atomic_store_explicit(&dummy->cnext.lo, 0, memory_order_relaxed); /* published by thread creation */
  mb->head = dummy;
  atomic_init(&mb->tail.lo, lo_of(dummy));
  atomic_init(&mb->tail.hi, 0);
  return SYNCQ_OK;
}

static void nb_destroy(void *p, syncq_po_system *sys) {
  (void)p;
  (void)sys; /* the dummy and the queued headers are on the system's list */
}

/* Algorithm 5. */
static int nb_enqueue(void *p, syncq_po_msg *m) {
  nb_mailbox *mb = p;
  /* relaxed: m is private until the double-width CAS (seq_cst) that links
   * it, which pairs with the consumer's acquire load of the link. The
   * count (hi) is kept: a stalled sender's CAS expecting an older
   * (NULL, count) of this header fails. */
  atomic_store_explicit(&m->cnext.lo, 0, memory_order_relaxed);
  syncq_pr_dw tail;
  for (;;) {
    tail = syncq_pr_dw_load(&mb->tail);
    /* tail.lo may be stale: headers are type-stable, so the read is safe,
     * and the checks below catch it. */
    syncq_pr_dw next = syncq_pr_dw_load(&ptr_of(tail.lo)->cnext);
    syncq_pr_dw again = syncq_pr_dw_load(&mb->tail);
    if (!dw_eq(tail, again)) {
      SYNCQ_STAT_INC(retries);
      continue;
    }
    if (next.lo == 0) {
      SYNCQ_STAT_INC(cas_attempts);
      if (syncq_pr_dwcas(&ptr_of(tail.lo)->cnext, &next, (syncq_pr_dw){lo_of(m), next.hi + 1})) break;
      SYNCQ_STAT_INC(cas_failures);
    } else {
      /* tail lags: help it along. */
      SYNCQ_STAT_INC(cas_attempts);
      if (!syncq_pr_dwcas(&mb->tail, &tail, (syncq_pr_dw){next.lo, tail.hi + 1})) SYNCQ_STAT_INC(cas_failures);
    }
    SYNCQ_STAT_INC(retries);
  }
  SYNCQ_STAT_INC(cas_attempts);
  if (!syncq_pr_dwcas(&mb->tail, &tail, (syncq_pr_dw){lo_of(m), tail.hi + 1})) SYNCQ_STAT_INC(cas_failures);
  return SYNCQ_OK; /* no lock: it cannot be refused */
}

/* Algorithm 6, one consumer. */
static int nb_dequeue(void *p, syncq_po_msg **out) {
  nb_mailbox *mb = p;
  for (;;) {
    syncq_po_msg *head = mb->head;
    syncq_pr_dw tail = syncq_pr_dw_load(&mb->tail);
    /* head is in the queue and only this thread removes it: its link is
     * the true successor (acquire in dw_load pairs with the linking CAS). */
    syncq_pr_dw next = syncq_pr_dw_load(&head->cnext);
    if (ptr_of(tail.lo) == head) {
      if (next.lo == 0) return SYNCQ_EMPTY;
      SYNCQ_STAT_INC(cas_attempts);
      if (!syncq_pr_dwcas(&mb->tail, &tail, (syncq_pr_dw){next.lo, tail.hi + 1})) SYNCQ_STAT_INC(cas_failures);
      continue;
    }
    if (next.lo == 0) { /* a torn read of tail; look again */
      SYNCQ_STAT_INC(retries);
      continue;
    }
    syncq_po_msg *n = ptr_of(next.lo);
    mb->head = n;
    po_copy_out(head, n); /* the old dummy leaves with n's contents; n is the new dummy */
    *out = head;
    return SYNCQ_OK;
  }
}

const po_mailbox_ops po_mailbox_nonblocking = {
  .name = "nonblocking",
  .title = "Michael & Scott queue with a dummy message and copy-out (counted pointers)",
  .paper = "002 §4 Non-Blocking, Algorithms 5-6 (001 Figure 1)",
  .lock_name = NULL,
  .free_list = true,
  .size = sizeof(nb_mailbox),
  .align = _Alignof(nb_mailbox),
  .init = nb_init,
  .destroy = nb_destroy,
  .enqueue = nb_enqueue,
  .dequeue = nb_dequeue,
};
