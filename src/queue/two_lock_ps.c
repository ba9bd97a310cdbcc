/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * two_lock_ps.c — Michael & Scott's two-lock queue with preemption-safe
 * locks ("two-lock-ps"): two_lock.c's queue, both its locks "ttas-ps"
 * (src/lock/ttas_ps.c) instead of "ttas".
 *
 * Contract
 *   Source:      Michael & Scott (001) §4.1 and Figure 2 (the two-lock
 *                queue), measured there with preemption-safe locks too.
 *   Progress:    blocking (two locks, one per end); a holder asks a
 *                pseudo-scheduler (syncq/mp/sched.h) not to preempt it, for
 *                a bounded time.
 *   Atomics:     those of one "ttas-ps" acquire/release per operation, plus
 *                the no-preemption request (no read-modify-write: a store
 *                each way, a load of the gate at its end).
 *   Memory:      as two_lock.c: one malloc per enqueue, one free per
 *                dequeue, a dummy node allocated at init.
 *   Signal-safe: no. Process-shared: no (pointers).
 *   Limits:      unbounded; items non-NULL; capacity is ignored.
 *   Linearizable: yes, as two_lock.c. Outside a pseudo-scheduler it
 *                behaves as "two-lock".
 */
#include "syncq/queue.h"
#include "syncq/queue/lock_queue.h"

/* The registry's init takes a capacity, which a linked queue does not use. */
static int two_lock_ps_init(syncq_queue_two_lock *q, size_t capacity) {
  (void)capacity;
  return syncq_queue_two_lock_init(q, "ttas-ps");
}

SYNCQ_QUEUE_REGISTER_FIXED_FNS(two_lock_ps, "two-lock-ps",
                               "Michael & Scott two-lock queue, preemption-safe locks (ttas-ps)",
                               "001 §4.1 (two preemption-safe locks)", BLOCKING,
                               SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES, syncq_queue_two_lock,
                               two_lock_ps_init, syncq_queue_two_lock_destroy, syncq_queue_two_lock_enqueue,
                               syncq_queue_two_lock_dequeue);
