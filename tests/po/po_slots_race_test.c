/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_slots_race_test.c — the process table's windows, held open with race
 * points (tests/support/syncq_race.h): a joiner between its claim and its
 * free ("po.join.claimed"), a free between its slot's return to the ring
 * and its count's ("po.slot.freed"), and a put to the ring with its
 * position claimed and its cell not yet written ("po.slot_ring.put.claimed").
 */
#include "syncq_race.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <cmocka.h>

#include "syncq/po.h"

SYNCQ_RACE_HOOK_DEFINE;

/* The point this thread stops at (once), and the test's handshake. */
static _Thread_local const char *stall_at;
static _Atomic(int) stalled, go;

static void hook(const char *name) {
  if (stall_at == NULL || strcmp(name, stall_at) != 0) return;
  stall_at = NULL;
  atomic_store(&stalled, 1);
  while (atomic_load(&go) == 0) sched_yield();
}

static void arm(void) {
  atomic_store(&stalled, 0);
  atomic_store(&go, 0);
  syncq_race_hook = hook; /* before the threads start */
}

static void wait_stalled(void) {
  while (atomic_load(&stalled) == 0) sched_yield();
}

static syncq_po_system *new_system(uint32_t max_procs) {
  syncq_po_config cfg = {"mpsc", max_procs, 0, 0, "thread", 0, false};
  syncq_po_system *s = NULL;
  int r = syncq_po_create(&cfg, &s);
  if (r != SYNCQ_OK) fail_msg("creating a thread postoffice: %s", syncq_strerror(r));
  return s;
}

static uint32_t slot_of(const syncq_po_system *s, syncq_po_pid pid) {
  uint32_t gens = syncq_po_pid_generations(s), bits = 31;
  while (gens > 1) {
    gens >>= 1;
    bits--;
  }
  return (uint32_t)pid & ((1u << bits) - 1u);
}

static void nothing(syncq_po_proc *self, void *arg) { (void)self, (void)arg; }

static void hold(syncq_po_proc *self, void *arg) {
  _Atomic(int) *release = arg;
  while (atomic_load(release) == 0) syncq_po_sleep(self, 200000);
}

/* A thread that joins a pid, stopping at a point on the way. */
typedef struct op {
  syncq_po_system *s;
  syncq_po_pid pid;
  syncq_po_proc *proc;
  const char *point;
  int result;
  _Atomic(int) done;
} op;

static void *join_thread(void *arg) {
  op *o = arg;
  stall_at = o->point;
  o->result = syncq_po_join(o->s, o->pid);
  atomic_store(&o->done, 1);
  return NULL;
}

static void *detach_thread(void *arg) {
  op *o = arg;
  stall_at = o->point;
  o->result = syncq_po_detach(o->proc);
  atomic_store(&o->done, 1);
  return NULL;
}

static void *attach_thread(void *arg) {
  op *o = arg;
  stall_at = o->point;
  o->result = syncq_po_attach(o->s, &o->proc);
  atomic_store(&o->done, 1);
  return NULL;
}

/* A joiner stopped after its claim: a second joiner gets SYNCQ_ENOENT,
 * the process keeps its slot (spawns fill the rest of the table and are
 * refused, none in that slot), and the slot comes back once the first
 * joiner goes on. */
static void test_join_claimed_window(void **state) {
  (void)state;
  arm();
  syncq_po_system *s = new_system(4);
  _Atomic(int) release = 0, release_fill = 0;
  op j = {.s = s, .point = "po.join.claimed"};
  atomic_init(&j.done, 0);
  assert_int_equal(syncq_po_spawn(s, hold, &release, &j.pid), SYNCQ_OK);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, join_thread, &j), 0);
  wait_stalled();
  assert_int_equal(syncq_po_join(s, j.pid), SYNCQ_ENOENT); /* claimed by the first */
  syncq_po_pid fill[4];
  int n = 0;
  while (n < 4 && syncq_po_spawn(s, hold, &release_fill, &fill[n]) == SYNCQ_OK) {
    assert_int_not_equal(slot_of(s, fill[n]), slot_of(s, j.pid));
    n++;
  }
  assert_int_equal(n, 3);
  assert_string_equal(syncq_po_limit_reason(s), "max_procs");
  atomic_store(&release, 1);
  atomic_store(&go, 1);
  pthread_join(t, NULL);
  assert_int_equal(j.result, SYNCQ_OK);
  syncq_po_pid last;
  assert_int_equal(syncq_po_spawn(s, hold, &release_fill, &last), SYNCQ_OK);
  atomic_store(&release_fill, 1);
  for (int k = 0; k < n; k++) assert_int_equal(syncq_po_join(s, fill[k]), SYNCQ_OK);
  assert_int_equal(syncq_po_join(s, last), SYNCQ_OK);
  assert_int_equal(syncq_po_live(s), 0);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
  syncq_race_hook = NULL;
}

