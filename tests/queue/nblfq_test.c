/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nblfq_test.c — NBLFQ's own tests:
 *   - operations from a signal handler that interrupts the same thread in
 *     the middle of an operation on the same queue: deterministically (a
 *     hook raises the signal between the chase and the CAS) and
 *     asynchronously (another thread sends signals at random times): no
 *     deadlock, no loss, no duplicate;
 *   - counter wrap-around with a 3-bit tag (W = 8): a thread is paused
 *     between its two reads, or between its reads and its CAS, while the
 *     main thread turns the ring over 1..15 times; the paused operation
 *     must complete correctly, and ambiguous comparisons must be retried
 *     and counted, never abort;
 *   - 004 §V's invariant (both properties) checked on the quiescent ring
 *     after stress, for the 16-bit, 3-bit and double-width instantiations;
 *   - a shared header whose mask and magic were forged together refused.
 *
 * The algorithm is instantiated here from syncq/static/queue/nblfq.h (the
 * same code the library's "nblfq" and "nblfq2" compile) with its named
 * delay points compiled in and a 3-bit tag; the asynchronous signal test
 * uses the library's typed API.
 */
#define SYNCQ_STATS 1 /* count in this file's instantiation too */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <unistd.h>
#include <cmocka.h>

#include "bounded_call.h"
#include "test_plan.h"

#include "syncq/platform.h"
#include "syncq/queue/nblfq2.h"
#include "syncq/stats.h"

/* ---- the delay points: pause (semaphores) or raise a signal, when armed for this thread */
enum { HOOK_NONE, HOOK_PAUSE_CHASE, HOOK_PAUSE_CAS, HOOK_RAISE_CAS, HOOK_PAUSE_TORN };
static _Thread_local int hook_armed = HOOK_NONE;
static sem_t paused, resume;

static void hook(int where) {
  if (hook_armed != where) return;
  hook_armed = HOOK_NONE; /* once */
  if (where == HOOK_RAISE_CAS) {
    raise(SIGUSR1);
  } else {
    sem_post(&paused);
    while (sem_wait(&resume) != 0) {
    }
  }
}

/* The algorithm's SYNCQ_RACE_POINTs: "queue.nblfq.chase" between the two
 * cell reads of a chase step, "queue.nblfq.commit" before the commit CAS. */
static _Thread_local uint64_t points_passed; /* race points this thread passed, but "torn" */
static _Thread_local uint64_t torn_passed;   /* "queue.nblfq.torn": double-width enqueues' first steps */
static void point(const char *name) {
  if (strcmp(name, "queue.nblfq.torn") == 0) {
    torn_passed++;
    hook(HOOK_PAUSE_TORN);
    return;
  }
  points_passed++;
  if (hook_armed == HOOK_NONE) return; /* the common case, without a strcmp */
  if (strcmp(name, "queue.nblfq.chase") == 0) {
    hook(HOOK_PAUSE_CHASE);
  } else if (strcmp(name, "queue.nblfq.commit") == 0) {
    hook(HOOK_PAUSE_CAS);
    hook(HOOK_RAISE_CAS);
  }
}
#define SYNCQ_RACE_POINT(name) point(name)
#include "nblfq_invariant.h"
#include "syncq/static/queue/nblfq.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

#if SANITIZED
#define STRESS_ITEMS 3000
#define SIGNAL_ITEMS 3000
#define SIGNALS 2000
#else
#define SIGNALS 20000
#define STRESS_ITEMS 30000
#define SIGNAL_ITEMS 40000
#endif
#define OVERSUBSCRIPTION TEST_PLAN_OVERSUBSCRIPTION /* on the confined PUs (test_plan.h) */

/* A test ring: cells of either width, with its hints. */
typedef struct ring {
  _Atomic(uint64_t) head, tail;
  uint64_t mask;
  unsigned tag_bits;
  void *cells;
} ring;

static void ring_init(ring *r, uint64_t S, unsigned tag_bits) {
  atomic_init(&r->head, 0);
  atomic_init(&r->tail, 0);
  r->mask = S - 1;
  r->tag_bits = tag_bits;
  r->cells = syncq_alloc_aligned(S * (tag_bits >= 64 ? 16 : 8), 64);
  assert_non_null(r->cells);
  if (tag_bits >= 64) syncq_nbl_init_cells(r->cells, S, 64);
  else syncq_nbl_init_cells(r->cells, S, tag_bits);
}

/* The constant tag widths this file instantiates (each call site inlines). */
static int ring_enq(ring *r, uint64_t v) {
  switch (r->tag_bits) {
  case 3:
    return syncq_nbl_enqueue(r->cells, r->mask, &r->head, v, 3);
  case 16:
    return syncq_nbl_enqueue(r->cells, r->mask, &r->head, v, 16);
  default:
    return syncq_nbl_enqueue(r->cells, r->mask, &r->head, v, 64);
  }
}
static int ring_deq(ring *r, uint64_t *v) {
  switch (r->tag_bits) {
  case 3:
    return syncq_nbl_dequeue(r->cells, r->mask, &r->tail, v, 3);
  case 16:
    return syncq_nbl_dequeue(r->cells, r->mask, &r->tail, v, 16);
  default:
    return syncq_nbl_dequeue(r->cells, r->mask, &r->tail, v, 64);
  }
}
static int64_t ring_check(ring *r) {
  switch (r->tag_bits) {
  case 3:
    return nblfq_check_invariant(r->cells, r->mask, 3);
  case 16:
    return nblfq_check_invariant(r->cells, r->mask, 16);
  default:
    return nblfq_check_invariant(r->cells, r->mask, 64);
  }
}

/* ------------------------------------------------------------- invariant */

typedef struct stress {
  ring *r;
  int id, n;
  long per_thread;
  _Atomic(long) *balance; /* enqueued - dequeued, over all threads */
  _Atomic(int) *errors;
} stress;

static void *mixed_worker(void *p) {
  stress *s = p;
  uint64_t seed = 0x2545F4914F6CDD1Dull * (uint64_t)(s->id + 1);
  for (long i = 0; i < s->per_thread; i++) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    if (seed % 2) {
      int rc = ring_enq(s->r, (uint64_t)(s->id + 1) << 24 | (uint64_t)(i & 0xffffff));
      if (rc == SYNCQ_OK) atomic_fetch_add(s->balance, 1);
      else if (rc != SYNCQ_FULL) atomic_fetch_add(s->errors, 1);
    } else {
      uint64_t v;
      int rc = ring_deq(s->r, &v);
      if (rc == SYNCQ_OK) atomic_fetch_add(s->balance, -1);
      else if (rc != SYNCQ_EMPTY) atomic_fetch_add(s->errors, 1);
    }
    if (seed % 53 == 0) syncq_yield();
  }
  return NULL;
}

