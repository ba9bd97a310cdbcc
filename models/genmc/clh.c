/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * clh.c — GenMC driver for the CLH lock: src/lock/clh.c (the holder's
 * prepared spare, taken by one CAS of the tail word; the pool's free list
 * src/reclaim/freelist.c) included as it is, with the SPIN discipline.
 *
 * Threads and checks: lock_driver.h (A takes the lock GENMC_ROUNDS
 * times, default 2: its second acquisition takes the spare its first
 * left, or B's); afterwards every node is accounted for (the released
 * tail, its spare, the pool's nodes: clh_after, clh_nodes.h). A third
 * thread makes
 * the state space too large here (no verdict in 10 minutes under RC11:
 * the pool's 64 initial pushes are in every execution).
 *
 * GENMC_SEED_BUG (the control): the CAS of the tail word (the fast path
 * and trylock: clh_spare_take, src/lock/clh_spare_internal.h) weakened
 * to relaxed, through the macro below: the
 * spare's preparation is then not published to the next arrival, which
 * may enter on a stale flag (GenMC reports the race on the counter).
 *
 * The out-of-line wait helpers: lock_spin_waits.h (SPIN stand-ins).
 */
#include "genmc_shim.h"

#include "lock_spin_waits.h"

#if defined(GENMC_SEED_BUG)
/* the only explicit compare-exchange of clh.c and the header it shares
 * with clh_tp.c is that CAS */
#undef atomic_compare_exchange_strong_explicit
#define atomic_compare_exchange_strong_explicit(p, e, d, s, f) \
  __atomic_compare_exchange_n((uint64_t *)(p), (e), (d), false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)
#endif

#ifndef GENMC_ROUNDS
#define GENMC_ROUNDS 2
#endif

#include "lock/clh.c"
#include "reclaim/freelist.c"

#include "clh_nodes.h"

/* every node accounted for: the released tail, its spare, the pool */
static void clh_after(syncq_lock_clh *l) {
  uint64_t tail = atomic_load(&l->tail);
  clh_nodes_accounted(tail, atomic_load(&l->node[tail & 0xffu].spare), &l->pool, SYNCQ_LOCK_CLH_POOL);
}

#define LOCK_DRIVER_T syncq_lock_clh
#define LOCK_DRIVER_FN(verb) syncq_lock_clh_##verb
#define LOCK_DRIVER_AFTER(l) clh_after(l)
#include "lock_driver.h"
