/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/queue/plj.h — the non-blocking linked queue of Prakash, Lee and
 * Johnson (IEEE Trans. Computers 43(5), 1994; [19] of 001, [21] of 003):
 * every operation takes a snapshot of the queue's state, completes any
 * operation it finds half done, and only then tries its own.
 * Contract: src/queue/plj.c.
 */
#ifndef SYNCQ_QUEUE_PLJ_H
#define SYNCQ_QUEUE_PLJ_H

#include "syncq/export.h"

#include <stddef.h>
#include <stdint.h>

#include "syncq/pr.h"
#include "syncq/reclaim.h"
#include "syncq/registry.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct syncq_queue_plj_chunk syncq_queue_plj_chunk; /* a block of nodes (opaque) */

typedef struct syncq_queue_plj {
  SYNCQ_CACHELINE_ALIGNED syncq_pr_dw_atomic head; /* (node, count): the dummy */
  SYNCQ_CACHELINE_ALIGNED syncq_pr_dw_atomic tail; /* (node, count): last, or next to last mid-enqueue */
  SYNCQ_CACHELINE_ALIGNED syncq_freelist free;     /* type-stable nodes not in the queue */
  SYNCQ_CACHELINE_ALIGNED _Atomic(syncq_queue_plj_chunk *) chunks; /* every block, for destroy */
  size_t grow; /* nodes per block added when the free list runs dry */
  uint64_t magic;
} syncq_queue_plj;

/* capacity: nodes made ready at init (more are added in blocks when the
 * free list runs dry). SYNCQ_EINVAL: q is NULL or not aligned as its type, or
 * capacity nodes do not fit in size_t bytes. SYNCQ_ENOTSUP: the CPU has no
 * double-width CAS. SYNCQ_ENOMEM: the first block of nodes could not be
 * allocated. */
SYNCQ_API int syncq_queue_plj_init(syncq_queue_plj *q, size_t capacity);
/* Destroy the queue, freeing its node blocks (items still queued are the
 * caller's).
 * SYNCQ_EINVAL: q is NULL or was not initialised.
 */
SYNCQ_API int syncq_queue_plj_destroy(syncq_queue_plj *q);
/* Enqueue item (non-NULL).
 * SYNCQ_EINVAL: q or item is NULL, or q was not initialised.
 * SYNCQ_ENOMEM: the free list is empty and no block of nodes could be
 * allocated; the item is not queued.
 */
SYNCQ_API int syncq_queue_plj_enqueue(syncq_queue_plj *q, void *item);
/* Dequeue the oldest item into *item.
 * SYNCQ_EMPTY: the queue held no item.
 * SYNCQ_EINVAL: q or item is NULL, or q was not initialised.
 */
SYNCQ_API int syncq_queue_plj_dequeue(syncq_queue_plj *q, void **item);

/* The registry entry (syncq/registry.h): "plj" by name with syncq_queue_create. */
SYNCQ_API extern const syncq_algo syncq_queue_plj_algo;

#ifdef __cplusplus
}
#endif
#endif
