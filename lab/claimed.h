/* SPDX-License-Identifier: BSD-2-Clause */
/* syncq-lab: which points an experiment's verdicts read.
 *
 * A claim's rule (docs/results-format.md, "Claims") reads a few points: its
 * algorithms (num/den, or algo and, for peer_ratio rules, every peer) at
 * the params its `where` fixes and at the `threads` its `at` selects. The
 * runner gives the variants of those points more repetitions than the
 * points that are only plotted (lab.h, LAB_QUICK_CLAIM_BUDGET_MS), so the
 * verdicts rest on medians of many samples within the suite's time budget.
 *
 * "at": "max_threads" is the largest `threads` of the groups that run one
 * of the rule's algorithms under its `where`; it is known after the
 * runner's planning pass, which shows every group to lab_claimed_plan();
 * "at": {K: "max"} likewise the largest K of those groups.
 * Metrics are not looked at: a group measures all its metrics at once.
 */
#ifndef SYNCQ_LAB_CLAIMED_H
#define SYNCQ_LAB_CLAIMED_H

#include <stdbool.h>

#include "lab.h"

typedef struct lab_claimed lab_claimed;

/* The rules of `e`'s claims, parsed (a rule that does not parse reads no
 * point: tests/lab checks that every rule parses), for a run planned on
 * `pus` processing units: a needs_pus rule reads nothing below its count and
 * only the points that fit on them above it. NULL when out of memory. */
lab_claimed *lab_claimed_new(const lab_experiment *e, int pus);
void lab_claimed_free(lab_claimed *c);

/* Planning pass: the group runs `algo` (call once per selected variant). */
void lab_claimed_plan(lab_claimed *c, const lab_group *g, const char *algo);

/* Measuring pass: true when a rule reads `algo`'s point in group `g`
 * (`peer`: the algorithm is a peer library's). */
bool lab_claimed_reads(const lab_claimed *c, const lab_group *g, const char *algo, bool peer);

#endif
