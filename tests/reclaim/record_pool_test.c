/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * record_pool_test.c — the records shared by EBR and hazard pointers
 * (src/reclaim/record_pool.c):
 *
 * - a published record is held in its domain until given back; then the
 *   next taker in that domain gets it, and a taker naming another domain
 *   does not;
 * - a record given back by a thread that has exited is reused by the next
 *   thread (the domain does not grow);
 * - drain cleans every record once, puts it in the pool, where the next
 *   domain's allocation finds it; a stale take naming the old domain fails;
 * - a holder giving its record back (RELEASING) holds drain off until it
 *   is done, and begin_release fails on a record that is no longer held
 *   under that domain.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <time.h>
#include <cmocka.h>

#include "reclaim/record_pool.h"

typedef struct test_rec {
  int payload;
  rpool_record rec;
} test_rec;

static rpool pool = RPOOL_INIT(test_rec, rec);

static rpool_record *fresh(rpool_domain *d, int payload) {
  rpool_record *x = rpool_alloc(&pool);
  assert_non_null(x);
  RPOOL_CONTAINER(x, test_rec, rec)->payload = payload;
  rpool_publish(d, x);
  return x;
}

static void count_clean(rpool_record *x, void *ctx) {
  (void)x;
  ++*(int *)ctx;
}

static size_t listed(rpool_domain *d) {
  size_t n = 0;
  for (rpool_record *x = rpool_first(d); x != NULL; x = x->domain_next) n++;
  return n;
}

static void test_take_and_give_back(void **state) {
  (void)state;
  rpool_domain a, b;
  rpool_domain_init(&a);
  rpool_domain_init(&b);
  assert_true(a.id != 0 && b.id != 0 && a.id != b.id);
  rpool_record *x = fresh(&a, 7);
  assert_true(rpool_held_in(x, a.id));
  assert_false(rpool_held_in(x, b.id));
  assert_true(rpool_is_held(x));
  assert_int_equal(atomic_load(&a.nrecords), 1);
  assert_null(rpool_take_free(&a)); /* held */
  assert_false(rpool_try_take(x, a.id));
  rpool_give_back(x, a.id);
  assert_false(rpool_is_held(x));
  assert_false(rpool_try_take(x, b.id)); /* free in a, not in b */
  assert_ptr_equal(rpool_take_free(&a), x);
  assert_int_equal(RPOOL_CONTAINER(x, test_rec, rec)->payload, 7);
  rpool_record *y = fresh(&a, 8); /* a second holder needs a second record */
  assert_ptr_not_equal(x, y);
  assert_int_equal(listed(&a), 2);
  assert_int_equal(atomic_load(&a.nrecords), 2);
  rpool_give_back(x, a.id);
  rpool_give_back(y, a.id);
  int cleaned = 0;
  rpool_domain_drain(&pool, &a, count_clean, &cleaned);
  assert_int_equal(cleaned, 2);
  rpool_domain_drain(&pool, &b, count_clean, &cleaned); /* empty: nothing */
  assert_int_equal(cleaned, 2);
}

typedef struct user_arg {
  rpool_domain *d;
  rpool_record *got;
} user_arg;

/* One thread's use of the domain: take a record (or make one), give it
 * back, exit. */
static void *user(void *p) {
  user_arg *u = p;
  rpool_record *x = rpool_take_free(u->d);
  if (x == NULL) x = fresh(u->d, 1);
  u->got = x;
  rpool_give_back(x, u->d->id);
  return NULL;
}

static void test_reuse_after_exit(void **state) {
  (void)state;
  rpool_domain d;
  rpool_domain_init(&d);
  rpool_record *first = NULL;
  for (int i = 0; i < 8; i++) {
    user_arg u = {&d, NULL};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, user, &u), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    if (first == NULL) first = u.got;
    assert_ptr_equal(u.got, first); /* the exited thread's record */
  }
  assert_int_equal(atomic_load(&d.nrecords), 1);
  int cleaned = 0;
  rpool_domain_drain(&pool, &d, count_clean, &cleaned);
  assert_int_equal(cleaned, 1);
}

static void test_drain_to_pool(void **state) {
  (void)state;
  rpool_domain a;
  rpool_domain_init(&a);
  rpool_record *x = fresh(&a, 1), *y = fresh(&a, 2);
  rpool_give_back(y, a.id); /* x stays held: a thread keeps it (a cache) */
  int cleaned = 0;
  rpool_domain_drain(&pool, &a, count_clean, &cleaned);
  assert_int_equal(cleaned, 2);
  assert_false(rpool_is_held(x));        /* taken from its keeper */
  assert_false(rpool_try_take(x, a.id)); /* a stale hint matches nothing */
  assert_false(rpool_try_take(y, a.id));
  assert_false(rpool_begin_release(x, a.id)); /* the keeper finds it gone */
  /* the next domain's allocations come from the pool */
  rpool_domain b;
  rpool_domain_init(&b);
  rpool_record *p = rpool_alloc(&pool), *q = rpool_alloc(&pool);
  assert_true((p == x && q == y) || (p == y && q == x));
  rpool_publish(&b, p);
  rpool_publish(&b, q);
  assert_true(rpool_held_in(p, b.id) && rpool_held_in(q, b.id));
  rpool_give_back(p, b.id);
  rpool_give_back(q, b.id);
  rpool_domain_drain(&pool, &b, count_clean, &cleaned);
  assert_int_equal(cleaned, 4);
}

typedef struct drain_arg {
  rpool_domain *d;
  int cleaned;
  _Atomic(int) done;
} drain_arg;

static void *drainer(void *p) {
  drain_arg *a = p;
  rpool_domain_drain(&pool, a->d, count_clean, &a->cleaned);
  atomic_store(&a->done, 1);
  return NULL;
}

static void test_drain_waits_for_release(void **state) {
  (void)state;
  rpool_domain d;
  rpool_domain_init(&d);
  rpool_record *x = fresh(&d, 1);
  assert_true(rpool_begin_release(x, d.id)); /* a thread exit clearing it */
  assert_false(rpool_held_in(x, d.id));      /* RELEASING: not a cache hit */
  assert_false(rpool_begin_release(x, d.id));
  drain_arg a = {&d, 0, 0};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, drainer, &a), 0);
  nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
  assert_int_equal(atomic_load(&a.done), 0); /* still waiting */
  assert_int_equal(a.cleaned, 0);
  rpool_give_back(x, d.id); /* release done */
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_int_equal(atomic_load(&a.done), 1);
  assert_int_equal(a.cleaned, 1);
  assert_false(rpool_is_held(x));
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_take_and_give_back),
    cmocka_unit_test(test_reuse_after_exit),
    cmocka_unit_test(test_drain_to_pool),
    cmocka_unit_test(test_drain_waits_for_release),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
