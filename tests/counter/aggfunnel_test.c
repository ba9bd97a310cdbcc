/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * aggfunnel_test.c — the aggregating funnel counter beyond the family
 * driver (tests/counter/counter_test.c): +1 adds from 8 threads through 1,
 * 2 and 8 aggregators return every value once, without gaps; mixed deltas
 * (funnelled, zero, negative, and larger than 2^32, which go to Main
 * directly) return intervals [old, old + delta) that tile the counter's
 * range exactly; bad inputs of the typed API.
 *
 * Fixed work on any machine: 8 threads, confined to 2 processing units
 * (test_plan.h), so delegates are preempted in mid-batch and members wait;
 * some runs set the library's test hook that makes every delegate yield
 * before it closes its batch (large batches) and counts the members.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include "test_plan.h"

#include "syncq/counter.h"
#include "syncq/counter/aggfunnel.h"
#include "syncq/platform.h"

#define THREADS 8
#define ADDS 40000
#define ADDS_WIDENED 5000 /* each batch costs its delegate a yield */
#define YIELD_EVERY 101   /* prime: yields land at varying points of batches */

/* The library's test hooks (src/counter/aggfunnel.c; not public symbols). */
extern _Atomic(bool) syncq_aggfunnel_test_widen__;
extern _Atomic(uint64_t) syncq_aggfunnel_test_members__;

typedef struct arg {
  syncq_counter_aggfunnel *c;
  int id;
  int n;        /* adds */
  bool mixed;   /* deltas 1..5, with a direct add now and then */
  int64_t *old; /* [n] */
  int64_t *delta;
} arg;

/* The mixed deltas: mostly funnelled (1..5), sometimes 2^33 (direct). */
static int64_t delta_at(int id, int i) {
  if ((i + id) % 1000 == 0) return INT64_C(1) << 33;
  return 1 + (i * 7 + id) % 5;
}

static void *adder(void *p) {
  arg *a = p;
  for (int i = 0; i < a->n; i++) {
    int64_t d = a->mixed ? delta_at(a->id, i) : 1;
    int64_t old = -1;
    if (syncq_counter_aggfunnel_fetch_add(a->c, d, &old) != SYNCQ_OK) old = -1;
    a->old[i] = old;
    a->delta[i] = d;
    if (a->mixed && i % 50 == 7) { /* a zero add goes to Main directly and must not disturb the batches */
      int64_t v;
      (void)syncq_counter_aggfunnel_fetch_add(a->c, 0, &v);
    }
    if (i % YIELD_EVERY == 0) syncq_yield();
  }
  return NULL;
}

typedef struct span {
  int64_t from, len;
} span;

static int cmp_span(const void *x, const void *y) {
  int64_t a = ((const span *)x)->from, b = ((const span *)y)->from;
  return (a > b) - (a < b);
}

/* Run THREADS threads on a counter with naggs aggregators; the returned
 * intervals must tile [0, final) and each thread's must increase. */
