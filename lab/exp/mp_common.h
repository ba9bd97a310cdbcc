/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mp_common.h — running a benchmark at multiprogramming level m, in the
 * two ways of the `mp` system (shared by ms98_queue.c, ms98_stack.c,
 * np99_mp.c and np99_apps.c; the code is in mp_common.c):
 *
 *   "pseudo"  the pseudo-scheduler of 001 §4 (syncq/mp.h): the benchmark's
 *             p threads are time-sliced over p virtual processors with a
 *             10 ms quantum. With napps = 1 the other m - 1 applications
 *             are 001's emulated ones (the time the handler waits); with
 *             napps = m, m copies of the benchmark run at once, each with
 *             its own structure, time-shared or gang-scheduled (003 §5).
 *   "real"    m copies of the benchmark as separate processes (a
 *             lab_proc_team, lab/proc_team.h) at once under the Linux
 *             scheduler, each on its own structure, pinned to the same p
 *             processing units; each copy times itself.
 * The result is the mean over the measured copies of each copy's time
 * from the common start to its last thread's end.
 *
 * The benchmark is three functions: setup() makes one copy's state (its
 * structure), body() is one thread's work (lab_worker.arg is the state),
 * finish() validates and frees the state. In "real" mode the children run
 * them and report back through their team result slot; they never call
 * the lab's result functions (lab_fail / lab_note), whose output belongs
 * to the parent.
 */
#ifndef SYNCQ_LAB_MP_COMMON_H
#define SYNCQ_LAB_MP_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lab.h"
#include "syncq/mp.h"
#include "syncq/stats.h"

#define MP_QUANTUM_NS SYNCQ_MP_DEFAULT_QUANTUM_NS /* 001 §4: 10 ms */
/* --quick (and smoke) runs are short: a 2 ms quantum keeps tens of
 * quanta in a run of tens of ms (with 10 ms the result would hang on
 * where the run starts in a slice) */
#define MP_QUICK_QUANTUM_NS 2000000ull
/* a no-preemption request is honoured for up to 1/5 of the quantum */
#define MP_NOPREEMPT_FRACTION 5
#define MP_MAX_APPS 8
#define MP_MAX_THREADS 64
#define MP_WHY 200
#define MP_GATE_SPINS_PER_YIELD 64

typedef enum mp_mode { MP_MODE_PSEUDO = 0, MP_MODE_REAL = 1 } mp_mode;

/* The pseudo-scheduler's quantum for this run's size. */
static inline uint64_t mp_quantum_ns(const lab_ctx *ctx) {
  return lab_get_size(ctx) <= LAB_SIZE_QUICK ? MP_QUICK_QUANTUM_NS : MP_QUANTUM_NS;
}

typedef struct mp_bench {
  void *(*setup)(const void *arg, char *why, size_t len); /* NULL: failed, why says why */
  void (*body)(lab_worker *w);                            /* w->arg: the state */
  int (*finish)(void *state, char *why, size_t len);      /* 0: valid; frees the state */
} mp_bench;

/* Measure one point: see the header comment. *ns_out is the mean time of
 * the copies; *stats (pseudo mode only; zero in real mode) the summed
 * algorithm events; *sched (NULL: not wanted) the pseudo-scheduler's
 * counters of the run (zero in real mode). 0, or -1 after lab_fail. */
int mp_measure(lab_ctx *ctx, const mp_bench *b, const void *arg, int p, int level, mp_mode mode, int policy, int napps,
               uint64_t *ns_out, syncq_stats *stats, syncq_mp_stats *sched);

/* How often a lock holder is preempted. 001's ordinary locks degrade
 * under multiprogramming only when the pseudo-scheduler preempts a thread
 * inside its critical section: the others then wait for its next quantum.
 * An ordinary lock does not tell the scheduler when that happens; a
 * preemption-safe variant ("-ps") does, by a no-preemption request around
 * its lock, which the scheduler counts as a deferral. The ms98
 * experiments add each "-ps" run's counters here (mp_tally_ps_run), and
 * mp_sweep_levels writes, per level, the share of preemptions that found
 * the thread inside a request: about how often an ordinary lock's holder
 * is preempted holding it in the same loop (the request spans the lock's
 * acquisition too, so the share bounds it from above). */
