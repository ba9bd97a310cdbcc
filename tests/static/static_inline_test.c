/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * static_inline_test.c — the static inline bodies of syncq/static/, as a
 * program that opts in uses them:
 *  - NBLFQ inline: FIFO, FULL and EMPTY at the capacity, bad items, items
 *    passed between the inline and the exported paths on one queue, and
 *    producers/consumers with no loss and no duplicate;
 *  - caller storage: the typed NBLFQ (inline and exported) refuses storage
 *    that was never initialised (zeroed, or garbage) or was destroyed;
 *  - the inline MCS, ticket, TAS and TTAS locks: mutual exclusion with
 *    2x as many threads as processing units (of the test plan's confined
 *    set, tests/support/test_plan.h), trylock/unlock semantics,
 *    bad inputs;
 *  - no statistics are counted by the inline bodies (SYNCQ_STATS is
 *    not defined here), while the library's own build counts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_plan.h"

#include "syncq/platform.h"
#include "syncq/queue.h"
#include "syncq/stats.h"
#include "syncq/static/lock/mcs.h"
#include "syncq/static/lock/tas.h"
#include "syncq/static/lock/ticket.h"
#include "syncq/static/queue/nblfq.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

#if SANITIZED
#define SCALE 10
#else
#define SCALE 1
#endif
#define CAPACITY 64
#define ITEMS_PER_PRODUCER (20000 / SCALE)
#define PRODUCERS 2
#define LOCK_INCREMENTS (20000 / SCALE)
#define THREADS_PER_PU 2

static int n_threads(void) { return test_plan_oversubscribed(THREADS_PER_PU); }

static syncq_queue_nblfq *new_queue_storage(size_t capacity) {
  size_t bytes = 0;
  assert_int_equal(syncq_queue_nblfq_bytes(capacity, &bytes), SYNCQ_OK);
  syncq_queue_nblfq *q = syncq_alloc_aligned(bytes, _Alignof(syncq_queue_nblfq));
  assert_non_null(q);
  return q;
}