static void run(unsigned naggs, bool mixed, bool widen) {
  syncq_counter_aggfunnel *c = syncq_alloc_aligned(sizeof *c, _Alignof(syncq_counter_aggfunnel));
  assert_non_null(c);
  assert_int_equal(syncq_counter_aggfunnel_init_aggs(c, 0, naggs), SYNCQ_OK);
  int n = widen ? ADDS_WIDENED : ADDS;
  size_t total = (size_t)THREADS * (size_t)n;
  int64_t *old = malloc(total * sizeof *old), *delta = malloc(total * sizeof *delta);
  span *s = malloc(total * sizeof *s);
  assert_non_null(old);
  assert_non_null(delta);
  assert_non_null(s);
  pthread_t t[THREADS];
  arg args[THREADS];
  atomic_store(&syncq_aggfunnel_test_members__, 0);
  atomic_store(&syncq_aggfunnel_test_widen__, widen);
  for (int i = 0; i < THREADS; i++) {
    args[i] = (arg){c, i, n, mixed, old + (size_t)i * (size_t)n, delta + (size_t)i * (size_t)n};
    assert_int_equal(pthread_create(&t[i], NULL, adder, &args[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  atomic_store(&syncq_aggfunnel_test_widen__, false);
  if (widen) assert_true(atomic_load(&syncq_aggfunnel_test_members__) > 0); /* batches of several formed */
  int64_t sum = 0;
  for (size_t k = 0; k < total; k++) {
    s[k] = (span){old[k], delta[k]};
    sum += delta[k];
    if (k % (size_t)n != 0) assert_true(old[k] > old[k - 1]); /* a thread's own adds are ordered */
  }
  int64_t final;
  assert_int_equal(syncq_counter_aggfunnel_load(c, &final), SYNCQ_OK);
  assert_int_equal(final, sum);
  qsort(s, total, sizeof *s, cmp_span);
  int64_t next = 0;
  for (size_t k = 0; k < total; k++) {
    if (s[k].from != next)
      fail_msg("%u aggregators: an add returned %lld where %lld was due (lost, duplicated or overlapping)", naggs,
               (long long)s[k].from, (long long)next);
    next += s[k].len;
  }
  assert_int_equal(next, sum);
  assert_int_equal(syncq_counter_aggfunnel_destroy(c), SYNCQ_OK);
  free(c);
  free(old);
  free(delta);
  free(s);
}

static void test_unit_adds_unique_and_dense(void **state) {
  (void)state;
  run(1, false, false); /* every thread on one aggregator: the largest batches */
  run(1, false, true);
  run(2, false, true);
  run(SYNCQ_COUNTER_AGGFUNNEL_AGGS_MAX, false, false); /* one thread per aggregator */
}

static void test_mixed_deltas_tile(void **state) {
  (void)state;
  run(1, true, true);
  run(SYNCQ_COUNTER_AGGFUNNEL_AGGS_DEFAULT, true, false);
}

static void test_sequential(void **state) {
  (void)state;
  syncq_counter_aggfunnel *c = syncq_alloc_aligned(sizeof *c, _Alignof(syncq_counter_aggfunnel));
  assert_non_null(c);
  int64_t v;
  assert_int_equal(syncq_counter_aggfunnel_init(c, 100), SYNCQ_OK);
  for (int i = 0; i < 3 * SYNCQ_COUNTER_AGGFUNNEL_LOG; i++) { /* past every batch record */
    assert_int_equal(syncq_counter_aggfunnel_fetch_add(c, 2, &v), SYNCQ_OK);
    assert_int_equal(v, 100 + 2 * i);
  }
  assert_int_equal(syncq_counter_aggfunnel_fetch_add(c, -50, &v), SYNCQ_OK); /* direct */
  assert_int_equal(v, 100 + 6 * SYNCQ_COUNTER_AGGFUNNEL_LOG);
  assert_int_equal(syncq_counter_aggfunnel_fetch_add(c, INT64_C(1) << 32, NULL), SYNCQ_OK); /* the largest funnelled */
  assert_int_equal(syncq_counter_aggfunnel_load(c, &v), SYNCQ_OK);
  assert_int_equal(v, 50 + 6 * SYNCQ_COUNTER_AGGFUNNEL_LOG + (INT64_C(1) << 32));
  assert_int_equal(syncq_counter_aggfunnel_destroy(c), SYNCQ_OK);
  free(c);
}

static void test_bad_inputs(void **state) {
  (void)state;
  syncq_counter_aggfunnel *c = syncq_alloc_aligned(2 * sizeof *c, _Alignof(syncq_counter_aggfunnel));
  assert_non_null(c);
  int64_t v;
  assert_int_equal(syncq_counter_aggfunnel_init(NULL, 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_aggfunnel_init_aggs(NULL, 0, 1), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_aggfunnel_init_aggs(c, 0, 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_aggfunnel_init_aggs(c, 0, SYNCQ_COUNTER_AGGFUNNEL_AGGS_MAX + 1), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_aggfunnel_init((syncq_counter_aggfunnel *)((char *)c + 8), 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_aggfunnel_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_aggfunnel_fetch_add(NULL, 1, &v), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_aggfunnel_load(NULL, &v), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_aggfunnel_init(c, 0), SYNCQ_OK);
  assert_int_equal(syncq_counter_aggfunnel_load(c, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_aggfunnel_destroy(c), SYNCQ_OK);
  /* storage init never made: zeroed (no aggregator to pick: a division by
   * zero before the check) or with more aggregators than it has room for */
  memset(c, 0, sizeof *c);
  assert_int_equal(syncq_counter_aggfunnel_fetch_add(c, 1, &v), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_aggfunnel_fetch_add(c, -1, &v), SYNCQ_EINVAL);
  c->naggs = SYNCQ_COUNTER_AGGFUNNEL_AGGS_MAX + 1;
  assert_int_equal(syncq_counter_aggfunnel_fetch_add(c, 1, &v), SYNCQ_EINVAL);
  free(c);
}

int main(void) {
  test_plan_confine();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_unit_adds_unique_and_dense),
    cmocka_unit_test(test_mixed_deltas_tile),
    cmocka_unit_test(test_sequential),
    cmocka_unit_test(test_bad_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
