/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * clh_tp.c — GenMC driver for the time-published CLH lock:
 * src/lock/clh_tp.c (the holder's prepared spare, taken by one CAS of
 * the tail word; removal of a waiter whose stamp is stale; the pool's
 * free list src/reclaim/freelist.c) included as it is, with the SPIN
 * discipline.
 *
 * Threads and checks: lock_driver.h (A takes the lock GENMC_ROUNDS
 * times; B tries, then locks); afterwards every node is accounted for
 * (the released tail, its spare, the pool's nodes: clh_tp_after,
 * clh_nodes.h). One
 * round (models/genmc/run): B takes the spare A's acquisition left and
 * waits on A's node, clearing that node's spare field, or takes the lock
 * first and A waits. Two rounds (the default here) add the removal: A
 * releases and queues again behind the waiting B, finds B's stamp
 * stale, removes B and takes the lock through its own old node; B
 * queues again with the node it took. That state space gave no verdict
 * in 30 minutes here (the waits' unrolled polls), so run leaves it out;
 * tests/lock/clh_tp_test.c checks the removal's bookkeeping.
 *
 * The clock: syncq_now_ns counts the calling thread's calls (10 ns a
 * call, a thread-local count: a shared one would order the threads'
 * reads and multiply the executions) and the staleness bound is 1 ns,
 * so a waiter looks stale to its successor when it has published fewer
 * times than the successor has read the clock: executions with and
 * without removals both occur. The waits store a stamp at each poll, so
 * they are no spin loops GenMC can bound by itself: models/genmc/run
 * unrolls them (-unroll), and executions that poll longer are left out
 * (counted as blocked).
 *
 * Controls (models/genmc/run):
 *   GENMC_SEED_BUG: unlock's release store of AVAILABLE weakened to
 *     relaxed: the next holder's increment is then not ordered after
 *     the releaser's (a race on the counter).
 *   GENMC_SEED_BUG_SPARE: an arrival that took its predecessor's spare
 *     and must wait leaves the spare field as it is (the statement
 *     `atomic_store_explicit(&pred->spare, ...)` of clh_tp.c compiled to
 *     nothing): whoever takes the lock through that predecessor (the
 *     arrival itself, or the successor that removed it) adopts the spare
 *     the arrival still owns, and a node ends up in two roles
 *     (clh_tp_after's assertions; one round suffices).
 */
#include "genmc_shim.h"

#include "lock_spin_waits.h"

/* The controls pick one statement of clh_tp.c by its text (a comparison
 * of constant strings, folded by the compiler). */
#if defined(GENMC_SEED_BUG)
/* the one store of AVAILABLE into the own node (unlock's release) */
#undef atomic_store_explicit
#define atomic_store_explicit(p, v, o) \
  __c11_atomic_store(p, v, __builtin_strcmp(#p " " #v, "&me->word TP_AVAILABLE") ? (o) : memory_order_relaxed)
#elif defined(GENMC_SEED_BUG_SPARE)
/* the one store whose target is written &pred->spare (the clear) */
#undef atomic_store_explicit
#define atomic_store_explicit(p, v, o) (__builtin_strcmp(#p, "&pred->spare") ? __c11_atomic_store(p, v, o) : (void)0)
#endif

#ifndef GENMC_ROUNDS
#define GENMC_ROUNDS 2
#endif

static _Thread_local uint64_t genmc_clock;

uint64_t syncq_now_ns(void) { return genmc_clock += 10u; }
uint64_t syncq_wait_spin_limit_ns(void) { return 1u; }

#include "lock/clh_tp.c"
#include "reclaim/freelist.c"

#include "clh_nodes.h"

/* every node accounted for: the released tail, its spare, the pool */
static void clh_tp_after(syncq_lock_clh_tp *l) {
  uint64_t tail = atomic_load(&l->tail);
  assert(TP_STATE(atomic_load(&l->node[tail & 0xffu].word)) == TP_AVAILABLE);
  clh_nodes_accounted(tail, atomic_load(&l->node[tail & 0xffu].spare), &l->pool, SYNCQ_LOCK_CLH_TP_POOL);
}

#define LOCK_DRIVER_T syncq_lock_clh_tp
#define LOCK_DRIVER_FN(verb) syncq_lock_clh_tp_##verb
#define LOCK_DRIVER_AFTER(l) clh_tp_after(l)
#include "lock_driver.h"
