/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * treiber.c — GenMC driver for Treiber's stack: src/stack/treiber.c
 * (versioned Top, per-thread node caches, the node pool's free list
 * src/reclaim/freelist.c) included as it is. Workload (check.h): A
 * pushes 1 then 2 then pops once, C pops twice, main pops until EMPTY
 * (B, pushing 3, only with CHECK_THREAD_B: not bounded in time here). A
 * pool of 3 nodes and caches of 2 make the pushes draw on the shared
 * free list, and popped nodes go to the poppers' caches.
 *
 * Properties: every pushed item is popped exactly once, nothing else;
 * LIFO: A's pop comes after its two pushes, so it returns 1 only if
 * another thread popped 2 first (C); and in main's drain (no concurrent
 * operation) 2 comes out before 1 when both are still there.
 */
#include "genmc_shim.h"

#include "reclaim/freelist.c"
#include "stack/treiber.c"

#define CHECK_LIFO 1
#include "check.h"

static syncq_stack_treiber s;

static int put(uint64_t v) { return syncq_stack_treiber_push(&s, (void *)(uintptr_t)v); }
static int take(uint64_t *v) {
  void *p = NULL;
  int r = syncq_stack_treiber_pop(&s, &p);
  *v = (uint64_t)(uintptr_t)p;
  return r;
}

int main(void) {
  syncq_stack_config cfg = {0};
  cfg.capacity = 3;
  cfg.max_threads = 4;
  assert(syncq_stack_treiber_init(&s, &cfg) == SYNCQ_OK);
  check_workload(); /* 3 nodes for at most 3 items: no put runs short */
  assert(syncq_stack_treiber_destroy(&s) == SYNCQ_OK);
  return 0;
}
