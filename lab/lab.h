/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lab.h — syncq-lab's internal interface: experiments, the runner that
 * measures them, worker teams, topology, and the results writer.
 *
 * An experiment (lab/exp/<paper>.c) declares its name, paper, figure, claims
 * (text + verdict rule, evaluated by the report) and a run() function. run()
 * announces itself with lab_begin() and then hands the runner one
 * lab_group per point of its sweep: the variants (algorithms) measured at
 * the same parameters. The runner interleaves their repetitions
 * (A, B, C, A, B, C, ...) so ratios compare runs made side by side, keeps
 * median, min and max, and writes one JSON Lines record per variant.
 *
 * The runner calls every run() twice: once in planning mode (groups are
 * counted, nothing is measured: lab_planning() is true) to know the work
 * ahead for the progress line, then for real. run() must therefore do its
 * costly setup inside the sample functions, not around the groups.
 */
#ifndef SYNCQ_LAB_H
#define SYNCQ_LAB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "perf_counters.h"
#include "syncq/registry.h"
#include "syncq/stats.h"

typedef enum lab_size { LAB_SIZE_SMOKE, LAB_SIZE_QUICK, LAB_SIZE_DEFAULT, LAB_SIZE_FULL } lab_size;

/* How dg25's queue drivers wait after a failed poll (FULL or EMPTY), the
 * same for every queue and peer (--queue-wait; lab/exp/dg25.c implements
 * them). One per run: the machine record names it, and the report reads
 * each experiment from one run, so no verdict mixes two. */
typedef enum lab_queue_wait {
  LAB_QUEUE_WAIT_PAUSE = 0, /* one pause, a yield every 32nd poll (the default) */
  LAB_QUEUE_WAIT_BACKOFF,   /* 1, 2, 4, ..., 64 pauses, then a yield each time */
  LAB_QUEUE_WAIT_YIELD,     /* a yield at every failed poll */
  LAB_QUEUE_WAIT_COUNT
} lab_queue_wait;

#define LAB_MAX_PARAMS 8
#define LAB_MAX_VARIANTS 64
#define LAB_MAX_THREADS_LIST 64
#define LAB_MAX_ALGOS 64
#define LAB_DEFAULT_REPS 5
/* Repeated launches (docs/results-format.md, "launch"): a run measures every
 * point in k separate processes, one after another over the whole suite,
 * so each ratio's confidence interval sees the variation between launches
 * as well as within one. Per size: launches x measured repetitions. */
#define LAB_MAX_LAUNCHES 20
#define LAB_QUICK_LAUNCHES 3
#define LAB_QUICK_REPS 1
#define LAB_DEFAULT_LAUNCHES 3
#define LAB_FULL_LAUNCHES 3
#define LAB_MAX_REPS 100
#define LAB_WARMUP_REPS 1
/* The warm-up absorbs one-time costs (code pages, lazy binding, a peer
 * library's first call, the allocator's first blocks of a size): tens of
 * microseconds. When the group's first warm-up sample took longer than
 * this, the other variants skip theirs: such a cost is then under 0.5% of
 * a sample, and for the groups of long samples (most of the suite's time)
 * the warm-ups were half of it. The variants' repetitions are interleaved
 * anyway, so no sample runs "warm" from its own previous one. */
#define LAB_WARMUP_LONG_NS 20000000
/* Cheap points get more repetitions: after its warm-up and its --reps
 * repetitions a group of variants is repeated again, all variants in turn,
 * while the group has taken less than the size's time budget per variant
 * (times the group's variants) and has fewer than the size's repetition cap.
 * A point whose sample takes a millisecond (a queue's 1P1C stream) then has
 * a median of a dozen samples for a fraction of a second, while one whose
 * sample takes 100 ms keeps --reps. The stopping rule reads the clock only,
 * never the values measured. */
#define LAB_QUICK_MAX_REPS 8
#define LAB_QUICK_POINT_BUDGET_MS 40
#define LAB_DEFAULT_MAX_REPS 30
#define LAB_DEFAULT_POINT_BUDGET_MS 250
/* The points a claim's verdict reads (claimed.h) get more: when its group
 * stops, the group's claimed variants (and the reference of its ratios) go
 * on, interleaved among themselves, while they have taken less than this
 * budget per claimed variant and have fewer than LAB_MAX_REPS repetitions.
 * The verdicts then rest on medians of many samples where samples are
 * cheap, and the suite's time goes to the points that decide them rather
 * than to every point it plots. None at smoke size or with --reps alone. */
