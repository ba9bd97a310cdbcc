/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * herlihy.c — Herlihy-optimized non-blocking stack.
 *
 * Contract
 *   Source:      M. Herlihy, "A Methodology for Implementing Highly
 *                Concurrent Data Objects", TOPLAS 15(5), 1993 (small-object
 *                protocol: copy the current version into a private block,
 *                modify it, swing the shared pointer with LL/SC; on success
 *                the replaced version becomes free), applied to a linked
 *                stack with unnecessary copying removed as 001 §4.2
 *                describes: only the Top record is copied, the list nodes
 *                are shared. Backoff after a failed swing as in 001 §4.
 *   LL/SC:       emulated by CAS on a word holding a 32-bit version and the
 *                current block's index; a swing fails if any other swing
 *                happened since the load (ABA-safe unless exactly 2^32
 *                swings happen during one stall).
 *   Private copies: 001's "every process has its own copy of Top" is a
 *                version block a thread claims from a per-stack array
 *                (2 * max_threads + 1 blocks) starting at a thread-local
 *                hint, so an uncontended thread reuses the same block;
 *                the block it replaces is released after a successful
 *                swing. More threads than max_threads at once: an
 *                operation that finds no free block yields and retries.
 *   Progress:    lock-free (with at most max_threads threads at once).
 *   Atomics:     uncontended push: 2 bitmap CAS (node, block) + 1 load +
 *                1 CAS + 1 fetch-and; pop: 1 bitmap CAS + 1 load + 1 CAS +
 *                2 fetch-and. One more indirection than Treiber.
 *   Memory:      nodes (capacity) and blocks allocated at init, never
 *                after; type-stable, recycled through pool bitmaps
 *                (syncq/stack/pool.h).
 *   Signal-safe: no (a handler interrupting a thread may wait for a block).
 *   Process-shared: no.
 *   Limits:      capacity <= SYNCQ_STACK_MAX_CAPACITY; non-NULL items.
 *   Stats:       cas_attempts, cas_failures, backoffs, yields.
 */
#include "syncq/stack/herlihy.h"

#include "../stats_internal.h"
#include "node_pool.h"
#include "syncq/backoff.h"
#include "syncq/platform.h"
#include "syncq/wait.h"

struct syncq_stack_herlihy_node {
  _Atomic(uint32_t) next; /* index + 1 of the node below, 0 for none */
  _Atomic(void *) item;
};

/* One version of the object: its Top. Padded: blocks are private copies
 * that different threads write. */
struct syncq_stack_herlihy_version {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) top; /* index + 1 of the top node, 0 when empty */
};

#define VER_ONE (UINT64_C(1) << 32)
#define IDX(w) ((uint32_t)(w))

int syncq_stack_herlihy_init(syncq_stack_herlihy *s, const syncq_stack_config *cfg) {
  if (s == NULL) return SYNCQ_EINVAL;
  if (cfg && (cfg->capacity > SYNCQ_STACK_MAX_CAPACITY || cfg->max_threads > SYNCQ_STACK_MAX_THREADS))
    return SYNCQ_EINVAL;
  uint32_t cap = cfg && cfg->capacity ? cfg->capacity : SYNCQ_STACK_DEFAULT_CAPACITY;
  uint32_t threads = cfg && cfg->max_threads ? cfg->max_threads : SYNCQ_STACK_DEFAULT_THREADS;
  uint32_t nblocks = 2u * threads + 1u;
  s->nodes = malloc((size_t)cap * sizeof *s->nodes);
  s->blocks = syncq_alloc_aligned((size_t)nblocks * sizeof *s->blocks, _Alignof(struct syncq_stack_herlihy_version));
  if (s->nodes == NULL || s->blocks == NULL) goto nomem;
  if (npool_init(&s->node_pool, cap) != SYNCQ_OK) goto nomem;
  if (npool_init(&s->block_pool, nblocks) != SYNCQ_OK) {
    npool_destroy(&s->node_pool);
    goto nomem;
  }
  for (uint32_t i = 0; i < cap; i++) {
    atomic_init(&s->nodes[i].next, 0);
    atomic_init(&s->nodes[i].item, NULL);
  }
  for (uint32_t i = 0; i < nblocks; i++) atomic_init(&s->blocks[i].top, 0);
  uint32_t first = npool_get(&s->block_pool); /* the initial version: an empty stack */
  atomic_init(&s->shared, (uint64_t)first + 1u);
  return SYNCQ_OK;
nomem:
  free(s->nodes);
  free(s->blocks);
  return SYNCQ_ENOMEM;
}

