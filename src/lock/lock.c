/*
 * lock.c — the generic lock API over the registry (syncq/lock.h).
 * Not an algorithm: each algorithm's contract block (source, progress,
 * atomics, memory, limits) opens its own file beside this one.
 */
#include <stdlib.h>

#include "syncq/lock.h"
#include "syncq/platform.h"

struct syncq_lock {
  const syncq_algo *algo;
  const syncq_lock_ops *ops;
  void *storage; /* aligned to ops->align */
};

int syncq_lock_create(const char *algo, const syncq_lock_config *cfg, syncq_lock **out) {
  if (algo == NULL || out == NULL) return SYNCQ_EINVAL;
  const syncq_algo *a;
  int r = syncq_registry_find(SYNCQ_FAMILY_LOCK, algo, &a);
  if (r != SYNCQ_OK) return r;
  const syncq_lock_ops *ops = a->ops;
  syncq_lock *l = malloc(sizeof *l);
  if (l == NULL) return SYNCQ_ENOMEM;
  l->storage = syncq_alloc_aligned(ops->size, ops->align);
  if (l->storage == NULL) {
    free(l);
    return SYNCQ_ENOMEM;
  }
  l->algo = a;
  l->ops = ops;
  r = ops->init(l->storage, cfg);
  if (r != SYNCQ_OK) {
    free(l->storage);
    free(l);
    return r;
  }
  *out = l;
  return SYNCQ_OK;
}

int syncq_lock_destroy(syncq_lock *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  int r = l->ops->destroy(l->storage);
  if (r != SYNCQ_OK) return r;
  free(l->storage);
  free(l);
  return SYNCQ_OK;
}

int syncq_lock_lock(syncq_lock *l, syncq_lock_node *node) {
  return (l == NULL || node == NULL) ? SYNCQ_EINVAL : l->ops->lock(l->storage, node);
}
int syncq_lock_trylock(syncq_lock *l, syncq_lock_node *node) {
  return (l == NULL || node == NULL) ? SYNCQ_EINVAL : l->ops->trylock(l->storage, node);
}
int syncq_lock_unlock(syncq_lock *l, syncq_lock_node *node) {
  return (l == NULL || node == NULL) ? SYNCQ_EINVAL : l->ops->unlock(l->storage, node);
}
const syncq_algo *syncq_lock_algo(const syncq_lock *l) { return l == NULL ? NULL : l->algo; }
