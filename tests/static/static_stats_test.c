/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * static_stats_test.c — the one statistics switch (syncq/static/stats.h):
 * a program that defines SYNCQ_STATS to 1 has the static inline bodies
 * count into the calling thread's counters, the same ones the library
 * counts into and syncq_stats_self() reads, whatever the order of its
 * includes (here the static bodies come before syncq/stats.h, the order
 * that used to leave the library's counters out).
 */
#define SYNCQ_STATS 1

#include "syncq/static/lock/mcs.h"
#include "syncq/static/lock/tas.h"
#include "syncq/static/lock/ticket.h"
#include "syncq/static/queue/nblfq.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <pthread.h>
#include <cmocka.h>

#include "syncq/platform.h"
#include "syncq/stats.h"

static void test_switch_is_read(void **state) {
  (void)state;
  assert_int_equal(SYNCQ_STATS_COUNTING, 1);
  assert_ptr_equal(syncq_stats_self(), &syncq_stats_tls); /* one set of counters per thread */
}

static void test_inline_lock_counts(void **state) {
  (void)state;
  syncq_lock_node n, other;
  syncq_lock_mcs m;
  assert_int_equal(syncq_lock_mcs_init(&m, NULL), SYNCQ_OK);
  syncq_stats_reset();
  assert_int_equal(syncq_lock_mcs_trylock_inline(&m, &n), SYNCQ_OK);
  assert_int_equal(syncq_lock_mcs_trylock_inline(&m, &other), SYNCQ_EBUSY);
  /* counted, unlike static_inline_test's program: one CAS each, one failed */
  assert_int_equal(syncq_stats_self()->cas_attempts, 2u);
  assert_int_equal(syncq_stats_self()->cas_failures, 1u);
  /* the library's own trylock counts into the same variable when it counts */
  assert_int_equal(syncq_lock_mcs_trylock(&m, &other), SYNCQ_EBUSY);
  assert_int_equal(syncq_stats_self()->cas_attempts, syncq_stats_enabled() ? 3u : 2u);
  assert_int_equal(syncq_lock_mcs_unlock_inline(&m, &n), SYNCQ_OK);
  syncq_stats_reset();
  assert_int_equal(syncq_stats_self()->cas_attempts, 0u);
}

static void test_inline_nblfq_counts(void **state) {
  (void)state;
  size_t bytes = 0;
  assert_int_equal(syncq_queue_nblfq_bytes(8, &bytes), SYNCQ_OK);
  syncq_queue_nblfq *q = syncq_alloc_aligned(bytes, _Alignof(syncq_queue_nblfq));
  assert_non_null(q);
  assert_int_equal(syncq_queue_nblfq_init(q, 8), SYNCQ_OK);
  static int items[3];
  syncq_stats_reset();
  for (int i = 0; i < 3; i++) assert_int_equal(syncq_queue_nblfq_enqueue_inline(q, &items[i]), SYNCQ_OK);
  void *out = NULL;
  assert_int_equal(syncq_queue_nblfq_dequeue_inline(q, &out), SYNCQ_OK);
  assert_ptr_equal(out, &items[0]);
  /* alone on the queue: one commit CAS per operation, none failed (src/queue/nblfq.c's contract) */
  assert_int_equal(syncq_stats_self()->cas_attempts, 4u);
  assert_int_equal(syncq_stats_self()->cas_failures, 0u);
  assert_int_equal(syncq_queue_nblfq_destroy(q), SYNCQ_OK);
  free(q);
}

/* Each thread counts into its own counters. */
typedef struct contender {
  syncq_lock_mcs *l;
  uint64_t cas_attempts; /* the thread's count after its trylock */
} contender;

static void *contend(void *arg) {
  contender *c = arg;
  syncq_lock_node n;
  syncq_stats_reset();
  if (syncq_lock_mcs_trylock_inline(c->l, &n) != SYNCQ_EBUSY) return (void *)1;
  c->cas_attempts = syncq_stats_self()->cas_attempts;
  return NULL;
}

static void test_counts_are_per_thread(void **state) {
  (void)state;
  syncq_lock_mcs l;
  syncq_lock_node n;
  assert_int_equal(syncq_lock_mcs_init(&l, NULL), SYNCQ_OK);
  assert_int_equal(syncq_lock_mcs_lock_inline(&l, &n), SYNCQ_OK);
  syncq_stats_reset();
  contender c = {&l, 0};
  pthread_t t;
  void *ret = (void *)1;
  assert_int_equal(pthread_create(&t, NULL, contend, &c), 0);
  assert_int_equal(pthread_join(t, &ret), 0);
  assert_ptr_equal(ret, NULL);
  assert_int_equal(c.cas_attempts, 1u);                   /* counted there */
  assert_int_equal(syncq_stats_self()->cas_attempts, 0u); /* not here */
  assert_int_equal(syncq_lock_mcs_unlock_inline(&l, &n), SYNCQ_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_switch_is_read),
    cmocka_unit_test(test_inline_lock_counts),
    cmocka_unit_test(test_inline_nblfq_counts),
    cmocka_unit_test(test_counts_are_per_thread),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
