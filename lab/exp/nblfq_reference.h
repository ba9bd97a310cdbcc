/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nblfq_reference.h — a plain inline transcription of 004's pseudo-code
 * (Denis & Goedefroit 2025, Algorithm 2 COMP, Algorithm 3 enqueue,
 * Algorithm 4 dequeue; Algorithm 1 init), as a reader of the paper would
 * write it: 48+16-bit tagged cells, head and tail as non-authoritative
 * caches, one CAS per operation, none of syncq's deviations (no
 * "ambiguous" answer from COMP, FULL and EMPTY trusted from two reads).
 *
 * The reference cost of the algorithm in dg25-latency ("pair" mode, one
 * thread): syncq's inline NBLFQ (syncq/static/queue/nblfq.h) is compared
 * with it in the same run. Lab-only; not a queue of the library.
 */
#ifndef SYNCQ_LAB_NBLFQ_REFERENCE_H
#define SYNCQ_LAB_NBLFQ_REFERENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "syncq/pr.h"

#define NBLREF_PTR_BITS 48
#define NBLREF_PTR_MASK ((UINT64_C(1) << NBLREF_PTR_BITS) - 1)
#define NBLREF_W (UINT64_C(1) << (64 - NBLREF_PTR_BITS)) /* counter modulus */

typedef struct nblref_queue {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) head; /* cache of the head index */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) tail; /* cache of the tail index */
  SYNCQ_CACHELINE_ALIGNED uint64_t S;             /* ring size, a power of two */
  _Atomic(uint64_t) *A;                           /* the ring: (ptr, counter) cells */
} nblref_queue;

static inline uint64_t nblref_ptr(uint64_t c) { return c & NBLREF_PTR_MASK; }
static inline uint64_t nblref_ctr(uint64_t c) { return c >> NBLREF_PTR_BITS; }
static inline uint64_t nblref_cell(uint64_t ptr, uint64_t ctr) { return ptr | (ctr << NBLREF_PTR_BITS); }
static inline uint64_t nblref_prev(const nblref_queue *q, uint64_t i) { return (i + q->S - 1) & (q->S - 1); }
/* acquire: pairs with the CAS that wrote the cell (the paper's atomic read) */
static inline uint64_t nblref_read(nblref_queue *q, uint64_t i) {
  return atomic_load_explicit(&q->A[i], memory_order_acquire);
}

/* Algorithm 1: every cell (NIL, 0), head = tail = 0. */
static inline void nblref_init(nblref_queue *q, _Atomic(uint64_t) *cells, uint64_t S) {
  q->S = S;
  q->A = cells;
  for (uint64_t i = 0; i < S; i++) atomic_init(&cells[i], 0);
  atomic_init(&q->head, 0);
  atomic_init(&q->tail, 0);
}

/* Algorithm 2: is cell u (index i) logically before cell v (index j)? */
static inline bool nblref_comp(uint64_t i, uint64_t u, uint64_t j, uint64_t v) {
  if (nblref_ctr(u) == nblref_ctr(v)) return i < j;
  return ((nblref_ctr(v) + NBLREF_W - nblref_ctr(u)) % NBLREF_W) < NBLREF_W / 2;
}

/* Algorithm 3: 0 on success, 1 when full. */
static inline int nblref_enqueue(nblref_queue *q, void *e) {
  for (;;) {
    uint64_t h = atomic_load_explicit(&q->head, memory_order_relaxed); /* relaxed: a cache */
    uint64_t u, p;
    for (;;) { /* chase head */
      u = nblref_read(q, h);
      p = nblref_read(q, nblref_prev(q, h));
      if (nblref_ptr(p) != 0 && nblref_ptr(u) == 0) break;   /* empty cell with non-empty pred */
      if (!nblref_comp(nblref_prev(q, h), p, h, u)) {        /* found step */
        if (nblref_ptr(p) == 0 && nblref_ptr(u) == 0) break; /* empty list */
        if (nblref_ptr(p) != 0 && nblref_ptr(u) != 0) {
          atomic_store_explicit(&q->head, h, memory_order_relaxed); /* relaxed: a cache */
          return 1;                                                 /* list full */
        }
      }
      h = (h + 1) & (q->S - 1);
    }
    uint64_t c = nblref_ctr(p);                                /* counter for the new element */
    if (nblref_ptr(p) == 0) c = (c + NBLREF_W - 1) % NBLREF_W; /* empty list */
    if (h == 0) c = (c + 1) % NBLREF_W;                        /* wrapping around */
    uint64_t expect = nblref_cell(0, c);
    /* seq_cst: the paper's __sync_bool_compare_and_swap, a full barrier */
    if (atomic_compare_exchange_strong(&q->A[h], &expect, nblref_cell((uint64_t)(uintptr_t)e, c))) {
      atomic_store_explicit(&q->head, (h + 1) & (q->S - 1), memory_order_relaxed); /* relaxed: a cache */
      return 0;
    }
  }
}

/* Algorithm 4: the item, or NULL (NIL) when empty. */
static inline void *nblref_dequeue(nblref_queue *q) {
  for (;;) {
    uint64_t t = atomic_load_explicit(&q->tail, memory_order_relaxed); /* relaxed: a cache */
    uint64_t p = nblref_read(q, nblref_prev(q, t));
    uint64_t u = nblref_read(q, t);
    while (nblref_comp(nblref_prev(q, t), p, t, u)) { /* chase tail */
      t = (t + 1) & (q->S - 1);
      p = u;
      u = nblref_read(q, t);
    }
    if (nblref_ptr(p) == 0 && nblref_ptr(u) == 0) return NULL; /* empty queue */
    uint64_t c = (nblref_ctr(u) + 1) % NBLREF_W;               /* new counter */
    uint64_t expect = u;
    /* seq_cst: the paper's full-barrier CAS */
    if (atomic_compare_exchange_strong(&q->A[t], &expect, nblref_cell(0, c))) {
      atomic_store_explicit(&q->tail, (t + 1) & (q->S - 1), memory_order_relaxed); /* relaxed: a cache */
      return (void *)(uintptr_t)nblref_ptr(u);
    }
  }
}

#endif /* SYNCQ_LAB_NBLFQ_REFERENCE_H */
