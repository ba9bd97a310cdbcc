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

#include "check.h"

static syncq_stack_treiber s;

static int put(uint64_t v) { return syncq_stack_treiber_push(&s, (void *)(uintptr_t)v); }
static int take(uint64_t *v) {
  void *p = NULL;
  int r = syncq_stack_treiber_pop(&s, &p);
  *v = (uint64_t)(uintptr_t)p;
  return r;
}

static void *thread_a(void *arg) {
  (void)arg;
  check_put_ok[1] = put(1) == SYNCQ_OK;
  check_put_ok[2] = put(2) == SYNCQ_OK;
  uint64_t v = 0;
  int r = take(&v);
  assert(r == SYNCQ_OK || r == SYNCQ_EMPTY);
  check_a_got = r == SYNCQ_OK ? v : 0;
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
  syncq_stack_config cfg = {0};
  cfg.capacity = 3;
  cfg.max_threads = 4;
  assert(syncq_stack_treiber_init(&s, &cfg) == SYNCQ_OK);
  CHECK_RUN(thread_a, thread_b, thread_c);
  assert(check_put_ok[1] && check_put_ok[2]); /* 3 nodes for at most 3 items: none runs short */
  for (int i = 0; i < CHECK_C_TAKES; i++)
    if (check_c_got[i] != 0) check_record(check_c_got[i]);
  if (check_a_got != 0) check_record(check_a_got);
  int drain_start = check_nout;
  uint64_t v;
  while (take(&v) == SYNCQ_OK) check_record(v);
  check_exactly_once();
  /* LIFO. EMPTY for A: both its items were gone (C popped them) and B's
   * not yet there. */
  bool c_got_1_2 = (check_c_got[0] == 1 && check_c_got[1] == 2) || (check_c_got[0] == 2 && check_c_got[1] == 1);
  if (check_a_got == 0) assert(c_got_1_2);
  if (check_a_got == 1) assert(check_c_got[0] == 2 || check_c_got[1] == 2);
  if (check_pos(1) >= drain_start && check_pos(2) >= drain_start) assert(check_pos(2) < check_pos(1));
  assert(syncq_stack_treiber_destroy(&s) == SYNCQ_OK);
  return 0;
}
