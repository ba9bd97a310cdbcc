/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lock_corrupt_test.c — the process-shared locks against words another
 * process wrote over. Each lock lives in a shared mapping, made with
 * process_shared; a forked child then writes into it:
 *   - Anderson's and the array locks: a slot mask that is not slots - 1
 *     or lies past the array, a max_threads above the slots, the holder's
 *     place past the slots: lock, trylock and unlock answer SYNCQ_EINVAL
 *     (under ASan: no index past the array); with the word put back the
 *     lock works again, held state included;
 *   - every process-shared lock (TAS, TTAS, preemption-safe TTAS, ticket,
 *     futex mutex, Anderson, both array locks): a process_shared byte
 *     that is neither 0 nor 1 (UBSan: a bool holding it is undefined to
 *     load), and a discipline outside syncq_wait_discipline (waits as
 *     SPIN): lock, trylock and unlock still work, a second thread
 *     contending included.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <cmocka.h>

#include "syncq/lock/anderson.h"
#include "syncq/lock/array.h"
#include "syncq/lock/futex_mutex.h"
#include "syncq/lock/tas.h"
#include "syncq/lock/ticket.h"
#include "syncq/lock/ttas_ps.h"
#include "syncq/wait.h"

#include "shared_corrupt.h"

typedef struct lock_api {
  const char *name;
  size_t size;
  int (*init)(void *, const syncq_lock_config *);
  int (*destroy)(void *);
  int (*lock)(void *);
  int (*trylock)(void *);
  int (*unlock)(void *);
  size_t wait_off, pshared_off;
  int wait; /* the discipline it is made with (a sleeping one where allowed: the shared futex path) */
} lock_api;

#define WRAP(name, type)                                                                                           \
  static int name##_init_w(void *l, const syncq_lock_config *c) { return syncq_lock_##name##_init((type *)l, c); } \
  static int name##_lock_w(void *l) { return syncq_lock_##name##_lock((type *)l); }                                \
  static int name##_trylock_w(void *l) { return syncq_lock_##name##_trylock((type *)l); }                          \
  static int name##_unlock_w(void *l) { return syncq_lock_##name##_unlock((type *)l); }

WRAP(tas, syncq_lock_tas)
WRAP(ttas, syncq_lock_tas)
WRAP(ttas_ps, syncq_lock_tas)
WRAP(ticket, syncq_lock_ticket)
WRAP(futex_mutex, syncq_lock_futex_mutex)
WRAP(anderson, syncq_lock_anderson)
static int array_cas_init_w(void *l, const syncq_lock_config *c) { return syncq_lock_array_cas_init(l, c); }
static int array_faa_init_w(void *l, const syncq_lock_config *c) { return syncq_lock_array_faa_init(l, c); }
static int array_cas_lock_w(void *l) { return syncq_lock_array_cas_lock(l); }
static int array_faa_lock_w(void *l) { return syncq_lock_array_faa_lock(l); }
static int array_trylock_w(void *l) { return syncq_lock_array_trylock(l); }
static int array_unlock_w(void *l) { return syncq_lock_array_unlock(l); }
static int tas_destroy_w(void *l) { return syncq_lock_tas_destroy(l); }
static int ttas_destroy_w(void *l) { return syncq_lock_ttas_destroy(l); }
static int ttas_ps_destroy_w(void *l) { return syncq_lock_ttas_ps_destroy(l); }
static int ticket_destroy_w(void *l) { return syncq_lock_ticket_destroy(l); }
static int futex_mutex_destroy_w(void *l) { return syncq_lock_futex_mutex_destroy(l); }
static int anderson_destroy_w(void *l) { return syncq_lock_anderson_destroy(l); }
static int array_destroy_w(void *l) { return syncq_lock_array_destroy(l); }

#define FLAGS(type) offsetof(type, wait), offsetof(type, process_shared)

