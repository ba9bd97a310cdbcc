/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_run.c — main as a process (syncq_po_run) against main as an attached
 * thread, on a ring with main in it; and what a spawn+join costs.
 *
 *   po_run [backend] [N] [hops] [reps] [recv]   (defaults: fiber 2 200000 5 blocking)
 *
 * A ring of N processes, main one of them, passes a token hop by hop
 * (linked messages), received with syncq_po_recv_blocking ("blocking")
 * or syncq_po_recv ("recv": 002's Recv(), which yields while the inbox
 * is empty). "attached": main is the calling thread
 * made a process with syncq_po_attach (in a fiber system it stays a
 * thread: each hop to it is a futex wake-up). "run": main's code runs as
 * the system's first process through syncq_po_run (a fiber in a fiber
 * system). The two alternate, reps times each; the medians are printed
 * (elapsed ns per hop, and the program's CPU ns per hop, all threads),
 * with the median cost of a spawn+join of an empty process, called from
 * main's thread and from a process (syncq_po_run), and of a detached
 * spawn of one from a process (its exit frees its slot; nobody joins).
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

/* CPU time of the whole program (every thread: the schedulers' too): on
 * a machine shared with other work it moves less than elapsed time. */
static uint64_t cpu_ns(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
         ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

typedef struct ring {
  syncq_po_system *sys;
  int n;
  long hops;
  int (*recv)(syncq_po_proc *, syncq_po_msg **); /* syncq_po_recv_blocking or syncq_po_recv */
  syncq_po_pid next[64];                         /* next[i]: where member i forwards (member 0 is main) */
  double ns_per_hop, cpu_per_hop;
} ring;

typedef struct member {
  ring *r;
  int index;
} member;

/* Forward until a message of type 0 has passed. */
static void ring_member(syncq_po_proc *self, void *arg) {
  member *m = arg;
  for (;;) {
    syncq_po_msg *msg;
    if (m->r->recv(self, &msg) != SYNCQ_OK) return;
    uint32_t type = msg->type;
    if (syncq_po_send(self, m->r->next[m->index], msg, SYNCQ_PO_LINK) != SYNCQ_OK) syncq_po_free(self, msg);
    if (type == 0) return;
  }
}

/* Main's part: spawn the others, pass the token r->hops hops, stop them. */
static int ring_main(syncq_po_proc *self, void *arg) {
  ring *r = arg;
  member mem[64];
  syncq_po_pid pids[64];
  pids[0] = syncq_po_pid_of(self);
  for (int i = r->n - 1; i >= 1; i--) {
    r->next[i] = i == r->n - 1 ? pids[0] : pids[i + 1];
    mem[i] = (member){r, i};
    if (syncq_po_spawn(r->sys, ring_member, &mem[i], &pids[i]) != SYNCQ_OK) return 1;
  }
  r->next[0] = pids[1];
  syncq_po_msg *msg;
  if (syncq_po_get(self, 8, &msg) != SYNCQ_OK) return 1;
  msg->type = 1;
  long rounds = r->hops / r->n;
  uint64_t c0 = cpu_ns(), t0 = now_ns();
  for (long k = 0; k < rounds; k++) {
    if (k == rounds - 1) msg->type = 0;
    if (syncq_po_send(self, r->next[0], msg, SYNCQ_PO_LINK) != SYNCQ_OK) return 1;
    if (r->recv(self, &msg) != SYNCQ_OK) return 1;
  }
  r->ns_per_hop = (double)(now_ns() - t0) / (double)(rounds * r->n);
  r->cpu_per_hop = (double)(cpu_ns() - c0) / (double)(rounds * r->n);
  syncq_po_free(self, msg);
  for (int i = 1; i < r->n; i++)
    if (syncq_po_join(r->sys, pids[i]) != SYNCQ_OK) return 1;
  return 0;
}

static void nothing(syncq_po_proc *self, void *arg) {
  (void)self;
  (void)arg;
}

enum { SPAWNS = 2000 };

/* SPAWNS spawn+join pairs of an empty process; ns per pair in *arg. */
static int spawn_join(syncq_po_proc *self, void *arg) {
  double *ns = arg;
  syncq_po_system *sys = *(syncq_po_system **)(ns + 1);
  (void)self;
  uint64_t t0 = now_ns();
  for (int i = 0; i < SPAWNS; i++) {
    syncq_po_pid p;
    if (syncq_po_spawn(sys, nothing, NULL, &p) != SYNCQ_OK || syncq_po_join(sys, p) != SYNCQ_OK) return 1;
  }
  *ns = (double)(now_ns() - t0) / SPAWNS;
  return 0;
}

/* SPAWNS detached spawns of an empty process from a process, which
 * yields while the table is full (its exits free the slots), then until
 * every one has gone: ns per spawn in *arg (the box as spawn_join's). */
static int spawn_detached(syncq_po_proc *self, void *arg) {
  double *ns = arg;
  syncq_po_system *sys = *(syncq_po_system **)(ns + 1);
  uint64_t t0 = now_ns();
  for (int i = 0; i < SPAWNS; i++) {
    int r;
    while ((r = syncq_po_spawn_detached(sys, nothing, NULL, NULL)) == SYNCQ_ELIMIT) syncq_po_yield(self);
    if (r != SYNCQ_OK) return 1;
  }
  while (syncq_po_live(sys) > 1) syncq_po_yield(self); /* the last ones' slots */
  *ns = (double)(now_ns() - t0) / SPAWNS;
  return 0;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return v[n / 2];
}

int main(int argc, char **argv) {
  const char *backend = argc > 1 ? argv[1] : "fiber";
  int n = argc > 2 ? atoi(argv[2]) : 2;
  long hops = argc > 3 ? atol(argv[3]) : 200000;
  int reps = argc > 4 ? atoi(argv[4]) : 5;
  const char *mode = argc > 5 ? argv[5] : "blocking";
  int (*recv)(syncq_po_proc *, syncq_po_msg **) = strcmp(mode, "blocking") == 0 ? syncq_po_recv_blocking
                                                  : strcmp(mode, "recv") == 0   ? syncq_po_recv
                                                                                : NULL;
  if (n < 2 || n > 64 || hops < n || reps < 1 || reps > 100 || recv == NULL) {
    fprintf(stderr, "usage: po_run [thread|fiber] [N 2..64] [hops] [reps 1..100] [blocking|recv]\n");
    return 2;
  }
  syncq_po_config cfg = {0};
  cfg.backend = backend;
  cfg.max_procs = 128;
  syncq_po_system *sys;
  int r = syncq_po_create(&cfg, &sys);
  if (r != SYNCQ_OK) {
    fprintf(stderr, "po_run: %s system: %s\n", backend, syncq_strerror(r));
    return 1;
  }
  double attached[100], run[100], attached_cpu[100], run_cpu[100], spawn_thread[100], spawn_run[100], spawn_det[100];
  for (int k = 0; k < reps; k++) {
    ring a = {sys, n, hops, recv, {0}, 0, 0};
    syncq_po_proc *me;
    if (syncq_po_attach(sys, &me) != SYNCQ_OK || ring_main(me, &a) != 0 || syncq_po_detach(me) != SYNCQ_OK) return 1;
    attached[k] = a.ns_per_hop;
    attached_cpu[k] = a.cpu_per_hop;
    ring b = {sys, n, hops, recv, {0}, 0, 0};
    int result = -1;
    if (syncq_po_run(sys, ring_main, &b, &result) != SYNCQ_OK || result != 0) return 1;
    run[k] = b.ns_per_hop;
    run_cpu[k] = b.cpu_per_hop;
    /* [0]: the figure, [1..]: the system, read by spawn_join */
    double box[1 + (sizeof(syncq_po_system *) + sizeof(double) - 1) / sizeof(double)];
    memcpy(&box[1], &sys, sizeof sys);
    if (spawn_join(NULL, box) != 0) return 1; /* from this thread */
    spawn_thread[k] = box[0];
    if (syncq_po_run(sys, spawn_join, box, &result) != SYNCQ_OK || result != 0) return 1; /* from a process */
    spawn_run[k] = box[0];
    if (syncq_po_run(sys, spawn_detached, box, &result) != SYNCQ_OK || result != 0) return 1;
    spawn_det[k] = box[0];
  }
  printf(
    "%s N=%d hops=%ld reps=%d recv=%s: ring hop: attached %.0f ns (CPU %.0f), run %.0f ns (CPU %.0f); "
    "spawn+join: from main's thread %.0f ns, from a process %.0f ns; detached spawn from a process %.0f ns\n",
    backend, n, hops, reps, mode, median(attached, reps), median(attached_cpu, reps), median(run, reps),
    median(run_cpu, reps), median(spawn_thread, reps), median(spawn_run, reps), median(spawn_det, reps));
  return syncq_po_destroy(sys) == SYNCQ_OK ? 0 : 1;
}
