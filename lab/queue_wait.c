/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * queue_wait.c — the waiting policies of the queue drivers between failed
 * polls (lab.h, lab_queue_wait; --queue-wait): their names and
 * descriptions, the waiting itself (dg25-*, queue-sides) and the note a
 * run with a policy other than the default writes.
 */
#include <string.h>

#include "lab.h"
#include "syncq/pr.h"
#include "syncq/wait.h"

#define SPINS_BEFORE_YIELD 32 /* pause: a yield at every 32nd failed poll */
#define BACKOFF_SPIN_LIMIT 6u /* crossbeam-utils' SPIN_LIMIT: at most 2^6 pauses a poll */

/* clang-format off */
static const struct {
  const char *name;
  const char *text;
} policies[LAB_QUEUE_WAIT_COUNT] = {
  [LAB_QUEUE_WAIT_PAUSE] = {"pause",
    "one pause per failed poll, a yield at every 32nd (the lab's default: a short spin that still "
    "lets a preempted thread run when the threads outnumber the cores)"},
  [LAB_QUEUE_WAIT_BACKOFF] = {"backoff",
    "exponential backoff as crossbeam-utils' Backoff::snooze: 1, 2, 4, ..., 64 pauses at the first "
    "seven failed polls of a wait, then a yield at each"},
  [LAB_QUEUE_WAIT_YIELD] = {"yield",
    "a yield at every failed poll, no spinning"},
};
/* clang-format on */

const char *lab_queue_wait_name(lab_queue_wait w) {
  return (unsigned)w < LAB_QUEUE_WAIT_COUNT ? policies[w].name : NULL;
}

const char *lab_queue_wait_text(lab_queue_wait w) {
  return (unsigned)w < LAB_QUEUE_WAIT_COUNT ? policies[w].text : NULL;
}

int lab_queue_wait_from_name(const char *s, lab_queue_wait *out) {
  if (s == NULL || out == NULL) return -1;
  for (int i = 0; i < LAB_QUEUE_WAIT_COUNT; i++)
    if (strcmp(s, policies[i].name) == 0) {
      *out = (lab_queue_wait)i;
      return 0;
    }
  return -1;
}

/* Every policy yields sooner or later: past N = 1 the threads outnumber
 * the cores on a small machine, and a consumer that only spun on EMPTY
 * would hold its unit's producer off. syncq_wait_yield and
 * syncq_wait_spin_yield count each yield in the thread's statistics, so
 * every point records its waiting (yields_per_op) for every queue alike. */
void lab_queue_wait_poll(lab_queue_wait policy, uint32_t *polls) {
  switch (policy) {
  case LAB_QUEUE_WAIT_BACKOFF:
    /* crossbeam-utils' Backoff::snooze (backoff.rs), which crossbeam's
     * channels wait with: step k spins 2^k pauses up to k = SPIN_LIMIT
     * (6), then every later step yields. */
    if (*polls <= BACKOFF_SPIN_LIMIT) {
      for (uint32_t i = 0; i < 1u << *polls; i++) syncq_pr_relax();
      ++*polls;
    } else syncq_wait_yield();
    break;
  case LAB_QUEUE_WAIT_YIELD:
    syncq_wait_yield();
    break;
  case LAB_QUEUE_WAIT_PAUSE: /* the lab's waiting since dg25 was first run */
  default:
    syncq_wait_spin_yield(polls, SPINS_BEFORE_YIELD);
    break;
  }
}

/* The waiting moves queues by 2x and more, both ways (docs/queues.md):
 * the report shows the note beside the figures and verdicts. */
void lab_note_queue_wait(lab_ctx *ctx) {
  lab_queue_wait w = lab_get_queue_wait(ctx);
  if (lab_planning(ctx) || w == LAB_QUEUE_WAIT_PAUSE) return;
  lab_note(ctx,
           "the queues wait after a failed poll as --queue-wait %s says (%s), not as the lab's default "
           "(%s): these figures and verdicts are that waiting's, comparable only with runs of the same",
           lab_queue_wait_name(w), lab_queue_wait_text(w), lab_queue_wait_name(LAB_QUEUE_WAIT_PAUSE));
}
