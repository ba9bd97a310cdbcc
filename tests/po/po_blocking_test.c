/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_blocking_test.c — a fiber that blocks its scheduler thread (nanosleep)
 * does not stop the fibers queued behind it: on a system confined to one
 * scheduler, a ring of fibers keeps passing a token, and a fiber sleeping
 * on the blocked scheduler's timer heap wakes on time, while the blocker
 * sleeps; with the monitor's detection and with the announced form
 * (syncq_po_blocking_begin/_end); destroy while a fiber is blocked is
 * refused (SYNCQ_EBUSY); the bracket's bad inputs. An idle system's
 * monitor does not tick (its internal count of passes stays put over
 * 200 ms), and still serves a block once fibers run again.
 *
 * Behaviour, not speed: without a spare scheduler the ring makes no hop at
 * all while the blocker sleeps (it shares the only scheduler thread).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "po/fiber_internal.h" /* the monitor's count of passes */
#include "po/po_internal.h"
#include "syncq/clock.h"
#include "syncq/po.h"

#define RING 8
#define BLOCK_NS 1000000000ll /* the blocker's nanosleep */
#define NAP_NS 100000000ull   /* the napper's syncq_po_sleep: 10 x shorter */
#define MIN_HOPS 100          /* hops the ring must make while the blocker sleeps */

typedef struct world {
  syncq_po_system *sys;
  syncq_po_pid ring[RING];
  bool bracket;          /* the blocker announces its call */
  _Atomic(int) blocking; /* the blocker is about to sleep */
  _Atomic(long) hops;
  _Atomic(long) hops_at_wake; /* hops made by the time the blocker woke */
  _Atomic(int) napped_before_wake;
  _Atomic(int) napped;
  _Atomic(int) stop;
  _Atomic(int) errors;
} world;

static void blocker(syncq_po_proc *self, void *arg) {
  world *w = arg;
  if (w->bracket && syncq_po_blocking_begin(self) != SYNCQ_OK) atomic_fetch_add(&w->errors, 1);
  atomic_store(&w->blocking, 1);
  struct timespec ts = {BLOCK_NS / 1000000000ll, BLOCK_NS % 1000000000ll};
  while (nanosleep(&ts, &ts) != 0) {
  }
  atomic_store(&w->hops_at_wake, atomic_load(&w->hops));
  atomic_store(&w->napped_before_wake, atomic_load(&w->napped));
  if (w->bracket && syncq_po_blocking_end(self) != SYNCQ_OK) atomic_fetch_add(&w->errors, 1);
}

/* Parks on its scheduler's timer heap before the blocker runs. */
static void napper(syncq_po_proc *self, void *arg) {
  world *w = arg;
  if (syncq_po_sleep(self, NAP_NS) != SYNCQ_OK) atomic_fetch_add(&w->errors, 1);
  atomic_store(&w->napped, 1);
}

static void member(syncq_po_proc *self, void *arg) {
  world *w = arg;
  syncq_po_pid next = (syncq_po_pid)-1;
  for (;;) {
    syncq_po_msg *m;
    if (syncq_po_recv_blocking(self, &m) != SYNCQ_OK) {
      atomic_fetch_add(&w->errors, 1);
      return;
    }
    if (next == (syncq_po_pid)-1) { /* the ring is complete once the token goes round */
      int i = 0;
      while (i < RING && w->ring[i] != syncq_po_pid_of(self)) i++;
      next = w->ring[(i + 1) % RING];
    }
    bool stop = atomic_load(&w->stop) != 0;
    if (!stop) atomic_fetch_add(&w->hops, 1);
    int r = syncq_po_send(self, next, m, SYNCQ_PO_LINK);
    if (r == SYNCQ_EDEAD) syncq_po_free(self, m); /* the stop went round: next has left */
    else if (r != SYNCQ_OK) atomic_fetch_add(&w->errors, 1);
    if (stop) return;
  }
}

