/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lprq_test.c — LPRQ through its typed API (syncq/queue/lprq.h): the
 * linked-rings checks of linked_rings_cases.h with 2- and 8-cell rings,
 * plus what only LPRQ has: items with bit 63 set are refused (those values
 * are the thread marks), every other non-NULL value is kept whole, and it
 * needs no double-width CAS.
 */
#include "syncq/queue/lprq.h"

#define RQ syncq_queue_lprq
#define RQ_NAME "lprq"
#define RQ_INIT_RING syncq_queue_lprq_init_ring
#define RQ_DESTROY syncq_queue_lprq_destroy
#define RQ_ENQUEUE syncq_queue_lprq_enqueue
#define RQ_DEQUEUE syncq_queue_lprq_dequeue
#define RQ_LINKED syncq_queue_lprq_rings_linked
#define RQ_FREED syncq_queue_lprq_rings_freed
#include "linked_rings_cases.h"

static void test_mark_values_refused(void **state) {
  (void)state;
  syncq_queue_lprq *q = lr_new(2);
  assert_non_null(q); /* single-width CAS only: runs everywhere */
  void *out;
  assert_int_equal(syncq_queue_lprq_enqueue(q, (void *)(uintptr_t)(UINT64_C(1) << 63)), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_lprq_enqueue(q, (void *)(uintptr_t)UINT64_MAX), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_lprq_enqueue(q, (void *)(uintptr_t)UINT64_C(0xffff800000001000)), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_lprq_dequeue(q, &out), SYNCQ_EMPTY); /* nothing was queued */
  void *const ok[] = {(void *)(uintptr_t)1, (void *)(uintptr_t)(UINT64_MAX >> 1), (void *)(uintptr_t)3};
  for (int round = 0; round < 3; round++) {
    for (size_t i = 0; i < 3; i++) assert_int_equal(syncq_queue_lprq_enqueue(q, ok[i]), SYNCQ_OK);
    for (size_t i = 0; i < 3; i++) {
      assert_int_equal(syncq_queue_lprq_dequeue(q, &out), SYNCQ_OK);
      assert_ptr_equal(out, ok[i]);
    }
  }
  assert_int_equal(syncq_queue_lprq_dequeue(q, &out), SYNCQ_EMPTY);
  lr_free(q);
  syncq_queue *g = NULL; /* the generic API refuses them too */
  assert_int_equal(syncq_queue_create("lprq", 16, &g), SYNCQ_OK);
  assert_int_equal(syncq_queue_enqueue(g, (void *)(uintptr_t)(UINT64_C(1) << 63)), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_destroy(g), SYNCQ_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    LINKED_RINGS_TESTS,
    cmocka_unit_test(test_mark_values_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
