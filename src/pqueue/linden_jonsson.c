/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * linden_jonsson.c — Lindén & Jonsson's skiplist priority queue.
 *
 * Contract
 *   Source:      J. Lindén and B. Jonsson, "A skiplist-based concurrent
 *                priority queue with minimal memory contention", OPODIS
 *                2013 (their Algorithms 1-4: Insert, LocatePreds,
 *                DeleteMin, Restructure), the modern reference priority
 *                queue. A skiplist with head and tail sentinels.
 *                A node is logically deleted by setting the low bit of its
 *                PREDECESSOR's level-0 next pointer (fetch-and-or), so the
 *                deleted nodes always form a prefix of the level-0 list;
 *                delete_min walks that prefix and claims the first node it
 *                marks itself. The prefix is unlinked physically only when
 *                a delete_min walked more than BoundOffset
 *                (SYNCQ_PQUEUE_LJ_BOUND_OFFSET) deleted nodes: one CAS
 *                moves head's level-0 pointer to the last deleted node,
 *                Restructure moves head's upper pointers past the deleted
 *                nodes, and the unlinked nodes are retired. Nodes still
 *                being inserted (flag `inserting`) are never unlinked: the
 *                new head stops at the first one. Inserts find their
 *                predecessors skipping deleted nodes and never link after
 *                a node whose level-0 pointer is marked (their CAS expects
 *                an unmarked pointer), and stop building upper levels once
 *                the node or its successor is deleted.
 *   Progress:    lock-free (insert and delete_min retry only when another
 *                operation succeeded); delete_min's prefix walk is
 *                wait-free per node.
 *   Atomics:     delete_min: 1 fetch-and-or per attempt to claim (the
 *                deleted prefix is walked with plain loads: see the loop),
 *                + 1 CAS every ~BoundOffset deletions
 *                (+ the head pointers Restructure moves); insert: 1 CAS per
 *                level (expected 2); both + EBR enter/leave and the item
 *                count (1 fetch-and-add).
 *   Keys:        any 64-bit key; equal keys are allowed (pqueue.h): an
 *                insert goes before the equal keys already present, so
 *                among equal keys delete_min returns the newest first
 *                (no FIFO promise among ties, none is made by pqueue.h).
 *   Memory:      every node is allocated at init (pqueue.h: never after),
 *                with room for all levels (fixed stride); levels =
 *                ceil(log2(capacity)), 4..32, p = 1/2. Unlinked nodes are
 *                retired to epoch-based reclamation (syncq/reclaim.h) and
 *                come back to the pool's free list (a counted-pointer
 *                Treiber list) once no operation can see them. The pool
 *                has room for capacity items plus slack for the deleted
 *                prefix and the limbo lists (capacity + 4 BoundOffset +
 *                4 SYNCQ_EBR_COLLECT_EVERY more nodes).
 *   Capacity:    an item count (fetch-and-add) enforces `capacity`: insert
 *                returns SYNCQ_ENOMEM when capacity items are held or
 *                being inserted. A thread stalled inside an operation
 *                stops reclamation (EBR): when the slack is used up,
 *                insert forces collections and yields, and only if no
 *                node came back within LJ_ALLOC_PATIENCE_NS (2 s) returns
 *                SYNCQ_ENOMEM (pqueue.h: "its node pool has no free
 *                node"), the structure unchanged. A preempted thread on a
 *                loaded machine delays inserts this way (blocking in
 *                effect while its quantum lasts: the price of EBR); the
 *                lab's ms98-heap at 2 threads ran out of the slack before
 *                this wait was added.
 *   Linearizable: insert at its level-0 CAS, delete_min at the
 *                fetch-and-or that claims its node (or, for EMPTY, at the
 *                read of a tail pointer after the deleted prefix).
 *   Signal-safe: no (EBR records). Process-shared: no.
 *   Limits:      capacity <= SYNCQ_PQUEUE_MAX_CAPACITY; SYNCQ_ENOTSUP
 *                without double-width CAS (the node free list).
 *   Stats:       cas_attempts, cas_failures, retries.
 */
#include "syncq/pqueue/linden_jonsson.h"

#include <stdlib.h>
#include <string.h>

#include "../stats_internal.h"
#include "syncq/clock.h"
#include "syncq/platform.h"

#define LJ_MAGIC UINT64_C(0x4c4a534b49504c51)
#define LJ_MARK ((uintptr_t)1) /* low bit of a level-0 next: the successor is deleted */
#define LJ_MIN_LEVELS 4u
#define LJ_MAX_LEVELS 32u
#define LJ_YIELD_AFTER 2  /* forced collections before yielding between them */
#define LJ_CLOCK_EVERY 64 /* tries between looks at the clock */
/* How long an insert waits for reclamation when every free node is in
 * limbo: a thread preempted inside an operation holds the epoch back for a
 * scheduling quantum or a few (tens of ms on a loaded machine); only a
 * thread stalled inside an operation for longer makes insert ENOMEM. */
#define LJ_ALLOC_PATIENCE_NS UINT64_C(2000000000)
#define LJ_SENTINELS 2

typedef struct syncq_pqueue_lj_node {
  _Atomic(uint64_t) key;
  _Atomic(void *) payload;
  _Atomic(uint32_t) inserting; /* 1 until insert has finished with the upper levels */
  uint32_t height;             /* levels this node is linked at (inserter's own) */
  syncq_ebr_link retired;      /* in a limbo list */
  syncq_fl_link free;          /* on the pool's free list */
  _Atomic(uintptr_t) next[];   /* `levels` of them; next[0] carries LJ_MARK */
} lj_node;

static inline lj_node *ptr_of(uintptr_t w) { return (lj_node *)(w & ~LJ_MARK); }
static inline bool is_marked(uintptr_t w) { return (w & LJ_MARK) != 0; }
static inline uintptr_t word_of(lj_node *n) { return (uintptr_t)n; }

static inline lj_node *node_at(const syncq_pqueue_linden_jonsson *q, size_t i) {
  return (lj_node *)(void *)((char *)q->pool + i * q->stride);
}

/* EBR hands back a node no operation can see: it goes to the free list. */
static void recycle(syncq_ebr_link *l, void *ctx) {
  syncq_pqueue_linden_jonsson *q = ctx;
  lj_node *n = SYNCQ_EBR_CONTAINER(l, lj_node, retired);
  (void)syncq_freelist_push(&q->free, &n->free);
}

/* A geometric level, p = 1/2 (per-thread xorshift64*). */
static uint32_t random_height(uint32_t levels) {
  static _Atomic(uint64_t) seeds = UINT64_C(0x9e3779b97f4a7c15);
  static _Thread_local uint64_t s;
  if (s == 0) s = atomic_fetch_add(&seeds, UINT64_C(0x9e3779b97f4a7c15)) | 1u;
  s ^= s >> 12;
  s ^= s << 25;
  s ^= s >> 27;
  uint64_t r = s * UINT64_C(0x2545f4914f6cdd1d);
  uint32_t h = 1;
  while (h < levels && (r & 1u)) {
    h++;
    r >>= 1;
  }
  return h;
}

int syncq_pqueue_linden_jonsson_init(syncq_pqueue_linden_jonsson *q, const syncq_pqueue_config *cfg) {
  if (q == NULL || ((uintptr_t)q % _Alignof(syncq_pqueue_linden_jonsson)) != 0) return SYNCQ_EINVAL;
  if (cfg && (cfg->capacity > SYNCQ_PQUEUE_MAX_CAPACITY || cfg->max_threads > SYNCQ_PQUEUE_MAX_THREADS))
    return SYNCQ_EINVAL;
  uint32_t cap = cfg && cfg->capacity ? cfg->capacity : SYNCQ_PQUEUE_DEFAULT_CAPACITY;
  int r = syncq_freelist_init(&q->free);
  if (r != SYNCQ_OK) return r;
  uint32_t levels = LJ_MIN_LEVELS;
  while (levels < LJ_MAX_LEVELS && (UINT64_C(1) << levels) < cap) levels++;
  size_t stride = sizeof(lj_node) + levels * sizeof(_Atomic(uintptr_t));
  stride = (stride + SYNCQ_CACHELINE / 2 - 1) / (SYNCQ_CACHELINE / 2) * (SYNCQ_CACHELINE / 2);
  size_t nodes = (size_t)cap + 4u * SYNCQ_PQUEUE_LJ_BOUND_OFFSET + 4u * SYNCQ_EBR_COLLECT_EVERY + LJ_SENTINELS;
  q->pool = syncq_alloc_aligned(nodes * stride, SYNCQ_CACHELINE);
  if (q->pool == NULL) return SYNCQ_ENOMEM;
  r = syncq_ebr_domain_create(recycle, q, &q->ebr);
  if (r != SYNCQ_OK) {
    free(q->pool);
    return r;
  }
  q->stride = stride;
  q->levels = levels;
  q->capacity = cap;
  for (size_t i = 0; i < nodes; i++) {
    lj_node *n = node_at(q, i);
    atomic_init(&n->key, 0);
    atomic_init(&n->payload, NULL);
    atomic_init(&n->inserting, 0);
    n->height = 0;
    n->retired.next = NULL;
    atomic_init(&n->free.next, 0);
    for (uint32_t l = 0; l < levels; l++) atomic_init(&n->next[l], 0);
  }
  q->head = node_at(q, 0);
  q->tail = node_at(q, 1);
  q->head->height = q->tail->height = levels;
  for (uint32_t l = 0; l < levels; l++) atomic_init(&q->head->next[l], word_of(q->tail));
  (void)syncq_freelist_fill(&q->free, node_at(q, LJ_SENTINELS), nodes - LJ_SENTINELS, stride, offsetof(lj_node, free));
  atomic_init(&q->items, 0);
  q->magic = LJ_MAGIC;
  return SYNCQ_OK;
}

int syncq_pqueue_linden_jonsson_destroy(syncq_pqueue_linden_jonsson *q) {
  if (q == NULL || q->magic != LJ_MAGIC) return SYNCQ_EINVAL;
  int r = syncq_ebr_domain_destroy(q->ebr); /* limbo nodes go back to the list, in the pool */
  if (r != SYNCQ_OK) return r;
  free(q->pool);
  q->pool = NULL;
  q->magic = 0;
  return SYNCQ_OK;
}

/* A free node, outside any critical section (collections must be able to
 * advance the epoch past our own announcement). NULL if none can be had. */
static lj_node *alloc_node(syncq_pqueue_linden_jonsson *q) {
  uint64_t start = 0;
  for (uint64_t t = 0;; t++) {
    syncq_fl_link *l;
    if (syncq_freelist_pop(&q->free, &l) == SYNCQ_OK) return SYNCQ_FL_CONTAINER(l, lj_node, free);
    syncq_ebr_record *rec;
    if (syncq_ebr_enter(q->ebr, &rec) != SYNCQ_OK) return NULL;
    (void)syncq_ebr_collect(rec); /* advances the epoch a step; frees what is safe */
    syncq_ebr_leave(rec);
    if (t < LJ_YIELD_AFTER) continue;
    syncq_yield(); /* let a preempted operation finish */
    if (t % LJ_CLOCK_EVERY == LJ_YIELD_AFTER) {
      uint64_t now = syncq_now_ns();
      if (start == 0) start = now;
      else if (now - start > LJ_ALLOC_PATIENCE_NS) return NULL;
    }
  }
}

/* LocatePreds: for every level, the last node before key k (skipping
 * deleted nodes) and its successor. Returns the last deleted node met on
 * level 0 (NULL if none). */
static lj_node *locate_preds(syncq_pqueue_linden_jonsson *q, uint64_t k, lj_node **preds, lj_node **succs) {
  lj_node *x = q->head, *del = NULL;
  for (int i = (int)q->levels - 1; i >= 0; i--) {
    uintptr_t w = atomic_load(&x->next[i]);
    bool d = is_marked(w); /* only level 0 is ever marked */
    lj_node *x_next = ptr_of(w);
    for (;;) {
      if (x_next == q->tail) break;
      /* relaxed: the key was stored before the seq_cst CAS that linked the
       * node, and we reached it through seq_cst loads */
      bool before = atomic_load_explicit(&x_next->key, memory_order_relaxed) < k;
      bool deleted_inside = is_marked(atomic_load(&x_next->next[0])); /* its successor is deleted: so is it */
      if (!(before || deleted_inside || (i == 0 && d))) break;
      if (i == 0 && d) del = x_next;
      x = x_next;
      w = atomic_load(&x->next[i]);
      d = is_marked(w);
      x_next = ptr_of(w);
    }
    preds[i] = x;
    succs[i] = x_next;
  }
  return del;
}

/* Restructure: move head's upper-level pointers past the deleted prefix. */
static void restructure(syncq_pqueue_linden_jonsson *q) {
  lj_node *pred = q->head;
  int i = (int)q->levels - 1;
  while (i > 0) {
    uintptr_t h = atomic_load(&q->head->next[i]);
    lj_node *hn = ptr_of(h);
    if (hn == q->tail || !is_marked(atomic_load(&hn->next[0]))) {
      i--;
      continue;
    }
    lj_node *cur = ptr_of(atomic_load(&pred->next[i]));
    while (cur != q->tail && is_marked(atomic_load(&cur->next[0]))) {
      pred = cur;
      cur = ptr_of(atomic_load(&pred->next[i]));
    }
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(&q->head->next[i], &h, word_of(cur))) i--;
    else SYNCQ_STAT_INC(cas_failures);
  }
}

