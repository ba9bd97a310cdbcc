/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * loo_hooks.h — LOO's test hooks (src/queue/loo.c, Deviation 6; not in the
 * public header), for loo_test and loo_race_test: node memory from the
 * test's functions instead of the library's. A test sets both before it
 * initialises a queue and clears both after destroying it.
 *
 * loo_fail_nodes: with loo_failing_alloc installed, that many node
 * allocations from now on fail (memory short); the rest are served.
 */
#ifndef SYNCQ_TEST_LOO_HOOKS_H
#define SYNCQ_TEST_LOO_HOOKS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>

#include "syncq/platform.h"

typedef void *(*loo_alloc_fn)(size_t size, size_t align);
typedef void (*loo_free_fn)(void *p);
extern _Atomic(loo_alloc_fn) syncq_queue_loo_test_alloc__;
extern _Atomic(loo_free_fn) syncq_queue_loo_test_free__;

static _Atomic(int) loo_fail_nodes;

static inline void *loo_failing_alloc(size_t size, size_t align) {
  if (atomic_load(&loo_fail_nodes) > 0 && atomic_fetch_sub(&loo_fail_nodes, 1) > 0) return NULL;
  return syncq_alloc_aligned(size, align);
}

static inline void loo_hooks_set(loo_alloc_fn a, loo_free_fn f) {
  atomic_store(&syncq_queue_loo_test_alloc__, a);
  atomic_store(&syncq_queue_loo_test_free__, f);
}

static inline void loo_hooks_clear(void) { loo_hooks_set(NULL, NULL); }

#endif
