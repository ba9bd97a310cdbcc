/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wfqueue_test.c — YMC wfqueue through its typed API (syncq/queue/wfqueue.h),
 * what the family drivers (queue_test, queue_lincheck_test) do not reach:
 *
 *   - bad inputs: NULL, misaligned storage, segment sizes and thread
 *     limits out of range, a queue not initialised, NULL items;
 *   - segment turnover with 2-cell segments: FIFO across hundreds of
 *     segments, segments freed while the queue runs; a queue destroyed
 *     while it holds items leaks nothing (LeakSanitizer, ASan build);
 *   - memory short (the library's hook fails segment allocations): an
 *     enqueue answers SYNCQ_ENOMEM and its item never comes out, on the
 *     fast path and with its request published (withdrawn); a dequeue
 *     that holds an index retries the allocation and completes;
 *   - the slow path forced (the library's PATIENCE test hook set to 0):
 *     every operation publishes a request, counted exactly; then helping
 *     made deterministic with the library's publication hook, which stops
 *     a thread right after it published its request: a peer's dequeue
 *     must commit the stopped enqueue (and hand back its item), a peer's
 *     dequeue must complete the stopped dequeue; and destroy answers
 *     SYNCQ_EBUSY while the stopped operation runs;
 *   - many producers and consumers (test_plan_oversubscribed: 16 threads
 *     on 2 PUs on any machine) with 2-cell and default segments, fast
 *     path on and off: per-producer order, no loss, no duplicate;
 *   - handles: the thread limit (SYNCQ_ELIMIT past it, a handle reused
 *     after its thread exits); threads that exit, or stay idle, holding a
 *     handle do not stop segments from being freed;
 *   - empty polls, deterministic: a consumer polling the empty queue
 *     between items takes no index (H moves once per item);
 *   - linearizability of short histories (tests/support/lincheck.h)
 *     through 2-cell segments, with the fast path on and off.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <semaphore.h>
#include <cmocka.h>

#include "lincheck.h"
#include "queue_history.h"
#include "test_plan.h"
#include "syncq/platform.h"
#include "syncq/queue.h"
#include "syncq/queue/wfqueue.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

#if SANITIZED
#define W_ITEMS 1500
#define W_HISTORIES 500
#else
#define W_ITEMS 10000
#define W_HISTORIES 2000
#endif
#define W_YIELD_EVERY 37

/* The library's test hooks (src/queue/wfqueue.c; not public symbols). */
typedef void (*syncq_wfq_test_hook_fn)(int point);
extern _Atomic(int) syncq_queue_wfqueue_test_patience__;
extern _Atomic(syncq_wfq_test_hook_fn) syncq_queue_wfqueue_test_hook__;
extern _Atomic(int) syncq_queue_wfqueue_test_fail_segments__;
enum { HOOK_ENQ_PUBLISHED = 1, HOOK_DEQ_PUBLISHED = 2 };

static void *w_item(uintptr_t v) { return (void *)(v << 4); }

/* A fresh queue; patience < 0: the library's PATIENCE, else that many
 * fast-path tries (0: every operation takes the slow path). */
static syncq_queue_wfqueue *w_new(size_t seg, size_t threads, int patience) {
  syncq_queue_wfqueue *q = syncq_alloc_aligned(sizeof *q, _Alignof(syncq_queue_wfqueue));
  assert_non_null(q);
  atomic_store(&syncq_queue_wfqueue_test_fail_segments__, 0); /* a failed test may have left it set */
  atomic_store(&syncq_queue_wfqueue_test_patience__, patience);
  int r = syncq_queue_wfqueue_init_ex(q, seg, threads);
  atomic_store(&syncq_queue_wfqueue_test_patience__, -1);
  assert_int_equal(r, SYNCQ_OK);
  return q;
}

static void w_free(syncq_queue_wfqueue *q) {
  assert_int_equal(syncq_queue_wfqueue_destroy(q), SYNCQ_OK);
  free(q);
}

static syncq_queue_wfqueue_counts w_counts(const syncq_queue_wfqueue *q) {
  syncq_queue_wfqueue_counts c;
  assert_int_equal(syncq_queue_wfqueue_get_counts(q, &c), SYNCQ_OK);
  return c;
}

/* ------------------------------------------------------------ sequential */

static void test_bad_inputs(void **state) {
  (void)state;
  unsigned char *raw = syncq_alloc_aligned(2 * sizeof(syncq_queue_wfqueue), _Alignof(syncq_queue_wfqueue));
  assert_non_null(raw);
  syncq_queue_wfqueue *q = (syncq_queue_wfqueue *)(void *)raw;
  const size_t bad_seg[] = {0, 1, 3, 6, 100, (1u << 16) + 1, 1u << 17, SIZE_MAX};
  for (size_t i = 0; i < sizeof bad_seg / sizeof bad_seg[0]; i++)
    assert_int_equal(syncq_queue_wfqueue_init_ex(q, bad_seg[i], 4), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wfqueue_init_ex(q, 8, 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wfqueue_init_ex(q, 8, SYNCQ_QUEUE_WFQUEUE_THREADS_MAX + 1), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wfqueue_init_ex(NULL, 8, 4), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wfqueue_init(NULL, 8), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wfqueue_init_ex((syncq_queue_wfqueue *)(void *)(raw + 8), 8, 4), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wfqueue_init((syncq_queue_wfqueue *)(void *)(raw + 8), 8), SYNCQ_EINVAL);
  memset(raw, 0, sizeof(syncq_queue_wfqueue));
  void *out;
  syncq_queue_wfqueue_counts c;
  assert_int_equal(syncq_queue_wfqueue_destroy(q), SYNCQ_EINVAL); /* never initialised */
  assert_int_equal(syncq_queue_wfqueue_enqueue(q, w_item(1)), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wfqueue_get_counts(q, &c), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wfqueue_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wfqueue_enqueue(NULL, w_item(1)), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wfqueue_dequeue(NULL, &out), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wfqueue_get_counts(NULL, &c), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wfqueue_segments_linked(NULL), 0);
  assert_int_equal(syncq_queue_wfqueue_segments_freed(NULL), 0);
  free(raw);

  q = w_new(8, 4, -1);
  assert_int_equal(syncq_queue_wfqueue_enqueue(q, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wfqueue_dequeue(q, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wfqueue_get_counts(q, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_EMPTY);
  assert_int_equal(syncq_queue_wfqueue_destroy(q), SYNCQ_OK);
  assert_int_equal(syncq_queue_wfqueue_destroy(q), SYNCQ_EINVAL); /* destroyed: not initialised any more */
  /* the sizing hint: any capacity is accepted (0 and huge included) */
  const size_t caps[] = {0, 1, 3, 1000, SIZE_MAX};
  for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
    assert_int_equal(syncq_queue_wfqueue_init(q, caps[i]), SYNCQ_OK);
    assert_int_equal(syncq_queue_wfqueue_enqueue(q, w_item(7)), SYNCQ_OK);
    assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, w_item(7));
    assert_int_equal(syncq_queue_wfqueue_destroy(q), SYNCQ_OK);
  }
  free(q);
  /* the extremes are accepted */
  w_free(w_new(SYNCQ_QUEUE_WFQUEUE_SEGMENT_MIN, 1, -1));
  w_free(w_new(SYNCQ_QUEUE_WFQUEUE_SEGMENT_MAX, SYNCQ_QUEUE_WFQUEUE_THREADS_MAX, -1));
  /* the generic API finds it by name */
  syncq_queue *g = NULL;
  assert_int_equal(syncq_queue_create("wfqueue", 0, &g), SYNCQ_OK);
  assert_int_equal(syncq_queue_enqueue(g, w_item(3)), SYNCQ_OK);
  assert_int_equal(syncq_queue_dequeue(g, &out), SYNCQ_OK);
  assert_ptr_equal(out, w_item(3));
  syncq_queue_destroy(g);
}

/* 2-cell segments: FIFO across hundreds of segments; segments are freed
 * while the queue runs (the paper's cleanup), never more than linked. */
static void run_turnover(int patience) {
  syncq_queue_wfqueue *q = w_new(2, 4, patience);
  uintptr_t in = 1, out_next = 1;
  void *out;
  for (int round = 0; round < 30; round++) {
    int fill = 1 + round * 7;
    for (int i = 0; i < fill; i++) assert_int_equal(syncq_queue_wfqueue_enqueue(q, w_item(in++)), SYNCQ_OK);
    for (int i = 0; i < fill; i++) {
      assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_OK);
      assert_ptr_equal(out, w_item(out_next++));
    }
    assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_EMPTY);
  }
  uint64_t linked = syncq_queue_wfqueue_segments_linked(q), freed = syncq_queue_wfqueue_segments_freed(q);
  print_message("wfqueue (patience %d), 2-cell segments, %lu items: %llu segments linked, %llu freed while running\n",
                patience, (unsigned long)(in - 1), (unsigned long long)linked, (unsigned long long)freed);
  assert_true(linked >= (in - 1) / 2); /* every index takes a cell: at least one segment per 2 items */
  assert_true(freed > linked / 2);     /* one handle: the cleanup keeps a few segments only */
  assert_true(freed <= linked);
  w_free(q);
}

static void test_segment_turnover(void **state) {
  (void)state;
  run_turnover(-1);
  run_turnover(0);
}

/* Destroyed while it holds items in many segments: every segment is
 * freed (LeakSanitizer, in the ASan build, fails the run otherwise). */
static void test_destroy_non_empty(void **state) {
  (void)state;
  syncq_queue_wfqueue *q = w_new(4, 4, -1);
  void *out;
  for (uintptr_t i = 1; i <= 1000; i++) assert_int_equal(syncq_queue_wfqueue_enqueue(q, w_item(i)), SYNCQ_OK);
  for (uintptr_t i = 1; i <= 500; i++) {
    assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, w_item(i));
  }
  assert_true(syncq_queue_wfqueue_segments_linked(q) >= 1000 / 4 - 1);
  w_free(q);
}

/* One producer and one consumer in lockstep, the consumer polling the
 * empty queue between items (dg25-prodcons at N = 1 when the consumer is
 * the faster side). A poll must answer EMPTY from H and T alone
 * (Deviation (6)): a poll that took an index would spend it, mark its cell
 * ⊤ (the cell the producer's next index names) and run H past T, making
 * that many enqueue indices fail. H moves once per item. */
static void test_empty_polls_take_no_index(void **state) {
  (void)state;
  enum { ITEMS = 100, POLLS = 3 };
  syncq_queue_wfqueue *q = w_new(1024, 4, -1);
  const int64_t d0 = atomic_load(&q->di), e0 = atomic_load(&q->ei);
  int64_t wasted = 0;
  for (uintptr_t i = 1; i <= ITEMS; i++) {
    void *x = NULL;
    assert_int_equal(syncq_queue_wfqueue_enqueue(q, w_item(i)), SYNCQ_OK);
    assert_int_equal(syncq_queue_wfqueue_dequeue(q, &x), SYNCQ_OK);
    assert_ptr_equal(x, w_item(i));
    for (int p = 0; p < POLLS; p++) {
      const int64_t d = atomic_load(&q->di);
      assert_int_equal(syncq_queue_wfqueue_dequeue(q, &x), SYNCQ_EMPTY);
      wasted += atomic_load(&q->di) - d;
    }
  }
  print_message("%d items, %d empty polls after each: %lld indices taken by empty polls\n", ITEMS, POLLS,
                (long long)wasted);
  assert_int_equal(wasted, 0);
  assert_int_equal(atomic_load(&q->di) - d0, ITEMS);
  assert_int_equal(atomic_load(&q->ei) - e0, ITEMS); /* no enqueue index failed */
  w_free(q);
}

/* A consumer that keeps up with its producer (dg25-prodcons at N = 1):
 * cleanup puts the segments it reclaims into the queue's stock and the
 * next appends take them back (Deviation (8)), where each append used to
 * take fresh memory from the allocator (16 page faults per default
 * segment, measured). A reused segment's cells are empty again: the items
 * come out in order, each once, and the queue ends empty. */
static void test_segments_reused(void **state) {
  (void)state;
  syncq_queue_wfqueue *q = w_new(2, 4, -1);
  void *out;
  for (uintptr_t i = 1; i <= 2000; i++) {
    assert_int_equal(syncq_queue_wfqueue_enqueue(q, w_item(i)), SYNCQ_OK);
    if (i % 3 == 0) assert_int_equal(syncq_queue_wfqueue_enqueue(q, w_item(i)), SYNCQ_OK); /* a backlog of a few */
  }
  for (uintptr_t i = 1; i <= 2000; i++) {
    int times = i % 3 == 0 ? 2 : 1;
    for (int k = 0; k < times; k++) {
      assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_OK);
      assert_ptr_equal(out, w_item(i));
    }
  }
  assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_EMPTY);
  uint64_t linked0 = syncq_queue_wfqueue_segments_linked(q), reused0 = atomic_load(&q->segments_reused);
  assert_int_equal(reused0, 0); /* enqueued all at once: nothing was reclaimed before the appends */
  uintptr_t in = 1, next = 1;
  for (int k = 0; k < 3; k++) assert_int_equal(syncq_queue_wfqueue_enqueue(q, w_item(in++)), SYNCQ_OK);
  for (int k = 0; k < 2000; k++) { /* three items behind the producer */
    assert_int_equal(syncq_queue_wfqueue_enqueue(q, w_item(in++)), SYNCQ_OK);
    assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, w_item(next++));
  }
  while (next < in) {
    assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, w_item(next++));
  }
  assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_EMPTY);
  uint64_t linked = syncq_queue_wfqueue_segments_linked(q) - linked0;
  uint64_t reused = atomic_load(&q->segments_reused) - reused0;
  print_message("wfqueue: 2-cell segments, a consumer that keeps up: %llu appended, %llu from the stock\n",
                (unsigned long long)linked, (unsigned long long)reused);
  assert_true(linked >= 1000);       /* 2000 indices, 2 cells a segment */
  assert_true(reused + 8 >= linked); /* all but the first few: the stock refills at each cleanup */
  assert_true(reused <= linked);
  w_free(q); /* frees the stock too (LeakSanitizer in the ASan build) */
}

