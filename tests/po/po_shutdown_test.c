/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_shutdown_test.c — a postoffice's orderly end: syncq_po_wait_exited
 * waits for detached processes that outlive syncq_po_run (and not one
 * moment less: a process that exits only when told), times out on one
 * that never exits, and syncq_po_shutdown kills processes parked in a
 * receive, looping on yield, trapping exits, attached on another thread,
 * and spawned while it runs, after which destroy succeeds. Both refuse a
 * caller that is a process of the system, and bad inputs.
 *
 * The same source is built once per backend (PO_TEST_BACKEND: "thread",
 * "fiber"). Process counts are fixed numbers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include "syncq/clock.h"
#include "syncq/po.h"

#include "test_sanitizer.h"
#ifndef PO_TEST_BACKEND
#define PO_TEST_BACKEND "thread"
#endif
#define TEST_STACK (SANITIZED ? 256u * 1024u : 0u)
#define MS 1000000ull
#define WAIT (60000 * MS) /* a bound that only a hang reaches */
#define DETACHED 8        /* detached processes left running by run */

static syncq_po_system *new_system(void) {
  syncq_po_config cfg = {NULL, 64, TEST_STACK, 0, PO_TEST_BACKEND, 2, false};
  syncq_po_system *s = NULL;
  int r = syncq_po_create(&cfg, &s);
  if (r != SYNCQ_OK) fail_msg("creating a %s postoffice: %s", PO_TEST_BACKEND, syncq_strerror(r));
  return s;
}

/* ---- waiting for processes that outlive run ---- */

static atomic_int told;   /* the processes below may exit */
static atomic_int exited; /* how many have (stored just before returning) */

/* Exits only once `told` is set (sleeping 1 ms between looks). */
static void until_told(syncq_po_proc *self, void *arg) {
  (void)arg;
  while (atomic_load(&told) == 0)
    if (syncq_po_sleep(self, MS) != SYNCQ_OK) break;
  atomic_fetch_add(&exited, 1);
}

static int spawn_and_leave(syncq_po_proc *self, void *arg) {
  syncq_po_system *sys = arg;
  (void)self;
  for (int i = 0; i < DETACHED; i++)
    if (syncq_po_spawn_detached(sys, until_told, NULL, NULL) != SYNCQ_OK) return 1;
  return 0;
}

typedef struct waiter {
  syncq_po_system *sys;
  atomic_int done;
  int status;
  int exited_then; /* `exited` when the wait returned */
} waiter;

static void *wait_thread(void *arg) {
  waiter *w = arg;
  w->status = syncq_po_wait_exited(w->sys, WAIT);
  w->exited_then = atomic_load(&exited);
  atomic_store(&w->done, 1);
  return NULL;
}

static void test_wait_after_run(void **state) {
  (void)state;
  atomic_store(&told, 0);
  atomic_store(&exited, 0);
  syncq_po_system *sys = new_system();
  int rc = -1;
  assert_int_equal(syncq_po_run(sys, spawn_and_leave, sys, &rc), SYNCQ_OK);
  assert_int_equal(rc, 0);
  /* run has returned; the detached processes run on */
  assert_int_equal(syncq_po_destroy(sys), SYNCQ_EBUSY);
  assert_int_equal(syncq_po_wait_exited(sys, 0), SYNCQ_ETIMEDOUT);
  waiter w = {.sys = sys};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, wait_thread, &w), 0);
  uint64_t t0 = syncq_now_ns();
  while (syncq_now_ns() - t0 < 50 * MS) assert_int_equal(atomic_load(&w.done), 0); /* not before they are told */
  assert_int_equal(atomic_load(&exited), 0);
  atomic_store(&told, 1);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_int_equal(w.status, SYNCQ_OK);
  assert_int_equal(w.exited_then, DETACHED); /* every one had exited when it returned */
  assert_int_equal(syncq_po_wait_exited(sys, 0), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(sys), SYNCQ_OK);
}

static void test_wait_timeout(void **state) {
  (void)state;
  atomic_store(&told, 0);
  atomic_store(&exited, 0);
  syncq_po_system *sys = new_system();
  assert_int_equal(syncq_po_wait_exited(sys, 0), SYNCQ_OK); /* nothing spawned */
  syncq_po_pid pid;
  assert_int_equal(syncq_po_spawn(sys, until_told, NULL, &pid), SYNCQ_OK); /* joinable: counted too */
  uint64_t t0 = syncq_now_ns();
  assert_int_equal(syncq_po_wait_exited(sys, 20 * MS), SYNCQ_ETIMEDOUT);
  assert_true(syncq_now_ns() - t0 >= 20 * MS);
  assert_int_equal(atomic_load(&exited), 0);
  atomic_store(&told, 1);
  assert_int_equal(syncq_po_wait_exited(sys, UINT64_MAX), SYNCQ_OK);
  assert_int_equal(atomic_load(&exited), 1);
  assert_int_equal(syncq_po_destroy(sys), SYNCQ_OK); /* exited, never joined: destroy joins it */
}

