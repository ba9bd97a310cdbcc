/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * quicksort.h — 001 §4.5's parallel quicksort: p threads sort an array of
 * pseudo-random keys, sharing the intervals still to sort through one
 * shared pool (a registered queue or stack, pool.h); quicksort above
 * APP_QS_CUTOFF elements, insertion sort at or below.
 *
 * Use: app_qs_init (fills the keys from the seed and puts the whole array
 * in the pool), then every thread runs app_qs_worker, then app_qs_check
 * (sorted, and a permutation of the input), then app_qs_destroy.
 */
#ifndef SYNCQ_LAB_APPS_QUICKSORT_H
#define SYNCQ_LAB_APPS_QUICKSORT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "pool.h"

#define APP_QS_CUTOFF 20           /* 001 §4.5: insertion sort at 20 elements or fewer */
#define APP_QS_MAX_KEYS (1u << 20) /* an interval's start fits 20 bits of a pool item */
#define APP_QS_POOL_CAPACITY 8192u /* intervals the pool holds; beyond, a thread keeps its own */

typedef struct app_qs {
  uint32_t *keys;
  size_t n;
  app_pool pool;
  _Atomic(size_t) done;          /* keys in their final place: the team stops at n */
  _Atomic(int) errors;           /* structure failures (not FULL/EMPTY) */
  uint64_t in_sum, in_hash;      /* the input multiset's two commutative hashes */
  _Atomic(uint64_t) puts, takes; /* intervals through the pool (for the pool's watch, pool.h) */
} app_qs;

/* SYNCQ_OK, SYNCQ_EINVAL (n 0 or above APP_QS_MAX_KEYS, unusable
 * algorithm), SYNCQ_ENOMEM, or the pool's init status. */
int app_qs_init(app_qs *s, const syncq_algo *pool_algo, size_t n, uint64_t seed, unsigned threads);
void app_qs_worker(app_qs *s);
/* 0 when the keys are sorted, a permutation of the input, and no operation
 * failed; else -1 with the reason in why (first: intervals the pool lost,
 * as its watch found them). */
int app_qs_check(const app_qs *s, char *why, size_t len);
void app_qs_destroy(app_qs *s);

#endif