void mp_tally_ps_run(int level, const syncq_mp_stats *sched);

/* The same counters as metrics of each point of a mode=pseudo group of
 * mp_sweep_levels (every variant, every run): "preemptions", the
 * pseudo-scheduler's decisions to preempt one of the run's threads
 * (deferred ones included), and "preemptions_deferred", those that found
 * the thread inside a no-preemption request (0 for an ordinary lock, which
 * makes none). A claim about the cost of a preempted lock holder reads the
 * "-ps" variant's pair first (rule op "exercised",
 * docs/results-format.md): a run whose holders were hardly ever preempted
 * cannot show that cost, whatever the paper says about it. */
#define MP_METRIC_PREEMPTIONS "preemptions"
#define MP_METRIC_DEFERRED "preemptions_deferred"

/* The head of that rule for a level-3 claim at the largest p with delay
 * `delay` (a string literal) whose ordinary lock is compared with `ps` (its
 * "-ps" variant); the claim's ratio rule follows, then "}".
 *
 * Why 15% and 12. A holder preempted inside its critical section stalls
 * the other p - 1 threads until its next quantum, m - 1 quanta later;
 * staggered, each of them runs (m - 1)/m of a quantum q in that time and
 * spends it waiting, which the run makes up at its rate of p/m processors:
 * it lasts (p - 1)(m - 1)q/p longer. A run of T has P = pT/(mq)
 * preemptions (each virtual processor is preempted at the end of each of
 * its quanta, one in m), so N holder preemptions lengthen it by the share
 * (N/P)(p - 1)(m - 1)/m. The claims' bound, the ordinary/"-ps" time ratio
 * 10% higher at level 3 than at level 1 (MP_DEGRADES_WITH_LEVEL: a stall
 * lengthens the ordinary lock's run, not the "-ps" one's), needs
 * N/P >= 0.15/(p - 1): 15% at p = 2, the fewest threads the claims judge
 * (min_threads). A larger p needs less, so at p > 2 the rule may call
 * inconclusive a run that could have shown the cost, never the reverse;
 * and the "-ps" count bounds the ordinary lock's holder preemptions from
 * above (the request spans the lock's acquisition too), so meeting it is
 * necessary, not sufficient. The count must also reach 12 over the point's
 * runs, and half the runs must each have one: the verdict reads medians of
 * at least MP_PSEUDO_CLAIM_MIN_REPS (12) runs, and a stall moves a median
 * only when about half the runs or more had one, whatever the share of a
 * short run's few preemptions says. */
#define MP_HOLDER_EXERCISED(ps, delay) \
  MP_HOLDER_EXERCISED_WHERE(ps, "\"delay_ns\":" delay ",\"level\":3,\"mode\":\"pseudo\"")

/* The same under any `where` (the members of a JSON object, a string
 * literal), for a program whose points have other params than the
 * micro-benchmarks' delay_ns (ms98-quicksort's pool). */
#define MP_HOLDER_EXERCISED_WHERE(ps, where)                                                                        \
  "{\"op\":\"exercised\",\"metric\":\"" MP_METRIC_DEFERRED "\",\"of\":\"" MP_METRIC_PREEMPTIONS "\",\"algo\":\"" ps \
  "\",\"where\":{" where                                                                                            \
  "},\"at\":\"max_threads\",\"min\":12,\"min_share\":0.15,\"min_runs_share\":0.5,"                                  \
  "\"what\":\"preemptions found a thread of " ps " inside its no-preemption request\",\"rule\":"

