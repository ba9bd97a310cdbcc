/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * array.c — 003's array queue lock, CAS-based ("array-cas") and
 * fetch-and-add-based ("array-faa").
 *
 * Contract
 *   Source:      003 §3.1: the array implementation of the queue lock,
 *                needing only fetch-and-increment, "implemented both with
 *                LL-SC and fetchops": the place is taken by a CAS loop (the
 *                LL-SC form; x86 has no LL-SC) or by one fetch-and-add (the
 *                fetchop form, whose only at-memory variable is the slot
 *                index: the hybrid lock 003 finds best). Each slot holds
 *                the ticket allowed in next at that place (003 Figure 1
 *                uses queue ends as tickets the same way), so the releaser
 *                makes one store and nobody resets flags.
 *   Progress:    blocking; starvation-free (FIFO by ticket).
 *   Atomics:     uncontended lock: array-faa 1 fetch-and-add + 1 load;
 *                array-cas 1 load + 1 CAS + 1 load; unlock: 2 loads + 2
 *                stores (BLOCK/COMPETITIVE: the hand-over store is a
 *                release exchange, which reads the sleep mark).
 *   Memory:      caller's storage: 3 + 64 cache lines (4.2 KB); never
 *                allocates.
 *   Signal-safe: trylock and unlock yes; lock with SPIN or YIELD yes.
 *   Process-shared: yes (no pointers). Every operation reads the mask
 *                once and checks it (slots - 1 for a power of two within
 *                the array), else SYNCQ_EINVAL: another process writing
 *                the lock cannot make an index past the array.
 *   Waiting:     SPIN (default): pause on the own slot; YIELD, BLOCK,
 *                COMPETITIVE via syncq/wait.h. A slot holds its ticket
 *                << 1 and, in bit 0, the sleep mark: a waiter that will
 *                sleep sets it by CAS and sleeps on the slot; the
 *                hand-over exchanges the next ticket in and wakes only
 *                when it read the mark (all sleepers on the slot: it may
 *                be shared by tickets t and t + slots when there are more
 *                waiters than slots).
 *   Destroy:     the next holder may destroy and free the lock as soon as
 *                it holds it: after the hand-over an unlock touches
 *                nothing of the lock but a futex wake on the slot's address.
 *   Limits:      none on threads (max_threads sizes the array, <= 64);
 *                2^31 - 1 waiters at once (slots compare tickets modulo
 *                2^31).
 *   Stats:       cas_attempts, cas_failures (array-cas), yields, blocks.
 */
#include "syncq/lock/array.h"

#include "../stats_internal.h"
#include "lock_internal.h"
#include "../read_once_internal.h"

/* A slot holds the ticket allowed in at its place << 1, and in bit 0 the
 * sleep mark of syncq/wait.h (set by a waiter before it sleeps on it). */
#define MARK 1u
static inline uint32_t turn_of(uint32_t ticket) { return ticket << 1; }

static int init_common(syncq_lock_array *l, const syncq_lock_config *cfg) {
  if (l == NULL) return SYNCQ_EINVAL;
  int wait, ps;
  int r = lock_parse_config(cfg, SYNCQ_WAIT_SPIN, LOCK_WAIT_ALL, 1, &wait, &ps);
  if (r != SYNCQ_OK) return r;
  uint32_t max = (cfg == NULL || cfg->max_threads == 0) ? SYNCQ_LOCK_ARRAY_MAX_SLOTS : cfg->max_threads;
  if (max > SYNCQ_LOCK_ARRAY_MAX_SLOTS) return SYNCQ_ELIMIT;
  uint32_t slots = 1;
  while (slots < max) slots <<= 1;
  atomic_init(&l->next_ticket, 0u);
  atomic_init(&l->served, 0u);
  l->mask = slots - 1u;
  l->wait = wait;
  l->process_shared = ps != 0;
  /* slot i starts at i - slots: a ticket of the same place that never comes */
  for (uint32_t i = 0; i < SYNCQ_LOCK_ARRAY_MAX_SLOTS; i++)
    atomic_init(&l->slot[i].word, turn_of(i == 0 ? 0u : i - slots));
  if (wait == SYNCQ_WAIT_COMPETITIVE) (void)syncq_wait_calibrate();
  return SYNCQ_OK;
}

