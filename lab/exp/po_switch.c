/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_switch.c — po-switch: what one context switch costs, the floor under
 * the fiber backend's message hop, and why it is built on Boost.Context's
 * fcontext rather than ucontext.
 *
 * Variants (ns per switch, one thread, two contexts handing control back
 * and forth):
 *   fcontext     jump_fcontext between two contexts (libboost_context's
 *                assembly: callee-saved registers and the stack pointer)
 *   ucontext     swapcontext between two contexts (glibc; it saves and
 *                restores the signal mask, a system call per switch)
 *   fiber-yield  syncq_po_yield between two fibers of a one-scheduler
 *                system: the switch plus the run queue (an NBLFQ push and
 *                pop) and the scheduler's bookkeeping
 *   kernel-yield two threads pinned to one processing unit taking turns
 *                through a shared word with sched_yield: a kernel switch
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "../lab.h"
#include "syncq/clock.h"
#include "syncq/platform.h"
#include "syncq/po.h"

#define SWITCH_STACK (64 * 1024)
/* Raw context switches that no sanitizer is told about confuse them
 * (ASan and TSan track one stack per thread): measured without one. */
#define SWITCH_SANITIZED (SYNCQ_ASAN || SYNCQ_TSAN) /* syncq/export.h */

typedef struct switch_point {
  const char *what;
  long switches;
} switch_point;

/* ---- fcontext (declared as in boost/context/detail/fcontext.hpp) ---- */
#if SYNCQ_LAB_HAVE_FCONTEXT
typedef void *lab_fctx;
typedef struct lab_transfer {
  lab_fctx fctx;
  void *data;
} lab_transfer;
lab_transfer jump_fcontext(lab_fctx const to, void *vp);
lab_fctx make_fcontext(void *sp, size_t size, void (*fn)(lab_transfer));

static void fctx_loop(lab_transfer t) {
  for (;;) t = jump_fcontext(t.fctx, NULL); /* bounce straight back */
}

static double time_fcontext(long n) {
  char *stack = malloc(SWITCH_STACK);
  if (stack == NULL) return -1;
  lab_fctx other = make_fcontext(stack + SWITCH_STACK, SWITCH_STACK, fctx_loop);
  uint64_t t0 = syncq_now_ns();
  for (long i = 0; i < n / 2; i++) other = jump_fcontext(other, NULL).fctx;
  uint64_t t1 = syncq_now_ns();
  free(stack); /* the other context is suspended for good: nothing of it runs again */
  return (double)(t1 - t0) / (double)n;
}
#endif

/* ---- ucontext ---- */
static ucontext_t uc_main, uc_other;

static void uc_loop(void) {
  for (;;) swapcontext(&uc_other, &uc_main);
}

static double time_ucontext(long n) {
  char *stack = malloc(SWITCH_STACK);
  if (stack == NULL || getcontext(&uc_other) != 0) {
    free(stack);
    return -1;
  }
  uc_other.uc_stack.ss_sp = stack;
  uc_other.uc_stack.ss_size = SWITCH_STACK;
  uc_other.uc_link = NULL;
  makecontext(&uc_other, uc_loop, 0);
  uint64_t t0 = syncq_now_ns();
  for (long i = 0; i < n / 2; i++) swapcontext(&uc_main, &uc_other);
  uint64_t t1 = syncq_now_ns();
  free(stack);
  return (double)(t1 - t0) / (double)n;
}

/* ---- fibers yielding to each other ---- */
typedef struct yield_run {
  long rounds;
  _Atomic(int) started;
  uint64_t t0, t1;
} yield_run;

static void yielder(syncq_po_proc *self, void *arg) {
  yield_run *y = arg;
  atomic_fetch_add(&y->started, 1);
  while (atomic_load(&y->started) < 2) syncq_po_yield(self);
  if (syncq_po_pid_of(self) == 0) y->t0 = syncq_now_ns();
  for (long i = 0; i < y->rounds; i++) syncq_po_yield(self);
  if (syncq_po_pid_of(self) == 0) y->t1 = syncq_now_ns();
}

static double time_fiber_yield(long n, char *why, size_t len) {
  syncq_po_config cfg = {"mpsc", 2, 0, 0, "fiber", 1, false};
  syncq_po_system *s;
  int r = syncq_po_create(&cfg, &s);
  if (r != SYNCQ_OK) {
    snprintf(why, len, "a fiber system: %s", syncq_strerror(r));
    return -1;
  }
  yield_run y = {n / 2, 0, 0, 0};
  syncq_po_pid a, b;
  syncq_po_spawn(s, yielder, &y, &a);
  syncq_po_spawn(s, yielder, &y, &b);
  syncq_po_join(s, a);
  syncq_po_join(s, b);
  syncq_po_destroy(s);
  return (double)(y.t1 - y.t0) / (double)n;
}

/* ---- two threads on one PU taking turns ---- */
typedef struct kturn {
  _Atomic(long) turn;
  long rounds;
  int cpu;
} kturn;

