/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lock_spin_waits.h — the wait helpers the lock bodies call out of line
 * (src/wait/), as stand-ins for the SPIN discipline the lock drivers use:
 * a step never sleeps, so each wait is the load loop in the lock's own
 * body (GenMC bounds it as a spin loop). Included by a lock driver after
 * genmc_shim.h.
 */
#ifndef SYNCQ_MODELS_GENMC_LOCK_SPIN_WAITS_H
#define SYNCQ_MODELS_GENMC_LOCK_SPIN_WAITS_H

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

#endif
