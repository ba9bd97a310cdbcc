/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * counter_test.c — the counter validation driver: every registered counter
 * algorithm, through its ops table, the generic API and (for the built-in
 * ones) the typed API.
 *
 * Linearizability of fetch_add, checked exactly: with T threads each adding
 * 1 M times, the values returned as "old" must be exactly 0 .. T*M-1, each
 * once (a lost or duplicated update shows up as a repeat or a gap), and
 * the final value T*M. Threads are 8x the processing units, so holders are
 * preempted in mid-operation; some iterations yield to widen race windows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_plan.h"

#include "syncq/counter.h"
#include "syncq/counter/cas.h"
#include "syncq/counter/faa.h"
#include "syncq/counter/mutex.h"
#include "syncq/platform.h"
#include "syncq/stats.h"

#define OVERSUBSCRIPTION TEST_PLAN_OVERSUBSCRIPTION
#define ADDS_PER_THREAD 20000
#define YIELD_EVERY 97 /* prime: yields land at varying points */

/* 8x the PUs the process is confined to (test_plan.h): 16 threads on 2
 * PUs on any machine with 2 or more. */
static int n_threads(void) { return test_plan_oversubscribed(OVERSUBSCRIPTION); }

typedef struct run {
  const syncq_counter_ops *ops;
  void *c;
  int64_t *olds; /* [thread][i] */
  int id;
  int per_thread;
  syncq_stats stats;
} run;

