/*
 * tas.c — test-and-set ("tas") and test-and-test-and-set ("ttas") locks.
 *
 * Contract
 *   Source:      003 §3.1 (test-and-set with polling and bounded exponential
 *                backoff); 001 §4 (TTAS with bounded exponential backoff,
 *                cap 30 us, the lock of all of 001's lock-based objects);
 *                000 §3.1 (TAS and TTAS packet claim). Backoff after each
 *                failed test-and-set: 100 ns doubling to 30 us
 *                (SYNCQ_LOCK_TAS_BACKOFF_*).
 *   Progress:    blocking (deadlock-free, not starvation-free; no FIFO).
 *   Atomics:     uncontended lock: 1 exchange (TTAS: 1 load + 1 exchange);
 *                unlock: 1 release store (BLOCK/COMPETITIVE: a seq_cst
 *                store and a load of the sleeper count).
 *   Memory:      caller's storage, one cache line; never allocates.
 *   Signal-safe: trylock and unlock yes; lock with SPIN or YIELD yes (a
 *                handler that waits for a lock its thread holds deadlocks).
 *   Process-shared: yes (no pointers; shared futex when blocking).
 *   Waiting:     SPIN (default): backoff; YIELD, BLOCK, COMPETITIVE through
 *                syncq/wait.h while the word is 1.
 *   Limits:      none. unlock of a free lock: SYNCQ_EINVAL.
 *   Stats:       retries (failed test-and-set), backoffs, yields, blocks.
 */
#include "syncq/lock/tas.h"

#include "../stats_internal.h"
#include "lock_internal.h"
#include "syncq/backoff.h"

static int init_common(syncq_lock_tas *l, const syncq_lock_config *cfg) {
  if (l == NULL) return SYNCQ_EINVAL;
  int wait, ps;
  int r = lock_parse_config(cfg, SYNCQ_WAIT_SPIN, LOCK_WAIT_ALL, 1, &wait, &ps);
  if (r != SYNCQ_OK) return r;
  atomic_init(&l->word, 0u);
  atomic_init(&l->sleepers, 0u);
  l->wait = wait;
  l->process_shared = ps != 0;
  if (wait == SYNCQ_WAIT_COMPETITIVE) (void)syncq_wait_calibrate(); /* not on the first lock() */
  return SYNCQ_OK;
}

int syncq_lock_tas_init(syncq_lock_tas *l, const syncq_lock_config *cfg) { return init_common(l, cfg); }
int syncq_lock_ttas_init(syncq_lock_tas *l, const syncq_lock_config *cfg) { return init_common(l, cfg); }

int syncq_lock_tas_destroy(syncq_lock_tas *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  return atomic_load(&l->word) != 0u ? SYNCQ_EBUSY : SYNCQ_OK;
}
int syncq_lock_ttas_destroy(syncq_lock_tas *l) { return syncq_lock_tas_destroy(l); }

/* Wait once after a failed test-and-set: backoff when spinning, the wait
 * discipline otherwise. */
static inline void wait_once(syncq_lock_tas *l, syncq_backoff_exp *b, syncq_waiter *w) {
  if (l->wait == SYNCQ_WAIT_SPIN)
    (void)syncq_backoff_exp_wait(b);
  else
    syncq_waiter_pause(w, &l->word, 1u, &l->sleepers);
}

int syncq_lock_tas_lock(syncq_lock_tas *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  if (!syncq_pr_tas(&l->word)) return SYNCQ_OK; /* acquire (in syncq_pr_tas) */
  syncq_backoff_exp b;
  (void)syncq_backoff_exp_init(&b, SYNCQ_LOCK_TAS_BACKOFF_INITIAL_NS, SYNCQ_LOCK_TAS_BACKOFF_CAP_NS);
  syncq_waiter w;
  syncq_waiter_init(&w, l->wait, l->process_shared, lock_spin_limit(l->wait));
  do {
    SYNCQ_STAT_INC(retries);
    wait_once(l, &b, &w);
  } while (syncq_pr_tas(&l->word));
  return SYNCQ_OK;
}

