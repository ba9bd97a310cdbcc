/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * clh.c — GenMC driver for the CLH lock: src/lock/clh.c (the holder's
 * prepared spare, taken by one CAS of the tail word; the pool's free list
 * src/reclaim/freelist.c) included as it is, with the SPIN discipline.
 *
 * Threads and checks: lock_driver.h (A takes the lock GENMC_ROUNDS
 * times, default 2: its second acquisition takes the spare its first
 * left, or B's); afterwards every node is accounted for (the released
 * tail, its spare, the pool's nodes: clh_after). A third thread makes
 * the state space too large here (no verdict in 10 minutes under RC11:
 * the pool's 64 initial pushes are in every execution).
 *
 * GENMC_SEED_BUG (the control): the CAS of the tail word (the fast path
 * and trylock) weakened to relaxed, through the macro below: the
 * spare's preparation is then not published to the next arrival, which
 * may enter on a stale flag (GenMC reports the race on the counter).
 *
 * The out-of-line wait helpers: lock_spin_waits.h (SPIN stand-ins).
 */
#include "genmc_shim.h"

#include "lock_spin_waits.h"

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

/* every node accounted for: the released tail, its spare, the pool */
static void clh_after(syncq_lock_clh *l) {
  uint64_t tail = atomic_load(&l->tail);
  uint64_t spare = atomic_load(&l->node[tail & 0xffu].spare);
  assert(spare != 0 && (spare & 0xffu) != (tail & 0xffu));
  unsigned pooled = 0;
  syncq_fl_link *link;
  while (syncq_freelist_pop(&l->pool, &link) == SYNCQ_OK) pooled++;
  assert(pooled == SYNCQ_LOCK_CLH_POOL - 2u);
}

#define LOCK_DRIVER_T syncq_lock_clh
#define LOCK_DRIVER_FN(verb) syncq_lock_clh_##verb
#define LOCK_DRIVER_AFTER(l) clh_after(l)
#include "lock_driver.h"
