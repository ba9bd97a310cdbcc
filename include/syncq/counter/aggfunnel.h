/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/counter/aggfunnel.h — aggregating funnel counter (Roh, Wei,
 * Ruppert, Fatourou, Jayanti, Shun, "Aggregating Funnels for Faster
 * Fetch&Add and Queues", PPoPP 2025).
 *
 * Threads that add at about the same time meet in one of a few
 * aggregators (chosen by a thread-local index); the first of a batch, its
 * delegate, applies the batch's sum to the main counter with one
 * fetch-and-add, and every member computes its own result from the batch's
 * start on the main counter and its offset in the batch. Contract:
 * src/counter/aggfunnel.c.
 */
#ifndef SYNCQ_COUNTER_AGGFUNNEL_H
#define SYNCQ_COUNTER_AGGFUNNEL_H

#include "syncq/export.h"

#include <stdint.h>

#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Aggregators a counter may have, and the default (init). */
#define SYNCQ_COUNTER_AGGFUNNEL_AGGS_MAX 8
#define SYNCQ_COUNTER_AGGFUNNEL_AGGS_DEFAULT 4
/* Batch records an aggregator keeps: a delegate waits for the members of
 * the batch this many batches back to read their results before it
 * reuses that record. */
#define SYNCQ_COUNTER_AGGFUNNEL_LOG 4

/* One batch's record: the aggregator values [from, to) it covers, the
 * main counter's value before the batch (base), and how much of the
 * batch's sum belongs to members that have read their results (acked). */
typedef struct syncq_aggfunnel_batch {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) seq; /* odd while the delegate rewrites the record */
  _Atomic(uint64_t) from;
  _Atomic(uint64_t) to;
  _Atomic(uint64_t) base;
  _Atomic(uint64_t) acked;
} syncq_aggfunnel_batch;

/* One aggregator: the members' fetch-and-add counter, the end of the last
 * batch applied to main (sent) with the record that holds it, and the
 * records. */
typedef struct syncq_aggfunnel_agg {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) count;
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) sent;
  _Atomic(uint32_t) last; /* index of the newest record */
  syncq_aggfunnel_batch log[SYNCQ_COUNTER_AGGFUNNEL_LOG];
} syncq_aggfunnel_agg;

typedef struct syncq_counter_aggfunnel {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) main; /* the counter's value (two's complement) */
  uint32_t naggs;                                 /* read-only after init */
  syncq_aggfunnel_agg agg[SYNCQ_COUNTER_AGGFUNNEL_AGGS_MAX];
} syncq_counter_aggfunnel;

/* init uses SYNCQ_COUNTER_AGGFUNNEL_AGGS_DEFAULT aggregators; init_aggs
 * takes the number. SYNCQ_EINVAL: c is NULL or not aligned as
 * syncq_counter_aggfunnel, or (init_aggs) naggs is 0 or above
 * SYNCQ_COUNTER_AGGFUNNEL_AGGS_MAX. */
SYNCQ_API int syncq_counter_aggfunnel_init(syncq_counter_aggfunnel *c, int64_t initial);
SYNCQ_API int syncq_counter_aggfunnel_init_aggs(syncq_counter_aggfunnel *c, int64_t initial, unsigned naggs);
/* The typed API of the aggregating funnel counter: destroy, fetch_add
 * (the value before the add goes to *old; old may be NULL) and load (the
 * value into *value).
 * SYNCQ_EINVAL: c is NULL, value is NULL (load), or the storage was never
 * made by init (fetch_add on a zeroed counter).
 * Thread safety: any number of threads may call fetch_add and load at the
 * same time, never concurrently with init or destroy; not from a signal
 * handler that interrupted a fetch_add on the same counter (it would wait
 * for the operation it interrupted).
 * Progress: blocking: an add of 1 to 2^32 waits for its batch's delegate
 * (src/counter/aggfunnel.c); other deltas and load are one atomic
 * instruction (wait-free). */
SYNCQ_API int syncq_counter_aggfunnel_destroy(syncq_counter_aggfunnel *c);
SYNCQ_API int syncq_counter_aggfunnel_fetch_add(syncq_counter_aggfunnel *c, int64_t delta, int64_t *old);
SYNCQ_API int syncq_counter_aggfunnel_load(syncq_counter_aggfunnel *c, int64_t *value);

#ifdef __cplusplus
}
#endif
#endif
