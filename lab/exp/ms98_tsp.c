/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ms98_tsp.c — Michael & Scott 1998 (paper 001) §4.6, Figure 7: a
 * 17-city travelling salesman problem solved by branch and bound with a
 * shared priority queue of promising partial tours, a shared stack of
 * tours to expand and shared counters (lab/apps/tsp.c), at
 * multiprogramming levels 1, 2 and 3 (apps_common.h).
 *
 * 001's four programs, one per variant:
 *   ordinary-locks  skew heap, stack and counters each under one ordinary
 *                   TTAS lock ("skew-lock", "lock", "lock-ttas")
 *   ps-locks        the same under preemption-safe locks ("skew-lock-ps",
 *                   "lock-ps", "lock-ttas-ps"): the reference
 *   non-blocking    the best non-blocking structures: Herlihy's skew heap,
 *                   Treiber's stack, the CAS-loop counter (001: LL/SC)
 *   hybrid          the fastest of each in the micro-benchmarks:
 *                   preemption-safe heap, Treiber's stack, CAS counter
 * A second panel (set=every-structure, level 1) swaps one
 * structure of the hybrid at a time for every other registered priority
 * queue, stack and counter (peers included); the variant is named by the
 * structure swapped in.
 *
 * The instance is fixed (seeded cities in a square); its optimum comes
 * from Held-Karp dynamic programming, computed once per launch, and every
 * run must find exactly that optimum with a valid tour, or the experiment
 * fails.
 */
#include <stdlib.h>

#include "../apps/tsp.h"
#include "apps_common.h"

#define TSPX_CITIES_PAPER 17 /* 001 §4.6 */
#define TSPX_CITIES_SMOKE 12
#define TSPX_SEED 3ull /* the instance: seeded city coordinates */

typedef struct tspx_point {
  app_tsp_config cfg;
  const app_tsp_instance *in;
  uint64_t optimum;
  int threads, level;
  mp_mode mode;
} tspx_point;

/* finish() sees only the state, so the optimum to check against rides in it. */
typedef struct tspx_state {
  app_tsp tsp; /* first: the body sees an app_tsp */
  uint64_t optimum;
} tspx_state;

static void tspx_body(lab_worker *w) { app_tsp_worker(w->arg, w->id); }

static void *tspx_setup2(const void *arg, char *why, size_t len) {
  const tspx_point *pt = arg;
  tspx_state *s = malloc(sizeof *s);
  int st = s ? app_tsp_init(&s->tsp, pt->in, &pt->cfg, (unsigned)pt->threads) : SYNCQ_ENOMEM;
  if (st != SYNCQ_OK) {
    free(s);
    snprintf(why, len, "cannot set up TSP over %s/%s/%s: %s", pt->cfg.pq->name, pt->cfg.stack->name,
             pt->cfg.counter->name, syncq_strerror(st));
    return NULL;
  }
  s->optimum = pt->optimum;
  return s;
}

static int tspx_finish2(void *state, char *why, size_t len) {
  tspx_state *s = state;
  int rc = app_tsp_check(&s->tsp, s->optimum, why, len);
  app_tsp_destroy(&s->tsp);
  free(s);
  return rc;
}

static const mp_bench tspx_bench = {tspx_setup2, tspx_body, tspx_finish2};

static int tspx_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const tspx_point *pt = arg;
  int napps = pt->mode == MP_MODE_REAL ? pt->level : 1;
  return apps_measure(ctx, &tspx_bench, pt, pt->threads, pt->level, pt->mode, SYNCQ_MP_TIMESHARE, napps, out);
}

/* 001's four programs: name, heap, stack, counter. */
static const char *const tspx_combos[][4] = {
  {"ps-locks", "skew-lock-ps", "lock-ps", "lock-ttas-ps"},
  {"ordinary-locks", "skew-lock", "lock", "lock-ttas"},
  {"non-blocking", "skew-herlihy", "treiber", "cas"},
  {"hybrid", "skew-lock-ps", "treiber", "cas"},
};
#define TSPX_NCOMBOS 4
#define TSPX_HYBRID 3

/* Every name the experiment can run, for --algos: the programs, and the
 * registered counters (the priority queues and stacks come from the
 * registry families). */
