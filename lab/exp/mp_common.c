/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mp_common.c — running a benchmark at multiprogramming level m: see
 * mp_common.h.
 */
#include "mp_common.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../proc_team.h"
#include "syncq/clock.h"
#include "syncq/platform.h"
#include "syncq/pr.h"

typedef struct mp_thread_slot {
  lab_worker w;
  void (*body)(lab_worker *w);
  syncq_mp_sched *sched; /* NULL: not scheduled (real mode) */
  unsigned app, proc;
  lab_topo *topo;             /* pin to the proc-th slot when not NULL */
  _Atomic(int) *arrived, *go; /* go: 1 start, 2 abort */
  uint64_t end_ns;
  int reg_status;
  syncq_stats stats;
} mp_thread_slot;

static void *mp_thread_main(void *p) {
  mp_thread_slot *s = p;
  char why[MP_WHY];
  if (s->topo != NULL) (void)lab_topo_pin_self(s->topo, (int)s->proc, why, sizeof why);
  syncq_mp_thread *t = NULL;
  s->reg_status = s->sched ? syncq_mp_register(s->sched, s->app, s->proc, &t) : SYNCQ_OK;
  atomic_fetch_add(s->arrived, 1);
  unsigned spins = 0;
  int go;
  while ((go = atomic_load(s->go)) == 0) {
    if (++spins % MP_GATE_SPINS_PER_YIELD == 0) syncq_yield();
    else syncq_pr_relax();
  }
  syncq_stats_reset();
  if (go == 1 && s->reg_status == SYNCQ_OK) s->body(&s->w);
  s->end_ns = syncq_now_ns();
  s->stats = *syncq_stats_self();
  if (t != NULL) (void)syncq_mp_unregister(t);
  return NULL;
}

/* Run napps copies (states[a]) of p threads each, in this process, under
 * sched (or none), and put each copy's time in ns_out[a]. 0, or -1 with
 * why. */
static int mp_run_copies(const mp_bench *b, void *const *states, int napps, int p, syncq_mp_sched *sched,
                         lab_topo *topo, uint64_t *ns_out, syncq_stats *stats, char *why, size_t len) {
  int n = napps * p;
  mp_thread_slot *slots = calloc((size_t)n, sizeof *slots);
  pthread_t *tids = calloc((size_t)n, sizeof *tids);
  _Atomic(int) arrived = 0, go = 0;
  if (slots == NULL || tids == NULL) {
    free(slots);
    free(tids);
    snprintf(why, len, "out of memory for %d threads", n);
    return -1;
  }
  int started = 0;
  for (int i = 0; i < n; i++) {
    int a = i / p, c = i % p;
    slots[i] = (mp_thread_slot){.w = {c, p, states[a]},
                                .body = b->body,
                                .sched = sched,
                                .app = (unsigned)a,
                                .proc = (unsigned)c,
                                .topo = topo,
                                .arrived = &arrived,
                                .go = &go};
    if (pthread_create(&tids[i], NULL, mp_thread_main, &slots[i]) != 0) break;
    started++;
  }
  int rc = 0;
  uint64_t t0 = 0;
  if (started == n) {
    while (atomic_load(&arrived) < n) syncq_yield();
    t0 = syncq_now_ns();
    atomic_store(&go, 1);
  } else {
    atomic_store(&go, 2);
    snprintf(why, len, "could create only %d of %d threads", started, n);
    rc = -1;
  }
  for (int i = 0; i < started; i++) pthread_join(tids[i], NULL);
  for (int i = 0; rc == 0 && i < n; i++) {
    if (slots[i].reg_status != SYNCQ_OK) {
      snprintf(why, len, "pseudo-scheduler registration: %s", syncq_strerror(slots[i].reg_status));
      rc = -1;
    }
  }
  if (rc == 0) {
    if (stats) memset(stats, 0, sizeof *stats);
    for (int a = 0; a < napps; a++) {
      uint64_t end = t0;
      for (int c = 0; c < p; c++) {
        mp_thread_slot *s = &slots[a * p + c];
        end = s->end_ns > end ? s->end_ns : end;
        if (stats) syncq_stats_add(stats, &s->stats);
      }
      ns_out[a] = end - t0;
    }
  }
  free(slots);
  free(tids);
  return rc;
}

