/* SPDX-License-Identifier: BSD-2-Clause */
/* registry_test.c — lookup, listing, registration and their errors. */
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "syncq/counter.h"
#include "syncq/registry.h"
#include "registry_internal.h" /* each family's own lookup */

static void test_family_names(void **state) {
  (void)state;
  for (int f = 0; f < SYNCQ_FAMILY_COUNT; f++) {
    syncq_family back;
    const char *n = syncq_family_name((syncq_family)f);
    assert_non_null(n);
    assert_int_equal(syncq_family_from_name(n, &back), SYNCQ_OK);
    assert_int_equal(back, f);
  }
  syncq_family f;
  assert_null(syncq_family_name(SYNCQ_FAMILY_COUNT));
  assert_null(syncq_family_name((syncq_family)-1));
  assert_int_equal(syncq_family_from_name("nope", &f), SYNCQ_ENOENT);
  assert_int_equal(syncq_family_from_name(NULL, &f), SYNCQ_EINVAL);
  assert_int_equal(syncq_family_from_name("lock", NULL), SYNCQ_EINVAL);
  assert_string_equal(syncq_progress_name(SYNCQ_PROGRESS_LOCK_FREE), "lock-free");
  assert_null(syncq_progress_name((syncq_progress)99));
}

static void test_find_builtin_counters(void **state) {
  (void)state;
  const char *names[] = {"faa", "cas", "cas-backoff", "mutex"};
  for (size_t i = 0; i < 4; i++) {
    const syncq_algo *a = NULL;
    assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_COUNTER, names[i], &a), SYNCQ_OK);
    assert_string_equal(a->name, names[i]);
    assert_int_equal(a->family, SYNCQ_FAMILY_COUNTER);
    assert_non_null(a->ops);
    assert_non_null(a->paper);
  }
  const syncq_algo *a;
  assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_COUNTER, "nope", &a), SYNCQ_ENOENT);
  assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_LOCK, "faa", &a), SYNCQ_ENOENT); /* per family */
  assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_COUNTER, NULL, &a), SYNCQ_EINVAL);
  assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_COUNTER, "faa", NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_COUNT, "faa", &a), SYNCQ_EINVAL);
}

static void test_list(void **state) {
  (void)state;
  int total = syncq_registry_list(SYNCQ_FAMILY_COUNTER, NULL, 0);
  assert_true(total >= 4);
  const syncq_algo *two[2];
  assert_int_equal(syncq_registry_list(SYNCQ_FAMILY_COUNTER, two, 2), total); /* total, even if truncated */
  assert_string_equal(two[0]->name, "faa");
  assert_int_equal(syncq_registry_list(SYNCQ_FAMILY_COUNTER, NULL, 3), SYNCQ_EINVAL);
  assert_int_equal(syncq_registry_list(SYNCQ_FAMILY_COUNT, two, 2), SYNCQ_EINVAL);
}

static int dummy_init(void *c, int64_t v) {
  (void)c;
  (void)v;
  return SYNCQ_OK;
}
static const syncq_counter_ops dummy_ops = {8, 8, dummy_init, NULL, NULL, NULL};

static void test_add(void **state) {
  (void)state;
  static const syncq_algo peer = {SYNCQ_FAMILY_COUNTER,    "test:peer",     "a test entry", "none",
                                  SYNCQ_PROGRESS_BLOCKING, SYNCQ_PROP_PEER, &dummy_ops};
  int before = syncq_registry_list(SYNCQ_FAMILY_COUNTER, NULL, 0);
  assert_int_equal(syncq_registry_add(&peer), SYNCQ_OK);
  assert_int_equal(syncq_registry_list(SYNCQ_FAMILY_COUNTER, NULL, 0), before + 1);
  const syncq_algo *a;
  assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_COUNTER, "test:peer", &a), SYNCQ_OK);
  assert_ptr_equal(a, &peer);
  assert_int_equal(syncq_registry_add(&peer), SYNCQ_EEXIST);
  /* the same name in another family is a different entry */
  static const syncq_algo other = {SYNCQ_FAMILY_QUEUE,      "test:peer", "x",       "none",
                                   SYNCQ_PROGRESS_BLOCKING, 0,           &dummy_ops};
  assert_int_equal(syncq_registry_add(&other), SYNCQ_OK);
  /* each family's own lookup sees the added entries of its family only */
  assert_int_equal(syncq_counter_find("test:peer", &a), SYNCQ_OK);
  assert_ptr_equal(a, &peer);
  assert_int_equal(syncq_queue_find("test:peer", &a), SYNCQ_OK);
  assert_ptr_equal(a, &other);
  assert_int_equal(syncq_stack_find("test:peer", &a), SYNCQ_ENOENT);
  /* a built-in name is taken in its family */
  static const syncq_algo faa_again = {SYNCQ_FAMILY_COUNTER,    "faa", "x",       "none",
                                       SYNCQ_PROGRESS_BLOCKING, 0,     &dummy_ops};
  assert_int_equal(syncq_registry_add(&faa_again), SYNCQ_EEXIST);
  assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_COUNTER, "faa", &a), SYNCQ_OK);
  assert_ptr_not_equal(a, &faa_again);
}

