/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * treiber_cache_test.c — the per-thread node cache of the Treiber stack
 * (src/stack/treiber.c), beyond what the stack driver checks:
 * - a node a thread pops is the node its next push reuses (no trip through
 *   the shared free list), and the capacity stays exact from one thread;
 * - a hint left by a destroyed stack is never used by a new stack at the
 *   same address (the new stack still gives exactly `capacity` pushes and
 *   LIFO order);
 * - nodes cached by a thread that has exited are not lost to LIFO/ownership
 *   (only to capacity, as the contract says), and threads beyond
 *   max_threads fall back to the shared list correctly;
 * - a thread alternating between more stacks than it keeps hints for
 *   finds its own cache again (no cache is claimed twice by one thread).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include "syncq/platform.h"
#include "syncq/stack/treiber.h"

#define CAP 8
#define MANY_STACKS 6 /* more than the hints a thread keeps */
#define WORKERS 4
#define WORKER_PAIRS 2000

static void *item(uintptr_t v) { return (void *)(v << 3 | 4); }

static syncq_stack_treiber *make(void *storage, uint32_t cap, uint32_t threads, int *st) {
  syncq_stack_treiber *s = storage;
  syncq_stack_config c = {cap, threads, NULL};
  *st = syncq_stack_treiber_init(s, &c);
  return s;
}

static void fill_and_check(syncq_stack_treiber *s, uint32_t cap) {
  void *out;
  for (uintptr_t v = 1; v <= cap; v++) assert_int_equal(syncq_stack_treiber_push(s, item(v)), SYNCQ_OK);
  assert_int_equal(syncq_stack_treiber_push(s, item(99)), SYNCQ_ENOMEM);
  for (uintptr_t v = cap; v >= 1; v--) {
    assert_int_equal(syncq_stack_treiber_pop(s, &out), SYNCQ_OK);
    assert_ptr_equal(out, item(v));
  }
  assert_int_equal(syncq_stack_treiber_pop(s, &out), SYNCQ_EMPTY);
}

static void test_reuse_and_exact_capacity(void **state) {
  (void)state;
  void *mem = syncq_alloc_aligned(sizeof(syncq_stack_treiber), _Alignof(syncq_stack_treiber));
  assert_non_null(mem);
  int st;
  syncq_stack_treiber *s = make(mem, CAP, 2, &st);
  if (st == SYNCQ_ENOTSUP) {
    free(mem);
    skip();
  }
  assert_int_equal(st, SYNCQ_OK);
  void *out;
  /* pop then push: the same node comes back (the cache, not the list) */
  assert_int_equal(syncq_stack_treiber_push(s, item(1)), SYNCQ_OK);
  uint64_t top1 = atomic_load(&s->top);
  assert_int_equal(syncq_stack_treiber_pop(s, &out), SYNCQ_OK);
  assert_int_equal(syncq_stack_treiber_push(s, item(2)), SYNCQ_OK);
  uint64_t top2 = atomic_load(&s->top);
  assert_int_equal((uint32_t)top1, (uint32_t)top2); /* same node index */
  assert_true(top2 >> 32 > top1 >> 32);             /* new version: ABA defence intact */
  assert_int_equal(syncq_stack_treiber_pop(s, &out), SYNCQ_OK);
  assert_ptr_equal(out, item(2));
  for (int round = 0; round < 3; round++) fill_and_check(s, CAP); /* cached nodes count */
  assert_int_equal(syncq_stack_treiber_destroy(s), SYNCQ_OK);
  /* a new stack at the same address: the old hint must not be used */
  s = make(mem, CAP / 2, 2, &st);
  assert_int_equal(st, SYNCQ_OK);
  fill_and_check(s, CAP / 2);
  assert_int_equal(syncq_stack_treiber_destroy(s), SYNCQ_OK);
  free(mem);
}

static void test_many_stacks_one_thread(void **state) {
  (void)state;
  syncq_stack_treiber *s[MANY_STACKS];
  for (int i = 0; i < MANY_STACKS; i++) {
    s[i] = syncq_alloc_aligned(sizeof(syncq_stack_treiber), _Alignof(syncq_stack_treiber));
    assert_non_null(s[i]);
    int st;
    make(s[i], CAP, 1, &st); /* one cache each: claiming a second would fail */
    if (st == SYNCQ_ENOTSUP) skip();
    assert_int_equal(st, SYNCQ_OK);
  }
  void *out;
  for (int round = 0; round < 4; round++) {
    for (int i = 0; i < MANY_STACKS; i++) { /* round robin evicts the hints */
      assert_int_equal(syncq_stack_treiber_push(s[i], item((uintptr_t)i + 1)), SYNCQ_OK);
      assert_int_equal(syncq_stack_treiber_pop(s[i], &out), SYNCQ_OK);
      assert_ptr_equal(out, item((uintptr_t)i + 1));
    }
  }
  for (int i = 0; i < MANY_STACKS; i++) {
    fill_and_check(s[i], CAP); /* its cached node found again: full capacity */
    assert_int_equal(syncq_stack_treiber_destroy(s[i]), SYNCQ_OK);
    free(s[i]);
  }
}

typedef struct wctx {
  syncq_stack_treiber *s;
  _Atomic(int) errors;
} wctx;

static void *worker(void *p) {
  wctx *w = p;
  void *out;
  for (uintptr_t i = 0; i < WORKER_PAIRS; i++) {
    int r = syncq_stack_treiber_push(w->s, item(i + 1));
    if (r == SYNCQ_ENOMEM) continue; /* others' caches may hold the last nodes */
    if (r != SYNCQ_OK) atomic_fetch_add(&w->errors, 1);
    r = syncq_stack_treiber_pop(w->s, &out);
    if (r != SYNCQ_OK && r != SYNCQ_EMPTY) atomic_fetch_add(&w->errors, 1);
  }
  return NULL;
}

static void test_more_threads_than_caches(void **state) {
  (void)state;
  void *mem = syncq_alloc_aligned(sizeof(syncq_stack_treiber), _Alignof(syncq_stack_treiber));
  assert_non_null(mem);
  int st;
  /* 2 caches for WORKERS threads: the others use the shared list */
  syncq_stack_treiber *s = make(mem, WORKERS * SYNCQ_STACK_TREIBER_CACHE_NODES + CAP, 2, &st);
  if (st == SYNCQ_ENOTSUP) {
    free(mem);
    skip();
  }
  assert_int_equal(st, SYNCQ_OK);
  wctx w = {s, 0};
  pthread_t th[WORKERS];
  for (int i = 0; i < WORKERS; i++) assert_int_equal(pthread_create(&th[i], NULL, worker, &w), 0);
  for (int i = 0; i < WORKERS; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
  assert_int_equal(atomic_load(&w.errors), 0);
  void *out;
  while (syncq_stack_treiber_pop(s, &out) == SYNCQ_OK) {
  }
  /* the exited threads' caches keep at most CACHE_NODES nodes each: this
   * thread still gets every other node */
  uintptr_t n = 0;
  while (syncq_stack_treiber_push(s, item(n + 1)) == SYNCQ_OK) n++;
  assert_true(n >= CAP);
  for (uintptr_t v = n; v >= 1; v--) {
    assert_int_equal(syncq_stack_treiber_pop(s, &out), SYNCQ_OK);
    assert_ptr_equal(out, item(v));
  }
  assert_int_equal(syncq_stack_treiber_destroy(s), SYNCQ_OK);
  free(mem);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_reuse_and_exact_capacity),
    cmocka_unit_test(test_many_stacks_one_thread),
    cmocka_unit_test(test_more_threads_than_caches),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
