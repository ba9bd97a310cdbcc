/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lock_ttas_ps.c — the counter under a preemption-safe TTAS lock
 * ("lock-ttas-ps"): lock_counter.c's counter over the lock "ttas-ps"
 * (src/lock/ttas_ps.c) instead of "ttas".
 *
 * Contract
 *   Source:      001 §4.4, Figure 4: the counter under one lock, measured
 *                with an ordinary and a preemption-safe lock.
 *   Progress:    blocking; the holder asks a pseudo-scheduler
 *                (syncq/mp/sched.h) not to preempt it, for a bounded time.
 *   Atomics:     those of "ttas-ps" (1 swap + 1 store) around a plain add,
 *                and the request's store each way (no read-modify-write).
 *   Memory:      as lock_counter.c: the lock's storage allocated at init,
 *                freed at destroy.
 *   Signal-safe: no. Process-shared: no.
 *   Limits:      the value wraps modulo 2^64.
 *   Linearizable: yes, as lock_counter.c. Outside a pseudo-scheduler it
 *                behaves as "lock-ttas".
 */
#include <stdbool.h>

#include "syncq/counter.h"
#include "syncq/counter/lock.h"
#include "syncq/wait.h"

/* Spin while waiting, as "lock-ttas" does: 001's TTAS waits by spinning. */
static int lock_ttas_ps_init(syncq_counter_lock *c, int64_t v) {
  syncq_lock_config cfg = {0, SYNCQ_WAIT_SPIN, false};
  return syncq_counter_lock_init(c, v, "ttas-ps", &cfg);
}

SYNCQ_COUNTER_REGISTER_FNS(lock_ttas_ps, "lock-ttas-ps", "counter under a preemption-safe TTAS lock (ttas-ps)",
                           "001 §4.4, Figure 4 (preemption-safe lock)", BLOCKING, SYNCQ_PROP_LINEARIZABLE,
                           syncq_counter_lock, lock_ttas_ps_init, syncq_counter_lock_destroy,
                           syncq_counter_lock_fetch_add, syncq_counter_lock_load);
