/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/queue/scqd.h — SCQD, the name 004 §VI (after Nikolaev's code) gives
 * to SCQ used as a queue of pointers through an index indirection: two SCQ
 * rings of indices, aq (slots holding items) and fq (free slots), around an
 * array of n item slots. That is exactly syncq's SCQ (syncq/queue/scq.h,
 * registry name "scq", contract in src/queue/scq.c), so SCQD is an alias:
 * the same type, storage and functions under the name 004 uses, and no
 * second registry entry (it would run the same code twice).
 */
#ifndef SYNCQ_QUEUE_SCQD_H
#define SYNCQ_QUEUE_SCQD_H

#include "syncq/queue/scq.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef syncq_queue_scq syncq_queue_scqd;

#define SYNCQ_QUEUE_SCQD_BYTES(capacity) SYNCQ_QUEUE_SCQ_BYTES(capacity)

/* The same statuses as the syncq_queue_scq_ functions they call. */
static inline int syncq_queue_scqd_bytes(size_t capacity, size_t *bytes) {
  return syncq_queue_scq_bytes(capacity, bytes);
}
static inline int syncq_queue_scqd_init(syncq_queue_scqd *q, size_t capacity) {
  return syncq_queue_scq_init(q, capacity);
}
static inline int syncq_queue_scqd_destroy(syncq_queue_scqd *q) { return syncq_queue_scq_destroy(q); }
static inline int syncq_queue_scqd_enqueue(syncq_queue_scqd *q, void *item) { return syncq_queue_scq_enqueue(q, item); }
static inline int syncq_queue_scqd_dequeue(syncq_queue_scqd *q, void **item) {
  return syncq_queue_scq_dequeue(q, item);
}

#ifdef __cplusplus
}
#endif
#endif
