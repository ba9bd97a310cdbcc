/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tp_restricted.h — the generic API's restriction of a time-published
 * lock ("mcs-tp", "clh-tp") left to its safe default, for mcs_tp_test.c
 * and clh_tp_test.c: a waiter beyond the admitted ones sleeps outside the
 * lock's queue, where no published time of its can go stale.
 *
 * The holder H keeps the lock made by syncq_lock_create(name, cfg) while
 * three waiters call lock() one after the other, then keeps it 50 ms
 * more and releases. Each waiter counts its own sleeps inside lock()
 * (syncq_stats, which the tests' library always counts). Restricted, at
 * most two waiters are admitted (SYNCQ_LOCK_GCR_ADMITTED; promotion needs
 * acquisitions, and H holds the lock), so whatever order they arrive in,
 * one waits in the passive set, spins at most one context switch (200 us
 * at most) and sleeps: the three sleep at least once together.
 * Unrestricted (yielding named, or before the restriction) all three wait
 * in the lock's queue by yielding: none ever sleeps. All get the lock, one
 * at a time (a plain counter under the lock checks it). The waits order
 * arrivals; they measure nothing. Include after cmocka.h and
 * stopped_waiter.h (sleep_ms), in one test file.
 */
#ifndef SYNCQ_TESTS_LOCK_TP_RESTRICTED_H
#define SYNCQ_TESTS_LOCK_TP_RESTRICTED_H

#include "syncq/stats.h"

#define TP_WAITERS 3

typedef struct tp_waiter {
  syncq_lock *lock;
  uint64_t *counter; /* plain: under the lock */
  _Atomic(int) calling;
  int status;      /* its lock()'s */
  uint64_t blocks; /* its sleeps inside lock() */
} tp_waiter;

static void *tp_waiter_main(void *p) {
  tp_waiter *w = p;
  syncq_lock_node node;
  syncq_stats_reset();
  atomic_store(&w->calling, 1);
  w->status = syncq_lock_lock(w->lock, &node);
  w->blocks = syncq_stats_self()->blocks;
  if (w->status == SYNCQ_OK) {
    (*w->counter)++;
    w->status = syncq_lock_unlock(w->lock, &node);
  }
  return NULL;
}

/* H and the three waiters, as above: the waiters' sleeps together. */
static uint64_t tp_waiters_sleeps(const char *name, const syncq_lock_config *cfg) {
  syncq_lock *l = NULL;
  assert_int_equal(syncq_lock_create(name, cfg, &l), SYNCQ_OK);
  uint64_t counter = 0;
  syncq_lock_node mine;
  assert_int_equal(syncq_lock_lock(l, &mine), SYNCQ_OK);
  tp_waiter w[TP_WAITERS];
  pthread_t t[TP_WAITERS];
  for (int i = 0; i < TP_WAITERS; i++) {
    w[i] = (tp_waiter){l, &counter, 0, -1, 0};
    assert_int_equal(pthread_create(&t[i], NULL, tp_waiter_main, &w[i]), 0);
    while (!atomic_load(&w[i].calling)) syncq_yield();
    sleep_ms(30); /* let it queue before the next one comes */
  }
  sleep_ms(50); /* far longer than one context switch */
  counter++;
  assert_int_equal(syncq_lock_unlock(l, &mine), SYNCQ_OK);
  uint64_t sleeps = 0;
  for (int i = 0; i < TP_WAITERS; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(w[i].status, SYNCQ_OK);
    sleeps += w[i].blocks;
  }
  assert_int_equal(counter, TP_WAITERS + 1);
  assert_int_equal(syncq_lock_destroy(l), SYNCQ_OK);
  return sleeps;
}

/* The generic default restricts the lock; yielding by name does not. */
static void tp_check_restricted_default(const char *name) {
  if (tp_waiters_sleeps(name, NULL) == 0) fail_msg("%s (default): no waiter beyond the admitted ones slept", name);
  syncq_lock *l = NULL;
  assert_int_equal(syncq_lock_create(name, NULL, &l), SYNCQ_OK);
  assert_int_equal(syncq_lock_discipline(l), SYNCQ_WAIT_COMPETITIVE); /* its passive waiters' */
  assert_int_equal(syncq_lock_destroy(l), SYNCQ_OK);
  syncq_lock_config yield = {0, SYNCQ_WAIT_YIELD, false};
  assert_int_equal(tp_waiters_sleeps(name, &yield), 0); /* yielding by name never sleeps: the lock alone */
  assert_int_equal(syncq_lock_create(name, &yield, &l), SYNCQ_OK);
  assert_int_equal(syncq_lock_discipline(l), SYNCQ_WAIT_YIELD);
  assert_int_equal(syncq_lock_destroy(l), SYNCQ_OK);
}

#endif