static syncq_po_system *one_scheduler(void) {
  syncq_po_config cfg = {"mpsc", 64, 0, 0, "fiber", 1, false};
  syncq_po_system *s;
  int r = syncq_po_create(&cfg, &s);
  if (r == SYNCQ_ENOTSUP) return NULL;
  assert_int_equal(r, SYNCQ_OK);
  assert_int_equal(syncq_po_schedulers(s), 1);
  return s;
}

/* An idle system: the monitor's passes over IDLE_WINDOW_US. A ticking
 * monitor makes one per 5 ms (40 in the window); a sleeping one none, or
 * the few that a scheduler's last wake-up still causes. The window is
 * tried up to IDLE_WINDOWS times: a loaded machine may keep a scheduler
 * from its sleep through one, never through all. */
#define IDLE_WINDOW_US 200000
#define IDLE_WINDOWS 10
#define IDLE_PASSES_MAX 2

static void monitor_sleeps_when_idle(syncq_po_system *s) {
  uint64_t got = 0;
  for (int i = 0; i < IDLE_WINDOWS; i++) {
    uint64_t before = po_fiber_rt_monitor_wakeups(s->fiber_rt);
    usleep(IDLE_WINDOW_US);
    got = po_fiber_rt_monitor_wakeups(s->fiber_rt) - before;
    if (got <= IDLE_PASSES_MAX) return;
  }
  fail_msg("an idle system's monitor woke %llu times in %d ms (want <= %d)", (unsigned long long)got,
           IDLE_WINDOW_US / 1000, IDLE_PASSES_MAX);
}

/* On one scheduler, FIFO: the napper parks on its timer, the blocker
 * blocks the thread, the ring members and the token wait behind it.
 * idle_first: the system idles first (its monitor must sleep), and the
 * spawns below must wake it for the block to be served. */
static void ring_while_blocked(bool bracket, bool idle_first) {
  world w;
  memset(&w, 0, sizeof w);
  w.bracket = bracket;
  w.sys = one_scheduler();
  if (w.sys == NULL) skip();
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(w.sys, &me), SYNCQ_OK);
  if (idle_first) monitor_sleeps_when_idle(w.sys);
  syncq_po_pid nap, blk;
  assert_int_equal(syncq_po_spawn(w.sys, napper, &w, &nap), SYNCQ_OK);
  assert_int_equal(syncq_po_spawn(w.sys, blocker, &w, &blk), SYNCQ_OK);
  for (int i = 0; i < RING; i++) w.ring[i] = (syncq_po_pid)-1;
  for (int i = 0; i < RING; i++) assert_int_equal(syncq_po_spawn(w.sys, member, &w, &w.ring[i]), SYNCQ_OK);
  while (atomic_load(&w.blocking) == 0) usleep(1000);
  syncq_po_msg *m;
  assert_int_equal(syncq_po_get(me, 8, &m), SYNCQ_OK);
  assert_int_equal(syncq_po_send(me, w.ring[0], m, SYNCQ_PO_LINK), SYNCQ_OK);
  /* Destroy while the blocker sleeps: refused, nothing freed. */
  assert_int_equal(syncq_po_destroy(w.sys), SYNCQ_EBUSY);
  assert_int_equal(syncq_po_join(w.sys, blk), SYNCQ_OK);
  long hops = atomic_load(&w.hops_at_wake);
  print_message("%s: %ld hops while the blocker slept 1 s; napper woke first: %d\n", bracket ? "bracket" : "monitor",
                hops, atomic_load(&w.napped_before_wake));
  if (hops < MIN_HOPS) fail_msg("the ring made %ld hops while its scheduler was blocked (want >= %d)", hops, MIN_HOPS);
  assert_int_equal(atomic_load(&w.napped_before_wake), 1); /* its 100 ms deadline fired during the 1 s */
  /* The spare retires, handing the ring back: it goes on. */
  long after = atomic_load(&w.hops);
  for (int i = 0; i < 10000 && atomic_load(&w.hops) < after + MIN_HOPS; i++) usleep(1000);
  if (atomic_load(&w.hops) < after + MIN_HOPS) fail_msg("the ring stopped after the block");
  atomic_store(&w.stop, 1);
  for (int i = 0; i < RING; i++) assert_int_equal(syncq_po_join(w.sys, w.ring[i]), SYNCQ_OK);
  assert_int_equal(syncq_po_join(w.sys, nap), SYNCQ_OK);
  assert_int_equal(atomic_load(&w.errors), 0);
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(w.sys), SYNCQ_OK);
}

