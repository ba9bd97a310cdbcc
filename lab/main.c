/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * main.c — the syncq-lab command line.
 *
 *   syncq-lab list                       experiments, with paper and figure
 *   syncq-lab claims                     every experiment's claims and rules (JSON lines)
 *   syncq-lab algos [FAMILY]             the registry
 *   syncq-lab run NAME|all [options]     measure, append to DIR/results.jsonl
 *   syncq-lab report DIR [--compare OLD] write DIR/report.html
 *   syncq-lab compare A.jsonl B.jsonl    the verdicts that differ between two runs
 *   syncq-lab help | --version
 *
 * Exit status: 0 done, 1 a run failed, 2 bad usage.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab.h"
#include "po_faults.h"
#include "results.h"
#include "peers.h"
#include "syncq/registry.h"
#include "syncq/version.h"

#ifndef SYNCQ_PYTHON
#define SYNCQ_PYTHON "python3"
#endif
#ifndef SYNCQ_REPORT_SCRIPT
#define SYNCQ_REPORT_SCRIPT "report/build.py"
#endif
#ifndef SYNCQ_REPORT_FROM_BIN
#define SYNCQ_REPORT_FROM_BIN "../share/syncq/report/build.py"
#endif

#define EXIT_USAGE 2
#define DEFAULT_OUT "results"

/* The synopsis, one line per command (index: the command's), shown under
 * every usage error of that command; `help` adds the run options. */
static const char *const synopsis[][3] = {
  {"list", "syncq-lab list", "the experiments, with paper and figure"},
  {"claims", "syncq-lab claims", "every claim and its verdict rule, as JSON lines"},
  {"algos", "syncq-lab algos [FAMILY]", "the registry's algorithms"},
  {"run", "syncq-lab run NAME[,NAME...]|all [options]", "measure (syncq-lab run --help)"},
  {"report", "syncq-lab report DIR [--title TEXT] [--compare OLD.jsonl]", "write DIR/report.html"},
  {"compare", "syncq-lab compare A.jsonl B.jsonl", "the verdicts that differ between two runs"},
  {"version", "syncq-lab --version", "the library's version and the build's revision"},
};
#define N_SYNOPSIS (sizeof synopsis / sizeof synopsis[0])

static const char run_options_text[] =
  "run options:\n"
  "  --quick          small sizes: the whole suite in about 10 minutes on 2 cores\n"
  "  --full           the papers' sizes\n"
  "  --size SIZE      smoke, quick, default or full (smoke is for tests)\n"
  "  --threads LIST   thread counts, e.g. 1,2,4 (default: 1..2x the processing units)\n"
  "  --algos LIST     only these algorithms, e.g. faa,cas; NAME@DISCIPLINE (mcs@block)\n"
  "                   keeps that waiting discipline's rows alone\n"
  "  --where KEY=LIST only the points whose parameter KEY is one of LIST (repeatable),\n"
  "                   e.g. --full --where sorters=6000 --where send=link: 002's largest point\n"
  "  --reps N         measured repetitions per point and launch, 1.."
  "100"
  " (default: 1 at --quick,\n"
  "                   5 otherwise; each launch adds a warm-up)\n"
  "  --max-reps M     repeat a point's group of variants up to M times while the group has\n"
  "                   taken under its time budget (default: 8 at --quick within 40 ms per\n"
  "                   variant, 30 within 250 ms otherwise; with --reps alone, exactly N)\n"
  "  --claim-budget MS then repeat the variants a claim's verdict reads, alone, while they have\n"
  "                   taken under MS per variant, up to 100 times (default: 150 at --quick,\n"
  "                   600 otherwise; 0 at smoke and with --reps alone; 0: never)\n"
  "  --launches K     measure every point in K separate launches of the run, one after\n"
  "                   another (1.."
  "20"
  "; default 3, 1 at smoke): the\n"
  "                   report's confidence intervals see the variation between launches\n"
  "  --suite-budget S the repetitions past --reps (--max-reps, --claim-budget) share S seconds\n"
  "                   over the whole run: on a plan of more points each gets less (default:\n"
  "                   360 at --quick, 0 otherwise; 0: no cap)\n"
  "  --pus N          plan as if the machine had N processing units (thread lists, budgets;\n"
  "                   default: SYNCQ_LAB_PUS, else the machine's); the machine record keeps both\n"
  "  --plan           print the plan (JSON lines: each experiment's thread counts, points and\n"
  "                   claimed points, then the budget arithmetic) and measure nothing\n"
  "  --out DIR        where results.jsonl goes (default " DEFAULT_OUT
  ")\n"
  "  --no-pin         do not pin threads to processing units\n"
  "  --perf-counters  read event counters around the workers' bodies (cycles, instructions,\n"
  "                   LLC and branch misses, page faults, CPU migrations, those the machine\n"
  "                   has) in every experiment; by default only the queue experiments\n"
  "                   (dg25-*, queue-sides, queue-1p1c) read them, whose workers seldom\n"
  "                   switch (a counted thread's context switch costs more)\n"
  "  --no-perf-counters\n"
  "                   read none: the points carry none of their counts\n"
  "  --experiment-timeout S\n"
  "                   stop an experiment's process (and the processes it started) that has\n"
  "                   run S seconds, note it FAILED and go on with the next (0: never;\n"
  "                   default: 10 minutes plus 10x the experiment's estimated time)\n"
  "  --no-fork        run every experiment in this one process, one after another (for a\n"
  "                   debugger or a profiler), instead of each in a process of its own; a\n"
  "                   crash then ends the run, one experiment's leftovers (heap, a peer's\n"
  "                   threads) sit under the next one's timing, and there is no watchdog:\n"
  "                   an experiment that hangs hangs the run\n"
  "  --queue-wait W   how the queue experiments (dg25-*, queue-sides) wait after a failed\n"
  "                   poll, the same for every queue and peer: pause (default: one pause, a\n"
  "                   yield every 32nd poll), backoff (crossbeam's snooze: 1, 2, ..., 64\n"
  "                   pauses, then a yield each time) or yield (a yield each time); the\n"
  "                   machine record and the report name it\n"
  "  --quiet          no progress lines\n";

