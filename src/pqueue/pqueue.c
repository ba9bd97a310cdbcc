/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pqueue.c — the generic priority-queue API over the registry (syncq/pqueue.h).
 * Not an algorithm: each algorithm's contract block (source, progress,
 * atomics, memory, limits) opens its own file beside this one.
 */
#include "syncq/pqueue.h"

#include "../generic_internal.h"
#include "../registry_internal.h"

struct syncq_pqueue {
  syncq_generic g; /* first: the entry and the storage */
  const syncq_pqueue_ops *ops;
};

static int init_storage(const syncq_algo *a, void *storage, const void *arg) {
  const syncq_pqueue_ops *ops = a->ops;
  return ops->init(storage, arg);
}

int syncq_pqueue_create(const char *algo, const syncq_pqueue_config *cfg, syncq_pqueue **out) {
  if (algo == NULL || out == NULL) return SYNCQ_EINVAL;
  const syncq_algo *a;
  int r = syncq_pqueue_find(algo, &a);
  if (r != SYNCQ_OK) return r;
  const syncq_pqueue_ops *ops = a->ops;
  syncq_generic *g;
  r = syncq_generic_create(a, sizeof(syncq_pqueue), ops->size, ops->align, init_storage, cfg, &g);
  if (r != SYNCQ_OK) return r;
  syncq_pqueue *q = (syncq_pqueue *)g;
  q->ops = ops;
  *out = q;
  return SYNCQ_OK;
}

int syncq_pqueue_destroy(syncq_pqueue *q) {
  return q == NULL ? SYNCQ_EINVAL : syncq_generic_destroy(&q->g, q->ops->destroy);
}

int syncq_pqueue_insert(syncq_pqueue *q, uint64_t key, void *payload) {
  return q == NULL ? SYNCQ_EINVAL : q->ops->insert(q->g.storage, key, payload);
}

int syncq_pqueue_delete_min(syncq_pqueue *q, uint64_t *key, void **payload) {
  return q == NULL ? SYNCQ_EINVAL : q->ops->delete_min(q->g.storage, key, payload);
}

const syncq_algo *syncq_pqueue_algo(const syncq_pqueue *q) { return q == NULL ? NULL : q->g.algo; }
