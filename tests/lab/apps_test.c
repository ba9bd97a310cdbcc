/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * apps_test.c — the papers' applications (lab/apps/) at smoke size, each
 * with its output checked, over every registered structure they take
 * (syncq's and the peers'): quicksort over every queue and stack, TSP
 * over 001's combinations and every priority queue, LU over every barrier
 * and discipline, the task kernel over every queue, stack and lock. Also:
 * the checks catch wrong output, and bad inputs are refused.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "apps/lu.h"
#include "apps/quicksort.h"
#include "apps/taskq.h"
#include "apps/tsp.h"
#include "syncq/barrier.h"
#include "syncq/wait.h"
#include "test_peers.h"

#define T_THREADS 3 /* more than the 2 cores: threads get preempted mid-operation */
#define T_QS_KEYS 6000u
#define T_TSP_CITIES 11
#define T_LU_N 48
#define T_LU_BS 8
#define T_WHY 256

/* ---- a tiny team ---- */
typedef struct t_slot {
  void (*fn)(void *arg, int id);
  void *arg;
  int id;
} t_slot;

static void *t_main(void *p) {
  t_slot *s = p;
  s->fn(s->arg, s->id);
  return NULL;
}

static void t_team(int n, void (*fn)(void *arg, int id), void *arg) {
  pthread_t tid[16];
  t_slot slot[16];
  for (int i = 0; i < n; i++) {
    slot[i] = (t_slot){fn, arg, i};
    assert_int_equal(pthread_create(&tid[i], NULL, t_main, &slot[i]), 0);
  }
  for (int i = 0; i < n; i++) pthread_join(tid[i], NULL);
}

static int t_list(syncq_family f, const syncq_algo **out) {
  int n = syncq_registry_list(f, out, 64);
  return n > 64 ? 64 : n;
}

/* ---- quicksort ---- */
static void qs_body(void *arg, int id) {
  (void)id;
  app_qs_worker(arg);
}

static void test_quicksort_every_queue_and_stack(void **state) {
  (void)state;
  const syncq_family fams[] = {SYNCQ_FAMILY_QUEUE, SYNCQ_FAMILY_STACK};
  int ran = 0;
  for (size_t f = 0; f < 2; f++) {
    const syncq_algo *algos[64];
    int n = t_list(fams[f], algos);
    for (int i = 0; i < n; i++) {
      if (!app_pool_usable(algos[i])) {
        app_qs s;
        assert_int_equal(app_qs_init(&s, algos[i], T_QS_KEYS, 1, T_THREADS), SYNCQ_EINVAL);
        continue;
      }
      app_qs s;
      int st = app_qs_init(&s, algos[i], T_QS_KEYS, 42, T_THREADS);
      if (st == SYNCQ_ENOTSUP) {
        fprintf(stderr, "quicksort: %s SKIPPED: %s\n", algos[i]->name, syncq_strerror(st));
        continue;
      }
      assert_int_equal(st, SYNCQ_OK);
      t_team(T_THREADS, qs_body, &s);
      char why[T_WHY] = "";
      if (app_qs_check(&s, why, sizeof why) != 0) fail_msg("quicksort over %s: %s", algos[i]->name, why);
      app_qs_destroy(&s);
      ran++;
    }
  }
  assert_true(ran >= 5);
}

static void test_quicksort_check_catches_wrong_output(void **state) {
  (void)state;
  const syncq_algo *ms;
  assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_QUEUE, "ms", &ms), SYNCQ_OK);
  app_qs s;
  assert_int_equal(app_qs_init(&s, ms, 1000, 7, 1), SYNCQ_OK);
  app_qs_worker(&s);
  char why[T_WHY];
  assert_int_equal(app_qs_check(&s, why, sizeof why), 0);
  /* out of order */
  uint32_t t = s.keys[10];
  s.keys[10] = s.keys[500];
  s.keys[500] = t;
  assert_int_equal(app_qs_check(&s, why, sizeof why), -1);
  assert_non_null(strstr(why, "not sorted"));
  s.keys[500] = s.keys[10];
  s.keys[10] = t;
  /* sorted but not the input */
  s.keys[999] += s.keys[999] < UINT32_MAX;
  s.keys[0] = 0;
  assert_int_equal(app_qs_check(&s, why, sizeof why), -1);
  app_qs_destroy(&s);
}

