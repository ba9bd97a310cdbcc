/* SPDX-License-Identifier: BSD-2-Clause */
/* backoff_test.c — bounds of exponential and proportional backoff. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "syncq/backoff.h"
#include "syncq/stats.h"
#include "syncq/status.h"

static void test_exp_doubles_to_cap(void **state) {
  (void)state;
  syncq_backoff_exp b;
  assert_int_equal(syncq_backoff_exp_init(&b, 100, 1000), SYNCQ_OK);
  const uint32_t want[] = {100, 200, 400, 800, 1000, 1000, 1000};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) assert_int_equal(syncq_backoff_exp_step(&b), want[i]);
  syncq_backoff_exp_reset(&b);
  assert_int_equal(syncq_backoff_exp_step(&b), 100);
}

static void test_exp_never_exceeds_cap(void **state) {
  (void)state;
  /* caps that are not initial * 2^k, and a cap near UINT32_MAX (overflow) */
  const uint32_t caps[] = {1, 3, 30000, 65537, UINT32_MAX};
  for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
    syncq_backoff_exp b;
    assert_int_equal(syncq_backoff_exp_init(&b, 1, caps[c]), SYNCQ_OK);
    uint32_t prev = 0;
    for (int i = 0; i < 100; i++) {
      uint32_t w = syncq_backoff_exp_step(&b);
      assert_true(w >= 1 && w <= caps[c]);
      assert_true(w >= prev); /* never shrinks without a reset */
      prev = w;
    }
    assert_int_equal(prev, caps[c]); /* reaches the cap */
  }
}

static void test_exp_defaults_follow_001(void **state) {
  (void)state;
  syncq_backoff_exp b;
  syncq_backoff_exp_init_default(&b);
  uint32_t w = 0;
  for (int i = 0; i < 64; i++) w = syncq_backoff_exp_step(&b);
  assert_int_equal(w, 30000); /* 001: cap 30 us */
}

static void test_exp_bad_inputs(void **state) {
  (void)state;
  syncq_backoff_exp b;
  assert_int_equal(syncq_backoff_exp_init(NULL, 1, 2), SYNCQ_EINVAL);
  assert_int_equal(syncq_backoff_exp_init(&b, 0, 2), SYNCQ_EINVAL);
  assert_int_equal(syncq_backoff_exp_init(&b, 3, 2), SYNCQ_EINVAL);
  assert_int_equal(syncq_backoff_exp_wait(NULL), 0);
}

static void test_exp_wait_counts(void **state) {
  (void)state;
  syncq_backoff_exp b;
  assert_int_equal(syncq_backoff_exp_init(&b, 50, 200), SYNCQ_OK);
  syncq_stats_reset();
  assert_int_equal(syncq_backoff_exp_wait(&b), 50);
  assert_int_equal(syncq_backoff_exp_wait(&b), 100);
  if (syncq_stats_enabled()) {
    assert_int_equal(syncq_stats_self()->backoffs, 2);
    assert_int_equal(syncq_stats_self()->backoff_ns, 150);
  }
}

static void test_prop(void **state) {
  (void)state;
  assert_int_equal(syncq_backoff_prop_ns(100, 0, 1000), 0);
  assert_int_equal(syncq_backoff_prop_ns(100, 3, 1000), 300);
  assert_int_equal(syncq_backoff_prop_ns(100, 10, 1000), 1000);
  assert_int_equal(syncq_backoff_prop_ns(100, 11, 1000), 1000);
  assert_true(syncq_backoff_prop_ns(UINT64_MAX / 2, 4, 5000) == 5000); /* no overflow */
  assert_int_equal(syncq_backoff_prop_wait(10, 2, 1000), 20);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_exp_doubles_to_cap),      cmocka_unit_test(test_exp_never_exceeds_cap),
    cmocka_unit_test(test_exp_defaults_follow_001), cmocka_unit_test(test_exp_bad_inputs),
    cmocka_unit_test(test_exp_wait_counts),         cmocka_unit_test(test_prop),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
