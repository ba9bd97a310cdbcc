/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lincheck_rounds.h — the recorder the stack and priority-queue drivers
 * share for linearizability (lincheck.h): LC_ROUNDS_THREADS threads run
 * `rounds` short histories, each on a fresh object, and the test's thread
 * checks each history against a sequential specification.
 *
 * The threads live across rounds and meet the test's thread at a start
 * barrier and twice at an end barrier per round: the test's thread makes
 * the round's object before the start, and checks the history and
 * destroys the object between the two end barriers, while no thread
 * touches it. Each thread runs ops_per_thread operations a round; the
 * driver's `op` callback picks one from a random number, runs it and
 * stamps it (lc_tick before the call and after the return). A yield after
 * one operation in three varies the interleavings.
 *
 * A queue's histories have more shapes (prefilled items, bounded specs):
 * tests/queue/queue_history.h.
 *
 * Include after cmocka.h (it asserts and reports with cmocka's calls).
 */
#ifndef SYNCQ_TEST_LINCHECK_ROUNDS_H
#define SYNCQ_TEST_LINCHECK_ROUNDS_H

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "lincheck.h"
#include "syncq/platform.h"
#include "test_plan.h"
#include "test_random.h"

#define LC_ROUNDS_THREADS TEST_PLAN_HISTORY_THREADS
#define LC_ROUNDS_MAX_OPS (LC_MAX_OPS / LC_ROUNDS_THREADS)

typedef struct lc_rounds {
  const char *name; /* the algorithm and */
  const char *lock; /* its lock, for messages */
  int rounds;
  int ops_per_thread;   /* at most LC_ROUNDS_MAX_OPS */
  uint64_t seed_factor; /* thread t's random numbers start from seed_factor * (t + 1) */
  lc_spec spec;
  const char *(*kind_name)(int kind); /* for lc_print; NULL: lc_kind_name */
  const void *ctx;                    /* the driver's, passed to the three calls below */
  void *(*make)(const void *ctx);     /* a fresh object for one round */
  void (*unmake)(const void *ctx, void *obj);
  /* Thread `thread` runs its operation number i on obj, chosen by r, and
   * records it in op (kind, arg, ret, status, call and done ticks). */
  void (*op)(const void *ctx, void *obj, lc_clock *clock, lc_op *op, int thread, int i, uint64_t r);
} lc_rounds;

typedef struct lc_rounds_run {
  const lc_rounds *cfg;
  void *obj; /* this round's */
  lc_clock clock;
  lc_op ops[LC_ROUNDS_THREADS * LC_ROUNDS_MAX_OPS];
  pthread_barrier_t start, end;
} lc_rounds_run;

typedef struct lc_rounds_worker {
  lc_rounds_run *x;
  int id;
} lc_rounds_worker;

static inline void *lc_rounds_body(void *p) {
  lc_rounds_worker *w = p;
  lc_rounds_run *x = w->x;
  const lc_rounds *cfg = x->cfg;
  uint64_t seed = cfg->seed_factor * (uint64_t)(w->id + 1);
  for (int round = 0; round < cfg->rounds; round++) {
    pthread_barrier_wait(&x->start);
    for (int i = 0; i < cfg->ops_per_thread; i++) {
      lc_op *op = &x->ops[w->id * cfg->ops_per_thread + i];
      uint64_t r = test_random(&seed);
      op->thread = w->id;
      cfg->op(cfg->ctx, x->obj, &x->clock, op, w->id, i, r);
      if ((r >> 8) % 3 == 0) syncq_yield();
    }
    pthread_barrier_wait(&x->end);
    pthread_barrier_wait(&x->end); /* the checker runs between the two */
  }
  return NULL;
}

/* Runs every round; fails the test (after printing the first history that
 * has no linearization) when one is not linearizable. */
static inline void lc_rounds_check(const lc_rounds *cfg) {
  assert_true(cfg->ops_per_thread > 0 && cfg->ops_per_thread <= LC_ROUNDS_MAX_OPS);
  lc_rounds_run *x = calloc(1, sizeof *x);
  assert_non_null(x);
  x->cfg = cfg;
  pthread_barrier_init(&x->start, NULL, LC_ROUNDS_THREADS + 1);
  pthread_barrier_init(&x->end, NULL, LC_ROUNDS_THREADS + 1);
  pthread_t tids[LC_ROUNDS_THREADS];
  lc_rounds_worker ws[LC_ROUNDS_THREADS];
  for (int i = 0; i < LC_ROUNDS_THREADS; i++) {
    ws[i] = (lc_rounds_worker){x, i};
    assert_int_equal(pthread_create(&tids[i], NULL, lc_rounds_body, &ws[i]), 0);
  }
  int bad = 0;
  for (int round = 0; round < cfg->rounds; round++) {
    x->obj = cfg->make(cfg->ctx);
    lc_clock_init(&x->clock);
    pthread_barrier_wait(&x->start);
    pthread_barrier_wait(&x->end);
    const char *err = NULL;
    size_t n = (size_t)LC_ROUNDS_THREADS * (size_t)cfg->ops_per_thread;
    if (!bad && !lc_check(&cfg->spec, x->ops, n, &err)) {
      print_error("%s (lock %s): round %d is not linearizable%s%s:\n", cfg->name, cfg->lock, round, err ? ": " : "",
                  err ? err : "");
      lc_print(x->ops, n, cfg->kind_name);
      bad = 1;
    }
    cfg->unmake(cfg->ctx, x->obj);
    pthread_barrier_wait(&x->end);
  }
  for (int i = 0; i < LC_ROUNDS_THREADS; i++) pthread_join(tids[i], NULL);
  pthread_barrier_destroy(&x->start);
  pthread_barrier_destroy(&x->end);
  free(x);
  if (bad) fail_msg("%s: a recorded history has no linearization", cfg->name);
}

#endif
