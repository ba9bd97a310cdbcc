/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * elimination.c — the elimination-backoff stack.
 *
 * Contract
 *   Source:      D. Hendler, N. Shavit, L. Yerushalmi, "A Scalable
 *                Lock-free Stack Algorithm", SPAA 2004 (§3, Figures 3-5):
 *                a Treiber stack (the central object) plus an elimination
 *                array used as backoff: an operation whose CAS on Top
 *                failed visits a random slot of the array; a push and a pop
 *                that collide there exchange the item and both complete,
 *                linearized together (push immediately followed by pop) at
 *                the exchange. The collision protocol is the slot
 *                exchanger of Herlihy & Shavit's presentation of the same
 *                algorithm (The Art of Multiprocessor Programming, §11.4),
 *                which replaces the paper's per-thread location/collision
 *                arrays (it needs no thread ids): a slot goes EMPTY ->
 *                WAITING (an offer) -> BUSY (a partner's answer) -> EMPTY,
 *                each step a double-width CAS on {item, stamp << 2 | state}
 *                so no transition is applied to a stale slot. Only a push
 *                answers a waiting pop and vice versa, so every exchange
 *                eliminates a pair. A waiter that sees no partner within
 *                the wait (doubling from 64 to 4096 polls, like the paper's
 *                adaptive backoff) withdraws its offer and retries Top.
 *                Top and the node pool are those of treiber.c: a 32-bit
 *                version with the top index, nodes on the tagged free list.
 *   Progress:    lock-free.
 *   Atomics:     uncontended: as treiber.c (the array is not touched).
 *                Contended: 1-3 double-width CAS per elimination attempt.
 *   Memory:      capacity nodes and the array allocated at init, never
 *                after; type-stable nodes (syncq/reclaim.h free list).
 *   Signal-safe: yes. Process-shared: no.
 *   Limits:      capacity <= SYNCQ_STACK_MAX_CAPACITY; non-NULL items.
 *   Stats:       cas_attempts, cas_failures, retries (elimination visits
 *                that did not eliminate).
 */
#include "syncq/stack/elimination.h"

#include <stddef.h>
#include <stdlib.h>

#include "../stats_internal.h"
#include "syncq/platform.h"

struct syncq_stack_elimination_node {
  _Atomic(uint32_t) next; /* index + 1 of the node below, 0 for none */
  _Atomic(void *) item;
  syncq_fl_link link;
};

#define VER_ONE (UINT64_C(1) << 32)
#define IDX(w) ((uint32_t)(w))

enum { SLOT_EMPTY = 0, SLOT_WAITING = 1, SLOT_BUSY = 2 };
#define STATE(hi) ((unsigned)((hi)&3u))
#define NEXT_HI(hi, state) ((((hi) >> 2) + 1u) << 2 | (state))
#define WAIT_MIN 64u
#define WAIT_MAX 4096u
#define MAX_SLOTS 16u

int syncq_stack_elimination_init(syncq_stack_elimination *s, const syncq_stack_config *cfg) {
  if (s == NULL) return SYNCQ_EINVAL;
  if (cfg && (cfg->capacity > SYNCQ_STACK_MAX_CAPACITY || cfg->max_threads > SYNCQ_STACK_MAX_THREADS))
    return SYNCQ_EINVAL;
  uint32_t cap = cfg && cfg->capacity ? cfg->capacity : SYNCQ_STACK_DEFAULT_CAPACITY;
  uint32_t threads = cfg && cfg->max_threads ? cfg->max_threads : SYNCQ_STACK_DEFAULT_THREADS;
  int r = syncq_freelist_init(&s->free);
  if (r != SYNCQ_OK) return r; /* no double-width CAS */
  s->nslots = threads / 2u < 1u ? 1u : threads / 2u > MAX_SLOTS ? MAX_SLOTS : threads / 2u;
  s->nodes = malloc((size_t)cap * sizeof *s->nodes);
  s->slots = syncq_alloc_aligned(s->nslots * sizeof *s->slots, _Alignof(syncq_stack_elimination_slot));
  if (s->nodes == NULL || s->slots == NULL) {
    free(s->nodes);
    free(s->slots);
    return SYNCQ_ENOMEM;
  }
  for (uint32_t i = 0; i < cap; i++) {
    atomic_init(&s->nodes[i].next, 0);
    atomic_init(&s->nodes[i].item, NULL);
    atomic_init(&s->nodes[i].link.next, 0);
  }
  for (uint32_t i = 0; i < s->nslots; i++) {
    atomic_init(&s->slots[i].x.lo, 0);
    atomic_init(&s->slots[i].x.hi, 0);
  }
  r =
    syncq_freelist_fill(&s->free, s->nodes, cap, sizeof *s->nodes, offsetof(struct syncq_stack_elimination_node, link));
  if (r != SYNCQ_OK) {
    free(s->nodes);
    free(s->slots);
    return r;
  }
  atomic_init(&s->top, 0);
  s->eliminate_first = 0;
  return SYNCQ_OK;
}

int syncq_stack_elimination_set_eliminate_first(syncq_stack_elimination *s, int on) {
  if (s == NULL) return SYNCQ_EINVAL;
  s->eliminate_first = on != 0;
  return SYNCQ_OK;
}

int syncq_stack_elimination_destroy(syncq_stack_elimination *s) {
  if (s == NULL) return SYNCQ_EINVAL;
  free(s->nodes);
  free(s->slots);
  s->nodes = NULL;
  s->slots = NULL;
  return SYNCQ_OK;
}

static _Thread_local uint64_t elim_seed;

static uint32_t random_slot(uint32_t n) {
  if (elim_seed == 0) elim_seed = ((uint64_t)(uintptr_t)&elim_seed * 0x9e3779b97f4a7c15ull) | 1u;
  elim_seed ^= elim_seed >> 12;
  elim_seed ^= elim_seed << 25;
  elim_seed ^= elim_seed >> 27;
  return (uint32_t)((elim_seed * 2685821657736338717ull) >> 33) % n;
}

/* Offer `mine` (an item, or 0 for a pop) at a random slot for up to *wait
 * polls. Returns 1 with the partner's offer in *other when a partner of the
 * opposite kind took part, 0 otherwise. */
static int exchange(syncq_stack_elimination *s, uint64_t mine, uint32_t *wait, uint64_t *other) {
  syncq_pr_dw_atomic *x = &s->slots[random_slot(s->nslots)].x;
  syncq_pr_dw cur = syncq_pr_dw_load(x); /* possibly torn: every use goes through a CAS */
  switch (STATE(cur.hi)) {
  case SLOT_EMPTY: {
    syncq_pr_dw offer = {mine, NEXT_HI(cur.hi, SLOT_WAITING)};
    SYNCQ_STAT_INC(cas_attempts);
    if (!syncq_pr_dwcas(x, &cur, offer)) {
      SYNCQ_STAT_INC(cas_failures);
      return 0;
    }
    uint64_t answered = NEXT_HI(offer.hi, SLOT_BUSY);
    for (uint32_t i = 0; i < *wait; i++) {
      /* acquire: pairs with the partner's seq_cst CAS that answered */
      if (atomic_load_explicit(&x->hi, memory_order_acquire) == answered) break;
      syncq_pr_relax();
    }
    syncq_pr_dw mine_now = offer;
    SYNCQ_STAT_INC(cas_attempts);
    if (syncq_pr_dwcas(x, &mine_now, (syncq_pr_dw){0, NEXT_HI(offer.hi, SLOT_EMPTY)})) {
      if (*wait < WAIT_MAX) *wait *= 2u; /* nobody came: wait longer next time */
      return 0;                          /* withdrawn */
    }
    /* Answered (only a partner can move our offer on, to BUSY): take its
     * offer and free the slot; nobody else touches a BUSY slot. */
    syncq_pr_dw busy = mine_now;
    while (!syncq_pr_dwcas(x, &busy, (syncq_pr_dw){0, NEXT_HI(answered, SLOT_EMPTY)})) {
    }
    *other = busy.lo;
    return 1;
  }
  case SLOT_WAITING:
    if ((cur.lo == 0) == (mine == 0)) return 0; /* two pushes or two pops: no use */
    SYNCQ_STAT_INC(cas_attempts);
    if (syncq_pr_dwcas(x, &cur, (syncq_pr_dw){mine, NEXT_HI(cur.hi, SLOT_BUSY)})) {
      *other = cur.lo;
      return 1;
    }
    SYNCQ_STAT_INC(cas_failures);
    return 0;
  default:
    return 0; /* BUSY: an exchange is completing there */
  }
}

int syncq_stack_elimination_push(syncq_stack_elimination *s, void *item) {
  if (s == NULL || item == NULL) return SYNCQ_EINVAL;
  syncq_fl_link *l;
  if (syncq_freelist_pop(&s->free, &l) != SYNCQ_OK) return SYNCQ_ENOMEM;
  struct syncq_stack_elimination_node *n = SYNCQ_FL_CONTAINER(l, struct syncq_stack_elimination_node, link);
  uint32_t i = (uint32_t)(n - s->nodes);
  /* relaxed: published by the seq_cst CAS on Top below */
  atomic_store_explicit(&n->item, item, memory_order_relaxed);
  uint32_t wait = WAIT_MIN;
  uint64_t other;
  if (s->eliminate_first && exchange(s, (uint64_t)(uintptr_t)item, &wait, &other)) {
    syncq_freelist_push(&s->free, &n->link);
    return SYNCQ_OK;
  }
  for (;;) {
    /* relaxed: a guess the CAS validates */
    uint64_t t = atomic_load_explicit(&s->top, memory_order_relaxed);
    /* relaxed: published by the CAS */
    atomic_store_explicit(&n->next, IDX(t), memory_order_relaxed);
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(&s->top, &t, ((t & ~(VER_ONE - 1)) + VER_ONE) | (i + 1u))) return SYNCQ_OK;
    SYNCQ_STAT_INC(cas_failures);
    if (exchange(s, (uint64_t)(uintptr_t)item, &wait, &other)) { /* a pop took our item */
      syncq_freelist_push(&s->free, &n->link);
      return SYNCQ_OK;
    }
    SYNCQ_STAT_INC(retries);
  }
}

