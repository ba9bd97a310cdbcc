/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_slot_ring_test.c — the process table's ring of free slots
 * (src/po/slot_ring.c) alone: oldest first across laps, and each page of
 * a large ring touched first by a write.
 *
 * Why the second: the ring's cells are zero pages until used. A page
 * whose first touch is a read (a put's load of its cell) maps the shared
 * zero page, and the write after it copies that page and flushes the
 * other processors' TLBs, an interprocessor interrupt per page; in a tree
 * of a million processes on two schedulers those flushes took a fifth of
 * the time. The test counts the minor faults of a page of puts: one per
 * page when the first touch is a write, two when it is a read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <cmocka.h>

#include "po/slot_ring.h"
#include "test_sanitizer.h"

enum {
  PAGE = 4096,
  PAGE_CELLS = PAGE / sizeof(po_slot_cell),
  PAGES = 64,               /* pages of cells the fault count covers */
  RING = 1 << 20,           /* 16 MB of cells: calloc maps them afresh */
  LAPS_RING = 64,           /* a small ring for the order test */
  LAPS = 5 * LAPS_RING + 3, /* puts and takes of the order test */
};

static long minor_faults(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

/* FIFO order over several laps of a small ring, and SYNCQ_EMPTY when
 * nothing waits. */
static void test_oldest_first_across_laps(void **state) {
  (void)state;
  po_slot_ring r;
  assert_int_equal(po_slot_ring_init(&r, LAPS_RING), SYNCQ_OK);
  uint32_t slot;
  assert_int_equal(po_slot_ring_take(&r, &slot), SYNCQ_EMPTY);
  uint32_t next_in = 0, next_out = 0;
  while (next_out < LAPS) {
    for (int k = 0; k < 7 && next_in < LAPS && next_in - next_out < LAPS_RING; k++) po_slot_ring_put(&r, next_in++);
    for (int k = 0; k < 5 && next_out < next_in; k++) {
      assert_int_equal(po_slot_ring_take(&r, &slot), SYNCQ_OK);
      assert_int_equal(slot, next_out++);
    }
  }
  assert_int_equal(po_slot_ring_take(&r, &slot), SYNCQ_EMPTY);
  assert_int_equal(po_slot_ring_taken(&r), LAPS);
  po_slot_ring_destroy(&r);
  assert_int_equal(po_slot_ring_init(&r, 0), SYNCQ_EINVAL);
  assert_int_equal(po_slot_ring_init(NULL, 4), SYNCQ_EINVAL);
}

/* Puts over PAGES fresh pages of a large ring fault about once a page. A
 * control region read then written page by page shows what a read-first
 * page costs here: where it is not about two faults a page (no zero page
 * for reads, or a host that counts otherwise), there is nothing to tell
 * apart and the test skips (qemu-user counts as a kernel does: the ring's
 * store must be a plain one there, where an RMW is a load and a store); under the sanitizers their
 * shadow memory's faults blur the count, so it skips there too. */
static void test_each_page_first_touched_by_a_write(void **state) {
  (void)state;
  if (SANITIZED) skip();
  volatile unsigned char *control = calloc(PAGES + 1, PAGE);
  assert_non_null(control);
  long f0 = minor_faults();
  unsigned sum = 0;
  for (int p = 0; p < PAGES; p++) sum += control[(size_t)p * PAGE + 64];
  for (int p = 0; p < PAGES; p++) control[(size_t)p * PAGE + 64] = (unsigned char)(sum + 1);
  long read_first = minor_faults() - f0;
  free((void *)control);
  if (read_first < PAGES * 3 / 2) skip();

  po_slot_ring r;
  assert_int_equal(po_slot_ring_init(&r, RING), SYNCQ_OK);
  /* Two pages of puts first, uncounted: the code's own first run (an
   * emulator translating it) is not the ring's. */
  uint32_t n = 0;
  while (n < 2 * PAGE_CELLS) po_slot_ring_put(&r, n++);
  long f1 = minor_faults();
  while (n < (2 + PAGES) * PAGE_CELLS) po_slot_ring_put(&r, n++);
  long puts = minor_faults() - f1;
  /* One a page, and a few for the test's own pages (a read-first ring
   * takes two a page: 128). */
  if (puts > PAGES + PAGES / 4)
    fail_msg("%ld minor faults for %d pages of puts (a read-first region: %ld)", puts, PAGES, read_first);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t slot;
    assert_int_equal(po_slot_ring_take(&r, &slot), SYNCQ_OK);
    assert_int_equal(slot, i);
  }
  po_slot_ring_destroy(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_oldest_first_across_laps),
    cmocka_unit_test(test_each_page_first_touched_by_a_write),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
