/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * np99_apps.c — Nikolopoulos & Papatheodorou 1999 (paper 003) §6, Figure
 * 9: applications with the synchronization of SPLASH-2 codes, scaled to
 * this machine (lab/apps/lu.c, lab/apps/taskq.c):
 *
 *   kernel=lu     SPLASH-2 LU: blocked dense LU factorisation, barriers
 *                 between the steps (003 changed LU's barriers)
 *   kernel=taskq  a task-queue kernel in the manner of Cholesky and
 *                 Radiosity: tasks that spawn tasks through one shared
 *                 queue (003 changed their task queues)
 *
 * np99-apps-dedicated (level 1, a dedicated machine, p up to the
 * processing units): LU with every registered barrier in its default discipline and
 * syncq's barriers also with immediate blocking ("/block") and competitive
 * spinning ("/competitive"); the task kernel over every registered queue
 * and stack, and over a ring behind every registered lock (plus the TTAS
 * lock blocking and competitive).
 *
 * np99-apps (levels 1, 2 and 3: m copies at once, each with its own
 * structures, as 003 §5-6 ran multiprogrammed workloads): the disciplines
 * of np99-mp-queue / np99-mp-barrier on the kernels, "<discipline>@<schedule>"
 * with @ts 001's pseudo-scheduler time-sharing the copies, @gang the same
 * co-scheduling each copy's threads, @linux the copies as processes under
 * Linux (mp_common.h). LU: the centralized fetch-and-add barrier (003's
 * best) busy-waiting, blocking at once, or spinning competitively. Task
 * kernel: the ring behind the TTAS lock (busy-wait, immediate blocking,
 * competitive), behind 003's scheduler-conscious hybrid queue lock, or the
 * MS non-blocking queue. Time: the mean of the copies' times, normalized
 * to busy-wait@ts (003 normalizes to the worst combination; a fixed
 * reference keeps the ratios comparable between runs).
 *
 * Every run's output is checked (LU: L*U against the input; the task
 * kernel: task count and checksum against the independently computed
 * ones): a wrong output fails the experiment.
 */
#include <stdlib.h>
#include <string.h>

#include "../apps/lu.h"
#include "../apps/taskq.h"
#include "apps_common.h"
#include "syncq/wait.h"

#define NPA_LU_BLOCK 16    /* SPLASH-2 LU's default block */
#define NPA_LU_N_PAPER 512 /* SPLASH-2 LU's default matrix */
#define NPA_SEED 0x0003ull
#define NPA_MP_BARRIER "central-faa"
#define NPA_MP_LOCK "ttas"
#define NPA_SC_LOCK "hybrid-sc"
#define NPA_NB_QUEUE "ms"

typedef enum npa_kernel { K_LU, K_TASKQ } npa_kernel;

typedef struct npa_point {
  npa_kernel kernel;
  const syncq_algo *algo; /* barrier (lu), or queue/stack/lock (taskq) */
  int wait;               /* discipline of barrier or lock */
  int threads, level;
  mp_mode mode;
  int policy; /* SYNCQ_MP_TIMESHARE or SYNCQ_MP_GANG */
  int lu_n;
  app_taskq_shape shape;
} npa_point;

static void *npa_setup(const void *arg, char *why, size_t len) {
  const npa_point *pt = arg;
  int st;
  void *s;
  if (pt->kernel == K_LU) {
    s = malloc(sizeof(app_lu));
    st = s ? app_lu_init(s, pt->algo, pt->wait, pt->lu_n, NPA_LU_BLOCK, (unsigned)pt->threads, NPA_SEED) : SYNCQ_ENOMEM;
  } else {
    s = malloc(sizeof(app_taskq));
    bool lock = pt->algo->family == SYNCQ_FAMILY_LOCK;
    st =
      s ? app_taskq_init(s, &pt->shape, lock ? NULL : pt->algo, lock ? pt->algo : NULL, pt->wait, (unsigned)pt->threads)
        : SYNCQ_ENOMEM;
  }
  if (st != SYNCQ_OK) {
    free(s);
    snprintf(why, len, "cannot set up %s over %s: %s", pt->kernel == K_LU ? "LU" : "the task kernel", pt->algo->name,
             syncq_strerror(st));
    return NULL;
  }
  return s;
}

