/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dissemination.c — the dissemination barrier.
 *
 * Contract
 *   Source:      Hensgen, Finkel & Manber 1988; Mellor-Crummey & Scott
 *                1991 §3.2, Figure 10 (two sets of flags by parity, sense
 *                flipped every second episode, so flags are never reset).
 *   Progress:    blocking.
 *   Atomics:     no read-modify-write: per episode ceil(log2 P) stores to
 *                partners' flags and as many loads of own flags.
 *   Memory:      init allocates P x 2 x ceil(log2 P) cache lines (flags)
 *                + P cache lines (per-thread parity and sense).
 *   Signal-safe: no. Process-shared: no (SYNCQ_ENOTSUP).
 *   Waiting:     SPIN (default); YIELD, BLOCK via syncq/wait.h;
 *                COMPETITIVE spins for the spin limit x (P - 2^k) in round
 *                k: at least 2^k threads are known to have arrived.
 *   Timeout:     wait_timed: the deadline is checked in every round's
 *                wait (futex sleeps bounded by the time left); on a
 *                timeout the waiter sets `broken`, or's BAR_BROKEN_BIT
 *                into every flag and wakes the sleepers (O(P log P), on
 *                this rare path only): every waiter returns SYNCQ_EBROKEN,
 *                so do later calls (checked at entry) until reset, which
 *                clears the flags and the per-thread parity and sense.
 *                Per episode one more load (broken) and one per pause.
 *   Limits:      threads <= SYNCQ_BARRIER_MAX_THREADS.
 *   Stats:       yields, blocks.
 */
#include "syncq/barrier/dissemination.h"

#include <stdlib.h>

#include "../stats_internal.h"
#include "barrier_internal.h"
#include "syncq/platform.h"

struct syncq_barrier_dissemination_flag {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) v;
};
struct syncq_barrier_dissemination_local {
  SYNCQ_CACHELINE_ALIGNED uint32_t parity; /* private to its thread */
  uint32_t sense;
};

static inline _Atomic(uint32_t) *flag_of(syncq_barrier_dissemination *b, uint32_t thread, uint32_t parity,
                                         uint32_t round) {
  return &b->flag[((size_t)thread * 2u + parity) * b->rounds + round].v;
}

static size_t n_flags(const syncq_barrier_dissemination *b) {
  return (size_t)b->threads * 2u * (b->rounds ? b->rounds : 1u);
}

/* Flags and per-thread state as at the start (init, reset). */
static void fill(syncq_barrier_dissemination *b) {
  size_t nflags = n_flags(b);
  for (size_t i = 0; i < nflags; i++) atomic_init(&b->flag[i].v, 0u);
  for (uint32_t i = 0; i < b->threads; i++) {
    b->local[i].parity = 0;
    b->local[i].sense = 1u;
  }
}

int syncq_barrier_dissemination_init(syncq_barrier_dissemination *b, const syncq_barrier_config *cfg) {
  if (b == NULL) return SYNCQ_EINVAL;
  int wait, ps;
  int r = barrier_parse_config(cfg, SYNCQ_WAIT_SPIN, BAR_WAIT_ALL, 0, &wait, &ps);
  if (r != SYNCQ_OK) return r;
  uint32_t p = cfg->threads, rounds = 0;
  while ((1u << rounds) < p) rounds++;
  size_t nflags = (size_t)p * 2u * (rounds ? rounds : 1u);
  b->flag =
    syncq_alloc_aligned(sizeof(syncq_barrier_dissemination_flag) * nflags, _Alignof(syncq_barrier_dissemination_flag));
  b->local =
    syncq_alloc_aligned(sizeof(syncq_barrier_dissemination_local) * p, _Alignof(syncq_barrier_dissemination_local));
  if (b->flag == NULL || b->local == NULL) {
    free(b->flag);
    free(b->local);
    b->flag = NULL;
    b->local = NULL;
    return SYNCQ_ENOMEM;
  }
  b->threads = p;
  b->rounds = rounds;
  b->wait = wait;
  atomic_init(&b->sleepers, 0u);
  atomic_init(&b->broken, 0u);
  fill(b);
  return SYNCQ_OK;
}

int syncq_barrier_dissemination_destroy(syncq_barrier_dissemination *b) {
  if (b == NULL) return SYNCQ_EINVAL;
  free(b->flag);
  free(b->local);
  b->flag = NULL;
  b->local = NULL;
  return SYNCQ_OK;
}

int syncq_barrier_dissemination_reset(syncq_barrier_dissemination *b) {
  if (b == NULL || b->flag == NULL) return SYNCQ_EINVAL;
  /* plain/relaxed (atomic_init): no thread waits (the caller's
   * precondition); the caller's own synchronization publishes them */
  fill(b);
  /* a waiter killed in its sleep (a process) never took itself off */
  atomic_store_explicit(&b->sleepers, 0u, memory_order_relaxed);
  atomic_store_explicit(&b->broken, 0u, memory_order_relaxed);
  return SYNCQ_OK;
}

/* A timed-out waiter breaks the barrier (see the contract). */
static void dissemination_break(syncq_barrier_dissemination *b) {
  if (!barrier_break_begin(&b->broken)) return;
  size_t nflags = n_flags(b);
  for (size_t i = 0; i < nflags; i++) barrier_break_word(&b->flag[i].v);
  if (!barrier_break_must_wake(b->wait, &b->sleepers)) return;
  for (size_t i = 0; i < nflags; i++) syncq_wait_futex_wake(&b->flag[i].v, 0, false);
}

static int dissemination_wait(syncq_barrier_dissemination *b, unsigned id, bar_deadline *deadline) {
  if (barrier_is_broken(&b->broken)) return SYNCQ_EBROKEN;
  syncq_barrier_dissemination_local *me = &b->local[id];
  uint32_t parity = me->parity, sense = me->sense;
  for (uint32_t k = 0; k < b->rounds; k++) {
    uint32_t partner = (uint32_t)(((uint64_t)id + (1u << k)) % b->threads);
    barrier_signal(flag_of(b, partner, parity, k), sense, b->wait, false, &b->sleepers);
    int r =
      barrier_await_change(flag_of(b, id, parity, k), sense ^ 1u, b->wait, false,
                           barrier_spin_limit(b->wait, b->threads - (1u << k)), &b->sleepers, &b->broken, deadline);
    if (r != SYNCQ_OK) BAR_FAIL(r, dissemination_break, b);
  }
  if (parity == 1u) me->sense = sense ^ 1u;
  me->parity = parity ^ 1u;
  return SYNCQ_OK;
}

int syncq_barrier_dissemination_wait(syncq_barrier_dissemination *b, unsigned id) {
  if (b == NULL || b->flag == NULL || id >= b->threads) return SYNCQ_EINVAL;
  return dissemination_wait(b, id, &(bar_deadline){SYNCQ_BARRIER_NO_TIMEOUT, 0});
}

int syncq_barrier_dissemination_wait_timed(syncq_barrier_dissemination *b, unsigned id, uint64_t timeout_ns) {
  if (b == NULL || b->flag == NULL || id >= b->threads || timeout_ns == 0) return SYNCQ_EINVAL;
  return dissemination_wait(b, id, &(bar_deadline){timeout_ns, 0});
}

SYNCQ_BARRIER_REGISTER(dissemination, "dissemination", "dissemination barrier (Hensgen, Finkel & Manber)",
                       "MCS91 §3.2, Figure 10", BLOCKING, 0);
