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

/* Bytes of storage (header and ring) a queue of this capacity needs, into
 * *bytes.
 * SYNCQ_EINVAL: bytes is NULL, or capacity is not a power of two >= 2, or
 * its storage overflows size_t.
 */
SYNCQ_API int syncq_queue_naive_ring_bytes(size_t capacity, size_t *bytes);
/* Initialise storage of syncq_queue_naive_ring_bytes(capacity) bytes to
 * an empty queue. SYNCQ_EINVAL: q is NULL or not aligned as its type, or capacity
 * is not a power of two >= 2 (or its storage overflows size_t). */
SYNCQ_API int syncq_queue_naive_ring_init(syncq_queue_naive_ring *q, size_t capacity);
/* Destroy the queue; the storage is the caller's again.
 * SYNCQ_EINVAL: q is NULL, or its storage was never initialised or was
 * destroyed already.
 */
SYNCQ_API int syncq_queue_naive_ring_destroy(syncq_queue_naive_ring *q);
/* Enqueue item. The caller guarantees the storage holds
 * SYNCQ_QUEUE_NAIVE_RING_BYTES(capacity) for the mask in the header.
 * SYNCQ_FULL: the queue holds capacity items.
 * SYNCQ_EINVAL: q or item is NULL, the storage was never initialised or was
 * destroyed, or its header holds a mask init cannot have written (another
 * process wrote over it).
 */
SYNCQ_API int syncq_queue_naive_ring_enqueue(syncq_queue_naive_ring *q, void *item);
/* Dequeue the oldest item into *item.
 * SYNCQ_EMPTY: the queue held no item.
 * SYNCQ_EINVAL: q or item is NULL, the storage was never initialised or was
 * destroyed, or its header holds a mask init cannot have written.
 */
SYNCQ_API int syncq_queue_naive_ring_dequeue(syncq_queue_naive_ring *q, void **item);

#ifdef __cplusplus
}
#endif
#endif
