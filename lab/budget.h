/* SPDX-License-Identifier: BSD-2-Clause */
/* syncq-lab: the suite's time budget, shared among the points it plans.
 *
 * A size gives every variant-point a budget for repetitions past --reps
 * (lab.h, LAB_QUICK_POINT_BUDGET_MS) and every variant-point a claim reads
 * a further one (LAB_QUICK_CLAIM_BUDGET_MS). A larger machine plans more
 * points (its thread list is longer: lab_threads_plan), so with fixed
 * per-point budgets the suite's length would grow with the machine. The
 * size's suite budget caps the sum instead: when the planned points' budgets
 * (points x point budget + claimed points x claim budget, per launch) exceed
 * the suite budget's share of one launch, both budgets shrink by the same
 * factor, so time, not the count of points, decides the suite's length.
 */
#ifndef SYNCQ_LAB_BUDGET_H
#define SYNCQ_LAB_BUDGET_H

#include <stdint.h>

typedef struct lab_budget {
  int64_t point_ns;  /* per variant-point, after fitting */
  int64_t claim_ns;  /* per claimed variant-point, after fitting */
  int64_t wanted_ns; /* the sum of the size's budgets over the plan, one launch */
  int64_t launch_ns; /* the suite budget's share of one launch (0: no suite budget) */
  double scale;      /* the factor applied (1: the size's budgets fit) */
} lab_budget;

/* Fit the size's per-variant budgets (point_ns, claim_ns) to a plan of
 * `points` variant-points, `claimed` of them read by claims, within
 * suite_ns over `launches` launches (suite_ns <= 0: no cap). */
lab_budget lab_budget_fit(long points, long claimed, int64_t point_ns, int64_t claim_ns, int64_t suite_ns,
                          int launches);

#endif
