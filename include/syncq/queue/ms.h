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
SYNCQ_API int syncq_queue_ms_destroy(syncq_queue_ms *q); /* frees the node blocks; EINVAL for NULL or uninitialised */
/* SYNCQ_OK; SYNCQ_EINVAL (NULL); SYNCQ_ENOMEM when no node can be had. */
SYNCQ_API int syncq_queue_ms_enqueue(syncq_queue_ms *q, void *item);
SYNCQ_API int syncq_queue_ms_dequeue(syncq_queue_ms *q, void **item); /* OK, EMPTY, EINVAL */

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
/* Destroy the queue, freeing every node: OK; EINVAL; EBUSY (hazard records in use). */
SYNCQ_API int syncq_queue_ms_hp_destroy(syncq_queue_ms_hp *q);
SYNCQ_API int syncq_queue_ms_hp_enqueue(syncq_queue_ms_hp *q, void *item);  /* OK, EINVAL, ENOMEM */
SYNCQ_API int syncq_queue_ms_hp_dequeue(syncq_queue_ms_hp *q, void **item); /* OK, EMPTY, EINVAL, ENOMEM */

#ifdef __cplusplus
}
#endif
#endif
