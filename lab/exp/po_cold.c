/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_cold.c — po-ring's cold spawn (po_cold.h): the timed spawn loop, and
 * with SYNCQ_PO_COLD_HELPER the main of syncq-lab-po-cold, the program
 * po-ring runs once per spawn_cold sample.
 *
 * Why a program of its own: a cold spawn is a program's first system,
 * nothing cached, every stack, process record and mailbox mapped afresh,
 * as the peers' spawns are in a runtime started for the run. A child
 * forked from the lab inherits what the lab's earlier systems kept (the
 * process table, the slabs' chunks) and copies each such page at its
 * first write (a copy-on-write fault instead of a fresh page), and the
 * fork write-protects every page of the lab's own for the samples after
 * it. A fresh program has none of that; the lab starts it with
 * posix_spawn (po_program_run) and reads one line.
 *
 * Usage: syncq-lab-po-cold BACKEND MAILBOX N
 * Prints "spawn_cold_us=<us per process>"; exit status 0, 1 when the
 * system or a spawn failed, 2 on bad arguments.
 */
#include "po_cold.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncq/clock.h"
#include "syncq/platform.h"
#include "syncq/po.h"

/* Members that have run: a fiber takes its stack at its first run, so
 * the timed window lasts until every member has run once (a spawn loop
 * alone would leave the stacks, their guards and first page faults out). */
static _Atomic(int) cold_started;

static void cold_member(syncq_po_proc *self, void *arg) {
  (void)arg;
  atomic_fetch_add_explicit(&cold_started, 1, memory_order_relaxed); /* a count, read by the spawner's loop */
  syncq_po_msg *m;
  if (syncq_po_recv_blocking(self, &m) == SYNCQ_OK) syncq_po_free(self, m);
}

/* After the timed loop: each of the n processes gets the message it waits
 * for, exits and is joined, and the system is destroyed, so the program
 * ends with nothing of it left (LeakSanitizer checks that in its build).
 * 0, or -1 when some step failed. */
static int cold_teardown(syncq_po_system *sys, const syncq_po_pid *pids, int n) {
  int bad = 0;
  syncq_po_proc *me;
  if (syncq_po_attach(sys, &me) != SYNCQ_OK) return -1;
  for (int i = 0; i < n; i++) {
    syncq_po_msg *m;
    if (syncq_po_get(me, 0, &m) != SYNCQ_OK) {
      bad = 1;
      continue;
    }
    if (syncq_po_send(me, pids[i], m, SYNCQ_PO_LINK) != SYNCQ_OK) {
      syncq_po_free(me, m);
      bad = 1;
    }
  }
  if (syncq_po_detach(me) != SYNCQ_OK) bad = 1;
  for (int i = 0; i < n; i++)
    if (syncq_po_join(sys, pids[i]) != SYNCQ_OK) bad = 1;
  if (syncq_po_destroy(sys) != SYNCQ_OK) bad = 1;
  return bad ? -1 : 0;
}

double po_cold_spawn_us(const char *backend, const char *mailbox, int n, size_t guard) {
  if (n <= 0) return -1;
  syncq_po_pid *pids = malloc((size_t)n * sizeof *pids); /* before the system: not in the timed loop */
  if (pids == NULL) return -1;
  syncq_po_config cfg = {mailbox, (uint32_t)n, 0, guard, backend, 0, false};
  syncq_po_system *sys;
  if (syncq_po_create(&cfg, &sys) != SYNCQ_OK) {
    free(pids);
    return -1;
  }
  atomic_store(&cold_started, 0);
  uint64_t t0 = syncq_now_ns();
  int i = 0;
  while (i < n && syncq_po_spawn(sys, cold_member, NULL, &pids[i]) == SYNCQ_OK) i++;
  while (atomic_load_explicit(&cold_started, memory_order_relaxed) < i) syncq_yield(); /* a count: see cold_member */
  uint64_t t1 = syncq_now_ns();
  int torn = cold_teardown(sys, pids, i); /* untimed: every process gets its message and exits */
  free(pids);
  return i == n && torn == 0 ? (double)(t1 - t0) / 1e3 / n : -1;
}

#ifdef SYNCQ_PO_COLD_HELPER
int main(int argc, char **argv) {
  char *end = NULL;
  long n = argc == 4 ? strtol(argv[3], &end, 10) : 0;
  if (argc != 4 || end == argv[3] || *end != '\0' || n <= 0 || n > (long)SYNCQ_PO_MAX_PROCS) {
    fprintf(stderr, "usage: syncq-lab-po-cold fiber|thread MAILBOX N (1 <= N <= %u)\n", (unsigned)SYNCQ_PO_MAX_PROCS);
    return 2;
  }
  double us = po_cold_spawn_us(argv[1], argv[2], (int)n, 0); /* the default guard: nothing here has a cache */
  if (us < 0) {
    fprintf(stderr, "syncq-lab-po-cold: %s:%s, %ld processes: the system or a spawn failed\n", argv[1], argv[2], n);
    return 1;
  }
  printf("spawn_cold_us=%.4f\n", us);
  return fflush(stdout) == 0 ? 0 : 1;
}
#endif