/* Segment allocations fail: enqueue answers SYNCQ_ENOMEM without queuing
 * the item (fast path: its index is left to the dequeuers; PATIENCE 0:
 * its published request is withdrawn). A dequeue that must cross the
 * refused indices into segments nobody could allocate retries until the
 * allocation succeeds (3 failures here), and answers EMPTY: the refused
 * items never come out; the queue goes on in order. */
static void test_enomem(void **state) {
  (void)state;
  for (int patience = -1; patience <= 0; patience++) {
    syncq_queue_wfqueue *q = w_new(2, 4, patience);
    void *out;
    uintptr_t in = 1, expect = 1;
    for (int round = 0; round < 10; round++) {
      assert_int_equal(syncq_queue_wfqueue_enqueue(q, w_item(in++)), SYNCQ_OK);
      atomic_store(&syncq_queue_wfqueue_test_fail_segments__, 1000000);
      for (int k = 0; k < 4; k++) /* 2-cell segments: the refused indices reach new segments */
        assert_int_equal(syncq_queue_wfqueue_enqueue(q, w_item(1000 + (uintptr_t)k)), SYNCQ_ENOMEM);
      atomic_store(&syncq_queue_wfqueue_test_fail_segments__, 3);
      assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_OK);
      assert_ptr_equal(out, w_item(expect++));
      assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_EMPTY);         /* none of the refused items */
      assert_int_equal(atomic_load(&syncq_queue_wfqueue_test_fail_segments__), 0); /* it met the 3 failures */
      for (int k = 0; k < 3; k++) assert_int_equal(syncq_queue_wfqueue_enqueue(q, w_item(in++)), SYNCQ_OK);
      for (int k = 0; k < 3; k++) {
        assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_OK);
        assert_ptr_equal(out, w_item(expect++));
      }
      assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_EMPTY);
    }
    if (patience == 0) assert_true(w_counts(q).slow_enqueues >= 40); /* the refused ones published requests */
    w_free(q);
  }
}

