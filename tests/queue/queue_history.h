/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * queue_history.h — records short concurrent histories of a queue for the
 * linearizability checker (lincheck.h): for queue_lincheck_test.c, which
 * runs every registered queue through thousands of them, and for the
 * tests of queues whose storage grows in small pieces (linked rings,
 * wfqueue's segments): many tiny histories on a queue built with the
 * smallest pieces, so that every history crosses piece boundaries.
 *
 * A recorder runs its threads (QH_THREADS by default) over histories of a
 * shape chosen per history: how many of them take part, how many random
 * enqueues and dequeues each runs, how many items the queue holds before
 * (recorded as an extra thread's completed operations) and the capacity
 * the checker's spec allows (0: unbounded). Each operation is stamped
 * with the call and return ticks of one lc_clock; a yield before one
 * operation in yield_every varies the interleavings. The threads live
 * across histories and meet the test's thread at two barriers per
 * history, so the test re-initialises the queue between histories.
 *
 * Use (include after cmocka.h, in one test file):
 *   qh_hist *h = qh_start(q, enqueue_fn, dequeue_fn);
 *   for each history: r0 = test_random(&seed); initialise the queue;
 *     if (!qh_run(h, r0)) report h->all[0 .. h->nops);
 *   qh_stop(h);
 * qh_run is the default shape (QH_THREADS threads of QH_OPS operations, up
 * to QH_PREFILL items before, unbounded spec); qh_start_with and
 * qh_run_shape take a qh_config and a qh_shape (queue_lincheck_test.c:
 * 3 or 4 threads, bounded specs).
 */
#ifndef SYNCQ_TESTS_QUEUE_HISTORY_H
#define SYNCQ_TESTS_QUEUE_HISTORY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "lincheck.h"
#include "syncq/platform.h"
#include "syncq/status.h"
#include "test_plan.h"
#include "test_random.h" /* the histories' random numbers */

/* The default shape. */
#define QH_THREADS 3
#define QH_OPS 4
#define QH_PREFILL 3
/* What any shape may ask for. */
#define QH_MAX_THREADS TEST_PLAN_HISTORY_THREADS
#define QH_MAX_OPS 4
#define QH_MAX_PREFILL 4

typedef int (*qh_enqueue_fn)(void *q, void *item);
typedef int (*qh_dequeue_fn)(void *q, void **item);

/* The recorder's threads and how they vary their operations. */
typedef struct qh_config {
  int threads;          /* recorder threads, at most QH_MAX_THREADS */
  unsigned yield_every; /* a yield before one operation in this many */
  unsigned value_shift; /* enqueued values shifted left (low bits clear, for queues that mark them) */
} qh_config;

/* One history. */
typedef struct qh_shape {
  int threads;       /* threads that take part, at most the config's */
  int ops_per;       /* operations per thread, at most QH_MAX_OPS */
  unsigned prefill;  /* items enqueued beforehand, at most QH_MAX_PREFILL */
  unsigned capacity; /* the spec's capacity (lc_spec_queue): 0 unbounded */
} qh_shape;

typedef struct qh_hist qh_hist;

typedef struct qh_ctx {
  qh_hist *h;
  int id;
} qh_ctx;

struct qh_hist {
  void *q;
  qh_enqueue_fn enqueue;
  qh_dequeue_fn dequeue;
  qh_config cfg;
  qh_shape shape; /* this history's */
  lc_clock clock;
  pthread_barrier_t start, done;
  bool stop;
  uint64_t seed;
  lc_op rec[QH_MAX_THREADS][QH_MAX_OPS];
  pthread_t tids[QH_MAX_THREADS];
  qh_ctx ctx[QH_MAX_THREADS];
  lc_op all[QH_MAX_THREADS * QH_MAX_OPS + QH_MAX_PREFILL]; /* the last history, prefill first */
  size_t nops;
};

static void *qh_thread(void *p) {
  qh_ctx *c = p;
  qh_hist *h = c->h;
  for (;;) {
    pthread_barrier_wait(&h->start);
    if (h->stop) return NULL;
    uint64_t s = h->seed * 0x9e3779b97f4a7c15ull + (uint64_t)c->id * 7919 + 1;
    for (int k = 0; c->id < h->shape.threads && k < h->shape.ops_per; k++) {
      lc_op *op = &h->rec[c->id][k];
      uint64_t r = test_random(&s);
      if (r % h->cfg.yield_every == 0) syncq_yield();
      op->thread = c->id;
      if ((r >> 8) % 2 == 0) {
        op->kind = LC_QUEUE_ENQ;
        op->arg = (uint64_t)(100 + c->id * 10 + k) << h->cfg.value_shift; /* unique in the history */
        op->call = lc_tick(&h->clock);
        op->status = h->enqueue(h->q, (void *)(uintptr_t)op->arg);
        op->done = lc_tick(&h->clock);
        op->ret = 0;
      } else {
        void *out = NULL;
        op->kind = LC_QUEUE_DEQ;
        op->arg = 0;
        op->call = lc_tick(&h->clock);
        op->status = h->dequeue(h->q, &out);
        op->done = lc_tick(&h->clock);
        op->ret = op->status == SYNCQ_OK ? (uint64_t)(uintptr_t)out : 0;
      }
    }
    pthread_barrier_wait(&h->done);
  }
}

/* The recorder on queue storage q (initialised by the caller before each
 * history), with its cfg.threads threads started and waiting for the
 * first one. */
static inline qh_hist *qh_start_with(void *q, qh_enqueue_fn enqueue, qh_dequeue_fn dequeue, qh_config cfg) {
  assert_true(cfg.threads >= 1 && cfg.threads <= QH_MAX_THREADS && cfg.yield_every >= 1 && cfg.value_shift < 32);
  qh_hist *h = calloc(1, sizeof *h);
  assert_non_null(h);
  h->q = q;
  h->enqueue = enqueue;
  h->dequeue = dequeue;
  h->cfg = cfg;
  pthread_barrier_init(&h->start, NULL, (unsigned)cfg.threads + 1);
  pthread_barrier_init(&h->done, NULL, (unsigned)cfg.threads + 1);
  for (int i = 0; i < cfg.threads; i++) {
    h->ctx[i] = (qh_ctx){h, i};
    assert_int_equal(pthread_create(&h->tids[i], NULL, qh_thread, &h->ctx[i]), 0);
  }
  return h;
}

/* The default recorder: QH_THREADS threads, a yield before one operation
 * in three, values as they are. */
static inline qh_hist *qh_start(void *q, qh_enqueue_fn enqueue, qh_dequeue_fn dequeue) {
  return qh_start_with(q, enqueue, dequeue, (qh_config){QH_THREADS, 3, 0});
}

/* One history of this shape on the freshly initialised queue, seeded by
 * r0: true if the checker finds it linearizable. The history stays in
 * h->all[0 .. h->nops) for the caller's report. */
static inline bool qh_run_shape(qh_hist *h, uint64_t r0, qh_shape shape) {
  assert_true(shape.threads >= 0 && shape.threads <= h->cfg.threads && shape.ops_per >= 0 &&
              shape.ops_per <= QH_MAX_OPS && shape.prefill <= QH_MAX_PREFILL);
  lc_clock_init(&h->clock);
  h->seed = r0;
  h->shape = shape;
  h->nops = 0;
  for (unsigned i = 0; i < shape.prefill; i++) { /* recorded as an extra thread's completed operations */
    lc_op *op = &h->all[h->nops++];
    op->thread = h->cfg.threads;
    op->kind = LC_QUEUE_ENQ;
    op->arg = (uint64_t)(10 + i) << h->cfg.value_shift;
    op->ret = 0;
    op->call = lc_tick(&h->clock);
    op->status = h->enqueue(h->q, (void *)(uintptr_t)op->arg);
    op->done = lc_tick(&h->clock);
  }
  pthread_barrier_wait(&h->start);
  pthread_barrier_wait(&h->done);
  for (int t = 0; t < shape.threads; t++)
    for (int k = 0; k < shape.ops_per; k++) h->all[h->nops++] = h->rec[t][k];
  lc_spec spec = lc_spec_queue(shape.capacity);
  const char *err = NULL;
  if (lc_check(&spec, h->all, h->nops, &err)) return true;
  assert_null(err); /* malformed input fails the test */
  return false;
}

/* The default shape: every thread, QH_OPS operations each, 0 to
 * QH_PREFILL items before (picked by r0), unbounded. */
static inline bool qh_run(qh_hist *h, uint64_t r0) {
  return qh_run_shape(h, r0, (qh_shape){QH_THREADS, QH_OPS, (unsigned)((r0 >> 24) % (QH_PREFILL + 1)), 0});
}

/* Stop and join the threads; free the recorder (not the queue). */
static inline void qh_stop(qh_hist *h) {
  h->stop = true;
  pthread_barrier_wait(&h->start);
  for (int i = 0; i < h->cfg.threads; i++) pthread_join(h->tids[i], NULL);
  pthread_barrier_destroy(&h->start);
  pthread_barrier_destroy(&h->done);
  free(h);
}

#endif
