/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mbox_mpsc.c — "mpsc": an intrusive multi-producer single-consumer list
 * (Vyukov's design): a sender publishes its message with one exchange on
 * the tail and then links the previous tail to it; the owner walks the
 * list from its head. Our sixth mailbox, beyond 002: the one we would
 * choose for an inbox (many senders, one receiver, no copy-out).
 *
 * Contract
 *   Source:      D. Vyukov, "Intrusive MPSC node-based queue" (1024cores,
 *                2010), written from the idea; not in 002. A stub header
 *                embedded in the mailbox stands in when the list is empty.
 *   Progress:    enqueue wait-free (one exchange + one store, no loop);
 *                dequeue wait-free but blocking in one sense: a sender
 *                preempted between its exchange and its link hides its
 *                message and every later one (and an earlier one the
 *                owner has not taken: the link it waits for is the one
 *                that leads past it) until it resumes. The dequeue tells
 *                that state apart from an empty list: PO_MBOX_ON_ITS_WAY
 *                when the tail is not where the owner's walk ends (the
 *                stub, or the last linked message) while that end's link
 *                is still unset, i.e. a sender has exchanged the tail and
 *                not linked; try_recv answers it as SYNCQ_EBUSY and the
 *                waiting receives wait on (postoffice.c). SYNCQ_EMPTY is
 *                then exact: it is answered only when the stub is both
 *                the head and the tail, read after its unset link, so at
 *                that read no message is linked and no sender is between
 *                its two steps (only the owner pushes the stub, and it
 *                is not pushing); a send that completed before the
 *                dequeue began has its exchange before that read
 *                (happens-before, coherence of the tail), so it is never
 *                missed. In the window a dequeue takes nothing though
 *                the list is not empty, and says so; its other answers
 *                are linearizable (po_test checks them on recorded
 *                histories): FIFO per sender and overall in exchange
 *                order, SYNCQ_EMPTY at its read of the tail.
 *   Atomics:     enqueue: 1 exchange + 1 release store; dequeue: acquire
 *                loads (1 exchange more when it re-inserts the stub).
 *   Memory:      never allocates; the message itself is dequeued. A sender
 *                writes only the link of the header it displaced as tail,
 *                which the owner cannot have dequeued yet (it never takes
 *                a header whose link is unset), so no stale access exists.
 *   Signal-safe: no (the postoffice around it is not).
 *   Process-shared: no (links hold addresses).
 *   Limits:      none.
 */
#include "../race_internal.h"
#include "po_internal.h"

typedef struct mpsc_mailbox {
  SYNCQ_CACHELINE_ALIGNED _Atomic(syncq_po_msg *) tail; /* senders' end */
  SYNCQ_CACHELINE_ALIGNED syncq_po_msg *head;           /* the owner's alone */
  syncq_po_msg stub;
} mpsc_mailbox;

static int mpsc_init(void *p, syncq_po_system *sys) {
  (void)sys;
  mpsc_mailbox *mb = p;
  atomic_init(&mb->stub.next, NULL);
  mb->head = &mb->stub;
  atomic_init(&mb->tail, &mb->stub);
  return SYNCQ_OK;
}

static void mpsc_destroy(void *p, syncq_po_system *sys) {
  (void)p;
  (void)sys;
}

static void mpsc_push(mpsc_mailbox *mb, syncq_po_msg *m) {
  /* relaxed: published by the release store into prev->next below. */
  atomic_store_explicit(&m->next, NULL, memory_order_relaxed);
  /* acq_rel: acquire pairs with the release of the sender that displaced
   * prev (its message fields); release orders m->next = NULL first. */
  syncq_po_msg *prev = atomic_exchange_explicit(&mb->tail, m, memory_order_acq_rel);
  SYNCQ_RACE_POINT("po.mpsc.exchanged"); /* the window: m is the tail, unlinked */
  /* release: pairs with the owner's acquire load of prev->next, so m's
   * fields are visible when it is dequeued. */
  atomic_store_explicit(&prev->next, m, memory_order_release);
}

static int mpsc_enqueue(void *p, syncq_po_msg *m) {
  mpsc_push(p, m);
  return SYNCQ_OK; /* no lock: it cannot be refused */
}

/* The owner's end of the list, its link unset: SYNCQ_EMPTY if the tail is
 * there too, PO_MBOX_ON_ITS_WAY if a sender has made another message the
 * tail and not yet linked (the contract above). */
static int mpsc_stuck(mpsc_mailbox *mb, const syncq_po_msg *end) {
  /* acquire: pairs with the exchange of a sender that made another
   * message the tail (as in mpsc_dequeue). */
  return atomic_load_explicit(&mb->tail, memory_order_acquire) == end ? SYNCQ_EMPTY : PO_MBOX_ON_ITS_WAY;
}

static int mpsc_dequeue(void *p, syncq_po_msg **out) {
  mpsc_mailbox *mb = p;
  syncq_po_msg *head = mb->head;
  /* acquire: pairs with the sender's release store of the link. */
  syncq_po_msg *next = atomic_load_explicit(&head->next, memory_order_acquire);
  if (head == &mb->stub) {
    if (next == NULL) return mpsc_stuck(mb, &mb->stub);
    mb->head = next;
    head = next;
    next = atomic_load_explicit(&head->next, memory_order_acquire); /* as above */
  }
  if (next != NULL) {
    mb->head = next;
    *out = head;
    return SYNCQ_OK;
  }
  /* head is the last linked message: take it only if it is the tail, by
   * putting the stub behind it. acquire: pairs with the exchange of a
   * sender that made another message the tail. */
  if (head != atomic_load_explicit(&mb->tail, memory_order_acquire))
    return PO_MBOX_ON_ITS_WAY; /* a sender is between its steps */
  mpsc_push(mb, &mb->stub);
  next = atomic_load_explicit(&head->next, memory_order_acquire); /* as above */
  if (next == NULL) return PO_MBOX_ON_ITS_WAY; /* a sender got in before the stub and has not linked yet */
  mb->head = next;
  *out = head;
  return SYNCQ_OK;
}

const po_mailbox_ops po_mailbox_mpsc = {
  .name = "mpsc",
  .title = "intrusive multi-producer single-consumer list (Vyukov), wait-free senders",
  .paper = "beyond 002: Vyukov's intrusive MPSC queue",
  .lock_name = NULL,
  .free_list = true,
  .size = sizeof(mpsc_mailbox),
  .align = _Alignof(mpsc_mailbox),
  .init = mpsc_init,
  .destroy = mpsc_destroy,
  .enqueue = mpsc_enqueue,
  .dequeue = mpsc_dequeue,
};