static void check_invariant_after_stress(unsigned tag_bits, uint64_t S) {
  if (tag_bits >= 64 && !syncq_pr_dwcas_available()) {
    print_message("double-width instantiation skipped: no double-width CAS on this machine\n");
    return;
  }
  ring r;
  ring_init(&r, S, tag_bits);
  int n = test_plan_oversubscribed(OVERSUBSCRIPTION);
  _Atomic(long) balance = 0;
  _Atomic(int) errors = 0;
  pthread_t tids[TEST_PLAN_MAX_THREADS];
  stress st[TEST_PLAN_MAX_THREADS];
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < n; i++) {
      st[i] = (stress){&r, i, n, STRESS_ITEMS / n * 4, &balance, &errors};
      assert_int_equal(pthread_create(&tids[i], NULL, mixed_worker, &st[i]), 0);
    }
    for (int i = 0; i < n; i++) pthread_join(tids[i], NULL);
    assert_int_equal(atomic_load(&errors), 0);
    /* quiescent: both properties of the invariant, and the item count */
    int64_t items = ring_check(&r);
    if (items < 0)
      fail_msg("tag_bits %u, S %llu, round %d: invariant property %d violated", tag_bits, (unsigned long long)S, round,
               (int)-items);
    assert_int_equal(items, atomic_load(&balance));
  }
  /* drain: exactly `balance` items, then empty, invariant still holding */
  uint64_t v;
  for (long i = atomic_load(&balance); i > 0; i--) assert_int_equal(ring_deq(&r, &v), SYNCQ_OK);
  assert_int_equal(ring_deq(&r, &v), SYNCQ_EMPTY);
  assert_int_equal(ring_check(&r), 0);
  free(r.cells);
}

static void test_invariant_after_stress(void **state) {
  (void)state;
  check_invariant_after_stress(16, 8);
  check_invariant_after_stress(16, 64);
  check_invariant_after_stress(64, 8);
  /* No free-running stress with a 3-bit tag: a thread preempted between its
   * read and its CAS while the ring turns a multiple of 8 times commits a
   * stale CAS (ABA), which NBLFQ's correctness argument (004 §V) excludes by
   * the tag's width; here it corrupted the ring and livelocked the test.
   * Tag wrap-around is exercised by the controlled pause tests below. */
}

static void test_invariant_checker_catches_damage(void **state) {
  (void)state;
  /* the checker itself must be able to fail: break each property by hand */
  ring r;
  ring_init(&r, 8, 16);
  for (uint64_t i = 1; i <= 3; i++) assert_int_equal(ring_enq(&r, i << 4), SYNCQ_OK);
  assert_int_equal(ring_check(&r), 3);
  _Atomic(uint64_t) *cells = r.cells;
  atomic_store(&cells[5], (uint64_t)0x50); /* an item after a gap: property 2 */
  assert_int_equal(ring_check(&r), -2);
  atomic_store(&cells[5], (uint64_t)3 << SYNCQ_NBL_PTR_BITS); /* a counter out of step: property 1 */
  assert_int_equal(ring_check(&r), -1);
  free(r.cells);
}