/* ---- shutdown ---- */

static atomic_int statuses[4]; /* what each kind of process last saw */

static void parked(syncq_po_proc *self, void *arg) { /* parked in recv_blocking */
  syncq_po_msg *m;
  int r;
  while ((r = syncq_po_recv_blocking(self, &m)) == SYNCQ_OK) syncq_po_free(self, m);
  atomic_store(&statuses[(intptr_t)arg], r);
}

static void looping(syncq_po_proc *self, void *arg) { /* a loop that checks for kill */
  int r;
  while ((r = syncq_po_yield(self)) == SYNCQ_OK) {
  }
  atomic_store(&statuses[(intptr_t)arg], r);
}

static void trapping(syncq_po_proc *self, void *arg) { /* traps exits, receives */
  int r = syncq_po_trap_exits(self, true);
  syncq_po_msg *m;
  while (r == SYNCQ_OK && (r = syncq_po_recv(self, &m)) == SYNCQ_OK) {
    if (m->type == SYNCQ_PO_EXIT) r = 1000; /* the kill must not arrive as a message */
    syncq_po_free(self, m);
  }
  atomic_store(&statuses[(intptr_t)arg], r);
}

static void sleeping(syncq_po_proc *self, void *arg) { /* in a long sleep */
  atomic_store(&statuses[(intptr_t)arg], syncq_po_sleep(self, WAIT));
}

static void test_shutdown_kills(void **state) {
  (void)state;
  syncq_po_system *sys = new_system();
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(sys, &me), SYNCQ_OK);
  syncq_po_fn fns[4] = {parked, looping, trapping, sleeping};
  syncq_po_pid pids[4];
  for (intptr_t i = 0; i < 4; i++) {
    atomic_store(&statuses[i], 0);
    /* half joinable, half detached */
    int r = i % 2 ? syncq_po_spawn_detached(sys, fns[i], (void *)i, &pids[i])
                  : syncq_po_spawn(sys, fns[i], (void *)i, &pids[i]);
    assert_int_equal(r, SYNCQ_OK);
    assert_int_equal(syncq_po_monitor(me, pids[i], NULL), SYNCQ_OK);
  }
  assert_int_equal(syncq_po_wait_exited(sys, 20 * MS), SYNCQ_ETIMEDOUT); /* none ends by itself */
  assert_int_equal(syncq_po_shutdown(sys, WAIT), SYNCQ_OK);
  for (int i = 0; i < 4; i++) assert_int_equal(atomic_load(&statuses[i]), SYNCQ_EKILLED);
  /* every exit's reason is the kill's; the caller, attached, is spared */
  for (int i = 0; i < 4; i++) {
    syncq_po_msg *m;
    assert_int_equal(syncq_po_recv_timeout(me, WAIT, &m), SYNCQ_OK);
    assert_int_equal(m->type, SYNCQ_PO_DOWN);
    syncq_po_down d;
    memcpy(&d, m->data, sizeof d);
    assert_int_equal(d.reason, SYNCQ_PO_EXIT_KILLED);
    syncq_po_free(me, m);
  }
  assert_int_equal(syncq_po_destroy(sys), SYNCQ_EBUSY); /* we are still attached */
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(sys), SYNCQ_OK);
}

/* An attached thread other than the caller: killed, not waited for. */
typedef struct attached {
  syncq_po_system *sys;
  atomic_int ready;
  int status;
} attached;

static void *attached_thread(void *arg) {
  attached *a = arg;
  syncq_po_proc *me;
  if (syncq_po_attach(a->sys, &me) != SYNCQ_OK) {
    a->status = 1000;
    atomic_store(&a->ready, 1);
    return NULL;
  }
  atomic_store(&a->ready, 1);
  syncq_po_msg *m;
  int r;
  while ((r = syncq_po_recv_blocking(me, &m)) == SYNCQ_OK) syncq_po_free(me, m);
  a->status = r;
  (void)syncq_po_detach(me);
  return NULL;
}

static void test_shutdown_attached(void **state) {
  (void)state;
  syncq_po_system *sys = new_system();
  attached a = {.sys = sys};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, attached_thread, &a), 0);
  while (atomic_load(&a.ready) == 0) sched_yield();
  assert_int_equal(syncq_po_shutdown(sys, WAIT), SYNCQ_OK); /* no spawned process to wait for */
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_int_equal(a.status, SYNCQ_EKILLED);
  assert_int_equal(syncq_po_destroy(sys), SYNCQ_OK);
}

/* A process that, killed, spawns a child on its way out: the child
 * starts killed (else it would wait in recv for ever). */
