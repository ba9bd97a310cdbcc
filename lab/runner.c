/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * runner.c — runs experiments: plans the work, measures each group with
 * interleaved repetitions, keeps median/min/max, shows progress, and writes
 * the results (see lab.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "budget.h"
#include "claimed.h"
#include "lab.h"
#include "peers.h"
#include "po_faults.h"
#include "results.h"
#include "syncq/clock.h"
#include "syncq/po.h"

#if defined(SYNCQ_HAVE_GIT_REVISION_H)
#include "git_revision.h"
#else
#define SYNCQ_GIT_REVISION "unknown"
#endif
#ifndef SYNCQ_C_FLAGS
#define SYNCQ_C_FLAGS "unknown"
#endif
#ifndef SYNCQ_BUILD_TYPE
#define SYNCQ_BUILD_TYPE "unknown"
#endif

#define NS_PER_S 1e9
#define SIZE_NAMES_INIT \
  { "smoke", "quick", "default", "full" }

/* What an experiment's process hands back to the runner's (lab_run: each
 * experiment runs in a child forked for it). It lives in a shared anonymous
 * mapping, so the counters the child moves as it measures are the parent's
 * too, up to the last point before a crash. Only the one child writes them
 * while it runs (a grandchild an experiment forks never touches them), and
 * the parent writes them only between two children. The parent reads the
 * plain fields after waitpid() has reaped the child; `done` and
 * `last_point_ns` its watchdog reads while the child runs (lab_run), so
 * they are atomics, lock-free and so address-free in a shared mapping.
 * Without a fork (--no-fork) it is the runner's own memory. */
typedef struct lab_shared {
  _Atomic long done;              /* variant-points measured so far, the whole run (progress) */
  _Atomic uint64_t last_point_ns; /* syncq_now_ns() when the latest of them was measured */
  long failed_points;             /* variant-points whose sample failed: recorded, the run went on */
  long dropped;                   /* planned variant-points never to be measured: a failed variant's,
                                     the rest of an experiment that stopped (the progress line's total) */
  /* the experiment's outcome, set by its child just before it exits */
  bool reported;     /* the child finished the experiment and wrote what follows */
  bool failed;       /* it stopped early (run() returned an error or lab_fail) */
  char failure[512]; /* why, when failed */
} lab_shared;
_Static_assert(ATOMIC_LONG_LOCK_FREE == 2 && ATOMIC_LLONG_LOCK_FREE == 2,
               "lab_shared's atomics are shared between processes");

/* An experiment's share of the plan (the counting pass): its variant-points
 * and those a claim reads, for its watchdog's estimate. */
typedef struct lab_exp_plan {
  long points, claimed;
} lab_exp_plan;

struct lab_ctx {
  const lab_options *opt;
  const lab_experiment *exp;
  lab_topo *topo;
  int pus;              /* the machine's processing units (lab_real_pus) */
  char pus_source[832]; /* where that count came from: the machine record's pus_source */
  lab_results results;
  bool planning;
  bool failed;
  lab_shared *shared;       /* counters an experiment's process hands back (above) */
  int failed_experiments;   /* experiments that stopped early or died */
  bool pin_refused;         /* the probe could not pin: run unpinned */
  lab_claimed **claimed;    /* per experiment of the run: the points its claims read */
  lab_claimed *cur_claimed; /* the running experiment's */
  lab_exp_plan *plan_of;    /* per experiment of the run: its share of the plan */
  /* the plan: a second planning pass counts what the claims read */
  bool counting;
  long claimed_points;                      /* variant-points a claim reads, whole run */
  long exp_points, exp_claimed;             /* the same for the experiment being counted */
  double exp_threads[LAB_MAX_THREADS_LIST]; /* its groups' distinct thread counts */
  int exp_nthreads;
  lab_budget budget;    /* the per-variant budgets fitted to the plan (budget.h) */
  lab_perf_counts perf; /* the sample being measured: its teams' event counts (lab_perf_sample_add) */
  /* progress */
  long planned; /* variant-points in the whole run (shared->done: measured so far) */
  uint64_t t_start;
  char failure[512];
};

static const char *const size_names[] = SIZE_NAMES_INIT;

bool lab_planning(const lab_ctx *ctx) { return ctx->planning; }
lab_size lab_get_size(const lab_ctx *ctx) { return ctx->opt->size; }
lab_queue_wait lab_get_queue_wait(const lab_ctx *ctx) { return ctx->opt->queue_wait; }
lab_topo *lab_ctx_topo(lab_ctx *ctx) { return ctx->topo; }
bool lab_pinning_enabled(const lab_ctx *ctx) { return ctx->opt->pin && ctx->topo != NULL && !ctx->pin_refused; }
bool lab_perf_counters_enabled(const lab_ctx *ctx) {
  if (ctx->opt->perf_mode == LAB_PERF_DEFAULT) return ctx->exp != NULL && ctx->exp->perf_counters;
  return ctx->opt->perf_mode == LAB_PERF_ALL;
}
void lab_perf_sample_add(lab_ctx *ctx, const lab_perf_counts *c) { lab_perf_counts_add(&ctx->perf, c); }
int lab_real_pus(const lab_ctx *ctx) { return ctx->pus > 0 ? ctx->pus : 1; }
int lab_pus(const lab_ctx *ctx) { return ctx->opt->plan_pus > 0 ? ctx->opt->plan_pus : lab_real_pus(ctx); }

uint64_t lab_by_size(const lab_ctx *ctx, uint64_t smoke, uint64_t quick, uint64_t dflt, uint64_t full) {
  switch (ctx->opt->size) {
  case LAB_SIZE_SMOKE:
    return smoke;
  case LAB_SIZE_QUICK:
    return quick;
  case LAB_SIZE_FULL:
    return full;
  case LAB_SIZE_DEFAULT:
    break;
  }
  return dflt;
}

static int push_unique(int *out, int n, int cap, int v) {
  for (int i = 0; i < n; i++)
    if (out[i] == v) return n;
  if (n < cap) out[n++] = v;
  return n;
}

int lab_threads(const lab_ctx *ctx, int *out, int cap) {
  if (ctx->opt->nthreads > 0) {
    int n = ctx->opt->nthreads < cap ? ctx->opt->nthreads : cap;
    memcpy(out, ctx->opt->threads, (size_t)n * sizeof *out);
    return n;
  }
  return lab_threads_plan(lab_pus(ctx), out, cap);
}

int lab_threads_plan(int pus, int *out, int cap) {
  if (pus < 1) pus = 1;
  if (out == NULL || cap < 1) return 0;
  int max = 2 * pus, n = 0;
  /* Every count up to 4, then powers of two up to the PU count and the PU
   * count itself, then oversubscribed 1.5x and 2x: dense on a small
   * machine, logarithmic on a large one. */
  for (int t = 1; t <= max && t <= 4; t++) n = push_unique(out, n, cap, t);
  for (int t = 8; t <= pus; t *= 2) n = push_unique(out, n, cap, t);
  n = push_unique(out, n, cap, pus);
  n = push_unique(out, n, cap, pus + pus / 2);
  n = push_unique(out, n, cap, max);
  /* keep increasing order */
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && out[j - 1] > out[j]; j--) {
      int t = out[j];
      out[j] = out[j - 1];
      out[j - 1] = t;
    }
  return n;
}

bool lab_selected(const lab_ctx *ctx, const char *algo) {
  if (ctx->opt->nalgos == 0) return true;
  size_t base = strcspn(algo, "@"); /* "mcs@block" goes with "mcs" */
  for (int i = 0; i < ctx->opt->nalgos; i++) {
    const char *s = ctx->opt->algos[i];
    if (strcmp(s, algo) == 0 || (algo[base] == '@' && strlen(s) == base && strncmp(s, algo, base) == 0)) return true;
  }
  return false;
}

void lab_group_param(lab_group *g, const char *key, double num) {
  if (g->nparams < LAB_MAX_PARAMS) g->params[g->nparams++] = (lab_param){key, num, NULL};
}

void lab_group_param_str(lab_group *g, const char *key, const char *str) {
  if (g->nparams < LAB_MAX_PARAMS) g->params[g->nparams++] = (lab_param){key, 0, str};
}

static json_t *vformat_string(const char *fmt, va_list ap) {
  char buf[4096];
  vsnprintf(buf, sizeof buf, fmt, ap);
  return json_string(buf);
}

void lab_begin(lab_ctx *ctx, const char *fmt, ...) {
  if (ctx->planning) return;
  const lab_experiment *e = ctx->exp;
  json_t *o = json_object();
  json_object_set_new(o, "name", json_string(e->name));
  json_object_set_new(o, "paper", json_string(e->paper));
  json_object_set_new(o, "figure", json_string(e->figure));
  json_object_set_new(o, "title", json_string(e->title));
  va_list ap;
  va_start(ap, fmt);
  json_object_set_new(o, "description", vformat_string(fmt, ap));
  va_end(ap);
  json_object_set_new(o, "x", e->x ? json_string(e->x) : json_null());
  json_object_set_new(o, "log_y", json_boolean(e->log_y));
  json_object_set_new(o, "log_x", json_boolean(e->log_x));
  if (e->also_x != NULL) {
    json_error_t err;
    json_t *also = json_loads(e->also_x, 0, &err);
    if (also != NULL) json_object_set_new(o, "also_x", also); /* tests/lab: every also_x parses */
  }
  json_t *claims = json_array();
  for (size_t i = 0; i < e->nclaims; i++) {
    json_error_t err;
    json_t *rule = json_loads(e->claims[i].rule, 0, &err);
    if (rule == NULL) /* caught by tests/lab: every rule parses */
      rule = json_pack("{s:s, s:s}", "op", "not_measurable", "why", "rule did not parse");
    json_array_append_new(claims, json_pack("{s:s, s:o}", "text", e->claims[i].text, "rule", rule));
  }
  json_object_set_new(o, "claims", claims);
  json_object_set_new(o, "notes", json_array());
  if (lab_results_write(&ctx->results, "experiment", o) != 0) {
    ctx->failed = true;
    snprintf(ctx->failure, sizeof ctx->failure, "writing results: %s", strerror(errno));
  }
}

