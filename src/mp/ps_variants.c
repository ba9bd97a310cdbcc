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
static int q1_bytes(size_t c, size_t *b) {
  (void)c;
  if (b == NULL) return SYNCQ_EINVAL;
  *b = sizeof(syncq_queue_single_lock);
  return SYNCQ_OK;
}
static int q1_init(void *q, size_t c) {
  (void)c;
  return syncq_queue_single_lock_init(q, PS_LOCK);
}
static int q1_destroy(void *q) { return syncq_queue_single_lock_destroy(q); }
static int q1_enq(void *q, void *it) { return syncq_queue_single_lock_enqueue(q, it); }
static int q1_deq(void *q, void **it) { return syncq_queue_single_lock_dequeue(q, it); }
static const syncq_queue_ops q1_ops = {q1_bytes, _Alignof(syncq_queue_single_lock), q1_init, q1_destroy, q1_enq, q1_deq};

static int q2_bytes(size_t c, size_t *b) {
  (void)c;
  if (b == NULL) return SYNCQ_EINVAL;
  *b = sizeof(syncq_queue_two_lock);
  return SYNCQ_OK;
}
static int q2_init(void *q, size_t c) {
  (void)c;
  return syncq_queue_two_lock_init(q, PS_LOCK);
}
static int q2_destroy(void *q) { return syncq_queue_two_lock_destroy(q); }
static int q2_enq(void *q, void *it) { return syncq_queue_two_lock_enqueue(q, it); }
static int q2_deq(void *q, void **it) { return syncq_queue_two_lock_dequeue(q, it); }
static const syncq_queue_ops q2_ops = {q2_bytes, _Alignof(syncq_queue_two_lock), q2_init, q2_destroy, q2_enq, q2_deq};

const syncq_algo syncq_queue_single_lock_ps_algo = {
  SYNCQ_FAMILY_QUEUE, "single-lock-ps", "linked queue behind one preemption-safe lock (ttas-ps)",
  "001 §4.1 (single preemption-safe lock)", SYNCQ_PROGRESS_BLOCKING,
  SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES, &q1_ops,
};
const syncq_algo syncq_queue_two_lock_ps_algo = {
  SYNCQ_FAMILY_QUEUE, "two-lock-ps", "Michael & Scott two-lock queue, preemption-safe locks (ttas-ps)",
  "001 §4.1 (two preemption-safe locks)", SYNCQ_PROGRESS_BLOCKING,
  SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES, &q2_ops,
};

/* ---- stack ---- */
static int s_init(void *s, const syncq_stack_config *c) {
  syncq_stack_config cfg = {0};
  if (c != NULL) cfg = *c;
  if (cfg.lock == NULL) cfg.lock = PS_LOCK;
  return syncq_stack_lock_init(s, &cfg);
}
static int s_destroy(void *s) { return syncq_stack_lock_destroy(s); }
static int s_push(void *s, void *it) { return syncq_stack_lock_push(s, it); }
static int s_pop(void *s, void **it) { return syncq_stack_lock_pop(s, it); }
static const syncq_stack_ops s_ops = {sizeof(syncq_stack_lock), _Alignof(syncq_stack_lock), s_init, s_destroy, s_push, s_pop};

const syncq_algo syncq_stack_lock_ps_algo = {
  SYNCQ_FAMILY_STACK, "lock-ps", "single-lock stack, preemption-safe lock (ttas-ps)",
  "001 §4.2, Figure 2 (preemption-safe lock)", SYNCQ_PROGRESS_BLOCKING,
  SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_BOUNDED, &s_ops,
};

/* ---- priority queue ---- */
static int h_init(void *q, const syncq_pqueue_config *c) {
  syncq_pqueue_config cfg = {0};
  if (c != NULL) cfg = *c;
  if (cfg.lock == NULL) cfg.lock = PS_LOCK;
  return syncq_pqueue_skew_lock_init(q, &cfg);
}
static int h_destroy(void *q) { return syncq_pqueue_skew_lock_destroy(q); }
static int h_insert(void *q, uint64_t k, void *p) { return syncq_pqueue_skew_lock_insert(q, k, p); }
static int h_delmin(void *q, uint64_t *k, void **p) { return syncq_pqueue_skew_lock_delete_min(q, k, p); }
static const syncq_pqueue_ops h_ops = {
  sizeof(syncq_pqueue_skew_lock), _Alignof(syncq_pqueue_skew_lock), h_init, h_destroy, h_insert, h_delmin,
};

const syncq_algo syncq_pqueue_skew_lock_ps_algo = {
  SYNCQ_FAMILY_PQUEUE, "skew-lock-ps", "skew heap under one preemption-safe lock (ttas-ps)",
  "001 §4.3, Figure 3 (preemption-safe lock)", SYNCQ_PROGRESS_BLOCKING,
  SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_BOUNDED, &h_ops,
};

/* ---- counter ---- */
static int c_init(void *c, int64_t v) {
  syncq_lock_config cfg = {0, SYNCQ_WAIT_SPIN, false};
  return syncq_counter_lock_init(c, v, PS_LOCK, &cfg);
}
static int c_destroy(void *c) { return syncq_counter_lock_destroy(c); }
static int c_add(void *c, int64_t d, int64_t *o) { return syncq_counter_lock_fetch_add(c, d, o); }
static int c_load(void *c, int64_t *v) { return syncq_counter_lock_load(c, v); }
static const syncq_counter_ops c_ops = {
  sizeof(syncq_counter_lock), _Alignof(syncq_counter_lock), c_init, c_destroy, c_add, c_load,
};

const syncq_algo syncq_counter_lock_ttas_ps_algo = {
  SYNCQ_FAMILY_COUNTER, "lock-ttas-ps", "counter under a preemption-safe TTAS lock (ttas-ps)",
  "001 §4.4, Figure 4 (preemption-safe lock)", SYNCQ_PROGRESS_BLOCKING, SYNCQ_PROP_LINEARIZABLE, &c_ops,
};
