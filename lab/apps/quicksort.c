/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * quicksort.c — parallel quicksort over a shared work pool.
 *
 * Contract
 *   Source:   Michael & Scott 1998 (paper 001) §4.5, Figures 5 (queue)
 *             and 6 (stack): "the processes cooperate in sorting an array
 *             of 500,000 pseudo-random numbers using quicksort for
 *             intervals of more than 20 elements, and insertion sort for
 *             smaller intervals", the intervals distributed through a
 *             link-based queue or stack.
 *   Scheme:   a thread takes an interval from the pool, partitions it
 *             (median-of-three pivot, Hoare-style), puts the larger part
 *             back into the pool for whoever is idle and goes on with the
 *             smaller, down to APP_QS_CUTOFF elements, which it finishes
 *             by insertion sort. When the pool refuses an interval (a
 *             bounded structure is full) the thread keeps it on a private
 *             stack and sorts it itself. Parts of APP_QS_CUTOFF or fewer
 *             are never shared: their sort costs less than a pool round trip.
 *   Termination: `done` counts keys in their final place (pivots and
 *             insertion-sorted intervals); every thread stops when it
 *             reaches n. Idle threads yield between looks at the pool,
 *             under the pool's watch (pool.h): a pool that lost an
 *             interval stops them about 1.1 s after the last thread fell
 *             idle, and the check names the pool and the intervals lost.
 *   Atomics:  one pool put or take per shared interval, one fetch-and-add
 *             on `done` per pivot and per finished small interval.
 *   Memory:   the keys (4 bytes each) and the pool; a thread's private
 *             overflow stack grows by realloc (only when the pool is full).
 *   Validation: sorted, and the same multiset as the input (two
 *             independent commutative hashes of the keys, sum and sum of
 *             a 64-bit mix, computed at init and after the sort).
 *   Progress: that of the pool (blocking for lock-based ones); idle
 *             threads wait for work by yielding, so the sort as a whole is
 *             blocking: a thread stopped while holding an interval holds up
 *             the end.
 *   Signal safety: none (allocates); process-shared: no (pointers).
 *   Limits:   n <= APP_QS_MAX_KEYS (an interval is {start, length} packed
 *             in a pool item).
 */
#include "quicksort.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncq/platform.h"
#include "../prng.h"

#define QS_LEN_BITS 21 /* lengths up to 2^20 inclusive */

static inline void *qs_item(size_t lo, size_t len) { return app_pool_item((uint64_t)lo << QS_LEN_BITS | len); }
static inline void qs_interval(void *item, size_t *lo, size_t *len) {
  uint64_t v = app_pool_payload(item);
  *lo = (size_t)(v >> QS_LEN_BITS);
  *len = (size_t)(v & ((1ull << QS_LEN_BITS) - 1));
}

int app_qs_init(app_qs *s, const syncq_algo *pool_algo, size_t n, uint64_t seed, unsigned threads) {
  if (s == NULL || n == 0 || n > APP_QS_MAX_KEYS || !app_pool_usable(pool_algo)) return SYNCQ_EINVAL;
  memset(s, 0, sizeof *s);
  s->keys = malloc(n * sizeof *s->keys);
  if (s->keys == NULL) return SYNCQ_ENOMEM;
  s->n = n;
  uint64_t x = seed;
  for (size_t i = 0; i < n; i++) {
    x = lab_mix64(x + LAB_SPLITMIX_GAMMA);
    s->keys[i] = (uint32_t)(x >> 32);
    s->in_sum += s->keys[i];
    s->in_hash += lab_mix64(s->keys[i]);
  }
  int st = app_pool_init(&s->pool, pool_algo, APP_QS_POOL_CAPACITY, threads);
  if (st != SYNCQ_OK) {
    free(s->keys);
    s->keys = NULL;
    return st;
  }
  atomic_init(&s->done, 0);
  atomic_init(&s->errors, 0);
  atomic_init(&s->puts, 1); /* the whole array, below */
  atomic_init(&s->takes, 0);
  if (!app_pool_put(&s->pool, qs_item(0, n), &s->errors)) { /* an empty pool must take one item */
    app_pool_destroy(&s->pool);
    free(s->keys);
    s->keys = NULL;
    return SYNCQ_ENOMEM;
  }
  return SYNCQ_OK;
}

static void qs_insertion(uint32_t *a, size_t len) {
  for (size_t i = 1; i < len; i++) {
    uint32_t v = a[i];
    size_t j = i;
    for (; j > 0 && a[j - 1] > v; j--) a[j] = a[j - 1];
    a[j] = v;
  }
}

static inline void qs_swap(uint32_t *a, size_t i, size_t j) {
  uint32_t t = a[i];
  a[i] = a[j];
  a[j] = t;
}

/* Partition a[0..len) (len > APP_QS_CUTOFF) around the median of the
 * first, middle and last keys; returns the pivot's final index. */
static size_t qs_partition(uint32_t *a, size_t len) {
  size_t mid = len / 2, last = len - 1;
  if (a[mid] < a[0]) qs_swap(a, mid, 0);
  if (a[last] < a[0]) qs_swap(a, last, 0);
  if (a[last] < a[mid]) qs_swap(a, last, mid);
  /* a[0] <= a[mid] <= a[last]: the median is the pivot, parked at last-1 */
  qs_swap(a, mid, last - 1);
  uint32_t pivot = a[last - 1];
  size_t i = 0, j = last - 1;
  for (;;) {
    while (a[++i] < pivot) {
    }
    while (pivot < a[--j]) {
    }
    if (i >= j) break;
    qs_swap(a, i, j);
  }
  qs_swap(a, i, last - 1);
  return i;
}