/* The command a usage error belongs to (NULL: none recognised yet). */
static const char *g_command;

static void print_synopsis(FILE *f, const char *only) {
  const char *prefix = "usage: ";
  for (size_t i = 0; i < N_SYNOPSIS; i++) {
    if (only != NULL && strcmp(only, synopsis[i][0]) != 0) continue;
    fprintf(f, "%s%-58s %s\n", prefix, synopsis[i][1], synopsis[i][2]);
    prefix = "       ";
  }
}

/* One line saying what is wrong, the synopsis of the command at hand (all
 * of them when there is none) and where the rest is: never the whole
 * option list, which buries the error. */
static int usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "syncq-lab: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n");
  print_synopsis(stderr, g_command);
  fprintf(stderr, "(syncq-lab help: every command and option)\n");
  return EXIT_USAGE;
}

static int cmd_help(void) {
  print_synopsis(stdout, NULL);
  fputs("\n", stdout);
  fputs(run_options_text, stdout);
  return 0;
}

static int cmd_version(void) {
  printf("syncq-lab %s (build %s)\n", syncq_version(), lab_git_revision());
  return 0;
}

static int cmd_list(void) {
  printf("%-16s %-46s %-12s %s\n", "EXPERIMENT", "PAPER", "FIGURE", "TITLE");
  for (size_t i = 0; i < lab_experiment_count(); i++) {
    const lab_experiment *e = lab_experiment_at(i);
    printf("%-16s %-46s %-12s %s\n", e->name, e->paper, e->figure, e->title);
  }
  return 0;
}

/* Characters of a UTF-8 string (papers cite sections as "§3.1"): the
 * bytes that do not continue a character. */
static int text_width(const char *s) {
  int w = 0;
  for (; s != NULL && *s; s++) w += ((unsigned char)*s & 0xC0) != 0x80;
  return w;
}

/* One JSON line per claim: experiment, text and rule (parsed; null when the
 * rule does not parse, which tests/lab refuses). For the tests and tools
 * that judge the claims without running anything. */
static int cmd_claims(void) {
  for (size_t i = 0; i < lab_experiment_count(); i++) {
    const lab_experiment *e = lab_experiment_at(i);
    for (size_t c = 0; c < e->nclaims; c++) {
      json_error_t err;
      json_t *rule = json_loads(e->claims[c].rule, 0, &err);
      json_t *o = json_pack("{s:s, s:s, s:o}", "experiment", e->name, "text", e->claims[c].text, "rule",
                            rule != NULL ? rule : json_null());
      char *line = o != NULL ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
      json_decref(o);
      if (line == NULL) {
        fprintf(stderr, "syncq-lab: out of memory\n");
        return 1;
      }
      printf("%s\n", line);
      free(line);
    }
  }
  return fflush(stdout) == 0 ? 0 : 1;
}

