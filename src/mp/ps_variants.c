/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ps_variants.c — the preemption-safe variants of 001's lock-based
 * structures, as registry entries: the same algorithms as "single-lock",
 * "two-lock" (queues), "lock" (stack), "skew-lock" (priority queue) and
 * "lock-ttas" (counter), with their lock(s) the preemption-safe TTAS lock
 * "ttas-ps" (src/lock/ttas_ps.c) instead of "ttas".
 *
 * Contract: each entry's is that of its base algorithm (see its file)
 * with the lock replaced: 001 §4 compares exactly these pairs ("the usual
 * single-lock implementation using both ordinary and preemption-safe
 * locks"). Outside a pseudo-scheduler they behave as their base. A
 * stack / priority-queue config naming another lock is honoured.
 */
#include "syncq/counter.h"
#include "syncq/counter/lock.h"
#include "syncq/mp.h"
#include "syncq/pqueue/skew_lock.h"
#include "syncq/queue.h"
#include "syncq/queue/lock_queue.h"
#include "syncq/wait.h"
#include "syncq/stack/lock.h"

#define PS_LOCK "ttas-ps"

/* ---- queues ---- */
/* The registry's init takes a capacity, which a linked queue does not use. */
static int single_lock_ps_init(syncq_queue_single_lock *q, size_t capacity) {
  (void)capacity;
  return syncq_queue_single_lock_init(q, PS_LOCK);
}
static int two_lock_ps_init(syncq_queue_two_lock *q, size_t capacity) {
  (void)capacity;
  return syncq_queue_two_lock_init(q, PS_LOCK);
}

SYNCQ_QUEUE_REGISTER_FIXED_FNS(single_lock_ps, "single-lock-ps",
                               "linked queue behind one preemption-safe lock (ttas-ps)",
                               "001 §4.1 (single preemption-safe lock)", BLOCKING,
                               SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES,
                               syncq_queue_single_lock, single_lock_ps_init, syncq_queue_single_lock_destroy,
                               syncq_queue_single_lock_enqueue, syncq_queue_single_lock_dequeue);

SYNCQ_QUEUE_REGISTER_FIXED_FNS(two_lock_ps, "two-lock-ps",
                               "Michael & Scott two-lock queue, preemption-safe locks (ttas-ps)",
                               "001 §4.1 (two preemption-safe locks)", BLOCKING,
                               SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES, syncq_queue_two_lock,
                               two_lock_ps_init, syncq_queue_two_lock_destroy, syncq_queue_two_lock_enqueue,
                               syncq_queue_two_lock_dequeue);

/* The stack's and the priority queue's init: the caller's configuration,
 * its lock PS_LOCK unless it names one. */
#define PS_CONFIG_INIT(fn, T, config, init_fn) \
  static int fn(T *o, const config *c) {       \
    config cfg = {0};                          \
    if (c != NULL) cfg = *c;                   \
    if (cfg.lock == NULL) cfg.lock = PS_LOCK;  \
    return init_fn(o, &cfg);                   \
  }

/* ---- stack ---- */
PS_CONFIG_INIT(lock_ps_init, syncq_stack_lock, syncq_stack_config, syncq_stack_lock_init)

SYNCQ_STACK_REGISTER_FNS(lock_ps, "lock-ps", "single-lock stack, preemption-safe lock (ttas-ps)",
                         "001 §4.2, Figure 2 (preemption-safe lock)", BLOCKING,
                         SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_BOUNDED, syncq_stack_lock, lock_ps_init,
                         syncq_stack_lock_destroy, syncq_stack_lock_push, syncq_stack_lock_pop);

/* ---- priority queue ---- */
PS_CONFIG_INIT(skew_lock_ps_init, syncq_pqueue_skew_lock, syncq_pqueue_config, syncq_pqueue_skew_lock_init)

SYNCQ_PQUEUE_REGISTER_FNS(skew_lock_ps, "skew-lock-ps", "skew heap under one preemption-safe lock (ttas-ps)",
                          "001 §4.3, Figure 3 (preemption-safe lock)", BLOCKING,
                          SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_BOUNDED, syncq_pqueue_skew_lock, skew_lock_ps_init,
                          syncq_pqueue_skew_lock_destroy, syncq_pqueue_skew_lock_insert,
                          syncq_pqueue_skew_lock_delete_min);

/* ---- counter ---- */
static int lock_ttas_ps_init(syncq_counter_lock *c, int64_t v) {
  syncq_lock_config cfg = {0, SYNCQ_WAIT_SPIN, false};
  return syncq_counter_lock_init(c, v, PS_LOCK, &cfg);
}

SYNCQ_COUNTER_REGISTER_FNS(lock_ttas_ps, "lock-ttas-ps", "counter under a preemption-safe TTAS lock (ttas-ps)",
                           "001 §4.4, Figure 4 (preemption-safe lock)", BLOCKING, SYNCQ_PROP_LINEARIZABLE,
                           syncq_counter_lock, lock_ttas_ps_init, syncq_counter_lock_destroy,
                           syncq_counter_lock_fetch_add, syncq_counter_lock_load);
