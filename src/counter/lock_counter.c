/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lock_counter.c — counters over a registered lock.
 *
 * Contract
 *   Source:      001 §5 (counter under a single test-and-test-and-set lock
 *                with bounded exponential backoff); 003 §4.1 (lock-based
 *                counter vs CAS and fetch-and-add); lock-based counters
 *                over any registered lock.
 *   Progress:    blocking (the lock's).
 *   Atomics:     the lock's acquire + release around a plain add.
 *   Memory:      init allocates the lock's storage (aligned), destroy
 *                frees it; nothing after init.
 *   Signal-safe: no. Process-shared: no (the lock is found by pointer).
 *   Limits:      the value wraps modulo 2^64.
 *   Stats:       the lock's.
 */
#include "syncq/counter/lock.h"

#include <stdlib.h>

#include "syncq/counter.h"
#include "../registry_internal.h"
#include "syncq/platform.h"
#include "syncq/wait.h"

int syncq_counter_lock_init(syncq_counter_lock *c, int64_t initial, const char *lock_name,
                            const syncq_lock_config *cfg) {
  if (c == NULL || lock_name == NULL) return SYNCQ_EINVAL;
  const syncq_algo *a;
  int r = syncq_lock_find(lock_name, &a);
  if (r != SYNCQ_OK) return r;
  const syncq_lock_ops *ops = a->ops;
  void *l = syncq_alloc_aligned(ops->size, ops->align);
  if (l == NULL) return SYNCQ_ENOMEM;
  r = ops->init(l, cfg);
  if (r != SYNCQ_OK) {
    free(l);
    return r;
  }
  c->value = initial;
  c->ops = ops;
  c->lock = l;
  return SYNCQ_OK;
}

int syncq_counter_lock_destroy(syncq_counter_lock *c) {
  if (c == NULL || c->lock == NULL) return SYNCQ_EINVAL;
  int r = c->ops->destroy(c->lock);
  if (r != SYNCQ_OK) return r;
  free(c->lock);
  c->lock = NULL;
  return SYNCQ_OK;
}

int syncq_counter_lock_fetch_add(syncq_counter_lock *c, int64_t delta, int64_t *old) {
  if (c == NULL || c->lock == NULL) return SYNCQ_EINVAL;
  syncq_lock_node node;
  int r = c->ops->lock(c->lock, &node);
  if (r != SYNCQ_OK) return r;
  int64_t v = c->value;
  c->value = (int64_t)((uint64_t)v + (uint64_t)delta); /* wraps, no signed overflow */
  (void)c->ops->unlock(c->lock, &node);
  if (old != NULL) *old = v;
  return SYNCQ_OK;
}

int syncq_counter_lock_load(syncq_counter_lock *c, int64_t *value) {
  if (c == NULL || c->lock == NULL || value == NULL) return SYNCQ_EINVAL;
  syncq_lock_node node;
  int r = c->ops->lock(c->lock, &node);
  if (r != SYNCQ_OK) return r;
  *value = c->value;
  (void)c->ops->unlock(c->lock, &node);
  return SYNCQ_OK;
}

/* ---- the registered variants: a lock name and a discipline each ---- */
#define LOCK_COUNTER(ident, regname, lockname, discipline, title)                                          \
  static int ident##_init(syncq_counter_lock *c, int64_t v) {                                              \
    syncq_lock_config cfg = {0, discipline, false};                                                        \
    return syncq_counter_lock_init(c, v, lockname, &cfg);                                                  \
  }                                                                                                        \
  SYNCQ_COUNTER_REGISTER_FNS(ident, regname, title, "001 §5; 003 §4.1", BLOCKING, SYNCQ_PROP_LINEARIZABLE, \
                             syncq_counter_lock, ident##_init, syncq_counter_lock_destroy,                 \
                             syncq_counter_lock_fetch_add, syncq_counter_lock_load);

LOCK_COUNTER(lock_ttas, "lock-ttas", "ttas", SYNCQ_WAIT_SPIN, "counter under a TTAS lock (backoff, cap 30 us)")
LOCK_COUNTER(lock_ticket, "lock-ticket", "ticket", SYNCQ_WAIT_COMPETITIVE,
             "counter under a ticket lock (competitive spinning)")
LOCK_COUNTER(lock_futex_mutex, "lock-futex-mutex", "futex-mutex", SYNCQ_WAIT_BLOCK,
             "counter under a futex mutex (immediate blocking)")
