/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * skew_lock.c — skew heap under a single lock.
 *
 * Contract
 *   Source:      001 §4.3 (Figure 3, "single lock"): the skew heap of
 *                Sleator & Tarjan ("Self-adjusting heaps", SIAM J. Comput.
 *                15(1), 1986), top-down merge: the root of the merged heap
 *                is the smaller root, its left child the merge of its old
 *                right subtree with the other heap, its right child its old
 *                left subtree. insert = merge with a one-node heap;
 *                delete_min = remove the root, merge its subtrees. Every
 *                operation under one lock from the registry (default
 *                "ttas": 001's TTAS lock with bounded exponential backoff).
 *   Progress:    blocking.
 *   Atomics:     those of the lock (TTAS: 1 swap + 1 store); the heap is
 *                plain memory. O(log n) amortized node visits per operation.
 *   Memory:      capacity nodes and the lock allocated at init, never after;
 *                free nodes form a list guarded by the same lock.
 *   Signal-safe: no. Process-shared: no.
 *   Limits:      capacity <= SYNCQ_PQUEUE_MAX_CAPACITY items.
 *   Stats:       those the lock counts.
 */
#include "syncq/pqueue/skew_lock.h"

#include <stdlib.h>

#include "../registry_internal.h"
#include "syncq/platform.h"

struct syncq_pqueue_skew_lock_node {
  uint64_t key;
  void *payload;
  uint32_t left, right; /* index + 1, 0 for none */
};

typedef struct syncq_pqueue_skew_lock_node node;

int syncq_pqueue_skew_lock_init(syncq_pqueue_skew_lock *q, const syncq_pqueue_config *cfg) {
  if (q == NULL) return SYNCQ_EINVAL;
  if (cfg && (cfg->capacity > SYNCQ_PQUEUE_MAX_CAPACITY || cfg->max_threads > SYNCQ_PQUEUE_MAX_THREADS))
    return SYNCQ_EINVAL;
  uint32_t cap = cfg && cfg->capacity ? cfg->capacity : SYNCQ_PQUEUE_DEFAULT_CAPACITY;
  const char *name = cfg && cfg->lock ? cfg->lock : "ttas";
  int r = syncq_lock_find(name, &q->lock_algo);
  if (r != SYNCQ_OK) return r;
  q->lock_ops = q->lock_algo->ops;
  q->lock = syncq_alloc_aligned(q->lock_ops->size, q->lock_ops->align);
  q->nodes = malloc((size_t)cap * sizeof *q->nodes);
  if (q->lock == NULL || q->nodes == NULL) {
    free(q->lock);
    free(q->nodes);
    return SYNCQ_ENOMEM;
  }
  r = q->lock_ops->init(q->lock, NULL);
  if (r != SYNCQ_OK) {
    free(q->lock);
    free(q->nodes);
    return r;
  }
  for (uint32_t i = 0; i < cap; i++) q->nodes[i] = (node){0, NULL, i + 1u < cap ? i + 2u : 0u, 0};
  q->free_head = 1u;
  q->root = 0;
  return SYNCQ_OK;
}

int syncq_pqueue_skew_lock_destroy(syncq_pqueue_skew_lock *q) {
  if (q == NULL) return SYNCQ_EINVAL;
  int r = q->lock_ops->destroy(q->lock);
  if (r != SYNCQ_OK) return r;
  free(q->lock);
  free(q->nodes);
  q->lock = NULL;
  q->nodes = NULL;
  return SYNCQ_OK;
}

/* Top-down skew merge of heaps a and b (indices + 1), in place. */
static uint32_t merge(node *nodes, uint32_t a, uint32_t b) {
  uint32_t root = 0, *link = &root;
  while (a != 0 && b != 0) {
    if (nodes[b - 1u].key < nodes[a - 1u].key) {
      uint32_t t = a;
      a = b;
      b = t;
    }
    node *n = &nodes[a - 1u];
    *link = a;
    uint32_t rest = n->right; /* merge a's right subtree with b into a's left */
    n->right = n->left;
    link = &n->left;
    a = rest;
  }
  *link = a != 0 ? a : b;
  return root;
}

int syncq_pqueue_skew_lock_insert(syncq_pqueue_skew_lock *q, uint64_t key, void *payload) {
  if (q == NULL) return SYNCQ_EINVAL;
  syncq_lock_node ln;
  int r = q->lock_ops->lock(q->lock, &ln);
  if (r != SYNCQ_OK) return r;
  uint32_t n = q->free_head;
  if (n == 0) {
    r = SYNCQ_ENOMEM;
  } else {
    q->free_head = q->nodes[n - 1u].left;
    q->nodes[n - 1u] = (node){key, payload, 0, 0};
    q->root = merge(q->nodes, q->root, n);
  }
  q->lock_ops->unlock(q->lock, &ln);
  return r;
}

int syncq_pqueue_skew_lock_delete_min(syncq_pqueue_skew_lock *q, uint64_t *key, void **payload) {
  if (q == NULL || key == NULL || payload == NULL) return SYNCQ_EINVAL;
  syncq_lock_node ln;
  int r = q->lock_ops->lock(q->lock, &ln);
  if (r != SYNCQ_OK) return r;
  uint32_t n = q->root;
  if (n == 0) {
    r = SYNCQ_EMPTY;
  } else {
    node *m = &q->nodes[n - 1u];
    *key = m->key;
    *payload = m->payload;
    q->root = merge(q->nodes, m->left, m->right);
    m->left = q->free_head;
    q->free_head = n;
  }
  q->lock_ops->unlock(q->lock, &ln);
  return r;
}

SYNCQ_PQUEUE_REGISTER(skew_lock, "skew-lock", "skew heap under a single lock (any registered lock; default ttas)",
                      "001 §4.3, Figure 3; Sleator & Tarjan 1986", BLOCKING,
                      SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_BOUNDED);
