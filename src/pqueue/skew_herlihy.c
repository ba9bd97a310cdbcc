/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * skew_herlihy.c — Herlihy's non-blocking skew heap with optimized copying.
 *
 * Contract
 *   Source:      M. Herlihy, "A Methodology for Implementing Highly
 *                Concurrent Data Objects", TOPLAS 15(5), 1993, its skew
 *                heap example with copying limited to the nodes an
 *                operation modifies, as 001 §4.3 (Figure 3) describes:
 *                "copies the nodes it intends to modify to local free nodes
 *                and finally tries to swing a global shared pointer to its
 *                copy of Root using LL/SC. If it succeeds, the local copies
 *                ... become part of the global structure and the copied
 *                nodes can be recycled." The merge is the top-down skew
 *                merge of skew_lock.c; the nodes it visits (both right
 *                spines down to where one heap runs out) are exactly the
 *                ones it modifies, so exactly those are copied; untouched
 *                subtrees are shared between versions. Backoff after a
 *                failed swing as in 001 §4.
 *   LL/SC:       emulated by a double-width CAS on {items << 32 | root,
 *                version}; the version grows with every swing, so a swing
 *                computed from a stale root always fails (no ABA).
 *   Recycling:   nodes of the current version are never written (copy on
 *                write), and a replaced node is released only by the
 *                thread whose swing replaced it, after the swing: it
 *                replays the merge over the replaced nodes (still intact)
 *                to find them. Readers holding a stale root may read
 *                recycled nodes (type-stable pool, syncq/stack/pool.h);
 *                their work is bounded (at most items + 1 visits) and then
 *                rejected by the swing.
 *   Progress:    lock-free while the pool has room for concurrent copies.
 *   Atomics:     uncontended: 1 double-width load + 1 double-width CAS,
 *                plus 1 bitmap CAS per copied node and 1 fetch-and per
 *                recycled one (O(log n) amortized).
 *   Memory:      a pool of 2 * capacity + 16 * max_threads + 64 nodes at
 *                init, never after.
 *   Signal-safe: yes (no locks; no allocation after init); the
 *                backoff's delay (syncq/clock.h) is signal-safe too, its
 *                first calibration included.
 *   Process-shared: no.
 *   Limits:      capacity <= SYNCQ_PQUEUE_MAX_CAPACITY items; insert
 *                returns ENOMEM at capacity items. Either operation returns
 *                ENOMEM (structure unchanged) if concurrent copies exhaust
 *                the pool's slack.
 *   Stats:       cas_attempts, cas_failures (swings and pool claims),
 *                retries, backoffs.
 */
#include "syncq/pqueue/skew_herlihy.h"

#include "../stack/node_pool.h"
#include "../stats_internal.h"
#include "syncq/backoff.h"

struct syncq_pqueue_skew_herlihy_node {
  _Atomic(uint64_t) key;
  _Atomic(void *) payload;
  _Atomic(uint32_t) left, right; /* index + 1, 0 for none */
};

typedef struct syncq_pqueue_skew_herlihy_node node;

#define ROOT(lo) ((uint32_t)(lo))
#define ITEMS(lo) ((uint32_t)((lo) >> 32))
#define LO(items, root) (((uint64_t)(items) << 32) | (root))

/* Relaxed loads of node fields: nodes reached from a root we loaded with
 * acquire are the ones its installer wrote before its swing (pairs with
 * that seq_cst CAS); from a stale root they may be recycled, and the
 * swing rejects whatever we computed from them. */
static inline uint64_t key_of(node *n) { return atomic_load_explicit(&n->key, memory_order_relaxed); }
static inline uint32_t left_of(node *n) { return atomic_load_explicit(&n->left, memory_order_relaxed); }
static inline uint32_t right_of(node *n) { return atomic_load_explicit(&n->right, memory_order_relaxed); }
/* Relaxed stores into our private copies: published by our swing. */
static inline void set_left(node *n, uint32_t v) { atomic_store_explicit(&n->left, v, memory_order_relaxed); }
static inline void set_right(node *n, uint32_t v) { atomic_store_explicit(&n->right, v, memory_order_relaxed); }

