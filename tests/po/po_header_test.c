/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_header_test.c — the postoffice's message headers (src/po/header.c):
 * where they come from (a fiber scheduler's cache and slab chunk, a
 * process's free list, the shared slab) and where they go.
 *
 *  - Never handed out twice: four fibers on two schedulers and two
 *    attached threads send each other 120,000 messages (by link and by
 *    copy, payloads inline and malloc'd), every one's bytes checked, and
 *    every header a process holds (got, received) recorded in a set that
 *    refuses a second holder; for every mailbox, and once more in a
 *    system that reuses the last one's slab chunks.
 *  - No leak: systems destroyed with messages of large payloads still in
 *    mailboxes, in free lists and in the schedulers' caches, one after
 *    another on the same chunks (the ASan build's LeakSanitizer and its
 *    double-free check read it).
 *
 * Fixed counts: PARTS processes, PER messages each, 2 schedulers.
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

#include "syncq/po.h"

enum {
  FIBERS = 4,
  THREADS = 2,
  PARTS = FIBERS + THREADS,
  PER = 20000, /* messages each participant sends: 120,000 in all */
  GO = 1,
  DATA = 2,
  MIN_LEN = 8,
  LEN_SPAN = 57, /* payloads of 8 .. 64 bytes: inline (<= SYNCQ_PO_INLINE_MSG) and malloc'd */
  HELD_SLOTS = 1 << 18
};

/* ---- the set of headers held by a process (a mutex: fibers hold it
 * without switching) ---- */

static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static const syncq_po_msg *held[HELD_SLOTS]; /* open addressing; (void *)1 = deleted */
#define HELD_GONE ((const syncq_po_msg *)1)

static size_t held_hash(const syncq_po_msg *m) {
  uint64_t x = (uint64_t)(uintptr_t)m * 0x9e3779b97f4a7c15ull;
  return (size_t)(x >> 46) & (HELD_SLOTS - 1);
}

/* Record m as held; false when it is held already (handed out twice). */
static bool held_add(const syncq_po_msg *m) {
  pthread_mutex_lock(&held_lock);
  size_t i = held_hash(m), free_at = SIZE_MAX;
  bool ok = true;
  for (;; i = (i + 1) & (HELD_SLOTS - 1)) {
    if (held[i] == m) {
      ok = false;
      break;
    }
    if (held[i] == HELD_GONE && free_at == SIZE_MAX) free_at = i;
    if (held[i] == NULL) {
      held[free_at != SIZE_MAX ? free_at : i] = m;
      break;
    }
  }
  pthread_mutex_unlock(&held_lock);
  return ok;
}

/* m is no longer held; false when it was not. */
static bool held_remove(const syncq_po_msg *m) {
  pthread_mutex_lock(&held_lock);
  size_t i = held_hash(m);
  bool ok = false;
  for (; held[i] != NULL; i = (i + 1) & (HELD_SLOTS - 1))
    if (held[i] == m) {
      held[i] = HELD_GONE;
      ok = true;
      break;
    }
  pthread_mutex_unlock(&held_lock);
  return ok;
}

static void held_reset(void) { memset(held, 0, sizeof held); }

/* ---- one exchange ---- */

typedef struct exchange {
  syncq_po_system *sys;
  syncq_po_pid pids[PARTS];
  _Atomic(int) errors;
  _Atomic(int) total; /* messages received and checked */
  char first_error[160];
  _Atomic(int) error_once;
  pthread_barrier_t attached;
  pthread_barrier_t started; /* the GO messages are sent */
  syncq_po_proc *threads[THREADS];
} exchange;

static void error(exchange *x, const char *what, int a, int b) {
  if (atomic_fetch_add(&x->error_once, 1) == 0)
    snprintf(x->first_error, sizeof x->first_error, "%s (%d, %d)", what, a, b);
  atomic_fetch_add(&x->errors, 1);
}

static int target(int id, int seq) { return (id + 1 + seq % (PARTS - 1)) % PARTS; }
static size_t length(int id, int seq) { return MIN_LEN + (size_t)((seq * 7 + id) % LEN_SPAN); }
static unsigned char byte(int id, int seq, size_t k) { return (unsigned char)(id * 131 + seq * 7 + (int)k); }

typedef struct part {
  exchange *x;
  int id;
  int last[PARTS]; /* the last seq received from each sender */
  int expected, received;
  bool go;
} part;

/* Check and count one received message, then free it. */
static void take(part *p, syncq_po_proc *self, syncq_po_msg *m) {
  exchange *x = p->x;
  if (!held_add(m)) error(x, "a received header is held by another process", p->id, 0);
  if (m->type == GO) {
    p->go = true;
  } else if (m->type != DATA || m->len < MIN_LEN) {
    error(x, "type or length", (int)m->type, (int)m->len);
  } else {
    uint32_t from, seq;
    memcpy(&from, m->data, sizeof from);
    memcpy(&seq, (unsigned char *)m->data + 4, sizeof seq);
    if (from >= PARTS || seq >= PER || m->sender != x->pids[from] || target((int)from, (int)seq) != p->id) {
      error(x, "header fields", (int)from, (int)seq);
    } else {
      if ((int)seq <= p->last[from]) error(x, "order from one sender", (int)from, (int)seq);
      p->last[from] = (int)seq;
      if (m->len != length((int)from, (int)seq)) error(x, "payload length", (int)from, (int)seq);
      const unsigned char *d = m->data;
      for (size_t k = MIN_LEN; k < m->len; k++)
        if (d[k] != byte((int)from, (int)seq, k)) {
          error(x, "payload bytes", (int)from, (int)seq);
          break;
        }
      p->received++;
    }
  }
  if (!held_remove(m)) error(x, "a freed header was not held", p->id, 0);
  if (syncq_po_free(self, m) != SYNCQ_OK) error(x, "free", p->id, 0);
}

static void send_one(part *p, syncq_po_proc *self, int seq) {
  exchange *x = p->x;
  size_t len = length(p->id, seq);
  syncq_po_msg *m;
  if (syncq_po_get(self, len, &m) != SYNCQ_OK) {
    error(x, "get", p->id, seq);
    return;
  }
  if (!held_add(m)) error(x, "a header handed out twice", p->id, seq);
  m->type = DATA;
  uint32_t from = (uint32_t)p->id, s = (uint32_t)seq;
  memcpy(m->data, &from, sizeof from);
  memcpy((unsigned char *)m->data + 4, &s, sizeof s);
  for (size_t k = MIN_LEN; k < len; k++) ((unsigned char *)m->data)[k] = byte(p->id, seq, k);
  if (!held_remove(m)) error(x, "a sent header was not held", p->id, seq);
  /* Every fourth by copy: the copy's header comes from the postoffice. */
  int r = syncq_po_send(self, x->pids[target(p->id, seq)], m, seq % 4 == 3 ? SYNCQ_PO_COPY : SYNCQ_PO_LINK);
  if (r != SYNCQ_OK) error(x, "send", p->id, r);
}

static void participate(exchange *x, int id, syncq_po_proc *self) {
  part p = {x, id, {0}, 0, 0, false};
  for (int j = 0; j < PARTS; j++) p.last[j] = -1;
  for (int j = 0; j < PARTS; j++)
    for (int seq = 0; seq < PER && j != id; seq++) p.expected += target(j, seq) == id;
  syncq_po_msg *m;
  while (!p.go) { /* others may have begun: their messages come before the GO */
    if (syncq_po_recv_blocking(self, &m) != SYNCQ_OK) {
      error(x, "recv", id, 0);
      return;
    }
    take(&p, self, m);
  }
  for (int seq = 0; seq < PER; seq++) {
    send_one(&p, self, seq);
    while (syncq_po_try_recv(self, &m) == SYNCQ_OK) take(&p, self, m);
    if (seq % 64 == 0) (void)syncq_po_yield(self);
  }
  while (p.received < p.expected) {
    if (syncq_po_recv_blocking(self, &m) != SYNCQ_OK) {
      error(x, "recv", id, p.received);
      return;
    }
    take(&p, self, m);
  }
  atomic_fetch_add(&x->total, p.received);
}

static exchange *the_x;

static void fiber_part(syncq_po_proc *self, void *arg) { participate(the_x, (int)(intptr_t)arg, self); }

static void *thread_part(void *arg) {
  int t = (int)(intptr_t)arg;
  exchange *x = the_x;
  if (syncq_po_attach(x->sys, &x->threads[t]) != SYNCQ_OK) abort(); /* the test sees no pid: it fails */
  x->pids[FIBERS + t] = syncq_po_pid_of(x->threads[t]);
  pthread_barrier_wait(&x->attached);
  pthread_barrier_wait(&x->started);
  participate(x, FIBERS + t, x->threads[t]);
  return NULL;
}

static void run_exchange(const char *mb, const char *backend) {
  exchange *x = calloc(1, sizeof *x);
  assert_non_null(x);
  the_x = x;
  held_reset();
  syncq_po_config cfg = {mb, 64, 0, 0, backend, 2, false};
  int r = syncq_po_create(&cfg, &x->sys);
  if (r == SYNCQ_ENOTSUP) { /* no fiber backend in this build */
    free(x);
    return;
  }
  assert_int_equal(r, SYNCQ_OK);
  pthread_barrier_init(&x->attached, NULL, THREADS + 1);
  pthread_barrier_init(&x->started, NULL, THREADS + 1);
  pthread_t tid[THREADS];
  for (int t = 0; t < THREADS; t++)
    assert_int_equal(pthread_create(&tid[t], NULL, thread_part, (void *)(intptr_t)t), 0);
  pthread_barrier_wait(&x->attached);
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(x->sys, &me), SYNCQ_OK);
  /* The fibers' pids are written before any fiber reads them: each waits
   * for its GO, sent after the last spawn. */
  for (int f = 0; f < FIBERS; f++)
    assert_int_equal(syncq_po_spawn(x->sys, fiber_part, (void *)(intptr_t)f, &x->pids[f]), SYNCQ_OK);
  for (int j = 0; j < PARTS; j++) {
    syncq_po_msg *m;
    assert_int_equal(syncq_po_get(me, 0, &m), SYNCQ_OK);
    m->type = GO;
    assert_int_equal(syncq_po_send(me, x->pids[j], m, SYNCQ_PO_LINK), SYNCQ_OK);
  }
  pthread_barrier_wait(&x->started);
  for (int f = 0; f < FIBERS; f++) assert_int_equal(syncq_po_join(x->sys, x->pids[f]), SYNCQ_OK);
  for (int t = 0; t < THREADS; t++) assert_int_equal(pthread_join(tid[t], NULL), 0);
  for (int t = 0; t < THREADS; t++) assert_int_equal(syncq_po_detach(x->threads[t]), SYNCQ_OK);
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(x->sys), SYNCQ_OK);
  pthread_barrier_destroy(&x->attached);
  pthread_barrier_destroy(&x->started);
  if (atomic_load(&x->errors) != 0)
    fail_msg("%s/%s: %d errors, the first: %s", backend, mb, atomic_load(&x->errors), x->first_error);
  assert_int_equal(atomic_load(&x->total), PARTS * PER);
  printf("%s/%s: %d messages checked\n", backend, mb, atomic_load(&x->total));
  free(x);
}

