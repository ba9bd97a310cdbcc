/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ring_stale_race_test.c — the naive ring's and the FAI array's enqueue
 * yields while tail reads past head (src/queue/naive_ring.c,
 * src/queue/fai_array.c), deterministic.
 *
 * Both queues live in memory shared between processes, where another
 * process may hold tail past head (in a queue only its own operations
 * wrote, tail reads past head only while an enqueuer's head read is
 * stale). The test's main thread is that writer: it stores tail past
 * head, starts an enqueuer, lets it come round the retry HOLD times (the
 * race point "queue.<algo>.enqueue.stale" counts them), then puts tail
 * back. The enqueue must then complete (SYNCQ_OK, the item the one a
 * dequeue finds) and the enqueuer's own counters must show yields: an
 * enqueue that spun without yielding (as before) counts none, and on the
 * one processing unit the process is bound to, it kept the writer from
 * running for the rest of its time slice.
 *
 * Fixed counts: one enqueuer, HOLD retries, one processing unit.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "syncq_race.h" /* first: its SYNCQ_RACE_POINT */

#include "syncq/platform.h"
#include "syncq/queue/fai_array.h"
#include "syncq/queue/naive_ring.h"
#include "syncq/stats.h"

SYNCQ_RACE_HOOK_DEFINE;

#define CAPACITY 8
#define HOLD 1000 /* retries the enqueuer makes while tail is held past head */
#define PATIENCE_S 30

static void *item_of(uint64_t v) { return (void *)(uintptr_t)((v + 1) << 4); }

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* One of the two queues, through its typed API. */
typedef struct ring {
  const char *point; /* its enqueue's race point in the retry */
  int (*bytes)(size_t, size_t *);
  int (*init)(void *, size_t);
  int (*destroy)(void *);
  int (*enqueue)(void *, void *);
  int (*dequeue)(void *, void **);
  _Atomic(uint64_t) *(*head)(void *);
  _Atomic(uint64_t) *(*tail)(void *);
} ring;

static int nr_init(void *q, size_t c) { return syncq_queue_naive_ring_init(q, c); }
static int nr_destroy(void *q) { return syncq_queue_naive_ring_destroy(q); }
static int nr_enqueue(void *q, void *it) { return syncq_queue_naive_ring_enqueue(q, it); }
static int nr_dequeue(void *q, void **it) { return syncq_queue_naive_ring_dequeue(q, it); }
static _Atomic(uint64_t) *nr_head(void *q) { return &((syncq_queue_naive_ring *)q)->head; }
static _Atomic(uint64_t) *nr_tail(void *q) { return &((syncq_queue_naive_ring *)q)->tail; }
static const ring naive_ring = {"queue.naive_ring.enqueue.stale",
                                syncq_queue_naive_ring_bytes,
                                nr_init,
                                nr_destroy,
                                nr_enqueue,
                                nr_dequeue,
                                nr_head,
                                nr_tail};

static int fa_init(void *q, size_t c) { return syncq_queue_fai_array_init(q, c); }
static int fa_destroy(void *q) { return syncq_queue_fai_array_destroy(q); }
static int fa_enqueue(void *q, void *it) { return syncq_queue_fai_array_enqueue(q, it); }
static int fa_dequeue(void *q, void **it) { return syncq_queue_fai_array_dequeue(q, it); }
static _Atomic(uint64_t) *fa_head(void *q) { return &((syncq_queue_fai_array *)q)->head; }
static _Atomic(uint64_t) *fa_tail(void *q) { return &((syncq_queue_fai_array *)q)->tail; }
static const ring fai_array = {"queue.fai_array.enqueue.stale",
                               syncq_queue_fai_array_bytes,
                               fa_init,
                               fa_destroy,
                               fa_enqueue,
                               fa_dequeue,
                               fa_head,
                               fa_tail};

/* The case running: its point, and the enqueuer's arrivals there. */
static const char *_Atomic watched;
static _Atomic(uint64_t) arrivals;

static void count_hook(const char *name) {
  const char *w = atomic_load(&watched);
  if (w != NULL && strcmp(name, w) == 0) atomic_fetch_add(&arrivals, 1);
}

typedef struct enqueuer {
  const ring *r;
  void *q;
  int status;
  uint64_t yields;
} enqueuer;

static void *enqueue_one(void *arg) {
  enqueuer *e = arg;
  syncq_stats_reset();
  e->status = e->r->enqueue(e->q, item_of(7));
  e->yields = syncq_stats_self()->yields;
  return NULL;
}

static void held_tail(const ring *r) {
  size_t bytes = 0;
  assert_int_equal(r->bytes(CAPACITY, &bytes), SYNCQ_OK);
  void *q = syncq_alloc_aligned(bytes, SYNCQ_CACHELINE);
  assert_non_null(q);
  assert_int_equal(r->init(q, CAPACITY), SYNCQ_OK);
  atomic_store(&arrivals, 0);
  atomic_store(&watched, r->point);
  /* The writer: tail one past head, as another process may store it. */
  uint64_t t0 = atomic_load(r->tail(q));
  atomic_store(r->tail(q), atomic_load(r->head(q)) + 1);

  enqueuer e = {r, q, SYNCQ_EINVAL, 0};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, enqueue_one, &e), 0);
  time_t start = time(NULL);
  while (atomic_load(&arrivals) < HOLD && time(NULL) - start < PATIENCE_S) sleep_ms(1);
  uint64_t held = atomic_load(&arrivals);
  atomic_store(r->tail(q), t0); /* released */
  assert_int_equal(pthread_join(th, NULL), 0);
  atomic_store(&watched, NULL);

  if (held < HOLD)
    fail_msg("%s: the enqueuer came round the retry %llu times in %d s", r->point, (unsigned long long)held,
             PATIENCE_S);
  assert_int_equal(e.status, SYNCQ_OK);
  if (syncq_stats_enabled()) {
    if (e.yields == 0)
      fail_msg("%s: %llu retries with tail past head, no yield", r->point, (unsigned long long)atomic_load(&arrivals));
  } else {
    print_message("%s: counters compiled out (SYNCQ_STATS=OFF): yields not checked\n", r->point);
  }
  void *out = NULL;
  assert_int_equal(r->dequeue(q, &out), SYNCQ_OK);
  assert_ptr_equal(out, item_of(7));
  assert_int_equal(r->dequeue(q, &out), SYNCQ_EMPTY);
  assert_int_equal(r->destroy(q), SYNCQ_OK);
  free(q);
}

static void test_naive_ring(void **state) {
  (void)state;
  held_tail(&naive_ring);
}

static void test_fai_array(void **state) {
  (void)state;
  held_tail(&fai_array);
}

/* Bind the process to one processing unit of those it may use: the
 * writer and the enqueuer share it, as on an oversubscribed machine. */
static void bind_one_pu(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, &set)) continue;
    CPU_ZERO(&set);
    CPU_SET(c, &set);
    (void)sched_setaffinity(0, sizeof set, &set);
    return;
  }
}

int main(void) {
  bind_one_pu();
  syncq_race_hook = count_hook;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_naive_ring),
    cmocka_unit_test(test_fai_array),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
