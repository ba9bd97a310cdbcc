/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * team.c — worker teams: start n threads together, pinned, time them.
 *
 * Threads are created and pinned before the clock starts. They wait at a
 * gate until every one of them has arrived; the caller then reads the
 * clock and opens the gate. Each worker reads the clock when its body
 * returns, and the team's time ends at the last of those (not at the
 * joins, which would add thread exit and wake-up latency). If a thread
 * cannot be created the gate opens with GATE_ABORT and the started workers
 * return at once.
 *
 * Each worker counts its body's events (perf_counters.h) unless the run
 * says --no-perf-counters, the caller takes no statistics (stats NULL:
 * phys's floors) or the team's threads cannot each have a processing unit
 * of their own (one_pu_each). It opens its counters after pinning and
 * before the gate, so the opens are outside the team's time; enables them
 * when the gate opens, right before its body, and disables them right
 * after its clock read; reads and closes them before it returns. The team's
 * time gains the one ioctl before the body, and the body a dearer context
 * switch (docs/lab.md, "Event counters", measures both).
 *
 * Each worker names its thread "w<id>/<n>" (worker id of a team of n,
 * before the gate), so that a sampling profile (perf report --sort comm,
 * scripts/profile-report) tells the workers apart: dg25-prodcons's
 * producers are w0..w<n/2-1>, its consumers the rest. A name the kernel
 * refuses leaves the thread its inherited one; the run goes on.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"
#include "syncq/clock.h"
#include "syncq/platform.h"
#include "syncq/pr.h"

/* The gate: workers announce themselves in `arrived` and wait for `go`
 * spinning, with a yield every GATE_SPINS_PER_YIELD spins so that an
 * oversubscribed team still lets the late ones reach the gate; a
 * condition variable would add a futex wake-up (tens of us on a VM) to
 * every worker's start. `go` = 1 starts the body, 2 aborts. */
#define GATE_SPINS_PER_YIELD 64
enum gate_state { GATE_WAIT, GATE_GO, GATE_ABORT };

typedef struct gate {
  SYNCQ_CACHELINE_ALIGNED _Atomic(int) arrived;
  SYNCQ_CACHELINE_ALIGNED _Atomic(int) state;
} gate;

typedef struct worker_slot {
  lab_worker w;
  lab_ctx *ctx;
  void (*body)(lab_worker *w);
  gate *g;
  int pu_slot;     /* pinning slot, or -1 for no pinning */
  uint64_t end_ns; /* when this worker finished its body */
  syncq_stats stats;
  bool perf;              /* count the body's events */
  lab_perf_counts counts; /* what they counted */
  char pin_error[256];
} worker_slot;

static void spin_or_yield(unsigned *spins) {
  if (++*spins % GATE_SPINS_PER_YIELD == 0) syncq_yield();
  else syncq_pr_relax();
}

static void *worker_main(void *p) {
  worker_slot *s = p;
  char name[16]; /* the kernel's limit, with its terminator */
  snprintf(name, sizeof name, "w%d/%d", s->w.id, s->w.n);
  (void)pthread_setname_np(pthread_self(), name);
  if (s->pu_slot >= 0 && lab_ctx_topo(s->ctx) != NULL)
    (void)lab_topo_pin_self(lab_ctx_topo(s->ctx), s->pu_slot, s->pin_error, sizeof s->pin_error);
  lab_perf_set perf;
  bool counting = s->perf && lab_perf_open(&perf, lab_perf_default_specs, LAB_PERF_DEFAULT_EVENTS) > 0;
  syncq_stats_reset();
  atomic_fetch_add(&s->g->arrived, 1);
  int st;
  unsigned spins = 0;
  while ((st = atomic_load(&s->g->state)) == GATE_WAIT) spin_or_yield(&spins);
  if (st == GATE_GO) {
    if (counting) lab_perf_enable(&perf);
    s->body(&s->w);
  }
  s->end_ns = syncq_now_ns();
  if (counting) {
    lab_perf_disable(&perf);
    lab_perf_read(&perf, &s->counts);
  } else if (s->perf) {
    s->counts = (lab_perf_counts){.sets = 1, .running_fraction = 1.0}; /* none opened: none present */
  }
  if (s->perf) lab_perf_close(&perf);
  s->stats = *syncq_stats_self();
  return NULL;
}

/* Whether the team's n threads can each have a processing unit of their
 * own: no more of them than PUs and, where the caller pins them (pus),
 * no two on one PU. A counted thread's every context switch costs more
 * (the kernel switches its counters too: 2.5 us more a switch on a VM,
 * docs/lab.md, "Event counters"), so a team whose threads share PUs, and
 * switch all the time, would be slowed by its counting: it counts nothing.
 * Without a topology (hwloc failed: nothing is pinned) the PUs are those
 * the kernel says this thread may run on (lab_perf_cpus), which its
 * workers inherit; where it says nothing, one thread alone fits. */
static bool one_pu_each(lab_ctx *ctx, int n, const int *pus) {
  const lab_topo *t = lab_ctx_topo(ctx);
  if (t == NULL) return n <= 1 || n <= lab_perf_cpus(NULL, NULL, 0);
  if (n > lab_real_pus(ctx)) return false;
  if (pus == NULL) return true;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i && pus[i] >= 0; j++) /* a slot < 0: unpinned, the scheduler's to place */
      if (pus[j] >= 0 && lab_topo_pu_of_slot(t, pus[i]) == lab_topo_pu_of_slot(t, pus[j])) return false;
  return true;
}

