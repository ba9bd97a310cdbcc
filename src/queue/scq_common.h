/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * scq_common.h — pieces shared by SCQ (scq.c, the queue of pointers by
 * indirection that 004 calls SCQD) and SCQ2 (scq2.c, double-width cells):
 * Nikolaev's cache remapping and the dequeuer's bounded wait for an
 * enqueuer that holds the same ticket. Internal; not an algorithm.
 */
#ifndef SYNCQ_SRC_QUEUE_SCQ_COMMON_H
#define SYNCQ_SRC_QUEUE_SCQ_COMMON_H

#include <stdint.h>

#include "syncq/pr.h"
#include "../race_internal.h" /* SYNCQ_RACE_POINT: nothing outside race tests */

/* Nikolaev's cache remapping (DISC'19 §5): position i of a ring of 2^bits
 * cells, its bits rotated so that consecutive positions land 2^line_shift
 * cells apart, i.e. on different cache lines (line_shift = log2 of the
 * cells in one line). Without it, consecutive tickets, taken by different
 * threads at the same moment, write cells of one line, which then moves
 * between their cores on every operation. A rotation is a bijection, so
 * every cell is still used once per cycle. Rings of one line or less keep
 * the identity. */
static inline uint64_t syncq_scq_remap(uint64_t i, uint32_t bits, uint32_t line_shift) {
  const uint64_t mask = (bits >= 64) ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
  i &= mask;
  if (bits <= line_shift) return i;
  return (i >> (bits - line_shift)) | ((i << line_shift) & mask);
}

/* log2 of the cells of `cell_bytes` bytes in one cache line. */
#define SYNCQ_SCQ_LINE_SHIFT(cell_bytes)                  \
  ((uint32_t)((SYNCQ_CACHELINE / (cell_bytes)) >= 16  ? 4 \
              : (SYNCQ_CACHELINE / (cell_bytes)) >= 8 ? 3 \
              : (SYNCQ_CACHELINE / (cell_bytes)) >= 4 ? 2 \
              : (SYNCQ_CACHELINE / (cell_bytes)) >= 2 ? 1 \
                                                      : 0))

/* How many times a dequeuer re-reads an empty, safe cell of an older cycle
 * while the enqueuer holding the same ticket is known to be on its way
 * (Tail > its ticket) before it invalidates the cell, which would send that
 * enqueuer round for another ticket. About the time of a cache miss or
 * two; bounded, so a preempted enqueuer costs the dequeuer this many
 * pauses and no more (lock-freedom is kept). */
#define SYNCQ_SCQ_DEQ_WAIT 64

#endif
