/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/queue/nblfq.h — NBLFQ, the lock-free bounded MPMC queue of 004 with 48+16-bit tagged cells.
 *
 * Typed API on caller-provided storage: a header followed by the ring of
 * S = capacity cells of 8 bytes. Size it with syncq_queue_nblfq_bytes() or,
 * for static or stack storage, SYNCQ_QUEUE_NBLFQ_BYTES(capacity), aligned to
 * _Alignof(syncq_queue_nblfq) (one cache line):
 *
 *   static SYNCQ_CACHELINE_ALIGNED unsigned char buf[SYNCQ_QUEUE_NBLFQ_BYTES(1024)];
 *   syncq_queue_nblfq *q = (syncq_queue_nblfq *)(void *)buf;
 *   syncq_queue_nblfq_init(q, 1024);
 *
 * Never allocates; async-signal-safe; the storage holds no internal pointers,
 * so it may live in memory shared between processes. Contract and details:
 * src/queue/nblfq.c. The same operations as static inline bodies (the
 * whole algorithm): syncq/static/queue/nblfq.h.
 */
#ifndef SYNCQ_QUEUE_NBLFQ_H
#define SYNCQ_QUEUE_NBLFQ_H

#include "syncq/export.h"

#include <stddef.h>
#include <stdint.h>

#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct syncq_queue_nblfq {
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
} syncq_queue_nblfq;

/* Bytes of storage (header + ring) for a queue of the given capacity. */
#define SYNCQ_QUEUE_NBLFQ_BYTES(capacity) (sizeof(syncq_queue_nblfq) + (size_t)(capacity)*8)

/* Bytes of storage (header and ring) a queue of this capacity needs, into
 * *bytes.
 * SYNCQ_EINVAL: bytes is NULL, or capacity is not a power of two >= 2, or
 * its storage overflows size_t.
 */
SYNCQ_API int syncq_queue_nblfq_bytes(size_t capacity, size_t *bytes);

/* Initialise storage of syncq_queue_nblfq_bytes(capacity) bytes to an empty
 * queue. SYNCQ_EINVAL: q is NULL or not aligned as its type, or capacity is not a
 * power of two >= 2 (or its storage overflows size_t). */
SYNCQ_API int syncq_queue_nblfq_init(syncq_queue_nblfq *q, size_t capacity);

/* Destroy the queue; the storage is the caller's again.
 * SYNCQ_EINVAL: q is NULL or was not initialised.
 */
SYNCQ_API int syncq_queue_nblfq_destroy(syncq_queue_nblfq *q);

/* Enqueue item. The caller guarantees the storage holds
 * SYNCQ_QUEUE_NBLFQ_BYTES(capacity) for the mask in the header.
 * SYNCQ_FULL: the queue holds capacity items.
 * SYNCQ_EINVAL: q is NULL, item is NULL or its address does not fit in 48
 * bits, the storage was never initialised or was destroyed, or its mask is
 * one init cannot have written (another process wrote over the shared
 * header).
 */
SYNCQ_API int syncq_queue_nblfq_enqueue(syncq_queue_nblfq *q, void *item);

/* Dequeue the oldest item into *item.
 * SYNCQ_EMPTY: the queue held no item.
 * SYNCQ_EINVAL: q or item is NULL, the storage was never initialised or was
 * destroyed, or its mask is one init cannot have written.
 */
SYNCQ_API int syncq_queue_nblfq_dequeue(syncq_queue_nblfq *q, void **item);

/* The capacity given to init (0 for NULL). */
SYNCQ_API size_t syncq_queue_nblfq_capacity(const syncq_queue_nblfq *q);

#ifdef __cplusplus
}
#endif
#endif