void lab_note(lab_ctx *ctx, const char *fmt, ...) {
  if (ctx->planning) return;
  va_list ap;
  va_start(ap, fmt);
  json_t *text = vformat_string(fmt, ap);
  va_end(ap);
  fprintf(stderr, "syncq-lab: %s: note: %s\n", ctx->exp->name, json_string_value(text));
  json_t *o = json_object();
  json_object_set_new(o, "experiment", json_string(ctx->exp->name));
  json_object_set_new(o, "text", text);
  (void)lab_results_write(&ctx->results, "note", o);
}

void lab_fail(lab_ctx *ctx, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ctx->failure, sizeof ctx->failure, fmt, ap);
  va_end(ap);
  ctx->failed = true;
}

/* Median of n values (1 <= n <= LAB_MAX_REPS) without reordering them:
 * lab_median sorts in place, and the samples keep measurement order. */
static double median_of(const double *v, int n) {
  double tmp[LAB_MAX_REPS];
  memcpy(tmp, v, (size_t)n * sizeof *v);
  return lab_median(tmp, (size_t)n);
}

/* The per-operation counters a point reports: name and field offset. */
static const struct {
  const char *name;
  size_t off;
} counter_fields[] = {
  {"cas_per_op", offsetof(syncq_stats, cas_attempts)},
  {"cas_fail_per_op", offsetof(syncq_stats, cas_failures)},
  {"retries_per_op", offsetof(syncq_stats, retries)},
  {"backoffs_per_op", offsetof(syncq_stats, backoffs)},
  {"yields_per_op", offsetof(syncq_stats, yields)},
  {"blocks_per_op", offsetof(syncq_stats, blocks)},
  /* the ticket queues' time past their ticket (docs/queues.md) */
  {"deq_waits_per_op", offsetof(syncq_stats, deq_waits)},
  {"deq_wait_pauses_per_op", offsetof(syncq_stats, deq_wait_pauses)},
  {"deq_waits_out_per_op", offsetof(syncq_stats, deq_waits_out)},
  {"enq_cells_lost_per_op", offsetof(syncq_stats, enq_cells_lost)},
  {"rings_closed_per_op", offsetof(syncq_stats, rings_closed)},
  {"enq_slow_per_op", offsetof(syncq_stats, enq_slow)},
};
#define N_STAT_COUNTERS (sizeof counter_fields / sizeof counter_fields[0])
/* After the syncq_stats ones: the OS's count, then the experiment's own
 * (lab_sample's empty_polls and full_polls; 0 where it keeps none), then
 * the workers' event counters (perf_counters.h, in lab_perf_default_specs'
 * order) and, where the PMU multiplexed them, the smallest fraction of its
 * enabled time a scaled one ran (not per op). */
#define CTX_COUNTER N_STAT_COUNTERS
#define EMPTY_POLL_COUNTER (N_STAT_COUNTERS + 1)
#define FULL_POLL_COUNTER (N_STAT_COUNTERS + 2)
#define PERF_COUNTER (N_STAT_COUNTERS + 3)
#define PERF_FRACTION_COUNTER (PERF_COUNTER + LAB_PERF_DEFAULT_EVENTS)
#define N_COUNTERS (PERF_FRACTION_COUNTER + 1)

static const char *const perf_counter_names[] = {
  "cycles_per_op",        "instructions_per_op", "llc_misses_per_op",
  "branch_misses_per_op", "page_faults_per_op",  "cpu_migrations_per_op",
};
_Static_assert(sizeof perf_counter_names / sizeof perf_counter_names[0] == LAB_PERF_DEFAULT_EVENTS,
               "a name per lab_perf_default_specs event");

static const char *counter_name(size_t c) {
  if (c == CTX_COUNTER) return "ctx_switches_per_op";
  if (c == EMPTY_POLL_COUNTER) return "empty_polls_per_op";
  if (c == FULL_POLL_COUNTER) return "full_polls_per_op";
  if (c == PERF_FRACTION_COUNTER) return "perf_running_fraction";
  if (c >= PERF_COUNTER) return perf_counter_names[c - PERF_COUNTER];
  return counter_fields[c].name;
}

static uint64_t stat_field(const syncq_stats *s, size_t off) {
  return *(const uint64_t *)(const void *)((const char *)s + off);
}

static uint64_t sample_counter(const lab_sample *s, size_t c, uint64_t csw, const lab_perf_counts *perf) {
  if (c == CTX_COUNTER) return csw;
  if (c == EMPTY_POLL_COUNTER) return s->empty_polls;
  if (c == FULL_POLL_COUNTER) return s->full_polls;
  if (c >= PERF_COUNTER) return c < PERF_FRACTION_COUNTER ? perf->value[c - PERF_COUNTER] : 0;
  return stat_field(&s->stats, counter_fields[c].off);
}

/* A counter the sample read, whatever it counted: an event counter every
 * team of the sample read (a 0 there is a count: no migration), and the
 * running fraction where a read was scaled. The others are read when not
 * 0 (a counter that stayed 0 in every sample is left out). */
static bool sample_read(size_t c, uint64_t x, const lab_perf_counts *perf) {
  if (c == PERF_FRACTION_COUNTER) return perf->scaled != 0;
  if (c >= PERF_COUNTER) return perf->sets > 0 && (perf->present >> (c - PERF_COUNTER) & 1u);
  return x != 0;
}

/* Context switches (voluntary and involuntary) of the whole process so
 * far, threads that have exited included: the OS counts them for us, so
 * they are there even where hardware counters are not. */
static uint64_t process_ctx_switches(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
}

static void format_params(const lab_group *g, char *buf, size_t len) {
  size_t k = 0;
  buf[0] = '\0';
  for (int i = 0; i < g->nparams && k < len; i++) {
    const lab_param *p = &g->params[i];
    if (p->str) k += (size_t)snprintf(buf + k, len - k, "%s%s=%s", i ? " " : "", p->key, p->str);
    else k += (size_t)snprintf(buf + k, len - k, "%s%s=%g", i ? " " : "", p->key, p->num);
  }
}

