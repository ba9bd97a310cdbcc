/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * loo_test.c — LOO through its typed API (syncq/queue/loo.h), for what the
 * family drivers do not reach:
 *   - bad inputs: NULL arguments, items with a low mark bit set, storage
 *     never initialised or destroyed: SYNCQ_EINVAL;
 *   - sequential runs across many 128-slot nodes at varying fill levels:
 *     FIFO order, EMPTY at zero, and deterministic reclamation: once the
 *     queue is drained every node but the one Head is in has been freed
 *     (nodes freed == nodes appended);
 *   - 4 producers and 4 consumers, consumers polling an often empty queue
 *     (so slots are abandoned: a dequeuer reaches its slot before the
 *     enqueuer): no loss, no duplicate, each producer's items in order,
 *     and again every node but the last freed once all threads are done.
 * Fixed thread counts: the same work on any machine.
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

#include "syncq/platform.h"
#include "syncq/queue.h"
#include "syncq/queue/loo.h"

#include "loo_hooks.h"
#include "test_mpmc.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

#define PRODUCERS 4
#define CONSUMERS 4
#if SANITIZED
#define PER_PRODUCER 20000
#else
#define PER_PRODUCER 200000
#endif

static void *item_of(uint64_t v) { return (void *)(uintptr_t)((v + 1) << 2); }
static uint64_t value_of(void *p) { return ((uint64_t)(uintptr_t)p >> 2) - 1; }

static syncq_queue_loo *make(void) {
  syncq_queue_loo *q = syncq_alloc_aligned(sizeof *q, _Alignof(syncq_queue_loo));
  assert_non_null(q);
  assert_int_equal(syncq_queue_loo_init(q, 0), SYNCQ_OK);
  return q;
}

static void drop(syncq_queue_loo *q) {
  assert_int_equal(syncq_queue_loo_destroy(q), SYNCQ_OK);
  free(q);
}

