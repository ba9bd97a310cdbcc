/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rings_af_cases.h — what lcrq_af_test.c and lprq_af_test.c check beyond
 * linked_rings_cases.h (included first, with RQ_INIT_RING set to the
 * "-af" init): funnels that batch.
 *
 * The shared cases run 4 producers and 4 consumers, which a ring's
 * 4-aggregator funnels (LR_FUNNEL_AGGS) may give one aggregator each, so
 * their tickets never meet in a batch. Here 16 threads (4 to an
 * aggregator on each end, whatever their process-wide indices) each
 * enqueue a numbered item and then dequeue one, through 4-cell rings that
 * close and turn over constantly, so batches form on both funnels and
 * some carry the CLOSED bit: every item comes out once, items of one
 * producer come out in order to each consumer, and no dequeue answers
 * EMPTY (the queue holds at least a prefilled item at every moment).
 * On 2 processing units threads seldom meet inside a funnel by chance: the
 * library's test hook makes each delegate yield before it closes its
 * batch, and counts the members, which must be many.
 *
 * The including file defines RQ_AF_INIT (the capacity init) and
 * RQ_AF_NAME (the registry name) as well.
 */
#include <stdlib.h>
#include <string.h>

#include "syncq/queue.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

#define AF_THREADS 16
#if SANITIZED
#define AF_ITERS 1500
#else
#define AF_ITERS 6000
#endif

/* The library's test hooks (src/counter/aggfunnel.c; not public symbols). */
extern _Atomic(bool) syncq_aggfunnel_test_widen__;
extern _Atomic(uint64_t) syncq_aggfunnel_test_members__;

typedef struct af_run {
  RQ *q;
  int id;
  uint64_t *seen; /* [AF_THREADS * AF_ITERS]: times each item came out */
  _Atomic(long) *empties, *errors, *disorder;
} af_run;

/* Item: producer id and sequence number, shifted off the low bits (LPRQ
 * refuses bit 63; LCRQ needs non-NULL). */
static void *af_item(int id, int i) { return (void *)(uintptr_t)(((uint64_t)id * AF_ITERS + (uint64_t)i + 1) << 4); }

static void *af_thread(void *p) {
  af_run *r = p;
  int last[AF_THREADS]; /* the last sequence number seen per producer */
  for (int k = 0; k < AF_THREADS; k++) last[k] = -1;
  for (int i = 0; i < AF_ITERS; i++) {
    if (RQ_ENQUEUE(r->q, af_item(r->id, i)) != SYNCQ_OK) atomic_fetch_add(r->errors, 1);
    void *x;
    int st = RQ_DEQUEUE(r->q, &x);
    if (st == SYNCQ_EMPTY) {
      atomic_fetch_add(r->empties, 1);
    } else if (st != SYNCQ_OK || x == NULL) {
      atomic_fetch_add(r->errors, 1);
    } else {
      uint64_t v = ((uint64_t)(uintptr_t)x >> 4);
      if (v == 0) continue; /* the prefill */
      v -= 1;
      int prod = (int)(v / AF_ITERS), seq = (int)(v % AF_ITERS);
      if (prod >= AF_THREADS) {
        atomic_fetch_add(r->errors, 1);
        continue;
      }
      if (seq <= last[prod]) atomic_fetch_add(r->disorder, 1);
      last[prod] = seq;
      atomic_fetch_add_explicit((_Atomic(uint64_t) *)&r->seen[v], 1,
                                memory_order_relaxed); /* relaxed: read after join */
    }
    if (i % LR_YIELD_EVERY == 0) syncq_yield();
  }
  return NULL;
}

