/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wcq_test.c — wCQ through its typed API (syncq/queue/wcq.h), for what the
 * family drivers do not reach:
 *   - bad inputs: capacities out of range, NULL arguments, misaligned,
 *     uninitialised or destroyed storage (SYNCQ_EINVAL); no double-width
 *     CAS (SYNCQ_ENOTSUP, forced by the library's test hook); a non-empty
 *     queue destroyed (nothing to free: LeakSanitizer finds no leak);
 *   - the thread limit: SYNCQ_QUEUE_WCQ_THREADS threads holding numbers,
 *     the next gets SYNCQ_ELIMIT, and numbers come back at thread exit;
 *   - the slow path, deterministically: the library's hooks make every
 *     fast enqueue leave its ticket unused and give up after one ticket,
 *     so every enqueue (and every dequeue that meets such a ticket) takes
 *     the slow path; a thread stopped right after publishing its request
 *     has it completed by another thread's helping (its item is in the
 *     queue / its item is taken for it) before it runs again;
 *   - sequential FIFO, FULL at exactly the capacity, EMPTY, both ways;
 *   - producers and consumers (thread count from test_plan.h: the same on
 *     any machine) as built, with the slow path forced, and with fast and
 *     slow operations mixed: no loss, no duplicate, each producer's items
 *     in order;
 *   - short histories through the linearizability checker, forced slow
 *     path (or fast and slow mixed) and helping at every operation.
 */
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include "lincheck.h"
#include "syncq/platform.h"
#include "syncq/queue.h"
#include "syncq/queue/wcq.h"
#include "test_plan.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

#if SANITIZED
#define PER_PRODUCER 3000
#define HISTORIES 600
#else
#define PER_PRODUCER 20000
#define HISTORIES 3000
#endif

/* The library's test hooks (src/queue/wcq.c; not public symbols). */
typedef void (*wcq_published_fn)(int enqueue);
extern _Atomic(bool) syncq_queue_wcq_test_no_dwcas__;
extern _Atomic(unsigned) syncq_queue_wcq_test_patience__;
extern _Atomic(unsigned) syncq_queue_wcq_test_drop_enq__;
extern _Atomic(unsigned) syncq_queue_wcq_test_help_delay__;
extern _Atomic(wcq_published_fn) syncq_queue_wcq_test_published__;

static void *item_of(uint64_t v) { return (void *)(uintptr_t)(v + 1); }
static uint64_t value_of(void *p) { return (uint64_t)(uintptr_t)p - 1; }

/* Every operation to the slow path, helping at every operation. */
static void force_slow(bool on) {
  atomic_store(&syncq_queue_wcq_test_patience__, on ? 1u : 0u);
  atomic_store(&syncq_queue_wcq_test_drop_enq__, on ? 1u : 0u); /* every ticket */
  atomic_store(&syncq_queue_wcq_test_help_delay__, on ? 1u : 0u);
}

/* Fresh queue, or NULL when this CPU has no double-width CAS. */
static syncq_queue_wcq *make(size_t c) {
  size_t b = 0;
  assert_int_equal(syncq_queue_wcq_bytes(c, &b), SYNCQ_OK);
  syncq_queue_wcq *q = syncq_alloc_aligned(b, _Alignof(syncq_queue_wcq));
  assert_non_null(q);
  memset(q, 0, b);
  int st = syncq_queue_wcq_init(q, c);
  if (!syncq_pr_dwcas_available()) {
    assert_int_equal(st, SYNCQ_ENOTSUP);
    free(q);
    return NULL;
  }
  assert_int_equal(st, SYNCQ_OK);
  return q;
}
static void drop(syncq_queue_wcq *q) {
  assert_int_equal(syncq_queue_wcq_destroy(q), SYNCQ_OK);
  free(q);
}