int syncq_lock_array_cas_init(syncq_lock_array *l, const syncq_lock_config *cfg) { return init_common(l, cfg); }
int syncq_lock_array_faa_init(syncq_lock_array *l, const syncq_lock_config *cfg) { return init_common(l, cfg); }

int syncq_lock_array_destroy(syncq_lock_array *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  return atomic_load(&l->next_ticket) != atomic_load(&l->served) ? SYNCQ_EBUSY : SYNCQ_OK;
}

/* The mask, read once from the lock and checked: slots - 1 for a power of
 * two no larger than the array, as init writes it. Another process may
 * write the shared lock and the mask indexes the array, so only this copy
 * is used. False when it is not. */
static inline bool checked_mask(const syncq_lock_array *l, uint32_t *mask) {
  *mask = SYNCQ_READ_ONCE(l->mask); /* one load: the copy checked is the copy used */
  return *mask < SYNCQ_LOCK_ARRAY_MAX_SLOTS && (*mask & (*mask + 1u)) == 0;
}

/* Wait for our turn at our place. */
static inline void await_turn(syncq_lock_array *l, uint32_t mask, uint32_t my) {
  _Atomic(uint32_t) *slot = &l->slot[my & mask].word;
  uint32_t turn = turn_of(my);
  /* acquire: pairs with the hand-over store or exchange in unlock */
  uint32_t seen = atomic_load_explicit(slot, memory_order_acquire);
  if ((seen & ~MARK) == turn) return;
  syncq_waiter w;
  syncq_waiter_init(&w, l->wait, l->process_shared, lock_spin_limit(l->wait));
  for (;;) {
    if (syncq_waiter_step(&w)) {
      /* mark the slot, then sleep on it. seq_cst CAS: a read-modify-write
       * of the slot, so either the hand-over exchange reads the mark or
       * the CAS fails on its new value */
      if ((seen & MARK) != 0u || atomic_compare_exchange_strong(slot, &seen, seen | MARK))
        syncq_waiter_sleep(&w, slot, seen | MARK);
    }
    seen = atomic_load_explicit(slot, memory_order_acquire); /* pairs with unlock */
    if ((seen & ~MARK) == turn) return;
  }
}

/* The bodies, one for the exported function and the ops table each (an
 * exported function is not inlined into the table's wrapper: the wrapper
 * would be one more jump per call). */
static inline int array_faa_lock(syncq_lock_array *l) {
  uint32_t mask;
  if (l == NULL || !checked_mask(l, &mask)) return SYNCQ_EINVAL;
  /* relaxed: the ticket orders nothing; await_turn's acquire does */
  await_turn(l, mask, atomic_fetch_add_explicit(&l->next_ticket, 1u, memory_order_relaxed));
  return SYNCQ_OK;
}

static inline int array_cas_lock(syncq_lock_array *l) {
  uint32_t mask;
  if (l == NULL || !checked_mask(l, &mask)) return SYNCQ_EINVAL;
  /* relaxed: a guess that the CAS validates; the CAS orders nothing
   * either (await_turn's acquire does) */
  uint32_t my = atomic_load_explicit(&l->next_ticket, memory_order_relaxed);
  SYNCQ_STAT_INC(cas_attempts);
  while (
    !atomic_compare_exchange_weak_explicit(&l->next_ticket, &my, my + 1u, memory_order_relaxed, memory_order_relaxed)) {
    SYNCQ_STAT_INC(cas_failures);
    SYNCQ_STAT_INC(cas_attempts);
  }
  await_turn(l, mask, my);
  return SYNCQ_OK;
}

