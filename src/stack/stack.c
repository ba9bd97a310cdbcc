/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stack.c — the generic stack API over the registry (syncq/stack.h).
 * Not an algorithm: each algorithm's contract block (source, progress,
 * atomics, memory, limits) opens its own file beside this one.
 */
#include "syncq/stack.h"

#include <stdlib.h>

#include "syncq/platform.h"

struct syncq_stack {
  const syncq_algo *algo;
  const syncq_stack_ops *ops;
  void *storage; /* aligned to ops->align */
};

int syncq_stack_create(const char *algo, const syncq_stack_config *cfg, syncq_stack **out) {
  if (algo == NULL || out == NULL) return SYNCQ_EINVAL;
  const syncq_algo *a;
  int r = syncq_registry_find(SYNCQ_FAMILY_STACK, algo, &a);
  if (r != SYNCQ_OK) return r;
  const syncq_stack_ops *ops = a->ops;
  syncq_stack *s = malloc(sizeof *s);
  if (s == NULL) return SYNCQ_ENOMEM;
  s->storage = syncq_alloc_aligned(ops->size, ops->align);
  if (s->storage == NULL) {
    free(s);
    return SYNCQ_ENOMEM;
  }
  s->algo = a;
  s->ops = ops;
  r = ops->init(s->storage, cfg);
  if (r != SYNCQ_OK) {
    free(s->storage);
    free(s);
    return r;
  }
  *out = s;
  return SYNCQ_OK;
}

int syncq_stack_destroy(syncq_stack *s) {
  if (s == NULL) return SYNCQ_EINVAL;
  int r = s->ops->destroy(s->storage);
  if (r != SYNCQ_OK) return r;
  free(s->storage);
  free(s);
  return SYNCQ_OK;
}

int syncq_stack_push(syncq_stack *s, void *item) {
  return s == NULL ? SYNCQ_EINVAL : s->ops->push(s->storage, item);
}

int syncq_stack_pop(syncq_stack *s, void **item) {
  return s == NULL ? SYNCQ_EINVAL : s->ops->pop(s->storage, item);
}

const syncq_algo *syncq_stack_algo(const syncq_stack *s) { return s == NULL ? NULL : s->algo; }
