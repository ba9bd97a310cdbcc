/* SPDX-License-Identifier: BSD-2-Clause */
/* lincheck_test.c — the checker accepts linearizable histories and rejects
 * the ones that are not, on hand-made histories with known answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lincheck.h"
#include "syncq/status.h"

#define OP(t, k, a, r, st, c, d) \
  { t, k, a, r, st, c, d }

static void test_sequential_queue(void **state) {
  (void)state;
  lc_spec q = lc_spec_queue(0);
  const lc_op ok[] = {OP(0, LC_QUEUE_ENQ, 1, 0, SYNCQ_OK, 1, 2), OP(0, LC_QUEUE_ENQ, 2, 0, SYNCQ_OK, 3, 4),
                      OP(0, LC_QUEUE_DEQ, 0, 1, SYNCQ_OK, 5, 6), OP(0, LC_QUEUE_DEQ, 0, 2, SYNCQ_OK, 7, 8),
                      OP(0, LC_QUEUE_DEQ, 0, 0, SYNCQ_EMPTY, 9, 10)};
  assert_true(lc_check(&q, ok, 5, NULL));
  /* LIFO order out of a queue: not linearizable */
  const lc_op lifo[] = {OP(0, LC_QUEUE_ENQ, 1, 0, SYNCQ_OK, 1, 2), OP(0, LC_QUEUE_ENQ, 2, 0, SYNCQ_OK, 3, 4),
                        OP(0, LC_QUEUE_DEQ, 0, 2, SYNCQ_OK, 5, 6)};
  assert_false(lc_check(&q, lifo, 3, NULL));
  /* ... but fine for a stack */
  lc_spec s = lc_spec_stack(0);
  const lc_op st[] = {OP(0, LC_STACK_PUSH, 1, 0, SYNCQ_OK, 1, 2), OP(0, LC_STACK_PUSH, 2, 0, SYNCQ_OK, 3, 4),
                      OP(0, LC_STACK_POP, 0, 2, SYNCQ_OK, 5, 6)};
  assert_true(lc_check(&s, st, 3, NULL));
}

static void test_overlap_allows_either_order(void **state) {
  (void)state;
  lc_spec q = lc_spec_queue(0);
  /* two overlapping enqueues; the dequeue may see either first */
  const lc_op h[] = {OP(0, LC_QUEUE_ENQ, 1, 0, SYNCQ_OK, 1, 4), OP(1, LC_QUEUE_ENQ, 2, 0, SYNCQ_OK, 2, 3),
                     OP(2, LC_QUEUE_DEQ, 0, 2, SYNCQ_OK, 5, 6)};
  assert_true(lc_check(&q, h, 3, NULL));
  /* the same, but enqueue 1 returned before enqueue 2 was called: 2 cannot be first */
  const lc_op seq[] = {OP(0, LC_QUEUE_ENQ, 1, 0, SYNCQ_OK, 1, 2), OP(1, LC_QUEUE_ENQ, 2, 0, SYNCQ_OK, 3, 4),
                       OP(2, LC_QUEUE_DEQ, 0, 2, SYNCQ_OK, 5, 6)};
  assert_false(lc_check(&q, seq, 3, NULL));
}

static void test_empty_must_be_justified(void **state) {
  (void)state;
  lc_spec q = lc_spec_queue(0);
  /* a dequeue reports empty while a value sits in the queue the whole time */
  const lc_op h[] = {OP(0, LC_QUEUE_ENQ, 7, 0, SYNCQ_OK, 1, 2), OP(1, LC_QUEUE_DEQ, 0, 0, SYNCQ_EMPTY, 3, 4)};
  assert_false(lc_check(&q, h, 2, NULL));
  /* overlapping the enqueue, empty is fine */
  const lc_op o[] = {OP(0, LC_QUEUE_ENQ, 7, 0, SYNCQ_OK, 1, 4), OP(1, LC_QUEUE_DEQ, 0, 0, SYNCQ_EMPTY, 2, 3)};
  assert_true(lc_check(&q, o, 2, NULL));
}

