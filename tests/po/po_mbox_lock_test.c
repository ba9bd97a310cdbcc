/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_mbox_lock_test.c — the lock-based mailboxes ("mutex", "ttas",
 * "mutex-nofree", "two-lock") answer a lock that refuses.
 *
 * The public configuration gives them "pthread-mutex" or "ttas" with
 * their defaults, whose acquire refuses only when the C library fails
 * (SYNCQ_ESYS); a test cannot make glibc fail on cue. So the test puts a
 * lock of its own in the system's place before any mailbox exists (the
 * system's lock field, src/po/po_internal.h: every mailbox takes its lock
 * from there at its slot's first use): a pthread mutex whose acquire can
 * be made to refuse, with the status the test sets.
 *
 * While it refuses, every call that takes the lock answers its status:
 * send (link and copy: the message is still the caller's, the copy goes
 * back, nothing leaks: LeakSanitizer), try_recv, recv, recv_blocking and
 * recv_timeout (nothing read); a send_after's delivery, which has no
 * caller to answer, drops its message. Once the lock admits again the
 * inbox is whole: the message sent then is the one received, and no
 * other is there. Before, the mailboxes ran their critical section
 * without the lock and the calls answered SYNCQ_OK.
 *
 * No threads of the test's own: the main thread, attached as a process
 * (and, for send_after, the thread system's timer thread).
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
#include <pthread.h>
#include <cmocka.h>

#include "po/po_internal.h"
#include "syncq/po.h"

/* 0: the lock admits; else the status its acquire answers. */
static _Atomic(int) refusal;
static _Atomic(uint64_t) refused; /* acquires refused so far */

typedef struct refusing_lock {
  pthread_mutex_t m;
} refusing_lock;

static int rl_init(void *l, const syncq_lock_config *cfg) {
  (void)cfg;
  return pthread_mutex_init(&((refusing_lock *)l)->m, NULL) == 0 ? SYNCQ_OK : SYNCQ_ESYS;
}
static int rl_destroy(void *l) { return pthread_mutex_destroy(&((refusing_lock *)l)->m) == 0 ? SYNCQ_OK : SYNCQ_EBUSY; }
static int rl_lock(void *l, syncq_lock_node *n) {
  (void)n;
  int r = atomic_load(&refusal);
  if (r != 0) {
    atomic_fetch_add(&refused, 1);
    return r;
  }
  return pthread_mutex_lock(&((refusing_lock *)l)->m) == 0 ? SYNCQ_OK : SYNCQ_ESYS;
}
static int rl_trylock(void *l, syncq_lock_node *n) {
  (void)n;
  return pthread_mutex_trylock(&((refusing_lock *)l)->m) == 0 ? SYNCQ_OK : SYNCQ_EBUSY;
}
static int rl_unlock(void *l, syncq_lock_node *n) {
  (void)n;
  return pthread_mutex_unlock(&((refusing_lock *)l)->m) == 0 ? SYNCQ_OK : SYNCQ_ESYS;
}
static const syncq_lock_ops refusing_ops = {
  sizeof(refusing_lock), _Alignof(refusing_lock), rl_init, rl_destroy, rl_lock, rl_trylock, rl_unlock,
};

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static void refused_on(const char *mailbox) {
  syncq_po_config cfg = {mailbox, 4, 0, 0, "thread", 0, false};
  syncq_po_system *sys = NULL;
  assert_int_equal(syncq_po_create(&cfg, &sys), SYNCQ_OK);
  assert_non_null(sys->lock); /* a lock-based mailbox */
  const syncq_lock_ops *own = sys->lock;
  sys->lock = &refusing_ops; /* no slot has a mailbox yet: the first (attach's) takes this one */
  syncq_po_proc *self = NULL;
  assert_int_equal(syncq_po_attach(sys, &self), SYNCQ_OK);
  syncq_po_pid me = syncq_po_pid_of(self);
  syncq_po_msg *m = NULL, *out = NULL;
  assert_int_equal(syncq_po_get(self, 5, &m), SYNCQ_OK);
  memcpy(m->data, "ping", 5);

  atomic_store(&refusal, SYNCQ_ESYS); /* a pthread mutex that fails */
  assert_int_equal(syncq_po_send(self, me, m, SYNCQ_PO_LINK), SYNCQ_ESYS);
  assert_int_equal(syncq_po_send(self, me, m, SYNCQ_PO_COPY), SYNCQ_ESYS);
  assert_int_equal(syncq_po_try_recv(self, &out), SYNCQ_ESYS);
  assert_int_equal(syncq_po_recv(self, &out), SYNCQ_ESYS);
  assert_int_equal(syncq_po_recv_blocking(self, &out), SYNCQ_ESYS);
  assert_int_equal(syncq_po_recv_timeout(self, 1000000, &out), SYNCQ_ESYS);
  assert_int_equal(syncq_po_recv_timeout(self, 0, &out), SYNCQ_ESYS);
  assert_null(out);
  atomic_store(&refusal, SYNCQ_ELIMIT); /* a lock of fixed places, all taken: its status as it is */
  assert_int_equal(syncq_po_send(self, me, m, SYNCQ_PO_LINK), SYNCQ_ELIMIT);
  assert_int_equal(syncq_po_try_recv(self, &out), SYNCQ_ELIMIT);

  /* A delivery with no caller to answer drops the message: wait for the
   * timer thread's refused acquire (the only one: this thread waits). */
  syncq_po_msg *late = NULL;
  assert_int_equal(syncq_po_get(self, 4, &late), SYNCQ_OK);
  memcpy(late->data, "late", 4);
  uint64_t before = atomic_load(&refused);
  assert_int_equal(syncq_po_send_after(self, me, late, 1000000), SYNCQ_OK);
  for (int i = 0; i < 30000 && atomic_load(&refused) == before; i++) sleep_ms(1);
  assert_true(atomic_load(&refused) > before);
  atomic_store(&refusal, 0);

  /* The inbox is whole: the message sent now is the only one there (its
   * bytes: "two-lock" hands them over in another header, copy-out). */
  assert_int_equal(syncq_po_send(self, me, m, SYNCQ_PO_LINK), SYNCQ_OK);
  syncq_po_msg *got = NULL;
  assert_int_equal(syncq_po_try_recv(self, &got), SYNCQ_OK);
  assert_int_equal(got->len, 5);
  assert_string_equal((const char *)got->data, "ping");
  assert_int_equal(syncq_po_try_recv(self, &out), SYNCQ_EMPTY);
  assert_int_equal(syncq_po_free(self, got), SYNCQ_OK);
  assert_int_equal(syncq_po_detach(self), SYNCQ_OK);
  sys->lock = own;
  assert_int_equal(syncq_po_destroy(sys), SYNCQ_OK);
}

static void test_mutex(void **state) {
  (void)state;
  refused_on("mutex");
}
static void test_ttas(void **state) {
  (void)state;
  refused_on("ttas");
}
static void test_mutex_nofree(void **state) {
  (void)state;
  refused_on("mutex-nofree");
}
static void test_two_lock(void **state) {
  (void)state;
  refused_on("two-lock");
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_mutex),
    cmocka_unit_test(test_ttas),
    cmocka_unit_test(test_mutex_nofree),
    cmocka_unit_test(test_two_lock),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
