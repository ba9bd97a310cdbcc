/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/lock/clh.h — the CLH list-based queue lock ("clh"; Craig 1993,
 * Magnusson, Landin & Hagersten 1994). FIFO; each waiter spins on its
 * predecessor's node. The queue nodes live inside the lock: in CLH a
 * released node is still read by the successor, so it cannot live in the
 * caller's syncq_lock_node, which the caller may reuse as soon as unlock
 * returns. Each holder leaves a node ready for the next arrival beside
 * its own, so an uncontended acquisition takes it with its one CAS; the
 * others come from a pool (a syncq_freelist, syncq/reclaim.h).
 * Holds pointers: not process-shared (SYNCQ_ENOTSUP).
 */
#ifndef SYNCQ_LOCK_CLH_H
#define SYNCQ_LOCK_CLH_H

#include "syncq/export.h"

#include <stdbool.h>
#include <stdint.h>

#include "syncq/lock.h"
#include "syncq/pr.h"
#include "syncq/reclaim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Nodes in the lock's pool: up to SYNCQ_LOCK_CLH_POOL - 2 threads hold or
 * await the lock without waiting for a node (more wait for one); at most
 * 256 (a tail word's index). */
#define SYNCQ_LOCK_CLH_POOL 66u

typedef struct syncq_lock_clh_qnode {
  /* 1: the owner holds or awaits the lock; 2: the same, and its successor
   * may sleep on this flag; 0: released */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) locked;
  /* the tail word of a node prepared for this node's successor to enqueue
   * (set by the owner once it holds the lock); 0: none */
  _Atomic(uint64_t) spare;
  /* times the node was prepared, modulo 2^56 (the tail word's bits above
   * the index): its tail words repeat only after 2^56 preparations */
  _Atomic(uint64_t) gen;
  syncq_fl_link link; /* on the pool's free list */
} syncq_lock_clh_qnode;

typedef struct syncq_lock_clh {
  /* the last qnode's tail word: its generation << 8 | its index in node[] */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) tail;
  int wait;
  SYNCQ_CACHELINE_ALIGNED syncq_freelist pool; /* free qnodes */
  syncq_lock_clh_qnode node[SYNCQ_LOCK_CLH_POOL];
} syncq_lock_clh;

/* cfg may be NULL (defaults: SPIN); every discipline. SYNCQ_EINVAL: l is
 * NULL, or cfg->wait is no syncq_wait_discipline. SYNCQ_ENOTSUP: cfg->process_shared is
 * set, or the CPU has no double-width CAS (the pool). */
SYNCQ_API int syncq_lock_clh_init(syncq_lock_clh *l, const syncq_lock_config *cfg);
/* Check that the lock is free before its storage is reused (it holds
 * nothing to release).
 * SYNCQ_EINVAL: l is NULL.
 * SYNCQ_EBUSY: the lock is held or awaited.
 */
SYNCQ_API int syncq_lock_clh_destroy(syncq_lock_clh *l);
/* Acquire the lock, waiting for it (node: the caller's, the same for its
 * unlock).
 * SYNCQ_EINVAL: l or node is NULL.
 */
SYNCQ_API int syncq_lock_clh_lock(syncq_lock_clh *l, syncq_lock_node *node);
/* Acquire the lock only if it is free, without waiting.
 * SYNCQ_EBUSY: another thread holds the lock, or no prepared spare node is
 * free (the lock moved on meanwhile); the caller holds nothing.
 * SYNCQ_EINVAL: l or node is NULL.
 */
SYNCQ_API int syncq_lock_clh_trylock(syncq_lock_clh *l, syncq_lock_node *node);
/* Release the lock held through node.
 * SYNCQ_EINVAL: l or node is NULL, or the lock is not held through node
 * (node is not the holder's: a released, waiting or prepared node, or one
 * of another lock).
 */
SYNCQ_API int syncq_lock_clh_unlock(syncq_lock_clh *l, syncq_lock_node *node);

#ifdef __cplusplus
}
#endif
#endif
