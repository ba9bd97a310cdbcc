/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ebr_test.c — epoch-based reclamation (src/reclaim/ebr.c).
 *
 * - A retired node is freed only after every critical section open at
 *   retirement has closed (each reader passed a quiescent point), and is
 *   freed once they all have (deterministic: one thread holds several
 *   records, each an independent critical section).
 * - A stalled reader (a critical section that never closes) keeps every
 *   node retired after it entered alive, however many retirements and
 *   collections follow; the epoch stops advancing; once it leaves, they go.
 * - Stress at 8x oversubscription: readers dereference a shared pointer
 *   while writers swap it and retire the old node; freed nodes are
 *   poisoned, so a reader that saw a freed node fails (and ASan would
 *   report the use after free); every retired node is freed exactly once
 *   by the time the domain is destroyed.
 * - Bad inputs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_plan.h"

#include "syncq/platform.h"
#include "syncq/reclaim.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

#define OVERSUBSCRIPTION TEST_PLAN_OVERSUBSCRIPTION
#if SANITIZED
#define ROUNDS 3000
#else
#define ROUNDS 20000
#endif
#define YIELD_EVERY 7
#define ALIVE UINT64_C(0xa11fe)
#define POISON UINT64_C(0xdead)
#define MANY_RETIRES (4 * SYNCQ_EBR_COLLECT_EVERY) /* enough to trigger collections */
#define SETTLE_ROUNDS 8                            /* enter/collect/leave rounds that let the epoch move twice */

/* 8x the PUs the process is confined to (test_plan.h): 16 threads on 2
 * PUs on any machine with 2 or more. */
static int n_threads(void) { return test_plan_oversubscribed(OVERSUBSCRIPTION); }

typedef struct tnode {
  _Atomic(uint64_t) state; /* ALIVE, or POISON once freed (tracked nodes are not released) */
  uint64_t id;
  syncq_ebr_link link;
} tnode;

/* Tracking free function: poison and count, keep the memory (so the
 * deterministic tests can look at the node afterwards). */
typedef struct tracker {
  _Atomic(size_t) freed;
} tracker;

static void track_free(syncq_ebr_link *l, void *ctx) {
  tnode *n = SYNCQ_EBR_CONTAINER(l, tnode, link);
  atomic_store(&n->state, POISON);
  atomic_fetch_add(&((tracker *)ctx)->freed, 1);
}

static void real_free(syncq_ebr_link *l, void *ctx) {
  tnode *n = SYNCQ_EBR_CONTAINER(l, tnode, link);
  atomic_store(&n->state, POISON);
  atomic_fetch_add(&((tracker *)ctx)->freed, 1);
  free(n);
}

static bool is_freed(tnode *n) { return atomic_load(&n->state) == POISON; }

/* Enter, collect, leave: one quiescent round of a writer. */
static void settle(syncq_ebr_domain *d, int rounds) {
  for (int i = 0; i < rounds; i++) {
    syncq_ebr_record *w;
    assert_int_equal(syncq_ebr_enter(d, &w), SYNCQ_OK);
    (void)syncq_ebr_collect(w);
    syncq_ebr_leave(w);
  }
}

static void retire_one(syncq_ebr_domain *d, tnode *n) {
  syncq_ebr_record *w;
  assert_int_equal(syncq_ebr_enter(d, &w), SYNCQ_OK);
  assert_int_equal(syncq_ebr_retire(w, &n->link), SYNCQ_OK);
  syncq_ebr_leave(w);
}