#define LAB_QUICK_CLAIM_BUDGET_MS 150
/* ... and at least this many samples over the run's launches (each launch
 * makes its share, rounded up), past the claims' budget, whenever there is
 * one: the report finds no verdict in a point with fewer (the bootstrap
 * interval of a median needs 6 samples to reach 95%: docs/results-format.md,
 * "Too few samples", and rules.py's MIN_SAMPLES). Never past
 * LAB_MAX_CLAIM_BUDGET_MS per claimed variant. */
#define LAB_CLAIM_MIN_SAMPLES 6
#define LAB_DEFAULT_CLAIM_BUDGET_MS 600
#define LAB_MAX_CLAIM_BUDGET_MS 60000
/* The suite's budget for those repetitions (lab/budget.h): when the planned
 * points' budgets above exceed its share of a launch, they shrink alike, so
 * a machine with more processing units (more thread counts, more points)
 * spends no more time on them than a small one. Per run, all launches
 * together; 0: no cap (the default and full sizes). */
#define LAB_QUICK_SUITE_BUDGET_S 360
#define LAB_MAX_PLAN_PUS 4096
/* The watchdog over each experiment's process (lab_run): unless
 * --experiment-timeout sets it, an experiment may take the floor plus the
 * factor times its estimate, the largest of: its planned budgets (points x
 * point budget + claimed points x claim budget, after fitting), its points
 * at the run's seconds per point so far (the rate behind the progress
 * line's "about Xs left"), and its points at its own rate over the points
 * it has finished. The factor leaves room over the largest ratio of an
 * experiment's time to that estimate measured under load (the figures are
 * in docs/lab-internals.md, "The watchdog"). The floor is the life a
 * process team's children get (LAB_PROC_CHILD_ALARM_S): a slow first group
 * is not stopped before an estimate exists. A hang waits out the floor; a
 * run with a hard time limit sets its own deadline. */
#define LAB_WATCHDOG_FACTOR 10
#define LAB_WATCHDOG_FLOOR_S 600
#define LAB_MAX_EXPERIMENT_TIMEOUT_S 86400

typedef struct lab_ctx lab_ctx;

/* One parameter of a point: numeric (str == NULL) or a string. */
typedef struct lab_param {
  const char *key;
  double num;
  const char *str;
} lab_param;

#define LAB_MAX_EXTRA 4

/* What one repetition of one variant measured. */
typedef struct lab_sample {
  double value;                /* the group's metric */
  uint64_t ops;                /* operations made, to turn stats into per-op counts (0: none) */
  syncq_stats stats;           /* algorithm events, summed over the team */
  uint64_t empty_polls;        /* dequeues answered EMPTY and retried, summed over the team */
  uint64_t full_polls;         /* enqueues answered FULL and retried, summed over the team */
  double extra[LAB_MAX_EXTRA]; /* the group's extra metrics, in the order of lab_group.extra */
} lab_sample;

/* Measure one repetition of `arg` into *out. Returns 0, or -1 after
 * lab_fail() said why (a failed validation aborts the run: numbers from a
 * wrong algorithm are worthless). */
typedef int (*lab_sample_fn)(lab_ctx *ctx, const void *arg, lab_sample *out);

typedef struct lab_variant {
  const char *algorithm; /* registry name or, for phys, the floor's name */
  const void *arg;       /* passed to sample */
} lab_variant;

