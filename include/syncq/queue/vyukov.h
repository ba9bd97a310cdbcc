/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/queue/vyukov.h — Vyukov's bounded MPMC queue: a ring of cells each
 * carrying a sequence number that says whose turn the cell is; a producer
 * (consumer) claims a position by CAS on the enqueue (dequeue) counter,
 * then fills (empties) the cell and publishes the next sequence number.
 * Contract: src/queue/vyukov.c.
 */
#ifndef SYNCQ_QUEUE_VYUKOV_H
#define SYNCQ_QUEUE_VYUKOV_H

#include "syncq/export.h"

#include <stddef.h>
#include <stdint.h>

#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct syncq_queue_vyukov_cell {
  _Atomic(uint64_t) seq; /* position this cell waits for (enqueue: pos, dequeue: pos + 1) */
  void *data;            /* the item; published by seq */
} syncq_queue_vyukov_cell;

typedef struct syncq_queue_vyukov {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) enqueue_pos;
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) dequeue_pos;
  /* Set by init, read once per operation with a relaxed load (another
   * process may write them); atomic so that the value checked is the value used. */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) mask; /* S - 1, read-only after init */
  _Atomic(uint64_t) magic;
  /* the S cells (syncq_queue_vyukov_cell) follow the header */
} syncq_queue_vyukov;

#define SYNCQ_QUEUE_VYUKOV_BYTES(capacity) \
  (sizeof(syncq_queue_vyukov) + (size_t)(capacity) * sizeof(syncq_queue_vyukov_cell))

/* Bytes of storage (header and ring) a queue of this capacity needs, into
 * *bytes.
 * SYNCQ_EINVAL: bytes is NULL, or capacity is not a power of two >= 2, or
 * its storage overflows size_t.
 */
SYNCQ_API int syncq_queue_vyukov_bytes(size_t capacity, size_t *bytes);
/* Initialise storage of syncq_queue_vyukov_bytes(capacity) bytes to an
 * empty queue. SYNCQ_EINVAL: q is NULL or not aligned as its type, or capacity
 * is not a power of two >= 2 (or its storage overflows size_t). */
SYNCQ_API int syncq_queue_vyukov_init(syncq_queue_vyukov *q, size_t capacity);
/* Destroy the queue; the storage is the caller's again.
 * SYNCQ_EINVAL: q is NULL, or its storage was never initialised or was
 * destroyed already.
 */
SYNCQ_API int syncq_queue_vyukov_destroy(syncq_queue_vyukov *q);
/* Enqueue item. The caller guarantees the storage holds
 * SYNCQ_QUEUE_VYUKOV_BYTES(capacity) for the mask in the header.
 * SYNCQ_FULL: the queue holds capacity items.
 * SYNCQ_EINVAL: q or item is NULL, the storage was never initialised or was
 * destroyed, or its header holds a mask init cannot have written (another
 * process wrote over it).
 */
SYNCQ_API int syncq_queue_vyukov_enqueue(syncq_queue_vyukov *q, void *item);
/* Dequeue the oldest item into *item.
 * SYNCQ_EMPTY: the queue held no item.
 * SYNCQ_EINVAL: q or item is NULL, the storage was never initialised or was
 * destroyed, or its header holds a mask init cannot have written.
 */
SYNCQ_API int syncq_queue_vyukov_dequeue(syncq_queue_vyukov *q, void **item);

#ifdef __cplusplus
}
#endif
#endif
