/* SPDX-License-Identifier: BSD-2-Clause */
/* syncq-lab: the suite's time budget over the planned points (budget.h). */
#include "budget.h"

lab_budget lab_budget_fit(long points, long claimed, int64_t point_ns, int64_t claim_ns, int64_t suite_ns,
                          int launches) {
  lab_budget b = {point_ns, claim_ns, 0, 0, 1.0};
  if (points < 0) points = 0;
  if (claimed < 0) claimed = 0;
  if (point_ns < 0) b.point_ns = point_ns = 0;
  if (claim_ns < 0) b.claim_ns = claim_ns = 0;
  b.wanted_ns = (int64_t)points * point_ns + (int64_t)claimed * claim_ns;
  if (suite_ns <= 0) return b;
  b.launch_ns = suite_ns / (launches > 1 ? launches : 1);
  if (b.wanted_ns <= b.launch_ns) return b;
  b.scale = (double)b.launch_ns / (double)b.wanted_ns;
  b.point_ns = (int64_t)((double)point_ns * b.scale);
  b.claim_ns = (int64_t)((double)claim_ns * b.scale);
  return b;
}