/* What a "real" copy writes in its team result slot. */
typedef struct mp_child_report {
  uint64_t ns;
  int ok;
  int done; /* written last: 0 means the copy died before reporting */
  char why[MP_WHY];
} mp_child_report;

int mp_measure(lab_ctx *ctx, const mp_bench *b, const void *arg, int p, int level, mp_mode mode, int policy, int napps,
               uint64_t *ns_out, syncq_stats *stats, syncq_mp_stats *sched_out) {
  char why[MP_WHY] = "";
  if (p < 1 || napps < 1 || napps > MP_MAX_APPS || p * napps > MP_MAX_THREADS) {
    lab_fail(ctx, "multiprogramming point out of range (p=%d, copies=%d)", p, napps);
    return -1;
  }
  lab_topo *topo = lab_pinning_enabled(ctx) ? lab_ctx_topo(ctx) : NULL;
  uint64_t ns[MP_MAX_APPS];
  if (stats) memset(stats, 0, sizeof *stats);
  if (sched_out) memset(sched_out, 0, sizeof *sched_out);
  if (mode == MP_MODE_PSEUDO) {
    void *states[MP_MAX_APPS];
    int made = 0;
    for (; made < napps; made++)
      if ((states[made] = b->setup(arg, why, sizeof why)) == NULL) break;
    syncq_mp_sched *sched = NULL;
    int rc = -1;
    if (made == napps) {
      syncq_mp_config cfg;
      syncq_mp_config_default(&cfg, (unsigned)level, (unsigned)p);
      cfg.quantum_ns = mp_quantum_ns(ctx);
      cfg.nopreempt_limit_ns = cfg.quantum_ns / MP_NOPREEMPT_FRACTION;
      cfg.policy = policy;
      cfg.max_threads = (unsigned)(p * napps);
      int st = syncq_mp_create(&cfg, &sched);
      if (st != SYNCQ_OK) snprintf(why, sizeof why, "pseudo-scheduler: %s", syncq_strerror(st));
      else rc = mp_run_copies(b, states, napps, p, sched, topo, ns, stats, why, sizeof why);
      if (sched) {
        (void)syncq_mp_stop(sched);
        if (sched_out) (void)syncq_mp_get_stats(sched, sched_out);
        (void)syncq_mp_destroy(sched);
      }
    }
    for (int a = 0; a < made; a++) {
      char w2[MP_WHY];
      if (b->finish(states[a], w2, sizeof w2) != 0 && rc == 0) {
        snprintf(why, sizeof why, "%s", w2);
        rc = -1;
      }
    }
    if (rc != 0) {
      lab_fail(ctx, "%s", why);
      return -1;
    }
  } else {
    /* real oversubscription: napps processes, started together when the
     * parent lets the team go (they sleep until then) */
    lab_proc_team team;
    if (lab_proc_team_init(&team, topo, napps, sizeof(mp_child_report), why, sizeof why) != 0) {
      lab_fail(ctx, "%s", why);
      return -1;
    }
    int forked = 0;
    for (; forked < napps; forked++) {
      pid_t pid = lab_proc_team_fork(&team);
      if (pid < 0) break;
      if (pid == 0) {
        mp_child_report *r = lab_proc_team_slot(&team, forked);
        if (!lab_proc_child_wait_go(&team, true)) _exit(1);
        void *state = b->setup(arg, r->why, sizeof r->why);
        if (state != NULL) {
          uint64_t t = 0;
          void *states[1] = {state};
          int rc = mp_run_copies(b, states, 1, p, NULL, topo, &t, NULL, r->why, sizeof r->why);
          int fin = b->finish(state, rc == 0 ? r->why : why, rc == 0 ? sizeof r->why : sizeof why);
          r->ok = rc == 0 && fin == 0;
          r->ns = t;
        }
        r->done = 1; /* the parent reads the slot after reaping this process */
        _exit(0);
      }
    }
    lab_proc_team_go(&team); /* the copies start */
    int rc = forked == napps ? 0 : -1;
    if (rc != 0) snprintf(why, sizeof why, "could start only %d of %d copies", forked, napps);
    lab_proc_team_stop(&team, rc != 0); /* waits for (reaps) every copy */
    for (int a = 0; a < forked; a++) {
      const mp_child_report *r = lab_proc_team_slot(&team, a);
      if (rc == 0 && (!r->done || !r->ok)) {
        snprintf(why, sizeof why, "copy %d: %.150s", a, r->done ? r->why : "died");
        rc = -1;
      }
      ns[a] = r->ns;
    }
    lab_proc_team_destroy(&team);
    if (rc != 0) {
      lab_fail(ctx, "%s", why);
      return -1;
    }
  }
  uint64_t sum = 0;
  for (int a = 0; a < napps; a++) sum += ns[a];
  *ns_out = sum / (uint64_t)napps;
  return 0;
}