/* One mp_bench per kernel: the same setup, each its body and check. */
static void npa_lu_body(lab_worker *w) { app_lu_worker(w->arg, w->id); }
static int npa_lu_finish(void *state, char *why, size_t len) {
  int rc = app_lu_check(state, why, len);
  app_lu_destroy(state);
  free(state);
  return rc;
}
static void npa_tq_body(lab_worker *w) { app_taskq_worker(w->arg); }
static int npa_tq_finish(void *state, char *why, size_t len) {
  int rc = app_taskq_check(state, why, len);
  app_taskq_destroy(state);
  free(state);
  return rc;
}

static const mp_bench npa_lu_bench = {npa_setup, npa_lu_body, npa_lu_finish};
static const mp_bench npa_tq_bench = {npa_setup, npa_tq_body, npa_tq_finish};

/* panel=structures: a dedicated machine (level 1, one team) */
static int npa_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const npa_point *pt = arg;
  return apps_measure(ctx, pt->kernel == K_LU ? &npa_lu_bench : &npa_tq_bench, pt, pt->threads, 1, pt->mode, pt->policy,
                      1, out);
}

/* disciplines: `level` copies under the schedule, level 1 included (one
 * copy under the pseudo-scheduler, or one process), so every line of the
 * plot starts from the same kind of run */
static int npa_mp_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const npa_point *pt = arg;
  uint64_t ns;
  if (mp_measure(ctx, pt->kernel == K_LU ? &npa_lu_bench : &npa_tq_bench, pt, pt->threads, pt->level, pt->mode,
                 pt->policy, pt->level, &ns, &out->stats, NULL) != 0)
    return -1;
  out->value = (double)ns / APPS_NS_PER_MS;
  out->ops = 0;
  return 0;
}

/* ---- names ---- */
typedef struct npa_disc {
  const char *name;
  int wait;
} npa_disc;
static const npa_disc npa_discs[] = {{"busy-wait", SYNCQ_WAIT_SPIN},
                                     {"immediate-blocking", SYNCQ_WAIT_BLOCK},
                                     {"competitive", SYNCQ_WAIT_COMPETITIVE},
                                     {"scheduler-conscious", SYNCQ_WAIT_SPIN},
                                     {"non-blocking", 0}};
#define NPA_NDISC_LU 3 /* barriers: the first three */
#define NPA_NDISC_TQ 5
static const struct {
  const char *suffix;
  mp_mode mode;
  int policy;
} npa_scheds[] = {{"ts", MP_MODE_PSEUDO, SYNCQ_MP_TIMESHARE},
                  {"gang", MP_MODE_PSEUDO, SYNCQ_MP_GANG},
                  {"linux", MP_MODE_REAL, SYNCQ_MP_TIMESHARE}};
#define NPA_NSCHED 3

static const struct {
  const char *suffix;
  int wait;
} npa_waits[] = {{"", SYNCQ_WAIT_DEFAULT}, {"/block", SYNCQ_WAIT_BLOCK}, {"/competitive", SYNCQ_WAIT_COMPETITIVE}};

/* Names for --algos beyond the queue and lock families: the barriers (and
 * their discipline forms), the stacks, the disciplines. */
