/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ms98_quicksort.c — Michael & Scott 1998 (paper 001) §4.5, Figures 5 and
 * 6: parallel quicksort of 500,000 pseudo-random keys (quicksort above 20
 * elements, insertion sort below), the intervals still to sort shared
 * through a queue (Figure 5) or a stack (Figure 6), at multiprogramming
 * levels 1, 2 and 3 (lab/apps/quicksort.c, apps_common.h).
 *
 * Level 1 (mode=dedicated, p up to the processing units) runs every
 * registered queue and stack, syncq's and the peers'; levels 2 and 3 run
 * 001's three of each (single lock ordinary and preemption-safe, and the
 * non-blocking MS queue / Treiber stack) in mode=pseudo (001's
 * pseudo-scheduler, the other applications emulated) and mode=real (m
 * copies as processes). Time is normalized to the preemption-safe single
 * lock of the same pool kind, as 001 does. Every run's output is checked
 * (sorted, a permutation of the input): a wrong sort fails the experiment.
 */
#include <stdlib.h>

#include "../apps/quicksort.h"
#include "apps_common.h"

#define QSX_KEYS_PAPER 500000u /* 001 §4.5 */
#define QSX_KEYS_QUICK 250000u /* --quick: half, to keep the quick suite within its budget */
#define QSX_SEED 0x5eed001ull

typedef struct qsx_point {
  const syncq_algo *algo;
  int threads, level;
  mp_mode mode;
  size_t keys;
} qsx_point;

static void *qsx_setup(const void *arg, char *why, size_t len) {
  const qsx_point *pt = arg;
  app_qs *s = malloc(sizeof *s);
  int st = s ? app_qs_init(s, pt->algo, pt->keys, QSX_SEED, (unsigned)pt->threads) : SYNCQ_ENOMEM;
  if (st != SYNCQ_OK) {
    free(s);
    snprintf(why, len, "cannot set up quicksort over %s: %s", pt->algo->name, syncq_strerror(st));
    return NULL;
  }
  return s;
}

static void qsx_body(lab_worker *w) { app_qs_worker(w->arg); }

static int qsx_finish(void *state, char *why, size_t len) {
  int rc = app_qs_check(state, why, len);
  app_qs_destroy(state);
  free(state);
  return rc;
}

static const mp_bench qsx_bench = {qsx_setup, qsx_body, qsx_finish};

static int qsx_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const qsx_point *pt = arg;
  /* pseudo: one measured application, the others emulated (001 §4); real: m copies */
  int napps = pt->mode == MP_MODE_REAL ? pt->level : 1;
  return apps_measure(ctx, &qsx_bench, pt, pt->threads, pt->level, pt->mode, SYNCQ_MP_TIMESHARE, napps, out);
}

/* 001's variants at levels 2 and 3, reference first. */
static const char *const qsx_mp_queue[] = {"single-lock-ps", "single-lock", "ms", NULL};
static const char *const qsx_mp_stack[] = {"lock-ps", "lock", "treiber", NULL};

static int qsx_usable(lab_ctx *ctx, const syncq_algo *a, size_t keys) {
  if (!app_pool_usable(a)) return 0;
  qsx_point pt = {a, 1, 1, MP_MODE_PSEUDO, keys < 64 ? keys : 64};
  char why[APPS_WHY];
  void *s = qsx_setup(&pt, why, sizeof why);
  if (s == NULL) {
    if (!lab_planning(ctx)) lab_note(ctx, "%s not measured: %s", a->name, why);
    return 0;
  }
  app_qs_destroy(s);
  free(s);
  return 1;
}

