/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * np99_barrier.c — np99-barrier: 003 §4.3, Figure 6.
 *
 * The micro-benchmark of Figure 2 (np99_common.h) where synchronize() is a
 * barrier: every barrier in the registry (centralized sense-reversing with
 * CAS or fetch-and-add arrival, MCS tree with fan-in 4 / fan-out 2,
 * dissemination, pthread_barrier). Work loops 5 us +-20%. Every thread
 * runs the same N/p episodes (a barrier needs all of them each time).
 *
 * Panels: (1) wait=default: each barrier's default discipline (busy-wait,
 * as 003 §4.3 measures; the C library's blocking for pthread), threads
 * 1..the processing units; (2) wait=varies: twice as many threads as
 * processing units (oversubscribed), each barrier with each discipline of
 * 003 §3.4 it accepts (yield, immediate blocking, competitive spinning
 * proportional to the threads not yet arrived), as "<barrier>@<discipline>".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../construct.h"
#include "../lab.h"
#include "np99_common.h"
#include "syncq/barrier.h"
#include "syncq/clock.h"
#include "syncq/platform.h"
#include "syncq/wait.h"

#define NS_PER_MS 1e6

typedef struct np99_barrier_point {
  const syncq_algo *algo;
  int threads;
  int wait;
  uint64_t episodes; /* per thread */
  uint64_t work_ns;
} np99_barrier_point;

typedef struct np99_barrier_run {
  const np99_barrier_point *pt;
  const syncq_barrier_ops *ops;
  void *b;
  _Atomic(int) errors;
} np99_barrier_run;

static void barrier_worker(lab_worker *w) {
  np99_barrier_run *run = w->arg;
  uint64_t seed = lab_prng_seed(w->id);
  for (uint64_t i = 0; i < run->pt->episodes; i++) {
    syncq_delay_ns(np99_work_time(run->pt->work_ns, &seed));
    if (run->ops->wait(run->b, (unsigned)w->id) != SYNCQ_OK) atomic_fetch_add(&run->errors, 1);
  }
}

static int barrier_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const np99_barrier_point *pt = arg;
  const syncq_barrier_ops *ops = pt->algo->ops;
  syncq_barrier_config cfg = {(unsigned)pt->threads, pt->wait, false};
  void *b;
  int st = lab_object_new(pt->algo, &(lab_object_cfg){.barrier = &cfg}, &b);
  if (st != SYNCQ_OK) {
    lab_fail(ctx, "cannot create a %s barrier (%s): %s", pt->algo->name, syncq_wait_name(pt->wait), syncq_strerror(st));
    return -1;
  }
  np99_barrier_run run = {pt, ops, b, 0};
  uint64_t ns;
  int rc = lab_team_run(ctx, pt->threads, barrier_worker, &run, NULL, &ns, &out->stats);
  lab_object_free(pt->algo, b);
  if (rc != 0) return -1;
  if (atomic_load(&run.errors) != 0) {
    lab_fail(ctx, "%s: barrier wait failed", pt->algo->name);
    return -1;
  }
  out->value = (double)ns / NS_PER_MS;
  out->ops = pt->episodes * (uint64_t)pt->threads; /* arrivals */
  return 0;
}

/* True when the barrier accepts the discipline. */
static bool accepts(const syncq_algo *a, int wait) {
  syncq_barrier_config cfg = {2, wait, false};
  return lab_object_can_make(a, &(lab_object_cfg){.barrier = &cfg}, NULL);
}

