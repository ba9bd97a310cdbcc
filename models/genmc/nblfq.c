/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nblfq.c — GenMC driver for NBLFQ (004 Algorithms 1-4): the library's
 * static inline bodies (include/syncq/static/queue/nblfq.h, the ones
 * src/queue/nblfq.c exports) on a ring of 4 tagged cells with the
 * library's 16-bit counters, and 004 §V-A's invariant checked on the
 * drained ring (tests/support/nblfq_invariant.h). Workload and
 * properties: check.h.
 *
 * Build and run: models/genmc/run (genmc -- -I include -I src ...).
 */
/* small enough for all three threads (check.h) */
#define CHECK_THREAD_B 1
#include "genmc_shim.h"

#include "../../tests/support/nblfq_invariant.h"
#include "syncq/static/queue/nblfq.h"

#include "check.h"

#define S 4
#define TAG_BITS 16 /* syncq/static/queue/nblfq.h's SYNCQ_QUEUE_NBLFQ_TAG_BITS */

static _Atomic(uint64_t) cells[S];
static _Atomic(uint64_t) head, tail;

static int put(uint64_t v) { return syncq_nbl_enqueue(cells, S - 1, &head, v, TAG_BITS); }
static int take(uint64_t *v) { return syncq_nbl_dequeue(cells, S - 1, &tail, v, TAG_BITS); }

static void *thread_a(void *arg) {
  (void)arg;
  check_put_ok[1] = put(1) == SYNCQ_OK;
  check_put_ok[2] = put(2) == SYNCQ_OK;
  return NULL;
}
static void *thread_b(void *arg) {
  (void)arg;
  check_put_ok[3] = put(3) == SYNCQ_OK;
  return NULL;
}
static void *thread_c(void *arg) {
  (void)arg;
  for (int i = 0; i < CHECK_C_TAKES; i++) {
    uint64_t v = 0;
    int r = take(&v);
    assert(r == SYNCQ_OK || r == SYNCQ_EMPTY);
    check_c_got[i] = r == SYNCQ_OK ? v : 0;
  }
  return NULL;
}

int main(void) {
  syncq_nbl_init_cells(cells, S, TAG_BITS);
  atomic_init(&head, 0);
  atomic_init(&tail, 0);
  CHECK_RUN(thread_a, thread_b, thread_c);
  for (int i = 0; i < CHECK_C_TAKES; i++)
    if (check_c_got[i] != 0) check_record(check_c_got[i]);
  uint64_t v;
  while (take(&v) == SYNCQ_OK) check_record(v);
  check_exactly_once();
  /* FIFO of one producer: 1 was put before 2 */
  if (check_pos(1) >= 0 && check_pos(2) >= 0) assert(check_pos(1) < check_pos(2));
  assert(nblfq_check_invariant(cells, S - 1, TAG_BITS) == 0); /* drained, and consistent */
  return 0;
}
