/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reclaim_test.c — the free list and hazard pointers.
 *
 * Free list: every node popped is owned by one thread only (ownership
 * stamping), nothing is lost, under 8x oversubscription.
 * Hazard pointers: a protected node is never freed; readers never see a
 * node that free_fn has poisoned (and ASan would catch a read after free);
 * every retired node is freed exactly once by the time the domain is gone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_plan.h"

#include "syncq/platform.h"
#include "syncq/reclaim.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

#define OVERSUBSCRIPTION TEST_PLAN_OVERSUBSCRIPTION
#if SANITIZED
#define ROUNDS 3000
#else
#define ROUNDS 20000
#endif
#define YIELD_EVERY 7

/* 8x the PUs the process is confined to (test_plan.h): 16 threads on 2
 * PUs on any machine with 2 or more. */
static int n_threads(void) { return test_plan_oversubscribed(OVERSUBSCRIPTION); }

/* ------------------------------------------------------------ free list */

typedef struct fl_node {
  uint64_t payload;
  syncq_fl_link link; /* not first: the container macro must work at any offset */
  _Atomic(int) owner;
} fl_node;

static void test_freelist_sequential(void **state) {
  (void)state;
  syncq_freelist fl;
  assert_int_equal(syncq_freelist_init(&fl), SYNCQ_OK);
  syncq_fl_link *l;
  assert_int_equal(syncq_freelist_pop(&fl, &l), SYNCQ_EMPTY);
  fl_node nodes[5];
  memset(nodes, 0, sizeof nodes);
  assert_int_equal(syncq_freelist_fill(&fl, nodes, 5, sizeof nodes[0], offsetof(fl_node, link)), SYNCQ_OK);
  bool seen[5] = {false};
  for (int i = 0; i < 5; i++) {
    assert_int_equal(syncq_freelist_pop(&fl, &l), SYNCQ_OK);
    fl_node *n = SYNCQ_FL_CONTAINER(l, fl_node, link);
    assert_true(n >= nodes && n < nodes + 5);
    assert_false(seen[n - nodes]);
    seen[n - nodes] = true;
  }
  assert_int_equal(syncq_freelist_pop(&fl, &l), SYNCQ_EMPTY);
  assert_int_equal(syncq_freelist_push(&fl, &nodes[3].link), SYNCQ_OK);
  assert_int_equal(syncq_freelist_pop(&fl, &l), SYNCQ_OK);
  assert_ptr_equal(l, &nodes[3].link); /* LIFO */
}

