/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * scq_test.c — SCQ's (scq.h, and its SCQD alias scqd.h) and SCQ2's
 * (scq2.h) own tests, plain and with cache remapping (init_remapped), for
 * what the family drivers do not reach:
 *   - bad capacities (0, 1, not a power of two, above 2^40), NULL
 *     arguments, misaligned storage, uninitialised or destroyed storage:
 *     SYNCQ_EINVAL; a missing double-width CAS: SYNCQ_ENOTSUP (SCQ2);
 *   - sequential wrap-around at capacity 2 and 4: the rings turn over many
 *     times, FIFO order holds, FULL comes at exactly the capacity and
 *     EMPTY at zero, and many EMPTY answers in a row (the threshold) do
 *     not hide a later item;
 *   - 4 producers and 4 consumers through capacity 2, 4 and 64 (the rings
 *     turn over tens of thousands of times while threads overtake one
 *     another): no loss, no duplicate, each producer's items in order;
 *   - ping-pong (queue-1p1c's shape): one item bounced through two
 *     queues of capacity 2 and 1024; a dequeue that answers EMPTY after
 *     its item's enqueue returned is a lost item, reported at once
 *     (scq2_race_test.c forces the interleaving that lost one).
 * Fixed thread counts: the same work on any machine.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include "syncq/platform.h"
#include "syncq/queue.h"
#include "syncq/queue/scq.h"
#include "syncq/queue/scq2.h"
#include "syncq/queue/scqd.h"

#include "test_mpmc.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

#define PRODUCERS 4
#define CONSUMERS 4
#if SANITIZED
#define PER_PRODUCER 5000
#define PINGPONG_ROUNDS 5000
#else
#define PER_PRODUCER 40000
#define PINGPONG_ROUNDS 50000
#endif

static void *item_of(uint64_t v) { return (void *)(uintptr_t)(v + 1); }
static uint64_t value_of(void *p) { return (uint64_t)(uintptr_t)p - 1; }

/* One typed API as a table, so each test runs over scq, scqd and scq2. */
typedef struct api {
  const char *name;
  size_t align;
  int (*bytes)(size_t, size_t *);
  int (*init)(void *, size_t);
  int (*destroy)(void *);
  int (*enqueue)(void *, void *);
  int (*dequeue)(void *, void **);
} api;

static int scq_bytes_(size_t c, size_t *b) { return syncq_queue_scq_bytes(c, b); }
static int scq_init_(void *q, size_t c) { return syncq_queue_scq_init(q, c); }
static int scq_destroy_(void *q) { return syncq_queue_scq_destroy(q); }
static int scq_enq_(void *q, void *x) { return syncq_queue_scq_enqueue(q, x); }
static int scq_deq_(void *q, void **x) { return syncq_queue_scq_dequeue(q, x); }
static int scqd_bytes_(size_t c, size_t *b) { return syncq_queue_scqd_bytes(c, b); }
static int scqd_init_(void *q, size_t c) { return syncq_queue_scqd_init(q, c); }
static int scqd_destroy_(void *q) { return syncq_queue_scqd_destroy(q); }
static int scqd_enq_(void *q, void *x) { return syncq_queue_scqd_enqueue(q, x); }
static int scqd_deq_(void *q, void **x) { return syncq_queue_scqd_dequeue(q, x); }
static int scqr_init_(void *q, size_t c) { return syncq_queue_scq_init_remapped(q, c); }
static int scq2r_init_(void *q, size_t c) { return syncq_queue_scq2_init_remapped(q, c); }
static int scq2_bytes_(size_t c, size_t *b) { return syncq_queue_scq2_bytes(c, b); }
static int scq2_init_(void *q, size_t c) { return syncq_queue_scq2_init(q, c); }
static int scq2_destroy_(void *q) { return syncq_queue_scq2_destroy(q); }
static int scq2_enq_(void *q, void *x) { return syncq_queue_scq2_enqueue(q, x); }
static int scq2_deq_(void *q, void **x) { return syncq_queue_scq2_dequeue(q, x); }

static const api apis[] = {
  {"scq", _Alignof(syncq_queue_scq), scq_bytes_, scq_init_, scq_destroy_, scq_enq_, scq_deq_},
  {"scqd", _Alignof(syncq_queue_scqd), scqd_bytes_, scqd_init_, scqd_destroy_, scqd_enq_, scqd_deq_},
  {"scq2", _Alignof(syncq_queue_scq2), scq2_bytes_, scq2_init_, scq2_destroy_, scq2_enq_, scq2_deq_},
  {"scq-remapped", _Alignof(syncq_queue_scq), scq_bytes_, scqr_init_, scq_destroy_, scq_enq_, scq_deq_},
  {"scq2-remapped", _Alignof(syncq_queue_scq2), scq2_bytes_, scq2r_init_, scq2_destroy_, scq2_enq_, scq2_deq_},
};
#define NAPIS (sizeof apis / sizeof apis[0])

static bool is_scq2(const api *a) { return strncmp(a->name, "scq2", 4) == 0; }

/* Fresh storage for capacity c, or NULL when SCQ2 cannot run here (no
 * double-width CAS: init must then say ENOTSUP). */
static void *make(const api *a, size_t c) {
  size_t b = 0;
  assert_int_equal(a->bytes(c, &b), SYNCQ_OK);
  void *q = syncq_alloc_aligned(b, a->align);
  assert_non_null(q);
  memset(q, 0, b);
  int st = a->init(q, c);
  if (is_scq2(a) && !syncq_pr_dwcas_available()) {
    assert_int_equal(st, SYNCQ_ENOTSUP);
    free(q);
    return NULL;
  }
  assert_int_equal(st, SYNCQ_OK);
  return q;
}

static void test_bad_inputs(void **state) {
  (void)state;
  for (size_t k = 0; k < NAPIS; k++) {
    const api *a = &apis[k];
    size_t b = 0;
    const size_t bad[] = {0, 1, 3, 6, 1000, ((size_t)1 << 41), SIZE_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) assert_int_equal(a->bytes(bad[i], &b), SYNCQ_EINVAL);
    assert_int_equal(a->bytes(4, NULL), SYNCQ_EINVAL);
    assert_int_equal(a->bytes(2, &b), SYNCQ_OK);
    assert_int_equal(a->bytes((size_t)1 << 40, &b), SYNCQ_OK);

    assert_int_equal(a->bytes(64, &b), SYNCQ_OK);
    unsigned char *raw = syncq_alloc_aligned(b + a->align, a->align);
    assert_non_null(raw);
    assert_int_equal(a->init(NULL, 4), SYNCQ_EINVAL);
    assert_int_equal(a->init(raw + 8, 4), SYNCQ_EINVAL); /* misaligned */
    for (size_t i = 0; i < 5; i++) assert_int_equal(a->init(raw, bad[i]), SYNCQ_EINVAL);
    memset(raw, 0, b);
    void *out = NULL;
    /* never initialised (zeroed storage), then destroyed */
    assert_int_equal(a->destroy(raw), SYNCQ_EINVAL);
    assert_int_equal(a->enqueue(raw, item_of(1)), SYNCQ_EINVAL);
    assert_int_equal(a->dequeue(raw, &out), SYNCQ_EINVAL);
    free(raw);

    void *q = make(a, 4);
    if (q == NULL) {
      print_message("%s: SKIPPED past init: no double-width CAS on this CPU (init said SYNCQ_ENOTSUP)\n", a->name);
      continue;
    }
    assert_int_equal(a->enqueue(NULL, item_of(1)), SYNCQ_EINVAL);
    assert_int_equal(a->enqueue(q, NULL), SYNCQ_EINVAL);
    assert_int_equal(a->dequeue(NULL, &out), SYNCQ_EINVAL);
    assert_int_equal(a->dequeue(q, NULL), SYNCQ_EINVAL);
    assert_int_equal(a->destroy(NULL), SYNCQ_EINVAL);
    assert_int_equal(a->destroy(q), SYNCQ_OK);
    assert_int_equal(a->destroy(q), SYNCQ_EINVAL);
    assert_int_equal(a->enqueue(q, item_of(1)), SYNCQ_EINVAL);
    assert_int_equal(a->dequeue(q, &out), SYNCQ_EINVAL);
    free(q);
  }
}

static void test_sequential_wraparound(void **state) {
  (void)state;
  for (size_t k = 0; k < NAPIS; k++) {
    const api *a = &apis[k];
    for (size_t c = 2; c <= 64; c *= 2) { /* remapping starts past one line */
      void *q = make(a, c);
      if (q == NULL) continue;
      void *out = NULL;
      uint64_t next_in = 0, next_out = 0;
      /* varying fill levels so every cell is met in every state, for many turns */
      for (uint64_t round = 0; round < 20000; round++) {
        size_t fill = (size_t)(round % (c + 1));
        for (size_t i = 0; i < fill; i++) assert_int_equal(a->enqueue(q, item_of(next_in++)), SYNCQ_OK);
        if (fill == c) assert_int_equal(a->enqueue(q, item_of(999999999)), SYNCQ_FULL);
        for (size_t i = 0; i < fill; i++) {
          assert_int_equal(a->dequeue(q, &out), SYNCQ_OK);
          assert_int_equal(value_of(out), next_out++);
        }
        assert_int_equal(a->dequeue(q, &out), SYNCQ_EMPTY);
      }
      /* many EMPTY answers in a row (more than the threshold) hide nothing */
      for (size_t i = 0; i < 8 * c + 10; i++) assert_int_equal(a->dequeue(q, &out), SYNCQ_EMPTY);
      assert_int_equal(a->enqueue(q, item_of(7)), SYNCQ_OK);
      assert_int_equal(a->dequeue(q, &out), SYNCQ_OK);
      assert_int_equal(value_of(out), 7);
      /* and many FULL answers in a row lose nothing */
      for (size_t i = 0; i < c; i++) assert_int_equal(a->enqueue(q, item_of(100 + i)), SYNCQ_OK);
      for (size_t i = 0; i < 8 * c + 10; i++) assert_int_equal(a->enqueue(q, item_of(5)), SYNCQ_FULL);
      for (size_t i = 0; i < c; i++) {
        assert_int_equal(a->dequeue(q, &out), SYNCQ_OK);
        assert_int_equal(value_of(out), 100 + i);
      }
      assert_int_equal(a->dequeue(q, &out), SYNCQ_EMPTY);
      assert_int_equal(a->destroy(q), SYNCQ_OK);
      free(q);
    }
  }
}

typedef struct run {
  const api *a;
  void *q;
  test_mpmc m;
} run;

typedef struct worker {
  run *r;
  int id;
} worker;

static void *producer(void *p) {
  worker *w = p;
  for (uint64_t i = 0; i < PER_PRODUCER; i++) {
    void *x = item_of((uint64_t)w->id * PER_PRODUCER + i);
    while (w->r->a->enqueue(w->r->q, x) == SYNCQ_FULL) syncq_yield();
  }
  return NULL;
}

static void *consumer(void *p) {
  worker *w = p; /* one consumer sees each producer's items in order */
  test_mpmc_consume(&w->r->m, w->r->a->dequeue, w->r->q, value_of, 16);
  return NULL;
}

static void test_concurrent_small_capacity(void **state) {
  (void)state;
  for (size_t k = 0; k < NAPIS; k++) {
    for (size_t c = 2; c <= 64; c = (c == 4) ? 64 : c * 2) { /* 64: remapped rings past one line */
      run r;
      memset(&r, 0, sizeof r);
      r.a = &apis[k];
      r.q = make(r.a, c);
      if (r.q == NULL) continue;
      test_mpmc_init(&r.m, PRODUCERS, PER_PRODUCER);
      pthread_t t[PRODUCERS + CONSUMERS];
      worker w[PRODUCERS + CONSUMERS];
      for (int i = 0; i < PRODUCERS + CONSUMERS; i++) {
        w[i] = (worker){&r, i < PRODUCERS ? i : i - PRODUCERS};
        assert_int_equal(pthread_create(&t[i], NULL, i < PRODUCERS ? producer : consumer, &w[i]), 0);
      }
      for (int i = 0; i < PRODUCERS + CONSUMERS; i++) pthread_join(t[i], NULL);
      char what[64];
      snprintf(what, sizeof what, "%s capacity %zu", r.a->name, c);
      test_mpmc_check(&r.m, what);
      void *x;
      assert_int_equal(r.a->dequeue(r.q, &x), SYNCQ_EMPTY);
      print_message("%s capacity %zu: %d producers, %d consumers, %d items each: none lost, none twice, in order\n",
                    r.a->name, c, PRODUCERS, CONSUMERS, PER_PRODUCER);
      assert_int_equal(r.a->destroy(r.q), SYNCQ_OK);
      free(r.q);
    }
  }
}

typedef struct pingpong {
  const api *a;
  void *q[2];                /* q[0]: thread 0 -> thread 1; q[1]: back */
  _Atomic(uint64_t) sent[2]; /* enqueues into q[i] that have returned */
  _Atomic(int) stop;
  _Atomic(int) lost; /* 1 + the queue that lost its item */
  _Atomic(int) bad;  /* a wrong status or a changed item (no cmocka asserts off the main thread) */
} pingpong;

static void pp_fail(pingpong *pp, _Atomic(int) *flag, int v) {
  atomic_store(flag, v);
  atomic_store(&pp->stop, 1);
}

/* The item of q[i], whose `received` earlier items this thread took; NULL
 * when the run stopped or the item is lost. */
static void *pp_take(pingpong *pp, int i, uint64_t received) {
  unsigned spins = 0;
  for (;;) {
    if (atomic_load(&pp->stop)) return NULL;
    const uint64_t sent = atomic_load(&pp->sent[i]);
    void *x;
    int st = pp->a->dequeue(pp->q[i], &x);
    if (st == SYNCQ_OK) return x;
    if (st != SYNCQ_EMPTY) {
      pp_fail(pp, &pp->bad, 1);
      return NULL;
    }
    if (sent > received) { /* its enqueue returned before this dequeue began: EMPTY is wrong */
      pp_fail(pp, &pp->lost, 1 + i);
      return NULL;
    }
    if (++spins % 16 == 0) syncq_yield();
  }
}

static void pp_give(pingpong *pp, int i, void *x) {
  int st;
  while ((st = pp->a->enqueue(pp->q[i], x)) == SYNCQ_FULL) syncq_yield();
  if (st != SYNCQ_OK) pp_fail(pp, &pp->bad, 1);
  atomic_fetch_add(&pp->sent[i], 1);
}

static void *pp_ping(void *p) {
  pingpong *pp = p;
  for (uint64_t r = 0; r < PINGPONG_ROUNDS; r++) {
    pp_give(pp, 0, item_of(r));
    void *x = pp_take(pp, 1, r);
    if (x == NULL) return NULL;
    if (x != item_of(r)) pp_fail(pp, &pp->bad, 1);
  }
  return NULL;
}

static void *pp_pong(void *p) {
  pingpong *pp = p;
  for (uint64_t r = 0; r < PINGPONG_ROUNDS; r++) {
    void *x = pp_take(pp, 0, r);
    if (x == NULL) return NULL;
    pp_give(pp, 1, x);
  }
  return NULL;
}

static void test_pingpong(void **state) {
  (void)state;
  const size_t caps[] = {2, 1024}; /* 1024: queue-1p1c's capacity */
  for (size_t k = 0; k < NAPIS; k++) {
    for (size_t ci = 0; ci < sizeof caps / sizeof caps[0]; ci++) {
      pingpong pp;
      memset(&pp, 0, sizeof pp);
      pp.a = &apis[k];
      pp.q[0] = make(pp.a, caps[ci]);
      if (pp.q[0] == NULL) continue;
      pp.q[1] = make(pp.a, caps[ci]);
      pthread_t t[2];
      assert_int_equal(pthread_create(&t[0], NULL, pp_ping, &pp), 0);
      assert_int_equal(pthread_create(&t[1], NULL, pp_pong, &pp), 0);
      pthread_join(t[0], NULL);
      pthread_join(t[1], NULL);
      if (atomic_load(&pp.lost))
        fail_msg("%s capacity %zu: queue %d answered EMPTY after its item's enqueue returned: a lost item", pp.a->name,
                 caps[ci], atomic_load(&pp.lost) - 1);
      assert_int_equal(atomic_load(&pp.bad), 0);
      void *x;
      for (int i = 0; i < 2; i++) {
        assert_int_equal(pp.a->dequeue(pp.q[i], &x), SYNCQ_EMPTY);
        assert_int_equal(pp.a->destroy(pp.q[i]), SYNCQ_OK);
        free(pp.q[i]);
      }
      print_message("%s capacity %zu: %d round trips, nothing lost\n", pp.a->name, caps[ci], PINGPONG_ROUNDS);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_bad_inputs),
    cmocka_unit_test(test_sequential_wraparound),
    cmocka_unit_test(test_concurrent_small_capacity),
    cmocka_unit_test(test_pingpong),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
