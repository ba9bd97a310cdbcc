/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_lock.h — a pthread-mutex lock registered by the stack and
 * priority-queue drivers as "test-mutex", so that their lock-based
 * algorithms run whatever locks the lock family has registered so far.
 * (Test support only; the library's locks are the lock family's.)
 */
#ifndef SYNCQ_TEST_LOCK_H
#define SYNCQ_TEST_LOCK_H

#include <pthread.h>

#include "syncq/lock.h"

typedef struct test_mutex {
  pthread_mutex_t m;
} test_mutex;

static int tm_init(test_mutex *l, const syncq_lock_config *cfg) {
  (void)cfg;
  if (l == NULL) return SYNCQ_EINVAL;
  return pthread_mutex_init(&l->m, NULL) == 0 ? SYNCQ_OK : SYNCQ_ESYS;
}
static int tm_destroy(test_mutex *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  return pthread_mutex_destroy(&l->m) == 0 ? SYNCQ_OK : SYNCQ_EBUSY;
}
static int tm_lock(test_mutex *l, syncq_lock_node *n) {
  (void)n;
  if (l == NULL) return SYNCQ_EINVAL;
  return pthread_mutex_lock(&l->m) == 0 ? SYNCQ_OK : SYNCQ_ESYS;
}
static int tm_trylock(test_mutex *l, syncq_lock_node *n) {
  (void)n;
  if (l == NULL) return SYNCQ_EINVAL;
  return pthread_mutex_trylock(&l->m) == 0 ? SYNCQ_OK : SYNCQ_EBUSY;
}
static int tm_unlock(test_mutex *l, syncq_lock_node *n) {
  (void)n;
  if (l == NULL) return SYNCQ_EINVAL;
  return pthread_mutex_unlock(&l->m) == 0 ? SYNCQ_OK : SYNCQ_ESYS;
}

SYNCQ_LOCK_REGISTER_FNS(test_mutex, "test-mutex", "pthread mutex (test driver's own lock)", "-", BLOCKING, 0,
                        test_mutex, tm_init, tm_destroy, tm_lock, tm_trylock, tm_unlock);

/* Register "test-mutex" (idempotent). */
static inline void test_lock_register(void) {
  const syncq_algo *a;
  if (syncq_registry_find(SYNCQ_FAMILY_LOCK, "test-mutex", &a) != SYNCQ_OK)
    syncq_registry_add(&syncq_lock_test_mutex_algo);
}

#endif