static void test_quicksort_bad_input(void **state) {
  (void)state;
  const syncq_algo *ms, *faa;
  assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_QUEUE, "ms", &ms), SYNCQ_OK);
  assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_COUNTER, "faa", &faa), SYNCQ_OK);
  app_qs s;
  assert_int_equal(app_qs_init(NULL, ms, 10, 1, 1), SYNCQ_EINVAL);
  assert_int_equal(app_qs_init(&s, NULL, 10, 1, 1), SYNCQ_EINVAL);
  assert_int_equal(app_qs_init(&s, ms, 0, 1, 1), SYNCQ_EINVAL);
  assert_int_equal(app_qs_init(&s, ms, APP_QS_MAX_KEYS + 1, 1, 1), SYNCQ_EINVAL);
  assert_int_equal(app_qs_init(&s, faa, 10, 1, 1), SYNCQ_EINVAL);
  app_pool p;
  assert_int_equal(app_pool_init(&p, ms, 1000, 1), SYNCQ_EINVAL); /* not a power of two */
  assert_int_equal(app_pool_init(NULL, ms, 1024, 1), SYNCQ_EINVAL);
  app_qs_destroy(NULL);
}

/* ---- TSP ---- */
static void tsp_body(void *arg, int id) { app_tsp_worker(arg, id); }

static uint64_t tsp_brute(const app_tsp_instance *in) {
  int n = in->n, perm[APP_TSP_MAX_CITIES];
  for (int i = 0; i < n; i++) perm[i] = i;
  uint64_t best = UINT64_MAX;
  for (;;) { /* every order of cities 1..n-1 (next permutation) */
    uint64_t len = 0;
    for (int i = 0; i < n; i++) len += in->d[perm[i]][perm[(i + 1) % n]];
    if (len < best) best = len;
    int i = n - 2;
    while (i >= 1 && perm[i] > perm[i + 1]) i--;
    if (i < 1) break;
    int j = n - 1;
    while (perm[j] < perm[i]) j--;
    int t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
    for (int a = i + 1, b = n - 1; a < b; a++, b--) {
      t = perm[a];
      perm[a] = perm[b];
      perm[b] = t;
    }
  }
  return best;
}

static void test_held_karp_matches_brute_force(void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 4; seed++) {
    app_tsp_instance in;
    assert_int_equal(app_tsp_instance_make(&in, 8, seed), SYNCQ_OK);
    uint64_t hk;
    assert_int_equal(app_tsp_held_karp(&in, &hk), SYNCQ_OK);
    assert_int_equal(hk, tsp_brute(&in));
  }
}

static const syncq_algo *t_find(syncq_family f, const char *name) {
  const syncq_algo *a = NULL;
  return syncq_registry_find(f, name, &a) == SYNCQ_OK ? a : NULL;
}

static void tsp_run_one(const app_tsp_instance *in, uint64_t opt, const syncq_algo *pq, const syncq_algo *st,
                        const syncq_algo *co) {
  app_tsp_config cfg = {pq, st, co};
  app_tsp *s = malloc(sizeof *s);
  assert_non_null(s);
  int r = app_tsp_init(s, in, &cfg, T_THREADS);
  if (r == SYNCQ_ENOTSUP) {
    fprintf(stderr, "tsp: %s/%s/%s SKIPPED: %s\n", pq->name, st->name, co->name, syncq_strerror(r));
    free(s);
    return;
  }
  assert_int_equal(r, SYNCQ_OK);
  t_team(T_THREADS, tsp_body, s);
  char why[T_WHY] = "";
  if (app_tsp_check(s, opt, why, sizeof why) != 0) fail_msg("tsp: %s", why);
  assert_true(app_tsp_expanded(s) > 0);
  app_tsp_destroy(s);
  free(s);
}

static void test_tsp_finds_the_optimum(void **state) {
  (void)state;
  app_tsp_instance in;
  assert_int_equal(app_tsp_instance_make(&in, T_TSP_CITIES, 17), SYNCQ_OK);
  uint64_t opt;
  assert_int_equal(app_tsp_held_karp(&in, &opt), SYNCQ_OK);
  /* 001's combinations: lock, preemption-safe lock, non-blocking, hybrid */
  const char *combos[][3] = {{"skew-lock", "lock", "lock-ttas"},
                             {"skew-lock-ps", "lock-ps", "lock-ttas-ps"},
                             {"skew-herlihy", "treiber", "cas"},
                             {"skew-lock-ps", "treiber", "cas"}};
  for (size_t c = 0; c < 4; c++)
    tsp_run_one(&in, opt, t_find(SYNCQ_FAMILY_PQUEUE, combos[c][0]), t_find(SYNCQ_FAMILY_STACK, combos[c][1]),
                t_find(SYNCQ_FAMILY_COUNTER, combos[c][2]));
  /* every other registered priority queue, stack and counter, with the
   * hybrid's other structures */
  const syncq_algo *algos[64];
  const syncq_algo *pq = t_find(SYNCQ_FAMILY_PQUEUE, "skew-lock-ps"), *st = t_find(SYNCQ_FAMILY_STACK, "treiber"),
                   *co = t_find(SYNCQ_FAMILY_COUNTER, "cas");
  int n = t_list(SYNCQ_FAMILY_PQUEUE, algos);
  for (int i = 0; i < n; i++) tsp_run_one(&in, opt, algos[i], st, co);
  n = t_list(SYNCQ_FAMILY_STACK, algos);
  for (int i = 0; i < n; i++) tsp_run_one(&in, opt, pq, algos[i], co);
  n = t_list(SYNCQ_FAMILY_COUNTER, algos);
  for (int i = 0; i < n; i++) tsp_run_one(&in, opt, pq, st, algos[i]);
}