/* Adds from several threads at once while others look names up and list:
 * every add lands once, a reader sees only whole entries of its family
 * (run under TSan: the count's release/acquire publishes each entry). */
enum { ADDERS = 4, ADDS_EACH = 8 };
static syncq_algo concurrent[ADDERS][ADDS_EACH];
static char concurrent_names[ADDERS][ADDS_EACH][16];
static atomic_int adders_done;

static void *adder(void *arg) {
  int t = (int)(intptr_t)arg;
  for (int i = 0; i < ADDS_EACH; i++) {
    if (syncq_registry_add(&concurrent[t][i]) != SYNCQ_OK) return (void *)1;
  }
  atomic_fetch_add(&adders_done, 1);
  return NULL;
}

static void *reader(void *arg) {
  (void)arg;
  const syncq_algo *all[SYNCQ_REGISTRY_MAX], *a;
  while (atomic_load(&adders_done) < ADDERS) {
    int n = syncq_registry_list(SYNCQ_FAMILY_PQUEUE, all, SYNCQ_REGISTRY_MAX);
    for (int i = 0; i < n; i++) {
      if (all[i]->family != SYNCQ_FAMILY_PQUEUE || all[i]->ops == NULL) return (void *)1;
      if (syncq_pqueue_find(all[i]->name, &a) != SYNCQ_OK || a != all[i]) return (void *)1;
    }
  }
  return NULL;
}

static void test_concurrent_add(void **state) {
  (void)state;
  int before = syncq_registry_list(SYNCQ_FAMILY_PQUEUE, NULL, 0);
  for (int t = 0; t < ADDERS; t++) {
    for (int i = 0; i < ADDS_EACH; i++) {
      snprintf(concurrent_names[t][i], sizeof concurrent_names[t][i], "conc%d-%d", t, i);
      concurrent[t][i] =
        (syncq_algo){SYNCQ_FAMILY_PQUEUE, concurrent_names[t][i], "", "", SYNCQ_PROGRESS_BLOCKING, 0, &dummy_ops};
    }
  }
  pthread_t add[ADDERS], rd[2];
  for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&rd[i], NULL, reader, NULL), 0);
  for (int t = 0; t < ADDERS; t++) assert_int_equal(pthread_create(&add[t], NULL, adder, (void *)(intptr_t)t), 0);
  for (int t = 0; t < ADDERS; t++) {
    void *r;
    assert_int_equal(pthread_join(add[t], &r), 0);
    assert_null(r);
  }
  for (int i = 0; i < 2; i++) {
    void *r;
    assert_int_equal(pthread_join(rd[i], &r), 0);
    assert_null(r);
  }
  assert_int_equal(syncq_registry_list(SYNCQ_FAMILY_PQUEUE, NULL, 0), before + ADDERS * ADDS_EACH);
  const syncq_algo *a;
  for (int t = 0; t < ADDERS; t++) {
    for (int i = 0; i < ADDS_EACH; i++) {
      assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_PQUEUE, concurrent_names[t][i], &a), SYNCQ_OK);
      assert_ptr_equal(a, &concurrent[t][i]);
    }
  }
}

/* Each family's own lookup (syncq_<family>_find) answers as
 * syncq_registry_find does for that family. */
