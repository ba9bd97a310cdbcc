/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * plj.c — Prakash, Lee and Johnson's non-blocking queue ("snapshot and help").
 *
 * Contract
 *   Source:      Prakash, Lee & Johnson, "A Nonblocking Algorithm for Shared
 *                Queues Using Compare-and-Swap", IEEE Trans. Computers
 *                43(5), 1994 ([19] of 001, [21] of 003), as 001 §4.1 and
 *                Michael & Scott (PODC'96 §1) describe it: a singly linked
 *                list with Head and Tail; an enqueue takes two CAS (link the
 *                node after the last one, then swing Tail), a dequeue one
 *                (swing Head); every operation first takes a snapshot of
 *                the queue's state (Head, Tail and Tail's next, validated by
 *                re-reading Head and Tail), and if the snapshot shows an
 *                operation in progress (an enqueue that linked its node but
 *                has not swung Tail) it completes that operation and takes
 *                another snapshot; only on a quiescent snapshot does it try
 *                its own CAS. This is the difference from "ms" (which helps
 *                only when it is in the way): PLJ operations never act on a
 *                state with a pending operation.
 *                The 1994 paper's own text was not at hand: the list keeps
 *                a dummy node (Head points at it) as Michael & Scott's does,
 *                which is what makes a dequeue a single CAS as the
 *                description says; PLJ's own representation of the empty
 *                queue may differ. Pointers are (pointer, count) pairs, as
 *                PLJ require of their CAS to defeat ABA.
 *   Progress:    lock-free: a pending enqueue is completed by whoever sees
 *                it, so no stalled thread blocks the others. A failed CAS
 *                on the thread's own step is followed by bounded
 *                exponential backoff (cap 30 us), as for every non-blocking
 *                structure of 001.
 *   Atomics:     uncontended enqueue: free-list pop (1 DWCAS) + 2 DWCAS;
 *                dequeue: 1 DWCAS + free-list push (1 DWCAS); snapshots
 *                are 5 (enqueue) or 7 (dequeue) 64-bit loads.
 *   Memory:      type-stable nodes on a counted free list (syncq/reclaim.h),
 *                added in blocks (capacity at init, then `grow` more when
 *                the list runs dry: malloc, not signal-safe); blocks are
 *                freed only by destroy, so a stalled thread may still read
 *                a recycled node: every decision taken on such a read is
 *                validated by a counted CAS or a re-read.
 *   Signal-safe: no (a block may be allocated). Process-shared: no.
 *   Limits:      unbounded (ENOMEM when no block can be allocated); items
 *                non-NULL; SYNCQ_ENOTSUP without double-width CAS.
 *   Stats:       cas_attempts, cas_failures (queue CAS; the free list
 *                counts its own), retries (inconsistent snapshots and
 *                snapshots that found an operation to help), backoffs via
 *                the backoff module.
 */
#include "syncq/queue/plj.h"

#include <stdlib.h>

#include "../stats_internal.h"
#include "syncq/backoff.h"
#include "syncq/platform.h"
#include "syncq/queue.h"
#include "../race_internal.h" /* SYNCQ_RACE_POINT: nothing outside race tests */

#define PLJ_MAGIC UINT64_C(0x504c4a51554555a1)
#define PLJ_MIN_NODES 64 /* nodes made at init at least */
#define PLJ_GROW 256     /* nodes per block when the free list runs dry */
#define CHUNK_HEADER 64  /* the nodes start one cache line into a block */

typedef struct plj_node {
  syncq_pr_dw_atomic next; /* (node, count) */
  _Atomic(void *) value;
  syncq_fl_link link; /* on the free list */
} plj_node;

struct syncq_queue_plj_chunk {
  syncq_queue_plj_chunk *next;
  size_t n;
};

/* A snapshot of the queue's state: the two end pointers and the link that
 * says whether an enqueue is half done. */
typedef struct plj_snapshot {
  syncq_pr_dw head, tail, tail_next;
} plj_snapshot;

static inline bool dw_eq(syncq_pr_dw a, syncq_pr_dw b) { return a.lo == b.lo && a.hi == b.hi; }
static inline plj_node *node_of(uint64_t w) { return (plj_node *)(uintptr_t)w; }
static inline uint64_t word_of(plj_node *n) { return (uint64_t)(uintptr_t)n; }

