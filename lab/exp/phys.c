/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * phys.c — the machine's floors, measured first in every report; later
 * targets are stated as ratios to them, measured in the same run.
 *
 *   uncontended-cas      one successful CAS on a line this thread owns
 *   uncontended-faa      one fetch-and-add on a line this thread owns
 *   cacheline-pingpong   round trip of a cache line between two threads
 *                        pinned to different cores (store, see, answer)
 *   futex-wake-rtt       round trip of two futex wake-ups between two
 *                        threads on different cores, each sleeping in turn
 *   context-switch       one switch between two threads pinned to the same
 *                        processing unit, handing over by futex (half of
 *                        their round trip)
 *   sched-yield          one sched_yield() with nothing else to run
 *   cross-core-copy      GB/s of memcpy by a thread on one core of a
 *                        buffer another core just wrote (beyond the
 *                        caches): the copy bandwidth between processors
 *                        that 000's "80% of memcpy" means (floors.c)
 *   cross-process-rtt    round trip of a cache line of a MAP_SHARED
 *                        mapping between two processes on different
 *                        cores (floors.c)
 */
#include <sched.h>
#include <string.h>

#include "../floors.h"
#include "../lab.h"
#include "syncq/platform.h"
#include "syncq/pr.h"

typedef enum floor_kind { F_CAS, F_FAA, F_PINGPONG, F_FUTEX_RTT, F_CTXSW, F_YIELD, F_COPY, F_PROC_RTT } floor_kind;

typedef struct floor_def {
  floor_kind kind;
  const char *name;
  int threads;  /* 1 or 2 */
  bool same_pu; /* both threads on one PU */
  bool needs_two_pus;
} floor_def;

static const floor_def floors[] = {
  {F_CAS, "uncontended-cas", 1, false, false},        {F_FAA, "uncontended-faa", 1, false, false},
  {F_PINGPONG, "cacheline-pingpong", 2, false, true}, {F_FUTEX_RTT, "futex-wake-rtt", 2, false, true},
  {F_CTXSW, "context-switch", 2, true, false},        {F_YIELD, "sched-yield", 1, false, false},
  {F_COPY, "cross-core-copy", 2, false, true},        {F_PROC_RTT, "cross-process-rtt", 2, false, true},
};
#define N_FLOORS (sizeof floors / sizeof floors[0])

static const char *const floor_names[N_FLOORS + 1] = {
  "uncontended-cas", "uncontended-faa",   "cacheline-pingpong",
  "futex-wake-rtt",  "context-switch",    "sched-yield",
  "cross-core-copy", "cross-process-rtt", NULL,
};

typedef struct floor_run {
  const floor_def *def;
  uint64_t n;
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) word; /* the line the atomics / ping-pong use */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) turn; /* futex word for the hand-overs */
} floor_run;

static void atomics_body(floor_run *r) {
  uint64_t expected = atomic_load_explicit(&r->word, memory_order_relaxed); /* owned by this thread */
  for (uint64_t i = 0; i < r->n; i++) {
    if (r->def->kind == F_CAS) {
      (void)syncq_pr_cas_u64(&r->word, &expected, expected + 1);
      expected++;
    } else {
      (void)syncq_pr_faa_u64(&r->word, 1);
    }
  }
}

/* Thread 0 writes odd values and waits for the next even one; thread 1
 * answers each odd value with the even one after it. */
static void pingpong_body(floor_run *r, int id) {
  for (uint64_t i = 0; i < r->n; i++) {
    uint64_t mine = 2 * i + 1 + (uint64_t)id, theirs = id ? 2 * i + 1 : 2 * i + 2;
    if (id == 0) atomic_store_explicit(&r->word, mine, memory_order_release); /* pairs with 1's acquire */
    while (atomic_load_explicit(&r->word, memory_order_acquire) != theirs) syncq_pr_relax();
    if (id == 1) atomic_store_explicit(&r->word, mine, memory_order_release); /* pairs with 0's acquire */
  }
}

/* The same hand-over through a futex: each side sleeps until the other
 * wakes it. seq_cst throughout: a system call dwarfs any fence. */
static void futex_body(floor_run *r, int id) {
  for (uint64_t i = 0; i < r->n; i++) {
    uint32_t mine = (uint32_t)(2 * i + 1 + (uint64_t)id), theirs = id ? (uint32_t)(2 * i + 1) : (uint32_t)(2 * i + 2);
    if (id == 0) {
      atomic_store(&r->turn, mine);
      syncq_futex_wake(&r->turn, 1, false);
    }
    uint32_t cur;
    while ((cur = atomic_load(&r->turn)) != theirs) syncq_futex_wait(&r->turn, cur, -1, false);
    if (id == 1) {
      atomic_store(&r->turn, mine);
      syncq_futex_wake(&r->turn, 1, false);
    }
  }
}

static void floor_worker(lab_worker *w) {
  floor_run *r = w->arg;
  switch (r->def->kind) {
  case F_CAS:
  case F_FAA:
    atomics_body(r);
    break;
  case F_PINGPONG:
    pingpong_body(r, w->id);
    break;
  case F_FUTEX_RTT:
  case F_CTXSW:
    futex_body(r, w->id);
    break;
  case F_YIELD:
    for (uint64_t i = 0; i < r->n; i++) sched_yield();
    break;
  case F_COPY:
  case F_PROC_RTT:
    break; /* measured by floors.c, not by a team */
  }
}

