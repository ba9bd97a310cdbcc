/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * clh_test.c — the CLH lock's node bookkeeping (src/lock/clh.c): each
 * holder leaves a prepared node (its spare) for the next arrival, which
 * takes it with its one CAS of tail; the others come from the lock's pool.
 *
 *  - every node is accounted for after threads have mixed lock and trylock
 *    under each discipline: the released tail node, its spare, and the
 *    pool hold all SYNCQ_LOCK_CLH_POOL nodes (a node lost or given to two
 *    owners would show here, or as a mutual exclusion failure);
 *  - two arrivals queued behind a holder: the first takes the holder's
 *    spare, the second a pool node, and it later owns two free nodes
 *    (its predecessor's and the spare left there), one of them back to
 *    the pool;
 *  - one thread locking alone takes the spare every time: the pool is not
 *    touched (its count of pushes and pops does not move);
 *  - unlock refuses a record naming any node but the holder's, the
 *    prepared spare included (the misuse check reads locked and spare);
 *  - a trylock on a held lock fails and leaves nothing taken.
 * The record layout (the node's address first in syncq_lock_node) is
 * clh.c's; tests reach internals.
 */
#include <pthread.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "syncq/lock/clh.h"
#include "syncq/platform.h"
#include "syncq/reclaim.h"
#include "syncq/wait.h"
#include "test_sanitizer.h" /* SANITIZED */

#define THREADS 4
/* Fewer under a sanitizer: four spinning threads hand the lock over in
 * FIFO order, so on a loaded machine a handover can wait for the next
 * thread's time slice; under TSan the 4 x 4000 rounds took 54-149 s
 * there (GCC and Clang alike), against the test's 120 s limit. */
#if SANITIZED
#define ROUNDS 1000
#else
#define ROUNDS 4000
#endif

typedef struct team {
  syncq_lock_clh *lock;
  uint64_t counter; /* guarded by the lock */
  _Atomic(int) errors;
} team;

/* Pops every node of the pool (the lock is unusable afterwards). */
static unsigned drain_pool(syncq_lock_clh *l) {
  unsigned n = 0;
  syncq_fl_link *link;
  while (syncq_freelist_pop(&l->pool, &link) == SYNCQ_OK) n++;
  return n;
}

static syncq_lock_clh *new_lock(int wait) {
  syncq_lock_clh *l = syncq_alloc_aligned(sizeof *l, _Alignof(syncq_lock_clh));
  assert_non_null(l);
  syncq_lock_config cfg = {0, wait, false};
  assert_int_equal(syncq_lock_clh_init(l, &cfg), SYNCQ_OK);
  return l;
}

static void *worker(void *arg) {
  team *t = arg;
  syncq_lock_node n;
  for (int i = 0; i < ROUNDS; i++) {
    int r = SYNCQ_EBUSY;
    if (i % 3 == 0) r = syncq_lock_clh_trylock(t->lock, &n);
    if (r == SYNCQ_EBUSY) r = syncq_lock_clh_lock(t->lock, &n);
    if (r != SYNCQ_OK) {
      atomic_fetch_add(&t->errors, 1);
      continue;
    }
    t->counter++;
    if (syncq_lock_clh_unlock(t->lock, &n) != SYNCQ_OK) atomic_fetch_add(&t->errors, 1);
  }
  return NULL;
}

/* After the team: the tail node is released and has a spare, and the
 * pool holds every other node. */
static void check_accounted(syncq_lock_clh *l, const char *what) {
  uint64_t tail = atomic_load(&l->tail);
  syncq_lock_clh_qnode *t = &l->node[tail & 0xffu];
  uint64_t spare = atomic_load(&t->spare);
  if (atomic_load(&t->locked) != 0u) fail_msg("%s: the tail node is still held", what);
  if (spare == 0u) fail_msg("%s: the released tail node has no spare", what);
  if ((spare & 0xffu) == (tail & 0xffu)) fail_msg("%s: the tail node is its own spare", what);
  unsigned pooled = drain_pool(l);
  if (pooled != SYNCQ_LOCK_CLH_POOL - 2u)
    fail_msg("%s: %u nodes in the pool, want %u (tail and spare out)", what, pooled, SYNCQ_LOCK_CLH_POOL - 2u);
}

static void test_nodes_accounted_for(void **state) {
  (void)state;
  const int waits[] = {SYNCQ_WAIT_SPIN, SYNCQ_WAIT_YIELD, SYNCQ_WAIT_BLOCK, SYNCQ_WAIT_COMPETITIVE};
  for (size_t w = 0; w < sizeof waits / sizeof waits[0]; w++) {
    team t = {new_lock(waits[w]), 0, 0};
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) assert_int_equal(pthread_create(&th[i], NULL, worker, &t), 0);
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&t.errors), 0);
    assert_int_equal(t.counter, (uint64_t)THREADS * ROUNDS);
    assert_int_equal(syncq_lock_clh_destroy(t.lock), SYNCQ_OK);
    check_accounted(t.lock, syncq_wait_name(waits[w]));
    free(t.lock);
  }
}

/* Waits (up to 20 s) until tail moves from `from`: an arrival queued. */
static bool await_tail_moves(syncq_lock_clh *l, uint64_t from) {
  struct timespec ts = {0, 100000};
  for (int i = 0; i < 200000 && atomic_load(&l->tail) == from; i++) nanosleep(&ts, NULL);
  return atomic_load(&l->tail) != from;
}

