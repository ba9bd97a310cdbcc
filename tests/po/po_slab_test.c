/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_slab_test.c — the postoffice's slab (src/po/slab.c): bad sizes and
 * alignments refused; objects from threads allocating at once (across
 * many chunk refills) are distinct, aligned, do not overlap (each keeps
 * what its owner wrote), and the slab frees them all at destroy (ASan's
 * leak check sees it). The same with threads carving chunks of their own
 * (po_slab_alloc_local) beside the shared ones, and po_slab_each visits
 * exactly the objects handed out, each once, also in a slab whose chunks
 * were kept from an earlier one; kept chunks are freed by a trim.
 *
 * Thread and object counts are fixed numbers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include "po/po_internal.h"

enum { THREADS = 6, PER_THREAD = 20000, SIZE = 200, ALIGN = 64 };

static void test_bad_inputs(void **state) {
  (void)state;
  po_slab s;
  assert_int_equal(po_slab_init(&s, 0, 8), SYNCQ_EINVAL);
  assert_int_equal(po_slab_init(&s, 16, 0), SYNCQ_EINVAL);
  assert_int_equal(po_slab_init(&s, 16, 24), SYNCQ_EINVAL);
  assert_int_equal(po_slab_init(&s, ((size_t)1 << 20) + 1, 8), SYNCQ_EINVAL);
  assert_int_equal(po_slab_init(&s, 1, 1), SYNCQ_OK); /* the smallest: max_align_t's alignment */
  unsigned char *a = po_slab_alloc(&s), *b = po_slab_alloc(&s);
  assert_non_null(a);
  assert_non_null(b);
  assert_true(a != b);
  assert_int_equal((uintptr_t)a % _Alignof(max_align_t), 0);
  assert_int_equal((uintptr_t)b % _Alignof(max_align_t), 0);
  po_slab_destroy(&s);
}

typedef struct {
  po_slab *slab;
  unsigned id;
  unsigned char **objs; /* [PER_THREAD] */
  bool local;           /* carve from a cursor of its own */
} worker;

static void *alloc_many(void *arg) {
  worker *w = arg;
  po_slab_cursor cur;
  po_slab_cursor_init(&cur);
  for (unsigned i = 0; i < PER_THREAD; i++) {
    unsigned char *o = w->local ? po_slab_alloc_local(w->slab, &cur) : po_slab_alloc(w->slab);
    if (o == NULL) return NULL;
    memset(o, (int)(w->id * 31u + i) & 0xff, SIZE); /* the whole object: an overlap would show */
    memcpy(o, &w->id, sizeof w->id);
    memcpy(o + sizeof w->id, &i, sizeof i);
    w->objs[i] = o;
  }
  return w;
}

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (unsigned char *const *)a, y = (uintptr_t) * (unsigned char *const *)b;
  return (x > y) - (x < y);
}

static size_t visited;
static void count_only(void *obj) {
  assert_non_null(obj);
  visited++;
}

/* po_slab_each's visit: the object's (id, index) tag found, counted. */
static worker *visit_workers;
static void visit(void *obj) {
  unsigned char *o = obj;
  unsigned id, idx;
  memcpy(&id, o, sizeof id);
  memcpy(&idx, o + sizeof id, sizeof idx);
  assert_true(id < THREADS);
  assert_true(idx < PER_THREAD);
  assert_ptr_equal(visit_workers[id].objs[idx], o); /* an object handed out, to that owner */
  visit_workers[id].objs[idx] = NULL;               /* a second visit would fail above */
  visited++;
}

/* THREADS threads allocate at once, those with an odd id from cursors of
 * their own; then every object is checked and visited once. */