static const char *const npa_fixed[] = {"central-cas",
                                        "central-cas/block",
                                        "central-cas/competitive",
                                        "central-faa",
                                        "central-faa/block",
                                        "central-faa/competitive",
                                        "mcs-tree",
                                        "mcs-tree/block",
                                        "mcs-tree/competitive",
                                        "dissemination",
                                        "dissemination/block",
                                        "dissemination/competitive",
                                        "pthread-barrier",
                                        "pthread-barrier/block",
                                        "pthread-barrier/competitive",
                                        "ck:barrier_centralized",
                                        "ck:barrier_combining",
                                        "ck:barrier_dissemination",
                                        "ck:barrier_tournament",
                                        "ck:barrier_mcs",
                                        "lock",
                                        "lock-ps",
                                        "treiber",
                                        "herlihy",
                                        "treiber-hp",
                                        "elimination",
                                        "ck:stack",
                                        "urcu:lfstack",
                                        "boost:stack",
                                        "ttas/block",
                                        "ttas/competitive",
                                        "busy-wait@ts",
                                        "busy-wait@gang",
                                        "busy-wait@linux",
                                        "immediate-blocking@ts",
                                        "immediate-blocking@gang",
                                        "immediate-blocking@linux",
                                        "competitive@ts",
                                        "competitive@gang",
                                        "competitive@linux",
                                        "scheduler-conscious@ts",
                                        "scheduler-conscious@gang",
                                        "non-blocking@ts",
                                        "non-blocking@gang",
                                        "non-blocking@linux",
                                        NULL};

static char npa_names[2 * LAB_MAX_VARIANTS][64]; /* composed variant names, alive for the run */

static bool npa_usable(lab_ctx *ctx, npa_point *pt, const char *name, bool say) {
  npa_point probe = *pt;
  probe.lu_n = NPA_LU_BLOCK;
  probe.shape.roots = 1;
  char why[APPS_WHY];
  void *s = npa_setup(&probe, why, sizeof why);
  if (s == NULL) {
    if (say && !lab_planning(ctx)) lab_note(ctx, "%s not measured: %s", name, why);
    return false;
  }
  if (pt->kernel == K_LU) app_lu_destroy(s);
  else app_taskq_destroy(s);
  free(s);
  return true;
}

static const syncq_algo *npa_find(syncq_family f, const char *name) {
  const syncq_algo *a = NULL;
  return syncq_registry_find(f, name, &a) == SYNCQ_OK ? a : NULL;
}

/* The kernels' sizes for this run. */
static void npa_sizes(lab_ctx *ctx, int *lu_n, app_taskq_shape *shape, uint64_t *tq_sum, uint64_t *tq_tasks) {
  *lu_n = (int)lab_by_size(ctx, 64, 256, NPA_LU_N_PAPER, NPA_LU_N_PAPER);
  *shape = (app_taskq_shape){64, 5, 70, 400}; /* --quick */
  if (lab_get_size(ctx) == LAB_SIZE_SMOKE) *shape = (app_taskq_shape){16, 3, 70, 200};
  else if (lab_get_size(ctx) > LAB_SIZE_QUICK) *shape = (app_taskq_shape){64, 6, 70, 2000};
  *tq_sum = *tq_tasks = 0;
  (void)app_taskq_expected(shape, tq_sum, tq_tasks);
}

#define NPA_KERNELS_TEXT                                                                                       \
  "kernel=lu: SPLASH-2 LU, a %d x %d matrix of doubles (diagonally dominant, no pivoting) in %d x %d blocks "  \
  "scattered over a 2-D grid of threads, two barriers per step. kernel=taskq: %llu tasks (%u roots, a task "   \
  "splits into 4 with probability %u%% down to level %u, Radiosity-style refinement; each computes %u +-50%% " \
  "LCG steps) through one shared queue. Every run is checked: L*U equals the input within %.0e (relative); "   \
  "the task count and checksum equal the ones computed without running the tasks (LCG jump-ahead)."

static void npa_notes(lab_ctx *ctx, int threads, uint64_t tq_sum, uint64_t tq_tasks) {
  lab_note(ctx, "Expected task kernel output: %llu tasks, checksum %016llx (every run matched).",
           (unsigned long long)tq_tasks, (unsigned long long)tq_sum);
  lab_note(ctx,
           "Differences from 003 and why: 003 ran the SPLASH-2 programs themselves on 44 of the 64 "
           "processors of an Origin2000 under IRIX; here at most %d threads, kernels with the same "
           "synchronization (LU's barriers between factorisation steps; Cholesky's and Radiosity's "
           "shared task queue with tasks spawning tasks) rather than the full programs, and gang "
           "scheduling only under the pseudo-scheduler (Linux has none).",
           threads);
}