/* The registry as a table whose columns fit their longest entry. */
typedef struct algo_row {
  const char *cell[6];
  char props[128];
} algo_row;

static int cmd_algos(int argc, char **argv) {
  if (argc > 1) return usage_error("algos takes at most one family (got '%s')", argv[1]);
  syncq_family fam;
  if (argc == 1 && syncq_family_from_name(argv[0], &fam) != SYNCQ_OK) {
    fprintf(stderr, "syncq-lab: unknown family '%s'; families:", argv[0]);
    for (int f = 0; f < SYNCQ_FAMILY_COUNT; f++) fprintf(stderr, " %s", syncq_family_name((syncq_family)f));
    fprintf(stderr, "\n");
    return EXIT_USAGE;
  }
  static algo_row rows[SYNCQ_FAMILY_COUNT * SYNCQ_REGISTRY_MAX + 1];
  size_t nrows = 0;
  rows[nrows++] = (algo_row){{"FAMILY", "NAME", "PROGRESS", "PROPERTIES", "PAPER", "TITLE"}, ""};
  for (int f = 0; f < SYNCQ_FAMILY_COUNT; f++) {
    if (argc == 1 && fam != (syncq_family)f) continue;
    const syncq_algo *a[SYNCQ_REGISTRY_MAX];
    int n = syncq_registry_list((syncq_family)f, a, SYNCQ_REGISTRY_MAX);
    for (int i = 0; i < n && i < SYNCQ_REGISTRY_MAX; i++) {
      algo_row *r = &rows[nrows++];
      syncq_props_format(a[i]->props, r->props, sizeof r->props);
      const char *cells[6] = {syncq_family_name((syncq_family)f),
                              a[i]->name,
                              syncq_progress_name(a[i]->progress),
                              r->props,
                              a[i]->paper,
                              a[i]->title};
      memcpy(r->cell, cells, sizeof cells);
    }
  }
  int width[6] = {0};
  for (size_t i = 0; i < nrows; i++)
    for (int c = 0; c < 5; c++) {
      int w = text_width(rows[i].cell[c]);
      if (w > width[c]) width[c] = w;
    }
  for (size_t i = 0; i < nrows; i++) {
    for (int c = 0; c < 5; c++)
      printf("%s%*s", rows[i].cell[c] ? rows[i].cell[c] : "", width[c] - text_width(rows[i].cell[c]) + 2, "");
    printf("%s\n", rows[i].cell[5] ? rows[i].cell[5] : "");
  }
  return 0;
}

/* Parse "1,2,4" into out; -1 on anything else. */
static int parse_int_list(const char *s, int *out, int cap, int lo, int hi) {
  int n = 0;
  const char *p = s;
  while (*p) {
    char *end;
    errno = 0;
    long v = strtol(p, &end, 10);
    if (end == p || errno || v < lo || v > hi || n == cap || (*end != ',' && *end != '\0')) return -1;
    out[n++] = (int)v;
    p = *end == ',' ? end + 1 : end;
    if (*end == ',' && *p == '\0') return -1;
  }
  return n;
}

/* Split a comma list in place. */
static int split_list(char *s, const char **out, int cap) {
  int n = 0;
  for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
    if (n == cap) return -1;
    out[n++] = tok;
  }
  return n;
}

static void print_experiment_names(void) {
  fprintf(stderr, "experiments:");
  for (size_t i = 0; i < lab_experiment_count(); i++) fprintf(stderr, " %s", lab_experiment_at(i)->name);
  fprintf(stderr, " all\n");
}

static void print_valid_algos(const lab_experiment *const *exps) {
  fprintf(stderr, "valid algorithms for these experiments:");
  for (size_t i = 0; exps[i]; i++) {
    const lab_experiment *e = exps[i];
    for (int f = 0; f < 2; f++) {
      if (!(f == 0 ? e->uses_registry : e->also_family)) continue;
      const syncq_algo *a[SYNCQ_REGISTRY_MAX];
      int n = syncq_registry_list(f == 0 ? e->family : e->family2, a, SYNCQ_REGISTRY_MAX);
      for (int k = 0; k < n && k < SYNCQ_REGISTRY_MAX; k++) fprintf(stderr, " %s", a[k]->name);
    }
    for (size_t k = 0; e->fixed_algos && e->fixed_algos[k]; k++) fprintf(stderr, " %s", e->fixed_algos[k]);
  }
  fprintf(stderr, "\n(a name may carry a waiting discipline, NAME@block: the rows of that discipline alone)\n");
}

