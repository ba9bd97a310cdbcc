/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nblfq_race_test.c — NBLFQ and NBLFQ2 (syncq/static/queue/nblfq.h) with
 * threads stopped at their race points, deterministic:
 *
 *   - a lost commit chases on from the cell it lost (deviation 6 of
 *     src/queue/nblfq.c), not from the hint. Thread R is stopped between
 *     its commit and its hint write at cell 0 (a thread descheduled
 *     there); the main thread then moves 20 more items, and thread A is
 *     stopped before its commit CAS at cell 21. The main thread takes cell
 *     21, then R goes on and writes its stale hint (1: rewound by 21
 *     cells). A's CAS fails; its retry must reach cell 22 in at most
 *     MAX_CHASE chase steps (race point "queue.nblfq.chase"); a retry from
 *     the rewound hint walks 21 cells. The same for dequeue (the tail
 *     hint). Then every item comes out once, in FIFO order.
 *
 * Fixed thread counts and work: the same plan on any machine.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "syncq_race.h" /* first: its SYNCQ_RACE_POINT, and its double-width CAS */

#include "syncq/platform.h"
#include "syncq/queue.h"
#include "syncq/registry.h"

SYNCQ_RACE_HOOK_DEFINE;

#define CAPACITY 64
#define AHEAD 20    /* items the main thread moves while R is stopped */
#define MAX_CHASE 3 /* chase steps a retry from the lost cell needs (2) and one spare */

static void *item_of(uint64_t v) { return (void *)(uintptr_t)((v + 1) << 4); }
static uint64_t value_of(void *p) { return ((uint64_t)(uintptr_t)p >> 4) - 1; }

/* Who the calling thread is, for the hook. */
enum role { ROLE_NONE, ROLE_R, ROLE_A };
static _Thread_local int my_role;

/* One stop per role: `armed` until the thread reaches its point, then
 * `stopped` until the main thread sets `go`. */
typedef struct stop {
  const char *point;
  _Atomic(int) armed, stopped, go;
} stop;

static stop stops[3];
static _Atomic(int) counting; /* A's chase steps are counted while set */
static _Atomic(int) a_chase;

static void hook(const char *name) {
  if (my_role == ROLE_NONE) return;
  if (my_role == ROLE_A && strcmp(name, "queue.nblfq.chase") == 0 && atomic_load(&counting))
    atomic_fetch_add(&a_chase, 1);
  stop *s = &stops[my_role];
  if (strcmp(name, s->point) != 0 || !atomic_load(&s->armed)) return;
  atomic_store(&s->armed, 0);
  atomic_store(&s->stopped, 1);
  while (!atomic_load(&s->go)) sched_yield();
}

static void arm(int role, const char *point) {
  stops[role].point = point;
  atomic_store(&stops[role].stopped, 0);
  atomic_store(&stops[role].go, 0);
  atomic_store(&stops[role].armed, 1);
}

static void wait_stopped(int role) {
  while (!atomic_load(&stops[role].stopped)) sched_yield();
}

typedef struct job {
  const syncq_queue_ops *ops;
  void *q;
  int role;
  bool enqueue;
  void *item; /* enqueue: what; dequeue: what came out */
  int status;
} job;

static void *run_job(void *p) {
  job *j = p;
  my_role = j->role;
  j->status = j->enqueue ? j->ops->enqueue(j->q, j->item) : j->ops->dequeue(j->q, &j->item);
  return NULL;
}

static void *make(const syncq_algo *a) {
  const syncq_queue_ops *ops = a->ops;
  size_t bytes;
  assert_int_equal(ops->bytes(CAPACITY, &bytes), SYNCQ_OK);
  void *q = syncq_alloc_aligned(bytes, ops->align);
  assert_non_null(q);
  assert_int_equal(ops->init(q, CAPACITY), SYNCQ_OK);
  return q;
}

static void drop(const syncq_algo *a, void *q) {
  const syncq_queue_ops *ops = a->ops;
  assert_int_equal(ops->destroy(q), SYNCQ_OK);
  free(q);
}

static const syncq_algo *find(const char *name) {
  const syncq_algo *a = NULL;
  assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_QUEUE, name, &a), SYNCQ_OK);
  return a;
}

