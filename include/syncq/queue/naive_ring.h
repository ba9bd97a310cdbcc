/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/queue/naive_ring.h — the naive lockless ring of 004 §II-B: reserve
 * an index by CAS on a counter, then write (or read) the cell. Lockless but
 * blocking: an operation that finds its cell not yet written (or not yet
 * emptied) by the thread that reserved it before waits for that thread.
 * The baseline NBLFQ replaces. Contract: src/queue/naive_ring.c.
 */
#ifndef SYNCQ_QUEUE_NAIVE_RING_H
#define SYNCQ_QUEUE_NAIVE_RING_H

#include "syncq/export.h"

#include <stddef.h>
#include <stdint.h>

#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct syncq_queue_naive_ring_cell {
  _Atomic(uint64_t) turn; /* index whose operation may use the cell: enqueue i waits for i, dequeue i for i + 1 */
  void *data;             /* the item, published by turn */
} syncq_queue_naive_ring_cell;

typedef struct syncq_queue_naive_ring {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) head; /* next index to enqueue (authoritative) */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) tail; /* next index to dequeue */
  /* Set by init, read once per operation with a relaxed load (another
   * process may write them); atomic so that the value checked is the value used. */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) mask; /* S - 1, read-only after init */
  _Atomic(uint64_t) magic;
  /* the S cells (syncq_queue_naive_ring_cell) follow the header */
} syncq_queue_naive_ring;

#define SYNCQ_QUEUE_NAIVE_RING_BYTES(capacity) \
  (sizeof(syncq_queue_naive_ring) + (size_t)(capacity) * sizeof(syncq_queue_naive_ring_cell))

/* SYNCQ_EINVAL for NULL bytes, capacity not a power of two >= 2, overflow. */
SYNCQ_API int syncq_queue_naive_ring_bytes(size_t capacity, size_t *bytes);
/* Initialise storage of syncq_queue_naive_ring_bytes(capacity) bytes to
 * an empty queue. SYNCQ_EINVAL: q is NULL or not aligned as its type, or capacity
 * is not a power of two >= 2 (or its storage overflows size_t). */
SYNCQ_API int syncq_queue_naive_ring_init(syncq_queue_naive_ring *q, size_t capacity);
SYNCQ_API int syncq_queue_naive_ring_destroy(syncq_queue_naive_ring *q); /* EINVAL: NULL */
/* OK or FULL; SYNCQ_EINVAL for NULL arguments, storage never initialised or
 * destroyed, or a header init cannot have written (another process wrote
 * over the shared mask). The caller guarantees the storage holds
 * SYNCQ_QUEUE_NAIVE_RING_BYTES(capacity) for the mask in the header. */
SYNCQ_API int syncq_queue_naive_ring_enqueue(syncq_queue_naive_ring *q, void *item);
/* OK or EMPTY; SYNCQ_EINVAL as for enqueue. */
SYNCQ_API int syncq_queue_naive_ring_dequeue(syncq_queue_naive_ring *q, void **item);

#ifdef __cplusplus
}
#endif
#endif