extern char **environ;

/* This program's path (/proc/self/exe) into out; false (errno set) when
 * it cannot be read. */
static bool self_exe(char *out, size_t len) {
  ssize_t n = readlink("/proc/self/exe", out, len - 1);
  if (n <= 0) return false;
  out[n] = '\0';
  return true;
}

/* The whole command line of this process, for the launches of a run (a
 * copy: kept for the life of the process). */
static int g_argc;
static char **g_argv;

/* A run of k launches: start this program k times, one after another, each
 * measuring every chosen point once more ("--launch i --run-id ID": the
 * options a launch gets, not meant for users). They append to the same
 * results file under one run id; the first writes the machine record. The
 * launches run in turn, never at once: each must have the machine to itself. */
static int run_launches(const lab_options *opt) {
  char exe[PATH_MAX];
  if (!self_exe(exe, sizeof exe)) {
    fprintf(stderr, "syncq-lab: cannot find this program to launch it again: %s\n", strerror(errno));
    return 1;
  }
  char run_id[LAB_RUN_ID_MAX], launch[16], launches[16];
  lab_results_new_run_id(run_id, sizeof run_id);
  snprintf(launches, sizeof launches, "%d", opt->launches);
  char **args = calloc((size_t)g_argc + 8, sizeof *args);
  if (args == NULL) {
    fprintf(stderr, "syncq-lab: out of memory\n");
    return 1;
  }
  int k = 0;
  args[k++] = exe;
  for (int i = 1; i < g_argc; i++) args[k++] = g_argv[i];
  args[k++] = "--launches";
  args[k++] = launches;
  args[k++] = "--run-id";
  args[k++] = run_id;
  args[k++] = "--launch";
  args[k++] = launch;
  args[k] = NULL;
  int rc = 0;
  for (int i = 1; i <= opt->launches && rc == 0; i++) {
    snprintf(launch, sizeof launch, "%d", i);
    if (!opt->quiet) fprintf(stderr, "syncq-lab: launch %d of %d (run %s)\n", i, opt->launches, run_id);
    pid_t pid;
    int err = posix_spawn(&pid, exe, NULL, NULL, args, environ);
    if (err != 0) {
      fprintf(stderr, "syncq-lab: cannot start launch %d: %s\n", i, strerror(err));
      rc = 1;
      break;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
      if (errno != EINTR) {
        status = -1;
        break;
      }
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      if (status != -1 && WIFSIGNALED(status))
        fprintf(stderr, "syncq-lab: launch %d of %d died of signal %d; the run stops\n", i, opt->launches,
                WTERMSIG(status));
      else fprintf(stderr, "syncq-lab: launch %d of %d failed; the run stops\n", i, opt->launches);
      rc = 1;
    }
  }
  free(args);
  return rc;
}

static int default_launches(lab_size size) {
  switch (size) {
  case LAB_SIZE_SMOKE:
    return 1;
  case LAB_SIZE_QUICK:
    return LAB_QUICK_LAUNCHES;
  case LAB_SIZE_DEFAULT:
    return LAB_DEFAULT_LAUNCHES;
  default:
    return LAB_FULL_LAUNCHES;
  }
}

/* The adaptive repetitions (lab.h, LAB_QUICK_MAX_REPS): the size's cap and
 * budget unless the user fixed the count with --reps alone or set the cap. */
static void set_repetitions(lab_options *opt, bool reps_given, int max_reps, int claim_budget_ms) {
  int cap = LAB_DEFAULT_MAX_REPS;
  int64_t budget_ms = LAB_DEFAULT_POINT_BUDGET_MS;
  int64_t claim_ms = LAB_DEFAULT_CLAIM_BUDGET_MS;
  if (opt->size == LAB_SIZE_QUICK) {
    cap = LAB_QUICK_MAX_REPS;
    budget_ms = LAB_QUICK_POINT_BUDGET_MS;
    claim_ms = LAB_QUICK_CLAIM_BUDGET_MS;
  }
  if (opt->size == LAB_SIZE_SMOKE || (reps_given && max_reps == 0)) cap = opt->reps, claim_ms = 0;
  if (max_reps > 0) cap = max_reps;
  if (claim_budget_ms >= 0) claim_ms = claim_budget_ms;
  opt->max_reps = cap < opt->reps && max_reps == 0 ? opt->reps : cap;
  opt->point_budget_ns = budget_ms * 1000000;
  opt->claim_budget_ns = claim_ms * 1000000;
  opt->claim_max_reps = claim_ms > 0 ? LAB_MAX_REPS : opt->max_reps;
}