static int add_chunk(syncq_queue_plj *q, size_t n) {
  syncq_queue_plj_chunk *c = syncq_alloc_aligned(CHUNK_HEADER + n * sizeof(plj_node), SYNCQ_CACHELINE);
  if (c == NULL) return SYNCQ_ENOMEM;
  c->n = n;
  plj_node *nodes = (plj_node *)(void *)((char *)c + CHUNK_HEADER);
  for (size_t i = 0; i < n; i++) {
    atomic_init(&nodes[i].next.lo, 0);
    atomic_init(&nodes[i].next.hi, 0);
    atomic_init(&nodes[i].value, NULL);
  }
  /* the block list only grows: a plain CAS push has no ABA. relaxed:
   * validated by the CAS, and only destroy reads the list. */
  syncq_queue_plj_chunk *top = atomic_load_explicit(&q->chunks, memory_order_relaxed);
  do {
    c->next = top;
  } while (!atomic_compare_exchange_weak(&q->chunks, &top, c));
  return syncq_freelist_fill(&q->free, nodes, n, sizeof(plj_node), offsetof(plj_node, link));
}

static plj_node *new_node(syncq_queue_plj *q) {
  for (;;) {
    syncq_fl_link *l;
    if (syncq_freelist_pop(&q->free, &l) == SYNCQ_OK) return SYNCQ_FL_CONTAINER(l, plj_node, link);
    if (add_chunk(q, q->grow) != SYNCQ_OK) return NULL;
  }
}

/* Take a consistent snapshot: Head, Tail and Tail's next were all current
 * at the moment next was read, because Head and Tail (whose counts only
 * grow) read the same before and after it. */
static void take_snapshot(syncq_queue_plj *q, plj_snapshot *s) {
  for (;;) {
    s->head = syncq_pr_dw_load(&q->head);
    s->tail = syncq_pr_dw_load(&q->tail);
    s->tail_next = syncq_pr_dw_load(&node_of(s->tail.lo)->next);
    if (dw_eq(s->tail, syncq_pr_dw_load(&q->tail)) && dw_eq(s->head, syncq_pr_dw_load(&q->head))) return;
    SYNCQ_STAT_INC(retries);
  }
}

/* If the snapshot shows an enqueue that linked its node but has not swung
 * Tail, complete it (swing Tail) and return true: the caller takes
 * another snapshot. */
static bool help_pending(syncq_queue_plj *q, plj_snapshot *s) {
  if (s->tail_next.lo == 0) return false;
  SYNCQ_STAT_INC(retries);
  SYNCQ_STAT_INC(cas_attempts);
  if (!syncq_pr_dwcas(&q->tail, &s->tail, (syncq_pr_dw){s->tail_next.lo, s->tail.hi + 1})) SYNCQ_STAT_INC(cas_failures);
  return true;
}

int syncq_queue_plj_init(syncq_queue_plj *q, size_t capacity) {
  if (q == NULL || ((uintptr_t)q % _Alignof(syncq_queue_plj)) != 0) return SYNCQ_EINVAL;
  if (capacity > (SIZE_MAX - CHUNK_HEADER) / sizeof(plj_node) - 1) return SYNCQ_EINVAL;
  int r = syncq_freelist_init(&q->free);
  if (r != SYNCQ_OK) return r;
  atomic_init(&q->chunks, NULL);
  q->grow = PLJ_GROW;
  if ((r = add_chunk(q, capacity + 1 < PLJ_MIN_NODES ? PLJ_MIN_NODES : capacity + 1)) != SYNCQ_OK) return r;
  plj_node *dummy = new_node(q);
  atomic_init(&dummy->next.lo, 0);
  atomic_init(&q->head.lo, word_of(dummy));
  atomic_init(&q->head.hi, 0);
  atomic_init(&q->tail.lo, word_of(dummy));
  atomic_init(&q->tail.hi, 0);
  q->magic = PLJ_MAGIC;
  return SYNCQ_OK;
}

int syncq_queue_plj_destroy(syncq_queue_plj *q) {
  if (q == NULL || q->magic != PLJ_MAGIC) return SYNCQ_EINVAL;
  syncq_queue_plj_chunk *c = atomic_load(&q->chunks);
  while (c != NULL) {
    syncq_queue_plj_chunk *next = c->next;
    free(c);
    c = next;
  }
  q->magic = 0;
  return SYNCQ_OK;
}