/* The enqueue case on queue `name`. */
static void lost_enqueue_chases_from_its_cell(const char *name) {
  const syncq_algo *a = find(name);
  const syncq_queue_ops *ops = a->ops;
  void *q = make(a);
  syncq_race_hook = hook;
  atomic_store(&counting, 0);
  atomic_store(&a_chase, 0);
  /* R commits item 1000 at cell 0 and stops before its hint write. */
  job r = {ops, q, ROLE_R, true, item_of(1000), -1};
  arm(ROLE_R, "queue.nblfq.committed");
  pthread_t tr, ta;
  assert_int_equal(pthread_create(&tr, NULL, run_job, &r), 0);
  wait_stopped(ROLE_R);
  for (uint64_t i = 0; i < AHEAD; i++) assert_int_equal(ops->enqueue(q, item_of(i)), SYNCQ_OK); /* cells 1..20 */
  /* A finds cell 21 and stops before its CAS. */
  job j = {ops, q, ROLE_A, true, item_of(2000), -1};
  arm(ROLE_A, "queue.nblfq.commit");
  assert_int_equal(pthread_create(&ta, NULL, run_job, &j), 0);
  wait_stopped(ROLE_A);
  assert_int_equal(ops->enqueue(q, item_of(AHEAD)), SYNCQ_OK); /* takes cell 21 */
  atomic_store(&stops[ROLE_R].go, 1);                          /* R writes its hint: 1 */
  assert_int_equal(pthread_join(tr, NULL), 0);
  assert_int_equal(r.status, SYNCQ_OK);
  atomic_store(&counting, 1);
  atomic_store(&stops[ROLE_A].go, 1); /* A's CAS at 21 fails */
  assert_int_equal(pthread_join(ta, NULL), 0);
  atomic_store(&counting, 0);
  syncq_race_hook = NULL;
  assert_int_equal(j.status, SYNCQ_OK);
  int steps = atomic_load(&a_chase);
  if (steps > MAX_CHASE)
    fail_msg("%s: the retry after a lost enqueue CAS chased %d cells (at most %d)", name, steps, MAX_CHASE);
  /* FIFO: R's item, the main thread's 21, A's. */
  void *x;
  assert_int_equal(ops->dequeue(q, &x), SYNCQ_OK);
  assert_int_equal(value_of(x), 1000);
  for (uint64_t i = 0; i <= AHEAD; i++) {
    assert_int_equal(ops->dequeue(q, &x), SYNCQ_OK);
    assert_int_equal(value_of(x), i);
  }
  assert_int_equal(ops->dequeue(q, &x), SYNCQ_OK);
  assert_int_equal(value_of(x), 2000);
  assert_int_equal(ops->dequeue(q, &x), SYNCQ_EMPTY);
  drop(a, q);
}

/* The dequeue case: the tail hint rewound the same way. */
static void lost_dequeue_chases_from_its_cell(const char *name) {
  const syncq_algo *a = find(name);
  const syncq_queue_ops *ops = a->ops;
  void *q = make(a);
  const uint64_t n = 2 * AHEAD;
  for (uint64_t i = 0; i < n; i++) assert_int_equal(ops->enqueue(q, item_of(i)), SYNCQ_OK); /* cells 0..39 */
  syncq_race_hook = hook;
  atomic_store(&counting, 0);
  atomic_store(&a_chase, 0);
  job r = {ops, q, ROLE_R, false, NULL, -1}; /* takes cell 0, stops before its hint write */
  arm(ROLE_R, "queue.nblfq.committed");
  pthread_t tr, ta;
  assert_int_equal(pthread_create(&tr, NULL, run_job, &r), 0);
  wait_stopped(ROLE_R);
  void *x;
  for (uint64_t i = 1; i <= AHEAD; i++) { /* cells 1..20 */
    assert_int_equal(ops->dequeue(q, &x), SYNCQ_OK);
    assert_int_equal(value_of(x), i);
  }
  job j = {ops, q, ROLE_A, false, NULL, -1}; /* finds cell 21, stops before its CAS */
  arm(ROLE_A, "queue.nblfq.commit");
  assert_int_equal(pthread_create(&ta, NULL, run_job, &j), 0);
  wait_stopped(ROLE_A);
  assert_int_equal(ops->dequeue(q, &x), SYNCQ_OK); /* takes cell 21 */
  assert_int_equal(value_of(x), AHEAD + 1);
  atomic_store(&stops[ROLE_R].go, 1); /* R writes its hint: 1 */
  assert_int_equal(pthread_join(tr, NULL), 0);
  assert_int_equal(r.status, SYNCQ_OK);
  assert_int_equal(value_of(r.item), 0);
  atomic_store(&counting, 1);
  atomic_store(&stops[ROLE_A].go, 1); /* A's CAS at 21 fails */
  assert_int_equal(pthread_join(ta, NULL), 0);
  atomic_store(&counting, 0);
  syncq_race_hook = NULL;
  assert_int_equal(j.status, SYNCQ_OK);
  assert_int_equal(value_of(j.item), AHEAD + 2);
  int steps = atomic_load(&a_chase);
  if (steps > MAX_CHASE)
    fail_msg("%s: the retry after a lost dequeue CAS chased %d cells (at most %d)", name, steps, MAX_CHASE);
  for (uint64_t i = AHEAD + 3; i < n; i++) {
    assert_int_equal(ops->dequeue(q, &x), SYNCQ_OK);
    assert_int_equal(value_of(x), i);
  }
  assert_int_equal(ops->dequeue(q, &x), SYNCQ_EMPTY);
  drop(a, q);
}

static void nblfq_lost_enqueue(void **state) {
  (void)state;
  lost_enqueue_chases_from_its_cell("nblfq");
}

static void nblfq_lost_dequeue(void **state) {
  (void)state;
  lost_dequeue_chases_from_its_cell("nblfq");
}

static void nblfq2_lost_enqueue(void **state) {
  (void)state;
  if (!syncq_pr_dwcas_available()) skip();
  lost_enqueue_chases_from_its_cell("nblfq2");
}

static void nblfq2_lost_dequeue(void **state) {
  (void)state;
  if (!syncq_pr_dwcas_available()) skip();
  lost_dequeue_chases_from_its_cell("nblfq2");
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(nblfq_lost_enqueue),
    cmocka_unit_test(nblfq_lost_dequeue),
    cmocka_unit_test(nblfq2_lost_enqueue),
    cmocka_unit_test(nblfq2_lost_dequeue),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