static void test_bounded_full(void **state) {
  (void)state;
  lc_spec q = lc_spec_queue(1);
  const lc_op h[] = {OP(0, LC_QUEUE_ENQ, 1, 0, SYNCQ_OK, 1, 2), OP(0, LC_QUEUE_ENQ, 2, 0, SYNCQ_FULL, 3, 4)};
  assert_true(lc_check(&q, h, 2, NULL));
  const lc_op bad[] = {OP(0, LC_QUEUE_ENQ, 1, 0, SYNCQ_FULL, 1, 2)};
  assert_false(lc_check(&q, bad, 1, NULL)); /* full when empty */
}

static void test_duplicate_and_lost(void **state) {
  (void)state;
  lc_spec q = lc_spec_queue(0);
  const lc_op dup[] = {OP(0, LC_QUEUE_ENQ, 5, 0, SYNCQ_OK, 1, 2), OP(1, LC_QUEUE_DEQ, 0, 5, SYNCQ_OK, 3, 6),
                       OP(2, LC_QUEUE_DEQ, 0, 5, SYNCQ_OK, 4, 5)};
  assert_false(lc_check(&q, dup, 3, NULL));
  const lc_op invented[] = {OP(0, LC_QUEUE_DEQ, 0, 9, SYNCQ_OK, 1, 2)};
  assert_false(lc_check(&q, invented, 1, NULL));
}

static void test_many_concurrent_ops_fast(void **state) {
  (void)state;
  /* 6 rounds; in each, 4 threads enqueue at once (fully overlapping), then
   * 4 dequeue at once. 48 operations, 4 in flight at a time, as the
   * drivers' short histories are; each round's values come out in an order
   * that only some of its enqueue orders explain. */
  lc_spec q = lc_spec_queue(0);
  lc_op h[48];
  size_t n = 0;
  uint64_t t0 = 1;
  for (int r = 0; r < 6; r++, t0 += 20) {
    for (int t = 0; t < 4; t++)
      h[n++] = (lc_op)OP(t, LC_QUEUE_ENQ, (uint64_t)(r * 10 + t), 0, SYNCQ_OK, t0 + (uint64_t)t, t0 + 8);
    for (int t = 0; t < 4; t++) /* dequeued in reverse thread order: one enqueue order explains it */
      h[n++] = (lc_op)OP(t, LC_QUEUE_DEQ, 0, (uint64_t)(r * 10 + 3 - t), SYNCQ_OK, t0 + 10 + (uint64_t)t, t0 + 18);
  }
  assert_true(lc_check(&q, h, n, NULL));
  /* a value of round 2 dequeued in round 1, before it was enqueued */
  uint64_t keep = h[12].ret;
  h[12].ret = 20;
  assert_false(lc_check(&q, h, n, NULL));
  h[12].ret = keep;
  /* a dequeue that saw nothing while four values were queued */
  h[13].status = SYNCQ_EMPTY;
  assert_false(lc_check(&q, h, n, NULL));
}

static void test_malformed(void **state) {
  (void)state;
  lc_spec q = lc_spec_queue(0);
  const char *err = NULL;
  const lc_op back[] = {OP(0, LC_QUEUE_ENQ, 1, 0, SYNCQ_OK, 5, 2)};
  assert_false(lc_check(&q, back, 1, &err));
  assert_non_null(err);
  lc_op many[LC_MAX_OPS + 1] = {0};
  assert_false(lc_check(&q, many, LC_MAX_OPS + 1, &err));
  assert_non_null(err);
  assert_false(lc_check(NULL, back, 1, &err));
  assert_true(lc_check(&q, NULL, 0, &err)); /* the empty history */
  assert_null(err);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_sequential_queue),
    cmocka_unit_test(test_overlap_allows_either_order),
    cmocka_unit_test(test_empty_must_be_justified),
    cmocka_unit_test(test_bounded_full),
    cmocka_unit_test(test_duplicate_and_lost),
    cmocka_unit_test(test_many_concurrent_ops_fast),
    cmocka_unit_test(test_malformed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