static void run_workers(po_slab *s) {
  pthread_t t[THREADS];
  worker w[THREADS];
  unsigned char **all = malloc((size_t)THREADS * PER_THREAD * sizeof *all);
  unsigned char **keep = malloc((size_t)THREADS * PER_THREAD * sizeof *keep);
  assert_non_null(all);
  assert_non_null(keep);
  for (unsigned k = 0; k < THREADS; k++) {
    w[k] = (worker){s, k, all + (size_t)k * PER_THREAD, k % 2 == 1};
    assert_int_equal(pthread_create(&t[k], NULL, alloc_many, &w[k]), 0);
  }
  for (unsigned k = 0; k < THREADS; k++) {
    void *r;
    assert_int_equal(pthread_join(t[k], &r), 0);
    assert_ptr_equal(r, &w[k]);
  }
  for (unsigned k = 0; k < THREADS; k++)
    for (unsigned i = 0; i < PER_THREAD; i++) {
      unsigned char *o = w[k].objs[i];
      unsigned id, idx;
      memcpy(&id, o, sizeof id);
      memcpy(&idx, o + sizeof id, sizeof idx);
      assert_int_equal(id, k);
      assert_int_equal(idx, i);
      assert_int_equal(o[SIZE - 1], (w[k].id * 31u + i) & 0xff);
      assert_int_equal((uintptr_t)o % ALIGN, 0);
    }
  size_t n = (size_t)THREADS * PER_THREAD;
  memcpy(keep, all, n * sizeof *all);
  qsort(keep, n, sizeof *keep, cmp_ptr);
  for (size_t i = 1; i < n; i++) assert_true((uintptr_t)keep[i] - (uintptr_t)keep[i - 1] >= SIZE); /* disjoint */
  visited = 0;
  visit_workers = w;
  po_slab_each(s, visit);
  assert_int_equal(visited, n);
  for (size_t i = 0; i < n; i++) assert_null(all[i]); /* every one visited */
  free(keep);
  free(all);
}

static void test_concurrent_alloc(void **state) {
  (void)state;
  po_slab s;
  assert_int_equal(po_slab_init(&s, SIZE, ALIGN), SYNCQ_OK);
  run_workers(&s);
  po_slab_destroy(&s);
  /* A second slab of the geometry takes the first one's chunks, whose
   * unused tails hold the first run's tags: each must not visit them. */
  assert_int_equal(po_slab_init(&s, SIZE, ALIGN), SYNCQ_OK);
  run_workers(&s);
  po_slab_destroy(&s);
}

static void test_each_empty_and_small(void **state) {
  (void)state;
  po_slab s;
  assert_int_equal(po_slab_init(&s, 64, 64), SYNCQ_OK);
  visited = 0;
  po_slab_each(&s, count_only);
  assert_int_equal(visited, 0);
  po_slab_cursor cur;
  po_slab_cursor_init(&cur);
  void *a = po_slab_alloc_local(&s, &cur), *b = po_slab_alloc(&s), *c = po_slab_alloc_local(&s, &cur);
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(c);
  assert_ptr_equal((char *)c, (char *)a + 64); /* the cursor's chunk, carved in order */
  assert_true(b != a && b != c);
  po_slab_each(&s, count_only);
  assert_int_equal(visited, 3);
  po_slab_destroy(&s);
}

/* A destroyed slab's chunks are kept for the next slab of its geometry
 * until po_slab_kept_trim frees them (the bytes it frees cover them, and
 * a second trim has none); a slab made after the trim carves fresh
 * chunks. In an AddressSanitizer build a kept chunk holds no stale
 * pointer: a later slab's first object reads zero. */
static void test_kept_trim(void **state) {
  (void)state;
  (void)po_slab_kept_trim(); /* what earlier tests left */
  assert_int_equal(po_slab_kept_trim(), 0);
  po_slab s;
  assert_int_equal(po_slab_init(&s, 64, 64), SYNCQ_OK);
  void **o = po_slab_alloc(&s);
  assert_non_null(o);
  *o = &s; /* a pointer the kept chunk would hold */
  po_slab_destroy(&s);
  assert_int_equal(po_slab_init(&s, 64, 64), SYNCQ_OK);
  void **again = po_slab_alloc(&s);
  assert_ptr_equal(again, o); /* the kept chunk, reused */
#if SYNCQ_ASAN
  assert_null(*again);
#endif
  po_slab_destroy(&s);
  size_t bytes = po_slab_kept_trim();
  assert_true(bytes >= 64 * 32); /* the first chunk: PO_SLAB_MIN objects of 64 bytes */
  assert_int_equal(po_slab_kept_trim(), 0);
  assert_int_equal(po_slab_init(&s, 64, 64), SYNCQ_OK);
  assert_non_null(po_slab_alloc(&s));
  po_slab_destroy(&s);
  assert_true(po_slab_kept_trim() >= 64 * 32);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_bad_inputs),
    cmocka_unit_test(test_concurrent_alloc),
    cmocka_unit_test(test_each_empty_and_small),
    cmocka_unit_test(test_kept_trim),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
