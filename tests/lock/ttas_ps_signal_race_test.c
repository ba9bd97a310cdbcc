/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ttas_ps_signal_race_test.c — the preemption-safe TTAS lock ("ttas-ps", its
 * registry entry has SYNCQ_PROP_SIGNAL_SAFE: lock with SPIN) taken in a
 * signal handler that backs off while the handler interrupts the process's
 * first calibration of the delay loop.
 *
 * A lock whose test-and-set fails backs off (syncq_backoff_exp_wait), and
 * the delay's first use in the process calibrates the loop: a handler that
 * interrupted that calibration in its own thread must not wait for it.
 * Here a holder thread takes the lock; the main thread runs the process's
 * first calibration (syncq_delay_calibrate) and at the race point
 * "delay.calibrating" (tests/support/syncq_race.h: measured, not yet
 * published) raises SIGALRM on itself; the handler says it is there and
 * locks, and waits while the holder holds on; the holder releases the
 * lock once the handler is in.
 * The handler's test then finds the lock free, and the race point
 * "lock.ttas_ps.tested" (tests/support/syncq_race.h) takes it there for
 * the holder, so the handler's test-and-set fails and it backs off; the
 * holder releases that hold HOLD_MS later. The handler's lock must return
 * (a watchdog thread ends the process if the main thread has not gone on
 * within SIGNAL_RACE_WATCHDOG_S: a deadlock, not a speed check) and come after both
 * holds. The interleaving is fixed by the points and the holder's
 * hand-shakes; HOLD_MS only lengthens the backoff.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "syncq_race.h" /* first: its SYNCQ_RACE_POINT, before any static body */
#include "signal_race.h"

#include "syncq/clock.h"
#include "syncq/lock/ttas_ps.h"
#include "syncq/wait.h"

SYNCQ_RACE_HOOK_DEFINE;

#define HOLD_MS 20 /* the hold taken at the point lasts this long */

static syncq_lock_tas lock;
static volatile sig_atomic_t handler_done, handler_result = -1, handler_unlock = -1, holder_gone_in_handler = -1;
static volatile sig_atomic_t hook_ran, done_in_calibration;
static _Atomic(int) held, handler_in, holder_gone, second_hold, armed, raise_armed = 1;

/* In the calibration: the signal, once. At the point inside the handler's
 * lock, the lock just seen free: take it (for the holder, who releases
 * it), so the test-and-set fails; once, and only once the handler armed
 * it (the hook is set before any thread starts; the holder's unlock
 * passes other points). */
static void hook(const char *name) {
  if (strcmp(name, "delay.calibrating") == 0 && atomic_exchange(&raise_armed, 0)) {
    (void)raise(SIGALRM); /* the handler runs before raise returns */
    done_in_calibration = handler_done;
    return;
  }
  if (strcmp(name, "lock.ttas_ps.tested") != 0 || !atomic_exchange(&armed, 0)) return;
  if (syncq_lock_ttas_ps_trylock(&lock) == SYNCQ_OK) {
    hook_ran = 1;
    atomic_store(&second_hold, 1);
  }
}

static void on_alarm(int sig) {
  (void)sig;
  int saved = errno;
  atomic_store(&armed, 1);
  atomic_store(&handler_in, 1);
  handler_result = syncq_lock_ttas_ps_lock(&lock);
  holder_gone_in_handler = atomic_load(&holder_gone); /* the lock came only after the holder's release */
  handler_unlock = syncq_lock_ttas_ps_unlock(&lock);
  handler_done = 1;
  errno = saved;
}

static void *holder(void *p) {
  (void)p;
  if (syncq_lock_ttas_ps_lock(&lock) != SYNCQ_OK) return NULL;
  atomic_store(&held, 1);
  struct timespec tick = {0, 100 * 1000};
  while (!atomic_load(&handler_in)) nanosleep(&tick, NULL);
  (void)syncq_lock_ttas_ps_unlock(&lock);
  while (!atomic_load(&second_hold)) nanosleep(&tick, NULL);
  struct timespec hold = {0, HOLD_MS * 1000 * 1000};
  nanosleep(&hold, NULL); /* the handler meanwhile fails its test-and-set and backs off */
  atomic_store(&holder_gone, 1);
  (void)syncq_lock_ttas_ps_unlock(&lock); /* the hold taken at the point */
  return NULL;
}

static void test_lock_in_handler_during_first_calibration(void **state) {
  (void)state;
  syncq_lock_config cfg = {0, SYNCQ_WAIT_SPIN, false};
  assert_int_equal(syncq_lock_ttas_ps_init(&lock, &cfg), SYNCQ_OK);
  syncq_race_hook = hook;

  assert_int_equal(signal_race_install(on_alarm), 0);
  pthread_t w, h;
  assert_int_equal(signal_race_watch("ttas_ps_signal_race_test: the handler's lock", &w), 0);
  assert_int_equal(signal_race_spawn(&h, holder, NULL), 0);
  struct timespec nap = {0, 100 * 1000};
  while (!atomic_load(&held)) nanosleep(&nap, NULL);

  assert_true(syncq_delay_calibrate() > 0); /* the process's first: the signal comes inside */
  assert_int_equal(signal_race_went_on(w), 0);
  assert_int_equal(pthread_join(h, NULL), 0);

  assert_int_equal(done_in_calibration, 1);
  assert_int_equal(hook_ran, 1);
  assert_int_equal(handler_result, SYNCQ_OK);
  assert_int_equal(holder_gone_in_handler, 1); /* mutual exclusion */
  assert_int_equal(handler_unlock, SYNCQ_OK);
  assert_int_equal(syncq_lock_ttas_ps_trylock(&lock), SYNCQ_OK); /* released */
  assert_int_equal(syncq_lock_ttas_ps_unlock(&lock), SYNCQ_OK);
  assert_int_equal(syncq_lock_ttas_ps_destroy(&lock), SYNCQ_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_lock_in_handler_during_first_calibration),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
