/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/barrier/mcs_tree.h — the MCS tree barrier ("mcs-tree";
 * Mellor-Crummey & Scott 1991 §3.3, Figure 11; 003 §3.3): arrivals climb a
 * 4-ary tree, wake-ups descend a binary tree, one node per thread, no
 * atomic read-modify-write. The nodes are allocated at init (one cache
 * line each for the arrival flags and the wake-up flag): not
 * process-shared.
 */
#ifndef SYNCQ_BARRIER_MCS_TREE_H
#define SYNCQ_BARRIER_MCS_TREE_H

#include "syncq/export.h"

#include <stdbool.h>
#include <stdint.h>

#include "syncq/barrier.h"
#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SYNCQ_BARRIER_MCS_TREE_FAN_IN 4u  /* arrival tree */
#define SYNCQ_BARRIER_MCS_TREE_FAN_OUT 2u /* wake-up tree */

typedef struct syncq_barrier_mcs_tree_node syncq_barrier_mcs_tree_node;

typedef struct syncq_barrier_mcs_tree {
  SYNCQ_CACHELINE_ALIGNED syncq_barrier_mcs_tree_node *node; /* [threads], allocated by init */
  uint32_t threads;
  int wait;
  _Atomic(uint32_t) sleepers;
  _Atomic(uint32_t) broken; /* 1 after a timed wait ran out, until reset */
} syncq_barrier_mcs_tree;

/* cfg as syncq_barrier_create's (every discipline); allocates the tree's
 * nodes. SYNCQ_EINVAL: b or cfg is NULL, cfg->threads is 0, or cfg->wait is no
 * syncq_wait_discipline. SYNCQ_ELIMIT: cfg->threads is above
 * SYNCQ_BARRIER_MAX_THREADS. SYNCQ_ENOTSUP:
 * cfg->process_shared is set. SYNCQ_ENOMEM: the nodes could not be
 * allocated. */
SYNCQ_API int syncq_barrier_mcs_tree_init(syncq_barrier_mcs_tree *b, const syncq_barrier_config *cfg);
/* Destroy the MCS tree barrier, freeing its nodes.
 * SYNCQ_EINVAL: b is NULL.
 */
SYNCQ_API int syncq_barrier_mcs_tree_destroy(syncq_barrier_mcs_tree *b);
/* Arrive as participant id and wait for the others.
 * SYNCQ_EINVAL: b is NULL, id is not below its participant count, or it was
 * never initialised (or was destroyed).
 * SYNCQ_EBROKEN: the barrier is broken (a timed wait ran out in this or an
 * earlier episode); it stays broken until reset.
 */
SYNCQ_API int syncq_barrier_mcs_tree_wait(syncq_barrier_mcs_tree *b, unsigned id);
/* Arrive as participant id and wait for the others, for at most timeout_ns
 * nanoseconds once it has to wait.
 * SYNCQ_EINVAL: b is NULL, id is not below its participant count, or
 * timeout_ns is 0, or it was never initialised (or was destroyed).
 * SYNCQ_ETIMEDOUT: timeout_ns passed before every participant arrived; the
 * barrier is now broken (the other waiters return SYNCQ_EBROKEN).
 * SYNCQ_EBROKEN: the barrier is broken (a timed wait ran out in this or an
 * earlier episode); it stays broken until reset.
 */
SYNCQ_API int syncq_barrier_mcs_tree_wait_timed(syncq_barrier_mcs_tree *b, unsigned id, uint64_t timeout_ns);
/* Mend a broken barrier: back to the state after init. Only while no thread
 * is inside a wait.
 * SYNCQ_EINVAL: b is NULL, or it was never initialised (or was destroyed).
 */
SYNCQ_API int syncq_barrier_mcs_tree_reset(syncq_barrier_mcs_tree *b);

#ifdef __cplusplus
}
#endif
#endif