static void format_eta(double s, char *buf, size_t len) {
  if (s < 0 || !isfinite(s)) snprintf(buf, len, "?");
  else if (s < 60) snprintf(buf, len, "%.0fs", s);
  else if (s < 3600) snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
  else snprintf(buf, len, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
}

/* The registry entry of a point's algorithm (and its family), or NULL.
 * Variant names may carry a suffix after '/' or '@' (a waiting discipline,
 * "mcs/spin"): the part before it is looked up. */
static const syncq_algo *registry_entry(const char *algo, syncq_family *family) {
  char base[128];
  snprintf(base, sizeof base, "%s", algo);
  base[strcspn(base, "/@")] = '\0';
  for (int f = 0; f < SYNCQ_FAMILY_COUNT; f++) {
    const syncq_algo *a;
    if (syncq_registry_find((syncq_family)f, base, &a) != SYNCQ_OK) continue;
    if (family != NULL) *family = (syncq_family)f;
    return a;
  }
  return NULL;
}

static bool is_peer(const char *algo) {
  const syncq_algo *a = registry_entry(algo, NULL);
  return a != NULL && (a->props & SYNCQ_PROP_PEER) != 0;
}

/* The registry's word on a point's algorithm: "family", "props" and "peer"
 * (a structure from a peer library, lab/peers/). Variant names may carry a
 * suffix after '/' (a waiting discipline, "mcs/spin"): the part before it is
 * looked up. Names that are no registry entry (phys floors, ...) get
 * "peer": false and nothing else. */
static void describe_algorithm(json_t *o, const char *algo) {
  syncq_family f;
  const syncq_algo *a = registry_entry(algo, &f);
  if (a != NULL) {
    char props[256];
    syncq_props_format(a->props, props, sizeof props);
    json_object_set_new(o, "family", json_string(syncq_family_name(f)));
    json_object_set_new(o, "props", json_string(props));
    json_object_set_new(o, "peer", json_boolean((a->props & SYNCQ_PROP_PEER) != 0));
    return;
  }
  json_object_set_new(o, "peer", json_false());
}

static int write_point(lab_ctx *ctx, const lab_group *g, const char *algo, const char *metric, const char *unit,
                       bool higher_is_better, const double *vals, int reps, double counters[][LAB_MAX_REPS],
                       const bool *has_counter) {
  json_t *o = json_object();
  json_object_set_new(o, "experiment", json_string(ctx->exp->name));
  json_object_set_new(o, "algorithm", json_string(algo));
  describe_algorithm(o, algo);
  json_t *params = json_object();
  for (int i = 0; i < g->nparams; i++) {
    const lab_param *p = &g->params[i];
    json_object_set_new(params, p->key, p->str ? json_string(p->str) : json_real(p->num));
  }
  json_object_set_new(o, "params", params);
  if (ctx->exp->postoffice) {
    /* The deadline clock as it stands now, after the point's last sample:
     * a rate check that tripped in this process shows here, not in the
     * machine record, which a launch writes before its runs. */
    char gate[SYNCQ_PO_CLOCK_GATE_LEN];
    if (syncq_po_clock_gate(NULL, gate, sizeof gate) != SYNCQ_OK) snprintf(gate, sizeof gate, "unknown");
    json_object_set_new(o, "po_clock_gate", json_string(gate));
  }
  json_object_set_new(o, "metric", json_string(metric));
  json_object_set_new(o, "unit", json_string(unit));
  json_object_set_new(o, "better", json_string(higher_is_better ? "higher" : "lower"));
  double lo = vals[0], hi = vals[0];
  json_t *samples = json_array();
  for (int r = 0; r < reps; r++) {
    lo = vals[r] < lo ? vals[r] : lo;
    hi = vals[r] > hi ? vals[r] : hi;
    json_array_append_new(samples, json_real(vals[r]));
  }
  json_object_set_new(o, "median", json_real(median_of(vals, reps)));
  json_object_set_new(o, "min", json_real(lo));
  json_object_set_new(o, "max", json_real(hi));
  json_object_set_new(o, "samples", samples);
  json_t *cs = json_object();
  for (size_t c = 0; c < N_COUNTERS && counters != NULL; c++)
    if (has_counter[c]) json_object_set_new(cs, counter_name(c), json_real(median_of(counters[c], reps)));
  json_object_set_new(o, "counters", cs);
  return lab_results_write(&ctx->results, "point", o);
}

/* The "<metric>_ratio" points of a group with normalize_to (see lab.h). */
static int write_ratios(lab_ctx *ctx, const lab_group *g, const int *idx, int nv, double (*values)[LAB_MAX_REPS],
                        const int *count, const char *of_metric, bool higher_is_better) {
  int ref = -1;
  for (int k = 0; k < nv; k++)
    if (strcmp(g->variants[idx[k]].algorithm, g->normalize_to) == 0) ref = k;
  if (ref < 0) return 0;         /* the reference was filtered out by --algos */
  if (count[ref] == 0) return 0; /* the reference failed: no ratios */
  char metric[128];
  snprintf(metric, sizeof metric, "%s_ratio", of_metric);
  for (int k = 0; k < nv; k++) {
    double ratio[LAB_MAX_REPS];
    int reps = count[k] < count[ref] ? count[k] : count[ref]; /* the repetitions made side by side */
    if (reps == 0) continue;                                  /* a variant that failed */
    for (int r = 0; r < reps; r++) ratio[r] = values[ref][r] > 0 ? values[k][r] / values[ref][r] : 0.0;
    if (write_point(ctx, g, g->variants[idx[k]].algorithm, metric, "x", higher_is_better, ratio, reps, NULL, NULL) !=
        0) {
      lab_fail(ctx, "writing results: %s", strerror(errno));
      return -1;
    }
  }
  return 0;
}

/* True when the group has parameter w->key with one of w's values. */
static bool where_matches(const struct lab_where *w, const lab_group *g) {
  for (int p = 0; p < g->nparams; p++) {
    if (strcmp(g->params[p].key, w->key) != 0) continue;
    for (int k = 0; k < w->nvals; k++) {
      if (g->params[p].str != NULL) {
        if (strcmp(g->params[p].str, w->vals[k]) == 0) return true;
      } else {
        char *end;
        double v = strtod(w->vals[k], &end);
        if (end != w->vals[k] && *end == '\0' && v == g->params[p].num) return true;
      }
    }
    return false;
  }
  return false;
}

/* True when no --where excludes the point. */
static bool where_selected(const lab_ctx *ctx, const lab_group *g) {
  for (int i = 0; i < ctx->opt->nwhere; i++)
    if (!where_matches(&ctx->opt->where[i], g)) return false;
  return true;
}

const char *lab_git_revision(void) { return SYNCQ_GIT_REVISION; }

/* Mark the variants (idx[0..nv-1]) whose points a claim reads (claimed.h),
 * and the reference of the group's ratios with them; returns their count. */
static int mark_claimed(const lab_ctx *ctx, const lab_group *g, const int *idx, int nv, bool *claimed) {
  int nclaimed = 0;
  for (int k = 0; k < nv; k++) {
    const char *a = g->variants[idx[k]].algorithm;
    claimed[k] = lab_claimed_reads(ctx->cur_claimed, g, a, is_peer(a));
    nclaimed += claimed[k];
  }
  for (int k = 0; k < nv && nclaimed > 0 && g->normalize_to != NULL; k++)
    if (!claimed[k] && strcmp(g->variants[idx[k]].algorithm, g->normalize_to) == 0) {
      claimed[k] = true;
      nclaimed++;
    }
  return nclaimed;
}

/* The counting pass: the plan's variant-points, claimed ones and thread counts. */
static void count_group(lab_ctx *ctx, const lab_group *g, const int *idx, int nv) {
  bool claimed[LAB_MAX_VARIANTS];
  int c = mark_claimed(ctx, g, idx, nv, claimed);
  ctx->claimed_points += c;
  ctx->exp_claimed += c;
  ctx->exp_points += nv;
  for (int i = 0; i < g->nparams && nv > 0; i++) {
    if (strcmp(g->params[i].key, "threads") != 0 || g->params[i].str != NULL) continue;
    int k = 0;
    while (k < ctx->exp_nthreads && ctx->exp_threads[k] != g->params[i].num) k++;
    if (k == ctx->exp_nthreads && k < LAB_MAX_THREADS_LIST) ctx->exp_threads[ctx->exp_nthreads++] = g->params[i].num;
  }
}

/* True when the environment variable `var` names this point's variant as
 * <experiment>:<algorithm>. */
static bool injected(const lab_ctx *ctx, const char *var, const char *algorithm) {
  const char *spec = getenv(var);
  if (spec == NULL) return false;
  size_t n = strlen(ctx->exp->name);
  return strncmp(spec, ctx->exp->name, n) == 0 && spec[n] == ':' && strcmp(spec + n + 1, algorithm) == 0;
}

/* SYNCQ_LAB_FAIL=<experiment>:<algorithm>: that variant's samples fail, as
 * a failed check would, so the lab's tests can see a run go on past a
 * failed point (tests/lab/test_lab_cli.py). Not for measuring. */
static bool injected_failure(lab_ctx *ctx, const char *algorithm) {
  if (!injected(ctx, "SYNCQ_LAB_FAIL", algorithm)) return false;
  lab_fail(ctx, "injected failure (SYNCQ_LAB_FAIL=%s)", getenv("SYNCQ_LAB_FAIL"));
  return true;
}

/* SYNCQ_LAB_CRASH=<experiment>:<algorithm>: that variant's first sample
 * kills the experiment's process with SIGSEGV, as a peer library's bad
 * access would, so the lab's tests can see a suite go on past an
 * experiment that crashed. The default action is restored first: a
 * sanitizer's handler would turn the signal into an exit. Not for
 * measuring. */
static void injected_crash(const lab_ctx *ctx, const char *algorithm) {
  if (injected(ctx, "SYNCQ_LAB_CRASH", algorithm)) {
    (void)fflush(NULL);
    (void)signal(SIGSEGV, SIG_DFL);
    (void)raise(SIGSEGV);
  }
  /* SYNCQ_LAB_EXIT=<experiment>:<algorithm>: the same sample calls
   * exit(3) instead, as a library that gives up on an error would. */
  if (injected(ctx, "SYNCQ_LAB_EXIT", algorithm)) exit(3);
  /* SYNCQ_LAB_HANG=<experiment>:<algorithm>: the same sample never
   * returns, as a lost wake-up would leave it, and forks a process that
   * waits forever too, as an experiment's own processes (lc98-*) would: the
   * watchdog must stop both. */
  if (injected(ctx, "SYNCQ_LAB_HANG", algorithm)) {
    (void)fflush(NULL);
    (void)fork(); /* parent and child alike wait below; failing to fork leaves the parent's hang */
    for (;;) (void)pause();
  }
}

/* SYNCQ_LAB_SLOW=<experiment>:<algorithm>: the first sample of that
 * variant in the experiment's process starts 1 s late, slept in 10 ms
 * steps, so that the time the process spends stopped (^Z) hardly
 * shortens it: the lab's tests can stop an experiment that is still
 * running and see it run on once continued. Not for measuring. */
static void injected_delay(const lab_ctx *ctx, const char *algorithm) {
  static bool slept; /* per process: each experiment's is forked afresh */
  if (slept || !injected(ctx, "SYNCQ_LAB_SLOW", algorithm)) return;
  slept = true;
  for (int k = 0; k < 100; k++) {
    struct timespec step = {0, 10000000};
    (void)nanosleep(&step, NULL); /* a step cut short by a signal is not made up: 10 ms at most */
  }
}

/* SYNCQ_LAB_FORK_WAIT=<experiment>: the lab waits 2 s between starting
 * that experiment's process and installing its signal handlers for it,
 * and the process 4 s before it runs, so that the lab's tests can send a
 * job-control stop into that window. Not for measuring. */
static void injected_fork_wait(const lab_ctx *ctx, int seconds) {
  const char *spec = getenv("SYNCQ_LAB_FORK_WAIT");
  if (spec == NULL || strcmp(spec, ctx->exp->name) != 0) return;
  struct timespec left = {seconds, 0};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

/* A variant's sample failed (the experiment's sample returned an error or
 * called lab_fail: a failed check, a status the structure returned, a
 * non-finite value): say so on stderr and in a note of the results, and go
 * on with the others; the run's exit status says it (lab_run). Every
 * failure is kept, so a lost item or a broken mutual exclusion cannot
 * hide in a run that went on. */
static void point_failed(lab_ctx *ctx, const char *algorithm, const char *pbuf, int rep) {
  fprintf(stderr, "syncq-lab: %s: %s %s: FAILED: %s\n", ctx->exp->name, algorithm, pbuf, ctx->failure);
  lab_note(ctx, "FAILED: %s%s%s (%s %d): %s; not measured further in this run", algorithm, pbuf[0] ? " " : "", pbuf,
           rep < 0 ? "warm-up sample" : "repetition", rep < 0 ? -rep : rep + 1, ctx->failure);
  ctx->shared->failed_points++;
  ctx->shared->dropped++; /* the variant's point of this group is never written */
  ctx->failed = false;
  ctx->failure[0] = '\0';
}

int lab_run_group(lab_ctx *ctx, const lab_group *g) {
  if (ctx->failed) return -1;
  if (!where_selected(ctx, g)) return 0;
  int idx[LAB_MAX_VARIANTS] = {0}, nv = 0;
  for (int v = 0; v < g->nvariants; v++)
    if (lab_selected(ctx, g->variants[v].algorithm)) idx[nv++] = v;
  if (ctx->planning && ctx->counting) {
    count_group(ctx, g, idx, nv);
    return 0;
  }
  if (ctx->planning) {
    ctx->planned += nv;
    for (int k = 0; k < nv; k++) lab_claimed_plan(ctx->cur_claimed, g, g->variants[idx[k]].algorithm);
    return 0;
  }
  if (nv == 0) return 0;

  int reps = ctx->opt->reps;
  int warm = ctx->opt->size == LAB_SIZE_SMOKE ? 0 : LAB_WARMUP_REPS;
  /* values[v][r], counters[v][c][r] */
  double(*values)[LAB_MAX_REPS] = calloc((size_t)nv, sizeof *values);
  double(*counters)[N_COUNTERS][LAB_MAX_REPS] = calloc((size_t)nv, sizeof *counters);
  bool(*has)[N_COUNTERS] = calloc((size_t)nv, sizeof *has);
  /* xvalues[e][v][r]: the extra metrics */
  double(*xvalues)[LAB_MAX_VARIANTS][LAB_MAX_REPS] = calloc(LAB_MAX_EXTRA, sizeof *xvalues);
  if (!values || !counters || !has || !xvalues || g->nextra < 0 || g->nextra > LAB_MAX_EXTRA) {
    free(values), free(counters), free(has), free(xvalues);
    lab_fail(ctx, "out of memory");
    return -1;
  }
  char pbuf[256];
  format_params(g, pbuf, sizeof pbuf);

  int rc = 0;
  int count[LAB_MAX_VARIANTS] = {0};     /* repetitions each variant completed */
  bool dead[LAB_MAX_VARIANTS] = {false}; /* its sample failed: not measured further, no point written */
  int max_reps = ctx->opt->max_reps > reps ? ctx->opt->max_reps : reps;
  /* The variants a claim reads (claimed.h) go on past the group's budget;
   * the reference of the group's ratios with them. */
  bool claimed[LAB_MAX_VARIANTS] = {false};
  int nclaimed = mark_claimed(ctx, g, idx, nv, claimed);
  int claim_max_reps = ctx->opt->claim_max_reps > max_reps ? ctx->opt->claim_max_reps : max_reps;
  /* The samples a verdict needs of each point it compares (LAB_CLAIM_MIN_SAMPLES),
   * this launch's share of them, or the group's own minimum where larger. */
  int launches = ctx->opt->launches > 1 ? ctx->opt->launches : 1;
  int claim_min_reps = (LAB_CLAIM_MIN_SAMPLES + launches - 1) / launches;
  if (g->claim_min_reps > claim_min_reps) claim_min_reps = g->claim_min_reps;
  if (claim_min_reps > claim_max_reps) claim_min_reps = claim_max_reps;
  bool extra = false; /* past the group's budget: the claimed variants only */
  uint64_t t_group = syncq_now_ns(), t_extra = 0, t_round = t_group;
  int64_t last_round = 0;  /* the previous round's time: a round is started only if it fits */
  int64_t last_warmup = 0; /* the first variant's warm-up sample (LAB_WARMUP_LONG_NS) */
  /* Interleave: every variant's r-th repetition before any (r+1)-th, so a
   * drift of the machine over time hits all variants alike. Past the
   * --reps repetitions a group goes on while it is within its time budget,
   * then its claimed variants (still interleaved) within theirs (lab.h,
   * LAB_QUICK_MAX_REPS, LAB_QUICK_CLAIM_BUDGET_MS); the rule reads the
   * clock, never a value. */
  for (int r = -warm; rc == 0; r++) {
    uint64_t now = syncq_now_ns();
    if (r > -warm) last_round = (int64_t)(now - t_round);
    t_round = now;
    if (!extra && r >= reps && (r >= max_reps || (int64_t)(now - t_group) + last_round > ctx->budget.point_ns * nv)) {
      if (nclaimed == 0 || ctx->budget.claim_ns <= 0) break;
      extra = true;
      t_extra = now;
      last_round = last_round * nclaimed / nv; /* the claimed variants' share, as a guess */
    }
    if (extra) {
      int64_t spent = (int64_t)(now - t_extra) + last_round;
      bool over = spent > ctx->budget.claim_ns * nclaimed;
      bool ceiling = spent > (int64_t)LAB_MAX_CLAIM_BUDGET_MS * 1000000 * nclaimed;
      if (r >= claim_max_reps || ceiling || (over && r >= claim_min_reps)) break;
    }
    for (int k = 0; k < nv && rc == 0; k++) {
      if (dead[k] || (extra && !claimed[k])) continue;
      if (r < 0 && k > 0 && last_warmup >= LAB_WARMUP_LONG_NS) break; /* long samples: one warm-up is enough */
      const lab_variant *v = &g->variants[idx[k]];
      lab_sample s;
      memset(&s, 0, sizeof s);
      uint64_t csw0 = process_ctx_switches();
      memset(&ctx->perf, 0, sizeof ctx->perf);
      uint64_t t_sample = syncq_now_ns();
      injected_crash(ctx, v->algorithm);
      injected_delay(ctx, v->algorithm);
      int sampled = injected_failure(ctx, v->algorithm) ? -1 : g->sample(ctx, v->arg, &s);
      if (r < 0 && k == 0) last_warmup = (int64_t)(syncq_now_ns() - t_sample);
      uint64_t csw = process_ctx_switches() - csw0;
      if (sampled != 0 || ctx->failed || !isfinite(s.value)) {
        if (sampled == 0 && !ctx->failed) lab_fail(ctx, "measured a non-finite value");
        if (!ctx->failed) lab_fail(ctx, "sample failed");
        point_failed(ctx, v->algorithm, pbuf, r);
        dead[k] = true;
        count[k] = 0;
        continue;
      }
      if (r < 0) continue; /* warm-up */
      count[k] = r + 1;
      values[k][r] = s.value;
      for (int e = 0; e < g->nextra; e++) xvalues[e][k][r] = s.extra[e];
      for (size_t c = 0; c < N_COUNTERS; c++) {
        uint64_t x = sample_counter(&s, c, csw, &ctx->perf);
        if (sample_read(c, x, &ctx->perf) && s.ops) has[k][c] = true; /* per-op counts need a count of ops */
        counters[k][c][r] = s.ops ? (double)x / (double)s.ops : 0.0;
      }
      if (ctx->perf.scaled) counters[k][PERF_FRACTION_COUNTER][r] = ctx->perf.running_fraction;
      else counters[k][PERF_FRACTION_COUNTER][r] = 1.0;
    }
  }
  for (int k = 0; k < nv && rc == 0; k++) {
    const lab_variant *v = &g->variants[idx[k]];
    if (dead[k]) continue;
    if (write_point(ctx, g, v->algorithm, g->metric, g->unit, g->higher_is_better, values[k], count[k], counters[k],
                    has[k]) != 0) {
      lab_fail(ctx, "writing results: %s", strerror(errno));
      rc = -1;
      break;
    }
    for (int e = 0; e < g->nextra && rc == 0; e++)
      if (write_point(ctx, g, v->algorithm, g->extra[e].metric, g->extra[e].unit, g->extra[e].higher_is_better,
                      xvalues[e][k], count[k], NULL, NULL) != 0) {
        lab_fail(ctx, "writing results: %s", strerror(errno));
        rc = -1;
      }
    if (rc != 0) break;
    uint64_t t_point = syncq_now_ns();
    /* relaxed: published by the release increment of done just below */
    atomic_store_explicit(&ctx->shared->last_point_ns, t_point, memory_order_relaxed);
    /* release: pairs with the acquire load of done in watchdog_limit_ns,
     * which then reads this point's last_point_ns or a later one */
    long done = atomic_fetch_add_explicit(&ctx->shared->done, 1, memory_order_release) + 1;
    if (!ctx->opt->quiet) {
      /* the plan less what will never be measured (failed variants, the
       * rest of experiments that stopped): the estimate counts what is left */
      long total = ctx->planned - ctx->shared->dropped;
      double el = (double)(t_point - ctx->t_start) / NS_PER_S;
      char eta[32];
      format_eta(done ? el / (double)done * (double)(total - done) : -1, eta, sizeof eta);
      fprintf(stderr, "[%ld/%ld %3.0f%%] %s: %s%s%s: %s %.4g %s (median of %d) - about %s left\n", done, total,
              100.0 * (double)done / (double)(total > 0 ? total : 1), ctx->exp->name, v->algorithm, pbuf[0] ? " " : "",
              pbuf, g->metric, median_of(values[k], count[k]), g->unit, count[k], eta);
    }
  }
  if (rc == 0 && g->normalize_to != NULL)
    rc = write_ratios(ctx, g, idx, nv, values, count, g->metric, g->higher_is_better);
  for (int e = 0; e < g->nextra && rc == 0 && g->normalize_to != NULL; e++)
    if (!g->extra[e].no_ratio)
      rc = write_ratios(ctx, g, idx, nv, xvalues[e], count, g->extra[e].metric, g->extra[e].higher_is_better);
  free(xvalues);
  free(values);
  free(counters);
  free(has);
  return rc;
}

/* The processor's name from /proc/cpuinfo's first "model name" line (the
 * line hwloc reads on Linux), for a run without a topology; "unknown" where
 * the file or the line is missing (e.g. arm64 kernels print none). */
static void cpuinfo_model(char *out, size_t len) {
  snprintf(out, len, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f == NULL) return;
  char line[512];
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "model name", 10) != 0) continue;
    const char *v = strchr(line, ':');
    if (v == NULL) break;
    v++;
    while (*v == ' ' || *v == '\t') v++;
    size_t n = strcspn(v, "\n");
    if (n > 0) snprintf(out, len, "%.*s", (int)n, v);
    break;
  }
  fclose(f);
}

