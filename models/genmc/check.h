/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * check.h — the workload and the properties every queue and stack driver
 * in models/genmc runs and asserts, so a driver is its structure's setup
 * and two calls:
 *
 *   static int put(uint64_t v);    SYNCQ_OK (or SYNCQ_FULL, see below)
 *   static int take(uint64_t *v);  SYNCQ_OK or SYNCQ_EMPTY
 *
 * defined before this header, then check_workload() from main between
 * the structure's init and destroy. The workload, sized by macros a
 * driver or models/genmc/run (-D) sets:
 *
 *   thread A   puts 1, then 2 (CHECK_A_PUTS: 1 or 2, default 2), then
 *              takes once with CHECK_LIFO (stacks); with CHECK_A_MID_TAKE
 *              (queues) it takes once between its two puts instead
 *   thread B   puts 3            (only with CHECK_THREAD_B)
 *   thread D   takes once        (only with CHECK_THREAD_D: a second
 *                                 consumer)
 *   thread C   takes CHECK_C_TAKES times (0 to 2, default 2; one attempt
 *              each; EMPTY is an answer)
 *   main       after joining them, takes until EMPTY
 *
 * or, with CHECK_HANDOFF (queues), a workload whose threads wait for
 * one another (an acquire load of a flag another thread sets with
 * release; GenMC explores only the executions where the flag was set):
 *
 *   thread A   puts 1, puts 2, sets a2; waits for c1; puts 3, sets a3
 *   thread C   waits for a2; takes, sets c1; waits for a3; takes
 *   thread D   waits for a2; takes once
 *
 * Every operation must succeed, in any order of the six that keeps the
 * waits: 1 and 2 are in before either take starts, so C's first take
 * and D's each find an item (at most the other one left before it); C's
 * second take starts after the put of 3, with three in and at most two
 * out before it. The put of 3 starts after C's first take, with at most
 * one item in: a queue of capacity 2 or more has room. An EMPTY or FULL
 * answer contradicts the order the waits impose (the workload above
 * accepts one from a concurrent operation).
 *
 * Items are the small integers 1..3 (as pointers where the structure
 * holds pointers). Checked in every execution GenMC explores: each item
 * that was put comes out exactly once (no loss, no duplicate) and
 * nothing else comes out; a put answers SYNCQ_OK, or SYNCQ_FULL where
 * CHECK_MAY_BE_FULL (SCQ's pointer queue may say FULL early; the item is
 * then not expected out); a take answers SYNCQ_OK or SYNCQ_EMPTY.
 * Queues: 1 comes out before 2 (FIFO of one producer); a consumer's
 * successive takes come out in queue order, so C never gets 2 then 1.
 * Stacks (CHECK_LIFO): A's take comes after its own puts, so it gets 1
 * only if another thread took 2 first, and EMPTY only if other threads
 * took all of A's items; in main's drain (no concurrent operation) 2
 * comes out before 1 when both are still there.
 */
#ifndef SYNCQ_GENMC_CHECK_H
#define SYNCQ_GENMC_CHECK_H

#include <assert.h>
#include <stdint.h>

#define CHECK_ITEMS 3
#ifndef CHECK_A_PUTS
#define CHECK_A_PUTS 2
#endif
#ifndef CHECK_C_TAKES
#define CHECK_C_TAKES 2
#endif
#define CHECK_MAX_OUT 8

#if CHECK_A_PUTS < 1 || CHECK_A_PUTS > 2 || CHECK_C_TAKES < 0 || CHECK_C_TAKES > 2
#error "check.h: CHECK_A_PUTS is 1 or 2, CHECK_C_TAKES 0 to 2"
#endif
#if defined(CHECK_HANDOFF) && (defined(CHECK_LIFO) || defined(CHECK_A_MID_TAKE) || defined(CHECK_THREAD_B) || \
                               defined(CHECK_THREAD_D) || defined(CHECK_MAY_BE_FULL))
