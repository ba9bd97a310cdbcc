/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/static/lock/mcs.h — the MCS list-based queue lock as static inline
 * bodies (liburcu's model: see syncq/static/lock/tas.h). src/lock/mcs.c
 * builds the exported functions and the ops table from them; its contract
 * block (Mellor-Crummey & Scott 1991, Figure 5) applies. Storage:
 * syncq_lock_mcs, initialised by syncq_lock_mcs_init; one syncq_lock_node
 * per acquisition, the same for lock and unlock.
 */
#ifndef SYNCQ_STATIC_LOCK_MCS_H
#define SYNCQ_STATIC_LOCK_MCS_H

#include "syncq/lock/mcs.h"
#include "syncq/platform.h"
#include "syncq/static/stats.h"
#include "syncq/wait.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A waiter's queue node, laid in the caller's syncq_lock_node. */
typedef struct syncq_lock_mcs_qnode {
  _Atomic(struct syncq_lock_mcs_qnode *) next;
  /* 1 while waiting, SYNCQ_LOCK_MCS_ASLEEP while waiting and maybe asleep
   * on it (the sleep mark of syncq/wait.h, in the waiter's own node), 0
   * when the lock is handed over */
  _Atomic(uint32_t) locked;
} syncq_lock_mcs_qnode;

#define SYNCQ_LOCK_MCS_ASLEEP 2u

/* Pauses between yields of a releaser waiting for its successor's link
 * (disciplines other than SPIN: the linker may be preempted). */
#define SYNCQ_LOCK_MCS_LINK_PAUSES_PER_YIELD 64u

static inline syncq_lock_mcs_qnode *syncq_lock_mcs_qnode_of(syncq_lock_node *n) {
  return (syncq_lock_mcs_qnode *)(void *)n->opaque;
}

/* Link behind pred and wait for the hand-over: out of line, so the
 * uncontended path keeps no frame. */
SYNCQ_LOCK_SLOW_PATH_ int syncq_lock_mcs_wait_inline_(syncq_lock_mcs *l, syncq_lock_mcs_qnode *me,
                                                      syncq_lock_mcs_qnode *pred) {
  /* relaxed: only the predecessor writes our flag, after it reads the
   * link below, whose release store publishes this one */
  atomic_store_explicit(&me->locked, 1u, memory_order_relaxed);
  /* release: pairs with the acquire load of next in the predecessor's unlock */
  atomic_store_explicit(&pred->next, me, memory_order_release);
  /* acquire: pairs with the hand-over store or exchange of locked in unlock */
  uint32_t v = atomic_load_explicit(&me->locked, memory_order_acquire);
  if (v != 0u) {
    syncq_waiter w;
    syncq_waiter_init(&w, l->wait, false, SYNCQ_STATIC_SPIN_LIMIT(l->wait));
    do {
      if (syncq_waiter_step(&w)) {
        /* mark our own flag, then sleep on it. seq_cst CAS: a
         * read-modify-write of the flag, so either the releaser's
         * exchange reads the mark or the CAS fails on its 0 */
        if (v == 1u && !atomic_compare_exchange_strong(&me->locked, &v, SYNCQ_LOCK_MCS_ASLEEP)) continue;
        syncq_waiter_sleep(&w, &me->locked, SYNCQ_LOCK_MCS_ASLEEP);
      }
    } while ((v = atomic_load_explicit(&me->locked, memory_order_acquire)) != 0u); /* pairs with unlock */
  }
  return SYNCQ_OK;
}

static inline int syncq_lock_mcs_lock_inline(syncq_lock_mcs *l, syncq_lock_node *node) {
  if (l == NULL || node == NULL) return SYNCQ_EINVAL;
  syncq_lock_mcs_qnode *me = syncq_lock_mcs_qnode_of(node);
  /* relaxed: published by the acq_rel swap below (a successor links
   * itself here). The flag is set only when there is a predecessor (in
   * syncq_lock_mcs_wait_inline_, before linking): one store less before
   * the swap's locked instruction when the lock is free. */
  atomic_store_explicit(&me->next, (syncq_lock_mcs_qnode *)NULL, memory_order_relaxed);
  /* acq_rel: release publishes our node to the successor that swaps after
   * us; acquire pairs with the releasing CAS of tail to NULL in unlock */
  syncq_lock_mcs_qnode *pred =
    (syncq_lock_mcs_qnode *)atomic_exchange_explicit(&l->tail, (void *)me, memory_order_acq_rel);
  if (pred == NULL) return SYNCQ_OK;
  return syncq_lock_mcs_wait_inline_(l, me, pred);
}

static inline int syncq_lock_mcs_trylock_inline(syncq_lock_mcs *l, syncq_lock_node *node) {
  if (l == NULL || node == NULL) return SYNCQ_EINVAL;
  syncq_lock_mcs_qnode *me = syncq_lock_mcs_qnode_of(node);
  /* relaxed: published by the CAS below */
  atomic_store_explicit(&me->next, (syncq_lock_mcs_qnode *)NULL, memory_order_relaxed);
  atomic_store_explicit(&me->locked, 0u, memory_order_relaxed);
  void *expected = NULL;
  SYNCQ_STAT_INC(cas_attempts);
  /* seq_cst: acquires the lock (pairs with unlock's CAS to NULL) */
  if (atomic_compare_exchange_strong(&l->tail, &expected, (void *)me)) return SYNCQ_OK;
  SYNCQ_STAT_INC(cas_failures);
  return SYNCQ_EBUSY;
}

/* The release's rarer half, out of line (the uncontended release keeps no
 * frame): wait for a successor that swapped itself in but has not linked
 * yet (succ NULL), then hand over to it; with a sleeping discipline the
 * hand-over exchanges and may wake. */
SYNCQ_LOCK_SLOW_PATH_ int syncq_lock_mcs_handover_inline_(syncq_lock_mcs *l, syncq_lock_mcs_qnode *me,
                                                          syncq_lock_mcs_qnode *succ) {
  if (succ == NULL) {
    uint32_t k = 0;
    const uint32_t every = l->wait != SYNCQ_WAIT_SPIN ? SYNCQ_LOCK_MCS_LINK_PAUSES_PER_YIELD : 0u;
    /* acquire: pairs with the successor's release store of our next */
    while ((succ = atomic_load_explicit(&me->next, memory_order_acquire)) == NULL) syncq_wait_spin_yield(&k, every);
  }
  /* From the hand-over on, the successor may own, destroy and free the
   * lock, and leave with its node: only locals are used after it. */
  if (syncq_wait_may_sleep(l->wait)) {
    /* release: pairs with the successor's acquire loads of locked; a
     * read-modify-write, so it reads the successor's mark */
    uint32_t old = atomic_exchange_explicit(&succ->locked, 0u, memory_order_release);
#ifdef SYNCQ_RACE_POINT
    SYNCQ_RACE_POINT("lock.handover");
#endif
    /* the node's address only (the futex key): a stale wake-up of a
     * reused node is one of the spurious returns waiters allow */
    if (old == SYNCQ_LOCK_MCS_ASLEEP) syncq_wait_futex_wake(&succ->locked, 1, false);
  } else {
    atomic_store_explicit(&succ->locked, 0u, memory_order_release); /* pairs with lock()'s acquire */
#ifdef SYNCQ_RACE_POINT
    SYNCQ_RACE_POINT("lock.handover");
#endif
  }
  return SYNCQ_OK;
}

static inline int syncq_lock_mcs_unlock_inline(syncq_lock_mcs *l, syncq_lock_node *node) {
  if (l == NULL || node == NULL) return SYNCQ_EINVAL;
  void *tail = atomic_load(&l->tail);
  if (tail == NULL) return SYNCQ_EINVAL; /* nobody holds it */
  syncq_lock_mcs_qnode *me = syncq_lock_mcs_qnode_of(node);
  /* acquire: pairs with the successor's release store of our next */
  syncq_lock_mcs_qnode *succ = atomic_load_explicit(&me->next, memory_order_acquire);
  if (succ == NULL && tail == (void *)me) {
    /* no successor seen (tail read other than us: one has swapped in, and
     * the CAS would fail: skip it, as Concurrency Kit's unlock does) */
    void *expected = (void *)me;
    /* seq_cst (release half used): pairs with the acquire swap in lock() */
    bool released = atomic_compare_exchange_strong(&l->tail, &expected, (void *)NULL);
    /* counted after the CAS: a store before it would wait in the store
     * buffer ahead of the locked instruction */
    SYNCQ_STAT_INC(cas_attempts);
    if (released) {
#ifdef SYNCQ_RACE_POINT
      SYNCQ_RACE_POINT("lock.handover");
#endif
      return SYNCQ_OK;
    }
    SYNCQ_STAT_INC(cas_failures);
  }
  if (succ == NULL || syncq_wait_may_sleep(l->wait)) return syncq_lock_mcs_handover_inline_(l, me, succ);
  atomic_store_explicit(&succ->locked, 0u, memory_order_release); /* pairs with lock()'s acquire */
#ifdef SYNCQ_RACE_POINT
  SYNCQ_RACE_POINT("lock.handover");
#endif
  return SYNCQ_OK;
}

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_STATIC_LOCK_MCS_H */