static void test_never_twice(void **state) {
  (void)state;
  for (int i = 0; i < syncq_po_mailbox_count(); i++) {
    const char *mb = NULL;
    assert_int_equal(syncq_po_mailbox_info(i, &mb, NULL, NULL), SYNCQ_OK);
    run_exchange(mb, "fiber");
  }
  run_exchange("mpsc", "fiber"); /* on the chunks the last systems kept */
  run_exchange("mpsc", "thread");
}

/* ---- destroy with messages everywhere ---- */

enum { LEAK_SENDS = 200, BIG = 1000 };

typedef struct leak_run {
  syncq_po_system *sys;
  syncq_po_pid sink; /* an attached thread that reads only some */
  syncq_po_pid peer[2];
  _Atomic(int) errors;
} leak_run;

static leak_run *the_leak;

/* A fiber sends big messages to the sink and to its peer fiber, reads
 * its peer's and frees them (into its scheduler's cache or free list),
 * and leaves the last few unread. */
static void leak_fiber(syncq_po_proc *self, void *arg) {
  leak_run *L = the_leak;
  int me = (int)(intptr_t)arg;
  syncq_po_msg *m;
  if (syncq_po_recv_blocking(self, &m) != SYNCQ_OK) { /* the GO: both pids are known */
    atomic_fetch_add(&L->errors, 1);
    return;
  }
  syncq_po_free(self, m);
  for (int i = 0; i < LEAK_SENDS; i++) {
    size_t len = i % 2 ? BIG : SYNCQ_PO_INLINE_MSG + 1 + (size_t)i;
    for (int to = 0; to < 2; to++) {
      if (syncq_po_get(self, len, &m) != SYNCQ_OK) {
        atomic_fetch_add(&L->errors, 1);
        return;
      }
      memset(m->data, i, len);
      syncq_po_pid dst = to == 0 ? L->sink : L->peer[1 - me];
      int r = syncq_po_send(self, dst, m, i % 3 == 0 ? SYNCQ_PO_COPY : SYNCQ_PO_LINK);
      if (r != SYNCQ_OK) {
        if (r != SYNCQ_EDEAD || to == 0) atomic_fetch_add(&L->errors, 1); /* the peer may be gone */
        syncq_po_free(self, m);
      }
    }
    if (i < LEAK_SENDS - 10 && syncq_po_recv_blocking(self, &m) == SYNCQ_OK) syncq_po_free(self, m);
  }
}

