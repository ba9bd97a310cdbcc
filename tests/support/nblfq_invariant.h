/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nblfq_invariant.h — 004 §V-A's invariant of an NBLFQ ring, checked on a
 * quiescent ring by tests/queue/nblfq_test.c and models/genmc/nblfq.c
 * (reads the cells with syncq/static/queue/nblfq.h's syncq_nbl_load).
 */
#ifndef SYNCQ_TEST_NBLFQ_INVARIANT_H
#define SYNCQ_TEST_NBLFQ_INVARIANT_H

#include <stdbool.h>
#include <stdint.h>

#include "syncq/static/queue/nblfq.h"

/* 004 §V-A invariant on a quiescent ring (no operation in flight), for
 * tests: property 1 (one index t from which s_(t+k) = s_t + k, mod W*S) and
 * property 2 (the non-empty cells are contiguous from t). Returns the
 * number of items (>= 0) when both hold, -1 when property 1 fails, -2 when
 * property 2 fails. */
static inline int64_t nblfq_check_invariant(void *cells, uint64_t mask, unsigned tag_bits) {
  const uint64_t S = mask + 1, wmask = syncq_nbl_wmask(tag_bits);
  /* s_(t+k) = s_t + k means: the cell k places after t has t's counter,
   * plus one if the walk passed index 0 (compared counter by counter, so
   * W = 2^64 needs no wider arithmetic). */
  int64_t tail = -1;
  for (uint64_t t = 0; t < S && tail < 0; t++) {
    bool holds = true;
    syncq_nbl_cell ct = syncq_nbl_load(cells, t, tag_bits);
    for (uint64_t k = 0; k < S && holds; k++) {
      uint64_t idx = (t + k) & mask;
      /* s_idx = s_t + k: idx + c_idx S = t + c_t S + k (mod W S) */
      uint64_t rounds = (t + k) / S; /* how many times we passed index 0 */
      uint64_t expect_ctr = (ct.ctr + rounds) & wmask;
      syncq_nbl_cell c = syncq_nbl_load(cells, idx, tag_bits);
      if (c.ctr != expect_ctr) holds = false;
    }
    if (holds) tail = (int64_t)t;
  }
  if (tail < 0) return -1;
  /* property 2: from t, some items, then only empty cells */
  int64_t n = 0;
  bool seen_empty = false;
  for (uint64_t k = 0; k < S; k++) {
    syncq_nbl_cell c = syncq_nbl_load(cells, ((uint64_t)tail + k) & mask, tag_bits);
    if (c.ptr != 0) {
      if (seen_empty) return -2;
      n++;
    } else {
      seen_empty = true;
    }
  }
  return n;
}

#endif /* SYNCQ_TEST_NBLFQ_INVARIANT_H */