typedef struct floor_point {
  const floor_def *def;
  uint64_t n;   /* operations, or the copy's rounds */
  size_t bytes; /* the copy's buffer */
} floor_point;

/* The floors measured across cores and processes (floors.c). */
static int cross_floor_sample(lab_ctx *ctx, const floor_point *pt, lab_sample *out) {
  lab_topo *topo = lab_pinning_enabled(ctx) ? lab_ctx_topo(ctx) : NULL;
  int a, b;
  (void)lab_floor_slots(topo, &a, &b);
  char why[LAB_FLOOR_WHY];
  int rc = pt->def->kind == F_COPY
             ? lab_floor_cross_core_copy(topo, a, b, pt->bytes, (unsigned)pt->n, &out->value, NULL, why, sizeof why)
             : lab_floor_cross_process_rtt(topo, a, b, pt->n, &out->value, why, sizeof why);
  if (rc != 0) lab_fail(ctx, "%s", why);
  return rc;
}

static int floor_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const floor_point *pt = arg;
  if (pt->def->kind == F_COPY || pt->def->kind == F_PROC_RTT) return cross_floor_sample(ctx, pt, out);
  floor_run r;
  memset(&r, 0, sizeof r);
  r.def = pt->def;
  r.n = pt->n;
  const int same[2] = {0, 0}, apart[2] = {0, 1};
  uint64_t ns;
  if (lab_team_run(ctx, pt->def->threads, floor_worker, &r, pt->def->same_pu ? same : apart, &ns, NULL) != 0) return -1;
  double per = (double)ns / (double)pt->n;
  /* a context-switch round trip is two switches */
  out->value = pt->def->kind == F_CTXSW ? per / 2 : per;
  return 0;
}

static int phys_run(lab_ctx *ctx) {
  uint64_t n_atomic = lab_by_size(ctx, 10000, 2000000, 10000000, 10000000);
  uint64_t n_pingpong = lab_by_size(ctx, 2000, 100000, 500000, 1000000);
  uint64_t n_syscall = lab_by_size(ctx, 200, 20000, 100000, 200000);
  uint64_t n_copy_rounds = lab_by_size(ctx, 2, 4, 8, 16);
  size_t copy_bytes = lab_floor_copy_bytes(lab_get_size(ctx));
  lab_begin(ctx,
            "The floors later targets are measured against, in the same run: each value is "
            "the time of one operation (a round trip for the ping-pongs), from %llu atomics, "
            "%llu cache-line round trips and %llu futex hand-overs or yields per repetition. "
            "Two-thread floors pin their threads to different cores (the context switch: to "
            "the same processing unit). cross-core-copy: %llu rounds in which one thread writes a %zu KiB "
            "buffer and a thread on another core copies it out with memcpy; GB/s = bytes copied / copy time "
            "(the copy bandwidth between processors 000 compares bulk transfers with). cross-process-rtt: two "
            "processes (fork) on different cores bounce a counter in one cache line of a shared mapping, "
            "%llu round trips.",
            (unsigned long long)n_atomic, (unsigned long long)n_pingpong, (unsigned long long)n_syscall,
            (unsigned long long)n_copy_rounds, copy_bytes / 1024, (unsigned long long)n_pingpong);
  if (!lab_planning(ctx)) {
    int a, b;
    const char *apart = lab_floor_slots(lab_pinning_enabled(ctx) ? lab_ctx_topo(ctx) : NULL, &a, &b);
    if (apart != NULL) lab_note(ctx, "cross-core-copy and cross-process-rtt: %s", apart);
  }
  int pus = lab_pus(ctx);
  floor_point pts[N_FLOORS];
  for (size_t f = 0; f < N_FLOORS; f++) {
    const floor_def *d = &floors[f];
    if (d->needs_two_pus && pus < 2) {
      lab_note(ctx, "%s not measured: it needs two processing units, this machine has one", d->name);
      continue;
    }
    if (d->same_pu && !lab_pinning_enabled(ctx)) {
      lab_note(ctx,
               "%s not measured: it needs both threads pinned to one processing unit, and pinning is off or refused",
               d->name);
      continue;
    }
    pts[f] = (floor_point){d,
                           d->kind == F_CAS || d->kind == F_FAA             ? n_atomic
                           : d->kind == F_PINGPONG || d->kind == F_PROC_RTT ? n_pingpong
                           : d->kind == F_COPY                              ? n_copy_rounds
                                                                            : n_syscall,
                           copy_bytes};
    lab_group g;
    memset(&g, 0, sizeof g);
    g.metric = d->kind == F_COPY ? "bandwidth" : "time_per_op";
    g.unit = d->kind == F_COPY ? "GB/s" : "ns";
    g.higher_is_better = d->kind == F_COPY;
    g.sample = floor_sample;
    g.variants[g.nvariants++] = (lab_variant){d->name, &pts[f]};
    if (lab_run_group(ctx, &g) != 0) return -1;
  }
  return 0;
}

const lab_experiment lab_exp_phys = {
  .name = "phys",
  .paper = "syncq (machine floors)",
  .figure = "-",
  .title =
    "Machine floors: atomics, cache-line transfer, futex, context switch, yield, cross-core copy, cross-process round trip",
  .x = NULL,
  .log_y = true,
  .claims = NULL,
  .nclaims = 0,
  .uses_registry = false,
  .fixed_algos = floor_names,
  .run = phys_run,
};
