/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/queue/loo.h — LOO, Giersch & Nolte's unbounded queue (IEEE TPDS
 * 2022): a linked list of nodes of 128 slots; Head and Tail are each one
 * word holding a node address and an index into it, taken with
 * fetch-and-add; an item is written into its slot, and taken from it, with
 * one fetch-and-add each; a full node gets a successor appended
 * Michael & Scott style. Nodes are freed deterministically, by the last
 * operation to leave them (no hazard pointers, no epochs). Contract:
 * src/queue/loo.c.
 */
#ifndef SYNCQ_QUEUE_LOO_H
#define SYNCQ_QUEUE_LOO_H

#include "syncq/export.h"

#include <stddef.h>
#include <stdint.h>

#include "syncq/pr.h"
#include "syncq/registry.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct syncq_queue_loo {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) head;         /* node address | dequeue index */
  _Atomic(uint64_t) head_swings;                          /* Head's moves to a successor node */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) tail;         /* node address | enqueue index */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) nodes_linked; /* nodes appended after the first */
  _Atomic(uint64_t) nodes_freed;                          /* nodes given back to the allocator */
  uint64_t magic;
} syncq_queue_loo;

/* Items: non-NULL, with their two low bits clear (4-byte aligned); the
 * slot keeps two marks beside them. Threads: at most
 * SYNCQ_QUEUE_LOO_MAX_PRODUCERS enqueuing and SYNCQ_QUEUE_LOO_MAX_CONSUMERS
 * dequeuing at once (the index beside a node address has 10 bits). */
#define SYNCQ_QUEUE_LOO_MAX_PRODUCERS 447
#define SYNCQ_QUEUE_LOO_MAX_CONSUMERS 447

/* capacity: ignored (the queue is unbounded; nodes hold 128 items). One
 * node is allocated. SYNCQ_EINVAL: q is NULL or not aligned as its type.
 * SYNCQ_ENOMEM: the node could not be allocated. */
SYNCQ_API int syncq_queue_loo_init(syncq_queue_loo *q, size_t capacity);
/* Destroy the queue, freeing every node (items still queued are the
 * caller's); no operation may run.
 * SYNCQ_EINVAL: q is NULL or was not initialised.
 */
SYNCQ_API int syncq_queue_loo_destroy(syncq_queue_loo *q);
/* Enqueue item (non-NULL, its two low bits clear).
 * SYNCQ_EINVAL: q is NULL or was not initialised, or item is NULL or has
 * either of its two low bits set.
 * SYNCQ_ENOMEM: a node is needed and cannot be allocated; the item is not
 * queued.
 */
SYNCQ_API int syncq_queue_loo_enqueue(syncq_queue_loo *q, void *item);
/* Dequeue the oldest item into *item.
 * SYNCQ_EMPTY: the queue held no item.
 * SYNCQ_EINVAL: q or item is NULL, or q was not initialised.
 */
SYNCQ_API int syncq_queue_loo_dequeue(syncq_queue_loo *q, void **item);
/* Nodes appended after the first, and nodes freed, so far (0 for NULL). */
SYNCQ_API uint64_t syncq_queue_loo_nodes_linked(const syncq_queue_loo *q);
SYNCQ_API uint64_t syncq_queue_loo_nodes_freed(const syncq_queue_loo *q);

/* The registry entry ("loo"). */
SYNCQ_API extern const syncq_algo syncq_queue_loo_algo;

#ifdef __cplusplus
}
#endif
#endif
