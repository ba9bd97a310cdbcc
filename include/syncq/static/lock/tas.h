/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/static/lock/tas.h — the TAS and TTAS locks as static inline
 * bodies (liburcu's model: include this header to have lock, trylock and
 * unlock compiled into the caller, with no call, no indirect call and no
 * statistics unless SYNCQ_STATS is 1, syncq/static/stats.h; syncq/lock/tas.h's
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

/* The word: 0 free, 1 held, SYNCQ_LOCK_TAS_MARKED held and a waiter may
 * sleep on it (BLOCK and COMPETITIVE only: Drepper's mutex 2, syncq/wait.h).
 * The release exchange reads the mark, so the releaser touches nothing of
 * the lock after its hand-over but a futex wake on the word's address. */
#define SYNCQ_LOCK_TAS_MARKED 2u

/* One test-and-set; 0 when it took the lock. An exchange that wrote 1
 * over a sleeper's mark puts the mark back at once (taking the lock, still
 * marked, if it was released meanwhile): the next release must see it.
 * Without sleeping disciplines the word is never 2 and this is one
 * exchange. */
static inline uint32_t syncq_lock_tas_exchange_inline(syncq_lock_tas *l) {
  /* acquire: pairs with the releasing store or exchange in unlock */
  uint32_t c = atomic_exchange_explicit(&l->word, 1u, memory_order_acquire);
  if (c == SYNCQ_LOCK_TAS_MARKED) c = atomic_exchange(&l->word, SYNCQ_LOCK_TAS_MARKED); /* seq_cst: acquires on 0 */
  return c;
}

/* Take the lock if it is free, leaving any mark alone (a spinning waiter
 * of a sleeping discipline: Drepper's mutex 3 fast path). */
static inline bool syncq_lock_tas_take_free_inline(syncq_lock_tas *l) {
  uint32_t z = 0u;
  /* relaxed: a hint; the CAS decides. The CAS is seq_cst: it acquires
   * (pairs with unlock's releasing exchange) */
  return atomic_load_explicit(&l->word, memory_order_relaxed) == 0u && atomic_compare_exchange_strong(&l->word, &z, 1u);
}

/* The wait of the sleeping disciplines (BLOCK, COMPETITIVE), for both
 * locks: spin (COMPETITIVE) taking a free lock by CAS, then mark the word
 * by exchange (which takes the lock when it returns 0, marked: a waiter
 * that has slept cannot tell whether others still sleep) and sleep. */
static inline void syncq_lock_tas_wait_sleeping_inline(syncq_lock_tas *l) {
  syncq_waiter w;
  syncq_waiter_init(&w, l->wait, l->process_shared, SYNCQ_STATIC_SPIN_LIMIT(l->wait));
  for (;;) {
    SYNCQ_STAT_INC(retries);
    if (!syncq_waiter_step(&w)) {
      if (syncq_lock_tas_take_free_inline(l)) return;
      continue;
    }
    /* seq_cst: acquires when it returns 0 (pairs with unlock's exchange) */
    if (atomic_exchange(&l->word, SYNCQ_LOCK_TAS_MARKED) == 0u) return;
    syncq_waiter_sleep(&w, &l->word, SYNCQ_LOCK_TAS_MARKED);
  }
}

/* The waiting of both locks after a failed first attempt: SPIN backs off
 * (TAS: exponential backoff between test-and-sets; TTAS: reads until the
 * word is free, then a test-and-set, backing off after a failed one),
 * YIELD yields while the word is held, BLOCK and COMPETITIVE sleep
 * (syncq_lock_tas_wait_sleeping_inline). Out of line (SYNCQ_LOCK_SLOW_PATH_):
 * the uncontended path that calls it keeps no frame. */
SYNCQ_LOCK_SLOW_PATH_ int syncq_lock_tas_wait_inline_(syncq_lock_tas *l, bool test_first) {
  if (syncq_wait_may_sleep(l->wait)) { /* its spinning phase tests before its CAS */
    syncq_lock_tas_wait_sleeping_inline(l);
    return SYNCQ_OK;
  }
  syncq_backoff_exp b;
  (void)syncq_backoff_exp_init(&b, SYNCQ_LOCK_TAS_BACKOFF_INITIAL_NS, SYNCQ_LOCK_TAS_BACKOFF_CAP_NS);
  syncq_waiter w;
  syncq_waiter_init(&w, l->wait, l->process_shared, 0);
  if (!test_first) {
    do {
      SYNCQ_STAT_INC(retries);
      if (l->wait == SYNCQ_WAIT_SPIN) (void)syncq_backoff_exp_wait(&b);
      else (void)syncq_waiter_step(&w); /* YIELD: yields */
    } while (syncq_lock_tas_exchange_inline(l) != 0u);
    return SYNCQ_OK;
  }
  for (;;) {
    /* relaxed: the test before the test-and-set is only a hint; the
     * acquire exchange orders the critical section. */
    while (atomic_load_explicit(&l->word, memory_order_relaxed) != 0u) {
      if (l->wait == SYNCQ_WAIT_SPIN) syncq_pr_relax();
      else (void)syncq_waiter_step(&w); /* YIELD: yields */
    }
    if (syncq_lock_tas_exchange_inline(l) == 0u) return SYNCQ_OK;
    SYNCQ_STAT_INC(retries);
    if (l->wait == SYNCQ_WAIT_SPIN) (void)syncq_backoff_exp_wait(&b);
  }
}

static inline int syncq_lock_tas_lock_inline(syncq_lock_tas *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  if (syncq_lock_tas_exchange_inline(l) == 0u) return SYNCQ_OK;
  return syncq_lock_tas_wait_inline_(l, false);
}

static inline int syncq_lock_ttas_lock_inline(syncq_lock_tas *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  /* uncontended fast path: test, then test-and-set (relaxed test: a hint,
   * the acquire exchange decides) */
  if (atomic_load_explicit(&l->word, memory_order_relaxed) == 0u && syncq_lock_tas_exchange_inline(l) == 0u)
    return SYNCQ_OK;
  return syncq_lock_tas_wait_inline_(l, true);
}

static inline int syncq_lock_tas_trylock_inline(syncq_lock_tas *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  return syncq_lock_tas_exchange_inline(l) != 0u ? SYNCQ_EBUSY : SYNCQ_OK;
}

static inline int syncq_lock_ttas_trylock_inline(syncq_lock_tas *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  /* relaxed: a hint; the acquire exchange decides */
  if (atomic_load_explicit(&l->word, memory_order_relaxed) != 0u) return SYNCQ_EBUSY;
  return syncq_lock_tas_exchange_inline(l) != 0u ? SYNCQ_EBUSY : SYNCQ_OK;
}

/* Both locks release the same way. After the releasing store or exchange
 * the lock may already be destroyed and freed by its next holder: only
 * locals are used from there on. */
static inline int syncq_lock_tas_unlock_inline(syncq_lock_tas *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  /* relaxed: only detects a misuse (unlock of a free lock); the holder's
   * own earlier acquire already ordered it. */
  if (atomic_load_explicit(&l->word, memory_order_relaxed) == 0u) return SYNCQ_EINVAL;
  if (syncq_wait_may_sleep(l->wait)) {
    bool pshared = l->process_shared;
    _Atomic(uint32_t) *word = &l->word;
    /* release: pairs with the acquiring exchange or CAS of the next
     * holder; a read-modify-write, so it reads any mark set before it */
    uint32_t c = atomic_exchange_explicit(word, 0u, memory_order_release);
#ifdef SYNCQ_RACE_POINT
    SYNCQ_RACE_POINT("lock.handover");
#endif
    if (c == SYNCQ_LOCK_TAS_MARKED) syncq_wait_futex_wake(word, 1, pshared);
  } else {
    syncq_pr_tas_clear(&l->word); /* release: pairs with the acquire exchange */
#ifdef SYNCQ_RACE_POINT
    SYNCQ_RACE_POINT("lock.handover");
#endif
  }
  return SYNCQ_OK;
}
#define syncq_lock_ttas_unlock_inline syncq_lock_tas_unlock_inline

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_STATIC_LOCK_TAS_H */
