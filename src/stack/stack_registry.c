/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stack_registry.c — the built-in stacks, in the order listings show them.
 * A list, not an algorithm: each algorithm's contract block (source,
 * progress, atomics, memory, limits) is in its own file beside this one.
 * Add an entry here when adding an algorithm to this family.
 */
#include "syncq/stack.h"
#include "../registry_internal.h"

const syncq_algo *const syncq_builtin_stack[] = {
  &syncq_stack_lock_algo,
  &syncq_stack_treiber_algo,
  &syncq_stack_herlihy_algo,
  &syncq_stack_treiber_hp_algo,
  &syncq_stack_elimination_algo,
  &syncq_stack_lock_ps_algo,
  NULL,
};

/* The family's own lookups go through its own list and the added entries,
 * never through the lookups across families above it. */
int syncq_stack_find(const char *name, const syncq_algo **out) {
  return syncq_registry_find_in(syncq_builtin_stack, SYNCQ_FAMILY_STACK, name, out);
}
