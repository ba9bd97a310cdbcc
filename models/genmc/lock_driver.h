/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lock_driver.h — the two threads and main of a lock's GenMC driver,
 * included after the lock's source. A takes and releases the lock
 * GENMC_ROUNDS times; B tries once (trylock) and, refused, locks, then
 * increments and unlocks. GenMC's race detection on the plain counter
 * checks mutual exclusion and the hand-over's ordering (two increments
 * not ordered by the lock's release/acquire pairs are a data race); main
 * checks the count, destroys the lock, then runs LOCK_DRIVER_AFTER(&lock)
 * (the driver's own checks of what is left).
 *
 * The including driver defines LOCK_DRIVER_T (the lock's type),
 * LOCK_DRIVER_FN(verb) (its function for init, destroy, lock, trylock,
 * unlock), GENMC_ROUNDS, and LOCK_DRIVER_AFTER(l).
 */
#ifndef SYNCQ_MODELS_GENMC_LOCK_DRIVER_H
#define SYNCQ_MODELS_GENMC_LOCK_DRIVER_H

static LOCK_DRIVER_T lock;
static uint64_t counter; /* plain: guarded by the lock */

static void *a(void *arg) {
  (void)arg;
  syncq_lock_node n;
  for (int i = 0; i < GENMC_ROUNDS; i++) {
    assert(LOCK_DRIVER_FN(lock)(&lock, &n) == SYNCQ_OK);
    counter++;
    assert(LOCK_DRIVER_FN(unlock)(&lock, &n) == SYNCQ_OK);
  }
  return NULL;
}

static void *b(void *arg) {
  (void)arg;
  syncq_lock_node n;
  int r = LOCK_DRIVER_FN(trylock)(&lock, &n);
  if (r == SYNCQ_EBUSY) r = LOCK_DRIVER_FN(lock)(&lock, &n);
  assert(r == SYNCQ_OK);
  counter++;
  assert(LOCK_DRIVER_FN(unlock)(&lock, &n) == SYNCQ_OK);
  return NULL;
}

int main(void) {
  syncq_lock_config cfg = {0, SYNCQ_WAIT_SPIN, false};
  assert(LOCK_DRIVER_FN(init)(&lock, &cfg) == SYNCQ_OK);
  void *(*fn[])(void *) = {a, b};
  genmc_run(fn, 2);
  assert(counter == GENMC_ROUNDS + 1);
  assert(LOCK_DRIVER_FN(destroy)(&lock) == SYNCQ_OK);
  LOCK_DRIVER_AFTER(&lock);
  return 0;
}

#endif
