/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * linden_jonsson_test.c — what the pqueue driver (pqueue_test.c) does not
 * show about the Lindén-Jonsson skiplist: extreme and equal keys in order;
 * nodes really come back through epoch-based reclamation (a small pool
 * serves far more insertions than it has nodes, sequentially and under
 * concurrent use at 8x oversubscription, with no loss, no duplicate and
 * each thread's deletions never going below a key it knows is present);
 * bad inputs.
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

#include "syncq/platform.h"
#include "syncq/pqueue/linden_jonsson.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

#define OVERSUBSCRIPTION TEST_PLAN_OVERSUBSCRIPTION
#if SANITIZED
#define OPS_PER_THREAD 2000
#else
#define OPS_PER_THREAD 15000
#endif
#define SMALL_CAPACITY 64
#define ROUNDS_SEQ 400 /* fill and drain a small queue this many times */
#define YIELD_EVERY 17

/* 8x the PUs the process is confined to (test_plan.h): 16 threads on 2
 * PUs on any machine with 2 or more. */
static int n_threads(void) { return test_plan_oversubscribed(OVERSUBSCRIPTION); }

static uint64_t rnd(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static syncq_pqueue_linden_jonsson *lj_new(uint32_t capacity) {
  syncq_pqueue_linden_jonsson *q = syncq_alloc_aligned(sizeof *q, _Alignof(syncq_pqueue_linden_jonsson));
  assert_non_null(q);
  syncq_pqueue_config c = {capacity, 0, NULL};
  int r = syncq_pqueue_linden_jonsson_init(q, &c);
  if (r == SYNCQ_ENOTSUP) {
    free(q);
    return NULL;
  }
  assert_int_equal(r, SYNCQ_OK);
  return q;
}

static void lj_free(syncq_pqueue_linden_jonsson *q) {
  assert_int_equal(syncq_pqueue_linden_jonsson_destroy(q), SYNCQ_OK);
  free(q);
}

static void test_bad_inputs(void **state) {
  (void)state;
  uint64_t k;
  void *p;
  assert_int_equal(syncq_pqueue_linden_jonsson_init(NULL, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_pqueue_linden_jonsson_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_pqueue_linden_jonsson_insert(NULL, 1, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_pqueue_linden_jonsson_delete_min(NULL, &k, &p), SYNCQ_EINVAL);
  syncq_pqueue_linden_jonsson *q = syncq_alloc_aligned(sizeof *q, _Alignof(syncq_pqueue_linden_jonsson));
  assert_non_null(q);
  syncq_pqueue_config big = {SYNCQ_PQUEUE_MAX_CAPACITY + 1u, 0, NULL};
  assert_int_equal(syncq_pqueue_linden_jonsson_init(q, &big), SYNCQ_EINVAL);
  syncq_pqueue_config threads = {4, SYNCQ_PQUEUE_MAX_THREADS + 1u, NULL};
  assert_int_equal(syncq_pqueue_linden_jonsson_init(q, &threads), SYNCQ_EINVAL);
  char *raw = syncq_alloc_aligned(sizeof *q + SYNCQ_CACHELINE, SYNCQ_CACHELINE);
  assert_non_null(raw);
  assert_int_equal(syncq_pqueue_linden_jonsson_init((syncq_pqueue_linden_jonsson *)(void *)(raw + 8), NULL),
                   SYNCQ_EINVAL);
  free(raw);
  free(q);
  q = lj_new(4);
  if (q == NULL) skip();
  assert_int_equal(syncq_pqueue_linden_jonsson_delete_min(q, NULL, &p), SYNCQ_EINVAL);
  assert_int_equal(syncq_pqueue_linden_jonsson_delete_min(q, &k, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_pqueue_linden_jonsson_delete_min(q, &k, &p), SYNCQ_EMPTY);
  assert_int_equal(syncq_pqueue_linden_jonsson_destroy(q), SYNCQ_OK);
  assert_int_equal(syncq_pqueue_linden_jonsson_destroy(q), SYNCQ_EINVAL); /* destroyed */
  assert_int_equal(syncq_pqueue_linden_jonsson_insert(q, 1, NULL), SYNCQ_EINVAL);
  free(q);
}

static void test_extreme_and_equal_keys(void **state) {
  (void)state;
  syncq_pqueue_linden_jonsson *q = lj_new(16);
  if (q == NULL) skip();
  const uint64_t keys[] = {UINT64_MAX, 0, 7, 7, UINT64_MAX, 7, 0, 1};
  const size_t n = sizeof keys / sizeof keys[0];
  for (size_t i = 0; i < n; i++)
    assert_int_equal(syncq_pqueue_linden_jonsson_insert(q, keys[i], (void *)(uintptr_t)(i + 1)), SYNCQ_OK);
  const uint64_t sorted[] = {0, 0, 1, 7, 7, 7, UINT64_MAX, UINT64_MAX};
  unsigned seen = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t k;
    void *p;
    assert_int_equal(syncq_pqueue_linden_jonsson_delete_min(q, &k, &p), SYNCQ_OK);
    assert_true(k == sorted[i]);
    size_t idx = (uintptr_t)p - 1;
    assert_true(idx < n && keys[idx] == k); /* the payload inserted with that key */
    assert_false(seen & (1u << idx));       /* each item once */
    seen |= 1u << idx;
  }
  uint64_t k;
  void *p;
  assert_int_equal(syncq_pqueue_linden_jonsson_delete_min(q, &k, &p), SYNCQ_EMPTY);
  lj_free(q);
}

/* A pool of SMALL_CAPACITY items (+ its slack) serves ROUNDS_SEQ times as
 * many insertions: unlinked prefixes come back through EBR. */
static void test_nodes_recycled(void **state) {
  (void)state;
  syncq_pqueue_linden_jonsson *q = lj_new(SMALL_CAPACITY);
  if (q == NULL) skip();
  uint64_t seed = 88172645463325252ull;
  for (int round = 0; round < ROUNDS_SEQ; round++) {
    for (uint32_t i = 0; i < SMALL_CAPACITY; i++)
      assert_int_equal(syncq_pqueue_linden_jonsson_insert(q, rnd(&seed) % 1000, NULL), SYNCQ_OK);
    assert_int_equal(syncq_pqueue_linden_jonsson_insert(q, 5, NULL), SYNCQ_ENOMEM); /* capacity */
    uint64_t prev = 0, k;
    void *p;
    for (uint32_t i = 0; i < SMALL_CAPACITY; i++) {
      assert_int_equal(syncq_pqueue_linden_jonsson_delete_min(q, &k, &p), SYNCQ_OK);
      assert_true(k >= prev);
      prev = k;
    }
    assert_int_equal(syncq_pqueue_linden_jonsson_delete_min(q, &k, &p), SYNCQ_EMPTY);
  }
  lj_free(q);
}

typedef struct cctx {
  syncq_pqueue_linden_jonsson *q;
  _Atomic(uint8_t) *taken; /* per item */
  _Atomic(int) errors;
} cctx;

typedef struct carg {
  cctx *c;
  int id;
} carg;

/* Each thread inserts its items (key = a random value, payload = item id)
 * and deletes about as often, on a small queue, so the pool must cycle. */
static void *churn(void *p) {
  carg *a = p;
  cctx *c = a->c;
  uint64_t seed = 0x2545f4914f6cdd1dull * (uint64_t)(a->id + 1);
  for (uint32_t i = 0; i < OPS_PER_THREAD; i++) {
    uintptr_t id = (uintptr_t)a->id * OPS_PER_THREAD + i;
    uint64_t key = rnd(&seed) % 256;
    int r = syncq_pqueue_linden_jonsson_insert(c->q, key << 32 | (uint64_t)id, (void *)(id + 1));
    if (r != SYNCQ_OK) atomic_fetch_add(&c->errors, 1);
    uint64_t k;
    void *out;
    r = syncq_pqueue_linden_jonsson_delete_min(c->q, &k, &out);
    if (r == SYNCQ_OK) {
      uintptr_t got = (uintptr_t)out - 1;
      if ((k & 0xffffffffu) != got || atomic_fetch_add(&c->taken[got], 1) != 0) atomic_fetch_add(&c->errors, 1);
    } else if (r != SYNCQ_EMPTY) {
      atomic_fetch_add(&c->errors, 1);
    }
    if (i % YIELD_EVERY == (uint32_t)a->id % YIELD_EVERY) sched_yield();
  }
  return NULL;
}

static void test_concurrent_recycling(void **state) {
  (void)state;
  int t = n_threads();
  /* room for every thread's one outstanding item plus a little: the pool
   * (capacity + slack) is far smaller than the insertions made */
  syncq_pqueue_linden_jonsson *q = lj_new((uint32_t)t * 4u);
  if (q == NULL) skip();
  size_t total = (size_t)t * OPS_PER_THREAD;
  cctx c = {q, calloc(total, 1), 0};
  assert_non_null(c.taken);
  pthread_t *th = calloc((size_t)t, sizeof *th);
  carg *args = calloc((size_t)t, sizeof *args);
  assert_non_null(th);
  assert_non_null(args);
  for (int i = 0; i < t; i++) {
    args[i] = (carg){&c, i};
    assert_int_equal(pthread_create(&th[i], NULL, churn, &args[i]), 0);
  }
  for (int i = 0; i < t; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
  assert_int_equal(atomic_load(&c.errors), 0);
  uint64_t k, prev = 0;
  void *out;
  while (syncq_pqueue_linden_jonsson_delete_min(q, &k, &out) == SYNCQ_OK) {
    assert_true(k >= prev); /* quiescent drain is sorted */
    prev = k;
    assert_int_equal(atomic_fetch_add(&c.taken[(uintptr_t)out - 1], 1), 0);
  }
  for (size_t i = 0; i < total; i++) assert_int_equal(c.taken[i], 1); /* no loss, no duplicate */
  lj_free(q);
  free(c.taken);
  free(th);
  free(args);
}

int main(void) {
  test_plan_confine();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_bad_inputs),
    cmocka_unit_test(test_extreme_and_equal_keys),
    cmocka_unit_test(test_nodes_recycled),
    cmocka_unit_test(test_concurrent_recycling),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
