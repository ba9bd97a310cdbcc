/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_random.h — xorshift64* (Vigna, "An experimental exploration of
 * Marsaglia's xorshift generators, scrambled", 2016; shifts 12, 25, 27):
 * a test thread's own random numbers for operation mixes and yields,
 * reproducible from its seed (which must not be 0).
 */
#ifndef SYNCQ_TEST_RANDOM_H
#define SYNCQ_TEST_RANDOM_H

#include <stdint.h>

static inline uint64_t test_random(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

#endif
