/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pqueue_registry.c — the built-in priority queues, in the order listings show them.
 * A list, not an algorithm: each algorithm's contract block (source,
 * progress, atomics, memory, limits) is in its own file beside this one.
 * Add an entry here when adding an algorithm to this family.
 */
#include "syncq/pqueue.h"
#include "syncq/pqueue/linden_jonsson.h"
#include "../registry_internal.h"

const syncq_algo *const syncq_builtin_pqueue[] = {
  &syncq_pqueue_skew_lock_algo,
  &syncq_pqueue_skew_herlihy_algo,
  &syncq_pqueue_linden_jonsson_algo,
  &syncq_pqueue_skew_lock_ps_algo,
  NULL,
};

/* The family's own lookups go through its own list and the added entries,
 * never through the lookups across families above it. */
int syncq_pqueue_find(const char *name, const syncq_algo **out) {
  return syncq_registry_find_in(syncq_builtin_pqueue, SYNCQ_FAMILY_PQUEUE, name, out);
}
