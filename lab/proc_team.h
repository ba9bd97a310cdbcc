/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * proc_team.h — a team of forked child processes for syncq-lab: the
 * control block they share with the parent (ready / failed / go / stop and
 * a spare cache line), a per-child result slot in shared memory, forking
 * with a safety alarm, bounded waits, stopping and reaping, pinning, and
 * unique names for the shared segments the children open.
 *
 * Contract:
 *   used by     lc98-logp and lc98-stress (processes exchanging active
 *               messages), the "real" multiprogramming mode (mp_common.c:
 *               m copies of a benchmark as processes), and the
 *               cross-process floor (floors.c).
 *   progress    the parent's waits are bounded (LAB_PROC_STALL_NS) and
 *               notice a child that died; every child gets an alarm
 *               (LAB_PROC_CHILD_ALARM_S) so none outlives a parent that
 *               stopped caring. lab_proc_team_stop() kills (if asked) and
 *               reaps every child forked, on every path.
 *   atomics     ready: fetch-add release (child) / load acquire (parent);
 *               go: store release + futex wake (parent) / load acquire
 *               (child); stop: store release / load acquire (a child that
 *               sees stop sees an earlier go); failed: a flag.
 *   memory      one MAP_SHARED | MAP_ANONYMOUS mapping: the control block
 *               plus max_children slots of slot_bytes.
 *   process-shared  yes: that is its purpose (futex waits pass shared=true).
 *   signal safety   the child-side calls are async-signal-safe apart from
 *               the pinning (hwloc); children must leave with _exit().
 *   limits      LAB_PROC_MAX children per team.
 */
#ifndef SYNCQ_LAB_PROC_TEAM_H
#define SYNCQ_LAB_PROC_TEAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lab.h"
#include "syncq/platform.h"
#include "syncq/pr.h"

#define LAB_PROC_MAX 64
#define LAB_PROC_CHILD_ALARM_S 600       /* a child that outlives its parent's interest dies */
#define LAB_PROC_STALL_NS 30000000000ull /* a wait with no progress for 30 s fails */
#define LAB_PROC_WHY 200

/* Shared between the parent and its children. */
typedef struct lab_proc_ctl {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) ready; /* children that are set up */
  _Atomic(uint32_t) failed;                        /* a child could not set up */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) go;    /* the parent's start signal (a futex word) */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) stop;  /* the parent is done */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) line;  /* a line for ping-pongs */
} lab_proc_ctl;

typedef struct lab_proc_team {
  lab_proc_ctl *ctl;    /* in the shared mapping */
  unsigned char *slots; /* max_children result slots, in the shared mapping */
  size_t slot_bytes;
  size_t map_bytes;
  int max_children;
  lab_topo *topo; /* pin children and parent with it; NULL: no pinning */
  pid_t pids[LAB_PROC_MAX];
  int n; /* children forked and not yet reaped */
} lab_proc_team;

/* Map the shared block (control + max_children slots of slot_bytes,
 * zeroed). 0, or -1 with the reason in why (bad sizes, mmap failed). */
int lab_proc_team_init(lab_proc_team *t, lab_topo *topo, int max_children, size_t slot_bytes, char *why, size_t len);
/* Fork one child: returns 0 in the child (its alarm set), the pid in the
 * parent (recorded for stop), or -1 when fork failed or the team is full.
 * Output buffers are flushed first so the child does not repeat them. */
pid_t lab_proc_team_fork(lab_proc_team *t);
/* Child i's result slot (NULL if out of range). */
void *lab_proc_team_slot(const lab_proc_team *t, int i);

/* Parent: wait until n children said ready. false when one failed, one
 * died, or none progressed for LAB_PROC_STALL_NS (why says which). */
bool lab_proc_team_wait_ready(lab_proc_team *t, uint32_t n, char *why, size_t len);
/* Parent: let the children go (release store; sleeping children woken). */
void lab_proc_team_go(lab_proc_team *t);
/* Parent: raise stop, SIGKILL the children when kill_them, reap them all. */
void lab_proc_team_stop(lab_proc_team *t, bool kill_them);
/* Parent: stop (killing any child still there) and unmap. Idempotent. */
void lab_proc_team_destroy(lab_proc_team *t);

/* Child: announce that it is set up / that it could not set up (exits). */
void lab_proc_child_ready(lab_proc_team *t);
_Noreturn void lab_proc_child_failed(lab_proc_team *t, int code);
/* Child: wait for go, spinning with sched_yield (sleep = false: starts at
 * once, for timed starts) or asleep on the futex (sleep = true: leaves the
 * processors to the others). false if the parent stopped instead. */
bool lab_proc_child_wait_go(lab_proc_team *t, bool sleep);
/* Child: true once the parent raised stop. */
bool lab_proc_child_should_stop(const lab_proc_team *t);

/* Pin the calling thread/process to slot (no-op with topo NULL). */
void lab_proc_pin(lab_topo *topo, int slot);
/* Undo lab_proc_pin (no-op with topo NULL). */
void lab_proc_unpin(lab_topo *topo);
/* A unique shared-segment name: "syncq-<tag>-<pid>-<role>-<counter>". */
void lab_proc_seg_name(char *out, size_t n, const char *tag, const char *role);

#endif /* SYNCQ_LAB_PROC_TEAM_H */