typedef struct lab_group {
  lab_param params[LAB_MAX_PARAMS];
  int nparams;
  const char *metric; /* e.g. "time" */
  const char *unit;   /* e.g. "ms" */
  bool higher_is_better;
  lab_sample_fn sample;
  lab_variant variants[LAB_MAX_VARIANTS];
  int nvariants;
  /* When set to one of the variants' algorithm names, every variant also
   * gets a point of metric "<metric>_ratio" (unit "x"): the median over
   * repetitions of its r-th sample divided by the reference's r-th sample
   * (interleaved runs, so each ratio compares runs made side by side).
   * If --algos excludes the reference, no ratio points are written. */
  const char *normalize_to;
  /* Further metrics the same run measures (e.g. a ring's spawn time and
   * memory beside its hop time): each gets its own points (and ratio
   * points with normalize_to), from lab_sample.extra[i]. */
  struct lab_extra_metric {
    const char *metric;
    const char *unit;
    bool higher_is_better;
    /* A count of what happened in the run (the pseudo-scheduler's
     * preemptions), not a cost: no ratio points, which would compare
     * how often something happened as if it were a speed. */
    bool no_ratio;
  } extra[LAB_MAX_EXTRA];
  int nextra;
  /* A group of coarse samples (each a whole number of a pseudo-scheduler's
   * quanta, so two medians of a few samples differ by a quantum or none)
   * asks its claimed variants for at least this many repetitions: past the
   * claims' budget, but never past LAB_MAX_CLAIM_BUDGET_MS per claimed
   * variant, and only when there is a claims' budget (none at smoke size,
   * with --reps alone or --claim-budget 0). 0: the budget alone decides. */
  int claim_min_reps;
} lab_group;

typedef struct lab_claim {
  const char *text; /* the paper's claim, in a sentence, with its section */
  const char *rule; /* JSON verdict rule, docs/results-format.md */
} lab_claim;

typedef struct lab_experiment {
  const char *name;
  const char *paper;
  const char *figure;
  const char *title;
  const char *x; /* swept parameter, or NULL for a table of values */
  bool log_y;
  bool log_x; /* plot x on a log axis (sweeps like 1..6000 sorters) */
  const lab_claim *claims;
  size_t nclaims;
  /* Further plots against another param: a JSON array for the experiment
   * record's "also_x" (docs/results-format.md), or NULL. */
  const char *also_x;
  /* Algorithms it can run: those of `family` in the registry when
   * uses_registry, plus the NULL-terminated fixed list (baselines such as
   * "two-cas", or phys's floors). */
  bool uses_registry;
  syncq_family family;
  bool also_family; /* and those of family2 (np99-locks: locks and queues) */
  syncq_family family2;
  const char *const *fixed_algos;
  int (*run)(lab_ctx *ctx);
  /* Its teams count their workers' events by default (perf_counters.h;
   * docs/lab.md, "Event counters"): set where the workers seldom switch
   * (the queue experiments, whose polls spin), since a counted thread's
   * context switch costs more; any other experiment counts only under
   * --perf-counters. */
  bool perf_counters;
  /* Its processes run postoffice fiber systems, whose deadline clock
   * (syncq_po_clock_gate) may change during the run: a rate check that
   * trips makes every later switch read the clock. Each of its points
   * records the gate as it stood when the point was written
   * (docs/results-format.md, "point"). */
  bool postoffice;
} lab_experiment;

/* 001's plots against the multiprogramming level: "level" on x, one line per
 * algorithm and mode, the dedicated run (level 1) starting every line; the
 * normalized time, as 001's figures show it. */
#define LAB_ALSO_X_LEVEL \
  "[{\"x\": \"level\", \"join\": \"mode\", \"base\": \"dedicated\", \"metrics\": [\"time_ratio\"]}]"

/* ---- the experiments (lab/experiments.c) ---- */
size_t lab_experiment_count(void);
const lab_experiment *lab_experiment_at(size_t i);
const lab_experiment *lab_experiment_find(const char *name);
/* True when the experiment can run the named algorithm. */
bool lab_experiment_knows(const lab_experiment *e, const char *algo);

/* ---- options of a run ---- */
typedef enum lab_perf_mode { LAB_PERF_DEFAULT, LAB_PERF_ALL, LAB_PERF_NONE } lab_perf_mode;

