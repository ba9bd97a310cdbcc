/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/stack/pool.h — the node pool of syncq's stacks and priority queues.
 *
 * Nodes live in one array allocated at init and are recycled, never freed,
 * until destroy (type-stable memory: a thread holding a stale index may
 * still read the node, and the algorithms validate such reads with a
 * versioned CAS). Which slots are in use is a bitmap of 64-bit words: a
 * thread claims a slot by CAS of one bit, starting at a thread-local hint
 * so that a thread usually reuses the nodes it released last (the
 * "thread-local free nodes" of 001 §4.3), and releases it by clearing the
 * bit. No linked free list, so no ABA on the pool itself.
 */
#ifndef SYNCQ_STACK_POOL_H
#define SYNCQ_STACK_POOL_H

#include <stdint.h>

#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct syncq_node_bitmap {
  _Atomic(uint64_t) *words; /* bit set = slot in use; bits past nslots are set */
  uint32_t nslots;
  uint32_t nwords;
} syncq_node_bitmap;

#ifdef __cplusplus
}
#endif
#endif
