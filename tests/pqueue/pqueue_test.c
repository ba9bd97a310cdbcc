/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pqueue_test.c — the priority-queue validation driver: every registered
 * priority queue through its ops table, plus the generic and typed APIs.
 *
 * For each algorithm (lock-based ones with the driver's "test-mutex" and
 * with "ttas" once registered):
 *   - sequential order (random keys with ties come out sorted, payloads
 *     intact), bad inputs, exhausted capacity (SYNCQ_ENOMEM, structure
 *     intact);
 *   - stress with 8x as many threads as processors and injected yields:
 *     every item is stamped by its inserter and claimed by exchange when
 *     deleted (no duplicate), a final drain accounts for every item (no
 *     loss), and every delete_min is checked against the recorded times of
 *     all items: it must never return a key larger than that of an item
 *     present for the whole operation (inserted before it was called, not
 *     deleted before it returned);
 *   - linearizability of short recorded histories (lc_spec_pqueue).
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

#include "../stack/test_lock.h"
#include "lincheck.h"
#include "lincheck_pqueue.h"
#include "lincheck_rounds.h"
#include "syncq/platform.h"
#include "syncq/pqueue.h"
#include "syncq/pqueue/skew_herlihy.h"
#include "syncq/pqueue/skew_lock.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

#define OVERSUBSCRIPTION TEST_PLAN_OVERSUBSCRIPTION
#if SANITIZED
#define STRESS_OPS 500
#define LC_ROUNDS 300
#else
#define STRESS_OPS 2000
#define LC_ROUNDS 1500
#endif
#define KEY_RANGE 512 /* stress keys: many ties */
#define LC_OPS_PER_THREAD 6
#define LC_DIVISOR 3 /* lincheck values v have key v / 3: ties */

/* 8x the PUs the process is confined to (test_plan.h): 16 threads on 2
 * PUs on any machine with 2 or more. */
static int n_threads(void) { return test_plan_oversubscribed(OVERSUBSCRIPTION); }

typedef struct subject {
  const syncq_algo *algo;
  const syncq_pqueue_ops *ops;
  syncq_pqueue_config cfg;
  const char *lock;
} subject;

static void *make(const subject *s, uint32_t capacity) {
  void *q = syncq_alloc_aligned(s->ops->size, s->ops->align);
  assert_non_null(q);
  syncq_pqueue_config c = s->cfg;
  c.capacity = capacity;
  int r = s->ops->init(q, &c);
  if (r != SYNCQ_OK) fail_msg("%s (lock %s): init returned %s", s->algo->name, s->lock, syncq_strerror(r));
  return q;
}

static void unmake(const subject *s, void *q) {
  assert_int_equal(s->ops->destroy(q), SYNCQ_OK);
  free(q);
}

/* ---- sequential ---- */
static void check_sequential(const subject *s) {
  enum { N = 2000 };
  void *q = make(s, N);
  uint64_t *keys = malloc(N * sizeof *keys), k;
  void *p;
  uint64_t seed = 12345;
  assert_int_equal(s->ops->delete_min(q, &k, &p), SYNCQ_EMPTY);
  for (int i = 0; i < N; i++) {
    keys[i] = i % 5 == 0 ? UINT64_MAX - test_random(&seed) % 3 : test_random(&seed) % 300; /* ties and extremes */
    /* payload: the key's slot, so it can be checked against the key */
    assert_int_equal(s->ops->insert(q, keys[i], &keys[i]), SYNCQ_OK);
    if (i % 7 == 3) { /* interleave some deletions */
      assert_int_equal(s->ops->delete_min(q, &k, &p), SYNCQ_OK);
      assert_true(*(uint64_t *)p == k);
      *(uint64_t *)p = 0xdeadull; /* deleted: a second delivery would mismatch */
    }
  }
  uint64_t prev = 0;
  int first = 1, got = 0;
  while (s->ops->delete_min(q, &k, &p) == SYNCQ_OK) {
    assert_true(*(uint64_t *)p == k); /* payload intact, never delivered twice */
    *(uint64_t *)p = 0xdeadull;
    if (!first) assert_true(k >= prev); /* sorted */
    prev = k;
    first = 0;
    got++;
  }
  assert_int_equal(got, N - (N + 3) / 7);
  assert_int_equal(s->ops->delete_min(q, &k, &p), SYNCQ_EMPTY);
  /* a NULL payload is a payload */
  assert_int_equal(s->ops->insert(q, 9, NULL), SYNCQ_OK);
  assert_int_equal(s->ops->insert(q, 0, &keys[0]), SYNCQ_OK);
  assert_int_equal(s->ops->delete_min(q, &k, &p), SYNCQ_OK);
  assert_true(k == 0 && p == &keys[0]);
  assert_int_equal(s->ops->delete_min(q, &k, &p), SYNCQ_OK);
  assert_true(k == 9 && p == NULL);
  free(keys);
  unmake(s, q);
}