static void test_bad_inputs(void **state) {
  (void)state;
  size_t b = 0;
  const size_t bad[] = {0, 1, 3, 6, 1000, ((size_t)1 << 41), SIZE_MAX};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(syncq_queue_wcq_bytes(bad[i], &b), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wcq_bytes(4, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wcq_bytes(2, &b), SYNCQ_OK);
  assert_int_equal(syncq_queue_wcq_bytes((size_t)1 << 40, &b), SYNCQ_OK);

  assert_int_equal(syncq_queue_wcq_bytes(64, &b), SYNCQ_OK);
  unsigned char *raw = syncq_alloc_aligned(b + _Alignof(syncq_queue_wcq), _Alignof(syncq_queue_wcq));
  assert_non_null(raw);
  assert_int_equal(syncq_queue_wcq_init(NULL, 4), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wcq_init((syncq_queue_wcq *)(void *)(raw + 8), 4), SYNCQ_EINVAL); /* misaligned */
  for (size_t i = 0; i < 5; i++)
    assert_int_equal(syncq_queue_wcq_init((syncq_queue_wcq *)(void *)raw, bad[i]), SYNCQ_EINVAL);
  memset(raw, 0, b);
  syncq_queue_wcq *z = (syncq_queue_wcq *)(void *)raw;
  void *out = NULL;
  /* never initialised (zeroed storage) */
  assert_int_equal(syncq_queue_wcq_destroy(z), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wcq_enqueue(z, item_of(1)), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wcq_dequeue(z, &out), SYNCQ_EINVAL);
  free(raw);
  assert_int_equal(syncq_queue_wcq_slow_paths(NULL), 0);
  assert_int_equal(syncq_queue_wcq_helps(NULL), 0);

  syncq_queue_wcq *q = make(4);
  if (q == NULL) skip();
  assert_int_equal(syncq_queue_wcq_enqueue(NULL, item_of(1)), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wcq_enqueue(q, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wcq_dequeue(NULL, &out), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wcq_dequeue(q, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wcq_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wcq_destroy(q), SYNCQ_OK);
  assert_int_equal(syncq_queue_wcq_destroy(q), SYNCQ_EINVAL); /* destroyed */
  assert_int_equal(syncq_queue_wcq_enqueue(q, item_of(1)), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_wcq_dequeue(q, &out), SYNCQ_EINVAL);
  free(q);
}

static void test_enotsup_without_dwcas(void **state) {
  (void)state;
  size_t b = 0;
  assert_int_equal(syncq_queue_wcq_bytes(64, &b), SYNCQ_OK);
  syncq_queue_wcq *q = syncq_alloc_aligned(b, _Alignof(syncq_queue_wcq));
  assert_non_null(q);
  atomic_store(&syncq_queue_wcq_test_no_dwcas__, true);
  assert_int_equal(syncq_queue_wcq_init(q, 64), SYNCQ_ENOTSUP);
  syncq_queue *g = NULL;
  assert_int_equal(syncq_queue_create("wcq", 64, &g), SYNCQ_ENOTSUP); /* the generic API passes it on */
  atomic_store(&syncq_queue_wcq_test_no_dwcas__, false);
  int r = syncq_queue_wcq_init(q, 64);
  if (!syncq_pr_dwcas_available()) {
    assert_int_equal(r, SYNCQ_ENOTSUP); /* this CPU really has none */
  } else {
    assert_int_equal(r, SYNCQ_OK);
    assert_int_equal(syncq_queue_wcq_destroy(q), SYNCQ_OK);
  }
  free(q);
}

/* Destroyed while it holds items: OK, and nothing to free (the items are
 * the caller's; under LeakSanitizer the run shows no leak). */
static void test_destroy_nonempty(void **state) {
  (void)state;
  syncq_queue_wcq *q = make(8);
  if (q == NULL) skip();
  for (uint64_t i = 0; i < 5; i++) assert_int_equal(syncq_queue_wcq_enqueue(q, item_of(i)), SYNCQ_OK);
  drop(q);
}

/* FIFO over many turns of both rings, FULL at exactly c, EMPTY at 0;
 * the same with every operation on the slow path. */
static void sequential(bool slow) {
  for (size_t c = 2; c <= 64; c *= 2) {
    syncq_queue_wcq *q = make(c);
    if (q == NULL) skip();
    force_slow(slow);
    uint64_t next_in = 0, next_out = 0;
    void *out;
    for (int round = 0; round < 40; round++) {
      size_t fill = 1 + (size_t)round % c;
      if (round % 5 == 0) fill = c;
      for (size_t i = 0; i < fill; i++) assert_int_equal(syncq_queue_wcq_enqueue(q, item_of(next_in++)), SYNCQ_OK);
      if (fill == c) assert_int_equal(syncq_queue_wcq_enqueue(q, item_of(999999)), SYNCQ_FULL);
      for (size_t i = 0; i < fill; i++) {
        assert_int_equal(syncq_queue_wcq_dequeue(q, &out), SYNCQ_OK);
        assert_int_equal(value_of(out), next_out++);
      }
      for (int k = 0; k < 3 * (int)c + 2; k++) assert_int_equal(syncq_queue_wcq_dequeue(q, &out), SYNCQ_EMPTY);
    }
    force_slow(false);
    if (slow) assert_true(syncq_queue_wcq_slow_paths(q) >= next_in); /* every aq enqueue went slow */
    drop(q);
  }
}
static void test_sequential(void **state) {
  (void)state;
  sequential(false);
}
static void test_sequential_slow(void **state) {
  (void)state;
  sequential(true);
}

/* ---------------------------------------------------------- thread limit */

typedef struct limit_ctx {
  syncq_queue_wcq *q;
  pthread_barrier_t *hold;
  int status;
} limit_ctx;

static void *limit_thread(void *p) {
  limit_ctx *c = p;
  c->status = syncq_queue_wcq_enqueue(c->q, item_of(1));
  pthread_barrier_wait(c->hold); /* keep the number until every thread has tried */
  return NULL;
}

static void test_thread_limit(void **state) {
  (void)state;
  enum { N = SYNCQ_QUEUE_WCQ_THREADS };
  syncq_queue_wcq *q = make(256);
  if (q == NULL) skip();
  void *out;
  /* this thread holds a number, so N more threads leave one out */
  assert_int_equal(syncq_queue_wcq_dequeue(q, &out), SYNCQ_EMPTY);
  pthread_barrier_t hold;
  pthread_barrier_init(&hold, NULL, N + 1);
  limit_ctx *ctx = calloc(N, sizeof *ctx);
  pthread_t *tids = calloc(N, sizeof *tids);
  assert_non_null(ctx);
  assert_non_null(tids);
  for (int i = 0; i < N; i++) {
    ctx[i] = (limit_ctx){q, &hold, 0};
    assert_int_equal(pthread_create(&tids[i], NULL, limit_thread, &ctx[i]), 0);
  }
  pthread_barrier_wait(&hold);
  for (int i = 0; i < N; i++) pthread_join(tids[i], NULL);
  int ok = 0, limit = 0;
  for (int i = 0; i < N; i++) {
    if (ctx[i].status == SYNCQ_OK) ok++;
    else if (ctx[i].status == SYNCQ_ELIMIT) limit++;
  }
  assert_int_equal(ok, N - 1);
  assert_int_equal(limit, 1);
  /* the numbers came back at exit: N - 1 new threads get them again */
  pthread_barrier_destroy(&hold);
  pthread_barrier_init(&hold, NULL, N);
  for (int i = 0; i < N - 1; i++) {
    ctx[i] = (limit_ctx){q, &hold, 0};
    assert_int_equal(pthread_create(&tids[i], NULL, limit_thread, &ctx[i]), 0);
  }
  pthread_barrier_wait(&hold);
  for (int i = 0; i < N - 1; i++) {
    pthread_join(tids[i], NULL);
    assert_int_equal(ctx[i].status, SYNCQ_OK);
  }
  pthread_barrier_destroy(&hold);
  for (int i = 0; i < 2 * (N - 1); i++) assert_int_equal(syncq_queue_wcq_dequeue(q, &out), SYNCQ_OK);
  assert_int_equal(syncq_queue_wcq_dequeue(q, &out), SYNCQ_EMPTY);
  free(ctx);
  free(tids);
  drop(q);
}

/* ---------------------------------------------------------- helping */

/* A thread marked to stop does so once its request (of the marked kind)
 * is published, until the test lets it go. */
static _Thread_local int stop_at = -1; /* 1: enqueue, 0: dequeue, -1: never */
static sem_t stopped, go_on;

static void on_published(int enqueue) {
  if (stop_at != enqueue) return;
  stop_at = -1;
  sem_post(&stopped);
  sem_wait(&go_on);
}

typedef struct stop_ctx {
  syncq_queue_wcq *q;
  int kind;
  int status;
  void *item;
} stop_ctx;

static void *stopping_thread(void *p) {
  stop_ctx *c = p;
  stop_at = c->kind;
  if (c->kind == 1) c->status = syncq_queue_wcq_enqueue(c->q, c->item);
  else c->status = syncq_queue_wcq_dequeue(c->q, &c->item);
  return NULL;
}

/* Operations of this thread that pass every record in turn (help delay 1):
 * one of them helps the stopped thread. */
#define HELPER_OPS (2 * SYNCQ_QUEUE_WCQ_THREADS)

static void helping_setup(void) {
  force_slow(true);
  sem_init(&stopped, 0, 0);
  sem_init(&go_on, 0, 0);
  atomic_store(&syncq_queue_wcq_test_published__, on_published);
}
static void helping_teardown(void) {
  atomic_store(&syncq_queue_wcq_test_published__, (wcq_published_fn)NULL);
  force_slow(false);
  sem_destroy(&stopped);
  sem_destroy(&go_on);
}

/* A stops inside its enqueue of X; this thread's own enqueues help it:
 * X is in the queue (once) before A runs again. */
static void test_helping_enqueue(void **state) {
  (void)state;
  syncq_queue_wcq *q = make(512);
  if (q == NULL) skip();
  helping_setup();
  const uint64_t X = 777777;
  stop_ctx a = {q, 1, -100, item_of(X)};
  pthread_t ta;
  assert_int_equal(pthread_create(&ta, NULL, stopping_thread, &a), 0);
  sem_wait(&stopped);
  uint64_t helps0 = syncq_queue_wcq_helps(q);
  for (uint64_t i = 0; i < HELPER_OPS; i++) assert_int_equal(syncq_queue_wcq_enqueue(q, item_of(i)), SYNCQ_OK);
  assert_true(syncq_queue_wcq_helps(q) > helps0);
  /* A is still stopped: its item must already be in the queue */
  bool seen = false;
  uint64_t next = 0;
  void *out;
  for (int k = 0; k < HELPER_OPS + 1; k++) {
    assert_int_equal(syncq_queue_wcq_dequeue(q, &out), SYNCQ_OK);
    if (value_of(out) == X) {
      assert_false(seen);
      seen = true;
    } else {
      assert_int_equal(value_of(out), next++);
    }
  }
  assert_true(seen);
  assert_int_equal(syncq_queue_wcq_dequeue(q, &out), SYNCQ_EMPTY);
  sem_post(&go_on);
  pthread_join(ta, NULL);
  assert_int_equal(a.status, SYNCQ_OK);
  assert_int_equal(syncq_queue_wcq_dequeue(q, &out), SYNCQ_EMPTY); /* A's own run added no second X */
  helping_teardown();
  drop(q);
}

/* A stops inside its dequeue while X is queued; this thread's enqueues
 * help it: X is taken for A, so this thread's dequeues never see it, and A
 * returns X when it runs again. */
static void test_helping_dequeue(void **state) {
  (void)state;
  syncq_queue_wcq *q = make(512);
  if (q == NULL) skip();
  helping_setup();
  const uint64_t X = 777777;
  assert_int_equal(syncq_queue_wcq_enqueue(q, item_of(X)), SYNCQ_OK);
  stop_ctx a = {q, 0, -100, NULL};
  pthread_t ta;
  assert_int_equal(pthread_create(&ta, NULL, stopping_thread, &a), 0);
  sem_wait(&stopped);
  uint64_t helps0 = syncq_queue_wcq_helps(q);
  for (uint64_t i = 0; i < HELPER_OPS; i++) assert_int_equal(syncq_queue_wcq_enqueue(q, item_of(i)), SYNCQ_OK);
  assert_true(syncq_queue_wcq_helps(q) > helps0);
  void *out;
  for (uint64_t i = 0; i < HELPER_OPS; i++) {
    assert_int_equal(syncq_queue_wcq_dequeue(q, &out), SYNCQ_OK);
    assert_int_equal(value_of(out), i); /* never X: it is A's */
  }
  assert_int_equal(syncq_queue_wcq_dequeue(q, &out), SYNCQ_EMPTY);
  sem_post(&go_on);
  pthread_join(ta, NULL);
  assert_int_equal(a.status, SYNCQ_OK);
  assert_int_equal(value_of(a.item), X);
  assert_int_equal(syncq_queue_wcq_dequeue(q, &out), SYNCQ_EMPTY);
  helping_teardown();
  drop(q);
}

/* ---------------------------------------------------------- producers, consumers */

typedef struct pc {
  syncq_queue_wcq *q;
  int producers, consumers;
  _Atomic(uint64_t) taken;
  _Atomic(uint32_t) *seen; /* per item: times dequeued */
  uint64_t *last;          /* per consumer x producer: last sequence seen + 1 */
  _Atomic(int) order_errors;
  _Atomic(int) other_errors;
} pc;
typedef struct pc_arg {
  pc *s;
  int id;
} pc_arg;

static void *producer(void *p) {
  pc_arg *a = p;
  for (uint64_t k = 0; k < PER_PRODUCER; k++) {
    int r;
    while ((r = syncq_queue_wcq_enqueue(a->s->q, item_of((uint64_t)a->id * PER_PRODUCER + k))) == SYNCQ_FULL)
      syncq_yield();
    if (r != SYNCQ_OK) atomic_fetch_add(&a->s->other_errors, 1);
  }
  return NULL;
}

static void *consumer(void *p) {
  pc_arg *a = p;
  pc *s = a->s;
  const uint64_t total = (uint64_t)s->producers * PER_PRODUCER;
  uint64_t *last = &s->last[(size_t)a->id * (size_t)s->producers];
  while (atomic_load(&s->taken) < total) {
    void *out;
    int r = syncq_queue_wcq_dequeue(s->q, &out);
    if (r == SYNCQ_EMPTY) {
      syncq_yield();
      continue;
    }
    if (r != SYNCQ_OK) {
      atomic_fetch_add(&s->other_errors, 1);
      return NULL;
    }
    uint64_t v = value_of(out);
    if (v >= total) {
      atomic_fetch_add(&s->other_errors, 1);
      continue;
    }
    atomic_fetch_add(&s->seen[v], 1);
    uint64_t prod = v / PER_PRODUCER, seq = v % PER_PRODUCER;
    if (seq + 1 <= last[prod]) atomic_fetch_add(&s->order_errors, 1);
    last[prod] = seq + 1;
    atomic_fetch_add(&s->taken, 1);
  }
  return NULL;
}

/* Owners give their core away once their request is published: it stays
 * pending for a while, so other threads help it, and race its owner. */
static void yield_on_publish(int enqueue) {
  (void)enqueue;
  syncq_yield();
}

/* mode: 0 as built; 1 every operation slow (force_slow); 2 one fast
 * ticket, a third of the fast enqueue tickets left unused, helping at
 * every operation: fast and slow operations on the same entries at once. */
static void producers_consumers(size_t cap, int threads, int mode) {
  syncq_queue_wcq *q = make(cap);
  if (q == NULL) skip();
  const bool slow = mode == 1;
  force_slow(mode != 0);
  if (mode == 2) atomic_store(&syncq_queue_wcq_test_drop_enq__, 3u);
  if (mode != 0) atomic_store(&syncq_queue_wcq_test_published__, yield_on_publish);
  pc s = {.q = q, .producers = threads / 2, .consumers = threads - threads / 2};
  const uint64_t total = (uint64_t)s.producers * PER_PRODUCER;
  s.seen = calloc(total, sizeof *s.seen);
  s.last = calloc((size_t)s.consumers * (size_t)s.producers, sizeof *s.last);
  assert_non_null(s.seen);
  assert_non_null(s.last);
  pthread_t tids[TEST_PLAN_MAX_THREADS];
  pc_arg args[TEST_PLAN_MAX_THREADS];
  for (int i = 0; i < threads; i++) {
    bool prod = i < s.producers;
    args[i] = (pc_arg){&s, prod ? i : i - s.producers};
    assert_int_equal(pthread_create(&tids[i], NULL, prod ? producer : consumer, &args[i]), 0);
  }
  for (int i = 0; i < threads; i++) pthread_join(tids[i], NULL);
  force_slow(false);
  atomic_store(&syncq_queue_wcq_test_published__, (wcq_published_fn)NULL);
  assert_int_equal(atomic_load(&s.other_errors), 0);
  assert_int_equal(atomic_load(&s.order_errors), 0);
  for (uint64_t v = 0; v < total; v++)
    if (atomic_load(&s.seen[v]) != 1)
      fail_msg("item %llu dequeued %u times", (unsigned long long)v, atomic_load(&s.seen[v]));
  void *out;
  assert_int_equal(syncq_queue_wcq_dequeue(q, &out), SYNCQ_EMPTY);
  /* every aq enqueue (helping runs depend on the timing: the helping
   * tests above check them deterministically) */
  if (slow) assert_true(syncq_queue_wcq_slow_paths(q) >= total);
  print_message("wcq capacity %zu, %dP/%dC%s: %llu slow paths, %llu helping runs\n", cap, s.producers, s.consumers,
                mode == 1   ? " (slow path forced)"
                : mode == 2 ? " (fast and slow mixed)"
                            : "",
                (unsigned long long)syncq_queue_wcq_slow_paths(q), (unsigned long long)syncq_queue_wcq_helps(q));
  free(s.seen);
  free(s.last);
  drop(q);
}

static void test_producers_consumers(void **state) {
  (void)state;
  int n = test_plan_oversubscribed(TEST_PLAN_OVERSUBSCRIPTION); /* 16 on any machine with 2 or more PUs */
  producers_consumers(4, 8, 0);
  producers_consumers(64, n, 0);
}
static void test_producers_consumers_slow(void **state) {
  (void)state;
  int n = test_plan_oversubscribed(TEST_PLAN_OVERSUBSCRIPTION);
  producers_consumers(4, 8, 1);
  producers_consumers(64, n, 1);
  producers_consumers(4, 8, 2);
  producers_consumers(64, n, 2);
}

/* ---------------------------------------------------------- linearizability */

#define H_THREADS TEST_PLAN_HISTORY_THREADS
#define H_OPS 4

typedef struct hist {
  syncq_queue_wcq *q;
  lc_clock clock;
  pthread_barrier_t start;
  uint64_t seed;
  lc_op rec[H_THREADS][H_OPS];
} hist;
typedef struct hist_arg {
  hist *h;
  int id;
} hist_arg;

static uint64_t rnd(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static void *hist_thread(void *p) {
  hist_arg *a = p;
  hist *h = a->h;
  uint64_t s = h->seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(a->id + 1));
  pthread_barrier_wait(&h->start);
  for (int k = 0; k < H_OPS; k++) {
    lc_op *op = &h->rec[a->id][k];
    op->thread = a->id;
    op->ret = 0;
    if (rnd(&s) % 2) {
      op->kind = LC_QUEUE_ENQ;
      op->arg = 100 + (uint64_t)a->id * H_OPS + (uint64_t)k;
      op->call = lc_tick(&h->clock);
      op->status = syncq_queue_wcq_enqueue(h->q, (void *)(uintptr_t)op->arg);
    } else {
      void *out = NULL;
      op->kind = LC_QUEUE_DEQ;
      op->arg = 0;
      op->call = lc_tick(&h->clock);
      op->status = syncq_queue_wcq_dequeue(h->q, &out);
      op->ret = (uint64_t)(uintptr_t)out;
    }
    op->done = lc_tick(&h->clock);
  }
  return NULL;
}

static void test_linearizable_slow(void **state) {
  (void)state;
  syncq_queue_wcq *probe = make(32);
  if (probe == NULL) skip();
  drop(probe);
  hist *h = calloc(1, sizeof *h);
  assert_non_null(h);
  size_t bytes;
  assert_int_equal(syncq_queue_wcq_bytes(32, &bytes), SYNCQ_OK);
  h->q = syncq_alloc_aligned(bytes, _Alignof(syncq_queue_wcq));
  assert_non_null(h->q);
  force_slow(true);
  uint64_t seed = 4242;
  int rejected = 0;
  for (int n = 0; n < HISTORIES; n++) {
    /* capacity 32: no history fills it (FULL is not linearizable: wcq.c) */
    assert_int_equal(syncq_queue_wcq_init(h->q, 32), SYNCQ_OK);
    /* every other history: a third of the fast enqueue tickets unused,
     * so fast and slow operations meet */
    atomic_store(&syncq_queue_wcq_test_drop_enq__, n % 2 ? 1u : 3u);
    lc_clock_init(&h->clock);
    h->seed = rnd(&seed);
    lc_op all[H_THREADS * H_OPS + 4];
    size_t nops = 0;
    for (unsigned i = 0; i < (unsigned)(h->seed % 5); i++) { /* prefill, a completed thread of its own */
      lc_op *op = &all[nops++];
      op->thread = H_THREADS;
      op->kind = LC_QUEUE_ENQ;
      op->arg = 10 + i;
      op->ret = 0;
      op->call = lc_tick(&h->clock);
      op->status = syncq_queue_wcq_enqueue(h->q, (void *)(uintptr_t)op->arg);
      op->done = lc_tick(&h->clock);
    }
    pthread_barrier_init(&h->start, NULL, H_THREADS);
    pthread_t tids[H_THREADS];
    hist_arg args[H_THREADS];
    for (int i = 0; i < H_THREADS; i++) {
      args[i] = (hist_arg){h, i};
      assert_int_equal(pthread_create(&tids[i], NULL, hist_thread, &args[i]), 0);
    }
    for (int i = 0; i < H_THREADS; i++) pthread_join(tids[i], NULL);
    pthread_barrier_destroy(&h->start);
    for (int t = 0; t < H_THREADS; t++)
      for (int k = 0; k < H_OPS; k++) all[nops++] = h->rec[t][k];
    lc_spec spec = lc_spec_queue(0);
    const char *err = NULL;
    if (!lc_check(&spec, all, nops, &err)) {
      assert_null(err);
      if (rejected++ == 0) {
        fprintf(stderr, "wcq: history %d is not linearizable:\n", n);
        lc_print(all, nops, lc_kind_name);
      }
    }
    assert_int_equal(syncq_queue_wcq_destroy(h->q), SYNCQ_OK);
  }
  force_slow(false);
  free(h->q);
  free(h);
  if (rejected != 0) fail_msg("wcq: %d of %d histories (slow path forced) are not linearizable", rejected, HISTORIES);
}

int main(void) {
  test_plan_confine();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_bad_inputs),          cmocka_unit_test(test_enotsup_without_dwcas),
    cmocka_unit_test(test_destroy_nonempty),    cmocka_unit_test(test_sequential),
    cmocka_unit_test(test_sequential_slow),     cmocka_unit_test(test_thread_limit),
    cmocka_unit_test(test_helping_enqueue),     cmocka_unit_test(test_helping_dequeue),
    cmocka_unit_test(test_producers_consumers), cmocka_unit_test(test_producers_consumers_slow),
    cmocka_unit_test(test_linearizable_slow),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
