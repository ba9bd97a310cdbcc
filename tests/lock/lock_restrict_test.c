/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lock_restrict_test.c — the generic API's concurrency restriction around
 * the FIFO locks whose waiters may sleep: left to their safe default, or
 * made with SYNCQ_WAIT_BLOCK or SYNCQ_WAIT_COMPETITIVE (src/lock/gcr.c).
 *
 *  - a waiter beyond the admitted ones waits outside the FIFO lock: the
 *    holder H keeps the lock while waiters A0 and A1 queue (A0 admitted,
 *    A1 first in the passive set: SYNCQ_LOCK_GCR_ADMITTED is 1) and P
 *    arrives behind A1; P is then stopped inside its lock() call (a signal
 *    whose handler sleeps until released). H releases; A0 and A1 take the
 *    lock in turn; then a trylock must succeed although P, who called
 *    lock() before, is stopped: P waits in the passive set, not in the
 *    FIFO queue (unrestricted, P would be queued next and the trylock
 *    would fail while P is stopped). Then P is released and gets the lock.
 *    The same holds with block and competitive named; with spinning or
 *    yielding named the FIFO lock is alone: the trylock fails;
 *  - bad inputs leave the restriction's count alone: a NULL node (mcs,
 *    clh use one) and an unlock of a lock nobody holds are SYNCQ_EINVAL,
 *    and the lock then still admits and serves waiters;
 *  - many threads (16 on the test plan's 2 confined PUs, on any machine)
 *    keep mutual exclusion and all finish, with the default, block and
 *    competitive: the passive set's waiters are admitted (room or
 *    promotion), none starves. A passive head left asleep with nobody to
 *    wake it (a lost wake-up: the lock free, nobody admitted) stops every
 *    thread: the test fails, naming the lock, once no acquisition has been
 *    made for STALL_S seconds, instead of hanging.
 * The waits order arrivals; they measure nothing.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <cmocka.h>

#include "test_plan.h"

#include "syncq/lock.h"
#include "syncq/platform.h"
#include "syncq/wait.h"

#include "stopped_waiter.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

/* The FIFO locks whose generic default is restricted. */
static const char *const fifo_locks[] = {"mcs",       "clh",       "ticket",   "anderson",
                                         "array-cas", "array-faa", "sc-queue", "hybrid-sc"};
#define NFIFO (sizeof fifo_locks / sizeof fifo_locks[0])

static int lock_fn(void *l, syncq_lock_node *n) { return syncq_lock_lock(l, n); }
static int unlock_fn(void *l, syncq_lock_node *n) { return syncq_lock_unlock(l, n); }

/* H, A0, A1, stopped P, as the header says; returns whether the trylock
 * after A0 and A1 succeeded while P was stopped. */
static bool trylock_passes_stopped_waiter(const char *name, const syncq_lock_config *cfg) {
  syncq_lock *l = NULL;
  assert_int_equal(syncq_lock_create(name, cfg, &l), SYNCQ_OK);
  sw_setup(l, lock_fn, unlock_fn);
  syncq_lock_node mine;
  assert_int_equal(syncq_lock_lock(l, &mine), SYNCQ_OK);
  pthread_t a0 = sw_start(0);
  pthread_t a1 = sw_start(1);
  pthread_t p = sw_start_stopped(2);
  assert_int_equal(syncq_lock_unlock(l, &mine), SYNCQ_OK);
  bool passed = false;
  assert_true(sw_await_first()); /* A0 got it: the first hand-over is never to P */
  /* A0 and A1 take the lock in turn (unrestricted, P comes between them
   * or before the trylock below; give up after a generous while) */
  for (int i = 0; i < 2000 && atomic_load(&sw.got) < 2; i++) sleep_ms(1);
  if (atomic_load(&sw.got) == 2) {
    for (int i = 0; i < 100 && !passed; i++) { /* A1's unlock may still be returning */
      if (syncq_lock_trylock(l, &mine) == SYNCQ_OK) {
        passed = true;
        assert_int_equal(syncq_lock_unlock(l, &mine), SYNCQ_OK);
      } else {
        sleep_ms(1);
      }
    }
  }
  sw_thaw();
  pthread_join(a0, NULL);
  pthread_join(a1, NULL);
  pthread_join(p, NULL); /* P gets the lock once it runs */
  assert_int_equal(atomic_load(&sw.got), 3);
  if (passed) {
    assert_int_equal(sw.order[0] + sw.order[1], 0 + 1); /* A0 and A1 first */
    assert_int_equal(sw.order[2], 2);
  }
  assert_int_equal(syncq_lock_destroy(l), SYNCQ_OK);
  sw_teardown();
  return passed;
}

