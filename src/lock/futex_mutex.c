/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * futex_mutex.c — the three-state futex mutex.
 *
 * Contract
 *   Source:      Drepper, "Futexes Are Tricky" (2011), mutex 2 (states 0,
 *                1, 2; waiters set 2 by exchange and sleep; unlock wakes one
 *                only when the state was 2); competitive spinning per 003
 *                §3.4 (spin about one context switch, then block).
 *   Progress:    blocking (no FIFO).
 *   Atomics:     uncontended lock: 1 CAS; unlock: 1 fetch-and-sub.
 *   Memory:      caller's storage, one cache line; never allocates.
 *   Signal-safe: trylock and unlock yes; lock no (it may sleep).
 *   Process-shared: yes (shared futex).
 *   Waiting:     the algorithm is itself the blocking protocol, so it waits
 *                on its own word with syncq_futex_wait rather than through
 *                syncq_waiter (whose sleeper count the state 2 replaces);
 *                COMPETITIVE spins for syncq_wait_spin_limit_ns() first.
 *                SPIN and YIELD: SYNCQ_ENOTSUP (use "ttas" for those).
 *   Destroy:     the next holder may destroy and free the lock as soon as
 *                it holds it: after its release an unlock touches nothing
 *                of the lock but a futex wake on the word's address.
 *   Limits:      none.
 *   Stats:       cas_attempts, cas_failures, blocks.
 */
#include "syncq/lock/futex_mutex.h"

#include "../stats_internal.h"
#include "lock_internal.h"
#include "syncq/clock.h"
#include "syncq/platform.h"

int syncq_lock_futex_mutex_init(syncq_lock_futex_mutex *l, const syncq_lock_config *cfg) {
  if (l == NULL) return SYNCQ_EINVAL;
  int wait, ps;
  int r = lock_parse_config(cfg, SYNCQ_WAIT_BLOCK,
                            LOCK_WAIT_BIT(SYNCQ_WAIT_BLOCK) | LOCK_WAIT_BIT(SYNCQ_WAIT_COMPETITIVE), 1, &wait, &ps);
  if (r != SYNCQ_OK) return r;
  atomic_init(&l->word, 0u);
  l->wait = wait;
  l->process_shared = ps != 0;
  if (wait == SYNCQ_WAIT_COMPETITIVE) (void)syncq_wait_calibrate();
  return SYNCQ_OK;
}

int syncq_lock_futex_mutex_destroy(syncq_lock_futex_mutex *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  return atomic_load(&l->word) != 0u ? SYNCQ_EBUSY : SYNCQ_OK;
}

static inline bool try_0_to_1(syncq_lock_futex_mutex *l, uint32_t *seen) {
  *seen = 0u;
  SYNCQ_STAT_INC(cas_attempts);
  /* seq_cst: acquires the lock (pairs with unlock's fetch-and-sub/store) */
  if (atomic_compare_exchange_strong(&l->word, seen, 1u)) return true;
  SYNCQ_STAT_INC(cas_failures);
  return false;
}

/* The bodies, one for the exported function and the ops table each (an
 * exported function is not inlined into the table's wrapper: the wrapper
 * would be one more jump per call). */
static inline int futex_mutex_lock(syncq_lock_futex_mutex *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  uint32_t c;
  if (try_0_to_1(l, &c)) return SYNCQ_OK;
  if (l->wait == SYNCQ_WAIT_COMPETITIVE) {
    uint64_t limit = syncq_wait_spin_limit_ns(), t0 = syncq_now_ns();
    for (uint32_t k = 1;; k++) {
      /* relaxed: a hint; the CAS decides */
      if (atomic_load_explicit(&l->word, memory_order_relaxed) == 0u && try_0_to_1(l, &c)) return SYNCQ_OK;
      syncq_pr_relax();
      if ((k & 31u) == 0 && syncq_now_ns() - t0 >= limit) break;
    }
  }
  /* announce a sleeper: from now on the state is 2 while we wait */
  if (c != 2u) c = atomic_exchange(&l->word, 2u); /* seq_cst: acquires when it returns 0 */
  while (c != 0u) {
    SYNCQ_STAT_INC(blocks);
    (void)syncq_futex_wait(&l->word, 2u, -1, l->process_shared);
    c = atomic_exchange(&l->word, 2u);
  }
  return SYNCQ_OK;
}

static inline int futex_mutex_trylock(syncq_lock_futex_mutex *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  uint32_t c;
  return try_0_to_1(l, &c) ? SYNCQ_OK : SYNCQ_EBUSY;
}

static inline int futex_mutex_unlock(syncq_lock_futex_mutex *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  /* relaxed: a misuse check only */
  if (atomic_load_explicit(&l->word, memory_order_relaxed) == 0u) return SYNCQ_EINVAL;
  /* read before the release: from then on the next holder may destroy
   * and free the lock, and only locals are used */
  bool pshared = l->process_shared;
  _Atomic(uint32_t) *word = &l->word;
  /* seq_cst: releases the lock (pairs with the acquiring CAS/exchange) */
  if (atomic_fetch_sub(word, 1u) != 1u) {
    atomic_store(word, 0u); /* was 2: release and wake one sleeper */
    SYNCQ_RACE_POINT("lock.handover");
    (void)syncq_futex_wake(word, 1, pshared); /* the address only */
  } else {
    SYNCQ_RACE_POINT("lock.handover");
  }
  return SYNCQ_OK;
}

int syncq_lock_futex_mutex_lock(syncq_lock_futex_mutex *l) { return futex_mutex_lock(l); }
int syncq_lock_futex_mutex_trylock(syncq_lock_futex_mutex *l) { return futex_mutex_trylock(l); }
int syncq_lock_futex_mutex_unlock(syncq_lock_futex_mutex *l) { return futex_mutex_unlock(l); }

/* The ops table calls the bodies, not the exported functions. */
SYNCQ_LOCK_REGISTER_NODELESS_FNS(futex_mutex, "futex-mutex", "three-state futex mutex (blocking or competitive)",
                                 "Drepper 2011, mutex 2; 003 §3.4", BLOCKING,
                                 SYNCQ_PROP_PROCESS_SHARED | SYNCQ_PROP_SLEEPS_BY_DEFAULT, syncq_lock_futex_mutex,
                                 syncq_lock_futex_mutex_init, syncq_lock_futex_mutex_destroy, futex_mutex_lock,
                                 futex_mutex_trylock, futex_mutex_unlock);
