/*
 * mcs.c — the MCS list-based queue lock.
 *
 * Contract
 *   Source:      Mellor-Crummey & Scott 1991, Figure 5 (acquire: swap self
 *                into tail, link behind the predecessor, spin on own flag;
 *                release: CAS tail back to nil if no successor, else wait
 *                for the link and clear the successor's flag); 003 §3.1
 *                (the linked-list queue lock, "costly atomic operations,
 *                namely compare-and-swap and fetch-and-store").
 *   Progress:    blocking; starvation-free (FIFO).
 *   Atomics:     uncontended lock: 1 swap; unlock: 1 load + 1 CAS.
 *   Memory:      the caller's syncq_lock_node per acquisition (it must stay
 *                untouched until unlock returns); never allocates.
 *   Signal-safe: trylock and unlock yes; lock with SPIN or YIELD yes.
 *   Process-shared: no (the queue links nodes by address): SYNCQ_ENOTSUP.
 *   Waiting:     SPIN (default): pause on the own node's flag; YIELD, BLOCK,
 *                COMPETITIVE via syncq/wait.h. The releaser's short wait
 *                for a successor's link spins (SPIN) or yields every 64
 *                pauses (other disciplines: the linker may be preempted).
 *   Limits:      none.
 *   Stats:       cas_attempts, cas_failures (release), yields, blocks.
 */
#include "syncq/lock/mcs.h"

#include "../stats_internal.h"
#include "lock_internal.h"
#include "syncq/platform.h"

typedef struct mcs_qnode {
  _Atomic(struct mcs_qnode *) next;
  _Atomic(uint32_t) locked; /* 1 while waiting, 0 when the lock is handed over */
} mcs_qnode;

_Static_assert(sizeof(mcs_qnode) <= sizeof(syncq_lock_node), "an MCS node fits in syncq_lock_node");

static inline mcs_qnode *qnode(syncq_lock_node *n) { return (mcs_qnode *)(void *)n->opaque; }

int syncq_lock_mcs_init(syncq_lock_mcs *l, const syncq_lock_config *cfg) {
  if (l == NULL) return SYNCQ_EINVAL;
  int wait, ps;
  int r = lock_parse_config(cfg, SYNCQ_WAIT_SPIN, LOCK_WAIT_ALL, 0, &wait, &ps);
  if (r != SYNCQ_OK) return r;
  atomic_init(&l->tail, NULL);
  atomic_init(&l->sleepers, 0u);
  l->wait = wait;
  if (wait == SYNCQ_WAIT_COMPETITIVE) (void)syncq_wait_calibrate();
  return SYNCQ_OK;
}

int syncq_lock_mcs_destroy(syncq_lock_mcs *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  return atomic_load(&l->tail) != NULL ? SYNCQ_EBUSY : SYNCQ_OK;
}

int syncq_lock_mcs_lock(syncq_lock_mcs *l, syncq_lock_node *node) {
  if (l == NULL || node == NULL) return SYNCQ_EINVAL;
  mcs_qnode *me = qnode(node);
  /* relaxed: published by the acq_rel swap below */
  atomic_store_explicit(&me->next, NULL, memory_order_relaxed);
  atomic_store_explicit(&me->locked, 1u, memory_order_relaxed);
  /* acq_rel: release publishes our node to the successor that swaps after
   * us; acquire pairs with the releasing CAS of tail to NULL in unlock */
  mcs_qnode *pred = atomic_exchange_explicit(&l->tail, (void *)me, memory_order_acq_rel);
  if (pred == NULL) return SYNCQ_OK;
  /* release: pairs with the acquire load of next in the predecessor's unlock */
  atomic_store_explicit(&pred->next, me, memory_order_release);
  /* acquire: pairs with the hand-over store of locked in unlock */
  if (atomic_load_explicit(&me->locked, memory_order_acquire) != 0u) {
    syncq_waiter w;
    syncq_waiter_init(&w, l->wait, false, lock_spin_limit(l->wait));
    do {
      syncq_waiter_pause(&w, &me->locked, 1u, &l->sleepers);
    } while (atomic_load_explicit(&me->locked, memory_order_acquire) != 0u); /* pairs with unlock */
  }
  return SYNCQ_OK;
}

