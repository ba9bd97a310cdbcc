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
 *   Atomics:     uncontended push: 1 double-width CAS (free-list pop) +
 *                1 load and 1 CAS of Top; pop: 1 load and 1 CAS of Top +
 *                1 double-width CAS (free-list push).
 *   Memory:      the node pool (capacity nodes) is allocated at init, never
 *                after; free nodes sit on the tagged free list of
 *                syncq/reclaim.h (001 §3's Treiber free list with counted
 *                pointers); nodes are type-stable, so a stale reader reads a
 *                valid node and the versioned CAS rejects its result.
 *   Needs:       a double-width CAS (SYNCQ_ENOTSUP otherwise).
 *   Signal-safe: yes (no locks, no allocation after init).
 *   Process-shared: no (the pool is a heap pointer), though Top holds
 *                indices, not pointers.
 *   Limits:      capacity <= SYNCQ_STACK_MAX_CAPACITY items; non-NULL items.
 *   Stats:       cas_attempts, cas_failures, backoffs.
 */
#include "syncq/stack/treiber.h"

#include <stddef.h>
#include <stdlib.h>

#include "../stats_internal.h"
#include "syncq/backoff.h"

struct syncq_stack_treiber_node {
  _Atomic(uint32_t) next; /* index + 1 of the node below, 0 for none */
  _Atomic(void *) item;
  syncq_fl_link link; /* on the free list while free */
};

#define VER_ONE (UINT64_C(1) << 32)
#define IDX(w) ((uint32_t)(w))

int syncq_stack_treiber_init(syncq_stack_treiber *s, const syncq_stack_config *cfg) {
  if (s == NULL) return SYNCQ_EINVAL;
  uint32_t cap = cfg && cfg->capacity ? cfg->capacity : SYNCQ_STACK_DEFAULT_CAPACITY;
  if (cfg && (cfg->capacity > SYNCQ_STACK_MAX_CAPACITY || cfg->max_threads > SYNCQ_STACK_MAX_THREADS))
    return SYNCQ_EINVAL;
  int r = syncq_freelist_init(&s->free);
  if (r != SYNCQ_OK) return r; /* SYNCQ_ENOTSUP: no double-width CAS */
  s->nodes = malloc((size_t)cap * sizeof *s->nodes);
  if (s->nodes == NULL) return SYNCQ_ENOMEM;
  for (uint32_t i = 0; i < cap; i++) {
    atomic_init(&s->nodes[i].next, 0);
    atomic_init(&s->nodes[i].item, NULL);
    atomic_init(&s->nodes[i].link.next, 0);
  }
  r = syncq_freelist_fill(&s->free, s->nodes, cap, sizeof *s->nodes, offsetof(struct syncq_stack_treiber_node, link));
  if (r != SYNCQ_OK) {
    free(s->nodes);
    return r;
  }
  atomic_init(&s->top, 0);
  return SYNCQ_OK;
}

int syncq_stack_treiber_destroy(syncq_stack_treiber *s) {
  if (s == NULL) return SYNCQ_EINVAL;
  free(s->nodes);
  s->nodes = NULL;
  return SYNCQ_OK;
}

int syncq_stack_treiber_push(syncq_stack_treiber *s, void *item) {
  if (s == NULL || item == NULL) return SYNCQ_EINVAL;
  syncq_fl_link *l;
  if (syncq_freelist_pop(&s->free, &l) != SYNCQ_OK) return SYNCQ_ENOMEM;
  struct syncq_stack_treiber_node *n = SYNCQ_FL_CONTAINER(l, struct syncq_stack_treiber_node, link);
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
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(&s->top, &t, ((t & ~(VER_ONE - 1)) + VER_ONE) | (i + 1u)))
      return SYNCQ_OK;
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
      syncq_freelist_push(&s->free, &n->link);
      return SYNCQ_OK;
    }
    SYNCQ_STAT_INC(cas_failures);
    syncq_backoff_exp_wait(&b);
    t = atomic_load(&s->top); /* seq_cst: as the first load */
  }
}

static int ops_init(void *s, const syncq_stack_config *c) { return syncq_stack_treiber_init(s, c); }
static int ops_destroy(void *s) { return syncq_stack_treiber_destroy(s); }
static int ops_push(void *s, void *it) { return syncq_stack_treiber_push(s, it); }
static int ops_pop(void *s, void **it) { return syncq_stack_treiber_pop(s, it); }

static const syncq_stack_ops treiber_ops = {
  sizeof(syncq_stack_treiber), _Alignof(syncq_stack_treiber), ops_init, ops_destroy, ops_push, ops_pop,
};

const syncq_algo syncq_stack_treiber_algo = {
  SYNCQ_FAMILY_STACK, "treiber", "Treiber's non-blocking stack (versioned Top, type-stable node pool)",
  "Treiber 1986; 001 §4.2, Figure 2", SYNCQ_PROGRESS_LOCK_FREE,
  SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_BOUNDED | SYNCQ_PROP_SIGNAL_SAFE, &treiber_ops,
};
