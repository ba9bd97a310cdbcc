/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * floors_test.c — the lab's shared helpers: the floors (lab/floors.c),
 * the process team (lab/proc_team.c), the work split and generator
 * (lab/prng.h) and the median (lab/median.c). Behaviour only: bad inputs
 * are refused with a reason, the floors measure something positive and
 * check their own copy, the team reaps its children, shares sum to n.
 */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "construct.h"
#include "floors.h"
#include "lab.h"
#include "prng.h"
#include "proc_team.h"
#include "syncq/wait.h"
#include "test_peers.h"

#define T_WHY 256
#define T_COPY_BYTES (256u << 10) /* small: the test checks behaviour, not bandwidth */
#define T_RTTS 1000u

static void test_share(void **state) {
  (void)state;
  static const uint64_t ns[] = {0, 1, 7, 1000, 1000001};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
    for (int p = 1; p <= 9; p++) {
      uint64_t sum = 0, lo = UINT64_MAX, hi = 0;
      for (int id = 0; id < p; id++) {
        uint64_t s = lab_share(ns[i], p, id);
        sum += s;
        lo = s < lo ? s : lo;
        hi = s > hi ? s : hi;
      }
      assert_int_equal(sum, ns[i]);
      assert_true(hi - lo <= 1); /* as even as it can be */
    }
  }
  assert_int_equal(lab_share(10, 0, 0), 0);
  assert_int_equal(lab_share(10, 3, -1), 0);
  assert_int_equal(lab_share(10, 3, 3), 0);
}

static void test_prng(void **state) {
  (void)state;
  /* seeds are distinct and never 0; the generator never reaches 0 */
  for (int id = 0; id < 64; id++) {
    assert_true(lab_prng_seed(id) != 0);
    if (id > 0) assert_true(lab_prng_seed(id) != lab_prng_seed(id - 1));
  }
  uint64_t s = lab_prng_seed(0), a = lab_prng_seed(0), b = lab_prng_seed(1);
  int differ = 0;
  for (int i = 0; i < 1000; i++) {
    assert_true(lab_prng_next(&s) != 0 || s != 0);
    assert_true(s != 0);
    differ += lab_prng_next(&a) != lab_prng_next(&b);
    double u = lab_prng_unit(&s);
    assert_true(u >= 0.0 && u < 1.0);
  }
  assert_true(differ > 990); /* two workers' streams are not the same stream */
  /* xorshift64* from state 1: the first output, computed by hand from
   * the three shifts and the multiplier */
  uint64_t one = 1, x = 1;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  assert_true(lab_prng_next(&one) == x * 2685821657736338717ull);
  /* jittered times stay in mean +- pct% and reach both halves */
  uint64_t j = lab_prng_seed(3);
  int below = 0, above = 0;
  for (int i = 0; i < 1000; i++) {
    uint64_t v = lab_prng_around(100, 20, &j);
    assert_true(v >= 80 && v <= 120);
    below += v < 100;
    above += v > 100;
  }
  assert_true(below > 0 && above > 0);
  assert_int_equal(lab_prng_around(0, 20, &j), 0);
  assert_true(lab_mix64(0) == 0);
  assert_true(lab_mix64(1) != lab_mix64(2));
}

static void test_median(void **state) {
  (void)state;
  double odd[] = {5, 1, 3};
  assert_true(lab_median(odd, 3) == 3);
  double even[] = {4, 1, 3, 2};
  assert_true(lab_median(even, 4) == 2.5);
  double one[] = {7};
  assert_true(lab_median(one, 1) == 7);
  assert_true(isnan(lab_median(NULL, 3)));
  assert_true(isnan(lab_median(one, 0)));
}

static void test_copy_bad_inputs(void **state) {
  (void)state;
  char why[T_WHY];
  double v = -1, t = -1;
  why[0] = 0;
  assert_int_equal(lab_floor_cross_core_copy(NULL, 0, 1, LAB_FLOOR_COPY_MIN_BYTES - 1, 1, &v, &t, why, sizeof why), -1);
  assert_true(strlen(why) > 0);
  assert_int_equal(lab_floor_cross_core_copy(NULL, 0, 1, T_COPY_BYTES, 0, &v, &t, why, sizeof why), -1);
  assert_int_equal(lab_floor_cross_core_copy(NULL, 0, 1, T_COPY_BYTES, 1, NULL, &t, why, sizeof why), -1);
  assert_int_equal(lab_floor_cross_core_copy(NULL, -1, 1, T_COPY_BYTES, 2, &v, &t, why, sizeof why), -1);
  /* the transfer figure times the writes of rounds 2.. */
  assert_int_equal(lab_floor_cross_core_copy(NULL, 0, 1, T_COPY_BYTES, 1, &v, &t, why, sizeof why), -1);
  assert_true(v == -1 && t == -1); /* untouched on failure */
}

