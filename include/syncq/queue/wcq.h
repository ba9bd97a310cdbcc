/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/queue/wcq.h — wCQ, Nikolaev & Ravindran's wait-free circular
 * queue (SPAA 2022): SCQ's ring of 2n entries taken with fetch-and-add on
 * Head and Tail, plus a slow path that makes it wait-free: an operation
 * that fails a bounded number of fast-path tickets publishes a request in
 * its thread's record, and every thread, once per few operations, helps
 * one other thread's pending request. Entries carry a Note beside their
 * value (double-width CAS), Head and Tail a pending second phase of a
 * helped increment. Pointers are carried, as in SCQ, through two rings of
 * indices (allocated and free) around an array of n data slots.
 *
 * Caller-provided storage of syncq_queue_wcq_bytes(capacity) bytes,
 * aligned to _Alignof(syncq_queue_wcq). Never allocates. Threads are
 * registered implicitly: a thread's first wCQ operation takes a number
 * (one of SYNCQ_QUEUE_WCQ_THREADS, process-wide), which names its record
 * in every wCQ queue and goes back when the thread exits.
 * Contract: src/queue/wcq.c.
 */
#ifndef SYNCQ_QUEUE_WCQ_H
#define SYNCQ_QUEUE_WCQ_H

#include "syncq/export.h"

#include <stddef.h>
#include <stdint.h>

#include "syncq/pr.h"
#include "syncq/registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most threads that may use wCQ queues at once (per process): each queue
 * holds a record per thread number. A thread past it gets SYNCQ_ELIMIT. */
#define SYNCQ_QUEUE_WCQ_THREADS 128

/* One ring of indices. Tail and Head: lo = the ticket counter (fetch-and-
 * add), hi = a helped increment's pending second phase (0: none). Two
 * cache lines apart, as in SCQ (x86's adjacent-line prefetcher). */
typedef struct syncq_queue_wcq_ring {
  SYNCQ_CACHELINE_ALIGNED syncq_pr_dw_atomic tail;
  SYNCQ_CACHELINE_ALIGNED unsigned char pad_tail_[SYNCQ_CACHELINE];
  SYNCQ_CACHELINE_ALIGNED syncq_pr_dw_atomic head;
  SYNCQ_CACHELINE_ALIGNED unsigned char pad_head_[SYNCQ_CACHELINE];
  SYNCQ_CACHELINE_ALIGNED _Atomic(int64_t) threshold; /* < 0: empty */
  SYNCQ_CACHELINE_ALIGNED unsigned char pad_threshold_[SYNCQ_CACHELINE];
} syncq_queue_wcq_ring;

/* A thread's record in one ring (the paper's thrdrec_t). */
typedef struct syncq_queue_wcq_record {
  /* the owner's alone: operations to the next help, next record to help */
  SYNCQ_CACHELINE_ALIGNED uint32_t next_check;
  uint32_t next_tid;
  /* the request: written by its owner, read (and local_* advanced) by helpers */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) seq1;
  _Atomic(uint64_t) local_tail; /* ticket << 2 | INC (2) | FIN (1) */
  _Atomic(uint64_t) init_tail;
  _Atomic(uint64_t) local_head;
  _Atomic(uint64_t) init_head;
  _Atomic(uint64_t) index;
  _Atomic(uint64_t) seq2;
  _Atomic(uint32_t) enqueue;
  _Atomic(uint32_t) pending;
} syncq_queue_wcq_record;

typedef struct syncq_queue_wcq {
  syncq_queue_wcq_ring aq;            /* indices of slots holding items (first member: alignment) */
  syncq_queue_wcq_ring fq;            /* indices of free slots */
  SYNCQ_CACHELINE_ALIGNED uint64_t n; /* capacity, read-only after init */
  uint32_t order;                     /* log2(2n) */
  uint32_t reserved_;
  uint64_t magic;
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) slow_paths; /* requests published */
  _Atomic(uint64_t) helps;                              /* runs for another thread's request */
  syncq_queue_wcq_record rec_aq[SYNCQ_QUEUE_WCQ_THREADS];
  syncq_queue_wcq_record rec_fq[SYNCQ_QUEUE_WCQ_THREADS];
  /* follow: aq's 2n entries and fq's 2n entries (16 bytes each), n data slots (8 bytes each) */
} syncq_queue_wcq;

#define SYNCQ_QUEUE_WCQ_BYTES(capacity) (sizeof(syncq_queue_wcq) + (size_t)(capacity)*9 * sizeof(uint64_t))

/* Bytes of storage (header, rings and data slots) a queue of this capacity
 * needs, into *bytes.
 * SYNCQ_EINVAL: bytes is NULL, or capacity is not a power of two in [2,
 * 2^40].
 */
SYNCQ_API int syncq_queue_wcq_bytes(size_t capacity, size_t *bytes);
/* Initialise storage of syncq_queue_wcq_bytes(capacity) bytes to an empty
 * queue. SYNCQ_EINVAL: q is NULL or not aligned as its type, or capacity is not a
 * power of two in [2, 2^40]. SYNCQ_ENOTSUP: the CPU has no double-width
 * CAS. */
SYNCQ_API int syncq_queue_wcq_init(syncq_queue_wcq *q, size_t capacity);
/* Destroy the queue. Items still queued are the caller's (nothing is freed:
 * the queue never allocates). No operation may run.
 * SYNCQ_EINVAL: q is NULL or its storage was not initialised.
 */
SYNCQ_API int syncq_queue_wcq_destroy(syncq_queue_wcq *q);
/* Enqueue item (non-NULL).
 * SYNCQ_FULL: the queue holds capacity items.
 * SYNCQ_EINVAL: q or item is NULL, or the storage was not initialised.
 * SYNCQ_ELIMIT: the calling thread has no thread number and
 * SYNCQ_QUEUE_WCQ_THREADS other threads hold them.
 */
SYNCQ_API int syncq_queue_wcq_enqueue(syncq_queue_wcq *q, void *item);
/* Dequeue the oldest item into *item.
 * SYNCQ_EMPTY: the queue held no item.
 * SYNCQ_EINVAL: q or item is NULL, or the storage was not initialised.
 * SYNCQ_ELIMIT: the calling thread has no thread number and
 * SYNCQ_QUEUE_WCQ_THREADS other threads hold them.
 */
SYNCQ_API int syncq_queue_wcq_dequeue(syncq_queue_wcq *q, void **item);
/* Requests published by operations whose fast path gave up, and slow-path
 * runs a thread made for another thread's pending request (0 for NULL). */
SYNCQ_API uint64_t syncq_queue_wcq_slow_paths(const syncq_queue_wcq *q);
SYNCQ_API uint64_t syncq_queue_wcq_helps(const syncq_queue_wcq *q);

/* The registry entry ("wcq"). */
SYNCQ_API extern const syncq_algo syncq_queue_wcq_algo;

#ifdef __cplusplus
}
#endif
#endif