typedef struct qs_local {
  size_t *lo, *len;
  size_t n, cap;
  uint64_t puts; /* intervals this thread put in the pool */
} qs_local;

static void qs_local_push(qs_local *l, size_t lo, size_t len, app_qs *s) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 64;
    size_t *a = realloc(l->lo, cap * sizeof *a), *b = a ? realloc(l->len, cap * sizeof *b) : NULL;
    if (a) l->lo = a;
    if (b == NULL) { /* out of memory: sort it here (recursion depth stays small for random keys) */
      qs_insertion(s->keys + lo, len);
      atomic_fetch_add(&s->done, len);
      return;
    }
    l->len = b;
    l->cap = cap;
  }
  l->lo[l->n] = lo;
  l->len[l->n++] = len;
}

/* Sort one interval: partition down to the cutoff, sharing the larger part. */
static void qs_interval_sort(app_qs *s, size_t lo, size_t len, qs_local *local) {
  while (len > APP_QS_CUTOFF) {
    size_t p = qs_partition(s->keys + lo, len);
    atomic_fetch_add(&s->done, 1); /* the pivot is in place */
    size_t llo = lo, llen = p, rlo = lo + p + 1, rlen = len - p - 1;
    size_t big_lo = llen >= rlen ? llo : rlo, big_len = llen >= rlen ? llen : rlen;
    size_t sml_lo = llen >= rlen ? rlo : llo, sml_len = llen >= rlen ? rlen : llen;
    if (big_len > APP_QS_CUTOFF) {
      if (app_pool_put(&s->pool, qs_item(big_lo, big_len), &s->errors)) local->puts++;
      else qs_local_push(local, big_lo, big_len, s);
    } else if (big_len > 0) {
      qs_insertion(s->keys + big_lo, big_len);
      atomic_fetch_add(&s->done, big_len);
    }
    lo = sml_lo;
    len = sml_len;
  }
  if (len > 0) {
    qs_insertion(s->keys + lo, len);
    atomic_fetch_add(&s->done, len);
  }
}

void app_qs_worker(app_qs *s) {
  qs_local local = {NULL, NULL, 0, 0, 0};
  lab_queue_streak streak = {0}; /* the current idle wait's (polls 0: none) */
  uint64_t takes = 0;
  for (;;) {
    size_t lo, len;
    void *item;
    if (local.n > 0) {
      local.n--;
      lo = local.lo[local.n];
      len = local.len[local.n];
    } else if (app_pool_take(&s->pool, &item, &s->errors)) {
      takes++;
      if (streak.polls != 0) { /* an idle wait ended */
        lab_queue_watch_end(&s->pool.watch, &streak);
        streak = (lab_queue_streak){0};
      }
      qs_interval(item, &lo, &len);
      if (len == 0 || lo + len > s->n) { /* a corrupted item: count it, never touch memory with it */
        atomic_fetch_add(&s->errors, 1);
        break;
      }
    } else {
      if (atomic_load(&s->done) >= s->n || atomic_load(&s->errors) != 0) break;
      syncq_yield();
      if (lab_queue_watch_empty(&s->pool.watch, &streak)) break; /* intervals lost */
      continue;
    }
    qs_interval_sort(s, lo, len, &local);
  }
  /* no longer quiet by a wait before finished counts it (once per thread) */
  lab_queue_watch_end(&s->pool.watch, &streak);
  lab_queue_watch_finished(&s->pool.watch);
  atomic_fetch_add(&s->puts, local.puts);
  atomic_fetch_add(&s->takes, takes);
  free(local.lo);
  free(local.len);
}

int app_qs_check(const app_qs *s, char *why, size_t len) {
  app_qs *m = (app_qs *)s;
  uint64_t puts = atomic_load(&m->puts), takes = atomic_load(&m->takes);
  lab_queue_lost lost = {s->pool.algo->name, app_pool_kind(&s->pool), "intervals", puts > takes ? puts - takes : 0,
                         puts};
  if (lab_queue_watch_why(&m->pool.watch, &lost, why, len)) return -1;
  int errors = atomic_load(&s->errors);
  if (errors != 0) {
    snprintf(why, len, "%s: %d failed pool operations", s->pool.algo->name, errors);
    return -1;
  }
  size_t done = atomic_load(&s->done);
  if (done != s->n) {
    snprintf(why, len, "%s: %zu of %zu keys placed", s->pool.algo->name, done, s->n);
    return -1;
  }
  uint64_t sum = 0, hash = 0;
  for (size_t i = 0; i < s->n; i++) {
    if (i > 0 && s->keys[i - 1] > s->keys[i]) {
      snprintf(why, len, "%s: keys not sorted at index %zu", s->pool.algo->name, i);
      return -1;
    }
    sum += s->keys[i];
    hash += lab_mix64(s->keys[i]);
  }
  if (sum != s->in_sum || hash != s->in_hash) {
    snprintf(why, len, "%s: the sorted keys are not a permutation of the input", s->pool.algo->name);
    return -1;
  }
  return 0;
}

void app_qs_destroy(app_qs *s) {
  if (s == NULL) return;
  app_pool_destroy(&s->pool);
  free(s->keys);
  s->keys = NULL;
}
