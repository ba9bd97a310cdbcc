/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/queue/lcrq.h — LCRQ, Morrison & Afek's linked concurrent ring
 * queue (PPoPP'13): rings of cells (safe bit, index, item) taken with
 * fetch-and-add on head and tail and updated with double-width CAS; a
 * ring that fills up or starves an enqueuer is closed and a new one is
 * linked after it, Michael & Scott style, so the queue is unbounded.
 * Emptied rings are freed through hazard pointers. Contract:
 * src/queue/lcrq.c.
 */
#ifndef SYNCQ_QUEUE_LCRQ_H
#define SYNCQ_QUEUE_LCRQ_H

#include "syncq/export.h"

#include <stddef.h>
#include <stdint.h>

#include "syncq/pr.h"
#include "syncq/reclaim.h"
#include "syncq/registry.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct syncq_queue_lcrq {
  /* void *: the type hazard-pointer protection reads (syncq_hp_protect) */
  SYNCQ_CACHELINE_ALIGNED _Atomic(void *) head; /* the ring dequeuers use */
  SYNCQ_CACHELINE_ALIGNED _Atomic(void *) tail; /* the ring enqueuers use */
  SYNCQ_CACHELINE_ALIGNED syncq_hp_domain *hp;  /* read-only after init */
  uint64_t ring_size;                           /* cells per ring, read-only after init */
  _Atomic(uint64_t) rings_linked;               /* rings appended after the first */
  _Atomic(uint64_t) rings_freed;                /* emptied rings given back to the allocator */
  uint64_t magic;
  uint32_t funnels; /* 1: tickets through aggregating funnels ("lcrq-af"); read-only after init */
} syncq_queue_lcrq;

/* Smallest and largest ring (cells, a power of two). */
#define SYNCQ_QUEUE_LCRQ_RING_MIN 2
#define SYNCQ_QUEUE_LCRQ_RING_MAX (1u << 24)

/* capacity: a sizing hint, the ring size (0: 4096 cells, the smallest of
 * the paper's 2^12..2^17; otherwise the next power of two, at most
 * SYNCQ_QUEUE_LCRQ_RING_MAX). SYNCQ_EINVAL: q is NULL or not aligned as its type.
 * SYNCQ_ENOTSUP: the CPU has no double-width CAS. SYNCQ_ENOMEM: the first
 * ring or the hazard-pointer domain could not be allocated. */
SYNCQ_API int syncq_queue_lcrq_init(syncq_queue_lcrq *q, size_t capacity);
/* As syncq_queue_lcrq_init, with an exact ring size. SYNCQ_EINVAL: q is NULL or not aligned as its type, or
 * ring_size is not a power of two in [SYNCQ_QUEUE_LCRQ_RING_MIN,
 * SYNCQ_QUEUE_LCRQ_RING_MAX]. SYNCQ_ENOTSUP: the CPU has no double-width
 * CAS. SYNCQ_ENOMEM: the first ring or the hazard-pointer domain could not
 * be allocated. */
SYNCQ_API int syncq_queue_lcrq_init_ring(syncq_queue_lcrq *q, size_t ring_size);
/* Destroy the queue, freeing every ring (items still queued are the
 * caller's).
 * SYNCQ_EINVAL: q is NULL or was not initialised.
 * SYNCQ_EBUSY: an operation on the queue has not returned (its
 * hazard-pointer record is in use); nothing is freed.
 */
SYNCQ_API int syncq_queue_lcrq_destroy(syncq_queue_lcrq *q);
/* Enqueue item (non-NULL).
 * SYNCQ_EINVAL: q or item is NULL.
 * SYNCQ_ENOMEM: a new ring is needed and cannot be allocated, or no
 * hazard-pointer record could be; the item is not queued.
 */
SYNCQ_API int syncq_queue_lcrq_enqueue(syncq_queue_lcrq *q, void *item);
/* Dequeue the oldest item into *item.
 * SYNCQ_EMPTY: the queue held no item.
 * SYNCQ_EINVAL: q or item is NULL.
 * SYNCQ_ENOMEM: no hazard-pointer record could be allocated; nothing was
 * taken.
 */
SYNCQ_API int syncq_queue_lcrq_dequeue(syncq_queue_lcrq *q, void **item);
/* Rings linked after the first, and rings freed, so far (0 for NULL). */
SYNCQ_API uint64_t syncq_queue_lcrq_rings_linked(const syncq_queue_lcrq *q);
SYNCQ_API uint64_t syncq_queue_lcrq_rings_freed(const syncq_queue_lcrq *q);

/* The registry entry ("lcrq"). */
SYNCQ_API extern const syncq_algo syncq_queue_lcrq_algo;

#ifdef __cplusplus
}
#endif
#endif
