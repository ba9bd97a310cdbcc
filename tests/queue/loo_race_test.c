/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * loo_race_test.c — LOO's (src/queue/loo.c) abandoned slots and its slot
 * scan, forced through race points (tests/support/syncq_race.h) instead
 * of hoped for under load:
 *   - a dequeuer overtakes a stopped enqueuer: it finds the slot without
 *     an item and both give the slot up; the dequeue answers EMPTY (the
 *     enqueue has not taken effect), the enqueue then lands in the next
 *     slot and comes out;
 *   - the writer resumes the scan: an enqueuer is stopped before writing
 *     the last slot of a node; its dequeuer gives the slot up, the node is
 *     left behind, and the scan started by the first dequeuer past the end
 *     stops at that slot. The node may not be freed until the stopped
 *     enqueuer comes back, finds the slot given up and resumes the scan:
 *     then it is freed (ASan checks nobody touches it after);
 *   - the reader resumes the scan: a dequeuer is stopped before reading
 *     the last slot of a node (its item is there); the scan stops at that
 *     slot and the node stays until the dequeuer takes the item and
 *     resumes the scan;
 *   - Head's node reused under a stalled EMPTY test: a dequeuer is
 *     stopped between its Head load and its Tail load (the test before
 *     its ticket, and again in the guarded second test it makes when the
 *     first looks empty); meanwhile that node is drained and freed, and
 *     the next node appended gets its address (the test's allocator
 *     hands the freed block out again, as any allocator may). The
 *     dequeuer then sees Tail in "Head's node" behind Head's index: it
 *     must not answer EMPTY, the queue holds 128 items; it takes the
 *     first;
 *   - memory short past a node's end: an enqueuer stopped between its
 *     full-node test and its ticket gets a ticket past the end and no
 *     node: SYNCQ_ENOMEM, its item never comes out, the node is still
 *     freed.
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
#include "syncq/queue/loo.h"

#include "loo_hooks.h"

SYNCQ_RACE_HOOK_DEFINE;

#define SLOTS 128 /* LOO's slots per node */
/* How long the main thread waits for the stopped thread to reach its point
 * (generous: the machine may be loaded). */
#define PATIENCE_S 30

static void *item_of(uint64_t v) { return (void *)(uintptr_t)((v + 1) << 2); }

static syncq_queue_loo *make(void) {
  syncq_queue_loo *q = syncq_alloc_aligned(sizeof *q, _Alignof(syncq_queue_loo));
  assert_non_null(q);
  assert_int_equal(syncq_queue_loo_init(q, 0), SYNCQ_OK);
  return q;
}

static void test_dequeuer_overtakes_enqueuer(void **state) {
  (void)state;
  syncq_queue_loo *q = make();
  stopped_call c = {syncq_queue_loo_algo.ops, q, item_of(7), -1};
  pthread_t t;
  start_stopped(&t, stopped_enqueue, &c, "queue.loo.enqueue.ticket", PATIENCE_S); /* holds ticket 0 */
  void *out = NULL;
  /* our ticket is 0 too: no item yet, the slot is given up */
  assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_EMPTY);
  release_stopped(t);
  assert_int_equal(c.status, SYNCQ_OK);
  assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_OK);
  assert_ptr_equal(out, item_of(7));
  assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_EMPTY);
  assert_int_equal(syncq_queue_loo_destroy(q), SYNCQ_OK);
  free(q);
}

static void test_writer_resumes_scan(void **state) {
  (void)state;
  syncq_queue_loo *q = make();
  void *out = NULL;
  for (uint64_t i = 0; i < SLOTS - 1; i++) assert_int_equal(syncq_queue_loo_enqueue(q, item_of(i)), SYNCQ_OK);
  stopped_call c = {syncq_queue_loo_algo.ops, q, item_of(1000), -1};
  pthread_t t;
  start_stopped(&t, stopped_enqueue, &c, "queue.loo.enqueue.ticket", PATIENCE_S); /* holds the last slot */
  for (uint64_t i = 0; i < SLOTS - 1; i++) {
    assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, item_of(i));
  }
  assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_EMPTY);       /* gives the last slot up */
  assert_int_equal(syncq_queue_loo_enqueue(q, item_of(2000)), SYNCQ_OK); /* appends a node */
  assert_int_equal(syncq_queue_loo_nodes_linked(q), 1);
  /* leaves the first node; its scan stops at the given-up slot */
  assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_OK);
  assert_ptr_equal(out, item_of(2000));
  assert_int_equal(syncq_queue_loo_nodes_freed(q), 0); /* the stopped enqueuer still uses it */
  release_stopped(t); /* it finds its slot given up, resumes the scan, frees the node, enqueues anew */
  assert_int_equal(c.status, SYNCQ_OK);
  assert_int_equal(syncq_queue_loo_nodes_freed(q), 1);
  assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_OK);
  assert_ptr_equal(out, item_of(1000));
  assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_EMPTY);
  assert_int_equal(syncq_queue_loo_destroy(q), SYNCQ_OK);
  free(q);
}

