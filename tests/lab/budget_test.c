/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * budget_test.c — the suite's time budget over a plan (lab/budget.c) and
 * the thread list a machine of N processing units plans (lab_threads_plan):
 * planned on any machine, whatever this one has.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "budget.h"
#include "lab.h"

#define MS 1000000LL

static void expect_threads(int pus, const int *want, int nwant) {
  int got[LAB_MAX_THREADS_LIST];
  int n = lab_threads_plan(pus, got, LAB_MAX_THREADS_LIST);
  assert_int_equal(n, nwant);
  assert_memory_equal(got, want, (size_t)nwant * sizeof *want);
}

static void test_thread_lists_grow_with_the_machine(void **state) {
  (void)state;
  expect_threads(1, (const int[]){1, 2}, 2);
  expect_threads(2, (const int[]){1, 2, 3, 4}, 4);
  expect_threads(16, (const int[]){1, 2, 3, 4, 8, 16, 24, 32}, 8);
  expect_threads(12, (const int[]){1, 2, 3, 4, 8, 12, 18, 24}, 8);
  expect_threads(64, (const int[]){1, 2, 3, 4, 8, 16, 32, 64, 96, 128}, 10);
  expect_threads(0, (const int[]){1, 2}, 2); /* no count: one PU */
}

static void test_thread_list_respects_its_capacity(void **state) {
  (void)state;
  int got[3];
  assert_int_equal(lab_threads_plan(16, got, 3), 3);
  assert_int_equal(got[2], 3);
  assert_int_equal(lab_threads_plan(16, NULL, 3), 0);
  assert_int_equal(lab_threads_plan(16, got, 0), 0);
}

static void test_a_plan_within_the_budget_keeps_the_size_budgets(void **state) {
  (void)state;
  /* 1500 points x 40 ms + 400 claimed x 150 ms = 120 s, the share of 360 s over 3 launches */
  lab_budget b = lab_budget_fit(1500, 400, 40 * MS, 150 * MS, 360000 * MS, 3);
  assert_true(b.scale == 1.0);
  assert_int_equal(b.point_ns, 40 * MS);
  assert_int_equal(b.claim_ns, 150 * MS);
  assert_int_equal(b.wanted_ns, 120000 * MS);
  assert_int_equal(b.launch_ns, 120000 * MS);
}

static void test_a_longer_plan_gets_smaller_budgets_of_the_same_sum(void **state) {
  (void)state;
  lab_budget b = lab_budget_fit(3000, 800, 40 * MS, 150 * MS, 360000 * MS, 3);
  assert_true(b.scale > 0.49 && b.scale < 0.51);
  assert_int_equal(b.point_ns, 20 * MS);
  assert_int_equal(b.claim_ns, 75 * MS);
  int64_t sum = 3000 * b.point_ns + 800 * b.claim_ns;
  assert_true(sum <= b.launch_ns);
  assert_true(sum > b.launch_ns - 3800); /* rounding of each budget down, at most 1 ns each */
}

static void test_no_suite_budget_and_odd_inputs(void **state) {
  (void)state;
  lab_budget b = lab_budget_fit(1000000, 1000000, 40 * MS, 150 * MS, 0, 3);
  assert_true(b.scale == 1.0);
  assert_int_equal(b.point_ns, 40 * MS);
  assert_int_equal(b.launch_ns, 0);
  b = lab_budget_fit(-5, -1, -3, -4, 10 * MS, 0); /* nothing planned: nothing to fit */
  assert_true(b.scale == 1.0);
  assert_int_equal(b.point_ns, 0);
  assert_int_equal(b.claim_ns, 0);
  assert_int_equal(b.wanted_ns, 0);
  b = lab_budget_fit(10, 0, 40 * MS, 150 * MS, 200 * MS, 1); /* one launch: all of it */
  assert_int_equal(b.launch_ns, 200 * MS);
  assert_int_equal(b.point_ns, 20 * MS);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_thread_lists_grow_with_the_machine),
    cmocka_unit_test(test_thread_list_respects_its_capacity),
    cmocka_unit_test(test_a_plan_within_the_budget_keeps_the_size_budgets),
    cmocka_unit_test(test_a_longer_plan_gets_smaller_budgets_of_the_same_sum),
    cmocka_unit_test(test_no_suite_budget_and_odd_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
