/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lc98_apps.c — experiment lc98-apps: 000's Table 4 applications (3-D FFT,
 * connected components, sample sort; §4.3) written on the active-message
 * API (lab/apps/lc98/lc98_apps.c), per packet claim on shared memory and
 * with every peer forced through MPI.
 *
 * The applications need several processes that share an AM job, so they
 * run in syncq-lab-mpi-<impl> under mpirun, which the lab starts itself:
 * one launch per repetition and MPI. The launch of the first MPI found
 * (Open MPI when both are) runs, back to back, the six claims over shared
 * memory (node-local peers through the queue block) and "mpi-forced"
 * (every peer through MPI); the other MPI's launch runs its "mpi-forced".
 * Both launchers are told the same placement (LC98_MPI_PLACEMENT: each
 * rank bound to a core, ranks dealt to the cores in turn), so a variant
 * of one launch and a variant of the other ran on the same processors
 * and the shared-memory path's claim compares like with like; every
 * group records it as its "placement" param.
 * Every run's result is checked (FFT against FFTW, components against a
 * sequential union-find, sort sorted and a permutation); a wrong result
 * fails the run.
 *
 * Metrics per application: time (ms, the run's total), comp and comm (ms,
 * the maximum over ranks of the time in local computation and in
 * communication: 000 Table 4's split). One launch per MPI and repetition
 * runs every application (each variant's job runs them in turn), so the
 * groups of every application and metric report the values of the same
 * launches, repetition by repetition.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lab.h"
#include "lc98_mpi_run.h"
#include "syncq/am.h"

#define APPS_N 4
#define APPS_MAX_VARIANTS (SYNCQ_AM_CLAIM_COUNT + LC98_MPI_MAX)
#define APPS_MAX_KEPT (LAB_MAX_REPS + LAB_WARMUP_REPS)
enum { AM_TIME, AM_COMP, AM_COMM, AM_METRICS };

static const char *const app_names[APPS_N] = {"fft", "cc", "cc-sparse", "sort"};
static const char *const metric_names[AM_METRICS] = {"time", "comp", "comm"};

typedef struct apps_point {
  int app;
  int ranks;
  int var; /* < SYNCQ_AM_CLAIM_COUNT: a claim over shm; else mpi-forced of MPI var - SYNCQ_AM_CLAIM_COUNT */
  int metric;
  uint64_t size;
} apps_point;

static lc98_mpi mpis[LC98_MPI_MAX];
static int nmpis;
static char forced_name[LC98_MPI_MAX][32];

/* Every (application, variant, metric) value the launches gave, in launch
 * order, and how many of them the groups have taken: one launch per MPI
 * measures every application (so one launch serves a repetition of every
 * group), and each group takes the next value in turn. */
static double kept[APPS_N][APPS_MAX_VARIANTS][AM_METRICS][APPS_MAX_KEPT];
static int nkept[APPS_N][APPS_MAX_VARIANTS][AM_METRICS], ntaken[APPS_N][APPS_MAX_VARIANTS][AM_METRICS];
static uint64_t app_size[APPS_N];

static const char *var_name(int v) {
  return v < SYNCQ_AM_CLAIM_COUNT ? syncq_am_claim_name(v) : forced_name[v - SYNCQ_AM_CLAIM_COUNT];
}

/* One launch of MPI k on `ranks` ranks: every application, and the
 * variants of that MPI (the six claims and mpi-forced for the first MPI,
 * mpi-forced for the other). */
static int launch(lab_ctx *ctx, int ranks, int k) {
  char args[512];
  size_t len = (size_t)snprintf(args, sizeof args, "app ");
  for (int a = 0; a < APPS_N; a++)
    len += (size_t)snprintf(args + len, sizeof args - len, "%s%s", a ? "," : "", app_names[a]);
  len += (size_t)snprintf(args + len, sizeof args - len, " ");
  for (int a = 0; a < APPS_N; a++)
    len += (size_t)snprintf(args + len, sizeof args - len, "%s%llu", a ? "," : "", (unsigned long long)app_size[a]);
  if (k == 0)
    for (int c = 0; c < SYNCQ_AM_CLAIM_COUNT; c++)
      len += (size_t)snprintf(args + len, sizeof args - len, " %s", syncq_am_claim_name(c));
  snprintf(args + len, sizeof args - len, " mpi-forced");
  lc98_mpi_line lines[APPS_N * (SYNCQ_AM_CLAIM_COUNT + 1)];
  int nl = lc98_mpi_launch(ctx, &mpis[k], ranks, args, lines, (int)(sizeof lines / sizeof lines[0]));
  if (nl < 0) return -1;
  for (int i = 0; i < nl; i++) {
    char *slash = strchr(lines[i].variant, '/');
    if (slash == NULL) continue;
    *slash = '\0';
    int a = -1, v = -1;
    for (int x = 0; x < APPS_N; x++)
      if (strcmp(lines[i].variant, app_names[x]) == 0) a = x;
    syncq_am_claim c;
    if (strcmp(slash + 1, "mpi-forced") == 0) v = SYNCQ_AM_CLAIM_COUNT + k;
    else if (k == 0 && syncq_am_claim_find(slash + 1, &c) == SYNCQ_OK) v = (int)c;
    if (a < 0 || v < 0) continue;
    if (!lines[i].ok || lines[i].nv != AM_METRICS) {
      lab_fail(ctx, "%s on %d ranks, %s via %s: %s", app_names[a], ranks, var_name(v), mpis[k].impl,
               lines[i].why[0] ? lines[i].why : "no result");
      return -1;
    }
    for (int m = 0; m < AM_METRICS; m++)
      if (nkept[a][v][m] < APPS_MAX_KEPT) kept[a][v][m][nkept[a][v][m]++] = lines[i].v[m];
  }
  return 0;
}

static int apps_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const apps_point *pt = arg;
  memset(out, 0, sizeof *out);
  int a = pt->app, v = pt->var, m = pt->metric;
  if (ntaken[a][v][m] >= nkept[a][v][m]) { /* a new repetition: launch */
    if (launch(ctx, pt->ranks, v < SYNCQ_AM_CLAIM_COUNT ? 0 : v - SYNCQ_AM_CLAIM_COUNT) != 0) return -1;
    if (ntaken[a][v][m] >= nkept[a][v][m]) {
      lab_fail(ctx, "%s: the MPI helper gave no result for %s", app_names[a], var_name(v));
      return -1;
    }
  }
  out->value = kept[a][v][m][ntaken[a][v][m]++];
  return 0;
}

static int apps_run(lab_ctx *ctx) {
  const char *absent = NULL;
  nmpis = lc98_mpi_list(mpis, LC98_MPI_MAX, &absent);
  uint64_t *sizes = app_size;
  uint64_t sz[APPS_N] = {lab_by_size(ctx, 16, 32, 64, 128), lab_by_size(ctx, 64, 256, 512, 1024),
                         lab_by_size(ctx, 64, 256, 512, 1024), lab_by_size(ctx, 4096, 65536, 1u << 20, 1u << 22)};
  memcpy(app_size, sz, sizeof sz);
  int ranks[3], nranks = 0;
  ranks[nranks++] = 2;
  if (lab_get_size(ctx) >= LAB_SIZE_DEFAULT) ranks[nranks++] = 4;
  if (lab_get_size(ctx) == LAB_SIZE_FULL) ranks[nranks++] = 1;
  lab_begin(ctx,
            "000 §4.3, Table 4: Split-C-style bulk-synchronous applications written on the active-message "
            "API, one process per MPI rank (syncq-lab-mpi-<impl>, started by syncq-lab under mpirun). fft: "
            "3-D FFT of %llu^3 complex values in slabs, transposed by bulk puts; checked against FFTW. cc: "
            "connected components of a %llu x %llu grid graph (edges with probability 0.55) by local "
            "union-find and rounds of ghost-row exchange, the communication-bound input; cc-sparse: the same "
            "with probability 0.30 (small components, mostly local), the computation-bound one; both checked "
            "against a sequential union-find. sort: "
            "sample sort of %llu 32-bit keys per rank; checked sorted and a permutation. Variants: the six "
            "packet claims with node-local peers through the queue block, and mpi-forced@<mpi> with every "
            "peer through MPI. Both MPIs' launchers bind each rank to a core, ranks dealt to the cores in "
            "turn (placement=" LC98_MPI_PLACEMENT
            "). time = total (ms); comp and comm = the maximum over "
            "ranks of local computation and of communication (sends, polls, barriers), from the same runs.",
            (unsigned long long)sizes[0], (unsigned long long)sizes[1], (unsigned long long)sizes[1],
            (unsigned long long)sizes[2]);
  if (nmpis == 0) {
    lab_note(ctx, "not run: %s (the applications need MPI ranks)", absent);
    return 0;
  }
  for (int k = 0; k < nmpis; k++) {
    snprintf(forced_name[k], sizeof forced_name[k], "mpi-forced@%.15s", mpis[k].impl);
    char cmd[640];
    lc98_mpi_command(&mpis[k], ranks[0], cmd, sizeof cmd);
    if (!lab_planning(ctx))
      lab_note(ctx, "syncq-lab starts `%s %s app <fft|cc|sort> <size> <variants>` itself, one launch per repetition%s",
               cmd, mpis[k].helper, k == 0 ? " (the six claims and mpi-forced)" : " (mpi-forced)");
  }
  if (lab_pus(ctx) < 4 && !lab_planning(ctx))
    lab_note(ctx,
             "%d processing units: with more ranks than units, polling ranks share processors (000 ran one "
             "process per processor)",
             lab_pus(ctx));
  static apps_point pts[3][APPS_N][AM_METRICS][APPS_MAX_VARIANTS];
  if (!lab_planning(ctx))
    lab_note(ctx,
             "every rank runs on this host: points across hosts need mpirun with a hostfile (docs/am-mpi.md) "
             "and are not measured here");
  for (int ri = 0; ri < nranks; ri++) {
    memset(nkept, 0, sizeof nkept); /* values are per rank count */
    memset(ntaken, 0, sizeof ntaken);
    for (int a = 0; a < APPS_N; a++)
      for (int m = 0; m < AM_METRICS; m++) {
        lab_group g;
        memset(&g, 0, sizeof g);
        lab_group_param(&g, "threads", ranks[ri]);
        lab_group_param_str(&g, "app", app_names[a]);
        lab_group_param_str(&g, "placement", LC98_MPI_PLACEMENT);
        g.metric = metric_names[m];
        g.unit = "ms";
        g.sample = apps_sample;
        for (int v = 0; v < SYNCQ_AM_CLAIM_COUNT + nmpis; v++) {
          pts[ri][a][m][v] = (apps_point){a, ranks[ri], v, m, sizes[a]};
          g.variants[g.nvariants++] = (lab_variant){var_name(v), &pts[ri][a][m][v]};
        }
        if (m == AM_TIME) g.normalize_to = "lock-free";
        if (lab_run_group(ctx, &g) != 0) return -1;
      }
  }
  return 0;
}

/* clang-format off */
#define APP_BELOW(num, den, app)                                                                          \
  "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"" num "\",\"den\":\"" den "\",\"where\":{\"app\":\"" app \
  "\"},\"bound\":1.0}"
/* clang-format on */
/* clang-format off */
#define LF_BEATS_LOCKS(app)                                                                               \
  "{\"op\":\"all\",\"rules\":[" APP_BELOW("lock-free", "tas", app) "," APP_BELOW("lock-free", "ttas", app) "," \
  APP_BELOW("lock-free", "ticket", app) "," APP_BELOW("lock-free", "anderson", app) "," APP_BELOW(       \
      "lock-free", "posix-mutex", app) "]}"
/* clang-format on */
/* clang-format off */
#define TICKET_BEST_LOCK(app)                                                                             \
  "{\"op\":\"all\",\"rules\":[" APP_BELOW("ticket", "tas", app) "," APP_BELOW("ticket", "ttas", app) ","     \
  APP_BELOW("ticket", "anderson", app) "," APP_BELOW("ticket", "posix-mutex", app) "]}"
/* clang-format on */
/* clang-format off */
#define SHM_BEATS_MPI(app)                                                                                \
  "{\"op\":\"all\",\"rules\":[" APP_BELOW("lock-free", "mpi-forced@openmpi", app) "," APP_BELOW(           \
      "lock-free", "mpi-forced@mpich", app) "]}"
/* clang-format on */

/* clang-format off */
static const lab_claim apps_claims[] = {
  {"000 §4.3, Table 4: in the applications the lock-free claim is generally fastest; here, for each of "
   "fft, cc, cc-sparse and sort, its time is below every lock's (interleaved runs, same launch).",
   "{\"op\":\"all\",\"rules\":[" LF_BEATS_LOCKS("fft") "," LF_BEATS_LOCKS("cc") "," LF_BEATS_LOCKS("cc-sparse") "," LF_BEATS_LOCKS(
      "sort") "]}"},
  {"000 §4.3, Table 4: the ticket lock is the best lock; here its time is below the other locks' in "
   "each application.",
   "{\"op\":\"all\",\"rules\":[" TICKET_BEST_LOCK("fft") "," TICKET_BEST_LOCK("cc") "," TICKET_BEST_LOCK(
      "cc-sparse") "," TICKET_BEST_LOCK("sort") "]}"},
  {"syncq target: on one node the shared-memory path beats the network path: each application with the "
   "lock-free claim over the queue block is faster than with every peer forced through MPI, with both MPIs "
   "(every launch with the same placement: each rank bound to a core).",
   "{\"op\":\"all\",\"rules\":[" SHM_BEATS_MPI("fft") "," SHM_BEATS_MPI("cc") "," SHM_BEATS_MPI("cc-sparse") "," SHM_BEATS_MPI(
      "sort") "]}"},
};
/* clang-format on */

static const char *const apps_fixed[] = {
  "tas", "ttas", "ticket", "anderson", "posix-mutex", "lock-free", "mpi-forced@openmpi", "mpi-forced@mpich", NULL};

const lab_experiment lab_exp_lc98_apps = {
  .name = "lc98-apps",
  .paper = "000 Lumetta & Culler, §4.3",
  .figure = "Table 4",
  .title =
    "Applications over active messages (3-D FFT, connected components, sample sort): per claim, and "
    "forced through MPI",
  .x = NULL,
  .log_y = false,
  .claims = apps_claims,
  .nclaims = sizeof apps_claims / sizeof apps_claims[0],
  .fixed_algos = apps_fixed,
  .run = apps_run,
};
