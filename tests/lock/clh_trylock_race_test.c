/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * clh_trylock_race_test.c — trylock of the CLH locks ("clh", "clh-tp")
 * is wait-free and never touches the node pool: it takes the spare that
 * a released tail node's owner left, or answers SYNCQ_EBUSY.
 *
 * A released tail node keeps its spare until an arrival enqueues after
 * it, so a trylock that reads a released tail node and then no spare in
 * it has seen the tail move on: a node from the pool could not take the
 * lock either (its CAS of tail would fail). The race point
 * "lock.clh.trylock.released" (tests/support/syncq_race.h) stops the
 * trylock between those two reads; there the hook, in the same thread,
 * takes and releases the lock through another record (the fast path:
 * the spare is taken and the old tail node prepared again, its spare
 * field 0). The trylock must then answer SYNCQ_EBUSY, with the pool's
 * count of pushes and pops (the version half of its top) unmoved; the
 * lock is free afterwards and the next trylock takes it, still without
 * the pool. With the pool drained as well (every node out, as with 64
 * threads in the lock), the answer is the same, without waiting for a
 * node to come back. One thread; the interleaving is fixed by the hook.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "syncq_race.h" /* first: its SYNCQ_RACE_POINT, before any static body */

#include "syncq/lock.h"
#include "syncq/lock/clh.h"
#include "syncq/lock/clh_tp.h"
#include "syncq/platform.h"
#include "syncq/reclaim.h"

SYNCQ_RACE_HOOK_DEFINE;

/* The lock under test, through its ops table, and where its pool is. */
typedef struct subject {
  const syncq_lock_ops *ops;
  void *lock;
  syncq_freelist *pool;
} subject;

static subject cur;
static int hook_ran; /* times the hook took and released the lock */

/* At the point: another acquisition through the fast path, alone (the
 * hook is off while it runs, so it does not stop itself). */
static void take_and_release(const char *name) {
  if (strcmp(name, "lock.clh.trylock.released") != 0) return;
  syncq_race_hook = NULL;
  syncq_lock_node other;
  memset(&other, 0, sizeof other);
  assert_int_equal(cur.ops->lock(cur.lock, &other), SYNCQ_OK);
  assert_int_equal(cur.ops->unlock(cur.lock, &other), SYNCQ_OK);
  hook_ran++;
}

static subject make(const syncq_algo *algo) {
  const syncq_lock_ops *ops = algo->ops;
  void *l = syncq_alloc_aligned(ops->size, ops->align);
  assert_non_null(l);
  assert_int_equal(ops->init(l, NULL), SYNCQ_OK);
  syncq_freelist *pool = algo == &syncq_lock_clh_algo ? &((syncq_lock_clh *)l)->pool : &((syncq_lock_clh_tp *)l)->pool;
  return (subject){ops, l, pool};
}

static void check_moved_tail_is_busy(const syncq_algo *algo, bool drain) {
  cur = make(algo);
  syncq_lock_node n;
  memset(&n, 0, sizeof n);
  /* a few rounds first, so the tail node is one a holder released */
  for (int i = 0; i < 3; i++) {
    assert_int_equal(cur.ops->lock(cur.lock, &n), SYNCQ_OK);
    assert_int_equal(cur.ops->unlock(cur.lock, &n), SYNCQ_OK);
  }
  unsigned drained = 0;
  syncq_fl_link *link;
  if (drain) {
    while (syncq_freelist_pop(cur.pool, &link) == SYNCQ_OK) drained++;
    assert_true(drained > 0);
  }
  const uint64_t swings = atomic_load(&cur.pool->top.hi); /* every push and pop adds one */
  hook_ran = 0;
  syncq_race_hook = take_and_release;
  assert_int_equal(cur.ops->trylock(cur.lock, &n), SYNCQ_EBUSY);
  syncq_race_hook = NULL;
  assert_int_equal(hook_ran, 1);
  if (atomic_load(&cur.pool->top.hi) != swings)
    fail_msg("%s: trylock went to the node pool after the tail moved on", algo->name);
  /* free again: the next trylock takes the new tail node's spare */
  assert_int_equal(cur.ops->trylock(cur.lock, &n), SYNCQ_OK);
  assert_int_equal(cur.ops->unlock(cur.lock, &n), SYNCQ_OK);
  assert_int_equal(atomic_load(&cur.pool->top.hi), swings);
  assert_int_equal(cur.ops->destroy(cur.lock), SYNCQ_OK);
  free(cur.lock);
}

static void test_clh_moved_tail(void **state) {
  (void)state;
  check_moved_tail_is_busy(&syncq_lock_clh_algo, false);
}

static void test_clh_moved_tail_pool_drained(void **state) {
  (void)state;
  check_moved_tail_is_busy(&syncq_lock_clh_algo, true);
}

static void test_clh_tp_moved_tail(void **state) {
  (void)state;
  check_moved_tail_is_busy(&syncq_lock_clh_tp_algo, false);
}

static void test_clh_tp_moved_tail_pool_drained(void **state) {
  (void)state;
  check_moved_tail_is_busy(&syncq_lock_clh_tp_algo, true);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_clh_moved_tail),
    cmocka_unit_test(test_clh_moved_tail_pool_drained),
    cmocka_unit_test(test_clh_tp_moved_tail),
    cmocka_unit_test(test_clh_tp_moved_tail_pool_drained),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
