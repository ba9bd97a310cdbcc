/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * treiber.c — Treiber's non-blocking stack.
 *
 * Contract
 *   Source:      R. K. Treiber, "Systems Programming: Coping with
 *                Parallelism", IBM RJ 5118, 1986, as used in 001 §4.2
 *                (Figure 2): a singly-linked list with a Top pointer that
 *                push and pop swing with CAS; the same bounded exponential
 *                backoff as 001's locks after a failed CAS (cap 30 us).
 *   ABA:         Top is one 64-bit word: a 32-bit version, incremented by
 *                every successful CAS, and the top node's index + 1. A pop
 *                that read Top, then lost the processor while the node was
 *                popped and pushed again, finds the version changed.
 *                (Safe unless exactly 2^32 updates happen during one stall.)
 *   Progress:    lock-free.
 *   Atomics:     uncontended push: 1 load and 1 CAS of Top; pop: 1 load
 *                and 1 CAS of Top (the node comes from / goes to the
 *                thread's cache, plain memory). When the thread's cache is
 *                empty (push) or full (pop): + 1 double-width CAS on the
 *                shared free list. The first operation of a thread on a
 *                stack claims its cache with one CAS.
 *   Why a cache: callgrind (ms98-stack's loop, one thread) showed the old
 *                push/pop pair at ~150 instructions against ~182 for the
 *                TTAS lock stack, yet slower: it made 4 locked
 *                read-modify-writes per pair (2 CAS on Top + 2 cmpxchg16b
 *                on the free list) against the lock's 2; the locked
 *                instructions, not the instruction count, decide. A node
 *                a thread pops is the node its next push needs.
 *   Memory:      the node pool (capacity nodes) is allocated at init, never
 *                after; free nodes sit in the per-thread caches (at most
 *                SYNCQ_STACK_TREIBER_CACHE_NODES each, max_threads caches,
 *                allocated at init) or on the tagged free list of
 *                syncq/reclaim.h (001 §3's Treiber free list with counted
 *                pointers); nodes are type-stable, so a stale reader reads a
 *                valid node and the versioned CAS rejects its result.
 *   Capacity:    a thread's push takes its own cached nodes first, then the
 *                shared list: exactly `capacity` pushes succeed from one
 *                thread. Nodes cached by another thread are not available
 *                to it, so under concurrency a push may see ENOMEM while up
 *                to CACHE_NODES x (threads - 1) free nodes sit in other
 *                threads' caches; a cache stays with its thread for the
 *                stack's life (threads beyond max_threads use the shared
 *                list only).
 *   ABA/caches:  reusing a node from the cache is no different from reusing
 *                it from the shared list: Top's version rejects any stale
 *                CAS. A cache is owned by one thread (claimed by CAS of its
 *                owner word, never released), so its contents are plain
 *                memory. A thread finds its cache through a thread-local
 *                hint keyed by (stack address, stack id), so a hint left
 *                from a destroyed stack at the same address is never used;
 *                on a hint miss it looks for its thread id among the
 *                stack's caches before claiming a new one.
 *   Needs:       a double-width CAS (SYNCQ_ENOTSUP otherwise).
 *   Signal-safe: yes (no locks, no allocation after init; a handler that
 *                interrupts a cache access bypasses the cache). The backoff's
 *                delay (syncq/clock.h) is signal-safe too: a push backing
 *                off in a handler that interrupted the delay loop's first
 *                calibration in its own thread does not wait for it.
 *   Process-shared: no (the pool is a heap pointer), though Top holds
 *                indices, not pointers.
 *   Limits:      capacity <= SYNCQ_STACK_MAX_CAPACITY items; non-NULL items.
 *   Stats:       cas_attempts, cas_failures, backoffs.
 */
#include "syncq/stack/treiber.h"

#include <stddef.h>
#include <stdlib.h>

#include "../race_internal.h"
#include "../stats_internal.h"
#include "syncq/backoff.h"
#include "syncq/platform.h"

struct syncq_stack_treiber_node {
  _Atomic(uint32_t) next; /* index + 1 of the node below, 0 for none */
  _Atomic(void *) item;
  syncq_fl_link link; /* on the free list while free */
};

struct syncq_stack_treiber_cache {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) owner; /* thread id, 0 = unclaimed */
  uint32_t n;                                      /* owner-only from here on */
  uint32_t idx[SYNCQ_STACK_TREIBER_CACHE_NODES];
};

#define VER_ONE (UINT64_C(1) << 32)
#define IDX(w) ((uint32_t)(w))
#define HINTS 4 /* stacks a thread remembers its cache for */

typedef struct cache_hint {
  const syncq_stack_treiber *s;
  uint64_t id;
  struct syncq_stack_treiber_cache *c; /* NULL: no cache left for this thread */
} cache_hint;