static void write_machine(lab_ctx *ctx, const char *pinning) {
  struct utsname u;
  char kernel[512] = "unknown", perf[256], date[64];
  if (uname(&u) == 0) snprintf(kernel, sizeof kernel, "%s %s %s", u.sysname, u.release, u.machine);
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  json_t *o = json_object();
  char model[256];
  if (ctx->topo != NULL) snprintf(model, sizeof model, "%s", lab_topo_cpu_model(ctx->topo));
  else cpuinfo_model(model, sizeof model);
  json_object_set_new(o, "cpu_model", json_string(model));
  /* The cores are hwloc's count; without a topology they are unknown
   * (null): the CPU count alone cannot tell cores from hardware threads. */
  json_object_set_new(o, "cores", ctx->topo ? json_integer(lab_topo_cores(ctx->topo)) : json_null());
  json_object_set_new(o, "pus", json_integer(lab_real_pus(ctx)));
  json_object_set_new(o, "pus_source", json_string(ctx->pus_source));
  /* A run planned for another machine's count (--pus, SYNCQ_LAB_PUS): its
   * thread lists and budgets are that machine's; the verdicts read "pus". */
  json_object_set_new(o, "planned_pus", json_integer(lab_pus(ctx)));
  json_object_set_new(o, "kernel", json_string(kernel));
#if defined(__clang__)
  json_object_set_new(o, "compiler", json_string("Clang " __clang_version__));
#elif defined(__GNUC__)
  json_object_set_new(o, "compiler", json_string("GCC " __VERSION__));
#else
  json_object_set_new(o, "compiler", json_string("unknown"));
#endif
  json_object_set_new(o, "flags", json_string(SYNCQ_C_FLAGS));
  json_object_set_new(o, "build_type", json_string(SYNCQ_BUILD_TYPE));
  json_object_set_new(o, "git_revision", json_string(lab_git_revision()));
  json_object_set_new(o, "date", json_string(date));
  json_object_set_new(o, "size", json_string(size_names[ctx->opt->size]));
  json_object_set_new(o, "reps", json_integer(ctx->opt->reps));
  json_object_set_new(o, "max_reps",
                      json_integer(ctx->opt->max_reps > ctx->opt->reps ? ctx->opt->max_reps : ctx->opt->reps));
  json_object_set_new(o, "point_budget_ms", json_integer(ctx->budget.point_ns / 1000000));
  json_object_set_new(o, "claim_budget_ms", json_integer(ctx->budget.claim_ns / 1000000));
  json_object_set_new(o, "suite_budget_s", json_integer(ctx->opt->suite_budget_ns / 1000000000));
  json_object_set_new(o, "claim_max_reps", json_integer(ctx->opt->claim_max_reps));
  json_object_set_new(o, "launches", json_integer(ctx->opt->launches > 1 ? ctx->opt->launches : 1));
  json_object_set_new(o, "pinning", json_string(pinning));
  /* dg25's waiting between failed polls: one per run, so the report, which
   * reads each experiment from one run, never mixes two in a verdict. */
  json_object_set_new(o, "queue_wait", json_string(lab_queue_wait_name(ctx->opt->queue_wait)));
  json_object_set_new(o, "perf_counters", json_string(lab_perf_counters_probe(perf, sizeof perf)));
  /* How the postoffice's fiber schedulers look for passed deadlines: the
   * po experiments' switches cost a clock read each while a deadline waits
   * where no counter gates the reads (syncq_po_clock_gate). As the run
   * starts: the postoffice experiments' points say how it stood at their
   * end (write_point). */
  char gate[SYNCQ_PO_CLOCK_GATE_LEN];
  if (syncq_po_clock_gate(NULL, gate, sizeof gate) != SYNCQ_OK) snprintf(gate, sizeof gate, "unknown");
  json_object_set_new(o, "po_clock_gate", json_string(gate));
  char events[512];
  json_object_set_new(o, "perf_events",
                      json_string(lab_perf_describe(events, sizeof events, ctx->opt->perf_mode != LAB_PERF_NONE,
                                                    ctx->opt->perf_mode == LAB_PERF_ALL, ctx->topo != NULL)));
  json_object_set_new(o, "command", json_string(ctx->opt->command ? ctx->opt->command : ""));
  json_t *peers = json_array();
  for (size_t i = 0; i < lab_peers_status_count(); i++) {
    const lab_peer_status *ps = lab_peers_status_at(i);
    if (ps->library == NULL) continue; /* lab_peers_register() not called */
    json_t *p = json_object();
    json_object_set_new(p, "library", json_string(ps->library));
    json_object_set_new(p, "package", json_string(ps->package));
    json_object_set_new(p, "registered", json_integer(ps->registered));
    json_object_set_new(p, "why", json_string(ps->why));
    json_array_append_new(peers, p);
  }
  json_object_set_new(o, "peers", peers);
  const char *spsc = lab_peers_spsc_note();
  if (spsc != NULL && json_array_size(peers) > 0) json_object_set_new(o, "peers_note", json_string(spsc));
  (void)lab_results_write(&ctx->results, "machine", o);
}