/* ------------------------------------------------------------- one thread */

/* One thread on rings of S = 2, 4, 8 cells with 3-, 16- and 64-bit
 * counters, through every position of the ring and, with the 3-bit tag,
 * through several wraps of every cell's counter: enqueue/dequeue pairs
 * (the hint right, the queue empty between them), then fills of 1..S
 * items and their drains (FULL at S, EMPTY after), then a hint set
 * behind before each operation (the chase walks). The inline first step
 * (syncq_nbl_put_first, syncq_nbl_take_first) computes its expected
 * counter from p alone (p.ctr - [p empty] + [h == 0], and u.ctr + [t !=
 * 0] against p.ctr for a dequeue, mod W): every answer and item must be
 * FIFO's, the hints where the operations left them, the ring consistent,
 * and no operation of one thread may lose a CAS or restart. With the
 * hint right, an operation is one step: its race points are one chase
 * step, the commit and the committed write (FULL, EMPTY: the chase step
 * only);
 * a first step that misjudged the counters would hand over to the
 * general path, which reads the cells again (another chase point). The
 * double-width enqueue's two-load read of u passes its own point once. */
static void one_step(ring *r, bool dequeue, uint64_t want, int status) {
  uint64_t before = points_passed, torn_before = torn_passed, v = 0;
  assert_int_equal(dequeue ? ring_deq(r, &v) : ring_enq(r, want), status);
  if (dequeue && status == SYNCQ_OK) assert_int_equal(v, want);
  assert_int_equal(points_passed - before, status == SYNCQ_OK ? 3 : 1);
  /* and a double-width enqueue's first step reads its u once, in two loads */
  assert_int_equal(torn_passed - torn_before, !dequeue && r->tag_bits >= 64);
}

static void one_thread_ring(uint64_t S, unsigned tag_bits) {
  ring r;
  ring_init(&r, S, tag_bits);
  const uint64_t rounds = 3 * 8 * S; /* 3-bit counters wrap 3 times per cell */
  uint64_t in = 0, out = 0, ops = 0, v;
  syncq_stats_reset();
  for (uint64_t k = 0; k < rounds; k++) { /* pairs */
    one_step(&r, false, (++in) << 4, SYNCQ_OK);
    assert_int_equal(atomic_load(&r.head), in & r.mask);
    one_step(&r, true, (++out) << 4, SYNCQ_OK);
    assert_int_equal(atomic_load(&r.tail), out & r.mask);
    one_step(&r, true, 0, SYNCQ_EMPTY);
    ops += 2;
  }
  for (uint64_t k = 0; k < rounds; k++) { /* fill n = 1..S, drain */
    uint64_t n = 1 + k % S;
    for (uint64_t i = 0; i < n; i++, ops++) one_step(&r, false, (++in) << 4, SYNCQ_OK);
    if (n == S) one_step(&r, false, UINT64_C(1) << 4, SYNCQ_FULL);
    for (uint64_t i = 0; i < n; i++, ops++) one_step(&r, true, (++out) << 4, SYNCQ_OK);
    one_step(&r, true, 0, SYNCQ_EMPTY);
    assert_int_equal(atomic_load(&r.tail), out & r.mask);
  }
  syncq_stats st = *syncq_stats_self();
  assert_int_equal(st.cas_attempts, ops);
  assert_int_equal(st.cas_failures, 0);
  assert_int_equal(st.retries, 0);
  assert_int_equal(ring_check(&r), 0);
  for (uint64_t k = 0; k < rounds; k++) { /* hints behind: the chase walks */
    uint64_t n = 1 + k % (S - 1);         /* items in the ring, < S */
    for (uint64_t i = 0; i < n; i++) {
      atomic_store(&r.head, (in - i) & r.mask); /* up to n - 1 cells behind */
      assert_int_equal(ring_enq(&r, (++in) << 4), SYNCQ_OK);
    }
    for (uint64_t i = 0; i < n; i++) {
      atomic_store(&r.tail, (out - i % 2) & r.mask); /* on the cell before the tail, or right */
      assert_int_equal(ring_deq(&r, &v), SYNCQ_OK);
      assert_int_equal(v, (++out) << 4);
    }
    assert_int_equal(ring_deq(&r, &v), SYNCQ_EMPTY);
  }
  assert_int_equal(syncq_stats_self()->cas_failures, 0);
  assert_int_equal(ring_check(&r), 0);
  free(r.cells);
}