/* PATIENCE 0: every operation publishes a request, and the counts say so
 * exactly; FIFO and EMPTY as with the fast path. */
static void test_slow_path_forced(void **state) {
  (void)state;
  syncq_queue_wfqueue *q = w_new(4, 4, 0);
  uintptr_t in = 1, out_next = 1;
  uint64_t enqs = 0, deqs = 0;
  void *out;
  for (int round = 0; round < 20; round++) {
    for (int i = 0; i <= round; i++, enqs++) assert_int_equal(syncq_queue_wfqueue_enqueue(q, w_item(in++)), SYNCQ_OK);
    for (int i = 0; i <= round; i++, deqs++) {
      assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_OK);
      assert_ptr_equal(out, w_item(out_next++));
    }
    assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_EMPTY);
    deqs++;
  }
  syncq_queue_wfqueue_counts c = w_counts(q);
  assert_int_equal(c.slow_enqueues, enqs);
  assert_int_equal(c.slow_dequeues, deqs);
  assert_int_equal(c.handles, 1);
  w_free(q);
  /* and with the library's PATIENCE, alone, nothing takes the slow path */
  q = w_new(4, 4, -1);
  for (uintptr_t i = 1; i <= 100; i++) assert_int_equal(syncq_queue_wfqueue_enqueue(q, w_item(i)), SYNCQ_OK);
  for (uintptr_t i = 1; i <= 100; i++) assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_OK);
  c = w_counts(q);
  assert_int_equal(c.slow_enqueues, 0);
  assert_int_equal(c.slow_dequeues, 0);
  w_free(q);
}

