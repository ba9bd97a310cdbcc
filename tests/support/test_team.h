/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_team.h — n threads that share one context: thread i runs fn on its
 * test_member {ctx, i, n}, and test_team_run returns once every one has
 * returned. For the drivers' stress runs, whose threads need nothing
 * else from the test's thread while they run.
 *
 * Include after cmocka.h (it asserts with cmocka's macros).
 */
#ifndef SYNCQ_TEST_TEAM_H
#define SYNCQ_TEST_TEAM_H

#include <pthread.h>
#include <stdlib.h>

typedef struct test_member {
  void *ctx;
  int id; /* 0 .. n - 1 */
  int n;  /* threads in the team */
} test_member;

static inline void test_team_run(int n, void *(*fn)(void *), void *ctx) {
  pthread_t *tids = calloc((size_t)n, sizeof *tids);
  test_member *members = calloc((size_t)n, sizeof *members);
  assert_true(tids != NULL && members != NULL);
  for (int i = 0; i < n; i++) {
    members[i] = (test_member){ctx, i, n};
    assert_int_equal(pthread_create(&tids[i], NULL, fn, &members[i]), 0);
  }
  for (int i = 0; i < n; i++) pthread_join(tids[i], NULL);
  free(tids);
  free(members);
}

#endif
