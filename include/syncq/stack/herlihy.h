/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/stack/herlihy.h — the stack of Herlihy's methodology for
 * non-blocking objects, with unnecessary copying removed (001 §4.2): the
 * object is a small version block holding Top; an operation copies the
 * current Top into a private version block, applies push or pop to the
 * copy, and swings the shared pointer to its block with a versioned CAS
 * (LL/SC in 001). Lock-free.
 */
#ifndef SYNCQ_STACK_HERLIHY_H
#define SYNCQ_STACK_HERLIHY_H

#include "syncq/export.h"

#include <stdint.h>

#include "syncq/pr.h"
#include "syncq/stack.h"
#include "syncq/stack/pool.h"

#ifdef __cplusplus
extern "C" {
#endif

struct syncq_stack_herlihy_node;
struct syncq_stack_herlihy_version;

typedef struct syncq_stack_herlihy {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) shared;               /* version << 32 | (block index + 1) */
  SYNCQ_CACHELINE_ALIGNED struct syncq_stack_herlihy_node *nodes; /* read-only after init */
  struct syncq_stack_herlihy_version *blocks;
  syncq_node_bitmap node_pool;
  syncq_node_bitmap block_pool;
} syncq_stack_herlihy;

/* cfg as syncq_stack_create's. SYNCQ_EINVAL: s is NULL, cfg->capacity is above
 * SYNCQ_STACK_MAX_CAPACITY, or cfg->max_threads above SYNCQ_STACK_MAX_THREADS.
 * SYNCQ_ENOMEM: the nodes, the version blocks or their pools could not be
 * allocated. */
SYNCQ_API int syncq_stack_herlihy_init(syncq_stack_herlihy *s, const syncq_stack_config *cfg);
/* Destroy the stack, freeing its nodes and version blocks.
 * SYNCQ_EINVAL: s is NULL.
 */
SYNCQ_API int syncq_stack_herlihy_destroy(syncq_stack_herlihy *s);
/* Push item (non-NULL) on the stack.
 * SYNCQ_EINVAL: s or item is NULL.
 * SYNCQ_ENOMEM: every node of its pool (capacity nodes) is in the stack;
 * the item is not pushed.
 */
SYNCQ_API int syncq_stack_herlihy_push(syncq_stack_herlihy *s, void *item);
/* Pop the newest item into *item.
 * SYNCQ_EMPTY: the stack held no item.
 * SYNCQ_EINVAL: s or item is NULL.
 */
SYNCQ_API int syncq_stack_herlihy_pop(syncq_stack_herlihy *s, void **item);

#ifdef __cplusplus
}
#endif
#endif
