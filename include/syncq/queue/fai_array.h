/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/queue/fai_array.h — the fetch-and-increment array queue of 003
 * Figure 1 ("an array-based variant of the ticket algorithm": the queue's
 * ends are tickets taken with fetch-and-increment), on a ring of S cells.
 * Contract: src/queue/fai_array.c.
 */
#ifndef SYNCQ_QUEUE_FAI_ARRAY_H
#define SYNCQ_QUEUE_FAI_ARRAY_H

#include "syncq/export.h"

#include <stddef.h>
#include <stdint.h>

#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct syncq_queue_fai_array {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) head; /* next ticket to enqueue */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) tail; /* next ticket to dequeue */
  /* Set by init, read once per operation with relaxed loads (another
   * process may write them); atomic so that the values checked are the values used. */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) mask; /* S - 1, read-only after init */
  _Atomic(uint32_t) shift;                        /* log2(S) */
  _Atomic(uint64_t) magic;
  /* the S cells (_Atomic(uint64_t): 48-bit item + 16-bit round) follow */
} syncq_queue_fai_array;

#define SYNCQ_QUEUE_FAI_ARRAY_BYTES(capacity) (sizeof(syncq_queue_fai_array) + (size_t)(capacity) * sizeof(uint64_t))

/* Bytes of storage (header and ring) a queue of this capacity needs, into
 * *bytes.
 * SYNCQ_EINVAL: bytes is NULL, or capacity is not a power of two >= 2, or
 * its storage overflows size_t.
 */
SYNCQ_API int syncq_queue_fai_array_bytes(size_t capacity, size_t *bytes);
/* Initialise storage of syncq_queue_fai_array_bytes(capacity) bytes to an
 * empty queue. SYNCQ_EINVAL: q is NULL or not aligned as its type, or capacity
 * is not a power of two >= 2 (or its storage overflows size_t). */
SYNCQ_API int syncq_queue_fai_array_init(syncq_queue_fai_array *q, size_t capacity);
/* Destroy the queue; the storage is the caller's again.
 * SYNCQ_EINVAL: q is NULL, or its storage was never initialised or was
 * destroyed already.
 */
SYNCQ_API int syncq_queue_fai_array_destroy(syncq_queue_fai_array *q);
/* Enqueue item. The caller guarantees the storage holds
 * SYNCQ_QUEUE_FAI_ARRAY_BYTES(capacity) for the mask in the header.
 * SYNCQ_FULL: the queue holds capacity items.
 * SYNCQ_EINVAL: q is NULL, item is NULL or its address does not fit in 48
 * bits, the storage was never initialised or was destroyed, or its header
 * holds what init cannot have written (another process wrote over the
 * shared mask or shift).
 */
SYNCQ_API int syncq_queue_fai_array_enqueue(syncq_queue_fai_array *q, void *item);
/* Dequeue the oldest item into *item.
 * SYNCQ_EMPTY: the queue held no item.
 * SYNCQ_EINVAL: q or item is NULL, the storage was never initialised or was
 * destroyed, or its header holds what init cannot have written.
 */
SYNCQ_API int syncq_queue_fai_array_dequeue(syncq_queue_fai_array *q, void **item);

#ifdef __cplusplus
}
#endif
#endif