int syncq_pqueue_linden_jonsson_insert(syncq_pqueue_linden_jonsson *q, uint64_t key, void *payload) {
  if (q == NULL || q->magic != LJ_MAGIC) return SYNCQ_EINVAL;
  if (atomic_fetch_add(&q->items, 1) >= (int64_t)q->capacity) {
    atomic_fetch_sub(&q->items, 1);
    return SYNCQ_ENOMEM;
  }
  lj_node *n = alloc_node(q);
  if (n == NULL) {
    atomic_fetch_sub(&q->items, 1);
    return SYNCQ_ENOMEM;
  }
  uint32_t height = random_height(q->levels);
  /* relaxed (all): the node is private until the seq_cst CAS that links it */
  atomic_store_explicit(&n->key, key, memory_order_relaxed);
  atomic_store_explicit(&n->payload, payload, memory_order_relaxed);
  atomic_store_explicit(&n->inserting, 1, memory_order_relaxed);
  n->height = height;
  syncq_ebr_record *rec;
  if (syncq_ebr_enter(q->ebr, &rec) != SYNCQ_OK) {
    (void)syncq_freelist_push(&q->free, &n->free);
    atomic_fetch_sub(&q->items, 1);
    return SYNCQ_ENOMEM;
  }
  lj_node *preds[LJ_MAX_LEVELS], *succs[LJ_MAX_LEVELS], *del;
  for (;;) {
    del = locate_preds(q, key, preds, succs);
    atomic_store_explicit(&n->next[0], word_of(succs[0]), memory_order_relaxed); /* published by the CAS */
    uintptr_t expected = word_of(succs[0]); /* unmarked: never link after a deleted node's predecessor */
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(&preds[0]->next[0], &expected, word_of(n))) break;
    SYNCQ_STAT_INC(cas_failures);
    SYNCQ_STAT_INC(retries);
  }
  /* upper levels, bottom up; give up once the node or its successor is deleted */
  for (uint32_t i = 1; i < height;) {
    atomic_store(&n->next[i], word_of(succs[i]));
    if (is_marked(atomic_load(&n->next[0]))) break;
    if (succs[i] != q->tail && is_marked(atomic_load(&succs[i]->next[0]))) break;
    if (del == succs[i]) break;
    uintptr_t expected = word_of(succs[i]);
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(&preds[i]->next[i], &expected, word_of(n))) {
      i++;
      continue;
    }
    SYNCQ_STAT_INC(cas_failures);
    del = locate_preds(q, key, preds, succs);
    if (succs[0] != n) break; /* deleted meanwhile */
  }
  /* seq_cst: a delete_min that sees 0 may unlink the node; every upper
   * link we made happens before */
  atomic_store(&n->inserting, 0);
  syncq_ebr_leave(rec);
  return SYNCQ_OK;
}

