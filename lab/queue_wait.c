/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * queue_wait.c — the waiting policies of the queue drivers between failed
 * polls (lab.h, lab_queue_wait; --queue-wait): their names and
 * descriptions, the waiting itself (dg25-*, queue-sides) and the note a
 * run with a policy other than the default writes; and the watch over
 * those waits that finds a queue that lost items (lab_queue_watch), and
 * the texts of its verdicts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"
#include "syncq/clock.h"
#include "syncq/pr.h"
#include "syncq/status.h"
#include "syncq/wait.h"

#define SPINS_BEFORE_YIELD 32 /* pause: a yield at every 32nd failed poll */
#define BACKOFF_SPIN_LIMIT 6u /* crossbeam-utils' SPIN_LIMIT: at most 2^6 pauses a poll */
#define NS_PER_MS 1000000ull

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

void lab_queue_watch_init(lab_queue_watch *w, int threads) {
  atomic_init(&w->quiet, 0);
  atomic_init(&w->lost, false);
  atomic_init(&w->gave_up, 0);
  w->threads = threads;
}

#if defined(__SANITIZE_THREAD__)
#define LAB_LOST_MS_BUILD LAB_LOST_MS_TSAN
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LAB_LOST_MS_BUILD LAB_LOST_MS_TSAN
#endif
#endif
#ifndef LAB_LOST_MS_BUILD
#define LAB_LOST_MS_BUILD LAB_LOST_MS_DEFAULT
#endif

/* Set once by lab_lost_ms_register, before any experiment runs. */
static int lost_ms = LAB_LOST_MS_BUILD;

int lab_lost_ms_register(void) {
  const char *v = getenv("SYNCQ_LAB_LOST_MS");
  if (v == NULL) return 0;
  char *end;
  errno = 0;
  long ms = strtol(v, &end, 10);
  if (*v < '0' || *v > '9' || *end != '\0' || errno != 0 || ms < 1 || ms > LAB_LOST_MS_MAX) return -1;
  lost_ms = (int)ms;
  return 1;
}

int lab_lost_ms(void) { return lost_ms; }

void lab_queue_watch_finished(lab_queue_watch *w) { atomic_fetch_add(&w->quiet, 1); }

bool lab_queue_watch_read(lab_queue_watch *w, lab_queue_streak *s) {
  if (lab_queue_watch_lost(w)) {
    atomic_fetch_add(&w->gave_up, 1);
    return true;
  }
  uint64_t now = syncq_now_ns();
  if (s->since == 0 || now - s->last > (uint64_t)LAB_QUEUE_LOST_MS * NS_PER_MS / 2) {
    /* the wait's first reading, or one after a gap in which this thread
     * did not poll: the EMPTY streak it watched starts here */
    s->since = now;
    s->quiet_since = 0;
  }
  s->last = now;
  if (!s->counted) {
    if (now - s->since < LAB_QUEUE_QUIET_MS * NS_PER_MS) return false;
    s->counted = true;
    atomic_fetch_add(&w->quiet, 1);
  }
  /* seq_cst: read after this thread's own count, as every other thread
   * counts itself before it reads (no two quiet threads both miss the
   * other) */
  if (atomic_load(&w->quiet) < w->threads) {
    s->quiet_since = 0;
    return false;
  }
  if (s->quiet_since == 0) s->quiet_since = now;
  if (now - s->quiet_since < (uint64_t)LAB_QUEUE_LOST_MS * NS_PER_MS) return false;
  atomic_store(&w->lost, true);
  atomic_fetch_add(&w->gave_up, 1);
  return true;
}

void lab_queue_watch_end(lab_queue_watch *w, lab_queue_streak *s) {
  /* before the thread's next enqueue: while it counts as quiet, no other
   * thread may take the queue's EMPTY as final */
  if (s->counted) atomic_fetch_sub(&w->quiet, 1);
  s->counted = false;
}

int lab_queue_watch_check(lab_ctx *ctx, lab_queue_watch *w, const char *algo, uint64_t lost, uint64_t total) {
  if (!atomic_load(&w->lost)) return 0;
  lab_fail(ctx, "%s lost %llu of %llu items: every producer had finished and the queue answered EMPTY for %d ms", algo,
           (unsigned long long)lost, (unsigned long long)total, LAB_QUEUE_LOST_MS);
  return -1;
}

bool lab_queue_watch_why(lab_queue_watch *w, const lab_queue_lost *what, char *why, size_t len) {
  if (!atomic_load(&w->lost)) return false;
  snprintf(why, len,
           "%s lost %llu of %llu %s: every thread had finished or was waiting for work, and the %s answered EMPTY "
           "for %d ms",
           what->algo, (unsigned long long)what->lost, (unsigned long long)what->total, what->items, what->structure,
           LAB_QUEUE_LOST_MS);
  return true;
}

bool lab_queue_duplicate_why(const char *algo, uint64_t total, uint64_t left, char *why, size_t len) {
  if (left == 0) return false;
  snprintf(why, len,
           "%s gave out more items than were enqueued: every consumer took its share of the %llu and %llu %s left "
           "in the queue (a duplicate)",
           algo, (unsigned long long)total, (unsigned long long)left, left == 1 ? "was" : "were");
  return true;
}

int lab_queue_duplicate_check(lab_ctx *ctx, const char *algo, uint64_t total, uint64_t left) {
  char why[LAB_QUEUE_WHY];
  if (!lab_queue_duplicate_why(algo, total, left, why, sizeof why)) return 0;
  lab_fail(ctx, "%s", why);
  return -1;
}

uint64_t lab_queue_leftovers(int (*dequeue)(void *q, void **item), void *q, uint64_t max) {
  uint64_t n = 0;
  void *x;
  while (n < max && dequeue(q, &x) == SYNCQ_OK) n++;
  return n;
}