static void test_tsp_check_catches_wrong_output(void **state) {
  (void)state;
  app_tsp_instance in;
  assert_int_equal(app_tsp_instance_make(&in, 9, 3), SYNCQ_OK);
  uint64_t opt;
  assert_int_equal(app_tsp_held_karp(&in, &opt), SYNCQ_OK);
  app_tsp_config cfg = {t_find(SYNCQ_FAMILY_PQUEUE, "skew-lock"), t_find(SYNCQ_FAMILY_STACK, "treiber"),
                        t_find(SYNCQ_FAMILY_COUNTER, "faa")};
  app_tsp *s = malloc(sizeof *s);
  assert_non_null(s);
  assert_int_equal(app_tsp_init(s, &in, &cfg, 1), SYNCQ_OK);
  app_tsp_worker(s, 0);
  char why[T_WHY];
  assert_int_equal(app_tsp_check(s, opt, why, sizeof why), 0);
  assert_int_equal(app_tsp_best(s), opt);
  assert_int_equal(app_tsp_check(s, opt - 1, why, sizeof why), -1); /* a different optimum */
  /* a tour that repeats a city */
  s->local[0].best_path[2] = s->local[0].best_path[1];
  assert_int_equal(app_tsp_check(s, opt, why, sizeof why), -1);
  app_tsp_destroy(s);
  free(s);
}

static void test_tsp_bad_input(void **state) {
  (void)state;
  app_tsp_instance in;
  assert_int_equal(app_tsp_instance_make(NULL, 5, 1), SYNCQ_EINVAL);
  assert_int_equal(app_tsp_instance_make(&in, 2, 1), SYNCQ_EINVAL);
  assert_int_equal(app_tsp_instance_make(&in, APP_TSP_MAX_CITIES + 1, 1), SYNCQ_EINVAL);
  assert_int_equal(app_tsp_instance_make(&in, 6, 1), SYNCQ_OK);
  uint64_t opt;
  assert_int_equal(app_tsp_held_karp(NULL, &opt), SYNCQ_EINVAL);
  assert_int_equal(app_tsp_held_karp(&in, NULL), SYNCQ_EINVAL);
  app_tsp_config good = {t_find(SYNCQ_FAMILY_PQUEUE, "skew-lock"), t_find(SYNCQ_FAMILY_STACK, "treiber"),
                         t_find(SYNCQ_FAMILY_COUNTER, "faa")};
  app_tsp_config swapped = {good.stack, good.pq, good.counter};
  app_tsp *s = malloc(sizeof *s);
  assert_non_null(s);
  assert_int_equal(app_tsp_init(NULL, &in, &good, 1), SYNCQ_EINVAL);
  assert_int_equal(app_tsp_init(s, NULL, &good, 1), SYNCQ_EINVAL);
  assert_int_equal(app_tsp_init(s, &in, NULL, 1), SYNCQ_EINVAL);
  assert_int_equal(app_tsp_init(s, &in, &swapped, 1), SYNCQ_EINVAL);
  assert_int_equal(app_tsp_init(s, &in, &good, 0), SYNCQ_EINVAL);
  assert_int_equal(app_tsp_init(s, &in, &good, APP_TSP_MAX_THREADS + 1), SYNCQ_EINVAL);
  free(s);
  app_tsp_destroy(NULL);
}

/* ---- LU ---- */
static void lu_body(void *arg, int id) { app_lu_worker(arg, id); }

static void lu_run_one(const syncq_algo *b, int wait, unsigned threads) {
  app_lu s;
  int r = app_lu_init(&s, b, wait, T_LU_N, T_LU_BS, threads, 5);
  if (r == SYNCQ_ENOTSUP) {
    fprintf(stderr, "lu: %s with discipline %d SKIPPED: %s\n", b->name, wait, syncq_strerror(r));
    return;
  }
  assert_int_equal(r, SYNCQ_OK);
  t_team((int)threads, lu_body, &s);
  char why[T_WHY] = "";
  if (app_lu_check(&s, why, sizeof why) != 0) fail_msg("lu: %s", why);
  app_lu_destroy(&s);
}

