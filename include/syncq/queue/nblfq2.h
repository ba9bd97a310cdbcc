/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/queue/nblfq2.h — NBLFQ2, NBLFQ with double-width cells (pointer word + 64-bit counter word).
 *
 * Typed API on caller-provided storage: a header followed by the ring of
 * S = capacity cells of 16 bytes. Size it with syncq_queue_nblfq2_bytes() or,
 * for static or stack storage, SYNCQ_QUEUE_NBLFQ2_BYTES(capacity), aligned to
 * _Alignof(syncq_queue_nblfq2) (one cache line):
 *
 *   static SYNCQ_CACHELINE_ALIGNED unsigned char buf[SYNCQ_QUEUE_NBLFQ2_BYTES(1024)];
 *   syncq_queue_nblfq2 *q = (syncq_queue_nblfq2 *)(void *)buf;
 *   syncq_queue_nblfq2_init(q, 1024);
 *
 * Never allocates; async-signal-safe; the storage holds no internal pointers,
 * so it may live in memory shared between processes. Contract and details:
 * src/queue/nblfq2.c.
 */
#ifndef SYNCQ_QUEUE_NBLFQ2_H
#define SYNCQ_QUEUE_NBLFQ2_H

#include "syncq/export.h"

#include <stddef.h>
#include <stdint.h>

#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct syncq_queue_nblfq2 {
  /* The hints two lines apart (an unused line between): producers write
   * head, consumers tail, and x86's adjacent-line prefetcher moves lines
   * in 128-byte pairs. */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) head; /* hint: where enqueue starts looking */
  SYNCQ_CACHELINE_ALIGNED unsigned char pad_head_[SYNCQ_CACHELINE];
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) tail; /* hint: where dequeue starts looking */
  SYNCQ_CACHELINE_ALIGNED unsigned char pad_tail_[SYNCQ_CACHELINE];
  /* Read once per operation with a relaxed load (another process may
   * write them); atomic so that the value checked is the value used. */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) mask; /* S - 1, read-only after init */
  _Atomic(uint64_t) magic;                        /* set by init, cleared by destroy */
  /* the S cells follow the header */
} syncq_queue_nblfq2;

/* Bytes of storage (header + ring) for a queue of the given capacity. */
#define SYNCQ_QUEUE_NBLFQ2_BYTES(capacity) (sizeof(syncq_queue_nblfq2) + (size_t)(capacity)*16)

/* Bytes of storage (header and ring) a queue of this capacity needs, into
 * *bytes.
 * SYNCQ_EINVAL: bytes is NULL, or capacity is not a power of two >= 2, or
 * its storage overflows size_t.
 */
SYNCQ_API int syncq_queue_nblfq2_bytes(size_t capacity, size_t *bytes);

/* Initialise storage of syncq_queue_nblfq2_bytes(capacity) bytes to an empty
 * queue. SYNCQ_EINVAL: q is NULL or not aligned as its type, or capacity is not a
 * power of two >= 2 (or its storage overflows size_t). SYNCQ_ENOTSUP: the
 * CPU has no double-width CAS. */
SYNCQ_API int syncq_queue_nblfq2_init(syncq_queue_nblfq2 *q, size_t capacity);

/* Destroy the queue; the storage is the caller's again.
 * SYNCQ_EINVAL: q is NULL or was not initialised.
 */
SYNCQ_API int syncq_queue_nblfq2_destroy(syncq_queue_nblfq2 *q);

/* Enqueue item. The caller guarantees the storage holds
 * SYNCQ_QUEUE_NBLFQ2_BYTES(capacity) for the mask in the header.
 * SYNCQ_FULL: the queue holds capacity items.
 * SYNCQ_EINVAL: q or item is NULL, the storage was never initialised or
 * was destroyed, or its mask is one init cannot have written (another
 * process wrote over the shared header).
 */
SYNCQ_API int syncq_queue_nblfq2_enqueue(syncq_queue_nblfq2 *q, void *item);

/* Dequeue the oldest item into *item.
 * SYNCQ_EMPTY: the queue held no item.
 * SYNCQ_EINVAL: q or item is NULL, the storage was never initialised or was
 * destroyed, or its mask is one init cannot have written.
 */
SYNCQ_API int syncq_queue_nblfq2_dequeue(syncq_queue_nblfq2 *q, void **item);

/* The capacity given to init (0 for NULL). */
SYNCQ_API size_t syncq_queue_nblfq2_capacity(const syncq_queue_nblfq2 *q);

#ifdef __cplusplus
}
#endif
#endif