typedef struct lab_options {
  lab_size size;
  int reps;                /* measured repetitions per point, per launch (at least) */
  int max_reps;            /* more while the group is within its budget (reps..max_reps) */
  int64_t point_budget_ns; /* a group of v variants stops at reps once it took v x this */
  int64_t claim_budget_ns; /* then its c claimed variants go on for c x this (0: never) */
  int64_t suite_budget_ns; /* the two above shrink to fit this over the plan (0: no cap; budget.h) */
  int plan_pus;            /* plan as if the machine had this many PUs (0: its own) */
  bool plan_only;          /* print the plan (JSON lines on stdout) and measure nothing */
  int claim_max_reps;      /* ... up to this many repetitions */
  int launches;            /* separate launches of the whole run (1: this process measures) */
  int launch;              /* 1..launches when this process is one launch of a run; 0 otherwise */
  const char *run_id;      /* the run a launch belongs to (NULL: a new run) */
  bool pin;                /* pin workers with hwloc */
  int threads[LAB_MAX_THREADS_LIST];
  int nthreads; /* 0: each experiment's default sweep */
  const char *algos[LAB_MAX_ALGOS];
  int nalgos; /* 0: all the experiment knows */
  const char *out_dir;
  const char *command; /* the command line, for the machine record */
  bool quiet;          /* no progress lines */
  /* Run every experiment in this process, one after another (--no-fork),
   * instead of each in a child forked for it (lab_run): one process for a
   * debugger or a profiler, at the price of one experiment's leftovers
   * under the next one's timing and a crash ending the run. */
  bool no_fork;
  /* The watchdog's deadline per experiment, in seconds (--experiment-timeout):
   * > 0 that, 0 none, < 0 derived from the plan (LAB_WATCHDOG_FACTOR). Only
   * with a process per experiment: under no_fork there is no watchdog. */
  int experiment_timeout_s;
  /* --where KEY=V1,V2 (repeatable): only the points whose parameter KEY
   * is one of the values (numbers compare numerically, strings exactly),
   * for every KEY given. */
  struct lab_where {
    const char *key;
    const char *vals[LAB_MAX_ALGOS];
    int nvals;
  } where[LAB_MAX_PARAMS];
  int nwhere; /* 0: every point */

  lab_queue_wait queue_wait; /* dg25's waiting after a failed poll (--queue-wait) */
  /* Event counters (perf_counters.h): LAB_PERF_DEFAULT counts in the
   * experiments that ask for it (lab_experiment.perf_counters),
   * --perf-counters in every experiment, --no-perf-counters in none (the
   * points then carry none of their counts). */
  lab_perf_mode perf_mode;
} lab_options;

/* Run the experiments (NULL-terminated list): one launch. This process
 * plans them; each is then measured in a child process forked for it
 * (opt->no_fork: in this process), so a crash ends that experiment only,
 * noted as FAILED in the results, and a watchdog stops one that outlives
 * its deadline (opt->experiment_timeout_s), noted the same way. Returns 0, or 1 after printing why to
 * stderr (an experiment that failed or crashed, a point that failed). */
int lab_run(const lab_options *opt, const lab_experiment *const *exps);
/* The build's source revision (git describe), as the machine record shows it. */
const char *lab_git_revision(void);

/* ---- for experiments ---- */
bool lab_planning(const lab_ctx *ctx);
lab_size lab_get_size(const lab_ctx *ctx);
/* The run's --queue-wait. */
lab_queue_wait lab_get_queue_wait(const lab_ctx *ctx);
/* "pause", "backoff", "yield"; NULL for an unknown value. */
const char *lab_queue_wait_name(lab_queue_wait w);
/* The policy named s into *out: 0, or -1 for an unknown name (*out untouched). */
int lab_queue_wait_from_name(const char *s, lab_queue_wait *out);
/* One sentence saying how the policy waits and where it comes from. */
const char *lab_queue_wait_text(lab_queue_wait w);
/* The wait after one failed poll (FULL or EMPTY) under policy, the same
 * for every queue and peer; *polls counts this wait's failed polls (start
 * it at 0 for each operation). */
void lab_queue_wait_poll(lab_queue_wait policy, uint32_t *polls);
/* A note, when the run's --queue-wait is not the default, that the
 * experiment's figures are that waiting's. */
void lab_note_queue_wait(lab_ctx *ctx);

