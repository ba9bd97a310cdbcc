/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_lock.h — a pthread-mutex lock registered by the stack and
 * priority-queue drivers as "test-mutex", so that their lock-based
 * algorithms run whatever locks the lock family has registered so far,
 * and the drivers' walk over their algorithms with those locks.
 * (Test support only; the library's locks are the lock family's.)
 */
#ifndef SYNCQ_TEST_LOCK_H
#define SYNCQ_TEST_LOCK_H

#include <pthread.h>

#include "syncq/lock.h"
#include "test_peers.h"

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

/* Runs each of the n algorithms: a lock-based one once with each lock of
 * "test-mutex" and "ttas" that is registered, any other (lock-free, or a
 * peer library's, which ignores the configuration's lock) once. run gets
 * the lock to configure and the one to name in messages ("-" where the
 * algorithm takes none). */
static inline void test_lock_each_algo(const syncq_algo *const *algos, int n,
                                       void (*run)(const syncq_algo *a, const char *lock, const char *label)) {
  const char *locks[] = {"test-mutex", "ttas"};
  for (int i = 0; i < n; i++) {
    int takes_lock = algos[i]->progress == SYNCQ_PROGRESS_BLOCKING && !TEST_IS_PEER(algos[i]);
    for (size_t l = 0; l < sizeof locks / sizeof locks[0]; l++) {
      const syncq_algo *la;
      if (syncq_registry_find(SYNCQ_FAMILY_LOCK, locks[l], &la) != SYNCQ_OK) continue;
      if (!takes_lock && l > 0) break; /* the lock is ignored */
      run(algos[i], locks[l], takes_lock ? locks[l] : "-");
    }
  }
}

#endif
