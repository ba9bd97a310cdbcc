/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * barrier_corrupt_test.c — the centralized barrier (both arrival forms)
 * in a shared mapping, against words another process (a forked child)
 * wrote over:
 *   - a participant count init cannot write (0, or above
 *     SYNCQ_BARRIER_MAX_THREADS): every wait answers SYNCQ_EINVAL;
 *   - an arrival count above the participants: the arrival breaks the
 *     barrier (SYNCQ_EBROKEN, for the waiter already there too) instead of
 *     waiting for a last arrival that cannot come (a timed wait bounds
 *     the test where that is not so); reset repairs it;
 *   - a process_shared byte that is neither 0 nor 1 and an unknown
 *     discipline: episodes still complete (UBSan: no bool load of it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include "syncq/barrier/central.h"
#include "syncq/wait.h"

#include "shared_corrupt.h"

#define THREADS 2u
#define EPISODES 50
#define TIMEOUT_NS (UINT64_C(5) * 1000 * 1000 * 1000)

typedef int (*wait_fn)(syncq_barrier_central *, unsigned);
typedef int (*timed_fn)(syncq_barrier_central *, unsigned, uint64_t);

static const struct form {
  const char *name;
  wait_fn wait;
  timed_fn timed;
} forms[] = {
  {"faa", syncq_barrier_central_faa_wait, syncq_barrier_central_faa_wait_timed},
  {"cas", syncq_barrier_central_cas_wait, syncq_barrier_central_cas_wait_timed},
};

static syncq_barrier_central *make(int wait) {
  syncq_barrier_central *b = shared_map(sizeof *b);
  syncq_barrier_config cfg = {.threads = THREADS, .wait = wait, .process_shared = true};
  assert_int_equal(syncq_barrier_central_init(b, &cfg), SYNCQ_OK);
  return b;
}

typedef struct runner {
  syncq_barrier_central *b;
  const struct form *f;
  unsigned id;
  int result;
} runner;

static void *run_episodes(void *p) {
  runner *r = p;
  r->result = SYNCQ_OK;
  for (int e = 0; e < EPISODES && r->result == SYNCQ_OK; e++) r->result = r->f->timed(r->b, r->id, TIMEOUT_NS);
  return NULL;
}

/* Both participants through EPISODES episodes (timed waits: a hang fails). */
static void episodes(syncq_barrier_central *b, const struct form *f) {
  runner other = {b, f, 1, -100}, self = {b, f, 0, -100};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, run_episodes, &other), 0);
  run_episodes(&self);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_int_equal(self.result, SYNCQ_OK);
  assert_int_equal(other.result, SYNCQ_OK);
}

static void test_bad_thread_count(void **state) {
  (void)state;
  const uint32_t bad[] = {0u, SYNCQ_BARRIER_MAX_THREADS + 1u, UINT32_MAX};
  for (size_t f = 0; f < 2; f++)
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      syncq_barrier_central *b = make(SYNCQ_WAIT_SPIN);
      uint32_t saved = b->threads, v = bad[i];
      corrupt_from_child(&b->threads, &v, sizeof v);
      assert_int_equal(forms[f].wait(b, 0), SYNCQ_EINVAL);
      assert_int_equal(forms[f].timed(b, 0, TIMEOUT_NS), SYNCQ_EINVAL);
      corrupt_from_child(&b->threads, &saved, sizeof saved);
      episodes(b, &forms[f]);
      assert_int_equal(syncq_barrier_central_destroy(b), SYNCQ_OK);
      shared_unmap(b, sizeof *b);
    }
}

typedef struct waiter {
  syncq_barrier_central *b;
  const struct form *f;
  int result;
} waiter;

static void *wait_once(void *p) {
  waiter *w = p;
  w->result = w->f->timed(w->b, 1, TIMEOUT_NS);
  return NULL;
}

static void test_count_past_threads(void **state) {
  (void)state;
  const int disciplines[] = {SYNCQ_WAIT_SPIN, SYNCQ_WAIT_BLOCK};
  for (size_t f = 0; f < 2; f++)
    for (size_t d = 0; d < 2; d++) {
      syncq_barrier_central *b = make(disciplines[d]);
      /* participant 1 arrives and waits; then the count is overwritten
       * past the participants; participant 0's arrival is not the last */
      waiter w = {b, &forms[f], -100};
      pthread_t t;
      assert_int_equal(pthread_create(&t, NULL, wait_once, &w), 0);
      while (atomic_load(&b->count) == 0u) syncq_pr_relax();
      uint32_t v = 1000u;
      corrupt_from_child(&b->count, &v, sizeof v);
      assert_int_equal(forms[f].timed(b, 0, TIMEOUT_NS), SYNCQ_EBROKEN);
      assert_int_equal(pthread_join(t, NULL), 0);
      assert_int_equal(w.result, SYNCQ_EBROKEN);
      assert_int_equal(syncq_barrier_central_reset(b), SYNCQ_OK);
      episodes(b, &forms[f]);
      assert_int_equal(syncq_barrier_central_destroy(b), SYNCQ_OK);
      shared_unmap(b, sizeof *b);
    }
}

static void test_flags(void **state) {
  (void)state;
  for (size_t f = 0; f < 2; f++) {
    syncq_barrier_central *b = make(SYNCQ_WAIT_BLOCK);
    uint8_t odd = 0x5a;
    corrupt_from_child(&b->process_shared, &odd, sizeof odd);
    episodes(b, &forms[f]);
    int wait = 77;
    corrupt_from_child(&b->wait, &wait, sizeof wait);
    episodes(b, &forms[f]);
    assert_int_equal(syncq_barrier_central_destroy(b), SYNCQ_OK);
    shared_unmap(b, sizeof *b);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_bad_thread_count),
    cmocka_unit_test(test_count_past_threads),
    cmocka_unit_test(test_flags),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