static void test_destroy_with_messages(void **state) {
  (void)state;
  for (int i = 0; i < syncq_po_mailbox_count(); i++) {
    const char *mb = NULL;
    assert_int_equal(syncq_po_mailbox_info(i, &mb, NULL, NULL), SYNCQ_OK);
    for (int round = 0; round < 2; round++) { /* the second on the first one's chunks */
      leak_run L = {0};
      the_leak = &L;
      syncq_po_config cfg = {mb, 16, 0, 0, "fiber", 2, false};
      int r = syncq_po_create(&cfg, &L.sys);
      if (r == SYNCQ_ENOTSUP) {
        cfg.backend = "thread";
        r = syncq_po_create(&cfg, &L.sys);
      }
      assert_int_equal(r, SYNCQ_OK);
      syncq_po_proc *sink;
      assert_int_equal(syncq_po_attach(L.sys, &sink), SYNCQ_OK);
      L.sink = syncq_po_pid_of(sink);
      for (int f = 0; f < 2; f++)
        assert_int_equal(syncq_po_spawn(L.sys, leak_fiber, (void *)(intptr_t)f, &L.peer[f]), SYNCQ_OK);
      for (int f = 0; f < 2; f++) {
        syncq_po_msg *m;
        assert_int_equal(syncq_po_get(sink, 0, &m), SYNCQ_OK);
        assert_int_equal(syncq_po_send(sink, L.peer[f], m, SYNCQ_PO_LINK), SYNCQ_OK);
      }
      for (int f = 0; f < 2; f++) assert_int_equal(syncq_po_join(L.sys, L.peer[f]), SYNCQ_OK);
      for (int k = 0; k < LEAK_SENDS / 2; k++) { /* half of what came, back to the sink's free list */
        syncq_po_msg *m;
        assert_int_equal(syncq_po_try_recv(sink, &m), SYNCQ_OK);
        assert_true(m->len > SYNCQ_PO_INLINE_MSG);
        assert_int_equal(syncq_po_free(sink, m), SYNCQ_OK);
      }
      assert_int_equal(atomic_load(&L.errors), 0);
      assert_int_equal(syncq_po_detach(sink), SYNCQ_OK);
      assert_int_equal(syncq_po_destroy(L.sys), SYNCQ_OK);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_never_twice),
    cmocka_unit_test(test_destroy_with_messages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
