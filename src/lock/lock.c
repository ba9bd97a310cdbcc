/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lock.c — the generic lock API over the registry (syncq/lock.h).
 * Not an algorithm: each algorithm's contract block (source, progress,
 * atomics, memory, limits) opens its own file beside this one.
 */
#include <string.h>

#include "../generic_internal.h"
#include "../registry_internal.h"
#include "gcr_internal.h"
#include "syncq/lock.h"
#include "syncq/wait.h"

struct syncq_lock {
  syncq_generic g; /* first: the entry and the storage */
  const syncq_lock_ops *ops;
  int wait;        /* the discipline in use; SYNCQ_WAIT_DEFAULT: the algorithm's own */
  bool restricted; /* lock goes through the concurrency restriction (gcr.c) */
  /* the restriction's words are written at every contended acquisition:
   * a cache line's distance keeps them off the line of the fields above,
   * which every call reads (the handle is malloc'ed: no alignment) */
  char pad[SYNCQ_CACHELINE];
  lock_gcr gcr;
};

/* A FIFO lock whose waiters may sleep (the safe default, competitive, or
 * a named SYNCQ_WAIT_BLOCK or SYNCQ_WAIT_COMPETITIVE) is restricted: with
 * more threads than processing units its successor is otherwise often
 * preempted or asleep at the hand-over (gcr.c, "Why"). Spinning and
 * yielding (which must not sleep) and the other locks keep the algorithm
 * alone. */
static bool restricts(const syncq_algo *a, int used) {
  return (a->props & SYNCQ_PROP_FIFO) != 0 && (used == SYNCQ_WAIT_COMPETITIVE || used == SYNCQ_WAIT_BLOCK);
}

/* A queue lock whose waiters cannot sleep in its queue (the time-published
 * ones: a sleeper publishes no time and is passed over) falls back to
 * yielding under the safe default. Left to that default it is restricted
 * too: its admitted waiters wait in it by yielding (and publishing), the
 * others sleep competitively in the passive set, outside its queue, so no
 * sleeper's time goes stale in it (src/lock/mcs_tp.c, "Waiting"). */
static bool restricts_tp(const syncq_algo *a, const syncq_lock_config *cfg, int used) {
  return (a->props & (SYNCQ_PROP_USES_NODE | SYNCQ_PROP_FIFO | SYNCQ_PROP_PEER)) == SYNCQ_PROP_USES_NODE &&
         used == SYNCQ_WAIT_YIELD && (cfg == NULL || cfg->wait == SYNCQ_WAIT_DEFAULT);
}

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
static int init_with_safe_default(const syncq_algo *a, void *storage, const syncq_lock_config *cfg, int *used) {
  const syncq_lock_ops *ops = a->ops;
  if (cfg != NULL && cfg->wait != SYNCQ_WAIT_DEFAULT) {
    *used = cfg->wait;
    if (cfg->wait == SYNCQ_WAIT_BLOCK && (a->props & SYNCQ_PROP_FIFO) != 0) {
      /* restricted (restricts()): the passive waiters sleep at once; the
       * few admitted ones, next in line, spin about one context switch
       * before they sleep, as a FIFO hand-over to a sleeper idles the
       * lock for a wake-up (gcr.c, "Waiting") */
      syncq_lock_config c = *cfg;
      c.wait = SYNCQ_WAIT_COMPETITIVE;
      int r = ops->init(storage, &c);
      if (r != SYNCQ_ENOTSUP) return r;
    }
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

/* What syncq_lock_create hands its init: the caller's configuration, and
 * where the discipline in use goes. */
typedef struct lock_init_arg {
  const syncq_lock_config *cfg;
  int used;
} lock_init_arg;

static int init_storage(const syncq_algo *a, void *storage, const void *arg) {
  lock_init_arg *la = (lock_init_arg *)arg; /* create's own, not const */
  return init_with_safe_default(a, storage, la->cfg, &la->used);
}

int syncq_lock_create(const char *algo, const syncq_lock_config *cfg, syncq_lock **out) {
  if (out == NULL) return SYNCQ_EINVAL;
  if (algo == NULL || strcmp(algo, SYNCQ_LOCK_DEFAULT) == 0) algo = SYNCQ_LOCK_DEFAULT_ALGO;
  const syncq_algo *a;
  int r = syncq_lock_find(algo, &a);
  if (r != SYNCQ_OK) return r;
  const syncq_lock_ops *ops = a->ops;
  lock_init_arg arg = {cfg, SYNCQ_WAIT_DEFAULT};
  syncq_generic *g;
  r = syncq_generic_create(a, sizeof(syncq_lock), ops->size, ops->align, init_storage, &arg, &g);
  if (r != SYNCQ_OK) return r;
  syncq_lock *l = (syncq_lock *)g;
  l->ops = ops;
  l->wait = arg.used;
  l->restricted = restricts(a, arg.used);
  if (l->restricted) lock_gcr_init(&l->gcr, arg.used, SYNCQ_LOCK_GCR_ADMITTED);
  if (restricts_tp(a, cfg, arg.used)) {
    l->restricted = true;
    l->wait = SYNCQ_WAIT_COMPETITIVE;
    lock_gcr_init(&l->gcr, SYNCQ_WAIT_COMPETITIVE, SYNCQ_LOCK_GCR_ADMITTED_TP);
  }
  *out = l;
  return SYNCQ_OK;
}

int syncq_lock_destroy(syncq_lock *l) {
  return l == NULL ? SYNCQ_EINVAL : syncq_generic_destroy(&l->g, l->ops->destroy);
}

/* A NULL node is refused only by the locks that keep state in it
 * (SYNCQ_PROP_USES_NODE); the others get a scratch node they never read
 * (the ops tables' contract asks for a non-NULL node of every caller). */
#define NODE_OR_SCRATCH(l, node, scratch) \
  ((node) != NULL ? (node) : ((l)->g.algo->props & SYNCQ_PROP_USES_NODE) ? NULL : (scratch))

int syncq_lock_lock(syncq_lock *l, syncq_lock_node *node) {
  syncq_lock_node scratch;
  if (l == NULL || (node = NODE_OR_SCRATCH(l, node, &scratch)) == NULL) return SYNCQ_EINVAL;
  if (l->restricted) return lock_gcr_lock(&l->gcr, l->ops, l->g.storage, node);
  return l->ops->lock(l->g.storage, node);
}
int syncq_lock_trylock(syncq_lock *l, syncq_lock_node *node) {
  syncq_lock_node scratch;
  if (l == NULL || (node = NODE_OR_SCRATCH(l, node, &scratch)) == NULL) return SYNCQ_EINVAL;
  return l->ops->trylock(l->g.storage, node);
}
int syncq_lock_unlock(syncq_lock *l, syncq_lock_node *node) {
  syncq_lock_node scratch;
  if (l == NULL || (node = NODE_OR_SCRATCH(l, node, &scratch)) == NULL) return SYNCQ_EINVAL;
  return l->ops->unlock(l->g.storage, node);
}
const syncq_algo *syncq_lock_algo(const syncq_lock *l) { return l == NULL ? NULL : l->g.algo; }
int syncq_lock_discipline(const syncq_lock *l) { return l == NULL ? -1 : l->wait; }