/* "--pus N" or SYNCQ_LAB_PUS=N: 1..LAB_MAX_PLAN_PUS; -1 on anything else. */
static int parse_pus(const char *s) {
  int r[1];
  return parse_int_list(s, r, 1, 1, LAB_MAX_PLAN_PUS) == 1 ? r[0] : -1;
}

static int cmd_run(int argc, char **argv, char *command) {
  if (argc < 1) return usage_error("%s", "run needs an experiment name (or all)");
  for (int i = 0; i < argc; i++)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      print_synopsis(stdout, "run");
      fputs("\n", stdout);
      fputs(run_options_text, stdout);
      return 0;
    }
  static lab_options opt;
  opt.size = LAB_SIZE_DEFAULT;
  opt.reps = LAB_DEFAULT_REPS;
  opt.pin = true;
  opt.out_dir = DEFAULT_OUT;
  opt.command = command;
  bool reps_given = false, launches_given = false;
  int max_reps = 0;              /* 0: the size's default */
  int claim_budget_ms = -1;      /* -1: the size's default */
  int suite_budget_s = -1;       /* -1: the size's default */
  opt.experiment_timeout_s = -1; /* derived from the plan (lab.h, LAB_WATCHDOG_FACTOR) */
  const char *env_pus = getenv("SYNCQ_LAB_PUS");
  if (env_pus != NULL && env_pus[0] != '\0') {
    opt.plan_pus = parse_pus(env_pus);
    if (opt.plan_pus < 0) return usage_error("SYNCQ_LAB_PUS wants a number 1..4096 (got '%s')", env_pus);
  }
  char *names = argv[0];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *val = (i + 1 < argc) ? argv[i + 1] : NULL;
    if (strcmp(a, "--quick") == 0) opt.size = LAB_SIZE_QUICK;
    else if (strcmp(a, "--full") == 0) opt.size = LAB_SIZE_FULL;
    else if (strcmp(a, "--no-pin") == 0) opt.pin = false;
    else if (strcmp(a, "--no-perf-counters") == 0) opt.perf_mode = LAB_PERF_NONE;
    else if (strcmp(a, "--perf-counters") == 0) opt.perf_mode = LAB_PERF_ALL;
    else if (strcmp(a, "--no-fork") == 0) opt.no_fork = true;
    else if (strcmp(a, "--quiet") == 0) opt.quiet = true;
    else if (strcmp(a, "--plan") == 0) opt.plan_only = true;
    else if (strcmp(a, "--size") == 0 || strcmp(a, "--threads") == 0 || strcmp(a, "--algos") == 0 ||
             strcmp(a, "--where") == 0 || strcmp(a, "--reps") == 0 || strcmp(a, "--max-reps") == 0 ||
             strcmp(a, "--out") == 0 || strcmp(a, "--claim-budget") == 0 || strcmp(a, "--suite-budget") == 0 ||
             strcmp(a, "--pus") == 0 || strcmp(a, "--launches") == 0 || strcmp(a, "--launch") == 0 ||
             strcmp(a, "--run-id") == 0 || strcmp(a, "--queue-wait") == 0 || strcmp(a, "--experiment-timeout") == 0) {
      if (val == NULL) return usage_error("%s needs a value", a);
      i++;
      if (strcmp(a, "--size") == 0) {
        if (strcmp(val, "smoke") == 0) opt.size = LAB_SIZE_SMOKE;
        else if (strcmp(val, "quick") == 0) opt.size = LAB_SIZE_QUICK;
        else if (strcmp(val, "default") == 0) opt.size = LAB_SIZE_DEFAULT;
        else if (strcmp(val, "full") == 0) opt.size = LAB_SIZE_FULL;
        else return usage_error("unknown size '%s' (smoke, quick, default, full)", val);
      } else if (strcmp(a, "--threads") == 0) {
        opt.nthreads = parse_int_list(val, opt.threads, LAB_MAX_THREADS_LIST, 1, 4096);
        if (opt.nthreads <= 0)
          return usage_error("--threads wants a list of counts 1..4096 like 1,2,4 (got '%s')", val);
      } else if (strcmp(a, "--algos") == 0) {
        opt.nalgos = split_list(argv[i], opt.algos, LAB_MAX_ALGOS);
        if (opt.nalgos <= 0) return usage_error("--algos wants a list of names like faa,cas (got '%s')", val);
      } else if (strcmp(a, "--where") == 0) {
        char *eq = strchr(argv[i], '=');
        if (eq == NULL || eq == argv[i]) return usage_error("--where wants KEY=LIST like sorters=6000 (got '%s')", val);
        if (opt.nwhere == LAB_MAX_PARAMS) return usage_error("%s", "too many --where (at most 8)");
        *eq = '\0';
        struct lab_where *w = &opt.where[opt.nwhere++];
        w->key = argv[i];
        w->nvals = split_list(eq + 1, w->vals, LAB_MAX_ALGOS);
        if (w->nvals <= 0) return usage_error("--where wants KEY=LIST like sorters=6000 (got '%s=')", val);
      } else if (strcmp(a, "--reps") == 0) {
        int r[1];
        if (parse_int_list(val, r, 1, 1, LAB_MAX_REPS) != 1)
          return usage_error("--reps wants a number 1..100 (got '%s')", val);
        opt.reps = r[0];
        reps_given = true;
      } else if (strcmp(a, "--max-reps") == 0) {
        int r[1];
        if (parse_int_list(val, r, 1, 1, LAB_MAX_REPS) != 1)
          return usage_error("--max-reps wants a number 1..100 (got '%s')", val);
        max_reps = r[0];
      } else if (strcmp(a, "--claim-budget") == 0) {
        int r[1];
        if (parse_int_list(val, r, 1, 0, LAB_MAX_CLAIM_BUDGET_MS) != 1)
          return usage_error("--claim-budget wants milliseconds 0..60000 (got '%s')", val);
        claim_budget_ms = r[0];
      } else if (strcmp(a, "--suite-budget") == 0) {
        int r[1];
        if (parse_int_list(val, r, 1, 0, 86400) != 1)
          return usage_error("--suite-budget wants seconds 0..86400 (got '%s')", val);
        suite_budget_s = r[0];
      } else if (strcmp(a, "--experiment-timeout") == 0) {
        int r[1];
        if (parse_int_list(val, r, 1, 0, LAB_MAX_EXPERIMENT_TIMEOUT_S) != 1)
          return usage_error("--experiment-timeout wants seconds 0..86400, 0 for none (got '%s')", val);
        opt.experiment_timeout_s = r[0];
      } else if (strcmp(a, "--pus") == 0) {
        opt.plan_pus = parse_pus(val);
        if (opt.plan_pus < 0) return usage_error("--pus wants a number 1..4096 (got '%s')", val);
      } else if (strcmp(a, "--launches") == 0 || strcmp(a, "--launch") == 0) {
        int r[1];
        if (parse_int_list(val, r, 1, 1, LAB_MAX_LAUNCHES) != 1)
          return usage_error("--launches wants a number 1..20 (got '%s')", val);
        if (strcmp(a, "--launch") == 0) opt.launch = r[0];
        else {
          opt.launches = r[0];
          launches_given = true;
        }
      } else if (strcmp(a, "--queue-wait") == 0) {
        if (lab_queue_wait_from_name(val, &opt.queue_wait) != 0)
          return usage_error("unknown --queue-wait '%s' (pause, backoff, yield)", val);
      } else if (strcmp(a, "--run-id") == 0) {
        if (val[0] == '\0' || strlen(val) >= LAB_RUN_ID_MAX)
          return usage_error("--run-id wants a short id (got '%s')", val);
        opt.run_id = val;
      } else {
        if (val[0] == '\0') return usage_error("%s", "--out needs a directory");
        opt.out_dir = val;
      }
    } else {
      return usage_error("unknown option '%s'", a);
    }
  }
  if (opt.size == LAB_SIZE_SMOKE && !reps_given) opt.reps = 1;
  if (opt.size == LAB_SIZE_QUICK && !reps_given) opt.reps = LAB_QUICK_REPS;
  if (!launches_given) opt.launches = default_launches(opt.size);
  set_repetitions(&opt, reps_given, max_reps, claim_budget_ms);
  if (suite_budget_s < 0) suite_budget_s = opt.size == LAB_SIZE_QUICK ? LAB_QUICK_SUITE_BUDGET_S : 0;
  opt.suite_budget_ns = (int64_t)suite_budget_s * 1000000000;
  if (opt.max_reps < opt.reps) return usage_error("%s", "--max-reps must be at least --reps");
  if (opt.no_fork && opt.experiment_timeout_s > 0)
    return usage_error("%s", "--experiment-timeout needs a process per experiment: not with --no-fork");
  if (opt.launch > 0 && (opt.run_id == NULL || opt.launch > opt.launches))
    return usage_error("%s", "--launch is for the launches of a run: it needs --run-id and at most --launches");
  if (opt.launch > 0) {
    /* The machine record shows the user's command, not what run_launches() appended. */
    char *appended = NULL;
    for (char *p = strstr(command, " --launches "); p != NULL; p = strstr(p + 1, " --launches ")) appended = p;
    if (appended != NULL) *appended = '\0';
  }

  /* Experiments: "all" or a comma list. */
  static const lab_experiment *exps[64];
  size_t ne = 0;
  if (strcmp(names, "all") == 0) {
    for (size_t i = 0; i < lab_experiment_count() && ne < 63; i++) exps[ne++] = lab_experiment_at(i);
  } else {
    const char *list[64];
    int n = split_list(names, list, 63);
    if (n <= 0) return usage_error("%s", "run needs an experiment name (or all)");
    for (int i = 0; i < n; i++) {
      const lab_experiment *e = lab_experiment_find(list[i]);
      if (e == NULL) {
        fprintf(stderr, "syncq-lab: unknown experiment '%s'\n", list[i]);
        print_experiment_names();
        return EXIT_USAGE;
      }
      exps[ne++] = e;
    }
  }
  exps[ne] = NULL;

  /* Every --algos name must be one some chosen experiment can run; then
   * keep only the experiments that run at least one of them. */
  for (int k = 0; k < opt.nalgos; k++) {
    bool known = false;
    for (size_t i = 0; i < ne && !known; i++) known = lab_experiment_knows(exps[i], opt.algos[k]);
    if (!known) {
      fprintf(stderr, "syncq-lab: unknown algorithm '%s'\n", opt.algos[k]);
      print_valid_algos(exps);
      return EXIT_USAGE;
    }
  }
  if (opt.nalgos > 0) {
    size_t kept = 0;
    for (size_t i = 0; i < ne; i++) {
      bool any = false;
      for (int k = 0; k < opt.nalgos && !any; k++) any = lab_experiment_knows(exps[i], opt.algos[k]);
      if (any) exps[kept++] = exps[i];
      else if (!opt.quiet) fprintf(stderr, "syncq-lab: skipping %s: none of --algos applies\n", exps[i]->name);
    }
    exps[kept] = NULL;
  }
  if (opt.launches > 1 && opt.launch == 0 && !opt.plan_only) return run_launches(&opt);
  return lab_run(&opt, exps) == 0 ? 0 : 1;
}

