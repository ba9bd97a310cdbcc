/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * claimed_test.c — which points a claim's verdict reads (lab/claimed.c):
 * explicit `at`, "max_threads" resolved by the planning pass, `where` on
 * numbers and strings, metrics with their "_ratio" points and extra
 * metrics, peers for peer_ratio rules, nested all/any, an exercised
 * rule's inner rule and count, a ratio_change rule's baseline, rules that
 * read nothing and rules that do
 * not parse.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "claimed.h"
#include "lab.h"

static lab_group group(double threads, const char *phase, const char *metric) {
  lab_group g;
  memset(&g, 0, sizeof g);
  lab_group_param(&g, "threads", threads);
  if (phase != NULL) lab_group_param_str(&g, "phase", phase);
  lab_group_param(&g, "work_ns", 0);
  g.metric = metric;
  return g;
}

static lab_claimed *claimed_of(const lab_claim *claims, size_t n) {
  lab_experiment e;
  memset(&e, 0, sizeof e);
  e.name = "t";
  e.claims = claims;
  e.nclaims = n;
  lab_claimed *c = lab_claimed_new(&e, 2);
  assert_non_null(c);
  return c;
}

static void test_max_threads_resolved_by_planning(void **state) {
  (void)state;
  static const lab_claim claims[] = {
    {"faa beats cas",
     "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"faa\",\"den\":\"cas\","
     "\"where\":{\"work_ns\":0},\"at\":\"max_threads\",\"bound\":1.0}"},
  };
  lab_claimed *c = claimed_of(claims, 1);
  lab_group g1 = group(1, NULL, "time"), g4 = group(4, NULL, "time"), g8 = group(8, NULL, "time");
  lab_claimed_plan(c, &g1, "faa");
  lab_claimed_plan(c, &g4, "cas");
  lab_claimed_plan(c, &g8, "ttas"); /* not the rule's: does not move its largest count */
  assert_true(lab_claimed_reads(c, &g4, "faa", false));
  assert_true(lab_claimed_reads(c, &g4, "cas", false));
  assert_false(lab_claimed_reads(c, &g4, "ttas", false));
  assert_false(lab_claimed_reads(c, &g1, "faa", false));
  assert_false(lab_claimed_reads(c, &g8, "faa", false));
  lab_group other = group(4, NULL, "cas_per_op"); /* another metric of the same point */
  assert_false(lab_claimed_reads(c, &other, "faa", false));
  lab_group extra = group(4, NULL, "spawn");
  extra.extra[0].metric = "time";
  extra.nextra = 1;
  assert_true(lab_claimed_reads(c, &extra, "faa", false));
  lab_group busy;
  memset(&busy, 0, sizeof busy);
  lab_group_param(&busy, "threads", 4);
  lab_group_param(&busy, "work_ns", 5000); /* where excludes it */
  busy.metric = "time";
  assert_false(lab_claimed_reads(c, &busy, "faa", false));
  lab_claimed_free(c);
}

static void test_a_ratio_metric_reads_its_raw_group(void **state) {
  (void)state;
  static const lab_claim claims[] = {
    {"ratio",
     "{\"op\":\"ratio_above\",\"metric\":\"throughput_ratio\",\"num\":\"nblfq\",\"den\":\"vyukov\","
     "\"at\":{\"threads\":1},\"bound\":1.0}"},
  };
  lab_claimed *c = claimed_of(claims, 1);
  lab_group raw = group(1, NULL, "throughput"); /* the ratio points come from its samples */
  lab_group other = group(1, NULL, "throughput_per_thread");
  assert_true(lab_claimed_reads(c, &raw, "nblfq", false));
  assert_false(lab_claimed_reads(c, &other, "nblfq", false));
  lab_claimed_free(c);
}

static void test_explicit_at_strings_peers_and_nesting(void **state) {
  (void)state;
  static const lab_claim claims[] = {
    {"nblfq vs peers",
     "{\"op\":\"all\",\"rules\":[{\"op\":\"any\",\"rules\":["
     "{\"op\":\"peer_ratio_above\",\"metric\":\"throughput\",\"algo\":\"nblfq\","
     "\"where\":{\"phase\":\"stream\"},\"at\":{\"threads\":1},\"bound\":1.0}]},"
     "{\"op\":\"value_below\",\"metric\":\"throughput\",\"algo\":\"vyukov\",\"at\":{\"threads\":2},"
     "\"bound\":9}]}"},
    {"declared", "{\"op\":\"not_measurable\",\"why\":\"no such hardware\"}"},
    {"broken", "{\"op\":"},
  };
  lab_claimed *c = claimed_of(claims, 3);
  lab_group s1 = group(1, "stream", "throughput"), s2 = group(2, "stream", "throughput");
  lab_group p1 = group(1, "pingpong", "throughput");
  assert_true(lab_claimed_reads(c, &s1, "nblfq", false));
  assert_true(lab_claimed_reads(c, &s1, "ck:ring_mpmc", true)); /* every peer of a peer_ratio point */
  assert_false(lab_claimed_reads(c, &s1, "vyukov", false));
  assert_false(lab_claimed_reads(c, &s2, "ck:ring_mpmc", true));
  assert_false(lab_claimed_reads(c, &p1, "nblfq", false));  /* the string where */
  assert_true(lab_claimed_reads(c, &s2, "vyukov", false));  /* no where: any phase at threads 2 */
  assert_false(lab_claimed_reads(c, &p1, "vyukov", false)); /* at: threads 2 only */
  lab_claimed_free(c);
}