/* ---- np99-apps: disciplines x schedules x levels (003 Figure 9) ---- */
static int np99_apps_run(lab_ctx *ctx) {
  int pus = lab_pus(ctx);
  int threads = pus < MP_MAX_THREADS / 3 ? pus : MP_MAX_THREADS / 3;
  if (threads < 2) threads = 2; /* synchronization needs two threads */
  bool quick = lab_get_size(ctx) <= LAB_SIZE_QUICK;
  int lu_n;
  app_taskq_shape shape;
  uint64_t tq_sum, tq_tasks;
  npa_sizes(ctx, &lu_n, &shape, &tq_sum, &tq_tasks);
  lab_begin(ctx,
            "Two kernels with the synchronization of SPLASH-2 codes (003 §6), p = %d threads, m copies at "
            "once (level m = 1, 2, 3; 003's multiprogrammed workloads), each with its own structures. " NPA_KERNELS_TEXT
            " Variants <discipline>@<schedule> as in np99-mp-*: LU on the centralized "
            "fetch-and-add barrier (003's best) busy-waiting, blocking at once (immediate-blocking) or "
            "spinning about one context switch per missing thread before blocking (competitive); the "
            "task kernel on a ring behind the TTAS lock (busy-wait, immediate-blocking, competitive), "
            "behind 003's hybrid queue lock made scheduler-conscious, or the MS non-blocking queue. "
            "@ts and @gang: 001's pseudo-scheduler (%llu ms quantum) time-sharing or co-scheduling the "
            "copies over %d virtual processors; @linux: the copies as processes under Linux. Time: the "
            "mean of the copies' times, normalized to busy-wait@ts (003 normalizes to the worst "
            "combination; a fixed reference keeps ratios comparable between runs).",
            threads, lu_n, lu_n, NPA_LU_BLOCK, NPA_LU_BLOCK, (unsigned long long)tq_tasks, shape.roots, shape.split_pct,
            shape.max_level, shape.work, APP_LU_TOLERANCE, (unsigned long long)(mp_quantum_ns(ctx) / 1000000u),
            threads);
  static npa_point pts[LAB_MAX_VARIANTS];
  int nn = 0;
  for (int k = K_LU; k <= K_TASKQ; k++) {
    for (int level = 1; level <= 3; level++) {
      if (quick && level == 2) continue;
      lab_group g;
      memset(&g, 0, sizeof g);
      lab_group_param_str(&g, "kernel", k == K_LU ? "lu" : "taskq");
      lab_group_param(&g, "threads", threads);
      lab_group_param(&g, "level", level);
      g.metric = "time";
      g.unit = "ms";
      g.sample = npa_mp_sample;
      g.normalize_to = "busy-wait@ts";
      int nd = k == K_LU ? NPA_NDISC_LU : NPA_NDISC_TQ;
      for (int d = 0; d < nd; d++) {
        const syncq_algo *a;
        if (k == K_LU) a = npa_find(SYNCQ_FAMILY_BARRIER, NPA_MP_BARRIER);
        else if (d == 3) a = npa_find(SYNCQ_FAMILY_LOCK, NPA_SC_LOCK);
        else if (d == 4) a = npa_find(SYNCQ_FAMILY_QUEUE, NPA_NB_QUEUE);
        else a = npa_find(SYNCQ_FAMILY_LOCK, NPA_MP_LOCK);
        if (a == NULL) continue;
        for (int sc = 0; sc < NPA_NSCHED; sc++) {
          /* the scheduler-conscious lock reads the pseudo-scheduler's preempted state: no @linux */
          if (d == 3 && npa_scheds[sc].mode == MP_MODE_REAL) continue;
          npa_point pt = {
            (npa_kernel)k, a,    npa_discs[d].wait, threads, level, npa_scheds[sc].mode, npa_scheds[sc].policy,
            lu_n,          shape};
          snprintf(npa_names[nn], sizeof npa_names[nn], "%s@%s", npa_discs[d].name, npa_scheds[sc].suffix);
          pts[g.nvariants] = pt;
          g.variants[g.nvariants] = (lab_variant){npa_names[nn++], &pts[g.nvariants]};
          g.nvariants++;
        }
      }
      if (lab_run_group(ctx, &g) != 0) return -1;
    }
  }
  if (!lab_planning(ctx)) {
    if (quick)
      lab_note(ctx, "--quick measures levels 1 and 3 (the claims are at level 3); the default size adds level 2.");
    npa_notes(ctx, threads, tq_sum, tq_tasks);
  }
  return 0;
}