int syncq_pqueue_skew_herlihy_init(syncq_pqueue_skew_herlihy *q, const syncq_pqueue_config *cfg) {
  if (q == NULL) return SYNCQ_EINVAL;
  if (cfg && (cfg->capacity > SYNCQ_PQUEUE_MAX_CAPACITY || cfg->max_threads > SYNCQ_PQUEUE_MAX_THREADS))
    return SYNCQ_EINVAL;
  if (!syncq_pr_dwcas_available()) return SYNCQ_ENOTSUP;
  uint32_t cap = cfg && cfg->capacity ? cfg->capacity : SYNCQ_PQUEUE_DEFAULT_CAPACITY;
  uint32_t threads = cfg && cfg->max_threads ? cfg->max_threads : SYNCQ_PQUEUE_DEFAULT_THREADS;
  uint64_t slots = 2ull * cap + 16ull * threads + 64u;
  if (slots >= UINT32_MAX) return SYNCQ_EINVAL;
  q->capacity = cap;
  q->nodes = malloc((size_t)slots * sizeof *q->nodes);
  if (q->nodes == NULL) return SYNCQ_ENOMEM;
  if (npool_init(&q->pool, (uint32_t)slots) != SYNCQ_OK) {
    free(q->nodes);
    return SYNCQ_ENOMEM;
  }
  for (uint32_t i = 0; i < slots; i++) {
    atomic_init(&q->nodes[i].key, 0);
    atomic_init(&q->nodes[i].payload, NULL);
    atomic_init(&q->nodes[i].left, 0);
    atomic_init(&q->nodes[i].right, 0);
  }
  atomic_init(&q->root.lo, 0);
  atomic_init(&q->root.hi, 0);
  return SYNCQ_OK;
}

int syncq_pqueue_skew_herlihy_destroy(syncq_pqueue_skew_herlihy *q) {
  if (q == NULL) return SYNCQ_EINVAL;
  npool_destroy(&q->pool);
  free(q->nodes);
  q->nodes = NULL;
  return SYNCQ_OK;
}

/* Release the k private copies chained through left from `first`, except
 * `keep` (the inserted node, which a retry reuses). */
static void release_copies(syncq_pqueue_skew_herlihy *q, uint32_t first, uint32_t k, uint32_t keep) {
  for (uint32_t i = 0; i < k && first != 0; i++) {
    uint32_t next = left_of(&q->nodes[first - 1u]);
    if (first != keep) npool_put(&q->pool, first - 1u);
    first = next;
  }
}

/* Copy-on-write top-down skew merge of a and b (indices + 1) from a
 * version with `items` items. `mine` is a private node (the inserted one,
 * a heap of one, 0 if none) that is linked in place instead of copied.
 * Returns 1 with the merged root in *out and the number of chained
 * private nodes in *k; 0 when the attempt must be abandoned (stale
 * version: too many visits; or the pool ran dry: *dry set), after
 * releasing its copies. */
static int merge_copy(syncq_pqueue_skew_herlihy *q, uint32_t a, uint32_t b, uint32_t mine, uint32_t items,
                      uint32_t *out, uint32_t *k, uint32_t *tail_out, int *dry) {
  uint32_t root = 0, last = 0, n = 0; /* last: the private node whose left is the open link */
  while (a != 0 && b != 0) {
    if (n > items + 1u) { /* more visits than nodes: we are reading a recycled version */
      release_copies(q, root, n, mine);
      return 0;
    }
    if (key_of(&q->nodes[b - 1u]) < key_of(&q->nodes[a - 1u])) {
      uint32_t t = a;
      a = b;
      b = t;
    }
    node *src = &q->nodes[a - 1u];
    uint32_t c;
    uint32_t rest = right_of(src); /* merge a's right subtree with b into the copy's left */
    if (a == mine) {
      c = a;
    } else {
      uint32_t slot = npool_get(&q->pool);
      if (slot == NPOOL_NONE) {
        release_copies(q, root, n, mine);
        *dry = 1;
        return 0;
      }
      c = slot + 1u;
      node *cp = &q->nodes[slot];
      /* relaxed: a private copy, published by our swing */
      atomic_store_explicit(&cp->key, key_of(src), memory_order_relaxed);
      atomic_store_explicit(&cp->payload, atomic_load_explicit(&src->payload, memory_order_relaxed),
                            memory_order_relaxed);
    }
    set_right(&q->nodes[c - 1u], left_of(src));
    set_left(&q->nodes[c - 1u], 0);
    if (last == 0) root = c;
    else set_left(&q->nodes[last - 1u], c);
    last = c;
    n++;
    a = rest;
  }
  uint32_t tail = a != 0 ? a : b;
  if (last == 0) root = tail;
  else set_left(&q->nodes[last - 1u], tail);
  *out = root;
  *tail_out = tail;
  *k = n;
  return 1;
}

/* After a successful swing: replay the merge of a and b over the replaced
 * version and release every node it visited (a replaced node stays intact
 * until we release it: only the replacer recycles). The one node the merge
 * compared but did not visit, `tail`, is live in the new version and may
 * already be recycled by others, so its key is never read: it lost every
 * comparison it took part in. `mine` (insert's node, now live) has key
 * mine_key and is not released. */
