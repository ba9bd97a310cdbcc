/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * check.h — the properties every queue and stack driver in models/genmc
 * asserts, over one fixed workload:
 *
 *   thread A   puts 1, then 2           (stack drivers: then takes once)
 *   thread B   puts 3                   (only with CHECK_THREAD_B)
 *   thread C   takes CHECK_C_TAKES times (2 unless the driver says;
 *              one attempt each; EMPTY is an answer)
 *   main       after joining them, takes until EMPTY
 *
 * Items are the small integers 1..3 (as pointers where the structure
 * holds pointers). Checked in every execution GenMC explores: each item
 * that was put comes out exactly once (no loss, no duplicate) and
 * nothing else comes out; queues: 1 comes out before 2 (FIFO of one
 * producer); stacks: see treiber.c.
 */
#ifndef SYNCQ_GENMC_CHECK_H
#define SYNCQ_GENMC_CHECK_H

#include <assert.h>
#include <stdint.h>

#define CHECK_ITEMS 3
#ifndef CHECK_C_TAKES
#define CHECK_C_TAKES 2
#endif
#define CHECK_MAX_OUT 8

/* Written by one thread each; read by main after the joins (plain). */
static int check_put_ok[CHECK_ITEMS + 1]; /* item -> its put succeeded */
static uint64_t check_out[CHECK_MAX_OUT]; /* items in the order taken: C's, then A's (stacks), then main's */
static int check_nout;
static uint64_t check_c_got[2]; /* thread C's takes (0: EMPTY) */
static uint64_t check_a_got;    /* thread A's take (stacks; 0: EMPTY) */

static inline void check_record(uint64_t item) {
  assert(check_nout < CHECK_MAX_OUT);
  check_out[check_nout++] = item;
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

/* Position of item v in check_out, or -1. */
static inline int check_pos(uint64_t v) {
  for (int i = 0; i < check_nout; i++)
    if (check_out[i] == v) return i;
  return -1;
}

/* The threads of the workload: A and C, and B with CHECK_THREAD_B. */
#ifdef CHECK_THREAD_B
#define CHECK_RUN(a, b, c)                    \
  do {                                        \
    void *(*fn_[])(void *) = {(a), (b), (c)}; \
    genmc_run(fn_, 3);                        \
  } while (0)
#else
#define CHECK_RUN(a, b, c)               \
  do {                                   \
    void *(*fn_[])(void *) = {(a), (c)}; \
    (void)(b);                           \
    genmc_run(fn_, 2);                   \
  } while (0)
#endif

#endif
