/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lc98_stress.c — Lumetta & Culler (paper 000) §4.2: communication stress,
 * many writer processes to one reader, per packet-claim algorithm.
 *
 * lc98-stress (§4.2, Table 2): 1, 3 and 7 writer processes send a total of
 * 1,000,000 integers (default/full; fewer in --quick) to one reader, which
 * checks every writer's count and order. The time runs from the writers'
 * common start to the last integer handled. The 7-writer group also runs
 * "lock-free-1w" (the lock-free claim with one writer) so the paper's
 * "improves with more writers" is a ratio of interleaved runs.
 *
 * Processes, not threads: the lab's teams are threads, so the children are
 * a lab_proc_team (lab/proc_team.h). A child only runs library code and
 * _exit()s.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lab.h"
#include "../prng.h"
#include "../proc_team.h"
#include "lc98_common.h"
#include "syncq/am.h"
#include "syncq/clock.h"

#define LC98_STRESS_TOTAL 1000000u /* 000 §4.2 */
#define LC98_STRESS_MAX_WRITERS 7  /* 000 §4.2: 1, 3 and 7 writers */

typedef struct stress_point {
  int claim;
  int writers;
  uint64_t total;
} stress_point;

typedef struct stress_reader {
  uint32_t next[LAB_MAX_THREADS_LIST];
  uint64_t got;
  uint64_t bad;
} stress_reader;

static void h_int(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  (void)t;
  (void)d;
  (void)len;
  stress_reader *r = ctx;
  r->got++;
  if (na != 2 || a[0] >= LAB_MAX_THREADS_LIST || r->next[a[0]] != a[1]) {
    r->bad++;
    return;
  }
  r->next[a[0]]++;
}

static void writer_child(lab_proc_team *team, const char *name, uint32_t id, uint64_t count) {
  lab_proc_pin(team->topo, (int)id + 1);
  syncq_am_peer *rd;
  if (syncq_am_connect(NULL, name, &rd) != SYNCQ_OK) lab_proc_child_failed(team, 1);
  lab_proc_child_ready(team);
  /* spin (with yields) rather than sleep: the writers start at once */
  if (!lab_proc_child_wait_go(team, false)) _exit(3);
  for (uint64_t i = 0; i < count; i++) {
    uint32_t a[2] = {id, (uint32_t)i};
    if (syncq_am_request(rd, H_INT, a, 2, 0) != SYNCQ_OK) _exit(2);
  }
  syncq_am_disconnect(rd);
  _exit(0);
}

static int stress_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const stress_point *pt = arg;
  memset(out, 0, sizeof *out);
  lab_proc_team team;
  char why[LAB_PROC_WHY];
  if (pt->writers < 1 || pt->writers > LC98_STRESS_MAX_WRITERS) {
    lab_fail(ctx, "%d writers: 1 to %d", pt->writers, LC98_STRESS_MAX_WRITERS);
    return -1;
  }
  if (lab_proc_team_init(&team, lab_pinning_enabled(ctx) ? lab_ctx_topo(ctx) : NULL, pt->writers, 0, why, sizeof why) !=
      0) {
    lab_fail(ctx, "%s", why);
    return -1;
  }
  char name[96];
  lab_proc_seg_name(name, sizeof name, LC98_SEG_TAG, "rd");
  syncq_am_config cfg = {.claim = pt->claim};
  syncq_am_endpoint *ep;
  int r = syncq_am_create(name, &cfg, &ep);
  if (r != SYNCQ_OK) {
    lab_proc_team_destroy(&team);
    lab_fail(ctx, "cannot create the reader's endpoint: %s", syncq_strerror(r));
    return -1;
  }
  stress_reader *rd = calloc(1, sizeof *rd);
  int rc = -1;
  if (rd == NULL) {
    lab_fail(ctx, "out of memory");
    goto out;
  }
  syncq_am_register(ep, H_INT, "int", h_int, rd);
  for (int w = 0; w < pt->writers; w++) {
    pid_t pid = lab_proc_team_fork(&team);
    if (pid == 0) writer_child(&team, name, (uint32_t)w, lab_share(pt->total, pt->writers, w));
    if (pid < 0) {
      lab_fail(ctx, "fork failed");
      goto out;
    }
  }
  if (!lab_proc_team_wait_ready(&team, (uint32_t)pt->writers, why, sizeof why)) {
    lab_fail(ctx, "%s", why);
    goto out;
  }
  lab_proc_pin(team.topo, 0);
  uint64_t t0 = syncq_now_ns();
  lab_proc_team_go(&team);
  /* syncq_am_wait, not a loop of polls: with more processes than
   * processors a writer preempted between its claim and its commit may be
   * waiting for the reader's processor */
  int wr = SYNCQ_OK;
  while (rd->got < pt->total && (wr = syncq_am_wait(ep, LC98_POLL_BUDGET, LC98_STALL_NS, NULL)) == SYNCQ_OK) {
  }
  uint64_t t1 = syncq_now_ns();
  lab_proc_unpin(team.topo);
  if (rd->got < pt->total) {
    lab_fail(ctx, "%s, %d writers: %s (%llu of %llu)", syncq_am_claim_name(pt->claim), pt->writers,
             wr == SYNCQ_ETIMEDOUT ? "no progress for 30 s" : syncq_strerror(wr), (unsigned long long)rd->got,
             (unsigned long long)pt->total);
    goto out;
  }
  if (rd->bad != 0) {
    lab_fail(ctx, "%s, %d writers: %llu integers out of order or from nowhere", syncq_am_claim_name(pt->claim),
             pt->writers, (unsigned long long)rd->bad);
    goto out;
  }
  out->value = (double)(t1 - t0) / NS_PER_MS;
  rc = 0;
