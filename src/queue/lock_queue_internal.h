/* SPDX-License-Identifier: BSD-2-Clause */
/* lock_queue_internal.h — what the two lock-based linked queues share: the
 * node, and finding a lock by name in the registry. Not an algorithm. */
#ifndef SYNCQ_QUEUE_LOCK_QUEUE_INTERNAL_H
#define SYNCQ_QUEUE_LOCK_QUEUE_INTERNAL_H

#include <stdatomic.h>
#include <stdlib.h>

#include "syncq/lock.h"
#include "syncq/queue/lock_queue.h"

#include "../registry_internal.h"

struct syncq_queue_lnode {
  _Atomic(struct syncq_queue_lnode *) next; /* atomic: see two_lock.c (tail writer vs head reader) */
  void *value;
};

/* Find the named lock (NULL: the default) and check it fits our storage. */
static inline int lockq_find(const char *name, const syncq_lock_ops **out) {
  const syncq_algo *a;
  int r = syncq_lock_find(name ? name : SYNCQ_QUEUE_DEFAULT_LOCK, &a);
  if (r != SYNCQ_OK) return r;
  const syncq_lock_ops *ops = a->ops;
  if (ops->size > SYNCQ_QUEUE_LOCK_BYTES || ops->align > SYNCQ_CACHELINE) return SYNCQ_ENOTSUP;
  *out = ops;
  return SYNCQ_OK;
}

static inline syncq_queue_lnode *lockq_node(void *value) {
  syncq_queue_lnode *n = malloc(sizeof *n);
  if (n == NULL) return NULL;
  atomic_init(&n->next, NULL);
  n->value = value;
  return n;
}

#endif
