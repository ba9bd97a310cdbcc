/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * queue.c — the generic queue API over the registry (syncq/queue.h).
 * Not an algorithm: each algorithm's contract block (source, progress,
 * atomics, memory, limits) opens its own file beside this one.
 */
#include "syncq/queue.h"

#include <stdlib.h>

#include "syncq/platform.h"

struct syncq_queue {
  const syncq_algo *algo;
  const syncq_queue_ops *ops;
  void *storage; /* ops->bytes(capacity) bytes aligned to ops->align */
};

int syncq_queue_create(const char *algo, size_t capacity, syncq_queue **out) {
  if (algo == NULL || out == NULL) return SYNCQ_EINVAL;
  const syncq_algo *a;
  int r = syncq_registry_find(SYNCQ_FAMILY_QUEUE, algo, &a);
  if (r != SYNCQ_OK) return r;
  const syncq_queue_ops *ops = a->ops;
  size_t bytes;
  r = ops->bytes(capacity, &bytes);
  if (r != SYNCQ_OK) return r;
  syncq_queue *q = malloc(sizeof *q);
  if (q == NULL) return SYNCQ_ENOMEM;
  q->storage = syncq_alloc_aligned(bytes, ops->align);
  if (q->storage == NULL) {
    free(q);
    return SYNCQ_ENOMEM;
  }
  q->algo = a;
  q->ops = ops;
  r = ops->init(q->storage, capacity);
  if (r != SYNCQ_OK) {
    free(q->storage);
    free(q);
    return r;
  }
  *out = q;
  return SYNCQ_OK;
}

int syncq_queue_destroy(syncq_queue *q) {
  if (q == NULL) return SYNCQ_EINVAL;
  int r = q->ops->destroy(q->storage);
  if (r != SYNCQ_OK) return r;
  free(q->storage);
  free(q);
  return SYNCQ_OK;
}

int syncq_queue_enqueue(syncq_queue *q, void *item) {
  return q == NULL ? SYNCQ_EINVAL : q->ops->enqueue(q->storage, item);
}

int syncq_queue_dequeue(syncq_queue *q, void **item) {
  return (q == NULL || item == NULL) ? SYNCQ_EINVAL : q->ops->dequeue(q->storage, item);
}

const syncq_algo *syncq_queue_algo(const syncq_queue *q) { return q == NULL ? NULL : q->algo; }