static void test_nblfq_inline_sequential(void **state) {
  (void)state;
  syncq_queue_nblfq *q = new_queue_storage(CAPACITY);
  assert_int_equal(syncq_queue_nblfq_init(q, CAPACITY), SYNCQ_OK);
  static int items[CAPACITY + 1];
  void *out = NULL;
  assert_int_equal(syncq_queue_nblfq_dequeue_inline(q, &out), SYNCQ_EMPTY);
  for (int i = 0; i < CAPACITY; i++) {
    /* alternate the paths: both work on the same queue */
    int r = (i & 1) ? syncq_queue_nblfq_enqueue_inline(q, &items[i]) : syncq_queue_nblfq_enqueue(q, &items[i]);
    assert_int_equal(r, SYNCQ_OK);
  }
  assert_int_equal(syncq_queue_nblfq_enqueue_inline(q, &items[CAPACITY]), SYNCQ_FULL);
  for (int i = 0; i < CAPACITY; i++) {
    int r = (i & 1) ? syncq_queue_nblfq_dequeue(q, &out) : syncq_queue_nblfq_dequeue_inline(q, &out);
    assert_int_equal(r, SYNCQ_OK);
    assert_ptr_equal(out, &items[i]); /* FIFO */
  }
  assert_int_equal(syncq_queue_nblfq_dequeue_inline(q, &out), SYNCQ_EMPTY);
  /* bad inputs */
  assert_int_equal(syncq_queue_nblfq_enqueue_inline(q, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_nblfq_enqueue_inline(q, (void *)(UINT64_C(1) << 50)), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_nblfq_enqueue_inline(NULL, &items[0]), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_nblfq_dequeue_inline(NULL, &out), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_nblfq_dequeue_inline(q, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_nblfq_destroy(q), SYNCQ_OK);
  free(q);
}

static void test_nblfq_uninitialised_storage(void **state) {
  (void)state;
  syncq_queue_nblfq *q = new_queue_storage(CAPACITY);
  size_t bytes = SYNCQ_QUEUE_NBLFQ_BYTES(CAPACITY);
  int item = 0;
  void *out = NULL;
  const unsigned char fills[] = {0x00, 0xA5, 0xFF};
  for (size_t f = 0; f < sizeof fills; f++) {
    memset(q, fills[f], bytes); /* never initialised */
    assert_int_equal(syncq_queue_nblfq_enqueue(q, &item), SYNCQ_EINVAL);
    assert_int_equal(syncq_queue_nblfq_dequeue(q, &out), SYNCQ_EINVAL);
    assert_int_equal(syncq_queue_nblfq_enqueue_inline(q, &item), SYNCQ_EINVAL);
    assert_int_equal(syncq_queue_nblfq_dequeue_inline(q, &out), SYNCQ_EINVAL);
    assert_int_equal(syncq_queue_nblfq_destroy(q), SYNCQ_EINVAL);
  }
  assert_int_equal(syncq_queue_nblfq_init(q, CAPACITY), SYNCQ_OK);
  assert_int_equal(syncq_queue_nblfq_enqueue_inline(q, &item), SYNCQ_OK);
  assert_int_equal(syncq_queue_nblfq_destroy(q), SYNCQ_OK);
  /* destroyed */
  assert_int_equal(syncq_queue_nblfq_enqueue(q, &item), SYNCQ_EINVAL);
  assert_int_equal(syncq_queue_nblfq_dequeue_inline(q, &out), SYNCQ_EINVAL);
  /* and through the registry's ops table, built from the same bodies */
  const syncq_queue_ops *ops = syncq_queue_nblfq_algo.ops;
  memset(q, 0, bytes);
  assert_int_equal(ops->enqueue(q, &item), SYNCQ_EINVAL);
  assert_int_equal(ops->dequeue(q, &out), SYNCQ_EINVAL);
  free(q);
}

typedef struct pc_shared {
  syncq_queue_nblfq *q;
  _Atomic(int) producers_left;
  _Atomic(uint32_t) seen[PRODUCERS * ITEMS_PER_PRODUCER];
} pc_shared;

typedef struct pc_arg {
  pc_shared *s;
  int id;
} pc_arg;

static void *producer(void *arg) {
  pc_arg *a = arg;
  for (int i = 0; i < ITEMS_PER_PRODUCER; i++) {
    /* item = index + 1 (non-NULL), as a pointer-sized word */
    uintptr_t v = (uintptr_t)(a->id * ITEMS_PER_PRODUCER + i + 1);
    while (syncq_queue_nblfq_enqueue_inline(a->s->q, (void *)v) == SYNCQ_FULL) syncq_yield();
  }
  atomic_fetch_sub(&a->s->producers_left, 1);
  return NULL;
}

static void *consumer(void *arg) {
  pc_arg *a = arg;
  for (;;) {
    void *out = NULL;
    int r = syncq_queue_nblfq_dequeue_inline(a->s->q, &out);
    if (r == SYNCQ_OK) {
      atomic_fetch_add(&a->s->seen[(uintptr_t)out - 1], 1u);
    } else if (atomic_load(&a->s->producers_left) == 0) {
      if (syncq_queue_nblfq_dequeue_inline(a->s->q, &out) != SYNCQ_OK) return NULL;
      atomic_fetch_add(&a->s->seen[(uintptr_t)out - 1], 1u);
    } else {
      syncq_yield();
    }
  }
}

static void test_nblfq_inline_concurrent(void **state) {
  (void)state;
  pc_shared *s = calloc(1, sizeof *s);
  assert_non_null(s);
  s->q = new_queue_storage(CAPACITY);
  assert_int_equal(syncq_queue_nblfq_init(s->q, CAPACITY), SYNCQ_OK);
  atomic_init(&s->producers_left, PRODUCERS);
  pthread_t t[2 * PRODUCERS];
  pc_arg args[2 * PRODUCERS];
  for (int i = 0; i < 2 * PRODUCERS; i++) {
    args[i] = (pc_arg){s, i % PRODUCERS};
    assert_int_equal(pthread_create(&t[i], NULL, i < PRODUCERS ? producer : consumer, &args[i]), 0);
  }
  for (int i = 0; i < 2 * PRODUCERS; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < PRODUCERS * ITEMS_PER_PRODUCER; i++) assert_int_equal(atomic_load(&s->seen[i]), 1u);
  assert_int_equal(syncq_queue_nblfq_destroy(s->q), SYNCQ_OK);
  free(s->q);
  free(s);
}

/* ---- locks ---- */
enum { L_MCS, L_TICKET, L_TAS, L_TTAS, L_COUNT };

typedef struct lock_shared {
  int kind;
  syncq_lock_mcs mcs;
  syncq_lock_ticket ticket;
  syncq_lock_tas tas;
  pthread_barrier_t start;
  uint64_t counter; /* plain: protected by the lock */
  _Atomic(int) errors;
} lock_shared;

static int do_lock(lock_shared *s, syncq_lock_node *n) {
  switch (s->kind) {
  case L_MCS:
    return syncq_lock_mcs_lock_inline(&s->mcs, n);
  case L_TICKET:
    return syncq_lock_ticket_lock_inline(&s->ticket);
  case L_TAS:
    return syncq_lock_tas_lock_inline(&s->tas);
  default:
    return syncq_lock_ttas_lock_inline(&s->tas);
  }
}
static int do_unlock(lock_shared *s, syncq_lock_node *n) {
  switch (s->kind) {
  case L_MCS:
    return syncq_lock_mcs_unlock_inline(&s->mcs, n);
  case L_TICKET:
    return syncq_lock_ticket_unlock_inline(&s->ticket);
  case L_TAS:
    return syncq_lock_tas_unlock_inline(&s->tas);
  default:
    return syncq_lock_ttas_unlock_inline(&s->tas);
  }
}

static void *locker(void *arg) {
  lock_shared *s = arg;
  syncq_lock_node node;
  pthread_barrier_wait(&s->start);
  for (int i = 0; i < LOCK_INCREMENTS; i++) {
    if (do_lock(s, &node) != SYNCQ_OK) {
      atomic_fetch_add(&s->errors, 1);
      continue;
    }
    s->counter++;
    if (do_unlock(s, &node) != SYNCQ_OK) atomic_fetch_add(&s->errors, 1);
  }
  return NULL;
}

static void test_inline_locks_mutual_exclusion(void **state) {
  (void)state;
  int nt = n_threads();
  /* competitive: 2x the processing units must not convoy (lock.h) */
  syncq_lock_config cfg = {0, SYNCQ_WAIT_COMPETITIVE, false};
  syncq_stats_reset();
  for (int k = 0; k < L_COUNT; k++) {
    lock_shared *s = syncq_alloc_aligned(sizeof *s, SYNCQ_CACHELINE);
    assert_non_null(s);
    s->kind = k;
    s->counter = 0;
    atomic_init(&s->errors, 0);
    assert_int_equal(syncq_lock_mcs_init(&s->mcs, &cfg), SYNCQ_OK);
    assert_int_equal(syncq_lock_ticket_init(&s->ticket, &cfg), SYNCQ_OK);
    assert_int_equal(k == L_TAS ? syncq_lock_tas_init(&s->tas, &cfg) : syncq_lock_ttas_init(&s->tas, &cfg), SYNCQ_OK);
    assert_int_equal(pthread_barrier_init(&s->start, NULL, (unsigned)nt), 0);
    pthread_t t[TEST_PLAN_MAX_THREADS];
    for (int i = 0; i < nt; i++) assert_int_equal(pthread_create(&t[i], NULL, locker, s), 0);
    for (int i = 0; i < nt; i++) pthread_join(t[i], NULL);
    assert_int_equal(atomic_load(&s->errors), 0);
    assert_int_equal(s->counter, (uint64_t)nt * LOCK_INCREMENTS);
    pthread_barrier_destroy(&s->start);
    free(s);
  }
}

static void test_inline_locks_semantics(void **state) {
  (void)state;
  syncq_lock_node n;
  syncq_lock_mcs m;
  assert_int_equal(syncq_lock_mcs_init(&m, NULL), SYNCQ_OK);
  assert_int_equal(syncq_lock_mcs_unlock_inline(&m, &n), SYNCQ_EINVAL); /* not held */
  assert_int_equal(syncq_lock_mcs_trylock_inline(&m, &n), SYNCQ_OK);
  syncq_lock_node other;
  assert_int_equal(syncq_lock_mcs_trylock_inline(&m, &other), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_mcs_unlock(&m, &n), SYNCQ_OK); /* exported unlock of an inline lock */
  assert_int_equal(syncq_lock_mcs_lock_inline(NULL, &n), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_mcs_lock_inline(&m, NULL), SYNCQ_EINVAL);
  syncq_lock_ticket t;
  assert_int_equal(syncq_lock_ticket_init(&t, NULL), SYNCQ_OK);
  assert_int_equal(syncq_lock_ticket_unlock_inline(&t), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_ticket_trylock_inline(&t), SYNCQ_OK);
  assert_int_equal(syncq_lock_ticket_trylock_inline(&t), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_ticket_unlock_inline(&t), SYNCQ_OK);
  assert_int_equal(syncq_lock_ticket_lock_inline(NULL), SYNCQ_EINVAL);
  syncq_lock_tas l;
  assert_int_equal(syncq_lock_ttas_init(&l, NULL), SYNCQ_OK);
  assert_int_equal(syncq_lock_ttas_unlock_inline(&l), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_ttas_trylock_inline(&l), SYNCQ_OK);
  assert_int_equal(syncq_lock_tas_trylock_inline(&l), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_tas_unlock_inline(&l), SYNCQ_OK);
  assert_int_equal(syncq_lock_tas_lock_inline(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_ttas_trylock_inline(NULL), SYNCQ_EINVAL);
}

static void test_inline_counts_nothing_unless_asked(void **state) {
  (void)state;
  syncq_lock_node n, other;
  syncq_lock_mcs m;
  assert_int_equal(syncq_lock_mcs_init(&m, NULL), SYNCQ_OK);
  syncq_stats_reset();
  assert_int_equal(syncq_lock_mcs_trylock_inline(&m, &n), SYNCQ_OK);
  assert_int_equal(syncq_lock_mcs_trylock_inline(&m, &other), SYNCQ_EBUSY);
  assert_int_equal(syncq_stats_self()->cas_attempts, 0u);            /* inline, no SYNCQ_STATS */
  assert_int_equal(syncq_lock_mcs_trylock(&m, &other), SYNCQ_EBUSY); /* the library's build */
  assert_int_equal(syncq_stats_self()->cas_attempts, syncq_stats_enabled() ? 1u : 0u);
  assert_int_equal(syncq_lock_mcs_unlock_inline(&m, &n), SYNCQ_OK);
}

int main(void) {
  test_plan_confine();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_nblfq_inline_sequential),       cmocka_unit_test(test_nblfq_uninitialised_storage),
    cmocka_unit_test(test_nblfq_inline_concurrent),       cmocka_unit_test(test_inline_locks_semantics),
    cmocka_unit_test(test_inline_locks_mutual_exclusion), cmocka_unit_test(test_inline_counts_nothing_unless_asked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