int syncq_queue_plj_enqueue(syncq_queue_plj *q, void *item) {
  if (q == NULL || item == NULL || q->magic != PLJ_MAGIC) return SYNCQ_EINVAL;
  plj_node *node = new_node(q);
  if (node == NULL) return SYNCQ_ENOMEM;
  /* relaxed (both): the node is private until the seq_cst CAS that links
   * it publishes them. Only next's pointer half is reset: its count keeps
   * growing so a stalled enqueuer's CAS on the node's previous life fails. */
  atomic_store_explicit(&node->value, item, memory_order_relaxed);
  atomic_store_explicit(&node->next.lo, 0, memory_order_relaxed);
  syncq_backoff_exp b;
  syncq_backoff_exp_init_default(&b);
  plj_snapshot s;
  for (;;) {
    take_snapshot(q, &s);
    if (help_pending(q, &s)) continue; /* complete the other enqueue first */
    /* quiescent: Tail is the last node; link ours after it */
    SYNCQ_STAT_INC(cas_attempts);
    if (syncq_pr_dwcas(&node_of(s.tail.lo)->next, &s.tail_next, (syncq_pr_dw){word_of(node), s.tail_next.hi + 1}))
      break;
    SYNCQ_STAT_INC(cas_failures);
    syncq_backoff_exp_wait(&b);
  }
  SYNCQ_RACE_POINT("queue.plj.enqueue.linked"); /* linked, Tail not swung: others must help */
  /* second step: swing Tail; failure means another operation completed it */
  SYNCQ_STAT_INC(cas_attempts);
  if (!syncq_pr_dwcas(&q->tail, &s.tail, (syncq_pr_dw){word_of(node), s.tail.hi + 1})) SYNCQ_STAT_INC(cas_failures);
  return SYNCQ_OK;
}

int syncq_queue_plj_dequeue(syncq_queue_plj *q, void **item) {
  if (q == NULL || item == NULL || q->magic != PLJ_MAGIC) return SYNCQ_EINVAL;
  syncq_backoff_exp b;
  syncq_backoff_exp_init_default(&b);
  plj_snapshot s;
  void *value;
  for (;;) {
    take_snapshot(q, &s);
    if (help_pending(q, &s)) continue; /* complete the pending enqueue first */
    /* quiescent snapshot: Tail is the last node. Head == Tail means the
     * dummy is the only node: the queue was empty when tail_next was read
     * (the linearization point of an empty dequeue). */
    if (s.head.lo == s.tail.lo) return SYNCQ_EMPTY;
    syncq_pr_dw first = syncq_pr_dw_load(&node_of(s.head.lo)->next);
    /* Head unchanged after reading its next: first is the first item's
     * node (Head's count grows on every swing, so no ABA). */
    if (!dw_eq(s.head, syncq_pr_dw_load(&q->head))) {
      SYNCQ_STAT_INC(retries);
      continue;
    }
    /* read the value before the CAS: afterwards the node may be recycled.
     * relaxed: pairs with the enqueuer's seq_cst linking CAS through the
     * acquire loads of next; a stale value is rejected by the CAS below. */
    SYNCQ_RACE_POINT("queue.plj.dequeue.read"); /* a snapshot taken, Head not yet swung */
    value = atomic_load_explicit(&node_of(first.lo)->value, memory_order_relaxed);
    SYNCQ_STAT_INC(cas_attempts);
    if (syncq_pr_dwcas(&q->head, &s.head, (syncq_pr_dw){first.lo, s.head.hi + 1})) break;
    SYNCQ_STAT_INC(cas_failures);
    syncq_backoff_exp_wait(&b);
  }
  *item = value;
  (void)syncq_freelist_push(&q->free, &node_of(s.head.lo)->link); /* the old dummy */
  return SYNCQ_OK;
}

SYNCQ_QUEUE_REGISTER_FIXED(plj, "plj", "Prakash-Lee-Johnson non-blocking queue (snapshot and help, counted pointers)",
                           "[19] of 001 (IEEE TC 1994), as 001 §4.1 describes it", LOCK_FREE,
                           SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES);
