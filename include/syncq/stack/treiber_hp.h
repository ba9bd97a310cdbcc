/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/stack/treiber_hp.h — Treiber's stack with hazard pointers (Michael
 * 2004) instead of a type-stable pool: every push allocates its node,
 * every pop retires it, and a node goes back to the allocator once no
 * hazard pointer holds it; a hazard pointer on the node a pop is about to
 * swing past also rules out ABA. Lock-free (but push calls malloc).
 */
#ifndef SYNCQ_STACK_TREIBER_HP_H
#define SYNCQ_STACK_TREIBER_HP_H

#include "syncq/export.h"

#include "syncq/pr.h"
#include "syncq/reclaim.h"
#include "syncq/stack.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct syncq_stack_treiber_hp {
  SYNCQ_CACHELINE_ALIGNED _Atomic(void *) top; /* the top node, NULL when empty */
  SYNCQ_CACHELINE_ALIGNED syncq_hp_domain *hp; /* read-only after init */
} syncq_stack_treiber_hp;

/* cfg->capacity is ignored: the stack is bounded by memory only.
 * SYNCQ_EINVAL: s is NULL, cfg->capacity is above
 * SYNCQ_STACK_MAX_CAPACITY, or cfg->max_threads above SYNCQ_STACK_MAX_THREADS.
 * SYNCQ_ENOMEM: the hazard-pointer domain could not be allocated. */
SYNCQ_API int syncq_stack_treiber_hp_init(syncq_stack_treiber_hp *s, const syncq_stack_config *cfg);
/* Destroy the stack, freeing the nodes it holds and its hazard-pointer
 * domain.
 * SYNCQ_EINVAL: s is NULL.
 * SYNCQ_EBUSY: a push or pop has not returned (its hazard-pointer record is
 * in use); nothing is freed.
 */
SYNCQ_API int syncq_stack_treiber_hp_destroy(syncq_stack_treiber_hp *s);
/* Push item (non-NULL) on the stack.
 * SYNCQ_EINVAL: s or item is NULL.
 * SYNCQ_ENOMEM: the node could not be allocated; the item is not pushed.
 */
SYNCQ_API int syncq_stack_treiber_hp_push(syncq_stack_treiber_hp *s, void *item);
/* Pop the newest item into *item.
 * SYNCQ_EMPTY: the stack held no item.
 * SYNCQ_EINVAL: s or item is NULL.
 * SYNCQ_ENOMEM: no hazard-pointer record could be allocated; nothing was
 * taken.
 */
SYNCQ_API int syncq_stack_treiber_hp_pop(syncq_stack_treiber_hp *s, void **item);

#ifdef __cplusplus
}
#endif
#endif