/* ---- np99-apps-dedicated: every registered structure, level 1 ---- */
static int np99_apps_dedicated_run(lab_ctx *ctx) {
  int threads[LAB_MAX_THREADS_LIST];
  /* one copy (level 1): up to the team's limit, past 003's 32-processor scale */
  int nt = apps_threads_upto(ctx, threads, LAB_MAX_THREADS_LIST, MP_MAX_THREADS);
  int lu_n;
  app_taskq_shape shape;
  uint64_t tq_sum, tq_tasks;
  npa_sizes(ctx, &lu_n, &shape, &tq_sum, &tq_tasks);
  lab_begin(ctx,
            "Two kernels with the synchronization of SPLASH-2 codes (003 §6) on a dedicated machine (level "
            "1, p up to the %d processing units). " NPA_KERNELS_TEXT
            " kernel=lu runs every registered "
            "barrier in its default discipline, and syncq's barriers also with immediate blocking "
            "(\"/block\") and competitive spinning (\"/competitive\"), normalized to \"central-faa\" "
            "(003's best barrier); kernel=taskq runs over every registered queue and stack (syncq's and "
            "the peer libraries') and over a ring of %u tasks behind every registered lock (the TTAS lock "
            "also blocking and competitive), normalized to \"ttas\".",
            lab_pus(ctx), lu_n, lu_n, NPA_LU_BLOCK, NPA_LU_BLOCK, (unsigned long long)tq_tasks, shape.roots,
            shape.split_pct, shape.max_level, shape.work, APP_LU_TOLERANCE, APP_TASKQ_RING);
  static npa_point pts[LAB_MAX_VARIANTS];
  for (int k = K_LU; k <= K_TASKQ; k++) {
    for (int t = 0; t < nt; t++) {
      int nn = k == K_LU ? 0 : LAB_MAX_VARIANTS; /* the two kernels' names live side by side */
      lab_group g;
      memset(&g, 0, sizeof g);
      lab_group_param_str(&g, "kernel", k == K_LU ? "lu" : "taskq");
      lab_group_param(&g, "threads", threads[t]);
      lab_group_param(&g, "level", 1);
      g.metric = "time";
      g.unit = "ms";
      g.sample = npa_sample;
      g.normalize_to = k == K_LU ? "central-faa" : NPA_MP_LOCK;
      const syncq_family fams[4] = {SYNCQ_FAMILY_BARRIER, SYNCQ_FAMILY_QUEUE, SYNCQ_FAMILY_STACK, SYNCQ_FAMILY_LOCK};
      for (int f = k == K_LU ? 0 : 1; f < (k == K_LU ? 1 : 4); f++) {
        const syncq_algo *all[LAB_MAX_VARIANTS];
        int n = syncq_registry_list(fams[f], all, LAB_MAX_VARIANTS);
        if (n > LAB_MAX_VARIANTS) n = LAB_MAX_VARIANTS;
        for (int i = 0; i < n; i++) {
          if ((fams[f] == SYNCQ_FAMILY_QUEUE || fams[f] == SYNCQ_FAMILY_STACK) && !app_pool_usable(all[i])) continue;
          /* more disciplines: syncq's barriers, and the TTAS lock */
          bool more = (fams[f] == SYNCQ_FAMILY_BARRIER && !(all[i]->props & SYNCQ_PROP_PEER)) ||
                      (fams[f] == SYNCQ_FAMILY_LOCK && strcmp(all[i]->name, NPA_MP_LOCK) == 0);
          for (int w = 0; w < (more ? 3 : 1) && g.nvariants < LAB_MAX_VARIANTS; w++) {
            npa_point pt = {(npa_kernel)k, all[i], npa_waits[w].wait, threads[t], 1, MP_MODE_PSEUDO, SYNCQ_MP_TIMESHARE,
                            lu_n,          shape};
            snprintf(npa_names[nn], sizeof npa_names[nn], "%s%s", all[i]->name, npa_waits[w].suffix);
            if (!lab_planning(ctx) && !npa_usable(ctx, &pt, npa_names[nn], t == 0)) continue;
            pts[g.nvariants] = pt;
            g.variants[g.nvariants] = (lab_variant){npa_names[nn++], &pts[g.nvariants]};
            g.nvariants++;
          }
        }
      }
      if (lab_run_group(ctx, &g) != 0) return -1;
    }
  }
  if (!lab_planning(ctx)) npa_notes(ctx, lab_pus(ctx), tq_sum, tq_tasks);
  return 0;
}