int syncq_stack_herlihy_destroy(syncq_stack_herlihy *s) {
  if (s == NULL) return SYNCQ_EINVAL;
  npool_destroy(&s->node_pool);
  npool_destroy(&s->block_pool);
  free(s->nodes);
  free(s->blocks);
  s->nodes = NULL;
  s->blocks = NULL;
  return SYNCQ_OK;
}

/* Claim a private version block; yield while every block is taken. */
static uint32_t claim_block(syncq_stack_herlihy *s) {
  uint32_t b;
  while ((b = npool_get(&s->block_pool)) == NPOOL_NONE) syncq_wait_yield();
  return b;
}

/* One operation: push node `push_node` (index, or NPOOL_NONE for a pop).
 * Pop stores the popped node's index in *popped (NPOOL_NONE when empty). */
static void apply(syncq_stack_herlihy *s, uint32_t push_node, uint32_t *popped) {
  uint32_t mine = claim_block(s);
  struct syncq_stack_herlihy_version *copy = &s->blocks[mine];
  syncq_backoff_exp b;
  syncq_backoff_exp_init_default(&b);
  for (;;) {
    /* seq_cst: pairs with the swinging CAS, making the current block's
     * and the nodes' contents visible; also orders an EMPTY result */
    uint64_t cur = atomic_load(&s->shared);
    /* relaxed: the block may be recycled under us; validated below */
    uint32_t top = atomic_load_explicit(&s->blocks[IDX(cur) - 1u].top, memory_order_relaxed);
    uint32_t new_top;
    if (push_node != NPOOL_NONE) {
      /* relaxed: the node is ours until the swing publishes it */
      atomic_store_explicit(&s->nodes[push_node].next, top, memory_order_relaxed);
      new_top = push_node + 1u;
    } else if (top == 0) {
      /* Empty only if the block was still current when we read it. */
      if (atomic_load(&s->shared) != cur) continue;
      npool_put(&s->block_pool, mine);
      *popped = NPOOL_NONE;
      return;
    } else {
      /* relaxed: stale if the node was popped meanwhile; the swing fails then */
      new_top = atomic_load_explicit(&s->nodes[top - 1u].next, memory_order_relaxed);
    }
    /* relaxed: our private copy, published by the swing below */
    atomic_store_explicit(&copy->top, new_top, memory_order_relaxed);
    uint64_t want = ((cur & ~(VER_ONE - 1)) + VER_ONE) | (mine + 1u);
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(&s->shared, &cur, want)) {
      npool_put(&s->block_pool, IDX(cur) - 1u); /* the replaced version is free */
      if (push_node == NPOOL_NONE) *popped = top - 1u;
      return;
    }
    SYNCQ_STAT_INC(cas_failures);
    syncq_backoff_exp_wait(&b);
  }
}

int syncq_stack_herlihy_push(syncq_stack_herlihy *s, void *item) {
  if (s == NULL || item == NULL) return SYNCQ_EINVAL;
  uint32_t n = npool_get(&s->node_pool);
  if (n == NPOOL_NONE) return SYNCQ_ENOMEM;
  /* relaxed: published by the swing in apply() */
  atomic_store_explicit(&s->nodes[n].item, item, memory_order_relaxed);
  apply(s, n, NULL);
  return SYNCQ_OK;
}

int syncq_stack_herlihy_pop(syncq_stack_herlihy *s, void **item) {
  if (s == NULL || item == NULL) return SYNCQ_EINVAL;
  uint32_t n;
  apply(s, NPOOL_NONE, &n);
  if (n == NPOOL_NONE) return SYNCQ_EMPTY;
  /* relaxed: the node is ours; its pusher's store precedes its swing,
   * which our successful swing follows */
  *item = atomic_load_explicit(&s->nodes[n].item, memory_order_relaxed);
  npool_put(&s->node_pool, n);
  return SYNCQ_OK;
}

SYNCQ_STACK_REGISTER(herlihy, "herlihy", "Herlihy-optimized stack (private Top copy, swing a shared pointer)",
                     "Herlihy 1993; 001 §4.2, Figure 2", LOCK_FREE, SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_BOUNDED);