/* The "-ps" runs' counters of the sweep under way, per level (index 0
 * unused). The lab measures one point at a time, from one thread. */
static struct mp_tally { uint64_t runs, preemptions, deferrals; } mp_tally[4];

void mp_tally_ps_run(int level, const syncq_mp_stats *sched) {
  if (level < 1 || level > 3 || sched == NULL) return;
  mp_tally[level].runs++;
  mp_tally[level].preemptions += sched->preemptions;
  mp_tally[level].deferrals += sched->deferrals;
}

/* The extra metrics' places in lab_sample.extra (mp_group_exposure). */
enum { MP_EXTRA_PREEMPTIONS, MP_EXTRA_DEFERRED };

void mp_group_exposure(lab_group *g) {
  g->extra[MP_EXTRA_PREEMPTIONS] = (struct lab_extra_metric){MP_METRIC_PREEMPTIONS, "count", false, true};
  g->extra[MP_EXTRA_DEFERRED] = (struct lab_extra_metric){MP_METRIC_DEFERRED, "count", false, true};
  g->nextra = 2;
}

void mp_sample_exposure(lab_sample *out, const syncq_mp_stats *sched) {
  out->extra[MP_EXTRA_PREEMPTIONS] = (double)(sched->preemptions + sched->deferrals);
  out->extra[MP_EXTRA_DEFERRED] = (double)sched->deferrals;
}

bool mp_is_preemption_safe(const char *algorithm) {
  size_t n = strlen(algorithm);
  return n > 3 && strcmp(algorithm + n - 3, "-ps") == 0;
}

/* The note of the sweep's "-ps" runs (see mp_tally_ps_run). A deferred
 * preemption is counted once as a deferral and, if the request outlasts
 * its bound, again as a (forced) preemption: the share is of the
 * scheduler's decisions to preempt, deferrals included. */
static void mp_tally_note(lab_ctx *ctx, const char *panel) {
  for (int level = 2; level <= 3; level++) {
    const struct mp_tally *t = &mp_tally[level];
    if (t->runs == 0) continue;
    uint64_t decisions = t->preemptions + t->deferrals;
    lab_note(ctx,
             "Level %d, mode=pseudo%s: the preemption-safe (-ps) variants' threads were inside a "
             "no-preemption request at %llu of the pseudo-scheduler's %llu preemptions (%.2f%%, over "
             "%llu runs). An ordinary lock's holder is preempted inside its critical section about as "
             "often or less (the request spans the lock's acquisition too), and only then does an "
             "ordinary lock lose time to multiprogramming (001 §4: the others wait for the holder's "
             "next quantum).",
             level, panel, (unsigned long long)t->deferrals, (unsigned long long)decisions,
             decisions ? 100.0 * (double)t->deferrals / (double)decisions : 0.0, (unsigned long long)t->runs);
  }
}

int mp_pick_algos(const syncq_algo *const *algos, int na, const char *const *names, const syncq_algo **out) {
  int n = 0;
  for (int i = 0; names[i] != NULL; i++)
    for (int a = 0; a < na && n < LAB_MAX_VARIANTS; a++)
      if (strcmp(algos[a]->name, names[i]) == 0) out[n++] = algos[a];
  return n;
}

int mp_dedicated_threads(lab_ctx *ctx, int *threads, int *nlisted) {
  int listed[LAB_MAX_THREADS_LIST], nt = 0;
  int nl = lab_threads(ctx, listed, LAB_MAX_THREADS_LIST);
  int pus = lab_pus(ctx);
  for (int i = 0; i < nl; i++)
    if (listed[i] <= pus) threads[nt++] = listed[i];
  *nlisted = nl;
  return nt;
}

