/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/queue/wfqueue.h — YMC wfqueue, Yang & Mellor-Crummey's wait-free
 * queue (PPoPP'16): an infinite array of cells emulated by a linked list
 * of segments, indices taken by fetch-and-add; an operation tries a fast
 * path a bounded number of times (PATIENCE), then publishes a request in
 * its thread's handle that peers, visiting the handles in a ring, help to
 * complete. Segments every handle has passed are reclaimed by the paper's
 * own scheme, and kept (up to SYNCQ_QUEUE_WFQUEUE_STOCK) for the next
 * appends or freed. Each thread gets a handle on its first operation on a
 * queue and keeps it until it exits. Contract: src/queue/wfqueue.c.
 */
#ifndef SYNCQ_QUEUE_WFQUEUE_H
#define SYNCQ_QUEUE_WFQUEUE_H

#include "syncq/export.h"

#include <stddef.h>
#include <stdint.h>

#include "syncq/pr.h"
#include "syncq/registry.h"

#ifdef __cplusplus
extern "C" {
#endif

struct syncq_wfq_segment;
struct syncq_wfq_handle;

/* Reclaimed segments a queue keeps for reuse (the size of stock[]). */
#define SYNCQ_QUEUE_WFQUEUE_STOCK 4

typedef struct syncq_queue_wfqueue {
  SYNCQ_CACHELINE_ALIGNED _Atomic(int64_t) ei; /* the next enqueue index (the paper's T) */
  SYNCQ_CACHELINE_ALIGNED _Atomic(int64_t) di; /* the next dequeue index (the paper's H) */
  _Atomic(int64_t) ei_seen;                    /* a value ei had once, for the emptiness test */
  /* The id of the oldest segment, or -1 while a cleanup or a new handle
   * holds the list's front (the paper's I). */
  SYNCQ_CACHELINE_ALIGNED _Atomic(int64_t) hi;
  _Atomic(struct syncq_wfq_segment *) hp;                             /* the oldest segment (the paper's Q) */
  SYNCQ_CACHELINE_ALIGNED _Atomic(struct syncq_wfq_handle *) handles; /* the ring's entry */
  _Atomic(uint32_t) nhandles;                                         /* handles in the ring */
  uint32_t max_handles;                                               /* read-only after init */
  uint32_t seg_order;                                                 /* log2(cells per segment), read-only */
  uint32_t patience;                                                  /* fast-path tries per operation, read-only */
  uint64_t id;                       /* the queue's identity for the threads' handle caches */
  _Atomic(uint64_t) segments_linked; /* segments appended after the first */
  _Atomic(uint64_t) segments_freed;  /* segments reclaimed (freed, or kept in the stock) */
  _Atomic(uint64_t) segments_reused; /* segments appended from the stock */
  /* Reclaimed segments kept for the next appends (NULL: an empty slot) */
  SYNCQ_CACHELINE_ALIGNED _Atomic(struct syncq_wfq_segment *) stock[SYNCQ_QUEUE_WFQUEUE_STOCK];
  uint64_t magic;
} syncq_queue_wfqueue;

/* Cells per segment (a power of two). */
#define SYNCQ_QUEUE_WFQUEUE_SEGMENT_MIN 2
#define SYNCQ_QUEUE_WFQUEUE_SEGMENT_MAX (1u << 16)
#define SYNCQ_QUEUE_WFQUEUE_SEGMENT_DEFAULT 1024
/* Threads that may hold a handle on one queue at once. */
#define SYNCQ_QUEUE_WFQUEUE_THREADS_DEFAULT 256
#define SYNCQ_QUEUE_WFQUEUE_THREADS_MAX 65536

/* Counters of the slow path and of helping, summed over the handles. */
typedef struct syncq_queue_wfqueue_counts {
  uint64_t slow_enqueues;   /* enqueues that published a request */
  uint64_t slow_dequeues;   /* dequeues that published a request */
  uint64_t helped_enqueues; /* enqueue requests committed by a peer's dequeue */
  uint64_t helped_dequeues; /* dequeue requests completed by a peer */
  uint64_t handles;         /* handles in the ring */
} syncq_queue_wfqueue_counts;

/* capacity: a sizing hint, the segment size (0: 1024 cells, as in the
 * paper's evaluation; otherwise the next power of two, within
 * [SYNCQ_QUEUE_WFQUEUE_SEGMENT_MIN, SYNCQ_QUEUE_WFQUEUE_SEGMENT_MAX]), and
 * SYNCQ_QUEUE_WFQUEUE_THREADS_DEFAULT threads. SYNCQ_EINVAL: q is NULL or not aligned as its type.
 * SYNCQ_ENOMEM: the first segment could not be allocated. */
SYNCQ_API int syncq_queue_wfqueue_init(syncq_queue_wfqueue *q, size_t capacity);
/* As syncq_queue_wfqueue_init, with an exact segment size and a thread
 * limit. SYNCQ_EINVAL:
 * q is NULL or not aligned as its type, segment_cells is not a power of two in
 * [SYNCQ_QUEUE_WFQUEUE_SEGMENT_MIN, SYNCQ_QUEUE_WFQUEUE_SEGMENT_MAX], or
 * max_threads is not in [1, SYNCQ_QUEUE_WFQUEUE_THREADS_MAX].
 * SYNCQ_ENOMEM: the first segment could not be allocated. */
SYNCQ_API int syncq_queue_wfqueue_init_ex(syncq_queue_wfqueue *q, size_t segment_cells, size_t max_threads);
/* Destroy the queue: free every segment and return the handles to the
 * library's pool (items still queued are the caller's). No operation may
 * run on it, nor start.
 * SYNCQ_EINVAL: q is NULL or was not initialised.
 * SYNCQ_EBUSY: an operation on the queue has not returned (a handle still
 * publishes a hazard); nothing is freed.
 */
SYNCQ_API int syncq_queue_wfqueue_destroy(syncq_queue_wfqueue *q);
/* Enqueue item (non-NULL).
 * SYNCQ_EINVAL: q or item is NULL, or q was not initialised.
 * SYNCQ_ELIMIT: the calling thread has no handle on this queue and
 * max_threads other live threads hold one.
 * SYNCQ_ENOMEM: no handle or segment could be allocated; the item is not
 * queued.
 */
SYNCQ_API int syncq_queue_wfqueue_enqueue(syncq_queue_wfqueue *q, void *item);
/* Dequeue the oldest item into *item. A dequeue that holds an index whose
 * segment cannot be allocated retries the allocation, yielding, until it
 * succeeds.
 * SYNCQ_EMPTY: the queue held no item.
 * SYNCQ_EINVAL: q or item is NULL, or q was not initialised.
 * SYNCQ_ELIMIT: the calling thread has no handle on this queue and
 * max_threads other live threads hold one.
 * SYNCQ_ENOMEM: no handle could be allocated; nothing was taken.
 */
SYNCQ_API int syncq_queue_wfqueue_dequeue(syncq_queue_wfqueue *q, void **item);
/* Segments linked after the first, and segments reclaimed (freed, or kept
 * for reuse), so far (0 for NULL). */
SYNCQ_API uint64_t syncq_queue_wfqueue_segments_linked(const syncq_queue_wfqueue *q);
SYNCQ_API uint64_t syncq_queue_wfqueue_segments_freed(const syncq_queue_wfqueue *q);
/* The slow-path and helping counters into *out (a snapshot while threads
 * run).
 * SYNCQ_EINVAL: q or out is NULL, or q was not initialised.
 */
SYNCQ_API int syncq_queue_wfqueue_get_counts(const syncq_queue_wfqueue *q, syncq_queue_wfqueue_counts *out);

/* The registry entry ("wfqueue"). */
SYNCQ_API extern const syncq_algo syncq_queue_wfqueue_algo;

#ifdef __cplusplus
}
#endif
#endif
