/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * prng.h — syncq-lab's one pseudo-random generator, its seeding, and the
 * split of N operations over p workers. Header-only (static inline), so
 * the MPI helpers (lab/apps/lc98/) use it without linking the lab.
 *
 * Contract:
 *   source      xorshift64* (S. Vigna, "An experimental exploration of
 *               Marsaglia's xorshift generators, scrambled", ACM TOMS 42(2),
 *               2016: shifts 12, 25, 27 and multiplier 2685821657736338717);
 *               splitmix64's finaliser (Steele, Lea & Flood, "Fast
 *               splittable pseudorandom number generators", OOPSLA 2014)
 *               as the stateless hash that seeds it and that the
 *               applications use to derive data from an index.
 *   progress    wait-free; no atomics; per-worker state (never shared).
 *   memory      one uint64_t of state per worker.
 *   limits      not cryptographic; the state must not be 0 (lab_prng_seed
 *               never returns 0).
 *   signal-safe yes (pure arithmetic).
 */
#ifndef SYNCQ_LAB_PRNG_H
#define SYNCQ_LAB_PRNG_H

#include <stdint.h>

/* xorshift64*'s constants (Vigna 2016, Figure 10: A_1(12,25,27) * M_32). */
#define LAB_XORSHIFT_A 12
#define LAB_XORSHIFT_B 25
#define LAB_XORSHIFT_C 27
#define LAB_XORSHIFT_MULT 2685821657736338717ull
/* splitmix64's increment (the golden ratio in 64 bits) and finaliser. */
#define LAB_SPLITMIX_GAMMA 0x9e3779b97f4a7c15ull
#define LAB_SPLITMIX_M1 0xbf58476d1ce4e5b9ull
#define LAB_SPLITMIX_M2 0x94d049bb133111ebull
/* A double in [0, 1) takes the top 53 bits. */
#define LAB_PRNG_DOUBLE_SHIFT 11
#define LAB_PRNG_TWO_POW_53 9007199254740992.0

/* The next value of the xorshift64* generator whose state is *s. */
static inline uint64_t lab_prng_next(uint64_t *s) {
  *s ^= *s >> LAB_XORSHIFT_A;
  *s ^= *s << LAB_XORSHIFT_B;
  *s ^= *s >> LAB_XORSHIFT_C;
  return *s * LAB_XORSHIFT_MULT;
}

/* A uniform double in [0, 1) from the generator. */
static inline double lab_prng_unit(uint64_t *s) {
  return (double)(lab_prng_next(s) >> LAB_PRNG_DOUBLE_SHIFT) / LAB_PRNG_TWO_POW_53;
}

/* A value uniform in mean +- pct% (integers, both ends included): the
 * papers' jittered work and delay times. 0 when mean is 0. */
static inline uint64_t lab_prng_around(uint64_t mean, unsigned pct, uint64_t *s) {
  if (mean == 0) return 0;
  uint64_t span = mean * 2 * pct / 100;
  return mean - span / 2 + lab_prng_next(s) % (span + 1);
}

/* splitmix64's finaliser: a stateless 64-bit hash with full avalanche. */
static inline uint64_t lab_mix64(uint64_t x) {
  x ^= x >> 30;
  x *= LAB_SPLITMIX_M1;
  x ^= x >> 27;
  x *= LAB_SPLITMIX_M2;
  return x ^ (x >> 31);
}

/* Worker id's seed: distinct per worker (the golden-ratio step of
 * splitmix64), never 0 for ids >= 0 below 2^32. */
static inline uint64_t lab_prng_seed(int id) { return LAB_SPLITMIX_GAMMA * (uint64_t)(id + 1); }

/* Worker id's share (0 <= id < p) of n operations split over p workers:
 * n / p each, the first n % p workers one more, so the shares sum to n.
 * 0 when p < 1 or id is out of range. */
static inline uint64_t lab_share(uint64_t n, int p, int id) {
  if (p < 1 || id < 0 || id >= p) return 0;
  return n / (uint64_t)p + ((uint64_t)id < n % (uint64_t)p ? 1u : 0u);
}

#endif /* SYNCQ_LAB_PRNG_H */
