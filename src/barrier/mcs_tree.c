/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mcs_tree.c — the MCS tree barrier (arrival fan-in 4, wake-up fan-out 2).
 *
 * Contract
 *   Source:      Mellor-Crummey & Scott 1991 §3.3 and Figure 11 (the tree
 *                barrier: wait until childnotready is all false, reset it
 *                to havechild, clear own flag in the parent, wait for the
 *                parent's wake-up, wake the two children, flip sense); 003
 *                §3.3 ("a branching factor of four in the arrival tree and
 *                two in the wakeup tree"; "does not require any atomic
 *                synchronization operations").
 *   Progress:    blocking.
 *   Atomics:     no read-modify-write: per episode, loads of up to 4 child
 *                flags, 1 store to the parent, 1 load of the wake-up flag,
 *                up to 2 stores to the children.
 *   Memory:      init allocates threads x 2 cache lines; destroy frees.
 *   Signal-safe: no. Process-shared: no (SYNCQ_ENOTSUP).
 *   Waiting:     SPIN (default) pauses on the flag; YIELD, BLOCK via
 *                syncq/wait.h; COMPETITIVE spins for the spin limit x the
 *                children not yet arrived (at arrival) or x 1 (wake-up),
 *                the part of "threads not yet arrived" a node can see.
 *   Timeout:     wait_timed: the deadline is checked in every wait (on
 *                the children's flags and on the wake-up flag; futex
 *                sleeps bounded by the time left); on a timeout the waiter
 *                sets `broken`, or's BAR_BROKEN_BIT into every node's
 *                flags and wakes the sleepers (O(threads), on this rare
 *                path only): every waiter returns SYNCQ_EBROKEN, so do
 *                later calls (checked at entry) until reset, which
 *                re-runs init's flag setup. Per episode one more load
 *                (broken) and one per pause while waiting.
 *   Limits:      threads <= SYNCQ_BARRIER_MAX_THREADS.
 *   Stats:       yields, blocks.
 */
#include "syncq/barrier/mcs_tree.h"

#include <stdlib.h>

#include "../stats_internal.h"
#include "barrier_internal.h"
#include "syncq/platform.h"

struct syncq_barrier_mcs_tree_node {
  /* written by the children (0: arrived), read by this node's thread */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) childnotready[SYNCQ_BARRIER_MCS_TREE_FAN_IN];
  uint32_t havechild; /* bit j: child j exists (constant after init) */
  /* written by the wake-up parent, read by this node's thread */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) parentsense;
  uint32_t sense; /* this thread's private sense */
};

/* Every node as at the start (init, reset): children not ready, senses
 * for episode 0. */
static void fill_nodes(syncq_barrier_mcs_tree *b) {
  uint32_t p = b->threads;
  for (uint32_t i = 0; i < p; i++) {
    syncq_barrier_mcs_tree_node *n = &b->node[i];
    n->havechild = 0;
    for (uint32_t j = 0; j < SYNCQ_BARRIER_MCS_TREE_FAN_IN; j++) {
      uint32_t has = SYNCQ_BARRIER_MCS_TREE_FAN_IN * i + j + 1u < p;
      if (has) n->havechild |= 1u << j;
      atomic_init(&n->childnotready[j], has);
    }
    atomic_init(&n->parentsense, 0u);
    n->sense = 1u;
  }
}

int syncq_barrier_mcs_tree_init(syncq_barrier_mcs_tree *b, const syncq_barrier_config *cfg) {
  if (b == NULL) return SYNCQ_EINVAL;
  int wait, ps;
  int r = barrier_parse_config(cfg, SYNCQ_WAIT_SPIN, BAR_WAIT_ALL, 0, &wait, &ps);
  if (r != SYNCQ_OK) return r;
  uint32_t p = cfg->threads;
  b->node = syncq_alloc_aligned(sizeof(syncq_barrier_mcs_tree_node) * p, _Alignof(syncq_barrier_mcs_tree_node));
  if (b->node == NULL) return SYNCQ_ENOMEM;
  b->threads = p;
  b->wait = wait;
  atomic_init(&b->sleepers, 0u);
  atomic_init(&b->broken, 0u);
  fill_nodes(b);
  return SYNCQ_OK;
}

int syncq_barrier_mcs_tree_destroy(syncq_barrier_mcs_tree *b) {
  if (b == NULL) return SYNCQ_EINVAL;
  free(b->node);
  b->node = NULL;
  return SYNCQ_OK;
}

int syncq_barrier_mcs_tree_reset(syncq_barrier_mcs_tree *b) {
  if (b == NULL || b->node == NULL) return SYNCQ_EINVAL;
  /* plain/relaxed (atomic_init): no thread waits (the caller's
   * precondition); the caller's own synchronization publishes them */
  fill_nodes(b);
  /* a waiter killed in its sleep (a process) never took itself off */
  atomic_store_explicit(&b->sleepers, 0u, memory_order_relaxed);
  atomic_store_explicit(&b->broken, 0u, memory_order_relaxed);
  return SYNCQ_OK;
}