/* ------------------------------------------------------------ helping, made deterministic */

/* The publication hook stops one thread (the target) at one point, once,
 * until the test lets it go. */
static struct {
  pthread_t target;
  _Atomic(int) point; /* the point to stop at; 0: none */
  _Atomic(bool) fired;
  sem_t reached, go;
} stop;

static void stop_hook(int point) {
  if (atomic_load(&stop.point) != point || !pthread_equal(pthread_self(), stop.target)) return;
  bool no = false;
  if (!atomic_compare_exchange_strong(&stop.fired, &no, true)) return;
  sem_post(&stop.reached);
  while (sem_wait(&stop.go) != 0) {
  }
}

typedef struct stopped_op {
  syncq_queue_wfqueue *q;
  pthread_barrier_t *ready; /* the thread's handle exists before it is stopped */
  void *item;               /* enqueue: the item; dequeue: what it took */
  int status;
  _Atomic(bool) returned;
} stopped_op;

static void *stopped_enqueue(void *p) {
  stopped_op *o = p;
  pthread_barrier_wait(o->ready);
  o->status = syncq_queue_wfqueue_enqueue(o->q, o->item);
  atomic_store(&o->returned, true);
  return NULL;
}

static void *stopped_dequeue(void *p) {
  stopped_op *o = p;
  pthread_barrier_wait(o->ready);
  o->status = syncq_queue_wfqueue_dequeue(o->q, &o->item);
  atomic_store(&o->returned, true);
  return NULL;
}

static void stop_arm(pthread_t t, int point) {
  stop.target = t;
  atomic_store(&stop.fired, false);
  atomic_store(&stop.point, point);
}