static void test_one_thread_every_position(void **state) {
  (void)state;
  static const unsigned tags[] = {3, 16, 64};
  for (size_t t = 0; t < sizeof tags / sizeof tags[0]; t++)
    for (uint64_t S = 2; S <= 8; S *= 2) one_thread_ring(S, tags[t]);
}

/* ------------------------------------------------------------- 3-bit wrap-around */

typedef struct paused_op {
  ring *r;
  int where;
  bool dequeue;
  uint64_t value; /* enqueue: what; dequeue: what came out */
  int status;
  syncq_stats stats;
} paused_op;

static void *paused_thread(void *p) {
  paused_op *op = p;
  syncq_stats_reset();
  hook_armed = op->where;
  if (op->dequeue) op->status = ring_deq(op->r, &op->value);
  else op->status = ring_enq(op->r, op->value);
  hook_armed = HOOK_NONE;
  op->stats = *syncq_stats_self();
  return NULL;
}

/* One scenario: S = 4, W = 8. The ring holds `fill` items; a thread starts
 * an enqueue or a dequeue and is paused at `where`; the main thread makes
 * `turns` full turns of the ring (S enqueue/dequeue pairs each, so every
 * cell's counter moves on by `turns`); the thread resumes. The whole
 * sequence of values must come out in FIFO order, nothing lost or
 * duplicated. Returns the paused thread's retries + CAS failures. */
static uint64_t wrap_scenario(int where, bool dequeue, unsigned fill, unsigned turns) {
  const uint64_t S = 4;
  ring r;
  ring_init(&r, S, 3);
  uint64_t next_in = 1, next_out = 1;
  for (unsigned i = 0; i < fill; i++) assert_int_equal(ring_enq(&r, (next_in++) << 4), SYNCQ_OK);
  paused_op op = {&r, where, dequeue, dequeue ? 0 : (UINT64_C(1000) << 4), -100, {0}};
  pthread_t tid;
  assert_int_equal(pthread_create(&tid, NULL, paused_thread, &op), 0);
  while (sem_wait(&paused) != 0) {
  }
  /* the ring turns over while the thread is paused mid-operation */
  uint64_t v;
  for (unsigned k = 0; k < turns * S; k++) {
    assert_int_equal(ring_enq(&r, (next_in++) << 4), SYNCQ_OK);
    assert_int_equal(ring_deq(&r, &v), SYNCQ_OK);
    assert_int_equal(v, (next_out++) << 4);
  }
  sem_post(&resume);
  pthread_join(tid, NULL);
  assert_int_equal(op.status, SYNCQ_OK);
  if (dequeue) {
    /* linearized after every operation of the main thread: the oldest item */
    assert_int_equal(op.value, (next_out++) << 4);
  }
  assert_true(ring_check(&r) >= 0);
  while (next_out < next_in) {
    assert_int_equal(ring_deq(&r, &v), SYNCQ_OK);
    assert_int_equal(v, (next_out++) << 4);
  }
  if (!dequeue) { /* the paused enqueue landed last */
    assert_int_equal(ring_deq(&r, &v), SYNCQ_OK);
    assert_int_equal(v, UINT64_C(1000) << 4);
  }
  assert_int_equal(ring_deq(&r, &v), SYNCQ_EMPTY);
  assert_int_equal(ring_check(&r), 0);
  free(r.cells);
  return op.stats.retries + op.stats.cas_failures;
}

/* NBLFQ2's enqueue reads the cell at the hint as counter, then pointer,
 * with nothing to prove the pair was in memory (src/queue/nblfq2.c).
 * A thread paused between the two loads at cell 0 of an empty ring
 * (S = 4) while the main thread makes `pairs` enqueue/dequeue pairs reads
 * (NIL, 0), which cell 0 no longer holds (it is (NIL, 1)). While cell 3,
 * p, is untouched (pairs < 4), p says (NIL, 0) is the cell to fill: the
 * step commits and its CAS loses, once, and the general path puts the
 * item after the others; from 4 pairs on, p's counter moved too and the
 * step does not commit. Either way the item comes out once, last. */
