/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_sort_test.c — lf07-sort (lab/exp/lf07.c, 002 §5): the Controller,
 * Slicer and Sorter processes sort an array equal to a reference qsort,
 * for every mailbox, linking and copying, with sorter counts that do and
 * do not divide the array; the "empty" variant returns the input
 * unchanged; the sequential baseline sorts too. Every run on both
 * backends (kernel threads, fibers).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "syncq/po.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

#if SANITIZED
#define LENGTH 1500
#define STACK (256u * 1024u)
#else
#define LENGTH 6000
#define STACK 0u
#endif

#include "exp/lf07.h"

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static int input[LENGTH], reference[LENGTH], work[LENGTH];

static int setup(void **state) {
  (void)state;
  lf07_make_input(input, LENGTH);
  memcpy(reference, input, sizeof input);
  qsort(reference, LENGTH, sizeof(int), cmp_int);
  return 0;
}

#if SANITIZED
static const int sorter_counts[] = {1, 5, 24};
#else
static const int sorter_counts[] = {1, 7, 64};
#endif

static const char *const backends[] = {"thread", "fiber"};

static void test_parallel_sort_every_mailbox(void **state) {
  (void)state;
  for (int b = 0; b < 2; b++)
    for (int i = 0; i < syncq_po_mailbox_count(); i++) {
      const char *mb;
      assert_int_equal(syncq_po_mailbox_info(i, &mb, NULL, NULL), SYNCQ_OK);
      for (size_t s = 0; s < sizeof sorter_counts / sizeof sorter_counts[0]; s++)
        for (int mode = 0; mode < 2; mode++)
          for (int empty = 0; empty < 2; empty++) {
            lf07_params p = {mb, sorter_counts[s], (syncq_po_send_mode)mode, empty != 0, STACK, backends[b]};
            lf07_result r;
            memcpy(work, input, sizeof work);
            int rc = lf07_sort_run(&p, work, LENGTH, &r);
            if (rc != SYNCQ_OK) fail_msg("%s %s, %d sorters: %s", backends[b], mb, p.sorters, r.why);
            if (memcmp(work, empty ? input : reference, sizeof work) != 0)
              fail_msg("%s %s, %d sorters, %s, %s: the array differs from %s", backends[b], mb, p.sorters,
                       mode ? "copy" : "link", empty ? "empty" : "sort", empty ? "the input" : "qsort's");
            assert_true(r.stack_kb_per_proc > 0.0); /* each Sorter found its own stack */
            assert_true(r.sort_ms > 0.0);
          }
    }
}

static void test_sequential_baseline(void **state) {
  (void)state;
  for (size_t s = 0; s < sizeof sorter_counts / sizeof sorter_counts[0]; s++) {
    memcpy(work, input, sizeof work);
    lf07_sort_sequential(sorter_counts[s], false, work, LENGTH);
    assert_memory_equal(work, reference, sizeof work);
  }
}

static void test_bad_parameters(void **state) {
  (void)state;
  lf07_result r;
  lf07_params zero = {"mutex", 0, SYNCQ_PO_LINK, false, STACK, NULL};
  assert_int_equal(lf07_sort_run(&zero, work, LENGTH, &r), SYNCQ_EINVAL);
  lf07_params unknown = {"no-such-mailbox", 4, SYNCQ_PO_LINK, false, STACK, NULL};
  assert_int_equal(lf07_sort_run(&unknown, work, LENGTH, &r), SYNCQ_ENOENT);
  lf07_params no_backend = {"mutex", 4, SYNCQ_PO_LINK, false, STACK, "no-such-backend"};
  assert_int_equal(lf07_sort_run(&no_backend, work, LENGTH, &r), SYNCQ_ENOENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_sequential_baseline),
    cmocka_unit_test(test_bad_parameters),
    cmocka_unit_test(test_parallel_sort_every_mailbox),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