static void test_ebr_bad_inputs(void **state) {
  (void)state;
  tracker t = {0};
  syncq_ebr_domain *d;
  syncq_ebr_record *r;
  tnode n = {ALIVE, 0, {NULL}};
  assert_int_equal(syncq_ebr_domain_create(NULL, &t, &d), SYNCQ_EINVAL);
  assert_int_equal(syncq_ebr_domain_create(track_free, &t, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_ebr_domain_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_ebr_enter(NULL, &r), SYNCQ_EINVAL);
  assert_int_equal(syncq_ebr_retire(NULL, &n.link), SYNCQ_EINVAL);
  assert_int_equal(syncq_ebr_collect(NULL), 0);
  assert_int_equal(syncq_ebr_epoch(NULL), 0);
  syncq_ebr_leave(NULL); /* ignored */
  assert_int_equal(syncq_ebr_domain_create(track_free, &t, &d), SYNCQ_OK);
  assert_int_equal(syncq_ebr_enter(d, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_ebr_enter(d, &r), SYNCQ_OK);
  assert_int_equal(syncq_ebr_retire(r, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_ebr_domain_destroy(d), SYNCQ_EBUSY); /* a critical section is open */
  syncq_ebr_leave(r);
  /* retiring outside the critical section is refused, nothing is queued */
  assert_int_equal(syncq_ebr_retire(r, &n.link), SYNCQ_EINVAL);
  assert_int_equal(syncq_ebr_collect(r), 0);
  assert_int_equal(syncq_ebr_domain_destroy(d), SYNCQ_OK);
  assert_int_equal(atomic_load(&t.freed), 0);
  assert_false(is_freed(&n));
}

static void test_ebr_freed_after_every_reader_quiesced(void **state) {
  (void)state;
  tracker t = {0};
  syncq_ebr_domain *d;
  assert_int_equal(syncq_ebr_domain_create(track_free, &t, &d), SYNCQ_OK);
  syncq_ebr_record *r1, *r2;
  assert_int_equal(syncq_ebr_enter(d, &r1), SYNCQ_OK); /* two readers inside */
  assert_int_equal(syncq_ebr_enter(d, &r2), SYNCQ_OK);
  assert_ptr_not_equal(r1, r2);
  tnode x = {ALIVE, 1, {NULL}};
  retire_one(d, &x);
  settle(d, SETTLE_ROUNDS);
  assert_false(is_freed(&x)); /* both readers may still see it */
  syncq_ebr_leave(r1);        /* reader 1 passes a quiescent point ... */
  assert_int_equal(syncq_ebr_enter(d, &r1), SYNCQ_OK);
  settle(d, SETTLE_ROUNDS);
  assert_false(is_freed(&x)); /* ... but reader 2 has not */
  syncq_ebr_leave(r2);
  settle(d, SETTLE_ROUNDS);
  /* reader 1 re-entered after the retirement: it cannot see x, and its
   * announcement is current, so it does not hold x back */
  assert_true(is_freed(&x));
  assert_int_equal(atomic_load(&t.freed), 1);
  syncq_ebr_leave(r1);
  assert_int_equal(syncq_ebr_domain_destroy(d), SYNCQ_OK);
  assert_int_equal(atomic_load(&t.freed), 1); /* exactly once */
}

static void test_ebr_stalled_reader_keeps_nodes(void **state) {
  (void)state;
  tracker t = {0};
  syncq_ebr_domain *d;
  assert_int_equal(syncq_ebr_domain_create(track_free, &t, &d), SYNCQ_OK);
  /* nodes retired (and settled) before the reader entered go */
  tnode *before = calloc(MANY_RETIRES, sizeof *before);
  tnode *after = calloc(MANY_RETIRES, sizeof *after);
  assert_non_null(before);
  assert_non_null(after);
  for (size_t i = 0; i < MANY_RETIRES; i++) {
    atomic_init(&before[i].state, ALIVE);
    atomic_init(&after[i].state, ALIVE);
  }
  for (size_t i = 0; i < MANY_RETIRES; i++) retire_one(d, &before[i]);
  settle(d, SETTLE_ROUNDS);
  for (size_t i = 0; i < MANY_RETIRES; i++) assert_true(is_freed(&before[i]));
  syncq_ebr_record *stalled;
  assert_int_equal(syncq_ebr_enter(d, &stalled), SYNCQ_OK);
  uint64_t e0 = syncq_ebr_epoch(d);
  for (size_t i = 0; i < MANY_RETIRES; i++) {
    retire_one(d, &after[i]);
    settle(d, 1);
  }
  settle(d, SETTLE_ROUNDS);
  for (size_t i = 0; i < MANY_RETIRES; i++) assert_false(is_freed(&after[i]));
  assert_true(syncq_ebr_epoch(d) <= e0 + 1); /* the epoch is held back */
  syncq_ebr_leave(stalled);
  settle(d, SETTLE_ROUNDS);
  /* the writers' records hold the limbo lists: enter each of them again
   * through settle; everything retired is free now */
  assert_int_equal(atomic_load(&t.freed), 2 * MANY_RETIRES);
  for (size_t i = 0; i < MANY_RETIRES; i++) assert_true(is_freed(&after[i]));
  assert_int_equal(syncq_ebr_domain_destroy(d), SYNCQ_OK);
  assert_int_equal(atomic_load(&t.freed), 2 * MANY_RETIRES);
  free(before);
  free(after);
}

/* ------------------------------------------------------------ stress */

typedef struct stress {
  syncq_ebr_domain *d;
  _Atomic(tnode *) shared;
  _Atomic(size_t) retired;
  _Atomic(int) bad;
} stress;

typedef struct stress_arg {
  stress *s;
  int id;
} stress_arg;

static void *stress_thread(void *p) {
  stress_arg *a = p;
  stress *s = a->s;
  bool writer = a->id % 2 == 0;
  for (int i = 0; i < ROUNDS; i++) {
    syncq_ebr_record *r;
    if (syncq_ebr_enter(s->d, &r) != SYNCQ_OK) {
      atomic_store(&s->bad, 1);
      return NULL;
    }
    if (writer) {
      tnode *n = malloc(sizeof *n);
      if (n == NULL) {
        syncq_ebr_leave(r);
        atomic_store(&s->bad, 1);
        return NULL;
      }
      atomic_init(&n->state, ALIVE);
      n->id = (uint64_t)i;
      tnode *old = atomic_exchange(&s->shared, n);
      if (syncq_ebr_retire(r, &old->link) != SYNCQ_OK) atomic_store(&s->bad, 1);
      atomic_fetch_add(&s->retired, 1);
    } else {
      tnode *n = atomic_load(&s->shared);
      if (atomic_load(&n->state) != ALIVE) atomic_store(&s->bad, 1);
      if (i % YIELD_EVERY == 0) sched_yield(); /* stay inside a while */
      if (atomic_load(&n->state) != ALIVE) atomic_store(&s->bad, 1);
    }
    syncq_ebr_leave(r);
  }
  return NULL;
}

static void test_ebr_stress(void **state) {
  (void)state;
  tracker t = {0};
  stress s;
  assert_int_equal(syncq_ebr_domain_create(real_free, &t, &s.d), SYNCQ_OK);
  tnode *first = malloc(sizeof *first);
  assert_non_null(first);
  atomic_init(&first->state, ALIVE);
  atomic_init(&s.shared, first);
  atomic_init(&s.retired, 0);
  atomic_init(&s.bad, 0);
  int n = n_threads();
  pthread_t *th = calloc((size_t)n, sizeof *th);
  stress_arg *args = calloc((size_t)n, sizeof *args);
  assert_non_null(th);
  assert_non_null(args);
  for (int i = 0; i < n; i++) {
    args[i] = (stress_arg){&s, i};
    assert_int_equal(pthread_create(&th[i], NULL, stress_thread, &args[i]), 0);
  }
  for (int i = 0; i < n; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
  assert_int_equal(atomic_load(&s.bad), 0);
  size_t freed_before = atomic_load(&t.freed);
  assert_true(freed_before > 0); /* reclamation happened while running */
  assert_int_equal(syncq_ebr_domain_destroy(s.d), SYNCQ_OK);
  assert_int_equal(atomic_load(&t.freed), atomic_load(&s.retired)); /* each exactly once */
  free(atomic_load(&s.shared));
  free(th);
  free(args);
}

int main(void) {
  test_plan_confine();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_ebr_bad_inputs),
    cmocka_unit_test(test_ebr_freed_after_every_reader_quiesced),
    cmocka_unit_test(test_ebr_stalled_reader_keeps_nodes),
    cmocka_unit_test(test_ebr_stress),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
