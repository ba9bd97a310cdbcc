/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * clh_tp_test.c — what the time-published CLH lock ("clh-tp") adds to
 * CLH: a waiting node whose owner is not running is removed by its
 * successor, and the owner queues again when it runs.
 *
 * The holder H keeps the lock while waiters A1..Ak queue one after the
 * other; each is stopped inside its lock() call by a signal whose handler
 * sleeps until released, so it publishes nothing. Waiter B queues behind
 * them and keeps polling. B's predecessor's time is tens of milliseconds
 * old (the bound is at most SYNCQ_LOCK_CLH_TP_STALE_NS, 100 us): B removes it, then the one
 * before it (k = 2 checks the chain), and spins on H's node; when H
 * releases, B must get the lock first, although every A queued before it
 * (plain CLH would wait for A1). Then the A's are released and must all
 * get the lock (they queue again). The waits below order arrivals; they
 * measure nothing, and B gets the lock first however late the scheduler
 * runs anybody, since no A can run until released (the test gives B 20 s).
 * Through the generic API with its safe default, a waiter beyond the
 * admitted ones sleeps outside the queue (tp_restricted.h).
 * Also: the disciplines the lock refuses, its bad inputs, a node that
 * does not hold the lock, and the node bookkeeping: each holder leaves a
 * prepared node (its spare) for the next arrival, which takes it with
 * its one CAS of tail, so one thread locking alone never touches the
 * pool; and after the removals above, and after threads mixing lock and
 * trylock, every node is accounted for (the released tail, its spare,
 * the pool): a node lost or given two roles shows there. The removal
 * test checks the case that needs care: the stopped waiter took the
 * holder's spare, and the successor that removes it takes the lock
 * through the holder's node, whose spare must not be handed out again.
 * Tests reach internals (the tail word's index in its low 8 bits).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "syncq/lock/clh_tp.h"
#include "syncq/platform.h"
#include "syncq/reclaim.h"
#include "syncq/wait.h"

#include "stopped_waiter.h"
#include "tp_restricted.h"

#define MAX_STOPPED 2

static syncq_lock_clh_tp lock;

/* After the threads: the tail node is released and has a spare other
 * than itself, and the pool holds every other node (the lock is
 * unusable afterwards: its pool is drained). */
static void check_accounted(syncq_lock_clh_tp *l, const char *what) {
  uint64_t tail = atomic_load(&l->tail);
  syncq_lock_clh_tp_qnode *t = &l->node[tail & 0xffu];
  uint64_t spare = atomic_load(&t->spare);
  if ((atomic_load(&t->word) & 0xffu) != 0u) fail_msg("%s: the tail node is not released", what);
  if (spare == 0u) fail_msg("%s: the released tail node has no spare", what);
  if ((spare & 0xffu) == (tail & 0xffu)) fail_msg("%s: the tail node is its own spare", what);
  unsigned pooled = 0;
  syncq_fl_link *link;
  while (syncq_freelist_pop(&l->pool, &link) == SYNCQ_OK) pooled++;
  if (pooled != SYNCQ_LOCK_CLH_TP_POOL - 2u)
    fail_msg("%s: %u nodes in the pool, want %u (tail and spare out)", what, pooled, SYNCQ_LOCK_CLH_TP_POOL - 2u);
}

static int lock_fn(void *l, syncq_lock_node *n) { return syncq_lock_clh_tp_lock(l, n); }
static int unlock_fn(void *l, syncq_lock_node *n) { return syncq_lock_clh_tp_unlock(l, n); }

/* k stopped waiters (ids 0..k-1), then B (id k). */
static void check_removes_stopped(int wait, int k) {
  syncq_lock_config cfg = {0, wait, false};
  assert_int_equal(syncq_lock_clh_tp_init(&lock, &cfg), SYNCQ_OK);
  sw_setup(&lock, lock_fn, unlock_fn);
  syncq_lock_node mine;
  pthread_t t[MAX_STOPPED + 1];
  assert_int_equal(syncq_lock_clh_tp_lock(&lock, &mine), SYNCQ_OK);
  for (int i = 0; i < k; i++) t[i] = sw_start_stopped(i); /* A_i queues, then stops */
  t[k] = sw_start(k); /* B queues behind the A's, whose times are 30 ms old or more */
  assert_int_equal(syncq_lock_clh_tp_unlock(&lock, &mine), SYNCQ_OK);
  /* B gets the lock past the stopped A's (plain CLH would wait for A1's
   * release: give up after a generous while) */
  if (!sw_await_first()) fail_msg("%s, %d stopped: the lock waited for a stopped waiter", syncq_wait_name(wait), k);
  pthread_join(t[k], NULL);
  assert_int_equal(atomic_load(&sw.got), 1);
  assert_int_equal(sw.order[0], k);
  sw_thaw();
  for (int i = 0; i < k; i++) pthread_join(t[i], NULL); /* each queues again and gets it */
  assert_int_equal(atomic_load(&sw.got), k + 1);
  assert_int_equal(syncq_lock_clh_tp_destroy(&lock), SYNCQ_OK);
  sw_teardown();
  check_accounted(&lock, syncq_wait_name(wait));
}

static void test_removes_a_stopped_waiter_spin(void **state) {
  (void)state;
  check_removes_stopped(SYNCQ_WAIT_SPIN, 1);
}

static void test_removes_a_stopped_waiter_yield(void **state) {
  (void)state;
  check_removes_stopped(SYNCQ_WAIT_YIELD, 1);
}

static void test_removes_two_stopped_waiters_in_a_row(void **state) {
  (void)state;
  check_removes_stopped(SYNCQ_WAIT_SPIN, 2);
}

/* More acquisitions than the pool has nodes, by lock and trylock: every
 * node goes back to the pool (a lost one would make lock() wait forever
 * after 64 rounds, trylock() return SYNCQ_EBUSY). */
static void test_nodes_go_back_to_the_pool(void **state) {
  (void)state;
  syncq_lock_clh_tp l;
  syncq_lock_node n;
  assert_int_equal(syncq_lock_clh_tp_init(&l, NULL), SYNCQ_OK);
  for (unsigned i = 0; i < 4u * SYNCQ_LOCK_CLH_TP_POOL; i++) {
    assert_int_equal(syncq_lock_clh_tp_lock(&l, &n), SYNCQ_OK);
    assert_int_equal(syncq_lock_clh_tp_unlock(&l, &n), SYNCQ_OK);
    assert_int_equal(syncq_lock_clh_tp_trylock(&l, &n), SYNCQ_OK);
    assert_int_equal(syncq_lock_clh_tp_unlock(&l, &n), SYNCQ_OK);
  }
  assert_int_equal(syncq_lock_clh_tp_destroy(&l), SYNCQ_OK);
}

/* One thread alone takes the spare its previous acquisition left, by
 * lock and by trylock: the pool's count of pushes and pops (the version
 * half of its top) does not move. */
static void test_alone_takes_the_spare(void **state) {
  (void)state;
  syncq_lock_clh_tp *l = syncq_alloc_aligned(sizeof *l, _Alignof(syncq_lock_clh_tp));
  assert_non_null(l);
  syncq_lock_node n;
  assert_int_equal(syncq_lock_clh_tp_init(l, NULL), SYNCQ_OK);
  uint64_t swings = atomic_load(&l->pool.top.hi); /* every push and pop adds one */
  for (int i = 0; i < 1000; i++) {
    assert_int_equal(i % 2 ? syncq_lock_clh_tp_lock(l, &n) : syncq_lock_clh_tp_trylock(l, &n), SYNCQ_OK);
    assert_int_equal(syncq_lock_clh_tp_unlock(l, &n), SYNCQ_OK);
  }
  assert_int_equal(atomic_load(&l->pool.top.hi), swings);
  assert_int_equal(syncq_lock_clh_tp_destroy(l), SYNCQ_OK);
  check_accounted(l, "alone");
  free(l);
}

#define TEAM_THREADS 4
#define TEAM_ROUNDS 4000

typedef struct team {
  syncq_lock_clh_tp *lock;
  uint64_t counter; /* guarded by the lock */
  _Atomic(int) errors;
} team;

static void *team_worker(void *arg) {
  team *t = arg;
  syncq_lock_node n;
  for (int i = 0; i < TEAM_ROUNDS; i++) {
    int r = SYNCQ_EBUSY;
    if (i % 3 == 0) r = syncq_lock_clh_tp_trylock(t->lock, &n);
    if (r == SYNCQ_EBUSY) r = syncq_lock_clh_tp_lock(t->lock, &n);
    if (r != SYNCQ_OK) {
      atomic_fetch_add(&t->errors, 1);
      continue;
    }
    t->counter++;
    if (syncq_lock_clh_tp_unlock(t->lock, &n) != SYNCQ_OK) atomic_fetch_add(&t->errors, 1);
  }
  return NULL;
}

/* Threads mixing lock and trylock (waiters that lose their processor
 * are removed and queue again along the way): mutual exclusion holds and
 * every node is accounted for afterwards. */
static void test_nodes_accounted_for_after_a_team(void **state) {
  (void)state;
  const int waits[] = {SYNCQ_WAIT_SPIN, SYNCQ_WAIT_YIELD};
  for (size_t w = 0; w < sizeof waits / sizeof waits[0]; w++) {
    syncq_lock_clh_tp *l = syncq_alloc_aligned(sizeof *l, _Alignof(syncq_lock_clh_tp));
    assert_non_null(l);
    syncq_lock_config cfg = {0, waits[w], false};
    assert_int_equal(syncq_lock_clh_tp_init(l, &cfg), SYNCQ_OK);
    team t = {l, 0, 0};
    pthread_t th[TEAM_THREADS];
    for (int i = 0; i < TEAM_THREADS; i++) assert_int_equal(pthread_create(&th[i], NULL, team_worker, &t), 0);
    for (int i = 0; i < TEAM_THREADS; i++) pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&t.errors), 0);
    assert_int_equal(t.counter, (uint64_t)TEAM_THREADS * TEAM_ROUNDS);
    assert_int_equal(syncq_lock_clh_tp_destroy(l), SYNCQ_OK);
    check_accounted(l, syncq_wait_name(waits[w]));
    free(l);
  }
}