static void test_lu_every_barrier_and_discipline(void **state) {
  (void)state;
  const syncq_algo *algos[64];
  int n = t_list(SYNCQ_FAMILY_BARRIER, algos);
  const int waits[] = {SYNCQ_WAIT_DEFAULT, SYNCQ_WAIT_BLOCK, SYNCQ_WAIT_COMPETITIVE};
  for (int i = 0; i < n; i++)
    for (size_t w = 0; w < sizeof waits / sizeof waits[0]; w++) lu_run_one(algos[i], waits[w], T_THREADS);
  lu_run_one(algos[0], SYNCQ_WAIT_DEFAULT, 1);
  lu_run_one(algos[0], SYNCQ_WAIT_DEFAULT, 4); /* a 2 x 2 grid */
}

static void test_lu_check_catches_wrong_output(void **state) {
  (void)state;
  const syncq_algo *b = t_find(SYNCQ_FAMILY_BARRIER, "central-faa");
  app_lu s;
  assert_int_equal(app_lu_init(&s, b, SYNCQ_WAIT_DEFAULT, 16, 4, 1, 9), SYNCQ_OK);
  app_lu_worker(&s, 0);
  char why[T_WHY];
  assert_int_equal(app_lu_check(&s, why, sizeof why), 0);
  s.a[5 * 16 + 3] += 1e-6;
  assert_int_equal(app_lu_check(&s, why, sizeof why), -1);
  app_lu_destroy(&s);
}

static void test_lu_bad_input(void **state) {
  (void)state;
  const syncq_algo *b = t_find(SYNCQ_FAMILY_BARRIER, "central-faa"), *q = t_find(SYNCQ_FAMILY_QUEUE, "ms");
  app_lu s;
  assert_int_equal(app_lu_init(NULL, b, 0, 16, 4, 1, 1), SYNCQ_EINVAL);
  assert_int_equal(app_lu_init(&s, NULL, 0, 16, 4, 1, 1), SYNCQ_EINVAL);
  assert_int_equal(app_lu_init(&s, q, 0, 16, 4, 1, 1), SYNCQ_EINVAL);
  assert_int_equal(app_lu_init(&s, b, 0, 18, 4, 1, 1), SYNCQ_EINVAL);
  assert_int_equal(app_lu_init(&s, b, 0, 16, 0, 1, 1), SYNCQ_EINVAL);
  assert_int_equal(app_lu_init(&s, b, 0, 16, 4, 0, 1), SYNCQ_EINVAL);
  assert_int_equal(app_lu_init(&s, b, 0, 16, 4, APP_LU_MAX_THREADS + 1, 1), SYNCQ_EINVAL);
  assert_int_equal(app_lu_init(&s, b, 12345, 16, 4, 1, 1), SYNCQ_EINVAL); /* unknown discipline */
  app_lu_destroy(NULL);
}

/* ---- task queue ---- */
static const app_taskq_shape t_shape = {16, 4, 60, 200};

static void tq_body(void *arg, int id) {
  (void)id;
  app_taskq_worker(arg);
}

static void tq_run_one(const syncq_algo *pool, const syncq_algo *lock, int wait) {
  app_taskq s;
  int r = app_taskq_init(&s, &t_shape, pool, lock, wait, T_THREADS);
  const char *name = pool ? pool->name : lock->name;
  if (r == SYNCQ_ENOTSUP) {
    fprintf(stderr, "taskq: %s SKIPPED: %s\n", name, syncq_strerror(r));
    return;
  }
  assert_int_equal(r, SYNCQ_OK);
  t_team(T_THREADS, tq_body, &s);
  char why[T_WHY] = "";
  if (app_taskq_check(&s, why, sizeof why) != 0) fail_msg("taskq: %s", why);
  app_taskq_destroy(&s);
}

