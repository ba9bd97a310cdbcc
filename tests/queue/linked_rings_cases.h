/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * linked_rings_cases.h — the checks that lcrq_test.c and lprq_test.c run on
 * their queue through its typed API: what the family driver (queue_test,
 * queue_lincheck_test) does not reach because it sizes rings from its
 * capacities (8 to 256 cells, rarely closed).
 *
 *   - bad inputs: NULL, misaligned storage, ring sizes that are not powers
 *     of two in [2, 2^24], a queue not initialised, NULL items;
 *   - ring turnover, sequentially: with 2-cell rings every second enqueue
 *     closes a ring and links a new one; FIFO across hundreds of rings;
 *     emptied rings are freed while the queue runs (hazard-pointer scans),
 *     and a queue destroyed while it still holds items leaks nothing
 *     (LeakSanitizer checks that in the ASan build);
 *   - 4 producers + 4 consumers through 2- and 8-cell rings: per-producer
 *     order, no loss, no duplicate, ownership stamping, rings linked;
 *   - a queue that is never empty (each thread enqueues, then dequeues)
 *     through a 4-cell ring that turns over many cycles: no EMPTY answer;
 *   - empty polls, deterministic: a consumer polling the empty queue
 *     between items takes no ticket (the ring's head moves once per item);
 *   - linearizability of short histories (tests/support/lincheck.h)
 *     through 2-cell rings, so that histories cross ring boundaries.
 *
 * The including file defines RQ (the typed queue type), RQ_INIT_RING,
 * RQ_DESTROY, RQ_ENQUEUE, RQ_DEQUEUE, RQ_LINKED, RQ_FREED and RQ_NAME, then
 * includes this file and adds its own tests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include "lincheck.h"
#include "queue/linked_rings.h" /* the ring's head and tail counters, for the empty-poll count */
#include "queue_history.h"
#include "syncq/platform.h"
#include "syncq/queue.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

#if SANITIZED
#define LR_ITEMS 3000
#define LR_HISTORIES 800
#else
#define LR_ITEMS 20000
#define LR_HISTORIES 3000
#endif
#define LR_PRODUCERS 4
#define LR_CONSUMERS 4
#define LR_YIELD_EVERY 37

static void *lr_item(uintptr_t v) { return (void *)(v << 4); }

/* A fresh queue with rings of `ring` cells; NULL when the queue cannot run
 * here (SYNCQ_ENOTSUP: the caller skips). */
static RQ *lr_new(size_t ring) {
  RQ *q = syncq_alloc_aligned(sizeof(RQ), _Alignof(RQ));
  assert_non_null(q);
  int r = RQ_INIT_RING(q, ring);
  if (r == SYNCQ_ENOTSUP) {
    free(q);
    return NULL;
  }
  assert_int_equal(r, SYNCQ_OK);
  return q;
}

static void lr_free(RQ *q) {
  assert_int_equal(RQ_DESTROY(q), SYNCQ_OK);
  free(q);
}

static void test_bad_inputs(void **state) {
  (void)state;
  unsigned char *raw = syncq_alloc_aligned(2 * sizeof(RQ), _Alignof(RQ));
  assert_non_null(raw);
  RQ *q = (RQ *)(void *)raw;
  const size_t bad[] = {0, 1, 3, 6, 100, ((size_t)1 << 24) + 1, (size_t)1 << 25, SIZE_MAX, (SIZE_MAX >> 1) + 1};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) assert_int_equal(RQ_INIT_RING(q, bad[i]), SYNCQ_EINVAL);
  assert_int_equal(RQ_INIT_RING(NULL, 8), SYNCQ_EINVAL);
  assert_int_equal(RQ_INIT_RING((RQ *)(void *)(raw + 8), 8), SYNCQ_EINVAL); /* misaligned */
  memset(raw, 0, sizeof(RQ));
  assert_int_equal(RQ_DESTROY(q), SYNCQ_EINVAL); /* never initialised */
  assert_int_equal(RQ_DESTROY(NULL), SYNCQ_EINVAL);
  assert_int_equal(RQ_ENQUEUE(NULL, lr_item(1)), SYNCQ_EINVAL);
  void *out;
  assert_int_equal(RQ_DEQUEUE(NULL, &out), SYNCQ_EINVAL);
  assert_int_equal(RQ_LINKED(NULL), 0);
  assert_int_equal(RQ_FREED(NULL), 0);
  free(raw);

  q = lr_new(8);
  if (q == NULL) skip();
  assert_int_equal(RQ_ENQUEUE(q, NULL), SYNCQ_EINVAL);
  assert_int_equal(RQ_DEQUEUE(q, NULL), SYNCQ_EINVAL);
  assert_int_equal(RQ_DEQUEUE(q, &out), SYNCQ_EMPTY);
  assert_int_equal(RQ_DESTROY(q), SYNCQ_OK);
  assert_int_equal(RQ_DESTROY(q), SYNCQ_EINVAL); /* destroyed: not initialised any more */
  free(q);
  /* the extremes of the ring size are accepted */
  q = lr_new(2);
  lr_free(q);
}

