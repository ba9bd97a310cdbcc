/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/backoff.h — waiting a little before retrying a contended operation.
 *
 * Bounded exponential backoff (Anderson 1990; the locks and non-blocking
 * structures of 001 and 003 use it on every failed test-and-set or CAS):
 * the k-th consecutive wait lasts min(initial * 2^k, cap) nanoseconds.
 * 001 caps it at 30 us (SYNCQ_BACKOFF_EXP_CAP_NS).
 *
 * Proportional backoff (the ticket lock of 003 and Mellor-Crummey & Scott
 * 1991): wait unit * distance, where distance is how many holders are ahead
 * of us, capped.
 *
 * The waits are syncq_delay_ns() busy delays; each wait is counted in the
 * calling thread's statistics (syncq/stats.h: backoffs, backoff_ns).
 */
#ifndef SYNCQ_BACKOFF_H
#define SYNCQ_BACKOFF_H

#include "syncq/export.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* First wait of an exponential backoff, in ns. */
#define SYNCQ_BACKOFF_EXP_INITIAL_NS 100u
/* Cap of an exponential backoff: 30 us, as in 001 §4. */
#define SYNCQ_BACKOFF_EXP_CAP_NS 30000u
/* Proportional backoff: wait per holder ahead of us. */
#define SYNCQ_BACKOFF_PROP_UNIT_NS 100u
/* Proportional backoff: longest single wait. */
#define SYNCQ_BACKOFF_PROP_CAP_NS 30000u

typedef struct syncq_backoff_exp {
  uint32_t next_ns;    /* the wait the next call will make */
  uint32_t initial_ns; /* first wait, and the value reset() restores */
  uint32_t cap_ns;     /* no wait is longer than this */
} syncq_backoff_exp;

/* Initialise with the given bounds.
 * SYNCQ_EINVAL: b is NULL, initial_ns is 0, or initial_ns > cap_ns.
 * Thread safety: any thread on its own syncq_backoff_exp (a backoff is
 * per-thread state: never share one between threads without a lock); from a
 * signal handler too.
 * Progress: wait-free. */
SYNCQ_API int syncq_backoff_exp_init(syncq_backoff_exp *b, uint32_t initial_ns, uint32_t cap_ns);

/* Initialise with SYNCQ_BACKOFF_EXP_INITIAL_NS and SYNCQ_BACKOFF_EXP_CAP_NS
 * (for hot paths that have a valid b).
 * Thread safety: any thread on its own syncq_backoff_exp (per-thread state),
 * from a signal handler too (plain arithmetic, no delay).
 * Progress: wait-free. */
static inline void syncq_backoff_exp_init_default(syncq_backoff_exp *b) {
  b->next_ns = b->initial_ns = SYNCQ_BACKOFF_EXP_INITIAL_NS;
  b->cap_ns = SYNCQ_BACKOFF_EXP_CAP_NS;
}

/* The wait the next syncq_backoff_exp_wait() makes, then double it (capped).
 * Pure: no delay. Exposed so the bounds can be tested.
 * Thread safety: any thread on its own syncq_backoff_exp (per-thread state),
 * from a signal handler too (plain arithmetic, no delay).
 * Progress: wait-free. */
static inline uint32_t syncq_backoff_exp_step(syncq_backoff_exp *b) {
  uint32_t w = b->next_ns;
  b->next_ns = (w > b->cap_ns / 2u) ? b->cap_ns : w * 2u;
  return w;
}

/* Busy-wait for the next step; returns the ns waited (0 when b is NULL).
 * Thread safety: any thread on its own syncq_backoff_exp; from a signal
 * handler too (syncq_delay_ns, syncq/clock.h).
 * Progress: wait-free once calibrated: it spins for the step's time,
 * waiting for no other thread. */
SYNCQ_API uint32_t syncq_backoff_exp_wait(syncq_backoff_exp *b);

/* Start again from the initial wait (after a success).
 * Thread safety: any thread on its own syncq_backoff_exp (per-thread state),
 * from a signal handler too (plain arithmetic, no delay).
 * Progress: wait-free. */
static inline void syncq_backoff_exp_reset(syncq_backoff_exp *b) { b->next_ns = b->initial_ns; }

/* Proportional wait for `distance` holders ahead: min(unit*distance, cap).
 * Pure (no delay; saturates instead of overflowing).
 * Thread safety: any thread, from a signal handler too (a function of its
 * arguments).
 * Progress: wait-free. */
static inline uint64_t syncq_backoff_prop_ns(uint64_t unit_ns, uint64_t distance, uint64_t cap_ns) {
  if (distance != 0 && unit_ns > cap_ns / distance) return cap_ns;
  uint64_t w = unit_ns * distance;
  return w < cap_ns ? w : cap_ns;
}

/* Busy-wait syncq_backoff_prop_ns(unit_ns, distance, cap_ns); returns it.
 * Thread safety: any thread; from a signal handler too (as
 * syncq_backoff_exp_wait).
 * Progress: as syncq_backoff_exp_wait. */
SYNCQ_API uint64_t syncq_backoff_prop_wait(uint64_t unit_ns, uint64_t distance, uint64_t cap_ns);

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_BACKOFF_H */