static const char *const tspx_fixed[] = {
  "ps-locks", "ordinary-locks", "non-blocking", "hybrid",           "faa",          "cas", "cas-backoff",
  "mutex",    "lock-ttas",      "lock-ticket",  "lock-futex-mutex", "lock-ttas-ps", NULL};

static const syncq_algo *tspx_find(syncq_family f, const char *name) {
  const syncq_algo *a = NULL;
  return syncq_registry_find(f, name, &a) == SYNCQ_OK ? a : NULL;
}

static bool tspx_usable(lab_ctx *ctx, const tspx_point *pt, const char *name, bool say) {
  char why[APPS_WHY];
  void *s = tspx_setup2(pt, why, sizeof why);
  if (s == NULL) {
    if (say && !lab_planning(ctx)) lab_note(ctx, "%s not measured: %s", name, why);
    return false;
  }
  app_tsp_destroy(s);
  free(s);
  return true;
}

static app_tsp_instance tspx_instance;
static uint64_t tspx_optimum;
static int tspx_cities_solved;

static int ms98_tsp_run(lab_ctx *ctx) {
  int cities = (int)lab_by_size(ctx, TSPX_CITIES_SMOKE, TSPX_CITIES_PAPER, TSPX_CITIES_PAPER, TSPX_CITIES_PAPER);
  int threads[LAB_MAX_THREADS_LIST];
  int nt = apps_threads(ctx, threads, LAB_MAX_THREADS_LIST);
  bool quick = lab_get_size(ctx) <= LAB_SIZE_QUICK;
  lab_begin(ctx,
            "p threads find the shortest tour of %d cities (seeded points in a 1000 x 1000 square, "
            "integer Euclidean distances) by branch and bound (001 §4.6): the lower bound of a partial "
            "tour is its length plus a minimum spanning tree of the rest; tours of fewer than %d cities are "
            "kept in the shared priority queue by bound (best-first), deeper ones on the shared stack (depth-first); "
            "a thread pops the stack, else takes the heap's minimum, prunes against the best tour, pushes "
            "the children within the bound and finishes subtrees of %d cities or fewer itself. Counters "
            "from the registry count the live tours (the team stops at 0) and the expansions; the best "
            "length is a CAS-minimum. Programs: ordinary-locks, ps-locks (the reference, as in 001), "
            "non-blocking and 001's hybrid (preemption-safe heap, Treiber's stack, CAS counter), at "
            "level 1 (mode=dedicated, p up to the %d processing units) and levels 2 and 3 in mode=pseudo "
            "(001's pseudo-scheduler, %llu ms quantum, the other applications emulated) and mode=real (m "
            "copies as processes). set=every-structure (level 1) swaps one structure of the "
            "hybrid for every other registered one (variant named by it). Every run must find the "
            "Held-Karp optimum with a valid tour.",
            cities, APP_TSP_HEAP_DEPTH, APP_TSP_LOCAL_CITIES, lab_pus(ctx),
            (unsigned long long)(mp_quantum_ns(ctx) / 1000000u));
  if (lab_planning(ctx)) {
    /* count the groups only */
  } else if (tspx_cities_solved != cities) {
    if (app_tsp_instance_make(&tspx_instance, cities, TSPX_SEED) != SYNCQ_OK ||
        app_tsp_held_karp(&tspx_instance, &tspx_optimum) != SYNCQ_OK) {
      lab_fail(ctx, "cannot make or solve the %d-city instance", cities);
      return -1;
    }
    tspx_cities_solved = cities;
  }
  static tspx_point pts[LAB_MAX_VARIANTS];
  const char *names[LAB_MAX_VARIANTS];
  tspx_point combos[TSPX_NCOMBOS];
  int nc = 0;
  for (int c = 0; c < TSPX_NCOMBOS; c++) {
    app_tsp_config cfg = {tspx_find(SYNCQ_FAMILY_PQUEUE, tspx_combos[c][1]),
                          tspx_find(SYNCQ_FAMILY_STACK, tspx_combos[c][2]),
                          tspx_find(SYNCQ_FAMILY_COUNTER, tspx_combos[c][3])};
    if (cfg.pq == NULL || cfg.stack == NULL || cfg.counter == NULL) {
      if (!lab_planning(ctx)) lab_note(ctx, "%s not measured: a structure is not registered", tspx_combos[c][0]);
      continue;
    }
    tspx_point pt = {cfg, &tspx_instance, tspx_optimum, 1, 1, MP_MODE_PSEUDO};
    if (!lab_planning(ctx) && !tspx_usable(ctx, &pt, tspx_combos[c][0], true)) continue;
    combos[nc] = pt;
    names[nc++] = tspx_combos[c][0];
  }
  for (int level = 1; level <= 3; level++) {
    if (quick && level == 2) continue;
    int last_mode = level == 1 ? MP_MODE_PSEUDO : MP_MODE_REAL; /* level 1: one dedicated run */
    for (int m = MP_MODE_PSEUDO; m <= last_mode; m++)
      for (int t = level > 1 && quick ? nt - 1 : 0; t < nt; t++) {
        lab_group g;
        apps_group(&g, "set", "programs", threads[t], level, (mp_mode)m, tspx_sample, "ps-locks");
        if (level == 1 && threads[t] == 1) g.claim_min_reps = MP_BASELINE_CLAIM_MIN_REPS; /* the claim's baseline */
        for (int c = 0; c < nc; c++) {
          pts[c] = combos[c];
          pts[c].threads = threads[t];
          pts[c].level = level;
          pts[c].mode = (mp_mode)m;
          g.variants[g.nvariants++] = (lab_variant){names[c], &pts[c]};
        }
        if (lab_run_group(ctx, &g) != 0) return -1;
      }
  }
  /* every other registered structure in the hybrid, one swapped at a time */
  const app_tsp_config hy = {tspx_find(SYNCQ_FAMILY_PQUEUE, tspx_combos[TSPX_HYBRID][1]),
                             tspx_find(SYNCQ_FAMILY_STACK, tspx_combos[TSPX_HYBRID][2]),
                             tspx_find(SYNCQ_FAMILY_COUNTER, tspx_combos[TSPX_HYBRID][3])};
  for (int t = 0; t < nt && hy.pq && hy.stack && hy.counter; t++) {
    lab_group g;
    apps_group(&g, "set", "every-structure", threads[t], 1, MP_MODE_PSEUDO, tspx_sample, "hybrid");
    pts[g.nvariants] = (tspx_point){hy, &tspx_instance, tspx_optimum, threads[t], 1, MP_MODE_PSEUDO};
    g.variants[g.nvariants] = (lab_variant){"hybrid", &pts[g.nvariants]};
    g.nvariants++;
    const syncq_family fams[3] = {SYNCQ_FAMILY_PQUEUE, SYNCQ_FAMILY_STACK, SYNCQ_FAMILY_COUNTER};
    for (int f = 0; f < 3; f++) {
      const syncq_algo *all[LAB_MAX_VARIANTS];
      int n = syncq_registry_list(fams[f], all, LAB_MAX_VARIANTS);
      if (n > LAB_MAX_VARIANTS) n = LAB_MAX_VARIANTS;
      for (int i = 0; i < n && g.nvariants < LAB_MAX_VARIANTS; i++) {
        app_tsp_config cfg = hy;
        if (f == 0) cfg.pq = all[i];
        else if (f == 1) cfg.stack = all[i];
        else cfg.counter = all[i];
        if (cfg.pq == hy.pq && cfg.stack == hy.stack && cfg.counter == hy.counter) continue;
        tspx_point pt = {cfg, &tspx_instance, tspx_optimum, threads[t], 1, MP_MODE_PSEUDO};
        if (!lab_planning(ctx) && !tspx_usable(ctx, &pt, all[i]->name, t == 0)) continue;
        pts[g.nvariants] = pt;
        g.variants[g.nvariants] = (lab_variant){all[i]->name, &pts[g.nvariants]};
        g.nvariants++;
      }
    }
    if (lab_run_group(ctx, &g) != 0) return -1;
  }
  if (!lab_planning(ctx)) {
    if (quick) mp_note_quick_levels(ctx);
    lab_note(ctx,
             "Held-Karp optimum of the %d-city instance: %llu (every run found it, with a valid "
             "tour).",
             cities, (unsigned long long)tspx_optimum);
    lab_note(ctx,
             "Differences from 001 and why: 001 ran 1 to 11 processors of an SGI Challenge and "
             "does not give its program's bound or its split between heap and stack; this one's "
             "are stated above. The best length is a CAS-minimum in every program, because the "
             "counter family has no minimum operation and a fetch-and-add emulation would expose "
             "bounds no tour has. At most %d processing units: contention is low. In mode=real the "
             "preemption-safe locks cannot ask Linux not to be preempted and behave as ordinary "
             "ones.",
             lab_pus(ctx));
  }
  return 0;
}

