/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * queue_test.c — the queue validation driver: every registered queue,
 * through its ops table, the generic API and (for the built-in ones that
 * have one) the typed API.
 *
 * For every algorithm:
 *   - sequential FIFO, EMPTY on an empty queue, and for bounded queues FULL
 *     at exactly the capacity, over several turns of the ring;
 *   - bad inputs (NULL queue, NULL item, NULL out-pointer, capacities 0, 1
 *     and not a power of two for bounded queues);
 *   - one producer, one consumer: strict FIFO;
 *   - many producers and consumers (8x the processing units in all, on the
 *     test plan's confined PU set: 16 threads on 2 PUs on any machine;
 *     yields injected at varying points): per-producer order seen by every
 *     consumer, no loss, no duplicate, and ownership stamping (each consumer
 *     marks the item it took and checks nobody had).
 * An algorithm whose init answers SYNCQ_ENOTSUP (a CPU feature missing) is
 * reported and skipped; SYNCQ_ENOENT (a lock it needs is not registered)
 * fails the test, saying so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_peers.h"
#include "test_plan.h"
#include "test_queue_contract.h"

#include "syncq/lock.h"
#include "syncq/platform.h"
#include "syncq/pr.h"
#include "syncq/queue.h"
#include "syncq/queue/fai_array.h"
#include "syncq/queue/lock_queue.h"
#include "syncq/queue/ms.h"
#include "syncq/queue/naive_ring.h"
#include "syncq/queue/nblfq.h"
#include "syncq/queue/nblfq2.h"
#include "syncq/queue/scq.h"
#include "syncq/queue/vyukov.h"
#include "syncq/registry.h"
#include "syncq/stats.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

#define OVERSUBSCRIPTION TEST_PLAN_OVERSUBSCRIPTION
#if SANITIZED
#define ITEMS_PER_PRODUCER 1500
#else
#define ITEMS_PER_PRODUCER 12000
#endif
#define STRESS_CAPACITY 64 /* small, so that bounded queues fill up */
#define YIELD_EVERY 61     /* prime: yields land at varying points */

static int n_threads(void) { return test_plan_oversubscribed(OVERSUBSCRIPTION); }

/* A queue whose operations may spin, never yielding, until a preempted
 * thread finishes (SYNCQ_PROP_SPINS_ON_PREEMPTED: ck_ring's and rte_ring's
 * producers wait for the tail to reach their slot): at 8x
 * oversubscription each such stall lasts until the scheduler has run
 * every spinner, and a run took minutes. Those are stressed at 2x
 * oversubscription (at least 4 threads): still preempted mid-operation,
 * in bounded time. Every other queue keeps 8x. Both on the confined PU
 * set (test_plan.h): on a 16-core machine, 2x over all 16 PUs was 16
 * producers in one chain of waits (each waits for the one before it to
 * publish), so a producer preempted mid-operation stalled the other 15,
 * and the tick preempts producers mostly inside that window, since they
 * spend their time spinning there: ck:ring_mpmc's 16P/16C run went past
 * 60 s where 2P/2C on 2 PUs takes seconds. */
#define SPINNER_OVERSUBSCRIPTION 2
#define SPINNER_MIN_THREADS 4

static bool spins_on_preempted(const syncq_algo *a) { return (a->props & SYNCQ_PROP_SPINS_ON_PREEMPTED) != 0; }

static int threads_for(const syncq_algo *a) {
  if (!spins_on_preempted(a)) return n_threads();
  int t = test_plan_oversubscribed(SPINNER_OVERSUBSCRIPTION);
  return t < SPINNER_MIN_THREADS ? SPINNER_MIN_THREADS : t;
}

static bool is_bounded(const syncq_algo *a) { return (a->props & SYNCQ_PROP_BOUNDED) != 0; }
/* Bounded, but FULL anywhere from capacity to 2 x capacity items (peer
 * rings that keep a slot empty get a ring of 2 x capacity). */
static bool is_loose(const syncq_algo *a) { return (a->props & SYNCQ_PROP_LOOSE_CAPACITY) != 0; }
static bool is_spsc(const syncq_algo *a) { return (a->props & SYNCQ_PROP_SPSC) != 0; }

/* Storage + init; NULL (after printing why) when the algorithm cannot run
 * here (ENOTSUP). Fails the test on any other error. */
static void *new_queue(const syncq_algo *a, size_t capacity) {
  const syncq_queue_ops *ops = a->ops;
  size_t bytes;
  assert_int_equal(ops->bytes(capacity, &bytes), SYNCQ_OK);
  void *q = syncq_alloc_aligned(bytes, ops->align);
  assert_non_null(q);
  int r = ops->init(q, capacity);
  if (r == SYNCQ_ENOTSUP) {
    print_message("queue %s: SKIPPED: init says %s on this machine\n", a->name, syncq_strerror(r));
    free(q);
    return NULL;
  }
  if (r == SYNCQ_ENOENT)
    fail_msg("queue %s: init says %s: a lock it needs is not registered yet", a->name, syncq_strerror(r));
  if (r != SYNCQ_OK) fail_msg("queue %s: init(%zu) -> %s", a->name, capacity, syncq_strerror(r));
  return q;
}

