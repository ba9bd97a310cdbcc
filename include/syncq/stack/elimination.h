/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/stack/elimination.h — the elimination-backoff stack (Hendler,
 * Shavit & Yerushalmi 2004): Treiber's stack whose backoff after a failed
 * CAS is a visit to an elimination array, where a push and a pop that meet
 * exchange the item and both finish without touching Top. Lock-free.
 * Needs a double-width CAS (SYNCQ_ENOTSUP otherwise).
 */
#ifndef SYNCQ_STACK_ELIMINATION_H
#define SYNCQ_STACK_ELIMINATION_H

#include "syncq/export.h"

#include <stdint.h>

#include "syncq/pr.h"
#include "syncq/reclaim.h"
#include "syncq/stack.h"

#ifdef __cplusplus
extern "C" {
#endif

struct syncq_stack_elimination_node;

/* One exchanger slot: lo = the offered item (0 for a pop), hi = stamp << 2 | state. */
typedef struct syncq_stack_elimination_slot {
  SYNCQ_CACHELINE_ALIGNED syncq_pr_dw_atomic x;
} syncq_stack_elimination_slot;

typedef struct syncq_stack_elimination {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) top;                      /* version << 32 | (node index + 1) */
  SYNCQ_CACHELINE_ALIGNED struct syncq_stack_elimination_node *nodes; /* read-only after init */
  syncq_stack_elimination_slot *slots;                                /* the elimination array */
  uint32_t nslots;
  int eliminate_first; /* visit the array before Top (see below) */
  SYNCQ_CACHELINE_ALIGNED syncq_freelist free;
} syncq_stack_elimination;

/* cfg as syncq_stack_create's. The elimination array has
 * clamp(max_threads / 2, 1, 16) slots. SYNCQ_EINVAL: s is NULL, cfg->capacity is above
 * SYNCQ_STACK_MAX_CAPACITY, or cfg->max_threads above SYNCQ_STACK_MAX_THREADS.
 * SYNCQ_ENOTSUP: the CPU has no double-width CAS (the free list).
 * SYNCQ_ENOMEM: the nodes or the array could not be allocated. */
SYNCQ_API int syncq_stack_elimination_init(syncq_stack_elimination *s, const syncq_stack_config *cfg);
/* Destroy the stack, freeing its pool and elimination array.
 * SYNCQ_EINVAL: s is NULL.
 */
SYNCQ_API int syncq_stack_elimination_destroy(syncq_stack_elimination *s);
/* Push item (non-NULL) on the stack.
 * SYNCQ_EINVAL: s or item is NULL.
 * SYNCQ_ENOMEM: every node of its pool (capacity nodes) is in the stack;
 * the item is not pushed.
 */
SYNCQ_API int syncq_stack_elimination_push(syncq_stack_elimination *s, void *item);
/* Pop the newest item into *item.
 * SYNCQ_EMPTY: the stack held no item.
 * SYNCQ_EINVAL: s or item is NULL.
 */
SYNCQ_API int syncq_stack_elimination_pop(syncq_stack_elimination *s, void **item);

/* Policy (default off, set before the stack is shared): when on, every
 * operation first visits the elimination array briefly, then Top, as
 * under very high contention; the validation driver uses it to exercise
 * the exchanges, which two cores rarely reach.
 * SYNCQ_EINVAL: s is NULL.
 */
SYNCQ_API int syncq_stack_elimination_set_eliminate_first(syncq_stack_elimination *s, int on);

#ifdef __cplusplus
}
#endif
#endif