/* Decide the pinning line of the machine record: try binding this thread to
 * the first PU of the pinning order (workers do the same). */
static void probe_pinning(lab_ctx *ctx, char *buf, size_t len) {
  char why[256];
  if (!ctx->opt->pin) snprintf(buf, len, "off");
  else if (ctx->topo == NULL) snprintf(buf, len, "refused: no topology");
  else if (lab_topo_pin_self(ctx->topo, 0, why, sizeof why) != 0) {
    snprintf(buf, len, "refused: %s", why);
    ctx->pin_refused = true;
  } else {
    snprintf(buf, len, "hwloc");
    /* Threads inherit their creator's binding: leave the main thread free,
     * or every thread a sample starts outside a team would share PU 0. */
    lab_topo_unpin_self(ctx->topo);
  }
}

static void free_claimed(lab_ctx *ctx, size_t nexps) {
  for (size_t i = 0; i < nexps && ctx->claimed != NULL; i++) lab_claimed_free(ctx->claimed[i]);
  free(ctx->claimed);
  free(ctx->plan_of);
  ctx->claimed = NULL;
  ctx->cur_claimed = NULL;
  ctx->plan_of = NULL;
}

/* Print one JSON line on stdout (the plan); false when it cannot be written. */
static bool print_json(json_t *o) {
  char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(o);
  if (text == NULL) return false;
  bool ok = printf("%s\n", text) > 0;
  free(text);
  return ok;
}

static json_t *ms_of(int64_t ns) { return json_real((double)ns / 1e6); }

/* The second planning pass: what the claims read, the thread counts of
 * each experiment, then the budgets fitted to the plan (budget.h); with
 * --plan, all of it as JSON lines on stdout. */
