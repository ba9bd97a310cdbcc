/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * construct.c — registry entry -> initialised object: see construct.h.
 */
#include "construct.h"

#include <stdlib.h>

#include "syncq/platform.h"

/* The storage the family's ops table asks for. */
static int storage_of(const syncq_algo *a, const lab_object_cfg *cfg, size_t *size, size_t *align) {
  switch (a->family) {
  case SYNCQ_FAMILY_LOCK: {
    const syncq_lock_ops *o = a->ops;
    *size = o->size;
    *align = o->align;
    return SYNCQ_OK;
  }
  case SYNCQ_FAMILY_BARRIER: {
    const syncq_barrier_ops *o = a->ops;
    *size = o->size;
    *align = o->align;
    return SYNCQ_OK;
  }
  case SYNCQ_FAMILY_COUNTER: {
    const syncq_counter_ops *o = a->ops;
    *size = o->size;
    *align = o->align;
    return SYNCQ_OK;
  }
  case SYNCQ_FAMILY_QUEUE: {
    const syncq_queue_ops *o = a->ops;
    *align = o->align;
    return o->bytes(cfg->queue_capacity, size);
  }
  case SYNCQ_FAMILY_STACK: {
    const syncq_stack_ops *o = a->ops;
    *size = o->size;
    *align = o->align;
    return SYNCQ_OK;
  }
  case SYNCQ_FAMILY_PQUEUE: {
    const syncq_pqueue_ops *o = a->ops;
    *size = o->size;
    *align = o->align;
    return SYNCQ_OK;
  }
  default:
    return SYNCQ_EINVAL;
  }
}

static int init_of(const syncq_algo *a, const lab_object_cfg *cfg, void *obj) {
  switch (a->family) {
  case SYNCQ_FAMILY_LOCK: {
    syncq_lock_config zero = {0};
    return ((const syncq_lock_ops *)a->ops)->init(obj, cfg->lock ? cfg->lock : &zero);
  }
  case SYNCQ_FAMILY_BARRIER: {
    syncq_barrier_config zero = {0};
    return ((const syncq_barrier_ops *)a->ops)->init(obj, cfg->barrier ? cfg->barrier : &zero);
  }
  case SYNCQ_FAMILY_COUNTER:
    return ((const syncq_counter_ops *)a->ops)->init(obj, cfg->counter_initial);
  case SYNCQ_FAMILY_QUEUE:
    return ((const syncq_queue_ops *)a->ops)->init(obj, cfg->queue_capacity);
  case SYNCQ_FAMILY_STACK: {
    syncq_stack_config zero = {0};
    return ((const syncq_stack_ops *)a->ops)->init(obj, cfg->stack ? cfg->stack : &zero);
  }
  case SYNCQ_FAMILY_PQUEUE: {
    syncq_pqueue_config zero = {0};
    return ((const syncq_pqueue_ops *)a->ops)->init(obj, cfg->pqueue ? cfg->pqueue : &zero);
  }
  default:
    return SYNCQ_EINVAL;
  }
}

static int destroy_of(const syncq_algo *a, void *obj) {
  switch (a->family) {
  case SYNCQ_FAMILY_LOCK:
    return ((const syncq_lock_ops *)a->ops)->destroy(obj);
  case SYNCQ_FAMILY_BARRIER:
    return ((const syncq_barrier_ops *)a->ops)->destroy(obj);
  case SYNCQ_FAMILY_COUNTER:
    return ((const syncq_counter_ops *)a->ops)->destroy(obj);
  case SYNCQ_FAMILY_QUEUE:
    return ((const syncq_queue_ops *)a->ops)->destroy(obj);
  case SYNCQ_FAMILY_STACK:
    return ((const syncq_stack_ops *)a->ops)->destroy(obj);
  case SYNCQ_FAMILY_PQUEUE:
    return ((const syncq_pqueue_ops *)a->ops)->destroy(obj);
  default:
    return SYNCQ_EINVAL;
  }
}

int lab_object_new(const syncq_algo *algo, const lab_object_cfg *cfg, void **out) {
  if (out == NULL) return SYNCQ_EINVAL;
  *out = NULL;
  if (algo == NULL || algo->ops == NULL || algo->family >= SYNCQ_FAMILY_COUNT) return SYNCQ_EINVAL;
  lab_object_cfg zero = {0};
  if (cfg == NULL) cfg = &zero;
  size_t size = 0, align = 0;
  int st = storage_of(algo, cfg, &size, &align);
  if (st != SYNCQ_OK) return st;
  void *obj = syncq_alloc_aligned(size, align);
  if (obj == NULL) return SYNCQ_ENOMEM;
  st = init_of(algo, cfg, obj);
  if (st != SYNCQ_OK) {
    free(obj);
    return st;
  }
  *out = obj;
  return SYNCQ_OK;
}

void lab_object_free(const syncq_algo *algo, void *obj) {
  if (algo == NULL || obj == NULL) return;
  (void)destroy_of(algo, obj);
  free(obj);
}

void *lab_object_new_or_fail(lab_ctx *ctx, const syncq_algo *algo, const lab_object_cfg *cfg) {
  void *obj;
  int st = lab_object_new(algo, cfg, &obj);
  if (st != SYNCQ_OK)
    lab_fail(ctx, "cannot create a %s %s: %s", algo ? algo->name : "(null)",
             algo ? syncq_family_name(algo->family) : "object", syncq_strerror(st));
  return obj;
}

bool lab_object_can_make(const syncq_algo *algo, const lab_object_cfg *cfg, int *status) {
  void *obj;
  int st = lab_object_new(algo, cfg, &obj);
  if (status != NULL) *status = st;
  if (st != SYNCQ_OK) return false;
  lab_object_free(algo, obj);
  return true;
}
