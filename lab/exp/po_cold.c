/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_cold.c — po-ring's cold spawn (po_cold.h): the timed spawns, and
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
 * system, a spawn or the teardown failed or a process had not run a
 * minute after the spawns, 2 on bad arguments.
 */
#include "po_cold.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncq/clock.h"
#include "syncq/po.h"
#include "syncq/wait.h"

/* The timed window: from the first spawn until every member has run once
 * (a fiber takes its stack, with its guard and first page, at its first
 * run: a spawn loop alone would leave them out) and, if later, the spawn
 * loop's end. The spawner does not poll for that: it sleeps on a futex
 * (syncq/wait.h, the barrier discipline) and the member that completes
 * the count reads the clock and wakes it, so on a machine of few cores
 * the spawner takes none of them from the schedulers that run the
 * members, and its wake-up is not in the window. (A spawner that polls
 * with sched_yield is a third runnable thread beside the two schedulers
 * of a 2-core machine, and the kernel may run it in their place.) The
 * peers' rings time their spawn the same way (lab/peers/ring/; docs/lab.md,
 * po-ring). */
typedef struct cold_window {
  int target;                 /* members to count: n, fixed before the first spawn */
  _Atomic(int) started;       /* members that have run */
  _Atomic(uint64_t) last_ns;  /* when the last member ran */
  _Atomic(uint32_t) done;     /* 0 -> 1 once the last member has run: the futex word */
  _Atomic(uint32_t) sleepers; /* the spawner, while it sleeps on done */
} cold_window;

/* How long the spawner waits for the last member: a fiber that gets no
 * stack exits without running (SYNCQ_PO_EXIT_NOMEM, po.h), and the count
 * would never complete; the sample is then lost, not waited for. Far above
 * what 6,000 spawns take, on a loaded machine too (milliseconds). */
#define COLD_WAIT_NS (60ull * 1000 * 1000 * 1000)

static void cold_member(syncq_po_proc *self, void *arg) {
  cold_window *w = arg;
  /* relaxed: a count; the read-modify-writes of one word are totally
   * ordered, so exactly one member reads target-1, and only that one
   * publishes (below). */
  if (atomic_fetch_add_explicit(&w->started, 1, memory_order_relaxed) == w->target - 1) {
    /* relaxed: published by the seq_cst store of done below, which the
     * spawner's seq_cst load of done reads from. */
    atomic_store_explicit(&w->last_ns, syncq_now_ns(), memory_order_relaxed);
    atomic_store(&w->done, 1u); /* seq_cst: the Dekker pair of syncq_wait_wake (wait.h, "Barriers") */
    syncq_wait_wake(SYNCQ_WAIT_BLOCK, &w->done, &w->sleepers, 0, false);
  }
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
  /* On the spawner's stack: every member is joined (cold_teardown) before
   * it goes. */
  cold_window w = {n, 0, 0, 0u, 0u};
  uint64_t t0 = syncq_now_ns();
  int i = 0;
  while (i < n && syncq_po_spawn(sys, cold_member, &w, &pids[i]) == SYNCQ_OK) i++;
  uint64_t t1 = syncq_now_ns();
  bool ran = false; /* every member ran: the window is complete */
  if (i == n) {     /* else the sample is lost: no wait for a count that never comes */
    syncq_waiter sleep;
    syncq_waiter_init(&sleep, SYNCQ_WAIT_BLOCK, false, 0);
    uint64_t deadline = t1 + COLD_WAIT_NS;
    while (!(ran = atomic_load(&w.done) != 0u)) /* seq_cst: see cold_member */
      if (syncq_waiter_pause_until(&sleep, &w.done, 0u, &w.sleepers, deadline, NULL) != SYNCQ_OK) break; /* late */
    uint64_t last = atomic_load_explicit(&w.last_ns, memory_order_relaxed); /* ordered by the load of done above */
    if (ran && last > t1) t1 = last;
  }
  int torn = cold_teardown(sys, pids, i); /* untimed: every process gets its message and exits */
  free(pids);
  return ran && torn == 0 ? (double)(t1 - t0) / 1e3 / n : -1;
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
    fprintf(stderr, "syncq-lab-po-cold: %s:%s, %ld processes: the system, a spawn or a first run failed\n", argv[1],
            argv[2], n);
    return 1;
  }
  printf("spawn_cold_us=%.4f\n", us);
  return fflush(stdout) == 0 ? 0 : 1;
}
#endif