int lab_team_run(lab_ctx *ctx, int n, void (*body)(lab_worker *w), void *arg, const int *pus, uint64_t *elapsed_ns,
                 syncq_stats *stats) {
  if (n < 1) {
    lab_fail(ctx, "a team needs at least one thread (got %d)", n);
    return -1;
  }
  worker_slot *slots = calloc((size_t)n, sizeof *slots);
  pthread_t *tids = calloc((size_t)n, sizeof *tids);
  gate *g = aligned_alloc(SYNCQ_CACHELINE, sizeof(gate));
  if (slots == NULL || tids == NULL || g == NULL) {
    free(slots);
    free(tids);
    free(g);
    lab_fail(ctx, "out of memory for a team of %d threads", n);
    return -1;
  }
  atomic_init(&g->arrived, 0);
  atomic_init(&g->state, GATE_WAIT);
  bool pin = lab_pinning_enabled(ctx);
  bool perf = lab_perf_counters_enabled(ctx) && stats != NULL && one_pu_each(ctx, n, pin ? pus : NULL);
  int started = 0;
  for (int i = 0; i < n; i++) {
    slots[i] = (worker_slot){
      .w = {i, n, arg}, .ctx = ctx, .body = body, .g = g, .pu_slot = pin ? (pus ? pus[i] : i) : -1, .perf = perf};
    if (pthread_create(&tids[i], NULL, worker_main, &slots[i]) != 0) break;
    started++;
  }
  uint64_t t0 = 0;
  if (started == n) {
    unsigned spins = 0;
    while (atomic_load(&g->arrived) < n) spin_or_yield(&spins);
    t0 = syncq_now_ns();
    atomic_store(&g->state, GATE_GO);
  } else {
    atomic_store(&g->state, GATE_ABORT);
  }
  for (int i = 0; i < started; i++) pthread_join(tids[i], NULL);
  int rc = 0;
  if (started < n) {
    lab_fail(ctx, "could create only %d of %d threads", started, n);
    rc = -1;
  } else {
    uint64_t t1 = t0;
    for (int i = 0; i < n; i++) t1 = slots[i].end_ns > t1 ? slots[i].end_ns : t1;
    if (elapsed_ns) *elapsed_ns = t1 - t0;
    if (stats) {
      memset(stats, 0, sizeof *stats);
      for (int i = 0; i < n; i++) syncq_stats_add(stats, &slots[i].stats);
    }
    if (lab_perf_counters_enabled(ctx)) {
      /* a team that did not count leaves its sample without the events:
       * the sample's operations are its teams' together */
      lab_perf_counts sum = {.sets = 1, .running_fraction = 1.0};
      if (perf) {
        sum.sets = 0;
        for (int i = 0; i < n; i++) lab_perf_counts_add(&sum, &slots[i].counts);
      }
      lab_perf_sample_add(ctx, &sum);
    }
    for (int i = 0; i < n; i++) {
      if (slots[i].pin_error[0]) {
        lab_note(ctx, "worker %d could not be pinned: %s", i, slots[i].pin_error);
        break;
      }
    }
  }
  free(g);
  free(slots);
  free(tids);
  return rc;
}
