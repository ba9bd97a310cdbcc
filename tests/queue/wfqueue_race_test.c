/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wfqueue_race_test.c — YMC wfqueue's reclamation (src/queue/wfqueue.c,
 * §5 cleanup with Deviations (7) and (8)) against an operation stopped
 * between its index and its cell, forced through race points
 * (tests/support/syncq_race.h) instead of hoped for under load:
 *   - a dequeuer is stopped right after its fetch-and-add on H, before it
 *     reads its segment pointer: its hazard id, published with a relaxed
 *     store before that fetch-and-add, must hold every cleanup another
 *     thread runs meanwhile (2,000 enqueue+dequeue pairs over 2-cell
 *     segments, a cleanup every few items): nothing from its segment on is
 *     reclaimed, and when it resumes it takes the item of its index (ASan
 *     checks that no freed or reused segment is touched);
 *   - the same for an enqueuer stopped after its fetch-and-add on T: the
 *     other thread's dequeue gives its cell up (⊤), and the resumed
 *     enqueuer, on a segment kept for it, retries and its item comes out;
 *   - once the stopped operation has finished, the next cleanups reclaim
 *     what it held, into the stock and beyond.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "syncq_race.h" /* first: its SYNCQ_RACE_POINT, before any static body */
#include "stopped_thread.h"

#include "syncq/platform.h"
#include "syncq/queue/wfqueue.h"

SYNCQ_RACE_HOOK_DEFINE;

#define PAIRS 2000
/* How long the main thread waits for the stopped thread to reach its point
 * (generous: the machine may be loaded). */
#define PATIENCE_S 30

static void *w_item(uintptr_t v) { return (void *)(v << 4); }

static syncq_queue_wfqueue *make(void) {
  syncq_queue_wfqueue *q = syncq_alloc_aligned(sizeof *q, _Alignof(syncq_queue_wfqueue));
  assert_non_null(q);
  assert_int_equal(syncq_queue_wfqueue_init_ex(q, 2, 4), SYNCQ_OK);
  return q;
}

/* PAIRS enqueue+dequeue pairs by this thread, items from `from` on, each
 * coming out at once (the queue holds nothing else this thread can take). */
static void pairs(syncq_queue_wfqueue *q, uintptr_t from) {
  void *out;
  for (uintptr_t i = from; i < from + PAIRS; i++) {
    assert_int_equal(syncq_queue_wfqueue_enqueue(q, w_item(i)), SYNCQ_OK);
    assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, w_item(i));
  }
}

static void test_dequeue_held_after_its_index(void **state) {
  (void)state;
  syncq_queue_wfqueue *q = make();
  assert_int_equal(syncq_queue_wfqueue_enqueue(q, w_item(1)), SYNCQ_OK);
  stopped_call c = {syncq_queue_wfqueue_algo.ops, q, NULL, -1};
  pthread_t t;
  start_stopped(&t, stopped_dequeue, &c, "queue.wfqueue.dequeue.ticket", PATIENCE_S); /* holds index of item 1 */
  const uint64_t freed0 = syncq_queue_wfqueue_segments_freed(q);
  pairs(q, 100); /* cleanups run: none may pass the stopped dequeuer's hazard id */
  const uint64_t freed_held = syncq_queue_wfqueue_segments_freed(q) - freed0;
  print_message("wfqueue: %d pairs beside a dequeue stopped after its index: %llu linked, %llu reclaimed\n", PAIRS,
                (unsigned long long)syncq_queue_wfqueue_segments_linked(q), (unsigned long long)freed_held);
  assert_int_equal(freed_held, 0); /* its hazard id covers the front segment */
  release_stopped(t);
  assert_int_equal(c.status, SYNCQ_OK);
  assert_ptr_equal(c.item, w_item(1));
  void *out;
  assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_EMPTY);
  pairs(q, 10000); /* and now the front moves on */
  print_message("wfqueue: after it: %llu reclaimed, %llu reused\n",
                (unsigned long long)(syncq_queue_wfqueue_segments_freed(q) - freed0),
                (unsigned long long)atomic_load(&q->segments_reused));
  assert_true(syncq_queue_wfqueue_segments_freed(q) - freed0 >= PAIRS / 2);
  assert_int_equal(syncq_queue_wfqueue_destroy(q), SYNCQ_OK);
  free(q);
}

static void test_enqueue_held_after_its_index(void **state) {
  (void)state;
  syncq_queue_wfqueue *q = make();
  stopped_call c = {syncq_queue_wfqueue_algo.ops, q, w_item(1), -1};
  pthread_t t;
  start_stopped(&t, stopped_enqueue, &c, "queue.wfqueue.enqueue.ticket",
                PATIENCE_S); /* holds index 1, cell unwritten */
  const uint64_t freed0 = syncq_queue_wfqueue_segments_freed(q);
  /* our first dequeue meets the stopped enqueuer's empty cell: it waits
   * WFQ_SPIN relaxes, gives the cell up (⊤) and takes the next index */
  pairs(q, 100);
  const uint64_t freed_held = syncq_queue_wfqueue_segments_freed(q) - freed0;
  print_message("wfqueue: %d pairs beside an enqueue stopped after its index: %llu linked, %llu reclaimed\n", PAIRS,
                (unsigned long long)syncq_queue_wfqueue_segments_linked(q), (unsigned long long)freed_held);
  assert_int_equal(freed_held, 0);
  release_stopped(t); /* its cell is ⊤: it takes another index and lands there */
  assert_int_equal(c.status, SYNCQ_OK);
  void *out;
  assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_OK);
  assert_ptr_equal(out, w_item(1));
  assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_EMPTY);
  pairs(q, 10000);
  assert_true(syncq_queue_wfqueue_segments_freed(q) - freed0 >= PAIRS / 2);
  assert_int_equal(syncq_queue_wfqueue_destroy(q), SYNCQ_OK);
  free(q);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_dequeue_held_after_its_index),
    cmocka_unit_test(test_enqueue_held_after_its_index),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