static int count_plan(lab_ctx *ctx, const lab_experiment *const *exps, size_t nexps) {
  const lab_options *opt = ctx->opt;
  ctx->counting = true;
  for (size_t i = 0; i < nexps; i++) {
    ctx->exp = exps[i];
    ctx->cur_claimed = ctx->claimed[i];
    ctx->exp_points = ctx->exp_claimed = 0;
    ctx->exp_nthreads = 0;
    exps[i]->run(ctx);
    ctx->plan_of[i] = (lab_exp_plan){ctx->exp_points, ctx->exp_claimed};
    if (!opt->plan_only) continue;
    double *t = ctx->exp_threads; /* increasing */
    for (int a = 1; a < ctx->exp_nthreads; a++)
      for (int b = a; b > 0 && t[b - 1] > t[b]; b--) {
        double x = t[b];
        t[b] = t[b - 1];
        t[b - 1] = x;
      }
    json_t *threads = json_array();
    for (int k = 0; k < ctx->exp_nthreads; k++) json_array_append_new(threads, json_real(t[k]));
    if (!print_json(json_pack("{s:s, s:o, s:I, s:I}", "experiment", exps[i]->name, "threads", threads, "points",
                              (json_int_t)ctx->exp_points, "claimed", (json_int_t)ctx->exp_claimed)))
      return -1;
  }
  ctx->counting = false;
  int launches = opt->launches > 1 ? opt->launches : 1;
  ctx->budget = lab_budget_fit(ctx->planned, ctx->claimed_points, opt->point_budget_ns, opt->claim_budget_ns,
                               opt->suite_budget_ns, launches);
  if (!opt->plan_only) return 0;
  json_t *o = json_object();
  json_object_set_new(o, "size", json_string(size_names[opt->size]));
  json_object_set_new(o, "pus", json_integer(lab_real_pus(ctx)));
  json_object_set_new(o, "pus_source", json_string(ctx->pus_source));
  json_object_set_new(o, "planned_pus", json_integer(lab_pus(ctx)));
  json_object_set_new(o, "launches", json_integer(launches));
  json_object_set_new(o, "points", json_integer(ctx->planned));
  json_object_set_new(o, "claimed", json_integer(ctx->claimed_points));
  json_object_set_new(o, "point_budget_ms", ms_of(opt->point_budget_ns));
  json_object_set_new(o, "claim_budget_ms", ms_of(opt->claim_budget_ns));
  json_object_set_new(o, "wanted_s", json_real((double)ctx->budget.wanted_ns / 1e9));
  json_object_set_new(o, "suite_budget_s", json_real((double)opt->suite_budget_ns / 1e9));
  json_object_set_new(o, "launch_budget_s", json_real((double)ctx->budget.launch_ns / 1e9));
  json_object_set_new(o, "scale", json_real(ctx->budget.scale));
  json_object_set_new(o, "fitted_point_budget_ms", ms_of(ctx->budget.point_ns));
  json_object_set_new(o, "fitted_claim_budget_ms", ms_of(ctx->budget.claim_ns));
  return print_json(json_pack("{s:o}", "plan", o)) ? 0 : -1;
}

/* Run the current experiment (ctx->exp) in this process and leave its
 * outcome in ctx->shared. */
static void run_here(lab_ctx *ctx) {
  lab_shared *sh = ctx->shared;
  int r = ctx->exp->run(ctx);
  sh->failed = r != 0 || ctx->failed;
  snprintf(sh->failure, sizeof sh->failure, "%s", ctx->failure);
  sh->reported = true;
}

/* The watchdog's limit for experiment i, in ns from its start t_exp, as
 * it stands now (0: none): --experiment-timeout's, or the floor plus the
 * factor times its estimate (lab.h, LAB_WATCHDOG_FACTOR). The estimate
 * grows as the experiment finishes points at a slower rate than planned,
 * and stops growing when none finishes: a hang meets a fixed limit. done0:
 * the run's measured points when it started. */
static int64_t watchdog_limit_ns(const lab_ctx *ctx, size_t i, long done0, uint64_t t_exp) {
  int fixed = ctx->opt->experiment_timeout_s;
  if (fixed >= 0) return (int64_t)fixed * 1000000000;
  const lab_exp_plan *p = &ctx->plan_of[i];
  double points = (double)p->points;
  double est = points * (double)ctx->budget.point_ns + (double)p->claimed * (double)ctx->budget.claim_ns;
  if (done0 > 0) est = fmax(est, (double)(t_exp - ctx->t_start) / (double)done0 * points);
  /* acquire: pairs with the release increment in lab_run_group, so
   * last_point_ns is that of the done-th point or a later one */
  long done = atomic_load_explicit(&ctx->shared->done, memory_order_acquire);
  /* relaxed: ordered by the acquire load of done above */
  uint64_t last = atomic_load_explicit(&ctx->shared->last_point_ns, memory_order_relaxed);
  if (done > done0 && last > t_exp) est = fmax(est, (double)(last - t_exp) / (double)(done - done0) * points);
  double limit = (double)LAB_WATCHDOG_FLOOR_S * NS_PER_S + LAB_WATCHDOG_FACTOR * est;
  return limit < 1e18 ? (int64_t)limit : (int64_t)1e18;
}

/* The process group of the experiment being waited for, for the stop
 * signals' handler (forward_stop). */
static volatile sig_atomic_t watched_pgid;
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define N_STOP_SIGNALS (sizeof stop_signals / sizeof stop_signals[0])

/* The experiment's process leads a process group of its own (so that the
 * watchdog stops the processes it started with it), which a terminal's ^C
 * or timeout(1)'s kill of the lab's group no longer reaches: a stop
 * signal to the lab takes that group with it, then the lab ends by the
 * signal's default action as before (SA_RESETHAND; raised again, it is
 * delivered once this handler returns). */
static void forward_stop(int sig) {
  int saved = errno;
  pid_t g = (pid_t)watched_pgid;
  if (g > 0) (void)kill(-g, SIGKILL);
  (void)raise(sig);
  errno = saved;
}

/* Install forward_stop for the stop signals this process does not ignore
 * (nohup's SIGHUP stays ignored); old[] keeps what to put back. Returns
 * the set installed (bit k: stop_signals[k]). */
static unsigned forward_stops(pid_t pgid, struct sigaction *old) {
  unsigned installed = 0;
  watched_pgid = (sig_atomic_t)pgid;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = forward_stop;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (size_t k = 0; k < N_STOP_SIGNALS; k++) {
    if (sigaction(stop_signals[k], NULL, &old[k]) != 0 || old[k].sa_handler == SIG_IGN) continue;
    if (sigaction(stop_signals[k], &sa, NULL) == 0) installed |= 1u << k;
  }
  return installed;
}

static void restore_stops(unsigned installed, const struct sigaction *old) {
  for (size_t k = 0; k < N_STOP_SIGNALS; k++)
    if (installed & (1u << k)) (void)sigaction(stop_signals[k], &old[k], NULL);
  watched_pgid = 0;
}

/* Job control. The terminal's ^Z (SIGTSTP), and SIGTTIN/SIGTTOU for a
 * lab in the background, go to the foreground group, the lab's, not to
 * the experiment's group: alone, the lab would stop and the experiment
 * measure on. So the lab stops that group first (SIGSTOP: its processes
 * catch nothing), then itself by the signal's default action, where the
 * shell sees the stop it expects; continued (fg, bg, a SIGCONT), it
 * continues the group. The watchdog does not count the time between
 * (pause_began, paused_ns: lock-free atomics, which a handler may use). */
static const int pause_signals[] = {SIGTSTP, SIGTTIN, SIGTTOU};
#define N_PAUSE_SIGNALS (sizeof pause_signals / sizeof pause_signals[0])
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "the pause's clock is written from a signal handler");
static _Atomic(unsigned long long) pause_began; /* when the ongoing pause began (ns), else 0 */
static _Atomic(unsigned long long) paused_ns;   /* the experiment's pauses that ended, in all */

