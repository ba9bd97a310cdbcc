/* SPDX-License-Identifier: BSD-2-Clause */
/* barrier_internal.h — what the barrier files share: config parsing. */
#ifndef SYNCQ_BARRIER_INTERNAL_H
#define SYNCQ_BARRIER_INTERNAL_H

#include "syncq/barrier.h"
#include "syncq/clock.h"
#include "syncq/wait.h"

#define BAR_WAIT_BIT(d) (1u << (unsigned)(d))
#define BAR_WAIT_ALL                                                                                 \
  (BAR_WAIT_BIT(SYNCQ_WAIT_SPIN) | BAR_WAIT_BIT(SYNCQ_WAIT_YIELD) | BAR_WAIT_BIT(SYNCQ_WAIT_BLOCK) | \
   BAR_WAIT_BIT(SYNCQ_WAIT_COMPETITIVE))

static inline int barrier_parse_config(const syncq_barrier_config *cfg, int dflt, unsigned allowed, int pshared_ok,
                                       int *wait, int *pshared) {
  if (cfg == NULL || cfg->threads == 0) return SYNCQ_EINVAL;
  if (syncq_wait_check(cfg->wait) != SYNCQ_OK) return SYNCQ_EINVAL;
  if (cfg->threads > SYNCQ_BARRIER_MAX_THREADS) return SYNCQ_ELIMIT;
  int w = cfg->wait == SYNCQ_WAIT_DEFAULT ? dflt : cfg->wait;
  if ((allowed & BAR_WAIT_BIT(w)) == 0) return SYNCQ_ENOTSUP;
  if (cfg->process_shared && !pshared_ok) return SYNCQ_ENOTSUP;
  *wait = w;
  *pshared = cfg->process_shared;
  if (w == SYNCQ_WAIT_COMPETITIVE) (void)syncq_wait_calibrate();
  return SYNCQ_OK;
}

/* Competitive spin time for `missing` threads not yet arrived. */
static inline uint64_t barrier_spin_limit(int wait, unsigned missing) {
  return syncq_wait_spin_limit_for(wait) * (missing == 0 ? 1u : missing);
}

/* Or'ed into every word a waiter may wait on when the barrier breaks: the
 * word then differs from every value a waiter waits to see change (the
 * algorithms' flags and senses are 0 or 1), so spinners stop and a
 * sleeper's futex re-check fails. */
#define BAR_BROKEN_BIT 0x80000000u

/* The deadline of a timed wait, read from the clock only when the call
 * first has to wait (a wait that finds its condition met, like the last
 * arrival's, never reads it): now + timeout_ns then, UINT64_MAX for none
 * (or when the sum would overflow). */
typedef struct bar_deadline {
  uint64_t timeout_ns; /* SYNCQ_BARRIER_NO_TIMEOUT: none */
  uint64_t at_ns;      /* 0: not read yet */
} bar_deadline;

static inline uint64_t barrier_deadline_ns(bar_deadline *d) {
  if (d->timeout_ns == SYNCQ_BARRIER_NO_TIMEOUT) return UINT64_MAX;
  if (d->at_ns == 0) {
    uint64_t now = syncq_now_ns();
    d->at_ns = d->timeout_ns >= UINT64_MAX - now ? UINT64_MAX : now + d->timeout_ns;
  }
  return d->at_ns;
}

/* Is the barrier broken? (at entry: a broken barrier is not joined) */
static inline bool barrier_is_broken(_Atomic(uint32_t) *broken) {
  /* acquire: pairs with barrier_break_begin's exchange; nothing is read
   * after it but the statuses, so this only needs to see the flag */
  return atomic_load_explicit(broken, memory_order_acquire) != 0u;
}

