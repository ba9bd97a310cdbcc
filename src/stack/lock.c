/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lock.c — single-lock stack.
 *
 * Contract
 *   Source:      001 §4.2 (Figure 2, "single lock"): the usual linked-list
 *                stack with every operation under one lock. The lock is
 *                any registered lock, found by name (syncq/lock.h); the
 *                default "ttas" is 001's test-and-test-and-set lock with
 *                bounded exponential backoff (cap 30 us).
 *   Progress:    blocking (a preempted holder stops everyone).
 *   Atomics:     those of the lock: for TTAS, 1 swap to acquire and 1
 *                store to release; the list itself is plain memory.
 *   Memory:      nodes (capacity) and the lock allocated at init, never
 *                after; the free nodes form a list guarded by the same lock.
 *   Signal-safe: no (a handler interrupting a holder would deadlock).
 *   Process-shared: no.
 *   Limits:      capacity <= SYNCQ_STACK_MAX_CAPACITY; non-NULL items.
 *   Stats:       those the lock counts.
 */
#include "syncq/stack/lock.h"

#include <stdlib.h>

#include "../registry_internal.h"
#include "syncq/platform.h"

struct syncq_stack_lock_node {
  uint32_t next; /* index + 1; guarded by the lock */
  void *item;
};

int syncq_stack_lock_init(syncq_stack_lock *s, const syncq_stack_config *cfg) {
  if (s == NULL) return SYNCQ_EINVAL;
  if (cfg && (cfg->capacity > SYNCQ_STACK_MAX_CAPACITY || cfg->max_threads > SYNCQ_STACK_MAX_THREADS))
    return SYNCQ_EINVAL;
  uint32_t cap = cfg && cfg->capacity ? cfg->capacity : SYNCQ_STACK_DEFAULT_CAPACITY;
  const char *name = cfg && cfg->lock ? cfg->lock : "ttas";
  int r = syncq_lock_find(name, &s->lock_algo);
  if (r != SYNCQ_OK) return r;
  s->lock_ops = s->lock_algo->ops;
  s->lock = syncq_alloc_aligned(s->lock_ops->size, s->lock_ops->align);
  s->nodes = malloc((size_t)cap * sizeof *s->nodes);
  if (s->lock == NULL || s->nodes == NULL) {
    free(s->lock);
    free(s->nodes);
    return SYNCQ_ENOMEM;
  }
  r = s->lock_ops->init(s->lock, NULL);
  if (r != SYNCQ_OK) {
    free(s->lock);
    free(s->nodes);
    return r;
  }
  for (uint32_t i = 0; i < cap; i++) s->nodes[i] = (struct syncq_stack_lock_node){i + 1u < cap ? i + 2u : 0u, NULL};
  s->free_head = 1u;
  s->top = 0;
  return SYNCQ_OK;
}

int syncq_stack_lock_destroy(syncq_stack_lock *s) {
  if (s == NULL) return SYNCQ_EINVAL;
  int r = s->lock_ops->destroy(s->lock);
  if (r != SYNCQ_OK) return r;
  free(s->lock);
  free(s->nodes);
  s->lock = NULL;
  s->nodes = NULL;
  return SYNCQ_OK;
}

int syncq_stack_lock_push(syncq_stack_lock *s, void *item) {
  if (s == NULL || item == NULL) return SYNCQ_EINVAL;
  syncq_lock_node ln;
  int r = s->lock_ops->lock(s->lock, &ln);
  if (r != SYNCQ_OK) return r;
  uint32_t n = s->free_head;
  if (n == 0) {
    r = SYNCQ_ENOMEM;
  } else {
    s->free_head = s->nodes[n - 1u].next;
    s->nodes[n - 1u] = (struct syncq_stack_lock_node){s->top, item};
    s->top = n;
  }
  s->lock_ops->unlock(s->lock, &ln);
  return r;
}

int syncq_stack_lock_pop(syncq_stack_lock *s, void **item) {
  if (s == NULL || item == NULL) return SYNCQ_EINVAL;
  syncq_lock_node ln;
  int r = s->lock_ops->lock(s->lock, &ln);
  if (r != SYNCQ_OK) return r;
  uint32_t n = s->top;
  if (n == 0) {
    r = SYNCQ_EMPTY;
  } else {
    *item = s->nodes[n - 1u].item;
    s->top = s->nodes[n - 1u].next;
    s->nodes[n - 1u].next = s->free_head;
    s->free_head = n;
  }
  s->lock_ops->unlock(s->lock, &ln);
  return r;
}

SYNCQ_STACK_REGISTER(lock, "lock", "single-lock stack (any registered lock; default ttas)", "001 §4.2, Figure 2",
                     BLOCKING, SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_BOUNDED);
