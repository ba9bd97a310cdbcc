/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ms_hp.c — Michael & Scott's non-blocking queue with hazard pointers.
 *
 * Contract
 *   Source:      the queue of Michael & Scott (001 §4.1; PODC'96), with the
 *                counted pointers replaced by hazard pointers (Michael,
 *                "Hazard pointers", IEEE TPDS 2004, §5 applies them to this
 *                very queue): a thread announces the node it is about to
 *                dereference (Head or Tail, and Head's successor) and
 *                validates that it is still reachable; a dequeued dummy is
 *                retired and freed once no hazard pointer holds it.
 *   Progress:    lock-free (the hazard-pointer scan is bounded). A failed
 *                CAS is followed by bounded exponential backoff, as in 001.
 *   Atomics:     uncontended enqueue: 2 CAS (+ the record's enter/leave
 *                and hazard stores); dequeue: 1 CAS (+ the same).
 *   Memory:      malloc per enqueue; dequeued nodes are retired and really
 *                freed (syncq/reclaim.h hazard pointers).
 *   Signal-safe: no (malloc). Process-shared: no.
 *   Limits:      unbounded; items non-NULL; capacity is ignored.
 *   Stats:       cas_attempts, cas_failures, backoffs.
 */
#include "syncq/queue/ms.h"

#include <stdlib.h>

#include "../stats_internal.h"
#include "syncq/backoff.h"
#include "syncq/queue.h"
#include "../race_internal.h" /* SYNCQ_RACE_POINT: nothing outside race tests */

#define MS_HP_MAGIC UINT64_C(0x4d5348505155455a)
enum { HP_NODE = 0, HP_NEXT = 1 };

struct syncq_queue_ms_hp_node {
  _Atomic(syncq_queue_ms_hp_node *) next;
  void *value; /* written before the node is linked, read by the dequeuer that owns it */
};
typedef syncq_queue_ms_hp_node node_t;

static void free_node(void *node, void *ctx) {
  (void)ctx;
  free(node);
}

static node_t *make_node(void *value) {
  node_t *n = malloc(sizeof *n);
  if (n == NULL) return NULL;
  atomic_init(&n->next, NULL);
  n->value = value;
  return n;
}

int syncq_queue_ms_hp_init(syncq_queue_ms_hp *q, size_t capacity) {
  (void)capacity;
  if (q == NULL || ((uintptr_t)q % _Alignof(syncq_queue_ms_hp)) != 0) return SYNCQ_EINVAL;
  node_t *dummy = make_node(NULL);
  if (dummy == NULL) return SYNCQ_ENOMEM;
  int r = syncq_hp_domain_create(2, free_node, NULL, &q->hp);
  if (r != SYNCQ_OK) {
    free(dummy);
    return r;
  }
  atomic_init(&q->head, dummy);
  atomic_init(&q->tail, dummy);
  q->magic = MS_HP_MAGIC;
  return SYNCQ_OK;
}

int syncq_queue_ms_hp_destroy(syncq_queue_ms_hp *q) {
  if (q == NULL || q->magic != MS_HP_MAGIC) return SYNCQ_EINVAL;
  int r = syncq_hp_domain_destroy(q->hp); /* frees the retired nodes */
  if (r != SYNCQ_OK) return r;
  for (node_t *n = atomic_load(&q->head), *next; n != NULL; n = next) { /* the list from the dummy */
    next = atomic_load_explicit(&n->next, memory_order_relaxed);        /* relaxed: no concurrent user */
    free(n);
  }
  q->magic = 0;
  return SYNCQ_OK;
}

int syncq_queue_ms_hp_enqueue(syncq_queue_ms_hp *q, void *item) {
  if (q == NULL || item == NULL) return SYNCQ_EINVAL;
  node_t *node = make_node(item);
  if (node == NULL) return SYNCQ_ENOMEM;
  syncq_hp_record *rec;
  if (syncq_hp_enter(q->hp, &rec) != SYNCQ_OK) {
    free(node);
    return SYNCQ_ENOMEM;
  }
  syncq_backoff_exp b;
  syncq_backoff_exp_init_default(&b);
  void *tail;
  for (;;) {
    tail = syncq_hp_protect(rec, HP_NODE, &q->tail);
    node_t *next = atomic_load(&((node_t *)tail)->next);
    if (tail != atomic_load(&q->tail)) continue;
    if (next == NULL) {
      node_t *expect = NULL;
      SYNCQ_STAT_INC(cas_attempts);
      if (atomic_compare_exchange_strong(&((node_t *)tail)->next, &expect, node))
        break; /* links (publishes) the node */
      SYNCQ_STAT_INC(cas_failures);
      syncq_backoff_exp_wait(&b);
    } else {
      SYNCQ_STAT_INC(cas_attempts);
      if (!atomic_compare_exchange_strong(&q->tail, &tail, next)) SYNCQ_STAT_INC(cas_failures);
    }
  }
  SYNCQ_RACE_POINT("queue.ms.enqueue.linked"); /* linked, Tail not swung: others must help */
  SYNCQ_STAT_INC(cas_attempts);
  if (!atomic_compare_exchange_strong(&q->tail, &tail, node)) SYNCQ_STAT_INC(cas_failures);
  syncq_hp_leave(rec);
  return SYNCQ_OK;
}

int syncq_queue_ms_hp_dequeue(syncq_queue_ms_hp *q, void **item) {
  if (q == NULL || item == NULL) return SYNCQ_EINVAL;
  syncq_hp_record *rec;
  if (syncq_hp_enter(q->hp, &rec) != SYNCQ_OK) return SYNCQ_ENOMEM;
  syncq_backoff_exp b;
  syncq_backoff_exp_init_default(&b);
  void *head;
  void *value;
  for (;;) {
    head = syncq_hp_protect(rec, HP_NODE, &q->head);
    void *tail = atomic_load(&q->tail);
    node_t *next = atomic_load(&((node_t *)head)->next);
    syncq_hp_set(rec, HP_NEXT, next);            /* seq_cst store, then validate below */
    if (head != atomic_load(&q->head)) continue; /* head still reachable: next is too */
    if (next == NULL) {
      syncq_hp_leave(rec);
      return SYNCQ_EMPTY;
    }
    if (head == tail) { /* tail lags: help it */
      SYNCQ_STAT_INC(cas_attempts);
      if (!atomic_compare_exchange_strong(&q->tail, &tail, next)) SYNCQ_STAT_INC(cas_failures);
      continue;
    }
    SYNCQ_RACE_POINT("queue.ms.dequeue.read"); /* Head and next protected, Head not yet swung */
    value = next->value;                       /* next is protected; its value was published by the linking CAS */
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(&q->head, &head, next)) break;
    SYNCQ_STAT_INC(cas_failures);
    syncq_backoff_exp_wait(&b);
  }
  *item = value;
  syncq_hp_clear(rec, HP_NEXT);
  syncq_hp_clear(rec, HP_NODE);
  (void)syncq_hp_retire(rec, head); /* the old dummy: freed when no one holds it */
  syncq_hp_leave(rec);
  return SYNCQ_OK;
}

SYNCQ_QUEUE_REGISTER_FIXED(ms_hp, "ms-hp", "Michael & Scott non-blocking queue with hazard pointers",
                           "001 §4.1, [17]; Michael 2004 (hazard pointers)", LOCK_FREE,
                           SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES);