static inline int array_trylock(syncq_lock_array *l) {
  uint32_t mask;
  if (l == NULL || !checked_mask(l, &mask)) return SYNCQ_EINVAL;
  /* relaxed: a guess that the CAS below validates */
  uint32_t t = atomic_load_explicit(&l->next_ticket, memory_order_relaxed);
  /* acquire: pairs with unlock's hand-over; slot == t means t-1 released */
  if ((atomic_load_explicit(&l->slot[t & mask].word, memory_order_acquire) & ~MARK) != turn_of(t)) return SYNCQ_EBUSY;
  SYNCQ_STAT_INC(cas_attempts);
  if (atomic_compare_exchange_strong(&l->next_ticket, &t, t + 1u)) return SYNCQ_OK;
  SYNCQ_STAT_INC(cas_failures);
  return SYNCQ_EBUSY;
}

static inline int array_unlock(syncq_lock_array *l) {
  uint32_t mask;
  if (l == NULL || !checked_mask(l, &mask)) return SYNCQ_EINVAL;
  /* relaxed: served is written only by holders, and the previous holder's
   * write reached us through the hand-over we acquired */
  uint32_t t = atomic_load_explicit(&l->served, memory_order_relaxed);
  if (atomic_load_explicit(&l->next_ticket, memory_order_relaxed) == t) return SYNCQ_EINVAL; /* not held */
  /* relaxed: published to the next holder by the hand-over store below */
  atomic_store_explicit(&l->served, t + 1u, memory_order_relaxed);
  _Atomic(uint32_t) *next = &l->slot[(t + 1u) & mask].word;
  /* From the hand-over on, the next holder may destroy and free the lock:
   * only locals are used after it. */
  if (syncq_wait_may_sleep(l->wait)) {
    bool pshared = l->process_shared;
    /* release: pairs with await_turn's acquire loads; a read-modify-write,
     * so it reads a waiter's mark */
    uint32_t old = atomic_exchange_explicit(next, turn_of(t + 1u), memory_order_release);
    SYNCQ_RACE_POINT("lock.handover");
    /* all: tickets t + 1 and t + 1 + slots may share the slot */
    if ((old & MARK) != 0u) syncq_wait_futex_wake(next, 0, pshared);
  } else {
    atomic_store_explicit(next, turn_of(t + 1u), memory_order_release); /* pairs with await_turn's acquire */
    SYNCQ_RACE_POINT("lock.handover");
  }
  return SYNCQ_OK;
}

int syncq_lock_array_faa_lock(syncq_lock_array *l) { return array_faa_lock(l); }
int syncq_lock_array_cas_lock(syncq_lock_array *l) { return array_cas_lock(l); }
int syncq_lock_array_trylock(syncq_lock_array *l) { return array_trylock(l); }
int syncq_lock_array_unlock(syncq_lock_array *l) { return array_unlock(l); }

/* The ops tables call the bodies, not the exported functions. */
SYNCQ_LOCK_REGISTER_NODELESS_FNS(array_cas, "array-cas", "array queue lock, place taken by a CAS loop (LL-SC form)",
                                 "003 §3.1", BLOCKING,
                                 SYNCQ_PROP_FIFO | SYNCQ_PROP_SIGNAL_SAFE | SYNCQ_PROP_PROCESS_SHARED, syncq_lock_array,
                                 syncq_lock_array_cas_init, syncq_lock_array_destroy, array_cas_lock, array_trylock,
                                 array_unlock);
SYNCQ_LOCK_REGISTER_NODELESS_FNS(array_faa, "array-faa",
                                 "array queue lock, place taken by fetch-and-add (fetchop form)", "003 §3.1", BLOCKING,
                                 SYNCQ_PROP_FIFO | SYNCQ_PROP_SIGNAL_SAFE | SYNCQ_PROP_PROCESS_SHARED, syncq_lock_array,
                                 syncq_lock_array_faa_init, syncq_lock_array_destroy, array_faa_lock, array_trylock,
                                 array_unlock);