#define TSPX_W(lvl, md) "\"where\":{\"set\":\"programs\",\"level\":" lvl ",\"mode\":\"" md "\"}"
/* level 3 under the pseudo-scheduler, as the members of a where object */
#define TSPX_WM "\"set\":\"programs\",\"level\":3,\"mode\":\"pseudo\""

/* clang-format off */
static const lab_claim ms98_tsp_claims[] = {
  {"The implementation based on ordinary locks suffers under multiprogramming (001 §4.6, Figure 7): at "
   "the largest p, ordinary-locks' time over ps-locks' is higher at level 3 under the pseudo-scheduler "
   "than at level 1 with one thread (mode=dedicated). Judged only where the run exercised the cause, a "
   "lock holder preempted inside its critical section: at least 15% of the pseudo-scheduler's "
   "preemptions (and 12 in all, in half the runs) found a thread of ps-locks inside a no-preemption "
   "request (docs/lab.md says why, and ms98_quicksort.c why a bound of 1.0 asks as much); otherwise "
   "inconclusive.",
   MP_HOLDER_EXERCISED_WHERE("ps-locks", TSPX_WM)
   MP_LEVEL_CHANGE_ABOVE("ordinary-locks", "ps-locks", TSPX_WM, "1.0") "}"},
  {"The hybrid implementation yields the best performance, since it uses the best implementation of "
   "each data structure (001 §4.6): at level 3 under the pseudo-scheduler, at the largest p, the hybrid "
   "is faster than each of the three other programs.",
   "{\"op\":\"all\",\"rules\":["
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"hybrid\",\"den\":\"ps-locks\"," TSPX_W("3", "pseudo") ",\"at\":\"max_threads\",\"bound\":1.0,\"min_threads\":2},"
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"hybrid\",\"den\":\"ordinary-locks\"," TSPX_W("3", "pseudo") ",\"at\":\"max_threads\",\"bound\":1.0,\"min_threads\":2},"
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"hybrid\",\"den\":\"non-blocking\"," TSPX_W("3", "pseudo") ",\"at\":\"max_threads\",\"bound\":1.0,\"min_threads\":2}]}"},
  {"The hybrid implementation yields the best performance on a dedicated machine too (001 §4.6, "
   "Figure 7 left): at level 1 and the largest p, the hybrid is faster than each of the three other "
   "programs.",
   "{\"op\":\"all\",\"rules\":["
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"hybrid\",\"den\":\"ps-locks\"," TSPX_W("1", "dedicated") ",\"at\":\"max_threads\",\"bound\":1.0,\"min_threads\":2},"
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"hybrid\",\"den\":\"ordinary-locks\"," TSPX_W("1", "dedicated") ",\"at\":\"max_threads\",\"bound\":1.0,\"min_threads\":2},"
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"hybrid\",\"den\":\"non-blocking\"," TSPX_W("1", "dedicated") ",\"at\":\"max_threads\",\"bound\":1.0,\"min_threads\":2}]}"},
};
/* clang-format on */

const lab_experiment lab_exp_ms98_tsp = {
  .name = "ms98-tsp",
  .paper = "001 Michael & Scott 1998, §4.6",
  .figure = "Figure 7 (multiprogramming levels 1, 2, 3)",
  .title = "17-city travelling salesman: shared heap, stack and counters; locks, non-blocking and hybrid",
  .x = "threads",
  .also_x = LAB_ALSO_X_LEVEL,
  .log_y = false,
  .claims = ms98_tsp_claims,
  .nclaims = sizeof ms98_tsp_claims / sizeof ms98_tsp_claims[0],
  .uses_registry = true,
  .family = SYNCQ_FAMILY_PQUEUE,
  .also_family = true,
  .family2 = SYNCQ_FAMILY_STACK,
  .fixed_algos = tspx_fixed,
  .run = ms98_tsp_run,
};
