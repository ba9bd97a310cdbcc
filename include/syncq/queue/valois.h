/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/queue/valois.h — Valois's lock-free linked queue (1994/95; [23] of
 * 001, [24] of 003) with his reference-counting memory management as
 * corrected by Michael & Scott (TR 599, 1995).
 * Contract: src/queue/valois.c.
 */
#ifndef SYNCQ_QUEUE_VALOIS_H
#define SYNCQ_QUEUE_VALOIS_H

#include "syncq/export.h"

#include <stddef.h>
#include <stdint.h>

#include "syncq/pr.h"
#include "syncq/registry.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct syncq_queue_valois_node syncq_queue_valois_node;   /* opaque */
typedef struct syncq_queue_valois_chunk syncq_queue_valois_chunk; /* a block of nodes (opaque) */

typedef struct syncq_queue_valois {
  SYNCQ_CACHELINE_ALIGNED _Atomic(syncq_queue_valois_node *) head;    /* the dummy */
  SYNCQ_CACHELINE_ALIGNED _Atomic(syncq_queue_valois_node *) tail;    /* last node, or behind it (even behind head) */
  SYNCQ_CACHELINE_ALIGNED _Atomic(syncq_queue_valois_node *) free;    /* reclaimed nodes */
  SYNCQ_CACHELINE_ALIGNED _Atomic(syncq_queue_valois_chunk *) chunks; /* every block, for destroy */
  size_t grow; /* nodes per block added when the free list runs dry */
  uint64_t magic;
} syncq_queue_valois;

/* capacity: nodes made ready at init (more are added in blocks when the
 * free list runs dry). SYNCQ_EINVAL: q is NULL or not aligned as its type, or
 * capacity nodes do not fit in size_t bytes. SYNCQ_ENOMEM: the first block
 * of nodes could not be allocated. */
SYNCQ_API int syncq_queue_valois_init(syncq_queue_valois *q, size_t capacity);
/* Destroy the queue, freeing its node blocks (items still queued are the
 * caller's).
 * SYNCQ_EINVAL: q is NULL or was not initialised.
 */
SYNCQ_API int syncq_queue_valois_destroy(syncq_queue_valois *q);
/* Enqueue item (non-NULL).
 * SYNCQ_EINVAL: q or item is NULL, or q was not initialised.
 * SYNCQ_ENOMEM: the free list is empty and no block of nodes could be
 * allocated; the item is not queued.
 */
SYNCQ_API int syncq_queue_valois_enqueue(syncq_queue_valois *q, void *item);
/* Dequeue the oldest item into *item.
 * SYNCQ_EMPTY: the queue held no item.
 * SYNCQ_EINVAL: q or item is NULL, or q was not initialised.
 */
SYNCQ_API int syncq_queue_valois_dequeue(syncq_queue_valois *q, void **item);

/* What an audit of a quiescent queue found (see syncq_queue_valois_audit). */
typedef struct syncq_queue_valois_audit_result {
  size_t nodes;      /* nodes in every block */
  size_t live;       /* nodes reachable from Head or Tail */
  size_t free;       /* nodes on the free list */
  size_t items;      /* items in the queue (nodes after Head) */
  size_t bad_counts; /* nodes whose count differs from the links to them
                       * (live) or is not "no reference, claimed" (free) */
} syncq_queue_valois_audit_result;

/* Check the reference counts of a QUIESCENT queue (no operation running):
 * every live node's count equals the number of links (Head, Tail, a live
 * predecessor's next) that point at it, every free node holds no reference
 * and is claimed, and no node is both or neither (a leak shows as
 * live + free < nodes). The result goes to *out.
 * SYNCQ_EINVAL: q or out is NULL, or q was not initialised.
 */
SYNCQ_API int syncq_queue_valois_audit(syncq_queue_valois *q, syncq_queue_valois_audit_result *out);

/* The registry entry (syncq/registry.h): "valois" by name with syncq_queue_create. */
SYNCQ_API extern const syncq_algo syncq_queue_valois_algo;

#ifdef __cplusplus
}
#endif
#endif