static void free_queue(const syncq_algo *a, void *q) {
  const syncq_queue_ops *ops = a->ops;
  assert_int_equal(ops->destroy(q), SYNCQ_OK);
  free(q);
}

static void *item_of(uintptr_t v) { return (void *)(v << 4); } /* non-NULL for v > 0 */

/* ---------------------------------------------------------------- sequential */

static void check_sequential(const syncq_algo *a) {
  const syncq_queue_ops *ops = a->ops;
  const size_t cap = 8;
  void *q = new_queue(a, cap);
  if (q == NULL) return;
  void *out = NULL;
  assert_int_equal(ops->dequeue(q, &out), SYNCQ_EMPTY);
  uintptr_t next_in = 1, next_out = 1;
  /* several turns of the ring, with the fill level varying */
  for (int round = 0; round < 40; round++) {
    size_t fill = 1 + (size_t)round % cap;
    for (size_t i = 0; i < fill; i++) assert_int_equal(ops->enqueue(q, item_of(next_in++)), SYNCQ_OK);
    for (size_t i = 0; i < fill; i++) {
      assert_int_equal(ops->dequeue(q, &out), SYNCQ_OK);
      assert_ptr_equal(out, item_of(next_out++));
    }
    assert_int_equal(ops->dequeue(q, &out), SYNCQ_EMPTY);
  }
  if (is_bounded(a) && is_loose(a)) {
    /* capacity items always fit; FULL comes by 2 x capacity; order kept */
    for (int round = 0; round < 5; round++) {
      size_t in = 0;
      int r;
      while ((r = ops->enqueue(q, item_of(next_in))) == SYNCQ_OK) {
        next_in++;
        if (++in > 2 * cap) fail_msg("queue %s: more than 2 x capacity (%zu) items fit", a->name, cap);
      }
      assert_int_equal(r, SYNCQ_FULL);
      if (in < cap) fail_msg("queue %s: FULL after %zu items, capacity %zu", a->name, in, cap);
      for (size_t i = 0; i < in; i++) {
        assert_int_equal(ops->dequeue(q, &out), SYNCQ_OK);
        assert_ptr_equal(out, item_of(next_out++));
      }
      assert_int_equal(ops->dequeue(q, &out), SYNCQ_EMPTY);
    }
  } else if (is_bounded(a)) {
    for (int round = 0; round < 5; round++) {
      for (size_t i = 0; i < cap; i++) assert_int_equal(ops->enqueue(q, item_of(next_in++)), SYNCQ_OK);
      assert_int_equal(ops->enqueue(q, item_of(999999)), SYNCQ_FULL);
      assert_int_equal(ops->dequeue(q, &out), SYNCQ_OK);
      assert_ptr_equal(out, item_of(next_out++));
      assert_int_equal(ops->enqueue(q, item_of(next_in++)), SYNCQ_OK);
      assert_int_equal(ops->enqueue(q, item_of(999999)), SYNCQ_FULL);
      for (size_t i = 0; i < cap; i++) {
        assert_int_equal(ops->dequeue(q, &out), SYNCQ_OK);
        assert_ptr_equal(out, item_of(next_out++));
      }
      assert_int_equal(ops->dequeue(q, &out), SYNCQ_EMPTY);
    }
  } else {
    /* unbounded: more than the sizing hint fits */
    for (size_t i = 0; i < 10 * cap; i++) assert_int_equal(ops->enqueue(q, item_of(next_in++)), SYNCQ_OK);
    for (size_t i = 0; i < 10 * cap; i++) {
      assert_int_equal(ops->dequeue(q, &out), SYNCQ_OK);
      assert_ptr_equal(out, item_of(next_out++));
    }
  }
  free_queue(a, q);
}

/* ---------------------------------------------------------------- bad inputs */

