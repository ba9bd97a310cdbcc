/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/queue/lcrq_af.h — LCRQ whose rings take their head and tail
 * tickets through aggregating funnels (Roh et al., PPoPP 2025) instead
 * of one fetch-and-add each on two contended words. The queue is a
 * syncq_queue_lcrq (syncq/queue/lcrq.h): only init differs; enqueue,
 * dequeue, destroy and the ring counts are LCRQ's own functions.
 * Contract: src/queue/lcrq_af.c.
 */
#ifndef SYNCQ_QUEUE_LCRQ_AF_H
#define SYNCQ_QUEUE_LCRQ_AF_H

#include "syncq/export.h"

#include <stddef.h>

#include "syncq/queue/lcrq.h"
#include "syncq/registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* As syncq_queue_lcrq_init (capacity: a sizing hint for the ring size),
 * with funnels in every ring. SYNCQ_EINVAL: q is NULL or not aligned as its type.
 * SYNCQ_ENOTSUP: the CPU has no double-width CAS. SYNCQ_ENOMEM: the first
 * ring or the hazard-pointer domain could not be allocated. */
SYNCQ_API int syncq_queue_lcrq_af_init(syncq_queue_lcrq *q, size_t capacity);
/* As syncq_queue_lcrq_af_init, with an exact ring size. SYNCQ_EINVAL: q is NULL or not aligned as its type, or
 * ring_size is not a power of two in [SYNCQ_QUEUE_LCRQ_RING_MIN,
 * SYNCQ_QUEUE_LCRQ_RING_MAX]. SYNCQ_ENOTSUP: the CPU has no double-width
 * CAS. SYNCQ_ENOMEM: the first ring or the hazard-pointer domain could not
 * be allocated. */
SYNCQ_API int syncq_queue_lcrq_af_init_ring(syncq_queue_lcrq *q, size_t ring_size);

/* The registry entry ("lcrq-af"). */
SYNCQ_API extern const syncq_algo syncq_queue_lcrq_af_algo;

#ifdef __cplusplus
}
#endif
#endif
