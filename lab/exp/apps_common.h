/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * apps_common.h — measuring an application (lab/apps/) at a
 * multiprogramming level, for ms98_quicksort.c, ms98_tsp.c and
 * np99_apps.c: level 1 is a dedicated machine (one team of p threads,
 * lab_team_run); levels 2 and 3 go through mp_common.h (001's
 * pseudo-scheduler or real oversubscription by processes). The
 * application is an mp_bench: setup() builds one copy (its input and its
 * structures), body() is one thread's share, finish() checks the output
 * and frees the copy; a wrong output fails the point (lab_fail), so no
 * time of a wrong run is ever plotted.
 */
#ifndef SYNCQ_LAB_APPS_COMMON_H
#define SYNCQ_LAB_APPS_COMMON_H

#include <string.h>

#include "../lab.h"
#include "mp_common.h"

#define APPS_NS_PER_MS 1e6
#define APPS_WHY 256

/* One repetition: the time (ms) of the application, or -1 after lab_fail. */
static inline int apps_measure(lab_ctx *ctx, const mp_bench *b, const void *arg, int threads, int level, mp_mode mode,
                               int policy, int napps, lab_sample *out) {
  uint64_t ns = 0;
  if (level <= 1) {
    char why[APPS_WHY] = "";
    void *state = b->setup(arg, why, sizeof why);
    if (state == NULL) {
      lab_fail(ctx, "%s", why);
      return -1;
    }
    int rc = lab_team_run(ctx, threads, b->body, state, NULL, &ns, &out->stats);
    if (b->finish(state, why, sizeof why) != 0) {
      if (rc == 0) lab_fail(ctx, "wrong output: %s", why);
      return -1;
    }
    if (rc != 0) return -1;
  } else {
    syncq_mp_stats sched;
    if (mp_measure(ctx, b, arg, threads, level, mode, policy, napps, &ns, &out->stats, &sched) != 0) return -1;
    if (mode == MP_MODE_PSEUDO) mp_sample_exposure(out, &sched); /* apps_group's counts */
  }
  out->value = (double)ns / APPS_NS_PER_MS;
  out->ops = 0; /* an application's time, not per-operation counts */
  return 0;
}

/* A group of an application's times, without its variants: metric "time"
 * (ms), params key=value (the structures it runs over), threads, level
 * and mode (level 1: "dedicated"; levels 2 and 3: mp_group_mode); under
 * the pseudo-scheduler also its counts of preemptions
 * (mp_group_exposure), which claims about a preempted lock holder read. */
static inline void apps_group(lab_group *g, const char *key, const char *value, int threads, int level, mp_mode mode,
                              lab_sample_fn sample, const char *normalize_to) {
  memset(g, 0, sizeof *g);
  lab_group_param_str(g, key, value);
  lab_group_param(g, "threads", threads);
  lab_group_param(g, "level", level);
  if (level == 1) lab_group_param_str(g, "mode", "dedicated");
  else mp_group_mode(g, mode);
  if (level > 1 && mode == MP_MODE_PSEUDO) mp_group_exposure(g);
  g->metric = "time";
  g->unit = "ms";
  g->sample = sample;
  g->normalize_to = normalize_to;
}

/* Thread counts for the dedicated panel: the sweep up to the processing
 * units (multiprogramming comes from the levels). */
static inline int apps_threads_upto(lab_ctx *ctx, int *out, int cap, int most) {
  int listed[LAB_MAX_THREADS_LIST], n = 0;
  int nl = lab_threads(ctx, listed, LAB_MAX_THREADS_LIST), pus = lab_pus(ctx);
  for (int i = 0; i < nl && n < cap; i++)
    if (listed[i] <= pus && listed[i] <= most) out[n++] = listed[i];
  if (n == 0) out[n++] = 1;
  return n;
}

/* Up to the PUs, and few enough for three copies at once (level 3). */
static inline int apps_threads(lab_ctx *ctx, int *out, int cap) {
  return apps_threads_upto(ctx, out, cap, MP_MAX_THREADS / 3);
}

#endif