/* The rule of a claim that an ordinary lock `ord` degrades with
 * multiprogramming where its "-ps" variant `ps` does not, with delay
 * `delay` (string literals): ord/ps at level 3 under the pseudo-scheduler,
 * at the largest p, more than 10% above ord/ps at level 1 with one thread
 * (mode=dedicated, the same delay) in the same run (rule op
 * "ratio_change_above", docs/results-format.md). What the "-ps" lock costs
 * by itself (its request: a thread-local load and a branch each way
 * unregistered, the depth's load and store too at level 3) it pays at both
 * levels, so it cancels rather than counting as degradation; what is left
 * is what the levels changed. Why one thread at level 1, not the largest
 * p: the two variants are the same lock but for the request, so their
 * ratio at level 1 is the request's cost at any p, and one thread measures
 * it without contention; at p = 2 with no delay the same variant's samples
 * spread eightfold on the 2-core VM (8.1-70.3 ms over six runs), which
 * leaves the change's interval 0.25-2.4 wide and every verdict
 * inconclusive (docs/lab.md). The 10% is the bound MP_HOLDER_EXERCISED's
 * share is derived from; the claims wrap it in MP_HOLDER_EXERCISED(ps,
 * delay). */
#define MP_DEGRADES_WITH_LEVEL(ord, ps, delay) \
  MP_LEVEL_CHANGE_ABOVE(ord, ps, "\"delay_ns\":" delay ",\"level\":3,\"mode\":\"pseudo\"", "1.1")

/* The same under any `where` (level 3's, members of a JSON object) and
 * bound (a number, as a string literal). */
#define MP_LEVEL_CHANGE_ABOVE(ord, ps, where, bound)                                                                  \
  "{\"op\":\"ratio_change_above\",\"metric\":\"time_ratio\",\"num\":\"" ord "\",\"den\":\"" ps "\",\"where\":{" where \
  "},\"base\":{\"level\":1,\"mode\":\"dedicated\",\"threads\":1},\"at\":\"max_threads\",\"bound\":" bound             \
  ",\"min_threads\":2}"

/* Writes a pseudo-scheduled sample's counts (sched, one run's counters)
 * into the extra metrics mp_group_exposure added to its group. */
void mp_sample_exposure(lab_sample *out, const syncq_mp_stats *sched);

/* Adds those two metrics to a mode=pseudo group (counts, no ratio
 * points); mp_micro_sample fills them. */
void mp_group_exposure(lab_group *g);

/* True for the name of a preemption-safe variant (ending in "-ps"). */
bool mp_is_preemption_safe(const char *algorithm);

/* The registered algorithms named in names (NULL-terminated), in the order
 * of names, into out (room for LAB_MAX_VARIANTS). Returns how many. */
int mp_pick_algos(const syncq_algo *const *algos, int na, const char *const *names, const syncq_algo **out);

/* Fills a group of a multiprogramming sweep with its variants for
 * (level, mode, threads); arg is mp_sweep_levels's. */
typedef void (*mp_variants_fn)(lab_group *g, int level, mp_mode mode, int threads, void *arg);

/* 001's levels 2 and 3 in both modes (pseudo, real), one group of metric
 * "time" (ms) per (level, mode, p) with params threads, delay_ns, level and
 * mode, normalised to normalize_to; --quick measures only level 3 at the
 * largest p (the contended case of 001's figures) and says so in a note.
 * 0, or -1 when a group failed. */
int mp_sweep_levels(lab_ctx *ctx, const int *threads, int nt, double delay_ns, lab_sample_fn sample,
                    const char *normalize_to, mp_variants_fn variants, void *arg);

/* 001's level 3 under the pseudo-scheduler with no delay (delay_ns = 0):
 * one mode=pseudo group at the largest p of threads, its variants from
 * `variants` (which must give them no delay), and a note of how often
 * the "-ps" variants' threads were preempted inside their request. With
 * 6 us of work after each operation a critical section of tens of ns is
 * held well under 1% of the time and a preemption hardly ever finds a
 * holder; without it the operations are most of each thread's time, as
 * they were on 001's 100 MHz processors, so the cost of a preempted holder
 * can show. Every size measures it (the claims read it). 0, or -1 when
 * the group failed. */
int mp_sweep_own_cost(lab_ctx *ctx, const int *threads, int nt, lab_sample_fn sample, const char *normalize_to,
                      mp_variants_fn variants, void *arg);

