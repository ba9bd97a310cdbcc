/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * median.c — the lab's one median (lab.h: lab_median), used by the runner's
 * points and by experiments that take medians of their own iterations.
 */
#include <math.h>
#include <stdlib.h>

#include "lab.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double lab_median(double *v, size_t n) {
  if (v == NULL || n == 0) return NAN;
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
