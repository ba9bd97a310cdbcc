/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mcs.c — GenMC driver for the MCS lock: the static inline bodies of
 * syncq/static/lock/mcs.h (the exported functions of src/lock/mcs.c are
 * built from them) with the SPIN discipline. A waiter stores its flag
 * only when it has a predecessor, before the release store that links
 * it: the predecessor, the flag's only other writer, reads that link
 * first.
 *
 * Threads: A locks, increments a plain counter and unlocks GENMC_ROUNDS
 * times (default 3); B tries once (trylock) and, refused, locks, then
 * increments and unlocks. GenMC's race detection on the plain counter
 * checks mutual exclusion and the hand-over's ordering; main checks the
 * count and that the lock is free.
 *
 * GENMC_SEED_BUG (the control): the swap of tail weakened to relaxed
 * (acq_rel in the body): an uncontended acquisition then does not
 * synchronise with the previous holder's CAS of tail to NULL (GenMC
 * reports the race on the counter).
 *
 * The wait helpers the bodies call out of line (src/wait/) are stand-ins
 * for SPIN: a step never sleeps, so each wait is the load loop in the
 * body (GenMC bounds it as a spin loop).
 */
#include "genmc_shim.h"

#include "syncq/wait.h"

int syncq_wait_check(int discipline) {
  return discipline >= SYNCQ_WAIT_DEFAULT && discipline < SYNCQ_WAIT_COUNT ? SYNCQ_OK : SYNCQ_EINVAL;
}
uint64_t syncq_wait_calibrate(void) { return 0; }
uint64_t syncq_wait_spin_limit_for(int discipline) {
  (void)discipline;
  return 0;
}
void syncq_wait_yield(void) {}
bool syncq_waiter_step(syncq_waiter *w) {
  (void)w;
  return false;
}
void syncq_waiter_sleep(syncq_waiter *w, _Atomic(uint32_t) *word, uint32_t marked) {
  (void)w;
  (void)word;
  (void)marked;
}
void syncq_wait_futex_wake(_Atomic(uint32_t) *word, int n, bool process_shared) {
  (void)word;
  (void)n;
  (void)process_shared;
}

#if defined(GENMC_SEED_BUG)
/* the swap (and the sleeping hand-over's exchange, unused with SPIN) */
#undef atomic_exchange_explicit
#define atomic_exchange_explicit(p, d, o) __c11_atomic_exchange((p), (d), __ATOMIC_RELAXED)
#endif

#ifndef GENMC_ROUNDS
#define GENMC_ROUNDS 3
#endif

#include "lock/mcs.c"

static syncq_lock_mcs lock;
static uint64_t counter; /* plain: guarded by the lock */

static void *a(void *arg) {
  (void)arg;
  syncq_lock_node n;
  for (int i = 0; i < GENMC_ROUNDS; i++) {
    assert(syncq_lock_mcs_lock(&lock, &n) == SYNCQ_OK);
    counter++;
    assert(syncq_lock_mcs_unlock(&lock, &n) == SYNCQ_OK);
  }
  return NULL;
}

static void *b(void *arg) {
  (void)arg;
  syncq_lock_node n;
  int r = syncq_lock_mcs_trylock(&lock, &n);
  if (r == SYNCQ_EBUSY) r = syncq_lock_mcs_lock(&lock, &n);
  assert(r == SYNCQ_OK);
  counter++;
  assert(syncq_lock_mcs_unlock(&lock, &n) == SYNCQ_OK);
  return NULL;
}

int main(void) {
  syncq_lock_config cfg = {0, SYNCQ_WAIT_SPIN, false};
  assert(syncq_lock_mcs_init(&lock, &cfg) == SYNCQ_OK);
  void *(*fn[])(void *) = {a, b};
  genmc_run(fn, 2);
  assert(counter == GENMC_ROUNDS + 1);
  assert(syncq_lock_mcs_destroy(&lock) == SYNCQ_OK);
  return 0;
}