int syncq_pqueue_linden_jonsson_delete_min(syncq_pqueue_linden_jonsson *q, uint64_t *key, void **payload) {
  if (q == NULL || key == NULL || payload == NULL || q->magic != LJ_MAGIC) return SYNCQ_EINVAL;
  syncq_ebr_record *rec;
  int r = syncq_ebr_enter(q->ebr, &rec);
  if (r != SYNCQ_OK) return r;
  lj_node *x = q->head, *newhead = NULL;
  uintptr_t obshead = atomic_load(&q->head->next[0]);
  unsigned offset = 0;
  uintptr_t nxt;
  do {
    nxt = atomic_load(&x->next[0]);
    if (ptr_of(nxt) == q->tail) { /* every node before tail is deleted */
      syncq_ebr_leave(rec);
      return SYNCQ_EMPTY;
    }
    if (newhead == NULL && atomic_load(&x->inserting)) newhead = x; /* not unlinked past this one */
    /* A mark is never cleared, so a fetch-and-or on a pointer already
     * read marked would change nothing and return it marked: skip it
     * (the paper's loop issues it on every node of the prefix; same
     * outcome, one locked instruction per delete_min instead of one per
     * deleted node walked). */
    if (!is_marked(nxt)) nxt = atomic_fetch_or(&x->next[0], LJ_MARK); /* claim x's successor, unless taken */
    offset++;
    x = ptr_of(nxt);
  } while (is_marked(nxt));
  /* relaxed: stored before the seq_cst CAS that linked x */
  *key = atomic_load_explicit(&x->key, memory_order_relaxed);
  *payload = atomic_load_explicit(&x->payload, memory_order_relaxed);
  atomic_fetch_sub(&q->items, 1);
  if (offset >= SYNCQ_PQUEUE_LJ_BOUND_OFFSET) {
    if (newhead == NULL) newhead = x;
    uintptr_t expected = obshead;
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(&q->head->next[0], &expected, word_of(newhead) | LJ_MARK)) {
      restructure(q);
      /* the prefix before newhead is unreachable now: retire it, then try
       * to move the epoch on (a batch of BoundOffset nodes waits for it) */
      lj_node *cur = ptr_of(obshead);
      while (cur != newhead) {
        lj_node *next = ptr_of(atomic_load(&cur->next[0]));
        (void)syncq_ebr_retire(rec, &cur->retired);
        cur = next;
      }
      (void)syncq_ebr_collect(rec);
    } else {
      SYNCQ_STAT_INC(cas_failures);
    }
  }
  syncq_ebr_leave(rec);
  return SYNCQ_OK;
}

SYNCQ_PQUEUE_REGISTER(linden_jonsson, "linden-jonsson",
                      "Linden-Jonsson skiplist priority queue (deleted prefix marked in next pointers, EBR)",
                      "Linden & Jonsson, OPODIS 2013, Algorithms 1-4", LOCK_FREE,
                      SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_BOUNDED);