/* A free stopped with its slot back in the ring and its count not: the
 * table still counts the process (a spawn into it is refused), and the
 * spawn after the count is back is not. */
static void test_free_window(void **state) {
  (void)state;
  arm();
  syncq_po_system *s = new_system(4);
  syncq_po_pid pid[4];
  for (int k = 0; k < 4; k++) assert_int_equal(syncq_po_spawn(s, nothing, NULL, &pid[k]), SYNCQ_OK);
  op j = {.s = s, .pid = pid[0], .point = "po.slot.freed"};
  atomic_init(&j.done, 0);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, join_thread, &j), 0);
  wait_stalled();
  assert_int_equal(syncq_po_live(s), 4);
  syncq_po_pid extra;
  assert_int_equal(syncq_po_spawn(s, nothing, NULL, &extra), SYNCQ_ELIMIT);
  assert_int_equal(syncq_po_join(s, pid[0]), SYNCQ_ENOENT); /* its slot is at the next generation already */
  atomic_store(&go, 1);
  pthread_join(t, NULL);
  assert_int_equal(j.result, SYNCQ_OK);
  assert_int_equal(syncq_po_live(s), 3);
  assert_int_equal(syncq_po_spawn(s, nothing, NULL, &extra), SYNCQ_OK);
  for (int k = 1; k < 4; k++) assert_int_equal(syncq_po_join(s, pid[k]), SYNCQ_OK);
  assert_int_equal(syncq_po_join(s, extra), SYNCQ_OK);
  assert_int_equal(syncq_po_live(s), 0);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
  syncq_race_hook = NULL;
}

/* Every slot taken (20 attached: the ring is empty), then one free stops
 * inside its put (position claimed, cell not written) while a second
 * completes: an attach, counted in by the second, waits for the first
 * (the oldest freed slot is behind it) and then gets that slot, not the
 * second one's. */
static void test_put_in_flight(void **state) {
  (void)state;
  arm();
  syncq_po_system *s = new_system(4);
  enum { N = 4 + SYNCQ_PO_ATTACH_RESERVE };
  syncq_po_proc *p[N];
  for (int k = 0; k < N; k++) assert_int_equal(syncq_po_attach(s, &p[k]), SYNCQ_OK);
  syncq_po_proc *none;
  assert_int_equal(syncq_po_attach(s, &none), SYNCQ_ELIMIT);
  uint32_t first = slot_of(s, syncq_po_pid_of(p[3])), second = slot_of(s, syncq_po_pid_of(p[7]));
  op d = {.s = s, .proc = p[3], .point = "po.slot_ring.put.claimed"};
  atomic_init(&d.done, 0);
  pthread_t td, ta;
  assert_int_equal(pthread_create(&td, NULL, detach_thread, &d), 0);
  wait_stalled();
  assert_int_equal(syncq_po_detach(p[7]), SYNCQ_OK);
  assert_int_equal(syncq_po_live(s), N - 1);
  op a = {.s = s};
  atomic_init(&a.done, 0);
  assert_int_equal(pthread_create(&ta, NULL, attach_thread, &a), 0);
  /* It cannot finish: the only slot it may take is behind the stopped put. */
  struct timespec ms = {0, 1000000};
  for (int k = 0; k < 20; k++) {
    nanosleep(&ms, NULL);
    assert_int_equal(atomic_load(&a.done), 0);
  }
  atomic_store(&go, 1);
  pthread_join(td, NULL);
  pthread_join(ta, NULL);
  assert_int_equal(d.result, SYNCQ_OK);
  assert_int_equal(a.result, SYNCQ_OK);
  assert_int_equal(slot_of(s, syncq_po_pid_of(a.proc)), first); /* freed first */
  p[3] = a.proc;
  syncq_po_proc *next;
  assert_int_equal(syncq_po_attach(s, &next), SYNCQ_OK);
  assert_int_equal(slot_of(s, syncq_po_pid_of(next)), second);
  p[7] = next;
  for (int k = 0; k < N; k++) assert_int_equal(syncq_po_detach(p[k]), SYNCQ_OK);
  assert_int_equal(syncq_po_live(s), 0);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
  syncq_race_hook = NULL;
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_join_claimed_window),
    cmocka_unit_test(test_free_window),
    cmocka_unit_test(test_put_in_flight),
  };
  return cmocka_run_group_tests_name("po_slots_race", tests, NULL, NULL);
}
