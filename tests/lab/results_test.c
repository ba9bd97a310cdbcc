/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * results_test.c — the results writer (lab/results.c): a record goes out
 * in one write(), whatever its size, in the format of
 * docs/results-format.md; a write that fails says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "results.h"

/* A point with this many samples is far past PIPE_BUF, a page and stdio's
 * buffer. */
enum { MANY_SAMPLES = 3000 };

static json_t *many_samples(void) {
  json_t *samples = json_array();
  for (int i = 0; i < MANY_SAMPLES; i++) json_array_append_new(samples, json_real(1234.5678901 + i));
  json_t *o = json_object();
  json_object_set_new(o, "experiment", json_string("big"));
  json_object_set_new(o, "samples", samples);
  return o;
}

/* Each write() into a SOCK_SEQPACKET socket is one message for the reader:
 * the first recv() holds exactly what the first write() wrote. */
static void test_a_record_larger_than_a_page_is_one_write(void **state) {
  (void)state;
  int sv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
  int big = 1 << 20;
  (void)setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
  (void)setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  lab_results r = {.launch = 3};
  r.f = fdopen(sv[0], "w");
  assert_non_null(r.f);
  snprintf(r.run_id, sizeof r.run_id, "run-1");

  json_t *o = many_samples();
  json_t *want = json_deep_copy(o);
  assert_int_equal(lab_results_write(&r, "point", o), 0);

  json_object_set_new(want, "type", json_string("point"));
  json_object_set_new(want, "schema", json_integer(LAB_RESULTS_SCHEMA));
  json_object_set_new(want, "run_id", json_string("run-1"));
  json_object_set_new(want, "launch", json_integer(3));
  char *text = json_dumps(want, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(10));
  json_decref(want);
  assert_non_null(text);
  size_t len = strlen(text);
  assert_true(len > 16384);

  char *got = malloc(len + 2);
  assert_non_null(got);
  ssize_t n = recv(sv[1], got, len + 2, MSG_DONTWAIT);
  assert_int_equal(n, (ssize_t)len + 1);
  assert_memory_equal(got, text, len);
  assert_int_equal(got[len], '\n');
  /* nothing after it */
  assert_int_equal(recv(sv[1], got, len + 2, MSG_DONTWAIT), -1);
  free(got);
  free(text);
  lab_results_close(&r);
  (void)close(sv[1]);
}

/* The format, byte for byte: the caller's fields in its order, then type,
 * schema, run_id and (in a run of several launches) launch; one line. */
static void test_records_append_in_the_documented_format(void **state) {
  (void)state;
  char dir[] = "/tmp/syncq-results-test-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char sub[sizeof dir + 8];
  snprintf(sub, sizeof sub, "%s/a/b", dir);
  char why[256] = "";
  lab_results r;
  assert_int_equal(lab_results_open(&r, sub, "rid", 0, why, sizeof why), 0);
  json_t *o = json_pack("{s:s, s:f, s:[i, i]}", "name", "x\xc3\xa9", "v", 0.5, "list", 1, 2);
  assert_int_equal(lab_results_write(&r, "note", o), 0);
  assert_int_equal(lab_results_write(&r, "point", many_samples()), 0);
  lab_results_close(&r);
  assert_int_equal(lab_results_open(&r, sub, "rid", 2, why, sizeof why), 0);
  assert_int_equal(lab_results_write(&r, "note", json_pack("{s:i}", "k", 7)), 0);
  lab_results_close(&r);

  char path[sizeof sub + 32];
  snprintf(path, sizeof path, "%s/%s", sub, LAB_RESULTS_FILE);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char *line = NULL;
  size_t cap = 0;
  assert_true(getline(&line, &cap, f) > 0);
  assert_string_equal(line,
                      "{\"name\":\"x\\u00E9\",\"v\":0.5,\"list\":[1,2],\"type\":\"note\",\"schema\":1,"
                      "\"run_id\":\"rid\"}\n");
  ssize_t n = getline(&line, &cap, f);
  assert_true(n > 16384);
  assert_int_equal(line[n - 1], '\n');
  assert_non_null(strstr(line, "\"type\":\"point\",\"schema\":1,\"run_id\":\"rid\"}\n"));
  assert_true(getline(&line, &cap, f) > 0);
  assert_string_equal(line, "{\"k\":7,\"type\":\"note\",\"schema\":1,\"run_id\":\"rid\",\"launch\":2}\n");
  assert_int_equal(getline(&line, &cap, f), -1);
  free(line);
  fclose(f);
  assert_int_equal(unlink(path), 0);
  snprintf(path, sizeof path, "%s/a/b", dir);
  assert_int_equal(rmdir(path), 0);
  snprintf(path, sizeof path, "%s/a", dir);
  assert_int_equal(rmdir(path), 0);
  assert_int_equal(rmdir(dir), 0);
}

/* A file that takes no write: -1 with errno, nothing pretended. */
static void test_a_write_that_fails_says_so(void **state) {
  (void)state;
  lab_results r = {0};
  snprintf(r.run_id, sizeof r.run_id, "rid");
  r.f = fopen("/dev/null", "r");
  assert_non_null(r.f);
  errno = 0;
  assert_int_equal(lab_results_write(&r, "note", json_object()), -1);
  assert_int_equal(errno, EBADF);
  lab_results_close(&r);
  assert_null(r.f);
}

/* A directory that cannot be made: -1 and the reason. */
static void test_an_output_that_cannot_be_made_says_why(void **state) {
  (void)state;
  lab_results r = {0};
  char why[256] = "";
  assert_int_equal(lab_results_open(&r, "/dev/null/results", NULL, 0, why, sizeof why), -1);
  assert_non_null(strstr(why, "cannot create /dev/null"));
  assert_null(r.f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_a_record_larger_than_a_page_is_one_write),
    cmocka_unit_test(test_records_append_in_the_documented_format),
    cmocka_unit_test(test_a_write_that_fails_says_so),
    cmocka_unit_test(test_an_output_that_cannot_be_made_says_why),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