out:
  lab_proc_team_stop(&team, rc != 0);
  lab_proc_team_destroy(&team);
  free(rd);
  syncq_am_destroy(ep);
  return rc;
}

static int stress_run(lab_ctx *ctx) {
  uint64_t total = lab_by_size(ctx, 2000, 10000, LC98_STRESS_TOTAL, LC98_STRESS_TOTAL);
  static const int writers[] = {1, 3, 7};
  lab_begin(ctx,
            "Many-to-one (000 §4.2): 1, 3 and 7 writer processes (forked; the reader is the 8th) send a "
            "total of %llu integers (each a short request of two words: writer, sequence) to one "
            "reader's endpoint of the claim under test (256 packets per queue); the reader checks every "
            "writer's count and order. Time from the common start to the last integer handled. The "
            "7-writer group also runs 'lock-free-1w', the lock-free claim with one writer, interleaved.",
            (unsigned long long)total);
  if (lab_pus(ctx) < 8)
    lab_note(ctx,
             "%d processing units for up to 8 processes: writers and reader are time-shared, which 000 "
             "(one process per processor) did not do; a stalled writer and the waiting reader yield the "
             "processor after a few microseconds (the reader sleeps once its queues stay empty for %u us, "
             "until a writer's send wakes it), and the time includes the switches between them",
             lab_pus(ctx), (unsigned)(SYNCQ_AM_WAIT_YIELD_NS / 1000u));
  int claims[SYNCQ_AM_CLAIM_COUNT];
  int nc = lc98_claims_selected(ctx, claims);
  static stress_point pts[3][SYNCQ_AM_CLAIM_COUNT + 1];
  for (int wi = 0; wi < 3; wi++) {
    lab_group g;
    memset(&g, 0, sizeof g);
    lab_group_param(&g, "writers", writers[wi]);
    g.metric = "time";
    g.unit = "ms";
    g.sample = stress_sample;
    for (int i = 0; i < nc; i++) {
      pts[wi][i] = (stress_point){claims[i], writers[wi], total};
      g.variants[g.nvariants++] = (lab_variant){syncq_am_claim_name(claims[i]), &pts[wi][i]};
    }
    if (writers[wi] == 7 && lab_selected(ctx, "lock-free-1w")) {
      pts[wi][nc] = (stress_point){SYNCQ_AM_CLAIM_LOCKFREE, 1, total};
      g.variants[g.nvariants++] = (lab_variant){"lock-free-1w", &pts[wi][nc]};
    }
    if (g.nvariants == 0) continue;
    if (lab_run_group(ctx, &g) != 0) return -1;
  }
  return 0;
}

/* clang-format off */
#define STRESS_BELOW(num, den, w, b)                                                                       \
  "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"" num "\",\"den\":\"" den "\",\"at\":{\"writers\":" w \
  "},\"bound\":" b "}"
/* clang-format on */

/* clang-format off */
static const lab_claim stress_claims[] = {
  {"000 Table 2: the lock-free claim's time with 7 writers is no worse than with 1 (gap reduction: "
   "'the performance of the lock-free algorithm improves with more writers'); here lock-free at 7 "
   "writers against 'lock-free-1w' run interleaved in the same group.",
   STRESS_BELOW("lock-free", "lock-free-1w", "7", "1.0")},
  {"000 §4.2: under contention the lock-free claim performs best: with 7 writers it beats every lock.",
   "{\"op\":\"all\",\"rules\":[" STRESS_BELOW("lock-free", "tas", "7", "1.0") "," STRESS_BELOW(
       "lock-free", "ttas", "7", "1.0") "," STRESS_BELOW("lock-free", "ticket", "7", "1.0") "," STRESS_BELOW("lock-free",
                                                                                                    "anderson", "7",
                                                                                                    "1.0") "," STRESS_BELOW("lock-free", "posix-mutex", "7", "1.0") "]}"},
  {"000 Table 2: the POSIX mutex degrades most under contention (14.1 s against 3.0-4.4 s with 7 "
   "writers): slower than the ticket lock by more than 1.5x.",
   "{\"op\":\"ratio_above\",\"metric\":\"time\",\"num\":\"posix-mutex\",\"den\":\"ticket\",\"at\":{\"writers\":7},"
   "\"bound\":1.5}"},
};
/* clang-format on */

const lab_experiment lab_exp_lc98_stress = {
  .name = "lc98-stress",
  .paper = "000 Lumetta & Culler, §4.2",
  .figure = "Table 2",
  .title = "Communication stress: 1, 3, 7 writer processes to one reader, per claim",
  .x = "writers",
  .log_y = false,
  .claims = stress_claims,
  .nclaims = sizeof stress_claims / sizeof stress_claims[0],
  .fixed_algos = lc98_fixed,
  .run = stress_run,
};
