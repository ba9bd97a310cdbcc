/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_links_test.c — Erlang's links, exit signals and registered names in
 * the postoffice: an abnormal exit kills linked partners and a normal one
 * does not, trapping turns signals into SYNCQ_PO_EXIT messages, unlink,
 * links to dead pids, exit of another process and of oneself, a killed
 * process's calls, 300 linked processes (a chain, a star, all killed at
 * once) dying without a hang, register/whereis/unregister, link and
 * register racing the target's exit, and handles used by another thread.
 *
 * The main thread is an attached process that watches the others with
 * monitors (each exit's reason comes back in its SYNCQ_PO_DOWN) and
 * drives "servants" with command messages. The same source is built once
 * per backend (PO_TEST_BACKEND: "thread", "fiber"). Process counts are
 * fixed numbers.
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
#include <sched.h>
#include <cmocka.h>

#include "syncq/po.h"

#include "test_sanitizer.h"
#ifndef PO_TEST_BACKEND
#define PO_TEST_BACKEND "thread"
#endif
#define TEST_STACK (SANITIZED ? 256u * 1024u : 0u)
#define MS 1000000ull
#define WAIT (60000 * MS) /* a bound that only a hang reaches */
#define MANY 300          /* linked processes */

static syncq_po_system *new_system(uint32_t max_procs) {
  syncq_po_config cfg = {NULL, max_procs, TEST_STACK, 0, PO_TEST_BACKEND, 2, false};
  syncq_po_system *s = NULL;
  int r = syncq_po_create(&cfg, &s);
  if (r != SYNCQ_OK) fail_msg("creating a %s postoffice: %s", PO_TEST_BACKEND, syncq_strerror(r));
  return s;
}

/* Commands to a servant: type, two words. */
enum { CMD_EXIT = 1, CMD_LINK, CMD_UNLINK, CMD_TRAP, CMD_SIGNAL, CMD_PING, REPLY, FORWARD };

static int send_cmd(syncq_po_proc *me, syncq_po_pid to, uint32_t type, int64_t a, int64_t b) {
  syncq_po_msg *m;
  int r = syncq_po_get(me, 2 * sizeof(int64_t), &m);
  if (r != SYNCQ_OK) return r;
  m->type = type;
  memcpy(m->data, &a, sizeof a);
  memcpy((char *)m->data + sizeof a, &b, sizeof b);
  r = syncq_po_send(me, to, m, SYNCQ_PO_LINK);
  if (r != SYNCQ_OK) syncq_po_free(me, m);
  return r;
}

static int64_t word(const syncq_po_msg *m, int i) {
  int64_t w;
  memcpy(&w, (const char *)m->data + (size_t)i * sizeof w, sizeof w);
  return w;
}

/* A servant: obeys commands from main (its arg), answering each with a
 * REPLY carrying the call's status, forwards SYNCQ_PO_EXIT messages to
 * main (FORWARD: pid, reason), and returns when killed. */
static void servant(syncq_po_proc *self, void *arg) {
  syncq_po_pid main_pid = *(const syncq_po_pid *)arg;
  for (;;) {
    syncq_po_msg *m;
    if (syncq_po_recv_blocking(self, &m) != SYNCQ_OK) return; /* SYNCQ_EKILLED */
    uint32_t type = m->type;
    int64_t a = 0, b = 0;
    if (type == SYNCQ_PO_EXIT) {
      syncq_po_exit_msg e;
      memcpy(&e, m->data, sizeof e);
      a = e.pid;
      b = e.reason;
      if (m->sender != e.pid) b = 12345; /* the sender field must name the signal's sender */
    } else if (m->len >= 2 * sizeof(int64_t)) {
      a = word(m, 0);
      b = word(m, 1);
    }
    syncq_po_free(self, m);
    int r = SYNCQ_OK;
    switch (type) {
    case SYNCQ_PO_EXIT:
      if (send_cmd(self, main_pid, FORWARD, a, b) != SYNCQ_OK) return;
      continue;
    case CMD_EXIT:
      syncq_po_set_exit_reason(self, (int32_t)a);
      return;
    case CMD_LINK:
      r = syncq_po_link(self, (syncq_po_pid)a);
      break;
    case CMD_UNLINK:
      r = syncq_po_unlink(self, (syncq_po_pid)a);
      break;
    case CMD_TRAP:
      r = syncq_po_trap_exits(self, a != 0);
      break;
    case CMD_SIGNAL:
      r = syncq_po_exit(self, a < 0 ? syncq_po_pid_of(self) : (syncq_po_pid)a, (int32_t)b);
      break;
    default:
      break; /* CMD_PING */
    }
    if (r == SYNCQ_EKILLED) return;
    if (send_cmd(self, main_pid, REPLY, r, 0) != SYNCQ_OK) return;
  }
}

typedef struct world {
  syncq_po_system *sys;
  syncq_po_proc *me;
  syncq_po_pid main_pid;
} world;

static world start(uint32_t max_procs) {
  world w;
  w.sys = new_system(max_procs);
  assert_string_equal(syncq_po_backend_of(w.sys), PO_TEST_BACKEND);
  assert_int_equal(syncq_po_attach(w.sys, &w.me), SYNCQ_OK);
  w.main_pid = syncq_po_pid_of(w.me);
  return w;
}

static void finish(world *w) {
  syncq_po_msg *m;
  assert_int_equal(syncq_po_recv_timeout(w->me, 0, &m), SYNCQ_ETIMEDOUT); /* nothing unexpected left */
  assert_int_equal(syncq_po_detach(w->me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(w->sys), SYNCQ_OK);
}

/* A watched servant. */
static syncq_po_pid spawn_watched(world *w) {
  syncq_po_pid p;
  assert_int_equal(syncq_po_spawn(w->sys, servant, &w->main_pid, &p), SYNCQ_OK);
  assert_int_equal(syncq_po_monitor(w->me, p, NULL), SYNCQ_OK);
  return p;
}

static syncq_po_msg *next_msg(world *w) {
  syncq_po_msg *m;
  int r = syncq_po_recv_timeout(w->me, WAIT, &m);
  if (r != SYNCQ_OK) fail_msg("main waited in vain: %s", syncq_strerror(r));
  return m;
}

/* The command's status, from the servant's REPLY. */
static int64_t call(world *w, syncq_po_pid to, uint32_t type, int64_t a, int64_t b) {
  assert_int_equal(send_cmd(w->me, to, type, a, b), SYNCQ_OK);
  syncq_po_msg *m = next_msg(w);
  assert_int_equal(m->type, REPLY);
  assert_int_equal(m->sender, to);
  int64_t r = word(m, 0);
  syncq_po_free(w->me, m);
  return r;
}

static syncq_po_down expect_down(world *w) {
  syncq_po_msg *m = next_msg(w);
  assert_int_equal(m->type, SYNCQ_PO_DOWN);
  syncq_po_down d;
  memcpy(&d, m->data, sizeof d);
  syncq_po_free(w->me, m);
  return d;
}

/* The next message is pid's down, with reason. */
static void expect_down_of(world *w, syncq_po_pid pid, int32_t reason) {
  syncq_po_down d = expect_down(w);
  assert_int_equal(d.pid, pid);
  assert_int_equal(d.reason, reason);
  assert_int_equal(syncq_po_join(w->sys, pid), SYNCQ_OK);
}

/* The next message is a forwarded exit signal (pid, reason). */
static void expect_forward(world *w, syncq_po_pid from, syncq_po_pid pid, int32_t reason) {
  syncq_po_msg *m = next_msg(w);
  assert_int_equal(m->type, FORWARD);
  assert_int_equal(m->sender, from);
  assert_int_equal(word(m, 0), pid);
  assert_int_equal(word(m, 1), reason);
  syncq_po_free(w->me, m);
}

/* The downs of a and b (in either order: b's exit and a's race once
 * the signal is out), both with reason; both joined. */
static void expect_two_downs(world *w, syncq_po_pid a, syncq_po_pid b, int32_t reason) {
  syncq_po_down d1 = expect_down(w), d2 = expect_down(w);
  assert_true((d1.pid == a && d2.pid == b) || (d1.pid == b && d2.pid == a));
  assert_int_equal(d1.reason, reason);
  assert_int_equal(d2.reason, reason);
  assert_int_equal(syncq_po_join(w->sys, a), SYNCQ_OK);
  assert_int_equal(syncq_po_join(w->sys, b), SYNCQ_OK);
}

/* a's down with reason, and the trapping b's forward of a's exit signal
 * (pid a, reason), in either order; a joined. */
static void expect_down_and_forward(world *w, syncq_po_pid a, int32_t reason, syncq_po_pid b) {
  bool down = false, fwd = false;
  for (int i = 0; i < 2; i++) {
    syncq_po_msg *m = next_msg(w);
    if (m->type == SYNCQ_PO_DOWN && !down) {
      syncq_po_down d;
      memcpy(&d, m->data, sizeof d);
      assert_int_equal(d.pid, a);
      assert_int_equal(d.reason, reason);
      down = true;
    } else if (m->type == FORWARD && !fwd) {
      assert_int_equal(m->sender, b);
      assert_int_equal(word(m, 0), a);
      assert_int_equal(word(m, 1), reason);
      fwd = true;
    } else {
      fail_msg("unexpected message of type %u", (unsigned)m->type);
    }
    syncq_po_free(w->me, m);
  }
  assert_int_equal(syncq_po_join(w->sys, a), SYNCQ_OK);
}

/* ------------------------------------------------ links */

static void test_link_propagation(void **state) {
  (void)state;
  world w = start(64);
  /* abnormal: the partner dies with the same reason, both ways */
  syncq_po_pid a = spawn_watched(&w), b = spawn_watched(&w);
  assert_int_equal(call(&w, a, CMD_LINK, b, 0), SYNCQ_OK);
  assert_int_equal(call(&w, a, CMD_LINK, b, 0), SYNCQ_OK); /* twice: still one link */
  assert_int_equal(send_cmd(w.me, a, CMD_EXIT, 7, 0), SYNCQ_OK);
  expect_two_downs(&w, a, b, 7);
  /* the other way round: b linked by a, b exits abnormally, a dies */
  a = spawn_watched(&w);
  b = spawn_watched(&w);
  assert_int_equal(call(&w, a, CMD_LINK, b, 0), SYNCQ_OK);
  assert_int_equal(send_cmd(w.me, b, CMD_EXIT, -3, 0), SYNCQ_OK);
  expect_two_downs(&w, a, b, -3);
  /* normal: the partner lives on, and its link is gone */
  a = spawn_watched(&w);
  b = spawn_watched(&w);
  assert_int_equal(call(&w, a, CMD_LINK, b, 0), SYNCQ_OK);
  assert_int_equal(send_cmd(w.me, a, CMD_EXIT, SYNCQ_PO_EXIT_NORMAL, 0), SYNCQ_OK);
  expect_down_of(&w, a, SYNCQ_PO_EXIT_NORMAL);
  assert_int_equal(call(&w, b, CMD_PING, 0, 0), SYNCQ_OK);
  assert_int_equal(call(&w, b, CMD_UNLINK, a, 0), SYNCQ_ENOENT); /* the link fired */
  assert_int_equal(send_cmd(w.me, b, CMD_EXIT, 2, 0), SYNCQ_OK);
  expect_down_of(&w, b, 2);
  finish(&w);
}

static void test_trap_exits(void **state) {
  (void)state;
  world w = start(64);
  syncq_po_pid a = spawn_watched(&w), b = spawn_watched(&w);
  assert_int_equal(call(&w, b, CMD_TRAP, 1, 0), SYNCQ_OK);
  assert_int_equal(call(&w, b, CMD_LINK, a, 0), SYNCQ_OK);
  /* an abnormal exit reaches the trapping b as a message */
  assert_int_equal(send_cmd(w.me, a, CMD_EXIT, 9, 0), SYNCQ_OK);
  expect_down_and_forward(&w, a, 9, b);
  assert_int_equal(call(&w, b, CMD_PING, 0, 0), SYNCQ_OK);
  /* and a normal one too */
  a = spawn_watched(&w);
  assert_int_equal(call(&w, a, CMD_LINK, b, 0), SYNCQ_OK);
  assert_int_equal(send_cmd(w.me, a, CMD_EXIT, SYNCQ_PO_EXIT_NORMAL, 0), SYNCQ_OK);
  expect_down_and_forward(&w, a, SYNCQ_PO_EXIT_NORMAL, b);
  /* a trapping process that exits abnormally still kills its non-trapping partner */
  a = spawn_watched(&w);
  assert_int_equal(call(&w, b, CMD_LINK, a, 0), SYNCQ_OK);
  assert_int_equal(send_cmd(w.me, b, CMD_EXIT, 4, 0), SYNCQ_OK);
  expect_two_downs(&w, a, b, 4);
  /* trapping off again: an abnormal exit kills */
  a = spawn_watched(&w);
  b = spawn_watched(&w);
  assert_int_equal(call(&w, b, CMD_TRAP, 1, 0), SYNCQ_OK);
  assert_int_equal(call(&w, b, CMD_TRAP, 0, 0), SYNCQ_OK);
  assert_int_equal(call(&w, b, CMD_LINK, a, 0), SYNCQ_OK);
  assert_int_equal(send_cmd(w.me, a, CMD_EXIT, 8, 0), SYNCQ_OK);
  expect_two_downs(&w, a, b, 8);
  finish(&w);
}

static void test_unlink(void **state) {
  (void)state;
  world w = start(64);
  syncq_po_pid a = spawn_watched(&w), b = spawn_watched(&w);
  assert_int_equal(call(&w, a, CMD_LINK, b, 0), SYNCQ_OK);
  assert_int_equal(call(&w, b, CMD_UNLINK, a, 0), SYNCQ_OK); /* from the other end */
  assert_int_equal(call(&w, a, CMD_UNLINK, b, 0), SYNCQ_ENOENT);
  assert_int_equal(call(&w, b, CMD_UNLINK, a, 0), SYNCQ_ENOENT);
  assert_int_equal(send_cmd(w.me, a, CMD_EXIT, 5, 0), SYNCQ_OK);
  expect_down_of(&w, a, 5);
  assert_int_equal(call(&w, b, CMD_PING, 0, 0), SYNCQ_OK); /* unharmed */
  /* main links, unlinks, is not harmed either */
  assert_int_equal(syncq_po_link(w.me, b), SYNCQ_OK);
  assert_int_equal(syncq_po_unlink(w.me, b), SYNCQ_OK);
  assert_int_equal(send_cmd(w.me, b, CMD_EXIT, 6, 0), SYNCQ_OK);
  expect_down_of(&w, b, 6);
  assert_int_equal(syncq_po_unlink(w.me, b), SYNCQ_ENOENT);
  /* bad inputs */
  assert_int_equal(syncq_po_unlink(NULL, b), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_unlink(w.me, -1), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_unlink(w.me, 127), SYNCQ_EINVAL); /* slot 127: outside 64 + 16 */
  finish(&w);
}

static void test_link_to_dead(void **state) {
  (void)state;
  world w = start(64);
  syncq_po_pid a = spawn_watched(&w);
  assert_int_equal(send_cmd(w.me, a, CMD_EXIT, 0, 0), SYNCQ_OK);
  assert_int_equal(expect_down(&w).reason, 0);
  /* exited, not joined; joined (stale); never had: a status, not a kill */
  assert_int_equal(syncq_po_link(w.me, a), SYNCQ_EDEAD);
  assert_int_equal(syncq_po_join(w.sys, a), SYNCQ_OK);
  assert_int_equal(syncq_po_link(w.me, a), SYNCQ_EDEAD);
  assert_int_equal(syncq_po_link(w.me, 60), SYNCQ_ENOENT);
  /* a trapping caller: SYNCQ_OK and a noproc exit message at once */
  assert_int_equal(syncq_po_trap_exits(w.me, true), SYNCQ_OK);
  assert_int_equal(syncq_po_link(w.me, a), SYNCQ_OK);
  syncq_po_msg *m = next_msg(&w);
  assert_int_equal(m->type, SYNCQ_PO_EXIT);
  assert_int_equal(m->len, sizeof(syncq_po_exit_msg));
  syncq_po_exit_msg e;
  memcpy(&e, m->data, sizeof e);
  assert_int_equal(e.pid, a);
  assert_int_equal(e.reason, SYNCQ_PO_NOPROC);
  assert_int_equal(m->sender, a);
  syncq_po_free(w.me, m);
  assert_int_equal(syncq_po_unlink(w.me, a), SYNCQ_ENOENT); /* no link was made */
  /* linking to oneself does nothing */
  assert_int_equal(syncq_po_link(w.me, w.main_pid), SYNCQ_OK);
  assert_int_equal(syncq_po_unlink(w.me, w.main_pid), SYNCQ_ENOENT);
  /* main traps: a linked servant's abnormal exit is a message to main */
  syncq_po_pid b = spawn_watched(&w);
  assert_int_equal(syncq_po_link(w.me, b), SYNCQ_OK);
  assert_int_equal(send_cmd(w.me, b, CMD_EXIT, 17, 0), SYNCQ_OK);
  syncq_po_msg *x = next_msg(&w), *y = next_msg(&w); /* its down and its exit, in either order */
  if (x->type != SYNCQ_PO_EXIT) {
    syncq_po_msg *t = x;
    x = y;
    y = t;
  }
  assert_int_equal(x->type, SYNCQ_PO_EXIT);
  assert_int_equal(y->type, SYNCQ_PO_DOWN);
  memcpy(&e, x->data, sizeof e);
  assert_int_equal(e.pid, b);
  assert_int_equal(e.reason, 17);
  syncq_po_free(w.me, x);
  syncq_po_free(w.me, y);
  assert_int_equal(syncq_po_join(w.sys, b), SYNCQ_OK);
  /* bad inputs */
  assert_int_equal(syncq_po_link(NULL, b), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_link(w.me, -1), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_link(w.me, 127), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_trap_exits(NULL, true), SYNCQ_EINVAL);
  finish(&w);
}

/* ------------------------------------------------ exit signals */

static void test_exit_other(void **state) {
  (void)state;
  world w = start(64);
  /* an abnormal signal kills a process parked in recv */
  syncq_po_pid a = spawn_watched(&w);
  assert_int_equal(call(&w, a, CMD_PING, 0, 0), SYNCQ_OK);
  assert_int_equal(syncq_po_exit(w.me, a, 3), SYNCQ_OK);
  expect_down_of(&w, a, 3);
  /* a normal one is ignored by a process that does not trap */
  a = spawn_watched(&w);
  assert_int_equal(syncq_po_exit(w.me, a, SYNCQ_PO_EXIT_NORMAL), SYNCQ_OK);
  assert_int_equal(call(&w, a, CMD_PING, 0, 0), SYNCQ_OK);
  /* a trapping process gets signals as messages, normal ones too ... */
  assert_int_equal(call(&w, a, CMD_TRAP, 1, 0), SYNCQ_OK);
  assert_int_equal(syncq_po_exit(w.me, a, 4), SYNCQ_OK);
  expect_forward(&w, a, w.main_pid, 4);
  assert_int_equal(syncq_po_exit(w.me, a, SYNCQ_PO_EXIT_NORMAL), SYNCQ_OK);
  expect_forward(&w, a, w.main_pid, SYNCQ_PO_EXIT_NORMAL);
  assert_int_equal(syncq_po_exit(w.me, a, SYNCQ_PO_EXIT_KILLED), SYNCQ_OK); /* killed is a reason like others */
  expect_forward(&w, a, w.main_pid, SYNCQ_PO_EXIT_KILLED);
  /* ... but not kill: killed, with reason killed */
  assert_int_equal(syncq_po_exit(w.me, a, SYNCQ_PO_EXIT_KILL), SYNCQ_OK);
  expect_down_of(&w, a, SYNCQ_PO_EXIT_KILLED);
  /* one process signalling another */
  a = spawn_watched(&w);
  syncq_po_pid b = spawn_watched(&w);
  assert_int_equal(send_cmd(w.me, a, CMD_SIGNAL, b, 14), SYNCQ_OK);
  for (int i = 0; i < 2; i++) { /* a's reply and b's down, in either order */
    syncq_po_msg *m = next_msg(&w);
    if (m->type == REPLY) {
      assert_int_equal(m->sender, a);
      assert_int_equal(word(m, 0), SYNCQ_OK);
    } else {
      assert_int_equal(m->type, SYNCQ_PO_DOWN);
      syncq_po_down d;
      memcpy(&d, m->data, sizeof d);
      assert_int_equal(d.pid, b);
      assert_int_equal(d.reason, 14);
    }
    syncq_po_free(w.me, m);
  }
  assert_int_equal(syncq_po_join(w.sys, b), SYNCQ_OK);
  assert_int_equal(call(&w, a, CMD_SIGNAL, b, 14), SYNCQ_EDEAD); /* joined: stale */
  assert_int_equal(call(&w, a, CMD_SIGNAL, 60, 14), SYNCQ_ENOENT);
  assert_int_equal(call(&w, a, CMD_SIGNAL, 127, 14), SYNCQ_EINVAL);
  assert_int_equal(call(&w, a, CMD_SIGNAL, b, SYNCQ_PO_NOPROC), SYNCQ_EINVAL);
  /* the first killing signal's reason stands (an attached thread: it
   * notices only at its next call, so both signals find it) */
  syncq_po_proc *other;
  assert_int_equal(syncq_po_attach(w.sys, &other), SYNCQ_OK);
  syncq_po_pid op = syncq_po_pid_of(other);
  assert_int_equal(syncq_po_monitor(w.me, op, NULL), SYNCQ_OK);
  assert_int_equal(syncq_po_exit(w.me, op, 21), SYNCQ_OK);
  assert_int_equal(syncq_po_exit(w.me, op, 22), SYNCQ_OK);
  assert_int_equal(syncq_po_exit(w.me, op, SYNCQ_PO_EXIT_KILL), SYNCQ_OK);
  assert_int_equal(syncq_po_yield(other), SYNCQ_EKILLED);
  assert_int_equal(syncq_po_detach(other), SYNCQ_OK);
  syncq_po_down d = expect_down(&w);
  assert_int_equal(d.pid, op);
  assert_int_equal(d.reason, 21);
  assert_int_equal(syncq_po_exit(w.me, a, 1), SYNCQ_OK);
  expect_down_of(&w, a, 1);
  /* bad inputs */
  assert_int_equal(syncq_po_exit(NULL, a, 1), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_exit(w.me, -1, 1), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_exit(w.me, 127, 1), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_set_exit_reason(w.me, SYNCQ_PO_EXIT_KILL), SYNCQ_EINVAL);
  finish(&w);
}

static void test_exit_self(void **state) {
  (void)state;
  world w = start(64);
  /* not trapping: the call says SYNCQ_EKILLED and the process returns */
  syncq_po_pid a = spawn_watched(&w);
  assert_int_equal(send_cmd(w.me, a, CMD_SIGNAL, -1, 6), SYNCQ_OK);
  expect_down_of(&w, a, 6);
  /* a normal signal to oneself ends the process too (Erlang) */
  a = spawn_watched(&w);
  assert_int_equal(send_cmd(w.me, a, CMD_SIGNAL, -1, SYNCQ_PO_EXIT_NORMAL), SYNCQ_OK);
  expect_down_of(&w, a, SYNCQ_PO_EXIT_NORMAL);
  /* trapping: a message to itself, the process lives on */
  a = spawn_watched(&w);
  assert_int_equal(call(&w, a, CMD_TRAP, 1, 0), SYNCQ_OK);
  assert_int_equal(call(&w, a, CMD_SIGNAL, -1, 6), SYNCQ_OK);
  expect_forward(&w, a, a, 6);
  /* kill is kill, trapping or not */
  assert_int_equal(send_cmd(w.me, a, CMD_SIGNAL, -1, SYNCQ_PO_EXIT_KILL), SYNCQ_OK);
  expect_down_of(&w, a, SYNCQ_PO_EXIT_KILLED);
  /* an attached thread kills itself: EKILLED, then it detaches */
  syncq_po_proc *other;
  assert_int_equal(syncq_po_attach(w.sys, &other), SYNCQ_OK);
  syncq_po_pid op = syncq_po_pid_of(other);
  assert_int_equal(syncq_po_monitor(w.me, op, NULL), SYNCQ_OK);
  assert_int_equal(send_cmd(w.me, op, CMD_PING, 0, 0), SYNCQ_OK);
  assert_int_equal(syncq_po_exit(other, op, 31), SYNCQ_EKILLED);
  syncq_po_msg *m;
  assert_int_equal(syncq_po_try_recv(other, &m), SYNCQ_EKILLED); /* a message waits: the kill comes first */
  assert_int_equal(syncq_po_recv_timeout(other, 0, &m), SYNCQ_EKILLED);
  assert_int_equal(syncq_po_detach(other), SYNCQ_OK);
  syncq_po_down d = expect_down(&w);
  assert_int_equal(d.pid, op);
  assert_int_equal(d.reason, 31);
  finish(&w);
}

/* What a killed process's calls say, checked by the process itself. */
typedef struct doomed_arg {
  syncq_po_pid main_pid;
  int how;            /* 0: recv_blocking, 1: recv_timeout, 2: sleep, 3: recv, 4: yield loop */
  _Atomic int result; /* 1: every check passed; -n: check n failed */
} doomed_arg;

static void doomed(syncq_po_proc *self, void *arg) {
  doomed_arg *a = arg;
  syncq_po_msg *m = NULL;
  int r;
  if (send_cmd(self, a->main_pid, REPLY, 0, 0) != SYNCQ_OK) return; /* about to wait */
  switch (a->how) {
  case 0:
    r = syncq_po_recv_blocking(self, &m);
    break;
  case 1:
    r = syncq_po_recv_timeout(self, WAIT, &m);
    break;
  case 2:
    r = syncq_po_sleep(self, WAIT);
    break;
  case 3:
    r = syncq_po_recv(self, &m);
    break;
  default:
    while ((r = syncq_po_yield(self)) == SYNCQ_OK) {
    }
    break;
  }
  int fail = 0;
  syncq_po_msg *held = NULL;
#define CHECK(n, cond) \
  if (fail == 0 && !(cond)) fail = n
  CHECK(1, r == SYNCQ_EKILLED);
  CHECK(2, syncq_po_get(self, 8, &held) == SYNCQ_EKILLED);
  CHECK(3, syncq_po_try_recv(self, &m) == SYNCQ_EKILLED);
  CHECK(4, syncq_po_recv(self, &m) == SYNCQ_EKILLED);
  CHECK(5, syncq_po_recv_blocking(self, &m) == SYNCQ_EKILLED);
  CHECK(6, syncq_po_recv_timeout(self, 0, &m) == SYNCQ_EKILLED);
  CHECK(7, syncq_po_recv_timeout(self, WAIT, &m) == SYNCQ_EKILLED);
  CHECK(8, syncq_po_sleep(self, WAIT) == SYNCQ_EKILLED);
  CHECK(9, syncq_po_yield(self) == SYNCQ_EKILLED);
  CHECK(10, syncq_po_monitor(self, a->main_pid, NULL) == SYNCQ_EKILLED);
  CHECK(11, syncq_po_exit(self, a->main_pid, 1) == SYNCQ_EKILLED);
  CHECK(12, syncq_po_link(self, a->main_pid) == SYNCQ_EKILLED);
  CHECK(13, syncq_po_trap_exits(self, true) == SYNCQ_EKILLED);
  CHECK(14, syncq_po_set_exit_reason(self, 99) == SYNCQ_EKILLED);
  CHECK(15, syncq_po_unlink(self, a->main_pid) == SYNCQ_ENOENT); /* still works */
  CHECK(16, syncq_po_pid_of(self) >= 0);
  atomic_store(&a->result, fail == 0 ? 1 : -fail);
#undef CHECK
}

static void test_killed_calls(void **state) {
  (void)state;
  world w = start(64);
  for (int how = 0; how < 5; how++) {
    doomed_arg da = {w.main_pid, how, 0};
    syncq_po_pid p;
    assert_int_equal(syncq_po_spawn(w.sys, doomed, &da, &p), SYNCQ_OK);
    assert_int_equal(syncq_po_monitor(w.me, p, NULL), SYNCQ_OK);
    syncq_po_msg *m = next_msg(&w);
    assert_int_equal(m->type, REPLY);
    syncq_po_free(w.me, m);
    assert_int_equal(syncq_po_exit(w.me, p, 40 + how), SYNCQ_OK);
    expect_down_of(&w, p, 40 + how);
    if (atomic_load(&da.result) != 1) fail_msg("waiting in mode %d: check %d failed", how, -atomic_load(&da.result));
  }
  finish(&w);
}

/* ------------------------------------------------ many links */

/* Links to the pid in its arg (if any), tells main, waits to be killed. */
typedef struct chain_arg {
  syncq_po_pid main_pid;
  syncq_po_pid partner; /* -1: none */
} chain_arg;

static void chain_link(syncq_po_proc *self, void *arg) {
  const chain_arg *a = arg;
  int r = a->partner >= 0 ? syncq_po_link(self, a->partner) : SYNCQ_OK;
  if (send_cmd(self, a->main_pid, REPLY, r, 0) != SYNCQ_OK) return;
  syncq_po_msg *m;
  while (syncq_po_recv_blocking(self, &m) == SYNCQ_OK) syncq_po_free(self, m);
}

/* Spawn MANY chain_links, the i-th linking to partner(i), wait until all
 * are linked, watch them. */
static void spawn_many(world *w, syncq_po_pid *pids, chain_arg *args, int kind) {
  for (int i = 0; i < MANY; i++) {
    args[i].main_pid = w->main_pid;
    args[i].partner = kind == 0 ? (i > 0 ? pids[i - 1] : -1) : (i > 0 ? pids[0] : -1); /* chain, star */
    assert_int_equal(syncq_po_spawn(w->sys, chain_link, &args[i], &pids[i]), SYNCQ_OK);
    assert_int_equal(syncq_po_monitor(w->me, pids[i], NULL), SYNCQ_OK);
    syncq_po_msg *m = next_msg(w); /* linked before the next one links to it */
    assert_int_equal(m->type, REPLY);
    assert_int_equal(word(m, 0), SYNCQ_OK);
    syncq_po_free(w->me, m);
  }
}

/* Every one of MANY goes down, with reason (any reason when reason is
 * SYNCQ_PO_NOPROC), exactly once; all joined. */
static void expect_all_down(world *w, const syncq_po_pid *pids, int32_t reason) {
  static int seen[MANY];
  memset(seen, 0, sizeof seen);
  for (int n = 0; n < MANY; n++) {
    syncq_po_down d = expect_down(w);
    if (reason != SYNCQ_PO_NOPROC) assert_int_equal(d.reason, reason);
    int k = 0;
    while (k < MANY && pids[k] != d.pid) k++;
    assert_true(k < MANY);
    seen[k]++;
  }
  for (int k = 0; k < MANY; k++) assert_int_equal(seen[k], 1);
  for (int k = 0; k < MANY; k++) assert_int_equal(syncq_po_join(w->sys, pids[k]), SYNCQ_OK);
}

static void test_many_linked(void **state) {
  (void)state;
  static syncq_po_pid pids[MANY];
  static chain_arg args[MANY];
  world w = start(MANY + 8);
  /* a chain killed at its head: the signal runs down all of it */
  spawn_many(&w, pids, args, 0);
  assert_int_equal(syncq_po_exit(w.me, pids[0], 13), SYNCQ_OK);
  expect_all_down(&w, pids, 13);
  /* a star: a leaf's abnormal exit kills the centre, which kills the rest */
  spawn_many(&w, pids, args, 1);
  assert_int_equal(syncq_po_exit(w.me, pids[MANY / 2], 21), SYNCQ_OK);
  expect_all_down(&w, pids, 21);
  /* a star all killed at once: exits race each other's links */
  spawn_many(&w, pids, args, 1);
  for (int i = MANY - 1; i >= 0; i--) {
    int r = syncq_po_exit(w.me, pids[i], SYNCQ_PO_EXIT_KILL);
    assert_true(r == SYNCQ_OK || r == SYNCQ_EDEAD); /* EDEAD: a link's signal was faster */
  }
  expect_all_down(&w, pids, SYNCQ_PO_EXIT_KILLED);
  /* a chain killed at its tail and in the middle at once */
  spawn_many(&w, pids, args, 0);
  assert_int_equal(syncq_po_exit(w.me, pids[MANY - 1], 5), SYNCQ_OK);
  assert_int_equal(syncq_po_exit(w.me, pids[MANY / 3], 5), SYNCQ_OK);
  expect_all_down(&w, pids, 5);
  assert_int_equal(syncq_po_live(w.sys), 1u); /* main */
  finish(&w);
}

/* ------------------------------------------------ names */

static void test_names(void **state) {
  (void)state;
  world w = start(64);
  syncq_po_pid a = spawn_watched(&w), b = spawn_watched(&w), p;
  assert_int_equal(syncq_po_whereis(w.sys, "alpha", &p), SYNCQ_ENOENT); /* no table yet */
  assert_int_equal(syncq_po_register(w.sys, "alpha", a), SYNCQ_OK);
  assert_int_equal(syncq_po_whereis(w.sys, "alpha", &p), SYNCQ_OK);
  assert_int_equal(p, a);
  assert_int_equal(syncq_po_register(w.sys, "alpha", b), SYNCQ_EEXIST); /* taken */
  assert_int_equal(syncq_po_register(w.sys, "alpha", a), SYNCQ_EEXIST);
  assert_int_equal(syncq_po_register(w.sys, "beta", a), SYNCQ_EEXIST); /* a has a name */
  assert_int_equal(syncq_po_register(w.sys, "beta", b), SYNCQ_OK);
  assert_int_equal(syncq_po_whereis(w.sys, "beta", &p), SYNCQ_OK);
  assert_int_equal(p, b);
  assert_int_equal(syncq_po_whereis(w.sys, "alph", &p), SYNCQ_ENOENT);
  /* unregister: the name and the process are free again */
  assert_int_equal(syncq_po_unregister(w.sys, "alpha"), SYNCQ_OK);
  assert_int_equal(syncq_po_unregister(w.sys, "alpha"), SYNCQ_ENOENT);
  assert_int_equal(syncq_po_whereis(w.sys, "alpha", &p), SYNCQ_ENOENT);
  assert_int_equal(syncq_po_register(w.sys, "gamma", a), SYNCQ_OK);
  /* an exit takes the name: whereis never answers with a dead pid */
  assert_int_equal(send_cmd(w.me, b, CMD_EXIT, 0, 0), SYNCQ_OK);
  expect_down_of(&w, b, 0);
  assert_int_equal(syncq_po_whereis(w.sys, "beta", &p), SYNCQ_ENOENT);
  assert_int_equal(syncq_po_unregister(w.sys, "beta"), SYNCQ_ENOENT);
  assert_int_equal(syncq_po_register(w.sys, "beta", b), SYNCQ_EDEAD);   /* stale */
  assert_int_equal(syncq_po_register(w.sys, "beta", 60), SYNCQ_ENOENT); /* never had */
  /* re-register after the exit: a fresh process takes the name */
  syncq_po_pid c = spawn_watched(&w);
  assert_int_equal(syncq_po_register(w.sys, "beta", c), SYNCQ_OK);
  assert_int_equal(syncq_po_whereis(w.sys, "beta", &p), SYNCQ_OK);
  assert_int_equal(p, c);
  assert_int_equal(call(&w, p, CMD_PING, 0, 0), SYNCQ_OK); /* reachable by its name */
  /* a killed process's name goes too */
  assert_int_equal(syncq_po_exit(w.me, c, SYNCQ_PO_EXIT_KILL), SYNCQ_OK);
  expect_down_of(&w, c, SYNCQ_PO_EXIT_KILLED);
  assert_int_equal(syncq_po_whereis(w.sys, "beta", &p), SYNCQ_ENOENT);
  /* an attached thread's name goes when it detaches */
  syncq_po_proc *other;
  assert_int_equal(syncq_po_attach(w.sys, &other), SYNCQ_OK);
  assert_int_equal(syncq_po_register(w.sys, "main2", syncq_po_pid_of(other)), SYNCQ_OK);
  assert_int_equal(syncq_po_detach(other), SYNCQ_OK);
  assert_int_equal(syncq_po_whereis(w.sys, "main2", &p), SYNCQ_ENOENT);
  /* many names: the table grows; each answers with its own */
  enum { NAMED = 40 };
  syncq_po_pid named[NAMED];
  char buf[SYNCQ_PO_NAME_MAX + 2];
  for (int i = 0; i < NAMED; i++) {
    named[i] = spawn_watched(&w);
    snprintf(buf, sizeof buf, "worker-%d", i);
    assert_int_equal(syncq_po_register(w.sys, buf, named[i]), SYNCQ_OK);
  }
  for (int i = 0; i < NAMED; i++) {
    snprintf(buf, sizeof buf, "worker-%d", i);
    assert_int_equal(syncq_po_whereis(w.sys, buf, &p), SYNCQ_OK);
    assert_int_equal(p, named[i]);
  }
  for (int i = 0; i < NAMED; i++) assert_int_equal(syncq_po_exit(w.me, named[i], 1), SYNCQ_OK);
  for (int i = 0; i < NAMED; i++) {
    syncq_po_down d = expect_down(&w);
    assert_int_equal(d.reason, 1);
    assert_int_equal(syncq_po_join(w.sys, d.pid), SYNCQ_OK);
  }
  for (int i = 0; i < NAMED; i++) {
    snprintf(buf, sizeof buf, "worker-%d", i);
    assert_int_equal(syncq_po_whereis(w.sys, buf, &p), SYNCQ_ENOENT);
  }
  /* the longest name fits, one byte more does not */
  memset(buf, 'n', sizeof buf);
  buf[SYNCQ_PO_NAME_MAX] = '\0';
  assert_int_equal(syncq_po_register(w.sys, buf, w.main_pid), SYNCQ_OK);
  assert_int_equal(syncq_po_whereis(w.sys, buf, &p), SYNCQ_OK);
  assert_int_equal(p, w.main_pid);
  assert_int_equal(syncq_po_unregister(w.sys, buf), SYNCQ_OK);
  buf[SYNCQ_PO_NAME_MAX] = 'n';
  buf[SYNCQ_PO_NAME_MAX + 1] = '\0';
  assert_int_equal(syncq_po_register(w.sys, buf, w.main_pid), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_whereis(w.sys, buf, &p), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_unregister(w.sys, buf), SYNCQ_EINVAL);
  /* bad inputs */
  assert_int_equal(syncq_po_register(NULL, "x", a), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_register(w.sys, NULL, a), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_register(w.sys, "", a), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_register(w.sys, "x", -1), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_register(w.sys, "x", 127), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_whereis(NULL, "gamma", &p), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_whereis(w.sys, NULL, &p), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_whereis(w.sys, "gamma", NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_whereis(w.sys, "", &p), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_unregister(NULL, "gamma"), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_unregister(w.sys, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_unregister(w.sys, ""), SYNCQ_EINVAL);
  /* a's name stays with it until the end */
  assert_int_equal(syncq_po_whereis(w.sys, "gamma", &p), SYNCQ_OK);
  assert_int_equal(p, a);
  assert_int_equal(send_cmd(w.me, a, CMD_EXIT, 0, 0), SYNCQ_OK);
  expect_down_of(&w, a, 0);
  assert_int_equal(syncq_po_whereis(w.sys, "gamma", &p), SYNCQ_ENOENT);
  finish(&w);
}

/* A named process's table is freed with the system (ASan: no leak). */
static void test_names_destroyed(void **state) {
  (void)state;
  world w = start(8);
  assert_int_equal(syncq_po_register(w.sys, "kept", w.main_pid), SYNCQ_OK);
  syncq_po_pid a = spawn_watched(&w), b = spawn_watched(&w);
  assert_int_equal(call(&w, a, CMD_LINK, b, 0), SYNCQ_OK);
  assert_int_equal(call(&w, a, CMD_TRAP, 1, 0), SYNCQ_OK);
  assert_int_equal(call(&w, b, CMD_TRAP, 1, 0), SYNCQ_OK);
  assert_int_equal(syncq_po_exit(w.me, a, SYNCQ_PO_EXIT_KILL), SYNCQ_OK);
  expect_down_and_forward(&w, a, SYNCQ_PO_EXIT_KILLED, b);
  assert_int_equal(syncq_po_exit(w.me, b, SYNCQ_PO_EXIT_KILL), SYNCQ_OK);
  expect_down_of(&w, b, SYNCQ_PO_EXIT_KILLED);
  syncq_po_msg *m;
  assert_int_equal(syncq_po_recv_timeout(w.me, 0, &m), SYNCQ_ETIMEDOUT);
  assert_int_equal(syncq_po_detach(w.me), SYNCQ_OK); /* drops "kept" */
  assert_int_equal(syncq_po_destroy(w.sys), SYNCQ_OK);
}

/* ------------------------------------------------ races and callers */

static void quitter(syncq_po_proc *self, void *arg) {
  (void)arg;
  syncq_po_set_exit_reason(self, 3);
}

/* link and register racing the target's exit: a trapping main gets
 * exactly one exit message per link (the reason, or noproc when the
 * process was gone), and a name never outlives its process. */
static void test_link_races(void **state) {
  (void)state;
  enum { ROUNDS = 300 };
  world w = start(16);
  assert_int_equal(syncq_po_trap_exits(w.me, true), SYNCQ_OK);
  int reasons = 0, noprocs = 0, named = 0;
  for (int i = 0; i < ROUNDS; i++) {
    syncq_po_pid b, p;
    assert_int_equal(syncq_po_spawn(w.sys, quitter, NULL, &b), SYNCQ_OK);
    /* a delay growing over the rounds, so some calls come before the
     * exit, some during it and some after */
    for (volatile int k = 0; k < (i % 100) * 300; k++) {
    }
    int rr = syncq_po_register(w.sys, "racer", b);
    assert_true(rr == SYNCQ_OK || rr == SYNCQ_EDEAD);
    named += rr == SYNCQ_OK;
    assert_int_equal(syncq_po_link(w.me, b), SYNCQ_OK);
    syncq_po_msg *m = next_msg(&w);
    assert_int_equal(m->type, SYNCQ_PO_EXIT);
    syncq_po_exit_msg e;
    memcpy(&e, m->data, sizeof e);
    syncq_po_free(w.me, m);
    assert_int_equal(e.pid, b);
    assert_true(e.reason == 3 || e.reason == SYNCQ_PO_NOPROC);
    reasons += e.reason == 3;
    noprocs += e.reason == SYNCQ_PO_NOPROC;
    assert_int_equal(syncq_po_join(w.sys, b), SYNCQ_OK);
    assert_int_equal(syncq_po_whereis(w.sys, "racer", &p), SYNCQ_ENOENT);
    assert_int_equal(syncq_po_unlink(w.me, b), SYNCQ_ENOENT); /* fired or never made */
  }
  syncq_po_msg *m;
  assert_int_equal(syncq_po_recv_timeout(w.me, 20 * MS, &m), SYNCQ_ETIMEDOUT); /* one each, no more */
  assert_int_equal(reasons + noprocs, ROUNDS);
  print_message("link racing exit (%s): %d of %d linked in time, %d named in time\n", PO_TEST_BACKEND, reasons, ROUNDS,
                named);
  finish(&w);
}

/* A process handle of another thread: calls taking it are refused. */
typedef struct foreign {
  syncq_po_system *sys;
  _Atomic(syncq_po_proc *) handle;
  _Atomic int done;
} foreign;

static void *foreign_thread(void *arg) {
  foreign *f = arg;
  syncq_po_proc *h;
  if (syncq_po_attach(f->sys, &h) != SYNCQ_OK) return NULL;
  atomic_store(&f->handle, h);
  while (atomic_load(&f->done) == 0) sched_yield();
  syncq_po_detach(h);
  return NULL;
}

static void test_not_self(void **state) {
  (void)state;
  world w = start(16);
  foreign f = {w.sys, NULL, 0};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, foreign_thread, &f), 0);
  syncq_po_proc *h;
  while ((h = atomic_load(&f.handle)) == NULL) sched_yield();
  assert_int_equal(syncq_po_exit(h, w.main_pid, 1), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_link(h, w.main_pid), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_unlink(h, w.main_pid), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_trap_exits(h, true), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_unlink(w.me, syncq_po_pid_of(h)), SYNCQ_ENOENT); /* nothing was linked */
  atomic_store(&f.done, 1);
  assert_int_equal(pthread_join(t, NULL), 0);
  finish(&w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_link_propagation), cmocka_unit_test(test_trap_exits),  cmocka_unit_test(test_unlink),
    cmocka_unit_test(test_link_to_dead),     cmocka_unit_test(test_exit_other),  cmocka_unit_test(test_exit_self),
    cmocka_unit_test(test_killed_calls),     cmocka_unit_test(test_many_linked), cmocka_unit_test(test_names),
    cmocka_unit_test(test_names_destroyed),  cmocka_unit_test(test_link_races),  cmocka_unit_test(test_not_self),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