static int ms98_quicksort_run(lab_ctx *ctx) {
  size_t keys = (size_t)lab_by_size(ctx, 20000, QSX_KEYS_QUICK, QSX_KEYS_PAPER, QSX_KEYS_PAPER);
  int threads[LAB_MAX_THREADS_LIST];
  int nt = apps_threads(ctx, threads, LAB_MAX_THREADS_LIST);
  bool quick = lab_get_size(ctx) <= LAB_SIZE_QUICK;
  lab_begin(ctx,
            "p threads sort %zu pseudo-random 32-bit keys together (001 §4.5): a thread takes an interval "
            "from the shared pool, partitions it around a median-of-three pivot, puts the larger part "
            "back in the pool and goes on with the smaller, down to %d elements, which it finishes by "
            "insertion sort; a full bounded pool makes the thread keep the interval. pool=queue shares "
            "the intervals through a queue (001 Figure 5), pool=stack through a stack (Figure 6). Level 1 "
            "(mode=dedicated, p up to the %d processing units): every registered queue and stack, syncq's "
            "and the peer libraries'. Levels 2 and 3: 001's variants (single ordinary lock, single "
            "preemption-safe lock, non-blocking: MS queue / Treiber stack) in mode=pseudo (001's "
            "pseudo-scheduler, %llu ms quantum, the other m-1 applications emulated) and mode=real (m "
            "copies as processes under Linux, the mean of their times). Time normalized to the "
            "preemption-safe single lock (\"single-lock-ps\" / \"lock-ps\"), as in 001. Every run is "
            "checked: the keys sorted and a permutation of the input (two commutative hashes).",
            keys, APP_QS_CUTOFF, lab_pus(ctx), (unsigned long long)(mp_quantum_ns(ctx) / 1000000u));
  const syncq_family fams[2] = {SYNCQ_FAMILY_QUEUE, SYNCQ_FAMILY_STACK};
  const char *const kinds[2] = {"queue", "stack"};
  const char *const norms[2] = {"single-lock-ps", "lock-ps"};
  const char *const *mp_names[2] = {qsx_mp_queue, qsx_mp_stack};
  static qsx_point pts[LAB_MAX_VARIANTS];
  for (int f = 0; f < 2; f++) {
    const syncq_algo *all[LAB_MAX_VARIANTS], *algos[LAB_MAX_VARIANTS];
    int nall = syncq_registry_list(fams[f], all, LAB_MAX_VARIANTS), na = 0;
    if (nall > LAB_MAX_VARIANTS) nall = LAB_MAX_VARIANTS;
    for (int i = 0; i < nall; i++)
      if (qsx_usable(ctx, all[i], keys)) algos[na++] = all[i];
    for (int t = 0; t < nt; t++) {
      lab_group g;
      apps_group(&g, "pool", kinds[f], threads[t], 1, MP_MODE_PSEUDO, qsx_sample, norms[f]);
      if (threads[t] == 1) g.claim_min_reps = MP_BASELINE_CLAIM_MIN_REPS; /* the claims' level-1 baseline */
      for (int a = 0; a < na; a++) {
        pts[a] = (qsx_point){algos[a], threads[t], 1, MP_MODE_PSEUDO, keys};
        g.variants[g.nvariants++] = (lab_variant){algos[a]->name, &pts[a]};
      }
      if (lab_run_group(ctx, &g) != 0) return -1;
    }
    /* levels 2 and 3 (--quick: level 3 at the largest p, where the claims are) */
    const syncq_algo *mp[LAB_MAX_VARIANTS];
    int nmp = mp_pick_algos(algos, na, mp_names[f], mp);
    for (int level = quick ? 3 : 2; level <= 3; level++)
      for (int m = MP_MODE_PSEUDO; m <= MP_MODE_REAL; m++)
        for (int t = quick ? nt - 1 : 0; t < nt; t++) {
          lab_group g;
          apps_group(&g, "pool", kinds[f], threads[t], level, (mp_mode)m, qsx_sample, norms[f]);
          for (int a = 0; a < nmp; a++) {
            pts[a] = (qsx_point){mp[a], threads[t], level, (mp_mode)m, keys};
            g.variants[g.nvariants++] = (lab_variant){mp[a]->name, &pts[a]};
          }
          if (lab_run_group(ctx, &g) != 0) return -1;
        }
  }
  if (!lab_planning(ctx)) {
    if (quick) mp_note_quick_levels(ctx);
    lab_note(ctx,
             "Differences from 001 and why: 001 ran 1 to 11 processors of an SGI Challenge; "
             "here at most %d processing units, so the pool is contended by few threads and a "
             "thread spends most of its time partitioning (tens of microseconds per interval) "
             "rather than in the pool. 001 does not say which part of a partitioned interval is "
             "shared; this program shares the larger one. A bounded structure that is full "
             "makes a thread keep the interval (pool capacity %u intervals). In mode=real the "
             "preemption-safe locks cannot ask Linux not to be preempted and behave as ordinary "
             "ones.",
             lab_pus(ctx), APP_QS_POOL_CAPACITY);
  }
  return 0;
}

