/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * registry_internal.h — the registry's store and lookups, below the
 * families (src/registry.c). The registry knows no family's list: a caller
 * hands it the built-in list to search (NULL-terminated, in listing
 * order), and it adds the entries syncq_registry_add put in. Each family
 * looks its own names up through its own list (syncq_<family>_find, in
 * src/<family>/<family>_registry.c); the lookups across every family
 * (syncq_registry_find, _list, _add) sit above the families, in
 * src/registry_families.c.
 */
#ifndef SYNCQ_REGISTRY_INTERNAL_H
#define SYNCQ_REGISTRY_INTERNAL_H

#include <stddef.h>

#include "syncq/registry.h"

/* The entry of family f named name: first in builtin, then among the added
 * entries. SYNCQ_OK with *out set, SYNCQ_ENOENT, or SYNCQ_EINVAL for a bad
 * family or a NULL name or out. builtin may be NULL (none). Wait-free. */
int syncq_registry_find_in(const syncq_algo *const *builtin, syncq_family f, const char *name, const syncq_algo **out);

/* Family f's entries, builtin first and then the added ones, as
 * syncq_registry_list answers. */
int syncq_registry_list_in(const syncq_algo *const *builtin, syncq_family f, const syncq_algo **out, size_t cap);

/* Add algo after checking it against the built-in lists, one per family
 * (builtin[f] for family f): SYNCQ_EINVAL, SYNCQ_EEXIST or SYNCQ_ELIMIT as
 * syncq_registry_add answers. Blocking (one mutex). */
int syncq_registry_add_in(const syncq_algo *const *const builtin[SYNCQ_FAMILY_COUNT], const syncq_algo *algo);

/* Each family's lookup of its own names (its built-in list, then the added
 * entries), as syncq_registry_find answers for that family. */
int syncq_lock_find(const char *name, const syncq_algo **out);
int syncq_barrier_find(const char *name, const syncq_algo **out);
int syncq_counter_find(const char *name, const syncq_algo **out);
int syncq_queue_find(const char *name, const syncq_algo **out);
int syncq_stack_find(const char *name, const syncq_algo **out);
int syncq_pqueue_find(const char *name, const syncq_algo **out);

#endif /* SYNCQ_REGISTRY_INTERNAL_H */
