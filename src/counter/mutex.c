/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mutex.c — counter under a pthread mutex.
 *
 * Contract
 *   Source:      001 §5 and 003 §4.1 (lock-based counter baseline).
 *   Progress:    blocking (a preempted holder stops every other thread).
 *   Atomics:     those of pthread_mutex_lock/unlock (glibc: 1 CAS + 1 swap
 *                uncontended), plus a futex wait/wake under contention.
 *   Memory:      caller's storage; never allocates.
 *   Signal-safe: no (pthread_mutex_lock is not async-signal-safe).
 *   Process-shared: no (the mutex is process-private).
 */
#include "syncq/counter/mutex.h"

#include <errno.h>

#include "syncq/counter.h"

int syncq_counter_mutex_init(syncq_counter_mutex *c, int64_t initial) {
  if (c == NULL) return SYNCQ_EINVAL;
  if (pthread_mutex_init(&c->lock, NULL) != 0) return SYNCQ_ESYS;
  c->value = initial;
  return SYNCQ_OK;
}

int syncq_counter_mutex_destroy(syncq_counter_mutex *c) {
  if (c == NULL) return SYNCQ_EINVAL;
  return pthread_mutex_destroy(&c->lock) == EBUSY ? SYNCQ_EBUSY : SYNCQ_OK;
}

int syncq_counter_mutex_fetch_add(syncq_counter_mutex *c, int64_t delta, int64_t *old) {
  if (c == NULL) return SYNCQ_EINVAL;
  pthread_mutex_lock(&c->lock);
  int64_t prev = c->value;
  c->value = (int64_t)((uint64_t)prev + (uint64_t)delta); /* wrap, as the atomic counters do */
  pthread_mutex_unlock(&c->lock);
  if (old != NULL) *old = prev;
  return SYNCQ_OK;
}

int syncq_counter_mutex_load(syncq_counter_mutex *c, int64_t *value) {
  if (c == NULL || value == NULL) return SYNCQ_EINVAL;
  pthread_mutex_lock(&c->lock);
  *value = c->value;
  pthread_mutex_unlock(&c->lock);
  return SYNCQ_OK;
}

SYNCQ_COUNTER_REGISTER(mutex, "mutex", "counter under a pthread mutex", "001 §5; 003 §4.1", BLOCKING,
                       SYNCQ_PROP_LINEARIZABLE);
