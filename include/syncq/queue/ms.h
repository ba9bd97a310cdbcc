/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/queue/ms.h — Michael & Scott's non-blocking linked queue (001 §4.1;
 * their PODC'96 paper), in two memory-management forms:
 *   "ms"     counted pointers swung by double-width CAS, nodes type-stable
 *            on a tagged free list (syncq/reclaim.h), as in the paper;
 *   "ms-hp"  plain pointers protected by hazard pointers (Michael 2004), so
 *            dequeued nodes really go back to the allocator.
 * Contracts: src/queue/ms.c, src/queue/ms_hp.c.
 */
#ifndef SYNCQ_QUEUE_MS_H
#define SYNCQ_QUEUE_MS_H

#include "syncq/export.h"

#include <stddef.h>
#include <stdint.h>

#include "syncq/pr.h"
#include "syncq/reclaim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct syncq_queue_ms_chunk syncq_queue_ms_chunk; /* a block of nodes (opaque) */

typedef struct syncq_queue_ms {
  SYNCQ_CACHELINE_ALIGNED syncq_pr_dw_atomic head;                /* (node, count): the dummy */
  SYNCQ_CACHELINE_ALIGNED syncq_pr_dw_atomic tail;                /* (node, count): last or next to last */
  SYNCQ_CACHELINE_ALIGNED syncq_freelist free;                    /* type-stable nodes not in the queue */
  SYNCQ_CACHELINE_ALIGNED _Atomic(syncq_queue_ms_chunk *) chunks; /* every block, for destroy */
  size_t grow; /* nodes per block added when the free list runs dry */
  uint64_t magic;
} syncq_queue_ms;

/* capacity: nodes made ready at init (more are added in blocks when the
 * free list runs dry; blocks are only freed by destroy). SYNCQ_EINVAL:
 * q is NULL or not aligned as its type, or capacity nodes do not fit in size_t
 * bytes. SYNCQ_ENOTSUP: the CPU has no double-width CAS. SYNCQ_ENOMEM: the
 * first block of nodes could not be allocated. */
SYNCQ_API int syncq_queue_ms_init(syncq_queue_ms *q, size_t capacity);
/* Destroy the queue, freeing its node blocks (items still queued are the
 * caller's).
 * SYNCQ_EINVAL: q is NULL or was not initialised.
 */
SYNCQ_API int syncq_queue_ms_destroy(syncq_queue_ms *q);
/* Enqueue item (non-NULL).
 * SYNCQ_EINVAL: q or item is NULL.
 * SYNCQ_ENOMEM: the free list is empty and no block of nodes could be
 * allocated; the item is not queued.
 */
SYNCQ_API int syncq_queue_ms_enqueue(syncq_queue_ms *q, void *item);
/* Dequeue the oldest item into *item.
 * SYNCQ_EMPTY: the queue held no item.
 * SYNCQ_EINVAL: q or item is NULL.
 */
SYNCQ_API int syncq_queue_ms_dequeue(syncq_queue_ms *q, void **item);

typedef struct syncq_queue_ms_hp_node syncq_queue_ms_hp_node; /* opaque */

typedef struct syncq_queue_ms_hp {
  /* void *: the type hazard-pointer protection reads (syncq_hp_protect) */
  SYNCQ_CACHELINE_ALIGNED _Atomic(void *) head; /* the dummy node */
  SYNCQ_CACHELINE_ALIGNED _Atomic(void *) tail; /* last or next to last node */
  SYNCQ_CACHELINE_ALIGNED syncq_hp_domain *hp;  /* read-only after init */
  uint64_t magic;
} syncq_queue_ms_hp;

/* capacity is ignored (nodes are allocated per enqueue). SYNCQ_EINVAL:
 * q is NULL or not aligned as its type. SYNCQ_ENOMEM: the dummy node or the
 * hazard-pointer domain could not be allocated. */
SYNCQ_API int syncq_queue_ms_hp_init(syncq_queue_ms_hp *q, size_t capacity);
/* Destroy the queue, freeing every node (items still queued are the
 * caller's).
 * SYNCQ_EINVAL: q is NULL or was not initialised.
 * SYNCQ_EBUSY: an operation on the queue has not returned (its
 * hazard-pointer record is in use); nothing is freed.
 */
SYNCQ_API int syncq_queue_ms_hp_destroy(syncq_queue_ms_hp *q);
/* Enqueue item (non-NULL).
 * SYNCQ_EINVAL: q or item is NULL.
 * SYNCQ_ENOMEM: the node could not be allocated, or no hazard-pointer
 * record could be; the item is not queued.
 */
SYNCQ_API int syncq_queue_ms_hp_enqueue(syncq_queue_ms_hp *q, void *item);
/* Dequeue the oldest item into *item.
 * SYNCQ_EMPTY: the queue held no item.
 * SYNCQ_EINVAL: q or item is NULL.
 * SYNCQ_ENOMEM: no hazard-pointer record could be allocated; nothing was
 * taken.
 */
SYNCQ_API int syncq_queue_ms_hp_dequeue(syncq_queue_ms_hp *q, void **item);

#ifdef __cplusplus
}
#endif
#endif
