/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lock_ps.c — the single-lock stack with a preemption-safe lock
 * ("lock-ps"): lock.c's stack, its lock "ttas-ps" (src/lock/ttas_ps.c)
 * unless the caller's configuration names another.
 *
 * Contract
 *   Source:      001 §4.2, Figure 2: the single-lock stack measured with
 *                an ordinary and a preemption-safe lock.
 *   Progress:    blocking; the holder asks a pseudo-scheduler
 *                (syncq/mp/sched.h) not to preempt it, for a bounded time.
 *   Atomics:     those of "ttas-ps": 1 swap to acquire, 1 store to release,
 *                and the request's store each way (no read-modify-write).
 *   Memory:      as lock.c: nodes (capacity) and the lock allocated at
 *                init, never after.
 *   Signal-safe: no. Process-shared: no.
 *   Limits:      capacity <= SYNCQ_STACK_MAX_CAPACITY; non-NULL items.
 *   Linearizable: yes, as lock.c. Outside a pseudo-scheduler it behaves as
 *                "lock".
 */
#include "syncq/stack.h"
#include "syncq/stack/lock.h"

/* The caller's configuration, its lock "ttas-ps" unless it names one. */
static int lock_ps_init(syncq_stack_lock *s, const syncq_stack_config *c) {
  syncq_stack_config cfg = {0};
  if (c != NULL) cfg = *c;
  if (cfg.lock == NULL) cfg.lock = "ttas-ps";
  return syncq_stack_lock_init(s, &cfg);
}

SYNCQ_STACK_REGISTER_FNS(lock_ps, "lock-ps", "single-lock stack, preemption-safe lock (ttas-ps)",
                         "001 §4.2, Figure 2 (preemption-safe lock)", BLOCKING,
                         SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_BOUNDED, syncq_stack_lock, lock_ps_init,
                         syncq_stack_lock_destroy, syncq_stack_lock_push, syncq_stack_lock_pop);