static void test_bad_inputs(void **state) {
  (void)state;
  void *out = NULL;
  unsigned char *raw = syncq_alloc_aligned(2 * sizeof(syncq_queue_loo), _Alignof(syncq_queue_loo));
  assert_non_null(raw);
  memset(raw, 0, 2 * sizeof(syncq_queue_loo));
  assert_int_equal(syncq_queue_loo_init(NULL, 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_loo_init((syncq_queue_loo *)(void *)(raw + 8), 0), SYNCQ_EINVAL); /* misaligned */
  syncq_queue_loo *never = (syncq_queue_loo *)(void *)raw; /* zeroed, never initialised */
  assert_int_equal(syncq_queue_loo_destroy(never), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_loo_enqueue(never, item_of(1)), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_loo_dequeue(never, &out), SYNCQ_EINVAL);
  free(raw);

  syncq_queue_loo *q = make();
  assert_int_equal(syncq_queue_loo_enqueue(NULL, item_of(1)), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_loo_enqueue(q, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_loo_enqueue(q, (void *)(uintptr_t)0x1001), SYNCQ_EINVAL); /* RESUME bit */
  assert_int_equal(syncq_queue_loo_enqueue(q, (void *)(uintptr_t)0x1002), SYNCQ_EINVAL); /* READER bit */
  assert_int_equal(syncq_queue_loo_dequeue(NULL, &out), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_loo_dequeue(q, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_EMPTY); /* nothing went in */
  assert_int_equal(syncq_queue_loo_nodes_linked(NULL), 0);
  assert_int_equal(syncq_queue_loo_nodes_freed(NULL), 0);
  assert_int_equal(syncq_queue_loo_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_loo_destroy(q), SYNCQ_OK);
  assert_int_equal(syncq_queue_loo_destroy(q), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_loo_enqueue(q, item_of(1)), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_EINVAL);
  free(q);
}

static void test_sequential_reclamation(void **state) {
  (void)state;
  syncq_queue_loo *q = make();
  void *out = NULL;
  uint64_t next_in = 0, next_out = 0;
  /* fill levels from 0 to 3 nodes' worth, so every slot of a node is met
   * full and empty and nodes are appended and left many times */
  for (uint64_t round = 0; round < 2000; round++) {
    const size_t fill = (size_t)((round * 37) % 400);
    for (size_t i = 0; i < fill; i++) assert_int_equal(syncq_queue_loo_enqueue(q, item_of(next_in++)), SYNCQ_OK);
    for (size_t i = 0; i < fill; i++) {
      assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_OK);
      assert_int_equal(value_of(out), next_out++);
    }
    assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_EMPTY);
    /* drained and quiescent: only Head's node is left */
    assert_int_equal(syncq_queue_loo_nodes_freed(q), syncq_queue_loo_nodes_linked(q));
  }
  assert_true(syncq_queue_loo_nodes_linked(q) > 1000); /* the nodes did turn over */
  /* items left in the queue at destroy are the caller's; the nodes are freed (ASan checks) */
  for (size_t i = 0; i < 300; i++) assert_int_equal(syncq_queue_loo_enqueue(q, item_of(i)), SYNCQ_OK);
  drop(q);
}

typedef struct run {
  syncq_queue_loo *q;
  _Atomic(int) bad; /* an enqueue's status other than OK */
  test_mpmc m;
} run;

typedef struct worker {
  run *r;
  int id;
} worker;

static void *producer(void *p) {
  worker *w = p;
  for (uint64_t i = 0; i < PER_PRODUCER; i++)
    if (syncq_queue_loo_enqueue(w->r->q, item_of((uint64_t)w->id * PER_PRODUCER + i)) != SYNCQ_OK)
      atomic_store(&w->r->bad, 1);
  return NULL;
}

static int loo_dequeue(void *q, void **item) { return syncq_queue_loo_dequeue(q, item); }

static void *consumer(void *p) {
  worker *w = p;
  test_mpmc_consume(&w->r->m, loo_dequeue, w->r->q, value_of, 64);
  return NULL;
}

static void test_concurrent(void **state) {
  (void)state;
  run r;
  memset(&r, 0, sizeof r);
  r.q = make();
  test_mpmc_init(&r.m, PRODUCERS, PER_PRODUCER);
  pthread_t t[PRODUCERS + CONSUMERS];
  worker w[PRODUCERS + CONSUMERS];
  for (int i = 0; i < PRODUCERS + CONSUMERS; i++) {
    w[i] = (worker){&r, i < PRODUCERS ? i : i - PRODUCERS};
    assert_int_equal(pthread_create(&t[i], NULL, i < PRODUCERS ? producer : consumer, &w[i]), 0);
  }
  for (int i = 0; i < PRODUCERS + CONSUMERS; i++) pthread_join(t[i], NULL);
  assert_int_equal(atomic_load(&r.bad), 0);
  test_mpmc_check(&r.m, "loo");
  void *x;
  assert_int_equal(syncq_queue_loo_dequeue(r.q, &x), SYNCQ_EMPTY);
  const uint64_t linked = syncq_queue_loo_nodes_linked(r.q), freed = syncq_queue_loo_nodes_freed(r.q);
  print_message(
    "%d producers, %d consumers, %d items each: none lost, none twice, in order; "
    "%llu nodes appended, %llu freed\n",
    PRODUCERS, CONSUMERS, PER_PRODUCER, (unsigned long long)linked, (unsigned long long)freed);
  assert_true(linked + 1 >= (uint64_t)PRODUCERS * PER_PRODUCER / 128); /* 128 items a node, the first one included */
  assert_int_equal(freed, linked); /* all threads done, queue drained: only Head's node is left */
  drop(r.q);
}

static void test_enomem(void **state) {
  (void)state;
  loo_hooks_set(loo_failing_alloc, free);
  syncq_queue_loo *q = syncq_alloc_aligned(sizeof *q, _Alignof(syncq_queue_loo));
  assert_non_null(q);
  atomic_store(&loo_fail_nodes, 1);
  assert_int_equal(syncq_queue_loo_init(q, 0), SYNCQ_ENOMEM); /* its first node */
  assert_int_equal(atomic_load(&loo_fail_nodes), 0);
  assert_int_equal(syncq_queue_loo_init(q, 0), SYNCQ_OK);
  void *out = NULL;
  uint64_t in = 0, expect = 0;
  for (int round = 0; round < 5; round++) {
    /* no node to be had: Tail's node fills (128 slots, 127 after the
     * first: the appending enqueue took slot 0), then enqueues fail */
    atomic_store(&loo_fail_nodes, 1000000);
    uint64_t fitted = 0;
    int st;
    while ((st = syncq_queue_loo_enqueue(q, item_of(in))) == SYNCQ_OK) in++, fitted++;
    assert_int_equal(st, SYNCQ_ENOMEM);
    assert_int_equal(fitted, round == 0 ? 128 : 127);
    for (uint64_t k = 0; k < 3; k++) assert_int_equal(syncq_queue_loo_enqueue(q, item_of(1000000 + k)), SYNCQ_ENOMEM);
    atomic_store(&loo_fail_nodes, 2); /* the next two allocations fail: two more ENOMEM, one try each */
    for (uint64_t k = 0; k < 2; k++) assert_int_equal(syncq_queue_loo_enqueue(q, item_of(2000000 + k)), SYNCQ_ENOMEM);
    assert_int_equal(atomic_load(&loo_fail_nodes), 0);
    assert_int_equal(syncq_queue_loo_enqueue(q, item_of(in++)), SYNCQ_OK); /* appends a node */
    atomic_store(&loo_fail_nodes, 1000000);                                /* dequeues allocate nothing */
    for (; expect < in; expect++) {
      assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_OK);
      assert_int_equal(value_of(out), expect);
    }
    assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_EMPTY); /* none of the refused items */
    assert_int_equal(syncq_queue_loo_nodes_linked(q), (uint64_t)round + 1);
    assert_int_equal(syncq_queue_loo_nodes_freed(q), (uint64_t)round + 1);
  }
  atomic_store(&loo_fail_nodes, 0);
  drop(q);
  loo_hooks_clear();
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_bad_inputs),
    cmocka_unit_test(test_sequential_reclamation),
    cmocka_unit_test(test_concurrent),
    cmocka_unit_test(test_enomem),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