static void test_family_lookups(void **state) {
  (void)state;
  int (*const find[SYNCQ_FAMILY_COUNT])(const char *, const syncq_algo **) = {
    [SYNCQ_FAMILY_LOCK] = syncq_lock_find,       [SYNCQ_FAMILY_BARRIER] = syncq_barrier_find,
    [SYNCQ_FAMILY_COUNTER] = syncq_counter_find, [SYNCQ_FAMILY_QUEUE] = syncq_queue_find,
    [SYNCQ_FAMILY_STACK] = syncq_stack_find,     [SYNCQ_FAMILY_PQUEUE] = syncq_pqueue_find,
  };
  for (int f = 0; f < SYNCQ_FAMILY_COUNT; f++) {
    const syncq_algo *all[SYNCQ_REGISTRY_MAX], *a;
    int n = syncq_registry_list((syncq_family)f, all, SYNCQ_REGISTRY_MAX);
    assert_true(n > 0);
    for (int i = 0; i < n; i++) {
      assert_int_equal(all[i]->family, f);
      assert_int_equal(find[f](all[i]->name, &a), SYNCQ_OK);
      assert_ptr_equal(a, all[i]);
    }
    assert_int_equal(find[f]("nope", &a), SYNCQ_ENOENT);
    assert_int_equal(find[f](NULL, &a), SYNCQ_EINVAL);
    assert_int_equal(find[f](all[0]->name, NULL), SYNCQ_EINVAL);
  }
  const syncq_algo *a;
  assert_int_equal(syncq_lock_find("faa", &a), SYNCQ_ENOENT); /* a counter's name */
}

static void test_add_bad_inputs(void **state) {
  (void)state;
  static const syncq_algo no_ops = {SYNCQ_FAMILY_COUNTER, "x1", "", "", SYNCQ_PROGRESS_BLOCKING, 0, NULL};
  static const syncq_algo no_name = {SYNCQ_FAMILY_COUNTER, NULL, "", "", SYNCQ_PROGRESS_BLOCKING, 0, &dummy_ops};
  static const syncq_algo empty_name = {SYNCQ_FAMILY_COUNTER, "", "", "", SYNCQ_PROGRESS_BLOCKING, 0, &dummy_ops};
  static const syncq_algo bad_family = {SYNCQ_FAMILY_COUNT, "x2", "", "", SYNCQ_PROGRESS_BLOCKING, 0, &dummy_ops};
  static const syncq_algo bad_progress = {SYNCQ_FAMILY_COUNTER, "x3", "", "", (syncq_progress)42, 0, &dummy_ops};
  assert_int_equal(syncq_registry_add(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_registry_add(&no_ops), SYNCQ_EINVAL);
  assert_int_equal(syncq_registry_add(&no_name), SYNCQ_EINVAL);
  assert_int_equal(syncq_registry_add(&empty_name), SYNCQ_EINVAL);
  assert_int_equal(syncq_registry_add(&bad_family), SYNCQ_EINVAL);
  assert_int_equal(syncq_registry_add(&bad_progress), SYNCQ_EINVAL);
}

static void test_add_until_full(void **state) {
  (void)state;
  static syncq_algo many[SYNCQ_REGISTRY_MAX];
  static char names[SYNCQ_REGISTRY_MAX][16];
  int ok = 0, limit = 0, before = 0;
  for (int f = 0; f < SYNCQ_FAMILY_COUNT; f++) before += syncq_registry_list((syncq_family)f, NULL, 0);
  for (int i = 0; i < SYNCQ_REGISTRY_MAX; i++) {
    snprintf(names[i], sizeof names[i], "fill%d", i);
    many[i] = (syncq_algo){SYNCQ_FAMILY_STACK, names[i], "", "", SYNCQ_PROGRESS_BLOCKING, 0, &dummy_ops};
    int r = syncq_registry_add(&many[i]);
    if (r == SYNCQ_OK) ok++;
    else if (r == SYNCQ_ELIMIT) limit++;
    else fail_msg("unexpected status %d", r);
  }
  assert_true(limit > 0); /* the table filled up and said so */
  /* built-in and added entries count together toward the limit */
  assert_int_equal(ok, SYNCQ_REGISTRY_MAX - before);
  /* still consistent: earlier entries findable */
  const syncq_algo *a;
  assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_STACK, "fill0", &a), SYNCQ_OK);
  assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_COUNTER, "faa", &a), SYNCQ_OK);
}

