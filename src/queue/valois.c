/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * valois.c — Valois's lock-free queue with reference-counted nodes, the
 * counting corrected as Michael & Scott describe.
 *
 * Contract
 *   Source:      J. D. Valois, "Implementing Lock-Free Queues" (PDCS 1994,
 *                [23] of 001) and "Lock-Free Linked Lists Using
 *                Compare-and-Swap" (PODC 1995; [24] of 003) for the queue
 *                and its memory management (SafeRead / Release / New /
 *                Reclaim on per-node reference counts); M. M. Michael and
 *                M. L. Scott, "Correction of a Memory Management Method for
 *                Lock-Free Data Structures" (TR 599, Rochester, 1995) for
 *                the fix. The queue: a linked list with a dummy node; an
 *                enqueue links its node after the node Tail points at and
 *                then swings Tail; Tail may lag behind the last node, and
 *                even behind Head, because a dequeue only swings Head.
 *                Every link (Head, Tail, a node's next) and every private
 *                pointer a thread holds counts as one reference, so a node
 *                is recycled only when nothing can reach it.
 *   The fix:     Valois's Release recycled a node when its count reached
 *                zero; but a SafeRead that read the pointer just before the
 *                node was recycled increments (then, finding the pointer
 *                changed, decrements) the count of a node that is already
 *                on the free list or reused, and that decrement could bring
 *                it to zero again and recycle it twice. The correction
 *                (TR 599): the count is kept in units of 2, its low bit is a
 *                "claimed" flag; Release, on bringing the count to zero,
 *                must also win a CAS 0 -> 1 (claim) before recycling, so
 *                exactly one thread recycles a node; nodes on the free list
 *                stay claimed (count 1 plus transient stale references) and
 *                New clears the flag with a fetch-and-add of -1 once it owns
 *                the node. The free list is itself managed with SafeRead, so
 *                a popper's reference keeps the top node from coming back
 *                (no ABA without counted pointers).
 *   Progress:    lock-free. A failed CAS on the thread's own step is
 *                followed by bounded exponential backoff (cap 30 us).
 *   Atomics:     uncontended enqueue: New (SafeRead = 2 FAA-style RMW + CAS
 *                + FAA), 2 CAS and 5 FAA; dequeue: 2 SafeReads (2 FAA), 1
 *                CAS, 4 FAA, and a free-list push (1 CAS) when the old
 *                dummy's count reaches zero. The counts are why 003 found
 *                this queue the slowest of the three it measured.
 *   Memory:      nodes come in blocks (capacity at init, then `grow` more
 *                when the free list runs dry: malloc, not signal-safe) and
 *                go back to the queue's free list, never to the allocator
 *                before destroy: a stale SafeRead touches a recycled node's
 *                count, so node memory must stay type-stable.
 *                A thread stalled while holding a reference keeps that node
 *                and every node after it alive (the chain is counted), so
 *                memory use is bounded by the queue's history since the
 *                oldest held reference, not by its length.
 *   Signal-safe: no (a block may be allocated). Process-shared: no.
 *   Limits:      unbounded (ENOMEM when no block can be allocated); items
 *                non-NULL; counts are 64-bit (no overflow in practice).
 *   Stats:       cas_attempts, cas_failures (link and end-pointer CAS),
 *                retries, backoffs via the backoff module.
 */
#include "syncq/queue/valois.h"

#include <stdlib.h>

#include "../stats_internal.h"
#include "syncq/backoff.h"
#include "syncq/platform.h"
#include "syncq/queue.h"
#include "../race_internal.h" /* SYNCQ_RACE_POINT: nothing outside race tests */

#define VALOIS_MAGIC UINT64_C(0x56414c4f49535141)
#define VALOIS_MIN_NODES 64
#define VALOIS_GROW 256
#define CHUNK_HEADER 64 /* the nodes start one cache line into a block */

/* The count: one reference is REF; CLAIMED is the low bit (TR 599). */
#define REF UINT64_C(2)
#define CLAIMED UINT64_C(1)

struct syncq_queue_valois_node {
  _Atomic(uint64_t) refct;                 /* REF per reference, | CLAIMED when recycled */
  _Atomic(syncq_queue_valois_node *) next; /* counted link; the free-list link when free */
  _Atomic(void *) value;
  /* used only by syncq_queue_valois_audit, on a quiescent queue */
  uint64_t audit_links;
  uint32_t audit_mark;
};
typedef syncq_queue_valois_node vnode;

struct syncq_queue_valois_chunk {
  syncq_queue_valois_chunk *next;
  size_t n;
};

static inline vnode *chunk_nodes(syncq_queue_valois_chunk *c) { return (vnode *)(void *)((char *)c + CHUNK_HEADER); }

static inline void add_ref(vnode *p) { (void)syncq_pr_faa_u64(&p->refct, REF); }

/* Valois's SafeRead: a counted reference to the node *src points at, or
 * NULL. The count is raised before the re-check, so once the re-check
 * passes the node cannot be recycled until we Release it. */
static vnode *safe_read(syncq_queue_valois *q, _Atomic(vnode *) *src);

/* Valois's Reclaim: push a node whose count reached zero on the free list
 * (it stays claimed there). */
static void reclaim(syncq_queue_valois *q, vnode *p) {
  /* relaxed: validated by the CAS */
  vnode *top = atomic_load_explicit(&q->free, memory_order_relaxed);
  do {
    /* relaxed: published by the seq_cst CAS, read after the acquire
     * SafeRead of q->free in new_node */
    atomic_store_explicit(&p->next, top, memory_order_relaxed);
  } while (!atomic_compare_exchange_weak(&q->free, &top, p));
}

/* Release (corrected): drop one reference; whoever brings the count to zero
 * AND wins the claim recycles the node and drops the reference its next
 * link held, iteratively down the chain. */
static void release(syncq_queue_valois *q, vnode *p) {
  while (p != NULL) {
    uint64_t old = syncq_pr_faa_u64(&p->refct, (uint64_t)0 - REF);
    if (old != REF) return; /* others still hold it, or it is claimed */
    uint64_t zero = 0;
    if (!syncq_pr_cas_u64(&p->refct, &zero, CLAIMED)) return; /* a SafeRead got in: it will release */
    /* relaxed: we own the node now (claimed); its next was set before the
     * seq_cst CAS that linked or recycled anything after it. */
    vnode *next = atomic_load_explicit(&p->next, memory_order_relaxed);
    reclaim(q, p);
    p = next; /* p's link to next held a reference */
  }
}

static vnode *safe_read(syncq_queue_valois *q, _Atomic(vnode *) *src) {
  for (;;) {
    vnode *p = atomic_load(src);
    if (p == NULL) return NULL;
    add_ref(p);
    if (atomic_load(src) == p) return p;
    release(q, p);
  }
}

static int add_chunk(syncq_queue_valois *q, size_t n) {
  syncq_queue_valois_chunk *c = syncq_alloc_aligned(CHUNK_HEADER + n * sizeof(vnode), SYNCQ_CACHELINE);
  if (c == NULL) return SYNCQ_ENOMEM;
  c->n = n;
  vnode *nodes = chunk_nodes(c);
  for (size_t i = 0; i < n; i++) {
    atomic_init(&nodes[i].refct, CLAIMED); /* free nodes are claimed */
    atomic_init(&nodes[i].next, NULL);
    atomic_init(&nodes[i].value, NULL);
    nodes[i].audit_links = 0;
    nodes[i].audit_mark = 0;
  }
  /* the block list only grows: a plain CAS push has no ABA. relaxed:
   * validated by the CAS; only destroy and audit read the list. */
  syncq_queue_valois_chunk *top = atomic_load_explicit(&q->chunks, memory_order_relaxed);
  do {
    c->next = top;
  } while (!atomic_compare_exchange_weak(&q->chunks, &top, c));
  for (size_t i = 0; i < n; i++) reclaim(q, &nodes[i]);
  return SYNCQ_OK;
}

/* Valois's New (corrected): pop a node with a counted reference to it and
 * return it holding exactly that reference, unclaimed. */
static vnode *new_node(syncq_queue_valois *q) {
  for (;;) {
    vnode *p = safe_read(q, &q->free);
    if (p == NULL) {
      if (add_chunk(q, q->grow) != SYNCQ_OK) return NULL;
      continue;
    }
    /* Our reference keeps p from being recycled again, so if q->free is
     * still p, p never left the list and its link is current. relaxed:
     * the acquire in safe_read's seq_cst load paired with reclaim's CAS. */
    vnode *next = atomic_load_explicit(&p->next, memory_order_relaxed);
    vnode *expected = p;
    if (atomic_compare_exchange_strong(&q->free, &expected, next)) {
      (void)syncq_pr_faa_u64(&p->refct, (uint64_t)0 - CLAIMED); /* ours now: unclaim */
      return p;
    }
    release(q, p);
  }
}

/* Swing a counted link from old to new: the link's reference moves from
 * old to new. The caller holds references to both. */
static bool swing(syncq_queue_valois *q, _Atomic(vnode *) *link, vnode *old, vnode *new_) {
  add_ref(new_);
  SYNCQ_STAT_INC(cas_attempts);
  if (atomic_compare_exchange_strong(link, &old, new_)) {
    release(q, old);
    return true;
  }
  SYNCQ_STAT_INC(cas_failures);
  release(q, new_);
  return false;
}

int syncq_queue_valois_init(syncq_queue_valois *q, size_t capacity) {
  if (q == NULL || ((uintptr_t)q % _Alignof(syncq_queue_valois)) != 0) return SYNCQ_EINVAL;
  if (capacity > (SIZE_MAX - CHUNK_HEADER) / sizeof(vnode) - 1) return SYNCQ_EINVAL;
  atomic_init(&q->free, NULL);
  atomic_init(&q->chunks, NULL);
  q->grow = VALOIS_GROW;
  int r = add_chunk(q, capacity + 1 < VALOIS_MIN_NODES ? VALOIS_MIN_NODES : capacity + 1);
  if (r != SYNCQ_OK) return r;
  vnode *dummy = new_node(q); /* one reference: ours, handed to Head */
  atomic_store(&dummy->next, NULL);
  add_ref(dummy); /* and one for Tail */
  atomic_init(&q->head, dummy);
  atomic_init(&q->tail, dummy);
  q->magic = VALOIS_MAGIC;
  return SYNCQ_OK;
}

int syncq_queue_valois_destroy(syncq_queue_valois *q) {
  if (q == NULL || q->magic != VALOIS_MAGIC) return SYNCQ_EINVAL;
  syncq_queue_valois_chunk *c = atomic_load(&q->chunks);
  while (c != NULL) {
    syncq_queue_valois_chunk *next = c->next;
    free(c);
    c = next;
  }
  q->magic = 0;
  return SYNCQ_OK;
}

int syncq_queue_valois_enqueue(syncq_queue_valois *q, void *item) {
  if (q == NULL || item == NULL || q->magic != VALOIS_MAGIC) return SYNCQ_EINVAL;
  vnode *node = new_node(q);
  if (node == NULL) return SYNCQ_ENOMEM;
  /* relaxed (both): private until the seq_cst CAS that links it */
  atomic_store_explicit(&node->value, item, memory_order_relaxed);
  atomic_store_explicit(&node->next, NULL, memory_order_relaxed);
  syncq_backoff_exp b;
  syncq_backoff_exp_init_default(&b);
  vnode *p;
  for (;;) {
    p = safe_read(q, &q->tail);
    add_ref(node); /* the reference p's next link will hold */
    vnode *expected = NULL;
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(&p->next, &expected, node)) break;
    SYNCQ_STAT_INC(cas_failures);
    release(q, node); /* not linked: drop the link's reference */
    /* Tail lags (its next is set and never goes back to NULL while we hold
     * p): help it one node along, then retry. */
    vnode *n = safe_read(q, &p->next);
    if (n != NULL) {
      (void)swing(q, &q->tail, p, n);
      release(q, n);
    }
    release(q, p);
    SYNCQ_STAT_INC(retries);
    syncq_backoff_exp_wait(&b);
  }
  SYNCQ_RACE_POINT("queue.valois.enqueue.linked"); /* linked, Tail not swung: others must help */
  (void)swing(q, &q->tail, p, node);               /* failure: someone helped */
  release(q, p);
  release(q, node); /* New's reference */
  return SYNCQ_OK;
}

