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

/* The bytes a SCQD of `capacity` items takes: syncq_queue_scq_bytes (same
 * statuses).
 * Thread safety: any thread, from a signal handler too (arithmetic only).
 * Progress: wait-free. */
static inline int syncq_queue_scqd_bytes(size_t capacity, size_t *bytes) {
  return syncq_queue_scq_bytes(capacity, bytes);
}
/* Initialise a SCQD in storage of syncq_queue_scqd_bytes(capacity) bytes:
 * syncq_queue_scq_init (same statuses).
 * Thread safety: once, by one thread, before any other call on q.
 * Progress: not a concurrent operation (it writes the whole ring). */
static inline int syncq_queue_scqd_init(syncq_queue_scqd *q, size_t capacity) {
  return syncq_queue_scq_init(q, capacity);
}
/* Destroy a SCQD: syncq_queue_scq_destroy (same statuses).
 * Thread safety: once, by one thread, after every other call on q.
 * Progress: not a concurrent operation. */
static inline int syncq_queue_scqd_destroy(syncq_queue_scqd *q) { return syncq_queue_scq_destroy(q); }
/* Append item at the tail: syncq_queue_scq_enqueue (same statuses).
 * Thread safety: any number of threads at once (multi-producer), with any
 * number of dequeuers, from a signal handler too, and from several
 * processes on shared storage (SCQ's contract, src/queue/scq.c).
 * Progress: lock-free (SCQ's: src/queue/scq.c). */
static inline int syncq_queue_scqd_enqueue(syncq_queue_scqd *q, void *item) { return syncq_queue_scq_enqueue(q, item); }
/* Take the item at the head into *item: syncq_queue_scq_dequeue (same
 * statuses).
 * Thread safety: any number of threads at once (multi-consumer), with any
 * number of enqueuers, from a signal handler too, and from several
 * processes on shared storage (SCQ's contract, src/queue/scq.c).
 * Progress: lock-free (SCQ's: src/queue/scq.c). */
static inline int syncq_queue_scqd_dequeue(syncq_queue_scqd *q, void **item) {
  return syncq_queue_scq_dequeue(q, item);
}

#ifdef __cplusplus
}
#endif
#endif
