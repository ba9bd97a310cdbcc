/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * freelist.c — free list of type-stable nodes with counted pointers.
 *
 * Contract
 *   Source:      001 §3 (Michael & Scott keep queue nodes on a free list,
 *                a Treiber stack with counted pointers, so that nodes are
 *                never returned to the allocator and a (pointer, count)
 *                CAS defeats ABA); Treiber 1986 for the stack itself.
 *   Progress:    lock-free.
 *   Atomics:     push: 1 double-width CAS; pop: 2 loads + 1 double-width
 *                CAS, uncontended.
 *   Memory:      never allocates; the caller owns the nodes' storage.
 *   Signal-safe: yes (no locks, no allocation).
 *   Process-shared: no (links hold addresses).
 *   ABA:         the head's count grows by one on every push and pop: a
 *                64-bit count cannot come round while a thread is stalled.
 */
#include "syncq/reclaim.h"

#include "../stats_internal.h"

int syncq_freelist_init(syncq_freelist *fl) {
  if (fl == NULL) return SYNCQ_EINVAL;
  if (!syncq_pr_dwcas_available()) return SYNCQ_ENOTSUP;
  atomic_init(&fl->top.lo, 0);
  atomic_init(&fl->top.hi, 0);
  return SYNCQ_OK;
}

int syncq_freelist_push(syncq_freelist *fl, syncq_fl_link *link) {
  if (fl == NULL || link == NULL) return SYNCQ_EINVAL;
  syncq_pr_dw seen = syncq_pr_dw_load(&fl->top);
  for (;;) {
    /* relaxed: published by the seq_cst CAS below, which pairs with the
     * acquire load of top in syncq_freelist_pop. */
    atomic_store_explicit(&link->next, seen.lo, memory_order_relaxed);
    SYNCQ_STAT_INC(cas_attempts);
    if (syncq_pr_dwcas(&fl->top, &seen, (syncq_pr_dw){(uint64_t)(uintptr_t)link, seen.hi + 1})) return SYNCQ_OK;
    SYNCQ_STAT_INC(cas_failures);
  }
}

int syncq_freelist_pop(syncq_freelist *fl, syncq_fl_link **out) {
  if (fl == NULL || out == NULL) return SYNCQ_EINVAL;
  syncq_pr_dw seen = syncq_pr_dw_load(&fl->top);
  for (;;) {
    if (seen.lo == 0) return SYNCQ_EMPTY;
    syncq_fl_link *top = (syncq_fl_link *)(uintptr_t)seen.lo;
    /* The node may have been popped (and its link rewritten) since we read
     * top: its memory is type-stable, so the read is safe, and the count in
     * the CAS rejects a stale value. relaxed: pairs with the push's seq_cst
     * CAS through the acquire load of top that gave us `top`. */
    uint64_t next = atomic_load_explicit(&top->next, memory_order_relaxed);
    SYNCQ_STAT_INC(cas_attempts);
    if (syncq_pr_dwcas(&fl->top, &seen, (syncq_pr_dw){next, seen.hi + 1})) {
      *out = top;
      return SYNCQ_OK;
    }
    SYNCQ_STAT_INC(cas_failures);
  }
}

int syncq_freelist_fill(syncq_freelist *fl, void *base, size_t n, size_t stride, size_t link_offset) {
  if (fl == NULL || (base == NULL && n > 0)) return SYNCQ_EINVAL;
  if (n == 0) return SYNCQ_OK;
  if (stride < sizeof(syncq_fl_link) || link_offset > stride - sizeof(syncq_fl_link)) return SYNCQ_EINVAL;
  /* n nodes of stride bytes from base must fit below the top of the
   * address space: a count that wraps would have us write links anywhere */
  if (n > (UINTPTR_MAX - (uintptr_t)base) / stride) return SYNCQ_EINVAL;
  if (((uintptr_t)base + link_offset) % _Alignof(syncq_fl_link) != 0 || stride % _Alignof(syncq_fl_link) != 0)
    return SYNCQ_EINVAL;
  for (size_t i = 0; i < n; i++) {
    syncq_fl_link *l = (syncq_fl_link *)(void *)((char *)base + i * stride + link_offset);
    atomic_init(&l->next, 0);
    (void)syncq_freelist_push(fl, l);
  }
  return SYNCQ_OK;
}