int syncq_lock_mcs_trylock(syncq_lock_mcs *l, syncq_lock_node *node) {
  if (l == NULL || node == NULL) return SYNCQ_EINVAL;
  mcs_qnode *me = qnode(node);
  /* relaxed: published by the CAS below */
  atomic_store_explicit(&me->next, NULL, memory_order_relaxed);
  atomic_store_explicit(&me->locked, 0u, memory_order_relaxed);
  void *expected = NULL;
  SYNCQ_STAT_INC(cas_attempts);
  /* seq_cst: acquires the lock (pairs with unlock's CAS to NULL) */
  if (atomic_compare_exchange_strong(&l->tail, &expected, me)) return SYNCQ_OK;
  SYNCQ_STAT_INC(cas_failures);
  return SYNCQ_EBUSY;
}

int syncq_lock_mcs_unlock(syncq_lock_mcs *l, syncq_lock_node *node) {
  if (l == NULL || node == NULL) return SYNCQ_EINVAL;
  if (atomic_load(&l->tail) == NULL) return SYNCQ_EINVAL; /* nobody holds it */
  mcs_qnode *me = qnode(node);
  /* acquire: pairs with the successor's release store of our next */
  mcs_qnode *succ = atomic_load_explicit(&me->next, memory_order_acquire);
  if (succ == NULL) {
    void *expected = me;
    SYNCQ_STAT_INC(cas_attempts);
    /* seq_cst (release half used): pairs with the acquire swap in lock() */
    if (atomic_compare_exchange_strong(&l->tail, &expected, NULL)) return SYNCQ_OK;
    SYNCQ_STAT_INC(cas_failures);
    /* a successor swapped itself in but has not linked yet */
    uint32_t k = 0;
    while ((succ = atomic_load_explicit(&me->next, memory_order_acquire)) == NULL) { /* pairs as above */
      if (l->wait != SYNCQ_WAIT_SPIN && (++k & 63u) == 0) {
        SYNCQ_STAT_INC(yields);
        syncq_yield();
      } else {
        syncq_pr_relax();
      }
    }
  }
  if (syncq_wait_may_sleep(l->wait)) {
    atomic_store(&succ->locked, 0u); /* seq_cst: Dekker pair with sleepers */
    /* only the address is used after the store (the futex key); the
     * successor may already have left with its node */
    syncq_wait_wake(l->wait, &succ->locked, &l->sleepers, 1, false);
  } else {
    atomic_store_explicit(&succ->locked, 0u, memory_order_release); /* pairs with lock()'s acquire */
  }
  return SYNCQ_OK;
}

static int o_init(void *l, const syncq_lock_config *c) { return syncq_lock_mcs_init(l, c); }
static int o_destroy(void *l) { return syncq_lock_mcs_destroy(l); }
static int o_lock(void *l, syncq_lock_node *n) { return syncq_lock_mcs_lock(l, n); }
static int o_try(void *l, syncq_lock_node *n) { return syncq_lock_mcs_trylock(l, n); }
static int o_unlock(void *l, syncq_lock_node *n) { return syncq_lock_mcs_unlock(l, n); }

static const syncq_lock_ops ops = {
  sizeof(syncq_lock_mcs), _Alignof(syncq_lock_mcs), o_init, o_destroy, o_lock, o_try, o_unlock,
};

const syncq_algo syncq_lock_mcs_algo = {
  SYNCQ_FAMILY_LOCK, "mcs", "MCS list-based queue lock", "MCS91 Figure 5; 003 §3.1",
  SYNCQ_PROGRESS_BLOCKING, SYNCQ_PROP_FIFO | SYNCQ_PROP_SIGNAL_SAFE, &ops,
};
