/* SPDX-License-Identifier: BSD-2-Clause */
/* pool.c — a registered queue or stack as a work pool (pool.h). */
#include "pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncq/platform.h"
#include "syncq/queue.h"
#include "syncq/stack.h"

bool app_pool_usable(const syncq_algo *algo) {
  if (algo == NULL) return false;
  if (algo->family != SYNCQ_FAMILY_QUEUE && algo->family != SYNCQ_FAMILY_STACK) return false;
  return (algo->props & SYNCQ_PROP_SPSC) == 0;
}

int app_pool_init(app_pool *p, const syncq_algo *algo, size_t capacity, unsigned threads) {
  if (p == NULL || !app_pool_usable(algo) || capacity < 2 || (capacity & (capacity - 1)) != 0) return SYNCQ_EINVAL;
  memset(p, 0, sizeof *p);
  int st;
  if (algo->family == SYNCQ_FAMILY_QUEUE) {
    const syncq_queue_ops *ops = algo->ops;
    size_t bytes;
    st = ops->bytes(capacity, &bytes);
    if (st != SYNCQ_OK) return st;
    void *q = syncq_alloc_aligned(bytes, ops->align);
    if (q == NULL) return SYNCQ_ENOMEM;
    if ((st = ops->init(q, capacity)) != SYNCQ_OK) {
      free(q);
      return st;
    }
    p->obj = q;
  } else {
    const syncq_stack_ops *ops = algo->ops;
    void *s = syncq_alloc_aligned(ops->size, ops->align);
    if (s == NULL) return SYNCQ_ENOMEM;
    syncq_stack_config cfg = {(uint32_t)capacity, threads, NULL};
    if ((st = ops->init(s, &cfg)) != SYNCQ_OK) {
      free(s);
      return st;
    }
    p->obj = s;
  }
  p->algo = algo;
  lab_queue_watch_init(&p->watch, (int)threads);
  return SYNCQ_OK;
}

void app_pool_destroy(app_pool *p) {
  if (p == NULL || p->obj == NULL) return;
  if (p->algo->family == SYNCQ_FAMILY_QUEUE) ((const syncq_queue_ops *)p->algo->ops)->destroy(p->obj);
  else ((const syncq_stack_ops *)p->algo->ops)->destroy(p->obj);
  free(p->obj);
  p->obj = NULL;
}

bool app_pool_put(const app_pool *p, void *item, _Atomic(int) *errors) {
  int st = p->algo->family == SYNCQ_FAMILY_QUEUE ? ((const syncq_queue_ops *)p->algo->ops)->enqueue(p->obj, item)
                                                 : ((const syncq_stack_ops *)p->algo->ops)->push(p->obj, item);
  if (st == SYNCQ_OK) return true;
  if (st != SYNCQ_FULL && st != SYNCQ_ENOMEM) atomic_fetch_add(errors, 1);
  return false;
}

bool app_pool_take(const app_pool *p, void **item, _Atomic(int) *errors) {
  int st = p->algo->family == SYNCQ_FAMILY_QUEUE ? ((const syncq_queue_ops *)p->algo->ops)->dequeue(p->obj, item)
                                                 : ((const syncq_stack_ops *)p->algo->ops)->pop(p->obj, item);
  if (st == SYNCQ_OK) return true;
  if (st != SYNCQ_EMPTY) atomic_fetch_add(errors, 1);
  return false;
}