static void check_bad_inputs(const subject *s) {
  void *q = syncq_alloc_aligned(s->ops->size, s->ops->align);
  uint64_t k;
  void *p;
  assert_non_null(q);
  assert_int_equal(s->ops->init(NULL, &s->cfg), SYNCQ_EINVAL);
  assert_int_equal(s->ops->destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(s->ops->insert(NULL, 1, NULL), SYNCQ_EINVAL);
  assert_int_equal(s->ops->delete_min(NULL, &k, &p), SYNCQ_EINVAL);
  syncq_pqueue_config c = s->cfg;
  c.capacity = SYNCQ_PQUEUE_MAX_CAPACITY + 1u;
  assert_int_equal(s->ops->init(q, &c), SYNCQ_EINVAL);
  c = s->cfg;
  c.max_threads = SYNCQ_PQUEUE_MAX_THREADS + 1u;
  assert_int_equal(s->ops->init(q, &c), SYNCQ_EINVAL);
  free(q);
  q = make(s, 4);
  assert_int_equal(s->ops->insert(q, 5, NULL), SYNCQ_OK);
  assert_int_equal(s->ops->delete_min(q, NULL, &p), SYNCQ_EINVAL);
  assert_int_equal(s->ops->delete_min(q, &k, NULL), SYNCQ_EINVAL);
  assert_int_equal(s->ops->delete_min(q, &k, &p), SYNCQ_OK); /* the bad calls took nothing */
  assert_true(k == 5);
  unmake(s, q);
}

static void check_exhaustion(const subject *s) {
  const uint32_t caps[] = {1, 2, 3, 64, 65, 500};
  for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
    uint32_t cap = caps[i];
    void *q = make(s, cap);
    uint64_t k;
    void *p;
    uint32_t n = 0;
    int r;
    while ((r = s->ops->insert(q, 1000u - n % 100u, (void *)(uintptr_t)(n + 1u))) == SYNCQ_OK) n++;
    assert_int_equal(r, SYNCQ_ENOMEM);
    if (n != cap) fail_msg("%s cap %u: %u inserts before ENOMEM", s->algo->name, cap, n);
    assert_int_equal(s->ops->insert(q, 0, NULL), SYNCQ_ENOMEM);
    assert_int_equal(s->ops->delete_min(q, &k, &p), SYNCQ_OK); /* room for one again */
    assert_int_equal(s->ops->insert(q, 0, NULL), SYNCQ_OK);
    assert_int_equal(s->ops->insert(q, 1, NULL), SYNCQ_ENOMEM);
    assert_int_equal(s->ops->delete_min(q, &k, &p), SYNCQ_OK);
    assert_true(k == 0 && p == NULL);
    uint32_t got = 0;
    uint64_t prev = 0;
    while (s->ops->delete_min(q, &k, &p) == SYNCQ_OK) {
      assert_true(k >= prev);
      prev = k;
      got++;
    }
    assert_int_equal(got, cap - 1u);
    unmake(s, q);
  }
}

/* ---- stress: stamping, no loss, no duplicate, no key too large ---- */
typedef struct rec {
  uint64_t key;
  uint64_t ins_call, ins_done; /* lc_tick stamps of its insert (ins_done 0: failed) */
  uint64_t del_call, del_done; /* of the delete_min that returned it (0: not yet) */
  _Atomic(uint32_t) state;     /* 0 free, 1 inserted, 2 + deleter */
} rec;

typedef struct delrec {
  rec *r;
  uint64_t call, done;
} delrec;

typedef struct stress {
  const subject *s;
  void *q;
  rec *recs;    /* [thread][STRESS_OPS] */
  delrec *dels; /* [thread][STRESS_OPS] */
  int *ndels;
  lc_clock clock;
  _Atomic(int) errors;
} stress;

static void take(stress *x, rec *r, int who, uint64_t call, uint64_t done) {
  uint32_t old = atomic_exchange(&r->state, 2u + (uint32_t)who);
  if (old != 1u) atomic_fetch_add(&x->errors, 1); /* a duplicate, or never inserted */
  r->del_call = call;
  r->del_done = done;
}

