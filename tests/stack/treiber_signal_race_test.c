/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * treiber_signal_race_test.c — the Treiber stack's push from a signal
 * handler (its registry entry has SYNCQ_PROP_SIGNAL_SAFE) that backs off
 * while the handler interrupts the process's first calibration of the
 * delay loop.
 *
 * A push whose CAS on Top fails backs off (syncq_backoff_exp_wait), and
 * the delay loop calibrates on its first use in the process: a handler
 * that interrupted that calibration in its own thread must not wait for
 * it (src/delay.c: a delay that finds a calibration in progress spins on
 * the clock instead). Here the main thread inits a stack, then runs the
 * process's first calibration (syncq_delay_calibrate), and at the race
 * point "delay.calibrating" (tests/support/syncq_race.h: measured, not yet
 * published) raises SIGALRM on itself; the handler pushes, and the race
 * point "stack.treiber.push.loaded" makes another push there, so the
 * handler's CAS fails and it backs off. The handler's push must complete
 * (a watchdog thread ends the process if the main thread has not gone on
 * within SIGNAL_RACE_WATCHDOG_S: a deadlock, not a speed check), and both items come
 * out in LIFO order. One thread and its own handler; the interleaving is
 * fixed by the points, nothing is timed.
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
#include "syncq/stack/treiber.h"

SYNCQ_RACE_HOOK_DEFINE;

static syncq_stack_treiber stack;
static int items[2];
static volatile sig_atomic_t handler_done, handler_result = -1, hook_ran, done_in_calibration;
static _Atomic(int) raise_armed = 1, push_armed;

/* In the calibration: the signal, once. Inside the handler's push: another
 * push moves Top, so the handler's CAS fails and it backs off. */
static void hook(const char *name) {
  if (strcmp(name, "delay.calibrating") == 0 && atomic_exchange(&raise_armed, 0)) {
    (void)raise(SIGALRM); /* the handler runs before raise returns */
    done_in_calibration = handler_done;
  } else if (strcmp(name, "stack.treiber.push.loaded") == 0 && atomic_exchange(&push_armed, 0)) {
    if (syncq_stack_treiber_push(&stack, &items[1]) == SYNCQ_OK) hook_ran = 1;
  }
}

static void on_alarm(int sig) {
  (void)sig;
  int saved = errno;
  atomic_store(&push_armed, 1);
  handler_result = syncq_stack_treiber_push(&stack, &items[0]);
  handler_done = 1;
  errno = saved;
}

static void test_push_in_handler_during_first_calibration(void **state) {
  (void)state;
  syncq_stack_config c = {16, 4, NULL};
  int st = syncq_stack_treiber_init(&stack, &c);
  if (st == SYNCQ_ENOTSUP) skip();
  assert_int_equal(st, SYNCQ_OK);
  syncq_race_hook = hook; /* before any thread starts */

  assert_int_equal(signal_race_install(on_alarm), 0);
  pthread_t w;
  assert_int_equal(signal_race_watch("treiber_signal_race_test: the handler's push", &w), 0);

  assert_true(syncq_delay_calibrate() > 0); /* the process's first (init does not calibrate): the signal comes inside */
  assert_int_equal(signal_race_went_on(w), 0);

  assert_int_equal(done_in_calibration, 1);
  assert_int_equal(hook_ran, 1);
  assert_int_equal(handler_result, SYNCQ_OK);
  void *out;
  assert_int_equal(syncq_stack_treiber_pop(&stack, &out), SYNCQ_OK);
  assert_ptr_equal(out, &items[0]); /* the handler's push came last */
  assert_int_equal(syncq_stack_treiber_pop(&stack, &out), SYNCQ_OK);
  assert_ptr_equal(out, &items[1]);
  assert_int_equal(syncq_stack_treiber_pop(&stack, &out), SYNCQ_EMPTY);
  assert_int_equal(syncq_stack_treiber_destroy(&stack), SYNCQ_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_push_in_handler_during_first_calibration),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
