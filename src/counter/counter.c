/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * counter.c — the generic counter API over the registry (syncq/counter.h).
 * Not an algorithm: each algorithm's contract block (source, progress,
 * atomics, memory, limits) opens its own file beside this one.
 */
#include "syncq/counter.h"

#include <stdlib.h>

#include "syncq/platform.h"

struct syncq_counter {
  const syncq_algo *algo;
  const syncq_counter_ops *ops;
  void *storage; /* aligned to ops->align */
};

int syncq_counter_create(const char *algo, int64_t initial, syncq_counter **out) {
  if (algo == NULL || out == NULL) return SYNCQ_EINVAL;
  const syncq_algo *a;
  int r = syncq_registry_find(SYNCQ_FAMILY_COUNTER, algo, &a);
  if (r != SYNCQ_OK) return r;
  const syncq_counter_ops *ops = a->ops;
  syncq_counter *c = malloc(sizeof *c);
  if (c == NULL) return SYNCQ_ENOMEM;
  c->storage = syncq_alloc_aligned(ops->size, ops->align);
  if (c->storage == NULL) {
    free(c);
    return SYNCQ_ENOMEM;
  }
  c->algo = a;
  c->ops = ops;
  r = ops->init(c->storage, initial);
  if (r != SYNCQ_OK) {
    free(c->storage);
    free(c);
    return r;
  }
  *out = c;
  return SYNCQ_OK;
}

int syncq_counter_destroy(syncq_counter *c) {
  if (c == NULL) return SYNCQ_EINVAL;
  int r = c->ops->destroy(c->storage);
  if (r != SYNCQ_OK) return r;
  free(c->storage);
  free(c);
  return SYNCQ_OK;
}

int syncq_counter_fetch_add(syncq_counter *c, int64_t delta, int64_t *old) {
  return c == NULL ? SYNCQ_EINVAL : c->ops->fetch_add(c->storage, delta, old);
}

int syncq_counter_load(syncq_counter *c, int64_t *value) {
  return (c == NULL || value == NULL) ? SYNCQ_EINVAL : c->ops->load(c->storage, value);
}

const syncq_algo *syncq_counter_algo(const syncq_counter *c) { return c == NULL ? NULL : c->algo; }
