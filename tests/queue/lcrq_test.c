/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lcrq_test.c — LCRQ through its typed API (syncq/queue/lcrq.h): the
 * linked-rings checks of linked_rings_cases.h with 2- and 8-cell rings,
 * plus what only LCRQ has: SYNCQ_ENOTSUP without double-width CAS (on
 * this CPU, or forced by the library's test hook), and items that use all
 * 64 bits (no mark shares the item word).
 */
#include "syncq/queue/lcrq.h"

#define RQ syncq_queue_lcrq
#define RQ_NAME "lcrq"
#define RQ_INIT_RING syncq_queue_lcrq_init_ring
#define RQ_DESTROY syncq_queue_lcrq_destroy
#define RQ_ENQUEUE syncq_queue_lcrq_enqueue
#define RQ_DEQUEUE syncq_queue_lcrq_dequeue
#define RQ_LINKED syncq_queue_lcrq_rings_linked
#define RQ_FREED syncq_queue_lcrq_rings_freed
#include "linked_rings_cases.h"

/* The library's test hook (src/queue/lcrq.c; not a public symbol). */
extern _Atomic(bool) syncq_queue_lcrq_test_no_dwcas__;

static void test_enotsup_without_dwcas(void **state) {
  (void)state;
  syncq_queue_lcrq *q = syncq_alloc_aligned(sizeof *q, _Alignof(syncq_queue_lcrq));
  assert_non_null(q);
  atomic_store(&syncq_queue_lcrq_test_no_dwcas__, true);
  assert_int_equal(syncq_queue_lcrq_init(q, 64), SYNCQ_ENOTSUP);
  assert_int_equal(syncq_queue_lcrq_init_ring(q, 64), SYNCQ_ENOTSUP);
  syncq_queue *g = NULL;
  assert_int_equal(syncq_queue_create("lcrq", 64, &g), SYNCQ_ENOTSUP); /* the generic API passes it on */
  atomic_store(&syncq_queue_lcrq_test_no_dwcas__, false);
  int r = syncq_queue_lcrq_init(q, 64);
  if (!syncq_pr_dwcas_available()) {
    assert_int_equal(r, SYNCQ_ENOTSUP); /* this CPU really has none */
  } else {
    assert_int_equal(r, SYNCQ_OK);
    assert_int_equal(syncq_queue_lcrq_destroy(q), SYNCQ_OK);
  }
  free(q);
}

static void test_wide_items(void **state) {
  (void)state;
  syncq_queue_lcrq *q = lr_new(2);
  if (q == NULL) skip();
  void *const wide[] = {(void *)(uintptr_t)UINT64_C(0xffff800000001000), (void *)(uintptr_t)UINT64_MAX,
                        (void *)(uintptr_t)1, (void *)(uintptr_t)(UINT64_C(1) << 63)};
  void *out;
  for (int round = 0; round < 3; round++) {
    for (size_t i = 0; i < 4; i++) assert_int_equal(syncq_queue_lcrq_enqueue(q, wide[i]), SYNCQ_OK);
    for (size_t i = 0; i < 4; i++) {
      assert_int_equal(syncq_queue_lcrq_dequeue(q, &out), SYNCQ_OK);
      assert_ptr_equal(out, wide[i]);
    }
  }
  assert_int_equal(syncq_queue_lcrq_dequeue(q, &out), SYNCQ_EMPTY);
  lr_free(q);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    LINKED_RINGS_TESTS,
    cmocka_unit_test(test_enotsup_without_dwcas),
    cmocka_unit_test(test_wide_items),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
