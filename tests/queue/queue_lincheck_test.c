/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * queue_lincheck_test.c — linearizability of every registered queue that
 * promises it (SYNCQ_PROP_LINEARIZABLE), on thousands of short random
 * histories, checked by tests/support/lincheck.h against lc_spec_queue;
 * and a deliberately broken queue (defined only here) that the same
 * harness must catch.
 *
 * A history: the queue is re-initialised (bounded queues at capacity 2 or 4
 * so FULL happens, unbounded ones at a sizing hint), prefilled with 0..cap
 * items by the main thread (recorded as completed operations), then 3 or 4
 * threads each run 3 or 4 random enqueues (unique values) and dequeues,
 * yielding at random points; every operation is stamped with lc_tick()
 * just before its call and just after its return. Threads are kept across
 * histories and released together by a barrier.
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

#include "test_peers.h"
#include "test_plan.h"
#include "test_queue_contract.h"

#include "lincheck.h"
#include "syncq/platform.h"
#include "syncq/queue.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define HISTORIES 1500
#else
#define HISTORIES 5000
#endif
/* Peer structures (SYNCQ_PROP_PEER) are many and not ours: a quarter as
 * many histories each keeps this file near its old running time. */
#define PEER_HISTORIES (HISTORIES / 4)
#define MAX_THREADS TEST_PLAN_HISTORY_THREADS
#define MAX_OPS_PER_THREAD 4
#define MAX_PREFILL 4

typedef struct harness {
  const syncq_queue_ops *ops;
  void *q;
  lc_clock clock;
  pthread_barrier_t start, done;
  int threads; /* this history's thread count (<= MAX_THREADS) */
  int ops_per; /* this history's operations per thread */
  bool stop;
  uint64_t seed; /* this history's seed */
  lc_op rec[MAX_THREADS][MAX_OPS_PER_THREAD];
} harness;

typedef struct tctx {
  harness *h;
  int id;
} tctx;