static void test_copy_measures(void **state) {
  (void)state;
  char why[T_WHY] = "";
  double v = -1, t = -1;
  int rc = lab_floor_cross_core_copy(NULL, 0, 1, T_COPY_BYTES, 3, &v, &t, why, sizeof why);
  if (rc != 0) fail_msg("%s", why);
  assert_true(v > 0 && isfinite(v));
  /* the transfer is the slower half's rate: never above the copy alone
   * (equal when the copier is the slower half, up to the rounding of the
   * two divisions) */
  assert_true(t > 0 && isfinite(t) && t <= v * (1 + 1e-9));
  v = -1;
  rc = lab_floor_cross_core_copy(NULL, 0, 1, T_COPY_BYTES, 1, &v, NULL, why, sizeof why); /* copy figure only */
  if (rc != 0) fail_msg("%s", why);
  assert_true(v > 0 && isfinite(v));
}

static void test_rtt_bad_inputs(void **state) {
  (void)state;
  char why[T_WHY] = "";
  double v = -1;
  assert_int_equal(lab_floor_cross_process_rtt(NULL, 0, 1, 0, &v, why, sizeof why), -1);
  assert_true(strlen(why) > 0);
  assert_int_equal(lab_floor_cross_process_rtt(NULL, 0, 1, T_RTTS, NULL, why, sizeof why), -1);
  assert_int_equal(lab_floor_cross_process_rtt(NULL, 0, -2, T_RTTS, &v, why, sizeof why), -1);
  assert_true(v == -1);
}

static void test_rtt_measures(void **state) {
  (void)state;
  char why[T_WHY] = "";
  double v = -1;
  int rc = lab_floor_cross_process_rtt(NULL, 0, 1, T_RTTS, &v, why, sizeof why);
  if (rc != 0) fail_msg("%s", why);
  assert_true(v > 0 && isfinite(v));
  /* the child was reaped: no child of ours is left */
  assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
}

static void test_slots(void **state) {
  (void)state;
  int a = -1, b = -1;
  assert_non_null(lab_floor_slots(NULL, &a, &b)); /* no pinning: said why */
  assert_int_equal(a, 0);
  assert_int_equal(b, 1);
  assert_true(lab_floor_copy_bytes(LAB_SIZE_QUICK) == LAB_FLOOR_COPY_QUICK_BYTES);
  assert_true(lab_floor_copy_bytes(LAB_SIZE_DEFAULT) >= LAB_FLOOR_COPY_QUICK_BYTES);
  assert_true(lab_floor_copy_bytes(LAB_SIZE_FULL) <= LAB_FLOOR_COPY_MAX_BYTES);
}

static void test_team_bad_inputs(void **state) {
  (void)state;
  char why[T_WHY] = "";
  lab_proc_team t;
  assert_int_equal(lab_proc_team_init(NULL, NULL, 1, 0, why, sizeof why), -1);
  assert_int_equal(lab_proc_team_init(&t, NULL, 0, 0, why, sizeof why), -1);
  assert_true(strlen(why) > 0);
  assert_int_equal(lab_proc_team_init(&t, NULL, LAB_PROC_MAX + 1, 0, why, sizeof why), -1);
  assert_int_equal(lab_proc_team_fork(NULL), -1);
  assert_null(lab_proc_team_slot(NULL, 0));
  lab_proc_team_destroy(NULL); /* harmless */
}

/* A child that fails its set-up is noticed; one that hangs is killed and
 * reaped by stop; results come back through the slots. */
