/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * linked_queue_test.c — what the validation driver (queue_test.c) and the
 * linearizability runs do not show about the PLJ and Valois queues.
 *
 * Valois: on a quiescent queue every reference count equals the number of
 * links to its node and every free node holds no reference (counts return
 * to zero), after sequential use and after a concurrent stress at 8x
 * oversubscription; nodes are reused (the node count stays put over many
 * enqueue/dequeue pairs); the free list grows when it runs dry; bad inputs.
 * PLJ: FIFO across block growth, concurrent stress with no loss and no
 * duplicate, bad inputs.
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
#include "syncq/pr.h"
#include "syncq/queue.h"
#include "syncq/queue/plj.h"
#include "syncq/queue/valois.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

#define OVERSUBSCRIPTION TEST_PLAN_OVERSUBSCRIPTION
#if SANITIZED
#define OPS_PER_THREAD 3000
#else
#define OPS_PER_THREAD 20000
#endif
#define YIELD_EVERY 13     /* prime: yields land at varying points */
#define REUSE_PAIRS 100000 /* enqueue/dequeue pairs of the reuse test */
#define REUSE_DEPTH 10     /* items kept in the queue during it */
#define GROW_ITEMS 1000    /* more than the nodes made at init */

static void *item_of(uintptr_t i) { return (void *)(i << 4 | 8); } /* non-NULL */
static uintptr_t index_of(void *p) { return (uintptr_t)p >> 4; }

/* 8x the PUs the process is confined to (test_plan.h): 16 threads on 2
 * PUs on any machine with 2 or more. */
static int n_threads(void) { return test_plan_oversubscribed(OVERSUBSCRIPTION); }

static void assert_audit_clean(syncq_queue_valois *q, size_t items) {
  syncq_queue_valois_audit_result r;
  assert_int_equal(syncq_queue_valois_audit(q, &r), SYNCQ_OK);
  assert_int_equal(r.bad_counts, 0);
  assert_int_equal(r.live + r.free, r.nodes); /* nothing leaked, nothing counted twice */
  assert_int_equal(r.items, items);
}

static syncq_queue_valois *valois_new(size_t capacity) {
  syncq_queue_valois *q = syncq_alloc_aligned(sizeof *q, _Alignof(syncq_queue_valois));
  assert_non_null(q);
  assert_int_equal(syncq_queue_valois_init(q, capacity), SYNCQ_OK);
  return q;
}

static void valois_free(syncq_queue_valois *q) {
  assert_int_equal(syncq_queue_valois_destroy(q), SYNCQ_OK);
  free(q);
}

