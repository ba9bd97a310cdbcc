/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_plan_test.c — tests/support/test_plan.h, the one place a test
 * learns about processing units:
 *  - SYNCQ_TEST_PUS=N (1..TEST_PLAN_MAX_PUS) is the plan's PU count;
 *    anything else (0, 1025, letters, a sign, a space, empty) stops the
 *    program with a test-setup error naming the variable;
 *  - confinement binds the process (threads made afterwards included) to
 *    min(TEST_PLAN_CONFINED_PUS, plan, machine) PUs, and the thread
 *    helpers size from that set and stop at TEST_PLAN_MAX_THREADS.
 * The plan is read once per process, so each case runs in a forked child
 * with its own environment, and this parent never reads it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_plan.h"

/* Run fn in a child with SYNCQ_TEST_PUS set to value (NULL: unset), its
 * stderr in err[len]; return its exit status (-1 if it did not exit). */
static int in_child(const char *value, int (*fn)(void), char *err, size_t len) {
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 2);
    if (value != NULL) setenv("SYNCQ_TEST_PUS", value, 1);
    else unsetenv("SYNCQ_TEST_PUS");
    _exit(fn());
  }
  close(fds[1]);
  size_t got = 0;
  ssize_t r;
  while (got + 1 < len && (r = read(fds[0], err + got, len - 1 - got)) > 0) got += (size_t)r;
  err[got] = '\0';
  close(fds[0]);
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int pus_of_plan(void) { return test_plan_pus(); }
static int pus_of_machine(void) { return test_plan_machine_pus(); }

static void test_env_sets_the_plan(void **state) {
  (void)state;
  char err[512];
  assert_int_equal(in_child("1", pus_of_plan, err, sizeof err), 1);
  assert_int_equal(in_child("5", pus_of_plan, err, sizeof err), 5);
  assert_int_equal(in_child("16", pus_of_plan, err, sizeof err), 16);
  /* 1024 does not fit an exit status: checked as 1024 % 256 */
  assert_int_equal(in_child("1024", pus_of_plan, err, sizeof err), 1024 % 256);
  /* unset: the machine's, which SYNCQ_TEST_PUS does not change (statuses of at most 255 PUs) */
  int machine = in_child(NULL, pus_of_machine, err, sizeof err);
  assert_true(machine >= 1);
  assert_int_equal(in_child("7", pus_of_machine, err, sizeof err), machine);
  if (machine < 255) assert_int_equal(in_child(NULL, pus_of_plan, err, sizeof err), machine);
}

static void test_bad_values_are_setup_errors(void **state) {
  (void)state;
  const char *bad[] = {"0", "1025", "abc", "16x", "", "-3", " 4", "+4", "99999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char err[512];
    int code = in_child(bad[i], pus_of_plan, err, sizeof err);
    if (code != EXIT_FAILURE) fail_msg("SYNCQ_TEST_PUS=\"%s\": exit %d, not a setup error", bad[i], code);
    if (strstr(err, "test setup error: SYNCQ_TEST_PUS") == NULL)
      fail_msg("SYNCQ_TEST_PUS=\"%s\": the error does not name the variable: %s", bad[i], err);
  }
}

/* Confine, then report the PUs a thread made afterwards may run on, times
 * 10, plus the confined count (both at most TEST_PLAN_CONFINED_PUS). */
static void *affinity_of_new_thread(void *p) {
  cpu_set_t set;
  *(int *)p = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
  return NULL;
}

static int confine_and_count(void) {
  int n = test_plan_confine();
  if (test_plan_confine() != n) return 255; /* idempotent */
  int bound = -1;
  pthread_t t;
  if (pthread_create(&t, NULL, affinity_of_new_thread, &bound) != 0) return 254;
  pthread_join(t, NULL);
  if (n < 1 || n > 9 || bound < 0 || bound > 9) return 253;
  return bound * 10 + n;
}

static void test_confined_set(void **state) {
  (void)state;
  cpu_set_t mine; /* the PUs this process may use (a taskset or cgroup may allow fewer than the machine's) */
  assert_int_equal(sched_getaffinity(0, sizeof mine, &mine), 0);
  int expect = CPU_COUNT(&mine) < TEST_PLAN_CONFINED_PUS ? CPU_COUNT(&mine) : TEST_PLAN_CONFINED_PUS;
  char err[512];
  /* as many PUs as the set, whatever the plan above it; one when the plan says one */
  assert_int_equal(in_child(NULL, confine_and_count, err, sizeof err), expect * 10 + expect);
  assert_int_equal(in_child("64", confine_and_count, err, sizeof err), expect * 10 + expect);
  assert_int_equal(in_child("1", confine_and_count, err, sizeof err), 1 * 10 + 1);
  assert_non_null(strstr(err, "confined to 1"));
}

static int oversubscribed_threads(void) {
  int n = test_plan_confine();
  if (test_plan_oversubscribed(TEST_PLAN_OVERSUBSCRIPTION) != n * TEST_PLAN_OVERSUBSCRIPTION) return 1;
  if (test_plan_oversubscribed(1000) != TEST_PLAN_MAX_THREADS) return 2; /* capped */
  if (test_plan_oversubscribed(0) != n) return 3;
  return 0;
}

static void test_thread_counts(void **state) {
  (void)state;
  char err[512];
  assert_int_equal(in_child(NULL, oversubscribed_threads, err, sizeof err), 0);
  assert_int_equal(in_child("1", oversubscribed_threads, err, sizeof err), 0);
  assert_int_equal(in_child("1024", oversubscribed_threads, err, sizeof err), 0);
  _Static_assert(TEST_PLAN_CONFINED_PUS * TEST_PLAN_OVERSUBSCRIPTION <= TEST_PLAN_MAX_THREADS,
                 "an 8x stress on the confined set fits the cap");
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_env_sets_the_plan),
    cmocka_unit_test(test_bad_values_are_setup_errors),
    cmocka_unit_test(test_confined_set),
    cmocka_unit_test(test_thread_counts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
