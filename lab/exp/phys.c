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
 */
#include <sched.h>
#include <string.h>

#include "../lab.h"
#include "syncq/platform.h"
#include "syncq/pr.h"

typedef enum floor_kind { F_CAS, F_FAA, F_PINGPONG, F_FUTEX_RTT, F_CTXSW, F_YIELD } floor_kind;

typedef struct floor_def {
  floor_kind kind;
  const char *name;
  int threads;     /* 1 or 2 */
  bool same_pu;    /* both threads on one PU */
  bool needs_two_pus;
} floor_def;

static const floor_def floors[] = {
  {F_CAS, "uncontended-cas", 1, false, false},
  {F_FAA, "uncontended-faa", 1, false, false},
  {F_PINGPONG, "cacheline-pingpong", 2, false, true},
  {F_FUTEX_RTT, "futex-wake-rtt", 2, false, true},
  {F_CTXSW, "context-switch", 2, true, false},
  {F_YIELD, "sched-yield", 1, false, false},
};
#define N_FLOORS (sizeof floors / sizeof floors[0])

static const char *const floor_names[N_FLOORS + 1] = {
  "uncontended-cas", "uncontended-faa", "cacheline-pingpong", "futex-wake-rtt", "context-switch", "sched-yield",
  NULL,
};

typedef struct floor_run {
  const floor_def *def;
  uint64_t n;
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) word;  /* the line the atomics / ping-pong use */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) turn;  /* futex word for the hand-overs */
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
  case F_FAA: atomics_body(r); break;
  case F_PINGPONG: pingpong_body(r, w->id); break;
  case F_FUTEX_RTT:
  case F_CTXSW: futex_body(r, w->id); break;
  case F_YIELD:
    for (uint64_t i = 0; i < r->n; i++) sched_yield();
    break;
  }
}

typedef struct floor_point {
  const floor_def *def;
  uint64_t n;
} floor_point;

static int floor_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const floor_point *pt = arg;
  floor_run r;
  memset(&r, 0, sizeof r);
  r.def = pt->def;
  r.n = pt->n;
  const int same[2] = {0, 0}, apart[2] = {0, 1};
  uint64_t ns;
  if (lab_team_run(ctx, pt->def->threads, floor_worker, &r, pt->def->same_pu ? same : apart, &ns, NULL) != 0)
    return -1;
  double per = (double)ns / (double)pt->n;
  /* a context-switch round trip is two switches */
  out->value = pt->def->kind == F_CTXSW ? per / 2 : per;
  return 0;
}

static int phys_run(lab_ctx *ctx) {
  uint64_t n_atomic = lab_by_size(ctx, 10000, 2000000, 10000000, 10000000);
  uint64_t n_pingpong = lab_by_size(ctx, 2000, 100000, 500000, 1000000);
  uint64_t n_syscall = lab_by_size(ctx, 200, 20000, 100000, 200000);
  lab_begin(ctx,
            "The floors later targets are measured against, in the same run: each value is "
            "the time of one operation (a round trip for the ping-pongs), from %llu atomics, "
            "%llu cache-line round trips and %llu futex hand-overs or yields per repetition. "
            "Two-thread floors pin their threads to different cores (the context switch: to "
            "the same processing unit).",
            (unsigned long long)n_atomic, (unsigned long long)n_pingpong, (unsigned long long)n_syscall);
  int pus = lab_pus(ctx);
  floor_point pts[N_FLOORS];
  for (size_t f = 0; f < N_FLOORS; f++) {
    const floor_def *d = &floors[f];
    if (d->needs_two_pus && pus < 2) {
      lab_note(ctx, "%s not measured: it needs two processing units, this machine has one", d->name);
      continue;
    }
    if (d->same_pu && !lab_pinning_enabled(ctx)) {
      lab_note(ctx, "%s not measured: it needs both threads pinned to one processing unit, and pinning is off or refused",
               d->name);
      continue;
    }
    pts[f] = (floor_point){d, d->kind == F_CAS || d->kind == F_FAA ? n_atomic
                              : d->kind == F_PINGPONG              ? n_pingpong
                                                                   : n_syscall};
    lab_group g;
    memset(&g, 0, sizeof g);
    g.metric = "time_per_op";
    g.unit = "ns";
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
  .title = "Machine floors: atomics, cache-line transfer, futex, context switch, yield",
  .x = NULL,
  .log_y = true,
  .claims = NULL,
  .nclaims = 0,
  .uses_registry = false,
  .fixed_algos = floor_names,
  .run = phys_run,
};
