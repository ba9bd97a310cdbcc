/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/lock/mcs_tp.h — the time-published MCS queue lock ("mcs-tp"; He,
 * Scherer & Scott, "Preemption Adaptivity in Time-Published Queue-Based
 * Spin Locks", HiPC 2005). An MCS queue whose waiters publish a timestamp
 * while they spin; the releaser passes over a waiter whose timestamp is
 * stale (it is probably preempted), and that waiter queues again at the
 * tail when it runs. FIFO among waiters that keep running; not FIFO
 * otherwise (registered without SYNCQ_PROP_FIFO). Each waiter spins on its
 * own node (the caller's syncq_lock_node: SYNCQ_PROP_USES_NODE). Holds
 * pointers: not process-shared (SYNCQ_ENOTSUP). Waiting disciplines: SPIN
 * (default here) and YIELD; BLOCK and COMPETITIVE are SYNCQ_ENOTSUP (a
 * sleeping waiter publishes nothing, so it would always be passed over).
 * The generic API's safe default restricts it (src/lock/gcr.c): the
 * admitted waiters yield in its queue, the others sleep outside it
 * (syncq/lock.h).
 */
#ifndef SYNCQ_LOCK_MCS_TP_H
#define SYNCQ_LOCK_MCS_TP_H

#include "syncq/export.h"

#include <stdbool.h>
#include <stdint.h>

#include "syncq/lock.h"
#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most a waiter's published timestamp may lag (ns, on the monotonic
 * clock) when the lock is released before the waiter is taken for off its
 * processor and passed over. Each lock uses the measured cost of one
 * context switch (syncq_wait_spin_limit_ns, 1-200 us), at most this: a
 * waiter that has not published for that long is not running (it yielded
 * to a thread that kept the processor, or was preempted), and granting it
 * would idle the lock for at least one context switch, the price at which
 * the competitive discipline stops waiting too. A running waiter
 * republishes at every poll (well under a microsecond apart). Mistakes
 * cost fairness only, never safety: a running waiter passed over queues
 * again; a preempted one granted is plain MCS's convoy. */
#define SYNCQ_LOCK_MCS_TP_STALE_NS 100000u

typedef struct syncq_lock_mcs_tp {
  SYNCQ_CACHELINE_ALIGNED _Atomic(void *) tail; /* the last node in the queue, NULL when free */
  int wait;
  uint64_t stale_ns; /* min(SYNCQ_LOCK_MCS_TP_STALE_NS, one context switch) */
} syncq_lock_mcs_tp;

/* cfg may be NULL (defaults: SPIN); the first init in a process measures
 * one context switch (syncq_wait_calibrate) for the staleness bound.
 * SYNCQ_EINVAL: l is NULL, or cfg->wait is no syncq_wait_discipline. SYNCQ_ENOTSUP:
 * cfg->wait is BLOCK or COMPETITIVE, or cfg->process_shared is set. */
SYNCQ_API int syncq_lock_mcs_tp_init(syncq_lock_mcs_tp *l, const syncq_lock_config *cfg);
/* Check that the lock is free before its storage is reused (it holds
 * nothing to release).
 * SYNCQ_EINVAL: l is NULL.
 * SYNCQ_EBUSY: the lock is held or awaited.
 */
SYNCQ_API int syncq_lock_mcs_tp_destroy(syncq_lock_mcs_tp *l);
/* Acquire the lock, waiting for it (node: the caller's, the same for its
 * unlock).
 * SYNCQ_EINVAL: l or node is NULL.
 */
SYNCQ_API int syncq_lock_mcs_tp_lock(syncq_lock_mcs_tp *l, syncq_lock_node *node);
/* Acquire the lock only if it is free, without waiting.
 * SYNCQ_EBUSY: another thread holds the lock or waits for it (or the lock
 * moved on meanwhile); the caller holds nothing.
 * SYNCQ_EINVAL: l or node is NULL.
 */
SYNCQ_API int syncq_lock_mcs_tp_trylock(syncq_lock_mcs_tp *l, syncq_lock_node *node);
/* Release the lock held through node.
 * SYNCQ_EINVAL: l or node is NULL, or the lock is not held (no thread is in
 * its queue).
 */
SYNCQ_API int syncq_lock_mcs_tp_unlock(syncq_lock_mcs_tp *l, syncq_lock_node *node);

/* The registry entry (syncq/registry.h) of the time-published MCS lock: "mcs-tp" by name with
 * syncq_lock_create. */
SYNCQ_API extern const syncq_algo syncq_lock_mcs_tp_algo;

#ifdef __cplusplus
}
#endif
#endif
