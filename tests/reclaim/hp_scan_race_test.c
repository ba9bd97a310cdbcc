/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hp_scan_race_test.c — a hazard-pointer scan reads every slot of the
 * records it has counted, however many records join the domain while it
 * runs.
 *
 * A scan sizes its snapshot of the domain's hazards from the records it
 * counts, then reads their slots. Records that threads publish in between
 * (a thread's first operation on the domain, or a nested one) must not
 * crowd a counted record's hazard out of the snapshot: the node that
 * hazard protects would be freed under its reader. The race point
 * "reclaim.hp.scan.counted" (tests/support/syncq_race.h) stops the scan
 * between the two; there the hook, in the same thread, enters more
 * records (nested operations get fresh ones) and publishes a hazard in
 * each, as threads arriving on the domain would. The node protected
 * before the scan began must survive it, and be freed once its reader
 * lets it go. One thread; the interleaving is fixed by the hook.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "syncq_race.h" /* first: its SYNCQ_RACE_POINT, before any static body */

#include "syncq/reclaim.h"

SYNCQ_RACE_HOOK_DEFINE;

#define ARRIVALS 4 /* records entered inside the scan: more than the counted ones' slots */

static syncq_hp_domain *domain;
static syncq_hp_record *arrived[ARRIVALS];
static int arrival_targets[ARRIVALS]; /* what the arrivals protect (never retired) */
static int hook_ran;
static int n_freed;
static void *last_freed;

static void count_free(void *node, void *ctx) {
  (void)ctx;
  n_freed++;
  last_freed = node;
  free(node);
}

/* At the point: ARRIVALS operations begin on the domain, each with a
 * hazard published, while the scan holds its count. */
static void arrive(const char *name) {
  if (strcmp(name, "reclaim.hp.scan.counted") != 0) return;
  syncq_race_hook = NULL; /* once */
  for (int i = 0; i < ARRIVALS; i++) {
    assert_int_equal(syncq_hp_enter(domain, &arrived[i]), SYNCQ_OK);
    syncq_hp_set(arrived[i], 0, &arrival_targets[i]);
  }
  hook_ran++;
}

static void test_scan_keeps_counted_hazards(void **state) {
  (void)state;
  assert_int_equal(syncq_hp_domain_create(1, count_free, NULL, &domain), SYNCQ_OK);
  int *node = malloc(sizeof *node);
  assert_non_null(node);
  *node = 42;
  _Atomic(void *) src = node;

  syncq_hp_record *reader, *writer;
  assert_int_equal(syncq_hp_enter(domain, &reader), SYNCQ_OK);
  assert_ptr_equal(syncq_hp_protect(reader, 0, &src), node);
  assert_int_equal(syncq_hp_enter(domain, &writer), SYNCQ_OK); /* nested: a record of its own */
  assert_ptr_not_equal(reader, writer);
  atomic_store(&src, NULL); /* unlink, then retire */
  assert_int_equal(syncq_hp_retire(writer, node), SYNCQ_OK);

  syncq_race_hook = arrive;
  assert_int_equal(syncq_hp_scan(writer), 0); /* the reader still holds it */
  assert_int_equal(hook_ran, 1);
  assert_int_equal(n_freed, 0);
  assert_int_equal(*node, 42);

  for (int i = 0; i < ARRIVALS; i++) syncq_hp_leave(arrived[i]);
  syncq_hp_leave(reader);
  assert_int_equal(syncq_hp_scan(writer), 1); /* let go: freed now */
  assert_int_equal(n_freed, 1);
  assert_ptr_equal(last_freed, node);
  syncq_hp_leave(writer);
  assert_int_equal(syncq_hp_domain_destroy(domain), SYNCQ_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_scan_keeps_counted_hazards),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
