/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tp_restricted.h — the generic API's restriction of a time-published
 * lock ("mcs-tp", "clh-tp") left to its safe default, for mcs_tp_test.c
 * and clh_tp_test.c: a waiter beyond the admitted ones sleeps outside the
 * lock's queue, where no published time of its can go stale.
 *
 * The holder H keeps the lock made by syncq_lock_create(name, cfg) while
 * waiters A0 and A1 queue (admitted: SYNCQ_LOCK_GCR_ADMITTED is 2), then P
 * calls lock() and H keeps the lock 50 ms more before it releases. P
 * counts its own sleeps (syncq_stats, which the tests' library always
 * counts). Restricted, P waits in the passive set, spinning about one
 * context switch and then sleeping: it sleeps at least once.
 * Unrestricted (yielding named, or before the
 * restriction), P waits in the lock's queue by yielding: it never sleeps.
 * The waits order arrivals; they measure nothing. Include after cmocka.h
 * and stopped_waiter.h, in one test file.
 */
#ifndef SYNCQ_TESTS_LOCK_TP_RESTRICTED_H
#define SYNCQ_TESTS_LOCK_TP_RESTRICTED_H

#include "syncq/stats.h"

typedef struct tp_late_waiter {
  syncq_lock *lock;
  _Atomic(int) calling;
  int status;      /* its lock()'s */
  uint64_t blocks; /* its sleeps inside lock() */
} tp_late_waiter;

static int tp_generic_lock(void *l, syncq_lock_node *n) { return syncq_lock_lock(l, n); }
static int tp_generic_unlock(void *l, syncq_lock_node *n) { return syncq_lock_unlock(l, n); }

static void *tp_late_main(void *p) {
  tp_late_waiter *w = p;
  syncq_lock_node node;
  syncq_stats_reset();
  atomic_store(&w->calling, 1);
  w->status = syncq_lock_lock(w->lock, &node);
  w->blocks = syncq_stats_self()->blocks;
  if (w->status == SYNCQ_OK) assert_int_equal(syncq_lock_unlock(w->lock, &node), SYNCQ_OK);
  return NULL;
}

/* H, A0, A1, then P, as above; *late gets P's counts. Every waiter gets
 * the lock in the end. */
static void tp_run_late_waiter(const char *name, const syncq_lock_config *cfg, tp_late_waiter *late) {
  syncq_lock *l = NULL;
  assert_int_equal(syncq_lock_create(name, cfg, &l), SYNCQ_OK);
  sw_setup(l, tp_generic_lock, tp_generic_unlock);
  syncq_lock_node mine;
  assert_int_equal(syncq_lock_lock(l, &mine), SYNCQ_OK);
  pthread_t a0 = sw_start(0);
  pthread_t a1 = sw_start(1);
  memset(late, 0, sizeof *late);
  late->lock = l;
  late->status = -1;
  pthread_t p;
  assert_int_equal(pthread_create(&p, NULL, tp_late_main, late), 0);
  while (!atomic_load(&late->calling)) syncq_yield();
  sleep_ms(50); /* P waits far longer than one context switch */
  assert_int_equal(syncq_lock_unlock(l, &mine), SYNCQ_OK);
  pthread_join(a0, NULL);
  pthread_join(a1, NULL);
  pthread_join(p, NULL);
  assert_int_equal(atomic_load(&sw.got), 2);
  assert_int_equal(late->status, SYNCQ_OK);
  assert_int_equal(syncq_lock_destroy(l), SYNCQ_OK);
  sw_teardown();
}

/* The generic default restricts the lock; yielding by name does not. */
static void tp_check_restricted_default(const char *name) {
  tp_late_waiter late;
  tp_run_late_waiter(name, NULL, &late);
  if (late.blocks == 0) fail_msg("%s (default): the waiter beyond the admitted ones never slept", name);
  syncq_lock *l = NULL;
  assert_int_equal(syncq_lock_create(name, NULL, &l), SYNCQ_OK);
  assert_int_equal(syncq_lock_discipline(l), SYNCQ_WAIT_COMPETITIVE); /* its passive waiters' */
  assert_int_equal(syncq_lock_destroy(l), SYNCQ_OK);
  syncq_lock_config yield = {0, SYNCQ_WAIT_YIELD, false};
  tp_run_late_waiter(name, &yield, &late);
  assert_int_equal(late.blocks, 0); /* yielding by name never sleeps: the lock alone */
  assert_int_equal(syncq_lock_create(name, &yield, &l), SYNCQ_OK);
  assert_int_equal(syncq_lock_discipline(l), SYNCQ_WAIT_YIELD);
  assert_int_equal(syncq_lock_destroy(l), SYNCQ_OK);
}

#endif
