/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * queue_wait.c — the names and descriptions of dg25's waiting policies
 * between failed polls (lab.h, lab_queue_wait; --queue-wait). The waiting
 * itself is in lab/exp/dg25.c, the only driver that uses it.
 */
#include <string.h>

#include "lab.h"

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
