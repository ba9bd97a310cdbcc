/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pqueue.c — the generic priority-queue API over the registry (syncq/pqueue.h).
 * Not an algorithm: each algorithm's contract block (source, progress,
 * atomics, memory, limits) opens its own file beside this one.
 */
#include "syncq/pqueue.h"

#include <stdlib.h>

#include "syncq/platform.h"

struct syncq_pqueue {
  const syncq_algo *algo;
  const syncq_pqueue_ops *ops;
  void *storage; /* aligned to ops->align */
};

int syncq_pqueue_create(const char *algo, const syncq_pqueue_config *cfg, syncq_pqueue **out) {
  if (algo == NULL || out == NULL) return SYNCQ_EINVAL;
  const syncq_algo *a;
  int r = syncq_registry_find(SYNCQ_FAMILY_PQUEUE, algo, &a);
  if (r != SYNCQ_OK) return r;
  const syncq_pqueue_ops *ops = a->ops;
  syncq_pqueue *q = malloc(sizeof *q);
  if (q == NULL) return SYNCQ_ENOMEM;
  q->storage = syncq_alloc_aligned(ops->size, ops->align);
  if (q->storage == NULL) {
    free(q);
    return SYNCQ_ENOMEM;
  }
  q->algo = a;
  q->ops = ops;
  r = ops->init(q->storage, cfg);
  if (r != SYNCQ_OK) {
    free(q->storage);
    free(q);
    return r;
  }
  *out = q;
  return SYNCQ_OK;
}

int syncq_pqueue_destroy(syncq_pqueue *q) {
  if (q == NULL) return SYNCQ_EINVAL;
  int r = q->ops->destroy(q->storage);
  if (r != SYNCQ_OK) return r;
  free(q->storage);
  free(q);
  return SYNCQ_OK;
}

int syncq_pqueue_insert(syncq_pqueue *q, uint64_t key, void *payload) {
  return q == NULL ? SYNCQ_EINVAL : q->ops->insert(q->storage, key, payload);
}

int syncq_pqueue_delete_min(syncq_pqueue *q, uint64_t *key, void **payload) {
  return q == NULL ? SYNCQ_EINVAL : q->ops->delete_min(q->storage, key, payload);
}

const syncq_algo *syncq_pqueue_algo(const syncq_pqueue *q) { return q == NULL ? NULL : q->algo; }