/* The disciplines under which a FIFO lock is restricted (DEFAULT: the
 * safe default, competitive) and those under which it is not. */
static const int restricted_waits[] = {SYNCQ_WAIT_DEFAULT, SYNCQ_WAIT_BLOCK, SYNCQ_WAIT_COMPETITIVE};
static const int unrestricted_waits[] = {SYNCQ_WAIT_SPIN, SYNCQ_WAIT_YIELD};
#define NWAITS(a) (sizeof(a) / sizeof(a)[0])

/* Whether the lock accepts the discipline (sc-queue and hybrid-sc never
 * block; anderson and the array locks take any). */
static bool accepts(const char *name, int wait) {
  syncq_lock_config cfg = {0, wait, false};
  syncq_lock *l = NULL;
  int r = syncq_lock_create(name, &cfg, &l);
  if (r == SYNCQ_ENOTSUP) return false;
  assert_int_equal(r, SYNCQ_OK);
  assert_int_equal(syncq_lock_destroy(l), SYNCQ_OK);
  return true;
}

static void test_passive_waiter_is_outside_the_fifo_queue(void **state) {
  (void)state;
  for (size_t i = 0; i < NFIFO; i++) {
    for (size_t w = 0; w < NWAITS(restricted_waits); w++) {
      if (!accepts(fifo_locks[i], restricted_waits[w])) continue;
      syncq_lock_config cfg = {0, restricted_waits[w], false};
      if (!trylock_passes_stopped_waiter(fifo_locks[i], &cfg))
        fail_msg("%s (%s): a stopped waiter beyond the admitted ones held the lock up", fifo_locks[i],
                 syncq_wait_name(restricted_waits[w]));
    }
  }
}

static void test_spinning_and_yielding_stay_fifo(void **state) {
  (void)state;
  for (size_t i = 0; i < NFIFO; i++) {
    for (size_t w = 0; w < NWAITS(unrestricted_waits); w++) {
      if (!accepts(fifo_locks[i], unrestricted_waits[w])) continue;
      syncq_lock_config cfg = {0, unrestricted_waits[w], false};
      if (trylock_passes_stopped_waiter(fifo_locks[i], &cfg))
        fail_msg("%s (%s by name): the trylock passed a queued waiter", fifo_locks[i],
                 syncq_wait_name(unrestricted_waits[w]));
    }
  }
}

static void test_bad_inputs_keep_the_count(void **state) {
  (void)state;
  const char *const names[] = {"mcs", "clh", "ticket"};
  for (size_t i = 0; i < 2 * (sizeof names / sizeof names[0]); i++) {
    syncq_lock *l = NULL;
    syncq_lock_config block = {0, SYNCQ_WAIT_BLOCK, false}; /* the second round: block by name */
    assert_int_equal(syncq_lock_create(names[i / 2], i % 2 ? &block : NULL, &l), SYNCQ_OK);
    syncq_lock_node mine;
    memset(&mine, 0, sizeof mine); /* a node never used, not stack garbage (a stale record of the last round) */
    if (syncq_lock_algo(l)->props & SYNCQ_PROP_USES_NODE) assert_int_equal(syncq_lock_lock(l, NULL), SYNCQ_EINVAL);
    assert_int_equal(syncq_lock_unlock(l, &mine), SYNCQ_EINVAL); /* nobody holds it */
    assert_int_equal(syncq_lock_lock(NULL, &mine), SYNCQ_EINVAL);
    /* still admits: H, an admitted waiter and two passive ones all get it */
    sw_setup(l, lock_fn, unlock_fn);
    assert_int_equal(syncq_lock_lock(l, &mine), SYNCQ_OK);
    pthread_t t[3];
    for (int k = 0; k < 3; k++) t[k] = sw_start(k);
    assert_int_equal(syncq_lock_unlock(l, &mine), SYNCQ_OK);
    for (int k = 0; k < 3; k++) pthread_join(t[k], NULL);
    assert_int_equal(atomic_load(&sw.got), 3);
    for (int k = 0; k < 3; k++) assert_int_equal(sw.order[k], k); /* FIFO here: each arrived in turn */
    assert_int_equal(syncq_lock_destroy(l), SYNCQ_OK);
    sw_teardown();
  }
}

