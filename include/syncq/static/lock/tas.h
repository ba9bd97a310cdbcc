/*
 * syncq/static/lock/tas.h — the TAS and TTAS locks as static inline
 * bodies (liburcu's model: include this header to have lock, trylock and
 * unlock compiled into the caller, with no call, no indirect call and no
 * statistics unless SYNCQ_WITH_STATS is defined; syncq/lock/tas.h's
 * exported functions and the registry's ops tables are built from these
 * same bodies in src/lock/tas.c, whose contract block applies).
 *
 * Storage is syncq_lock_tas, initialised with syncq_lock_tas_init or
 * syncq_lock_ttas_init (out of line: not on the hot path).
 */
#ifndef SYNCQ_STATIC_LOCK_TAS_H
#define SYNCQ_STATIC_LOCK_TAS_H

#include "syncq/backoff.h"
#include "syncq/lock/tas.h"
#include "syncq/static/stats.h"
#include "syncq/wait.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Wait once after a failed test-and-set: backoff when spinning, the wait
 * discipline otherwise. */
static inline void syncq_lock_tas_wait_once_inline(syncq_lock_tas *l, syncq_backoff_exp *b, syncq_waiter *w) {
  if (l->wait == SYNCQ_WAIT_SPIN)
    (void)syncq_backoff_exp_wait(b);
  else
    syncq_waiter_pause(w, &l->word, 1u, &l->sleepers);
}

static inline int syncq_lock_tas_lock_inline(syncq_lock_tas *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  if (!syncq_pr_tas(&l->word)) return SYNCQ_OK; /* acquire (in syncq_pr_tas) */
  syncq_backoff_exp b;
  (void)syncq_backoff_exp_init(&b, SYNCQ_LOCK_TAS_BACKOFF_INITIAL_NS, SYNCQ_LOCK_TAS_BACKOFF_CAP_NS);
  syncq_waiter w;
  syncq_waiter_init(&w, l->wait, l->process_shared, SYNCQ_STATIC_SPIN_LIMIT(l->wait));
  do {
    SYNCQ_STAT_INC(retries);
    syncq_lock_tas_wait_once_inline(l, &b, &w);
  } while (syncq_pr_tas(&l->word));
  return SYNCQ_OK;
}

static inline int syncq_lock_ttas_lock_inline(syncq_lock_tas *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  /* uncontended fast path: test, then test-and-set (relaxed test: a hint,
   * the acquire exchange decides) */
  if (atomic_load_explicit(&l->word, memory_order_relaxed) == 0u && !syncq_pr_tas(&l->word)) return SYNCQ_OK;
  syncq_backoff_exp b;
  (void)syncq_backoff_exp_init(&b, SYNCQ_LOCK_TAS_BACKOFF_INITIAL_NS, SYNCQ_LOCK_TAS_BACKOFF_CAP_NS);
  syncq_waiter w;
  syncq_waiter_init(&w, l->wait, l->process_shared, SYNCQ_STATIC_SPIN_LIMIT(l->wait));
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

static inline int syncq_lock_tas_trylock_inline(syncq_lock_tas *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  return syncq_pr_tas(&l->word) ? SYNCQ_EBUSY : SYNCQ_OK;
}

static inline int syncq_lock_ttas_trylock_inline(syncq_lock_tas *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  /* relaxed: a hint; the acquire exchange decides */
  if (atomic_load_explicit(&l->word, memory_order_relaxed) != 0u) return SYNCQ_EBUSY;
  return syncq_pr_tas(&l->word) ? SYNCQ_EBUSY : SYNCQ_OK;
}

/* Both locks release the same way. */
static inline int syncq_lock_tas_unlock_inline(syncq_lock_tas *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  /* relaxed: only detects a misuse (unlock of a free lock); the holder's
   * own earlier acquire already ordered it. */
  if (atomic_load_explicit(&l->word, memory_order_relaxed) == 0u) return SYNCQ_EINVAL;
  if (syncq_wait_may_sleep(l->wait)) {
    atomic_store(&l->word, 0u); /* seq_cst: Dekker pair with the sleepers count */
    SYNCQ_RACE_POINT("lock.handover");
    syncq_wait_wake(l->wait, &l->word, &l->sleepers, 1, l->process_shared);
  } else {
    syncq_pr_tas_clear(&l->word); /* release: pairs with the acquire exchange */
    SYNCQ_RACE_POINT("lock.handover");
  }
  return SYNCQ_OK;
}
#define syncq_lock_ttas_unlock_inline syncq_lock_tas_unlock_inline

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_STATIC_LOCK_TAS_H */
