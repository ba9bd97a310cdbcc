/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/lock/sc_queue.h — scheduler-conscious array queue locks (003
 * §3.4, after Kontothanassis, Wisniewski & Scott 1997): the releaser polls
 * the preempted state of the waiters (syncq/mp/sched.h) and hands the lock to
 * the first one that is not preempted; preempted waiters it passes over
 * take a new place when they run again. FIFO by ticket among waiters not
 * reported preempted (strictly FIFO outside a pseudo-scheduler).
 *   "sc-queue"   place in the array taken by a CAS loop (the LL-SC form)
 *   "hybrid-sc"  place taken by one fetch-and-add: 003's hybrid queue
 *                lock (§3.1, fetchop counter + cacheable flags) made
 *                scheduler-conscious, the lock 003 §5 finds robust under
 *                multiprogramming
 * Holds pointers to waiters' scheduler handles: not process-shared.
 * Waiting disciplines: all four (syncq/wait.h); SPIN by default here, the
 * generic API's safe default (COMPETITIVE) through syncq_lock_create.
 */
#ifndef SYNCQ_LOCK_SC_QUEUE_H
#define SYNCQ_LOCK_SC_QUEUE_H

#include "syncq/export.h"

#include <stdbool.h>
#include <stdint.h>

#include "syncq/lock.h"
#include "syncq/mp/sched.h"
#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Slots: at most this many threads may use one lock at once. */
#define SYNCQ_LOCK_SC_MAX_SLOTS 256u

typedef struct syncq_lock_sc_slot {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) word; /* ticket << 2 | state */
  _Atomic(syncq_mp_thread *) owner;               /* the waiter's scheduler handle (NULL: none) */
  /* BLOCK / COMPETITIVE: the waiter's futex word, (ticket << 3 | state
   * << 1 | asleep) modulo 2^32; written by the claimant, then once by the
   * releaser that grants or skips it (sc_queue.c) */
  _Atomic(uint32_t) flag;
} syncq_lock_sc_slot;

typedef struct syncq_lock_sc {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) next_ticket;
  SYNCQ_CACHELINE_ALIGNED uint64_t holder; /* the holder's ticket; only the holder touches it */
  uint32_t nslots;
  bool faa; /* take the ticket by fetch-and-add (hybrid-sc) or a CAS loop (sc-queue) */
  int wait;
  _Atomic(uint64_t) skips; /* waiters passed over because they were preempted */
  syncq_lock_sc_slot slot[SYNCQ_LOCK_SC_MAX_SLOTS];
} syncq_lock_sc;

/* cfg->max_threads: threads that may use the lock at once (0: the
 * maximum). Disciplines SPIN (default), YIELD, BLOCK and COMPETITIVE
 * (sleepers wait on their slot's flag word). SYNCQ_EINVAL: l is NULL, or
 * cfg->wait is no syncq_wait_discipline. SYNCQ_ENOTSUP: cfg->process_shared is set.
 * SYNCQ_ELIMIT: cfg->max_threads is above SYNCQ_LOCK_SC_MAX_SLOTS. */
SYNCQ_API int syncq_lock_sc_queue_init(syncq_lock_sc *l, const syncq_lock_config *cfg);
SYNCQ_API int syncq_lock_hybrid_sc_init(syncq_lock_sc *l, const syncq_lock_config *cfg);
/* Check that the lock is free before its storage is reused (it holds
 * nothing to release).
 * SYNCQ_EINVAL: l is NULL.
 * SYNCQ_EBUSY: the lock is held or awaited.
 */
SYNCQ_API int syncq_lock_sc_destroy(syncq_lock_sc *l);
/* Acquire the lock, waiting for it.
 * SYNCQ_EINVAL: l is NULL.
 */
SYNCQ_API int syncq_lock_sc_lock(syncq_lock_sc *l);
/* Acquire the lock only if it is free, without waiting.
 * SYNCQ_EBUSY: another thread holds the lock or waits for it; the caller
 * holds nothing.
 * SYNCQ_EINVAL: l is NULL.
 */
SYNCQ_API int syncq_lock_sc_trylock(syncq_lock_sc *l);
/* Release the lock.
 * SYNCQ_EINVAL: l is NULL, or the lock is not held (its head slot is not
 * granted).
 */
SYNCQ_API int syncq_lock_sc_unlock(syncq_lock_sc *l);
/* The count of waiters passed over so far, into *out.
 * SYNCQ_EINVAL: l or out is NULL.
 */
SYNCQ_API int syncq_lock_sc_skips(const syncq_lock_sc *l, uint64_t *out);

/* The registry entries (syncq/registry.h) of the two scheduler-conscious locks: "sc-queue" and
 * "hybrid-sc" by name with syncq_lock_create. */
SYNCQ_API extern const syncq_algo syncq_lock_sc_queue_algo;
SYNCQ_API extern const syncq_algo syncq_lock_hybrid_sc_algo;

#ifdef __cplusplus
}
#endif
#endif
