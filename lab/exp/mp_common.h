/*
 * mp_common.h — running a benchmark at multiprogramming level m, in the
 * two ways of the `mp` system (shared by ms98_queue.c, ms98_stack.c and
 * np99_mp.c):
 *
 *   "pseudo"  the pseudo-scheduler of 001 §4 (syncq/mp.h): the benchmark's
 *             p threads are time-sliced over p virtual processors with a
 *             10 ms quantum. With napps = 1 the other m - 1 applications
 *             are 001's emulated ones (the time the handler waits); with
 *             napps = m, m copies of the benchmark run at once, each with
 *             its own structure, time-shared or gang-scheduled (003 §5).
 *   "real"    m copies of the benchmark as separate processes (fork) at
 *             once under the Linux scheduler, each on its own structure,
 *             pinned to the same p processing units; each copy times
 *             itself.
 * The result is the mean over the measured copies of each copy's time
 * from the common start to its last thread's end.
 *
 * The benchmark is three functions: setup() makes one copy's state (its
 * structure), body() is one thread's work (lab_worker.arg is the state),
 * finish() validates and frees the state. In "real" mode the children run
 * them and report back through a pipe; they never call the lab's result
 * functions (lab_fail / lab_note), whose output belongs to the parent.
 */
#ifndef SYNCQ_LAB_MP_COMMON_H
#define SYNCQ_LAB_MP_COMMON_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lab.h"
#include "syncq/clock.h"
#include "syncq/mp.h"
#include "syncq/platform.h"
#include "syncq/pr.h"
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

typedef struct mp_thread_slot {
  lab_worker w;
  void (*body)(lab_worker *w);
  syncq_mp_sched *sched; /* NULL: not scheduled (real mode) */
  unsigned app, proc;
  lab_topo *topo;        /* pin to the proc-th slot when not NULL */
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
    slots[i] = (mp_thread_slot){.w = {c, p, states[a]}, .body = b->body, .sched = sched,
                                .app = (unsigned)a, .proc = (unsigned)c, .topo = topo,
                                .arrived = &arrived, .go = &go};
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

typedef struct mp_child_report {
  uint64_t ns;
  int ok;
  char why[MP_WHY];
} mp_child_report;

/* Measure one point: see the header comment. *ns_out is the mean time of
 * the copies; *stats (pseudo mode only; zero in real mode) the summed
 * algorithm events. 0, or -1 after lab_fail. */
static int mp_measure(lab_ctx *ctx, const mp_bench *b, const void *arg, int p, int level, mp_mode mode,
                      int policy, int napps, uint64_t *ns_out, syncq_stats *stats) {
  char why[MP_WHY] = "";
  if (p < 1 || napps < 1 || napps > MP_MAX_APPS || p * napps > MP_MAX_THREADS) {
    lab_fail(ctx, "multiprogramming point out of range (p=%d, copies=%d)", p, napps);
    return -1;
  }
  lab_topo *topo = lab_pinning_enabled(ctx) ? lab_ctx_topo(ctx) : NULL;
  uint64_t ns[MP_MAX_APPS];
  if (stats) memset(stats, 0, sizeof *stats);
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
     * parent closes the go pipe */
    int gop[2];
    int resp[MP_MAX_APPS][2];
    pid_t pids[MP_MAX_APPS];
    fflush(NULL);
    if (pipe(gop) != 0) {
      lab_fail(ctx, "pipe failed");
      return -1;
    }
    int forked = 0;
    for (; forked < napps; forked++) {
      if (pipe(resp[forked]) != 0) break;
      pid_t pid = fork();
      if (pid < 0) {
        close(resp[forked][0]);
        close(resp[forked][1]);
        break;
      }
      if (pid == 0) {
        close(gop[1]);
        close(resp[forked][0]);
        char c;
        while (read(gop[0], &c, 1) > 0) {} /* EOF: go */
        mp_child_report r;
        memset(&r, 0, sizeof r);
        void *state = b->setup(arg, r.why, sizeof r.why);
        if (state != NULL) {
          uint64_t t;
          void *states[1] = {state};
          int rc = mp_run_copies(b, states, 1, p, NULL, topo, &t, NULL, r.why, sizeof r.why);
          int fin = b->finish(state, rc == 0 ? r.why : why, rc == 0 ? sizeof r.why : sizeof why);
          r.ok = rc == 0 && fin == 0;
          r.ns = t;
        }
        ssize_t wr = write(resp[forked][1], &r, sizeof r);
        _exit(wr == (ssize_t)sizeof r ? 0 : 1);
      }
      pids[forked] = pid;
      close(resp[forked][1]);
    }
    close(gop[0]);
    close(gop[1]); /* the copies start */
    int rc = forked == napps ? 0 : -1;
    if (rc != 0) snprintf(why, sizeof why, "could start only %d of %d copies", forked, napps);
    for (int a = 0; a < forked; a++) {
      mp_child_report r;
      memset(&r, 0, sizeof r);
      ssize_t got = read(resp[a][0], &r, sizeof r);
      close(resp[a][0]);
      int status = 0;
      (void)waitpid(pids[a], &status, 0);
      if (rc == 0 && (got != (ssize_t)sizeof r || !r.ok)) {
        snprintf(why, sizeof why, "copy %d: %.150s", a, got == (ssize_t)sizeof r ? r.why : "died");
        rc = -1;
      }
      ns[a] = r.ns;
    }
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

static inline const char *mp_mode_name(mp_mode m) { return m == MP_MODE_PSEUDO ? "pseudo" : "real"; }

#endif