static void *one_lock(void *arg) {
  team *t = arg;
  syncq_lock_node n;
  if (syncq_lock_clh_lock(t->lock, &n) != SYNCQ_OK) atomic_fetch_add(&t->errors, 1);
  t->counter++;
  if (syncq_lock_clh_unlock(t->lock, &n) != SYNCQ_OK) atomic_fetch_add(&t->errors, 1);
  return NULL;
}

/* The main thread holds the lock; A queues behind it taking the holder's
 * spare, then B queues behind A, whose node has no spare yet (A does not
 * hold the lock): B enqueues a node from the pool and, once it holds the
 * lock, owns both A's node and the spare A left in it: one becomes its
 * spare, the other goes back to the pool. */
static void test_queued_arrivals(void **state) {
  (void)state;
  const int waits[] = {SYNCQ_WAIT_SPIN, SYNCQ_WAIT_BLOCK};
  for (size_t w = 0; w < sizeof waits / sizeof waits[0]; w++) {
    team t = {new_lock(waits[w]), 0, 0};
    syncq_lock_node mine;
    assert_int_equal(syncq_lock_clh_lock(t.lock, &mine), SYNCQ_OK);
    pthread_t a, b;
    uint64_t seen = atomic_load(&t.lock->tail);
    assert_int_equal(pthread_create(&a, NULL, one_lock, &t), 0);
    if (!await_tail_moves(t.lock, seen)) fail_msg("A did not queue");
    seen = atomic_load(&t.lock->tail);
    assert_int_equal(pthread_create(&b, NULL, one_lock, &t), 0);
    if (!await_tail_moves(t.lock, seen)) fail_msg("B did not queue");
    assert_int_equal(syncq_lock_clh_unlock(t.lock, &mine), SYNCQ_OK);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert_int_equal(atomic_load(&t.errors), 0);
    assert_int_equal(t.counter, 2u);
    check_accounted(t.lock, syncq_wait_name(waits[w]));
    free(t.lock);
  }
}

static void test_alone_takes_the_spare(void **state) {
  (void)state;
  syncq_lock_clh *l = new_lock(SYNCQ_WAIT_DEFAULT);
  syncq_lock_node n;
  uint64_t swings = atomic_load(&l->pool.top.hi); /* every push and pop adds one */
  for (int i = 0; i < 1000; i++) {
    assert_int_equal(i % 2 ? syncq_lock_clh_lock(l, &n) : syncq_lock_clh_trylock(l, &n), SYNCQ_OK);
    assert_int_equal(syncq_lock_clh_unlock(l, &n), SYNCQ_OK);
  }
  assert_int_equal(atomic_load(&l->pool.top.hi), swings);
  check_accounted(l, "alone");
  free(l);
}

static void test_unlock_refuses_other_nodes(void **state) {
  (void)state;
  syncq_lock_clh *l = new_lock(SYNCQ_WAIT_DEFAULT);
  syncq_lock_node mine, other;
  /* free: no node holds it, not even the prepared spare (locked 1) */
  for (unsigned i = 0; i < SYNCQ_LOCK_CLH_POOL; i++) {
    syncq_lock_clh_qnode *p = &l->node[i];
    memcpy(other.opaque, &p, sizeof p);
    assert_int_equal(syncq_lock_clh_unlock(l, &other), SYNCQ_EINVAL);
  }
  assert_int_equal(syncq_lock_clh_lock(l, &mine), SYNCQ_OK);
  syncq_lock_clh_qnode *held;
  memcpy(&held, mine.opaque, sizeof held);
  for (unsigned i = 0; i < SYNCQ_LOCK_CLH_POOL; i++) {
    syncq_lock_clh_qnode *p = &l->node[i];
    if (p == held) continue;
    memcpy(other.opaque, &p, sizeof p);
    assert_int_equal(syncq_lock_clh_unlock(l, &other), SYNCQ_EINVAL);
  }
  /* held: a trylock fails and takes nothing */
  assert_int_equal(syncq_lock_clh_trylock(l, &other), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_clh_destroy(l), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_clh_unlock(l, &mine), SYNCQ_OK);
  assert_int_equal(syncq_lock_clh_unlock(l, &mine), SYNCQ_EINVAL); /* twice */
  /* Released two acquisitions ago: a thread alone alternates between two
   * nodes, so mine's node is held again, through third; mine's unlock must
   * not release third's hold (a trylock would then take the lock from
   * under it). */
  syncq_lock_node third;
  memset(&third, 0, sizeof third);
  assert_int_equal(syncq_lock_clh_lock(l, &mine), SYNCQ_OK);
  assert_int_equal(syncq_lock_clh_unlock(l, &mine), SYNCQ_OK);
  assert_int_equal(syncq_lock_clh_lock(l, &other), SYNCQ_OK);
  assert_int_equal(syncq_lock_clh_unlock(l, &other), SYNCQ_OK);
  assert_int_equal(syncq_lock_clh_lock(l, &third), SYNCQ_OK);
  assert_ptr_equal(*(void **)(void *)third.opaque, *(void **)(void *)mine.opaque); /* the same node */
  assert_int_equal(syncq_lock_clh_unlock(l, &mine), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_clh_trylock(l, &other), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_clh_unlock(l, &third), SYNCQ_OK);
  check_accounted(l, "refusals");
  free(l);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_queued_arrivals), /* first: a lost node shows here, before a pool runs dry */
    cmocka_unit_test(test_nodes_accounted_for),
    cmocka_unit_test(test_alone_takes_the_spare),
    cmocka_unit_test(test_unlock_refuses_other_nodes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
