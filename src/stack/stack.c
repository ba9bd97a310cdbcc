/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stack.c — the generic stack API over the registry (syncq/stack.h).
 * Not an algorithm: each algorithm's contract block (source, progress,
 * atomics, memory, limits) opens its own file beside this one.
 */
#include "syncq/stack.h"

#include "../generic_internal.h"
#include "../registry_internal.h"

struct syncq_stack {
  syncq_generic g; /* first: the entry and the storage */
  const syncq_stack_ops *ops;
};

static int init_storage(const syncq_algo *a, void *storage, const void *arg) {
  const syncq_stack_ops *ops = a->ops;
  return ops->init(storage, arg);
}

int syncq_stack_create(const char *algo, const syncq_stack_config *cfg, syncq_stack **out) {
  if (algo == NULL || out == NULL) return SYNCQ_EINVAL;
  const syncq_algo *a;
  int r = syncq_stack_find(algo, &a);
  if (r != SYNCQ_OK) return r;
  const syncq_stack_ops *ops = a->ops;
  syncq_generic *g;
  r = syncq_generic_create(a, sizeof(syncq_stack), ops->size, ops->align, init_storage, cfg, &g);
  if (r != SYNCQ_OK) return r;
  syncq_stack *s = (syncq_stack *)g;
  s->ops = ops;
  *out = s;
  return SYNCQ_OK;
}

int syncq_stack_destroy(syncq_stack *s) {
  return s == NULL ? SYNCQ_EINVAL : syncq_generic_destroy(&s->g, s->ops->destroy);
}

int syncq_stack_push(syncq_stack *s, void *item) { return s == NULL ? SYNCQ_EINVAL : s->ops->push(s->g.storage, item); }

int syncq_stack_pop(syncq_stack *s, void **item) { return s == NULL ? SYNCQ_EINVAL : s->ops->pop(s->g.storage, item); }

const syncq_algo *syncq_stack_algo(const syncq_stack *s) { return s == NULL ? NULL : s->g.algo; }
