/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * clh.c — GenMC driver for the CLH lock: src/lock/clh.c (the holder's
 * prepared spare, taken by one CAS of the tail word; the pool's free list
 * src/reclaim/freelist.c) included as it is, with the SPIN discipline.
 *
 * Threads: A locks, increments a plain counter and unlocks GENMC_ROUNDS
 * times (default 2: its second acquisition takes the spare its first
 * left, or B's); B tries once (trylock) and, refused, locks, then
 * increments and unlocks. Mutual exclusion and the hand-over's ordering
 * are checked by GenMC's race detection on the plain counter (two
 * increments not ordered by the lock's release/acquire pairs are a data
 * race); main checks the count and that every node is accounted for
 * (the released tail, its spare, the pool's nodes). A third thread makes
 * the state space too large here (no verdict in 10 minutes under RC11:
 * the pool's 64 initial pushes are in every execution).
 *
 * GENMC_SEED_BUG (the control): the CAS of the tail word (the fast path
 * and trylock) weakened to relaxed, through the macro below: the
 * spare's preparation is then not published to the next arrival, which
 * may enter on a stale flag (GenMC reports the race on the counter).
 *
 * The wait helpers clh.c calls out of line (src/wait/) are stand-ins for
 * SPIN: a step never sleeps, so each wait is the flag's load loop in
 * clh.c (GenMC bounds it as a spin loop).
 */
#include "genmc_shim.h"

#include "syncq/wait.h"

int syncq_wait_check(int discipline) {
  return discipline >= SYNCQ_WAIT_DEFAULT && discipline < SYNCQ_WAIT_COUNT ? SYNCQ_OK : SYNCQ_EINVAL;
}
uint64_t syncq_wait_calibrate(void) { return 0; }
uint64_t syncq_wait_spin_limit_for(int discipline) {
  (void)discipline;
  return 0;
}
void syncq_wait_yield(void) {}
bool syncq_waiter_step(syncq_waiter *w) {
  (void)w;
  return false;
}
void syncq_waiter_sleep(syncq_waiter *w, _Atomic(uint32_t) *word, uint32_t marked) {
  (void)w;
  (void)word;
  (void)marked;
}
void syncq_wait_futex_wake(_Atomic(uint32_t) *word, int n, bool process_shared) {
  (void)word;
  (void)n;
  (void)process_shared;
}

#if defined(GENMC_SEED_BUG)
/* clh.c's only explicit compare-exchange is that CAS */
#undef atomic_compare_exchange_strong_explicit
#define atomic_compare_exchange_strong_explicit(p, e, d, s, f) \
  __atomic_compare_exchange_n((uint64_t *)(p), (e), (d), false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)
#endif

#ifndef GENMC_ROUNDS
#define GENMC_ROUNDS 2
#endif

#include "lock/clh.c"
#include "reclaim/freelist.c"

static syncq_lock_clh lock;
static uint64_t counter; /* plain: guarded by the lock */

static void *a(void *arg) {
  (void)arg;
  syncq_lock_node n;
  for (int i = 0; i < GENMC_ROUNDS; i++) {
    assert(syncq_lock_clh_lock(&lock, &n) == SYNCQ_OK);
    counter++;
    assert(syncq_lock_clh_unlock(&lock, &n) == SYNCQ_OK);
  }
  return NULL;
}

static void *b(void *arg) {
  (void)arg;
  syncq_lock_node n;
  int r = syncq_lock_clh_trylock(&lock, &n);
  if (r == SYNCQ_EBUSY) r = syncq_lock_clh_lock(&lock, &n);
  assert(r == SYNCQ_OK);
  counter++;
  assert(syncq_lock_clh_unlock(&lock, &n) == SYNCQ_OK);
  return NULL;
}

int main(void) {
  syncq_lock_config cfg = {0, SYNCQ_WAIT_SPIN, false};
  assert(syncq_lock_clh_init(&lock, &cfg) == SYNCQ_OK);
  void *(*fn[])(void *) = {a, b};
  genmc_run(fn, 2);
  assert(counter == GENMC_ROUNDS + 1);
  assert(syncq_lock_clh_destroy(&lock) == SYNCQ_OK);
  /* every node accounted for: the released tail, its spare, the pool */
  uint64_t tail = atomic_load(&lock.tail);
  uint64_t spare = atomic_load(&lock.node[tail & 0xffu].spare);
  assert(spare != 0 && (spare & 0xffu) != (tail & 0xffu));
  unsigned pooled = 0;
  syncq_fl_link *link;
  while (syncq_freelist_pop(&lock.pool, &link) == SYNCQ_OK) pooled++;
  assert(pooled == SYNCQ_LOCK_CLH_POOL - 2u);
  return 0;
}