/* A queue that loses an item (lab/queue_wait.c). The queue drivers that
 * drain a known count (dg25-prodcons, dg25-latency's ping-pong,
 * dg25-mt-pingpong and dg25-casfail, queue-sides's drain, queue-1p1c,
 * ms98-queue, np99-mp-queue) and the applications' idle threads
 * (ms98-quicksort, ms98-tsp, np99-apps' task queue) would otherwise retry
 * EMPTY for ever, until the runner's watchdog. A sample's
 * threads share one lab_queue_watch: a thread counts itself quiet when it
 * has finished (its last enqueue returned, it will not wait again) or when
 * its current wait has found only EMPTY for LAB_QUEUE_QUIET_MS. Once every
 * thread is quiet, no enqueue is in flight, so a queue whose EMPTY is
 * spurious while one is (Vyukov's, the rings') is not suspected; a waiting
 * thread that then still finds only EMPTY for LAB_QUEUE_LOST_MS, every
 * thread staying quiet, decides that items are lost: every wait of the
 * sample gives up, and the sample fails naming the count. Both bounds are
 * wall-clock times, far above any wait of a queue that works (a preempted
 * thread holds an item for a scheduler quantum, milliseconds); a wait
 * whose polls are more than LAB_QUEUE_LOST_MS / 2 apart (a descheduled
 * thread, a stopped experiment) did not watch the queue and starts over.
 * LAB_QUEUE_LOST_MS is lab_lost_ms(): 1 s, ten times that in a
 * ThreadSanitizer build (whose threads, slowed 5-15x, were seen to make
 * no hop at all for a second in a ring of 6,000 fibers), or
 * SYNCQ_LAB_LOST_MS from the environment.
 * Only the waits read it: a dequeue that succeeds at its first poll never
 * does. */
#define LAB_QUEUE_QUIET_MS 100
#define LAB_LOST_MS_DEFAULT 1000
#define LAB_LOST_MS_TSAN 10000
#define LAB_LOST_MS_MAX 3600000 /* SYNCQ_LAB_LOST_MS's largest: an hour */
#define LAB_QUEUE_LOST_MS lab_lost_ms()
/* Read SYNCQ_LAB_LOST_MS (1..LAB_LOST_MS_MAX ms): 0 when unset, 1 when
 * set and valid, -1 when set and not a valid count (the lab exits 2). */
int lab_lost_ms_register(void);
/* The watches' bound, ms (see above). */
int lab_lost_ms(void);

typedef struct lab_queue_watch {
  _Atomic(int) quiet;        /* threads finished or in a wait quiet for LAB_QUEUE_QUIET_MS */
  _Atomic(bool) lost;        /* set once: every wait gives up */
  _Atomic(uint64_t) gave_up; /* the waits that gave up because of it */
  int threads;               /* the sample's threads */
} lab_queue_watch;

/* One wait of one thread, on its stack: zero it at the wait's first
 * failed poll ({0}). */
typedef struct lab_queue_streak {
  uint64_t since;       /* the first EMPTY this wait watched (ns; 0: none yet) */
  uint64_t last;        /* the previous clock read */
  uint64_t quiet_since; /* since when this thread has seen every thread quiet (0: not) */
  uint32_t polls;       /* the wait's EMPTY polls (the clock is read at every LAB_QUEUE_WATCH_EVERY-th) */
  bool counted;         /* counted in quiet */
} lab_queue_streak;

/* Before a team of `threads` threads: nothing lost, nobody quiet. */
void lab_queue_watch_init(lab_queue_watch *w, int threads);
/* The calling thread has finished: it will neither enqueue nor wait
 * again. Once per thread. */
void lab_queue_watch_finished(lab_queue_watch *w);
/* The watch reads the clock, and the stop flag, at the first and then
 * every 16th EMPTY poll of a wait, not at each: a clock read (~20 ns) or
 * a call beside a pause would slow a waiting thread's polls, and so its
 * pick-up of the next item, which is what the ping-pongs measure. 16
 * polls are microseconds, or 16 yields. */
#define LAB_QUEUE_WATCH_EVERY 16u
/* lab_queue_watch_empty's reading (every LAB_QUEUE_WATCH_EVERY-th poll). */
bool lab_queue_watch_read(lab_queue_watch *w, lab_queue_streak *s);
/* After a poll that found EMPTY (and its wait): true when the wait must
 * give up, because this thread found items lost or another did. */
static inline bool lab_queue_watch_empty(lab_queue_watch *w, lab_queue_streak *s) {
  return s->polls++ % LAB_QUEUE_WATCH_EVERY == 0 && lab_queue_watch_read(w, s);
}
/* A wait that went through lab_queue_watch_empty ended (an item, or it
 * gave up): the thread is no longer quiet by it. */
