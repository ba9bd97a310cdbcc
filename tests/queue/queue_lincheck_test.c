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
 * just before its call and just after its return. The recorder is
 * queue_history.h's, its threads kept across histories.
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
#include "queue_history.h"
#include "syncq/platform.h"
#include "syncq/queue.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

#if SANITIZED
#define HISTORIES 1500
#else
#define HISTORIES 5000
#endif
/* Peer structures (SYNCQ_PROP_PEER) are many and not ours: a quarter as
 * many histories each keeps this file near its old running time. */
#define PEER_HISTORIES (HISTORIES / 4)

/* Run `histories` histories; return how many the checker rejected (the
 * first one is printed). bounded: capacities 2 and 4 with FULL checked;
 * else a capacity of 32 (more than a history can fill: a bounded queue never
 * answers FULL then) and an unbounded spec. Sets *skipped when the
 * queue cannot be created here (ENOTSUP). */
static int run_histories(const char *name, const syncq_queue_ops *ops, bool bounded, int histories, bool *skipped) {
  size_t bytes;
  assert_int_equal(ops->bytes(32, &bytes), SYNCQ_OK);
  void *q = syncq_alloc_aligned(bytes, ops->align);
  assert_non_null(q);
  *skipped = false;
  int r = ops->init(q, 32);
  if (r == SYNCQ_ENOTSUP) {
    *skipped = true;
    free(q);
    return 0;
  }
  assert_int_equal(r, SYNCQ_OK);
  assert_int_equal(ops->destroy(q), SYNCQ_OK);
  /* a yield before one operation in four widens the race windows at
   * varying points; values shifted clear of loo's mark bits */
  qh_hist *h = qh_start_with(q, ops->enqueue, ops->dequeue, (qh_config){QH_MAX_THREADS, 4, 4});
  int rejected = 0;
  uint64_t seed = 12345;
  for (int n = 0; n < histories; n++) {
    uint64_t r0 = test_random(&seed);
    unsigned cap = bounded ? (r0 % 2 ? 4u : 2u) : 32u;
    assert_int_equal(ops->init(q, cap), SYNCQ_OK);
    /* 3 or 4 threads of 3 or 4 operations, after 0 .. cap (bounded) or
     * 0 .. QH_MAX_PREFILL items */
    qh_shape shape = {3 + (int)((r0 >> 8) % 2), 3 + (int)((r0 >> 16) % 2),
                      (unsigned)((r0 >> 24) % ((bounded ? cap : QH_MAX_PREFILL) + 1)), bounded ? cap : 0};
    if (!qh_run_shape(h, r0, shape) && rejected++ == 0) {
      fprintf(stderr, "queue %s: history %d (capacity %u) is not linearizable:\n", name, n, cap);
      lc_print(h->all, h->nops, lc_kind_name);
    }
    assert_int_equal(ops->destroy(q), SYNCQ_OK);
  }
  qh_stop(h);
  free(q);
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
static int broken_init(broken *b, size_t c) {
  if (b == NULL || c < 2 || c > 32) return SYNCQ_EINVAL;
  pthread_mutex_init(&b->m, NULL);
  b->cap = c;
  b->n = 0;
  return SYNCQ_OK;
}
static int broken_destroy(broken *b) {
  pthread_mutex_destroy(&b->m);
  return SYNCQ_OK;
}
static int broken_enqueue(broken *b, void *item) {
  int r = SYNCQ_FULL;
  pthread_mutex_lock(&b->m);
  if (b->n < b->cap) {
    b->items[b->n++] = (uintptr_t)item;
    r = SYNCQ_OK;
  }
  pthread_mutex_unlock(&b->m);
  return r;
}
static int broken_dequeue(broken *b, void **item) {
  int r = SYNCQ_EMPTY;
  pthread_mutex_lock(&b->m);
  if (b->n > 0) {
    *item = (void *)b->items[--b->n]; /* LIFO: the bug */
    r = SYNCQ_OK;
  }
  pthread_mutex_unlock(&b->m);
  return r;
}
SYNCQ_QUEUE_OPS(broken_ops, broken, broken_bytes, broken_init, broken_destroy, broken_enqueue, broken_dequeue);

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