static void test_props_format(void **state) {
  (void)state;
  char buf[128];
  assert_int_equal(syncq_props_format(0, buf, sizeof buf), 1);
  assert_string_equal(buf, "-");
  syncq_props_format(SYNCQ_PROP_FIFO | SYNCQ_PROP_BOUNDED, buf, sizeof buf);
  assert_string_equal(buf, "fifo,bounded");
  syncq_props_format(SYNCQ_PROP_PEER | SYNCQ_PROP_SPSC | SYNCQ_PROP_LOOSE_CAPACITY, buf, sizeof buf);
  assert_string_equal(buf, "peer,spsc,loose-capacity"); /* the peers' properties have names */
  char tiny[4];
  int need = syncq_props_format(SYNCQ_PROP_LINEARIZABLE, tiny, sizeof tiny);
  assert_int_equal(need, (int)strlen("linearizable"));
  assert_string_equal(tiny, "lin"); /* truncated, terminated */
  assert_int_equal(syncq_props_format(SYNCQ_PROP_FIFO, NULL, 0), 4);
  assert_int_equal(syncq_props_format(SYNCQ_PROP_FIFO, NULL, 5), SYNCQ_EINVAL);
}

/* Property bits defined in registry.h (the last is SPINS_ON_PREEMPTED). */
#define N_PROPS 11

static void test_props_spins_on_preempted(void **state) {
  (void)state;
  char buf[256];
  syncq_props_format(SYNCQ_PROP_BOUNDED | SYNCQ_PROP_SPINS_ON_PREEMPTED, buf, sizeof buf);
  assert_string_equal(buf, "bounded,spins-on-preempted");
  uint32_t p = 0;
  assert_int_equal(syncq_props_parse("spins-on-preempted", &p), SYNCQ_OK);
  assert_int_equal(p, SYNCQ_PROP_SPINS_ON_PREEMPTED);
  /* every single property, and all of them at once, survive a round trip */
  for (unsigned i = 0; i < N_PROPS; i++) {
    uint32_t bit = 1u << i, back = 0;
    syncq_props_format(bit, buf, sizeof buf);
    assert_string_not_equal(buf, "-");
    assert_int_equal(syncq_props_parse(buf, &back), SYNCQ_OK);
    assert_int_equal(back, bit);
  }
  assert_int_equal(SYNCQ_PROP_SPINS_ON_PREEMPTED, 1u << (N_PROPS - 1));
  uint32_t all = (1u << N_PROPS) - 1, back = 0;
  syncq_props_format(all, buf, sizeof buf);
  assert_int_equal(syncq_props_parse(buf, &back), SYNCQ_OK);
  assert_int_equal(back, all);
  assert_int_equal(syncq_props_parse("-", &back), SYNCQ_OK);
  assert_int_equal(back, 0);
}

static void test_props_parse_bad_inputs(void **state) {
  (void)state;
  uint32_t p = 0x5a;
  assert_int_equal(syncq_props_parse(NULL, &p), SYNCQ_EINVAL);
  assert_int_equal(syncq_props_parse("fifo", NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_props_parse("", &p), SYNCQ_ENOENT);
  assert_int_equal(syncq_props_parse("spins-on-preempt", &p), SYNCQ_ENOENT); /* a prefix is not a name */
  assert_int_equal(syncq_props_parse("fifo,", &p), SYNCQ_ENOENT);
  assert_int_equal(syncq_props_parse("fifo,,bounded", &p), SYNCQ_ENOENT);
  assert_int_equal(syncq_props_parse("fifo, bounded", &p), SYNCQ_ENOENT);
  assert_int_equal(syncq_props_parse("-,fifo", &p), SYNCQ_ENOENT);
  assert_int_equal(p, 0x5a); /* untouched on failure */
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_props_spins_on_preempted),
    cmocka_unit_test(test_props_parse_bad_inputs),
    cmocka_unit_test(test_family_names),
    cmocka_unit_test(test_find_builtin_counters),
    cmocka_unit_test(test_list),
    cmocka_unit_test(test_add),
    cmocka_unit_test(test_family_lookups),
    cmocka_unit_test(test_concurrent_add),
    cmocka_unit_test(test_add_bad_inputs),
    cmocka_unit_test(test_props_format),
    cmocka_unit_test(test_add_until_full), /* last: fills the table */
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