static unsigned long long handler_now_ns(void) {
  struct timespec ts; /* clock_gettime, unlike syncq_now_ns, is async-signal-safe by name; the same clock */
  (void)clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void pause_experiment(int sig) {
  int saved = errno;
  pid_t g = (pid_t)watched_pgid;
  unsigned long long t0 = handler_now_ns();
  /* seq_cst: the watchdog reads pause_began before paused_ns (paused) */
  atomic_store(&pause_began, t0);
  if (g > 0) (void)kill(-g, SIGSTOP);
  /* The default action, here and now: sig is blocked in its handler, so
   * raise it to this thread, then unblock it; the thread (and the lab)
   * stops in that call and returns from it once continued. In an orphaned
   * process group, whose stop no shell would ever continue, the kernel
   * drops the signal instead, and the group is continued at once. */
  struct sigaction dfl, mine;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  if (sigaction(sig, &dfl, &mine) == 0) {
    sigset_t set, was;
    sigemptyset(&set);
    sigaddset(&set, sig);
    (void)raise(sig);
    (void)pthread_sigmask(SIG_UNBLOCK, &set, &was);
    (void)pthread_sigmask(SIG_SETMASK, &was, NULL);
    (void)sigaction(sig, &mine, NULL);
  }
  atomic_fetch_add(&paused_ns, handler_now_ns() - t0); /* before pause_began's 0: never counted short */
  atomic_store(&pause_began, 0ull);
  if (g > 0) (void)kill(-g, SIGCONT);
  errno = saved;
}

/* The time the experiment has been paused since pauses() began counting,
 * an ongoing pause up to now (a syncq_now_ns() reading). Read in this
 * order, a pause that ends meanwhile is counted twice at worst (the
 * watchdog waits longer), never left out. */
static uint64_t paused(uint64_t now) {
  unsigned long long began = atomic_load(&pause_began);
  unsigned long long total = atomic_load(&paused_ns);
  return (uint64_t)(total + (began != 0 && now > began ? now - began : 0));
}

/* Install pause_experiment for the job-control signals this process does
 * not ignore (one ignored stops neither the lab nor the experiment), and
 * start counting pauses from 0. Returns the set installed (bit k:
 * pause_signals[k]); restore_pauses puts old[] back. */
static unsigned pauses(struct sigaction *old) {
  unsigned installed = 0;
  atomic_store(&paused_ns, 0ull);
  atomic_store(&pause_began, 0ull);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = pause_experiment;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (size_t k = 0; k < N_PAUSE_SIGNALS; k++) sigaddset(&sa.sa_mask, pause_signals[k]); /* one pause at a time */
  for (size_t k = 0; k < N_PAUSE_SIGNALS; k++) {
    if (sigaction(pause_signals[k], NULL, &old[k]) != 0 || old[k].sa_handler == SIG_IGN) continue;
    if (sigaction(pause_signals[k], &sa, NULL) == 0) installed |= 1u << k;
  }
  return installed;
}

static void restore_pauses(unsigned installed, const struct sigaction *old) {
  for (size_t k = 0; k < N_PAUSE_SIGNALS; k++)
    if (installed & (1u << k)) (void)sigaction(pause_signals[k], &old[k], NULL);
}

/* The experiment's process, reaped by a thread of its own (reap) that then
 * writes to a pipe, so that the runner can wait for it with a deadline:
 * poll() on the pipe. No call waits for a child with a timeout; waiting
 * for SIGCHLD with sigtimedwait loses the signal to any thread that leaves
 * it unblocked (a peer library's), and pidfd_open needs Linux 5.3, newer
 * than the portable run's floor. status and err are read after the join. */
typedef struct reaper {
  pid_t pid;
  int status; /* waitpid()'s, once it returned */
  int err;    /* its errno where it failed, else 0 */
  int fd;     /* the pipe's write end */
} reaper;

static void *reap(void *arg) {
  reaper *r = arg;
  while (waitpid(r->pid, &r->status, 0) < 0)
    if (errno != EINTR) {
      r->err = errno;
      break;
    }
  char c = 0;
  while (write(r->fd, &c, 1) < 0 && errno == EINTR) continue;
  return NULL;
}

/* Wait for experiment i's process (pid, started at t_exp with done0 points
 * measured) until it ends or outlives the watchdog's limit; then stop it
 * and its process group with SIGKILL, and reap it. 1 when the watchdog
 * stopped it (*limit_ns: the limit it outlived), 0 when it ended first,
 * -1 when the wait failed (errno); *status: waitpid()'s. Without a limit,
 * or without the thread and pipe the timed wait needs (then said on
 * stderr), it is a plain waitpid(). */
static int watch(lab_ctx *ctx, size_t i, pid_t pid, long done0, uint64_t t_exp, int *status, int64_t *limit_ns) {
  int fds[2] = {-1, -1};
  reaper r = {pid, 0, 0, -1};
  pthread_t thread;
  bool timed = watchdog_limit_ns(ctx, i, done0, t_exp) > 0;
  if (timed && pipe2(fds, O_CLOEXEC) != 0) {
    fprintf(stderr, "syncq-lab: warning: no watchdog over %s: %s\n", ctx->exp->name, strerror(errno));
    timed = false;
  }
  r.fd = fds[1];
  if (timed) {
    int err = pthread_create(&thread, NULL, reap, &r);
    if (err != 0) {
      fprintf(stderr, "syncq-lab: warning: no watchdog over %s: %s\n", ctx->exp->name, strerror(err));
      (void)close(fds[0]), (void)close(fds[1]);
      timed = false;
    }
  }
  if (!timed) {
    while (waitpid(pid, status, 0) < 0)
      if (errno != EINTR) return -1;
    return 0;
  }
  bool stopped = false;
  for (;;) {
    int64_t limit = watchdog_limit_ns(ctx, i, done0, t_exp);
    uint64_t now = syncq_now_ns();
    uint64_t ran = now - t_exp, held = paused(now); /* a paused experiment's time stands still */
    int64_t left = limit - (int64_t)(ran > held ? ran - held : 0);
    if (left <= 0) {
      /* the group, with whatever the experiment started; the process
       * alone where it has no group yet (setpgid in its first steps) */
      if (kill(-pid, SIGKILL) != 0) (void)kill(pid, SIGKILL);
      stopped = true;
      *limit_ns = limit;
      break;
    }
    struct pollfd p = {fds[0], POLLIN, 0};
    int64_t ms = left / 1000000 + 1;
    int n = poll(&p, 1, ms < INT_MAX ? (int)ms : INT_MAX);
    if (n > 0 || (n < 0 && errno != EINTR)) break; /* reaped (or no way left to wait but the join) */
    /* n == 0: the limit as it stood; it may have grown since */
  }
  (void)pthread_join(thread, NULL);
  (void)close(fds[0]), (void)close(fds[1]);
  if (r.err != 0) {
    errno = r.err;
    return -1;
  }
  *status = r.status;
  return stopped ? 1 : 0;
}

/* A process killed while it wrote a record may have left part of one at
 * the end of the results file, which the next record would join into a
 * line no reader parses: cut the file back to its last whole line. */
static void cut_partial_record(lab_ctx *ctx) {
  if (ctx->results.f == NULL || fflush(ctx->results.f) != 0) return;
  int fd = fileno(ctx->results.f);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) return;
  char buf[4096];
  off_t end = st.st_size;
  while (end > 0) {
    size_t n = end < (off_t)sizeof buf ? (size_t)end : sizeof buf;
    if (pread(fd, buf, n, end - (off_t)n) != (ssize_t)n) return;
    size_t k = n;
    while (k > 0 && buf[k - 1] != '\n') k--;
    if (k > 0) {
      end -= (off_t)(n - k);
      break;
    }
    end -= (off_t)n;
  }
  if (end == st.st_size) return;
  fprintf(stderr, "syncq-lab: %s: its last record was cut short (%lld bytes): dropped\n", ctx->exp->name,
          (long long)(st.st_size - end));
  (void)ftruncate(fd, end);
}

/* Run experiment i (ctx->exp) in a child of its own, forked now, and wait
 * for it: it starts from this process's state, in which nothing was
 * measured, so no experiment runs beside what an earlier one left (a heap
 * grown by its samples, a peer's runtime and thread pool, fiber stacks a
 * postoffice keeps), and a crash ends only that experiment. It leads a
 * process group, which the watchdog stops whole past its limit (watch).
 * Its counters and outcome come back through ctx->shared. 0 when the
 * child reported; -1 with why ("ended by signal 11 (Segmentation
 * fault)", "did not finish within 600s: stopped") when it died, exited
 * without reporting, was stopped, or could not start. */
