/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lock_api_test.c — the generic lock API's conveniences, over every
 * registered lock (peers included where the lab is built):
 *  - the default lock: a NULL name and SYNCQ_LOCK_DEFAULT create
 *    SYNCQ_LOCK_DEFAULT_ALGO;
 *  - a NULL node: accepted by every lock that keeps no state in it, refused
 *    (SYNCQ_EINVAL, the lock left free) by those with SYNCQ_PROP_USES_NODE;
 *  - unlock of a lock the caller does not hold is SYNCQ_EINVAL for the
 *    POSIX mutex as for the others, and the lock can still be destroyed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include "test_peers.h"

#include "syncq/lock.h"
#include "syncq/lock/pthread_mutex.h"
#include "syncq/registry.h"
#include "syncq/wait.h"

static void test_default_lock(void **state) {
  (void)state;
  syncq_lock *a, *b;
  assert_int_equal(syncq_lock_create(NULL, NULL, &a), SYNCQ_OK);
  assert_int_equal(syncq_lock_create(SYNCQ_LOCK_DEFAULT, NULL, &b), SYNCQ_OK);
  assert_string_equal(syncq_lock_algo(a)->name, SYNCQ_LOCK_DEFAULT_ALGO);
  assert_string_equal(syncq_lock_algo(b)->name, SYNCQ_LOCK_DEFAULT_ALGO);
  assert_int_equal(syncq_lock_lock(a, NULL), SYNCQ_OK);
  assert_int_equal(syncq_lock_trylock(a, NULL), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_unlock(a, NULL), SYNCQ_OK);
  assert_int_equal(syncq_lock_destroy(a), SYNCQ_OK);
  assert_int_equal(syncq_lock_destroy(b), SYNCQ_OK);
  assert_int_equal(syncq_lock_create(NULL, NULL, NULL), SYNCQ_EINVAL);
}

/* Every registered lock: a NULL node works where the lock keeps no state
 * in it and is refused, leaving the lock free, where it does. */
static void test_null_node_per_lock(void **state) {
  (void)state;
  const syncq_algo *all[SYNCQ_REGISTRY_MAX];
  int n = syncq_registry_list(SYNCQ_FAMILY_LOCK, all, SYNCQ_REGISTRY_MAX);
  assert_true(n > 0);
  int uses = 0, free_of_node = 0;
  for (int i = 0; i < n; i++) {
    syncq_lock *l;
    int r = syncq_lock_create(all[i]->name, NULL, &l);
    if (r == SYNCQ_ENOTSUP) continue; /* e.g. double-width CAS missing */
    assert_int_equal(r, SYNCQ_OK);
    syncq_lock_node node;
    if (all[i]->props & SYNCQ_PROP_USES_NODE) {
      uses++;
      assert_int_equal(syncq_lock_lock(l, NULL), SYNCQ_EINVAL);
      assert_int_equal(syncq_lock_trylock(l, NULL), SYNCQ_EINVAL);
      assert_int_equal(syncq_lock_trylock(l, &node), SYNCQ_OK); /* still free */
      assert_int_equal(syncq_lock_unlock(l, NULL), SYNCQ_EINVAL);
      assert_int_equal(syncq_lock_unlock(l, &node), SYNCQ_OK);
    } else {
      free_of_node++;
      assert_int_equal(syncq_lock_lock(l, NULL), SYNCQ_OK);
      assert_int_equal(syncq_lock_unlock(l, NULL), SYNCQ_OK);
      assert_int_equal(syncq_lock_trylock(l, NULL), SYNCQ_OK);
      assert_int_equal(syncq_lock_unlock(l, &node), SYNCQ_OK); /* any node, or none */
    }
    r = syncq_lock_destroy(l);
    if (r != SYNCQ_OK) fail_msg("%s: destroy after lock/unlock without a node: %s", all[i]->name, syncq_strerror(r));
  }
  assert_true(uses >= 2); /* mcs, clh */
  assert_true(free_of_node >= 8);
}

static void *unlock_from_other_thread(void *arg) { return (void *)(intptr_t)syncq_lock_unlock(arg, NULL); }

static void test_pthread_mutex_unlock_not_held(void **state) {
  (void)state;
  syncq_lock *l;
  assert_int_equal(syncq_lock_create("pthread-mutex", NULL, &l), SYNCQ_OK);
  assert_int_equal(syncq_lock_unlock(l, NULL), SYNCQ_EINVAL); /* never locked */
  assert_int_equal(syncq_lock_lock(l, NULL), SYNCQ_OK);
  pthread_t t;
  void *r;
  assert_int_equal(pthread_create(&t, NULL, unlock_from_other_thread, l), 0);
  assert_int_equal(pthread_join(t, &r), 0);
  assert_int_equal((int)(intptr_t)r, SYNCQ_EINVAL); /* not the holder */
  assert_int_equal(syncq_lock_unlock(l, NULL), SYNCQ_OK);
  assert_int_equal(syncq_lock_unlock(l, NULL), SYNCQ_EINVAL); /* twice */
  assert_int_equal(syncq_lock_destroy(l), SYNCQ_OK);          /* and still destroyable */
  /* the typed API, competitive (glibc's adaptive mutex) too */
  syncq_lock_pthread_mutex m;
  syncq_lock_config cfg = {0, SYNCQ_WAIT_COMPETITIVE, false};
  assert_int_equal(syncq_lock_pthread_mutex_init(&m, &cfg), SYNCQ_OK);
  assert_int_equal(syncq_lock_pthread_mutex_unlock(&m), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_pthread_mutex_trylock(&m), SYNCQ_OK);
  assert_int_equal(syncq_lock_pthread_mutex_unlock(&m), SYNCQ_OK);
  assert_int_equal(syncq_lock_pthread_mutex_destroy(&m), SYNCQ_OK);
}

int main(void) {
  test_register_peers();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_default_lock),
    cmocka_unit_test(test_null_node_per_lock),
    cmocka_unit_test(test_pthread_mutex_unlock_not_held),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
