/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mcs_tp_test.c — what the time-published MCS lock ("mcs-tp") adds to
 * MCS: a waiter that is not running when the lock is released is passed
 * over, and queues again when it runs.
 *
 * The holder H keeps the lock while waiter A queues; A is then stopped
 * inside its lock() call by a signal whose handler sleeps until released
 * (the lock is signal-safe with SPIN and YIELD), so A publishes nothing.
 * Waiter B queues behind A and keeps polling. H releases well after A's
 * last published time (the bound is at most SYNCQ_LOCK_MCS_TP_STALE_NS, 100 us; A stays
 * stopped for tens of milliseconds): B must get the lock first, although
 * A queued first (plain MCS would hand it to A and wait for it). Then A is
 * released and must still get the lock (it queues again). The waits below
 * order arrivals; they measure nothing, and B gets the lock first however
 * late the scheduler runs anybody, since A cannot run until released
 * (the test gives B 20 s).
 * Through the generic API with its safe default, a waiter beyond the
 * admitted ones sleeps outside the queue (tp_restricted.h).
 * Also: the disciplines the lock refuses, and its bad inputs.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "syncq/lock/mcs_tp.h"
#include "syncq/platform.h"
#include "syncq/wait.h"

#include "stopped_waiter.h"
#include "tp_restricted.h"

static syncq_lock_mcs_tp lock;

static int lock_fn(void *l, syncq_lock_node *n) { return syncq_lock_mcs_tp_lock(l, n); }
static int unlock_fn(void *l, syncq_lock_node *n) { return syncq_lock_mcs_tp_unlock(l, n); }

static void check_passes_over(int wait) {
  syncq_lock_config cfg = {0, wait, false};
  assert_int_equal(syncq_lock_mcs_tp_init(&lock, &cfg), SYNCQ_OK);
  sw_setup(&lock, lock_fn, unlock_fn);
  syncq_lock_node mine;
  assert_int_equal(syncq_lock_mcs_tp_lock(&lock, &mine), SYNCQ_OK);
  pthread_t a = sw_start_stopped(0); /* A queues, then stops */
  pthread_t b = sw_start(1);         /* B queues behind A; A's time is 30 ms old, far past the threshold */
  assert_int_equal(syncq_lock_mcs_tp_unlock(&lock, &mine), SYNCQ_OK);
  /* B gets the lock past the stopped A (plain MCS would hand it to A and
   * B would wait for A's release: give up after a generous while) */
  if (!sw_await_first()) fail_msg("%s: the lock waited for a stopped waiter", syncq_wait_name(wait));
  pthread_join(b, NULL);
  assert_int_equal(atomic_load(&sw.got), 1);
  assert_int_equal(sw.order[0], 1);
  sw_thaw();
  pthread_join(a, NULL); /* A queues again and gets it */
  assert_int_equal(atomic_load(&sw.got), 2);
  assert_int_equal(sw.order[1], 0);
  assert_int_equal(syncq_lock_mcs_tp_destroy(&lock), SYNCQ_OK);
  sw_teardown();
}

static void test_passes_over_a_stopped_waiter_spin(void **state) {
  (void)state;
  check_passes_over(SYNCQ_WAIT_SPIN);
}

static void test_passes_over_a_stopped_waiter_yield(void **state) {
  (void)state;
  check_passes_over(SYNCQ_WAIT_YIELD);
}

static void test_generic_default_sleeps_beyond_the_admitted(void **state) {
  (void)state;
  tp_check_restricted_default("mcs-tp");
}

static void test_disciplines_and_bad_inputs(void **state) {
  (void)state;
  syncq_lock_mcs_tp l;
  syncq_lock_node n;
  syncq_lock_config cfg = {0, SYNCQ_WAIT_BLOCK, false};
  assert_int_equal(syncq_lock_mcs_tp_init(&l, &cfg), SYNCQ_ENOTSUP);
  cfg.wait = SYNCQ_WAIT_COMPETITIVE;
  assert_int_equal(syncq_lock_mcs_tp_init(&l, &cfg), SYNCQ_ENOTSUP);
  cfg.wait = 99;
  assert_int_equal(syncq_lock_mcs_tp_init(&l, &cfg), SYNCQ_EINVAL);
  cfg.wait = SYNCQ_WAIT_SPIN;
  cfg.process_shared = true;
  assert_int_equal(syncq_lock_mcs_tp_init(&l, &cfg), SYNCQ_ENOTSUP);
  assert_int_equal(syncq_lock_mcs_tp_init(NULL, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_mcs_tp_init(&l, NULL), SYNCQ_OK);
  /* the staleness bound: one measured context switch, capped */
  const uint64_t cs = syncq_wait_spin_limit_ns();
  assert_true(l.stale_ns == (cs < SYNCQ_LOCK_MCS_TP_STALE_NS ? cs : SYNCQ_LOCK_MCS_TP_STALE_NS));
  assert_true(l.stale_ns > 0);
  assert_int_equal(syncq_lock_mcs_tp_lock(NULL, &n), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_mcs_tp_lock(&l, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_mcs_tp_trylock(NULL, &n), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_mcs_tp_trylock(&l, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_mcs_tp_unlock(NULL, &n), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_mcs_tp_unlock(&l, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_mcs_tp_unlock(&l, &n), SYNCQ_EINVAL); /* free */
  assert_int_equal(syncq_lock_mcs_tp_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_mcs_tp_trylock(&l, &n), SYNCQ_OK);
  syncq_lock_node other;
  assert_int_equal(syncq_lock_mcs_tp_trylock(&l, &other), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_mcs_tp_destroy(&l), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_mcs_tp_unlock(&l, &n), SYNCQ_OK);
  assert_int_equal(syncq_lock_mcs_tp_destroy(&l), SYNCQ_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_passes_over_a_stopped_waiter_spin),
    cmocka_unit_test(test_passes_over_a_stopped_waiter_yield),
    cmocka_unit_test(test_disciplines_and_bad_inputs),
    cmocka_unit_test(test_generic_default_sleeps_beyond_the_admitted),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
