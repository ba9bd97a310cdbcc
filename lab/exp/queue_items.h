/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * queue_items.h — the items the queue drivers move (dg25-*, queue-sides)
 * and the queues' size hint.
 *
 * An item is a number made non-NULL and kept clear of its low bits (some
 * peers tag them): producer p's i-th item is number p * 2^20 + i, so the
 * sum of every number taken out proves each came out once.
 */
#ifndef SYNCQ_LAB_QUEUE_ITEMS_H
#define SYNCQ_LAB_QUEUE_ITEMS_H

#include <stdint.h>

/* 004's capacity (NewMadeleine's typical size, §IV-C): a bounded queue's
 * size, and an unbounded one's rings' or blocks'. */
#define LAB_QUEUE_CAPACITY 1024
#define LAB_QUEUE_PRODUCER_SHIFT 20 /* a producer's numbers: up to 2^20 items */

static inline uint64_t lab_queue_number(int producer, uint64_t i) {
  return (uint64_t)producer << LAB_QUEUE_PRODUCER_SHIFT | i;
}
static inline void *lab_queue_item(uint64_t number) { return (void *)(uintptr_t)((number + 1) << 4); }
static inline uint64_t lab_queue_value(void *item) { return ((uint64_t)(uintptr_t)item >> 4) - 1; }

/* The sum of every number producers 0..producers-1 put, items each. */
static inline uint64_t lab_queue_checksum(int producers, uint64_t items) {
  uint64_t sum = 0;
  for (int p = 0; p < producers; p++) sum += lab_queue_number(p, 0) * items + items * (items - 1) / 2;
  return sum;
}

#endif