static atomic_int child_status;

static void child(syncq_po_proc *self, void *arg) {
  (void)arg;
  syncq_po_msg *m;
  int r;
  while ((r = syncq_po_recv_blocking(self, &m)) == SYNCQ_OK) syncq_po_free(self, m);
  atomic_store(&child_status, r);
}

static void spawner(syncq_po_proc *self, void *arg) {
  syncq_po_system *sys = arg;
  syncq_po_msg *m;
  while (syncq_po_recv_blocking(self, &m) == SYNCQ_OK) syncq_po_free(self, m);
  (void)syncq_po_spawn_detached(sys, child, NULL, NULL);
}

static void test_shutdown_spawn_meanwhile(void **state) {
  (void)state;
  atomic_store(&child_status, 0);
  syncq_po_system *sys = new_system();
  assert_int_equal(syncq_po_spawn_detached(sys, spawner, sys, NULL), SYNCQ_OK);
  assert_int_equal(syncq_po_shutdown(sys, WAIT), SYNCQ_OK);
  assert_int_equal(atomic_load(&child_status), SYNCQ_EKILLED);
  assert_int_equal(syncq_po_destroy(sys), SYNCQ_OK);
}

/* A process that ignores the postoffice: shutdown times out; it ends
 * once told, and a second shutdown then succeeds. */
static atomic_int deaf_go;
static void deaf(syncq_po_proc *self, void *arg) {
  (void)self, (void)arg;
  while (atomic_load(&deaf_go) == 0) sched_yield();
}

static void test_shutdown_timeout(void **state) {
  (void)state;
  atomic_store(&deaf_go, 0);
  syncq_po_system *sys = new_system();
  assert_int_equal(syncq_po_spawn_detached(sys, deaf, NULL, NULL), SYNCQ_OK);
  uint64_t t0 = syncq_now_ns();
  assert_int_equal(syncq_po_shutdown(sys, 20 * MS), SYNCQ_ETIMEDOUT);
  assert_true(syncq_now_ns() - t0 >= 20 * MS);
  assert_int_equal(syncq_po_destroy(sys), SYNCQ_EBUSY);
  atomic_store(&deaf_go, 1);
  assert_int_equal(syncq_po_shutdown(sys, WAIT), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(sys), SYNCQ_OK);
}

/* ---- callers that are processes, bad inputs ---- */

static int from_process(syncq_po_proc *self, void *arg) {
  syncq_po_system *sys = arg;
  (void)self;
  if (syncq_po_wait_exited(sys, 0) != SYNCQ_EINVAL) return 1;
  if (syncq_po_shutdown(sys, 0) != SYNCQ_EINVAL) return 2;
  /* another system: allowed (a fiber sleeps its scheduler, bracketed) */
  syncq_po_system *other = new_system();
  if (syncq_po_wait_exited(other, 0) != SYNCQ_OK) return 3;
  atomic_store(&told, 0);
  if (syncq_po_spawn_detached(other, until_told, NULL, NULL) != SYNCQ_OK) return 4;
  if (syncq_po_wait_exited(other, 10 * MS) != SYNCQ_ETIMEDOUT) return 5;
  atomic_store(&told, 1);
  if (syncq_po_wait_exited(other, WAIT) != SYNCQ_OK) return 6;
  if (syncq_po_destroy(other) != SYNCQ_OK) return 7;
  return 0;
}

static void test_not_from_process(void **state) {
  (void)state;
  syncq_po_system *sys = new_system();
  int rc = -1;
  assert_int_equal(syncq_po_run(sys, from_process, sys, &rc), SYNCQ_OK);
  assert_int_equal(rc, 0);
  /* an attached thread may call both */
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(sys, &me), SYNCQ_OK);
  assert_int_equal(syncq_po_wait_exited(sys, 0), SYNCQ_OK);
  assert_int_equal(syncq_po_shutdown(sys, 0), SYNCQ_OK);
  syncq_po_msg *m;
  assert_int_equal(syncq_po_get(me, 1, &m), SYNCQ_OK); /* spared: not killed */
  syncq_po_free(me, m);
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(sys), SYNCQ_OK);
}

static void test_bad_inputs(void **state) {
  (void)state;
  assert_int_equal(syncq_po_wait_exited(NULL, 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_wait_exited(NULL, UINT64_MAX), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_shutdown(NULL, 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_shutdown(NULL, UINT64_MAX), SYNCQ_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_wait_after_run),           cmocka_unit_test(test_wait_timeout),
    cmocka_unit_test(test_shutdown_kills),           cmocka_unit_test(test_shutdown_attached),
    cmocka_unit_test(test_shutdown_spawn_meanwhile), cmocka_unit_test(test_shutdown_timeout),
    cmocka_unit_test(test_not_from_process),         cmocka_unit_test(test_bad_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
