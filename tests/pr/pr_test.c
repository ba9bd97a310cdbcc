/* SPDX-License-Identifier: BSD-2-Clause */
/* pr_test.c — semantics of the atomic primitives (syncq/pr.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <pthread.h>
#include <cmocka.h>

#include "syncq/platform.h"
#include "syncq/pr.h"

static void test_cas_success_and_failure(void **state) {
  (void)state;
  _Atomic(uint64_t) w = 5;
  uint64_t e = 5;
  assert_true(syncq_pr_cas_u64(&w, &e, 9));
  assert_int_equal(atomic_load(&w), 9);
  e = 5; /* stale */
  assert_false(syncq_pr_cas_u64(&w, &e, 11));
  assert_int_equal(e, 9); /* failure reports what was there */
  assert_int_equal(atomic_load(&w), 9);
  assert_true(syncq_pr_cas_u64_explicit(&w, &e, 12, memory_order_acq_rel, memory_order_acquire));
  assert_int_equal(atomic_load(&w), 12);
}

static void test_cas_ptr(void **state) {
  (void)state;
  int a, b;
  _Atomic(void *) p = &a;
  void *e = &b;
  assert_false(syncq_pr_cas_ptr(&p, &e, &b));
  assert_ptr_equal(e, &a);
  assert_true(syncq_pr_cas_ptr(&p, &e, &b));
  assert_ptr_equal(atomic_load(&p), &b);
}

static void test_faa_swap_tas(void **state) {
  (void)state;
  _Atomic(uint64_t) w = 40;
  assert_int_equal(syncq_pr_faa_u64(&w, 2), 40);
  assert_int_equal(syncq_pr_faa_u64_explicit(&w, 3, memory_order_relaxed), 42);
  assert_int_equal(atomic_load(&w), 45);
  assert_int_equal(syncq_pr_swap_u64(&w, 7), 45);
  assert_int_equal(atomic_load(&w), 7);
  int x;
  _Atomic(void *) p = NULL;
  assert_null(syncq_pr_swap_ptr(&p, &x));
  assert_ptr_equal(atomic_load(&p), &x);
  _Atomic(uint32_t) f = 0;
  assert_false(syncq_pr_tas(&f)); /* was clear: we took it */
  assert_true(syncq_pr_tas(&f));  /* already set */
  syncq_pr_tas_clear(&f);
  assert_false(syncq_pr_tas(&f));
}

static void test_faa_wraps(void **state) {
  (void)state;
  _Atomic(uint64_t) w = UINT64_MAX;
  assert_int_equal(syncq_pr_faa_u64(&w, 1), UINT64_MAX);
  assert_int_equal(atomic_load(&w), 0);
}

static void test_dwcas(void **state) {
  (void)state;
  if (!syncq_pr_dwcas_available()) {
    /* x86-64 without CX16 does not exist in practice; fail loudly so a
     * machine without it is noticed rather than silently untested. */
    fail_msg("this CPU has no double-width CAS: the DWCAS tests cannot run");
  }
  static syncq_pr_dw_atomic w; /* static: 16-byte aligned storage */
  assert_int_equal((uintptr_t)&w % 16, 0);
  atomic_store(&w.lo, 1);
  atomic_store(&w.hi, 2);
  syncq_pr_dw e = {1, 2}, d = {3, UINT64_MAX};
  assert_true(syncq_pr_dwcas(&w, &e, d));
  syncq_pr_dw now = syncq_pr_dw_load(&w);
  assert_int_equal(now.lo, 3);
  assert_true(now.hi == UINT64_MAX);
  /* a mismatch in either half fails and reports both halves */
  syncq_pr_dw stale_lo = {1, UINT64_MAX};
  assert_false(syncq_pr_dwcas(&w, &stale_lo, d));
  assert_int_equal(stale_lo.lo, 3);
  assert_true(stale_lo.hi == UINT64_MAX);
  syncq_pr_dw stale_hi = {3, 2};
  assert_false(syncq_pr_dwcas(&w, &stale_hi, (syncq_pr_dw){9, 9}));
  assert_int_equal(stale_hi.hi, UINT64_MAX);
  now = syncq_pr_dw_load(&w);
  assert_int_equal(now.lo, 3); /* unchanged by the failures */
}

/* Threads increment both halves together by DWCAS: if it were not atomic
 * on 16 bytes, some update of one half would be lost or the halves would
 * drift apart. */
#define DW_THREADS 4
#define DW_INCREMENTS 20000
static syncq_pr_dw_atomic shared_dw;

static void *dw_worker(void *arg) {
  (void)arg;
  for (int i = 0; i < DW_INCREMENTS; i++) {
    syncq_pr_dw seen = syncq_pr_dw_load(&shared_dw);
    while (!syncq_pr_dwcas(&shared_dw, &seen, (syncq_pr_dw){seen.lo + 1, seen.hi + 1})) {
    }
  }
  return NULL;
}

static void test_dwcas_concurrent(void **state) {
  (void)state;
  if (!syncq_pr_dwcas_available()) fail_msg("this CPU has no double-width CAS");
  pthread_t t[DW_THREADS];
  for (int i = 0; i < DW_THREADS; i++) assert_int_equal(pthread_create(&t[i], NULL, dw_worker, NULL), 0);
  for (int i = 0; i < DW_THREADS; i++) pthread_join(t[i], NULL);
  syncq_pr_dw end = syncq_pr_dw_load(&shared_dw);
  assert_int_equal(end.lo, DW_THREADS * DW_INCREMENTS);
  assert_int_equal(end.hi, DW_THREADS * DW_INCREMENTS);
}

