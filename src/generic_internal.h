/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * generic_internal.h — the create/destroy skeleton of the six generic APIs
 * (src/{queue,stack,pqueue,counter,barrier,lock}/<family>.c). Internal: a
 * handle's layout is no part of the public API (each header declares its
 * handle as an incomplete type).
 *
 * Each family's handle starts with a syncq_generic (the entry and the
 * algorithm's storage), so a pointer to the handle and to its first member
 * convert into each other (C11 6.7.2.1). create allocates the handle and
 * the storage, runs the family's init through a callback and undoes both
 * when it fails; destroy frees them only when the algorithm's destroy
 * succeeded (a busy lock stays usable).
 */
#ifndef SYNCQ_GENERIC_INTERNAL_H
#define SYNCQ_GENERIC_INTERNAL_H

#include <stddef.h>

#include "syncq/registry.h"

typedef struct syncq_generic {
  const syncq_algo *algo;
  void *storage; /* the algorithm's, aligned as its ops table asks */
} syncq_generic;

/* The family's init of fresh storage; arg is what the family's create
 * passed on (a configuration, a capacity, an initial value). */
typedef int (*syncq_generic_init_fn)(const syncq_algo *a, void *storage, const void *arg);

/* A handle of handle_size bytes (>= sizeof(syncq_generic)) for a, with
 * bytes of storage aligned to align and initialised by init. SYNCQ_OK with
 * *out set; SYNCQ_ENOMEM, or init's status, with nothing left allocated. */
int syncq_generic_create(const syncq_algo *a, size_t handle_size, size_t bytes, size_t align,
                         syncq_generic_init_fn init, const void *arg, syncq_generic **out);

/* Run destroy on the storage; when it answers SYNCQ_OK free the storage and
 * the handle. Returns destroy's status. g must not be NULL. */
int syncq_generic_destroy(syncq_generic *g, int (*destroy)(void *storage));

#endif /* SYNCQ_GENERIC_INTERNAL_H */
