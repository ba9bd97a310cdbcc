/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * single_lock_ps.c — the single-lock queue with a preemption-safe lock
 * ("single-lock-ps"): single_lock.c's queue, its lock "ttas-ps"
 * (src/lock/ttas_ps.c) instead of "ttas".
 *
 * Contract
 *   Source:      Michael & Scott (001) §4.1: "the usual single-lock
 *                implementation using both ordinary and preemption-safe
 *                locks"; this is the second of that pair.
 *   Progress:    blocking (a lock); the holder asks a pseudo-scheduler
 *                (syncq/mp/sched.h) not to preempt it, for a bounded time.
 *   Atomics:     those of one "ttas-ps" acquire/release per operation, plus
 *                the no-preemption request (no read-modify-write: a store
 *                each way, a load of the gate at its end).
 *   Memory:      as single_lock.c: one malloc per enqueue, one free per
 *                dequeue, a dummy node allocated at init.
 *   Signal-safe: no. Process-shared: no (pointers).
 *   Limits:      unbounded; items non-NULL; capacity is ignored.
 *   Linearizable: yes, at the lock's acquire (as single_lock.c). Outside a
 *                pseudo-scheduler it behaves as "single-lock".
 */
#include "syncq/queue.h"
#include "syncq/queue/lock_queue.h"

/* The registry's init takes a capacity, which a linked queue does not use. */
static int single_lock_ps_init(syncq_queue_single_lock *q, size_t capacity) {
  (void)capacity;
  return syncq_queue_single_lock_init(q, "ttas-ps");
}

SYNCQ_QUEUE_REGISTER_FIXED_FNS(single_lock_ps, "single-lock-ps",
                               "linked queue behind one preemption-safe lock (ttas-ps)",
                               "001 §4.1 (single preemption-safe lock)", BLOCKING,
                               SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES,
                               syncq_queue_single_lock, single_lock_ps_init, syncq_queue_single_lock_destroy,
                               syncq_queue_single_lock_enqueue, syncq_queue_single_lock_dequeue);
