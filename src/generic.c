/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * generic.c — the create/destroy skeleton the six generic APIs share
 * (generic_internal.h). Not an algorithm.
 */
#include "generic_internal.h"

#include <stdlib.h>

#include "syncq/platform.h"

int syncq_generic_create(const syncq_algo *a, size_t handle_size, size_t bytes, size_t align,
                         syncq_generic_init_fn init, const void *arg, syncq_generic **out) {
  syncq_generic *g = malloc(handle_size);
  if (g == NULL) return SYNCQ_ENOMEM;
  g->storage = syncq_alloc_aligned(bytes, align);
  if (g->storage == NULL) {
    free(g);
    return SYNCQ_ENOMEM;
  }
  g->algo = a;
  int r = init(a, g->storage, arg);
  if (r != SYNCQ_OK) {
    free(g->storage);
    free(g);
    return r;
  }
  *out = g;
  return SYNCQ_OK;
}

int syncq_generic_destroy(syncq_generic *g, int (*destroy)(void *storage)) {
  int r = destroy(g->storage);
  if (r != SYNCQ_OK) return r;
  free(g->storage);
  free(g);
  return SYNCQ_OK;
}