static void *stress_body(void *p) {
  test_member *w = p;
  stress *x = w->ctx;
  uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(w->id + 1);
  int nd = 0;
  for (int i = 0; i < STRESS_OPS; i++) {
    rec *r = &x->recs[(size_t)w->id * STRESS_OPS + (size_t)i];
    r->key = test_random(&seed) % KEY_RANGE;
    atomic_store(&r->state, 1u); /* stamped before the insert publishes it */
    r->ins_call = lc_tick(&x->clock);
    int st = x->s->ops->insert(x->q, r->key, r);
    r->ins_done = lc_tick(&x->clock);
    if (st != SYNCQ_OK) {
      atomic_store(&r->state, 0u);
      r->ins_done = 0;
      atomic_fetch_add(&x->errors, 1);
    }
    if (test_random(&seed) % 5 == 0) syncq_yield();
    if (test_random(&seed) % 8 != 0) { /* delete a bit less often than insert: the heap grows */
      uint64_t k;
      void *out;
      uint64_t call = lc_tick(&x->clock);
      st = x->s->ops->delete_min(x->q, &k, &out);
      uint64_t done = lc_tick(&x->clock);
      if (st == SYNCQ_OK) {
        rec *got = out;
        if (got->key != k) atomic_fetch_add(&x->errors, 1);
        take(x, got, w->id, call, done);
        x->dels[(size_t)w->id * STRESS_OPS + (size_t)nd++] = (delrec){got, call, done};
      } else if (st != SYNCQ_EMPTY) atomic_fetch_add(&x->errors, 1);
      if (test_random(&seed) % 9 == 0) syncq_yield();
    }
  }
  x->ndels[w->id] = nd;
  return NULL;
}

static int cmp_rec_key(const void *a, const void *b) {
  const rec *x = *(rec *const *)a, *y = *(rec *const *)b;
  return (x->key > y->key) - (x->key < y->key);
}

static void check_stress(const subject *s) {
  int t = n_threads();
  size_t total = (size_t)t * STRESS_OPS;
  stress x;
  memset(&x, 0, sizeof x);
  x.s = s;
  x.q = make(s, (uint32_t)total);
  x.recs = calloc(total, sizeof *x.recs);
  x.dels = calloc(total, sizeof *x.dels);
  x.ndels = calloc((size_t)t, sizeof *x.ndels);
  lc_clock_init(&x.clock);
  test_team_run(t, stress_body, &x);
  /* drain: sorted, and accounts for the rest */
  uint64_t k, prev = 0;
  void *out;
  while (s->ops->delete_min(x.q, &k, &out) == SYNCQ_OK) {
    rec *got = out;
    if (got->key != k || k < prev) atomic_fetch_add(&x.errors, 1);
    prev = k;
    take(&x, got, t, UINT64_MAX - 1, UINT64_MAX);
  }
  if (atomic_load(&x.errors) != 0)
    fail_msg("%s (lock %s): %d duplicate, foreign, failed or mis-keyed operations", s->algo->name, s->lock,
             atomic_load(&x.errors));
  for (size_t i = 0; i < total; i++) {
    uint32_t st = atomic_load(&x.recs[i].state);
    if (st == 1u) fail_msg("%s (lock %s): an inserted item was lost", s->algo->name, s->lock);
  }
  /* No delete_min returned a key larger than one present all along. */
  rec **by_key = malloc(total * sizeof *by_key);
  for (size_t i = 0; i < total; i++) by_key[i] = &x.recs[i];
  qsort(by_key, total, sizeof *by_key, cmp_rec_key);
  size_t checked = 0;
  for (int th = 0; th < t; th++) {
    for (int d = 0; d < x.ndels[th]; d++) {
      const delrec *dl = &x.dels[(size_t)th * STRESS_OPS + (size_t)d];
      for (size_t j = 0; j < total && by_key[j]->key < dl->r->key; j++) {
        const rec *u = by_key[j];
        if (u->ins_done != 0 && u->ins_done < dl->call && u->del_call > dl->done)
          fail_msg(
            "%s (lock %s): delete_min [%llu..%llu] returned key %llu while key %llu was present "
            "throughout (inserted by %llu, deleted from %llu)",
            s->algo->name, s->lock, (unsigned long long)dl->call, (unsigned long long)dl->done,
            (unsigned long long)dl->r->key, (unsigned long long)u->key, (unsigned long long)u->ins_done,
            (unsigned long long)u->del_call);
      }
      checked++;
    }
  }
  assert_true(checked > 0);
  free(by_key);
  unmake(s, x.q);
  free(x.recs);
  free(x.dels);
  free(x.ndels);
}

