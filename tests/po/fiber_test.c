/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fiber_test.c — what only the fiber backend has: backend selection and
 * its bad inputs, who may receive, destroy while fibers are parked, a ring
 * of 100,000 processes, park/wake races between threads and fibers on
 * several schedulers, fibers that yield to each other, the guard-page
 * limit named (vm.max_map_count, in a child whose mappings are used up),
 * and a stack overflow reported by pid (in a child, which must die).
 *
 * (Everything the two backends share runs in po_test.c, built once per
 * backend.)
 *
 * The process runs on the test plan's confined PUs (tests/support/
 * test_plan.h: 2 on any machine with 2 or more), and a system that needs
 * no particular scheduler count gets one per confined PU, as the default
 * would on a machine of that size.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_plan.h"

#include "syncq/clock.h"
#include "syncq/platform.h"
#include "syncq/po.h"
#include "syncq/stats.h"

#include "test_sanitizer.h"
/* Sanitizers keep state per fiber (TSan: a thread state each) and need
 * deeper stacks. */
#define BIG_RING (TSAN ? 2000 : ASAN ? 20000 : 100000)
#define TEST_STACK (TSAN || ASAN ? 256u * 1024u : 0u)
#define RACE_FIBERS (TSAN ? 16 : 64)
#define RACE_THREADS 4
#define RACE_MSGS (TSAN ? 200 : 2000)
#define YIELDERS 8
#define YIELD_ROUNDS (TSAN ? 200 : 5000)

/* One scheduler per confined PU. */
static uint32_t planned_schedulers(void) { return (uint32_t)test_plan_confine(); }

static syncq_po_system *fiber_system(const char *mb, uint32_t max_procs, uint32_t schedulers, size_t guard) {
  syncq_po_config cfg = {mb, max_procs, TEST_STACK, guard, "fiber", schedulers, false};
  syncq_po_system *s = NULL;
  int r = syncq_po_create(&cfg, &s);
  if (r != SYNCQ_OK) fail_msg("creating a fiber system (%s): %s", mb, syncq_strerror(r));
  return s;
}

static void send_small(syncq_po_proc *me, syncq_po_pid to, uint32_t type) {
  syncq_po_msg *m;
  assert_int_equal(syncq_po_get(me, 8, &m), SYNCQ_OK);
  m->type = type;
  assert_int_equal(syncq_po_send(me, to, m, SYNCQ_PO_LINK), SYNCQ_OK);
}

/* ------------------------------------------------ selection, bad inputs */

