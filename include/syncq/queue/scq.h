/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/queue/scq.h — SCQ, Nikolaev's scalable circular queue (DISC 2019):
 * a ring of 2n entries of (cycle, is-safe, index) taken with fetch-and-add
 * on Head and Tail, single-width CAS only; pointers are carried through two
 * SCQs of indices (allocated and free) and an array of n data slots.
 * Contract: src/queue/scq.c.
 */
#ifndef SYNCQ_QUEUE_SCQ_H
#define SYNCQ_QUEUE_SCQ_H

#include "syncq/export.h"

#include <stddef.h>
#include <stdint.h>

#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One ring of indices (2n entries follow the queue header, see below).
 * Tail (producers' FAA), Head (consumers' FAA) and Threshold (written by
 * failed dequeues) are two cache lines apart, an empty line between them:
 * x86's adjacent-line prefetcher moves lines in 128-byte pairs, so fields
 * written by different threads one line apart still disturb each other,
 * and any two offsets 128 bytes apart lie in different pairs whatever the
 * storage's alignment (which stays one line). */
typedef struct syncq_queue_scq_ring {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) tail;
  SYNCQ_CACHELINE_ALIGNED unsigned char pad_tail_[SYNCQ_CACHELINE];
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) head;
  SYNCQ_CACHELINE_ALIGNED unsigned char pad_head_[SYNCQ_CACHELINE];
  SYNCQ_CACHELINE_ALIGNED _Atomic(int64_t) threshold; /* < 0: empty */
  SYNCQ_CACHELINE_ALIGNED unsigned char pad_threshold_[SYNCQ_CACHELINE];
} syncq_queue_scq_ring;

typedef struct syncq_queue_scq {
  syncq_queue_scq_ring aq; /* indices of slots holding items (first member: alignment) */
  syncq_queue_scq_ring fq; /* indices of free slots */
  /* Set by init, read once per operation with relaxed loads (another
   * process may write them); atomic so that the values checked are the values used. */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) n; /* capacity, read-only after init */
  _Atomic(uint32_t) order;                     /* log2(2n) */
  _Atomic(uint32_t) remap_shift;               /* 0: plain; else cache remapping (init_remapped) */
  _Atomic(uint64_t) magic;
  /* follow: aq's 2n entries, fq's 2n entries, n data slots (8 bytes each) */
} syncq_queue_scq;

#define SYNCQ_QUEUE_SCQ_BYTES(capacity) (sizeof(syncq_queue_scq) + (size_t)(capacity)*5 * sizeof(uint64_t))

/* Bytes of storage (header and ring) a queue of this capacity needs, into
 * *bytes.
 * SYNCQ_EINVAL: bytes is NULL, or capacity is not a power of two >= 2, or
 * its storage overflows size_t.
 */
SYNCQ_API int syncq_queue_scq_bytes(size_t capacity, size_t *bytes);
/* Initialise storage of syncq_queue_scq_bytes(capacity) bytes to an empty
 * queue. SYNCQ_EINVAL: q is NULL or not aligned as its type, or capacity is not a
 * power of two >= 2 (or its storage overflows size_t). */
SYNCQ_API int syncq_queue_scq_init(syncq_queue_scq *q, size_t capacity);
/* The same with Nikolaev's cache remapping: consecutive tickets (and the
 * item slots handed out one after another) on different cache lines. It
 * keeps many threads that take consecutive tickets off each other's lines,
 * and costs one producer and one consumer their batching (about 3 line
 * transfers an item instead of 3 per 8): registry entry "scq-remap".
 * SYNCQ_EINVAL: q is NULL or not aligned as its type, or capacity is not a power of
 * two >= 2 (or its storage overflows size_t). */
SYNCQ_API int syncq_queue_scq_init_remapped(syncq_queue_scq *q, size_t capacity);
/* Destroy the queue; the storage is the caller's again.
 * SYNCQ_EINVAL: q is NULL, or its storage was never initialised or was
 * destroyed already.
 */
SYNCQ_API int syncq_queue_scq_destroy(syncq_queue_scq *q);
/* Enqueue item (non-NULL). The caller guarantees the storage holds
 * SYNCQ_QUEUE_SCQ_BYTES(capacity) for the capacity in the header.
 * SYNCQ_FULL: the queue holds capacity items.
 * SYNCQ_EINVAL: q or item is NULL, the storage was never initialised or was
 * destroyed, or a header or ring entry holds what init and the operations
 * cannot have written (another process wrote over the shared storage: the
 * geometry is checked before it is used as a shift or a bound).
 */
SYNCQ_API int syncq_queue_scq_enqueue(syncq_queue_scq *q, void *item);
/* Dequeue the oldest item into *item.
 * SYNCQ_EMPTY: the queue held no item.
 * SYNCQ_EINVAL: q or item is NULL, the storage was never initialised or was
 * destroyed, or a header or ring entry holds what init and the operations
 * cannot have written.
 */
SYNCQ_API int syncq_queue_scq_dequeue(syncq_queue_scq *q, void **item);

#ifdef __cplusplus
}
#endif
#endif
