/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * registry_families.c — the registry's lookups across every family
 * (syncq_registry_find, _list, _add in syncq/registry.h), above the
 * families: it hands the store below them (src/registry.c) each family's
 * built-in list (src/<family>/<family>_registry.c), so the store never
 * names a family and a family's own lookups (syncq_<family>_find) never
 * come up here. A program that links libsyncq.a statically and calls
 * these gets every built-in algorithm with them.
 */
#include "syncq/registry.h"

#include "registry_internal.h"

/* The built-in lists, one per family, each NULL-terminated, in the order
 * listings show them. */
extern const syncq_algo *const syncq_builtin_lock[];
extern const syncq_algo *const syncq_builtin_barrier[];
extern const syncq_algo *const syncq_builtin_counter[];
extern const syncq_algo *const syncq_builtin_queue[];
extern const syncq_algo *const syncq_builtin_stack[];
extern const syncq_algo *const syncq_builtin_pqueue[];

static const syncq_algo *const *const builtin[SYNCQ_FAMILY_COUNT] = {
  [SYNCQ_FAMILY_LOCK] = syncq_builtin_lock,       [SYNCQ_FAMILY_BARRIER] = syncq_builtin_barrier,
  [SYNCQ_FAMILY_COUNTER] = syncq_builtin_counter, [SYNCQ_FAMILY_QUEUE] = syncq_builtin_queue,
  [SYNCQ_FAMILY_STACK] = syncq_builtin_stack,     [SYNCQ_FAMILY_PQUEUE] = syncq_builtin_pqueue,
};

int syncq_registry_add(const syncq_algo *algo) { return syncq_registry_add_in(builtin, algo); }

int syncq_registry_find(syncq_family f, const char *name, const syncq_algo **out) {
  if ((unsigned)f >= SYNCQ_FAMILY_COUNT) return SYNCQ_EINVAL;
  return syncq_registry_find_in(builtin[f], f, name, out);
}

int syncq_registry_list(syncq_family f, const syncq_algo **out, size_t cap) {
  if ((unsigned)f >= SYNCQ_FAMILY_COUNT) return SYNCQ_EINVAL;
  return syncq_registry_list_in(builtin[f], f, out, cap);
}
