/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * clh_lock_race_test.c — lock() of the CLH lock ("clh") when the holder
 * releases between lock()'s look at the tail node and its wait.
 *
 * lock() reads the tail node's flag before its CAS of tail. Read held, it
 * still takes the spare the holder left (it enqueues now) and then waits,
 * looking again first; the race point "lock.clh.lock.behind"
 * (tests/support/syncq_race.h) stops it between the CAS and that look,
 * and there the hook, in the same thread, releases the holder's record.
 * lock() must then hold the lock at once, through the spare, with the old
 * tail node prepared as the next spare: no pool operation (the pool's
 * count of pushes and pops, the version half of its top, stays put),
 * unlock of the new record SYNCQ_OK (its generation is the spare's), the
 * old record refused, and the lock free and whole after (trylock takes
 * the next spare; destroy SYNCQ_OK). Both the exported function and the
 * ops table's entry are run. One thread; the interleaving is fixed by the
 * hook.
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
#include "syncq/platform.h"
#include "syncq/reclaim.h"

SYNCQ_RACE_HOOK_DEFINE;

static syncq_lock_clh *lk;
static syncq_lock_node holder; /* the record that holds the lock when lock() looks */
static int hook_ran;

/* At the point: the holder releases (the hook is off while it runs). */
static void release_holder(const char *name) {
  if (strcmp(name, "lock.clh.lock.behind") != 0) return;
  syncq_race_hook = NULL;
  assert_int_equal(syncq_lock_clh_unlock(lk, &holder), SYNCQ_OK);
  hook_ran++;
}

/* lock() as the exported function, or through the registry's ops table. */
static int lock_exported(syncq_lock_clh *l, syncq_lock_node *n) { return syncq_lock_clh_lock(l, n); }
static int lock_by_table(syncq_lock_clh *l, syncq_lock_node *n) {
  return ((const syncq_lock_ops *)syncq_lock_clh_algo.ops)->lock(l, n);
}

static void check_released_behind(int rounds_before, int (*lock_fn)(syncq_lock_clh *, syncq_lock_node *)) {
  lk = syncq_alloc_aligned(sizeof *lk, _Alignof(syncq_lock_clh));
  assert_non_null(lk);
  assert_int_equal(syncq_lock_clh_init(lk, NULL), SYNCQ_OK);
  syncq_lock_node n, next;
  memset(&n, 0, sizeof n);
  memset(&next, 0, sizeof next);
  memset(&holder, 0, sizeof holder);
  for (int i = 0; i < rounds_before; i++) {
    assert_int_equal(lock_fn(lk, &n), SYNCQ_OK);
    assert_int_equal(syncq_lock_clh_unlock(lk, &n), SYNCQ_OK);
  }
  assert_int_equal(lock_fn(lk, &holder), SYNCQ_OK);
  const uint64_t swings = atomic_load(&lk->pool.top.hi); /* every push and pop adds one */
  hook_ran = 0;
  syncq_race_hook = release_holder;
  assert_int_equal(lock_fn(lk, &next), SYNCQ_OK); /* returns: released at the point */
  syncq_race_hook = NULL;
  assert_int_equal(hook_ran, 1);
  assert_int_equal(syncq_lock_clh_trylock(lk, &n), SYNCQ_EBUSY);      /* held through next */
  assert_int_equal(syncq_lock_clh_unlock(lk, &holder), SYNCQ_EINVAL); /* released already */
  assert_int_equal(syncq_lock_clh_unlock(lk, &next), SYNCQ_OK);
  if (atomic_load(&lk->pool.top.hi) != swings) fail_msg("a lock released behind the arrival went to the node pool");
  /* free and whole: the next acquisitions take the spare left, then again */
  for (int i = 0; i < 3; i++) {
    assert_int_equal(syncq_lock_clh_trylock(lk, &n), SYNCQ_OK);
    assert_int_equal(syncq_lock_clh_unlock(lk, &n), SYNCQ_OK);
    assert_int_equal(lock_fn(lk, &n), SYNCQ_OK);
    assert_int_equal(syncq_lock_clh_unlock(lk, &n), SYNCQ_OK);
  }
  assert_int_equal(atomic_load(&lk->pool.top.hi), swings);
  assert_int_equal(syncq_lock_clh_destroy(lk), SYNCQ_OK);
  free(lk);
}

/* The initial tail node (node 0) and its initial spare. */
static void test_released_behind_first(void **state) {
  (void)state;
  check_released_behind(0, lock_exported);
}

/* Tail and spare that earlier holders prepared (generations past the first). */
static void test_released_behind_later(void **state) {
  (void)state;
  check_released_behind(5, lock_exported);
}

/* The same through the ops table, whose entry is the body, not the
 * exported function. */
static void test_released_behind_by_table(void **state) {
  (void)state;
  check_released_behind(0, lock_by_table);
  check_released_behind(5, lock_by_table);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_released_behind_first),
    cmocka_unit_test(test_released_behind_later),
    cmocka_unit_test(test_released_behind_by_table),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
