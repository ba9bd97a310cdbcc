/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * np99.c — experiments of Nikolopoulos & Papatheodorou 1999 (paper 003):
 * the synchronization micro-benchmark of its Figure 2.
 *
 *   barrier(); for (i = 0; i < ITER/p; i++) { work(); synchronize(); } barrier();
 *
 * work() is the calibrated busy loop on thread-local data (syncq_delay_ns)
 * for a uniformly random time in mean +-20% (the paper's artificial load
 * imbalance); synchronize() is the operation under study.
 *
 * np99-counter (§4.1, Figure 3): synchronize() increments a shared counter,
 * by every counter algorithm in the registry: fetch-and-add (the paper's
 * at-memory fetchop), a CAS loop (its LL-SC fetch-and-increment), and
 * lock-based ones. Two panels as in Figure 3: empty work loops, and 5 us.
 * After each run the counter must equal ITER: a lost increment aborts.
 */
#include <stdlib.h>
#include <string.h>

#include "../construct.h"
#include "../lab.h"
#include "np99_common.h"
#include "syncq/clock.h"
#include "syncq/counter.h"
#include "syncq/platform.h"

#define NS_PER_MS 1e6

typedef struct np99_counter_point {
  const syncq_algo *algo;
  int threads;
  uint64_t iterations;
  uint64_t work_ns;
} np99_counter_point;

typedef struct np99_counter_run {
  const np99_counter_point *pt;
  const syncq_counter_ops *ops;
  void *counter;
} np99_counter_run;

static void counter_worker(lab_worker *w) {
  const np99_counter_run *run = w->arg;
  uint64_t n = lab_share(run->pt->iterations, w->n, w->id);
  uint64_t seed = lab_prng_seed(w->id);
  for (uint64_t i = 0; i < n; i++) {
    syncq_delay_ns(np99_work_time(run->pt->work_ns, &seed));
    run->ops->fetch_add(run->counter, 1, NULL);
  }
}

static int counter_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const np99_counter_point *pt = arg;
  const syncq_counter_ops *ops = pt->algo->ops;
  void *c = lab_object_new_or_fail(ctx, pt->algo, &(lab_object_cfg){.counter_initial = 0});
  if (c == NULL) return -1;
  np99_counter_run run = {pt, ops, c};
  uint64_t ns;
  int rc = lab_team_run(ctx, pt->threads, counter_worker, &run, NULL, &ns, &out->stats);
  int64_t final = -1;
  ops->load(c, &final);
  lab_object_free(pt->algo, c);
  if (rc != 0) return -1;
  if (final != (int64_t)pt->iterations) {
    lab_fail(ctx, "%s counter lost updates: %lld after %llu increments", pt->algo->name, (long long) final,
             (unsigned long long)pt->iterations);
    return -1;
  }
  out->value = (double)ns / NS_PER_MS;
  out->ops = pt->iterations;
  return 0;
}

static int np99_counter_run_exp(lab_ctx *ctx) {
  const syncq_algo *algos[LAB_MAX_VARIANTS];
  int nalgos = syncq_registry_list(SYNCQ_FAMILY_COUNTER, algos, LAB_MAX_VARIANTS);
  if (nalgos > LAB_MAX_VARIANTS) nalgos = LAB_MAX_VARIANTS;
  int threads[LAB_MAX_THREADS_LIST];
  int nt = lab_threads(ctx, threads, LAB_MAX_THREADS_LIST);
  /* --quick's budget: the paper's million iterations cost ~10 ms with
   * empty work for most counters, but seconds for a FIFO lock whose waiter
   * shares the holder's processor (the ticket lock at 3 threads on 2 PUs:
   * a futex sleep per hand-over), and 5 us of work costs 5 s a million:
   * --quick runs 100,000 empty and 25,000 working iterations (the ticket
   * lock's 4-thread sample still takes ~2 s). */
  uint64_t iters_empty = lab_by_size(ctx, 4000, 100000, NP99_ITER_FULL, NP99_ITER_FULL);
  uint64_t iters_work = lab_by_size(ctx, 4000, 25000, NP99_ITER_FULL, NP99_ITER_FULL);
  const uint64_t works[] = {NP99_WORK_EMPTY_NS, NP99_WORK_5US_NS};

  lab_begin(ctx,
            "Each of p threads runs N/p iterations of work(); increment(); between two "
            "barriers (003 Figure 2). work() is a calibrated busy loop on thread-local data "
            "with a uniformly random length of mean +-%d%%; the panels are empty work "
            "(work_ns=0, N=%llu) and 5 us (N=%llu) (Figure 3, left and right). Time is the "
            "whole loop, barrier to barrier. Every counter in the registry runs; after each "
            "run the counter is checked to equal the number of increments.",
            NP99_IMBALANCE_PCT, (unsigned long long)iters_empty, (unsigned long long)iters_work);

  np99_counter_point pts[LAB_MAX_VARIANTS];
  for (size_t w = 0; w < sizeof works / sizeof works[0]; w++) {
    for (int t = 0; t < nt; t++) {
      lab_group g;
      memset(&g, 0, sizeof g);
      lab_group_param(&g, "threads", threads[t]);
      lab_group_param(&g, "work_ns", (double)works[w]);
      g.metric = "time";
      g.unit = "ms";
      g.sample = counter_sample;
      g.normalize_to = "faa"; /* each counter's time as a multiple of fetch-and-add's */
      for (int a = 0; a < nalgos; a++) {
        pts[a] = (np99_counter_point){algos[a], threads[t], works[w] ? iters_work : iters_empty, works[w]};
        g.variants[g.nvariants++] = (lab_variant){algos[a]->name, &pts[a]};
      }
      if (lab_run_group(ctx, &g) != 0) return -1;
    }
  }
  return 0;
}

/* clang-format off */
static const lab_claim np99_counter_claims[] = {
  {"Fetch-and-add counters scale where CAS (LL-SC) loops do not: with empty work loops, "
   "the fetch-and-add counter is faster than the CAS-loop counter once threads contend "
   "(003 §4.1, Figure 3).",
   "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"faa\",\"den\":\"cas\","
   "\"where\":{\"work_ns\":0},\"at\":\"max_threads\",\"bound\":1.0,\"min_threads\":2}"},
};
/* clang-format on */

const lab_experiment lab_exp_np99_counter = {
  .name = "np99-counter",
  .paper = "003 Nikolopoulos & Papatheodorou 1999, §4.1",
  .figure = "Figure 3",
  .title = "Shared counter: fetch-and-add vs CAS loop vs locks",
  .x = "threads",
  .log_y = true,
  .claims = np99_counter_claims,
  .nclaims = sizeof np99_counter_claims / sizeof np99_counter_claims[0],
  .uses_registry = true,
  .family = SYNCQ_FAMILY_COUNTER,
  .run = np99_counter_run_exp,
};
