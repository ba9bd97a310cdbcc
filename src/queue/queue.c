/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * queue.c — the generic queue API over the registry (syncq/queue.h).
 * Not an algorithm: each algorithm's contract block (source, progress,
 * atomics, memory, limits) opens its own file beside this one.
 */
#include "syncq/queue.h"

#include "../generic_internal.h"
#include "../registry_internal.h"

struct syncq_queue {
  syncq_generic g; /* first: the entry and its ops->bytes(capacity) bytes of storage */
  const syncq_queue_ops *ops;
};

static int init_storage(const syncq_algo *a, void *storage, const void *arg) {
  const syncq_queue_ops *ops = a->ops;
  return ops->init(storage, *(const size_t *)arg);
}

int syncq_queue_create(const char *algo, size_t capacity, syncq_queue **out) {
  if (algo == NULL || out == NULL) return SYNCQ_EINVAL;
  const syncq_algo *a;
  int r = syncq_queue_find(algo, &a);
  if (r != SYNCQ_OK) return r;
  const syncq_queue_ops *ops = a->ops;
  size_t bytes;
  r = ops->bytes(capacity, &bytes);
  if (r != SYNCQ_OK) return r;
  syncq_generic *g;
  r = syncq_generic_create(a, sizeof(syncq_queue), bytes, ops->align, init_storage, &capacity, &g);
  if (r != SYNCQ_OK) return r;
  syncq_queue *q = (syncq_queue *)g;
  q->ops = ops;
  *out = q;
  return SYNCQ_OK;
}

int syncq_queue_destroy(syncq_queue *q) {
  return q == NULL ? SYNCQ_EINVAL : syncq_generic_destroy(&q->g, q->ops->destroy);
}

int syncq_queue_enqueue(syncq_queue *q, void *item) {
  return q == NULL ? SYNCQ_EINVAL : q->ops->enqueue(q->g.storage, item);
}

int syncq_queue_dequeue(syncq_queue *q, void **item) {
  return (q == NULL || item == NULL) ? SYNCQ_EINVAL : q->ops->dequeue(q->g.storage, item);
}

const syncq_algo *syncq_queue_algo(const syncq_queue *q) { return q == NULL ? NULL : q->g.algo; }