static _Atomic(uint64_t) next_stack_id = 1;
static _Atomic(uint64_t) next_thread_id = 1;
/* initial-exec: a TLS-relative access on the hot path, no __tls_get_addr
 * (as stats_internal.h) */
#define TLS_IE __attribute__((tls_model("initial-exec")))
static _Thread_local uint64_t my_thread_id TLS_IE;
static _Thread_local cache_hint hints[HINTS] TLS_IE;
static _Thread_local unsigned hint_next TLS_IE;

/* The calling thread's cache for s (NULL when every cache is taken):
 * the slow path, when the front hint is not s's. */
static __attribute__((noinline)) struct syncq_stack_treiber_cache *my_cache_slow(syncq_stack_treiber *s) {
  for (unsigned i = 0; i < HINTS; i++) {
    if (hints[i].s == s && hints[i].id == s->id) {
      cache_hint h = hints[i]; /* move to the front */
      hints[i] = hints[0];
      hints[0] = h;
      return h.c;
    }
  }
  if (my_thread_id == 0) my_thread_id = atomic_fetch_add(&next_thread_id, 1);
  struct syncq_stack_treiber_cache *c = NULL;
  for (uint32_t j = 0; j < s->ncaches && c == NULL; j++) /* ours already? (the hint was evicted) */
    if (atomic_load(&s->caches[j].owner) == my_thread_id) c = &s->caches[j];
  for (uint32_t j = 0; j < s->ncaches && c == NULL; j++) {
    uint64_t free_owner = 0;
    /* seq_cst: the claim orders the previous (init's) writes of n before our use */
    if (atomic_compare_exchange_strong(&s->caches[j].owner, &free_owner, my_thread_id)) c = &s->caches[j];
  }
  unsigned slot = hint_next++ % HINTS;
  hints[slot] = hints[0];
  hints[0] = (cache_hint){s, s->id, c};
  return c;
}

static inline struct syncq_stack_treiber_cache *my_cache(syncq_stack_treiber *s) {
  if (hints[0].s == s && hints[0].id == s->id) return hints[0].c; /* the common case */
  return my_cache_slow(s);
}

/* Signal safety: a handler that interrupts this thread inside a cache
 * access must not touch the cache (nor the hints) itself: it sees
 * cache_busy and uses the shared free list, which is lock-free. The
 * signal fences keep the compiler from moving cache accesses outside the
 * busy window. */
static _Thread_local unsigned cache_busy TLS_IE;
#define NO_NODE UINT32_MAX

static uint32_t cache_take(syncq_stack_treiber *s) {
  if (cache_busy) return NO_NODE;
  cache_busy = 1;
  atomic_signal_fence(memory_order_seq_cst);
  struct syncq_stack_treiber_cache *c = my_cache(s);
  uint32_t i = c != NULL && c->n > 0 ? c->idx[--c->n] : NO_NODE;
  atomic_signal_fence(memory_order_seq_cst);
  cache_busy = 0;
  return i;
}

static bool cache_put(syncq_stack_treiber *s, uint32_t i) {
  if (cache_busy) return false;
  cache_busy = 1;
  atomic_signal_fence(memory_order_seq_cst);
  struct syncq_stack_treiber_cache *c = my_cache(s);
  bool kept = c != NULL && c->n < SYNCQ_STACK_TREIBER_CACHE_NODES;
  if (kept) c->idx[c->n++] = i;
  atomic_signal_fence(memory_order_seq_cst);
  cache_busy = 0;
  return kept;
}

int syncq_stack_treiber_init(syncq_stack_treiber *s, const syncq_stack_config *cfg) {
  if (s == NULL) return SYNCQ_EINVAL;
  uint32_t cap = cfg && cfg->capacity ? cfg->capacity : SYNCQ_STACK_DEFAULT_CAPACITY;
  if (cfg && (cfg->capacity > SYNCQ_STACK_MAX_CAPACITY || cfg->max_threads > SYNCQ_STACK_MAX_THREADS))
    return SYNCQ_EINVAL;
  int r = syncq_freelist_init(&s->free);
  if (r != SYNCQ_OK) return r; /* SYNCQ_ENOTSUP: no double-width CAS */
  uint32_t threads = cfg && cfg->max_threads ? cfg->max_threads : SYNCQ_STACK_DEFAULT_THREADS;
  s->nodes = malloc((size_t)cap * sizeof *s->nodes);
  s->caches = syncq_alloc_aligned((size_t)threads * sizeof *s->caches, SYNCQ_CACHELINE);
  if (s->nodes == NULL || s->caches == NULL) {
    free(s->nodes);
    free(s->caches);
    return SYNCQ_ENOMEM;
  }
  for (uint32_t j = 0; j < threads; j++) {
    atomic_init(&s->caches[j].owner, 0);
    s->caches[j].n = 0;
  }
  s->ncaches = threads;
  s->id = atomic_fetch_add(&next_stack_id, 1);
  for (uint32_t i = 0; i < cap; i++) {
    atomic_init(&s->nodes[i].next, 0);
    atomic_init(&s->nodes[i].item, NULL);
    atomic_init(&s->nodes[i].link.next, 0);
  }
  r = syncq_freelist_fill(&s->free, s->nodes, cap, sizeof *s->nodes, offsetof(struct syncq_stack_treiber_node, link));
  if (r != SYNCQ_OK) {
    free(s->nodes);
    free(s->caches);
    return r;
  }
  atomic_init(&s->top, 0);
  return SYNCQ_OK;
}