void lab_queue_watch_end(lab_queue_watch *w, lab_queue_streak *s);
/* True once the sample's items were found lost (a stop flag for waits
 * that are not on EMPTY, e.g. on FULL). */
static inline bool lab_queue_watch_lost(lab_queue_watch *w) {
  /* relaxed: a stop flag; it publishes nothing (the sample reads the
   * counts after the team joined) */
  return atomic_load_explicit(&w->lost, memory_order_relaxed);
}
/* After the team: 0, or -1 after lab_fail("<algo> lost K of M items: every
 * producer had finished and the queue answered EMPTY for T ms"). */
int lab_queue_watch_check(lab_ctx *ctx, lab_queue_watch *w, const char *algo, uint64_t lost, uint64_t total);
/* What a driver lost, for lab_queue_watch_why. */
typedef struct lab_queue_lost {
  const char *algo;      /* the structure's name */
  const char *structure; /* "queue", "stack", "ring", "heap and the stack" */
  const char *items;     /* what the counts count: "items", "intervals", "tasks", "tours" */
  uint64_t lost, total;
} lab_queue_lost;
/* Room for lab_queue_watch_why's and lab_queue_duplicate_why's texts. */
#define LAB_QUEUE_WHY 240
/* After the team, for the drivers whose every thread both puts and takes
 * (ms98-queue, np99-mp-queue, and the applications' work pools, where the
 * producers are the consumers themselves: a thread counts itself finished
 * when it leaves its loop) and for those that report through a buffer
 * (the copies of mp_common.h): false when the watch found nothing lost;
 * else true, with why = "<algo> lost K of M <items>: every thread had
 * finished or was waiting for work, and the <structure> answered EMPTY
 * for T ms". */
bool lab_queue_watch_why(lab_queue_watch *w, const lab_queue_lost *what, char *why, size_t len);
/* After the team: how many items are still in queue q, taken out (at
 * most max, so a queue that never answers EMPTY ends too): a queue that
 * gave out a duplicate has more left than its consumers owed. */
uint64_t lab_queue_leftovers(int (*dequeue)(void *q, void **item), void *q, uint64_t max);
/* After the team of a driver whose consumers each took a fixed share of
 * `total`: 0 when `left` (lab_queue_leftovers) is 0, else -1 after
 * lab_fail("<algo> gave out more items than were enqueued ... (a
 * duplicate)"). */
int lab_queue_duplicate_check(lab_ctx *ctx, const char *algo, uint64_t total, uint64_t left);
/* The same verdict into a buffer: false when left is 0, else true with why. */
bool lab_queue_duplicate_why(const char *algo, uint64_t total, uint64_t left, char *why, size_t len);
/* SYNCQ_LAB_QUEUE_FAULT=lose:K or dup:K registers the queue "faulty:lose"
 * or "faulty:dup", whose K-th enqueue loses or duplicates its item, and a
 * stack of the same name whose K-th push does, for the lab's own tests
 * (lab/queue_faults.c). 1 when it registered them, 0 without the
 * variable, -1 for a bad value or a refused registration. */
int lab_queue_faults_register(void);
/* "faulty:lose" or "faulty:dup" once registered, else NULL. */
const char *lab_queue_faults_name(void);
/* Pick by size: smoke, quick, default, full. */
uint64_t lab_by_size(const lab_ctx *ctx, uint64_t smoke, uint64_t quick, uint64_t dflt, uint64_t full);
/* The thread counts to sweep: --threads, or lab_threads_plan(lab_pus(ctx)). */
int lab_threads(const lab_ctx *ctx, int *out, int cap);
/* The default sweep on `pus` processing units, 1..2x the PUs: all counts up
 * to 4, then powers of two and the PU count itself, then 1.5x and 2x
 * (16 PUs: 1,2,3,4,8,16,24,32). Returns the count written. */
int lab_threads_plan(int pus, int *out, int cap);
/* The processing units the run plans for: --pus / SYNCQ_LAB_PUS when given
 * (planning a larger machine's sweep on a small one), else the machine's. */
