/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * anderson.c — Anderson's array-based queue lock.
 *
 * Contract
 *   Source:      003 §3.1 (array implementation of the queue lock: the
 *                waiter's place by fetch-and-increment, spinning on a local
 *                flag, the releaser resets its flag and sets the next);
 *                Anderson 1990 (flags HAS_LOCK / MUST_WAIT); 000 §3.1.
 *   Progress:    blocking; starvation-free (FIFO by place).
 *   Atomics:     uncontended lock: 2 fetch-and-add (admission count, place)
 *                + 1 load; unlock: 1 load + 1 fetch-and-add (admission) +
 *                2 stores (BLOCK/COMPETITIVE: the hand-over store is a
 *                release exchange, which reads the sleep mark).
 *   Memory:      caller's storage: 2 + SYNCQ_LOCK_ARRAY_MAX_SLOTS cache
 *                lines (4.2 KB); never allocates.
 *   Signal-safe: trylock and unlock yes; lock with SPIN or YIELD yes.
 *   Process-shared: yes (the array is inside the lock, no pointers).
 *                Lock, trylock and unlock read the mask and max_threads
 *                once and check them (mask = slots - 1 for a power of two
 *                within the array, max_threads <= slots), and unlock
 *                checks the holder's place is below slots: another
 *                process writing the lock gets SYNCQ_EINVAL, never an
 *                index past the array.
 *   Waiting:     SPIN (default): pause on the own slot (it is local: no
 *                backoff needed); YIELD/BLOCK/COMPETITIVE via syncq/wait.h.
 *                A waiter that will sleep marks its slot (MUST_WAIT ->
 *                MUST_WAIT_ASLEEP by CAS) and sleeps on it; the hand-over
 *                exchanges HAS_LOCK in and wakes only when it read the mark.
 *   Destroy:     the next holder may destroy and free the lock as soon as
 *                it holds it: after the hand-over an unlock touches nothing
 *                of the lock but a futex wake on the next slot's address.
 *   Limits:      max_threads (<= 64) holders + waiters at once; the next
 *                one gets SYNCQ_ELIMIT from lock()/trylock().
 *   Stats:       yields, blocks.
 */
#include "syncq/lock/anderson.h"

#include "../stats_internal.h"
#include "lock_internal.h"
#include "../read_once_internal.h"

#define HAS_LOCK 1u
#define MUST_WAIT 0u
#define MUST_WAIT_ASLEEP 2u /* the sleep mark of syncq/wait.h, set by the slot's waiter */

static uint32_t pow2_at_least(uint32_t n) {
  uint32_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

int syncq_lock_anderson_init(syncq_lock_anderson *l, const syncq_lock_config *cfg) {
  if (l == NULL) return SYNCQ_EINVAL;
  int wait, ps;
  int r = lock_parse_config(cfg, SYNCQ_WAIT_SPIN, LOCK_WAIT_ALL, 1, &wait, &ps);
  if (r != SYNCQ_OK) return r;
  uint32_t max = (cfg == NULL || cfg->max_threads == 0) ? SYNCQ_LOCK_ARRAY_MAX_SLOTS : cfg->max_threads;
  if (max > SYNCQ_LOCK_ARRAY_MAX_SLOTS) return SYNCQ_ELIMIT;
  uint32_t slots = pow2_at_least(max);
  atomic_init(&l->next_slot, 0u);
  atomic_init(&l->inside, 0u);
  l->holder_place = 0;
  l->max_threads = max;
  l->mask = slots - 1u;
  l->wait = wait;
  l->process_shared = ps != 0;
  for (uint32_t i = 0; i < SYNCQ_LOCK_ARRAY_MAX_SLOTS; i++)
    atomic_init(&l->slot[i].word, i == 0 ? HAS_LOCK : MUST_WAIT);
  if (wait == SYNCQ_WAIT_COMPETITIVE) (void)syncq_wait_calibrate();
  return SYNCQ_OK;
}

int syncq_lock_anderson_destroy(syncq_lock_anderson *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  return atomic_load(&l->inside) != 0u ? SYNCQ_EBUSY : SYNCQ_OK;
}

/* The mask, read once from the lock and checked: slots - 1 for a power of
 * two no larger than the array, and max_threads at most slots (more
 * threads than places would share a slot). Another process may write the
 * shared lock; the mask indexes the array and max_threads keeps the
 * places apart, so only these copies are used. SYNCQ_EINVAL when they are
 * not what init writes. */
static inline int checked_geometry(const syncq_lock_anderson *l, uint32_t *mask, uint32_t *max_threads) {
  *mask = SYNCQ_READ_ONCE(l->mask); /* one load each: the copies checked are the copies used */
  *max_threads = SYNCQ_READ_ONCE(l->max_threads);
  if (*mask >= SYNCQ_LOCK_ARRAY_MAX_SLOTS || (*mask & (*mask + 1u)) != 0 || *max_threads - 1u > *mask)
    return SYNCQ_EINVAL;
  return SYNCQ_OK;
}

/* Count ourselves in; SYNCQ_ELIMIT (and out again) past max_threads. */
static inline int admit(syncq_lock_anderson *l, uint32_t max_threads) {
  /* seq_cst: the count must never let max_threads + 1 threads in */
  if (atomic_fetch_add(&l->inside, 1u) >= max_threads) {
    atomic_fetch_sub(&l->inside, 1u);
    return SYNCQ_ELIMIT;
  }
  return SYNCQ_OK;
}

/* The bodies, one for the exported function and the ops table each (an
 * exported function is not inlined into the table's wrapper: the wrapper
 * would be one more jump per call). */
static inline int anderson_lock(syncq_lock_anderson *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  uint32_t mask, max_threads;
  int r = checked_geometry(l, &mask, &max_threads);
  if (r == SYNCQ_OK) r = admit(l, max_threads);
  if (r != SYNCQ_OK) return r;
  /* relaxed: the place orders nothing; the acquire load of our slot does */
  uint32_t place = atomic_fetch_add_explicit(&l->next_slot, 1u, memory_order_relaxed) & mask;
  _Atomic(uint32_t) *flag = &l->slot[place].word;
  /* acquire: pairs with the release store or exchange of HAS_LOCK in unlock */
  uint32_t v = atomic_load_explicit(flag, memory_order_acquire);
  if (v != HAS_LOCK) {
    syncq_waiter w;
    syncq_waiter_init(&w, l->wait, l->process_shared, lock_spin_limit(l->wait));
    do {
      if (syncq_waiter_step(&w)) {
        /* mark our slot (admission makes us its only waiter), then sleep
         * on it. seq_cst CAS: a read-modify-write of the slot, so either
         * the hand-over exchange reads the mark or the CAS fails on it */
        if (v == MUST_WAIT && !atomic_compare_exchange_strong(flag, &v, MUST_WAIT_ASLEEP)) continue;
        syncq_waiter_sleep(&w, flag, MUST_WAIT_ASLEEP);
      }
    } while ((v = atomic_load_explicit(flag, memory_order_acquire)) != HAS_LOCK); /* pairs with unlock */
  }
  l->holder_place = place; /* only the holder writes or reads it */
  return SYNCQ_OK;
}

static inline int anderson_trylock(syncq_lock_anderson *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  uint32_t mask, max_threads;
  int r = checked_geometry(l, &mask, &max_threads);
  if (r == SYNCQ_OK) r = admit(l, max_threads);
  if (r != SYNCQ_OK) return r;
  /* relaxed: a guess that the CAS below validates */
  uint32_t t = atomic_load_explicit(&l->next_slot, memory_order_relaxed);
  /* acquire: pairs with unlock's release store; HAS_LOCK at place t means
   * place t-1 was released (admission rules out a stale flag) */
  if (atomic_load_explicit(&l->slot[t & mask].word, memory_order_acquire) == HAS_LOCK) {
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(&l->next_slot, &t, t + 1u)) {
      l->holder_place = t & mask;
      return SYNCQ_OK;
    }
    SYNCQ_STAT_INC(cas_failures);
  }
  atomic_fetch_sub(&l->inside, 1u);
  return SYNCQ_EBUSY;
}

