/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * skew_lock_ps.c — the skew heap under a preemption-safe lock
 * ("skew-lock-ps"): skew_lock.c's heap, its lock "ttas-ps"
 * (src/lock/ttas_ps.c) unless the caller's configuration names another.
 *
 * Contract
 *   Source:      001 §4.3, Figure 3: the single-lock skew heap measured
 *                with an ordinary and a preemption-safe lock.
 *   Progress:    blocking; the holder asks a pseudo-scheduler
 *                (syncq/mp/sched.h) not to preempt it, for a bounded time.
 *   Atomics:     those of "ttas-ps": 1 swap to acquire, 1 store to release,
 *                and the request's store each way (no read-modify-write).
 *   Memory:      as skew_lock.c: capacity nodes and the lock allocated at
 *                init, never after.
 *   Signal-safe: no. Process-shared: no.
 *   Limits:      capacity <= SYNCQ_PQUEUE_MAX_CAPACITY items.
 *   Linearizable: yes, as skew_lock.c. Outside a pseudo-scheduler it
 *                behaves as "skew-lock".
 */
#include "syncq/pqueue.h"
#include "syncq/pqueue/skew_lock.h"

/* The caller's configuration, its lock "ttas-ps" unless it names one. */
static int skew_lock_ps_init(syncq_pqueue_skew_lock *q, const syncq_pqueue_config *c) {
  syncq_pqueue_config cfg = {0};
  if (c != NULL) cfg = *c;
  if (cfg.lock == NULL) cfg.lock = "ttas-ps";
  return syncq_pqueue_skew_lock_init(q, &cfg);
}

SYNCQ_PQUEUE_REGISTER_FNS(skew_lock_ps, "skew-lock-ps", "skew heap under one preemption-safe lock (ttas-ps)",
                          "001 §4.3, Figure 3 (preemption-safe lock)", BLOCKING,
                          SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_BOUNDED, syncq_pqueue_skew_lock, skew_lock_ps_init,
                          syncq_pqueue_skew_lock_destroy, syncq_pqueue_skew_lock_insert,
                          syncq_pqueue_skew_lock_delete_min);
