/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/pqueue/skew_herlihy.h — Herlihy's non-blocking skew heap with
 * optimized copying (Herlihy 1993; 001 §4.3): an operation copies the nodes
 * its merge modifies into free nodes of its own, then swings the root
 * (with its version) by double-width CAS; on success the replaced nodes
 * are recycled. Lock-free. Needs a double-width CAS (SYNCQ_ENOTSUP
 * otherwise).
 */
#ifndef SYNCQ_PQUEUE_SKEW_HERLIHY_H
#define SYNCQ_PQUEUE_SKEW_HERLIHY_H

#include "syncq/export.h"

#include <stdint.h>

#include "syncq/pqueue.h"
#include "syncq/pr.h"
#include "syncq/stack/pool.h"

#ifdef __cplusplus
extern "C" {
#endif

struct syncq_pqueue_skew_herlihy_node;

typedef struct syncq_pqueue_skew_herlihy {
  /* lo: items << 32 | (root index + 1); hi: version */
  SYNCQ_CACHELINE_ALIGNED syncq_pr_dw_atomic root;
  SYNCQ_CACHELINE_ALIGNED struct syncq_pqueue_skew_herlihy_node *nodes; /* read-only after init */
  syncq_node_bitmap pool;
  uint32_t capacity; /* items */
} syncq_pqueue_skew_herlihy;

/* cfg as syncq_pqueue_create's. SYNCQ_EINVAL: q is NULL, cfg->capacity is
 * above SYNCQ_PQUEUE_MAX_CAPACITY, cfg->max_threads above
 * SYNCQ_PQUEUE_MAX_THREADS (within those two limits the node slots,
 * 2 * capacity + 16 * max_threads + 64, stay far below the 2^32 - 1 a
 * node index can name; init still refuses more). SYNCQ_ENOTSUP: the CPU has no double-width CAS.
 * SYNCQ_ENOMEM: the nodes or their pool could not be allocated. */
SYNCQ_API int syncq_pqueue_skew_herlihy_init(syncq_pqueue_skew_herlihy *q, const syncq_pqueue_config *cfg);
/* Destroy the priority queue, freeing its nodes.
 * SYNCQ_EINVAL: q is NULL.
 */
SYNCQ_API int syncq_pqueue_skew_herlihy_destroy(syncq_pqueue_skew_herlihy *q);
/* Insert payload with priority key (the least key comes out first).
 * SYNCQ_EINVAL: q is NULL.
 * SYNCQ_ENOMEM: the pool has no node for the new item, or none for the
 * copies the insert makes while the heap stays unchanged; the item is not
 * inserted.
 */
SYNCQ_API int syncq_pqueue_skew_herlihy_insert(syncq_pqueue_skew_herlihy *q, uint64_t key, void *payload);
/* Remove an item of least key into *key and *payload.
 * SYNCQ_EMPTY: the priority queue held no item.
 * SYNCQ_EINVAL: q, key or payload is NULL.
 * SYNCQ_ENOMEM: the pool has no node for the merged copy the delete makes
 * while the heap stays unchanged; nothing was taken.
 */
SYNCQ_API int syncq_pqueue_skew_herlihy_delete_min(syncq_pqueue_skew_herlihy *q, uint64_t *key, void **payload);

#ifdef __cplusplus
}
#endif
#endif
