/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/queue/scq2.h — SCQ2, Nikolaev's scalable circular queue holding
 * pointers directly in double-width cells (DISC 2019, the form 004 §VI
 * calls SCQ2): a ring of 2 x `capacity` 16-byte cells (SCQ's 2n entries
 * for n items), each an item pointer beside a (cycle, is-safe, occupied)
 * word, taken with fetch-and-add on Head and Tail; Tail - Head, less the
 * tickets that hold no item (counted only when one is given up), bounds
 * the items to `capacity`; double-width CAS to publish an item and to
 * consume it.
 *
 * Typed API on caller-provided storage: a header followed by the cells.
 * Size it with syncq_queue_scq2_bytes() or SYNCQ_QUEUE_SCQ2_BYTES(capacity),
 * aligned to _Alignof(syncq_queue_scq2) (one cache line):
 *
 *   static SYNCQ_CACHELINE_ALIGNED unsigned char buf[SYNCQ_QUEUE_SCQ2_BYTES(1024)];
 *   syncq_queue_scq2 *q = (syncq_queue_scq2 *)(void *)buf;
 *   if (syncq_queue_scq2_init(q, 1024) == SYNCQ_ENOTSUP) ... no double-width CAS
 *
 * Never allocates; async-signal-safe; no internal pointers (it may live in
 * memory shared between processes). Contract: src/queue/scq2.c.
 */
#ifndef SYNCQ_QUEUE_SCQ2_H
#define SYNCQ_QUEUE_SCQ2_H

#include "syncq/export.h"

#include <stddef.h>
#include <stdint.h>

#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Hot words two cache lines apart (an unused line between them): x86's
 * adjacent-line prefetcher moves 128-byte pairs of lines. */
typedef struct syncq_queue_scq2 {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) tail; /* producers' ticket counter */
  _Atomic(uint64_t) head_seen;                    /* a value Head had, on Tail's line: the FULL test's cache */
  SYNCQ_CACHELINE_ALIGNED unsigned char pad_tail_[SYNCQ_CACHELINE];
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) head; /* consumers' ticket counter */
  _Atomic(uint64_t) tail_seen;                    /* a value Tail had, on Head's line: the EMPTY test's cache */
  SYNCQ_CACHELINE_ALIGNED unsigned char pad_head_[SYNCQ_CACHELINE];
  SYNCQ_CACHELINE_ALIGNED _Atomic(int64_t) threshold; /* < 0: empty (livelock bound) */
  SYNCQ_CACHELINE_ALIGNED unsigned char pad_threshold_[SYNCQ_CACHELINE];
  SYNCQ_CACHELINE_ALIGNED _Atomic(int64_t) adjust; /* added to Tail - Head to count items: the FULL test */
  SYNCQ_CACHELINE_ALIGNED unsigned char pad_adjust_[SYNCQ_CACHELINE];
  /* Read once per operation with relaxed loads (another process may
   * write them); atomic so that the values checked are the values used. */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) n; /* capacity (items); 2n cells; read-only after init */
  _Atomic(uint32_t) order;                     /* log2(2n) */
  _Atomic(uint32_t) remap_shift;               /* 0: plain; else cache remapping (init_remapped) */
  _Atomic(uint64_t) magic;                     /* set by init, cleared by destroy */
  /* the 2n cells (syncq_pr_dw_atomic, 16 bytes each) follow, from a line boundary */
} syncq_queue_scq2;

#define SYNCQ_QUEUE_SCQ2_BYTES(capacity) (sizeof(syncq_queue_scq2) + (size_t)(capacity)*32)

/* Bytes of storage (header and ring) a queue of this capacity needs, into
 * *bytes.
 * SYNCQ_EINVAL: bytes is NULL, or capacity is not a power of two in [2,
 * 2^40], or its storage overflows size_t.
 */
SYNCQ_API int syncq_queue_scq2_bytes(size_t capacity, size_t *bytes);
/* SYNCQ_EINVAL: NULL, misaligned storage, bad capacity; SYNCQ_ENOTSUP: the
 * CPU has no double-width CAS (syncq_pr_dwcas_available()). */
SYNCQ_API int syncq_queue_scq2_init(syncq_queue_scq2 *q, size_t capacity);
/* The same with Nikolaev's cache remapping of the cells (see
 * syncq_queue_scq_init_remapped). SYNCQ_EINVAL: q is NULL or not aligned as its type,
 * or capacity is not a power of two in [2, 2^40] (or its storage overflows
 * size_t). SYNCQ_ENOTSUP: the CPU has no double-width CAS. */
SYNCQ_API int syncq_queue_scq2_init_remapped(syncq_queue_scq2 *q, size_t capacity);
/* Destroy the queue; the storage is the caller's again.
 * SYNCQ_EINVAL: q is NULL or was not initialised.
 */
SYNCQ_API int syncq_queue_scq2_destroy(syncq_queue_scq2 *q);
/* Enqueue item. The caller guarantees the storage holds
 * SYNCQ_QUEUE_SCQ2_BYTES(capacity).
 * SYNCQ_FULL: the queue holds capacity items.
 * SYNCQ_EINVAL: q or item is NULL, q was not initialised, or its header
 * holds a geometry init cannot have written (another process wrote over
 * it).
 */
SYNCQ_API int syncq_queue_scq2_enqueue(syncq_queue_scq2 *q, void *item);
/* Dequeue the oldest item into *item.
 * SYNCQ_EMPTY: the queue held no item.
 * SYNCQ_EINVAL: q or item is NULL, q was not initialised, or its header
 * holds a geometry init cannot have written.
 */
SYNCQ_API int syncq_queue_scq2_dequeue(syncq_queue_scq2 *q, void **item);

#ifdef __cplusplus
}
#endif
#endif