static void test_reader_resumes_scan(void **state) {
  (void)state;
  syncq_queue_loo *q = make();
  void *out = NULL;
  for (uint64_t i = 0; i < SLOTS + 1; i++) assert_int_equal(syncq_queue_loo_enqueue(q, item_of(i)), SYNCQ_OK);
  assert_int_equal(syncq_queue_loo_nodes_linked(q), 1);
  for (uint64_t i = 0; i < SLOTS - 1; i++) {
    assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, item_of(i));
  }
  stopped_call c = {syncq_queue_loo_algo.ops, q, NULL, -1};
  pthread_t t;
  start_stopped(&t, stopped_dequeue, &c, "queue.loo.dequeue.ticket", PATIENCE_S); /* holds the last slot of node 1 */
  /* past the end: the scan stops at the unread last slot; Head moves on */
  assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_OK);
  assert_ptr_equal(out, item_of(SLOTS));
  assert_int_equal(syncq_queue_loo_nodes_freed(q), 0); /* the stopped dequeuer still uses it */
  release_stopped(t);                                  /* it takes its item, resumes the scan, frees the node */
  assert_int_equal(c.status, SYNCQ_OK);
  assert_ptr_equal(c.item, item_of(SLOTS - 1));
  assert_int_equal(syncq_queue_loo_nodes_freed(q), 1);
  assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_EMPTY);
  assert_int_equal(syncq_queue_loo_destroy(q), SYNCQ_OK);
  free(q);
}

/* Node memory that hands a freed block out again at once (last freed,
 * first out), as glibc may; ASan's quarantine would not, hence a hook. */
#define POOL_MAX 8
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static void *pool[POOL_MAX];
static int pool_n, pool_reused;

static void *pool_alloc(size_t size, size_t align) {
  pthread_mutex_lock(&pool_lock);
  void *p = pool_n > 0 ? pool[--pool_n] : NULL;
  if (p != NULL) pool_reused++;
  pthread_mutex_unlock(&pool_lock);
  return p != NULL ? p : syncq_alloc_aligned(size, align);
}

static void pool_free(void *p) {
  pthread_mutex_lock(&pool_lock);
  if (pool_n < POOL_MAX) {
    pool[pool_n++] = p;
    p = NULL;
  }
  pthread_mutex_unlock(&pool_lock);
  free(p);
}

static void pool_drain(void) {
  while (pool_n > 0) free(pool[--pool_n]);
  pool_reused = 0;
}

static uintptr_t node_addr(uint64_t word) { return (uintptr_t)(word & ~(uint64_t)1023); }

/* The dequeuer is stopped right after its Head load at `point`, Head in
 * the first node at index 100, with `filled` items enqueued in all (128:
 * the queue holds 28, "snapshot" comes first; 100: it is empty, so the
 * dequeuer goes on to the second, guarded snapshot, "confirm"). */