int syncq_lock_ttas_lock(syncq_lock_tas *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  /* uncontended fast path: test, then test-and-set (relaxed test: a hint,
   * the acquire exchange decides) */
  if (atomic_load_explicit(&l->word, memory_order_relaxed) == 0u && !syncq_pr_tas(&l->word)) return SYNCQ_OK;
  syncq_backoff_exp b;
  (void)syncq_backoff_exp_init(&b, SYNCQ_LOCK_TAS_BACKOFF_INITIAL_NS, SYNCQ_LOCK_TAS_BACKOFF_CAP_NS);
  syncq_waiter w;
  syncq_waiter_init(&w, l->wait, l->process_shared, lock_spin_limit(l->wait));
  for (;;) {
    /* relaxed: the test before the test-and-set is only a hint; the
     * acquire exchange in syncq_pr_tas orders the critical section. */
    while (atomic_load_explicit(&l->word, memory_order_relaxed) != 0u) {
      if (l->wait == SYNCQ_WAIT_SPIN)
        syncq_pr_relax();
      else
        syncq_waiter_pause(&w, &l->word, 1u, &l->sleepers);
    }
    if (!syncq_pr_tas(&l->word)) return SYNCQ_OK;
    SYNCQ_STAT_INC(retries);
    if (l->wait == SYNCQ_WAIT_SPIN) (void)syncq_backoff_exp_wait(&b);
  }
}

int syncq_lock_tas_trylock(syncq_lock_tas *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  return syncq_pr_tas(&l->word) ? SYNCQ_EBUSY : SYNCQ_OK;
}

int syncq_lock_ttas_trylock(syncq_lock_tas *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  /* relaxed: a hint; the acquire exchange decides */
  if (atomic_load_explicit(&l->word, memory_order_relaxed) != 0u) return SYNCQ_EBUSY;
  return syncq_pr_tas(&l->word) ? SYNCQ_EBUSY : SYNCQ_OK;
}

int syncq_lock_tas_unlock(syncq_lock_tas *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  /* relaxed: only detects a misuse (unlock of a free lock); the holder's
   * own earlier acquire already ordered it. */
  if (atomic_load_explicit(&l->word, memory_order_relaxed) == 0u) return SYNCQ_EINVAL;
  if (syncq_wait_may_sleep(l->wait)) {
    atomic_store(&l->word, 0u); /* seq_cst: Dekker pair with the sleepers count */
    syncq_wait_wake(l->wait, &l->word, &l->sleepers, 1, l->process_shared);
  } else {
    syncq_pr_tas_clear(&l->word); /* release: pairs with the acquire exchange */
  }
  return SYNCQ_OK;
}
int syncq_lock_ttas_unlock(syncq_lock_tas *l) { return syncq_lock_tas_unlock(l); }

/* ---- ops tables ---- */
static int o_tas_init(void *l, const syncq_lock_config *c) { return syncq_lock_tas_init(l, c); }
static int o_ttas_init(void *l, const syncq_lock_config *c) { return syncq_lock_ttas_init(l, c); }
static int o_destroy(void *l) { return syncq_lock_tas_destroy(l); }
static int o_tas_lock(void *l, syncq_lock_node *n) {
  return n == NULL ? SYNCQ_EINVAL : syncq_lock_tas_lock(l);
}
static int o_ttas_lock(void *l, syncq_lock_node *n) {
  return n == NULL ? SYNCQ_EINVAL : syncq_lock_ttas_lock(l);
}
static int o_tas_try(void *l, syncq_lock_node *n) {
  return n == NULL ? SYNCQ_EINVAL : syncq_lock_tas_trylock(l);
}
static int o_ttas_try(void *l, syncq_lock_node *n) {
  return n == NULL ? SYNCQ_EINVAL : syncq_lock_ttas_trylock(l);
}
static int o_unlock(void *l, syncq_lock_node *n) {
  return n == NULL ? SYNCQ_EINVAL : syncq_lock_tas_unlock(l);
}

static const syncq_lock_ops tas_ops = {
  sizeof(syncq_lock_tas), _Alignof(syncq_lock_tas), o_tas_init, o_destroy, o_tas_lock, o_tas_try, o_unlock,
};
static const syncq_lock_ops ttas_ops = {
  sizeof(syncq_lock_tas), _Alignof(syncq_lock_tas), o_ttas_init, o_destroy, o_ttas_lock, o_ttas_try, o_unlock,
};

const syncq_algo syncq_lock_tas_algo = {
  SYNCQ_FAMILY_LOCK, "tas", "test-and-set lock, bounded exponential backoff",
  "003 §3.1; 000 §3.1", SYNCQ_PROGRESS_BLOCKING,
  SYNCQ_PROP_SIGNAL_SAFE | SYNCQ_PROP_PROCESS_SHARED, &tas_ops,
};
const syncq_algo syncq_lock_ttas_algo = {
  SYNCQ_FAMILY_LOCK, "ttas", "test-and-test-and-set lock, bounded exponential backoff (cap 30 us)",
  "001 §4; 003 §3.1; 000 §3.1", SYNCQ_PROGRESS_BLOCKING,
  SYNCQ_PROP_SIGNAL_SAFE | SYNCQ_PROP_PROCESS_SHARED, &ttas_ops,
};
