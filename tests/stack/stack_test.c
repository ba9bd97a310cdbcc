/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stack_test.c — the stack validation driver: every registered stack
 * algorithm through its ops table, plus the generic and typed APIs.
 *
 * For each algorithm (lock-based ones with every lock available: the
 * driver's own "test-mutex", and "ttas" once the lock family registers it):
 *   - sequential LIFO semantics, bad inputs, exhausted pools (SYNCQ_ENOMEM
 *     at exactly `capacity` items, the stack intact afterwards);
 *   - stress with 8x as many threads as processors, yields injected at
 *     varying points: every item is stamped by its owner when pushed and
 *     claimed by exchange when popped (a duplicate pop finds it claimed),
 *     and a final drain accounts for every item (no loss);
 *   - LIFO per producer: after concurrent pushes, concurrent poppers must
 *     see each producer's items in reverse push order;
 *   - linearizability of short recorded histories (lc_spec_stack).
 * A lock-based stack whose default lock ("ttas") is not registered fails
 * test_default_lock_registered: it says so rather than pass.
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
#include "test_random.h"
#include "test_team.h"

#include "test_peers.h"

#include "lincheck.h"
#include "lincheck_rounds.h"
#include "syncq/platform.h"
#include "syncq/stack.h"
#include "syncq/stack/herlihy.h"
#include "syncq/stack/lock.h"
#include "syncq/stack/treiber.h"
#include "syncq/stack/treiber_hp.h"
#include "syncq/stack/elimination.h"
#include "test_lock.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

#define OVERSUBSCRIPTION TEST_PLAN_OVERSUBSCRIPTION
#if SANITIZED
#define STRESS_OPS 4000 /* push/pop pairs per thread */
#define LIFO_ITEMS 1000 /* items per producer */
#define LC_ROUNDS 300
#else
#define STRESS_OPS 40000
#define LIFO_ITEMS 10000
#define LC_ROUNDS 1500
#endif
#define LC_OPS_PER_THREAD 6

/* 8x the PUs the process is confined to (test_plan.h): 16 threads on 2
 * PUs on any machine with 2 or more. */
static int n_threads(void) { return test_plan_oversubscribed(OVERSUBSCRIPTION); }

/* ---- one algorithm with one configuration ---- */
typedef struct subject {
  const syncq_algo *algo;
  const syncq_stack_ops *ops;
  syncq_stack_config cfg;
  const char *lock; /* for messages */
} subject;

static void *make(const subject *s, uint32_t capacity) {
  void *st = syncq_alloc_aligned(s->ops->size, s->ops->align);
  assert_non_null(st);
  syncq_stack_config c = s->cfg;
  c.capacity = capacity;
  int r = s->ops->init(st, &c);
  if (r != SYNCQ_OK) fail_msg("%s (lock %s): init returned %s", s->algo->name, s->lock, syncq_strerror(r));
  return st;
}

static void unmake(const subject *s, void *st) {
  assert_int_equal(s->ops->destroy(st), SYNCQ_OK);
  free(st);
}

/* ---- sequential ---- */
static void check_sequential(const subject *s) {
  void *st = make(s, 100);
  uintptr_t v;
  void *out = NULL;
  assert_int_equal(s->ops->pop(st, &out), SYNCQ_EMPTY);
  for (v = 1; v <= 100; v++) assert_int_equal(s->ops->push(st, (void *)v), SYNCQ_OK);
  for (v = 100; v >= 51; v--) {
    assert_int_equal(s->ops->pop(st, &out), SYNCQ_OK);
    assert_true((uintptr_t)out == v);
  }
  for (v = 1000; v < 1010; v++) assert_int_equal(s->ops->push(st, (void *)v), SYNCQ_OK);
  for (v = 1009; v >= 1000; v--) {
    assert_int_equal(s->ops->pop(st, &out), SYNCQ_OK);
    assert_true((uintptr_t)out == v);
  }
  for (v = 50; v >= 1; v--) {
    assert_int_equal(s->ops->pop(st, &out), SYNCQ_OK);
    assert_true((uintptr_t)out == v);
  }
  assert_int_equal(s->ops->pop(st, &out), SYNCQ_EMPTY);
  unmake(s, st);
}

static void check_bad_inputs(const subject *s) {
  void *st = syncq_alloc_aligned(s->ops->size, s->ops->align);
  void *out;
  assert_non_null(st);
  assert_int_equal(s->ops->init(NULL, &s->cfg), SYNCQ_EINVAL);
  assert_int_equal(s->ops->destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(s->ops->push(NULL, &out), SYNCQ_EINVAL);
  assert_int_equal(s->ops->pop(NULL, &out), SYNCQ_EINVAL);
  syncq_stack_config c = s->cfg;
  c.capacity = SYNCQ_STACK_MAX_CAPACITY + 1u;
  assert_int_equal(s->ops->init(st, &c), SYNCQ_EINVAL);
  c = s->cfg;
  c.max_threads = SYNCQ_STACK_MAX_THREADS + 1u;
  assert_int_equal(s->ops->init(st, &c), SYNCQ_EINVAL);
  free(st);
  st = make(s, 8);
  assert_int_equal(s->ops->push(st, NULL), SYNCQ_EINVAL); /* items are non-NULL */
  assert_int_equal(s->ops->pop(st, NULL), SYNCQ_EINVAL);
  assert_int_equal(s->ops->pop(st, &out), SYNCQ_EMPTY); /* the bad calls changed nothing */
  unmake(s, st);
}

/* Exhausted pool: exactly `cap` pushes succeed, then ENOMEM without harm. */
static void check_exhaustion(const subject *s) {
  const uint32_t caps[] = {1, 2, 3, 64, 65, 1000};
  for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
    uint32_t cap = caps[i];
    void *st = make(s, cap);
    void *out;
    for (uintptr_t v = 1; v <= cap; v++) assert_int_equal(s->ops->push(st, (void *)v), SYNCQ_OK);
    assert_int_equal(s->ops->push(st, (void *)(uintptr_t)7777), SYNCQ_ENOMEM);
    assert_int_equal(s->ops->push(st, (void *)(uintptr_t)7778), SYNCQ_ENOMEM);
    assert_int_equal(s->ops->pop(st, &out), SYNCQ_OK); /* room for one again */
    assert_true((uintptr_t)out == cap);
    assert_int_equal(s->ops->push(st, (void *)(uintptr_t)5555), SYNCQ_OK);
    assert_int_equal(s->ops->push(st, (void *)(uintptr_t)7779), SYNCQ_ENOMEM);
    assert_int_equal(s->ops->pop(st, &out), SYNCQ_OK);
    assert_true((uintptr_t)out == 5555);
    for (uintptr_t v = cap - 1; v >= 1; v--) {
      assert_int_equal(s->ops->pop(st, &out), SYNCQ_OK);
      if ((uintptr_t)out != v)
        fail_msg("%s cap %u: popped %zu, expected %zu", s->algo->name, cap, (size_t)(uintptr_t)out, (size_t)v);
    }
    assert_int_equal(s->ops->pop(st, &out), SYNCQ_EMPTY);
    unmake(s, st);
  }
}

/* ---- stress: ownership stamping, no loss, no duplicate ---- */
enum { FREE = 0, IN_STACK = 1, TAKEN = 2 };

typedef struct item {
  _Atomic(uint32_t) state; /* FREE, IN_STACK, or TAKEN + popper id */
  uint32_t owner, seq;
} item;

typedef struct stress {
  const subject *s;
  void *st;
  item *items; /* [thread][STRESS_OPS] */
  _Atomic(int) errors;
  _Atomic(uint64_t) pushed, popped;
} stress;

static void claim(stress *x, item *it, int popper) {
  uint32_t old = atomic_exchange(&it->state, TAKEN + (uint32_t)popper);
  if (old != IN_STACK) atomic_fetch_add(&x->errors, 1); /* duplicate, or never pushed */
}

static void *stress_body(void *p) {
  test_member *w = p;
  stress *x = w->ctx;
  uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(w->id + 1);
  uint64_t pushed = 0, popped = 0;
  for (int i = 0; i < STRESS_OPS; i++) {
    item *it = &x->items[(size_t)w->id * STRESS_OPS + (size_t)i];
    it->owner = (uint32_t)w->id;
    it->seq = (uint32_t)i;
    atomic_store(&it->state, IN_STACK); /* stamped before the push publishes it */
    int r = x->s->ops->push(x->st, it);
    if (r == SYNCQ_OK) pushed++;
    else {
      atomic_store(&it->state, FREE);
      if (r != SYNCQ_ENOMEM) atomic_fetch_add(&x->errors, 1);
    }
    if (test_random(&seed) % 7 == 0) syncq_yield();
    int pops = (int)(test_random(&seed) % 3); /* 0..2 pops: the stack grows and shrinks */
    for (int k = 0; k < pops; k++) {
      void *out;
      r = x->s->ops->pop(x->st, &out);
      if (r == SYNCQ_OK) {
        claim(x, out, w->id);
        popped++;
      } else if (r != SYNCQ_EMPTY) atomic_fetch_add(&x->errors, 1);
      if (test_random(&seed) % 11 == 0) syncq_yield();
    }
  }
  atomic_fetch_add(&x->pushed, pushed);
  atomic_fetch_add(&x->popped, popped);
  return NULL;
}

static void check_stress(const subject *s) {
  int t = n_threads();
  size_t total = (size_t)t * STRESS_OPS;
  stress x = {s, make(s, (uint32_t)(total / 4 + 16)), calloc(total, sizeof(item)), 0, 0, 0};
  assert_non_null(x.items);
  test_team_run(t, stress_body, &x);
  void *out;
  uint64_t drained = 0;
  while (s->ops->pop(x.st, &out) == SYNCQ_OK) {
    claim(&x, out, t);
    drained++;
  }
  if (atomic_load(&x.errors) != 0)
    fail_msg("%s (lock %s): %d duplicate or foreign pops", s->algo->name, s->lock, atomic_load(&x.errors));
  uint64_t in = atomic_load(&x.pushed), outn = atomic_load(&x.popped) + drained;
  if (in != outn)
    fail_msg("%s (lock %s): %llu pushed, %llu popped (lost items)", s->algo->name, s->lock, (unsigned long long)in,
             (unsigned long long)outn);
  for (size_t i = 0; i < total; i++) {
    uint32_t st = atomic_load(&x.items[i].state);
    assert_true(st == FREE || st >= TAKEN); /* nothing left "in the stack" */
  }
  unmake(s, x.st);
  free(x.items);
}

/* ---- LIFO per producer ---- */
typedef struct lifo {
  const subject *s;
  void *st;
  uint32_t *vals; /* producer << 20 | seq, + 1 */
  pthread_barrier_t bar;
  _Atomic(int) errors;
  _Atomic(uint64_t) popped;
} lifo;

static void *lifo_body(void *p) {
  test_member *w = p;
  lifo *x = w->ctx;
  uint64_t seed = 0x51ed2701ull * (uint64_t)(w->id + 7);
  for (int i = 0; i < LIFO_ITEMS; i++) {
    uintptr_t v = ((uintptr_t)w->id << 20 | (uintptr_t)i) + 1u;
    if (x->s->ops->push(x->st, (void *)v) != SYNCQ_OK) atomic_fetch_add(&x->errors, 1);
    if (test_random(&seed) % 13 == 0) syncq_yield();
  }
  pthread_barrier_wait(&x->bar);
  /* Pops only now: each producer's items lie in reverse push order, and
   * a popper meets any producer's items in that order. */
  int64_t *last = malloc((size_t)w->n * sizeof *last);
  for (int i = 0; i < w->n; i++) last[i] = INT64_MAX;
  void *out;
  uint64_t popped = 0;
  while (x->s->ops->pop(x->st, &out) == SYNCQ_OK) {
    uintptr_t v = (uintptr_t)out - 1u;
    int prod = (int)(v >> 20);
    int64_t seq = (int64_t)(v & 0xfffff);
    if (prod >= w->n || seq >= last[prod]) atomic_fetch_add(&x->errors, 1);
    else last[prod] = seq;
    popped++;
    if (test_random(&seed) % 13 == 0) syncq_yield();
  }
  free(last);
  atomic_fetch_add(&x->popped, popped);
  return NULL;
}

static void check_lifo_per_producer(const subject *s) {
  int t = n_threads();
  lifo x;
  memset(&x, 0, sizeof x);
  x.s = s;
  x.st = make(s, (uint32_t)(t * LIFO_ITEMS));
  pthread_barrier_init(&x.bar, NULL, (unsigned)t);
  test_team_run(t, lifo_body, &x);
  pthread_barrier_destroy(&x.bar);
  if (atomic_load(&x.errors) != 0)
    fail_msg("%s (lock %s): %d pops out of LIFO order per producer (or failed pushes)", s->algo->name, s->lock,
             atomic_load(&x.errors));
  assert_int_equal(atomic_load(&x.popped), (uint64_t)t * LIFO_ITEMS);
  unmake(s, x.st);
}

/* ---- linearizability of short histories ---- */
static void *lc_make(const void *s) { return make(s, 64); }

static void lc_unmake(const void *s, void *st) { unmake(s, st); }

static void lc_one_op(const void *ctx, void *st, lc_clock *clock, lc_op *op, int thread, int i, uint64_t r) {
  const subject *s = ctx;
  if (r % 2 == 0) {
    op->kind = LC_STACK_PUSH;
    op->arg = (uint64_t)(thread * 100 + i + 1);
    op->call = lc_tick(clock);
    op->status = s->ops->push(st, (void *)(uintptr_t)op->arg);
    op->done = lc_tick(clock);
    op->ret = 0;
  } else {
    void *out = NULL;
    op->kind = LC_STACK_POP;
    op->arg = 0;
    op->call = lc_tick(clock);
    op->status = s->ops->pop(st, &out);
    op->done = lc_tick(clock);
    op->ret = op->status == SYNCQ_OK ? (uint64_t)(uintptr_t)out : 0;
  }
}

static void check_linearizable(const subject *s) {
  const lc_rounds cfg = {s->algo->name, s->lock, LC_ROUNDS, LC_OPS_PER_THREAD, 0xabcdefull, lc_spec_stack(0),
                         NULL,          s,       lc_make,   lc_unmake,         lc_one_op};
  lc_rounds_check(&cfg);
}

/* ---- the elimination stack with eliminate-first, registered by the
 * driver so that every check runs through its exchanges ---- */
static int ef_init(syncq_stack_elimination *st, const syncq_stack_config *c) {
  int r = syncq_stack_elimination_init(st, c);
  if (r == SYNCQ_OK) syncq_stack_elimination_set_eliminate_first(st, 1);
  return r;
}
SYNCQ_STACK_REGISTER_FNS(test_elimination_first, "test-elimination-first",
                         "elimination stack, array visited first (driver's)", "-", LOCK_FREE,
                         SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_BOUNDED, syncq_stack_elimination, ef_init,
                         syncq_stack_elimination_destroy, syncq_stack_elimination_push, syncq_stack_elimination_pop);

/* ---- drive every registered stack ---- */
static void run_subject(const subject *s) {
  print_message("stack %s (lock %s): %d threads\n", s->algo->name, s->lock, n_threads());
  check_sequential(s);
  check_bad_inputs(s);
  if (s->algo->props & SYNCQ_PROP_BOUNDED) check_exhaustion(s);
  else print_message("stack %s: unbounded (allocates), no pool to exhaust\n", s->algo->name);
  check_stress(s);
  check_lifo_per_producer(s);
  check_linearizable(s);
}

static void run_algo(const syncq_algo *a, const char *lock, const char *label) {
  subject s = {a, a->ops, {0, 0, lock}, label};
  run_subject(&s);
}

static void test_every_registered_stack(void **state) {
  (void)state;
  test_lock_register();
  const syncq_algo *found;
  if (syncq_registry_find(SYNCQ_FAMILY_STACK, syncq_stack_test_elimination_first_algo.name, &found) != SYNCQ_OK)
    syncq_registry_add(&syncq_stack_test_elimination_first_algo);
  const syncq_algo *algos[SYNCQ_REGISTRY_MAX];
  int n = syncq_registry_list(SYNCQ_FAMILY_STACK, algos, SYNCQ_REGISTRY_MAX);
  assert_true(n >= 5);
  test_lock_each_algo(algos, n, run_algo);
}

/* Lock-based stacks default to 001's TTAS lock; without it they cannot be
 * created with a NULL config, and this test says so. */
static void test_default_lock_registered(void **state) {
  (void)state;
  const syncq_algo *algos[SYNCQ_REGISTRY_MAX];
  int n = syncq_registry_list(SYNCQ_FAMILY_STACK, algos, SYNCQ_REGISTRY_MAX);
  for (int i = 0; i < n; i++) {
    const syncq_stack_ops *ops = algos[i]->ops;
    void *st = syncq_alloc_aligned(ops->size, ops->align);
    assert_non_null(st);
    int r = ops->init(st, NULL);
    if (r == SYNCQ_ENOENT) {
      free(st);
      fail_msg(
        "stack %s: its default lock \"ttas\" is not registered (SYNCQ_ENOENT); it cannot run "
        "with its default configuration until the lock family registers it",
        algos[i]->name);
    }
    assert_int_equal(r, SYNCQ_OK);
    void *out;
    assert_int_equal(ops->push(st, &out), SYNCQ_OK);
    assert_int_equal(ops->pop(st, &out), SYNCQ_OK);
    assert_int_equal(ops->destroy(st), SYNCQ_OK);
    free(st);
  }
}

static void test_typed_treiber_hp_elimination(void **state) {
  (void)state;
  syncq_stack_treiber_hp t;
  syncq_stack_elimination e;
  syncq_stack_config c = {2, 4, NULL};
  int a = 1, b = 2;
  void *out;
  assert_int_equal(syncq_stack_treiber_hp_init(&t, &c), SYNCQ_OK);
  assert_int_equal(syncq_stack_elimination_init(&e, &c), SYNCQ_OK);
  assert_int_equal(syncq_stack_treiber_hp_pop(&t, &out), SYNCQ_EMPTY);
  assert_int_equal(syncq_stack_elimination_pop(&e, &out), SYNCQ_EMPTY);
  for (int i = 0; i < 3; i++) assert_int_equal(syncq_stack_treiber_hp_push(&t, &a), SYNCQ_OK); /* unbounded */
  assert_int_equal(syncq_stack_treiber_hp_push(&t, &b), SYNCQ_OK);
  assert_int_equal(syncq_stack_elimination_push(&e, &a), SYNCQ_OK);
  assert_int_equal(syncq_stack_elimination_push(&e, &b), SYNCQ_OK);
  assert_int_equal(syncq_stack_elimination_push(&e, &b), SYNCQ_ENOMEM);
  assert_int_equal(syncq_stack_treiber_hp_pop(&t, &out), SYNCQ_OK);
  assert_ptr_equal(out, &b);
  assert_int_equal(syncq_stack_elimination_pop(&e, &out), SYNCQ_OK);
  assert_ptr_equal(out, &b);
  assert_int_equal(syncq_stack_treiber_hp_push(NULL, &a), SYNCQ_EINVAL);
  assert_int_equal(syncq_stack_treiber_hp_pop(&t, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_stack_elimination_push(&e, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_stack_elimination_pop(NULL, &out), SYNCQ_EINVAL);
  assert_int_equal(syncq_stack_treiber_hp_destroy(&t), SYNCQ_OK); /* frees the 3 nodes still held */
  assert_int_equal(syncq_stack_elimination_destroy(&e), SYNCQ_OK);
  assert_int_equal(syncq_stack_treiber_hp_init(NULL, &c), SYNCQ_EINVAL);
  assert_int_equal(syncq_stack_treiber_hp_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_stack_elimination_init(NULL, &c), SYNCQ_EINVAL);
  assert_int_equal(syncq_stack_elimination_set_eliminate_first(NULL, 1), SYNCQ_EINVAL);
  assert_int_equal(syncq_stack_elimination_destroy(NULL), SYNCQ_EINVAL);
}

static void test_unknown_lock(void **state) {
  (void)state;
  syncq_stack_lock s;
  syncq_stack_config c = {16, 0, "no-such-lock"};
  assert_int_equal(syncq_stack_lock_init(&s, &c), SYNCQ_ENOENT);
}

static void test_generic_api(void **state) {
  (void)state;
  syncq_stack *s = NULL;
  void *out;
  int x = 1;
  syncq_stack_config c = {4, 0, NULL};
  assert_int_equal(syncq_stack_create("treiber", &c, &s), SYNCQ_OK);
  assert_string_equal(syncq_stack_algo(s)->name, "treiber");
  assert_int_equal(syncq_stack_push(s, &x), SYNCQ_OK);
  assert_int_equal(syncq_stack_pop(s, &out), SYNCQ_OK);
  assert_ptr_equal(out, &x);
  assert_int_equal(syncq_stack_pop(s, &out), SYNCQ_EMPTY);
  assert_int_equal(syncq_stack_destroy(s), SYNCQ_OK);
  assert_int_equal(syncq_stack_create("herlihy", NULL, &s), SYNCQ_OK); /* NULL config: defaults */
  assert_int_equal(syncq_stack_destroy(s), SYNCQ_OK);
  assert_int_equal(syncq_stack_create("no-such-stack", NULL, &s), SYNCQ_ENOENT);
  assert_int_equal(syncq_stack_create(NULL, NULL, &s), SYNCQ_EINVAL);
  assert_int_equal(syncq_stack_create("treiber", NULL, NULL), SYNCQ_EINVAL);
  c.capacity = SYNCQ_STACK_MAX_CAPACITY + 1u;
  assert_int_equal(syncq_stack_create("treiber", &c, &s), SYNCQ_EINVAL);
  assert_int_equal(syncq_stack_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_stack_push(NULL, &x), SYNCQ_EINVAL);
  assert_int_equal(syncq_stack_pop(NULL, &out), SYNCQ_EINVAL);
  assert_null(syncq_stack_algo(NULL));
}

static void test_typed_apis(void **state) {
  (void)state;
  syncq_stack_treiber t;
  syncq_stack_herlihy h;
  syncq_stack_lock l;
  syncq_stack_config c = {2, 4, "test-mutex"};
  int a = 1, b = 2;
  void *out;
  test_lock_register();
  assert_int_equal(syncq_stack_treiber_init(&t, &c), SYNCQ_OK);
  assert_int_equal(syncq_stack_herlihy_init(&h, &c), SYNCQ_OK);
  assert_int_equal(syncq_stack_lock_init(&l, &c), SYNCQ_OK);
  assert_int_equal(syncq_stack_treiber_push(&t, &a), SYNCQ_OK);
  assert_int_equal(syncq_stack_herlihy_push(&h, &a), SYNCQ_OK);
  assert_int_equal(syncq_stack_lock_push(&l, &a), SYNCQ_OK);
  assert_int_equal(syncq_stack_treiber_push(&t, &b), SYNCQ_OK);
  assert_int_equal(syncq_stack_herlihy_push(&h, &b), SYNCQ_OK);
  assert_int_equal(syncq_stack_lock_push(&l, &b), SYNCQ_OK);
  assert_int_equal(syncq_stack_treiber_push(&t, &b), SYNCQ_ENOMEM);
  assert_int_equal(syncq_stack_herlihy_push(&h, &b), SYNCQ_ENOMEM);
  assert_int_equal(syncq_stack_lock_push(&l, &b), SYNCQ_ENOMEM);
  assert_int_equal(syncq_stack_treiber_pop(&t, &out), SYNCQ_OK);
  assert_ptr_equal(out, &b);
  assert_int_equal(syncq_stack_herlihy_pop(&h, &out), SYNCQ_OK);
  assert_ptr_equal(out, &b);
  assert_int_equal(syncq_stack_lock_pop(&l, &out), SYNCQ_OK);
  assert_ptr_equal(out, &b);
  assert_int_equal(syncq_stack_treiber_pop(NULL, &out), SYNCQ_EINVAL);
  assert_int_equal(syncq_stack_herlihy_push(NULL, &a), SYNCQ_EINVAL);
  assert_int_equal(syncq_stack_lock_pop(&l, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_stack_treiber_destroy(&t), SYNCQ_OK);
  assert_int_equal(syncq_stack_herlihy_destroy(&h), SYNCQ_OK);
  assert_int_equal(syncq_stack_lock_destroy(&l), SYNCQ_OK);
  assert_int_equal(syncq_stack_treiber_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_stack_herlihy_init(NULL, &c), SYNCQ_EINVAL);
  assert_int_equal(syncq_stack_lock_destroy(NULL), SYNCQ_EINVAL);
}

/* Herlihy's private copies: with max_threads 1 there are 3 version blocks;
 * 8x oversubscription must still work (an operation that finds no block
 * yields), with no loss. */
static void test_herlihy_few_blocks(void **state) {
  (void)state;
  const syncq_algo *a;
  assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_STACK, "herlihy", &a), SYNCQ_OK);
  subject s = {a, a->ops, {0, 1, NULL}, "-"};
  check_stress(&s);
}

int main(void) {
  test_plan_confine();
  test_register_peers();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_every_registered_stack),
    cmocka_unit_test(test_generic_api),
    cmocka_unit_test(test_typed_apis),
    cmocka_unit_test(test_unknown_lock),
    cmocka_unit_test(test_typed_treiber_hp_elimination),
    cmocka_unit_test(test_herlihy_few_blocks),
    cmocka_unit_test(test_default_lock_registered),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
