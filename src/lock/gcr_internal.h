/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gcr_internal.h — generic concurrency restriction (GCR) around any lock,
 * for the generic lock API (lock.c). The algorithm and its contract are in
 * gcr.c.
 */
#ifndef SYNCQ_LOCK_GCR_INTERNAL_H
#define SYNCQ_LOCK_GCR_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "syncq/lock.h"

/* Admitted waiters of the inner lock at most (the passive head may add one
 * when it is promoted): the holder and these keep the lock busy while the
 * others sleep in the passive set. */
#define SYNCQ_LOCK_GCR_ADMITTED 1u
/* The time-published locks' limit: their admitted waiters yield rather
 * than spin, so with one the passive head is woken at nearly every
 * hand-over (docs/reliability.md, "Restricted under the generic
 * default"). */
#define SYNCQ_LOCK_GCR_ADMITTED_TP 2u
/* Every this many acquisitions the passive set's head may enter whatever
 * the count of admitted waiters says (long-term fairness). */
#define SYNCQ_LOCK_GCR_PROMOTE_EVERY 256u

struct gcr_pnode;

/* The restriction's state, beside the inner lock (one per generic lock). */
typedef struct lock_gcr {
  _Atomic(uint32_t) admitted; /* threads admitted to the inner lock that do not hold it yet */
  uint32_t limit;             /* admitted waiters at most (set at init, read only after) */
  _Atomic(uint32_t) promote;  /* 1: the passive head may enter regardless of admitted */
  _Atomic(uint32_t) gate;     /* a sequence the passive head sleeps on */
  _Atomic(uint32_t) head_asleep;
  uint32_t acquisitions;               /* by the inner lock's holder only */
  int wait;                            /* passive waiters' discipline: BLOCK or COMPETITIVE */
  uint64_t spin_limit_ns;              /* COMPETITIVE passive waiters: spin this long, then sleep */
  _Atomic(struct gcr_pnode *) passive; /* the passive queue's tail (NULL: empty) */
} lock_gcr;

/* Start with nobody admitted and an empty passive set; at most `limit`
 * (>= 1: SYNCQ_LOCK_GCR_ADMITTED, or SYNCQ_LOCK_GCR_ADMITTED_TP) waiters
 * admitted at once; passive waiters wait by `wait`, the lock's discipline (SYNCQ_WAIT_BLOCK: sleep at once;
 * SYNCQ_WAIT_COMPETITIVE: spin about one context switch, then sleep). */
void lock_gcr_init(lock_gcr *g, int wait, uint32_t limit);

/* Acquire the inner lock (its ops on storage, with node) through the
 * restriction: directly while nobody is admitted and the lock is free, as
 * an admitted waiter while fewer than the limit are, else
 * after waiting in the passive set. Returns the inner lock's status. */
int lock_gcr_lock(lock_gcr *g, const syncq_lock_ops *ops, void *storage, syncq_lock_node *node);

#endif
