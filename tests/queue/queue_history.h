/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * queue_history.h — records short concurrent histories of a queue for the
 * linearizability checker (lincheck.h), for the tests of queues whose
 * storage grows in small pieces (linked rings, wfqueue's segments): many
 * tiny histories on a queue built with the smallest pieces, so that every
 * history crosses piece boundaries.
 *
 * QH_THREADS threads each run QH_OPS random enqueues and dequeues per
 * history (a yield before one in three, to vary the interleavings),
 * stamped with the call and return ticks of one lc_clock; a history may
 * start on up to QH_PREFILL items enqueued beforehand, recorded as an
 * extra thread's completed operations. The threads live across histories
 * and meet the test's thread at two barriers per history, so the test
 * re-initialises the queue between histories.
 *
 * Use (include after cmocka.h, in one test file):
 *   qh_hist *h = qh_start(q, enqueue_fn, dequeue_fn);
 *   for each history: r0 = qh_random(&seed); initialise the queue;
 *     if (!qh_run(h, r0)) report h->all[0 .. h->nops);
 *   qh_stop(h);
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

#define QH_THREADS 3
#define QH_OPS 4
#define QH_PREFILL 3

typedef int (*qh_enqueue_fn)(void *q, void *item);
typedef int (*qh_dequeue_fn)(void *q, void **item);

typedef struct qh_hist qh_hist;

typedef struct qh_ctx {
  qh_hist *h;
  int id;
} qh_ctx;

struct qh_hist {
  void *q;
  qh_enqueue_fn enqueue;
  qh_dequeue_fn dequeue;
  lc_clock clock;
  pthread_barrier_t start, done;
  bool stop;
  uint64_t seed;
  lc_op rec[QH_THREADS][QH_OPS];
  pthread_t tids[QH_THREADS];
  qh_ctx ctx[QH_THREADS];
  lc_op all[QH_THREADS * QH_OPS + QH_PREFILL]; /* the last history, prefill first */
  size_t nops;
};

/* xorshift64*: the histories' random numbers. */
static inline uint64_t qh_random(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

static void *qh_thread(void *p) {
  qh_ctx *c = p;
  qh_hist *h = c->h;
  for (;;) {
    pthread_barrier_wait(&h->start);
    if (h->stop) return NULL;
    uint64_t s = h->seed * 0x9e3779b97f4a7c15ull + (uint64_t)c->id * 7919 + 1;
    for (int k = 0; k < QH_OPS; k++) {
      lc_op *op = &h->rec[c->id][k];
      uint64_t r = qh_random(&s);
      if (r % 3 == 0) syncq_yield();
      op->thread = c->id;
      if ((r >> 8) % 2 == 0) {
        op->kind = LC_QUEUE_ENQ;
        op->arg = (uint64_t)(100 + c->id * 10 + k);
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
 * history), with its threads started and waiting for the first one. */
static qh_hist *qh_start(void *q, qh_enqueue_fn enqueue, qh_dequeue_fn dequeue) {
  qh_hist *h = calloc(1, sizeof *h);
  assert_non_null(h);
  h->q = q;
  h->enqueue = enqueue;
  h->dequeue = dequeue;
  pthread_barrier_init(&h->start, NULL, QH_THREADS + 1);
  pthread_barrier_init(&h->done, NULL, QH_THREADS + 1);
  for (int i = 0; i < QH_THREADS; i++) {
    h->ctx[i] = (qh_ctx){h, i};
    assert_int_equal(pthread_create(&h->tids[i], NULL, qh_thread, &h->ctx[i]), 0);
  }
  return h;
}

/* One history on the freshly initialised queue, seeded by r0 (which also
 * picks the prefill): true if the checker finds it linearizable. The
 * history stays in h->all[0 .. h->nops) for the caller's report. */
static bool qh_run(qh_hist *h, uint64_t r0) {
  lc_clock_init(&h->clock);
  h->seed = r0;
  h->nops = 0;
  unsigned prefill = (unsigned)((r0 >> 24) % (QH_PREFILL + 1));
  for (unsigned i = 0; i < prefill; i++) { /* recorded as an extra thread's completed operations */
    lc_op *op = &h->all[h->nops++];
    op->thread = QH_THREADS;
    op->kind = LC_QUEUE_ENQ;
    op->arg = 10 + i;
    op->ret = 0;
    op->call = lc_tick(&h->clock);
    op->status = h->enqueue(h->q, (void *)(uintptr_t)op->arg);
    op->done = lc_tick(&h->clock);
  }
  pthread_barrier_wait(&h->start);
  pthread_barrier_wait(&h->done);
  for (int t = 0; t < QH_THREADS; t++)
    for (int k = 0; k < QH_OPS; k++) h->all[h->nops++] = h->rec[t][k];
  lc_spec spec = lc_spec_queue(0);
  const char *err = NULL;
  if (lc_check(&spec, h->all, h->nops, &err)) return true;
  assert_null(err); /* malformed input fails the test */
  return false;
}

/* Stop and join the threads; free the recorder (not the queue). */
static void qh_stop(qh_hist *h) {
  h->stop = true;
  pthread_barrier_wait(&h->start);
  for (int i = 0; i < QH_THREADS; i++) pthread_join(h->tids[i], NULL);
  pthread_barrier_destroy(&h->start);
  pthread_barrier_destroy(&h->done);
  free(h);
}

#endif