static void *adder(void *p) {
  run *r = p;
  syncq_stats_reset();
  for (int i = 0; i < r->per_thread; i++) {
    int64_t old;
    if (r->ops->fetch_add(r->c, 1, &old) != SYNCQ_OK) old = -1;
    r->olds[(size_t)r->id * (size_t)r->per_thread + (size_t)i] = old;
    if (i % YIELD_EVERY == 0) syncq_yield();
  }
  r->stats = *syncq_stats_self();
  return NULL;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static void *new_storage(const syncq_counter_ops *ops) { return syncq_alloc_aligned(ops->size, ops->align); }

static void check_linearizable_adds(const syncq_algo *a) {
  const syncq_counter_ops *ops = a->ops;
  int t = n_threads();
  size_t total = (size_t)t * ADDS_PER_THREAD;
  void *c = new_storage(ops);
  int64_t *olds = malloc(total * sizeof *olds);
  run *runs = calloc((size_t)t, sizeof *runs);
  pthread_t *tids = calloc((size_t)t, sizeof *tids);
  assert_non_null(c);
  assert_non_null(olds);
  assert_non_null(runs);
  assert_non_null(tids);
  assert_int_equal(ops->init(c, 0), SYNCQ_OK);
  for (int i = 0; i < t; i++) {
    runs[i] = (run){ops, c, olds, i, ADDS_PER_THREAD, {0}};
    assert_int_equal(pthread_create(&tids[i], NULL, adder, &runs[i]), 0);
  }
  syncq_stats sum = {0};
  for (int i = 0; i < t; i++) {
    pthread_join(tids[i], NULL);
    syncq_stats_add(&sum, &runs[i].stats);
  }
  int64_t final;
  assert_int_equal(ops->load(c, &final), SYNCQ_OK);
  assert_int_equal(final, (int64_t)total);
  /* per thread, returned values increase (a thread's own adds are ordered) */
  for (int i = 0; i < t; i++)
    for (int k = 1; k < ADDS_PER_THREAD; k++)
      assert_true(olds[(size_t)i * ADDS_PER_THREAD + (size_t)k] > olds[(size_t)i * ADDS_PER_THREAD + (size_t)k - 1]);
  qsort(olds, total, sizeof *olds, cmp_i64);
  for (size_t i = 0; i < total; i++) {
    if (olds[i] != (int64_t)i)
      fail_msg("%s: fetch_add returned %lld where %zu was due (lost or duplicated update)", a->name, (long long)olds[i],
               i);
  }
  /* a CAS-based counter that claims CAS attempts must account for them */
  if (syncq_stats_enabled() && sum.cas_attempts > 0) assert_true(sum.cas_attempts >= total);
  assert_int_equal(ops->destroy(c), SYNCQ_OK);
  free(c);
  free(olds);
  free(runs);
  free(tids);
}

static void check_sequential_semantics(const syncq_algo *a) {
  const syncq_counter_ops *ops = a->ops;
  void *c = new_storage(ops);
  assert_non_null(c);
  int64_t v, old;
  assert_int_equal(ops->init(c, -5), SYNCQ_OK);
  assert_int_equal(ops->load(c, &v), SYNCQ_OK);
  assert_int_equal(v, -5);
  assert_int_equal(ops->fetch_add(c, 7, &old), SYNCQ_OK);
  assert_int_equal(old, -5);
  assert_int_equal(ops->fetch_add(c, -10, NULL), SYNCQ_OK); /* old is optional */
  assert_int_equal(ops->load(c, &v), SYNCQ_OK);
  assert_int_equal(v, -8);
  assert_int_equal(ops->destroy(c), SYNCQ_OK);
  /* wraps modulo 2^64 instead of overflowing */
  assert_int_equal(ops->init(c, INT64_MAX), SYNCQ_OK);
  assert_int_equal(ops->fetch_add(c, 1, &old), SYNCQ_OK);
  assert_int_equal(ops->load(c, &v), SYNCQ_OK);
  assert_true(v == INT64_MIN);
  assert_int_equal(ops->destroy(c), SYNCQ_OK);
  free(c);
}

static void check_bad_inputs(const syncq_algo *a) {
  const syncq_counter_ops *ops = a->ops;
  void *c = new_storage(ops);
  int64_t v;
  assert_int_equal(ops->init(NULL, 0), SYNCQ_EINVAL);
  assert_int_equal(ops->destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(ops->fetch_add(NULL, 1, &v), SYNCQ_EINVAL);
  assert_int_equal(ops->load(NULL, &v), SYNCQ_EINVAL);
  assert_int_equal(ops->init(c, 0), SYNCQ_OK);
  assert_int_equal(ops->load(c, NULL), SYNCQ_EINVAL);
  assert_int_equal(ops->destroy(c), SYNCQ_OK);
  free(c);
}

static void test_every_registered_counter(void **state) {
  (void)state;
  const syncq_algo *algos[SYNCQ_REGISTRY_MAX];
  int n = syncq_registry_list(SYNCQ_FAMILY_COUNTER, algos, SYNCQ_REGISTRY_MAX);
  assert_true(n >= 4);
  for (int i = 0; i < n; i++) {
    print_message("counter %s: %d threads x %d adds\n", algos[i]->name, n_threads(), ADDS_PER_THREAD);
    check_sequential_semantics(algos[i]);
    check_bad_inputs(algos[i]);
    check_linearizable_adds(algos[i]);
  }
}

static void test_generic_api(void **state) {
  (void)state;
  syncq_counter *c = NULL;
  int64_t v, old;
  assert_int_equal(syncq_counter_create("cas", 10, &c), SYNCQ_OK);
  assert_string_equal(syncq_counter_algo(c)->name, "cas");
  assert_int_equal(syncq_counter_fetch_add(c, 5, &old), SYNCQ_OK);
  assert_int_equal(old, 10);
  assert_int_equal(syncq_counter_load(c, &v), SYNCQ_OK);
  assert_int_equal(v, 15);
  assert_int_equal(syncq_counter_destroy(c), SYNCQ_OK);
  /* bad inputs */
  assert_int_equal(syncq_counter_create("no-such-counter", 0, &c), SYNCQ_ENOENT);
  assert_int_equal(syncq_counter_create(NULL, 0, &c), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_create("faa", 0, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_fetch_add(NULL, 1, &old), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_load(NULL, &v), SYNCQ_EINVAL);
  assert_null(syncq_counter_algo(NULL));
  assert_int_equal(syncq_counter_create("faa", 0, &c), SYNCQ_OK);
  assert_int_equal(syncq_counter_load(c, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_destroy(c), SYNCQ_OK);
}

static void test_typed_apis(void **state) {
  (void)state;
  syncq_counter_faa f;
  syncq_counter_cas c;
  syncq_counter_mutex m;
  int64_t v;
  assert_int_equal(syncq_counter_faa_init(&f, 1), SYNCQ_OK);
  assert_int_equal(syncq_counter_faa_fetch_add(&f, 2, &v), SYNCQ_OK);
  assert_int_equal(v, 1);
  assert_int_equal(syncq_counter_cas_init(&c, 1), SYNCQ_OK);
  assert_int_equal(syncq_counter_cas_backoff_fetch_add(&c, 2, &v), SYNCQ_OK);
  assert_int_equal(syncq_counter_cas_load(&c, &v), SYNCQ_OK);
  assert_int_equal(v, 3);
  assert_int_equal(syncq_counter_mutex_init(&m, 1), SYNCQ_OK);
  assert_int_equal(syncq_counter_mutex_fetch_add(&m, 2, NULL), SYNCQ_OK);
  assert_int_equal(syncq_counter_mutex_load(&m, &v), SYNCQ_OK);
  assert_int_equal(v, 3);
  assert_int_equal(syncq_counter_mutex_destroy(&m), SYNCQ_OK);
  assert_int_equal(syncq_counter_faa_init(NULL, 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_cas_backoff_fetch_add(NULL, 1, &v), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_mutex_init(NULL, 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_mutex_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_mutex_fetch_add(NULL, 1, &v), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_mutex_load(&m, NULL), SYNCQ_EINVAL);
}

static void test_cas_counts_failures_under_contention(void **state) {
  (void)state;
  /* Every CAS attempt is counted, and attempts = successes + failures. */
  const syncq_algo *a;
  assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_COUNTER, "cas", &a), SYNCQ_OK);
  if (!syncq_stats_enabled()) skip();
  syncq_counter_cas c;
  syncq_counter_cas_init(&c, 0);
  syncq_stats_reset();
  for (int i = 0; i < 100; i++) syncq_counter_cas_fetch_add(&c, 1, NULL);
  assert_int_equal(syncq_stats_self()->cas_attempts - syncq_stats_self()->cas_failures, 100);
}

int main(void) {
  test_plan_confine();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_every_registered_counter),
    cmocka_unit_test(test_generic_api),
    cmocka_unit_test(test_typed_apis),
    cmocka_unit_test(test_cas_counts_failures_under_contention),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
