/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/pqueue/linden_jonsson.h — the skiplist priority queue of Lindén &
 * Jonsson ("A skiplist-based concurrent priority queue with minimal memory
 * contention", OPODIS 2013): delete_min claims the first live node by
 * setting the low bit of its predecessor's lowest-level next pointer (so
 * the deleted nodes form a prefix of the list), and unlinks that prefix
 * only once it is longer than a bound, in one CAS on the head. Nodes are
 * reclaimed through epochs (syncq/reclaim.h). Lock-free. Needs a
 * double-width CAS for its node pool (SYNCQ_ENOTSUP otherwise).
 * Contract: src/pqueue/linden_jonsson.c.
 */
#ifndef SYNCQ_PQUEUE_LINDEN_JONSSON_H
#define SYNCQ_PQUEUE_LINDEN_JONSSON_H

#include "syncq/export.h"

#include <stdint.h>

#include "syncq/pqueue.h"
#include "syncq/pr.h"
#include "syncq/reclaim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Deleted nodes the prefix may hold before a delete_min unlinks it
 * (the paper's BoundOffset). */
#define SYNCQ_PQUEUE_LJ_BOUND_OFFSET 32u

struct syncq_pqueue_lj_node;

typedef struct syncq_pqueue_linden_jonsson {
  SYNCQ_CACHELINE_ALIGNED _Atomic(int64_t) items;                   /* inserted and not yet deleted, for the capacity */
  SYNCQ_CACHELINE_ALIGNED syncq_freelist free;                      /* nodes not in the list nor in limbo */
  SYNCQ_CACHELINE_ALIGNED struct syncq_pqueue_lj_node *head, *tail; /* sentinels; read-only after init */
  syncq_ebr_domain *ebr;
  void *pool;        /* every node, allocated at init */
  size_t stride;     /* bytes per node */
  uint32_t levels;   /* skiplist height (every node has room for all) */
  uint32_t capacity; /* items */
  uint64_t magic;
} syncq_pqueue_linden_jonsson;

/* Initialise for cfg's capacity (cfg as syncq_pqueue_create's).
 * SYNCQ_EINVAL: q is NULL or not aligned as syncq_pqueue_linden_jonsson,
 * cfg->capacity is above
 * SYNCQ_PQUEUE_MAX_CAPACITY, or cfg->max_threads above SYNCQ_PQUEUE_MAX_THREADS.
 * SYNCQ_ENOTSUP: the CPU has no double-width CAS (the free list).
 * SYNCQ_ENOMEM: the node pool or the epoch domain could not be
 * allocated. */
SYNCQ_API int syncq_pqueue_linden_jonsson_init(syncq_pqueue_linden_jonsson *q, const syncq_pqueue_config *cfg);
/* Destroy the priority queue, freeing its nodes.
 * SYNCQ_EINVAL: q is NULL or was not initialised.
 * SYNCQ_EBUSY: an operation has not returned (its epoch record is in use);
 * nothing is freed.
 */
SYNCQ_API int syncq_pqueue_linden_jonsson_destroy(syncq_pqueue_linden_jonsson *q);
/* Insert payload with priority key (the least key comes out first).
 * SYNCQ_EINVAL: q is NULL or was not initialised.
 * SYNCQ_ENOMEM: the queue holds capacity items, no node came back from
 * reclamation within the insert's patience, or no epoch record could be
 * allocated; the item is not inserted.
 */
SYNCQ_API int syncq_pqueue_linden_jonsson_insert(syncq_pqueue_linden_jonsson *q, uint64_t key, void *payload);
/* Remove an item of least key into *key and *payload.
 * SYNCQ_EMPTY: the priority queue held no item.
 * SYNCQ_EINVAL: q, key or payload is NULL, or q was not initialised.
 * SYNCQ_ENOMEM: no epoch record could be allocated; nothing was taken.
 */
SYNCQ_API int syncq_pqueue_linden_jonsson_delete_min(syncq_pqueue_linden_jonsson *q, uint64_t *key, void **payload);

/* The registry entry (syncq/registry.h): "linden-jonsson" by name with syncq_pqueue_create. */
SYNCQ_API extern const syncq_algo syncq_pqueue_linden_jonsson_algo;

#ifdef __cplusplus
}
#endif
#endif
