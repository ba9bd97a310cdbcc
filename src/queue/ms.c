/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ms.c — Michael & Scott's non-blocking queue with counted pointers.
 *
 * Contract
 *   Source:      Michael & Scott (001) §4.1 (the "MS non-blocking" queue of
 *                Figure 1's experiment), from the pseudo-code of their
 *                PODC'96 paper (reference [17] of 001): a singly linked list
 *                with a dummy node; Head and Tail and every node's next are
 *                (pointer, count) pairs swung by CAS, the count defeating
 *                ABA; Tail may lag one node and is helped along. Nodes are
 *                type-stable on a free list (001 §3), as in the paper.
 *   Progress:    lock-free. As in 001 §3-4, a failed CAS is followed by
 *                bounded exponential backoff (cap 30 us).
 *   Atomics:     uncontended enqueue: free-list pop (1 DWCAS) + 2 DWCAS;
 *                dequeue: 1 DWCAS + free-list push (1 DWCAS); plus loads.
 *   Memory:      nodes come in blocks (capacity at init, then `grow` more
 *                when the free list runs dry: malloc, not signal-safe);
 *                nodes are never returned to the allocator before destroy
 *                (type-stable: a stalled thread may still read them).
 *   Signal-safe: no (a block may be allocated). Process-shared: no.
 *   Limits:      unbounded (ENOMEM when no block can be allocated); items
 *                non-NULL; 64-bit counts never wrap in practice.
 *                SYNCQ_ENOTSUP without double-width CAS.
 *   Stats:       cas_attempts, cas_failures (queue CAS; the free list
 *                counts its own), backoffs.
 *   Reads:       a (pointer, count) pair is read as two words and may be
 *                torn; every decision taken on one is validated by a CAS
 *                on both words or a re-read, as the paper's are.
 */
#include "syncq/queue/ms.h"

#include <stdlib.h>

#include "../stats_internal.h"
#include "syncq/backoff.h"
#include "syncq/platform.h"
#include "syncq/queue.h"
#include "../race_internal.h" /* SYNCQ_RACE_POINT: nothing outside race tests */

#define MS_MAGIC UINT64_C(0x4d535155455545a1)
#define MS_MIN_NODES 64
#define MS_GROW 256

typedef struct ms_node {
  syncq_pr_dw_atomic next; /* (node, count) */
  _Atomic(void *) value;
  syncq_fl_link link; /* on the free list */
} ms_node;

struct syncq_queue_ms_chunk {
  syncq_queue_ms_chunk *next;
  size_t n;
};
#define CHUNK_HEADER 64 /* the nodes start one cache line in */

static inline bool dw_eq(syncq_pr_dw a, syncq_pr_dw b) { return a.lo == b.lo && a.hi == b.hi; }
static inline ms_node *node_of(uint64_t w) { return (ms_node *)(uintptr_t)w; }

/* Add a block of n nodes to the free list. */
static int add_chunk(syncq_queue_ms *q, size_t n) {
  syncq_queue_ms_chunk *c = syncq_alloc_aligned(CHUNK_HEADER + n * sizeof(ms_node), SYNCQ_CACHELINE);
  if (c == NULL) return SYNCQ_ENOMEM;
  c->n = n;
  ms_node *nodes = (ms_node *)(void *)((char *)c + CHUNK_HEADER);
  for (size_t i = 0; i < n; i++) {
    atomic_init(&nodes[i].next.lo, 0);
    atomic_init(&nodes[i].next.hi, 0);
    atomic_init(&nodes[i].value, NULL);
  }
  /* the block list only grows: a plain CAS push has no ABA */
  syncq_queue_ms_chunk *top =
    atomic_load_explicit(&q->chunks, memory_order_relaxed); /* relaxed: validated by the CAS */
  do {
    c->next = top;
  } while (!atomic_compare_exchange_weak(&q->chunks, &top, c));
  return syncq_freelist_fill(&q->free, nodes, n, sizeof(ms_node), offsetof(ms_node, link));
}

static ms_node *new_node(syncq_queue_ms *q) {
  for (;;) {
    syncq_fl_link *l;
    if (syncq_freelist_pop(&q->free, &l) == SYNCQ_OK) return SYNCQ_FL_CONTAINER(l, ms_node, link);
    if (add_chunk(q, q->grow) != SYNCQ_OK) return NULL;
  }
}

int syncq_queue_ms_init(syncq_queue_ms *q, size_t capacity) {
  if (q == NULL || ((uintptr_t)q % _Alignof(syncq_queue_ms)) != 0) return SYNCQ_EINVAL;
  int r = syncq_freelist_init(&q->free);
  if (r != SYNCQ_OK) return r;
  atomic_init(&q->chunks, NULL);
  q->grow = MS_GROW;
  if (capacity > (SIZE_MAX - CHUNK_HEADER) / sizeof(ms_node) - 1) return SYNCQ_EINVAL;
  if ((r = add_chunk(q, capacity + 1 < MS_MIN_NODES ? MS_MIN_NODES : capacity + 1)) != SYNCQ_OK) return r;
  ms_node *dummy = new_node(q);
  atomic_init(&dummy->next.lo, 0);
  atomic_init(&q->head.lo, (uint64_t)(uintptr_t)dummy);
  atomic_init(&q->head.hi, 0);
  atomic_init(&q->tail.lo, (uint64_t)(uintptr_t)dummy);
  atomic_init(&q->tail.hi, 0);
  q->magic = MS_MAGIC;
  return SYNCQ_OK;
}

int syncq_queue_ms_destroy(syncq_queue_ms *q) {
  if (q == NULL || q->magic != MS_MAGIC) return SYNCQ_EINVAL;
  syncq_queue_ms_chunk *c = atomic_load(&q->chunks);
  while (c != NULL) {
    syncq_queue_ms_chunk *next = c->next;
    free(c);
    c = next;
  }
  q->magic = 0;
  return SYNCQ_OK;
}

int syncq_queue_ms_enqueue(syncq_queue_ms *q, void *item) {
  if (q == NULL || item == NULL) return SYNCQ_EINVAL;
  ms_node *node = new_node(q);
  if (node == NULL) return SYNCQ_ENOMEM;
  /* value, relaxed: published by the seq_cst CAS that links the node.
   * next.lo, release: a dequeuer that read head before this node's last
   * dequeue may still read its next (nodes are type-stable); the release
   * pairs with that dequeuer's acquire load of next, so its re-read of head
   * (the consistency check) sees the head CAS that retired the node, which
   * happened before our pop of it from the free list. Relaxed, the stale
   * dequeuer could pass its check with next 0 and a tail past head, and
   * dereference node 0 (found by GenMC under RC11 and IMM:
   * models/genmc/ms_queue.c -DGENMC_BEFORE_FIX). Only the pointer half is
   * reset: its count must keep growing, or a stalled enqueuer's CAS on
   * this node's previous life could succeed. */
  atomic_store_explicit(&node->value, item, memory_order_relaxed);
  atomic_store_explicit(&node->next.lo, 0, memory_order_release);
  syncq_backoff_exp b;
  syncq_backoff_exp_init_default(&b);
  syncq_pr_dw tail;
  for (;;) {
    tail = syncq_pr_dw_load(&q->tail);
    syncq_pr_dw next = syncq_pr_dw_load(&node_of(tail.lo)->next);
    if (!dw_eq(tail, syncq_pr_dw_load(&q->tail))) continue; /* are tail and next consistent? */
    if (next.lo == 0) {                                     /* tail was the last node: try to link ours */
      SYNCQ_STAT_INC(cas_attempts);
      if (syncq_pr_dwcas(&node_of(tail.lo)->next, &next, (syncq_pr_dw){(uint64_t)(uintptr_t)node, next.hi + 1})) break;
      SYNCQ_STAT_INC(cas_failures);
      syncq_backoff_exp_wait(&b);
    } else { /* tail lags: swing it to the next node */
      SYNCQ_STAT_INC(cas_attempts);
      if (!syncq_pr_dwcas(&q->tail, &tail, (syncq_pr_dw){next.lo, tail.hi + 1})) SYNCQ_STAT_INC(cas_failures);
    }
  }
  SYNCQ_RACE_POINT("queue.ms.enqueue.linked"); /* linked, Tail not swung: others must help */
  /* swing tail to our node; failure means someone helped */
  SYNCQ_STAT_INC(cas_attempts);
  if (!syncq_pr_dwcas(&q->tail, &tail, (syncq_pr_dw){(uint64_t)(uintptr_t)node, tail.hi + 1}))
    SYNCQ_STAT_INC(cas_failures);
  return SYNCQ_OK;
}

int syncq_queue_ms_dequeue(syncq_queue_ms *q, void **item) {
  if (q == NULL || item == NULL) return SYNCQ_EINVAL;
  syncq_backoff_exp b;
  syncq_backoff_exp_init_default(&b);
  syncq_pr_dw head;
  void *value;
  for (;;) {
    head = syncq_pr_dw_load(&q->head);
    syncq_pr_dw tail = syncq_pr_dw_load(&q->tail);
    syncq_pr_dw next = syncq_pr_dw_load(&node_of(head.lo)->next);
    if (!dw_eq(head, syncq_pr_dw_load(&q->head))) continue; /* consistent? */
    if (head.lo == tail.lo) {                               /* empty, or tail lagging */
      if (next.lo == 0) return SYNCQ_EMPTY;
      SYNCQ_STAT_INC(cas_attempts);
      if (!syncq_pr_dwcas(&q->tail, &tail, (syncq_pr_dw){next.lo, tail.hi + 1})) SYNCQ_STAT_INC(cas_failures);
      continue;
    }
    /* read the value before the CAS: afterwards another dequeue may free
     * the node. relaxed: pairs with the enqueuer's linking CAS through the
     * acquire load of next; a stale value is rejected by the CAS below. */
    SYNCQ_RACE_POINT("queue.ms.dequeue.read"); /* Head read, not yet swung */
    value = atomic_load_explicit(&node_of(next.lo)->value, memory_order_relaxed);
    SYNCQ_STAT_INC(cas_attempts);
    if (syncq_pr_dwcas(&q->head, &head, (syncq_pr_dw){next.lo, head.hi + 1})) break;
    SYNCQ_STAT_INC(cas_failures);
    syncq_backoff_exp_wait(&b);
  }
  *item = value;
  (void)syncq_freelist_push(&q->free, &node_of(head.lo)->link); /* the old dummy */
  return SYNCQ_OK;
}

SYNCQ_QUEUE_REGISTER_FIXED(ms, "ms", "Michael & Scott non-blocking queue (counted pointers, DWCAS, free list)",
                           "001 §4.1 and [17] (PODC'96 Figure 1)", LOCK_FREE,
                           SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES);
