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
}

#endif
