/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/lock/mcs.h — the MCS list-based queue lock ("mcs"; Mellor-Crummey
 * & Scott 1991, Figure 5; the linked-list queue lock of 003 §3.1). FIFO;
 * each waiter spins on the locked flag of its own node (the caller's
 * syncq_lock_node). Holds pointers: not process-shared (SYNCQ_ENOTSUP).
 */
#ifndef SYNCQ_LOCK_MCS_H
#define SYNCQ_LOCK_MCS_H

#include "syncq/export.h"

#include <stdbool.h>
#include <stdint.h>

#include "syncq/lock.h"
#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct syncq_lock_mcs {
  SYNCQ_CACHELINE_ALIGNED _Atomic(void *) tail; /* the last node in the queue, NULL when free */
  int wait;
} syncq_lock_mcs;

/* cfg may be NULL (defaults: SPIN, private); every discipline. SYNCQ_EINVAL: l is NULL, or
 * cfg->wait is no syncq_wait_discipline. SYNCQ_ENOTSUP: cfg->process_shared is set. */
SYNCQ_API int syncq_lock_mcs_init(syncq_lock_mcs *l, const syncq_lock_config *cfg);
/* Check that the lock is free before its storage is reused (it holds
 * nothing to release).
 * SYNCQ_EINVAL: l is NULL.
 * SYNCQ_EBUSY: the lock is held or awaited.
 */
SYNCQ_API int syncq_lock_mcs_destroy(syncq_lock_mcs *l);
/* Acquire the lock, waiting for it (node: the caller's, the same for its
 * unlock).
 * SYNCQ_EINVAL: l or node is NULL.
 */
SYNCQ_API int syncq_lock_mcs_lock(syncq_lock_mcs *l, syncq_lock_node *node);
/* Acquire the lock only if it is free, without waiting.
 * SYNCQ_EBUSY: another thread holds the lock or waits for it; the caller
 * holds nothing.
 * SYNCQ_EINVAL: l or node is NULL.
 */
SYNCQ_API int syncq_lock_mcs_trylock(syncq_lock_mcs *l, syncq_lock_node *node);
/* Release the lock held through node.
 * SYNCQ_EINVAL: l or node is NULL, or the lock is not held (no thread is in
 * its queue).
 */
SYNCQ_API int syncq_lock_mcs_unlock(syncq_lock_mcs *l, syncq_lock_node *node);

#ifdef __cplusplus
}
#endif
#endif
