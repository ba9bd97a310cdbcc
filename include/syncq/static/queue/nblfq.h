/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/static/queue/nblfq.h — NBLFQ (004 Algorithms 1-4, 48+16-bit tagged
 * cells) as static inline enqueue and dequeue: liburcu's model, for
 * programs that opt in by including this header (no call, no indirect
 * call, no statistics unless SYNCQ_WITH_STATS is defined). syncq/queue/
 * nblfq.h's exported functions and the registry's "nblfq" ops table are
 * built from these same bodies (src/queue/nblfq.c, whose contract block
 * applies: lock-free, one CAS per operation, async-signal-safe,
 * process-shared).
 *
 * Storage: syncq_queue_nblfq_bytes(capacity) bytes initialised by
 * syncq_queue_nblfq_init (out of line). Storage that was never
 * initialised, or was destroyed, is refused with SYNCQ_EINVAL: init sets
 * a magic word beside the ring's mask, which every operation reads anyway
 * (one load of a line already being read). Bytes that happen to equal
 * the magic cannot be told apart.
 */
#ifndef SYNCQ_STATIC_QUEUE_NBLFQ_H
#define SYNCQ_STATIC_QUEUE_NBLFQ_H

#include "syncq/queue/nblfq.h"
#include "syncq/static/queue/nblfq_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Counter bits of a cell: 64 - SYNCQ_NBL_PTR_BITS. */
#define SYNCQ_QUEUE_NBLFQ_TAG_BITS 16
/* Set by init in syncq_queue_nblfq.magic, cleared by destroy: "NBLFQ16". */
#define SYNCQ_QUEUE_NBLFQ_MAGIC UINT64_C(0x4e424c4651313600)

static inline void *syncq_queue_nblfq_cells_inline(syncq_queue_nblfq *q) { return (void *)(q + 1); }

/* SYNCQ_OK or SYNCQ_FULL; SYNCQ_EINVAL for a NULL or uninitialised queue,
 * a NULL item or one beyond 48 bits. */
static inline int syncq_queue_nblfq_enqueue_inline(syncq_queue_nblfq *q, void *item) {
  uint64_t bits = (uint64_t)(uintptr_t)item;
  if (q == NULL || bits == 0 || (bits & ~SYNCQ_NBL_PTR_MASK) != 0 || q->magic != SYNCQ_QUEUE_NBLFQ_MAGIC)
    return SYNCQ_EINVAL;
  return syncq_nbl_enqueue(syncq_queue_nblfq_cells_inline(q), q->mask, &q->head, bits, SYNCQ_QUEUE_NBLFQ_TAG_BITS);
}

/* SYNCQ_OK with *item set, or SYNCQ_EMPTY; SYNCQ_EINVAL for NULL or an
 * uninitialised queue. */
static inline int syncq_queue_nblfq_dequeue_inline(syncq_queue_nblfq *q, void **item) {
  if (q == NULL || item == NULL || q->magic != SYNCQ_QUEUE_NBLFQ_MAGIC) return SYNCQ_EINVAL;
  uint64_t bits;
  int r = syncq_nbl_dequeue(syncq_queue_nblfq_cells_inline(q), q->mask, &q->tail, &bits, SYNCQ_QUEUE_NBLFQ_TAG_BITS);
  if (r == SYNCQ_OK) *item = (void *)(uintptr_t)bits;
  return r;
}

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_STATIC_QUEUE_NBLFQ_H */