static void test_at_max_of_a_param_resolved_by_planning(void **state) {
  (void)state;
  static const lab_claim claims[] = {
    {"tree",
     "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"fiber:mpsc\",\"den\":\"go\","
     "\"at\":{\"leaves\":\"max\"},\"bound\":1.0}"},
  };
  lab_claimed *c = claimed_of(claims, 1);
  lab_group g[3];
  for (int i = 0; i < 3; i++) {
    memset(&g[i], 0, sizeof g[i]);
    lab_group_param(&g[i], "leaves", i == 0 ? 10000 : i == 1 ? 1000000 : 100000);
    lab_group_param(&g[i], "threads", 2);
    g[i].metric = "time";
    lab_claimed_plan(c, &g[i], "fiber:mpsc");
    lab_claimed_plan(c, &g[i], "go");
  }
  assert_false(lab_claimed_reads(c, &g[0], "fiber:mpsc", false));
  assert_false(lab_claimed_reads(c, &g[2], "go", false));
  assert_true(lab_claimed_reads(c, &g[1], "fiber:mpsc", false)); /* the largest tree planned */
  assert_true(lab_claimed_reads(c, &g[1], "go", false));
  assert_false(lab_claimed_reads(c, &g[1], "erlang", false));
  lab_claimed_free(c);
}

static void test_needs_pus_reads_nothing_short_and_the_fitting_points_above(void **state) {
  (void)state;
  static const lab_claim claims[] = {
    {"gated",
     "{\"op\":\"needs_pus\",\"pus\":8,\"pus_per_thread\":2,\"rule\":"
     "{\"op\":\"in_pack\",\"metric\":\"time\",\"algo\":\"nblfq\",\"factor\":2}}"},
    {"curve",
     "{\"op\":\"needs_pus\",\"pus\":2,\"rule\":{\"op\":\"rise_then_plateau\","
     "\"metric\":\"time\",\"algo\":\"ms\",\"knee\":10,\"factor\":2}}"},
  };
  lab_experiment e;
  memset(&e, 0, sizeof e);
  e.name = "t";
  e.claims = claims;
  e.nclaims = 2;
  lab_group g[5];
  for (int pus = 2; pus <= 16; pus *= 8) {
    lab_claimed *c = lab_claimed_new(&e, pus);
    assert_non_null(c);
    static const double counts[5] = {1, 2, 4, 8, 16};
    for (int i = 0; i < 5; i++) {
      g[i] = group(counts[i], NULL, "time");
      lab_claimed_plan(c, &g[i], "nblfq");
      lab_claimed_plan(c, &g[i], "ms");
    }
    if (pus == 2) { /* short of 8: the panel rule reads nothing; the curve up to 2 */
      assert_false(lab_claimed_reads(c, &g[1], "nblfq", false));
      assert_false(lab_claimed_reads(c, &g[1], "vyukov", false));
      assert_true(lab_claimed_reads(c, &g[0], "ms", false));
      assert_true(lab_claimed_reads(c, &g[1], "ms", false));
      assert_false(lab_claimed_reads(c, &g[2], "ms", false)); /* 4 threads do not fit on 2 */
    } else { /* 16 units, 2 per count: the largest count that fits is 8, the whole panel there */
      assert_true(lab_claimed_reads(c, &g[3], "nblfq", false));
      assert_true(lab_claimed_reads(c, &g[3], "vyukov", false));
      assert_false(lab_claimed_reads(c, &g[4], "nblfq", false));
      assert_false(lab_claimed_reads(c, &g[2], "nblfq", false));
      for (int i = 0; i < 5; i++) assert_true(lab_claimed_reads(c, &g[i], "ms", false)); /* every count */
    }
    lab_claimed_free(c);
  }
}

