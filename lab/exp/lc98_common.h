/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lc98_common.h — what lc98-logp (lc98_logp.c) and lc98-stress
 * (lc98_stress.c) share: units, the poll budget, the handler ids, the
 * claims --algos selected, and the experiments' fixed algorithm list.
 * Their child processes are a lab_proc_team (lab/proc_team.h).
 */
#ifndef SYNCQ_LAB_LC98_COMMON_H
#define SYNCQ_LAB_LC98_COMMON_H

#include "../lab.h"
#include "syncq/am.h"

#define NS_PER_US 1e3
#define NS_PER_MS 1e6
#define BYTES_PER_MB 1e6
#define LC98_POLL_BUDGET 64u
#define LC98_STALL_NS 30000000000ull /* a sample with no progress for 30 s fails */
#define LC98_SEG_TAG "lc98"          /* the shared segments' names: syncq-lc98-<pid>-... */

enum { H_PING = 1, H_PONG = 2, H_SINK = 3, H_SINK_LAST = 4, H_BULK = 5, H_INT = 6 };

/* The baselines and floors both lc98 experiments know (lc98_logp.c). */
extern const char *const lc98_fixed[];

/* The claims --algos kept, in registry order; returns how many. */
static inline int lc98_claims_selected(lab_ctx *ctx, int *out) {
  int n = 0;
  for (int c = 0; c < SYNCQ_AM_CLAIM_COUNT; c++)
    if (lab_selected(ctx, syncq_am_claim_name(c))) out[n++] = c;
  return n;
}

#endif /* SYNCQ_LAB_LC98_COMMON_H */
