/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lu.c — blocked LU factorisation with barriers between the steps.
 *
 * Contract
 *   Source:   the SPLASH-2 LU kernel (Woo et al. 1995) that Nikolopoulos &
 *             Papatheodorou 1999 (paper 003) §6, Figure 9 run with their
 *             barriers: dense, no pivoting, B x B blocks owned by the
 *             threads in a 2-D scatter; for each step k: the owner of the
 *             diagonal block factors it; barrier; the owners of the
 *             perimeter blocks of row k and column k divide them by it;
 *             barrier; the owners of the interior blocks subtract the
 *             products of their row and column perimeter blocks. Two
 *             barriers a step, as SPLASH-2 LU: the next diagonal block's
 *             interior update is made by its own owner, so no third one is
 *             needed.
 *   Sync:     only the barrier (any registered one, any discipline it
 *             accepts); the load is uneven (owners of the trailing blocks
 *             work longer), the imbalance 003 §6 points at.
 *   Memory:   two n x n matrices of doubles (the factors and the input).
 *   Validation: app_lu_check multiplies the factors back (O(n^3)).
 *   Progress: blocking (barriers).
 *   Signal safety: none; process-shared: no (a private barrier).
 *   Limits:   n a multiple of B; threads <= APP_LU_MAX_THREADS.
 */
#include "lu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncq/barrier.h"
#include "syncq/platform.h"
#include "../prng.h"

int app_lu_init(app_lu *s, const syncq_algo *barrier, int wait, int n, int bs, unsigned threads, uint64_t seed) {
  if (s == NULL || barrier == NULL || barrier->family != SYNCQ_FAMILY_BARRIER || n <= 0 || bs <= 0 || n % bs != 0 ||
      threads == 0 || threads > APP_LU_MAX_THREADS)
    return SYNCQ_EINVAL;
  memset(s, 0, sizeof *s);
  s->n = n;
  s->bs = bs;
  s->nb = n / bs;
  s->threads = threads;
  s->barrier = barrier;
  for (int r = 1; r * r <= (int)threads; r++)
    if ((int)threads % r == 0) s->pr = r;
  s->pc = (int)threads / s->pr;
  size_t cells = (size_t)n * (size_t)n;
  s->a = malloc(cells * sizeof *s->a);
  s->orig = malloc(cells * sizeof *s->orig);
  const syncq_barrier_ops *ops = barrier->ops;
  s->bar = syncq_alloc_aligned(ops->size, ops->align);
  if (s->a == NULL || s->orig == NULL || s->bar == NULL) {
    free(s->a);
    free(s->orig);
    free(s->bar);
    s->a = s->orig = NULL;
    s->bar = NULL;
    return SYNCQ_ENOMEM;
  }
  syncq_barrier_config cfg = {threads, wait, false};
  int st = ops->init(s->bar, &cfg);
  if (st != SYNCQ_OK) {
    free(s->a);
    free(s->orig);
    free(s->bar);
    s->a = s->orig = NULL;
    s->bar = NULL;
    return st;
  }
  /* uniform [0, 1) entries, n added on the diagonal: diagonally dominant,
   * so the factorisation needs no pivoting (as SPLASH-2 LU's input) */
  uint64_t x = seed;
  for (size_t i = 0; i < cells; i++) {
    s->orig[i] = lab_prng_unit(&x);
  }
  for (int i = 0; i < n; i++) s->orig[(size_t)i * (size_t)n + (size_t)i] += n;
  memcpy(s->a, s->orig, cells * sizeof *s->a);
  atomic_init(&s->errors, 0);
  atomic_init(&s->episodes, 0);
  return SYNCQ_OK;
}

static inline int lu_owner(const app_lu *s, int I, int J) { return (I % s->pr) * s->pc + (J % s->pc); }
static inline double *lu_block(const app_lu *s, int I, int J) {
  return s->a + (size_t)I * (size_t)s->bs * (size_t)s->n + (size_t)J * (size_t)s->bs;
}

/* In-place LU of the diagonal block (unit L). */
static void lu_factor(const app_lu *s, double *d) {
  int b = s->bs, n = s->n;
  for (int k = 0; k < b; k++)
    for (int i = k + 1; i < b; i++) {
      double l = d[i * n + k] /= d[k * n + k];
      for (int j = k + 1; j < b; j++) d[i * n + j] -= l * d[k * n + j];
    }
}