#error "check.h: CHECK_HANDOFF is a queue workload of its own, every answer SYNCQ_OK"
#endif
#if defined(CHECK_A_MID_TAKE) && (defined(CHECK_LIFO) || CHECK_A_PUTS != 2)
#error "check.h: CHECK_A_MID_TAKE is for queues, with CHECK_A_PUTS 2"
#endif

static int put(uint64_t v);
static int take(uint64_t *v);

/* Written by one thread each; read by main after the joins (plain). */
static int check_put_ok[CHECK_ITEMS + 1]; /* item -> its put succeeded */
static uint64_t check_out[CHECK_MAX_OUT]; /* items in the order taken: the threads', then main's */
static int check_nout;
static uint64_t check_c_got[2]; /* thread C's takes (0: EMPTY) */
static uint64_t check_d_got;    /* thread D's take (0: EMPTY) */
static uint64_t check_a_got;    /* thread A's take (stacks; 0: EMPTY) */

static inline void check_record(uint64_t item) {
  assert(check_nout < CHECK_MAX_OUT);
  check_out[check_nout++] = item;
}

/* Position of item v in check_out, or -1. */
static inline int check_pos(uint64_t v) {
  for (int i = 0; i < check_nout; i++)
    if (check_out[i] == v) return i;
  return -1;
}

static inline void check_put(uint64_t v) {
  int r = put(v);
#ifdef CHECK_MAY_BE_FULL
  assert(r == SYNCQ_OK || r == SYNCQ_FULL);
#else
  assert(r == SYNCQ_OK);
#endif
  check_put_ok[v] = r == SYNCQ_OK;
}

/* One attempt; 0 for EMPTY. */
static inline uint64_t check_take(void) {
  uint64_t v = 0;
  int r = take(&v);
  assert(r == SYNCQ_OK || r == SYNCQ_EMPTY);
  return r == SYNCQ_OK ? v : 0;
}

static void *check_thread_a(void *arg) {
  (void)arg;
  for (uint64_t v = 1; v <= CHECK_A_PUTS; v++) {
    check_put(v);
#ifdef CHECK_A_MID_TAKE
    if (v == 1) check_a_got = check_take();
#endif
  }
#ifdef CHECK_LIFO
  check_a_got = check_take();
#endif
  return NULL;
}
static void *check_thread_b(void *arg) {
  (void)arg;
  check_put(3);
  return NULL;
}
static void *check_thread_c(void *arg) {
  (void)arg;
  for (int i = 0; i < CHECK_C_TAKES; i++) check_c_got[i] = check_take();
  return NULL;
}
static void *check_thread_d(void *arg) {
  (void)arg;
  check_d_got = check_take();
  return NULL;
}

#ifdef CHECK_HANDOFF
#include <genmc.h>
#include <stdatomic.h>

/* The waits' flags: each set once (release) by one thread, awaited by
 * others (acquire): the happens-before edges the workload's property
 * rests on. */
static atomic_int check_a2, check_c1, check_a3;

/* Explore only the executions where *flag reads 1: a wait that has
 * ended (GenMC drops the others, which repeat the same load). acquire:
 * pairs with check_signal's release store, so what the setter did
 * before happens before what follows the wait. */
static inline void check_await(atomic_int *flag) {
  __VERIFIER_assume(atomic_load_explicit(flag, memory_order_acquire) == 1);
}
/* release: pairs with check_await's acquire load */
static inline void check_signal(atomic_int *flag) { atomic_store_explicit(flag, 1, memory_order_release); }