static void test_torn_enqueue_read(void **state) {
  (void)state;
  if (!syncq_pr_dwcas_available()) {
    print_message("skipped: no double-width CAS on this machine\n");
    return;
  }
  const uint64_t S = 4;
  for (unsigned pairs = 1; pairs <= 5; pairs++) {
    ring r;
    ring_init(&r, S, 64);
    paused_op op = {&r, HOOK_PAUSE_TORN, false, UINT64_C(1000) << 4, -100, {0}};
    pthread_t tid;
    assert_int_equal(pthread_create(&tid, NULL, paused_thread, &op), 0);
    while (sem_wait(&paused) != 0) {
    }
    uint64_t v;
    for (unsigned k = 1; k <= pairs; k++) {
      assert_int_equal(ring_enq(&r, (uint64_t)k << 4), SYNCQ_OK);
      assert_int_equal(ring_deq(&r, &v), SYNCQ_OK);
      assert_int_equal(v, (uint64_t)k << 4);
    }
    sem_post(&resume);
    pthread_join(tid, NULL);
    assert_int_equal(op.status, SYNCQ_OK);
    if (op.stats.cas_failures != (pairs < S ? 1u : 0u))
      fail_msg("%u pairs: %llu lost CAS, want %u", pairs, (unsigned long long)op.stats.cas_failures, pairs < S);
    assert_int_equal(ring_check(&r), 1);
    assert_int_equal(ring_deq(&r, &v), SYNCQ_OK);
    assert_int_equal(v, UINT64_C(1000) << 4);
    assert_int_equal(ring_deq(&r, &v), SYNCQ_EMPTY);
    assert_int_equal(ring_check(&r), 0);
    free(r.cells);
  }
}

static void test_three_bit_wraparound(void **state) {
  (void)state;
  sem_init(&paused, 0, 0);
  sem_init(&resume, 0, 0);
  uint64_t ambiguous = 0, restarts = 0;
  for (unsigned turns = 1; turns <= 15; turns++) {
    for (unsigned fill = 1; fill <= 3; fill++) {
      /* dequeue paused between its two reads: the stale first read is
       * 'turns' rounds behind the second, ambiguous for most turns */
      uint64_t a = wrap_scenario(HOOK_PAUSE_CHASE, true, fill, turns);
      ambiguous += a;
      /* dequeue paused between its reads and its CAS: values are unique,
       * so the CAS fails whatever the counters say */
      restarts += wrap_scenario(HOOK_PAUSE_CAS, true, fill, turns);
      /* enqueue paused between its reads; and before its CAS, except after
       * a multiple of W turns, where the cell it read is back to the same
       * (NIL, counter) pair: that is the ABA 004 §V-A b) accepts for a
       * 16-bit tag (2^16 turns) and the reason NBLFQ2 exists */
      ambiguous += wrap_scenario(HOOK_PAUSE_CHASE, false, fill - 1, turns);
      if (turns % 8 != 0) restarts += wrap_scenario(HOOK_PAUSE_CAS, false, fill - 1, turns);
    }
  }
  print_message("3-bit tag: %llu restarts after a paused read, %llu after a paused CAS\n",
                (unsigned long long)ambiguous, (unsigned long long)restarts);
  /* counted, not aborted: restarts did happen and were all survived */
  assert_true(ambiguous > 0);
  assert_true(restarts > 0);
  sem_destroy(&paused);
  sem_destroy(&resume);
}

static void test_ambiguous_comparison(void **state) {
  (void)state;
  /* COMP on neighbours whose counters differ by W/2 (or anything but 0 and
   * +-1) cannot order them: -1, never a guess */
  syncq_nbl_cell u = {0, 0}, v = {0, 4};
  assert_int_equal(syncq_nbl_comp(0, u, 1, v, 3), -1);
  v.ctr = 1;
  assert_int_equal(syncq_nbl_comp(0, u, 1, v, 3), 1);
  v.ctr = 7; /* -1 mod 8 */
  assert_int_equal(syncq_nbl_comp(0, u, 1, v, 3), 0);
  v.ctr = 0;
  assert_int_equal(syncq_nbl_comp(0, u, 1, v, 3), 1);
  assert_int_equal(syncq_nbl_comp(1, u, 0, v, 3), 0);
  /* 64-bit counters: wrap of the difference still works */
  u.ctr = UINT64_MAX;
  v.ctr = 0;
  assert_int_equal(syncq_nbl_comp(0, u, 1, v, 64), 1);
}

/* ------------------------------------------------------------- signals */

static ring sig_ring;
static _Atomic(uint64_t) sig_handled;
static _Atomic(uint64_t) sig_taken[64]; /* values the handler dequeued (ring of 64) */
static _Atomic(unsigned) sig_taken_n;

/* The handler enqueues one item of its own and dequeues one item, on the
 * very queue the interrupted code is in the middle of using. */
static void on_sigusr1(int sig) {
  (void)sig;
  uint64_t n = atomic_fetch_add(&sig_handled, 1);
  int rc = ring_enq(&sig_ring, (UINT64_C(0x7000000) + n) << 4);
  (void)rc;
  uint64_t v;
  if (ring_deq(&sig_ring, &v) == SYNCQ_OK) {
    unsigned k = atomic_fetch_add(&sig_taken_n, 1);
    if (k < 64) atomic_store(&sig_taken[k], v);
  }
}