/* The p of level 1 (a dedicated machine: at most one thread per
 * processing unit, multiprogramming comes from the levels): the listed
 * thread counts up to the processing units, into threads (room for
 * LAB_MAX_THREADS_LIST). Returns how many; *nlisted: how many were listed. */
int mp_dedicated_threads(lab_ctx *ctx, int *threads, int *nlisted);

/* The note that says mp_dedicated_threads left counts out (none when
 * nt == nlisted). */
void mp_note_dedicated_threads(lab_ctx *ctx, int nlisted, int nt);

/* A level-1 group of 001's micro-benchmarks, without its variants: metric
 * "time" (ms), params threads, delay_ns, level 1 and mode=dedicated;
 * without delay its claimed variants ask for MP_BASELINE_CLAIM_MIN_REPS. */
void mp_dedicated_group(lab_group *g, int threads, double delay_ns, lab_sample_fn sample, const char *normalize_to);

/* The note of a --quick sweep that measures levels 2 and 3 at the
 * largest p only and level 2 not at all (mp_sweep_levels, and the
 * applications' sweeps that do the same). */
void mp_note_quick_levels(lab_ctx *ctx);

/* One sample of 001's micro-benchmarks at level 2 or 3, time-shared: in
 * pseudo mode one measured application (the others emulated, 001 §4), in
 * real mode `level` copies as processes; a preemption-safe algorithm's
 * pseudo run goes to mp_tally_ps_run. Sets out->value (ms) and
 * out->stats, not out->ops. 0, or -1 after lab_fail. */
int mp_micro_sample(lab_ctx *ctx, const mp_bench *b, const void *arg, const syncq_algo *algo, int threads, int level,
                    mp_mode mode, lab_sample *out);

static inline const char *mp_mode_name(mp_mode m) { return m == MP_MODE_PSEUDO ? "pseudo" : "real"; }

/* Under the pseudo-scheduler a run's time is a whole number of quanta (at
 * --quick 2 ms of a run of 20-50 ms: 38.4, 40.4 or 42.6 ms for the same
 * stack), so the median of a few samples moves by a quantum or none and a
 * level-3 ratio of two equal programs by several percent from run to run
 * (measured: 4 samples a launch, ms98-stack's lock/lock-ps 0.96-1.04 over
 * eight runs). A dozen samples a launch put the median on the common value
 * (14: 0.994-0.999 over three runs); the claimed variants of a pseudo
 * group ask for that many (lab_group.claim_min_reps). */
#define MP_PSEUDO_CLAIM_MIN_REPS 12

/* The level-1 groups without delay are the baselines of the claims that
 * compare levels (MP_DEGRADES_WITH_LEVEL: ordinary/"-ps" at one thread).
 * Their samples are short (4-100 ms at --quick) and on a loaded VM they
 * fall near whole timer ticks: one variant's p = 1 samples read about 4,
 * 8, 12 or 17-19 ms from run to run (21 samples of single-lock-ps: 13 at
 * 4.0-4.3, 8 at 5.5-18.8). A median of one or two such samples is either mode, so a
 * baseline ratio of 0.5 or 2 can come by chance (one run read ms98-stack's
 * lock/lock-ps 0.52 from one sample each, and called the change "held" at
 * 2.39), and one sample's bootstrap interval is a point. A dozen, as
 * MP_PSEUDO_CLAIM_MIN_REPS asks for the same reason, put the median on the
 * common mode unless about half the runs are off it. Claimed variants
 * only, within LAB_MAX_CLAIM_BUDGET_MS. */
#define MP_BASELINE_CLAIM_MIN_REPS 12

/* The group's "mode" param, and for the pseudo-scheduler the claimed
 * variants' repetitions above. */
static inline void mp_group_mode(lab_group *g, mp_mode m) {
  lab_group_param_str(g, "mode", mp_mode_name(m));
  if (m == MP_MODE_PSEUDO) g->claim_min_reps = MP_PSEUDO_CLAIM_MIN_REPS;
}

#endif
