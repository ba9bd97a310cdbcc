/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/stack/treiber.h — Treiber's non-blocking stack (Treiber 1986; the
 * stack of 001 §4.2): a linked list whose Top is swung by CAS. Top holds a
 * node index and a 32-bit version, so a pop that read a stale Top cannot
 * succeed (the ABA defence of tagged pointers); nodes come from a tagged
 * free list of type-stable nodes (syncq/reclaim.h), with a small per-thread
 * cache in front of it so that an uncontended push/pop pair costs two CAS
 * on Top and no double-width CAS. Lock-free. Needs a
 * double-width CAS (the free list's): SYNCQ_ENOTSUP otherwise.
 */
#ifndef SYNCQ_STACK_TREIBER_H
#define SYNCQ_STACK_TREIBER_H

#include "syncq/export.h"

#include <stdint.h>

#include "syncq/pr.h"
#include "syncq/stack.h"
#include "syncq/reclaim.h"

#ifdef __cplusplus
extern "C" {
#endif

struct syncq_stack_treiber_node;
struct syncq_stack_treiber_cache; /* one thread's free nodes (opaque) */

/* Free nodes a thread keeps for itself before the shared free list. */
#define SYNCQ_STACK_TREIBER_CACHE_NODES 2u

typedef struct syncq_stack_treiber {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) top; /* version << 32 | (node index + 1); 0 index = empty */
  SYNCQ_CACHELINE_ALIGNED struct syncq_stack_treiber_node *nodes; /* read-only after init */
  struct syncq_stack_treiber_cache *caches; /* max_threads per-thread node caches; read-only after init */
  uint32_t ncaches;
  uint64_t id;                                 /* unique per init: tells a thread's cache hint from a stale one */
  SYNCQ_CACHELINE_ALIGNED syncq_freelist free; /* the free nodes (syncq/reclaim.h) */
} syncq_stack_treiber;

/* cfg as syncq_stack_create's. SYNCQ_EINVAL: s is NULL, cfg->capacity is above
 * SYNCQ_STACK_MAX_CAPACITY, or cfg->max_threads above SYNCQ_STACK_MAX_THREADS.
 * SYNCQ_ENOTSUP: the CPU has no double-width CAS (the free list).
 * SYNCQ_ENOMEM: the node pool or the threads' caches could not be
 * allocated. */
SYNCQ_API int syncq_stack_treiber_init(syncq_stack_treiber *s, const syncq_stack_config *cfg);
/* Destroy the stack, freeing its node pool and the threads' caches.
 * SYNCQ_EINVAL: s is NULL.
 */
SYNCQ_API int syncq_stack_treiber_destroy(syncq_stack_treiber *s);
/* Push item (non-NULL) on the stack.
 * SYNCQ_EINVAL: s or item is NULL.
 * SYNCQ_ENOMEM: neither the calling thread's cache nor the shared free list
 * has a node; the item is not pushed. Every node not in the stack is in one
 * of them or in another thread's cache (up to
 * SYNCQ_STACK_TREIBER_CACHE_NODES per thread, max_threads caches), and a
 * cache stays with its thread for the stack's life, after the thread has
 * exited too: only a stack used by one thread alone takes exactly capacity
 * items (contract: src/stack/treiber.c).
 */
SYNCQ_API int syncq_stack_treiber_push(syncq_stack_treiber *s, void *item);
/* Pop the newest item into *item.
 * SYNCQ_EMPTY: the stack held no item.
 * SYNCQ_EINVAL: s or item is NULL.
 */
SYNCQ_API int syncq_stack_treiber_pop(syncq_stack_treiber *s, void **item);

#ifdef __cplusplus
}
#endif
#endif