static void *kturn_body(void *arg) {
  kturn *k = arg;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(k->cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  for (long i = 0; i < k->rounds; i++) {
    while (atomic_load(&k->turn) % 2 != 1) sched_yield();
    atomic_fetch_add(&k->turn, 1);
  }
  return NULL;
}

static double time_kernel_yield(long n) {
  kturn k = {0, n / 2, sched_getcpu() >= 0 ? sched_getcpu() : 0};
  pthread_t t;
  cpu_set_t old, set;
  pthread_getaffinity_np(pthread_self(), sizeof old, &old);
  CPU_ZERO(&set);
  CPU_SET(k.cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  if (pthread_create(&t, NULL, kturn_body, &k) != 0) return -1;
  uint64_t t0 = syncq_now_ns();
  for (long i = 0; i < k.rounds; i++) {
    while (atomic_load(&k.turn) % 2 != 0) sched_yield();
    atomic_fetch_add(&k.turn, 1);
  }
  uint64_t t1 = syncq_now_ns();
  pthread_join(t, NULL);
  pthread_setaffinity_np(pthread_self(), sizeof old, &old);
  return (double)(t1 - t0) / (double)n;
}

static int switch_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const switch_point *pt = arg;
  char why[160] = "";
  double ns = -1;
  if (strcmp(pt->what, "ucontext") == 0) ns = time_ucontext(pt->switches);
  else if (strcmp(pt->what, "fiber-yield") == 0) ns = time_fiber_yield(pt->switches, why, sizeof why);
  else if (strcmp(pt->what, "kernel-yield") == 0) ns = time_kernel_yield(pt->switches / 10);
#if SYNCQ_LAB_HAVE_FCONTEXT
  else if (strcmp(pt->what, "fcontext") == 0) ns = time_fcontext(pt->switches);
#endif
  if (ns < 0) {
    lab_fail(ctx, "po-switch %s failed%s%s", pt->what, why[0] ? ": " : "", why);
    return -1;
  }
  out->value = ns;
  out->ops = (uint64_t)pt->switches;
  return 0;
}

static const char *const switch_algos[] = {"fcontext", "ucontext", "fiber-yield", "kernel-yield", NULL};

static int switch_run(lab_ctx *ctx) {
  long n = (long)lab_by_size(ctx, 20000, 2000000, 10000000, 20000000);
  lab_begin(ctx,
            "One thread, two contexts handing control back and forth, %ld switches (kernel-yield: a "
            "tenth of them): fcontext (Boost.Context's jump_fcontext, what the fiber backend uses), "
            "ucontext (glibc's swapcontext, which saves the signal mask with a system call), "
            "fiber-yield (syncq_po_yield between two fibers on one scheduler: the switch plus an NBLFQ "
            "run-queue push and pop) and kernel-yield (two threads on one processing unit taking "
            "turns with sched_yield). ns per switch; ratio to fcontext.",
            n);
  static switch_point pts[4];
  lab_group g;
  memset(&g, 0, sizeof g);
  lab_group_param(&g, "threads", 1);
  g.metric = "switch";
  g.unit = "ns";
  g.sample = switch_sample;
  for (int i = 0; switch_algos[i] != NULL; i++) {
#if !SYNCQ_LAB_HAVE_FCONTEXT
    if (strcmp(switch_algos[i], "fcontext") == 0 || strcmp(switch_algos[i], "fiber-yield") == 0) continue;
#endif
    if (SWITCH_SANITIZED && (strcmp(switch_algos[i], "fcontext") == 0 || strcmp(switch_algos[i], "ucontext") == 0))
      continue;
    pts[i] = (switch_point){switch_algos[i], n};
    g.variants[g.nvariants++] = (lab_variant){switch_algos[i], &pts[i]};
  }
  if (SWITCH_SANITIZED && !lab_planning(ctx))
    lab_note(ctx, "fcontext and ucontext left out: a sanitizer build (raw switches confuse it).");
#if SYNCQ_LAB_HAVE_FCONTEXT
  g.normalize_to = SWITCH_SANITIZED ? NULL : "fcontext";
#else
  if (!lab_planning(ctx)) lab_note(ctx, "fcontext and fiber-yield left out: built without Boost.Context.");
#endif
  return lab_run_group(ctx, &g);
}

/* clang-format off */
static const lab_claim switch_claims[] = {
  {"The fiber backend's choice: an fcontext jump costs less than a tenth of a ucontext switch "
   "(swapcontext makes a system call for the signal mask every switch).",
   "{\"op\":\"ratio_below\",\"metric\":\"switch\",\"num\":\"fcontext\",\"den\":\"ucontext\",\"bound\":0.1}"},
  {"A fiber yield (switch plus run queue) costs less than a tenth of a kernel thread switch.",
   "{\"op\":\"ratio_below\",\"metric\":\"switch\",\"num\":\"fiber-yield\",\"den\":\"kernel-yield\",\"bound\":0.1}"},
};
/* clang-format on */

const lab_experiment lab_exp_po_switch = {
  .name = "po-switch",
  .paper = "002 LaForest 2007, §7 (user-level threads)",
  .figure = "beyond 002: the cost of a context switch",
  .title = "Context switch: fcontext vs ucontext vs a fiber yield vs a kernel thread switch",
  .x = NULL,
  .log_y = true,
  .claims = switch_claims,
  .nclaims = sizeof switch_claims / sizeof switch_claims[0],
  .uses_registry = false,
  .fixed_algos = switch_algos,
  .run = switch_run,
  .postoffice = true,
};
