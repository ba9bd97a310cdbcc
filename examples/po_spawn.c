/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_spawn.c — what a spawn costs in a program's first system (cold: the
 * stacks and records are mapped and faulted in as they are needed) and
 * in a second system of the same program (warm: the first system's
 * stacks are kept and reused).
 *
 *   po_spawn [backend] [N] [reps]     (defaults: fiber 10000 3)
 *
 * Each system spawns N processes that wait for a message (so all N are
 * live at once, as a ring's are), then sends each one, joins them and is
 * destroyed. Printed: microseconds per spawn, from the first spawn to the
 * last one's return, and the program's CPU time (all threads) over the
 * same span per spawn (a fiber takes its stack when it first runs, on its
 * scheduler: in the span only as far as the schedulers ran meanwhile); and the program's page faults per process from the
 * first spawn to the last join (by then every process has run: its stack's
 * first touch is counted); for the first system and the medians of the
 * next reps; and what creating the first system cost (elapsed, page
 * faults: its process table). System calls: run it under strace -f -c.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include <syncq/po.h>

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time of the whole program (every thread: the schedulers' too). */
static uint64_t cpu_ns(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
         ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

/* Page faults of the whole program so far (first touches of fresh memory). */
static long minflt(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

static void waiter(syncq_po_proc *self, void *arg) {
  (void)arg;
  syncq_po_msg *m;
  if (syncq_po_recv_blocking(self, &m) == SYNCQ_OK) syncq_po_free(self, m);
}

/* One system: us per spawn (elapsed), or a negative number on failure;
 * *cpu: CPU us per spawn; *flt: page faults per process, from the first
 * spawn to the last join (every process has run, its stack touched). */
static double one_system(const char *backend, int n, double *cpu, double *flt, double *create_us, long *create_flt) {
  syncq_po_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.backend = backend;
  cfg.mailbox = "mpsc";
  cfg.max_procs = (uint32_t)n + 1u;
  syncq_po_system *sys;
  long cf0 = minflt();
  uint64_t ct0 = now_ns();
  int r = syncq_po_create(&cfg, &sys);
  *create_us = (double)(now_ns() - ct0) / 1e3;
  *create_flt = minflt() - cf0;
  if (r != SYNCQ_OK) {
    fprintf(stderr, "create: %s\n", syncq_strerror(r));
    return -1;
  }
  syncq_po_pid *pids = malloc((size_t)n * sizeof *pids);
  syncq_po_proc *me;
  if (pids == NULL || syncq_po_attach(sys, &me) != SYNCQ_OK) return -1;
  long f0 = minflt();
  uint64_t c0 = cpu_ns(), t0 = now_ns();
  for (int i = 0; i < n; i++) {
    r = syncq_po_spawn(sys, waiter, NULL, &pids[i]);
    if (r != SYNCQ_OK) {
      fprintf(stderr, "spawn %d: %s (%s)\n", i, syncq_strerror(r), syncq_po_limit_reason(sys));
      return -1;
    }
  }
  uint64_t t1 = now_ns(), c1 = cpu_ns();
  *cpu = (double)(c1 - c0) / 1e3 / n;
  for (int i = 0; i < n; i++) {
    syncq_po_msg *m;
    if (syncq_po_get(me, 0, &m) != SYNCQ_OK || syncq_po_send(me, pids[i], m, SYNCQ_PO_LINK) != SYNCQ_OK) return -1;
  }
  for (int i = 0; i < n; i++)
    if (syncq_po_join(sys, pids[i]) != SYNCQ_OK) return -1;
  *flt = (double)(minflt() - f0) / n;
  if (syncq_po_detach(me) != SYNCQ_OK || syncq_po_destroy(sys) != SYNCQ_OK) return -1;
  free(pids);
  return (double)(t1 - t0) / 1e3 / n;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  const char *backend = argc > 1 ? argv[1] : "fiber";
  int n = argc > 2 ? atoi(argv[2]) : 10000;
  int reps = argc > 3 ? atoi(argv[3]) : 3;
  if (n < 1 || reps < 1 || reps > 99) {
    fprintf(stderr, "usage: po_spawn [backend] [N >= 1] [reps 1..99]\n");
    return 2;
  }
  double cold_cpu, warm_cpu[99], cold_flt, warm_flt[99], create_us, warm_create_us;
  long create_flt, warm_create_flt;
  double cold = one_system(backend, n, &cold_cpu, &cold_flt, &create_us, &create_flt);
  double warm[99];
  for (int i = 0; i < reps; i++)
    warm[i] = one_system(backend, n, &warm_cpu[i], &warm_flt[i], &warm_create_us, &warm_create_flt);
  qsort(warm, (size_t)reps, sizeof warm[0], cmp);
  qsort(warm_cpu, (size_t)reps, sizeof warm_cpu[0], cmp);
  qsort(warm_flt, (size_t)reps, sizeof warm_flt[0], cmp);
  if (cold < 0 || warm[0] < 0) return 1;
  printf(
    "%s: %d processes: spawn %.2f us each cold (the first system; %.2f us of CPU, %.2f page faults per "
    "process), %.2f us warm (%.2f us of CPU, %.2f faults; medians of %d)\n",
    backend, n, cold, cold_cpu, cold_flt, warm[reps / 2], warm_cpu[reps / 2], warm_flt[reps / 2], reps);
  printf("%s: creating the first system: %.0f us, %ld page faults\n", backend, create_us, create_flt);
  return 0;
}
