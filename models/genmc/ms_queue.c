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

int main(void) {
  assert(syncq_queue_ms_init(&q, 4) == SYNCQ_OK);
  check_workload(); /* unbounded: every put succeeds */
  assert(syncq_queue_ms_destroy(&q) == SYNCQ_OK);
  return 0;
}