#if SANITIZED
#define INCREMENTS 1000 /* per thread */
#else
#define INCREMENTS 2000
#endif
#define MANY_THREADS 16

/* No acquisition for this long: the threads wait for a wake-up that will
 * not come (generous: qemu-user on a loaded host makes a few thousand a
 * second). */
#define STALL_S 120

typedef struct many {
  syncq_lock *lock;
  pthread_barrier_t start;
  uint64_t counter;       /* plain: protected by the lock */
  _Atomic(uint64_t) made; /* acquisitions so far, read by the test's thread */
  _Atomic(int) finished;  /* incrementers that returned */
  _Atomic(int) errors;
} many;

static void *incrementer(void *arg) {
  many *m = arg;
  syncq_lock_node node;
  pthread_barrier_wait(&m->start);
  for (int i = 0; i < INCREMENTS; i++) {
    if (syncq_lock_lock(m->lock, &node) != SYNCQ_OK) {
      atomic_fetch_add(&m->errors, 1);
      continue;
    }
    m->counter++;
    if (syncq_lock_unlock(m->lock, &node) != SYNCQ_OK) atomic_fetch_add(&m->errors, 1);
    atomic_fetch_add_explicit(&m->made, 1u, memory_order_relaxed); /* relaxed: a progress count only */
  }
  atomic_fetch_add(&m->finished, 1);
  return NULL;
}

/* Wait until the incrementers return, or fail once none has made an
 * acquisition for STALL_S seconds (they are left stuck: the process ends
 * with the failure). */
static void await_incrementers(many *m, const char *name, int wait) {
  uint64_t seen = 0;
  int still = 0;
  while (atomic_load(&m->finished) < MANY_THREADS) {
    sleep_ms(100);
    uint64_t now = atomic_load_explicit(&m->made, memory_order_relaxed); /* relaxed: as above */
    still = now == seen ? still + 1 : 0;
    seen = now;
    if (still == STALL_S * 10)
      fail_msg("%s (%s): no acquisition for %d s after %llu of %d (a waiter is never woken)", name,
               syncq_wait_name(wait), STALL_S, (unsigned long long)now, MANY_THREADS * INCREMENTS);
  }
}

static void test_many_threads_finish(void **state) {
  (void)state;
  for (size_t j = 0; j < NFIFO * NWAITS(restricted_waits); j++) {
    size_t i = j / NWAITS(restricted_waits);
    int wait = restricted_waits[j % NWAITS(restricted_waits)];
    if (!accepts(fifo_locks[i], wait)) continue;
    many *m = syncq_alloc_aligned(sizeof *m, SYNCQ_CACHELINE);
    assert_non_null(m);
    m->counter = 0;
    atomic_init(&m->made, 0u);
    atomic_init(&m->finished, 0);
    atomic_init(&m->errors, 0);
    syncq_lock_config cfg = {MANY_THREADS, wait, false}; /* anderson, array: slots */
    assert_int_equal(syncq_lock_create(fifo_locks[i], &cfg, &m->lock), SYNCQ_OK);
    assert_int_equal(syncq_lock_discipline(m->lock), wait == SYNCQ_WAIT_DEFAULT ? SYNCQ_WAIT_COMPETITIVE : wait);
    pthread_t t[MANY_THREADS];
    assert_int_equal(pthread_barrier_init(&m->start, NULL, MANY_THREADS), 0);
    for (int k = 0; k < MANY_THREADS; k++) assert_int_equal(pthread_create(&t[k], NULL, incrementer, m), 0);
    await_incrementers(m, fifo_locks[i], wait);
    for (int k = 0; k < MANY_THREADS; k++) pthread_join(t[k], NULL);
    assert_int_equal(atomic_load(&m->errors), 0);
    assert_int_equal(m->counter, (uint64_t)MANY_THREADS * INCREMENTS);
    assert_int_equal(syncq_lock_destroy(m->lock), SYNCQ_OK);
    pthread_barrier_destroy(&m->start);
    free(m);
  }
}

int main(void) {
  test_plan_confine();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_passive_waiter_is_outside_the_fifo_queue),
    cmocka_unit_test(test_spinning_and_yielding_stay_fifo),
    cmocka_unit_test(test_bad_inputs_keep_the_count),
    cmocka_unit_test(test_many_threads_finish),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
