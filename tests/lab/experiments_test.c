/* SPDX-License-Identifier: BSD-2-Clause */
/* experiments_test.c — every experiment's declaration is well formed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "test_peers.h"
#include <jansson.h>

#include "lab.h"

static void test_declarations(void **state) {
  (void)state;
  size_t n = lab_experiment_count();
  assert_true(n >= 2);
  assert_string_equal(lab_experiment_at(0)->name, "phys"); /* floors first */
  assert_null(lab_experiment_at(n));
  for (size_t i = 0; i < n; i++) {
    const lab_experiment *e = lab_experiment_at(i);
    assert_non_null(e->name);
    assert_non_null(e->paper);
    assert_non_null(e->figure);
    assert_non_null(e->title);
    assert_non_null(e->run);
    assert_ptr_equal(lab_experiment_find(e->name), e);
    for (size_t j = 0; j < i; j++) assert_string_not_equal(e->name, lab_experiment_at(j)->name);
    assert_true(e->uses_registry || e->fixed_algos != NULL);
    for (size_t c = 0; c < e->nclaims; c++) {
      json_error_t err;
      json_t *rule = json_loads(e->claims[c].rule, 0, &err);
      if (rule == NULL) fail_msg("%s claim %zu: rule does not parse: %s", e->name, c, err.text);
      assert_true(json_is_string(json_object_get(rule, "op")));
      assert_true(strlen(e->claims[c].text) > 20);
      json_decref(rule);
    }
    if (e->also_x != NULL) { /* an array of {"x": param, ...}, and x is not the main axis */
      json_error_t err;
      json_t *also = json_loads(e->also_x, 0, &err);
      if (also == NULL) fail_msg("%s: also_x does not parse: %s", e->name, err.text);
      assert_true(json_is_array(also) && json_array_size(also) > 0);
      size_t k;
      json_t *axis;
      json_array_foreach(also, k, axis) {
        const char *x = json_string_value(json_object_get(axis, "x"));
        assert_non_null(x);
        assert_true(e->x == NULL || strcmp(x, e->x) != 0);
      }
      json_decref(also);
    }
  }
  assert_null(lab_experiment_find("no-such-experiment"));
}

static void test_knows(void **state) {
  (void)state;
  const lab_experiment *np = lab_experiment_find("np99-counter");
  const lab_experiment *ph = lab_experiment_find("phys");
  assert_non_null(np);
  assert_non_null(ph);
  assert_true(lab_experiment_knows(np, "faa"));
  assert_true(lab_experiment_knows(np, "mutex"));
  assert_false(lab_experiment_knows(np, "uncontended-cas"));
  assert_true(lab_experiment_knows(ph, "cacheline-pingpong"));
  assert_false(lab_experiment_knows(ph, "faa"));
  /* a registry experiment also knows its fixed baselines */
  const lab_experiment *lat = lab_experiment_find("dg25-latency");
  if (lat != NULL && lat->fixed_algos != NULL) {
    assert_true(lab_experiment_knows(lat, lat->fixed_algos[0]));
    assert_true(lab_experiment_knows(lat, "nblfq"));
  }
}

/* --queue-wait's names and descriptions (lab/queue_wait.c): every policy
 * round-trips through its name, and bad input is refused, not read. */
static void test_queue_wait_names(void **state) {
  (void)state;
  assert_int_equal(LAB_QUEUE_WAIT_PAUSE, 0); /* a zeroed lab_options waits as before */
  assert_string_equal(lab_queue_wait_name(LAB_QUEUE_WAIT_PAUSE), "pause");
  for (int i = 0; i < LAB_QUEUE_WAIT_COUNT; i++) {
    const char *name = lab_queue_wait_name((lab_queue_wait)i);
    assert_non_null(name);
    assert_true(strlen(lab_queue_wait_text((lab_queue_wait)i)) > 20);
    lab_queue_wait w = LAB_QUEUE_WAIT_COUNT;
    assert_int_equal(lab_queue_wait_from_name(name, &w), 0);
    assert_int_equal(w, i);
  }
  assert_null(lab_queue_wait_name(LAB_QUEUE_WAIT_COUNT));
  assert_null(lab_queue_wait_name((lab_queue_wait)-1));
  assert_null(lab_queue_wait_text(LAB_QUEUE_WAIT_COUNT));
  lab_queue_wait w = LAB_QUEUE_WAIT_YIELD;
  assert_int_equal(lab_queue_wait_from_name("spin", &w), -1);
  assert_int_equal(lab_queue_wait_from_name("", &w), -1);
  assert_int_equal(lab_queue_wait_from_name("PAUSE", &w), -1);
  assert_int_equal(lab_queue_wait_from_name(NULL, &w), -1);
  assert_int_equal(w, LAB_QUEUE_WAIT_YIELD); /* untouched on refusal */
  assert_int_equal(lab_queue_wait_from_name("pause", NULL), -1);
}

int main(void) {
  test_register_peers();
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_declarations), cmocka_unit_test(test_knows),
                                     cmocka_unit_test(test_queue_wait_names)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