static void stop_setup(void) {
  assert_int_equal(sem_init(&stop.reached, 0, 0), 0);
  assert_int_equal(sem_init(&stop.go, 0, 0), 0);
  atomic_store(&stop.point, 0);
  atomic_store(&syncq_queue_wfqueue_test_hook__, stop_hook);
}

static void stop_teardown(void) {
  atomic_store(&syncq_queue_wfqueue_test_hook__, (syncq_wfq_test_hook_fn)NULL);
  atomic_store(&stop.point, 0);
  sem_destroy(&stop.reached);
  sem_destroy(&stop.go);
}

static void stop_wait_reached(void) {
  while (sem_wait(&stop.reached) != 0) {
  }
}

/* An enqueue stopped right after it published its request: the other
 * thread's dequeues commit it into their cell and return its item while
 * the enqueuer has not returned. */
static void test_enqueue_helped(void **state) {
  (void)state;
  syncq_queue_wfqueue *q = w_new(4, 4, 0);
  void *out;
  assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_EMPTY); /* this thread's handle first */
  stop_setup();
  pthread_barrier_t ready;
  pthread_barrier_init(&ready, NULL, 2);
  stopped_op op = {.q = q, .ready = &ready, .item = w_item(42)};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, stopped_enqueue, &op), 0);
  stop_arm(t, HOOK_ENQ_PUBLISHED);
  pthread_barrier_wait(&ready);
  stop_wait_reached();
  /* the enqueuer is stopped with its request published, and no cell
   * holds its item: only helping can hand it over */
  int got = -1;
  for (int k = 0; k < 4 && got < 0; k++) {
    int r = syncq_queue_wfqueue_dequeue(q, &out);
    if (r == SYNCQ_OK) got = k;
    else assert_int_equal(r, SYNCQ_EMPTY);
  }
  assert_false(atomic_load(&op.returned));
  syncq_queue_wfqueue_counts c = w_counts(q);
  print_message("wfqueue: stopped enqueue's item taken by the peer's dequeue %d, %llu enqueue(s) helped\n", got,
                (unsigned long long)c.helped_enqueues);
  if (got < 0) fail_msg("the peer's dequeues did not commit the stopped enqueue's request");
  assert_ptr_equal(out, w_item(42));
  assert_int_equal(c.helped_enqueues, 1);
  assert_int_equal(syncq_queue_wfqueue_destroy(q), SYNCQ_EBUSY); /* an operation runs */
  sem_post(&stop.go);
  pthread_join(t, NULL);
  assert_int_equal(op.status, SYNCQ_OK);
  assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_EMPTY); /* once, not twice */
  pthread_barrier_destroy(&ready);
  stop_teardown();
  w_free(q);
}

/* A dequeue stopped right after it published its request: the other
 * thread's dequeues, each taking an item, help the next handle's request,
 * so they complete the stopped one; it then returns the item they chose
 * for it, and every item comes out once. */
static void test_dequeue_helped(void **state) {
  (void)state;
  syncq_queue_wfqueue *q = w_new(4, 4, 0);
  void *out;
  assert_int_equal(syncq_queue_wfqueue_enqueue(q, w_item(1)), SYNCQ_OK);
  stop_setup();
  pthread_barrier_t ready;
  pthread_barrier_init(&ready, NULL, 2);
  stopped_op op = {.q = q, .ready = &ready};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, stopped_dequeue, &op), 0);
  stop_arm(t, HOOK_DEQ_PUBLISHED);
  pthread_barrier_wait(&ready);
  stop_wait_reached();
  bool seen[8] = {false};
  uintptr_t next = 2;
  syncq_queue_wfqueue_counts c = w_counts(q);
  for (int k = 0; k < 4 && c.helped_dequeues == 0; k++) {
    assert_int_equal(syncq_queue_wfqueue_enqueue(q, w_item(next++)), SYNCQ_OK);
    assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_OK);
    uintptr_t v = (uintptr_t)out >> 4;
    assert_true(v >= 1 && v < next && !seen[v]);
    seen[v] = true;
    c = w_counts(q);
  }
  assert_false(atomic_load(&op.returned));
  print_message("wfqueue: stopped dequeue completed by the peer: %llu dequeue(s) helped\n",
                (unsigned long long)c.helped_dequeues);
  if (c.helped_dequeues != 1) fail_msg("the peer's dequeues did not complete the stopped dequeue's request");
  sem_post(&stop.go);
  pthread_join(t, NULL);
  assert_int_equal(op.status, SYNCQ_OK);
  uintptr_t v = (uintptr_t)op.item >> 4;
  assert_true(v >= 1 && v < next && !seen[v]);
  seen[v] = true;
  while (syncq_queue_wfqueue_dequeue(q, &out) == SYNCQ_OK) {
    v = (uintptr_t)out >> 4;
    assert_true(v >= 1 && v < next && !seen[v]);
    seen[v] = true;
  }
  for (uintptr_t k = 1; k < next; k++) assert_true(seen[k]); /* nothing lost */
  pthread_barrier_destroy(&ready);
  stop_teardown();
  w_free(q);
}