/* The report builder of an installed syncq-lab, relative to the program
 * (bin/syncq-lab -> share/syncq/report/build.py): found wherever the
 * prefix was installed or moved, with no source tree left. */
static bool installed_report_script(char *out, size_t len) {
  char exe[PATH_MAX];
  if (!self_exe(exe, sizeof exe)) return false;
  char *slash = strrchr(exe, '/');
  if (slash == NULL) return false;
  *slash = '\0';
  int w = snprintf(out, len, "%s/%s", exe, SYNCQ_REPORT_FROM_BIN);
  return w > 0 && (size_t)w < len && access(out, R_OK) == 0;
}

/* Run the report builder (report/build.py) with argv; sub, when not NULL,
 * goes first (the builder's "compare"). Returns only on failure. */
static int exec_report(const char *sub, int argc, char **argv) {
  const char *py = getenv("SYNCQ_PYTHON");
  const char *script = getenv("SYNCQ_REPORT_SCRIPT");
  static char installed[PATH_MAX];
  bool from_install = false;
  if (script == NULL || script[0] == '\0') {
    from_install = installed_report_script(installed, sizeof installed);
    script = from_install ? installed : SYNCQ_REPORT_SCRIPT;
  }
  if (py == NULL || py[0] == '\0') {
    /* the build's virtual environment while the checkout exists; an
     * installed lab without it uses the python3 on PATH */
    py = (!from_install && access(SYNCQ_PYTHON, X_OK) == 0) ? SYNCQ_PYTHON : "python3";
  }
  if (access(script, R_OK) != 0) {
    fprintf(stderr, "syncq-lab: report builder not found at %s (set SYNCQ_REPORT_SCRIPT)\n", script);
    return 1;
  }
  char *args[16];
  int n = 0;
  args[n++] = (char *)py;
  args[n++] = (char *)script;
  if (sub != NULL) args[n++] = (char *)sub;
  for (int i = 0; i < argc && n < 15; i++) args[n++] = argv[i];
  args[n] = NULL;
  execvp(py, args);
  fprintf(stderr, "syncq-lab: cannot run %s: %s (run scripts/bootstrap, or set SYNCQ_PYTHON)\n", py, strerror(errno));
  return 1;
}