/* ---- linearizability of short histories ---- */
static void *lc_make(const void *s) { return make(s, 64); }

static void lc_unmake(const void *s, void *q) { unmake(s, q); }

static void lc_one_op(const void *ctx, void *q, lc_clock *clock, lc_op *op, int thread, int i, uint64_t r) {
  const subject *s = ctx;
  if (r % 5 < 3) {
    uint64_t v = (r >> 16) % 30 * 100 + (uint64_t)(thread * 10 + i); /* unique per history */
    op->kind = LC_PQ_INSERT;
    op->arg = v;
    op->ret = 0;
    op->call = lc_tick(clock);
    op->status = s->ops->insert(q, lc_pqueue_key(v, LC_DIVISOR), (void *)(uintptr_t)v);
    op->done = lc_tick(clock);
  } else {
    uint64_t k = 0;
    void *out = NULL;
    op->kind = LC_PQ_DELETE_MIN;
    op->arg = 0;
    op->call = lc_tick(clock);
    op->status = s->ops->delete_min(q, &k, &out);
    op->done = lc_tick(clock);
    op->ret = op->status == SYNCQ_OK ? (uint64_t)(uintptr_t)out : 0;
    if (op->status == SYNCQ_OK && k != lc_pqueue_key(op->ret, LC_DIVISOR))
      op->status = SYNCQ_EINVAL; /* key/payload mismatch */
  }
}

static void check_linearizable(const subject *s) {
  const lc_rounds cfg = {
    s->algo->name,       s->lock, LC_ROUNDS, LC_OPS_PER_THREAD, 0xfeedull, lc_spec_pqueue(0, LC_DIVISOR),
    lc_pqueue_kind_name, s,       lc_make,   lc_unmake,         lc_one_op};
  lc_rounds_check(&cfg);
}

static void run_subject(const subject *s) {
  print_message("pqueue %s (lock %s): %d threads\n", s->algo->name, s->lock, n_threads());
  check_sequential(s);
  check_bad_inputs(s);
  check_exhaustion(s);
  check_stress(s);
  check_linearizable(s);
}

static void run_algo(const syncq_algo *a, const char *lock, const char *label) {
  subject s = {a, a->ops, {0, 0, lock}, label};
  run_subject(&s);
}

static void test_every_registered_pqueue(void **state) {
  (void)state;
  test_lock_register();
  const syncq_algo *algos[SYNCQ_REGISTRY_MAX];
  int n = syncq_registry_list(SYNCQ_FAMILY_PQUEUE, algos, SYNCQ_REGISTRY_MAX);
  assert_true(n >= 2);
  test_lock_each_algo(algos, n, run_algo);
}

static void test_default_lock_registered(void **state) {
  (void)state;
  const syncq_algo *algos[SYNCQ_REGISTRY_MAX];
  int n = syncq_registry_list(SYNCQ_FAMILY_PQUEUE, algos, SYNCQ_REGISTRY_MAX);
  for (int i = 0; i < n; i++) {
    const syncq_pqueue_ops *ops = algos[i]->ops;
    void *q = syncq_alloc_aligned(ops->size, ops->align);
    assert_non_null(q);
    int r = ops->init(q, NULL);
    if (r == SYNCQ_ENOENT) {
      free(q);
      fail_msg(
        "pqueue %s: its default lock \"ttas\" is not registered (SYNCQ_ENOENT); it cannot run "
        "with its default configuration until the lock family registers it",
        algos[i]->name);
    }
    assert_int_equal(r, SYNCQ_OK);
    uint64_t k;
    void *p;
    assert_int_equal(ops->insert(q, 3, NULL), SYNCQ_OK);
    assert_int_equal(ops->delete_min(q, &k, &p), SYNCQ_OK);
    assert_int_equal(ops->destroy(q), SYNCQ_OK);
    free(q);
  }
}