static void test_valois_bad_inputs(void **state) {
  (void)state;
  void *out;
  syncq_queue_valois_audit_result r;
  assert_int_equal(syncq_queue_valois_init(NULL, 4), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_valois_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_valois_enqueue(NULL, item_of(1)), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_valois_dequeue(NULL, &out), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_valois_audit(NULL, &r), SYNCQ_EINVAL);
  char *raw = syncq_alloc_aligned(sizeof(syncq_queue_valois) + SYNCQ_CACHELINE, SYNCQ_CACHELINE);
  assert_non_null(raw);
  assert_int_equal(syncq_queue_valois_init((syncq_queue_valois *)(void *)(raw + 8), 4), SYNCQ_EINVAL);
  free(raw);
  syncq_queue_valois *q = valois_new(4);
  assert_int_equal(syncq_queue_valois_init(q, SIZE_MAX), SYNCQ_EINVAL); /* absurd capacity */
  assert_int_equal(syncq_queue_valois_enqueue(q, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_valois_dequeue(q, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_valois_audit(q, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_valois_dequeue(q, &out), SYNCQ_EMPTY);
  assert_audit_clean(q, 0);
  valois_free(q);
  /* a destroyed queue is refused, not used */
  syncq_queue_valois *d = valois_new(4);
  assert_int_equal(syncq_queue_valois_destroy(d), SYNCQ_OK);
  assert_int_equal(syncq_queue_valois_destroy(d), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_valois_enqueue(d, item_of(1)), SYNCQ_EINVAL);
  free(d);
}

static void test_valois_counts_sequential(void **state) {
  (void)state;
  syncq_queue_valois *q = valois_new(2);
  void *out;
  for (uintptr_t i = 1; i <= GROW_ITEMS; i++) {
    assert_int_equal(syncq_queue_valois_enqueue(q, item_of(i)), SYNCQ_OK);
    if (i % 97 == 0) assert_audit_clean(q, (size_t)i);
  }
  syncq_queue_valois_audit_result r;
  assert_int_equal(syncq_queue_valois_audit(q, &r), SYNCQ_OK);
  assert_true(r.nodes > GROW_ITEMS); /* the free list grew in blocks */
  for (uintptr_t i = 1; i <= GROW_ITEMS; i++) {
    assert_int_equal(syncq_queue_valois_dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, item_of(i));
  }
  assert_int_equal(syncq_queue_valois_dequeue(q, &out), SYNCQ_EMPTY);
  /* empty: only the dummy is live, with Head and Tail on it; every other
   * node is back on the free list with no reference */
  assert_int_equal(syncq_queue_valois_audit(q, &r), SYNCQ_OK);
  assert_int_equal(r.bad_counts, 0);
  assert_int_equal(r.live, 1);
  assert_int_equal(r.free, r.nodes - 1);
  valois_free(q);
}

static void test_valois_nodes_reused(void **state) {
  (void)state;
  syncq_queue_valois *q = valois_new(0);
  syncq_queue_valois_audit_result before, after;
  assert_int_equal(syncq_queue_valois_audit(q, &before), SYNCQ_OK);
  void *out;
  for (uintptr_t i = 1; i <= REUSE_DEPTH; i++) assert_int_equal(syncq_queue_valois_enqueue(q, item_of(i)), SYNCQ_OK);
  for (uintptr_t i = REUSE_DEPTH + 1; i <= REUSE_PAIRS; i++) {
    assert_int_equal(syncq_queue_valois_enqueue(q, item_of(i)), SYNCQ_OK);
    assert_int_equal(syncq_queue_valois_dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, item_of(i - REUSE_DEPTH));
  }
  assert_int_equal(syncq_queue_valois_audit(q, &after), SYNCQ_OK);
  assert_int_equal(after.nodes, before.nodes); /* no block added: nodes came back */
  assert_int_equal(after.bad_counts, 0);
  assert_int_equal(after.items, REUSE_DEPTH);
  valois_free(q);
}

/* ------------------------------------------------------------ concurrent */

typedef struct stress_ctx {
  const syncq_queue_ops *ops;
  void *q;
  int id, threads;
  _Atomic(uint8_t) *seen; /* one per item: dequeued how many times */
  _Atomic(long) dequeued;
} stress_ctx;

typedef struct stress_arg {
  stress_ctx *ctx;
  int id;
} stress_arg;

/* Each thread enqueues its own items and dequeues whatever it finds,
 * alternating, so the queue is often near empty (Tail lagging, Head
 * passing it) and often not. */
static void *stress_thread(void *p) {
  stress_arg *a = p;
  stress_ctx *c = a->ctx;
  for (uintptr_t k = 0; k < OPS_PER_THREAD; k++) {
    uintptr_t idx = (uintptr_t)a->id * OPS_PER_THREAD + k;
    if (c->ops->enqueue(c->q, item_of(idx + 1)) != SYNCQ_OK) return (void *)1;
    void *out;
    int r = c->ops->dequeue(c->q, &out);
    if (r == SYNCQ_OK) {
      uintptr_t got = index_of(out) - 1;
      if (got >= (uintptr_t)c->threads * OPS_PER_THREAD) return (void *)2;
      atomic_fetch_add(&c->seen[got], 1);
      atomic_fetch_add(&c->dequeued, 1);
    } else if (r != SYNCQ_EMPTY) {
      return (void *)3;
    }
    if (k % YIELD_EVERY == (uintptr_t)a->id % YIELD_EVERY) sched_yield();
  }
  return NULL;
}

static void run_stress(const char *name, void *q) {
  const syncq_algo *algo;
  assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_QUEUE, name, &algo), SYNCQ_OK);
  int t = n_threads();
  size_t total = (size_t)t * OPS_PER_THREAD;
  stress_ctx c = {algo->ops, q, 0, t, calloc(total, 1), 0};
  assert_non_null(c.seen);
  pthread_t *th = calloc((size_t)t, sizeof *th);
  stress_arg *args = calloc((size_t)t, sizeof *args);
  assert_non_null(th);
  assert_non_null(args);
  for (int i = 0; i < t; i++) {
    args[i] = (stress_arg){&c, i};
    assert_int_equal(pthread_create(&th[i], NULL, stress_thread, &args[i]), 0);
  }
  for (int i = 0; i < t; i++) {
    void *ret;
    assert_int_equal(pthread_join(th[i], &ret), 0);
    assert_null(ret);
  }
  void *out;
  int r;
  while ((r = c.ops->dequeue(q, &out)) == SYNCQ_OK) {
    atomic_fetch_add(&c.seen[index_of(out) - 1], 1);
    c.dequeued++;
  }
  assert_int_equal(r, SYNCQ_EMPTY);
  assert_int_equal(c.dequeued, (long)total);
  for (size_t i = 0; i < total; i++) assert_int_equal(c.seen[i], 1); /* no loss, no duplicate */
  free(th);
  free(args);
  free(c.seen);
}

static void test_valois_counts_after_stress(void **state) {
  (void)state;
  syncq_queue_valois *q = valois_new(16);
  run_stress("valois", q);
  /* quiescent and drained: every count is back to what the links say */
  syncq_queue_valois_audit_result r;
  assert_int_equal(syncq_queue_valois_audit(q, &r), SYNCQ_OK);
  assert_int_equal(r.bad_counts, 0);
  assert_int_equal(r.items, 0);
  assert_int_equal(r.live, 1);
  assert_int_equal(r.free, r.nodes - 1);
  valois_free(q);
}

/* ------------------------------------------------------------ PLJ */

static syncq_queue_plj *plj_new(size_t capacity, int *status) {
  syncq_queue_plj *q = syncq_alloc_aligned(sizeof *q, _Alignof(syncq_queue_plj));
  assert_non_null(q);
  *status = syncq_queue_plj_init(q, capacity);
  return q;
}

static void test_plj_bad_inputs(void **state) {
  (void)state;
  void *out;
  assert_int_equal(syncq_queue_plj_init(NULL, 4), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_plj_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_plj_enqueue(NULL, item_of(1)), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_plj_dequeue(NULL, &out), SYNCQ_EINVAL);
  char *raw = syncq_alloc_aligned(sizeof(syncq_queue_plj) + SYNCQ_CACHELINE, SYNCQ_CACHELINE);
  assert_non_null(raw);
  assert_int_equal(syncq_queue_plj_init((syncq_queue_plj *)(void *)(raw + 8), 4), SYNCQ_EINVAL);
  free(raw);
  int st;
  syncq_queue_plj *q = plj_new(4, &st);
  if (st == SYNCQ_ENOTSUP) { /* no double-width CAS: nothing else to check */
    free(q);
    skip();
  }
  assert_int_equal(st, SYNCQ_OK);
  assert_int_equal(syncq_queue_plj_init(q, SIZE_MAX), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_plj_enqueue(q, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_plj_dequeue(q, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_plj_dequeue(q, &out), SYNCQ_EMPTY);
  assert_int_equal(syncq_queue_plj_destroy(q), SYNCQ_OK);
  assert_int_equal(syncq_queue_plj_destroy(q), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_plj_enqueue(q, item_of(1)), SYNCQ_EINVAL);
  free(q);
}

static void test_plj_fifo_and_growth(void **state) {
  (void)state;
  int st;
  syncq_queue_plj *q = plj_new(2, &st);
  if (st == SYNCQ_ENOTSUP) {
    free(q);
    skip();
  }
  assert_int_equal(st, SYNCQ_OK);
  void *out;
  for (int round = 0; round < 3; round++) { /* nodes come back and are reused */
    for (uintptr_t i = 1; i <= GROW_ITEMS; i++) assert_int_equal(syncq_queue_plj_enqueue(q, item_of(i)), SYNCQ_OK);
    for (uintptr_t i = 1; i <= GROW_ITEMS; i++) {
      assert_int_equal(syncq_queue_plj_dequeue(q, &out), SYNCQ_OK);
      assert_ptr_equal(out, item_of(i));
    }
    assert_int_equal(syncq_queue_plj_dequeue(q, &out), SYNCQ_EMPTY);
  }
  assert_int_equal(syncq_queue_plj_destroy(q), SYNCQ_OK);
  free(q);
}

static void test_plj_stress(void **state) {
  (void)state;
  int st;
  syncq_queue_plj *q = plj_new(16, &st);
  if (st == SYNCQ_ENOTSUP) {
    free(q);
    skip();
  }
  assert_int_equal(st, SYNCQ_OK);
  run_stress("plj", q);
  assert_int_equal(syncq_queue_plj_destroy(q), SYNCQ_OK);
  free(q);
}

int main(void) {
  test_plan_confine();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_valois_bad_inputs),   cmocka_unit_test(test_valois_counts_sequential),
    cmocka_unit_test(test_valois_nodes_reused), cmocka_unit_test(test_valois_counts_after_stress),
    cmocka_unit_test(test_plj_bad_inputs),      cmocka_unit_test(test_plj_fifo_and_growth),
    cmocka_unit_test(test_plj_stress),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