static int run_forked(lab_ctx *ctx, size_t i, char *why, size_t len) {
  ctx->shared->reported = false;
  /* relaxed: no child runs now; the fork orders it for the next one */
  long done0 = atomic_load_explicit(&ctx->shared->done, memory_order_relaxed);
  /* Nothing buffered may be copied into the child, or it would be written
   * twice (the results file flushes each record already). */
  (void)fflush(NULL);
  pid_t parent = getpid();
  uint64_t t_exp = syncq_now_ns();
  /* The stop and job-control signals wait, blocked, from before the fork
   * until the lab's handlers for this experiment are in place: one that
   * came in between would end or stop the lab by its default action and
   * leave the experiment's group (not the terminal's foreground one)
   * measuring alone. The child unblocks them once in its own group. */
  sigset_t held, was;
  sigemptyset(&held);
  for (size_t k = 0; k < N_STOP_SIGNALS; k++) sigaddset(&held, stop_signals[k]);
  for (size_t k = 0; k < N_PAUSE_SIGNALS; k++) sigaddset(&held, pause_signals[k]);
  (void)pthread_sigmask(SIG_BLOCK, &held, &was);
  lab_peers_before_fork(); /* liburcu's call_rcu thread, for the child's use of it */
  pid_t pid = fork();
  if (pid == 0) lab_peers_after_fork_child();
  else lab_peers_after_fork_parent();
  if (pid < 0) {
    int err = errno;
    (void)pthread_sigmask(SIG_SETMASK, &was, NULL);
    snprintf(why, len, "could not start its process: %s", strerror(err));
    return -1;
  }
  if (pid == 0) {
    /* A group of its own, for the watchdog (set by both sides: whichever
     * runs first). A lab stopped from outside (timeout(1), a kill of its
     * pid) takes the experiment with it rather than leave it measuring
     * and writing alone; the check covers a parent gone before the call. */
    (void)setpgid(0, 0);
    /* Outside the terminal's foreground group, a write to the terminal
     * under `stty tostop` would stop this group (SIGTTOU) while the
     * watchdog counts on; ignored, the write goes through (POSIX), as the
     * lab's own would. */
    (void)signal(SIGTTOU, SIG_IGN);
    (void)pthread_sigmask(SIG_SETMASK, &was, NULL);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(1);
    injected_fork_wait(ctx, 4);
    run_here(ctx);
    /* _exit: no atexit handler of this program or of a peer library runs
     * in the child (they belong to the parent's exit); flush by hand. */
    (void)fflush(NULL);
    _exit(0);
  }
  (void)setpgid(pid, pid);
  injected_fork_wait(ctx, 2);
  struct sigaction old[N_STOP_SIGNALS], old_pause[N_PAUSE_SIGNALS];
  unsigned forwarded = forward_stops(pid, old);
  unsigned pausing = pauses(old_pause);
  (void)pthread_sigmask(SIG_SETMASK, &was, NULL); /* one held meanwhile is handled now */
  int status = 0;
  int64_t limit = 0;
  int watched = watch(ctx, i, pid, done0, t_exp, &status, &limit);
  restore_pauses(pausing, old_pause);
  restore_stops(forwarded, old);
  if (watched < 0) {
    snprintf(why, len, "was lost: waiting for its process: %s", strerror(errno));
    return -1;
  }
  if (watched == 1 && ctx->shared->reported) return 0; /* the watchdog met it on its way out */
  if (watched == 1) {
    cut_partial_record(ctx);
    snprintf(why, len, "did not finish within %llds: stopped", (long long)((limit + 500000000) / 1000000000));
    return -1;
  }
  if (WIFSIGNALED(status)) {
    cut_partial_record(ctx);
    int sig = WTERMSIG(status);
    snprintf(why, len, "ended by signal %d (%s)", sig, strsignal(sig));
    return -1;
  }
  if (!ctx->shared->reported) {
    snprintf(why, len, "exited with status %d before it reported its outcome",
             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return -1;
  }
  return 0;
}

/* The machine's processing units and where the count came from (the
 * machine record's pus and pus_source): hwloc's; without a topology the
 * CPUs the kernel lets this process run on, which its workers inherit
 * (lab_perf_cpus: sched_getaffinity, else sysconf's online count), so the
 * thread plans, the claims' points and the needs_pus verdicts are those
 * of the CPUs the run has; 1 where neither answers. no_topology: why
 * hwloc found none. */
static void count_pus(lab_ctx *ctx, const char *no_topology) {
  if (ctx->topo != NULL) {
    ctx->pus = lab_topo_pus(ctx->topo);
    snprintf(ctx->pus_source, sizeof ctx->pus_source, "hwloc");
    return;
  }
  const char *source;
  char why[256];
  int cpus = lab_perf_cpus(&source, why, sizeof why);
  ctx->pus = cpus > 0 ? cpus : 1;
  if (cpus > 0) snprintf(ctx->pus_source, sizeof ctx->pus_source, "%s (no topology: %s)", source, no_topology);
  else
    snprintf(ctx->pus_source, sizeof ctx->pus_source, "assumed (no topology: %s; no CPU count: %s)", no_topology, why);
}

int lab_run(const lab_options *opt, const lab_experiment *const *exps) {
  lab_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.opt = opt;
  char why[512], pinning[300] = "off";
  ctx.topo = lab_topo_load(why, sizeof why);
  count_pus(&ctx, why);
  if (ctx.topo == NULL)
    fprintf(stderr, "syncq-lab: warning: no topology: running unpinned on %d PU%s counted by %s\n", ctx.pus,
            ctx.pus == 1 ? "" : "s", ctx.pus_source);
  if (!opt->plan_only) {
    if (lab_results_open(&ctx.results, opt->out_dir, opt->run_id, opt->launch, why, sizeof why) != 0) {
      fprintf(stderr, "syncq-lab: %s\n", why);
      lab_topo_free(ctx.topo);
      return 1;
    }
    probe_pinning(&ctx, pinning, sizeof pinning);
    (void)syncq_delay_calibrate(); /* once, before anything is timed */
    if (lab_po_slow_apply(opt->launch) < 0)
      fprintf(stderr, "syncq-lab: warning: SYNCQ_LAB_PO_SLOW: the counter's rate was decided already\n");
    /* Every launch decides the postoffice's deadline clock here, before
     * anything is timed: an experiment's process, a fork of this one,
     * starts from the decision instead of making it in its first sample.
     * The first launch's machine record holds it; each postoffice point
     * the gate as it stood at its end (write_point). */
    bool counter;
    (void)syncq_po_clock_gate(&counter, NULL, 0);
  }

  size_t nexps = 0;
  while (exps[nexps]) nexps++;
  ctx.claimed = calloc(nexps ? nexps : 1, sizeof *ctx.claimed);
  ctx.plan_of = calloc(nexps ? nexps : 1, sizeof *ctx.plan_of);
  if (ctx.claimed == NULL || ctx.plan_of == NULL) {
    fprintf(stderr, "syncq-lab: out of memory\n");
    free_claimed(&ctx, 0);
    lab_results_close(&ctx.results);
    lab_topo_free(ctx.topo);
    return 1;
  }
  ctx.planning = true;
  for (size_t i = 0; i < nexps; i++) {
    ctx.exp = exps[i];
    ctx.claimed[i] = lab_claimed_new(exps[i], lab_pus(&ctx)); /* NULL (out of memory): no claimed points */
    ctx.cur_claimed = ctx.claimed[i];
    exps[i]->run(&ctx);
  }
  if (opt->nwhere > 0 && ctx.planned == 0) {
    fprintf(stderr, "syncq-lab: --where matched no point of the chosen experiments\n");
    free_claimed(&ctx, nexps);
    if (!opt->plan_only) lab_results_close(&ctx.results);
    lab_topo_free(ctx.topo);
    return 1;
  }
  int planned_rc = count_plan(&ctx, exps, nexps);
  ctx.planning = false;
  if (opt->plan_only || planned_rc != 0) {
    if (planned_rc != 0) fprintf(stderr, "syncq-lab: cannot write the plan: %s\n", strerror(errno));
    free_claimed(&ctx, nexps);
    if (!opt->plan_only) lab_results_close(&ctx.results);
    lab_topo_free(ctx.topo);
    return planned_rc == 0 ? 0 : 1;
  }
  /* Where an experiment's process leaves its counters and outcome: a
   * mapping its child shares, or (--no-fork) this frame. */
  lab_shared local;
  memset(&local, 0, sizeof local);
  ctx.shared = &local;
  if (!opt->no_fork) {
    void *m = mmap(NULL, sizeof *ctx.shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      fprintf(stderr, "syncq-lab: cannot map the experiments' shared record: %s\n", strerror(errno));
      free_claimed(&ctx, nexps);
      lab_results_close(&ctx.results);
      lab_topo_free(ctx.topo);
      return 1;
    }
    ctx.shared = m; /* zero-filled */
  }
  if (opt->launch <= 1) write_machine(&ctx, pinning); /* once per run: the first launch */
  ctx.t_start = syncq_now_ns();
  int rc = 0;
  for (size_t i = 0; exps[i] && rc == 0; i++) {
    ctx.failed = false;
    ctx.failure[0] = '\0';
    ctx.exp = exps[i];
    ctx.cur_claimed = ctx.claimed[i];
    if (!opt->quiet) {
      if (opt->launch > 0)
        fprintf(stderr, "syncq-lab: running %s (%s), launch %d of %d\n", exps[i]->name, exps[i]->title, opt->launch,
                opt->launches);
      else fprintf(stderr, "syncq-lab: running %s (%s)\n", exps[i]->name, exps[i]->title);
    }
    uint64_t t_exp = syncq_now_ns();
    /* relaxed: no experiment runs now (the fork or the call orders it) */
    long done0 = atomic_load_explicit(&ctx.shared->done, memory_order_relaxed);
    long dropped0 = ctx.shared->dropped;
    char died[256] = "";
    if (opt->no_fork) {
      run_here(&ctx);
      /* In one process the next experiment starts without the fiber
       * stacks and the process table this one's postoffice systems kept:
       * an experiment that forks (lc98-*) would copy their page tables
       * into every child and tear them down at each child's exit, inside
       * its timing. A child of its own per experiment needs none of it. */
      (void)syncq_po_cache_trim();
    } else {
      (void)run_forked(&ctx, i, died, sizeof died);
    }
    if (died[0] != '\0') {
      /* the experiment's process crashed, vanished or was stopped by the
       * watchdog: what it wrote before is kept, the others still run; the
       * exit status says it */
      fprintf(stderr, "syncq-lab: %s failed: %s\n", exps[i]->name, died);
      lab_note(&ctx, "FAILED: %s %s", exps[i]->name, died);
      ctx.failed_experiments++;
    } else if (ctx.shared->failed) {
      /* the experiment stopped early (a failed setup, a write error): the
       * others still run; the exit status says it */
      const char *reason = ctx.shared->failure[0] ? ctx.shared->failure : "(no reason given)";
      fprintf(stderr, "syncq-lab: %s failed: %s\n", exps[i]->name, reason);
      if (strncmp(reason, "writing results", 15) == 0) {
        rc = 1; /* the results file itself: nothing more can be kept */
      } else {
        lab_note(&ctx, "FAILED: the experiment stopped early: %s", reason);
        ctx.failed_experiments++;
      }
    } else if (!opt->quiet) {
      fprintf(stderr, "syncq-lab: %s done in %.1f s\n", exps[i]->name, (double)(syncq_now_ns() - t_exp) / NS_PER_S);
    }
    if (died[0] != '\0' || ctx.shared->failed) {
      /* The points it never measured will not be: off the progress line's
       * total, so that its "about Xs left" counts what the run has left. */
      long measured = atomic_load_explicit(&ctx.shared->done, memory_order_relaxed) - done0; /* relaxed: reaped */
      long unmeasured = ctx.plan_of[i].points - measured - (ctx.shared->dropped - dropped0);
      if (unmeasured > 0) ctx.shared->dropped += unmeasured;
    }
  }
  long failed_points = ctx.shared->failed_points;
  if (ctx.shared != &local) (void)munmap(ctx.shared, sizeof *ctx.shared);
  ctx.shared = NULL;
  free_claimed(&ctx, nexps);
  lab_results_close(&ctx.results);
  lab_topo_free(ctx.topo);
  if (rc == 0 && !opt->quiet) fprintf(stderr, "syncq-lab: results in %s/%s\n", opt->out_dir, LAB_RESULTS_FILE);
  if (rc == 0 && (failed_points > 0 || ctx.failed_experiments > 0)) {
    fprintf(stderr,
            "syncq-lab: %ld point(s) failed and %d experiment(s) stopped early (FAILED above, and in "
            "the results' notes); the rest was measured\n",
            failed_points, ctx.failed_experiments);
    rc = 1;
  }
  return rc;
}
