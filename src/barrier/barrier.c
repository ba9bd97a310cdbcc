/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * barrier.c — the generic barrier API over the registry (syncq/barrier.h).
 * Not an algorithm: each algorithm's contract block (source, progress,
 * atomics, memory, limits) opens its own file beside this one.
 */
#include <stdlib.h>

#include "syncq/barrier.h"
#include "syncq/platform.h"

struct syncq_barrier {
  const syncq_algo *algo;
  const syncq_barrier_ops *ops;
  void *storage; /* aligned to ops->align */
};

int syncq_barrier_create(const char *algo, const syncq_barrier_config *cfg, syncq_barrier **out) {
  if (algo == NULL || cfg == NULL || out == NULL) return SYNCQ_EINVAL;
  const syncq_algo *a;
  int r = syncq_registry_find(SYNCQ_FAMILY_BARRIER, algo, &a);
  if (r != SYNCQ_OK) return r;
  const syncq_barrier_ops *ops = a->ops;
  syncq_barrier *b = malloc(sizeof *b);
  if (b == NULL) return SYNCQ_ENOMEM;
  b->storage = syncq_alloc_aligned(ops->size, ops->align);
  if (b->storage == NULL) {
    free(b);
    return SYNCQ_ENOMEM;
  }
  b->algo = a;
  b->ops = ops;
  r = ops->init(b->storage, cfg);
  if (r != SYNCQ_OK) {
    free(b->storage);
    free(b);
    return r;
  }
  *out = b;
  return SYNCQ_OK;
}

int syncq_barrier_destroy(syncq_barrier *b) {
  if (b == NULL) return SYNCQ_EINVAL;
  int r = b->ops->destroy(b->storage);
  if (r != SYNCQ_OK) return r;
  free(b->storage);
  free(b);
  return SYNCQ_OK;
}

int syncq_barrier_wait(syncq_barrier *b, unsigned id) {
  return b == NULL ? SYNCQ_EINVAL : b->ops->wait(b->storage, id);
}

int syncq_barrier_wait_timed(syncq_barrier *b, unsigned id, uint64_t timeout_ns) {
  if (b == NULL) return SYNCQ_EINVAL;
  if (b->ops->wait_timed == NULL) return SYNCQ_ENOTSUP; /* a peer's ops table */
  return b->ops->wait_timed(b->storage, id, timeout_ns);
}

int syncq_barrier_reset(syncq_barrier *b) {
  if (b == NULL) return SYNCQ_EINVAL;
  if (b->ops->reset == NULL) return SYNCQ_ENOTSUP;
  return b->ops->reset(b->storage);
}

const syncq_algo *syncq_barrier_algo(const syncq_barrier *b) { return b == NULL ? NULL : b->algo; }