int syncq_stack_elimination_pop(syncq_stack_elimination *s, void **item) {
  if (s == NULL || item == NULL) return SYNCQ_EINVAL;
  uint32_t wait = WAIT_MIN;
  uint64_t other;
  if (s->eliminate_first && exchange(s, 0, &wait, &other)) {
    *item = (void *)(uintptr_t)other;
    return SYNCQ_OK;
  }
  for (;;) {
    /* seq_cst: an empty Top is an EMPTY pop's linearization point; a
     * non-empty one pairs with the pusher's CAS */
    uint64_t t = atomic_load(&s->top);
    if (IDX(t) == 0) return SYNCQ_EMPTY;
    struct syncq_stack_elimination_node *n = &s->nodes[IDX(t) - 1u];
    /* relaxed: stale if the node was popped meanwhile; the CAS fails then */
    uint32_t next = atomic_load_explicit(&n->next, memory_order_relaxed);
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(&s->top, &t, ((t & ~(VER_ONE - 1)) + VER_ONE) | next)) {
      /* relaxed: the node is ours; its push CAS precedes our CAS */
      *item = atomic_load_explicit(&n->item, memory_order_relaxed);
      syncq_freelist_push(&s->free, &n->link);
      return SYNCQ_OK;
    }
    SYNCQ_STAT_INC(cas_failures);
    if (exchange(s, 0, &wait, &other)) { /* a push handed us its item */
      *item = (void *)(uintptr_t)other;
      return SYNCQ_OK;
    }
    SYNCQ_STAT_INC(retries);
  }
}

SYNCQ_STACK_REGISTER(elimination, "elimination", "elimination-backoff stack (Treiber + elimination array)",
                     "Hendler, Shavit & Yerushalmi 2004", LOCK_FREE,
                     SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_BOUNDED | SYNCQ_PROP_SIGNAL_SAFE);