static void recycle_merged(syncq_pqueue_skew_herlihy *q, uint32_t a, uint32_t b, uint32_t tail, uint32_t mine,
                           uint64_t mine_key) {
  while (a != 0 && b != 0) {
    int swap;
    if (a == tail) swap = 1;
    else if (b == tail) swap = 0;
    else {
      uint64_t ka = a == mine ? mine_key : key_of(&q->nodes[a - 1u]);
      uint64_t kb = b == mine ? mine_key : key_of(&q->nodes[b - 1u]);
      swap = kb < ka;
    }
    if (swap) {
      uint32_t t = a;
      a = b;
      b = t;
    }
    if (a == mine) return; /* a heap of one: the merge ended by linking b */
    uint32_t rest = right_of(&q->nodes[a - 1u]);
    npool_put(&q->pool, a - 1u);
    a = rest;
  }
}

int syncq_pqueue_skew_herlihy_insert(syncq_pqueue_skew_herlihy *q, uint64_t key, void *payload) {
  if (q == NULL) return SYNCQ_EINVAL;
  uint32_t slot = npool_get(&q->pool);
  if (slot == NPOOL_NONE) return SYNCQ_ENOMEM;
  uint32_t mine = slot + 1u;
  node *m = &q->nodes[slot];
  /* relaxed: private until our swing publishes it */
  atomic_store_explicit(&m->key, key, memory_order_relaxed);
  atomic_store_explicit(&m->payload, payload, memory_order_relaxed);
  syncq_backoff_exp b;
  syncq_backoff_exp_init_default(&b);
  for (;;) {
    syncq_pr_dw cur = syncq_pr_dw_load(&q->root);
    if (ITEMS(cur.lo) >= q->capacity) {
      /* Full: confirm on a consistent pair (a torn one is retried). */
      if (syncq_pr_dw_load(&q->root).lo != cur.lo) continue;
      npool_put(&q->pool, slot);
      return SYNCQ_ENOMEM;
    }
    set_left(m, 0);
    set_right(m, 0);
    uint32_t root, k, tail;
    int dry = 0;
    if (merge_copy(q, ROOT(cur.lo), mine, mine, ITEMS(cur.lo), &root, &k, &tail, &dry)) {
      syncq_pr_dw want = {LO(ITEMS(cur.lo) + 1u, root), cur.hi + 1u};
      SYNCQ_STAT_INC(cas_attempts);
      if (syncq_pr_dwcas(&q->root, &cur, want)) {
        recycle_merged(q, ROOT(cur.lo), mine, tail, mine, key);
        return SYNCQ_OK;
      }
      SYNCQ_STAT_INC(cas_failures);
      release_copies(q, root, k, mine);
    } else if (dry) {
      syncq_pr_dw now = syncq_pr_dw_load(&q->root);
      if (now.lo == cur.lo && now.hi == cur.hi) { /* the pool is really short */
        npool_put(&q->pool, slot);
        return SYNCQ_ENOMEM;
      }
    }
    SYNCQ_STAT_INC(retries);
    syncq_backoff_exp_wait(&b);
  }
}

int syncq_pqueue_skew_herlihy_delete_min(syncq_pqueue_skew_herlihy *q, uint64_t *key, void **payload) {
  if (q == NULL || key == NULL || payload == NULL) return SYNCQ_EINVAL;
  syncq_backoff_exp b;
  syncq_backoff_exp_init_default(&b);
  for (;;) {
    syncq_pr_dw cur = syncq_pr_dw_load(&q->root);
    uint32_t r = ROOT(cur.lo);
    if (r == 0) return SYNCQ_EMPTY; /* the low word alone says: empty at that load */
    node *top = &q->nodes[r - 1u];
    uint64_t k0 = key_of(top);
    void *p0 = atomic_load_explicit(&top->payload, memory_order_relaxed); /* relaxed: as key_of */
    uint32_t root, k, tail, l = left_of(top), r2 = right_of(top);
    int dry = 0;
    if (merge_copy(q, l, r2, 0, ITEMS(cur.lo), &root, &k, &tail, &dry)) {
      syncq_pr_dw want = {LO(ITEMS(cur.lo) - 1u, root), cur.hi + 1u};
      SYNCQ_STAT_INC(cas_attempts);
      if (syncq_pr_dwcas(&q->root, &cur, want)) {
        recycle_merged(q, l, r2, tail, 0, 0);
        npool_put(&q->pool, r - 1u);
        *key = k0;
        *payload = p0;
        return SYNCQ_OK;
      }
      SYNCQ_STAT_INC(cas_failures);
      release_copies(q, root, k, 0);
    } else if (dry) {
      syncq_pr_dw now = syncq_pr_dw_load(&q->root);
      if (now.lo == cur.lo && now.hi == cur.hi) return SYNCQ_ENOMEM;
    }
    SYNCQ_STAT_INC(retries);
    syncq_backoff_exp_wait(&b);
  }
}

SYNCQ_PQUEUE_REGISTER(skew_herlihy, "skew-herlihy", "Herlihy's non-blocking skew heap with optimized copying",
                      "Herlihy 1993; 001 §4.3, Figure 3", LOCK_FREE,
                      SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_BOUNDED | SYNCQ_PROP_SIGNAL_SAFE);
