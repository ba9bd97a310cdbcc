/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * counter.c — the generic counter API over the registry (syncq/counter.h).
 * Not an algorithm: each algorithm's contract block (source, progress,
 * atomics, memory, limits) opens its own file beside this one.
 */
#include "syncq/counter.h"

#include "../generic_internal.h"
#include "../registry_internal.h"

struct syncq_counter {
  syncq_generic g; /* first: the entry and the storage */
  const syncq_counter_ops *ops;
};

static int init_storage(const syncq_algo *a, void *storage, const void *arg) {
  const syncq_counter_ops *ops = a->ops;
  return ops->init(storage, *(const int64_t *)arg);
}

int syncq_counter_create(const char *algo, int64_t initial, syncq_counter **out) {
  if (algo == NULL || out == NULL) return SYNCQ_EINVAL;
  const syncq_algo *a;
  int r = syncq_counter_find(algo, &a);
  if (r != SYNCQ_OK) return r;
  const syncq_counter_ops *ops = a->ops;
  syncq_generic *g;
  r = syncq_generic_create(a, sizeof(syncq_counter), ops->size, ops->align, init_storage, &initial, &g);
  if (r != SYNCQ_OK) return r;
  syncq_counter *c = (syncq_counter *)g;
  c->ops = ops;
  *out = c;
  return SYNCQ_OK;
}

int syncq_counter_destroy(syncq_counter *c) {
  return c == NULL ? SYNCQ_EINVAL : syncq_generic_destroy(&c->g, c->ops->destroy);
}

int syncq_counter_fetch_add(syncq_counter *c, int64_t delta, int64_t *old) {
  return c == NULL ? SYNCQ_EINVAL : c->ops->fetch_add(c->g.storage, delta, old);
}

int syncq_counter_load(syncq_counter *c, int64_t *value) {
  return (c == NULL || value == NULL) ? SYNCQ_EINVAL : c->ops->load(c->g.storage, value);
}

const syncq_algo *syncq_counter_algo(const syncq_counter *c) { return c == NULL ? NULL : c->g.algo; }
