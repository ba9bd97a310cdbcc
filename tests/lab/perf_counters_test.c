/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * perf_counters_test.c — a thread's event counters (lab/perf_counters.c):
 * the page faults of fresh pages touched while enabled are counted, and
 * those touched before enabling or after disabling are not; an event that
 * cannot open is absent and the others still count; a group's read is
 * scaled where the PMU multiplexed it and absent where it never ran; sums
 * keep an event only where every read had it; bad inputs open nothing;
 * without a topology, the CPUs the thread may run on bound the teams that
 * count, and the machine record's text names that count and its source.
 *
 * The counting tests need the kernel's software events for the calling
 * thread (any perf_event_paranoid below 3 allows them in user space):
 * where minor page faults cannot be opened, the test exits 77 after the
 * tests that open nothing.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "perf_counters.h"

#define PAGES 64
#define OUTSIDE_PAGES (8 * PAGES)

/* page_faults, an event no kernel has (a PMU type no driver registered),
 * and page_faults again: the absent one between two that count. */
static const lab_perf_spec with_absent[] = {
  {"page_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, false},
  {"no_such_pmu", 0x7ffffff0u, 0, false},
  {"page_faults_again", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, false},
};

/* Touch `pages` fresh pages of a new private mapping: one minor fault each
 * (small pages: a huge page would fault once for 512). */
static void touch_fresh_pages(int pages) {
  long page = sysconf(_SC_PAGESIZE);
  size_t len = (size_t)pages * (size_t)page;
  char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(p != MAP_FAILED);
  (void)madvise(p, len, MADV_NOHUGEPAGE);
  for (int i = 0; i < pages; i++) ((volatile char *)p)[(size_t)i * (size_t)page] = 1;
  munmap(p, len);
}

/* Count, with s, the touch of PAGES fresh pages alone; read into *c and close s. */
static void count_fresh_pages(lab_perf_set *s, lab_perf_counts *c) {
  lab_perf_enable(s);
  touch_fresh_pages(PAGES);
  lab_perf_disable(s);
  lab_perf_read(s, c);
  lab_perf_close(s);
}

static int index_of(const char *name) {
  for (int i = 0; i < LAB_PERF_DEFAULT_EVENTS; i++)
    if (strcmp(lab_perf_default_specs[i].name, name) == 0) return i;
  return -1;
}

static void test_fresh_pages_are_counted_while_enabled(void **state) {
  (void)state;
  lab_perf_set s;
  assert_int_equal(lab_perf_open(&s, with_absent, 1), 1);
  touch_fresh_pages(OUTSIDE_PAGES); /* before: not counted */
  lab_perf_enable(&s);
  touch_fresh_pages(PAGES);
  lab_perf_disable(&s);
  touch_fresh_pages(OUTSIDE_PAGES); /* after: not counted */
  lab_perf_counts c;
  lab_perf_read(&s, &c);
  lab_perf_close(&s);
  assert_int_equal(s.fd[0], -1);
  assert_int_equal(c.sets, 1);
  assert_true(c.present & 1u);
  assert_true(c.value[0] >= PAGES);
  /* the mmap and munmap inside the window fault a few more (a sanitizer's
   * shadow of the pages touched too), never OUTSIDE_PAGES more: the pages
   * touched outside the window were not counted */
  assert_true(c.value[0] < OUTSIDE_PAGES);
}

static void test_unopenable_event_is_absent_and_the_others_count(void **state) {
  (void)state;
  lab_perf_set s;
  assert_int_equal(lab_perf_open(&s, with_absent, 3), 2);
  assert_int_equal(s.fd[1], -1);
  assert_int_not_equal(s.err[1], 0);
  assert_int_equal(s.err[0], 0);
  assert_int_equal(s.err[2], 0);
  lab_perf_counts c;
  count_fresh_pages(&s, &c);
  assert_int_equal(c.present, 1u | 4u);
  assert_int_equal(c.value[1], 0);
  assert_true(c.value[0] >= PAGES);
  assert_true(c.value[2] >= PAGES);
  assert_int_equal(c.scaled, 0); /* software events are never multiplexed */
}

static void test_default_set_reads_the_page_faults(void **state) {
  (void)state;
  lab_perf_set s;
  int pf = index_of("page_faults");
  assert_true(pf >= 0);
  int opened = lab_perf_open(&s, lab_perf_default_specs, LAB_PERF_DEFAULT_EVENTS);
  assert_true(opened >= 1);
  lab_perf_counts c;
  count_fresh_pages(&s, &c);
  assert_true(c.present >> pf & 1u);
  assert_true(c.value[pf] >= PAGES);
  for (int i = 0; i < LAB_PERF_DEFAULT_EVENTS; i++) assert_int_equal(c.present >> i & 1u, s.err[i] == 0);
  /* CPU migrations are counted in kernel space: where user space alone is
   * allowed they are absent, never a 0 that counted nothing */
  int mig = index_of("cpu_migrations");
  if (s.user_only) assert_int_equal(c.present >> mig & 1u, 0);
}

static void test_describe_names_what_is_read(void **state) {
  (void)state;
  char buf[512];
  assert_string_equal(lab_perf_describe(buf, sizeof buf, false, false, true), "off (--no-perf-counters)");
  lab_perf_describe(buf, sizeof buf, true, true, true);
  assert_true(strncmp(buf, "read: ", 6) == 0);
  assert_non_null(strstr(buf, "page_faults"));
  assert_true(strstr(buf, "(user space only, ") != NULL || strstr(buf, "(user and kernel space, ") != NULL);
  assert_null(strstr(buf, "in the experiments that count by default"));
  lab_perf_describe(buf, sizeof buf, true, false, true); /* the default: the experiments that ask */
  assert_non_null(strstr(buf, "per processing unit, in the experiments that count by default)"));
  char tiny[8];
  lab_perf_describe(tiny, sizeof tiny, true, false, true); /* truncated, terminated */
  assert_int_equal(strlen(tiny), sizeof tiny - 1);
}

/* Without a topology the teams' bound is the CPUs this thread may run on:
 * confined to one CPU, it is 1; back in its mask, the mask's count; and
 * the machine record names it and where it came from. */
static void test_cpus_known_without_a_topology(void **state) {
  (void)state;
  cpu_set_t mask, one;
  assert_int_equal(sched_getaffinity(0, sizeof mask, &mask), 0);
  int first = 0;
  while (!CPU_ISSET(first, &mask)) first++;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
  const char *source = NULL;
  char why[128] = "x";
  int confined = lab_perf_cpus(&source, why, sizeof why);
  char buf[512];
  lab_perf_describe(buf, sizeof buf, true, false, false);
  assert_int_equal(sched_setaffinity(0, sizeof mask, &mask), 0);
  assert_int_equal(confined, 1);
  assert_string_equal(source, "sched_getaffinity");
  assert_string_equal(why, "");
  if (strncmp(buf, "read: ", 6) == 0) /* no event opened: no teams to name */
    assert_non_null(strstr(buf,
                           "by teams of at most one thread per processing unit [1 by sched_getaffinity: "
                           "no topology], in the experiments that count by default)"));
  assert_int_equal(lab_perf_cpus(NULL, NULL, 0), CPU_COUNT(&mask));
  char expect[128];
  snprintf(expect, sizeof expect, "[%d by sched_getaffinity: no topology]", CPU_COUNT(&mask));
  lab_perf_describe(buf, sizeof buf, true, true, false);
  if (strncmp(buf, "read: ", 6) == 0) assert_non_null(strstr(buf, expect));
  lab_perf_describe(buf, sizeof buf, true, true, true); /* with a topology: hwloc's PUs, no bracket */
  assert_null(strstr(buf, "["));
}

static void test_sums_keep_what_every_read_had(void **state) {
  (void)state;
  lab_perf_counts sum = {0};
  lab_perf_counts a = {.sets = 1, .value = {10, 20, 30}, .present = 1u | 2u, .running_fraction = 1.0};
  lab_perf_counts b = {.sets = 1, .value = {1, 2, 3}, .present = 1u | 4u, .scaled = 1u, .running_fraction = 0.5};
  lab_perf_counts none = {0};
  lab_perf_counts_add(&sum, &none); /* no read: nothing changes */
  assert_int_equal(sum.sets, 0);
  lab_perf_counts_add(&sum, &a);
  assert_int_equal(sum.sets, 1);
  assert_int_equal(sum.present, 1u | 2u);
  lab_perf_counts_add(&sum, &b);
  assert_int_equal(sum.sets, 2);
  assert_int_equal(sum.present, 1u); /* event 1 missing from b, event 2 from a */
  assert_int_equal(sum.value[0], 11);
  assert_int_equal(sum.scaled, 1u);
  assert_true(sum.running_fraction == 0.5);
  lab_perf_counts empty = {.sets = 1, .running_fraction = 1.0}; /* a worker that opened none */
  lab_perf_counts_add(&sum, &empty);
  assert_int_equal(sum.present, 0);
}

/* A set as lab_perf_open leaves it when events 0 and 2 of three opened. */
static lab_perf_set two_of_three(void) {
  lab_perf_set s;
  memset(&s, 0, sizeof s);
  s.specs = with_absent;
  s.n = 3;
  s.leader = 100;
  s.members = 2;
  for (int i = 0; i < LAB_PERF_MAX_EVENTS; i++) s.fd[i] = s.slot[i] = -1;
  s.fd[0] = 100, s.slot[0] = 0;
  s.fd[2] = 101, s.slot[2] = 1;
  return s;
}

static void test_group_reads_scale_when_multiplexed(void **state) {
  (void)state;
  lab_perf_set s = two_of_three();
  lab_perf_counts c;
  /* ran all the time it was enabled: the counts as they are */
  lab_perf_decode(&s, (const uint64_t[]){2, 1000, 1000, 7, 9}, 5, &c);
  assert_int_equal(c.present, 1u | 4u);
  assert_int_equal(c.scaled, 0);
  assert_int_equal(c.value[0], 7);
  assert_int_equal(c.value[2], 9);
  assert_true(c.running_fraction == 1.0);
  /* on the PMU a quarter of the time: counts times 4, marked scaled */
  lab_perf_decode(&s, (const uint64_t[]){2, 1000, 250, 7, 9}, 5, &c);
  assert_int_equal(c.present, 1u | 4u);
  assert_int_equal(c.scaled, 1u | 4u);
  assert_int_equal(c.value[0], 28);
  assert_int_equal(c.value[2], 36);
  assert_true(c.running_fraction == 0.25);
  /* never on the PMU: nothing to scale, absent */
  lab_perf_decode(&s, (const uint64_t[]){2, 1000, 0, 0, 0}, 5, &c);
  assert_int_equal(c.present, 0);
  /* enabled for no time at all (an empty body): zeros, present */
  lab_perf_decode(&s, (const uint64_t[]){2, 0, 0, 0, 0}, 5, &c);
  assert_int_equal(c.present, 1u | 4u);
  assert_int_equal(c.value[0], 0);
  /* a short read, or one of another group's size: absent */
  lab_perf_decode(&s, (const uint64_t[]){2, 1000, 1000, 7}, 4, &c);
  assert_int_equal(c.present, 0);
  lab_perf_decode(&s, (const uint64_t[]){3, 1000, 1000, 7, 9, 11}, 6, &c);
  assert_int_equal(c.present, 0);
  assert_int_equal(c.sets, 1);
}

static void test_bad_inputs_open_nothing(void **state) {
  (void)state;
  lab_perf_set s;
  assert_int_equal(lab_perf_open(&s, with_absent, LAB_PERF_MAX_EVENTS + 1), 0);
  for (int i = 0; i < LAB_PERF_MAX_EVENTS; i++) {
    assert_int_equal(s.fd[i], -1);
    assert_int_equal(s.err[i], EINVAL);
  }
  lab_perf_counts c;
  lab_perf_read(&s, &c);
  assert_int_equal(c.present, 0);
  lab_perf_close(&s);
  assert_int_equal(lab_perf_open(&s, NULL, 1), 0);
  assert_int_equal(lab_perf_open(&s, with_absent, -1), 0);
  lab_perf_close(&s);
  assert_int_equal(lab_perf_open(&s, with_absent, 0), 0);
  lab_perf_close(&s);
  char buf[1] = {'x'};
  lab_perf_describe(buf, 0, true, false, true); /* no room: untouched */
  assert_int_equal(buf[0], 'x');
}

int main(void) {
  const struct CMUnitTest plain[] = {
    cmocka_unit_test(test_sums_keep_what_every_read_had),
    cmocka_unit_test(test_group_reads_scale_when_multiplexed),
    cmocka_unit_test(test_bad_inputs_open_nothing),
    cmocka_unit_test(test_cpus_known_without_a_topology),
  };
  int failed = cmocka_run_group_tests_name("perf_counters (no events)", plain, NULL, NULL);
  lab_perf_set probe;
  int opened = lab_perf_open(&probe, with_absent, 1);
  int err = probe.err[0];
  lab_perf_close(&probe);
  if (opened != 1) {
    printf("perf_counters_test: skipped the counting tests: perf_event_open(page faults): %s\n", strerror(err));
    return failed ? failed : 77;
  }
  const struct CMUnitTest counting[] = {
    cmocka_unit_test(test_fresh_pages_are_counted_while_enabled),
    cmocka_unit_test(test_unopenable_event_is_absent_and_the_others_count),
    cmocka_unit_test(test_default_set_reads_the_page_faults),
    cmocka_unit_test(test_describe_names_what_is_read),
  };
  return failed + cmocka_run_group_tests_name("perf_counters", counting, NULL, NULL);
}
