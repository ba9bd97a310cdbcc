/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lu.h — the SPLASH-2 LU kernel (as 003 §6 ran it): blocked LU
 * factorisation of a dense matrix without pivoting, blocks scattered over
 * the threads in a 2-D grid, with a barrier from the registry between the
 * steps.
 *
 * Use: app_lu_init (a seeded diagonally dominant matrix, kept for the
 * check), every thread runs app_lu_worker(s, id), then app_lu_check
 * (L*U against the input), then app_lu_destroy.
 */
#ifndef SYNCQ_LAB_APPS_LU_H
#define SYNCQ_LAB_APPS_LU_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "syncq/registry.h"

#define APP_LU_MAX_THREADS 64
/* |L*U - A| / (n * max|A|) above this is a failed factorisation (double
 * precision leaves ~1e-16 per operation; n operations per entry). */
#define APP_LU_TOLERANCE 1e-12

typedef struct app_lu {
  double *a;     /* n x n, row-major: factorised in place (unit L below, U on and above the diagonal) */
  double *orig;  /* the input */
  int n, bs, nb; /* order, block size, blocks per side */
  int pr, pc;    /* thread grid: block (I, J) belongs to (I mod pr) * pc + (J mod pc) */
  unsigned threads;
  const syncq_algo *barrier;
  void *bar;
  _Atomic(int) errors;
  _Atomic(uint64_t) episodes; /* barrier waits that returned SYNCQ_OK */
} app_lu;

/* SYNCQ_OK; SYNCQ_EINVAL (NULL, not a barrier, n not a multiple of bs,
 * threads 0 or above APP_LU_MAX_THREADS); SYNCQ_ENOMEM; or the barrier's
 * init status for that waiting discipline (SYNCQ_ENOTSUP). */
int app_lu_init(app_lu *s, const syncq_algo *barrier, int wait, int n, int bs, unsigned threads, uint64_t seed);
void app_lu_worker(app_lu *s, int id);
/* 0 when every barrier wait succeeded and L*U equals the input within
 * APP_LU_TOLERANCE; else -1 with the reason. */
int app_lu_check(const app_lu *s, char *why, size_t len);
void app_lu_destroy(app_lu *s);
/* Barrier episodes per thread in one factorisation. */
int app_lu_barriers(const app_lu *s);

#endif