/* ------------------------------------------------------------ concurrent */

typedef struct w_rec {
  uint32_t producer, seq;
  _Atomic(uint32_t) owner;
} w_rec;

typedef struct w_stress {
  syncq_queue_wfqueue *q;
  w_rec *items;
  int producers;
  _Atomic(long) consumed, deq_calls;
  _Atomic(int) errors;
  char error[160];
} w_stress;

typedef struct w_worker {
  w_stress *s;
  int id;
} w_worker;

static void w_report(w_stress *s, const char *msg) {
  if (atomic_fetch_add(&s->errors, 1) == 0) snprintf(s->error, sizeof s->error, "%s", msg);
}

static void *w_producer(void *p) {
  w_worker *w = p;
  for (int i = 0; i < W_ITEMS; i++) {
    if (syncq_queue_wfqueue_enqueue(w->s->q, &w->s->items[(size_t)w->id * W_ITEMS + (size_t)i]) != SYNCQ_OK) {
      w_report(w->s, "enqueue failed");
      return NULL;
    }
    if ((i + w->id) % W_YIELD_EVERY == 0) syncq_yield();
  }
  return NULL;
}

static void *w_consumer(void *p) {
  w_worker *w = p;
  w_stress *s = w->s;
  int64_t *last = calloc((size_t)s->producers, sizeof *last);
  if (last == NULL) {
    w_report(s, "no memory");
    return NULL;
  }
  for (int i = 0; i < s->producers; i++) last[i] = -1;
  const long total = (long)s->producers * W_ITEMS;
  unsigned n = 0;
  while (atomic_load(&s->consumed) < total && atomic_load(&s->errors) == 0) {
    void *x;
    int r = syncq_queue_wfqueue_dequeue(s->q, &x);
    atomic_fetch_add(&s->deq_calls, 1);
    if (r == SYNCQ_EMPTY) {
      syncq_yield();
      continue;
    }
    if (r != SYNCQ_OK) {
      w_report(s, "dequeue failed");
      break;
    }
    w_rec *it = x;
    if (it < s->items || it >= s->items + total) {
      w_report(s, "dequeued a pointer never enqueued");
      break;
    }
    if (atomic_exchange(&it->owner, (uint32_t)w->id + 1) != 0) w_report(s, "item dequeued twice");
    if ((int64_t)it->seq <= last[it->producer]) w_report(s, "per-producer order broken");
    last[it->producer] = it->seq;
    atomic_fetch_add(&s->consumed, 1);
    if (++n % W_YIELD_EVERY == (unsigned)w->id) syncq_yield();
  }
  free(last);
  return NULL;
}

static void run_stress(size_t seg, int patience) {
  const int threads = test_plan_oversubscribed(TEST_PLAN_OVERSUBSCRIPTION);
  const int producers = threads / 2 > 0 ? threads / 2 : 1,
            consumers = threads - producers > 0 ? threads - producers : 1;
  syncq_queue_wfqueue *q = w_new(seg, (size_t)(producers + consumers) + 1, patience);
  w_stress *s = calloc(1, sizeof *s);
  assert_non_null(s);
  s->q = q;
  s->producers = producers;
  const size_t total = (size_t)producers * W_ITEMS;
  s->items = calloc(total, sizeof *s->items);
  assert_non_null(s->items);
  for (size_t i = 0; i < total; i++) {
    s->items[i].producer = (uint32_t)(i / W_ITEMS);
    s->items[i].seq = (uint32_t)(i % W_ITEMS);
  }
  pthread_t *tids = calloc((size_t)(producers + consumers), sizeof *tids);
  w_worker *ws = calloc((size_t)(producers + consumers), sizeof *ws);
  assert_non_null(tids);
  assert_non_null(ws);
  for (int i = 0; i < producers + consumers; i++) {
    ws[i] = (w_worker){s, i < producers ? i : i - producers};
    assert_int_equal(pthread_create(&tids[i], NULL, i < producers ? w_producer : w_consumer, &ws[i]), 0);
  }
  for (int i = 0; i < producers + consumers; i++) pthread_join(tids[i], NULL);
  if (atomic_load(&s->errors) != 0) fail_msg("wfqueue, %zu-cell segments, patience %d: %s", seg, patience, s->error);
  for (size_t i = 0; i < total; i++)
    if (atomic_load(&s->items[i].owner) == 0) fail_msg("wfqueue, %zu-cell segments: item %zu lost", seg, i);
  void *x;
  assert_int_equal(syncq_queue_wfqueue_dequeue(q, &x), SYNCQ_EMPTY);
  syncq_queue_wfqueue_counts c = w_counts(q);
  print_message(
    "wfqueue, %zu-cell segments, patience %d, %dP/%dC x %d items: %llu segments linked, %llu freed; "
    "slow %llu enq / %llu deq, helped %llu enq / %llu deq\n",
    seg, patience, producers, consumers, W_ITEMS, (unsigned long long)syncq_queue_wfqueue_segments_linked(q),
    (unsigned long long)syncq_queue_wfqueue_segments_freed(q), (unsigned long long)c.slow_enqueues,
    (unsigned long long)c.slow_dequeues, (unsigned long long)c.helped_enqueues, (unsigned long long)c.helped_dequeues);
  assert_true(c.handles <= (uint64_t)(producers + consumers) + 1);
  if (patience == 0) { /* every operation took the slow path: counted exactly */
    assert_int_equal(c.slow_enqueues, total);
    assert_int_equal(c.slow_dequeues, (uint64_t)atomic_load(&s->deq_calls) + 1);
  }
  if (seg == 2) assert_true(syncq_queue_wfqueue_segments_freed(q) > 0); /* reclaimed while running */
  w_free(q);
  free(tids);
  free(ws);
  free(s->items);
  free(s);
}