static inline int anderson_unlock(syncq_lock_anderson *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  uint32_t mask, max_threads;
  if (checked_geometry(l, &mask, &max_threads) != SYNCQ_OK) return SYNCQ_EINVAL;
  if (atomic_load(&l->inside) == 0u) return SYNCQ_EINVAL; /* nobody holds it */
  uint32_t place = SYNCQ_READ_ONCE(l->holder_place);      /* one load: checked, then an index */
  if (place > mask) return SYNCQ_EINVAL;                  /* a place no holder took: written by someone else */
  /* relaxed: our own flag; its next reader (the holder of place + slots)
   * can get there only through later release stores of the chain */
  atomic_store_explicit(&l->slot[place].word, MUST_WAIT, memory_order_relaxed);
  atomic_fetch_sub(&l->inside, 1u); /* seq_cst: admission count */
  _Atomic(uint32_t) *next = &l->slot[(place + 1u) & mask].word;
  /* From the hand-over on, the next holder may destroy and free the lock:
   * only locals are used after it. */
  if (syncq_wait_may_sleep(l->wait)) {
    bool pshared = l->process_shared;
    /* release: pairs with lock()'s acquire loads of the slot; a
     * read-modify-write, so it reads the waiter's mark */
    uint32_t old = atomic_exchange_explicit(next, HAS_LOCK, memory_order_release);
    SYNCQ_RACE_POINT("lock.handover");
    if (old == MUST_WAIT_ASLEEP) syncq_wait_futex_wake(next, 0, pshared);
  } else {
    atomic_store_explicit(next, HAS_LOCK, memory_order_release); /* pairs with lock()'s acquire */
    SYNCQ_RACE_POINT("lock.handover");
  }
  return SYNCQ_OK;
}

int syncq_lock_anderson_lock(syncq_lock_anderson *l) { return anderson_lock(l); }
int syncq_lock_anderson_trylock(syncq_lock_anderson *l) { return anderson_trylock(l); }
int syncq_lock_anderson_unlock(syncq_lock_anderson *l) { return anderson_unlock(l); }

/* The ops table calls the bodies, not the exported functions. */
SYNCQ_LOCK_REGISTER_NODELESS_FNS(anderson, "anderson", "Anderson's array-based queue lock (max threads fixed at init)",
                                 "003 §3.1; Anderson 1990; 000 §3.1", BLOCKING,
                                 SYNCQ_PROP_FIFO | SYNCQ_PROP_SIGNAL_SAFE | SYNCQ_PROP_PROCESS_SHARED,
                                 syncq_lock_anderson, syncq_lock_anderson_init, syncq_lock_anderson_destroy,
                                 anderson_lock, anderson_trylock, anderson_unlock);