static inline uint64_t next_random(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

static void *history_thread(void *p) {
  tctx *c = p;
  harness *h = c->h;
  for (;;) {
    pthread_barrier_wait(&h->start);
    if (h->stop) return NULL;
    if (c->id < h->threads) {
      uint64_t s = h->seed * 0x9e3779b97f4a7c15ull + (uint64_t)c->id * 7919 + 1;
      for (int k = 0; k < h->ops_per; k++) {
        lc_op *op = &h->rec[c->id][k];
        uint64_t r = next_random(&s);
        if (r % 4 == 0) syncq_yield(); /* widen the race windows at varying points */
        op->thread = c->id;
        if ((r >> 8) % 2 == 0) {
          op->kind = LC_QUEUE_ENQ;
          op->arg = (uint64_t)(100 + c->id * 10 + k) << 4; /* unique in the history; low bits clear (loo's marks) */
          op->call = lc_tick(&h->clock);
          op->status = h->ops->enqueue(h->q, (void *)(uintptr_t)op->arg);
          op->done = lc_tick(&h->clock);
          op->ret = 0;
        } else {
          void *out = NULL;
          op->kind = LC_QUEUE_DEQ;
          op->arg = 0;
          op->call = lc_tick(&h->clock);
          op->status = h->ops->dequeue(h->q, &out);
          op->done = lc_tick(&h->clock);
          op->ret = op->status == SYNCQ_OK ? (uint64_t)(uintptr_t)out : 0;
        }
      }
    }
    pthread_barrier_wait(&h->done);
  }
}

/* Run `histories` histories; return how many the checker rejected (the
 * first one is printed). bounded: capacities 2 and 4 with FULL checked;
 * else a capacity of 32 (more than a history can fill: a bounded queue never
 * answers FULL then) and an unbounded spec. Sets *skipped when the
 * queue cannot be created here (ENOTSUP). */
static int run_histories(const char *name, const syncq_queue_ops *ops, bool bounded, int histories, bool *skipped) {
  harness *h = calloc(1, sizeof *h);
  assert_non_null(h);
  h->ops = ops;
  size_t bytes;
  assert_int_equal(ops->bytes(32, &bytes), SYNCQ_OK);
  h->q = syncq_alloc_aligned(bytes, ops->align);
  assert_non_null(h->q);
  *skipped = false;
  int r = ops->init(h->q, 32);
  if (r == SYNCQ_ENOTSUP) {
    *skipped = true;
    free(h->q);
    free(h);
    return 0;
  }
  assert_int_equal(r, SYNCQ_OK);
  assert_int_equal(ops->destroy(h->q), SYNCQ_OK);
  pthread_barrier_init(&h->start, NULL, MAX_THREADS + 1);
  pthread_barrier_init(&h->done, NULL, MAX_THREADS + 1);
  pthread_t tids[MAX_THREADS];
  tctx ctx[MAX_THREADS];
  for (int i = 0; i < MAX_THREADS; i++) {
    ctx[i] = (tctx){h, i};
    assert_int_equal(pthread_create(&tids[i], NULL, history_thread, &ctx[i]), 0);
  }
  int rejected = 0;
  uint64_t seed = 12345;
  for (int n = 0; n < histories; n++) {
    uint64_t r0 = next_random(&seed);
    unsigned cap = bounded ? (r0 % 2 ? 4u : 2u) : 32u;
    assert_int_equal(ops->init(h->q, cap), SYNCQ_OK);
    lc_clock_init(&h->clock);
    h->threads = 3 + (int)((r0 >> 8) % 2);
    h->ops_per = 3 + (int)((r0 >> 16) % 2);
    h->seed = r0;
    lc_op all[MAX_THREADS * MAX_OPS_PER_THREAD + MAX_PREFILL];
    size_t nops = 0;
    /* prefill, recorded as completed operations of an extra thread */
    unsigned prefill = (unsigned)((r0 >> 24) % ((bounded ? cap : MAX_PREFILL) + 1));
    for (unsigned i = 0; i < prefill; i++) {
      lc_op *op = &all[nops++];
      op->thread = MAX_THREADS;
      op->kind = LC_QUEUE_ENQ;
      op->arg = (uint64_t)(10 + i) << 4;
      op->ret = 0;
      op->call = lc_tick(&h->clock);
      op->status = ops->enqueue(h->q, (void *)(uintptr_t)op->arg);
      op->done = lc_tick(&h->clock);
    }
    pthread_barrier_wait(&h->start);
    pthread_barrier_wait(&h->done);
    for (int t = 0; t < h->threads; t++)
      for (int k = 0; k < h->ops_per; k++) all[nops++] = h->rec[t][k];
    lc_spec spec = lc_spec_queue(bounded ? cap : 0);
    const char *err = NULL;
    if (!lc_check(&spec, all, nops, &err)) {
      assert_null(err); /* a malformed history is the harness's bug */
      if (rejected++ == 0) {
        fprintf(stderr, "queue %s: history %d (capacity %u) is not linearizable:\n", name, n, cap);
        lc_print(all, nops, lc_kind_name);
      }
    }
    assert_int_equal(ops->destroy(h->q), SYNCQ_OK);
  }
  h->stop = true;
  pthread_barrier_wait(&h->start);
  for (int i = 0; i < MAX_THREADS; i++) pthread_join(tids[i], NULL);
  pthread_barrier_destroy(&h->start);
  pthread_barrier_destroy(&h->done);
  free(h->q);
  free(h);
  return rejected;
}

static void test_every_linearizable_queue(void **state) {
  (void)state;
  const syncq_algo *algos[SYNCQ_REGISTRY_MAX];
  int n = syncq_registry_list(SYNCQ_FAMILY_QUEUE, algos, SYNCQ_REGISTRY_MAX);
  assert_true(n >= 3);
  for (int i = 0; i < n; i++) {
    const syncq_algo *a = algos[i];
    const int histories = (a->props & SYNCQ_PROP_PEER) ? PEER_HISTORIES : HISTORIES;
    if (a->props & SYNCQ_PROP_SPSC) {
      print_message(
        "queue %s: SKIPPED: single producer, single consumer only (SYNCQ_PROP_SPSC); these "
        "histories run 3 or 4 threads on each side\n",
        a->name);
      continue;
    }
    if (!(a->props & SYNCQ_PROP_LINEARIZABLE)) {
      /* Not linearizable at FULL (contract, test_queue_contract.h):
       * checked on histories that cannot fill it. Others (Vyukov: EMPTY
       * too) are reported only. */
      bool except_full = test_queue_linearizable_except_full(a);
      bool skipped;
      int rejected = run_histories(a->name, a->ops, false, histories, &skipped);
      if (except_full)
        print_message(
          "queue %s: linearizable except at FULL (test_queue_contract.h); %d of %d histories that "
          "cannot fill it rejected\n",
          a->name, rejected, histories);
      else
        print_message(
          "queue %s: does not promise linearizability; %d of %d histories that cannot fill it "
          "rejected (reported, not asserted)\n",
          a->name, rejected, histories);
      if (except_full && rejected != 0)
        fail_msg("queue %s: %d histories without FULL are not linearizable", a->name, rejected);
      continue;
    }
    bool skipped;
    /* FULL is not at an exact capacity: histories that cannot fill it */
    bool loose = (a->props & SYNCQ_PROP_LOOSE_CAPACITY) != 0;
    if (loose)
      print_message(
        "queue %s: FULL not at an exact capacity (SYNCQ_PROP_LOOSE_CAPACITY): histories that "
        "cannot fill it\n",
        a->name);
    int rejected = run_histories(a->name, a->ops, (a->props & SYNCQ_PROP_BOUNDED) != 0 && !loose, histories, &skipped);
    if (skipped) {
      print_message("queue %s: SKIPPED: not supported on this machine\n", a->name);
      continue;
    }
    print_message("queue %s: %d histories, %d rejected\n", a->name, histories, rejected);
    if (rejected != 0) fail_msg("queue %s: %d of %d histories are not linearizable", a->name, rejected, histories);
  }
}

/* ------------------------------------------------------- a broken queue */

/* A queue that is wrong on purpose: a mutex-protected array whose dequeue
 * takes the NEWEST item (a stack) once it holds two or more. Each operation
 * is atomic, so only the order is wrong: the checker has to see it. */
typedef struct broken {
  pthread_mutex_t m;
  size_t cap, n;
  uintptr_t items[32];
} broken;

static int broken_bytes(size_t c, size_t *b) {
  if (b == NULL || c < 2 || c > 32) return SYNCQ_EINVAL;
  *b = sizeof(broken);
  return SYNCQ_OK;
}
static int broken_init(void *q, size_t c) {
  broken *b = q;
  if (b == NULL || c < 2 || c > 32) return SYNCQ_EINVAL;
  pthread_mutex_init(&b->m, NULL);
  b->cap = c;
  b->n = 0;
  return SYNCQ_OK;
}
static int broken_destroy(void *q) {
  pthread_mutex_destroy(&((broken *)q)->m);
  return SYNCQ_OK;
}
static int broken_enqueue(void *q, void *item) {
  broken *b = q;
  int r = SYNCQ_FULL;
  pthread_mutex_lock(&b->m);
  if (b->n < b->cap) {
    b->items[b->n++] = (uintptr_t)item;
    r = SYNCQ_OK;
  }
  pthread_mutex_unlock(&b->m);
  return r;
}
static int broken_dequeue(void *q, void **item) {
  broken *b = q;
  int r = SYNCQ_EMPTY;
  pthread_mutex_lock(&b->m);
  if (b->n > 0) {
    *item = (void *)b->items[--b->n]; /* LIFO: the bug */
    r = SYNCQ_OK;
  }
  pthread_mutex_unlock(&b->m);
  return r;
}
static const syncq_queue_ops broken_ops = {broken_bytes,   _Alignof(broken), broken_init,
                                           broken_destroy, broken_enqueue,   broken_dequeue};

static void test_checker_rejects_a_broken_queue(void **state) {
  (void)state;
  bool skipped;
  int rejected = run_histories("broken (LIFO)", &broken_ops, true, 500, &skipped);
  print_message("broken queue: %d of 500 histories rejected\n", rejected);
  assert_false(skipped);
  assert_true(rejected > 0);
}

int main(void) {
  test_register_peers();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_checker_rejects_a_broken_queue),
    cmocka_unit_test(test_every_linearizable_queue),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