static void test_taskq_every_queue_stack_and_lock(void **state) {
  (void)state;
  uint64_t sum, tasks;
  assert_int_equal(app_taskq_expected(&t_shape, &sum, &tasks), SYNCQ_OK);
  assert_true(tasks > t_shape.roots); /* tasks did spawn tasks */
  const syncq_family fams[] = {SYNCQ_FAMILY_QUEUE, SYNCQ_FAMILY_STACK};
  const syncq_algo *algos[64];
  for (size_t f = 0; f < 2; f++) {
    int n = t_list(fams[f], algos);
    for (int i = 0; i < n; i++)
      if (app_pool_usable(algos[i])) tq_run_one(algos[i], NULL, 0);
  }
  int n = t_list(SYNCQ_FAMILY_LOCK, algos);
  for (int i = 0; i < n; i++) tq_run_one(NULL, algos[i], SYNCQ_WAIT_DEFAULT);
  const syncq_algo *ttas = t_find(SYNCQ_FAMILY_LOCK, "ttas");
  tq_run_one(NULL, ttas, SYNCQ_WAIT_BLOCK);
  tq_run_one(NULL, ttas, SYNCQ_WAIT_COMPETITIVE);
}

static void test_taskq_check_catches_wrong_output(void **state) {
  (void)state;
  app_taskq s;
  assert_int_equal(app_taskq_init(&s, &t_shape, t_find(SYNCQ_FAMILY_QUEUE, "ms"), NULL, 0, 1), SYNCQ_OK);
  app_taskq_worker(&s);
  char why[T_WHY];
  assert_int_equal(app_taskq_check(&s, why, sizeof why), 0);
  atomic_fetch_add(&s.sum, 1);
  assert_int_equal(app_taskq_check(&s, why, sizeof why), -1);
  app_taskq_destroy(&s);
  /* a lost task */
  assert_int_equal(app_taskq_init(&s, &t_shape, t_find(SYNCQ_FAMILY_QUEUE, "ms"), NULL, 0, 1), SYNCQ_OK);
  void *item;
  assert_true(app_pool_take(&s.pool, &item, &s.errors));
  atomic_fetch_sub(&s.live, 1);
  app_taskq_worker(&s);
  assert_int_equal(app_taskq_check(&s, why, sizeof why), -1);
  app_taskq_destroy(&s);
}

static void test_taskq_bad_input(void **state) {
  (void)state;
  const syncq_algo *ms = t_find(SYNCQ_FAMILY_QUEUE, "ms"), *ttas = t_find(SYNCQ_FAMILY_LOCK, "ttas");
  app_taskq s;
  app_taskq_shape bad = t_shape;
  uint64_t sum, tasks;
  assert_int_equal(app_taskq_init(NULL, &t_shape, ms, NULL, 0, 1), SYNCQ_EINVAL);
  assert_int_equal(app_taskq_init(&s, NULL, ms, NULL, 0, 1), SYNCQ_EINVAL);
  assert_int_equal(app_taskq_init(&s, &t_shape, NULL, NULL, 0, 1), SYNCQ_EINVAL);
  assert_int_equal(app_taskq_init(&s, &t_shape, ms, ttas, 0, 1), SYNCQ_EINVAL);
  assert_int_equal(app_taskq_init(&s, &t_shape, NULL, ms, 0, 1), SYNCQ_EINVAL);
  assert_int_equal(app_taskq_init(&s, &t_shape, ms, NULL, 0, 0), SYNCQ_EINVAL);
  bad.max_level = APP_TASKQ_MAX_LEVEL + 1;
  assert_int_equal(app_taskq_init(&s, &bad, ms, NULL, 0, 1), SYNCQ_EINVAL);
  assert_int_equal(app_taskq_expected(&bad, &sum, &tasks), SYNCQ_EINVAL);
  bad = t_shape;
  bad.roots = 0;
  assert_int_equal(app_taskq_expected(&bad, &sum, &tasks), SYNCQ_EINVAL);
  bad = t_shape;
  bad.split_pct = 101;
  assert_int_equal(app_taskq_expected(&bad, &sum, &tasks), SYNCQ_EINVAL);
  assert_int_equal(app_taskq_expected(&t_shape, NULL, &tasks), SYNCQ_EINVAL);
  app_taskq_destroy(NULL);
}

int main(void) {
  test_register_peers();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_quicksort_every_queue_and_stack),
    cmocka_unit_test(test_quicksort_check_catches_wrong_output),
    cmocka_unit_test(test_quicksort_bad_input),
    cmocka_unit_test(test_held_karp_matches_brute_force),
    cmocka_unit_test(test_tsp_finds_the_optimum),
    cmocka_unit_test(test_tsp_check_catches_wrong_output),
    cmocka_unit_test(test_tsp_bad_input),
    cmocka_unit_test(test_lu_every_barrier_and_discipline),
    cmocka_unit_test(test_lu_check_catches_wrong_output),
    cmocka_unit_test(test_lu_bad_input),
    cmocka_unit_test(test_taskq_every_queue_stack_and_lock),
    cmocka_unit_test(test_taskq_check_catches_wrong_output),
    cmocka_unit_test(test_taskq_bad_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