static void test_backends(void **state) {
  (void)state;
  assert_int_equal(syncq_po_backend_count(), 2);
  const char *name = NULL, *title = NULL;
  assert_int_equal(syncq_po_backend_info(0, &name, &title), SYNCQ_OK);
  assert_string_equal(name, "thread");
  assert_non_null(title);
  assert_int_equal(syncq_po_backend_info(1, &name, NULL), SYNCQ_OK);
  assert_string_equal(name, "fiber");
  assert_int_equal(syncq_po_backend_info(-1, NULL, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_backend_info(2, NULL, NULL), SYNCQ_EINVAL);
  assert_string_equal(syncq_po_default_backend(), "fiber");
  assert_null(syncq_po_backend_of(NULL));
  assert_int_equal(syncq_po_schedulers(NULL), 0);

  syncq_po_system *s = NULL;
  syncq_po_config bad = {NULL, 0, 0, 0, "green-threads", 0, false};
  assert_int_equal(syncq_po_create(&bad, &s), SYNCQ_ENOENT);
  syncq_po_config tiny = {NULL, 0, SYNCQ_PO_MIN_FIBER_STACK - 1, 0, "fiber", 0, false};
  assert_int_equal(syncq_po_create(&tiny, &s), SYNCQ_EINVAL);
  syncq_po_config many = {NULL, 0, 0, 0, "fiber", SYNCQ_PO_MAX_SCHEDULERS + 1, false};
  assert_int_equal(syncq_po_create(&many, &s), SYNCQ_EINVAL);

  /* the default is the fiber backend, one scheduler per processing unit */
  assert_int_equal(syncq_po_create(NULL, &s), SYNCQ_OK);
  assert_string_equal(syncq_po_backend_of(s), "fiber");
  /* the library counts the machine's PUs itself, whatever the test plan says */
  assert_true(syncq_po_schedulers(s) >= 1 && syncq_po_schedulers(s) <= (uint32_t)test_plan_machine_pus());
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
  s = fiber_system("mpsc", 4, 3, 0);
  assert_int_equal(syncq_po_schedulers(s), 3);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
  syncq_po_config thr = {NULL, 4, 0, 0, "thread", 0, false};
  assert_int_equal(syncq_po_create(&thr, &s), SYNCQ_OK);
  assert_string_equal(syncq_po_backend_of(s), "thread");
  assert_int_equal(syncq_po_schedulers(s), 0);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
  /* the smallest stack, and no guard pages, are accepted */
  syncq_po_config small = {NULL, 4, SYNCQ_PO_MIN_FIBER_STACK, SYNCQ_PO_NO_GUARD, "fiber", 1, false};
  assert_int_equal(syncq_po_create(&small, &s), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

/* ------------------------------------------------ who may receive */

typedef struct whoami {
  syncq_po_system *sys;
  _Atomic(syncq_po_proc *) self;
  _Atomic(int) attach_status, join_self_status;
} whoami;

static void publish_self(syncq_po_proc *self, void *arg) {
  whoami *w = arg;
  syncq_po_proc *p;
  atomic_store(&w->attach_status, syncq_po_attach(w->sys, &p)); /* a fiber is a process already */
  atomic_store(&w->join_self_status, syncq_po_join(w->sys, syncq_po_pid_of(self)));
  atomic_store(&w->self, self);
  syncq_po_msg *m;
  if (syncq_po_recv_blocking(self, &m) == SYNCQ_OK) syncq_po_free(self, m);
}

static void test_only_the_process_receives(void **state) {
  (void)state;
  syncq_po_system *s = fiber_system("mpsc", 4, planned_schedulers(), 0);
  whoami w = {s, NULL, 0, 0};
  syncq_po_pid pid;
  assert_int_equal(syncq_po_spawn(s, publish_self, &w, &pid), SYNCQ_OK);
  syncq_po_proc *fiber;
  while ((fiber = atomic_load(&w.self)) == NULL) syncq_yield();
  assert_int_equal(atomic_load(&w.attach_status), SYNCQ_EINVAL);
  assert_int_equal(atomic_load(&w.join_self_status), SYNCQ_EINVAL);
  /* this thread is not that fiber: its inbox is not ours to read */
  syncq_po_msg *m;
  assert_int_equal(syncq_po_try_recv(fiber, &m), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_recv(fiber, &m), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_recv_blocking(fiber, &m), SYNCQ_EINVAL);
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
  /* parked in recv_blocking: alive, so destroy refuses */
  assert_int_equal(syncq_po_destroy(s), SYNCQ_EBUSY);
  send_small(me, pid, 1);
  assert_int_equal(syncq_po_join(s, pid), SYNCQ_OK);
  assert_int_equal(syncq_po_try_recv(me, &m), SYNCQ_EMPTY);
  assert_int_equal(syncq_po_get(me, 8, &m), SYNCQ_OK);
  assert_int_equal(syncq_po_send(me, pid, m, SYNCQ_PO_LINK), SYNCQ_EDEAD);
  assert_int_equal(syncq_po_free(me, m), SYNCQ_OK);
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

/* A plain thread that never attached may not receive on an attached
 * process's behalf either. */
typedef struct foreign {
  syncq_po_proc *proc;
  int status;
} foreign;

static void *foreign_recv(void *arg) {
  foreign *f = arg;
  syncq_po_msg *m;
  f->status = syncq_po_try_recv(f->proc, &m);
  return NULL;
}

static void test_foreign_thread(void **state) {
  (void)state;
  syncq_po_system *s = fiber_system("mutex", 2, 1, 0);
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
  foreign f = {me, 0};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, foreign_recv, &f), 0);
  pthread_join(t, NULL);
  assert_int_equal(f.status, SYNCQ_EINVAL);
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

/* ------------------------------------------------ 100,000 processes */

typedef struct big_ring {
  int n;
  syncq_po_pid first, ctl;
  _Atomic(int) errors;
} big_ring;

static void big_member(syncq_po_proc *self, void *arg) {
  big_ring *g = arg;
  int i = (int)(syncq_po_pid_of(self) - g->first);
  syncq_po_msg *m;
  if (syncq_po_recv_blocking(self, &m) != SYNCQ_OK) {
    atomic_fetch_add(&g->errors, 1);
    return;
  }
  int64_t k;
  memcpy(&k, m->data, sizeof k);
  if (k != i || m->sender != (i == 0 ? g->ctl : g->first + i - 1)) atomic_fetch_add(&g->errors, 1);
  k++;
  memcpy(m->data, &k, sizeof k);
  syncq_po_pid to = i == g->n - 1 ? g->ctl : g->first + i + 1;
  if (syncq_po_send(self, to, m, (i % 2) ? SYNCQ_PO_COPY : SYNCQ_PO_LINK) != SYNCQ_OK) atomic_fetch_add(&g->errors, 1);
}

static void test_hundred_thousand(void **state) {
  (void)state;
  /* The default stacks and guards: 100,000 guarded stacks would need
   * 200,000 mappings (vm.max_map_count is 65,530 by default); past the
   * budget the stacks come with canaries instead of a refused spawn. */
  syncq_po_system *s = fiber_system("mpsc", BIG_RING + 1, planned_schedulers(), 0);
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
  big_ring g = {BIG_RING, syncq_po_pid_of(me) + 1, syncq_po_pid_of(me), 0};
  for (int i = 0; i < BIG_RING; i++) {
    int r = syncq_po_spawn(s, big_member, &g, NULL);
    if (r != SYNCQ_OK) fail_msg("spawn %d: %s (%s)", i, syncq_strerror(r), syncq_po_limit_reason(s));
  }
  assert_int_equal(syncq_po_count(s), BIG_RING + 1);
  syncq_po_msg *m;
  assert_int_equal(syncq_po_get(me, 8, &m), SYNCQ_OK);
  int64_t k = 0;
  memcpy(m->data, &k, sizeof k);
  assert_int_equal(syncq_po_send(me, g.first, m, SYNCQ_PO_LINK), SYNCQ_OK);
  assert_int_equal(syncq_po_recv_blocking(me, &m), SYNCQ_OK);
  memcpy(&k, m->data, sizeof k);
  assert_int_equal(k, BIG_RING); /* every process passed it on once */
  assert_int_equal(m->sender, g.first + BIG_RING - 1);
  assert_int_equal(syncq_po_free(me, m), SYNCQ_OK);
  for (int i = 0; i < BIG_RING; i++) assert_int_equal(syncq_po_join(s, g.first + i), SYNCQ_OK);
  assert_int_equal(atomic_load(&g.errors), 0);
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

/* ------------------------------------------------ park/wake races */

typedef struct race {
  int nfibers, per_sender, nsenders; /* senders: threads and fibers */
  syncq_po_pid *fibers;
  _Atomic(int) ready;
  _Atomic(long) received;
  _Atomic(int) errors;
  syncq_po_system *sys;
} race;

/* Receives exactly nsenders * per_sender messages, per sender in order,
 * parking (or, every fifth, yielding) whenever its inbox is empty. */
static void race_receiver(syncq_po_proc *self, void *arg) {
  race *g = arg;
  int *next = calloc((size_t)g->nsenders, sizeof *next);
  if (next == NULL) {
    atomic_fetch_add(&g->errors, 1);
    return;
  }
  long want = (long)g->nsenders * g->per_sender;
  for (long k = 0; k < want; k++) {
    syncq_po_msg *m;
    /* mostly parking; now and then the yielding form */
    if ((k % 5 == 4 ? syncq_po_recv(self, &m) : syncq_po_recv_blocking(self, &m)) != SYNCQ_OK) {
      atomic_fetch_add(&g->errors, 1);
      break;
    }
    int who, seq;
    memcpy(&who, m->data, sizeof who);
    memcpy(&seq, (char *)m->data + 4, sizeof seq);
    if (who < 0 || who >= g->nsenders || seq != next[who]++) atomic_fetch_add(&g->errors, 1);
    syncq_po_free(self, m);
    atomic_fetch_add(&g->received, 1);
  }
  free(next);
}

static void race_send_all(race *g, syncq_po_proc *self, int who) {
  for (int seq = 0; seq < g->per_sender; seq++) {
    for (int f = 0; f < g->nfibers; f++) {
      syncq_po_msg *m;
      if (syncq_po_get(self, 8, &m) != SYNCQ_OK) {
        atomic_fetch_add(&g->errors, 1);
        return;
      }
      memcpy(m->data, &who, sizeof who);
      memcpy((char *)m->data + 4, &seq, sizeof seq);
      if (syncq_po_send(self, g->fibers[f], m, (seq + f) % 3 ? SYNCQ_PO_LINK : SYNCQ_PO_COPY) != SYNCQ_OK)
        atomic_fetch_add(&g->errors, 1);
      if ((seq * 31 + f + who) % 17 == 0) syncq_yield(); /* let receivers park between bursts */
    }
  }
}

typedef struct sender_arg {
  race *g;
  int who;
} sender_arg;

static void *race_thread_sender(void *arg) {
  sender_arg *a = arg;
  syncq_po_proc *self;
  if (syncq_po_attach(a->g->sys, &self) != SYNCQ_OK) {
    atomic_fetch_add(&a->g->errors, 1);
    return NULL;
  }
  while (!atomic_load(&a->g->ready)) syncq_yield();
  race_send_all(a->g, self, a->who);
  syncq_po_detach(self);
  return NULL;
}

static void race_fiber_sender(syncq_po_proc *self, void *arg) {
  sender_arg *a = arg;
  while (!atomic_load(&a->g->ready)) syncq_po_yield(self);
  race_send_all(a->g, self, a->who);
}

static void test_park_wake_races(void **state) {
  (void)state;
  const char *mbs[] = {"mpsc", "nonblocking", "mutex"};
  for (size_t b = 0; b < sizeof mbs / sizeof mbs[0]; b++) {
    race g;
    memset(&g, 0, sizeof g);
    g.nfibers = RACE_FIBERS;
    g.per_sender = RACE_MSGS / RACE_FIBERS;
    g.nsenders = RACE_THREADS * 2; /* half threads, half fibers */
    g.fibers = calloc((size_t)g.nfibers, sizeof *g.fibers);
    assert_non_null(g.fibers);
    /* more schedulers than processing units: preempted schedulers too */
    g.sys = fiber_system(mbs[b], (uint32_t)(g.nfibers + g.nsenders + 1), 4, 0);
    for (int f = 0; f < g.nfibers; f++)
      assert_int_equal(syncq_po_spawn(g.sys, race_receiver, &g, &g.fibers[f]), SYNCQ_OK);
    sender_arg args[RACE_THREADS * 2];
    pthread_t tids[RACE_THREADS];
    syncq_po_pid fsend[RACE_THREADS];
    for (int t = 0; t < RACE_THREADS; t++) {
      args[t] = (sender_arg){&g, t};
      assert_int_equal(pthread_create(&tids[t], NULL, race_thread_sender, &args[t]), 0);
    }
    for (int t = 0; t < RACE_THREADS; t++) {
      args[RACE_THREADS + t] = (sender_arg){&g, RACE_THREADS + t};
      assert_int_equal(syncq_po_spawn(g.sys, race_fiber_sender, &args[RACE_THREADS + t], &fsend[t]), SYNCQ_OK);
    }
    atomic_store(&g.ready, 1);
    for (int t = 0; t < RACE_THREADS; t++) pthread_join(tids[t], NULL);
    for (int t = 0; t < RACE_THREADS; t++) assert_int_equal(syncq_po_join(g.sys, fsend[t]), SYNCQ_OK);
    for (int f = 0; f < g.nfibers; f++) assert_int_equal(syncq_po_join(g.sys, g.fibers[f]), SYNCQ_OK);
    assert_int_equal(atomic_load(&g.errors), 0);
    assert_int_equal(atomic_load(&g.received), (long)g.nfibers * g.nsenders * g.per_sender);
    assert_int_equal(syncq_po_destroy(g.sys), SYNCQ_OK);
    free(g.fibers);
  }
}

/* ------------------------------------------------ fibers that yield */

typedef struct yielders {
  _Atomic(int) turn; /* whose turn: fibers take turns through a shared word */
  _Atomic(int) errors;
  int n, rounds;
} yielders;

/* Each waits for its turn by yielding (recv's yield form reduced to its
 * core): on one scheduler, a fiber that spun without yielding would never
 * let the one whose turn it is run. */
static void yielder(syncq_po_proc *self, void *arg) {
  yielders *y = arg;
  int me = (int)syncq_po_pid_of(self);
  for (int r = 0; r < y->rounds; r++) {
    while (atomic_load(&y->turn) % y->n != me) syncq_po_yield(self);
    atomic_fetch_add(&y->turn, 1);
  }
}

static void test_yield(void **state) {
  (void)state;
  syncq_po_system *s = fiber_system("mpsc", YIELDERS, 1, 0); /* one scheduler: all on one thread */
  yielders y = {0, 0, YIELDERS, YIELD_ROUNDS};
  syncq_po_pid pids[YIELDERS];
  for (int i = 0; i < YIELDERS; i++) {
    assert_int_equal(syncq_po_spawn(s, yielder, &y, &pids[i]), SYNCQ_OK);
    assert_int_equal(pids[i], i);
  }
  for (int i = 0; i < YIELDERS; i++) assert_int_equal(syncq_po_join(s, pids[i]), SYNCQ_OK);
  assert_int_equal(atomic_load(&y.turn), YIELDERS * YIELD_ROUNDS);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

/* ------------------------------------------------ runnext does not starve */

typedef struct pingpong {
  syncq_po_pid a, b;
  _Atomic(int) stop, rounds, errors, ready;
} pingpong;

/* A and B hand one message back and forth, each parking in between: each
 * wakes the other into its scheduler's runnext slot. */
static void pp_player(syncq_po_proc *self, void *arg) {
  pingpong *g = arg;
  bool first = syncq_po_pid_of(self) == g->a;
  syncq_po_pid other = first ? g->b : g->a;
  if (first) {
    while (!atomic_load(&g->ready)) syncq_po_yield(self); /* B exists */
    syncq_po_msg *m;
    if (syncq_po_get(self, 8, &m) != SYNCQ_OK || syncq_po_send(self, other, m, SYNCQ_PO_LINK) != SYNCQ_OK)
      atomic_fetch_add(&g->errors, 1);
  }
  for (;;) {
    syncq_po_msg *m;
    if (syncq_po_recv_blocking(self, &m) != SYNCQ_OK) {
      atomic_fetch_add(&g->errors, 1);
      return;
    }
    if (m->type == 1) { /* quit: pass it on once, then leave */
      if (first) syncq_po_send(self, other, m, SYNCQ_PO_LINK);
      else syncq_po_free(self, m);
      return;
    }
    atomic_fetch_add(&g->rounds, 1);
    if (first && atomic_load(&g->stop)) m->type = 1;
    if (syncq_po_send(self, other, m, SYNCQ_PO_LINK) != SYNCQ_OK) atomic_fetch_add(&g->errors, 1);
    if (m->type == 1) return;
  }
}

static void pp_stopper(syncq_po_proc *self, void *arg) {
  (void)self;
  atomic_store(&((pingpong *)arg)->stop, 1);
}

/* On one scheduler, a fiber queued while two others keep waking each other
 * still runs (runnext has a budget); without it this test hangs. */
static void test_runnext_does_not_starve(void **state) {
  (void)state;
  syncq_po_system *s = fiber_system("mpsc", 4, 1, 0);
  pingpong g = {0, 1, 0, 0, 0, 0}; /* pids are handed out in order: set before the players start */
  syncq_po_pid a, b, c;
  assert_int_equal(syncq_po_spawn(s, pp_player, &g, &a), SYNCQ_OK);
  assert_int_equal(syncq_po_spawn(s, pp_player, &g, &b), SYNCQ_OK);
  assert_int_equal(a, g.a);
  assert_int_equal(b, g.b);
  atomic_store(&g.ready, 1);
  while (atomic_load(&g.rounds) < 1000) syncq_yield(); /* the ping-pong is under way */
  assert_int_equal(syncq_po_spawn(s, pp_stopper, &g, &c), SYNCQ_OK);
  assert_int_equal(syncq_po_join(s, c), SYNCQ_OK);
  assert_int_equal(syncq_po_join(s, a), SYNCQ_OK);
  assert_int_equal(syncq_po_join(s, b), SYNCQ_OK);
  assert_int_equal(atomic_load(&g.errors), 0);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

/* ------------------------------------------------ a receive's yield */

enum { REPLY_ROUNDS = 10, T_QUIT = 9 };

typedef struct asker {
  syncq_po_pid server;
  int how; /* 0: recv_timeout, 1: recv_blocking */
  _Atomic(int) errors;
  uint64_t parked[REPLY_ROUNDS]; /* blocks counted while each round's receive waited */
} asker;

/* Answers each message with itself, until T_QUIT; its receive yields
 * before it would park (syncq_po_recv), so it parks only when the asker
 * does too. */
static void answerer(syncq_po_proc *self, void *arg) {
  asker *a = arg;
  for (;;) {
    syncq_po_msg *m;
    if (syncq_po_recv(self, &m) != SYNCQ_OK) {
      atomic_fetch_add(&a->errors, 1);
      return;
    }
    if (m->type == T_QUIT) {
      syncq_po_free(self, m);
      return;
    }
    if (syncq_po_send(self, m->sender, m, SYNCQ_PO_LINK) != SYNCQ_OK) atomic_fetch_add(&a->errors, 1);
  }
}

/* Sends the answerer a message (which makes it runnable on this, the
 * only, scheduler) and waits for the answer, counting the blocks (parks)
 * of its scheduler thread meanwhile: syncq_stats_self() is looked up
 * afresh at each call, and with one scheduler and nothing else blocking
 * there, only this receive can park. */
static void asking(syncq_po_proc *self, void *arg) {
  asker *a = arg;
  for (int i = 0; i < REPLY_ROUNDS; i++) {
    syncq_po_msg *m;
    if (syncq_po_get(self, 8, &m) != SYNCQ_OK) {
      atomic_fetch_add(&a->errors, 1);
      return;
    }
    m->type = 1;
    uint64_t before = syncq_stats_self()->blocks;
    if (syncq_po_send(self, a->server, m, SYNCQ_PO_LINK) != SYNCQ_OK) {
      atomic_fetch_add(&a->errors, 1);
      return;
    }
    int r =
      a->how == 0 ? syncq_po_recv_timeout(self, (uint64_t)60 * 1000000000u, &m) : syncq_po_recv_blocking(self, &m);
    a->parked[i] = syncq_stats_self()->blocks - before;
    if (r != SYNCQ_OK || m->sender != a->server) {
      atomic_fetch_add(&a->errors, 1);
      return;
    }
    syncq_po_free(self, m);
  }
  syncq_po_msg *q;
  if (syncq_po_get(self, 0, &q) != SYNCQ_OK) {
    atomic_fetch_add(&a->errors, 1);
    return;
  }
  q->type = T_QUIT;
  if (syncq_po_send(self, a->server, q, SYNCQ_PO_LINK) != SYNCQ_OK) atomic_fetch_add(&a->errors, 1);
}

/* recv_timeout and recv_blocking, like recv, yield once to their
 * scheduler's runnable fibers before they park: the answerer, made
 * runnable by the request, answers during that yield, and the answer is
 * taken without a park in every round. Before, both parked at once (one
 * block a round), and the answerer's send woke them. */
static void test_receives_yield_before_parking(void **state) {
  (void)state;
  if (!syncq_stats_enabled()) {
    print_message("skipped: statistics not counted in this build\n");
    skip();
  }
  for (int how = 0; how < 2; how++) {
    syncq_po_system *s = fiber_system("mpsc", 4, 1, 0);
    asker a = {0, how, 0, {0}};
    syncq_po_pid server, client;
    assert_int_equal(syncq_po_spawn(s, answerer, &a, &server), SYNCQ_OK);
    a.server = server;
    assert_int_equal(syncq_po_spawn(s, asking, &a, &client), SYNCQ_OK);
    assert_int_equal(syncq_po_join(s, client), SYNCQ_OK);
    assert_int_equal(syncq_po_join(s, server), SYNCQ_OK);
    assert_int_equal(atomic_load(&a.errors), 0);
    for (int i = 0; i < REPLY_ROUNDS; i++) {
      if (a.parked[i] != 0)
        fail_msg("%s, round %d: the receive parked %llu times", how == 0 ? "recv_timeout" : "recv_blocking", i,
                 (unsigned long long)a.parked[i]);
    }
    assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
  }
}

/* ------------------------------------------------ fibers spawning fibers */

typedef struct tree {
  syncq_po_system *sys;
  _Atomic(int) nodes, errors;
} tree;

typedef struct node_arg {
  tree *t;
  int depth;
} node_arg;

/* Each node below the leaves spawns two children and joins them (a fiber
 * joining yields to the others, its scheduler keeps running); each node
 * checks it runs on its own stack. */
static void node(syncq_po_proc *self, void *arg) {
  node_arg *a = arg;
  atomic_fetch_add(&a->t->nodes, 1);
  void *lo;
  size_t size;
  char here;
  if (syncq_po_stack(self, &lo, &size) != SYNCQ_OK || size == 0 || &here < (char *)lo || &here >= (char *)lo + size)
    atomic_fetch_add(&a->t->errors, 1);
  if (a->depth == 0) {
    free(a);
    return;
  }
  syncq_po_pid kids[2];
  for (int k = 0; k < 2; k++) {
    node_arg *c = malloc(sizeof *c);
    if (c == NULL) {
      atomic_fetch_add(&a->t->errors, 1);
      kids[k] = -1;
      continue;
    }
    *c = (node_arg){a->t, a->depth - 1};
    if (syncq_po_spawn(a->t->sys, node, c, &kids[k]) != SYNCQ_OK) {
      free(c);
      kids[k] = -1;
      atomic_fetch_add(&a->t->errors, 1);
    }
  }
  for (int k = 0; k < 2; k++)
    if (kids[k] >= 0 && syncq_po_join(a->t->sys, kids[k]) != SYNCQ_OK) atomic_fetch_add(&a->t->errors, 1);
  free(a);
}

static void test_fibers_spawn_and_join_fibers(void **state) {
  (void)state;
  enum { DEPTH = TSAN ? 6 : 10 };
  tree t = {NULL, 0, 0};
  t.sys = fiber_system("mpsc", 1u << (DEPTH + 1), planned_schedulers(), 0);
  node_arg *root = malloc(sizeof *root);
  assert_non_null(root);
  *root = (node_arg){&t, DEPTH};
  syncq_po_pid pid;
  assert_int_equal(syncq_po_spawn(t.sys, node, root, &pid), SYNCQ_OK);
  assert_int_equal(syncq_po_join(t.sys, pid), SYNCQ_OK);
  assert_int_equal(atomic_load(&t.errors), 0);
  assert_int_equal(atomic_load(&t.nodes), (1 << (DEPTH + 1)) - 1);
  assert_int_equal(syncq_po_count(t.sys), (uint32_t)(1 << (DEPTH + 1)) - 1);
  assert_int_equal(syncq_po_destroy(t.sys), SYNCQ_OK);
}

/* ------------------------------------------------ a fiber's children run next */

typedef struct order {
  syncq_po_system *sys;
  _Atomic(int) seq[3]; /* which child ran first, second, third */
  _Atomic(int) ran, errors;
  _Atomic(int) flag;
} order;

typedef struct order_child {
  order *o;
  int id;
} order_child;

static void order_kid(syncq_po_proc *self, void *arg) {
  (void)self;
  order_child *c = arg;
  int at = atomic_fetch_add(&c->o->ran, 1);
  if (at < 3) atomic_store(&c->o->seq[at], c->id);
}

/* Spawns children 0, 1, 2 and joins them: the last spawned runs first (it
 * took runnext), the ones it displaced after it, newest first (a tree is
 * walked depth first: src/po/spawn_deque.h). */
static int order_parent(syncq_po_proc *self, void *arg) {
  (void)self;
  order *o = arg;
  static order_child kids[3];
  syncq_po_pid pid[3];
  for (int i = 0; i < 3; i++) {
    kids[i] = (order_child){o, i};
    if (syncq_po_spawn(o->sys, order_kid, &kids[i], &pid[i]) != SYNCQ_OK) return SYNCQ_EINVAL;
  }
  for (int i = 0; i < 3; i++)
    if (syncq_po_join(o->sys, pid[i]) != SYNCQ_OK) return SYNCQ_EINVAL;
  return SYNCQ_OK;
}

static void test_a_fibers_child_runs_next(void **state) {
  (void)state;
  order o;
  memset(&o, 0, sizeof o);
  o.sys = fiber_system("mpsc", 8, 1, 0);
  int result = SYNCQ_EINVAL;
  assert_int_equal(syncq_po_run(o.sys, order_parent, &o, &result), SYNCQ_OK);
  assert_int_equal(result, SYNCQ_OK);
  assert_int_equal(atomic_load(&o.ran), 3);
  assert_int_equal(atomic_load(&o.seq[0]), 2);
  assert_int_equal(atomic_load(&o.seq[1]), 1);
  assert_int_equal(atomic_load(&o.seq[2]), 0);
  assert_int_equal(syncq_po_destroy(o.sys), SYNCQ_OK);
}

static void flag_kid(syncq_po_proc *self, void *arg) {
  (void)self;
  atomic_store(&((order *)arg)->flag, 1);
}

/* A parent that spawns and goes on running without a switch (here: it
 * waits for its child without yielding) does not keep the child, which
 * sits in its scheduler's runnext: an idle scheduler takes it. */
static int busy_parent(syncq_po_proc *self, void *arg) {
  (void)self;
  order *o = arg;
  syncq_po_pid pid;
  if (syncq_po_spawn(o->sys, flag_kid, o, &pid) != SYNCQ_OK) return SYNCQ_EINVAL;
  uint64_t t0 = syncq_now_ns();
  while (atomic_load(&o->flag) == 0)
    if (syncq_now_ns() - t0 > 30ull * 1000000000ull) return SYNCQ_ETIMEDOUT; /* never taken */
  return syncq_po_join(o->sys, pid);
}

static void test_a_busy_parents_child_is_taken(void **state) {
  (void)state;
  order o;
  memset(&o, 0, sizeof o);
  o.sys = fiber_system("mpsc", 8, 2, 0);
  int result = SYNCQ_EINVAL;
  assert_int_equal(syncq_po_run(o.sys, busy_parent, &o, &result), SYNCQ_OK);
  assert_int_equal(result, SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(o.sys), SYNCQ_OK);
}

/* ------------------------------------------------ limits in a child */

static void idle(syncq_po_proc *self, void *arg) {
  (void)arg;
  syncq_po_msg *m;
  if (syncq_po_recv_blocking(self, &m) == SYNCQ_OK) syncq_po_free(self, m);
}

static long max_map_count(void) {
  FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
  long v = -1;
  if (f) {
    if (fscanf(f, "%ld", &v) != 1) v = -1;
    fclose(f);
  }
  return v;
}

static long maps_now(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  long n = 0;
  int c;
  if (!f) return -1;
  while ((c = fgetc(f)) != EOF) n += c == '\n';
  fclose(f);
  return n;
}

/* Use up all but about 300 of the kernel's mappings, then spawn 5,000
 * fibers with the default guards: none is refused (past the mapping
 * budget their stacks carry canaries), each receives its message and
 * exits, and the system is destroyed. */
#define PAST_BUDGET 5000
static void test_map_budget_degrades(void **state) {
  (void)state;
  if (ASAN || TSAN) {
    print_message("skipped under a sanitizer: its runtime needs mappings of its own, and using them up kills it\n");
    skip();
  }
  long limit = max_map_count();
  if (limit <= 0 || limit > 1000000) {
    print_message("skipped: vm.max_map_count is %ld, too large to use up in a test\n", limit);
    skip();
  }
  fflush(NULL);
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    /* guards that split mappings (a kernel before 6.13 has no others) */
    if (setenv("SYNCQ_PO_GUARD", "mprotect", 1) != 0) _exit(9);
    syncq_po_system *s;
    syncq_po_config cfg = {"mpsc", PAST_BUDGET + 1, SYNCQ_PO_MIN_FIBER_STACK, 0, "fiber", 1, false};
    if (syncq_po_create(&cfg, &s) != SYNCQ_OK) _exit(10);
    long page = sysconf(_SC_PAGESIZE);
    long want = limit - maps_now() - 300;
    if (want > 0) {
      /* pages of alternating protection never merge: one mapping each */
      char *area =
        mmap(NULL, (size_t)(want + 1) * (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (area == MAP_FAILED) _exit(11);
      for (long i = 1; i < want; i += 2) mprotect(area + i * page, (size_t)page, PROT_NONE);
    }
    syncq_po_proc *me;
    if (syncq_po_attach(s, &me) != SYNCQ_OK) _exit(12);
    static syncq_po_pid pids[PAST_BUDGET];
    for (int k = 0; k < PAST_BUDGET; k++) {
      int r = syncq_po_spawn(s, idle, NULL, &pids[k]);
      if (r != SYNCQ_OK) {
        const char *why = syncq_po_limit_reason(s);
        fprintf(stderr, "spawn %d: %s, reason %s\n", k, syncq_strerror(r), why ? why : "(none)");
        _exit(20);
      }
    }
    if (maps_now() > limit) _exit(21);
    for (int k = 0; k < PAST_BUDGET; k++) {
      syncq_po_msg *m;
      if (syncq_po_get(me, 0, &m) != SYNCQ_OK || syncq_po_send(me, pids[k], m, SYNCQ_PO_LINK) != SYNCQ_OK) _exit(22);
    }
    for (int k = 0; k < PAST_BUDGET; k++)
      if (syncq_po_join(s, pids[k]) != SYNCQ_OK) _exit(23);
    if (syncq_po_detach(me) != SYNCQ_OK || syncq_po_destroy(s) != SYNCQ_OK) _exit(24);
    _exit(0);
  }
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}

/* A frame larger than the stack on a stack without a guard (20 KB of
 * locals on 16 KB): the canary at its lowest word is overwritten, and the
 * switch out names the process before the program stops (in a child). */
static void smash(syncq_po_proc *self, void *arg) {
  (void)self, (void)arg;
  char buf[20 * 1024];
  memset(buf, 0x5a, sizeof buf);
  __asm__ volatile("" : : "r"(buf) : "memory"); /* the writes stay */
}

/* Runs body in a forked child with its stderr captured: the child must
 * die of signal sig, and its stderr hold report. */
static void child_dies_reporting(void (*body)(void), int sig, const char *report) {
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  fflush(NULL);
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    body();
    _exit(0); /* not reached */
  }
  close(fds[1]);
  char buf[1024];
  size_t got = 0;
  ssize_t k;
  while (got < sizeof buf - 1 && (k = read(fds[0], buf + got, sizeof buf - 1 - got)) > 0) got += (size_t)k;
  buf[got] = '\0';
  close(fds[0]);
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_true(WIFSIGNALED(status));
  assert_int_equal(WTERMSIG(status), sig);
  if (strstr(buf, report) == NULL) fail_msg("no report \"%s\" by pid; stderr: %s", report, buf);
}

static void canary_child(void) {
  syncq_po_config cfg = {"mpsc", 8, 16 * 1024, SYNCQ_PO_NO_GUARD, "fiber", 1, false};
  syncq_po_system *s;
  if (syncq_po_create(&cfg, &s) != SYNCQ_OK) _exit(10);
  syncq_po_pid pid;
  syncq_po_spawn(s, idle, NULL, &pid);  /* pid 0: the chunk's lowest stack */
  syncq_po_spawn(s, smash, NULL, &pid); /* pid 1: above free stacks, which it overruns */
  syncq_po_join(s, pid);
}

static void test_canary_reported(void **state) {
  (void)state;
  if (ASAN) {
    print_message("skipped under AddressSanitizer: it reports the overrun itself\n");
    skip();
  }
  child_dies_reporting(canary_child, SIGABRT, "syncq po: process 1 overran its fiber stack");
}

static volatile int sink;

static int recurse(int depth) {
  volatile char frame[512];
  frame[0] = (char)depth;
  frame[511] = (char)depth;
  return depth > 1000000 ? frame[0] : recurse(depth + 1) + frame[511];
}

static void overflow(syncq_po_proc *self, void *arg) {
  (void)self;
  (void)arg;
  sink = recurse(0);
}

static void overflow_child(void) {
  syncq_po_config cfg = {"mpsc", 8, 16 * 1024, 0, "fiber", 1, false};
  syncq_po_system *s;
  if (syncq_po_create(&cfg, &s) != SYNCQ_OK) _exit(10);
  syncq_po_pid pid;
  syncq_po_spawn(s, idle, NULL, &pid);     /* pid 0 */
  syncq_po_spawn(s, idle, NULL, &pid);     /* pid 1 */
  syncq_po_spawn(s, overflow, NULL, &pid); /* pid 2 */
  syncq_po_join(s, pid);
}

/* How far below its stack the frame of jump() reaches: just under the
 * documented default guard (16 KB, po.h: "a frame that overruns the
 * default stack by up to 16 KB ... lands in it"), so that any smaller
 * guard lets the write through into the stack below. */
#define JUMP_OVERRUN (16 * 1024 - 64)

/* A frame that overruns the default 16 KB stack by JUMP_OVERRUN bytes and
 * whose first write is its lowest byte, as code built without
 * -fstack-clash-protection may make (this toolchain probes a large frame
 * page by page, which faults in any guard, so the write is made here
 * directly, below the stack's lowest byte): it must land in the default
 * guard and be reported, not in the stack below (pid 0's, whose top holds
 * its frames and whose lower pages are mapped: with a guard of 8 KB the
 * write lands there, nothing faults, and the child exits normally). */
static void jump(syncq_po_proc *self, void *arg) {
  (void)arg;
  void *lo = NULL;
  size_t size = 0;
  if (syncq_po_stack(self, &lo, &size) != SYNCQ_OK || size != SYNCQ_PO_DEFAULT_FIBER_STACK) _exit(11);
  volatile char *lowest = (volatile char *)lo - JUMP_OVERRUN;
  *lowest = 1;
}

static void big_frame_child(void) {
  syncq_po_config cfg = {"mpsc", 8, 0, 0, "fiber", 1, false};
  syncq_po_system *s;
  if (syncq_po_create(&cfg, &s) != SYNCQ_OK) _exit(10);
  syncq_po_pid pid;
  syncq_po_spawn(s, idle, NULL, &pid); /* pid 0 */
  syncq_po_spawn(s, jump, NULL, &pid); /* pid 1 */
  syncq_po_join(s, pid);
}

static void test_default_guard_catches_big_frame(void **state) {
  (void)state;
  if (ASAN || TSAN) {
    print_message("skipped under a sanitizer: it reports the overflow itself, before our handler\n");
    skip();
  }
  _Static_assert(SYNCQ_PO_DEFAULT_FIBER_STACK == 16 * 1024 && SYNCQ_PO_DEFAULT_FIBER_GUARD >= 16 * 1024,
                 "the documented defaults: a 16 KB stack, a guard of at least 16 KB below it");
  child_dies_reporting(big_frame_child, SIGSEGV, "syncq po: process 1 overflowed its fiber stack");
}

/* A fiber that overflows its stack: the child dies of SIGSEGV, and stderr
 * names the process. */
static void test_stack_overflow_reported(void **state) {
  (void)state;
  if (ASAN || TSAN) {
    print_message("skipped under a sanitizer: it reports the overflow itself, before our handler\n");
    skip();
  }
  child_dies_reporting(overflow_child, SIGSEGV, "syncq po: process 2 overflowed its fiber stack");
}

int main(void) {
  test_plan_confine();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_backends),
    cmocka_unit_test(test_only_the_process_receives),
    cmocka_unit_test(test_foreign_thread),
    cmocka_unit_test(test_yield),
    cmocka_unit_test(test_park_wake_races),
    cmocka_unit_test(test_hundred_thousand),
    cmocka_unit_test(test_map_budget_degrades),
    cmocka_unit_test(test_canary_reported),
    cmocka_unit_test(test_stack_overflow_reported),
    cmocka_unit_test(test_default_guard_catches_big_frame),
    cmocka_unit_test(test_fibers_spawn_and_join_fibers),
    cmocka_unit_test(test_runnext_does_not_starve),
    cmocka_unit_test(test_receives_yield_before_parking),
    cmocka_unit_test(test_a_fibers_child_runs_next),
    cmocka_unit_test(test_a_busy_parents_child_is_taken),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
