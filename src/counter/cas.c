/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cas.c — compare-and-swap loop counter, plain and with backoff.
 *
 * Contract
 *   Source:      003 §4.1 and Figure 3 (fetch-and-increment built from LL-SC;
 *                CAS is its x86 stand-in); 001 §5 (CAS counter; "same
 *                backoff on CAS failure" as its locks, cap 30 us).
 *   Progress:    lock-free (a CAS fails only because another succeeded).
 *   Atomics:     uncontended: 1 load + 1 CAS; each failure costs 1 more CAS.
 *   Memory:      caller's storage, one cache line; never allocates.
 *   Signal-safe: yes. Process-shared: yes (no pointers).
 *   Limits:      the value wraps modulo 2^64.
 *   Stats:       cas_attempts, cas_failures; backoffs for "cas-backoff".
 */
#include "syncq/counter/cas.h"

#include "../race_internal.h"
#include "../stats_internal.h"
#include "syncq/backoff.h"
#include "syncq/counter.h"

int syncq_counter_cas_init(syncq_counter_cas *c, int64_t initial) {
  if (c == NULL) return SYNCQ_EINVAL;
  atomic_init(&c->value, initial);
  return SYNCQ_OK;
}

int syncq_counter_cas_destroy(syncq_counter_cas *c) { return c == NULL ? SYNCQ_EINVAL : SYNCQ_OK; }

/* value + delta without signed-overflow UB: wrap as the FAA counter does. */
static inline int64_t wrap_add(int64_t v, int64_t d) { return (int64_t)((uint64_t)v + (uint64_t)d); }

int syncq_counter_cas_fetch_add(syncq_counter_cas *c, int64_t delta, int64_t *old) {
  if (c == NULL) return SYNCQ_EINVAL;
  /* relaxed: only a guess that the seq_cst CAS below validates. */
  int64_t seen = atomic_load_explicit(&c->value, memory_order_relaxed);
  SYNCQ_STAT_INC(cas_attempts);
  while (!atomic_compare_exchange_weak(&c->value, &seen, wrap_add(seen, delta))) {
    /* a failed CAS has reloaded `seen`; count it and try again */
    SYNCQ_STAT_INC(cas_failures);
    SYNCQ_STAT_INC(cas_attempts);
  }
  if (old != NULL) *old = seen;
  return SYNCQ_OK;
}

int syncq_counter_cas_backoff_fetch_add(syncq_counter_cas *c, int64_t delta, int64_t *old) {
  if (c == NULL) return SYNCQ_EINVAL;
  syncq_backoff_exp b;
  syncq_backoff_exp_init_default(&b);
  /* relaxed: only a guess that the seq_cst CAS below validates. */
  int64_t seen = atomic_load_explicit(&c->value, memory_order_relaxed);
  SYNCQ_RACE_POINT("counter.cas_backoff.loaded");
  SYNCQ_STAT_INC(cas_attempts);
  while (!atomic_compare_exchange_weak(&c->value, &seen, wrap_add(seen, delta))) {
    SYNCQ_STAT_INC(cas_failures);
    syncq_backoff_exp_wait(&b);
    seen = atomic_load_explicit(&c->value, memory_order_relaxed); /* fresh guess after the wait */
    SYNCQ_STAT_INC(cas_attempts);
  }
  if (old != NULL) *old = seen;
  return SYNCQ_OK;
}

int syncq_counter_cas_load(syncq_counter_cas *c, int64_t *value) {
  if (c == NULL || value == NULL) return SYNCQ_EINVAL;
  *value = atomic_load(&c->value);
  return SYNCQ_OK;
}

SYNCQ_COUNTER_REGISTER(cas, "cas", "compare-and-swap loop counter", "003 §4.1, Figure 3; 001 §5", LOCK_FREE,
                       SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_SIGNAL_SAFE | SYNCQ_PROP_PROCESS_SHARED);

SYNCQ_COUNTER_REGISTER_FNS(cas_backoff, "cas-backoff", "CAS loop counter with bounded exponential backoff",
                           "001 §5 (backoff cap 30 us)", LOCK_FREE,
                           SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_SIGNAL_SAFE | SYNCQ_PROP_PROCESS_SHARED,
                           syncq_counter_cas, syncq_counter_cas_init, syncq_counter_cas_destroy,
                           syncq_counter_cas_backoff_fetch_add, syncq_counter_cas_load);