#define QSX_W(pool, lvl, md) "\"where\":{\"pool\":\"" pool "\",\"level\":" lvl ",\"mode\":\"" md "\"}"
/* level 3 under the pseudo-scheduler, as the members of a where object */
#define QSX_WM(pool) "\"pool\":\"" pool "\",\"level\":3,\"mode\":\"pseudo\""
/* The degradation claim's exposure is the micro-benchmarks' (mp_common.h,
 * MP_HOLDER_EXERCISED: 15% of the preemptions, 12 in all, in half the
 * runs) though its bound is 1.0 rather than 1.1: there the share is what a
 * 10% lengthening needs at p = 2, here the claim asks for any, but a run
 * whose holder preemptions could not have cost 10% cannot tell a cost from
 * the level-3 run's own spread (a quantum of 2 ms in a run of tens: the
 * medians move by several percent from run to run, MP_PSEUDO_CLAIM_MIN_REPS),
 * so the same exposure is asked for. */

/* clang-format off */
static const lab_claim ms98_quicksort_claims[] = {
  {"Performance with ordinary locks degrades under multiprogramming, though not as severely as in the "
   "micro-benchmarks (001 §4.5, Figures 5 and 6): at the largest p, the single ordinary lock's time over "
   "the single preemption-safe lock's is higher at level 3 under the pseudo-scheduler than at level 1 "
   "with one thread (mode=dedicated), for the queue and for the stack. Each is judged only where the "
   "run exercised the cause, a lock holder preempted inside its critical section: at least 15% of the "
   "pseudo-scheduler's preemptions (and 12 in all, in half the runs) found a thread of the "
   "preemption-safe variant inside its no-preemption request (docs/lab.md says why); otherwise it is "
   "inconclusive.",
   "{\"op\":\"all\",\"rules\":["
   MP_HOLDER_EXERCISED_WHERE("single-lock-ps", QSX_WM("queue"))
   MP_LEVEL_CHANGE_ABOVE("single-lock", "single-lock-ps", QSX_WM("queue"), "1.0") "},"
   MP_HOLDER_EXERCISED_WHERE("lock-ps", QSX_WM("stack"))
   MP_LEVEL_CHANGE_ABOVE("lock", "lock-ps", QSX_WM("stack"), "1.0") "}]}"},
  {"Simple non-blocking implementations yield superior performance even on dedicated systems (001 "
   "§4.5): at level 1 and the largest p, quicksort over the MS queue is faster than over the single "
   "lock queue, and over Treiber's stack faster than over the single lock stack.",
   "{\"op\":\"all\",\"rules\":["
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"ms\",\"den\":\"single-lock\","
   QSX_W("queue", "1", "dedicated") ",\"at\":\"max_threads\",\"bound\":1.0,\"min_threads\":2},"
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"treiber\",\"den\":\"lock\","
   QSX_W("stack", "1", "dedicated") ",\"at\":\"max_threads\",\"bound\":1.0,\"min_threads\":2}]}"},
  {"Non-blocking implementations are the implementation of choice under any level of multiprogramming "
   "(001 §4.5): at level 3 under the pseudo-scheduler, at the largest p, the MS queue beats the "
   "preemption-safe single lock queue and Treiber's stack the preemption-safe single lock stack.",
   "{\"op\":\"all\",\"rules\":["
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"ms\",\"den\":\"single-lock-ps\","
   QSX_W("queue", "3", "pseudo") ",\"at\":\"max_threads\",\"bound\":1.0,\"min_threads\":2},"
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"treiber\",\"den\":\"lock-ps\","
   QSX_W("stack", "3", "pseudo") ",\"at\":\"max_threads\",\"bound\":1.0,\"min_threads\":2}]}"},
};
/* clang-format on */

const lab_experiment lab_exp_ms98_quicksort = {
  .name = "ms98-quicksort",
  .paper = "001 Michael & Scott 1998, §4.5",
  .figure = "Figures 5 (queue) and 6 (stack), multiprogramming levels 1, 2, 3",
  .title = "Parallel quicksort of 500,000 keys, intervals shared through a queue or a stack",
  .x = "threads",
  .also_x = LAB_ALSO_X_LEVEL,
  .log_y = false,
  .claims = ms98_quicksort_claims,
  .nclaims = sizeof ms98_quicksort_claims / sizeof ms98_quicksort_claims[0],
  .uses_registry = true,
  .family = SYNCQ_FAMILY_QUEUE,
  .also_family = true,
  .family2 = SYNCQ_FAMILY_STACK,
  .run = ms98_quicksort_run,
};