/* A record written with plain stores and handed over by one DWCAS: the
 * taker that reads its address from the pair (acquire load, then its own
 * DWCAS to take it) sees the record's contents. Under ThreadSanitizer
 * this also checks that TSan sees the DWCAS's order: where it did not
 * (Clang's TSan running the inline cmpxchg16b, or Clang's 16-byte builtin,
 * a libatomic call TSan does not see) it reported the taker's reads as
 * a race with the writer's stores, and the test failed on the report. */
#define HANDOVERS 2000
typedef struct handed {
  uint64_t a, b; /* plain: ordered only by the DWCAS */
} handed;
static syncq_pr_dw_atomic handover;
static handed records[HANDOVERS];

static void *handover_giver(void *arg) {
  (void)arg;
  for (uint64_t i = 0; i < HANDOVERS; i++) {
    records[i].a = i * 3 + 1;
    records[i].b = ~i;
    syncq_pr_dw empty = {0, 2 * i}; /* the taker's DWCAS left the count at 2i */
    while (!syncq_pr_dwcas(&handover, &empty, (syncq_pr_dw){(uint64_t)(uintptr_t)&records[i], 2 * i + 1})) {
      empty = (syncq_pr_dw){0, 2 * i}; /* not taken yet */
      syncq_yield();
    }
  }
  return NULL;
}

static void test_dwcas_hands_over_plain_writes(void **state) {
  (void)state;
  if (!syncq_pr_dwcas_available()) fail_msg("this CPU has no double-width CAS");
  pthread_t giver;
  assert_int_equal(pthread_create(&giver, NULL, handover_giver, NULL), 0);
  int wrong = 0;
  for (uint64_t i = 0; i < HANDOVERS; i++) {
    syncq_pr_dw seen;
    for (;;) {
      seen = syncq_pr_dw_load(&handover);
      if (seen.lo != 0 && seen.hi == 2 * i + 1 && syncq_pr_dwcas(&handover, &seen, (syncq_pr_dw){0, 2 * i + 2})) break;
      syncq_yield();
    }
    const handed *r = (const handed *)(uintptr_t)seen.lo;
    if (r != &records[i] || r->a != i * 3 + 1 || r->b != ~i) wrong++;
  }
  pthread_join(giver, NULL);
  assert_int_equal(wrong, 0);
}

static void test_tagptr_round_trip(void **state) {
  (void)state;
  int *obj = malloc(sizeof *obj);
  assert_non_null(obj);
  const uint16_t tags[] = {0, 1, 0x7fff, 0xffff};
  for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++) {
    syncq_tagptr t = 0;
    assert_int_equal(syncq_tagptr_pack(obj, tags[i], &t), SYNCQ_OK);
    assert_ptr_equal(syncq_tagptr_ptr(t), obj);
    assert_int_equal(syncq_tagptr_tag(t), tags[i]);
  }
  syncq_tagptr t;
  assert_int_equal(syncq_tagptr_pack(NULL, 3, &t), SYNCQ_OK);
  assert_null(syncq_tagptr_ptr(t));
  assert_int_equal(syncq_tagptr_tag(t), 3);
  free(obj);
}

static void test_tagptr_refuses_wide_pointers(void **state) {
  (void)state;
  const uintptr_t wide[] = {(uintptr_t)1 << 48, UINTPTR_MAX, (uintptr_t)0xffff800000001000ull,
                            (uintptr_t)0x0001000000000000ull | 0x40};
  for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++) {
    syncq_tagptr t = 12345;
    assert_false(syncq_tagptr_fits((void *)wide[i]));
    assert_int_equal(syncq_tagptr_pack((void *)wide[i], 1, &t), SYNCQ_EINVAL);
    assert_int_equal(t, 12345); /* nothing written */
  }
  int x;
  assert_true(syncq_tagptr_fits(&x));
  assert_int_equal(syncq_tagptr_pack(&x, 0, NULL), SYNCQ_EINVAL);
}

static void test_cacheline_alignment(void **state) {
  (void)state;
  struct padded {
    SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) a;
    SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) b;
  } p;
  assert_true(offsetof(struct padded, b) - offsetof(struct padded, a) >= SYNCQ_CACHELINE);
  assert_int_equal((uintptr_t)&p % SYNCQ_CACHELINE, 0);
  syncq_pr_relax(); /* must simply return */
}

static void test_alloc_aligned(void **state) {
  (void)state;
  const size_t aligns[] = {1, 8, 16, 64, 128, 4096};
  for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++) {
    void *p = syncq_alloc_aligned(24, aligns[i]);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % aligns[i], 0);
    free(p);
  }
  assert_null(syncq_alloc_aligned(0, 64));
  assert_null(syncq_alloc_aligned(64, 0));
  assert_null(syncq_alloc_aligned(64, 48)); /* not a power of two */
  assert_null(syncq_alloc_aligned(SIZE_MAX, 64));
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_cas_success_and_failure),
    cmocka_unit_test(test_cas_ptr),
    cmocka_unit_test(test_faa_swap_tas),
    cmocka_unit_test(test_faa_wraps),
    cmocka_unit_test(test_dwcas),
    cmocka_unit_test(test_dwcas_concurrent),
    cmocka_unit_test(test_dwcas_hands_over_plain_writes),
    cmocka_unit_test(test_tagptr_round_trip),
    cmocka_unit_test(test_tagptr_refuses_wide_pointers),
    cmocka_unit_test(test_cacheline_alignment),
    cmocka_unit_test(test_alloc_aligned),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