void mp_note_dedicated_threads(lab_ctx *ctx, int nlisted, int nt) {
  if (nlisted > nt)
    lab_note(
      ctx,
      "Thread counts above the %d processing units were left out: multiprogramming comes from the levels, one thread per processor per application.",
      lab_pus(ctx));
}

void mp_dedicated_group(lab_group *g, int threads, double delay_ns, lab_sample_fn sample, const char *normalize_to) {
  memset(g, 0, sizeof *g);
  lab_group_param(g, "threads", threads);
  lab_group_param(g, "delay_ns", delay_ns);
  if (delay_ns == 0) g->claim_min_reps = MP_BASELINE_CLAIM_MIN_REPS;
  g->metric = "time";
  g->unit = "ms";
  g->sample = sample;
  lab_group_param(g, "level", 1);
  lab_group_param_str(g, "mode", "dedicated");
  g->normalize_to = normalize_to;
}

int mp_micro_sample(lab_ctx *ctx, const mp_bench *b, const void *arg, const syncq_algo *algo, int threads, int level,
                    mp_mode mode, lab_sample *out) {
  uint64_t ns;
  int napps = mode == MP_MODE_PSEUDO ? 1 : level;
  syncq_mp_stats sched;
  if (mp_measure(ctx, b, arg, threads, level, mode, SYNCQ_MP_TIMESHARE, napps, &ns, &out->stats, &sched) != 0)
    return -1;
  if (mode == MP_MODE_PSEUDO && mp_is_preemption_safe(algo->name)) mp_tally_ps_run(level, &sched);
  if (mode == MP_MODE_PSEUDO) mp_sample_exposure(out, &sched);
  out->value = (double)ns / 1e6; /* ms */
  return 0;
}

void mp_note_quick_levels(lab_ctx *ctx) {
  lab_note(ctx,
           "--quick measures levels 2 and 3 at the largest p only, and level 2 not at all "
           "(the claims are at level 3); the default size measures every p at both levels.");
}

int mp_sweep_levels(lab_ctx *ctx, const int *threads, int nt, double delay_ns, lab_sample_fn sample,
                    const char *normalize_to, mp_variants_fn variants, void *arg) {
  bool quick = lab_get_size(ctx) <= LAB_SIZE_QUICK;
  int t_first = quick && nt > 0 ? nt - 1 : 0;
  memset(mp_tally, 0, sizeof mp_tally);
  if (quick && !lab_planning(ctx)) mp_note_quick_levels(ctx);
  for (int level = quick ? 3 : 2; level <= 3; level++) {
    for (int m = MP_MODE_PSEUDO; m <= MP_MODE_REAL; m++) {
      for (int t = t_first; t < nt; t++) {
        lab_group g;
        memset(&g, 0, sizeof g);
        lab_group_param(&g, "threads", threads[t]);
        lab_group_param(&g, "delay_ns", delay_ns);
        lab_group_param(&g, "level", level);
        mp_group_mode(&g, (mp_mode)m);
        if (m == MP_MODE_PSEUDO) mp_group_exposure(&g);
        g.metric = "time";
        g.unit = "ms";
        g.sample = sample;
        g.normalize_to = normalize_to;
        variants(&g, level, (mp_mode)m, threads[t], arg);
        if (lab_run_group(ctx, &g) != 0) return -1;
      }
    }
  }
  if (!lab_planning(ctx)) mp_tally_note(ctx, "");
  return 0;
}

int mp_sweep_own_cost(lab_ctx *ctx, const int *threads, int nt, lab_sample_fn sample, const char *normalize_to,
                      mp_variants_fn variants, void *arg) {
  if (nt < 1) return 0;
  memset(mp_tally, 0, sizeof mp_tally);
  lab_group g;
  memset(&g, 0, sizeof g);
  lab_group_param(&g, "threads", threads[nt - 1]);
  lab_group_param(&g, "delay_ns", 0);
  lab_group_param(&g, "level", 3);
  mp_group_mode(&g, MP_MODE_PSEUDO);
  mp_group_exposure(&g);
  g.metric = "time";
  g.unit = "ms";
  g.sample = sample;
  g.normalize_to = normalize_to;
  variants(&g, 3, MP_MODE_PSEUDO, threads[nt - 1], arg);
  if (lab_run_group(ctx, &g) != 0) return -1;
  if (!lab_planning(ctx)) mp_tally_note(ctx, ", delay_ns=0");
  return 0;
}
