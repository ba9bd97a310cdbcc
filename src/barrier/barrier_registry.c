/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * barrier_registry.c — the built-in barriers, in the order listings show them.
 * A list, not an algorithm: each algorithm's contract block (source,
 * progress, atomics, memory, limits) is in its own file beside this one.
 * Add an entry here when adding an algorithm to this family.
 */
#include "syncq/barrier.h"
#include "../registry_internal.h"

const syncq_algo *const syncq_builtin_barrier[] = {
  &syncq_barrier_central_cas_algo,   &syncq_barrier_central_faa_algo, &syncq_barrier_mcs_tree_algo,
  &syncq_barrier_dissemination_algo, &syncq_barrier_pthread_algo,     NULL,
};

/* The family's own lookups go through its own list and the added entries,
 * never through the lookups across families above it. */
int syncq_barrier_find(const char *name, const syncq_algo **out) {
  return syncq_registry_find_in(syncq_builtin_barrier, SYNCQ_FAMILY_BARRIER, name, out);
}
