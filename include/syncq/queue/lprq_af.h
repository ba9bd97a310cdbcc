/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/queue/lprq_af.h — LPRQ whose rings take their head and tail
 * tickets through aggregating funnels (Roh et al., PPoPP 2025) instead
 * of one fetch-and-add each on two contended words. The queue is a
 * syncq_queue_lprq (syncq/queue/lprq.h): only init differs; enqueue,
 * dequeue, destroy and the ring counts are LPRQ's own functions.
 * Contract: src/queue/lprq_af.c.
 */
#ifndef SYNCQ_QUEUE_LPRQ_AF_H
#define SYNCQ_QUEUE_LPRQ_AF_H

#include "syncq/export.h"

#include <stddef.h>

#include "syncq/queue/lprq.h"
#include "syncq/registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* As syncq_queue_lprq_init (capacity: a sizing hint for the ring size),
 * with funnels in every ring. SYNCQ_EINVAL: q is NULL or not aligned as its type.
 * SYNCQ_ENOMEM: the first ring or the hazard-pointer domain could not be
 * allocated. */
SYNCQ_API int syncq_queue_lprq_af_init(syncq_queue_lprq *q, size_t capacity);
/* As syncq_queue_lprq_af_init, with an exact ring size. SYNCQ_EINVAL: q is NULL or not aligned as its type, or
 * ring_size is not a power of two in [SYNCQ_QUEUE_LPRQ_RING_MIN,
 * SYNCQ_QUEUE_LPRQ_RING_MAX]. SYNCQ_ENOMEM: the first ring or the
 * hazard-pointer domain could not be allocated. */
SYNCQ_API int syncq_queue_lprq_af_init_ring(syncq_queue_lprq *q, size_t ring_size);

/* The registry entry ("lprq-af"). */
SYNCQ_API extern const syncq_algo syncq_queue_lprq_af_algo;

#ifdef __cplusplus
}
#endif
#endif