static void test_concurrent_seg2(void **state) {
  (void)state;
  run_stress(2, -1);
}
static void test_concurrent_default(void **state) {
  (void)state;
  run_stress(SYNCQ_QUEUE_WFQUEUE_SEGMENT_DEFAULT, -1);
}
static void test_concurrent_slow_path(void **state) {
  (void)state;
  run_stress(2, 0);
  run_stress(64, 0);
}

/* ------------------------------------------------------------ handles */

typedef struct w_holder {
  syncq_queue_wfqueue *q;
  pthread_barrier_t *took, *leave; /* NULL: do not wait */
  int status;
} w_holder;

/* One operation (a handle taken), then wait, holding it, until told to exit. */
static void *w_hold(void *p) {
  w_holder *h = p;
  h->status = syncq_queue_wfqueue_enqueue(h->q, w_item(9));
  if (h->took != NULL) pthread_barrier_wait(h->took);
  if (h->leave != NULL) pthread_barrier_wait(h->leave);
  return NULL;
}

/* max_threads 2: this thread and one other hold handles; a third live
 * thread gets SYNCQ_ELIMIT; once the second exited, a new thread takes its
 * handle (no third one is made). */
static void test_thread_limit(void **state) {
  (void)state;
  syncq_queue_wfqueue *q = w_new(4, 2, -1);
  void *out;
  assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_EMPTY); /* handle 1: this thread */
  pthread_barrier_t took, leave;
  pthread_barrier_init(&took, NULL, 2);
  pthread_barrier_init(&leave, NULL, 2);
  w_holder a = {q, &took, &leave, -100};
  pthread_t ta;
  assert_int_equal(pthread_create(&ta, NULL, w_hold, &a), 0);
  pthread_barrier_wait(&took); /* handle 2: a, alive */
  assert_int_equal(a.status, SYNCQ_OK);
  w_holder b = {q, NULL, NULL, -100};
  pthread_t tb;
  assert_int_equal(pthread_create(&tb, NULL, w_hold, &b), 0);
  pthread_join(tb, NULL);
  assert_int_equal(b.status, SYNCQ_ELIMIT);
  assert_int_equal(w_counts(q).handles, 2);
  pthread_barrier_wait(&leave);
  pthread_join(ta, NULL); /* a's handle goes back to the queue */
  w_holder c = {q, NULL, NULL, -100};
  pthread_t tc;
  assert_int_equal(pthread_create(&tc, NULL, w_hold, &c), 0);
  pthread_join(tc, NULL);
  assert_int_equal(c.status, SYNCQ_OK);
  assert_int_equal(w_counts(q).handles, 2);
  for (int k = 0; k < 2; k++) { /* a's and c's items */
    assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, w_item(9));
  }
  assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_EMPTY);
  pthread_barrier_destroy(&took);
  pthread_barrier_destroy(&leave);
  w_free(q);
}

/* Threads that exited holding a handle, and one that holds a handle but
 * stays idle, do not keep segments from being freed: between operations
 * a handle pins nothing (the cleaner moves its segment pointers on). */
