/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_mpsc_drain_race_test.c — the "mpsc" mailbox with a sender stopped
 * between its exchange of the tail and its link ("po.mpsc.exchanged",
 * tests/support/syncq_race.h): try_recv and recv_timeout with 0 answer
 * SYNCQ_EBUSY (a message on its way), never SYNCQ_EMPTY / SYNCQ_ETIMEDOUT,
 * even for an earlier message the stopped send hides; the message arrives
 * once the sender goes on; SYNCQ_EMPTY only when nothing is left; the
 * receives that wait (thread and fiber) wait the window out; a slot whose
 * earlier process had a message on its way is reused.
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

#define MS 1000000ull

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
}

static void wait_stalled(void) {
  while (atomic_load(&stalled) == 0) sched_yield();
}

static syncq_po_system *new_system(const char *backend) {
  syncq_po_config cfg = {"mpsc", 8, 0, 0, backend, strcmp(backend, "fiber") == 0 ? 1 : 0, false};
  syncq_po_system *s = NULL;
  int r = syncq_po_create(&cfg, &s);
  if (r != SYNCQ_OK) fail_msg("creating a %s postoffice: %s", backend, syncq_strerror(r));
  return s;
}

/* A thread, attached as a process, that sends one message of `type` to
 * `to`, stopping at `point` (NULL: nowhere) inside the send. */
typedef struct sender {
  syncq_po_system *s;
  syncq_po_pid to;
  uint32_t type;
  const char *point;
  int result;
  pthread_t thread;
} sender;

static void *send_thread(void *arg) {
  sender *o = arg;
  syncq_po_proc *me;
  o->result = syncq_po_attach(o->s, &me);
  if (o->result != SYNCQ_OK) return NULL;
  syncq_po_msg *m;
  o->result = syncq_po_get(me, 0, &m);
  if (o->result == SYNCQ_OK) {
    m->type = o->type;
    stall_at = o->point;
    o->result = syncq_po_send(me, o->to, m, SYNCQ_PO_LINK);
    stall_at = NULL;
    if (o->result != SYNCQ_OK) (void)syncq_po_free(me, m);
  }
  (void)syncq_po_detach(me);
  return NULL;
}

static void start(sender *o, syncq_po_system *s, syncq_po_pid to, uint32_t type, const char *point) {
  *o = (sender){.s = s, .to = to, .type = type, .point = point, .result = -1000};
  assert_int_equal(pthread_create(&o->thread, NULL, send_thread, o), 0);
}

static void finish(sender *o) {
  assert_int_equal(pthread_join(o->thread, NULL), 0);
  assert_int_equal(o->result, SYNCQ_OK);
}

/* A stopped send and one that completed before: both on their way. */
static sender *stop_one(syncq_po_system *s, syncq_po_pid to) {
  static sender before, stopped;
  start(&before, s, to, 1, NULL);
  finish(&before);
  arm();
  start(&stopped, s, to, 2, "po.mpsc.exchanged");
  wait_stalled();
  return &stopped;
}

static void expect(syncq_po_proc *me, uint32_t type) {
  syncq_po_msg *m = NULL;
  assert_int_equal(syncq_po_try_recv(me, &m), SYNCQ_OK);
  assert_int_equal(m->type, type);
  assert_int_equal(syncq_po_free(me, m), SYNCQ_OK);
}

/* try_recv and recv_timeout(0) tell a message on its way from an empty
 * inbox; the message sent before it, which the stopped send hides, and
 * the stopped one arrive in order once the sender goes on. */