/* 2-cell rings: FIFO across hundreds of ring closings; emptied rings are
 * freed while the queue runs. */
static void test_ring_turnover(void **state) {
  (void)state;
  RQ *q = lr_new(2);
  if (q == NULL) skip();
  uintptr_t in = 1, out_next = 1;
  void *out;
  for (int round = 0; round < 20; round++) {
    int fill = 1 + round * 7;
    for (int i = 0; i < fill; i++) assert_int_equal(RQ_ENQUEUE(q, lr_item(in++)), SYNCQ_OK);
    for (int i = 0; i < fill; i++) {
      assert_int_equal(RQ_DEQUEUE(q, &out), SYNCQ_OK);
      assert_ptr_equal(out, lr_item(out_next++));
    }
    assert_int_equal(RQ_DEQUEUE(q, &out), SYNCQ_EMPTY);
  }
  uint64_t linked = RQ_LINKED(q), freed = RQ_FREED(q);
  print_message("%s, 2-cell rings, %lu items: %llu rings linked, %llu freed while running\n", RQ_NAME,
                (unsigned long)(in - 1), (unsigned long long)linked, (unsigned long long)freed);
  assert_true(linked >= (in - 1) / 4); /* a ring holds 2 items: most fills closed rings */
  assert_true(freed > 0);              /* hazard-pointer scans ran */
  assert_true(freed <= linked);
  lr_free(q);
}

/* Every ring size from 2 to 1024 cells (cells of consecutive tickets sit
 * on different cache lines from 8 cells up): fills of every length up to
 * 3 rings, each drained in order, then EMPTY; the rings keep turning over
 * (tickets past several cycles of each cell). Alone, no ticket is lost but
 * to a full ring, so a fill of f links exactly ceil(f / R) - 1 rings (a
 * cell that did not serve its ticket would close rings early). */
static void test_ring_sizes_fifo(void **state) {
  (void)state;
  for (size_t ring = 2; ring <= 1024; ring *= 2) {
    RQ *q = lr_new(ring);
    if (q == NULL) skip();
    uintptr_t in = 1, out_next = 1;
    uint64_t linked = 0;
    void *out;
    for (size_t fill = 1; fill <= 3 * ring; fill += 1 + fill / 3) {
      for (size_t i = 0; i < fill; i++) assert_int_equal(RQ_ENQUEUE(q, lr_item(in++)), SYNCQ_OK);
      linked += (fill + ring - 1) / ring - 1;
      assert_int_equal(RQ_LINKED(q), linked);
      for (size_t i = 0; i < fill; i++) {
        assert_int_equal(RQ_DEQUEUE(q, &out), SYNCQ_OK);
        assert_ptr_equal(out, lr_item(out_next++));
      }
      assert_int_equal(RQ_DEQUEUE(q, &out), SYNCQ_EMPTY);
    }
    lr_free(q);
  }
}

/* Destroyed while it holds items in many rings: every ring is freed
 * (LeakSanitizer, in the ASan build, fails the run otherwise). */
