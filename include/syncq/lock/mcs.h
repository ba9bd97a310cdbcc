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
/* The typed API of the MCS queue lock: lock, trylock and unlock take the caller's node (the same node
 * for a lock and its unlock). Statuses and thread-safety: those of syncq/lock.h's generic calls. */
SYNCQ_API int syncq_lock_mcs_destroy(syncq_lock_mcs *l); /* SYNCQ_EBUSY if held or awaited */
SYNCQ_API int syncq_lock_mcs_lock(syncq_lock_mcs *l, syncq_lock_node *node);
SYNCQ_API int syncq_lock_mcs_trylock(syncq_lock_mcs *l, syncq_lock_node *node); /* OK or EBUSY */
SYNCQ_API int syncq_lock_mcs_unlock(syncq_lock_mcs *l, syncq_lock_node *node);  /* EINVAL if free */

#ifdef __cplusplus
}
#endif
#endif