static void check_bad_inputs(const syncq_algo *a) {
  const syncq_queue_ops *ops = a->ops;
  size_t bytes;
  assert_int_equal(ops->bytes(8, NULL), SYNCQ_EINVAL);
  assert_int_equal(ops->init(NULL, 8), SYNCQ_EINVAL);
  assert_int_equal(ops->destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(ops->enqueue(NULL, item_of(1)), SYNCQ_EINVAL);
  void *out;
  assert_int_equal(ops->dequeue(NULL, &out), SYNCQ_EINVAL);
  if (is_bounded(a)) {
    const size_t bad[] = {0, 1, 3, 6, 100, SIZE_MAX, (SIZE_MAX >> 1) + 1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) assert_int_equal(ops->bytes(bad[i], &bytes), SYNCQ_EINVAL);
    assert_int_equal(ops->bytes(8, &bytes), SYNCQ_OK);
    void *raw = syncq_alloc_aligned(bytes + ops->align, ops->align);
    assert_non_null(raw);
    assert_int_equal(ops->init(raw, 0), SYNCQ_EINVAL);
    assert_int_equal(ops->init(raw, 1), SYNCQ_EINVAL);
    assert_int_equal(ops->init(raw, 3), SYNCQ_EINVAL);
    if (ops->align > 1) /* misaligned storage */
      assert_int_equal(ops->init((char *)raw + 1, 8), SYNCQ_EINVAL);
    free(raw);
  }
  void *q = new_queue(a, 8);
  if (q == NULL) return;
  assert_int_equal(ops->enqueue(q, NULL), SYNCQ_EINVAL);
  assert_int_equal(ops->dequeue(q, NULL), SYNCQ_EINVAL);
  free_queue(a, q);
}

/* ---------------------------------------------------------------- concurrent */

typedef struct item {
  uint32_t producer;
  uint32_t seq;
  _Atomic(uint32_t) owner; /* 0, then the consumer's id + 1 */
} item;

typedef struct stress {
  const syncq_queue_ops *ops;
  void *q;
  item *items; /* [producer][seq] */
  int producers, consumers, per_producer;
  _Atomic(long) consumed;
  _Atomic(int) errors;
  char error[256];
  bool strict_fifo; /* one producer, one consumer */
} stress;

typedef struct worker {
  stress *s;
  int id;
} worker;

static void report(stress *s, const char *msg, const item *it) {
  if (atomic_fetch_add(&s->errors, 1) == 0)
    snprintf(s->error, sizeof s->error, "%s (producer %u, seq %u)", msg, it ? it->producer : 0, it ? it->seq : 0);
}

static void *producer(void *p) {
  worker *w = p;
  stress *s = w->s;
  for (int i = 0; i < s->per_producer; i++) {
    item *it = &s->items[(size_t)w->id * (size_t)s->per_producer + (size_t)i];
    int r;
    while ((r = s->ops->enqueue(s->q, it)) == SYNCQ_FULL) syncq_yield();
    if (r != SYNCQ_OK) {
      report(s, "enqueue failed", it);
      return NULL;
    }
    if ((i + w->id) % YIELD_EVERY == 0) syncq_yield();
  }
  return NULL;
}

static void *consumer(void *p) {
  worker *w = p;
  stress *s = w->s;
  long total = (long)s->producers * s->per_producer;
  int64_t *last = malloc((size_t)s->producers * sizeof *last);
  if (last == NULL) {
    report(s, "out of memory", NULL);
    return NULL;
  }
  for (int i = 0; i < s->producers; i++) last[i] = -1;
  unsigned n = 0;
  while (atomic_load(&s->consumed) < total && atomic_load(&s->errors) == 0) {
    void *x;
    int r = s->ops->dequeue(s->q, &x);
    if (r == SYNCQ_EMPTY) {
      syncq_yield();
      continue;
    }
    if (r != SYNCQ_OK) {
      report(s, "dequeue failed", NULL);
      break;
    }
    item *it = x;
    if (it < s->items || it >= s->items + total) {
      report(s, "dequeued a pointer that was never enqueued", NULL);
      break;
    }
    /* ownership stamping: nobody may have taken this item before */
    uint32_t before = atomic_exchange(&it->owner, (uint32_t)w->id + 1);
    if (before != 0) report(s, "item dequeued twice (duplicate)", it);
    if ((int64_t)it->seq <= last[it->producer]) report(s, "per-producer order broken", it);
    if (s->strict_fifo && (int64_t)it->seq != last[it->producer] + 1) report(s, "FIFO order broken (1P1C)", it);
    last[it->producer] = it->seq;
    atomic_fetch_add(&s->consumed, 1);
    if (++n % YIELD_EVERY == (unsigned)w->id % YIELD_EVERY) syncq_yield();
  }
  free(last);
  return NULL;
}

static void run_stress(const syncq_algo *a, int producers, int consumers, int per_producer) {
  void *q = new_queue(a, STRESS_CAPACITY);
  if (q == NULL) return;
  stress *s = calloc(1, sizeof *s);
  assert_non_null(s);
  s->ops = a->ops;
  s->q = q;
  s->producers = producers;
  s->consumers = consumers;
  s->per_producer = per_producer;
  s->strict_fifo = producers == 1 && consumers == 1;
  size_t total = (size_t)producers * (size_t)per_producer;
  s->items = calloc(total, sizeof *s->items);
  assert_non_null(s->items);
  for (int p = 0; p < producers; p++)
    for (int i = 0; i < per_producer; i++) {
      item *it = &s->items[(size_t)p * (size_t)per_producer + (size_t)i];
      it->producer = (uint32_t)p;
      it->seq = (uint32_t)i;
      atomic_init(&it->owner, 0);
    }
  int n = producers + consumers;
  pthread_t *tids = calloc((size_t)n, sizeof *tids);
  worker *ws = calloc((size_t)n, sizeof *ws);
  assert_non_null(tids);
  assert_non_null(ws);
  for (int i = 0; i < n; i++) {
    ws[i] = (worker){s, i < producers ? i : i - producers};
    assert_int_equal(pthread_create(&tids[i], NULL, i < producers ? producer : consumer, &ws[i]), 0);
  }
  for (int i = 0; i < n; i++) pthread_join(tids[i], NULL);
  if (atomic_load(&s->errors) != 0) fail_msg("queue %s, %dP/%dC: %s", a->name, producers, consumers, s->error);
  /* no loss: every item was taken exactly once, and the queue is empty */
  for (size_t i = 0; i < total; i++)
    if (atomic_load(&s->items[i].owner) == 0)
      fail_msg("queue %s, %dP/%dC: item (producer %u, seq %u) lost", a->name, producers, consumers,
               s->items[i].producer, s->items[i].seq);
  void *x;
  assert_int_equal(s->ops->dequeue(q, &x), SYNCQ_EMPTY);
  free_queue(a, q);
  free(s->items);
  free(s);
  free(tids);
  free(ws);
}

/* ------------------------------------------------- never empty when prefilled */

/* A queue prefilled with NEVER_EMPTY_PREFILL items; every thread enqueues
 * one item and then dequeues one, over and over, so the queue always holds
 * at least the prefill: a dequeue answering EMPTY (or an enqueue answering
 * FULL, the capacity being far above prefill + threads) is not
 * linearizable. This is what caught a peer adapter that reused dequeued
 * nodes at once (ck_fifo_mpmc then sees head == tail on a recycled node). */
#define NEVER_EMPTY_PREFILL 1
#define NEVER_EMPTY_CAPACITY 256
#define NEVER_EMPTY_ITERS 3000

typedef struct never_empty {
  const syncq_queue_ops *ops;
  void *q;
  _Atomic(long) empties, fulls, errors;
} never_empty;

static void *never_empty_thread(void *p) {
  never_empty *n = p;
  for (int i = 0; i < NEVER_EMPTY_ITERS; i++) {
    int r = n->ops->enqueue(n->q, item_of((uintptr_t)i + 1));
    if (r == SYNCQ_FULL) atomic_fetch_add(&n->fulls, 1);
    else if (r != SYNCQ_OK) atomic_fetch_add(&n->errors, 1);
    void *x;
    r = n->ops->dequeue(n->q, &x);
    if (r == SYNCQ_EMPTY) atomic_fetch_add(&n->empties, 1);
    else if (r != SYNCQ_OK) atomic_fetch_add(&n->errors, 1);
    if (i % YIELD_EVERY == 0) syncq_yield();
  }
  return NULL;
}

static void check_never_empty(const syncq_algo *a) {
  void *q = new_queue(a, NEVER_EMPTY_CAPACITY);
  if (q == NULL) return;
  never_empty n;
  memset(&n, 0, sizeof n);
  n.ops = a->ops;
  n.q = q;
  for (uintptr_t i = 1; i <= NEVER_EMPTY_PREFILL; i++) assert_int_equal(n.ops->enqueue(q, item_of(i)), SYNCQ_OK);
  int t = threads_for(a);
  assert_true(NEVER_EMPTY_PREFILL + t <= NEVER_EMPTY_CAPACITY);
  pthread_t *tids = calloc((size_t)t, sizeof *tids);
  assert_non_null(tids);
  for (int i = 0; i < t; i++) assert_int_equal(pthread_create(&tids[i], NULL, never_empty_thread, &n), 0);
  for (int i = 0; i < t; i++) pthread_join(tids[i], NULL);
  free(tids);
  void *x;
  long left = 0;
  while (n.ops->dequeue(q, &x) == SYNCQ_OK) left++;
  free_queue(a, q);
  long e = atomic_load(&n.empties), f = atomic_load(&n.fulls);
  assert_int_equal(atomic_load(&n.errors), 0);
  /* FULL cannot come here (capacity far above prefill + threads), so a
   * queue linearizable except at FULL is held to it too. */
  if (!(a->props & SYNCQ_PROP_LINEARIZABLE) && !test_queue_linearizable_except_full(a)) {
    print_message(
      "queue %s: prefilled, %d threads: %ld EMPTY and %ld FULL answers (not linearizable by "
      "contract: reported, not asserted)\n",
      a->name, t, e, f);
    return;
  }
  if (e != 0 || f != 0)
    fail_msg(
      "queue %s: prefilled with %d items, %d threads each enqueue then dequeue: %ld dequeues answered "
      "EMPTY and %ld enqueues FULL",
      a->name, NEVER_EMPTY_PREFILL, t, e, f);
  /* every enqueue was answered OK and every dequeue took one: the prefill is left */
  assert_int_equal(left, NEVER_EMPTY_PREFILL);
}

static void test_every_registered_queue(void **state) {
  (void)state;
  const syncq_algo *algos[SYNCQ_REGISTRY_MAX];
  int n = syncq_registry_list(SYNCQ_FAMILY_QUEUE, algos, SYNCQ_REGISTRY_MAX);
  assert_true(n >= 3);
  for (int i = 0; i < n; i++) {
    const syncq_algo *a = algos[i];
    int t = threads_for(a);
    if (t != n_threads())
      print_message(
        "queue %s: stressed with %d threads, not %d: it may spin without yielding on a "
        "preempted thread (spins-on-preempted), which makes 8x oversubscription take unbounded time\n",
        a->name, t, n_threads());
    if (is_spsc(a)) {
      print_message(
        "queue %s: sequential, bad inputs, 1P/1C; multi-producer/consumer runs SKIPPED: "
        "single producer, single consumer only (SYNCQ_PROP_SPSC)\n",
        a->name);
      check_bad_inputs(a);
      check_sequential(a);
      run_stress(a, 1, 1, ITEMS_PER_PRODUCER * 2);
      continue;
    }
    print_message("queue %s: sequential, bad inputs, 1P/1C, %dP/%dC x %d items\n", a->name, t / 2, t - t / 2,
                  ITEMS_PER_PRODUCER);
    if (!(a->props & SYNCQ_PROP_FIFO))
      print_message("queue %s: no FIFO order across producers promised: only each producer's order is checked\n",
                    a->name);
    check_bad_inputs(a);
    check_sequential(a);
    run_stress(a, 1, 1, ITEMS_PER_PRODUCER * 2);
    run_stress(a, 1, t - 1, ITEMS_PER_PRODUCER * 2); /* FIFO of one producer, seen by many */
    check_never_empty(a);
    run_stress(a, t / 2, t - t / 2, ITEMS_PER_PRODUCER);
  }
}

/* ---------------------------------------------------------------- generic API */

static void test_generic_api(void **state) {
  (void)state;
  syncq_queue *q = NULL;
  void *out;
  assert_int_equal(syncq_queue_create("nblfq", 4, &q), SYNCQ_OK);
  assert_string_equal(syncq_queue_algo(q)->name, "nblfq");
  assert_int_equal(syncq_queue_enqueue(q, item_of(1)), SYNCQ_OK);
  assert_int_equal(syncq_queue_enqueue(q, item_of(2)), SYNCQ_OK);
  assert_int_equal(syncq_queue_dequeue(q, &out), SYNCQ_OK);
  assert_ptr_equal(out, item_of(1));
  assert_int_equal(syncq_queue_destroy(q), SYNCQ_OK);
  /* bad inputs */
  assert_int_equal(syncq_queue_create("no-such-queue", 4, &q), SYNCQ_ENOENT);
  assert_int_equal(syncq_queue_create(NULL, 4, &q), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_create("nblfq", 4, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_create("nblfq", 0, &q), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_create("nblfq", 1, &q), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_create("nblfq", 12, &q), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_enqueue(NULL, item_of(1)), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_dequeue(NULL, &out), SYNCQ_EINVAL);
  assert_null(syncq_queue_algo(NULL));
  assert_int_equal(syncq_queue_create("naive-ring", 2, &q), SYNCQ_OK);
  assert_int_equal(syncq_queue_enqueue(q, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_dequeue(q, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_dequeue(q, &out), SYNCQ_EMPTY);
  assert_int_equal(syncq_queue_destroy(q), SYNCQ_OK);
}

/* ---------------------------------------------------------------- typed APIs */

static void test_typed_nblfq(void **state) {
  (void)state;
  /* caller storage: static, as a signal handler or shared memory would use */
  static SYNCQ_CACHELINE_ALIGNED unsigned char buf[SYNCQ_QUEUE_NBLFQ_BYTES(16)];
  syncq_queue_nblfq *q = (syncq_queue_nblfq *)(void *)buf;
  size_t bytes;
  assert_int_equal(syncq_queue_nblfq_bytes(16, &bytes), SYNCQ_OK);
  assert_int_equal(bytes, sizeof buf);
  assert_int_equal(syncq_queue_nblfq_init(q, 16), SYNCQ_OK);
  assert_int_equal(syncq_queue_nblfq_capacity(q), 16);
  assert_int_equal(syncq_queue_nblfq_capacity(NULL), 0);
  /* a pointer wider than 48 bits cannot be tagged: refused, not truncated */
  assert_int_equal(syncq_queue_nblfq_enqueue(q, (void *)(uintptr_t)(UINT64_C(1) << 48)), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_nblfq_enqueue(q, (void *)(uintptr_t)UINT64_C(0xffff800000001000)), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_nblfq_enqueue(q, (void *)(uintptr_t)SYNCQ_TAGPTR_PTR_MASK), SYNCQ_OK);
  void *out;
  assert_int_equal(syncq_queue_nblfq_dequeue(q, &out), SYNCQ_OK);
  assert_ptr_equal(out, (void *)(uintptr_t)SYNCQ_TAGPTR_PTR_MASK);
  assert_int_equal(syncq_queue_nblfq_dequeue(q, &out), SYNCQ_EMPTY);
  assert_int_equal(syncq_queue_nblfq_destroy(q), SYNCQ_OK);
  assert_int_equal(syncq_queue_nblfq_destroy(q), SYNCQ_EINVAL); /* not initialised any more */
  assert_int_equal(syncq_queue_nblfq_init(q, 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_nblfq_init(q, 1), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_nblfq_init(q, 24), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_nblfq_bytes(16, NULL), SYNCQ_EINVAL);
}

static void test_typed_nblfq2(void **state) {
  (void)state;
  static SYNCQ_CACHELINE_ALIGNED unsigned char buf[SYNCQ_QUEUE_NBLFQ2_BYTES(8)];
  syncq_queue_nblfq2 *q = (syncq_queue_nblfq2 *)(void *)buf;
  int r = syncq_queue_nblfq2_init(q, 8);
  if (!syncq_pr_dwcas_available()) {
    assert_int_equal(r, SYNCQ_ENOTSUP); /* the DWCAS variant where DWCAS is missing */
    skip();
  }
  assert_int_equal(r, SYNCQ_OK);
  /* all 64 bits of a pointer are kept: no tag shares the word */
  void *wide = (void *)(uintptr_t)UINT64_C(0xffff800000001000);
  assert_int_equal(syncq_queue_nblfq2_enqueue(q, wide), SYNCQ_OK);
  void *out;
  assert_int_equal(syncq_queue_nblfq2_dequeue(q, &out), SYNCQ_OK);
  assert_ptr_equal(out, wide);
  assert_int_equal(syncq_queue_nblfq2_enqueue(q, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_nblfq2_dequeue(q, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_nblfq2_capacity(q), 8);
  assert_int_equal(syncq_queue_nblfq2_destroy(q), SYNCQ_OK);
  assert_int_equal(syncq_queue_nblfq2_init(q, 1), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_nblfq2_init(NULL, 8), SYNCQ_EINVAL);
}

static void test_typed_naive_ring(void **state) {
  (void)state;
  static SYNCQ_CACHELINE_ALIGNED unsigned char buf[SYNCQ_QUEUE_NAIVE_RING_BYTES(2)];
  syncq_queue_naive_ring *q = (syncq_queue_naive_ring *)(void *)buf;
  void *out;
  assert_int_equal(syncq_queue_naive_ring_init(q, 2), SYNCQ_OK);
  assert_int_equal(syncq_queue_naive_ring_enqueue(q, item_of(1)), SYNCQ_OK);
  assert_int_equal(syncq_queue_naive_ring_enqueue(q, item_of(2)), SYNCQ_OK);
  assert_int_equal(syncq_queue_naive_ring_enqueue(q, item_of(3)), SYNCQ_FULL);
  assert_int_equal(syncq_queue_naive_ring_dequeue(q, &out), SYNCQ_OK);
  assert_ptr_equal(out, item_of(1));
  assert_int_equal(syncq_queue_naive_ring_destroy(q), SYNCQ_OK);
  assert_int_equal(syncq_queue_naive_ring_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_naive_ring_init(q, 1), SYNCQ_EINVAL);
}

static void test_typed_others(void **state) {
  (void)state;
  void *out;
  static SYNCQ_CACHELINE_ALIGNED unsigned char vb[SYNCQ_QUEUE_VYUKOV_BYTES(4)];
  syncq_queue_vyukov *v = (syncq_queue_vyukov *)(void *)vb;
  assert_int_equal(syncq_queue_vyukov_init(v, 4), SYNCQ_OK);
  assert_int_equal(syncq_queue_vyukov_enqueue(v, item_of(1)), SYNCQ_OK);
  assert_int_equal(syncq_queue_vyukov_dequeue(v, &out), SYNCQ_OK);
  assert_int_equal(syncq_queue_vyukov_dequeue(v, &out), SYNCQ_EMPTY);
  assert_int_equal(syncq_queue_vyukov_destroy(v), SYNCQ_OK);
  assert_int_equal(syncq_queue_vyukov_init(v, 5), SYNCQ_EINVAL);

  static SYNCQ_CACHELINE_ALIGNED unsigned char fb[SYNCQ_QUEUE_FAI_ARRAY_BYTES(4)];
  syncq_queue_fai_array *f = (syncq_queue_fai_array *)(void *)fb;
  assert_int_equal(syncq_queue_fai_array_init(f, 4), SYNCQ_OK);
  assert_int_equal(syncq_queue_fai_array_enqueue(f, (void *)(uintptr_t)(UINT64_C(1) << 48)), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_fai_array_enqueue(f, item_of(1)), SYNCQ_OK);
  assert_int_equal(syncq_queue_fai_array_dequeue(f, &out), SYNCQ_OK);
  assert_ptr_equal(out, item_of(1));
  assert_int_equal(syncq_queue_fai_array_destroy(f), SYNCQ_OK);

  static SYNCQ_CACHELINE_ALIGNED unsigned char sb[SYNCQ_QUEUE_SCQ_BYTES(4)];
  syncq_queue_scq *s = (syncq_queue_scq *)(void *)sb;
  assert_int_equal(syncq_queue_scq_init(s, 4), SYNCQ_OK);
  for (uintptr_t i = 1; i <= 4; i++) assert_int_equal(syncq_queue_scq_enqueue(s, item_of(i)), SYNCQ_OK);
  assert_int_equal(syncq_queue_scq_enqueue(s, item_of(5)), SYNCQ_FULL);
  assert_int_equal(syncq_queue_scq_dequeue(s, &out), SYNCQ_OK);
  assert_ptr_equal(out, item_of(1));
  assert_int_equal(syncq_queue_scq_destroy(s), SYNCQ_OK);
  assert_int_equal(syncq_queue_scq_init(s, 1), SYNCQ_EINVAL);

  /* lock queues: the lock is found by name; an unknown one is ENOENT */
  syncq_queue_two_lock *t = syncq_alloc_aligned(sizeof *t, _Alignof(syncq_queue_two_lock));
  syncq_queue_single_lock *o = syncq_alloc_aligned(sizeof *o, _Alignof(syncq_queue_single_lock));
  assert_non_null(t);
  assert_non_null(o);
  assert_int_equal(syncq_queue_two_lock_init(t, "no-such-lock"), SYNCQ_ENOENT);
  assert_int_equal(syncq_queue_single_lock_init(o, "no-such-lock"), SYNCQ_ENOENT);
  assert_int_equal(syncq_queue_two_lock_init(t, "pthread-mutex"), SYNCQ_OK);
  assert_int_equal(syncq_queue_two_lock_enqueue(t, item_of(7)), SYNCQ_OK);
  assert_int_equal(syncq_queue_two_lock_destroy(t), SYNCQ_OK); /* frees the node left in it */
  assert_int_equal(syncq_queue_single_lock_init(o, NULL), SYNCQ_OK);
  assert_int_equal(syncq_queue_single_lock_enqueue(o, item_of(7)), SYNCQ_OK);
  assert_int_equal(syncq_queue_single_lock_dequeue(o, &out), SYNCQ_OK);
  assert_int_equal(syncq_queue_single_lock_destroy(o), SYNCQ_OK);
  assert_int_equal(syncq_queue_two_lock_init(NULL, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_single_lock_destroy(NULL), SYNCQ_EINVAL);
  free(t);
  free(o);

  syncq_queue_ms *m = syncq_alloc_aligned(sizeof *m, _Alignof(syncq_queue_ms));
  assert_non_null(m);
  int r = syncq_queue_ms_init(m, 2);
  if (r == SYNCQ_OK) {
    /* more items than the nodes made at init: the free list grows */
    for (uintptr_t i = 1; i <= 1000; i++) assert_int_equal(syncq_queue_ms_enqueue(m, item_of(i)), SYNCQ_OK);
    for (uintptr_t i = 1; i <= 1000; i++) {
      assert_int_equal(syncq_queue_ms_dequeue(m, &out), SYNCQ_OK);
      assert_ptr_equal(out, item_of(i));
    }
    assert_int_equal(syncq_queue_ms_destroy(m), SYNCQ_OK);
  } else {
    assert_int_equal(r, SYNCQ_ENOTSUP);
  }
  free(m);
}

static void test_nblfq_counts_cas(void **state) {
  (void)state;
  /* uncontended: exactly one CAS per operation, none failed, no retry */
  if (!syncq_stats_enabled()) skip();
  static SYNCQ_CACHELINE_ALIGNED unsigned char buf[SYNCQ_QUEUE_NBLFQ_BYTES(8)];
  syncq_queue_nblfq *q = (syncq_queue_nblfq *)(void *)buf;
  assert_int_equal(syncq_queue_nblfq_init(q, 8), SYNCQ_OK);
  syncq_stats_reset();
  void *out;
  for (int i = 1; i <= 100; i++) {
    assert_int_equal(syncq_queue_nblfq_enqueue(q, item_of((uintptr_t)i)), SYNCQ_OK);
    assert_int_equal(syncq_queue_nblfq_dequeue(q, &out), SYNCQ_OK);
  }
  assert_int_equal(syncq_stats_self()->cas_attempts, 200);
  assert_int_equal(syncq_stats_self()->cas_failures, 0);
  assert_int_equal(syncq_stats_self()->retries, 0);
}

/* SYNCQ_PROP_SPINS_ON_PREEMPTED says an operation waits inside the call for
 * another thread: only a blocking, bounded, multi-producer structure can
 * promise that. A lock-free or wait-free entry, an unbounded one or an SPSC
 * ring (whose two sides never wait for each other) carrying it is a wrong
 * registration, and so would be a property on another family. */
static void test_spins_on_preempted_is_consistent(void **state) {
  (void)state;
  int spinners = 0;
  for (int f = 0; f < SYNCQ_FAMILY_COUNT; f++) {
    const syncq_algo *algos[SYNCQ_REGISTRY_MAX];
    int n = syncq_registry_list((syncq_family)f, algos, SYNCQ_REGISTRY_MAX);
    for (int i = 0; i < n; i++) {
      const syncq_algo *a = algos[i];
      if (!spins_on_preempted(a)) continue;
      spinners++;
      /* syncq's own waiting rings (naive-ring, fai-array) yield while they wait: only peers spin */
      if (a->family != SYNCQ_FAMILY_QUEUE || a->progress != SYNCQ_PROGRESS_BLOCKING || !is_bounded(a) || is_spsc(a) ||
          !(a->props & SYNCQ_PROP_PEER))
        fail_msg("%s %s: spins-on-preempted with progress %s, properties 0x%x", syncq_family_name(a->family), a->name,
                 syncq_progress_name(a->progress), (unsigned)a->props);
    }
  }
  print_message("queue: %d registered entries spin on a preempted thread\n", spinners);
}

#ifdef SYNCQ_TEST_EXTRA_QUEUE
/* A queue from outside the library, linked into this driver's build
 * (toy_queue_test, tests/registry/CMakeLists.txt): registered first, so
 * that every test below runs it with the built-in ones. */
extern const syncq_algo SYNCQ_TEST_EXTRA_QUEUE;

static int register_extra_queue(void) {
  const syncq_algo *found = NULL;
  int r = syncq_registry_add(&SYNCQ_TEST_EXTRA_QUEUE);
  if (r == SYNCQ_OK) r = syncq_registry_find(SYNCQ_FAMILY_QUEUE, SYNCQ_TEST_EXTRA_QUEUE.name, &found);
  if (r != SYNCQ_OK || found != &SYNCQ_TEST_EXTRA_QUEUE) {
    fprintf(stderr, "queue %s: not registered: %s\n", SYNCQ_TEST_EXTRA_QUEUE.name, syncq_strerror(r));
    return 1;
  }
  return 0;
}
#endif

/* A lock whose acquire can be made to refuse (SYNCQ_ELIMIT, as a lock of
 * fixed places answers when they are all taken): a pthread mutex
 * otherwise. Registered by the one test that names it, the last to run. */
static _Atomic(bool) refusing_lock_refuses;

typedef struct refusing_lock {
  pthread_mutex_t m;
} refusing_lock;

static int rl_init(refusing_lock *l, const syncq_lock_config *cfg) {
  (void)cfg;
  return pthread_mutex_init(&l->m, NULL) == 0 ? SYNCQ_OK : SYNCQ_ESYS;
}
static int rl_destroy(refusing_lock *l) { return pthread_mutex_destroy(&l->m) == 0 ? SYNCQ_OK : SYNCQ_EBUSY; }
static int rl_lock(refusing_lock *l, syncq_lock_node *n) {
  (void)n;
  if (atomic_load(&refusing_lock_refuses)) return SYNCQ_ELIMIT;
  return pthread_mutex_lock(&l->m) == 0 ? SYNCQ_OK : SYNCQ_ESYS;
}
static int rl_trylock(refusing_lock *l, syncq_lock_node *n) {
  (void)n;
  return pthread_mutex_trylock(&l->m) == 0 ? SYNCQ_OK : SYNCQ_EBUSY;
}
static int rl_unlock(refusing_lock *l, syncq_lock_node *n) {
  (void)n;
  return pthread_mutex_unlock(&l->m) == 0 ? SYNCQ_OK : SYNCQ_ESYS;
}
SYNCQ_LOCK_REGISTER_FNS(refusing_lock, "refusing-test-lock", "a pthread mutex whose lock can refuse (test)", "-",
                        BLOCKING, 0, refusing_lock, rl_init, rl_destroy, rl_lock, rl_trylock, rl_unlock);

/* The lock-based queues pass on a lock that refuses: the call answers the
 * lock's status, links no node (none leaks: LeakSanitizer) and reads
 * nothing, and the queue is whole once the lock admits again. They ran
 * the critical section without the lock before. */
static void test_lock_queue_lock_refused(void **state) {
  (void)state;
  assert_int_equal(syncq_registry_add(&syncq_lock_refusing_lock_algo), SYNCQ_OK);
  syncq_queue_two_lock *t = syncq_alloc_aligned(sizeof *t, _Alignof(syncq_queue_two_lock));
  syncq_queue_single_lock *o = syncq_alloc_aligned(sizeof *o, _Alignof(syncq_queue_single_lock));
  assert_non_null(t);
  assert_non_null(o);
  assert_int_equal(syncq_queue_two_lock_init(t, "refusing-test-lock"), SYNCQ_OK);
  assert_int_equal(syncq_queue_single_lock_init(o, "refusing-test-lock"), SYNCQ_OK);
  void *out = NULL;
  assert_int_equal(syncq_queue_two_lock_enqueue(t, item_of(1)), SYNCQ_OK);
  assert_int_equal(syncq_queue_single_lock_enqueue(o, item_of(1)), SYNCQ_OK);
  atomic_store(&refusing_lock_refuses, true);
  assert_int_equal(syncq_queue_two_lock_enqueue(t, item_of(2)), SYNCQ_ELIMIT);
  assert_int_equal(syncq_queue_single_lock_enqueue(o, item_of(2)), SYNCQ_ELIMIT);
  assert_int_equal(syncq_queue_two_lock_dequeue(t, &out), SYNCQ_ELIMIT);
  assert_int_equal(syncq_queue_single_lock_dequeue(o, &out), SYNCQ_ELIMIT);
  assert_null(out);
  atomic_store(&refusing_lock_refuses, false);
  assert_int_equal(syncq_queue_two_lock_dequeue(t, &out), SYNCQ_OK);
  assert_ptr_equal(out, item_of(1));
  assert_int_equal(syncq_queue_two_lock_dequeue(t, &out), SYNCQ_EMPTY);
  assert_int_equal(syncq_queue_single_lock_dequeue(o, &out), SYNCQ_OK);
  assert_ptr_equal(out, item_of(1));
  assert_int_equal(syncq_queue_single_lock_dequeue(o, &out), SYNCQ_EMPTY);
  assert_int_equal(syncq_queue_two_lock_destroy(t), SYNCQ_OK);
  assert_int_equal(syncq_queue_single_lock_destroy(o), SYNCQ_OK);
  free(t);
  free(o);
}

int main(void) {
  test_plan_confine();
  test_register_peers();
#ifdef SYNCQ_TEST_EXTRA_QUEUE
  if (register_extra_queue() != 0) return 1;
#endif
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_spins_on_preempted_is_consistent),
    cmocka_unit_test(test_every_registered_queue),
    cmocka_unit_test(test_generic_api),
    cmocka_unit_test(test_typed_nblfq),
    cmocka_unit_test(test_typed_nblfq2),
    cmocka_unit_test(test_typed_naive_ring),
    cmocka_unit_test(test_nblfq_counts_cas),
    cmocka_unit_test(test_typed_others),
    cmocka_unit_test(test_lock_queue_lock_refused), /* last: it registers a lock */
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