/* Row perimeter block: A_kJ = L_kk^-1 A_kJ. */
static void lu_row(const app_lu *s, const double *d, double *x) {
  int b = s->bs, n = s->n;
  for (int k = 0; k < b; k++)
    for (int i = k + 1; i < b; i++) {
      double l = d[i * n + k];
      for (int j = 0; j < b; j++) x[i * n + j] -= l * x[k * n + j];
    }
}

/* Column perimeter block: A_Ik = A_Ik U_kk^-1. */
static void lu_col(const app_lu *s, const double *d, double *x) {
  int b = s->bs, n = s->n;
  for (int i = 0; i < b; i++)
    for (int k = 0; k < b; k++) {
      double v = x[i * n + k] /= d[k * n + k];
      for (int j = k + 1; j < b; j++) x[i * n + j] -= v * d[k * n + j];
    }
}

/* Interior block: A_IJ -= A_Ik A_kJ. */
static void lu_interior(const app_lu *s, const double *l, const double *u, double *x) {
  int b = s->bs, n = s->n;
  for (int i = 0; i < b; i++)
    for (int k = 0; k < b; k++) {
      double v = l[i * n + k];
      for (int j = 0; j < b; j++) x[i * n + j] -= v * u[k * n + j];
    }
}

static void lu_barrier(app_lu *s, int id) {
  if (((const syncq_barrier_ops *)s->barrier->ops)->wait(s->bar, (unsigned)id) == SYNCQ_OK)
    atomic_fetch_add_explicit(&s->episodes, 1, memory_order_relaxed); /* relaxed: read after the team is joined */
  else atomic_fetch_add(&s->errors, 1);
}

void app_lu_worker(app_lu *s, int id) {
  int nb = s->nb;
  for (int k = 0; k < nb; k++) {
    double *d = lu_block(s, k, k);
    if (lu_owner(s, k, k) == id) lu_factor(s, d);
    lu_barrier(s, id);
    for (int J = k + 1; J < nb; J++)
      if (lu_owner(s, k, J) == id) lu_row(s, d, lu_block(s, k, J));
    for (int I = k + 1; I < nb; I++)
      if (lu_owner(s, I, k) == id) lu_col(s, d, lu_block(s, I, k));
    lu_barrier(s, id);
    for (int I = k + 1; I < nb; I++)
      for (int J = k + 1; J < nb; J++)
        if (lu_owner(s, I, J) == id) lu_interior(s, lu_block(s, I, k), lu_block(s, k, J), lu_block(s, I, J));
  }
  lu_barrier(s, id); /* the factors are complete when every thread is here */
}

int app_lu_barriers(const app_lu *s) { return 2 * s->nb + 1; }

int app_lu_check(const app_lu *s, char *why, size_t len) {
  int errors = atomic_load(&((app_lu *)s)->errors);
  uint64_t episodes = atomic_load(&((app_lu *)s)->episodes);
  if (errors != 0 || episodes != (uint64_t)app_lu_barriers(s) * s->threads) {
    snprintf(why, len, "%s: %d failed barrier waits, %llu of %llu episodes", s->barrier->name, errors,
             (unsigned long long)episodes, (unsigned long long)app_lu_barriers(s) * s->threads);
    return -1;
  }
  int n = s->n;
  double maxa = 0, maxerr = 0;
  for (size_t i = 0; i < (size_t)n * (size_t)n; i++) maxa = fmax(maxa, fabs(s->orig[i]));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      /* (L U)_ij = sum_{k <= min(i, j)} L_ik U_kj, with L_ii = 1 */
      int kmax = i < j ? i : j;
      double v = 0;
      for (int k = 0; k <= kmax; k++) {
        double l = k == i ? 1.0 : s->a[(size_t)i * (size_t)n + (size_t)k];
        v += l * s->a[(size_t)k * (size_t)n + (size_t)j];
      }
      maxerr = fmax(maxerr, fabs(v - s->orig[(size_t)i * (size_t)n + (size_t)j]));
    }
  double rel = maxerr / ((double)n * maxa);
  if (!(rel <= APP_LU_TOLERANCE)) {
    snprintf(why, len, "%s: |L*U - A| / (n max|A|) = %.3g above %.0e", s->barrier->name, rel, APP_LU_TOLERANCE);
    return -1;
  }
  return 0;
}

void app_lu_destroy(app_lu *s) {
  if (s == NULL) return;
  if (s->bar) {
    ((const syncq_barrier_ops *)s->barrier->ops)->destroy(s->bar);
    free(s->bar);
  }
  free(s->a);
  free(s->orig);
  s->a = s->orig = NULL;
  s->bar = NULL;
}
