/* SPDX-License-Identifier: BSD-2-Clause */
/* status_test.c — every status has a distinct name; unknown ones are safe. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "syncq/status.h"

static void test_names(void **state) {
  (void)state;
  const int all[] = {SYNCQ_OK,      SYNCQ_EMPTY,  SYNCQ_FULL,   SYNCQ_EINVAL,  SYNCQ_ENOMEM,
                     SYNCQ_ENOTSUP, SYNCQ_ENOENT, SYNCQ_EEXIST, SYNCQ_ELIMIT,  SYNCQ_ETIMEDOUT,
                     SYNCQ_EBUSY,   SYNCQ_ESYS,   SYNCQ_EDEAD,  SYNCQ_EBROKEN, SYNCQ_EKILLED};
  const size_t n = sizeof all / sizeof all[0];
  for (size_t i = 0; i < n; i++) {
    const char *s = syncq_strerror(all[i]);
    assert_non_null(s);
    assert_string_not_equal(s, "unknown status");
    for (size_t j = 0; j < i; j++) assert_string_not_equal(s, syncq_strerror(all[j]));
  }
  assert_true(SYNCQ_EMPTY > 0 && SYNCQ_FULL > 0); /* outcomes, not errors */
  assert_true(SYNCQ_EINVAL < 0);
}

/* SYNCQ_ENOTSUP also means an algorithm that cannot do what was asked (a
 * lock made process-shared or with a wait it lacks): its name says so,
 * not only "this machine". */
static void test_enotsup_names_the_algorithm(void **state) {
  (void)state;
  assert_non_null(strstr(syncq_strerror(SYNCQ_ENOTSUP), "algorithm"));
  assert_non_null(strstr(syncq_strerror(SYNCQ_ENOTSUP), "machine"));
}

/* A status that leaves the caller one thing to do says it, since a
 * program often prints only syncq_strerror's text: where the reason is
 * (errno), how a broken barrier is mended, what a killed process does,
 * that a busy object refused without waiting and may be tried again. */
static void test_names_say_what_to_do(void **state) {
  (void)state;
  assert_non_null(strstr(syncq_strerror(SYNCQ_EBUSY), "held or still in use"));
  assert_non_null(strstr(syncq_strerror(SYNCQ_EBUSY), "nothing was done"));
  assert_non_null(strstr(syncq_strerror(SYNCQ_EBUSY), "retry once it is released"));
  assert_non_null(strstr(syncq_strerror(SYNCQ_ESYS), "errno"));
  assert_non_null(strstr(syncq_strerror(SYNCQ_EBROKEN), "syncq_barrier_reset"));
  assert_non_null(strstr(syncq_strerror(SYNCQ_EKILLED), "return from its body"));
}

static void test_unknown(void **state) {
  (void)state;
  assert_string_equal(syncq_strerror(12345), "unknown status");
  assert_string_equal(syncq_strerror(-12345), "unknown status");
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_names), cmocka_unit_test(test_enotsup_names_the_algorithm),
                                     cmocka_unit_test(test_names_say_what_to_do), cmocka_unit_test(test_unknown)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
