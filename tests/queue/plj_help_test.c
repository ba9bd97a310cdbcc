/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * plj_help_test.c — white-box test of what makes PLJ PLJ: an operation
 * that finds an enqueue half done (its node linked, Tail not yet swung)
 * completes it before doing its own work, whether or not it is in its way.
 *
 * The algorithm's file is compiled into this test (so the test can build
 * the half-done state a stalled enqueuer leaves); its public symbols then
 * come from here rather than from the library.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "queue/plj.c"

static void *item_of(uintptr_t i) { return (void *)(i << 4 | 8); }

/* What a stalled enqueuer leaves: its node linked after the last node, Tail
 * still on the node before it. */
static void half_enqueue(syncq_queue_plj *q, void *item) {
  plj_node *n = new_node(q);
  assert_non_null(n);
  atomic_store(&n->value, item);
  atomic_store(&n->next.lo, 0);
  syncq_pr_dw tail = syncq_pr_dw_load(&q->tail);
  plj_node *last = node_of(tail.lo);
  syncq_pr_dw next = syncq_pr_dw_load(&last->next);
  assert_int_equal(next.lo, 0); /* Tail was on the last node */
  assert_true(syncq_pr_dwcas(&last->next, &next, (syncq_pr_dw){word_of(n), next.hi + 1}));
}

static uint64_t tail_node(syncq_queue_plj *q) { return atomic_load(&q->tail.lo); }
static uint64_t last_node(syncq_queue_plj *q) {
  uint64_t w = atomic_load(&q->head.lo);
  for (uint64_t n; (n = atomic_load(&node_of(w)->next.lo)) != 0;) w = n;
  return w;
}

static syncq_queue_plj *make(void) {
  syncq_queue_plj *q = syncq_alloc_aligned(sizeof *q, _Alignof(syncq_queue_plj));
  assert_non_null(q);
  int r = syncq_queue_plj_init(q, 8);
  if (r == SYNCQ_ENOTSUP) {
    free(q);
    return NULL;
  }
  assert_int_equal(r, SYNCQ_OK);
  return q;
}

/* A dequeue that is not in the pending enqueue's way (Head != Tail) still
 * completes it first: the snapshot showed an operation in progress. (An MS
 * dequeue would leave Tail behind here.) */
static void test_dequeue_completes_pending_enqueue(void **state) {
  (void)state;
  syncq_queue_plj *q = make();
  if (q == NULL) skip();
  void *out;
  assert_int_equal(syncq_queue_plj_enqueue(q, item_of(1)), SYNCQ_OK);
  assert_int_equal(syncq_queue_plj_enqueue(q, item_of(2)), SYNCQ_OK);
  half_enqueue(q, item_of(3));
  assert_true(tail_node(q) != last_node(q)); /* the half-done state */
  assert_int_equal(syncq_queue_plj_dequeue(q, &out), SYNCQ_OK);
  assert_ptr_equal(out, item_of(1));
  assert_true(tail_node(q) == last_node(q)); /* helped */
  assert_int_equal(syncq_queue_plj_dequeue(q, &out), SYNCQ_OK);
  assert_ptr_equal(out, item_of(2));
  assert_int_equal(syncq_queue_plj_dequeue(q, &out), SYNCQ_OK);
  assert_ptr_equal(out, item_of(3));
  assert_int_equal(syncq_queue_plj_dequeue(q, &out), SYNCQ_EMPTY);
  assert_int_equal(syncq_queue_plj_destroy(q), SYNCQ_OK);
  free(q);
}

/* A half-done enqueue into an empty queue: the item is there (a dequeue
 * must not answer EMPTY), and the dequeue completes the enqueue first. */
static void test_pending_enqueue_into_empty_queue(void **state) {
  (void)state;
  syncq_queue_plj *q = make();
  if (q == NULL) skip();
  void *out;
  half_enqueue(q, item_of(7));
  assert_int_equal(syncq_queue_plj_dequeue(q, &out), SYNCQ_OK);
  assert_ptr_equal(out, item_of(7));
  assert_int_equal(syncq_queue_plj_dequeue(q, &out), SYNCQ_EMPTY);
  assert_true(tail_node(q) == last_node(q));
  assert_int_equal(syncq_queue_plj_destroy(q), SYNCQ_OK);
  free(q);
}

/* An enqueue that finds another half done completes it, then links its
 * own node after it: FIFO order is the order of the links. */
static void test_enqueue_completes_pending_enqueue(void **state) {
  (void)state;
  syncq_queue_plj *q = make();
  if (q == NULL) skip();
  void *out;
  half_enqueue(q, item_of(1));
  assert_int_equal(syncq_queue_plj_enqueue(q, item_of(2)), SYNCQ_OK);
  assert_true(tail_node(q) == last_node(q));
  for (uintptr_t i = 1; i <= 2; i++) {
    assert_int_equal(syncq_queue_plj_dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, item_of(i));
  }
  assert_int_equal(syncq_queue_plj_destroy(q), SYNCQ_OK);
  free(q);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_dequeue_completes_pending_enqueue),
    cmocka_unit_test(test_pending_enqueue_into_empty_queue),
    cmocka_unit_test(test_enqueue_completes_pending_enqueue),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