static int cmd_report(int argc, char **argv) {
  if (argc < 1) return usage_error("%s", "report needs the results directory");
  return exec_report(NULL, argc, argv);
}

static int cmd_compare(int argc, char **argv) {
  if (argc != 2) return usage_error("%s", "compare needs two results files (A.jsonl B.jsonl)");
  return exec_report("compare", argc, argv);
}

int main(int argc, char **argv) {
  /* A copy of the command line as given: cmd_run splits its lists in place,
   * and the launches of a run must get the lists whole. */
  g_argc = argc;
  g_argv = calloc((size_t)argc + 1, sizeof *g_argv);
  for (int i = 0; g_argv != NULL && i < argc; i++)
    if ((g_argv[i] = strdup(argv[i])) == NULL) g_argv = NULL;
  if (g_argv == NULL) {
    fprintf(stderr, "syncq-lab: out of memory\n");
    return 1;
  }
  if (argc < 2) return usage_error("%s", "missing command");
  for (size_t i = 0; i < N_SYNOPSIS; i++)
    if (strcmp(argv[1], synopsis[i][0]) == 0) g_command = synopsis[i][0];
  /* The peer libraries join the registry before anything lists it, so every
   * experiment that lists a family runs them (lab/peers/peers.h). SPSC
   * structures only where the experiments look at SYNCQ_PROP_SPSC: see
   * LAB_PEERS_IN_LAB. A refused registration is not fatal: the machine
   * record says which peers are missing and why. */
  (void)lab_peers_register(LAB_PEERS_IN_LAB);
  /* The lab's tests' faulty queue, only when SYNCQ_LAB_QUEUE_FAULT asks for it. */
  if (lab_queue_faults_register() < 0) {
    fprintf(stderr, "syncq-lab: SYNCQ_LAB_QUEUE_FAULT must be lose:K or dup:K with K >= 1\n");
    return 2;
  }
  /* The watches' bound for a lost item or message (lab/lab.h). */
  if (lab_lost_ms_register() < 0) {
    fprintf(stderr, "syncq-lab: SYNCQ_LAB_LOST_MS must be a count of milliseconds from 1 to %d\n", LAB_LOST_MS_MAX);
    return 2;
  }
  /* Likewise the send that loses or duplicates a postoffice message (lab/po_faults.h). */
  if (lab_po_faults_register() < 0) {
    fprintf(stderr, "syncq-lab: SYNCQ_LAB_PO_FAULT must be lose:K or dup:K with K >= 1\n");
    return 2;
  }
  /* And the postoffice counter slowed in one launch (lab/po_faults.h). */
  if (lab_po_slow_register() < 0) {
    fprintf(stderr, "syncq-lab: SYNCQ_LAB_PO_SLOW must be a launch number from 1 to %d\n", LAB_MAX_LAUNCHES);
    return 2;
  }
  const char *cmd = argv[1];
  char command[1024];
  size_t k = 0;
  command[0] = '\0';
  for (int i = 0; i < argc && k < sizeof command; i++)
    k += (size_t)snprintf(command + k, sizeof command - k, "%s%s", i ? " " : "", argv[i]);
  if (strcmp(cmd, "list") == 0) return argc == 2 ? cmd_list() : usage_error("%s", "list takes no arguments");
  if (strcmp(cmd, "claims") == 0) return argc == 2 ? cmd_claims() : usage_error("%s", "claims takes no arguments");
  if (strcmp(cmd, "algos") == 0) return cmd_algos(argc - 2, argv + 2);
  if (strcmp(cmd, "run") == 0) return cmd_run(argc - 2, argv + 2, command);
  if (strcmp(cmd, "report") == 0) return cmd_report(argc - 2, argv + 2);
  if (strcmp(cmd, "compare") == 0) return cmd_compare(argc - 2, argv + 2);
  if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) return cmd_help();
  if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) return cmd_version();
  return usage_error("unknown command '%s'", cmd);
}
