/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * barrier.c — the generic barrier API over the registry (syncq/barrier.h).
 * Not an algorithm: each algorithm's contract block (source, progress,
 * atomics, memory, limits) opens its own file beside this one.
 */
#include "syncq/barrier.h"
#include "../generic_internal.h"
#include "../registry_internal.h"

struct syncq_barrier {
  syncq_generic g; /* first: the entry and the storage */
  const syncq_barrier_ops *ops;
};

static int init_storage(const syncq_algo *a, void *storage, const void *arg) {
  const syncq_barrier_ops *ops = a->ops;
  return ops->init(storage, arg);
}

int syncq_barrier_create(const char *algo, const syncq_barrier_config *cfg, syncq_barrier **out) {
  if (algo == NULL || cfg == NULL || out == NULL) return SYNCQ_EINVAL;
  const syncq_algo *a;
  int r = syncq_barrier_find(algo, &a);
  if (r != SYNCQ_OK) return r;
  const syncq_barrier_ops *ops = a->ops;
  syncq_generic *g;
  r = syncq_generic_create(a, sizeof(syncq_barrier), ops->size, ops->align, init_storage, cfg, &g);
  if (r != SYNCQ_OK) return r;
  syncq_barrier *b = (syncq_barrier *)g;
  b->ops = ops;
  *out = b;
  return SYNCQ_OK;
}

int syncq_barrier_destroy(syncq_barrier *b) {
  return b == NULL ? SYNCQ_EINVAL : syncq_generic_destroy(&b->g, b->ops->destroy);
}

int syncq_barrier_wait(syncq_barrier *b, unsigned id) {
  return b == NULL ? SYNCQ_EINVAL : b->ops->wait(b->g.storage, id);
}

int syncq_barrier_wait_timed(syncq_barrier *b, unsigned id, uint64_t timeout_ns) {
  if (b == NULL) return SYNCQ_EINVAL;
  if (b->ops->wait_timed == NULL) return SYNCQ_ENOTSUP; /* a peer's ops table */
  return b->ops->wait_timed(b->g.storage, id, timeout_ns);
}

int syncq_barrier_reset(syncq_barrier *b) {
  if (b == NULL) return SYNCQ_EINVAL;
  if (b->ops->reset == NULL) return SYNCQ_ENOTSUP;
  return b->ops->reset(b->g.storage);
}

const syncq_algo *syncq_barrier_algo(const syncq_barrier *b) { return b == NULL ? NULL : b->g.algo; }