static void node_reuse_under(const char *point, uint64_t filled) {
  loo_hooks_set(pool_alloc, pool_free);
  syncq_queue_loo *q = make();
  const uintptr_t first = node_addr(atomic_load(&q->head));
  void *out = NULL;
  uint64_t in = 0, expect = 0;
  for (; in < filled; in++) assert_int_equal(syncq_queue_loo_enqueue(q, item_of(in)), SYNCQ_OK);
  for (; expect < 100; expect++) {
    assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, item_of(expect));
  }
  stopped_call c = {syncq_queue_loo_algo.ops, q, NULL, -1};
  pthread_t t;
  start_stopped(&t, stopped_dequeue, &c, point, PATIENCE_S); /* read Head: first node, index 100 */
  for (; in < SLOTS; in++) assert_int_equal(syncq_queue_loo_enqueue(q, item_of(in)), SYNCQ_OK);
  for (; expect < SLOTS; expect++) {
    assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, item_of(expect));
  }
  assert_int_equal(syncq_queue_loo_enqueue(q, item_of(in++)), SYNCQ_OK); /* appends a second node */
  assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_OK);          /* leaves the first: freed */
  assert_ptr_equal(out, item_of(expect++));
  assert_int_equal(syncq_queue_loo_nodes_freed(q), 1);
  for (; in < 2 * SLOTS + 1; in++) assert_int_equal(syncq_queue_loo_enqueue(q, item_of(in)), SYNCQ_OK);
  /* the third node has the first one's address; Tail is at its index 1 */
  assert_int_equal(syncq_queue_loo_nodes_linked(q), 2);
  assert_int_equal(pool_reused, 1);
  assert_true(node_addr(atomic_load(&q->tail)) == first);
  release_stopped(t); /* reads Tail: "Head's node", index 1, behind Head's 100 */
  assert_int_equal(c.status, SYNCQ_OK);
  assert_ptr_equal(c.item, item_of(expect++));
  for (; expect < in; expect++) {
    assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, item_of(expect));
  }
  assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_EMPTY);
  assert_int_equal(syncq_queue_loo_destroy(q), SYNCQ_OK);
  free(q);
  loo_hooks_clear();
  pool_drain();
}

static void test_empty_test_under_node_reuse(void **state) {
  (void)state;
  node_reuse_under("queue.loo.dequeue.snapshot", SLOTS);
}

static void test_empty_confirmation_under_node_reuse(void **state) {
  (void)state;
  node_reuse_under("queue.loo.dequeue.confirm", 100);
}

/* Memory short past a node's end: an enqueuer that found room in Tail's
 * node (so allocated nothing beforehand) is stopped before its ticket;
 * the last slot goes to another enqueue, and node allocations fail. The
 * stopped one's ticket is past the end and it cannot append: it answers
 * SYNCQ_ENOMEM, its item never comes out, and its pass past the end is
 * counted finished (Deviation 2): the node is still freed once the queue
 * moves on (LeakSanitizer would see it otherwise). */
static void test_enomem_past_the_end(void **state) {
  (void)state;
  loo_hooks_set(loo_failing_alloc, free);
  syncq_queue_loo *q = make();
  void *out = NULL;
  for (uint64_t i = 0; i < SLOTS - 1; i++) assert_int_equal(syncq_queue_loo_enqueue(q, item_of(i)), SYNCQ_OK);
  stopped_call c = {syncq_queue_loo_algo.ops, q, item_of(1000), -1};
  pthread_t t;
  start_stopped(&t, stopped_enqueue, &c, "queue.loo.enqueue.checked", PATIENCE_S); /* saw room: index 127 */
  assert_int_equal(syncq_queue_loo_enqueue(q, item_of(SLOTS - 1)), SYNCQ_OK);      /* takes the last slot */
  atomic_store(&loo_fail_nodes, 1000000);
  release_stopped(t); /* its ticket is 128: no node, none to be had */
  assert_int_equal(c.status, SYNCQ_ENOMEM);
  atomic_store(&loo_fail_nodes, 0);
  assert_int_equal(syncq_queue_loo_enqueue(q, item_of(SLOTS)), SYNCQ_OK); /* appends */
  assert_int_equal(syncq_queue_loo_nodes_linked(q), 1);
  for (uint64_t i = 0; i <= SLOTS; i++) {
    assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, item_of(i));
  }
  assert_int_equal(syncq_queue_loo_dequeue(q, &out), SYNCQ_EMPTY); /* not item 1000 */
  assert_int_equal(syncq_queue_loo_nodes_freed(q), 1);             /* both passes past the end counted */
  assert_int_equal(syncq_queue_loo_destroy(q), SYNCQ_OK);
  free(q);
  loo_hooks_clear();
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_dequeuer_overtakes_enqueuer),
    cmocka_unit_test(test_writer_resumes_scan),
    cmocka_unit_test(test_reader_resumes_scan),
    cmocka_unit_test(test_empty_test_under_node_reuse),
    cmocka_unit_test(test_empty_confirmation_under_node_reuse),
    cmocka_unit_test(test_enomem_past_the_end),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
