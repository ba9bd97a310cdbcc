/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lock_default_test.c — the generic lock API's safe default discipline.
 *
 *  - every built-in lock created with no discipline (cfg NULL, or wait
 *    SYNCQ_WAIT_DEFAULT) reports a discipline that gives up the processor
 *    (competitive, yield, or a mutex's own sleeping default), and the one
 *    the caller names when it names one (pure spinning stays available);
 *  - default-created FIFO spin locks (the ones that collapse when spinning
 *    oversubscribed; hybrid-sc too, which collapsed when it could only
 *    yield) keep mutual exclusion and finish with 2x as many
 *    threads as processing units while a busy child process competes for
 *    the processors (the test plan's confined PUs, tests/support/
 *    test_plan.h: 4 threads and the busy child on 2 PUs on any machine);
 *  - bad inputs.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_plan.h"

#include "syncq/lock.h"
#include "syncq/platform.h"
#include "syncq/wait.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

#if SANITIZED
#define INCREMENTS 2000 /* per thread */
#else
#define INCREMENTS 20000
#endif
#define THREADS_PER_PU 2
#ifndef TEST_WAIT
#define TEST_WAIT SYNCQ_WAIT_DEFAULT /* -DTEST_WAIT=SYNCQ_WAIT_SPIN shows the collapse */
#endif

static bool gives_up_processor(int d) {
  return d == SYNCQ_WAIT_COMPETITIVE || d == SYNCQ_WAIT_YIELD || d == SYNCQ_WAIT_BLOCK;
}

static void test_default_discipline_of_every_lock(void **state) {
  (void)state;
  const syncq_algo *algos[64];
  int n = syncq_registry_list(SYNCQ_FAMILY_LOCK, algos, 64);
  assert_true(n > 0);
  int checked = 0;
  for (int i = 0; i < n; i++) {
    const syncq_algo *a = algos[i];
    if (a->props & SYNCQ_PROP_PEER) continue; /* a peer keeps its own (spin) default */
    syncq_lock *l = NULL;
    assert_int_equal(syncq_lock_create(a->name, NULL, &l), SYNCQ_OK);
    int d = syncq_lock_discipline(l);
    if (a->props & SYNCQ_PROP_SLEEPS_BY_DEFAULT) assert_int_equal(d, SYNCQ_WAIT_DEFAULT);
    else assert_true(gives_up_processor(d));
    syncq_lock_node node;
    assert_int_equal(syncq_lock_lock(l, &node), SYNCQ_OK);
    assert_int_equal(syncq_lock_trylock(l, &node) == SYNCQ_OK, false);
    assert_int_equal(syncq_lock_unlock(l, &node), SYNCQ_OK);
    assert_int_equal(syncq_lock_destroy(l), SYNCQ_OK);
    /* the same through an explicit DEFAULT in a config */
    syncq_lock_config cfg = {4, SYNCQ_WAIT_DEFAULT, false};
    assert_int_equal(syncq_lock_create(a->name, &cfg, &l), SYNCQ_OK);
    assert_int_equal(syncq_lock_discipline(l), d);
    assert_int_equal(syncq_lock_destroy(l), SYNCQ_OK);
    checked++;
  }
  assert_true(checked >= 10);
  /* the spin locks of the papers wait competitively by default, the
   * scheduler-conscious ones too (sleeping on their slot's seq word) */
  const char *const competitive[] = {"tas",      "ttas",      "ticket",    "mcs",      "clh",
                                     "anderson", "array-cas", "array-faa", "sc-queue", "hybrid-sc"};
  for (size_t i = 0; i < sizeof competitive / sizeof competitive[0]; i++) {
    syncq_lock *l = NULL;
    assert_int_equal(syncq_lock_create(competitive[i], NULL, &l), SYNCQ_OK);
    assert_int_equal(syncq_lock_discipline(l), SYNCQ_WAIT_COMPETITIVE);
    assert_int_equal(syncq_lock_destroy(l), SYNCQ_OK);
  }
  /* the time-published MCS lock cannot sleep in its queue (a sleeper
   * publishes no time and would be passed over at every release): its
   * admitted waiters yield there, the others wait competitively outside
   * it (restricted; tests/lock/mcs_tp_test.c) */
  syncq_lock *tp = NULL;
  assert_int_equal(syncq_lock_create("mcs-tp", NULL, &tp), SYNCQ_OK);
  assert_int_equal(syncq_lock_discipline(tp), SYNCQ_WAIT_COMPETITIVE);
  assert_int_equal(syncq_lock_destroy(tp), SYNCQ_OK);
}

static void test_spinning_by_name(void **state) {
  (void)state;
  const char *const names[] = {"ticket", "mcs", "ttas"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    syncq_lock_config cfg = {0, SYNCQ_WAIT_SPIN, false};
    syncq_lock *l = NULL;
    assert_int_equal(syncq_lock_create(names[i], &cfg, &l), SYNCQ_OK);
    assert_int_equal(syncq_lock_discipline(l), SYNCQ_WAIT_SPIN);
    assert_int_equal(syncq_lock_destroy(l), SYNCQ_OK);
  }
  /* a discipline the lock refuses is refused, not replaced */
  syncq_lock_config spin = {0, SYNCQ_WAIT_SPIN, false};
  syncq_lock *l = NULL;
  assert_int_equal(syncq_lock_create("pthread-mutex", &spin, &l), SYNCQ_ENOTSUP);
  syncq_lock_config bad = {0, 99, false};
  assert_int_equal(syncq_lock_create("mcs", &bad, &l), SYNCQ_EINVAL);
  /* process_shared is still honoured (or refused) with the safe default */
  syncq_lock_config ps = {0, SYNCQ_WAIT_DEFAULT, true};
  assert_int_equal(syncq_lock_create("mcs", &ps, &l), SYNCQ_ENOTSUP);
  assert_int_equal(syncq_lock_discipline(NULL), -1);
}

typedef struct contention {
  syncq_lock *lock;
  pthread_barrier_t start; /* every thread contends from the first increment */
  uint64_t counter;        /* plain: protected by the lock */
  _Atomic(int) errors;
} contention;

static void *incrementer(void *arg) {
  contention *c = arg;
  syncq_lock_node node;
  pthread_barrier_wait(&c->start);
  for (int i = 0; i < INCREMENTS; i++) {
    if (syncq_lock_lock(c->lock, &node) != SYNCQ_OK) {
      atomic_fetch_add(&c->errors, 1);
      continue;
    }
    c->counter++;
    if (syncq_lock_unlock(c->lock, &node) != SYNCQ_OK) atomic_fetch_add(&c->errors, 1);
  }
  return NULL;
}

/* A busy program beside: a child process spinning until killed. */
static pid_t start_busy_child(void) {
  pid_t pid = fork();
  if (pid == 0) {
    volatile uint64_t x = 0; /* volatile: keeps the busy loop */
    for (;;) x++;
  }
  return pid;
}

static void test_default_locks_oversubscribed_beside_busy_program(void **state) {
  (void)state;
  const char *const names[] = {"ticket", "mcs", "clh", "anderson", "ttas", "hybrid-sc", "mcs-tp"};
  int threads = test_plan_oversubscribed(THREADS_PER_PU); /* the busy child shares the same PUs */
  pid_t busy = start_busy_child();
  assert_true(busy > 0);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    contention *c = syncq_alloc_aligned(sizeof *c, SYNCQ_CACHELINE);
    assert_non_null(c);
    c->counter = 0;
    atomic_init(&c->errors, 0);
    syncq_lock_config cfg = {(unsigned)threads, TEST_WAIT, false}; /* anderson: slots */
    assert_int_equal(syncq_lock_create(names[i], &cfg, &c->lock), SYNCQ_OK);
    pthread_t t[256];
    int nt = threads < 256 ? threads : 256;
    assert_int_equal(pthread_barrier_init(&c->start, NULL, (unsigned)nt), 0);
    for (int k = 0; k < nt; k++) assert_int_equal(pthread_create(&t[k], NULL, incrementer, c), 0);
    for (int k = 0; k < nt; k++) pthread_join(t[k], NULL);
    assert_int_equal(atomic_load(&c->errors), 0);
    assert_int_equal(c->counter, (uint64_t)nt * INCREMENTS);
    assert_int_equal(syncq_lock_destroy(c->lock), SYNCQ_OK);
    pthread_barrier_destroy(&c->start);
    free(c);
  }
  kill(busy, SIGKILL);
  waitpid(busy, NULL, 0);
}

int main(void) {
  test_plan_confine();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_default_discipline_of_every_lock),
    cmocka_unit_test(test_spinning_by_name),
    cmocka_unit_test(test_default_locks_oversubscribed_beside_busy_program),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