/* Wait while *word == seen (acquire loads, pairing with the releasing
 * store or read-modify-write that changes it), until the deadline.
 * SYNCQ_OK when the word changed by the protocol; SYNCQ_EBROKEN when the
 * barrier is broken (*broken set, or the word holds BAR_BROKEN_BIT);
 * SYNCQ_ETIMEDOUT when the deadline passed and the word still is `seen`:
 * the caller then breaks the barrier (its *_break function, built from
 * barrier_break_begin, barrier_break_word, barrier_break_must_wake). */
static inline int barrier_await_change(_Atomic(uint32_t) *word, uint32_t seen, int wait, bool pshared,
                                       uint64_t spin_limit_ns, _Atomic(uint32_t) *sleepers, _Atomic(uint32_t) *broken,
                                       bar_deadline *deadline) {
  /* acquire: pairs with the store that ends the wait (release or seq_cst) */
  uint32_t v = atomic_load_explicit(word, memory_order_acquire);
  if (v == seen) {
    uint64_t deadline_ns = barrier_deadline_ns(deadline);
    syncq_waiter w;
    syncq_waiter_init(&w, wait, pshared, spin_limit_ns);
    for (;;) {
      /* The word alone is not enough: the waiter's own reset of its flag
       * (mcs-tree) may overwrite BAR_BROKEN_BIT; spinners see the flag
       * here, sleepers in syncq_waiter_pause_until (cancel). */
      if (barrier_is_broken(broken)) return SYNCQ_EBROKEN;
      int r = syncq_waiter_pause_until(&w, word, seen, sleepers, deadline_ns, broken);
      v = atomic_load_explicit(word, memory_order_acquire); /* pairs as above */
      if (v != seen) break;
      if (r == SYNCQ_ETIMEDOUT) return SYNCQ_ETIMEDOUT; /* re-checked once after the deadline */
    }
  }
  return (v & BAR_BROKEN_BIT) != 0u ? SYNCQ_EBROKEN : SYNCQ_OK;
}

/* Break a barrier, part 1: set *broken. False when it already was (another
 * waiter breaks it: nothing more to do). */
static inline bool barrier_break_begin(_Atomic(uint32_t) *broken) {
  /* seq_cst: the Dekker pair with a sleeper's fence + load of *broken in
   * syncq_waiter_pause_until (cancel), and orders it before the or's */
  return atomic_exchange(broken, 1u) == 0u;
}

/* Part 2, for every word a waiter may wait on: make it differ from what
 * the waiter saw. */
static inline void barrier_break_word(_Atomic(uint32_t) *word) {
  /* seq_cst: after barrier_break_begin's exchange and before the load of
   * sleepers in barrier_break_must_wake (Dekker); its release half pairs with
   * the waiter's acquire load, which then returns SYNCQ_EBROKEN */
  atomic_fetch_or(word, BAR_BROKEN_BIT);
}

/* Part 3: is anybody asleep? Then wake every word (one load here, then
 * futex wakes on the rare breaking path only). */
static inline bool barrier_break_must_wake(int wait, _Atomic(uint32_t) *sleepers) {
  /* seq_cst: the Dekker pair with the sleepers' increment */
  return syncq_wait_may_sleep(wait) && atomic_load(sleepers) != 0u;
}

/* After a wait returned r: break the barrier on a timeout (break_fn), and
 * pass r on. */
#define BAR_FAIL(r, break_fn, b)             \
  do {                                       \
    if ((r) == SYNCQ_ETIMEDOUT) break_fn(b); \
    return (r);                              \
  } while (0)

/* Change *word to v and wake its sleepers (seq_cst store when the
 * discipline may sleep: the Dekker pair with the sleeper count). */
static inline void barrier_signal(_Atomic(uint32_t) *word, uint32_t v, int wait, bool pshared,
                                  _Atomic(uint32_t) *sleepers) {
  if (syncq_wait_may_sleep(wait)) {
    atomic_store(word, v);
    syncq_wait_wake(wait, word, sleepers, 0, pshared);
  } else {
    atomic_store_explicit(word, v, memory_order_release); /* pairs with barrier_await_change */
  }
}

#endif
