/*
 * po_sort_test.c — lf07-sort (lab/exp/lf07.c, 002 §5): the Controller,
 * Slicer and Sorter processes sort an array equal to a reference qsort,
 * for every mailbox, linking and copying, with sorter counts that do and
 * do not divide the array; the "empty" variant returns the input
 * unchanged; the sequential baseline sorts too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "syncq/po.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define LENGTH 1500
#define STACK (256u * 1024u)
#else
#define LENGTH 6000
#define STACK 0u
#endif

/* lab/exp/lf07.c (no header: the lab's experiments are not a library API). */
typedef struct lf07_params {
  const char *mailbox;
  int sorters;
  syncq_po_send_mode mode;
  bool empty;
  size_t stack_size;
} lf07_params;
typedef struct lf07_result {
  double sort_ms;
  double rss_kb_per_proc;
  double stack_kb_per_proc;
  char why[160];
} lf07_result;
int lf07_sort_run(const lf07_params *p, int *array, int length, lf07_result *r);
void lf07_sort_sequential(int sorters, bool empty, int *array, int length);
void lf07_make_input(int *array, int length);

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

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
static const int sorter_counts[] = {1, 5, 24};
#else
static const int sorter_counts[] = {1, 7, 64};
#endif

static void test_parallel_sort_every_mailbox(void **state) {
  (void)state;
  for (int i = 0; i < syncq_po_mailbox_count(); i++) {
    const char *mb;
    assert_int_equal(syncq_po_mailbox_info(i, &mb, NULL, NULL), SYNCQ_OK);
    for (size_t s = 0; s < sizeof sorter_counts / sizeof sorter_counts[0]; s++)
      for (int mode = 0; mode < 2; mode++)
        for (int empty = 0; empty < 2; empty++) {
          lf07_params p = {mb, sorter_counts[s], (syncq_po_send_mode)mode, empty != 0, STACK};
          lf07_result r;
          memcpy(work, input, sizeof work);
          int rc = lf07_sort_run(&p, work, LENGTH, &r);
          if (rc != SYNCQ_OK) fail_msg("%s, %d sorters: %s", mb, p.sorters, r.why);
          if (memcmp(work, empty ? input : reference, sizeof work) != 0)
            fail_msg("%s, %d sorters, %s, %s: the array differs from %s", mb, p.sorters, mode ? "copy" : "link",
                     empty ? "empty" : "sort", empty ? "the input" : "qsort's");
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
  lf07_params zero = {"mutex", 0, SYNCQ_PO_LINK, false, STACK};
  assert_int_equal(lf07_sort_run(&zero, work, LENGTH, &r), SYNCQ_EINVAL);
  lf07_params unknown = {"no-such-mailbox", 4, SYNCQ_PO_LINK, false, STACK};
  assert_int_equal(lf07_sort_run(&unknown, work, LENGTH, &r), SYNCQ_ENOENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_sequential_baseline),
    cmocka_unit_test(test_bad_parameters),
    cmocka_unit_test(test_parallel_sort_every_mailbox),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
