/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/counter/mutex.h — a plain add under a pthread mutex: the lock-based
 * counter baseline of 001 §5 and 003 §4.1. Blocking.
 */
#ifndef SYNCQ_COUNTER_MUTEX_H
#define SYNCQ_COUNTER_MUTEX_H

#include "syncq/export.h"

#include <pthread.h>
#include <stdint.h>

#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct syncq_counter_mutex {
  SYNCQ_CACHELINE_ALIGNED pthread_mutex_t lock;
  int64_t value; /* guarded by lock */
} syncq_counter_mutex;

/* SYNCQ_EINVAL: c is NULL. SYNCQ_ESYS: pthread_mutex_init failed. */
SYNCQ_API int syncq_counter_mutex_init(syncq_counter_mutex *c, int64_t initial);
/* Destroy the counter's pthread mutex.
 * SYNCQ_EINVAL: c is NULL.
 * SYNCQ_EBUSY: pthread_mutex_destroy found the mutex locked (a fetch_add or
 * load has not returned).
 */
SYNCQ_API int syncq_counter_mutex_destroy(syncq_counter_mutex *c);
/* Add delta under the mutex (blocking); *old (if old is not NULL) receives
 * the value before.
 * SYNCQ_EINVAL: c is NULL.
 */
SYNCQ_API int syncq_counter_mutex_fetch_add(syncq_counter_mutex *c, int64_t delta, int64_t *old);
/* Read the current value under the mutex into *value.
 * SYNCQ_EINVAL: c or value is NULL.
 */
SYNCQ_API int syncq_counter_mutex_load(syncq_counter_mutex *c, int64_t *value);

#ifdef __cplusplus
}
#endif
#endif
