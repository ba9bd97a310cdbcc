/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * clh.c — the CLH list-based queue lock.
 *
 * Contract
 *   Source:      Craig 1993; Magnusson, Landin & Hagersten 1994 (the CLH
 *                lock as in Scott's "Shared-Memory Synchronization" §4.3.2,
 *                Figure 4.12): set own node's flag, swap it into tail, spin
 *                on the predecessor's flag; release clears own flag. 003
 *                §3.1 (the linked-list form of the queue lock).
 *   Deviation:   CLH recycles nodes (a thread leaves with its predecessor's
 *                node). Here nodes come from a pool inside the lock: lock()
 *                pops one, and the new holder pushes its predecessor's node
 *                back, so the caller's syncq_lock_node only remembers which
 *                pool node it used and may be reused once unlock returns.
 *   Progress:    blocking; starvation-free (FIFO). The pool is lock-free.
 *   Atomics:     uncontended lock: pool pop (1 DWCAS) + 1 swap + 1 load +
 *                pool push (1 DWCAS); unlock: 1 load + 1 release store
 *                (BLOCK/COMPETITIVE: 1 load + 1 release exchange, which
 *                reads the sleep mark).
 *   Memory:      caller's storage, 67 cache lines (4.3 KB); never allocates.
 *   Signal-safe: no (a handler's pop could interleave with its thread's).
 *   Process-shared: no (the queue links nodes by address): SYNCQ_ENOTSUP.
 *   Waiting:     SPIN (default): pause on the predecessor's flag; YIELD,
 *                BLOCK, COMPETITIVE via syncq/wait.h. A successor that
 *                will sleep marks the flag it waits on (1 -> 2 by CAS) and
 *                sleeps on it; the release exchanges 0 in and wakes it
 *                only when it read 2.
 *   Destroy:     the next holder may destroy and free the lock as soon as
 *                it holds it: after its releasing store or exchange an
 *                unlock touches nothing of the lock but a futex wake on
 *                its node's flag. With the pool empty
 *                (more than 64 threads in the lock) a thread yields until a
 *                node comes back.
 *   Limits:      none on threads. trylock: in a race where the node it saw
 *                at the tail is freed, reused and enqueued again between its
 *                two reads, it waits like lock() (still correct, rare).
 *   Stats:       cas_attempts, cas_failures (pool), yields, blocks.
 */
#include "syncq/lock/clh.h"

#include <stddef.h>

#include "../stats_internal.h"
#include "lock_internal.h"
#include "syncq/platform.h"

typedef syncq_lock_clh_qnode qnode;

/* A node's flag while its owner holds or awaits the lock and the successor
 * may sleep on it (the sleep mark of syncq/wait.h). */
#define ASLEEP 2u

/* What the caller's node keeps between lock and unlock. */
typedef struct clh_record {
  qnode *mine;
} clh_record;
_Static_assert(sizeof(clh_record) <= sizeof(syncq_lock_node), "fits in syncq_lock_node");
static inline clh_record *rec(syncq_lock_node *n) { return (clh_record *)(void *)n->opaque; }

int syncq_lock_clh_init(syncq_lock_clh *l, const syncq_lock_config *cfg) {
  if (l == NULL) return SYNCQ_EINVAL;
  int wait, ps;
  int r = lock_parse_config(cfg, SYNCQ_WAIT_SPIN, LOCK_WAIT_ALL, 0, &wait, &ps);
  if (r != SYNCQ_OK) return r;
  r = syncq_freelist_init(&l->pool);
  if (r != SYNCQ_OK) return r;
  for (unsigned i = 0; i < SYNCQ_LOCK_CLH_POOL; i++) atomic_init(&l->node[i].locked, 0u);
  /* node 0 is the initial (released) tail; the others are free */
  r = syncq_freelist_fill(&l->pool, &l->node[1], SYNCQ_LOCK_CLH_POOL - 1u, sizeof(qnode), offsetof(qnode, link));
  if (r != SYNCQ_OK) return r;
  atomic_init(&l->tail, (void *)&l->node[0]);
  l->wait = wait;
  if (wait == SYNCQ_WAIT_COMPETITIVE) (void)syncq_wait_calibrate();
  return SYNCQ_OK;
}

int syncq_lock_clh_destroy(syncq_lock_clh *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  qnode *t = atomic_load(&l->tail);
  return atomic_load(&t->locked) != 0u ? SYNCQ_EBUSY : SYNCQ_OK;
}

static qnode *take_node(syncq_lock_clh *l) {
  syncq_fl_link *link;
  while (syncq_freelist_pop(&l->pool, &link) != SYNCQ_OK) {
    syncq_wait_yield(); /* every node is in the queue: wait for one back */
  }
  return SYNCQ_FL_CONTAINER(link, qnode, link);
}