int lab_pus(const lab_ctx *ctx);
/* The machine's own processing units, whatever the plan: hwloc's count,
 * or without a topology the CPUs sched_getaffinity allows (else those
 * sysconf counts online; 1 where neither answers). The machine record's
 * pus_source says which. */
int lab_real_pus(const lab_ctx *ctx);
/* True when --algos did not exclude the algorithm; a variant named
 * "<algo>@<discipline>" (locks-cost's "mcs@block") is selected with its
 * algorithm. */
bool lab_selected(const lab_ctx *ctx, const char *algo);
/* Write the experiment record; description is printf-formatted. */
void lab_begin(lab_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A note for the reader (report and stderr). */
void lab_note(lab_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Report a failure of the current point (stderr); sample functions return -1 after. */
void lab_fail(lab_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Measure a group (skipping variants --algos excluded). 0 or -1. */
int lab_run_group(lab_ctx *ctx, const lab_group *g);
/* Add a param to a group. */
void lab_group_param(lab_group *g, const char *key, double num);
void lab_group_param_str(lab_group *g, const char *key, const char *str);

/* ---- worker teams (lab/team.c) ---- */
typedef struct lab_worker {
  int id; /* 0..n-1 */
  int n;  /* team size */
  void *arg;
} lab_worker;

/* Start n threads running body(w) together (after a common start barrier,
 * pinned per the run's options; pus[i] overrides worker i's processing unit
 * when pus is not NULL), wait for all, and return the time from the start
 * barrier to the last finish in *elapsed_ns and the team's summed
 * syncq_stats in *stats (may be NULL). Unless --no-perf-counters, stats
 * is NULL, n is more than the machine's processing units or pus puts two
 * workers on one, each worker also counts its body's events (perf_counters.h: opened before the
 * gate, enabled and disabled around the body alone) and the team adds
 * their sum to the sample's (lab_perf_sample_add). Returns 0 or -1 (after
 * lab_fail). */
int lab_team_run(lab_ctx *ctx, int n, void (*body)(lab_worker *w), void *arg, const int *pus, uint64_t *elapsed_ns,
                 syncq_stats *stats);

/* ---- topology and pinning (lab/topo.c) ---- */
typedef struct lab_topo lab_topo;
/* Load the machine's topology. NULL (with reason in why) if hwloc fails. */
lab_topo *lab_topo_load(char *why, size_t len);
void lab_topo_free(lab_topo *t);
int lab_topo_pus(const lab_topo *t);
int lab_topo_cores(const lab_topo *t);
/* CPU model string ("unknown" if hwloc does not know). */
const char *lab_topo_cpu_model(const lab_topo *t);
/* Pin the calling thread to the slot-th PU of the pinning order (cores
 * first, then their second hardware threads; slot wraps). 0, or -1 with
 * the reason in why. */
int lab_topo_pin_self(const lab_topo *t, int slot, char *why, size_t len);
/* Let the calling thread run on every PU again (undo lab_topo_pin_self). */
void lab_topo_unpin_self(const lab_topo *t);
/* The PU (OS index) that slot maps to. */
int lab_topo_pu_of_slot(const lab_topo *t, int slot);
lab_topo *lab_ctx_topo(lab_ctx *ctx);
/* True when the run pins workers (--no-pin not given, topology loaded). */
bool lab_pinning_enabled(const lab_ctx *ctx);
/* True when the running experiment's teams count their workers' events
 * (lab_options.perf_mode, lab_experiment.perf_counters). */
bool lab_perf_counters_enabled(const lab_ctx *ctx);
/* Add a team's event counts to the sample being measured: the runner
 * records each event read in every team of the sample as "<name>_per_op". */
void lab_perf_sample_add(lab_ctx *ctx, const lab_perf_counts *c);

/* ---- machine facts (lab/machine.c) ---- */
/* "available" or "unavailable: <reason>" for hardware perf counters. */
const char *lab_perf_counters_probe(char *buf, size_t len);
/* The program's resident set (VmRSS of /proc/self/status) in KB, or -1. */
long lab_vm_rss_kb(void);

/* ---- shared helpers ---- */
/* The median of v[0..n-1] (sorts v in place; the mean of the middle two
 * when n is even). NAN when v is NULL or n is 0. (lab/median.c) */
double lab_median(double *v, size_t n);

#endif /* SYNCQ_LAB_H */