#define NPA_W(kernel, lvl) "\"where\":{\"kernel\":\"" kernel "\",\"level\":" lvl "},\"at\":\"max_threads\""

/* clang-format off */
static const lab_claim np99_apps_claims[] = {
  {"For the task-queue codes (Cholesky, Radiosity) the relative performance of disciplines and schedules "
   "is that of the queue micro-benchmark (003 §6, Figure 9; §5, Figure 7), where immediate blocking is the "
   "worst discipline: at level 3 under time-sharing the task kernel with immediate blocking is slower than "
   "with busy-waiting and with competitive spinning.",
   "{\"op\":\"all\",\"rules\":["
   "{\"op\":\"ratio_above\",\"metric\":\"time_ratio\",\"num\":\"immediate-blocking@ts\",\"den\":\"busy-wait@ts\"," NPA_W("taskq", "3") ",\"bound\":1.0},"
   "{\"op\":\"ratio_above\",\"metric\":\"time_ratio\",\"num\":\"immediate-blocking@ts\",\"den\":\"competitive@ts\"," NPA_W("taskq", "3") ",\"bound\":1.0}]}"},
  {"Task-queue codes as the micro-benchmark: with time-sharing the non-blocking queue performs better "
   "than the multiprogramming-conscious spin locks (003 §6, Figure 9; §5): at level 3 the task kernel "
   "over the MS queue (@ts) is faster than over the busy-waiting and the competitive TTAS-locked ring.",
   "{\"op\":\"all\",\"rules\":["
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"non-blocking@ts\",\"den\":\"busy-wait@ts\"," NPA_W("taskq", "3") ",\"bound\":1.0},"
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"non-blocking@ts\",\"den\":\"competitive@ts\"," NPA_W("taskq", "3") ",\"bound\":1.0}]}"},
  {"Task-queue codes as the micro-benchmark: the hybrid scheduler-conscious queue lock retains its "
   "performance under time-sharing (003 §6; §5): at level 3 the task kernel behind it (@ts) is at least "
   "as fast as behind the busy-waiting TTAS lock.",
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"scheduler-conscious@ts\",\"den\":\"busy-wait@ts\"," NPA_W("taskq", "3") ",\"bound\":1.0}"},
  {"Task-queue codes as the micro-benchmark: gang scheduling performs worse than time-sharing for the "
   "queues (003 §6; §5, Figure 7): at level 3 the task kernel over the non-blocking queue co-scheduled "
   "is slower than time-shared.",
   "{\"op\":\"ratio_above\",\"metric\":\"time_ratio\",\"num\":\"non-blocking@gang\",\"den\":\"non-blocking@ts\"," NPA_W("taskq", "3") ",\"bound\":1.0}"},
  {"In LU, due to significant load imbalance, competitive spinning combined with a time-share scheduler "
   "delivers better performance than gang scheduling (003 §6, Figure 9): at level 3 LU with competitive "
   "spinning @ts is faster than with busy-waiting and with competitive spinning @gang.",
   "{\"op\":\"all\",\"rules\":["
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"competitive@ts\",\"den\":\"busy-wait@gang\"," NPA_W("lu", "3") ",\"bound\":1.0},"
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"competitive@ts\",\"den\":\"competitive@gang\"," NPA_W("lu", "3") ",\"bound\":1.0}]}"},
};
/* clang-format on */

