/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ms_queue.c — GenMC driver for Michael & Scott's queue with counted
 * pointers: src/queue/ms.c and its free list, src/reclaim/freelist.c,
 * included as they are (the double-width CAS through genmc_shim.h).
 * Workload and properties: check.h (threads A and C). Nodes move
 * through the free list during the run (every dequeue pushes the old
 * dummy, every enqueue pops a node).
 */
#include "genmc_shim.h"

#include "reclaim/freelist.c"
#include "queue/ms.c"

#include "check.h"

static syncq_queue_ms q;

static int put(uint64_t v) { return syncq_queue_ms_enqueue(&q, (void *)(uintptr_t)v); }
static int take(uint64_t *v) {
  void *p = NULL;
  int r = syncq_queue_ms_dequeue(&q, &p);
  *v = (uint64_t)(uintptr_t)p;
  return r;
}

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
  assert(syncq_queue_ms_init(&q, 4) == SYNCQ_OK);
  CHECK_RUN(thread_a, thread_b, thread_c);
  for (int i = 0; i < CHECK_C_TAKES; i++)
    if (check_c_got[i] != 0) check_record(check_c_got[i]);
  uint64_t v;
  while (take(&v) == SYNCQ_OK) check_record(v);
  check_exactly_once();
  assert(check_put_ok[1] && check_put_ok[2]); /* unbounded: every put succeeds */
  if (check_pos(1) >= 0 && check_pos(2) >= 0) assert(check_pos(1) < check_pos(2));
  assert(syncq_queue_ms_destroy(&q) == SYNCQ_OK);
  return 0;
}
