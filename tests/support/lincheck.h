/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lincheck.h — linearizability checking of short recorded histories.
 *
 * Wing & Gong's search (1993) with memoization of visited (linearized set,
 * abstract state) configurations, as in Lowe's "Testing for
 * linearizability" (2017): an operation may be linearized next when it was
 * called before every not-yet-linearized operation returned; the search
 * applies it to a sequential specification and backtracks on a mismatch.
 * Histories are short (at most LC_MAX_OPS operations: a few threads, a few
 * operations each) and checked by the thousand.
 *
 * Recording: every thread stamps its operations with lc_tick() on one
 * shared lc_clock just before calling and just after returning, into its
 * own lc_op slots (no sharing). A logical clock taken from one
 * fetch-and-add is enough: if A returned before B was called in real time,
 * A.ret < B.call.
 *
 * A specification is a small fixed-size state (compared byte-wise, so it
 * must be kept canonical: unused bytes zero) and an apply function that
 * runs one operation on it and says whether the recorded result is what
 * the sequential object would have returned.
 */
#ifndef SYNCQ_TEST_LINCHECK_H
#define SYNCQ_TEST_LINCHECK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LC_MAX_OPS 64    /* operations in one history (a bit each) */
#define LC_MAX_STATE 512 /* bytes of a specification's state */

typedef struct lc_clock {
  _Atomic(uint64_t) now;
} lc_clock;

/* One recorded operation. kind, arg, ret and status are the spec's to
 * interpret (e.g. kind LC_QUEUE_ENQ with arg = the value, status SYNCQ_OK
 * or SYNCQ_FULL). */
typedef struct lc_op {
  int thread;
  int kind;
  uint64_t arg;
  uint64_t ret;
  int status;
  uint64_t call; /* lc_tick() before the call */
  uint64_t done; /* lc_tick() after the return */
} lc_op;

typedef struct lc_spec {
  const char *name;
  size_t state_size; /* <= LC_MAX_STATE */
  uint64_t param;    /* passed to init (e.g. a capacity) */
  void (*init)(void *state, uint64_t param);
  /* Apply op to state. Return true (and leave the new state) when the
   * sequential object would return exactly op's recorded status and ret;
   * false otherwise (state may be garbage then: the checker discards it). */
  bool (*apply)(void *state, const lc_op *op);
} lc_spec;

static inline void lc_clock_init(lc_clock *c) { atomic_init(&c->now, 1); }

/* A fresh timestamp: seq_cst, so stamps order as the real time they were
 * taken in. */
static inline uint64_t lc_tick(lc_clock *c) { return atomic_fetch_add(&c->now, 1); }

/* True when the n operations (n <= LC_MAX_OPS, every one completed) have a
 * linearization under spec. Returns false, and sets *error (if not NULL)
 * to a static message, for malformed input (n too large, call after
 * done, state too large). */
bool lc_check(const lc_spec *spec, const lc_op *ops, size_t n, const char **error);

/* Print a history, one operation a line, to stderr (for failure reports). */
void lc_print(const lc_op *ops, size_t n, const char *(*kind_name)(int kind));

/* ---- specifications the drivers share ---- */

/* FIFO queue of values; capacity 0 means unbounded (up to LC_SPEC_SLOTS).
 * LC_QUEUE_ENQ: arg = value; status SYNCQ_OK or SYNCQ_FULL.
 * LC_QUEUE_DEQ: status SYNCQ_OK with ret = value, or SYNCQ_EMPTY. */
enum { LC_QUEUE_ENQ = 1, LC_QUEUE_DEQ = 2 };
/* LIFO stack: LC_STACK_PUSH (arg), LC_STACK_POP (ret) with the same statuses. */
enum { LC_STACK_PUSH = 3, LC_STACK_POP = 4 };
#define LC_SPEC_SLOTS 48

/* Specs for a queue/stack of the given capacity (0: unbounded, that is
 * LC_SPEC_SLOTS, more than a short history can hold). */
lc_spec lc_spec_queue(unsigned capacity);
lc_spec lc_spec_stack(unsigned capacity);
const char *lc_kind_name(int kind);

#endif
