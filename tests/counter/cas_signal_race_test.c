/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cas_signal_race_test.c — the "cas-backoff" counter's fetch-and-add from a
 * signal handler (its registry entry has SYNCQ_PROP_SIGNAL_SAFE) that backs
 * off while the handler interrupts the process's first calibration of the
 * delay loop.
 *
 * A fetch-and-add whose CAS fails backs off (syncq_backoff_exp_wait), and
 * the delay's first use in the process calibrates the loop: a handler that
 * interrupted that calibration in its own thread must not wait for it.
 * Here the main thread runs the process's first calibration
 * (syncq_delay_calibrate), and at the race point "delay.calibrating"
 * (tests/support/syncq_race.h: measured, not yet published) raises
 * SIGALRM on itself; the handler adds 1, and the race point
 * "counter.cas_backoff.loaded" adds 10 there, so the handler's CAS fails
 * and it backs off while its own thread's calibration is under way. The
 * handler's add must complete (a watchdog thread ends the process if the
 * main thread has not gone on within SIGNAL_RACE_WATCHDOG_S: a deadlock, not a speed
 * check) and see the hook's add before its own. One thread and its own
 * handler; the interleaving is fixed by the points, nothing is timed.
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
#include "syncq/counter/cas.h"

SYNCQ_RACE_HOOK_DEFINE;

static syncq_counter_cas counter;
static volatile sig_atomic_t handler_done, handler_result = -1, hook_ran, done_in_calibration;
static volatile int64_t handler_old = -1;
static _Atomic(int) raise_armed = 1, add_armed;

/* In the calibration: the signal, once. Inside the handler's add: another
 * add moves the value, so the handler's CAS fails and it backs off. */
static void hook(const char *name) {
  if (strcmp(name, "delay.calibrating") == 0 && atomic_exchange(&raise_armed, 0)) {
    (void)raise(SIGALRM); /* the handler runs before raise returns */
    done_in_calibration = handler_done;
  } else if (strcmp(name, "counter.cas_backoff.loaded") == 0 && atomic_exchange(&add_armed, 0)) {
    if (syncq_counter_cas_backoff_fetch_add(&counter, 10, NULL) == SYNCQ_OK) hook_ran = 1;
  }
}

static void on_alarm(int sig) {
  (void)sig;
  int saved = errno;
  int64_t old = -1;
  atomic_store(&add_armed, 1);
  handler_result = syncq_counter_cas_backoff_fetch_add(&counter, 1, &old);
  handler_old = old;
  handler_done = 1;
  errno = saved;
}

static void test_add_in_handler_during_first_calibration(void **state) {
  (void)state;
  assert_int_equal(syncq_counter_cas_init(&counter, 0), SYNCQ_OK);
  syncq_race_hook = hook; /* before any thread starts */

  assert_int_equal(signal_race_install(on_alarm), 0);
  pthread_t w;
  assert_int_equal(signal_race_watch("cas_signal_race_test: the handler's add", &w), 0);

  assert_true(syncq_delay_calibrate() > 0); /* the process's first: the signal comes inside */
  assert_int_equal(signal_race_went_on(w), 0);

  assert_int_equal(done_in_calibration, 1);
  assert_int_equal(hook_ran, 1);
  assert_int_equal(handler_result, SYNCQ_OK);
  assert_int_equal(handler_old, 10); /* the hook's add came first */
  int64_t v;
  assert_int_equal(syncq_counter_cas_load(&counter, &v), SYNCQ_OK);
  assert_int_equal(v, 11);
  assert_int_equal(syncq_counter_cas_destroy(&counter), SYNCQ_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_add_in_handler_during_first_calibration),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