int syncq_queue_valois_dequeue(syncq_queue_valois *q, void **item) {
  if (q == NULL || item == NULL || q->magic != VALOIS_MAGIC) return SYNCQ_EINVAL;
  syncq_backoff_exp b;
  syncq_backoff_exp_init_default(&b);
  vnode *p, *n;
  for (;;) {
    p = safe_read(q, &q->head);
    SYNCQ_RACE_POINT("queue.valois.dequeue.read"); /* Head read and referenced */
    n = safe_read(q, &p->next);
    if (n == NULL) {
      /* p was Head when read, and a Head's next never goes back to NULL:
       * p was still Head, with no item after it, when next was read. */
      release(q, p);
      return SYNCQ_EMPTY;
    }
    if (swing(q, &q->head, p, n)) break;
    release(q, n);
    release(q, p);
    SYNCQ_STAT_INC(retries);
    syncq_backoff_exp_wait(&b);
  }
  /* n is the new dummy and carries our item; our reference keeps it from
   * being recycled while we read. relaxed: pairs with the enqueuer's
   * seq_cst linking CAS through the seq_cst load in safe_read. */
  *item = atomic_load_explicit(&n->value, memory_order_relaxed);
  release(q, n);
  release(q, p);
  return SYNCQ_OK;
}

int syncq_queue_valois_audit(syncq_queue_valois *q, syncq_queue_valois_audit_result *out) {
  if (q == NULL || out == NULL || q->magic != VALOIS_MAGIC) return SYNCQ_EINVAL;
  enum { UNSEEN = 0, LIVE = 1, FREE = 2, BOTH = 3 };
  syncq_queue_valois_audit_result r = {0, 0, 0, 0, 0};
  for (syncq_queue_valois_chunk *c = atomic_load(&q->chunks); c != NULL; c = c->next) {
    vnode *nodes = chunk_nodes(c);
    for (size_t i = 0; i < c->n; i++) {
      nodes[i].audit_links = 0;
      nodes[i].audit_mark = UNSEEN;
    }
    r.nodes += c->n;
  }
  for (vnode *p = atomic_load(&q->free); p != NULL; p = atomic_load(&p->next)) {
    if (p->audit_mark == FREE) break; /* a cycle: count it once */
    p->audit_mark = FREE;
    r.free++;
  }
  vnode *head = atomic_load(&q->head), *tail = atomic_load(&q->tail);
  head->audit_links++;
  tail->audit_links++;
  vnode *starts[2] = {head, tail};
  for (int s = 0; s < 2; s++) {
    for (vnode *p = starts[s]; p != NULL && (p->audit_mark & LIVE) == 0; p = atomic_load(&p->next)) {
      p->audit_mark |= LIVE;
      r.live++;
      vnode *next = atomic_load(&p->next);
      if (next != NULL) next->audit_links++;
    }
  }
  for (vnode *p = atomic_load(&head->next); p != NULL; p = atomic_load(&p->next)) r.items++;
  for (syncq_queue_valois_chunk *c = atomic_load(&q->chunks); c != NULL; c = c->next) {
    vnode *nodes = chunk_nodes(c);
    for (size_t i = 0; i < c->n; i++) {
      uint64_t ct = atomic_load(&nodes[i].refct);
      switch (nodes[i].audit_mark) {
      case LIVE:
        r.bad_counts += ct != nodes[i].audit_links * REF;
        break;
      case FREE:
        r.bad_counts += ct != CLAIMED;
        break;
      case BOTH:
        r.bad_counts++;
        break;
      default:
        break; /* leaked: shows as live + free < nodes */
      }
    }
  }
  *out = r;
  return SYNCQ_OK;
}

SYNCQ_QUEUE_REGISTER_FIXED(valois, "valois",
                           "Valois lock-free queue (reference counts, corrected per Michael & Scott TR 599)",
                           "[23] of 001 / [24] of 003; Michael & Scott TR 599 (1995)", LOCK_FREE,
                           SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES);
