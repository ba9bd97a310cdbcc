/* barrier_internal.h — what the barrier files share: config parsing. */
#ifndef SYNCQ_BARRIER_INTERNAL_H
#define SYNCQ_BARRIER_INTERNAL_H

#include "syncq/barrier.h"
#include "syncq/wait.h"

#define BAR_WAIT_BIT(d) (1u << (unsigned)(d))
#define BAR_WAIT_ALL                                                                       \
  (BAR_WAIT_BIT(SYNCQ_WAIT_SPIN) | BAR_WAIT_BIT(SYNCQ_WAIT_YIELD) |                       \
   BAR_WAIT_BIT(SYNCQ_WAIT_BLOCK) | BAR_WAIT_BIT(SYNCQ_WAIT_COMPETITIVE))

static inline int barrier_parse_config(const syncq_barrier_config *cfg, int dflt, unsigned allowed,
                                       int pshared_ok, int *wait, int *pshared) {
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
  if (wait != SYNCQ_WAIT_COMPETITIVE) return 0;
  return syncq_wait_spin_limit_ns() * (missing == 0 ? 1u : missing);
}

/* Wait while *word == seen (acquire loads, pairing with the releasing
 * store or read-modify-write that changes it). */
static inline void barrier_await_change(_Atomic(uint32_t) *word, uint32_t seen, int wait, bool pshared,
                                        uint64_t spin_limit_ns, _Atomic(uint32_t) *sleepers) {
  /* acquire: pairs with the store that ends the wait (release or seq_cst) */
  if (atomic_load_explicit(word, memory_order_acquire) != seen) return;
  syncq_waiter w;
  syncq_waiter_init(&w, wait, pshared, spin_limit_ns);
  do {
    syncq_waiter_pause(&w, word, seen, sleepers);
  } while (atomic_load_explicit(word, memory_order_acquire) == seen); /* pairs as above */
}

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