static void test_generic_api(void **state) {
  (void)state;
  syncq_pqueue *q = NULL;
  uint64_t k;
  void *p;
  int x = 1;
  syncq_pqueue_config c = {4, 0, NULL};
  assert_int_equal(syncq_pqueue_create("skew-herlihy", &c, &q), SYNCQ_OK);
  assert_string_equal(syncq_pqueue_algo(q)->name, "skew-herlihy");
  assert_int_equal(syncq_pqueue_insert(q, 7, &x), SYNCQ_OK);
  assert_int_equal(syncq_pqueue_insert(q, 2, NULL), SYNCQ_OK);
  assert_int_equal(syncq_pqueue_delete_min(q, &k, &p), SYNCQ_OK);
  assert_true(k == 2 && p == NULL);
  assert_int_equal(syncq_pqueue_delete_min(q, &k, &p), SYNCQ_OK);
  assert_true(k == 7 && p == &x);
  assert_int_equal(syncq_pqueue_delete_min(q, &k, &p), SYNCQ_EMPTY);
  assert_int_equal(syncq_pqueue_destroy(q), SYNCQ_OK);
  assert_int_equal(syncq_pqueue_create("no-such-pqueue", NULL, &q), SYNCQ_ENOENT);
  assert_int_equal(syncq_pqueue_create(NULL, NULL, &q), SYNCQ_EINVAL);
  assert_int_equal(syncq_pqueue_create("skew-herlihy", NULL, NULL), SYNCQ_EINVAL);
  c.capacity = SYNCQ_PQUEUE_MAX_CAPACITY + 1u;
  assert_int_equal(syncq_pqueue_create("skew-herlihy", &c, &q), SYNCQ_EINVAL);
  assert_int_equal(syncq_pqueue_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_pqueue_insert(NULL, 1, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_pqueue_delete_min(NULL, &k, &p), SYNCQ_EINVAL);
  assert_null(syncq_pqueue_algo(NULL));
}

static void test_typed_apis(void **state) {
  (void)state;
  test_lock_register();
  syncq_pqueue_skew_lock l;
  syncq_pqueue_skew_herlihy h;
  syncq_pqueue_config c = {2, 2, "test-mutex"};
  uint64_t k;
  void *p;
  assert_int_equal(syncq_pqueue_skew_lock_init(&l, &c), SYNCQ_OK);
  assert_int_equal(syncq_pqueue_skew_herlihy_init(&h, &c), SYNCQ_OK);
  assert_int_equal(syncq_pqueue_skew_lock_insert(&l, 5, NULL), SYNCQ_OK);
  assert_int_equal(syncq_pqueue_skew_herlihy_insert(&h, 5, NULL), SYNCQ_OK);
  assert_int_equal(syncq_pqueue_skew_lock_insert(&l, 4, &k), SYNCQ_OK);
  assert_int_equal(syncq_pqueue_skew_herlihy_insert(&h, 4, &k), SYNCQ_OK);
  assert_int_equal(syncq_pqueue_skew_lock_insert(&l, 1, NULL), SYNCQ_ENOMEM);
  assert_int_equal(syncq_pqueue_skew_herlihy_insert(&h, 1, NULL), SYNCQ_ENOMEM);
  assert_int_equal(syncq_pqueue_skew_lock_delete_min(&l, &k, &p), SYNCQ_OK);
  assert_true(k == 4 && p == &k);
  assert_int_equal(syncq_pqueue_skew_herlihy_delete_min(&h, &k, &p), SYNCQ_OK);
  assert_true(k == 4 && p == &k);
  assert_int_equal(syncq_pqueue_skew_lock_delete_min(&l, NULL, &p), SYNCQ_EINVAL);
  assert_int_equal(syncq_pqueue_skew_herlihy_insert(NULL, 1, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_pqueue_skew_lock_destroy(&l), SYNCQ_OK);
  assert_int_equal(syncq_pqueue_skew_herlihy_destroy(&h), SYNCQ_OK);
  assert_int_equal(syncq_pqueue_skew_lock_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_pqueue_skew_herlihy_init(NULL, &c), SYNCQ_EINVAL);
  c.lock = "no-such-lock";
  assert_int_equal(syncq_pqueue_skew_lock_init(&l, &c), SYNCQ_ENOENT);
}

/* The checker's pqueue spec itself: known answers. */
#define OP(t, kd, a, r, st, c, d) \
  { t, kd, a, r, st, c, d }
static void test_pqueue_spec(void **state) {
  (void)state;
  lc_spec q = lc_spec_pqueue(0, 3);
  /* values 7 (key 2) and 4 (key 1): delete_min must give 4 first */
  const lc_op ok[] = {OP(0, LC_PQ_INSERT, 7, 0, SYNCQ_OK, 1, 2), OP(0, LC_PQ_INSERT, 4, 0, SYNCQ_OK, 3, 4),
                      OP(0, LC_PQ_DELETE_MIN, 0, 4, SYNCQ_OK, 5, 6), OP(0, LC_PQ_DELETE_MIN, 0, 7, SYNCQ_OK, 7, 8),
                      OP(0, LC_PQ_DELETE_MIN, 0, 0, SYNCQ_EMPTY, 9, 10)};
  assert_true(lc_check(&q, ok, 5, NULL));
  const lc_op wrong[] = {OP(0, LC_PQ_INSERT, 7, 0, SYNCQ_OK, 1, 2), OP(0, LC_PQ_INSERT, 4, 0, SYNCQ_OK, 3, 4),
                         OP(0, LC_PQ_DELETE_MIN, 0, 7, SYNCQ_OK, 5, 6)};
  assert_false(lc_check(&q, wrong, 3, NULL));
  /* ties: 6 and 7 share key 2; either may come out */
  const lc_op tie[] = {OP(0, LC_PQ_INSERT, 6, 0, SYNCQ_OK, 1, 2), OP(0, LC_PQ_INSERT, 7, 0, SYNCQ_OK, 3, 4),
                       OP(0, LC_PQ_DELETE_MIN, 0, 7, SYNCQ_OK, 5, 6)};
  assert_true(lc_check(&q, tie, 3, NULL));
  /* overlapping insert of a smaller key: the delete may or may not see it */
  const lc_op ov[] = {OP(0, LC_PQ_INSERT, 9, 0, SYNCQ_OK, 1, 2), OP(1, LC_PQ_INSERT, 0, 0, SYNCQ_OK, 3, 6),
                      OP(0, LC_PQ_DELETE_MIN, 0, 9, SYNCQ_OK, 4, 5)};
  assert_true(lc_check(&q, ov, 3, NULL));
  const lc_op late[] = {OP(0, LC_PQ_INSERT, 9, 0, SYNCQ_OK, 1, 2), OP(1, LC_PQ_INSERT, 0, 0, SYNCQ_OK, 3, 4),
                        OP(0, LC_PQ_DELETE_MIN, 0, 9, SYNCQ_OK, 5, 6)};
  assert_false(lc_check(&q, late, 3, NULL));
  /* empty while an item is present; an invented value; a duplicate */
  const lc_op empty[] = {OP(0, LC_PQ_INSERT, 1, 0, SYNCQ_OK, 1, 2), OP(1, LC_PQ_DELETE_MIN, 0, 0, SYNCQ_EMPTY, 3, 4)};
  assert_false(lc_check(&q, empty, 2, NULL));
  const lc_op invented[] = {OP(0, LC_PQ_DELETE_MIN, 0, 5, SYNCQ_OK, 1, 2)};
  assert_false(lc_check(&q, invented, 1, NULL));
  const lc_op dup[] = {OP(0, LC_PQ_INSERT, 5, 0, SYNCQ_OK, 1, 2), OP(0, LC_PQ_DELETE_MIN, 0, 5, SYNCQ_OK, 3, 4),
                       OP(1, LC_PQ_DELETE_MIN, 0, 5, SYNCQ_OK, 5, 6)};
  assert_false(lc_check(&q, dup, 3, NULL));
  /* capacity: ENOMEM only when full */
  lc_spec one = lc_spec_pqueue(1, 1);
  const lc_op full[] = {OP(0, LC_PQ_INSERT, 1, 0, SYNCQ_OK, 1, 2), OP(0, LC_PQ_INSERT, 2, 0, SYNCQ_ENOMEM, 3, 4)};
  assert_true(lc_check(&one, full, 2, NULL));
  const lc_op notfull[] = {OP(0, LC_PQ_INSERT, 1, 0, SYNCQ_ENOMEM, 1, 2)};
  assert_false(lc_check(&one, notfull, 1, NULL));
  assert_string_equal(lc_pqueue_kind_name(LC_PQ_INSERT), "insert");
  assert_string_equal(lc_pqueue_kind_name(LC_PQ_DELETE_MIN), "delete_min");
}

int main(void) {
  test_plan_confine();
  test_register_peers();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_pqueue_spec),
    cmocka_unit_test(test_every_registered_pqueue),
    cmocka_unit_test(test_generic_api),
    cmocka_unit_test(test_typed_apis),
    cmocka_unit_test(test_default_lock_registered),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