static void test_monitor_hands_off(void **state) {
  (void)state;
  ring_while_blocked(false, false);
}

static void test_bracket_hands_off(void **state) {
  (void)state;
  ring_while_blocked(true, false);
}

/* The ring keeps going after the block too: a second block later in the
 * same system is served again (the spare retired and starts again). */
static void test_twice(void **state) {
  (void)state;
  ring_while_blocked(false, false);
  ring_while_blocked(true, false);
}

typedef struct bad_args {
  _Atomic(int) errors;
} bad_args;

static void bracket_misuse(syncq_po_proc *self, void *arg) {
  bad_args *b = arg;
  if (syncq_po_blocking_end(self) != SYNCQ_EINVAL) atomic_fetch_add(&b->errors, 1); /* no begin */
  if (syncq_po_blocking_begin(self) != SYNCQ_OK) atomic_fetch_add(&b->errors, 1);
  if (syncq_po_blocking_begin(self) != SYNCQ_EINVAL) atomic_fetch_add(&b->errors, 1); /* twice */
  if (syncq_po_blocking_end(self) != SYNCQ_OK) atomic_fetch_add(&b->errors, 1);
  if (syncq_po_blocking_end(self) != SYNCQ_EINVAL) atomic_fetch_add(&b->errors, 1); /* twice */
  if (syncq_po_blocking_begin(self) != SYNCQ_OK || syncq_po_blocking_end(self) != SYNCQ_OK)
    atomic_fetch_add(&b->errors, 1); /* again, after a full bracket */
}

static void test_bracket_bad_inputs(void **state) {
  (void)state;
  assert_int_equal(syncq_po_blocking_begin(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_blocking_end(NULL), SYNCQ_EINVAL);
  syncq_po_system *s = one_scheduler();
  if (s == NULL) skip();
  bad_args b = {0};
  syncq_po_pid pid;
  assert_int_equal(syncq_po_spawn(s, bracket_misuse, &b, &pid), SYNCQ_OK);
  assert_int_equal(syncq_po_join(s, pid), SYNCQ_OK);
  assert_int_equal(atomic_load(&b.errors), 0);
  /* an attached thread blocks only itself: nothing to hand off */
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
  assert_int_equal(syncq_po_blocking_begin(me), SYNCQ_OK);
  assert_int_equal(syncq_po_blocking_end(me), SYNCQ_OK);
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

/* Idle, the monitor sleeps; a fiber that then blocks its scheduler is
 * still handed off (the spawns woke the scheduler, which woke the
 * monitor); idle again afterwards, it sleeps again. */
static void test_idle_monitor_sleeps(void **state) {
  (void)state;
  ring_while_blocked(false, true);
  syncq_po_system *s = one_scheduler();
  if (s == NULL) skip();
  monitor_sleeps_when_idle(s);
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
  bad_args b = {0};
  syncq_po_pid pid;
  assert_int_equal(syncq_po_spawn(s, bracket_misuse, &b, &pid), SYNCQ_OK);
  assert_int_equal(syncq_po_join(s, pid), SYNCQ_OK);
  assert_int_equal(atomic_load(&b.errors), 0);
  monitor_sleeps_when_idle(s); /* after fibers ran (and a bracket's scan) */
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_monitor_hands_off),  cmocka_unit_test(test_bracket_hands_off),   cmocka_unit_test(test_twice),
    cmocka_unit_test(test_bracket_bad_inputs), cmocka_unit_test(test_idle_monitor_sleeps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