static void test_exercised_reads_its_rule_and_its_count(void **state) {
  (void)state;
  static const lab_claim claims[] = {
    {"the ordinary lock degrades where holders were preempted",
     "{\"op\":\"exercised\",\"metric\":\"preemptions_deferred\",\"of\":\"preemptions\",\"algo\":\"ttas-ps\","
     "\"where\":{\"work_ns\":0},\"at\":\"max_threads\",\"min\":12,\"min_share\":0.15,\"rule\":"
     "{\"op\":\"ratio_above\",\"metric\":\"time_ratio\",\"num\":\"ttas\",\"den\":\"ttas-ps\","
     "\"where\":{\"work_ns\":0},\"at\":\"max_threads\",\"bound\":1.1}}"},
  };
  lab_claimed *c = claimed_of(claims, 1);
  lab_group g1 = group(1, NULL, "time"), g2 = group(2, NULL, "time");
  g1.extra[0].metric = g2.extra[0].metric = "preemptions_deferred";
  g1.nextra = g2.nextra = 1;
  lab_claimed_plan(c, &g1, "ttas");
  lab_claimed_plan(c, &g1, "ttas-ps");
  lab_claimed_plan(c, &g2, "ttas");
  lab_claimed_plan(c, &g2, "ttas-ps");
  assert_true(lab_claimed_reads(c, &g2, "ttas", false)); /* the inner rule's num ... */
  assert_true(lab_claimed_reads(c, &g2, "ttas-ps", false));
  assert_false(lab_claimed_reads(c, &g1, "ttas", false));        /* ... at its largest count only */
  lab_group count_only = group(2, NULL, "preemptions_deferred"); /* the count alone still reads ttas-ps */
  assert_true(lab_claimed_reads(c, &count_only, "ttas-ps", false));
  assert_false(lab_claimed_reads(c, &count_only, "treiber", false));
  lab_claimed_free(c);
}

static void test_ratio_change_reads_its_baseline_too(void **state) {
  (void)state;
  static const lab_claim claims[] = {
    {"the ordinary lock's ratio grows from level 1 to level 3",
     "{\"op\":\"ratio_change_above\",\"metric\":\"time_ratio\",\"num\":\"ttas\",\"den\":\"ttas-ps\","
     "\"where\":{\"work_ns\":0,\"phase\":\"l3\"},\"base\":{\"phase\":\"l1\"},\"at\":\"max_threads\",\"bound\":1.1}"},
  };
  lab_claimed *c = claimed_of(claims, 1);
  lab_group l1[2] = {group(1, "l1", "time"), group(2, "l1", "time")};
  lab_group l3[2] = {group(1, "l3", "time"), group(2, "l3", "time")};
  lab_group other = group(2, "l2", "time");
  for (int i = 0; i < 2; i++)
    for (int a = 0; a < 2; a++) {
      lab_claimed_plan(c, &l1[i], a ? "ttas-ps" : "ttas");
      lab_claimed_plan(c, &l3[i], a ? "ttas-ps" : "ttas");
      lab_claimed_plan(c, &other, a ? "ttas-ps" : "ttas");
    }
  assert_true(lab_claimed_reads(c, &l3[1], "ttas", false)); /* where, at the largest count */
  assert_true(lab_claimed_reads(c, &l3[1], "ttas-ps", false));
  assert_true(lab_claimed_reads(c, &l1[1], "ttas", false)); /* the baseline, at its largest count */
  assert_true(lab_claimed_reads(c, &l1[1], "ttas-ps", false));
  assert_false(lab_claimed_reads(c, &l1[0], "ttas", false));
  assert_false(lab_claimed_reads(c, &l3[0], "ttas-ps", false));
  assert_false(lab_claimed_reads(c, &other, "ttas", false)); /* neither where nor the baseline */
  assert_false(lab_claimed_reads(c, &l1[1], "treiber", false));
  lab_claimed_free(c);
}

static void test_no_claims_read_nothing(void **state) {
  (void)state;
  lab_claimed *c = claimed_of(NULL, 0);
  lab_group g = group(1, NULL, "time");
  lab_claimed_plan(c, &g, "faa");
  assert_false(lab_claimed_reads(c, &g, "faa", false));
  lab_claimed_free(c);
  assert_false(lab_claimed_reads(NULL, &g, "faa", false)); /* out of memory at creation: nothing */
  lab_claimed_plan(NULL, &g, "faa");
  lab_claimed_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_max_threads_resolved_by_planning),
    cmocka_unit_test(test_a_ratio_metric_reads_its_raw_group),
    cmocka_unit_test(test_explicit_at_strings_peers_and_nesting),
    cmocka_unit_test(test_at_max_of_a_param_resolved_by_planning),
    cmocka_unit_test(test_needs_pus_reads_nothing_short_and_the_fitting_points_above),
    cmocka_unit_test(test_exercised_reads_its_rule_and_its_count),
    cmocka_unit_test(test_ratio_change_reads_its_baseline_too),
    cmocka_unit_test(test_no_claims_read_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
