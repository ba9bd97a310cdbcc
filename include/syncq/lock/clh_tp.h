/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/lock/clh_tp.h — the time-published CLH queue lock ("clh-tp"; He,
 * Scherer & Scott, "Preemption Adaptivity in Time-Published Queue-Based
 * Spin Locks", HiPC 2005). A CLH queue whose waiters publish a timestamp
 * in their own node while they spin on their predecessor's; a waiter whose
 * predecessor's timestamp is stale (it is probably preempted) marks that
 * node removed and spins on the node before it instead, and the removed
 * waiter queues again at the tail when it runs. FIFO among waiters that
 * keep running; not FIFO otherwise (registered without SYNCQ_PROP_FIFO).
 * The queue nodes live in the lock, as in "clh" (a released node is
 * still read by its successor): each holder leaves a node ready for the
 * next arrival beside its own, so an uncontended acquisition takes it
 * with its one CAS; the others come from a pool. The caller's
 * syncq_lock_node remembers which one (SYNCQ_PROP_USES_NODE). Holds
 * pointers: not process-shared (SYNCQ_ENOTSUP). Waiting disciplines: SPIN
 * (default here) and YIELD; BLOCK and COMPETITIVE are SYNCQ_ENOTSUP (a
 * sleeping waiter publishes nothing, so it would always be removed).
 * The generic API's safe default restricts it (src/lock/gcr.c): the
 * admitted waiters yield in its queue, the others sleep outside it
 * (syncq/lock.h).
 */
#ifndef SYNCQ_LOCK_CLH_TP_H
#define SYNCQ_LOCK_CLH_TP_H

#include "syncq/export.h"

#include <stdbool.h>
#include <stdint.h>

#include "syncq/lock.h"
#include "syncq/pr.h"
#include "syncq/reclaim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most a waiting node's published timestamp may lag (ns, on the
 * monotonic clock) when its successor looks at it before it is taken for
 * off its processor and removed. Each lock uses the measured cost of one
 * context switch (syncq_wait_spin_limit_ns, 1-200 us), at most this; the
 * reasoning is SYNCQ_LOCK_MCS_TP_STALE_NS's (syncq/lock/mcs_tp.h).
 * Mistakes cost fairness only, never safety. */
#define SYNCQ_LOCK_CLH_TP_STALE_NS 100000u

/* Nodes in the lock's pool: up to SYNCQ_LOCK_CLH_TP_POOL - 2 threads hold
 * or await the lock without waiting for a node (more wait for one). At
 * most 255: a node's state word names its predecessor by index. */
#define SYNCQ_LOCK_CLH_TP_POOL 66u

typedef struct syncq_lock_clh_tp_qnode {
  /* state (low 8 bits: available, waiting, transient, removed or held)
   * and, while waiting, the index of the predecessor node (bits 8-15) */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) word;
  _Atomic(uint64_t) stamp; /* syncq_now_ns at the owner's last poll */
  /* the tail word of a node prepared for this node's successor to enqueue
   * (set by the owner once it holds the lock); 0: none */
  _Atomic(uint64_t) spare;
  /* times the node was prepared, modulo 2^56 (the tail word's bits above
   * the index): its tail words repeat only after 2^56 preparations */
  _Atomic(uint64_t) gen;
  syncq_fl_link link; /* on the pool's free list */
} syncq_lock_clh_tp_qnode;

typedef struct syncq_lock_clh_tp {
  /* the last qnode's tail word: its generation << 8 | its index in node[] */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) tail;
  int wait;
  uint64_t stale_ns;                           /* min(SYNCQ_LOCK_CLH_TP_STALE_NS, one context switch) */
  SYNCQ_CACHELINE_ALIGNED syncq_freelist pool; /* free qnodes */
  syncq_lock_clh_tp_qnode node[SYNCQ_LOCK_CLH_TP_POOL];
} syncq_lock_clh_tp;

/* Initialise l: cfg may be NULL (defaults: SPIN). SYNCQ_EINVAL: l is
 * NULL, or cfg->wait is no syncq_wait_discipline. SYNCQ_ENOTSUP: cfg->wait is BLOCK or
 * COMPETITIVE, cfg->process_shared is set, or the CPU has no double-width
 * CAS (the pool).
 * Thread safety: not concurrently with any other call on l.
 * Progress: blocking on the process's first init of a time-published
 * lock (it measures one context switch, syncq_wait_calibrate), wait-free
 * afterwards. */
SYNCQ_API int syncq_lock_clh_tp_init(syncq_lock_clh_tp *l, const syncq_lock_config *cfg);
/* Check that the lock is free before its storage is reused (it holds
 * nothing to release).
 * SYNCQ_EINVAL: l is NULL.
 * SYNCQ_EBUSY: the lock is held or awaited.
 */
SYNCQ_API int syncq_lock_clh_tp_destroy(syncq_lock_clh_tp *l);
/* Acquire the lock, waiting for it (node: the caller's, the same for its
 * unlock).
 * SYNCQ_EINVAL: l or node is NULL.
 */
SYNCQ_API int syncq_lock_clh_tp_lock(syncq_lock_clh_tp *l, syncq_lock_node *node);
/* Acquire the lock only if it is free, without waiting.
 * SYNCQ_EBUSY: another thread holds the lock, or the lock moved on
 * meanwhile (it takes only the prepared spare a released lock's last holder
 * left, with one CAS, never from the pool); the caller holds nothing.
 * SYNCQ_EINVAL: l or node is NULL.
 */
SYNCQ_API int syncq_lock_clh_tp_trylock(syncq_lock_clh_tp *l, syncq_lock_node *node);
/* Release the lock held through node.
 * SYNCQ_EINVAL: l or node is NULL, or the lock is not held through node
 * (node does not hold l).
 */
SYNCQ_API int syncq_lock_clh_tp_unlock(syncq_lock_clh_tp *l, syncq_lock_node *node);

/* The registry entry (syncq/registry.h) of the time-published CLH lock:
 * "clh-tp" by name with syncq_lock_create. */
SYNCQ_API extern const syncq_algo syncq_lock_clh_tp_algo;

#ifdef __cplusplus
}
#endif
#endif
