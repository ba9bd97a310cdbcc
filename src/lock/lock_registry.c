/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lock_registry.c — the built-in locks, in the order listings show them.
 * A list, not an algorithm: each algorithm's contract block (source,
 * progress, atomics, memory, limits) is in its own file beside this one.
 * Add an entry here when adding an algorithm to this family.
 */
#include "syncq/lock/clh_tp.h"
#include "syncq/lock/mcs_tp.h"
#include "syncq/lock/sc_queue.h"
#include "syncq/lock/ttas_ps.h"
#include "syncq/lock.h"
#include "../registry_internal.h"

/* clang-format off */
const syncq_algo *const syncq_builtin_lock[] = {
  &syncq_lock_tas_algo,         &syncq_lock_ttas_algo,          &syncq_lock_ticket_algo,
  &syncq_lock_anderson_algo,    &syncq_lock_array_cas_algo,     &syncq_lock_array_faa_algo,
  &syncq_lock_mcs_algo,         &syncq_lock_clh_algo,           &syncq_lock_mcs_tp_algo,
  &syncq_lock_futex_mutex_algo, &syncq_lock_pthread_mutex_algo, &syncq_lock_ttas_ps_algo,
  &syncq_lock_sc_queue_algo,    &syncq_lock_hybrid_sc_algo,     &syncq_lock_clh_tp_algo,
  NULL,
};
/* clang-format on */

/* The family's own lookups go through its own list and the added entries,
 * never through the lookups across families above it. */
int syncq_lock_find(const char *name, const syncq_algo **out) {
  return syncq_registry_find_in(syncq_builtin_lock, SYNCQ_FAMILY_LOCK, name, out);
}