static void test_team_lifecycle(void **state) {
  (void)state;
  char why[T_WHY] = "";
  lab_proc_team t;
  assert_int_equal(lab_proc_team_init(&t, NULL, 2, sizeof(uint64_t), why, sizeof why), 0);
  assert_null(lab_proc_team_slot(&t, 2));
  for (int i = 0; i < 2; i++) {
    pid_t p = lab_proc_team_fork(&t);
    assert_true(p >= 0);
    if (p == 0) {
      lab_proc_child_ready(&t);
      if (!lab_proc_child_wait_go(&t, true)) _exit(2);
      *(uint64_t *)lab_proc_team_slot(&t, i) = 100u + (uint64_t)i;
      _exit(0);
    }
  }
  assert_int_equal(lab_proc_team_fork(&t), -1); /* full */
  assert_true(lab_proc_team_wait_ready(&t, 2, why, sizeof why));
  lab_proc_team_go(&t);
  lab_proc_team_stop(&t, false); /* reaps both */
  assert_true(*(uint64_t *)lab_proc_team_slot(&t, 0) == 100u);
  assert_true(*(uint64_t *)lab_proc_team_slot(&t, 1) == 101u);
  lab_proc_team_destroy(&t);

  /* a failed set-up */
  assert_int_equal(lab_proc_team_init(&t, NULL, 1, 0, why, sizeof why), 0);
  pid_t p = lab_proc_team_fork(&t);
  if (p == 0) lab_proc_child_failed(&t, 1);
  why[0] = 0;
  assert_false(lab_proc_team_wait_ready(&t, 1, why, sizeof why));
  assert_true(strlen(why) > 0);
  lab_proc_team_destroy(&t);

  /* a child that never finishes: destroy kills and reaps it */
  assert_int_equal(lab_proc_team_init(&t, NULL, 1, 0, why, sizeof why), 0);
  p = lab_proc_team_fork(&t);
  if (p == 0) {
    for (;;) pause();
  }
  lab_proc_team_destroy(&t);
  assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
}

/* Every registered structure of every family can be made and dropped
 * through the one constructor; bad inputs get SYNCQ_EINVAL. */
static void test_construct(void **state) {
  (void)state;
  syncq_lock_config lc = {2, SYNCQ_WAIT_DEFAULT, false};
  syncq_barrier_config bc = {2, SYNCQ_WAIT_DEFAULT, false};
  syncq_stack_config sc = {64, 2, NULL};
  syncq_pqueue_config pc = {64, 2, NULL};
  lab_object_cfg cfg = {
    .lock = &lc, .barrier = &bc, .counter_initial = 5, .queue_capacity = 64, .stack = &sc, .pqueue = &pc};
  int made = 0;
  for (int f = 0; f < SYNCQ_FAMILY_COUNT; f++) {
    const syncq_algo *algos[SYNCQ_REGISTRY_MAX];
    int n = syncq_registry_list((syncq_family)f, algos, SYNCQ_REGISTRY_MAX);
    for (int i = 0; i < n; i++) {
      void *obj = (void *)1;
      int st = lab_object_new(algos[i], &cfg, &obj);
      if (st == SYNCQ_ENOTSUP) { /* a CPU feature this machine lacks */
        assert_null(obj);
        continue;
      }
      if (st != SYNCQ_OK) fail_msg("%s %s: %s", syncq_family_name((syncq_family)f), algos[i]->name, syncq_strerror(st));
      assert_non_null(obj);
      if (f == SYNCQ_FAMILY_COUNTER) {
        int64_t v = -1;
        assert_int_equal(((const syncq_counter_ops *)algos[i]->ops)->load(obj, &v), SYNCQ_OK);
        assert_true(v == 5); /* the configured initial value reached init */
      }
      lab_object_free(algos[i], obj);
      made++;
    }
  }
  assert_true(made > 0);
  void *obj = (void *)1;
  assert_int_equal(lab_object_new(NULL, &cfg, &obj), SYNCQ_EINVAL);
  assert_null(obj);
  const syncq_algo *a;
  assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_QUEUE, "ms", &a), SYNCQ_OK);
  assert_int_equal(lab_object_new(a, &cfg, NULL), SYNCQ_EINVAL);
  syncq_algo bad = *a;
  bad.family = SYNCQ_FAMILY_COUNT;
  assert_int_equal(lab_object_new(&bad, &cfg, &obj), SYNCQ_EINVAL);
  assert_null(obj);
  int st = SYNCQ_OK;
  assert_false(lab_object_can_make(&bad, &cfg, &st));
  assert_int_equal(st, SYNCQ_EINVAL);
  lab_object_free(NULL, NULL); /* harmless */
}

int main(void) {
  test_register_peers();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_share),           cmocka_unit_test(test_prng),
    cmocka_unit_test(test_median),          cmocka_unit_test(test_copy_bad_inputs),
    cmocka_unit_test(test_copy_measures),   cmocka_unit_test(test_rtt_bad_inputs),
    cmocka_unit_test(test_rtt_measures),    cmocka_unit_test(test_slots),
    cmocka_unit_test(test_team_bad_inputs), cmocka_unit_test(test_team_lifecycle),
    cmocka_unit_test(test_construct),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
