/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wait_test.c — the poll-loop helpers of syncq/wait.h (src/wait/wait.c):
 *
 * - syncq_wait_spin_limit_for: the calibrated limit for COMPETITIVE, 0 for
 *   every other discipline, unknown ones included (bad inputs);
 * - syncq_wait_yield counts one yield in the thread's statistics;
 * - syncq_wait_spin_yield yields exactly every yield_every-th call (the
 *   yields counted in the statistics, the calls in *pauses), and never
 *   with yield_every 0, which leaves *pauses alone.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "syncq/stats.h"
#include "syncq/wait.h"

static uint64_t yields_now(void) { return syncq_stats_self()->yields; }

static void test_spin_limit_for(void **state) {
  (void)state;
  uint64_t lim = syncq_wait_spin_limit_ns();
  assert_true(lim >= 1000u && lim <= 200000u); /* the documented clamp */
  assert_int_equal(syncq_wait_spin_limit_for(SYNCQ_WAIT_COMPETITIVE), lim);
  assert_int_equal(syncq_wait_spin_limit_for(SYNCQ_WAIT_SPIN), 0);
  assert_int_equal(syncq_wait_spin_limit_for(SYNCQ_WAIT_YIELD), 0);
  assert_int_equal(syncq_wait_spin_limit_for(SYNCQ_WAIT_BLOCK), 0);
  assert_int_equal(syncq_wait_spin_limit_for(SYNCQ_WAIT_DEFAULT), 0);
  /* bad inputs: unknown disciplines read no limit */
  assert_int_equal(syncq_wait_spin_limit_for(-1), 0);
  assert_int_equal(syncq_wait_spin_limit_for(SYNCQ_WAIT_COUNT), 0);
  assert_int_equal(syncq_wait_spin_limit_for(INT_MIN), 0);
  assert_int_equal(syncq_wait_spin_limit_for(INT_MAX), 0);
}

static void test_yield_counts(void **state) {
  (void)state;
  assert_int_equal(syncq_stats_enabled(), 1); /* the tests link the counting copy */
  uint64_t before = yields_now();
  syncq_wait_yield();
  syncq_wait_yield();
  assert_int_equal(yields_now() - before, 2);
}

static void test_spin_yield_every(void **state) {
  (void)state;
  static const uint32_t every[] = {1u, 2u, 16u, 64u};
  for (size_t i = 0; i < sizeof every / sizeof every[0]; i++) {
    uint32_t pauses = 0;
    uint64_t before = yields_now();
    for (uint32_t k = 1; k <= 3u * every[i] + 1u; k++) {
      syncq_wait_spin_yield(&pauses, every[i]);
      assert_int_equal(pauses, k);
      assert_int_equal(yields_now() - before, k / every[i]); /* a yield on every every[i]-th call */
    }
  }
}

static void test_spin_yield_never(void **state) {
  (void)state;
  uint32_t pauses = 0;
  uint64_t before = yields_now();
  for (int k = 0; k < 1000; k++) syncq_wait_spin_yield(&pauses, 0u);
  assert_int_equal(pauses, 0);
  assert_int_equal(yields_now(), before);
}

static void test_spin_yield_wraps(void **state) {
  (void)state;
  /* the counter wraps: a wait longer than 2^32 pauses keeps its rhythm */
  uint32_t pauses = UINT32_MAX - 1u;
  uint64_t before = yields_now();
  syncq_wait_spin_yield(&pauses, 2u); /* UINT32_MAX: odd, a pause */
  syncq_wait_spin_yield(&pauses, 2u); /* 0: a yield */
  assert_int_equal(pauses, 0);
  assert_int_equal(yields_now() - before, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_spin_limit_for),   cmocka_unit_test(test_yield_counts),
    cmocka_unit_test(test_spin_yield_every), cmocka_unit_test(test_spin_yield_never),
    cmocka_unit_test(test_spin_yield_wraps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
