/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * counter_registry.c — the built-in counters, in the order listings show them.
 * A list, not an algorithm: each algorithm's contract block (source,
 * progress, atomics, memory, limits) is in its own file beside this one.
 * Add an entry here when adding an algorithm to this family.
 */
#include "syncq/counter.h"
#include "../registry_internal.h"

const syncq_algo *const syncq_builtin_counter[] = {
  &syncq_counter_faa_algo,          &syncq_counter_cas_algo,
  &syncq_counter_cas_backoff_algo,  &syncq_counter_aggfunnel_algo,
  &syncq_counter_mutex_algo,        &syncq_counter_lock_ttas_algo,
  &syncq_counter_lock_ticket_algo,  &syncq_counter_lock_futex_mutex_algo,
  &syncq_counter_lock_ttas_ps_algo, NULL,
};

/* The family's own lookups go through its own list and the added entries,
 * never through the lookups across families above it. */
int syncq_counter_find(const char *name, const syncq_algo **out) {
  return syncq_registry_find_in(syncq_builtin_counter, SYNCQ_FAMILY_COUNTER, name, out);
}