static void test_signal_mid_operation(void **state) {
  (void)state;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigusr1;
  sigemptyset(&sa.sa_mask);
  assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
  ring_init(&sig_ring, 8, 16);
  atomic_store(&sig_handled, 0);
  atomic_store(&sig_taken_n, 0);
  /* Interrupt an enqueue and a dequeue right between their reads and their
   * CAS: the handler's operations change the very cells they read. */
  uint64_t v;
  assert_int_equal(ring_enq(&sig_ring, 1 << 4), SYNCQ_OK);
  assert_int_equal(ring_enq(&sig_ring, 2 << 4), SYNCQ_OK);
  hook_armed = HOOK_RAISE_CAS;
  assert_int_equal(ring_enq(&sig_ring, 3 << 4), SYNCQ_OK); /* handler: enq H0, deq 1 */
  assert_int_equal(atomic_load(&sig_handled), 1);
  assert_int_equal(atomic_load(&sig_taken[0]), 1 << 4);
  hook_armed = HOOK_RAISE_CAS;
  assert_int_equal(ring_deq(&sig_ring, &v), SYNCQ_OK); /* handler: enq H1, deq 2 (the one we had read) */
  assert_int_equal(atomic_load(&sig_handled), 2);
  assert_int_equal(atomic_load(&sig_taken[1]), 2 << 4);
  /* FIFO across the interruptions: H0 (enqueued before 3's CAS), 3, then H1 */
  assert_int_equal(v, (UINT64_C(0x7000000) + 0) << 4);
  assert_int_equal(ring_deq(&sig_ring, &v), SYNCQ_OK);
  assert_int_equal(v, 3 << 4);
  assert_int_equal(ring_deq(&sig_ring, &v), SYNCQ_OK);
  assert_int_equal(v, (UINT64_C(0x7000000) + 1) << 4);
  assert_int_equal(ring_deq(&sig_ring, &v), SYNCQ_EMPTY);
  assert_int_equal(ring_check(&sig_ring), 0);
  /* interrupting an operation on a full queue and on an empty one */
  for (uint64_t i = 1; i <= 8; i++) assert_int_equal(ring_enq(&sig_ring, (100 + i) << 4), SYNCQ_OK);
  hook_armed = HOOK_RAISE_CAS;
  assert_int_equal(ring_deq(&sig_ring, &v), SYNCQ_OK); /* handler: enq FULL, deq 101 */
  assert_int_equal(v, 102 << 4);
  free(sig_ring.cells);
}

/* Asynchronous: a thread hammers the library's NBLFQ (enqueue/dequeue of
 * its own items) while another thread sends it SIGUSR2 at random times; the
 * handler enqueues and dequeues on the same queue. Afterwards every item
 * ever enqueued was dequeued exactly once, by the loop or by a handler. */
static SYNCQ_CACHELINE_ALIGNED unsigned char async_buf[SYNCQ_QUEUE_NBLFQ_BYTES(16)];
static syncq_queue_nblfq *async_q;
#define ASYNC_HANDLER_BASE 0x100000u
static uint32_t *async_seen; /* index = value; counts */
static _Atomic(uint32_t) async_handler_n;
static _Atomic(int) async_stop;
static _Atomic(int) async_bad;

static void note_value(void *x) {
  uintptr_t v = (uintptr_t)x >> 4;
  if (v == 0 || v >= 2 * ASYNC_HANDLER_BASE) {
    atomic_store(&async_bad, 1);
    return;
  }
  /* atomic: a handler and the loop may both count; relaxed: the totals are
   * read after pthread_join, which orders them. */
  __atomic_fetch_add(&async_seen[v], 1, __ATOMIC_RELAXED);
}

static void on_sigusr2(int sig) {
  (void)sig;
  uint32_t n = atomic_fetch_add(&async_handler_n, 1);
  if (n < ASYNC_HANDLER_BASE - 1) {
    int rc;
    while ((rc = syncq_queue_nblfq_enqueue(async_q, (void *)(uintptr_t)((ASYNC_HANDLER_BASE + n + 1) << 4))) ==
           SYNCQ_FULL) {
      void *x; /* full: make room ourselves, never wait for the interrupted code */
      if (syncq_queue_nblfq_dequeue(async_q, &x) == SYNCQ_OK) note_value(x);
    }
  }
  void *x;
  if (syncq_queue_nblfq_dequeue(async_q, &x) == SYNCQ_OK) note_value(x);
}

static _Atomic(uint32_t) async_items; /* how many the loop enqueued */

