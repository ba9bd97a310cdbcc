/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * barrier_registry.c — the built-in barriers, in the order listings show them.
 * A list, not an algorithm: each algorithm's contract block (source,
 * progress, atomics, memory, limits) is in its own file beside this one.
 * Add an entry here when adding an algorithm to this family.
 */
#include "syncq/barrier.h"

const syncq_algo *const syncq_builtin_barrier[] = {
  &syncq_barrier_central_cas_algo,   &syncq_barrier_central_faa_algo, &syncq_barrier_mcs_tree_algo,
  &syncq_barrier_dissemination_algo, &syncq_barrier_pthread_algo,     NULL,
};
