/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * node_pool.h — claiming and releasing slots of a syncq_node_bitmap
 * (include/syncq/stack/pool.h), shared by src/stack and src/pqueue.
 *
 * Claim: scan the words from a thread-local hint, CAS one clear bit to set.
 * Lock-free (a CAS fails only when another thread changed the word). A
 * full scan that finds no clear bit reports exhaustion; a slot released
 * behind the scan is then missed, so exhaustion is reported only when the
 * pool was full or nearly full during the scan.
 */
#ifndef SYNCQ_SRC_NODE_POOL_H
#define SYNCQ_SRC_NODE_POOL_H

#include <stdlib.h>

#include "../stats_internal.h"
#include "syncq/stack/pool.h"

#define NPOOL_NONE UINT32_MAX

/* Allocate the bitmap for n slots (n > 0), all clear. SYNCQ_ENOMEM. */
static inline int npool_init(syncq_node_bitmap *p, uint32_t n) {
  p->nslots = n;
  p->nwords = (n + 63u) / 64u;
  p->words = malloc((size_t)p->nwords * sizeof *p->words);
  if (p->words == NULL) return SYNCQ_ENOMEM;
  for (uint32_t w = 0; w < p->nwords; w++) {
    uint32_t first = w * 64u, bits = n - first < 64u ? n - first : 64u;
    atomic_init(&p->words[w], bits == 64u ? 0 : ~((UINT64_C(1) << bits) - 1u));
  }
  return SYNCQ_OK;
}

static inline void npool_destroy(syncq_node_bitmap *p) {
  free(p->words);
  p->words = NULL;
}

/* Per-thread starting word; spread threads over the bitmap. */
static _Thread_local uint32_t npool_hint_tls;

static inline uint32_t npool_hint(void) {
  if (npool_hint_tls == 0) /* first use: derive from the thread's TLS address */
    npool_hint_tls = (uint32_t)(((uintptr_t)&npool_hint_tls >> 4) * 2654435761u) | 1u;
  return npool_hint_tls;
}

/* Claim a slot: its index, or NPOOL_NONE when a full scan found none. */
static inline uint32_t npool_get(syncq_node_bitmap *p) {
  uint32_t w = (npool_hint() - 1u) % p->nwords;
  for (uint32_t k = 0; k < p->nwords; k++) {
    /* relaxed: a guess validated by the CAS below */
    uint64_t v = atomic_load_explicit(&p->words[w], memory_order_relaxed);
    while (v != ~UINT64_C(0)) {
      uint64_t bit = (~v) & (~(~v) + 1u); /* lowest clear bit of v */
      SYNCQ_STAT_INC(cas_attempts);
      /* acquire: pairs with the release fetch_and in npool_put(), so the
       * previous owner's accesses to the node happen before ours */
      if (atomic_compare_exchange_weak_explicit(&p->words[w], &v, v | bit, memory_order_acquire,
                                                memory_order_relaxed)) {
        npool_hint_tls = w + 1u; /* next time, start here (0 means unset) */
        return w * 64u + (uint32_t)__builtin_ctzll(bit);
      }
      SYNCQ_STAT_INC(cas_failures);
    }
    if (++w == p->nwords) w = 0;
  }
  return NPOOL_NONE;
}

/* Release a claimed slot. */
static inline void npool_put(syncq_node_bitmap *p, uint32_t i) {
  /* release: pairs with the acquire CAS in npool_get() of the next owner */
  atomic_fetch_and_explicit(&p->words[i / 64u], ~(UINT64_C(1) << (i % 64u)), memory_order_release);
}

#endif