int syncq_stack_treiber_destroy(syncq_stack_treiber *s) {
  if (s == NULL) return SYNCQ_EINVAL;
  free(s->nodes);
  free(s->caches);
  s->nodes = NULL;
  s->caches = NULL;
  s->id = 0; /* hints of this stack never match again */
  return SYNCQ_OK;
}

int syncq_stack_treiber_push(syncq_stack_treiber *s, void *item) {
  if (s == NULL || item == NULL) return SYNCQ_EINVAL;
  uint32_t cached = cache_take(s);
  struct syncq_stack_treiber_node *n;
  if (cached != NO_NODE) {
    n = &s->nodes[cached];
  } else {
    syncq_fl_link *l;
    if (syncq_freelist_pop(&s->free, &l) != SYNCQ_OK) return SYNCQ_ENOMEM;
    n = SYNCQ_FL_CONTAINER(l, struct syncq_stack_treiber_node, link);
  }
  uint32_t i = (uint32_t)(n - s->nodes);
  /* relaxed: published by the seq_cst CAS on Top below */
  atomic_store_explicit(&n->item, item, memory_order_relaxed);
  syncq_backoff_exp b;
  syncq_backoff_exp_init_default(&b);
  /* relaxed: a guess that the CAS validates (and reloads on failure) */
  uint64_t t = atomic_load_explicit(&s->top, memory_order_relaxed);
  for (;;) {
    /* relaxed: published by the seq_cst CAS on Top below */
    atomic_store_explicit(&n->next, IDX(t), memory_order_relaxed);
    SYNCQ_RACE_POINT("stack.treiber.push.loaded");
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(&s->top, &t, ((t & ~(VER_ONE - 1)) + VER_ONE) | (i + 1u))) return SYNCQ_OK;
    SYNCQ_STAT_INC(cas_failures);
    syncq_backoff_exp_wait(&b);
    t = atomic_load_explicit(&s->top, memory_order_relaxed); /* fresh guess after the wait */
  }
}

int syncq_stack_treiber_pop(syncq_stack_treiber *s, void **item) {
  if (s == NULL || item == NULL) return SYNCQ_EINVAL;
  syncq_backoff_exp b;
  syncq_backoff_exp_init_default(&b);
  /* seq_cst: an empty Top is the linearization point of an EMPTY pop, and
   * a non-empty one must make the pusher's node writes visible (pairs
   * with the pusher's seq_cst CAS) */
  uint64_t t = atomic_load(&s->top);
  for (;;) {
    if (IDX(t) == 0) return SYNCQ_EMPTY;
    struct syncq_stack_treiber_node *n = &s->nodes[IDX(t) - 1u];
    /* relaxed: may be stale if the node was popped meanwhile; the
     * versioned CAS below then fails */
    uint32_t next = atomic_load_explicit(&n->next, memory_order_relaxed);
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(&s->top, &t, ((t & ~(VER_ONE - 1)) + VER_ONE) | next)) {
      /* relaxed: the node is ours now; its pusher's store happened before
       * its CAS, which our successful CAS (seq_cst) follows */
      *item = atomic_load_explicit(&n->item, memory_order_relaxed);
      if (!cache_put(s, IDX(t) - 1u)) /* else our next push reuses it */
        syncq_freelist_push(&s->free, &n->link);
      return SYNCQ_OK;
    }
    SYNCQ_STAT_INC(cas_failures);
    syncq_backoff_exp_wait(&b);
    t = atomic_load(&s->top); /* seq_cst: as the first load */
  }
}

SYNCQ_STACK_REGISTER(treiber, "treiber", "Treiber's non-blocking stack (versioned Top, type-stable node pool)",
                     "Treiber 1986; 001 §4.2, Figure 2", LOCK_FREE,
                     SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_BOUNDED | SYNCQ_PROP_SIGNAL_SAFE);
