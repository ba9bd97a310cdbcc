/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_mpmc.h — the bookkeeping of a many-producer, many-consumer run over
 * a FIFO queue: producer p enqueues the values p * per_producer + 0, 1,
 * ..., per_producer - 1 in that order; each consumer runs
 * test_mpmc_consume until every value has been taken. A value out of
 * range, one that comes before an earlier value of the same producer in
 * one consumer's takes (FIFO per producer), or a dequeue status other
 * than OK or EMPTY marks the run bad; after the run test_mpmc_check
 * asserts that nothing was bad and that every value was taken exactly
 * once (none lost, none twice).
 *
 * Include after cmocka.h (it asserts with cmocka's macros).
 */
#ifndef SYNCQ_TEST_MPMC_H
#define SYNCQ_TEST_MPMC_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "syncq/platform.h"
#include "syncq/status.h"

typedef struct test_mpmc {
  uint64_t producers, per_producer;
  _Atomic(uint64_t) taken;
  _Atomic(int) bad;
  uint8_t *seen; /* producers * per_producer counts */
} test_mpmc;

static inline void test_mpmc_init(test_mpmc *m, uint64_t producers, uint64_t per_producer) {
  m->producers = producers;
  m->per_producer = per_producer;
  atomic_init(&m->taken, 0);
  atomic_init(&m->bad, 0);
  m->seen = calloc((size_t)(producers * per_producer), 1);
  assert_non_null(m->seen);
}

/* One consumer: dequeue(q, &item) until every value has been taken,
 * decoding items with value_of; it yields every yield_every misses. */
static inline void test_mpmc_consume(test_mpmc *m, int (*dequeue)(void *q, void **item), void *q,
                                     uint64_t (*value_of)(void *item), unsigned yield_every) {
  uint64_t *last = malloc((size_t)m->producers * sizeof *last); /* this consumer's last value of each producer */
  if (last == NULL) {
    atomic_store(&m->bad, 1);
    return;
  }
  for (uint64_t p = 0; p < m->producers; p++) last[p] = UINT64_MAX;
  unsigned misses = 0;
  while (atomic_load(&m->taken) < m->producers * m->per_producer) {
    void *x;
    int st = dequeue(q, &x);
    if (st != SYNCQ_OK) {
      if (st != SYNCQ_EMPTY) atomic_store(&m->bad, 1);
      if (++misses % yield_every == 0) syncq_yield();
      continue;
    }
    atomic_fetch_add(&m->taken, 1);
    const uint64_t v = value_of(x), prod = v / m->per_producer, seq = v % m->per_producer;
    if (prod >= m->producers) {
      atomic_store(&m->bad, 1);
      continue;
    }
    if (last[prod] != UINT64_MAX && seq <= last[prod]) atomic_store(&m->bad, 1);
    last[prod] = seq;
    m->seen[v]++; /* each value is taken once, by one consumer: no race */
  }
  free(last);
}

/* After every thread joined: nothing bad, every value taken once. `what`
 * names the run in a failure. Frees the counts. */
static inline void test_mpmc_check(test_mpmc *m, const char *what) {
  assert_int_equal(atomic_load(&m->bad), 0);
  assert_int_equal(atomic_load(&m->taken), m->producers * m->per_producer);
  for (uint64_t v = 0; v < m->producers * m->per_producer; v++)
    if (m->seen[v] != 1) fail_msg("%s: item %llu taken %d times", what, (unsigned long long)v, m->seen[v]);
  free(m->seen);
  m->seen = NULL;
}

#endif /* SYNCQ_TEST_MPMC_H */