/* A timed-out waiter breaks the barrier (see the contract). */
static void mcs_break(syncq_barrier_mcs_tree *b) {
  if (!barrier_break_begin(&b->broken)) return;
  for (uint32_t i = 0; i < b->threads; i++) {
    syncq_barrier_mcs_tree_node *n = &b->node[i];
    for (uint32_t j = 0; j < SYNCQ_BARRIER_MCS_TREE_FAN_IN; j++)
      if ((n->havechild >> j) & 1u) barrier_break_word(&n->childnotready[j]);
    barrier_break_word(&n->parentsense);
  }
  if (!barrier_break_must_wake(b->wait, &b->sleepers)) return;
  for (uint32_t i = 0; i < b->threads; i++) {
    syncq_barrier_mcs_tree_node *n = &b->node[i];
    for (uint32_t j = 0; j < SYNCQ_BARRIER_MCS_TREE_FAN_IN; j++)
      if ((n->havechild >> j) & 1u) syncq_wait_futex_wake(&n->childnotready[j], 0, false);
    syncq_wait_futex_wake(&n->parentsense, 0, false);
  }
}

static int mcs_wait(syncq_barrier_mcs_tree *b, unsigned id, bar_deadline *deadline) {
  if (barrier_is_broken(&b->broken)) return SYNCQ_EBROKEN;
  syncq_barrier_mcs_tree_node *me = &b->node[id];
  /* arrival: wait for the children, one flag at a time */
  unsigned missing = 0;
  for (uint32_t j = 0; j < SYNCQ_BARRIER_MCS_TREE_FAN_IN; j++)
    if ((me->havechild >> j) & 1u) missing++;
  for (uint32_t j = 0; j < SYNCQ_BARRIER_MCS_TREE_FAN_IN; j++) {
    if (((me->havechild >> j) & 1u) == 0) continue;
    int r = barrier_await_change(&me->childnotready[j], 1u, b->wait, false, barrier_spin_limit(b->wait, missing),
                                 &b->sleepers, &b->broken, deadline);
    if (r != SYNCQ_OK) BAR_FAIL(r, mcs_break, b);
    missing--;
  }
  /* prepare for the next episode: relaxed, the children write these again
   * only after our wake-up reaches them (release stores below). (Over a
   * BAR_BROKEN_BIT, if the barrier broke meanwhile: barrier_await_change
   * then finds `broken` itself, see there.) */
  for (uint32_t j = 0; j < SYNCQ_BARRIER_MCS_TREE_FAN_IN; j++)
    if ((me->havechild >> j) & 1u) atomic_store_explicit(&me->childnotready[j], 1u, memory_order_relaxed);
  uint32_t sense = me->sense;
  if (id != 0) {
    syncq_barrier_mcs_tree_node *parent = &b->node[(id - 1u) / SYNCQ_BARRIER_MCS_TREE_FAN_IN];
    barrier_signal(&parent->childnotready[(id - 1u) % SYNCQ_BARRIER_MCS_TREE_FAN_IN], 0u, b->wait, false, &b->sleepers);
    int r = barrier_await_change(&me->parentsense, sense ^ 1u, b->wait, false, barrier_spin_limit(b->wait, 1),
                                 &b->sleepers, &b->broken, deadline);
    if (r != SYNCQ_OK) BAR_FAIL(r, mcs_break, b);
  }
  /* wake-up: the binary tree's children */
  for (uint32_t c = SYNCQ_BARRIER_MCS_TREE_FAN_OUT * id + 1u;
       c <= SYNCQ_BARRIER_MCS_TREE_FAN_OUT * id + SYNCQ_BARRIER_MCS_TREE_FAN_OUT && c < b->threads; c++)
    barrier_signal(&b->node[c].parentsense, sense, b->wait, false, &b->sleepers);
  me->sense = sense ^ 1u;
  return SYNCQ_OK;
}

int syncq_barrier_mcs_tree_wait(syncq_barrier_mcs_tree *b, unsigned id) {
  if (b == NULL || b->node == NULL || id >= b->threads) return SYNCQ_EINVAL;
  return mcs_wait(b, id, &(bar_deadline){SYNCQ_BARRIER_NO_TIMEOUT, 0});
}

int syncq_barrier_mcs_tree_wait_timed(syncq_barrier_mcs_tree *b, unsigned id, uint64_t timeout_ns) {
  if (b == NULL || b->node == NULL || id >= b->threads || timeout_ns == 0) return SYNCQ_EINVAL;
  return mcs_wait(b, id, &(bar_deadline){timeout_ns, 0});
}

SYNCQ_BARRIER_REGISTER(mcs_tree, "mcs-tree", "MCS tree barrier (arrival fan-in 4, wake-up fan-out 2)",
                       "MCS91 §3.3, Figure 11; 003 §3.3", BLOCKING, 0);