static void test_destroy_non_empty(void **state) {
  (void)state;
  RQ *q = lr_new(4);
  if (q == NULL) skip();
  void *out;
  for (uintptr_t i = 1; i <= 1000; i++) assert_int_equal(RQ_ENQUEUE(q, lr_item(i)), SYNCQ_OK);
  for (uintptr_t i = 1; i <= 500; i++) {
    assert_int_equal(RQ_DEQUEUE(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, lr_item(i));
  }
  assert_true(RQ_LINKED(q) >= 1000 / 4 - 1);
  lr_free(q);
}

/* ------------------------------------------------------------ concurrent */

typedef struct lr_item_rec {
  uint32_t producer, seq;
  _Atomic(uint32_t) owner;
} lr_item_rec;

typedef struct lr_stress {
  RQ *q;
  lr_item_rec *items;
  _Atomic(long) consumed;
  _Atomic(int) errors;
  char error[160];
} lr_stress;

typedef struct lr_worker {
  lr_stress *s;
  int id;
} lr_worker;

static void lr_report(lr_stress *s, const char *msg) {
  if (atomic_fetch_add(&s->errors, 1) == 0) snprintf(s->error, sizeof s->error, "%s", msg);
}

static void *lr_producer(void *p) {
  lr_worker *w = p;
  for (int i = 0; i < LR_ITEMS; i++) {
    if (RQ_ENQUEUE(w->s->q, &w->s->items[(size_t)w->id * LR_ITEMS + (size_t)i]) != SYNCQ_OK) {
      lr_report(w->s, "enqueue failed");
      return NULL;
    }
    if ((i + w->id) % LR_YIELD_EVERY == 0) syncq_yield();
  }
  return NULL;
}

static void *lr_consumer(void *p) {
  lr_worker *w = p;
  lr_stress *s = w->s;
  int64_t last[LR_PRODUCERS];
  for (int i = 0; i < LR_PRODUCERS; i++) last[i] = -1;
  const long total = (long)LR_PRODUCERS * LR_ITEMS;
  unsigned n = 0;
  while (atomic_load(&s->consumed) < total && atomic_load(&s->errors) == 0) {
    void *x;
    int r = RQ_DEQUEUE(s->q, &x);
    if (r == SYNCQ_EMPTY) {
      syncq_yield();
      continue;
    }
    if (r != SYNCQ_OK) {
      lr_report(s, "dequeue failed");
      break;
    }
    lr_item_rec *it = x;
    if (it < s->items || it >= s->items + total) {
      lr_report(s, "dequeued a pointer never enqueued");
      break;
    }
    if (atomic_exchange(&it->owner, (uint32_t)w->id + 1) != 0) lr_report(s, "item dequeued twice");
    if ((int64_t)it->seq <= last[it->producer]) lr_report(s, "per-producer order broken");
    last[it->producer] = it->seq;
    atomic_fetch_add(&s->consumed, 1);
    if (++n % LR_YIELD_EVERY == (unsigned)w->id) syncq_yield();
  }
  return NULL;
}

static void lr_run_stress(size_t ring) {
  RQ *q = lr_new(ring);
  if (q == NULL) skip();
  lr_stress *s = calloc(1, sizeof *s);
  assert_non_null(s);
  s->q = q;
  const size_t total = (size_t)LR_PRODUCERS * LR_ITEMS;
  s->items = calloc(total, sizeof *s->items);
  assert_non_null(s->items);
  for (size_t i = 0; i < total; i++) {
    s->items[i].producer = (uint32_t)(i / LR_ITEMS);
    s->items[i].seq = (uint32_t)(i % LR_ITEMS);
  }
  pthread_t tids[LR_PRODUCERS + LR_CONSUMERS];
  lr_worker ws[LR_PRODUCERS + LR_CONSUMERS];
  for (int i = 0; i < LR_PRODUCERS + LR_CONSUMERS; i++) {
    ws[i] = (lr_worker){s, i < LR_PRODUCERS ? i : i - LR_PRODUCERS};
    assert_int_equal(pthread_create(&tids[i], NULL, i < LR_PRODUCERS ? lr_producer : lr_consumer, &ws[i]), 0);
  }
  for (int i = 0; i < LR_PRODUCERS + LR_CONSUMERS; i++) pthread_join(tids[i], NULL);
  if (atomic_load(&s->errors) != 0) fail_msg("%s, %zu-cell rings: %s", RQ_NAME, ring, s->error);
  for (size_t i = 0; i < total; i++)
    if (atomic_load(&s->items[i].owner) == 0) fail_msg("%s, %zu-cell rings: item %zu lost", RQ_NAME, ring, i);
  void *x;
  assert_int_equal(RQ_DEQUEUE(q, &x), SYNCQ_EMPTY);
  print_message("%s, %zu-cell rings, %dP/%dC x %d items: %llu rings linked, %llu freed\n", RQ_NAME, ring, LR_PRODUCERS,
                LR_CONSUMERS, LR_ITEMS, (unsigned long long)RQ_LINKED(q), (unsigned long long)RQ_FREED(q));
  assert_true(RQ_LINKED(q) > 0);
  lr_free(q);
  free(s->items);
  free(s);
}

static void test_concurrent_ring2(void **state) {
  (void)state;
  lr_run_stress(2);
}
static void test_concurrent_ring8(void **state) {
  (void)state;
  lr_run_stress(8);
}

/* ------------------------------------------------------------ never empty */

/* A 4-cell ring prefilled with one item; 6 threads each enqueue one item
 * and then dequeue one, over and over: the queue always holds at least the
 * prefill, so an EMPTY answer is not linearizable. The queue stays short,
 * so the same ring turns over many cycles (cells reused, overtaken,
 * marked unsafe) between the closings that a burst of enqueues causes. */
#define LR_NE_THREADS 6
#if SANITIZED
#define LR_NE_ITERS 4000
#else
#define LR_NE_ITERS 30000
#endif

typedef struct lr_never_empty {
  RQ *q;
  _Atomic(long) empties, errors;
} lr_never_empty;

static void *lr_never_empty_thread(void *p) {
  lr_never_empty *n = p;
  for (int i = 0; i < LR_NE_ITERS; i++) {
    if (RQ_ENQUEUE(n->q, lr_item((uintptr_t)i + 2)) != SYNCQ_OK) atomic_fetch_add(&n->errors, 1);
    void *x;
    int r = RQ_DEQUEUE(n->q, &x);
    if (r == SYNCQ_EMPTY) atomic_fetch_add(&n->empties, 1);
    else if (r != SYNCQ_OK || x == NULL) atomic_fetch_add(&n->errors, 1);
    if (i % LR_YIELD_EVERY == 0) syncq_yield();
  }
  return NULL;
}

static void test_never_empty_small_ring(void **state) {
  (void)state;
  lr_never_empty n = {.q = lr_new(4)};
  if (n.q == NULL) skip();
  atomic_init(&n.empties, 0);
  atomic_init(&n.errors, 0);
  assert_int_equal(RQ_ENQUEUE(n.q, lr_item(1)), SYNCQ_OK);
  pthread_t tids[LR_NE_THREADS];
  for (int i = 0; i < LR_NE_THREADS; i++)
    assert_int_equal(pthread_create(&tids[i], NULL, lr_never_empty_thread, &n), 0);
  for (int i = 0; i < LR_NE_THREADS; i++) pthread_join(tids[i], NULL);
  void *x;
  long left = 0;
  while (RQ_DEQUEUE(n.q, &x) == SYNCQ_OK) left++;
  print_message("%s, 4-cell ring, %d threads x %d enqueue+dequeue: %llu rings linked, %ld EMPTY answers\n", RQ_NAME,
                LR_NE_THREADS, LR_NE_ITERS, (unsigned long long)RQ_LINKED(n.q), (long)atomic_load(&n.empties));
  lr_free(n.q);
  assert_int_equal(atomic_load(&n.errors), 0);
  assert_int_equal(atomic_load(&n.empties), 0);
  assert_int_equal(left, 1); /* every enqueue was matched by one dequeue: the prefill is left */
}

/* ------------------------------------------------------------ empty polls */

/* One producer and one consumer in lockstep, the consumer polling the
 * empty queue between items (dg25-prodcons at N = 1 when the consumer is
 * the faster side). A poll must answer EMPTY from head and tail alone
 * (Deviation (1) of the ring files): a poll that took a ticket would run
 * head past tail, write the cell the producer fills next and make
 * fixState pull tail up, all on the producer's lines. The ring's head
 * moves once per item. */
static void test_empty_polls_take_no_ticket(void **state) {
  (void)state;
  enum { ITEMS = 100, POLLS = 3 };
  RQ *q = lr_new(1024);
  if (q == NULL) skip();
  lr_ring *ring = atomic_load(&q->head);
  uint64_t wasted = 0;
  for (uintptr_t i = 0; i < ITEMS; i++) {
    void *x = NULL;
    assert_int_equal(RQ_ENQUEUE(q, lr_item(i + 1)), SYNCQ_OK);
    assert_int_equal(RQ_DEQUEUE(q, &x), SYNCQ_OK);
    assert_ptr_equal(x, lr_item(i + 1));
    for (int p = 0; p < POLLS; p++) {
      const uint64_t h = atomic_load(&ring->head);
      assert_int_equal(RQ_DEQUEUE(q, &x), SYNCQ_EMPTY);
      wasted += atomic_load(&ring->head) - h;
    }
  }
  print_message("%s: %d items, %d empty polls after each: %llu tickets taken by empty polls\n", RQ_NAME, ITEMS, POLLS,
                (unsigned long long)wasted);
  assert_ptr_equal(atomic_load(&q->head), ring); /* one ring throughout */
  assert_int_equal(wasted, 0);
  assert_int_equal(atomic_load(&ring->head), ITEMS);
  assert_int_equal(atomic_load(&ring->tail), ITEMS);
  lr_free(q);
}

/* ------------------------------------------------------------ linearizability */

/* The recorder's queue operations on an RQ. */
static int lr_hist_enqueue(void *q, void *item) { return RQ_ENQUEUE((RQ *)q, item); }
static int lr_hist_dequeue(void *q, void **item) { return RQ_DEQUEUE((RQ *)q, item); }

static void test_linearizable_across_rings(void **state) {
  (void)state;
  RQ *q = lr_new(2);
  if (q == NULL) skip();
  assert_int_equal(RQ_DESTROY(q), SYNCQ_OK); /* storage reused: initialised per history */
  qh_hist *h = qh_start(q, lr_hist_enqueue, lr_hist_dequeue);
  int rejected = 0;
  uint64_t seed = 2024, linked = 0;
  for (int n = 0; n < LR_HISTORIES; n++) {
    uint64_t r0 = test_random(&seed);
    assert_int_equal(RQ_INIT_RING(q, 2), SYNCQ_OK);
    if (!qh_run(h, r0) && rejected++ == 0) {
      fprintf(stderr, "%s: history %d (2-cell rings) is not linearizable:\n", RQ_NAME, n);
      lc_print(h->all, h->nops, lc_kind_name);
    }
    linked += RQ_LINKED(q);
    assert_int_equal(RQ_DESTROY(q), SYNCQ_OK);
  }
  qh_stop(h);
  free(q);
  print_message("%s: %d histories through 2-cell rings, %llu rings linked in all, %d rejected\n", RQ_NAME, LR_HISTORIES,
                (unsigned long long)linked, rejected);
  assert_true(linked > (uint64_t)LR_HISTORIES / 2); /* the histories did cross rings */
  assert_int_equal(rejected, 0);
}

#define LINKED_RINGS_TESTS                                                                                         \
  cmocka_unit_test(test_bad_inputs), cmocka_unit_test(test_ring_turnover), cmocka_unit_test(test_ring_sizes_fifo), \
    cmocka_unit_test(test_destroy_non_empty), cmocka_unit_test(test_concurrent_ring2),                             \
    cmocka_unit_test(test_concurrent_ring8), cmocka_unit_test(test_never_empty_small_ring),                        \
    cmocka_unit_test(test_linearizable_across_rings), cmocka_unit_test(test_empty_polls_take_no_ticket)