static void test_try_recv_tells_on_its_way(void **state) {
  (void)state;
  syncq_po_system *s = new_system("thread");
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
  syncq_po_msg *m = NULL;
  assert_int_equal(syncq_po_try_recv(me, &m), SYNCQ_EMPTY); /* nothing sent yet */
  assert_int_equal(syncq_po_recv_timeout(me, 0, &m), SYNCQ_ETIMEDOUT);
  sender *o = stop_one(s, syncq_po_pid_of(me));
  for (int i = 0; i < 3; i++) { /* it stays so while the sender is stopped */
    assert_int_equal(syncq_po_try_recv(me, &m), SYNCQ_EBUSY);
    assert_int_equal(syncq_po_recv_timeout(me, 0, &m), SYNCQ_EBUSY);
  }
  /* a wait that runs out with the message still on its way */
  assert_int_equal(syncq_po_recv_timeout(me, 1 * MS, &m), SYNCQ_ETIMEDOUT);
  atomic_store(&go, 1);
  finish(o);
  expect(me, 1);
  expect(me, 2);
  assert_int_equal(syncq_po_try_recv(me, &m), SYNCQ_EMPTY);
  assert_int_equal(syncq_po_recv_timeout(me, 0, &m), SYNCQ_ETIMEDOUT);
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

/* The drain idiom of po.h: try_recv until SYNCQ_EMPTY, yielding on
 * SYNCQ_EBUSY, takes every message sent before it began, the stopped
 * one's too (released by another thread while the drain yields). */
static void *release_later(void *arg) {
  (void)arg;
  struct timespec ts = {0, 5 * (long)MS};
  nanosleep(&ts, NULL);
  atomic_store(&go, 1);
  return NULL;
}

static void test_drain_takes_everything(void **state) {
  (void)state;
  syncq_po_system *s = new_system("thread");
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
  sender *o = stop_one(s, syncq_po_pid_of(me));
  pthread_t rel;
  assert_int_equal(pthread_create(&rel, NULL, release_later, NULL), 0);
  uint32_t types = 0;
  int busy = 0, r;
  syncq_po_msg *m;
  while ((r = syncq_po_try_recv(me, &m)) != SYNCQ_EMPTY) {
    if (r == SYNCQ_EBUSY) {
      busy++;
      assert_int_equal(syncq_po_yield(me), SYNCQ_OK);
      continue;
    }
    assert_int_equal(r, SYNCQ_OK);
    types = types * 10 + m->type;
    assert_int_equal(syncq_po_free(me, m), SYNCQ_OK);
  }
  assert_int_equal(types, 12); /* both, in order */
  assert_true(busy > 0);       /* the drain saw the stopped send */
  assert_int_equal(pthread_join(rel, NULL), 0);
  finish(o);
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

/* The receives that wait wait the window out (recv, recv_blocking,
 * recv_timeout): each returns the hidden message, then the stopped one. */
static void test_waiting_receives_wait(void **state) {
  (void)state;
  for (int how = 0; how < 3; how++) {
    syncq_po_system *s = new_system("thread");
    syncq_po_proc *me;
    assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
    sender *o = stop_one(s, syncq_po_pid_of(me));
    pthread_t rel;
    assert_int_equal(pthread_create(&rel, NULL, release_later, NULL), 0);
    for (uint32_t type = 1; type <= 2; type++) {
      syncq_po_msg *m = NULL;
      int r = how == 0   ? syncq_po_recv(me, &m)
              : how == 1 ? syncq_po_recv_blocking(me, &m)
                         : syncq_po_recv_timeout(me, 60000 * MS, &m);
      assert_int_equal(r, SYNCQ_OK);
      assert_int_equal(m->type, type);
      assert_int_equal(syncq_po_free(me, m), SYNCQ_OK);
    }
    assert_int_equal(pthread_join(rel, NULL), 0);
    finish(o);
    syncq_po_msg *m;
    assert_int_equal(syncq_po_try_recv(me, &m), SYNCQ_EMPTY);
    assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
    assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
  }
}

/* A slot whose process exited with a message on its way to it (and one
 * hidden behind that) is reused: its drain does not take the window for
 * a refusal, and the new process never sees those messages. */
static void test_slot_reused_past_window(void **state) {
  (void)state;
  syncq_po_system *s = new_system("thread");
  syncq_po_proc *old;
  assert_int_equal(syncq_po_attach(s, &old), SYNCQ_OK);
  syncq_po_pid old_pid = syncq_po_pid_of(old);
  uint32_t bits = 31;
  for (uint32_t g = syncq_po_pid_generations(s); g > 1; g >>= 1) bits--;
  const uint32_t slot_mask = (1u << bits) - 1u; /* a pid's slot bits */
  sender *o = stop_one(s, old_pid);
  assert_int_equal(syncq_po_detach(old), SYNCQ_OK);
  /* attach until the slot comes back (it must within the table's size
   * and the reuse distance), each detached at once */
  syncq_po_proc *p = NULL;
  int tries = 0;
  for (;; tries++) {
    assert_true(tries < 1000);
    assert_int_equal(syncq_po_attach(s, &p), SYNCQ_OK);
    if ((syncq_po_pid_of(p) & slot_mask) == (old_pid & slot_mask)) break;
    assert_int_equal(syncq_po_detach(p), SYNCQ_OK);
  }
  syncq_po_msg *m;
  assert_int_equal(syncq_po_try_recv(p, &m), SYNCQ_EBUSY); /* the old pid's, still on its way */
  atomic_store(&go, 1);
  finish(o);
  assert_int_equal(syncq_po_try_recv(p, &m), SYNCQ_EMPTY); /* both dropped: not p's */
  assert_int_equal(syncq_po_detach(p), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

#if PO_TEST_FIBERS
/* A fiber receiver: try_recv answers SYNCQ_EBUSY, and its recv parks and
 * is woken by the stopped sender once it goes on. */
typedef struct fiber_rx {
  _Atomic(int) looked, may_look;
  int try_r, recv_r[2];
  uint32_t types[2];
} fiber_rx;

static void fiber_receiver(syncq_po_proc *self, void *arg) {
  fiber_rx *f = arg;
  while (atomic_load(&f->may_look) == 0) (void)syncq_po_sleep(self, 100000);
  syncq_po_msg *m;
  f->try_r = syncq_po_try_recv(self, &m);
  if (f->try_r == SYNCQ_OK) (void)syncq_po_free(self, m);
  atomic_store(&f->looked, 1);
  for (int i = 0; i < 2; i++) {
    f->recv_r[i] = syncq_po_recv(self, &m);
    if (f->recv_r[i] != SYNCQ_OK) return;
    f->types[i] = m->type;
    (void)syncq_po_free(self, m);
  }
}

static void test_fiber_receiver(void **state) {
  (void)state;
  syncq_po_system *s = new_system("fiber");
  fiber_rx f = {0};
  syncq_po_pid rx;
  assert_int_equal(syncq_po_spawn(s, fiber_receiver, &f, &rx), SYNCQ_OK);
  sender *o = stop_one(s, rx);
  atomic_store(&f.may_look, 1);
  while (atomic_load(&f.looked) == 0) sched_yield();
  struct timespec ts = {0, 5 * (long)MS}; /* let it park (the wait is right either way) */
  nanosleep(&ts, NULL);
  atomic_store(&go, 1);
  finish(o);
  assert_int_equal(syncq_po_join(s, rx), SYNCQ_OK);
  assert_int_equal(f.try_r, SYNCQ_EBUSY);
  assert_int_equal(f.recv_r[0], SYNCQ_OK);
  assert_int_equal(f.recv_r[1], SYNCQ_OK);
  assert_int_equal(f.types[0], 1);
  assert_int_equal(f.types[1], 2);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}
#endif

int main(void) {
  syncq_race_hook = hook; /* before any thread starts */
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_try_recv_tells_on_its_way),
    cmocka_unit_test(test_drain_takes_everything),
    cmocka_unit_test(test_waiting_receives_wait),
    cmocka_unit_test(test_slot_reused_past_window),
#if PO_TEST_FIBERS
    cmocka_unit_test(test_fiber_receiver),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
