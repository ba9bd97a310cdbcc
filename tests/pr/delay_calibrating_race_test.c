/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * delay_calibrating_race_test.c — the delay loop's calibration state
 * (src/delay.c): a delay that finds a calibration in progress does not
 * wait for it; syncq_delay_calibrate() does, and returns its result; a
 * child forked during a calibration calibrates on its own.
 *
 * The race point "delay.calibrating" (tests/support/syncq_race.h) stops
 * the process's first calibration, run by a calibrating thread, with its
 * measurements done and not yet published, until the test lets it go (or
 * STALL_S passes: then the check below fails rather than hangs). Meanwhile:
 *   - syncq_delay_ns on the main thread returns while the calibration is
 *     still stopped, having lasted at least its request;
 *   - syncq_delay_calibrate on a third thread has not returned while it is
 *     stopped, and returns the calibrating thread's rate once it goes on;
 *   - a forked child's syncq_delay_calibrate returns a rate (it takes over
 *     the claim its parent's thread holds, which no thread of the child
 *     will ever finish).
 * The order of events is fixed by the point; nothing here is timed but
 * the request's lower bound and the bounds that turn a hang into a failure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "syncq_race.h"

#include "syncq/clock.h"

SYNCQ_RACE_HOOK_DEFINE;

#define STALL_S 20      /* how long the point holds the calibration at most */
#define DELAY_NS 50000u /* the main thread's delay during the calibration */
#define CHILD_S 20      /* the forked child's alarm: a hang becomes a failure */

static _Thread_local int is_calibrator;
static _Atomic(int) stopped, let_go, stall_timed_out, waiter_done;
static double calibrator_rate, waiter_rate;

static void nap_us(long us) {
  struct timespec t = {0, us * 1000};
  nanosleep(&t, NULL);
}

static void stop_there(const char *name) {
  if (strcmp(name, "delay.calibrating") != 0 || !is_calibrator) return;
  atomic_store(&stopped, 1);
  uint64_t until = syncq_now_ns() + (uint64_t)STALL_S * 1000000000u;
  while (!atomic_load(&let_go)) {
    if (syncq_now_ns() > until) {
      atomic_store(&stall_timed_out, 1);
      return;
    }
    nap_us(100);
  }
}

static void *calibrator(void *p) {
  (void)p;
  is_calibrator = 1;
  calibrator_rate = syncq_delay_calibrate();
  return NULL;
}

static void *waiter(void *p) {
  (void)p;
  waiter_rate = syncq_delay_calibrate();
  atomic_store(&waiter_done, 1);
  return NULL;
}

static void test_delay_during_calibration(void **state) {
  (void)state;
  syncq_race_hook = stop_there;
  pthread_t c;
  assert_int_equal(pthread_create(&c, NULL, calibrator, NULL), 0);
  while (!atomic_load(&stopped)) nap_us(100);

  /* a delay finds the calibration in progress: it must not wait for it */
  syncq_delay_ns(0);
  uint64_t t0 = syncq_now_ns();
  syncq_delay_ns(DELAY_NS);
  uint64_t took = syncq_now_ns() - t0;
  assert_int_equal(atomic_load(&stall_timed_out), 0); /* it returned with the calibration still stopped */
  assert_true(took >= DELAY_NS);

  /* syncq_delay_calibrate waits for it */
  pthread_t w;
  assert_int_equal(pthread_create(&w, NULL, waiter, NULL), 0);

  /* a child forked now inherits a claim no thread of its own will finish */
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    alarm(CHILD_S);
    _exit(syncq_delay_calibrate() > 0.0 ? 0 : 3);
  }
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);

  assert_int_equal(atomic_load(&waiter_done), 0); /* still waiting: the calibration is stopped */
  assert_int_equal(atomic_load(&stall_timed_out), 0);
  atomic_store(&let_go, 1);
  assert_int_equal(pthread_join(c, NULL), 0);
  assert_int_equal(pthread_join(w, NULL), 0);
  syncq_race_hook = NULL;
  assert_true(calibrator_rate > 0.0);
  assert_true(waiter_rate == calibrator_rate); /* the one calibration's result */
  assert_true(syncq_delay_calibrate() == calibrator_rate);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_delay_during_calibration),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
