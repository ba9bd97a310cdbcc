/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * np99_common.h — the micro-benchmark loop of 003 Figure 2, shared by the
 * np99 experiments (np99.c, np99_locks.c, np99_barrier.c):
 *
 *   barrier(); for (i = 0; i < ITER/p; i++) { work(); synchronize(); } barrier();
 *
 * work() is syncq_delay_ns (calibrated busy work on thread-local data) for
 * a uniformly random time in mean +-20% (the paper's artificial load
 * imbalance), drawn from a per-thread generator.
 */
#ifndef SYNCQ_LAB_NP99_COMMON_H
#define SYNCQ_LAB_NP99_COMMON_H

#include <stdint.h>
#include "../prng.h"

#define NP99_ITER_FULL 1000000ull /* Figure 2: a million iterations in all */
#define NP99_IMBALANCE_PCT 20     /* +-20% around the mean work time */
#define NP99_WORK_EMPTY_NS 0ull   /* empty work loops (Figure 3, left) */
#define NP99_WORK_5US_NS 5000ull  /* 5 us work loops (Figures 3 right, 5, 6) */

/* Work time uniform in mean +-20%. */
static inline uint64_t np99_work_time(uint64_t mean, uint64_t *seed) {
  return lab_prng_around(mean, NP99_IMBALANCE_PCT, seed);
}

#endif