static void test_generic_default_sleeps_beyond_the_admitted(void **state) {
  (void)state;
  tp_check_restricted_default("clh-tp");
}

static void test_disciplines_and_bad_inputs(void **state) {
  (void)state;
  syncq_lock_clh_tp l;
  syncq_lock_node n, other;
  memset(&n, 0, sizeof n);
  memset(&other, 0, sizeof other);
  syncq_lock_config cfg = {0, SYNCQ_WAIT_BLOCK, false};
  assert_int_equal(syncq_lock_clh_tp_init(&l, &cfg), SYNCQ_ENOTSUP);
  cfg.wait = SYNCQ_WAIT_COMPETITIVE;
  assert_int_equal(syncq_lock_clh_tp_init(&l, &cfg), SYNCQ_ENOTSUP);
  cfg.wait = 99;
  assert_int_equal(syncq_lock_clh_tp_init(&l, &cfg), SYNCQ_EINVAL);
  cfg.wait = SYNCQ_WAIT_SPIN;
  cfg.process_shared = true;
  assert_int_equal(syncq_lock_clh_tp_init(&l, &cfg), SYNCQ_ENOTSUP);
  assert_int_equal(syncq_lock_clh_tp_init(NULL, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_clh_tp_init(&l, NULL), SYNCQ_OK);
  /* the staleness bound: one measured context switch, capped */
  const uint64_t cs = syncq_wait_spin_limit_ns();
  assert_true(l.stale_ns == (cs < SYNCQ_LOCK_CLH_TP_STALE_NS ? cs : SYNCQ_LOCK_CLH_TP_STALE_NS));
  assert_true(l.stale_ns > 0);
  assert_int_equal(syncq_lock_clh_tp_lock(NULL, &n), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_clh_tp_lock(&l, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_clh_tp_trylock(NULL, &n), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_clh_tp_trylock(&l, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_clh_tp_unlock(NULL, &n), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_clh_tp_unlock(&l, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_clh_tp_unlock(&l, &n), SYNCQ_EINVAL); /* never used */
  assert_int_equal(syncq_lock_clh_tp_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_clh_tp_trylock(&l, &n), SYNCQ_OK);
  assert_int_equal(syncq_lock_clh_tp_trylock(&l, &other), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_clh_tp_unlock(&l, &other), SYNCQ_EINVAL); /* does not hold it */
  assert_int_equal(syncq_lock_clh_tp_destroy(&l), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_clh_tp_unlock(&l, &n), SYNCQ_OK);
  assert_int_equal(syncq_lock_clh_tp_unlock(&l, &n), SYNCQ_EINVAL); /* released already */
  /* Released two acquisitions ago: one thread alone alternates between
   * two pool nodes, so n's node is held again, through third; n's unlock
   * must not release third's hold (trylock would then take the lock from
   * under it). */
  syncq_lock_node third;
  memset(&third, 0, sizeof third);
  assert_int_equal(syncq_lock_clh_tp_lock(&l, &n), SYNCQ_OK);
  assert_int_equal(syncq_lock_clh_tp_unlock(&l, &n), SYNCQ_OK);
  assert_int_equal(syncq_lock_clh_tp_lock(&l, &other), SYNCQ_OK);
  assert_int_equal(syncq_lock_clh_tp_unlock(&l, &other), SYNCQ_OK);
  assert_int_equal(syncq_lock_clh_tp_lock(&l, &third), SYNCQ_OK);
  assert_ptr_equal(*(void **)(void *)third.opaque, *(void **)(void *)n.opaque); /* the same pool node */
  assert_int_equal(syncq_lock_clh_tp_unlock(&l, &n), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_clh_tp_trylock(&l, &other), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_clh_tp_unlock(&l, &third), SYNCQ_OK);
  assert_int_equal(syncq_lock_clh_tp_destroy(&l), SYNCQ_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_removes_a_stopped_waiter_spin),
    cmocka_unit_test(test_removes_a_stopped_waiter_yield),
    cmocka_unit_test(test_removes_two_stopped_waiters_in_a_row),
    cmocka_unit_test(test_nodes_go_back_to_the_pool),
    cmocka_unit_test(test_alone_takes_the_spare),
    cmocka_unit_test(test_nodes_accounted_for_after_a_team),
    cmocka_unit_test(test_disciplines_and_bad_inputs),
    cmocka_unit_test(test_generic_default_sleeps_beyond_the_admitted),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