static void test_funnels_batch(void **state) {
  (void)state;
  RQ *q = lr_new(4);
  if (q == NULL) skip();
  _Atomic(long) empties, errors, disorder;
  atomic_init(&empties, 0);
  atomic_init(&errors, 0);
  atomic_init(&disorder, 0);
  size_t n = (size_t)AF_THREADS * AF_ITERS;
  _Atomic(uint64_t) *seen = calloc(n, sizeof *seen);
  assert_non_null(seen);
  assert_int_equal(RQ_ENQUEUE(q, (void *)(uintptr_t)8), SYNCQ_OK); /* the prefill: number 0 */
  af_run runs[AF_THREADS];
  pthread_t tids[AF_THREADS];
  atomic_store(&syncq_aggfunnel_test_members__, 0);
  atomic_store(&syncq_aggfunnel_test_widen__, true);
  for (int i = 0; i < AF_THREADS; i++) {
    runs[i] = (af_run){q, i, (uint64_t *)seen, &empties, &errors, &disorder};
    assert_int_equal(pthread_create(&tids[i], NULL, af_thread, &runs[i]), 0);
  }
  for (int i = 0; i < AF_THREADS; i++) pthread_join(tids[i], NULL);
  atomic_store(&syncq_aggfunnel_test_widen__, false);
  uint64_t members = atomic_load(&syncq_aggfunnel_test_members__);
  void *x;
  long left = 0;
  while (RQ_DEQUEUE(q, &x) == SYNCQ_OK) left++;
  print_message("%s, 4-cell ring, %d threads x %d enqueue+dequeue: %llu rings linked, %llu tickets from batches\n",
                RQ_NAME, AF_THREADS, AF_ITERS, (unsigned long long)RQ_LINKED(q), (unsigned long long)members);
  lr_free(q);
  assert_int_equal(atomic_load(&errors), 0);
  assert_int_equal(atomic_load(&empties), 0);
  assert_int_equal(atomic_load(&disorder), 0);
  assert_int_equal(left, 1); /* the prefill, or one item in its place */
  long missing = 0, twice = 0;
  for (size_t k = 0; k < n; k++) {
    uint64_t c = atomic_load(&seen[k]);
    missing += c == 0;
    twice += c > 1;
  }
  /* the one item left in the queue is the only one not seen */
  assert_true(missing <= 1);
  assert_int_equal(twice, 0);
  assert_true(members > 0); /* the batches' members' path ran */
  free(seen);
}

static void test_af_init(void **state) {
  (void)state;
  assert_int_equal(RQ_AF_INIT(NULL, 0), SYNCQ_EINVAL);
  RQ *q = syncq_alloc_aligned(2 * sizeof(RQ), _Alignof(RQ));
  assert_non_null(q);
  assert_int_equal(RQ_AF_INIT((RQ *)((char *)q + 8), 0), SYNCQ_EINVAL); /* misaligned */
  int r = RQ_AF_INIT(q, 100);
  if (r == SYNCQ_ENOTSUP) {
    free(q);
    skip();
  }
  assert_int_equal(r, SYNCQ_OK);
  assert_int_equal(q->ring_size, 128); /* the hint rounded up */
  assert_int_equal(q->funnels, 1);
  void *x;
  assert_int_equal(RQ_ENQUEUE(q, lr_item(7)), SYNCQ_OK);
  assert_int_equal(RQ_DEQUEUE(q, &x), SYNCQ_OK);
  assert_ptr_equal(x, lr_item(7));
  assert_int_equal(RQ_DEQUEUE(q, &x), SYNCQ_EMPTY);
  assert_int_equal(RQ_DESTROY(q), SYNCQ_OK);
  free(q);
  syncq_queue *g = NULL; /* through the registry */
  assert_int_equal(syncq_queue_create(RQ_AF_NAME, 16, &g), SYNCQ_OK);
  assert_int_equal(syncq_queue_enqueue(g, lr_item(9)), SYNCQ_OK);
  assert_int_equal(syncq_queue_dequeue(g, &x), SYNCQ_OK);
  assert_ptr_equal(x, lr_item(9));
  assert_int_equal(syncq_queue_destroy(g), SYNCQ_OK);
}

#define RINGS_AF_TESTS cmocka_unit_test(test_funnels_batch), cmocka_unit_test(test_af_init)
