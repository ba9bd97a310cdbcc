/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lincheck_pqueue.h — a priority-queue specification for the shared
 * linearizability checker (lincheck.h).
 *
 * The history records values: an insert's arg is the value inserted (the
 * driver passes it as the payload and derives the key from it), a
 * delete_min's ret is the payload it returned. The key of value v is
 * v / key_divisor, so several values share a key and ties are exercised:
 * delete_min may return any value whose key is the least present.
 *
 * LC_PQ_INSERT: status SYNCQ_OK (or SYNCQ_ENOMEM only when the spec's
 * capacity is reached). LC_PQ_DELETE_MIN: SYNCQ_OK with ret = value, or
 * SYNCQ_EMPTY.
 */
#ifndef SYNCQ_TEST_LINCHECK_PQUEUE_H
#define SYNCQ_TEST_LINCHECK_PQUEUE_H

#include "lincheck.h"

enum { LC_PQ_INSERT = 5, LC_PQ_DELETE_MIN = 6 };

/* capacity 0 (or > LC_SPEC_SLOTS): LC_SPEC_SLOTS. key_divisor 0 is 1. */
lc_spec lc_spec_pqueue(unsigned capacity, unsigned key_divisor);

/* Key of a value under a divisor (as the spec computes it). */
static inline uint64_t lc_pqueue_key(uint64_t value, unsigned key_divisor) {
  return value / (key_divisor ? key_divisor : 1u);
}

/* "insert", "delete_min", or lc_kind_name() for the other kinds. */
const char *lc_pqueue_kind_name(int kind);

#endif