static const lock_api apis[] = {
  {"tas", sizeof(syncq_lock_tas), tas_init_w, tas_destroy_w, tas_lock_w, tas_trylock_w, tas_unlock_w,
   FLAGS(syncq_lock_tas), SYNCQ_WAIT_BLOCK},
  {"ttas", sizeof(syncq_lock_tas), ttas_init_w, ttas_destroy_w, ttas_lock_w, ttas_trylock_w, ttas_unlock_w,
   FLAGS(syncq_lock_tas), SYNCQ_WAIT_BLOCK},
  {"ttas-ps", sizeof(syncq_lock_tas), ttas_ps_init_w, ttas_ps_destroy_w, ttas_ps_lock_w, ttas_ps_trylock_w,
   ttas_ps_unlock_w, FLAGS(syncq_lock_tas), SYNCQ_WAIT_BLOCK},
  {"ticket", sizeof(syncq_lock_ticket), ticket_init_w, ticket_destroy_w, ticket_lock_w, ticket_trylock_w,
   ticket_unlock_w, FLAGS(syncq_lock_ticket), SYNCQ_WAIT_BLOCK},
  {"futex-mutex", sizeof(syncq_lock_futex_mutex), futex_mutex_init_w, futex_mutex_destroy_w, futex_mutex_lock_w,
   futex_mutex_trylock_w, futex_mutex_unlock_w, FLAGS(syncq_lock_futex_mutex), SYNCQ_WAIT_BLOCK},
  {"anderson", sizeof(syncq_lock_anderson), anderson_init_w, anderson_destroy_w, anderson_lock_w, anderson_trylock_w,
   anderson_unlock_w, FLAGS(syncq_lock_anderson), SYNCQ_WAIT_BLOCK},
  {"array-cas", sizeof(syncq_lock_array), array_cas_init_w, array_destroy_w, array_cas_lock_w, array_trylock_w,
   array_unlock_w, FLAGS(syncq_lock_array), SYNCQ_WAIT_BLOCK},
  {"array-faa", sizeof(syncq_lock_array), array_faa_init_w, array_destroy_w, array_faa_lock_w, array_trylock_w,
   array_unlock_w, FLAGS(syncq_lock_array), SYNCQ_WAIT_BLOCK},
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

typedef struct contender {
  const lock_api *api;
  void *lock;
  int locked, unlocked;
} contender;

static void *contend(void *p) {
  contender *c = p;
  c->locked = c->api->lock(c->lock);
  c->unlocked = c->locked == SYNCQ_OK ? c->api->unlock(c->lock) : SYNCQ_OK;
  return NULL;
}

/* Hold the lock, let a second thread wait for it (it spins, yields or
 * sleeps on the shared futex), hand it over, and check both got through. */
static void exercise(const lock_api *api, void *l) {
  assert_int_equal(api->lock(l), SYNCQ_OK);
  assert_int_equal(api->trylock(l), SYNCQ_EBUSY);
  contender c = {api, l, -100, -100};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, contend, &c), 0);
  nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL); /* let it wait: any interleaving is correct */
  assert_int_equal(api->unlock(l), SYNCQ_OK);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_int_equal(c.locked, SYNCQ_OK);
  assert_int_equal(c.unlocked, SYNCQ_OK);
  assert_int_equal(api->trylock(l), SYNCQ_OK);
  assert_int_equal(api->unlock(l), SYNCQ_OK);
}

static void *make(const lock_api *api) {
  void *l = shared_map(api->size);
  syncq_lock_config cfg = {.max_threads = 4, .wait = api->wait, .process_shared = true};
  assert_int_equal(api->init(l, &cfg), SYNCQ_OK);
  return l;
}

/* A process_shared byte of 0x5a and a discipline of 77: the lock works. */
static void test_flags(void **state) {
  (void)state;
  for (size_t a = 0; a < N_OF(apis); a++) {
    const lock_api *api = &apis[a];
    unsigned char *l = make(api);
    exercise(api, l);
    uint8_t odd = 0x5a;
    corrupt_from_child(l + api->pshared_off, &odd, sizeof odd);
    exercise(api, l);
    int wait = 77;
    corrupt_from_child(l + api->wait_off, &wait, sizeof wait);
    exercise(api, l);
    assert_int_equal(api->destroy(l), SYNCQ_OK);
    shared_unmap(l, api->size);
  }
}

/* Overwrite a 32-bit word of the lock; lock, trylock and unlock (held by
 * us) must answer SYNCQ_EINVAL; put it back; the lock is as it was. */
static void check_word(const lock_api *api, size_t offset, uint32_t bad, bool held) {
  unsigned char *l = make(api);
  if (held) assert_int_equal(api->lock(l), SYNCQ_OK);
  uint32_t saved;
  memcpy(&saved, l + offset, sizeof saved);
  corrupt_from_child(l + offset, &bad, sizeof bad);
  if (held) {
    assert_int_equal(api->unlock(l), SYNCQ_EINVAL);
  } else {
    assert_int_equal(api->lock(l), SYNCQ_EINVAL);
    assert_int_equal(api->trylock(l), SYNCQ_EINVAL);
    assert_int_equal(api->unlock(l), SYNCQ_EINVAL);
  }
  corrupt_from_child(l + offset, &saved, sizeof saved);
  if (held) assert_int_equal(api->unlock(l), SYNCQ_OK);
  exercise(api, l);
  assert_int_equal(api->destroy(l), SYNCQ_OK);
  shared_unmap(l, api->size);
}

static void test_anderson_geometry(void **state) {
  (void)state;
  const lock_api *api = &apis[5];
  assert_string_equal(api->name, "anderson");
  const size_t mask = offsetof(syncq_lock_anderson, mask), max = offsetof(syncq_lock_anderson, max_threads);
  check_word(api, mask, 1000u, false);                      /* past the array */
  check_word(api, mask, 5u, false);                         /* not slots - 1 */
  check_word(api, mask, SYNCQ_LOCK_ARRAY_MAX_SLOTS, false); /* one past */
  check_word(api, max, 100u, false);                        /* more threads than slots */
  check_word(api, max, 0u, false);                          /* none */
  check_word(api, mask, 1000u, true);                       /* while held */
  check_word(api, offsetof(syncq_lock_anderson, holder_place), 5000u, true);
}

static void test_array_geometry(void **state) {
  (void)state;
  for (size_t a = 6; a < 8; a++) {
    const lock_api *api = &apis[a];
    const size_t mask = offsetof(syncq_lock_array, mask);
    check_word(api, mask, 1000u, false);
    check_word(api, mask, 5u, false);
    check_word(api, mask, UINT32_MAX, false);
    check_word(api, mask, 1000u, true);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_flags),
    cmocka_unit_test(test_anderson_geometry),
    cmocka_unit_test(test_array_geometry),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