static void *async_target(void *p) {
  (void)p;
  uint32_t i;
  for (i = 1; i < ASYNC_HANDLER_BASE && (i <= SIGNAL_ITEMS || !atomic_load(&async_stop)); i++) {
    while (syncq_queue_nblfq_enqueue(async_q, (void *)(uintptr_t)(i << 4)) == SYNCQ_FULL) {
      void *x;
      if (syncq_queue_nblfq_dequeue(async_q, &x) == SYNCQ_OK) note_value(x);
    }
    if (i % 3 == 0) {
      void *x;
      if (syncq_queue_nblfq_dequeue(async_q, &x) == SYNCQ_OK) note_value(x);
    }
  }
  atomic_store(&async_items, i - 1);
  return NULL;
}

static void test_signal_async(void **state) {
  (void)state;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigusr2;
  sigemptyset(&sa.sa_mask);
  assert_int_equal(sigaction(SIGUSR2, &sa, NULL), 0);
  async_q = (syncq_queue_nblfq *)(void *)async_buf;
  assert_int_equal(syncq_queue_nblfq_init(async_q, 16), SYNCQ_OK);
  async_seen = calloc(2 * ASYNC_HANDLER_BASE, sizeof *async_seen);
  assert_non_null(async_seen);
  atomic_store(&async_stop, 0);
  atomic_store(&async_handler_n, 0);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, async_target, NULL), 0);
  unsigned sent = 0;
  for (; sent < SIGNALS; sent++) { /* at irregular times */
    assert_int_equal(pthread_kill(t, SIGUSR2), 0);
    for (volatile int k = 0; k < (int)(sent * 7919 % 3000); k++) {
    }
    if (sent % 7 == 0) syncq_yield();
  }
  atomic_store(&async_stop, 1);
  pthread_join(t, NULL);
  /* drain what is left */
  void *x;
  while (syncq_queue_nblfq_dequeue(async_q, &x) == SYNCQ_OK) note_value(x);
  assert_int_equal(atomic_load(&async_bad), 0);
  uint32_t handlers = atomic_load(&async_handler_n);
  print_message("signals: %u sent, %u handled mid-run\n", sent, handlers);
  assert_true(handlers > 0);
  uint32_t items = atomic_load(&async_items);
  print_message("signals: %u items through the loop\n", items);
  assert_true(items >= SIGNAL_ITEMS);
  for (uint32_t i = 1; i <= items; i++)
    if (async_seen[i] != 1) fail_msg("item %u dequeued %u times", i, async_seen[i]);
  for (uint32_t n = 0; n < handlers && n < ASYNC_HANDLER_BASE - 1; n++)
    if (async_seen[ASYNC_HANDLER_BASE + n + 1] != 1)
      fail_msg("handler item %u dequeued %u times", n, async_seen[ASYNC_HANDLER_BASE + n + 1]);
  assert_int_equal(syncq_queue_nblfq_destroy(async_q), SYNCQ_OK);
  free(async_seen);
}

/* ------------------------------------------------------------- the header check */

/* The typed queues refuse a header whose mask and magic were forged
 * together (the magic right for a mask init cannot write): only the
 * mask's own check (syncq_nbl_mask_ok) catches it. Each call runs in a
 * child under alarm() (bounded_call.h): where that check lets a mask
 * through, the call may chase a ring of the wrong shape for ever or read
 * past the cells, and the test fails with the call and the mask named,
 * not at CTest's timeout. Once the header is put back, the queue still
 * holds its item. */
#define FORGED_LIMIT_S 10u      /* a call answers in microseconds, under sanitizers too */
#define FORGED_OUT_WRITTEN 1000 /* a refused dequeue wrote *item: no status has this value */

static int item_forged;

typedef struct forged_call {
  const char *what;
  int (*call)(void *q, void **out);
} forged_call;

static int nblfq_enq(void *q, void **out) {
  (void)out;
  return syncq_queue_nblfq_enqueue(q, &item_forged);
}
static int nblfq_deq(void *q, void **out) { return syncq_queue_nblfq_dequeue(q, out); }
static int nblfq_enq_inline(void *q, void **out) {
  (void)out;
  return syncq_queue_nblfq_enqueue_inline(q, &item_forged);
}
static int nblfq_deq_inline(void *q, void **out) { return syncq_queue_nblfq_dequeue_inline(q, out); }
static int nblfq2_enq(void *q, void **out) {
  (void)out;
  return syncq_queue_nblfq2_enqueue(q, &item_forged);
}
static int nblfq2_deq(void *q, void **out) { return syncq_queue_nblfq2_dequeue(q, out); }

typedef struct forged_arg {
  const forged_call *c;
  void *q;
} forged_arg;

/* The call, in the child bounded_call runs it in. */
static int forged_run(void *arg) {
  const forged_arg *a = arg;
  void *out = NULL;
  const int r = a->c->call(a->q, &out);
  return out != NULL ? FORGED_OUT_WRITTEN : r;
}

/* c->call(q) in a child, which must answer SYNCQ_EINVAL within
 * FORGED_LIMIT_S and leave *item alone. */
