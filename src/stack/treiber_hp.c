/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * treiber_hp.c — Treiber's stack with hazard pointers.
 *
 * Contract
 *   Source:      Treiber 1986 (001 §4.2) for the stack; M. M. Michael,
 *                "Hazard pointers: safe memory reclamation for lock-free
 *                objects", IEEE TPDS 15(6), 2004, §4 (its LIFO stack
 *                example) for the reclamation: pop announces the top node
 *                in a hazard slot (syncq_hp_protect: publish, then re-read
 *                Top until they agree) before reading its next field, and
 *                retires the node after its CAS succeeds. A node cannot be
 *                freed, hence not reallocated and pushed again, while a
 *                popper holds it: no ABA, so Top is a plain pointer.
 *                Bounded exponential backoff after a failed CAS (001 §4).
 *   Progress:    lock-free, except that push calls malloc and a thread's
 *                first pop on a stack may allocate its hazard record.
 *   Atomics:     uncontended push: 1 load + 1 CAS (plus malloc); pop:
 *                1 CAS (record) + 1 seq_cst store + 2 loads (protect) +
 *                1 CAS + stores to leave the record, plus an amortized
 *                scan every R retirements.
 *   Memory:      one malloc'd node per push, freed after retirement; a
 *                hazard domain (1 slot per record) from syncq/reclaim.h.
 *   Signal-safe: no (malloc). Process-shared: no.
 *   Limits:      unbounded (capacity ignored); non-NULL items.
 *   Stats:       cas_attempts, cas_failures, backoffs.
 */
#include "syncq/stack/treiber_hp.h"

#include <stdlib.h>

#include "../stats_internal.h"
#include "syncq/backoff.h"

typedef struct hp_node {
  struct hp_node *next; /* written before the push CAS publishes the node */
  void *item;
} hp_node;

static void free_node(void *node, void *ctx) {
  (void)ctx;
  free(node);
}

int syncq_stack_treiber_hp_init(syncq_stack_treiber_hp *s, const syncq_stack_config *cfg) {
  if (s == NULL) return SYNCQ_EINVAL;
  if (cfg && (cfg->capacity > SYNCQ_STACK_MAX_CAPACITY || cfg->max_threads > SYNCQ_STACK_MAX_THREADS))
    return SYNCQ_EINVAL;
  int r = syncq_hp_domain_create(1, free_node, NULL, &s->hp);
  if (r != SYNCQ_OK) return r;
  atomic_init(&s->top, NULL);
  return SYNCQ_OK;
}

int syncq_stack_treiber_hp_destroy(syncq_stack_treiber_hp *s) {
  if (s == NULL) return SYNCQ_EINVAL;
  int r = syncq_hp_domain_destroy(s->hp); /* frees the retired nodes */
  if (r != SYNCQ_OK) return r;
  hp_node *n = atomic_load(&s->top);
  while (n != NULL) {
    hp_node *next = n->next;
    free(n);
    n = next;
  }
  atomic_store(&s->top, NULL);
  s->hp = NULL;
  return SYNCQ_OK;
}

int syncq_stack_treiber_hp_push(syncq_stack_treiber_hp *s, void *item) {
  if (s == NULL || item == NULL) return SYNCQ_EINVAL;
  hp_node *n = malloc(sizeof *n);
  if (n == NULL) return SYNCQ_ENOMEM;
  n->item = item;
  syncq_backoff_exp b;
  syncq_backoff_exp_init_default(&b);
  /* relaxed: a guess the CAS validates (never dereferenced by push) */
  void *t = atomic_load_explicit(&s->top, memory_order_relaxed);
  for (;;) {
    n->next = t; /* plain: the node is private until the CAS publishes it */
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(&s->top, &t, n)) return SYNCQ_OK;
    SYNCQ_STAT_INC(cas_failures);
    syncq_backoff_exp_wait(&b);
    t = atomic_load_explicit(&s->top, memory_order_relaxed); /* fresh guess after the wait */
  }
}

int syncq_stack_treiber_hp_pop(syncq_stack_treiber_hp *s, void **item) {
  if (s == NULL || item == NULL) return SYNCQ_EINVAL;
  syncq_hp_record *rec;
  if (syncq_hp_enter(s->hp, &rec) != SYNCQ_OK) return SYNCQ_ENOMEM;
  syncq_backoff_exp b;
  syncq_backoff_exp_init_default(&b);
  for (;;) {
    /* protect: seq_cst publish-and-reload; the load pairs with the push
     * CAS that published t, so t's fields are visible */
    hp_node *t = syncq_hp_protect(rec, 0, &s->top);
    if (t == NULL) {
      syncq_hp_leave(rec);
      return SYNCQ_EMPTY;
    }
    void *expected = t;
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(&s->top, &expected, t->next)) {
      *item = t->item;
      syncq_hp_clear(rec, 0);
      syncq_hp_retire(rec, t); /* freed once no hazard pointer holds it */
      syncq_hp_leave(rec);
      return SYNCQ_OK;
    }
    SYNCQ_STAT_INC(cas_failures);
    syncq_backoff_exp_wait(&b);
  }
}

SYNCQ_STACK_REGISTER(treiber_hp, "treiber-hp", "Treiber's stack with hazard pointers (malloc'd nodes)",
                     "Treiber 1986; Michael 2004 §4; 001 §4.2", LOCK_FREE,
                     SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_ALLOCATES);