static int np99_barrier_run_exp(lab_ctx *ctx) {
  const syncq_algo *algos[LAB_MAX_VARIANTS];
  int nalgos = syncq_registry_list(SYNCQ_FAMILY_BARRIER, algos, LAB_MAX_VARIANTS);
  if (nalgos > LAB_MAX_VARIANTS) nalgos = LAB_MAX_VARIANTS;
  int threads[LAB_MAX_THREADS_LIST];
  int nt = lab_threads(ctx, threads, LAB_MAX_THREADS_LIST);
  int pus = lab_pus(ctx);
  uint64_t iters = lab_by_size(ctx, 2000, 20000, 200000, NP99_ITER_FULL);
  uint64_t iters_mp = lab_by_size(ctx, 400, 4000, 40000, 200000);

  lab_begin(ctx,
            "Each of p threads runs N/p iterations of work(); barrier() (003 Figure 2, §4.3). "
            "work() is a calibrated busy loop of mean %llu ns +-%d%%. Panel wait=default: N=%llu, "
            "each barrier's default discipline (busy-wait; pthread blocks), threads up to the "
            "processing units. Panel wait=varies: N=%llu, %d threads (2x the processing "
            "units), every barrier with every discipline it accepts of yield, block and "
            "competitive (variant <barrier>@<discipline>). Time is the whole "
            "loop; per-op counters are per arrival.",
            (unsigned long long)NP99_WORK_5US_NS, NP99_IMBALANCE_PCT, (unsigned long long)iters,
            (unsigned long long)iters_mp, 2 * pus);
  lab_note(ctx, "competitive spin limit (one measured context switch): %llu ns per thread not yet arrived",
           (unsigned long long)syncq_wait_spin_limit_ns());

  np99_barrier_point pts[LAB_MAX_VARIANTS];
  for (int t = 0; t < nt; t++) {
    if (threads[t] > pus) continue;
    lab_group g;
    memset(&g, 0, sizeof g);
    lab_group_param(&g, "threads", threads[t]);
    lab_group_param(&g, "work_ns", (double)NP99_WORK_5US_NS);
    lab_group_param_str(&g, "wait", "default");
    g.metric = "time";
    g.unit = "ms";
    g.sample = barrier_sample;
    g.normalize_to = "pthread-barrier";
    for (int a = 0; a < nalgos; a++) {
      pts[a] =
        (np99_barrier_point){algos[a], threads[t], SYNCQ_WAIT_DEFAULT, iters / (uint64_t)threads[t], NP99_WORK_5US_NS};
      g.variants[g.nvariants++] = (lab_variant){algos[a]->name, &pts[a]};
    }
    if (lab_run_group(ctx, &g) != 0) return -1;
  }
  /* one group, so the disciplines are measured interleaved: variant
   * "<barrier>@<discipline>" */
  const int disciplines[] = {SYNCQ_WAIT_YIELD, SYNCQ_WAIT_BLOCK, SYNCQ_WAIT_COMPETITIVE};
  static char names[LAB_MAX_VARIANTS][64];
  int mp = 2 * pus;
  lab_group g;
  memset(&g, 0, sizeof g);
  lab_group_param(&g, "threads", mp);
  lab_group_param(&g, "work_ns", (double)NP99_WORK_5US_NS);
  lab_group_param_str(&g, "wait", "varies");
  g.metric = "time";
  g.unit = "ms";
  g.sample = barrier_sample;
  for (int a = 0; a < nalgos; a++)
    for (size_t d = 0; d < sizeof disciplines / sizeof disciplines[0]; d++) {
      if (g.nvariants >= LAB_MAX_VARIANTS || !accepts(algos[a], disciplines[d])) continue;
      int v = g.nvariants++;
      snprintf(names[v], sizeof names[v], "%s@%s", algos[a]->name, syncq_wait_name(disciplines[d]));
      pts[v] = (np99_barrier_point){algos[a], mp, disciplines[d], iters_mp / (uint64_t)mp, NP99_WORK_5US_NS};
      g.variants[v] = (lab_variant){names[v], &pts[v]};
    }
  if (g.nvariants > 0 && lab_run_group(ctx, &g) != 0) return -1;
  return 0;
}

/* clang-format off */
static const lab_claim np99_barrier_claims[] = {
  {"The centralized fetch-and-add barrier beats the MCS tree barrier (003 §4.3, Figure 6).",
   "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"central-faa\",\"den\":\"mcs-tree\","
   "\"where\":{\"work_ns\":5000,\"wait\":\"default\"},\"at\":\"max_threads\",\"bound\":1.0,\"min_threads\":2}"},
  {"The LL-SC (CAS) centralized barrier performs poorly next to the fetch-and-add one "
   "(003 §4.3, Figure 6).",
   "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"central-faa\",\"den\":\"central-cas\","
   "\"where\":{\"work_ns\":5000,\"wait\":\"default\"},\"at\":\"max_threads\",\"bound\":1.0,\"min_threads\":2}"},
  {"Under multiprogramming, immediate blocking is the worst discipline and competitive "
   "spinning helps slightly (003 §5, Figure 8), here for the centralized FAA barrier.",
   "{\"op\":\"all\",\"rules\":["
   "{\"op\":\"ratio_above\",\"metric\":\"time\",\"num\":\"central-faa@block\",\"den\":\"central-faa@yield\","
   "\"where\":{\"work_ns\":5000,\"wait\":\"varies\"},\"at\":\"max_threads\",\"bound\":1.0},"
   "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"central-faa@competitive\",\"den\":\"central-faa@block\","
   "\"where\":{\"work_ns\":5000,\"wait\":\"varies\"},\"at\":\"max_threads\",\"bound\":1.0}]}"},
};
/* clang-format on */

const lab_experiment lab_exp_np99_barrier = {
  .name = "np99-barrier",
  .paper = "003 Nikolopoulos & Papatheodorou 1999, §4.3",
  .figure = "Figure 6",
  .title = "Barriers: centralized (CAS, fetch-and-add), MCS tree, dissemination, pthread",
  .x = "threads",
  .log_y = true,
  .claims = np99_barrier_claims,
  .nclaims = sizeof np99_barrier_claims / sizeof np99_barrier_claims[0],
  .uses_registry = true,
  .family = SYNCQ_FAMILY_BARRIER,
  .run = np99_barrier_run_exp,
};