static void forged_call_refused(const forged_call *c, void *q, uint64_t mask) {
  forged_arg a = {c, q};
  char what[96];
  snprintf(what, sizeof what, "%s, forged mask %#llx", c->what, (unsigned long long)mask);
  bounded_call_expect(what, forged_run, &a, FORGED_LIMIT_S, SYNCQ_EINVAL);
}

/* Masks init cannot write, each with the magic forged to match: not S - 1,
 * past the largest size bytes() accepts (max_cells), and the all-ones
 * mask just above it. */
static void forge_each(void *q, _Atomic(uint64_t) *maskp, _Atomic(uint64_t) *magicp, uint64_t max_cells,
                       const forged_call *calls, size_t ncalls) {
  const uint64_t magic = atomic_load(magicp) ^ atomic_load(maskp); /* the constant, as init bound it to the mask */
  const uint64_t kept = atomic_load(maskp);
  const uint64_t forged[] = {0, 2, 6, UINT64_MAX, max_cells, (UINT64_C(1) << (64 - __builtin_clzll(max_cells))) - 1};
  for (size_t i = 0; i < sizeof forged / sizeof forged[0]; i++) {
    atomic_store(maskp, forged[i]);
    atomic_store(magicp, magic ^ forged[i]);
    for (size_t k = 0; k < ncalls; k++) forged_call_refused(&calls[k], q, forged[i]);
  }
  atomic_store(maskp, kept);
  atomic_store(magicp, magic ^ kept);
}

static void test_forged_header(void **state) {
  (void)state;
  size_t bytes = 0;
  assert_int_equal(syncq_queue_nblfq_bytes(4, &bytes), SYNCQ_OK);
  syncq_queue_nblfq *q = syncq_alloc_aligned(bytes, 64);
  assert_non_null(q);
  assert_int_equal(syncq_queue_nblfq_init(q, 4), SYNCQ_OK);
  assert_int_equal(syncq_queue_nblfq_enqueue(q, &item_forged), SYNCQ_OK);
  const forged_call calls[] = {{"nblfq enqueue", nblfq_enq},
                               {"nblfq dequeue", nblfq_deq},
                               {"nblfq enqueue_inline", nblfq_enq_inline},
                               {"nblfq dequeue_inline", nblfq_deq_inline}};
  forge_each(q, &q->mask, &q->magic, SYNCQ_QUEUE_NBLFQ_MAX_CELLS, calls, sizeof calls / sizeof calls[0]);
  void *out = NULL;
  assert_int_equal(syncq_queue_nblfq_dequeue(q, &out), SYNCQ_OK); /* the header put back: the item is there */
  assert_ptr_equal(out, &item_forged);
  assert_int_equal(syncq_queue_nblfq_destroy(q), SYNCQ_OK);
  free(q);

  if (!syncq_pr_dwcas_available()) return; /* NBLFQ2's init refuses it: SYNCQ_ENOTSUP */
  assert_int_equal(syncq_queue_nblfq2_bytes(4, &bytes), SYNCQ_OK);
  syncq_queue_nblfq2 *q2 = syncq_alloc_aligned(bytes, 64);
  assert_non_null(q2);
  assert_int_equal(syncq_queue_nblfq2_init(q2, 4), SYNCQ_OK);
  assert_int_equal(syncq_queue_nblfq2_enqueue(q2, &item_forged), SYNCQ_OK);
  const forged_call calls2[] = {{"nblfq2 enqueue", nblfq2_enq}, {"nblfq2 dequeue", nblfq2_deq}};
  /* as syncq_queue_nblfq2_bytes: the cells after the header fit size_t */
  const uint64_t max2 = (uint64_t)((SIZE_MAX - sizeof(syncq_queue_nblfq2)) / sizeof(syncq_pr_dw_atomic));
  forge_each(q2, &q2->mask, &q2->magic, max2, calls2, sizeof calls2 / sizeof calls2[0]);
  out = NULL;
  assert_int_equal(syncq_queue_nblfq2_dequeue(q2, &out), SYNCQ_OK);
  assert_ptr_equal(out, &item_forged);
  assert_int_equal(syncq_queue_nblfq2_destroy(q2), SYNCQ_OK);
  free(q2);
}

int main(void) {
  test_plan_confine();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_ambiguous_comparison),      cmocka_unit_test(test_invariant_checker_catches_damage),
    cmocka_unit_test(test_invariant_after_stress),    cmocka_unit_test(test_three_bit_wraparound),
    cmocka_unit_test(test_signal_mid_operation),      cmocka_unit_test(test_signal_async),
    cmocka_unit_test(test_one_thread_every_position), cmocka_unit_test(test_forged_header),
    cmocka_unit_test(test_torn_enqueue_read),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