/* Every answer SYNCQ_OK (see the header). */
static inline uint64_t check_take_ok(void) {
  uint64_t v = 0;
  int r = take(&v);
  assert(r == SYNCQ_OK); /* no EMPTY: an item was there (see the header) */
  return v;
}
static void *check_handoff_a(void *arg) {
  (void)arg;
  assert(put(1) == SYNCQ_OK);
  assert(put(2) == SYNCQ_OK);
  check_put_ok[1] = check_put_ok[2] = 1;
  check_signal(&check_a2);
  check_await(&check_c1);
  assert(put(3) == SYNCQ_OK); /* no FULL: C took one of 1 and 2 */
  check_put_ok[3] = 1;
  check_signal(&check_a3);
  return NULL;
}
static void *check_handoff_c(void *arg) {
  (void)arg;
  check_await(&check_a2);
  check_c_got[0] = check_take_ok();
  check_signal(&check_c1);
  check_await(&check_a3);
  check_c_got[1] = check_take_ok();
  return NULL;
}
static void *check_handoff_d(void *arg) {
  (void)arg;
  check_await(&check_a2);
  check_d_got = check_take_ok();
  return NULL;
}
#endif

/* No loss, no duplicate, nothing invented. */
static inline void check_exactly_once(void) {
  int seen[CHECK_ITEMS + 1] = {0};
  for (int i = 0; i < check_nout; i++) {
    uint64_t v = check_out[i];
    assert(v >= 1 && v <= CHECK_ITEMS); /* nothing that was never put */
    assert(check_put_ok[v]);            /* ... nor one whose put failed */
    assert(seen[v] == 0);               /* no duplicate */
    seen[v] = 1;
  }
  for (int v = 1; v <= CHECK_ITEMS; v++) assert(!check_put_ok[v] || seen[v]); /* no loss */
}

#ifdef CHECK_LIFO
static inline int check_c_took(uint64_t v) {
  for (int i = 0; i < CHECK_C_TAKES; i++)
    if (check_c_got[i] == v) return 1;
  return check_d_got == v;
}
#endif

/* Run the workload's threads, drain, and check every property. */
static inline void check_workload(void) {
  void *(*fn[4])(void *);
  int n = 0;
#ifdef CHECK_HANDOFF
  fn[n++] = check_handoff_a;
  fn[n++] = check_handoff_c;
  fn[n++] = check_handoff_d;
  genmc_run(fn, n);
  check_record(check_c_got[0]);
  check_record(check_c_got[1]);
  check_record(check_d_got);
  uint64_t left;
  assert(take(&left) == SYNCQ_EMPTY); /* three in, three out */
  check_exactly_once();
  assert(check_c_got[0] < check_c_got[1]); /* FIFO of one producer, one consumer's takes */
#else
  fn[n++] = check_thread_a;
#ifdef CHECK_THREAD_B
  fn[n++] = check_thread_b;
#endif
  fn[n++] = check_thread_c;
#ifdef CHECK_THREAD_D
  fn[n++] = check_thread_d;
#endif
  genmc_run(fn, n);

  for (int i = 0; i < CHECK_C_TAKES; i++)
    if (check_c_got[i] != 0) check_record(check_c_got[i]);
  if (check_d_got != 0) check_record(check_d_got);
  if (check_a_got != 0) check_record(check_a_got);
  int drain_start = check_nout;
  uint64_t v;
  while (take(&v) == SYNCQ_OK) check_record(v);
  check_exactly_once();

#ifdef CHECK_LIFO
  /* A's take, after its own puts, finds its last item on top unless
   * another thread took it. */
  if (check_a_got == 0)
    for (uint64_t i = 1; i <= CHECK_A_PUTS; i++) assert(check_c_took(i));
  if (check_a_got == 1 && CHECK_A_PUTS == 2) assert(check_c_took(2));
  if (check_pos(1) >= drain_start && check_pos(2) >= drain_start) assert(check_pos(2) < check_pos(1));
#else
  /* FIFO of one producer: a take that got 2 found 1 already taken (by a
   * thread: not left for the drain), C's successive takes and the drain
   * keep the order. */
  int p1 = check_pos(1), p2 = check_pos(2);
  if (p1 >= 0 && p2 >= 0) {
    if (p2 < drain_start) assert(p1 < drain_start);
    else assert(p1 < p2);
    assert(!(check_c_got[0] == 2 && check_c_got[1] == 1));
  }
#endif
#endif /* CHECK_HANDOFF */
}

#endif