#define NPA_W1(kernel) "\"where\":{\"kernel\":\"" kernel "\",\"level\":1},\"at\":\"max_threads\",\"min_threads\":2"

/* clang-format off */
static const lab_claim np99_apps_dedicated_claims[] = {
  {"Below the 32-processor scale the choice of synchronization algorithm changes an application's time "
   "by no more than 2% (003 §6: dedicated runs agree with the micro-benchmarks, but the effects of more "
   "scalable algorithms become noticeable, more than 2%, only beyond 32 processors): at the largest p on "
   "this machine LU with the MCS tree barrier is within 2% of LU with the centralized fetch-and-add "
   "barrier, and the task kernel over the MS non-blocking queue within 2% of the TTAS-locked ring.",
   "{\"op\":\"all\",\"rules\":["
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"mcs-tree\",\"den\":\"central-faa\"," NPA_W1("lu") ",\"bound\":1.02},"
   "{\"op\":\"ratio_above\",\"metric\":\"time_ratio\",\"num\":\"mcs-tree\",\"den\":\"central-faa\"," NPA_W1("lu") ",\"bound\":0.98},"
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"ms\",\"den\":\"ttas\"," NPA_W1("taskq") ",\"bound\":1.02},"
   "{\"op\":\"ratio_above\",\"metric\":\"time_ratio\",\"num\":\"ms\",\"den\":\"ttas\"," NPA_W1("taskq") ",\"bound\":0.98}]}"},
  {"Beyond 32 processors more scalable synchronization algorithms improve the applications' times by "
   "more than 2% (003 §6): on a machine of 33 processing units or more, at the largest p measured (past "
   "32), LU with the MCS tree barrier or the task kernel over the MS non-blocking queue takes under 0.98 "
   "of the time of its centralized counterpart.",
   "{\"op\":\"needs_pus\",\"pus\":33,\"rule\":{\"op\":\"any\",\"rules\":["
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"mcs-tree\",\"den\":\"central-faa\","
   "\"where\":{\"kernel\":\"lu\",\"level\":1},\"at\":\"max_threads\",\"min_threads\":33,\"bound\":0.98},"
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"ms\",\"den\":\"ttas\","
   "\"where\":{\"kernel\":\"taskq\",\"level\":1},\"at\":\"max_threads\",\"min_threads\":33,\"bound\":0.98}]}}"},
};
/* clang-format on */

const lab_experiment lab_exp_np99_apps = {
  .name = "np99-apps",
  .paper = "003 Nikolopoulos & Papatheodorou 1999, §6",
  .figure = "Figure 9 (multiprogrammed SPLASH-2 applications)",
  .title = "SPLASH-2-style kernels under multiprogramming: LU with barriers, a task queue; disciplines x schedules",
  .x = "level",
  .log_y = false,
  .claims = np99_apps_claims,
  .nclaims = sizeof np99_apps_claims / sizeof np99_apps_claims[0],
  .uses_registry = false,
  .fixed_algos = npa_fixed,
  .run = np99_apps_run,
};

const lab_experiment lab_exp_np99_apps_dedicated = {
  .name = "np99-apps-dedicated",
  .paper = "003 Nikolopoulos & Papatheodorou 1999, §6",
  .figure = "§6's dedicated runs (in its expanded version)",
  .title = "SPLASH-2-style kernels on a dedicated machine: every registered barrier, queue, stack and lock",
  .x = "threads",
  .log_y = false,
  .claims = np99_apps_dedicated_claims,
  .nclaims = sizeof np99_apps_dedicated_claims / sizeof np99_apps_dedicated_claims[0],
  .uses_registry = true,
  .family = SYNCQ_FAMILY_QUEUE,
  .also_family = true,
  .family2 = SYNCQ_FAMILY_LOCK,
  .fixed_algos = npa_fixed,
  .run = np99_apps_dedicated_run,
};
