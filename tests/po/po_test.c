/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_test.c — the postoffice: every mailbox algorithm, linking and copying,
 * with the yielding and the blocking recv; 2,000 processes exchanging
 * messages; linearizability of each inbox on short recorded histories;
 * bad inputs, dead and unknown pids, and spawns refused by a limit
 * (the system's max_procs, and RLIMIT_NPROC lowered in a forked child).
 *
 * The same source is built once per backend (PO_TEST_BACKEND: "thread",
 * "fiber"): every check runs on kernel threads and on fibers.
 *
 * Stress: producers are 8x the processing units and yield at varying
 * points, on the test plan's confined PUs (tests/support/test_plan.h: 16
 * producers on 2 PUs on any machine), so the PUs are oversubscribed and
 * lock holders and half-done enqueues are preempted. A fiber system runs
 * one scheduler per confined PU, as the default would on a machine of
 * that size. A lost wake-up in recv_blocking hangs
 * the test (CTest's timeout then fails it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_plan.h"

#include "lincheck.h"
#include "syncq/platform.h"
#include "syncq/po.h"

#include "test_sanitizer.h"

#ifndef PO_TEST_BACKEND
#define PO_TEST_BACKEND "thread"
#endif
#define FIBERS (strcmp(PO_TEST_BACKEND, "fiber") == 0)

#define OVERSUBSCRIPTION TEST_PLAN_OVERSUBSCRIPTION
#define PER_PRODUCER (SANITIZED ? 150 : 1500)
/* The ring of test_many_processes. On the thread backend each member is
 * a kernel thread spinning on a yield until the ring starts: under
 * qemu-user (the AArch64 build runs there: scripts/test-arm64) 2,000 of
 * them, once per mailbox, took minutes; 500 there (sanitized builds:
 * 600) still pass every mailbox's ring through a table larger than any
 * stress's threads. Fibers keep 2,000 everywhere. */
#if defined(__aarch64__)
#define EMULATED 1
#else
#define EMULATED 0
#endif
#define MANY_PROCS (SANITIZED ? 600 : EMULATED && !FIBERS ? 500 : 2000)
#define RING_ROUNDS 4
#define PINGPONGS (SANITIZED ? 2000 : 20000)
#define HISTORIES (SANITIZED ? 40 : 300)
/* Sanitizers need deeper stacks than 002's 32 KB. */
#define TEST_STACK (SANITIZED ? 256u * 1024u : 0u)

/* 8x the PUs the process is confined to (test_plan.h): 16 threads on 2
 * PUs on any machine with 2 or more. */
static int n_producers(void) { return test_plan_oversubscribed(OVERSUBSCRIPTION); }

static int n_mailboxes(void) { return syncq_po_mailbox_count(); }
static const char *mailbox(int i) {
  const char *n = NULL;
  assert_int_equal(syncq_po_mailbox_info(i, &n, NULL, NULL), SYNCQ_OK);
  return n;
}

static uint32_t n_schedulers(void) { return FIBERS ? (uint32_t)test_plan_confine() : 0; }

static syncq_po_system *new_system(const char *mb, uint32_t max_procs) {
  syncq_po_config cfg = {mb, max_procs, TEST_STACK, 0, PO_TEST_BACKEND, n_schedulers(), false};
  syncq_po_system *s = NULL;
  int r = syncq_po_create(&cfg, &s);
  if (r != SYNCQ_OK)
    fail_msg("creating a '%s' postoffice on %s: %s (is its lock registered?)", mb, PO_TEST_BACKEND, syncq_strerror(r));
  assert_string_equal(syncq_po_backend_of(s), PO_TEST_BACKEND);
  return s;
}

/* ------------------------------------------------ order, integrity, no loss */

typedef struct order_run {
  syncq_po_pid consumer;
  int producer;
  int count;
  syncq_po_send_mode mode;
  _Atomic(int) failures;
} order_run;

typedef struct producer_arg {
  order_run *run;
  int id;
} producer_arg;

static uint8_t pattern(int producer, int seq, size_t j) { return (uint8_t)(producer * 31 + seq * 7 + (int)j); }

static size_t msg_len(int seq) { return 8 + (size_t)(seq % 53) * 5; }

static void producer(syncq_po_proc *self, void *p) {
  producer_arg *a = p;
  order_run *run = a->run;
  for (int i = 0; i < run->count; i++) {
    syncq_po_msg *m;
    size_t len = msg_len(i);
    if (syncq_po_get(self, len, &m) != SYNCQ_OK) {
      atomic_fetch_add(&run->failures, 1);
      return;
    }
    m->type = (uint32_t)a->id;
    uint8_t *d = m->data;
    memcpy(d, &i, sizeof i);
    memcpy(d + 4, &a->id, sizeof a->id);
    for (size_t j = 8; j < len; j++) d[j] = pattern(a->id, i, j);
    if (i % 11 == a->id % 11) syncq_yield();
    if (syncq_po_send(self, run->consumer, m, run->mode) != SYNCQ_OK) atomic_fetch_add(&run->failures, 1);
    if (i % 13 == a->id % 13) syncq_yield();
  }
}

static void check_order(const char *mb, syncq_po_send_mode mode, bool blocking) {
  syncq_po_system *s = new_system(mb, 0);
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
  int np = n_producers();
  order_run run = {syncq_po_pid_of(me), 0, PER_PRODUCER, mode, 0};
  producer_arg *args = calloc((size_t)np, sizeof *args);
  syncq_po_pid *pids = calloc((size_t)np, sizeof *pids);
  int *next = calloc((size_t)np, sizeof *next);
  assert_non_null(args);
  assert_non_null(pids);
  assert_non_null(next);
  for (int p = 0; p < np; p++) {
    args[p] = (producer_arg){&run, p};
    assert_int_equal(syncq_po_spawn(s, producer, &args[p], &pids[p]), SYNCQ_OK);
  }
  long total = (long)np * PER_PRODUCER, bad = 0;
  for (long k = 0; k < total; k++) {
    syncq_po_msg *m = NULL;
    assert_int_equal(blocking ? syncq_po_recv_blocking(me, &m) : syncq_po_recv(me, &m), SYNCQ_OK);
    int seq, id;
    const uint8_t *d = m->data;
    memcpy(&seq, d, sizeof seq);
    memcpy(&id, d + 4, sizeof id);
    if (id < 0 || id >= np || (uint32_t)id != m->type || m->sender != pids[id] || seq != next[id] ||
        m->len != msg_len(seq)) {
      if (bad++ < 5)
        print_error("%s %s: bad message: producer %d (type %u, sender %d) seq %d (expected %d) len %zu\n", mb,
                    mode == SYNCQ_PO_LINK ? "link" : "copy", id, m->type, (int)m->sender, seq,
                    id >= 0 && id < np ? next[id] : -1, m->len);
    } else {
      for (size_t j = 8; j < m->len; j++)
        if (d[j] != pattern(id, seq, j)) {
          if (bad++ < 5) print_error("%s: corrupt payload byte %zu of %d/%d\n", mb, j, id, seq);
          break;
        }
      next[id]++;
    }
    if (k % 17 == 0) syncq_yield();
    assert_int_equal(syncq_po_free(me, m), SYNCQ_OK);
  }
  for (int p = 0; p < np; p++) assert_int_equal(syncq_po_join(s, pids[p]), SYNCQ_OK);
  syncq_po_msg *extra;
  assert_int_equal(syncq_po_try_recv(me, &extra), SYNCQ_EMPTY); /* no duplicates */
  assert_int_equal(atomic_load(&run.failures), 0);
  assert_int_equal(bad, 0);
  for (int p = 0; p < np; p++) assert_int_equal(next[p], PER_PRODUCER);
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
  free(args);
  free(pids);
  free(next);
}

static void test_order_every_mailbox(void **state) {
  (void)state;
  assert_int_equal(n_mailboxes(), 6);
  for (int i = 0; i < n_mailboxes(); i++)
    for (int mode = 0; mode < 2; mode++)
      for (int blocking = 0; blocking < 2; blocking++) check_order(mailbox(i), (syncq_po_send_mode)mode, blocking != 0);
}

/* ------------------------------------------------ inline payloads */

static bool inside(const syncq_po_msg *m) {
  const char *d = m->data, *h = (const char *)m;
  return d >= h && d < h + sizeof *m;
}

/* A payload of up to SYNCQ_PO_INLINE_MSG bytes lives in its header (no
 * allocation: a tree of processes replying one word each allocated a
 * buffer per header); a larger one gets its own buffer, kept with the
 * header, and either kind survives a link and a copy intact. Destroy
 * frees the separate buffers only (ASan: no bad free, no leak). */
static void check_inline(const char *mb) {
  syncq_po_system *s = new_system(mb, 0);
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
  syncq_po_pid self = syncq_po_pid_of(me);
  bool nofree = strcmp(mb, "mutex-nofree") == 0;
  static const size_t lens[] = {0, 1, 8, SYNCQ_PO_INLINE_MSG, SYNCQ_PO_INLINE_MSG + 1, 200, 8, 3};
  for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
    for (int mode = 0; mode < 2; mode++) {
      syncq_po_msg *m;
      assert_int_equal(syncq_po_get(me, lens[k], &m), SYNCQ_OK);
      assert_true(m->cap >= lens[k]);
      /* a fresh header's small payload is its own; a reused one may keep a larger buffer */
      if (lens[k] > SYNCQ_PO_INLINE_MSG) assert_false(inside(m));
      if (nofree && lens[k] <= SYNCQ_PO_INLINE_MSG) assert_true(inside(m));
      assert_int_equal((uintptr_t)m->data % _Alignof(long double), 0);
      for (size_t j = 0; j < lens[k]; j++) ((uint8_t *)m->data)[j] = (uint8_t)(k * 37 + j);
      m->type = (uint32_t)k;
      assert_int_equal(syncq_po_send(me, self, m, mode ? SYNCQ_PO_COPY : SYNCQ_PO_LINK), SYNCQ_OK);
      syncq_po_msg *r;
      assert_int_equal(syncq_po_try_recv(me, &r), SYNCQ_OK);
      assert_int_equal(r->type, (uint32_t)k);
      assert_int_equal(r->len, lens[k]);
      for (size_t j = 0; j < lens[k]; j++) assert_int_equal(((uint8_t *)r->data)[j], (uint8_t)(k * 37 + j));
      assert_int_equal(syncq_po_free(me, r), SYNCQ_OK);
    }
  }
  /* Headers new to the system: every one of up to 16 bytes is inline. */
  syncq_po_msg *fresh[4];
  for (int i = 0; i < 4; i++) {
    assert_int_equal(syncq_po_get(me, SYNCQ_PO_INLINE_MSG, &fresh[i]), SYNCQ_OK);
    if (i >= 2 || nofree) assert_true(inside(fresh[i])); /* the first two may be the reused ones above */
  }
  for (int i = 0; i < 4; i++) assert_int_equal(syncq_po_free(me, fresh[i]), SYNCQ_OK);
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

static void test_inline_payload(void **state) {
  (void)state;
  for (int i = 0; i < n_mailboxes(); i++) check_inline(mailbox(i));
}

/* ------------------------------------------------ blocking ping-pong */

typedef struct pp_arg {
  syncq_po_pid peer;
  int rounds;
  _Atomic(int) errors;
} pp_arg;

static void pong(syncq_po_proc *self, void *p) {
  pp_arg *a = p;
  for (int i = 0; i < a->rounds; i++) {
    syncq_po_msg *m;
    if (syncq_po_recv_blocking(self, &m) != SYNCQ_OK || m->type != (uint32_t)i) atomic_fetch_add(&a->errors, 1);
    m->type++;
    if (syncq_po_send(self, m->sender, m, i % 2 ? SYNCQ_PO_COPY : SYNCQ_PO_LINK) != SYNCQ_OK)
      atomic_fetch_add(&a->errors, 1);
  }
}

/* Two processes hand one message back and forth, each sleeping in between:
 * a lost wake-up stops them for good. */
static void test_blocking_pingpong(void **state) {
  (void)state;
  for (int i = 0; i < n_mailboxes(); i++) {
    syncq_po_system *s = new_system(mailbox(i), 4);
    syncq_po_proc *me;
    assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
    pp_arg a = {syncq_po_pid_of(me), PINGPONGS, 0};
    syncq_po_pid peer;
    assert_int_equal(syncq_po_spawn(s, pong, &a, &peer), SYNCQ_OK);
    syncq_po_msg *m;
    assert_int_equal(syncq_po_get(me, 16, &m), SYNCQ_OK);
    for (int r = 0; r < PINGPONGS; r++) {
      m->type = (uint32_t)r;
      assert_int_equal(syncq_po_send(me, peer, m, SYNCQ_PO_LINK), SYNCQ_OK);
      assert_int_equal(syncq_po_recv_blocking(me, &m), SYNCQ_OK);
      assert_int_equal(m->type, (uint32_t)r + 1);
      assert_int_equal(m->sender, peer);
    }
    assert_int_equal(syncq_po_free(me, m), SYNCQ_OK);
    assert_int_equal(syncq_po_join(s, peer), SYNCQ_OK);
    assert_int_equal(atomic_load(&a.errors), 0);
    assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
    assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
  }
}

/* ------------------------------------------------ thousands of processes */

typedef struct ring {
  int n;
  syncq_po_pid first; /* pids are first .. first+n-1 */
  syncq_po_pid controller;
  _Atomic(int) go; /* every process spawned: start sending */
  _Atomic(int) errors;
} ring;

static void ring_member(syncq_po_proc *self, void *p) {
  ring *g = p;
  int i = (int)(syncq_po_pid_of(self) - g->first);
  syncq_po_pid right = g->first + (i + 1) % g->n, left = g->first + (i + g->n - 1) % g->n;
  while (!atomic_load(&g->go)) syncq_yield();
  for (int r = 0; r < RING_ROUNDS; r++) {
    syncq_po_msg *m;
    if (syncq_po_get(self, sizeof(int) * 2, &m) != SYNCQ_OK) {
      atomic_fetch_add(&g->errors, 1);
      return;
    }
    int body[2] = {i, r};
    memcpy(m->data, body, sizeof body);
    if (syncq_po_send(self, right, m, r % 2 ? SYNCQ_PO_COPY : SYNCQ_PO_LINK) != SYNCQ_OK)
      atomic_fetch_add(&g->errors, 1);
    if (syncq_po_recv_blocking(self, &m) != SYNCQ_OK) {
      atomic_fetch_add(&g->errors, 1);
      return;
    }
    memcpy(body, m->data, sizeof body);
    if (m->sender != left || body[0] != (i + g->n - 1) % g->n || body[1] != r) atomic_fetch_add(&g->errors, 1);
    syncq_po_free(self, m);
  }
  syncq_po_msg *done;
  if (syncq_po_get(self, 0, &done) != SYNCQ_OK || syncq_po_send(self, g->controller, done, SYNCQ_PO_LINK) != SYNCQ_OK)
    atomic_fetch_add(&g->errors, 1);
}

static void test_many_processes(void **state) {
  (void)state;
  for (int i = 0; i < n_mailboxes(); i++) {
    const char *mb = mailbox(i);
    syncq_po_system *s = new_system(mb, MANY_PROCS + 1);
    syncq_po_proc *me;
    assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
    ring g = {MANY_PROCS, syncq_po_pid_of(me) + 1, syncq_po_pid_of(me), 0, 0};
    for (int k = 0; k < MANY_PROCS; k++) {
      syncq_po_pid pid;
      int r = syncq_po_spawn(s, ring_member, &g, &pid);
      if (r != SYNCQ_OK)
        fail_msg("spawn %d of %d: %s (%s)", k, MANY_PROCS, syncq_strerror(r), syncq_po_limit_reason(s));
      assert_int_equal(pid, g.first + k);
    }
    assert_int_equal(syncq_po_count(s), MANY_PROCS + 1);
    atomic_store(&g.go, 1);
    for (int k = 0; k < MANY_PROCS; k++) {
      syncq_po_msg *m;
      assert_int_equal(syncq_po_recv_blocking(me, &m), SYNCQ_OK);
      syncq_po_free(me, m);
    }
    for (int k = 0; k < MANY_PROCS; k++) assert_int_equal(syncq_po_join(s, g.first + k), SYNCQ_OK);
    assert_int_equal(atomic_load(&g.errors), 0);
    /* every member has exited: sends to them are refused */
    syncq_po_msg *m;
    assert_int_equal(syncq_po_get(me, 4, &m), SYNCQ_OK);
    assert_int_equal(syncq_po_send(me, g.first, m, SYNCQ_PO_LINK), SYNCQ_EDEAD);
    assert_int_equal(syncq_po_free(me, m), SYNCQ_OK);
    assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
    assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
  }
}

/* ------------------------------------------------ linearizability */

#define LC_PRODUCERS 3
#define LC_SENDS 4
#define LC_RECVS 10

typedef struct lc_run {
  syncq_po_system *sys;
  syncq_po_pid consumer;
  lc_clock clock;
  lc_op ops[LC_PRODUCERS * LC_SENDS + LC_RECVS];
  pthread_barrier_t start;
} lc_run;

typedef struct lc_thread {
  lc_run *run;
  int id;
  syncq_po_proc *self;
} lc_thread;

/* Each thread attaches itself (a process's inbox is read by its own
 * thread only); the consumer's pid is known to all after the barrier. */
static void lc_attach(lc_thread *t) {
  if (syncq_po_attach(t->run->sys, &t->self) != SYNCQ_OK) abort();
  if (t->id == LC_PRODUCERS) t->run->consumer = syncq_po_pid_of(t->self);
  pthread_barrier_wait(&t->run->start);
}

static void *lc_producer(void *p) {
  lc_thread *t = p;
  lc_run *run = t->run;
  lc_attach(t);
  for (int i = 0; i < LC_SENDS; i++) {
    lc_op *op = &run->ops[t->id * LC_SENDS + i];
    syncq_po_msg *m;
    uint64_t v = (uint64_t)(t->id * 100 + i + 1);
    if (syncq_po_get(t->self, sizeof v, &m) != SYNCQ_OK) return NULL;
    memcpy(m->data, &v, sizeof v);
    *op = (lc_op){t->id, LC_QUEUE_ENQ, v, 0, 0, lc_tick(&run->clock), 0};
    op->status = syncq_po_send(t->self, run->consumer, m, (t->id + i) % 2 ? SYNCQ_PO_COPY : SYNCQ_PO_LINK);
    op->done = lc_tick(&run->clock);
    if ((i + t->id) % 2) syncq_yield();
  }
  return NULL;
}

static void *lc_consumer(void *p) {
  lc_thread *t = p;
  lc_run *run = t->run;
  lc_attach(t);
  for (int i = 0; i < LC_RECVS; i++) {
    lc_op *op = &run->ops[LC_PRODUCERS * LC_SENDS + i];
    syncq_po_msg *m = NULL;
    *op = (lc_op){t->id, LC_QUEUE_DEQ, 0, 0, 0, lc_tick(&run->clock), 0};
    op->status = syncq_po_try_recv(t->self, &m);
    op->done = lc_tick(&run->clock);
    if (op->status == SYNCQ_OK) {
      memcpy(&op->ret, m->data, sizeof op->ret);
      syncq_po_free(t->self, m);
    }
    if (i % 3 == 1) syncq_yield();
  }
  return NULL;
}

static lc_spec queue_spec;
/* "mpsc" answers SYNCQ_EBUSY while a sender is between its two steps,
 * even behind completed sends: such a receive takes nothing and is
 * always allowed; its SYNCQ_EMPTY and every message received must still
 * be a FIFO queue's (linearizable). */
static bool on_its_way_apply(void *state, const lc_op *op) {
  if (op->kind == LC_QUEUE_DEQ && op->status == SYNCQ_EBUSY) return true;
  return queue_spec.apply(state, op);
}

static void test_linearizable(void **state) {
  (void)state;
  queue_spec = lc_spec_queue(0);
  lc_spec relaxed = queue_spec;
  relaxed.name = "fifo-queue, on its way allowed";
  relaxed.apply = on_its_way_apply;
  for (int i = 0; i < n_mailboxes(); i++) {
    const char *mb = mailbox(i);
    const lc_spec *spec = strcmp(mb, "mpsc") == 0 ? &relaxed : &queue_spec;
    for (int h = 0; h < HISTORIES; h++) {
      lc_run *run = calloc(1, sizeof *run);
      assert_non_null(run);
      run->sys = new_system(mb, LC_PRODUCERS + 1);
      lc_clock_init(&run->clock);
      pthread_barrier_init(&run->start, NULL, LC_PRODUCERS + 1);
      lc_thread th[LC_PRODUCERS + 1];
      pthread_t tid[LC_PRODUCERS + 1];
      for (int t = 0; t <= LC_PRODUCERS; t++) th[t] = (lc_thread){run, t, NULL};
      for (int t = 0; t <= LC_PRODUCERS; t++)
        assert_int_equal(pthread_create(&tid[t], NULL, t < LC_PRODUCERS ? lc_producer : lc_consumer, &th[t]), 0);
      for (int t = 0; t <= LC_PRODUCERS; t++) pthread_join(tid[t], NULL);
      size_t n = sizeof run->ops / sizeof run->ops[0];
      const char *err = NULL;
      if (!lc_check(spec, run->ops, n, &err)) {
        lc_print(run->ops, n, lc_kind_name);
        fail_msg("%s: history %d is not linearizable%s%s", mb, h, err ? ": " : "", err ? err : "");
      }
      for (int t = 0; t <= LC_PRODUCERS; t++) assert_int_equal(syncq_po_detach(th[t].self), SYNCQ_OK);
      assert_int_equal(syncq_po_destroy(run->sys), SYNCQ_OK);
      pthread_barrier_destroy(&run->start);
      free(run);
    }
  }
}

/* ------------------------------------------------ bad inputs and limits */

static void idle(syncq_po_proc *self, void *arg) {
  (void)arg;
  syncq_po_msg *m;
  if (syncq_po_recv_blocking(self, &m) == SYNCQ_OK) syncq_po_free(self, m);
}

static void test_bad_inputs(void **state) {
  (void)state;
  syncq_po_system *s = NULL;
  assert_int_equal(syncq_po_create(NULL, NULL), SYNCQ_EINVAL);
  syncq_po_config bad_mb = {"no-such-mailbox", 0, 0, 0, PO_TEST_BACKEND, 0, false};
  assert_int_equal(syncq_po_create(&bad_mb, &s), SYNCQ_ENOENT);
  syncq_po_config too_many = {NULL, SYNCQ_PO_MAX_PROCS + 1, 0, 0, PO_TEST_BACKEND, 0, false};
  assert_int_equal(syncq_po_create(&too_many, &s), SYNCQ_EINVAL);
  syncq_po_config tiny_stack = {NULL, 0, 1024, 0, PO_TEST_BACKEND, 0, false};
  assert_int_equal(syncq_po_create(&tiny_stack, &s), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_mailbox_info(-1, NULL, NULL, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_mailbox_info(n_mailboxes(), NULL, NULL, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_destroy(NULL), SYNCQ_EINVAL);
  assert_null(syncq_po_limit_reason(NULL));
  assert_int_equal(syncq_po_count(NULL), 0);
  assert_int_equal(syncq_po_pid_of(NULL), -1);

  for (int i = 0; i < n_mailboxes(); i++) {
    s = new_system(mailbox(i), 4);
    assert_null(syncq_po_limit_reason(s));
    syncq_po_proc *me;
    assert_int_equal(syncq_po_attach(NULL, &me), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_attach(s, NULL), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
    syncq_po_pid mine = syncq_po_pid_of(me), pid;
    assert_int_equal(mine, 0);
    assert_int_equal(syncq_po_spawn(NULL, idle, NULL, &pid), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_spawn(s, NULL, NULL, &pid), SYNCQ_EINVAL);
    syncq_po_msg *m;
    assert_int_equal(syncq_po_get(NULL, 1, &m), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_get(me, 1, NULL), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_get(me, SYNCQ_PO_MAX_MSG + 1, &m), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_try_recv(me, &m), SYNCQ_EMPTY);
    assert_int_equal(syncq_po_try_recv(NULL, &m), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_try_recv(me, NULL), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_recv(NULL, &m), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_recv(me, NULL), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_recv_blocking(NULL, &m), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_recv_blocking(me, NULL), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_free(NULL, NULL), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_free(me, NULL), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_yield(NULL), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_yield(me), SYNCQ_OK);
    void *lo = NULL;
    size_t size = 0;
    assert_int_equal(syncq_po_stack(NULL, &lo, &size), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_stack(me, &lo, &size), SYNCQ_OK); /* an attached thread: its own stack */
    assert_true(lo != NULL && size > 0 && (char *)&lo > (char *)lo && (char *)&lo < (char *)lo + size);
    assert_int_equal(syncq_po_stack(me, NULL, NULL), SYNCQ_OK);
    assert_int_equal(syncq_po_get(me, 0, &m), SYNCQ_OK);
    assert_int_equal(syncq_po_send(NULL, mine, m, SYNCQ_PO_LINK), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_send(me, mine, NULL, SYNCQ_PO_LINK), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_send(me, mine, m, (syncq_po_send_mode)7), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_send(me, -1, m, SYNCQ_PO_LINK), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_send(me, 31, m, SYNCQ_PO_LINK), SYNCQ_EINVAL); /* slot 31: outside the 4 + 16 */
    assert_int_equal(syncq_po_send(me, 3, m, SYNCQ_PO_LINK), SYNCQ_ENOENT);  /* nobody there yet */
    m->len = m->cap + 1;
    assert_int_equal(syncq_po_send(me, mine, m, SYNCQ_PO_LINK), SYNCQ_EINVAL);
    m->len = 0;
    /* a message to oneself arrives */
    assert_int_equal(syncq_po_send(me, mine, m, SYNCQ_PO_COPY), SYNCQ_OK);
    assert_int_equal(syncq_po_try_recv(me, &m), SYNCQ_OK);
    assert_int_equal(m->sender, mine);
    /* joins */
    assert_int_equal(syncq_po_join(NULL, 0), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_join(s, -1), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_join(s, 31), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_join(s, 2), SYNCQ_ENOENT);
    assert_int_equal(syncq_po_join(s, mine), SYNCQ_EINVAL); /* attached, not spawned */
    /* a process that exits is dead to senders */
    assert_int_equal(syncq_po_spawn(s, idle, NULL, &pid), SYNCQ_OK);
    assert_int_equal(syncq_po_destroy(s), SYNCQ_EBUSY); /* still running */
    assert_int_equal(syncq_po_send(me, pid, m, SYNCQ_PO_LINK), SYNCQ_OK);
    assert_int_equal(syncq_po_join(s, pid), SYNCQ_OK);
    assert_int_equal(syncq_po_join(s, pid), SYNCQ_ENOENT); /* joined already */
    assert_int_equal(syncq_po_get(me, 8, &m), SYNCQ_OK);
    assert_int_equal(syncq_po_send(me, pid, m, SYNCQ_PO_LINK), SYNCQ_EDEAD);
    assert_int_equal(syncq_po_send(me, pid, m, SYNCQ_PO_COPY), SYNCQ_EDEAD);
    /* 4 live at most (the joined one left): three more, then the limit;
     * attach still has its reserve */
    syncq_po_proc *other, *third;
    syncq_po_pid pid2;
    assert_int_equal(syncq_po_attach(s, &other), SYNCQ_OK);
    assert_int_equal(syncq_po_spawn(s, idle, NULL, &pid), SYNCQ_OK);
    assert_int_equal(syncq_po_spawn(s, idle, NULL, &pid2), SYNCQ_OK);
    assert_int_equal(syncq_po_spawn(s, idle, NULL, NULL), SYNCQ_ELIMIT);
    assert_string_equal(syncq_po_limit_reason(s), "max_procs");
    assert_int_equal(syncq_po_attach(s, &third), SYNCQ_OK);
    assert_int_equal(syncq_po_detach(third), SYNCQ_OK);
    assert_int_equal(syncq_po_send(me, pid, m, SYNCQ_PO_LINK), SYNCQ_OK); /* lets it exit */
    assert_int_equal(syncq_po_join(s, pid), SYNCQ_OK);
    assert_int_equal(syncq_po_get(me, 0, &m), SYNCQ_OK);
    assert_int_equal(syncq_po_send(me, pid2, m, SYNCQ_PO_LINK), SYNCQ_OK);
    assert_int_equal(syncq_po_join(s, pid2), SYNCQ_OK);
    assert_int_equal(syncq_po_detach(NULL), SYNCQ_EINVAL);
    assert_int_equal(syncq_po_detach(other), SYNCQ_OK);
    assert_int_equal(syncq_po_detach(other), SYNCQ_EINVAL); /* twice */
    assert_int_equal(syncq_po_destroy(s), SYNCQ_EBUSY);     /* me still attached */
    assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
    assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
  }
}

/* Every mailbox but "nonblocking" and "mpsc" takes a lock from the lock
 * registry by name: if the lock family has not registered it, creating
 * the system fails here (SYNCQ_ENOENT) instead of passing. */
static void test_locks_registered(void **state) {
  (void)state;
  for (int i = 0; i < n_mailboxes(); i++) {
    syncq_po_system *s = new_system(mailbox(i), 1);
    assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
  }
}

/* syncq_po_cache_trim gives back what destroyed systems left for the
 * next one (at least the process table of the one destroyed last), and
 * then has nothing left; a system made afterwards maps afresh and works. */
static void test_cache_trim(void **state) {
  (void)state;
  syncq_po_system *s = new_system(mailbox(0), 1);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
  assert_true(syncq_po_cache_trim() > 0);
  assert_int_equal(syncq_po_cache_trim(), 0);
  assert_int_equal(syncq_po_stack_cache_trim(), 0);
  s = new_system(mailbox(0), 1);
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

/* Spawning past RLIMIT_NPROC, in a forked child (as root the limit does
 * not apply, so the child first becomes an unprivileged user). Threads
 * are refused at the limit, named; fibers are not kernel tasks, so the
 * same 200 spawns all succeed on the fiber backend.
 * The fiber system gets one scheduler per PU of the plan
 * (test_plan_pus(): the machine's, or SYNCQ_TEST_PUS), as the default
 * would on that machine, so SYNCQ_TEST_PUS=16 reproduces a 16-PU machine
 * anywhere: there the scheduler threads asked for by number (16, and the
 * main thread) pass the limit of 8, and syncq_po_create() must answer
 * SYNCQ_ELIMIT with nothing left behind (exit 12 when it does not); the
 * default count (0) starts as many schedulers as the limit allows
 * (exit 15 when it fails instead). */
static void test_rlimit_nproc(void **state) {
  (void)state;
  fflush(NULL);
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(10);
    struct rlimit rl = {8, 8};
    if (setrlimit(RLIMIT_NPROC, &rl) != 0) _exit(11);
    syncq_po_system *s;
    if (FIBERS) {
      /* One scheduler per planned PU, asked for by number: all of them or
       * SYNCQ_ELIMIT with nothing left behind (16 schedulers and this
       * process cannot fit under 8 tasks; 2 can). */
      uint32_t scheds = (uint32_t)test_plan_pus();
      syncq_po_config asked = {"mutex", 256, TEST_STACK, 0, PO_TEST_BACKEND, scheds, false};
      int want = scheds + 1 < 8 ? SYNCQ_OK : SYNCQ_ELIMIT;
      int cr = syncq_po_create(&asked, &s);
      if (cr != want) {
        fprintf(stderr, "creating a fiber system with %u schedulers under RLIMIT_NPROC 8: %s, want %s\n", scheds,
                syncq_strerror(cr), syncq_strerror(want));
        _exit(12);
      }
      if (cr == SYNCQ_OK && syncq_po_destroy(s) != SYNCQ_OK) _exit(14);
    }
    /* The default (one scheduler per PU of the machine; on a 16-PU machine
     * more than the limit allows): as many as the kernel allows, not a
     * failure. */
    syncq_po_config cfg = {"mutex", 256, TEST_STACK, 0, PO_TEST_BACKEND, 0, false};
    int cr = syncq_po_create(&cfg, &s);
    if (cr != SYNCQ_OK) {
      fprintf(stderr, "creating a %s system with the default schedulers under RLIMIT_NPROC 8: %s\n", PO_TEST_BACKEND,
              syncq_strerror(cr));
      _exit(15);
    }
    syncq_po_proc *me;
    if (syncq_po_attach(s, &me) != SYNCQ_OK) _exit(13);
    int r = SYNCQ_OK, k = 0;
    syncq_po_pid pids[256];
    for (; k < 200 && r == SYNCQ_OK; k++) r = syncq_po_spawn(s, idle, NULL, &pids[k]);
    const char *why = syncq_po_limit_reason(s);
    int code;
    if (FIBERS) {
      code = r == SYNCQ_OK && k == 200 && why == NULL ? 0 : 24;
    } else {
      k--; /* the refused one */
      code = r == SYNCQ_ELIMIT && why != NULL && strcmp(why, "RLIMIT_NPROC") == 0 ? 0 : 20;
    }
    if (code != 0) fprintf(stderr, "spawn %d: %s, reason %s\n", k, syncq_strerror(r), why ? why : "(none)");
    for (int j = 0; j < k; j++) {
      syncq_po_msg *m;
      if (syncq_po_get(me, 0, &m) != SYNCQ_OK || syncq_po_send(me, pids[j], m, SYNCQ_PO_LINK) != SYNCQ_OK) code = 21;
      if (syncq_po_join(s, pids[j]) != SYNCQ_OK) code = 22;
    }
    syncq_po_detach(me);
    if (syncq_po_destroy(s) != SYNCQ_OK) code = 23;
    _exit(code);
  }
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_true(WIFEXITED(status));
  if (WEXITSTATUS(status) == 10) fail_msg("could not become an unprivileged user to apply RLIMIT_NPROC");
  assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void) {
  test_plan_confine();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_locks_registered),    cmocka_unit_test(test_bad_inputs),
    cmocka_unit_test(test_cache_trim),          cmocka_unit_test(test_rlimit_nproc),
    cmocka_unit_test(test_order_every_mailbox), cmocka_unit_test(test_blocking_pingpong),
    cmocka_unit_test(test_linearizable),        cmocka_unit_test(test_many_processes),
    cmocka_unit_test(test_inline_payload),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
