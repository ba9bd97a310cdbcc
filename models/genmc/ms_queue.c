/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ms_queue.c — GenMC driver for Michael & Scott's queue with counted
 * pointers: src/queue/ms.c and its free list, src/reclaim/freelist.c,
 * included as they are (the double-width CAS through genmc_shim.h).
 * Workload and properties: check.h (threads A and C; models/genmc/run
 * also runs A putting 1, taking, putting 2 against C's one take, and a
 * three-thread workload). Nodes move through the free list during the
 * run (every dequeue pushes the old dummy, every enqueue pops a node).
 *
 * GENMC_BEFORE_FIX: ms.c as it was before GenMC's finding: the
 * enqueuer's reset of a reused node's next.lo a relaxed store (ms.c's
 * only release; models/genmc/run checks that it still is). A dequeuer
 * that read head before the node's reuse then passes its consistency
 * check with next 0 and dereferences node 0.
 */
#include "genmc_shim.h"

#include "reclaim/freelist.c"
#ifdef GENMC_BEFORE_FIX
#undef atomic_store_explicit
#define atomic_store_explicit(obj, desired, order) \
  __c11_atomic_store(obj, desired, (order) == memory_order_release ? memory_order_relaxed : (order))
#endif
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
