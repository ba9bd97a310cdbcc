/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lprq_af_test.c — "lprq-af" (syncq/queue/lprq_af.h): lprq's rings with
 * aggregating funnels for their tickets, through the linked-rings checks
 * of linked_rings_cases.h (2- to 8-cell rings: the CLOSED bit comes back
 * through the funnels constantly) and the batching checks of
 * rings_af_cases.h.
 */
#include "syncq/queue/lprq_af.h"

#define RQ syncq_queue_lprq
#define RQ_NAME "lprq-af"
#define RQ_INIT_RING syncq_queue_lprq_af_init_ring
#define RQ_DESTROY syncq_queue_lprq_destroy
#define RQ_ENQUEUE syncq_queue_lprq_enqueue
#define RQ_DEQUEUE syncq_queue_lprq_dequeue
#define RQ_LINKED syncq_queue_lprq_rings_linked
#define RQ_FREED syncq_queue_lprq_rings_freed
#include "linked_rings_cases.h"

#define RQ_AF_INIT syncq_queue_lprq_af_init
#define RQ_AF_NAME "lprq-af"
#include "rings_af_cases.h"

int main(void) {
  const struct CMUnitTest tests[] = {
    LINKED_RINGS_TESTS,
    RINGS_AF_TESTS,
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