static void test_freelist_bad_inputs(void **state) {
  (void)state;
  syncq_freelist fl;
  syncq_fl_link *l;
  fl_node nodes[2];
  assert_int_equal(syncq_freelist_init(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_freelist_init(&fl), SYNCQ_OK);
  assert_int_equal(syncq_freelist_push(NULL, &nodes[0].link), SYNCQ_EINVAL);
  assert_int_equal(syncq_freelist_push(&fl, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_freelist_pop(NULL, &l), SYNCQ_EINVAL);
  assert_int_equal(syncq_freelist_pop(&fl, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_freelist_fill(NULL, nodes, 2, sizeof nodes[0], 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_freelist_fill(&fl, NULL, 2, sizeof nodes[0], 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_freelist_fill(&fl, nodes, 2, 4, 0), SYNCQ_EINVAL); /* stride < link */
  assert_int_equal(syncq_freelist_fill(&fl, nodes, 2, sizeof nodes[0], sizeof nodes[0]),
                   SYNCQ_EINVAL);                                                         /* past the end */
  assert_int_equal(syncq_freelist_fill(&fl, nodes, 2, sizeof nodes[0], 3), SYNCQ_EINVAL); /* misaligned */
  /* a count whose nodes would run past the end of the address space: no
   * array can be that long, and filling it would write links anywhere */
  assert_int_equal(
    syncq_freelist_fill(&fl, nodes, SIZE_MAX / sizeof nodes[0], sizeof nodes[0], offsetof(fl_node, link)),
    SYNCQ_EINVAL);
  assert_int_equal(syncq_freelist_fill(&fl, (void *)(UINTPTR_MAX & ~(uintptr_t)63), 8, sizeof nodes[0], 0),
                   SYNCQ_EINVAL);                                      /* 8 nodes from 64 bytes below the top */
  assert_int_equal(syncq_freelist_fill(&fl, NULL, 0, 0, 0), SYNCQ_OK); /* nothing to do */
  assert_int_equal(syncq_freelist_pop(&fl, &l), SYNCQ_EMPTY);          /* refused fills pushed nothing */
}

#define POOL 64
typedef struct fl_run {
  syncq_freelist *fl;
  int id;
  long stolen; /* a node another thread also held: must stay 0 */
} fl_run;

static void *fl_worker(void *p) {
  fl_run *r = p;
  for (int i = 0; i < ROUNDS; i++) {
    syncq_fl_link *l;
    if (syncq_freelist_pop(r->fl, &l) != SYNCQ_OK) {
      syncq_yield();
      continue;
    }
    fl_node *n = SYNCQ_FL_CONTAINER(l, fl_node, link);
    if (atomic_exchange(&n->owner, r->id + 1) != 0) r->stolen++;
    if (i % YIELD_EVERY == 0) syncq_yield(); /* hold it across a preemption */
    atomic_store(&n->owner, 0);
    syncq_freelist_push(r->fl, l);
  }
  return NULL;
}

static void test_freelist_concurrent_ownership(void **state) {
  (void)state;
  static fl_node nodes[POOL];
  memset(nodes, 0, sizeof nodes);
  syncq_freelist fl;
  assert_int_equal(syncq_freelist_init(&fl), SYNCQ_OK);
  assert_int_equal(syncq_freelist_fill(&fl, nodes, POOL, sizeof nodes[0], offsetof(fl_node, link)), SYNCQ_OK);
  int t = n_threads();
  pthread_t tid[256];
  fl_run runs[256];
  for (int i = 0; i < t; i++) {
    runs[i] = (fl_run){&fl, i, 0};
    assert_int_equal(pthread_create(&tid[i], NULL, fl_worker, &runs[i]), 0);
  }
  for (int i = 0; i < t; i++) {
    pthread_join(tid[i], NULL);
    assert_int_equal(runs[i].stolen, 0);
  }
  /* conservation: exactly the POOL nodes, each once */
  bool seen[POOL] = {false};
  syncq_fl_link *l;
  for (int i = 0; i < POOL; i++) {
    assert_int_equal(syncq_freelist_pop(&fl, &l), SYNCQ_OK);
    fl_node *n = SYNCQ_FL_CONTAINER(l, fl_node, link);
    assert_false(seen[n - nodes]);
    seen[n - nodes] = true;
  }
  assert_int_equal(syncq_freelist_pop(&fl, &l), SYNCQ_EMPTY);
}

/* ------------------------------------------------------------ hazard pointers */

#define LIVE 0x4c495645ull
#define DEAD 0xdeadull

typedef struct hp_node {
  uint64_t magic;
  uint64_t value;
} hp_node;

static _Atomic(long) n_freed;

static void free_node(void *p, void *ctx) {
  (void)ctx;
  hp_node *n = p;
  n->magic = DEAD; /* a reader that still held it would see this (or ASan the free) */
  free(n);
  atomic_fetch_add(&n_freed, 1);
}

static hp_node *make_node(uint64_t v) {
  hp_node *n = malloc(sizeof *n);
  assert_non_null(n);
  n->magic = LIVE;
  n->value = v;
  return n;
}

/* A domain of `slots` hazard slots that frees through free_node, with
 * n_freed back at 0. */
static syncq_hp_domain *fresh_domain(unsigned slots) {
  syncq_hp_domain *d;
  assert_int_equal(syncq_hp_domain_create(slots, free_node, NULL, &d), SYNCQ_OK);
  atomic_store(&n_freed, 0);
  return d;
}

static void test_hp_protected_node_survives_scan(void **state) {
  (void)state;
  syncq_hp_domain *d = fresh_domain(2);
  hp_node *a = make_node(1);
  _Atomic(void *) src = a;
  syncq_hp_record *reader, *writer;
  assert_int_equal(syncq_hp_enter(d, &reader), SYNCQ_OK);
  assert_int_equal(syncq_hp_enter(d, &writer), SYNCQ_OK);
  assert_ptr_not_equal(reader, writer); /* an entered record is not handed out twice */
  assert_ptr_equal(syncq_hp_protect(reader, 1, &src), a);
  atomic_store(&src, NULL); /* unlink, then retire */
  assert_int_equal(syncq_hp_retire(writer, a), SYNCQ_OK);
  assert_int_equal(syncq_hp_scan(writer), 0); /* protected: kept */
  assert_int_equal(a->magic, LIVE);
  syncq_hp_clear(reader, 1);
  assert_int_equal(syncq_hp_scan(writer), 1); /* now freed */
  assert_int_equal(atomic_load(&n_freed), 1);
  /* a record left with a retired node: freed at domain destroy */
  assert_int_equal(syncq_hp_retire(writer, make_node(2)), SYNCQ_OK);
  assert_int_equal(syncq_hp_domain_destroy(d), SYNCQ_EBUSY); /* records still entered */
  syncq_hp_leave(reader);
  syncq_hp_leave(writer);
  assert_int_equal(syncq_hp_domain_destroy(d), SYNCQ_OK);
  assert_int_equal(atomic_load(&n_freed), 2);
}

static void test_hp_bad_inputs(void **state) {
  (void)state;
  syncq_hp_domain *d;
  syncq_hp_record *r;
  assert_int_equal(syncq_hp_domain_create(0, free_node, NULL, &d), SYNCQ_EINVAL);
  assert_int_equal(syncq_hp_domain_create(SYNCQ_HP_MAX_SLOTS + 1, free_node, NULL, &d), SYNCQ_EINVAL);
  assert_int_equal(syncq_hp_domain_create(1, NULL, NULL, &d), SYNCQ_EINVAL);
  assert_int_equal(syncq_hp_domain_create(1, free_node, NULL, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_hp_domain_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_hp_enter(NULL, &r), SYNCQ_EINVAL);
  assert_int_equal(syncq_hp_domain_create(1, free_node, NULL, &d), SYNCQ_OK);
  assert_int_equal(syncq_hp_enter(d, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_hp_enter(d, &r), SYNCQ_OK);
  _Atomic(void *) src = NULL;
  assert_null(syncq_hp_protect(r, 1, &src)); /* slot out of range */
  assert_null(syncq_hp_protect(NULL, 0, &src));
  assert_null(syncq_hp_protect(r, 0, NULL));
  assert_int_equal(syncq_hp_retire(r, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_hp_retire(NULL, &src), SYNCQ_EINVAL);
  assert_int_equal(syncq_hp_scan(NULL), 0);
  syncq_hp_set(NULL, 0, NULL); /* ignored, no crash */
  syncq_hp_leave(NULL);
  syncq_hp_leave(r);
  assert_int_equal(syncq_hp_domain_destroy(d), SYNCQ_OK);
}

typedef struct hp_run {
  syncq_hp_domain *d;
  _Atomic(void *) *cur;
  int id;
  long bad;     /* reads of a poisoned node: must stay 0 */
  long retired; /* nodes this writer retired */
} hp_run;

static void *hp_reader(void *p) {
  hp_run *r = p;
  for (int i = 0; i < ROUNDS; i++) {
    syncq_hp_record *rec;
    if (syncq_hp_enter(r->d, &rec) != SYNCQ_OK) continue;
    hp_node *n = syncq_hp_protect(rec, 0, r->cur);
    if (i % YIELD_EVERY == 0) syncq_yield(); /* hold the hazard across a preemption */
    if (n != NULL && n->magic != LIVE) r->bad++;
    syncq_hp_leave(rec);
  }
  return NULL;
}

static void *hp_writer(void *p) {
  hp_run *r = p;
  for (int i = 0; i < ROUNDS / 4; i++) {
    syncq_hp_record *rec;
    if (syncq_hp_enter(r->d, &rec) != SYNCQ_OK) continue;
    hp_node *fresh = malloc(sizeof *fresh);
    if (fresh == NULL) {
      syncq_hp_leave(rec);
      continue;
    }
    fresh->magic = LIVE;
    fresh->value = (uint64_t)i;
    hp_node *old = atomic_exchange(r->cur, fresh); /* unlink old */
    syncq_hp_retire(rec, old);
    r->retired++;
    syncq_hp_leave(rec);
  }
  return NULL;
}

static void test_hp_stress_no_use_after_free(void **state) {
  (void)state;
  syncq_hp_domain *d = fresh_domain(1);
  _Atomic(void *) cur = make_node(0);
  int t = n_threads(), writers = t / 4 ? t / 4 : 1;
  pthread_t tid[256];
  hp_run runs[256];
  for (int i = 0; i < t; i++) {
    runs[i] = (hp_run){d, &cur, i, 0, 0};
    assert_int_equal(pthread_create(&tid[i], NULL, i < writers ? hp_writer : hp_reader, &runs[i]), 0);
  }
  long retired = 0;
  for (int i = 0; i < t; i++) {
    pthread_join(tid[i], NULL);
    assert_int_equal(runs[i].bad, 0);
    retired += runs[i].retired;
  }
  assert_int_equal(syncq_hp_domain_destroy(d), SYNCQ_OK);
  assert_int_equal(atomic_load(&n_freed), retired); /* every retired node freed exactly once */
  free_node(atomic_load(&cur), NULL);
}

static void test_hp_records_reused_across_domains(void **state) {
  (void)state;
  /* Create and destroy many domains: stale thread hints must not hand out
   * a record of a destroyed domain, and records return to the pool. */
  for (int i = 0; i < 200; i++) {
    syncq_hp_domain *d;
    syncq_hp_record *r1, *r2;
    assert_int_equal(syncq_hp_domain_create(2, free_node, NULL, &d), SYNCQ_OK);
    assert_int_equal(syncq_hp_enter(d, &r1), SYNCQ_OK);
    assert_int_equal(syncq_hp_enter(d, &r2), SYNCQ_OK);
    assert_ptr_not_equal(r1, r2);
    syncq_hp_leave(r2);
    syncq_hp_leave(r1);
    assert_int_equal(syncq_hp_domain_destroy(d), SYNCQ_OK);
  }
}

/* leave_keep: the slot stays published after the operation (the node
 * survives a scan) and held() reports it; a later leave clears it. */
static void test_hp_leave_keep_holds_across_operations(void **state) {
  (void)state;
  syncq_hp_domain *d = fresh_domain(2);
  hp_node *a = make_node(1);
  _Atomic(void *) src = a;
  syncq_hp_record *r, *w;
  assert_int_equal(syncq_hp_enter(d, &r), SYNCQ_OK);
  assert_ptr_equal(syncq_hp_protect(r, 1, &src), a);
  syncq_hp_leave_keep(r);
  assert_int_equal(syncq_hp_enter(d, &r), SYNCQ_OK); /* the thread's kept record: the slot still holds a */
  assert_ptr_equal(syncq_hp_held(r, 1), a);
  assert_null(syncq_hp_held(r, 0));
  assert_int_equal(syncq_hp_enter(d, &w), SYNCQ_OK); /* nested: another record */
  assert_ptr_not_equal(r, w);
  atomic_store(&src, NULL);
  assert_int_equal(syncq_hp_retire(w, a), SYNCQ_OK);
  assert_int_equal(syncq_hp_scan(w), 0); /* kept slot: not freed */
  assert_int_equal(a->magic, LIVE);
  syncq_hp_leave_keep(r); /* ends the operation, slot still published */
  assert_int_equal(syncq_hp_scan(w), 0);
  assert_int_equal(syncq_hp_enter(d, &r), SYNCQ_OK);
  syncq_hp_leave(r); /* clears */
  assert_int_equal(syncq_hp_scan(w), 1);
  assert_int_equal(atomic_load(&n_freed), 1);
  /* a nested record is given back by leave_keep: its slots are cleared */
  hp_node *b = make_node(2);
  _Atomic(void *) src2 = b;
  assert_ptr_equal(syncq_hp_protect(w, 0, &src2), b);
  syncq_hp_leave_keep(w);
  assert_int_equal(syncq_hp_enter(d, &r), SYNCQ_OK);
  atomic_store(&src2, NULL);
  assert_int_equal(syncq_hp_retire(r, b), SYNCQ_OK);
  assert_int_equal(syncq_hp_scan(r), 1);
  syncq_hp_leave(r);
  /* bad inputs */
  assert_null(syncq_hp_held(NULL, 0));
  assert_int_equal(syncq_hp_enter(d, &r), SYNCQ_OK);
  assert_null(syncq_hp_held(r, 2)); /* slot out of range */
  syncq_hp_leave_keep(NULL);        /* ignored */
  syncq_hp_leave(r);
  assert_int_equal(syncq_hp_domain_destroy(d), SYNCQ_OK);
  assert_int_equal(atomic_load(&n_freed), 2);
}

typedef struct hp_exit_arg {
  syncq_hp_domain *d;
  _Atomic(void *) *src;
  syncq_hp_record *rec;
} hp_exit_arg;

static void *hp_keep_and_exit(void *p) {
  hp_exit_arg *a = p;
  if (syncq_hp_enter(a->d, &a->rec) != SYNCQ_OK) return NULL;
  (void)syncq_hp_protect(a->rec, 0, a->src);
  syncq_hp_leave_keep(a->rec);
  return NULL;
}

/* A thread that exits gives its kept record back: its slots are cleared
 * (the node it kept can be freed) and another thread takes the record. */
static void test_hp_thread_exit_gives_record_back(void **state) {
  (void)state;
  syncq_hp_domain *d = fresh_domain(1);
  hp_node *a = make_node(1);
  _Atomic(void *) src = a;
  hp_exit_arg arg = {d, &src, NULL};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, hp_keep_and_exit, &arg), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_non_null(arg.rec);
  syncq_hp_record *r;
  assert_int_equal(syncq_hp_enter(d, &r), SYNCQ_OK);
  assert_ptr_equal(r, arg.rec); /* the only record, free again */
  assert_null(syncq_hp_held(r, 0));
  atomic_store(&src, NULL);
  assert_int_equal(syncq_hp_retire(r, a), SYNCQ_OK);
  assert_int_equal(syncq_hp_scan(r), 1);
  syncq_hp_leave(r);
  assert_int_equal(syncq_hp_domain_destroy(d), SYNCQ_OK);
}

/* One thread on more domains than it keeps records for: evicted records
 * are cleared and given back, and each domain still protects its node. */
static void test_hp_many_domains_one_thread(void **state) {
  (void)state;
  enum { ND = 20 };
  syncq_hp_domain *d[ND];
  hp_node *n[ND];
  _Atomic(void *) src[ND];
  atomic_store(&n_freed, 0);
  for (int i = 0; i < ND; i++) {
    assert_int_equal(syncq_hp_domain_create(1, free_node, NULL, &d[i]), SYNCQ_OK);
    n[i] = make_node((uint64_t)i);
    atomic_init(&src[i], n[i]);
  }
  for (int round = 0; round < 3; round++)
    for (int i = 0; i < ND; i++) {
      syncq_hp_record *r;
      assert_int_equal(syncq_hp_enter(d[i], &r), SYNCQ_OK);
      assert_ptr_equal(syncq_hp_protect(r, 0, &src[i]), n[i]);
      syncq_hp_leave_keep(r);
    }
  /* the last-used domain's record is kept: its node survives a scan by a
   * nested record; after a leave, it is freed */
  syncq_hp_record *k, *w;
  assert_int_equal(syncq_hp_enter(d[ND - 1], &k), SYNCQ_OK);
  assert_ptr_equal(syncq_hp_held(k, 0), n[ND - 1]);
  assert_int_equal(syncq_hp_enter(d[ND - 1], &w), SYNCQ_OK);
  atomic_store(&src[ND - 1], NULL);
  assert_int_equal(syncq_hp_retire(w, n[ND - 1]), SYNCQ_OK);
  assert_int_equal(syncq_hp_scan(w), 0);
  syncq_hp_leave(k);
  assert_int_equal(syncq_hp_scan(w), 1);
  syncq_hp_leave(w);
  /* the first domain's record was evicted: its slot was cleared */
  assert_int_equal(syncq_hp_enter(d[0], &w), SYNCQ_OK);
  atomic_store(&src[0], NULL);
  assert_int_equal(syncq_hp_retire(w, n[0]), SYNCQ_OK);
  assert_int_equal(syncq_hp_scan(w), 1);
  syncq_hp_leave(w);
  assert_int_equal(atomic_load(&n_freed), 2);
  for (int i = 0; i < ND; i++) assert_int_equal(syncq_hp_domain_destroy(d[i]), SYNCQ_OK);
  for (int i = 1; i < ND - 1; i++) free_node(n[i], NULL);
}

int main(void) {
  test_plan_confine();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_freelist_sequential),
    cmocka_unit_test(test_freelist_bad_inputs),
    cmocka_unit_test(test_freelist_concurrent_ownership),
    cmocka_unit_test(test_hp_protected_node_survives_scan),
    cmocka_unit_test(test_hp_bad_inputs),
    cmocka_unit_test(test_hp_stress_no_use_after_free),
    cmocka_unit_test(test_hp_records_reused_across_domains),
    cmocka_unit_test(test_hp_leave_keep_holds_across_operations),
    cmocka_unit_test(test_hp_thread_exit_gives_record_back),
    cmocka_unit_test(test_hp_many_domains_one_thread),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
