/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lock.c — the generic lock API over the registry (syncq/lock.h).
 * Not an algorithm: each algorithm's contract block (source, progress,
 * atomics, memory, limits) opens its own file beside this one.
 */
#include <stdlib.h>
#include <string.h>

#include "syncq/lock.h"
#include "syncq/platform.h"
#include "syncq/wait.h"

struct syncq_lock {
  const syncq_algo *algo;
  const syncq_lock_ops *ops;
  void *storage; /* aligned to ops->align */
  int wait;      /* the discipline in use; SYNCQ_WAIT_DEFAULT: the algorithm's own */
};

/* The safe default of the generic API, in order of preference: the first
 * discipline the algorithm accepts is used when the caller names none.
 * Competitive spinning first (spin about one context switch, then sleep:
 * within a factor of two of the best of spinning and blocking, Karlin et
 * al. 1991), then yielding (the scheduler-conscious locks accept only spin
 * and yield). A lock accepting neither (a peer's pure spin lock) keeps its
 * own default. Measured in syncq-lab locks-cost, phase "defaults-busy". */
static const int safe_default_order[] = {SYNCQ_WAIT_COMPETITIVE, SYNCQ_WAIT_YIELD};
#define SAFE_DEFAULTS (sizeof safe_default_order / sizeof safe_default_order[0])

/* init with the caller's discipline, or with the safe default when the
 * caller names none; *used gets the discipline in use. */
static int init_with_safe_default(const syncq_algo *a, void *storage,
                                  const syncq_lock_config *cfg, int *used) {
  const syncq_lock_ops *ops = a->ops;
  if (cfg != NULL && cfg->wait != SYNCQ_WAIT_DEFAULT) {
    *used = cfg->wait;
    return ops->init(storage, cfg);
  }
  if (a->props & SYNCQ_PROP_SLEEPS_BY_DEFAULT) { /* a mutex: its own default sleeps */
    *used = SYNCQ_WAIT_DEFAULT;
    return ops->init(storage, cfg);
  }
  syncq_lock_config c = {0, SYNCQ_WAIT_DEFAULT, false};
  if (cfg != NULL) c = *cfg;
  for (size_t i = 0; i < SAFE_DEFAULTS; i++) {
    c.wait = safe_default_order[i];
    int r = ops->init(storage, &c);
    if (r != SYNCQ_ENOTSUP) {
      *used = c.wait;
      return r;
    }
  }
  c.wait = SYNCQ_WAIT_DEFAULT;
  *used = SYNCQ_WAIT_DEFAULT;
  return ops->init(storage, &c);
}

int syncq_lock_create(const char *algo, const syncq_lock_config *cfg, syncq_lock **out) {
  if (out == NULL) return SYNCQ_EINVAL;
  if (algo == NULL || strcmp(algo, SYNCQ_LOCK_DEFAULT) == 0) algo = SYNCQ_LOCK_DEFAULT_ALGO;
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
  r = init_with_safe_default(a, l->storage, cfg, &l->wait);
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

/* A NULL node is refused only by the locks that keep state in it
 * (SYNCQ_PROP_USES_NODE); the others get a scratch node they never read
 * (the ops tables' contract asks for a non-NULL node of every caller). */
#define NODE_OR_SCRATCH(l, node, scratch) ((node) != NULL ? (node) : ((l)->algo->props & SYNCQ_PROP_USES_NODE) ? NULL : (scratch))

int syncq_lock_lock(syncq_lock *l, syncq_lock_node *node) {
  syncq_lock_node scratch;
  if (l == NULL || (node = NODE_OR_SCRATCH(l, node, &scratch)) == NULL) return SYNCQ_EINVAL;
  return l->ops->lock(l->storage, node);
}
int syncq_lock_trylock(syncq_lock *l, syncq_lock_node *node) {
  syncq_lock_node scratch;
  if (l == NULL || (node = NODE_OR_SCRATCH(l, node, &scratch)) == NULL) return SYNCQ_EINVAL;
  return l->ops->trylock(l->storage, node);
}
int syncq_lock_unlock(syncq_lock *l, syncq_lock_node *node) {
  syncq_lock_node scratch;
  if (l == NULL || (node = NODE_OR_SCRATCH(l, node, &scratch)) == NULL) return SYNCQ_EINVAL;
  return l->ops->unlock(l->storage, node);
}
const syncq_algo *syncq_lock_algo(const syncq_lock *l) { return l == NULL ? NULL : l->algo; }
int syncq_lock_discipline(const syncq_lock *l) { return l == NULL ? -1 : l->wait; }