static void test_idle_and_exited_handles(void **state) {
  (void)state;
  syncq_queue_wfqueue *q = w_new(2, 8, -1);
  void *out;
  for (int k = 0; k < 3; k++) { /* exit with a handle held (the key's destructor gives it back) */
    w_holder e = {q, NULL, NULL, -100};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, w_hold, &e), 0);
    pthread_join(t, NULL);
    assert_int_equal(e.status, SYNCQ_OK);
  }
  pthread_barrier_t took, leave;
  pthread_barrier_init(&took, NULL, 2);
  pthread_barrier_init(&leave, NULL, 2);
  w_holder idle = {q, &took, &leave, -100};
  pthread_t ti;
  assert_int_equal(pthread_create(&ti, NULL, w_hold, &idle), 0);
  pthread_barrier_wait(&took);
  uint64_t freed0 = syncq_queue_wfqueue_segments_freed(q), linked0 = syncq_queue_wfqueue_segments_linked(q);
  for (int k = 0; k < 4; k++) { /* the 4 items of the other threads */
    assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, w_item(9));
  }
  for (uintptr_t i = 1; i <= 2000; i++) {
    assert_int_equal(syncq_queue_wfqueue_enqueue(q, w_item(i)), SYNCQ_OK);
    assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, w_item(i));
  }
  uint64_t freed = syncq_queue_wfqueue_segments_freed(q) - freed0;
  uint64_t linked = syncq_queue_wfqueue_segments_linked(q) - linked0;
  print_message("wfqueue: 2-cell segments, 3 exited and 1 idle handle: %llu linked, %llu freed meanwhile\n",
                (unsigned long long)linked, (unsigned long long)freed);
  assert_int_equal(w_counts(q).handles, 2); /* the exited threads' handle was reused */
  assert_true(linked >= 1000);              /* 2000 pairs: 2000 indices each way, 2 cells a segment */
  assert_true(freed + 16 >= linked);        /* all but the last few (2n = 4 kept before a cleanup) */
  pthread_barrier_wait(&leave);
  pthread_join(ti, NULL);
  pthread_barrier_destroy(&took);
  pthread_barrier_destroy(&leave);
  w_free(q);
}

/* ------------------------------------------------------------ linearizability */

/* The recorder's queue operations on a wfqueue. */
static int lh_enqueue(void *q, void *item) { return syncq_queue_wfqueue_enqueue(q, item); }
static int lh_dequeue(void *q, void **item) { return syncq_queue_wfqueue_dequeue(q, item); }

static void run_histories(int patience) {
  syncq_queue_wfqueue *q = syncq_alloc_aligned(sizeof *q, _Alignof(syncq_queue_wfqueue));
  assert_non_null(q);
  qh_hist *h = qh_start(q, lh_enqueue, lh_dequeue);
  int rejected = 0;
  uint64_t seed = 2016, linked = 0;
  syncq_queue_wfqueue_counts all = {0};
  for (int n = 0; n < W_HISTORIES; n++) {
    uint64_t r0 = test_random(&seed);
    atomic_store(&syncq_queue_wfqueue_test_patience__, patience);
    assert_int_equal(syncq_queue_wfqueue_init_ex(q, 2, QH_THREADS + 1), SYNCQ_OK);
    atomic_store(&syncq_queue_wfqueue_test_patience__, -1);
    if (!qh_run(h, r0) && rejected++ == 0) {
      fprintf(stderr, "wfqueue: history %d (2-cell segments, patience %d) is not linearizable:\n", n, patience);
      lc_print(h->all, h->nops, lc_kind_name);
    }
    linked += syncq_queue_wfqueue_segments_linked(q);
    syncq_queue_wfqueue_counts c = w_counts(q);
    all.slow_enqueues += c.slow_enqueues;
    all.slow_dequeues += c.slow_dequeues;
    all.helped_enqueues += c.helped_enqueues;
    all.helped_dequeues += c.helped_dequeues;
    assert_int_equal(syncq_queue_wfqueue_destroy(q), SYNCQ_OK);
  }
  qh_stop(h);
  free(q);
  print_message(
    "wfqueue: %d histories, 2-cell segments, patience %d: %llu segments linked, slow %llu enq / %llu "
    "deq, helped %llu enq / %llu deq, %d rejected\n",
    W_HISTORIES, patience, (unsigned long long)linked, (unsigned long long)all.slow_enqueues,
    (unsigned long long)all.slow_dequeues, (unsigned long long)all.helped_enqueues,
    (unsigned long long)all.helped_dequeues, rejected);
  assert_true(linked > (uint64_t)W_HISTORIES); /* the histories did cross segments */
  if (patience == 0) assert_true(all.slow_enqueues > 0 && all.slow_dequeues > 0);
  assert_int_equal(rejected, 0);
}

static void test_linearizable(void **state) {
  (void)state;
  run_histories(-1);
}
static void test_linearizable_slow_path(void **state) {
  (void)state;
  run_histories(0);
}

int main(void) {
  test_plan_confine();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_bad_inputs),
    cmocka_unit_test(test_segment_turnover),
    cmocka_unit_test(test_destroy_non_empty),
    cmocka_unit_test(test_segments_reused),
    cmocka_unit_test(test_enomem),
    cmocka_unit_test(test_slow_path_forced),
    cmocka_unit_test(test_enqueue_helped),
    cmocka_unit_test(test_dequeue_helped),
    cmocka_unit_test(test_concurrent_seg2),
    cmocka_unit_test(test_concurrent_default),
    cmocka_unit_test(test_concurrent_slow_path),
    cmocka_unit_test(test_thread_limit),
    cmocka_unit_test(test_idle_and_exited_handles),
    cmocka_unit_test(test_linearizable),
    cmocka_unit_test(test_linearizable_slow_path),
    cmocka_unit_test(test_empty_polls_take_no_index),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