/* Wait until pred is released, then recycle it: we are its only reader. */
static void await_pred(syncq_lock_clh *l, qnode *pred) {
  /* acquire: pairs with the releasing store or exchange in unlock */
  uint32_t v = atomic_load_explicit(&pred->locked, memory_order_acquire);
  if (v != 0u) {
    syncq_waiter w;
    syncq_waiter_init(&w, l->wait, false, lock_spin_limit(l->wait));
    do {
      if (syncq_waiter_step(&w)) {
        /* mark the flag we wait on (we are its only waiter), then sleep
         * on it. seq_cst CAS: a read-modify-write of the flag, so either
         * the release exchange reads the mark or the CAS fails on its 0 */
        if (v == 1u && !atomic_compare_exchange_strong(&pred->locked, &v, ASLEEP)) continue;
        syncq_waiter_sleep(&w, &pred->locked, ASLEEP);
      }
    } while ((v = atomic_load_explicit(&pred->locked, memory_order_acquire)) != 0u); /* pairs as above */
  }
  (void)syncq_freelist_push(&l->pool, &pred->link);
}

int syncq_lock_clh_lock(syncq_lock_clh *l, syncq_lock_node *node) {
  if (l == NULL || node == NULL) return SYNCQ_EINVAL;
  qnode *me = take_node(l);
  /* relaxed: published by the acq_rel swap below */
  atomic_store_explicit(&me->locked, 1u, memory_order_relaxed);
  /* acq_rel: release publishes our flag to the successor that swaps after
   * us; acquire makes the predecessor's node initialisation visible */
  qnode *pred = atomic_exchange_explicit(&l->tail, (void *)me, memory_order_acq_rel);
  await_pred(l, pred);
  rec(node)->mine = me;
  return SYNCQ_OK;
}

int syncq_lock_clh_trylock(syncq_lock_clh *l, syncq_lock_node *node) {
  if (l == NULL || node == NULL) return SYNCQ_EINVAL;
  qnode *pred = atomic_load(&l->tail);
  /* acquire: pairs with the clear in unlock */
  if (atomic_load_explicit(&pred->locked, memory_order_acquire) != 0u) return SYNCQ_EBUSY;
  qnode *me = take_node(l);
  atomic_store_explicit(&me->locked, 1u, memory_order_relaxed); /* published by the CAS */
  void *expected = pred;
  SYNCQ_STAT_INC(cas_attempts);
  if (!atomic_compare_exchange_strong(&l->tail, &expected, (void *)me)) {
    SYNCQ_STAT_INC(cas_failures);
    atomic_store_explicit(&me->locked, 0u, memory_order_relaxed); /* never published */
    (void)syncq_freelist_push(&l->pool, &me->link);
    return SYNCQ_EBUSY;
  }
  await_pred(l, pred); /* released as seen, unless recycled meanwhile (see Limits) */
  rec(node)->mine = me;
  return SYNCQ_OK;
}

int syncq_lock_clh_unlock(syncq_lock_clh *l, syncq_lock_node *node) {
  if (l == NULL || node == NULL) return SYNCQ_EINVAL;
  qnode *me = rec(node)->mine;
  if (me < &l->node[0] || me >= &l->node[SYNCQ_LOCK_CLH_POOL] ||
      atomic_load_explicit(&me->locked, memory_order_relaxed) == 0u) /* relaxed: misuse check */
    return SYNCQ_EINVAL;
  /* From the release on, the successor may own, destroy and free the lock
   * (the node is in it): only locals are used after it. */
  if (syncq_wait_may_sleep(l->wait)) {
    /* release: pairs with await_pred's acquire loads; a read-modify-write,
     * so it reads the successor's mark */
    uint32_t old = atomic_exchange_explicit(&me->locked, 0u, memory_order_release);
    SYNCQ_RACE_POINT("lock.handover");
    /* the address only; a stale wake-up of a recycled node is one of the
     * spurious returns waiters allow */
    if (old == ASLEEP) syncq_wait_futex_wake(&me->locked, 1, false);
  } else {
    atomic_store_explicit(&me->locked, 0u, memory_order_release); /* pairs with await_pred's acquire */
    SYNCQ_RACE_POINT("lock.handover");
  }
  return SYNCQ_OK;
}

SYNCQ_LOCK_REGISTER(clh, "clh", "CLH list-based queue lock (nodes from a pool in the lock)",
                    "Craig 1993; Magnusson, Landin & Hagersten 1994; 003 §3.1", BLOCKING,
                    SYNCQ_PROP_FIFO | SYNCQ_PROP_USES_NODE);
