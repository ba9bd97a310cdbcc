/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * crash_matrix_test.c — what survivors of an active-message endpoint see
 * when a process dies at each step of the protocol, for every claim
 * algorithm (in the manner of GASNet's testexit: one cell per way to die).
 *
 * Rows: the six claims. Columns (the step where the victim is SIGKILLed,
 * on its KILL_AT-th bulk message):
 *   before-claim   before calling send: nothing of it is in the segment;
 *   holding-lock   inside the claim: the lock held, nothing claimed yet
 *                  (lock-free: the packet position assigned, not claimed;
 *                  its bulk block already claimed);
 *   bulk-tail      inside a locking claim's section between its two bulk
 *                  steps ("am.claim.bulk_tail"): the lock held, the block
 *                  at the bulk tail claimed, the bulk tail not advanced,
 *                  the packet not claimed. The next holder's repair
 *                  (am_claim_repair, after it takes the dead holder's
 *                  lock) frees the block for the same position, which
 *                  the bulk tail still reads; without that the next claim
 *                  finds a state no claim leaves at the tail and refuses
 *                  (SYNCQ_EINVAL) for good. The lock-free claim has no
 *                  such instant: its assign CAS moves the bulk tail
 *                  before its claim CAS marks the block, so a block it
 *                  claimed is always behind the tail (its instant between
 *                  the two is bulk-inside's); its cell is not run;
 *   bulk-inside    inside the claim with its bulk block taken, its packet
 *                  not yet ("am.claim.bulk_inside"): a locking claim holds
 *                  the lock and the block it claimed (the bulk tail
 *                  advanced past it); the lock-free claim has the block
 *                  position assigned, not claimed. The block comes back
 *                  only through a sender stalled on the bulk ring, once a
 *                  stale interval (the dead owner's claim taken back, the
 *                  abandoned position skipped);
 *   claimed        between claim and commit (packet and block claimed);
 *   bulk-copy      half-way through copying the bulk bytes;
 *   after-commit   right after send returned: the message is complete;
 *   skipped        the ticket and Anderson claims' stale skip
 *                  ("am.claim.skipped" in queue_lock): before the
 *                  victim's KILL_AT-th message, with the survivors paused
 *                  half-way, a planted sender holds the lock (stopped) and
 *                  the next position's waiter dies waiting (its record
 *                  names it); the holder then releases. The victim queues
 *                  behind the dead waiter, skips its position (CAS to
 *                  SKIP) and dies before it hands the next one on. The
 *                  survivors, let go after the death, must find the stale
 *                  SKIP and hand on themselves (before they did not, and
 *                  gave up with SYNCQ_ETIMEDOUT). Nothing of the victim's
 *                  message was claimed: nothing lost or skipped;
 *   skipped-run    the same with two dead waiters: the victim skips the
 *                  first (queue_lock) and dies at its second skip, in the
 *                  pass over dead waiters' records (rl_skip_dead_run).
 *                  Both skip columns are n/a for the other claims: TAS and
 *                  TTAS hold one word, no positions to skip; the POSIX
 *                  mutex is the kernel's; the lock-free claim has no lock
 *                  (the receiver skips its abandoned positions:
 *                  holding-lock). The give-up's skip (rl_leave) needs the
 *                  patience bound, a second per cell: am_test covers it;
 *   random         the parent SIGKILLs the victim at a random moment while
 *                  it streams messages (any instruction of send),
 *                  RANDOM_ROUNDS times (the row prints the sums);
 *   receiver       the receiver process dies inside a handler.
 * Two survivor writers send their messages throughout. For each cell the
 * test checks: the survivors' sends all succeed (one that fails ends the
 * cell at once, naming its status) and every one of their
 * messages arrives once, in order, with intact bytes; of the victim's
 * messages exactly a prefix arrives and at most one (its own, in flight)
 * is lost, and exactly as the cell predicts (lost / skipped counters);
 * nothing waits past CELL_DEADLINE_NS (a hang fails the cell); the
 * endpoint is destroyed and a new one is created under the same name. For
 * the receiver cell: the senders return SYNCQ_EDEAD (none hangs),
 * syncq_am_unlink removes the dead receiver's segment and the name can be
 * created again. The matrix is printed (docs/reliability.md shows it).
 *
 * The storm (test_storm): per claim, a sender stopped holding the claim
 * lock (lock-free: assigned, not claimed) and STORM_SENDERS senders queued
 * behind it (retrying whenever a plain send gives up on the lock; lock-free:
 * each stopped between its two CASes) are all SIGKILLed at once. A
 * surviving sender then sends STORM_MSGS messages: every one must arrive,
 * in order, and the survivor's sends all succeed, within STORM_INTERVALS
 * stale intervals of the kill (the lock-free claim, whose serial recovery
 * needs two per position, STORM_INTERVALS_LOCKFREE): dead positions are found in passes (the
 * waiter records of the queue locks, the receiver's runs of dead claims
 * and abandoned positions), not one stale interval each (which would take
 * STORM_SENDERS of them).
 *
 * The stalled look (test_bulk_tail_stalled_look): per locking claim, a
 * holder dies between its two bulk steps while another sender, stalled on
 * the full bulk ring, is due for its look at the block at the bulk tail
 * before it comes for the lock; that sender's send must succeed and
 * arrive, nothing lost or skipped (the look takes the block back a lap on,
 * and the lock's repair advances the bulk tail past it).
 *
 * Children are forked from this single-threaded process and arm alarm(),
 * so a hang in a child fails instead of blocking the suite.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "syncq_race.h" /* first (it brings syncq/pr.h): the send protocol's race points, where a process dies */

#include "syncq/am.h"
#include "syncq/clock.h"
#include "shm_leftovers.h"  /* shm_test_pid, shm_leftovers: no name of ours left behind */
#include "test_sanitizer.h" /* SANITIZED, TSAN */

#define CHILD_ALARM_S 30                /* a child that hangs this long dies and fails the cell */
#define CELL_DEADLINE_NS 20000000000ull /* 20 s: the whole cell, a hang past it fails */
#define STALE_NS 5000000ull             /* 5 ms: dead claims and locks are taken back quickly */
#define PACKETS 4u                      /* tiny queues: survivors wait on the victim's leftovers */
#define BULK_BLOCKS 2u
#define BULK_BYTES 512u /* bytes per bulk message */
#define SURVIVORS 2
#define PER_SURVIVOR 40u
#define VICTIM_MSGS 8u          /* messages the victim means to send */
#define KILL_AT 3u              /* the victim dies on its 4th message */
#define RANDOM_KILL_MAX_US 3000 /* random cell: kill within this many us of the start */
#define RANDOM_ROUNDS 10        /* random cell: kills per claim */
#define RECEIVER_KILL_AT 5u     /* receiver cell: the receiver dies in its 6th handler */
#define POLL_BUDGET 16u
#define H_MSG 7
#define VICTIM_ID SURVIVORS      /* writers 0..SURVIVORS-1 survive */
#define PLANT_ID (SURVIVORS + 1) /* the skip cells' planted holder */
#define EXIT_EDEAD 42            /* a sender that saw SYNCQ_EDEAD */
#if TSAN
#define STORM_SENDERS 120 /* killed at once (fixed; fewer under TSan: memory per process) */
#else
#define STORM_SENDERS 240
#endif
#define STORM_PACKETS 256u /* the default queue: a lap holds every storm position */
#define STORM_MSGS 20u     /* the survivor's messages */
/* Recovery bound, in stale intervals: serial recovery needs one per dead
 * position (STORM_SENDERS; lock-free two), passes a few; half the dead
 * positions' worth leaves room for a loaded machine (the receiver looks at
 * the clock only every so many empty polls, each a sched_yield). */
#define STORM_INTERVALS (STORM_SENDERS / 2u)
/* The lock-free claim's serial recovery needs two intervals per position
 * (an abandoned assignment, then its claim): half of that is one each. */
#define STORM_INTERVALS_LOCKFREE STORM_SENDERS
/* The storm's stale interval: long enough that a loaded machine's delays
 * (seconds of scheduling under a load average of hundreds) stay small
 * beside the bound, so the bound tells passes from serial recovery (one
 * interval per dead position: 240 x 40 ms = 9.6 s, over the bound's
 * 4.8 s) and not a quiet machine from a busy one. */
#define STORM_STALE_NS 40000000ull
#define STORM_SETTLE_NS 20000000ull /* after the last sender queued: let its record land */

enum step {
  STEP_BEFORE_CLAIM,
  STEP_HOLDING_LOCK,
  STEP_BULK_TAIL,
  STEP_BULK_INSIDE,
  STEP_CLAIMED,
  STEP_BULK_COPY,
  STEP_AFTER_COMMIT,
  STEP_SKIPPED,
  STEP_SKIPPED_RUN,
  STEP_RANDOM,
  STEP_RECEIVER,
  STEP_COUNT
};
static const char *const step_names[STEP_COUNT] = {"before-claim", "holding-lock", "bulk-tail",    "bulk-inside",
                                                   "claimed",      "bulk-copy",    "after-commit", "skipped",
                                                   "skipped-run",  "random",       "receiver"};

static uint32_t checksum(const unsigned char *d, size_t n) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ d[i]) * 16777619u;
  return h;
}

static void fill(unsigned char *d, size_t n, uint32_t writer, uint32_t seq) {
  for (size_t i = 0; i < n; i++) d[i] = (unsigned char)((writer * 131u + seq * 2654435761u + i * 40503u) >> 5);
}

static void name_of(char *out, size_t n, int claim, int step) {
  snprintf(out, n, "syncq-crash-%d-%d-%d", shm_test_pid(), claim, step); /* a child's too: the test's pid */
}

static int reap(pid_t p) {
  int st = 0;
  if (waitpid(p, &st, 0) != p) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Robust futexes (the kernel's list that makes a dead holder's POSIX mutex
 * report EOWNERDEAD): qemu-user does not implement them, so there a holder
 * that dies holding the posix-mutex claim blocks the others for good. */
static bool have_robust_futexes(void) {
  void *head = NULL;
  size_t len = 0;
  return syscall(SYS_get_robust_list, 0, &head, &len) == 0;
}

/* ---------------------------------------------------------------- writers */

SYNCQ_RACE_HOOK_DEFINE;

static const char *victim_kill_point; /* the race point where the victim dies (NULL: none) */
static unsigned victim_seq;
static unsigned victim_die_hit = 1u; /* at its this-many-th pass of the point in message KILL_AT */
static unsigned victim_hits;
static int victim_pause_fd = -1; /* the skip cells: the victim reads a byte here before message KILL_AT */

static void die_at_point(const char *name) {
  if (victim_kill_point != NULL && strcmp(name, victim_kill_point) == 0 && victim_seq == KILL_AT &&
      ++victim_hits == victim_die_hit)
    kill(getpid(), SIGKILL);
}

/* Send `count` bulk messages as writer `id`; the victim dies as told.
 * Exit: 0 all sent, EXIT_EDEAD the endpoint died, 1 no connection, 3 no
 * go, 10 + |status| a send that failed otherwise. */
static void writer(const char *name, uint32_t id, unsigned count, int kill_step, int go_fd) {
  alarm(CHILD_ALARM_S);
  syncq_am_peer *peer;
  int conn = syncq_am_connect(NULL, name, &peer);
  if (conn == SYNCQ_EDEAD) _exit(EXIT_EDEAD); /* the receiver cell's receiver died before this connect */
  if (conn != SYNCQ_OK) _exit(1);
  if (kill_step == STEP_HOLDING_LOCK) victim_kill_point = "am.claim.inside";
  if (kill_step == STEP_BULK_TAIL) victim_kill_point = "am.claim.bulk_tail";
  if (kill_step == STEP_BULK_INSIDE) victim_kill_point = "am.claim.bulk_inside";
  if (kill_step == STEP_CLAIMED) victim_kill_point = "am.send.claimed";
  if (kill_step == STEP_BULK_COPY) victim_kill_point = "am.send.bulk_copy";
  if (kill_step == STEP_SKIPPED || kill_step == STEP_SKIPPED_RUN) victim_kill_point = "am.claim.skipped";
  victim_die_hit = kill_step == STEP_SKIPPED_RUN ? 2u : 1u;
  syncq_race_hook = die_at_point;
  unsigned char buf[BULK_BYTES];
  for (unsigned s = 0; s < count; s++) {
    if (go_fd >= 0 && s == count / 2u) { /* the second half only after the victim's death */
      char c;
      if (read(go_fd, &c, 1) != 1) _exit(3);
    }
    victim_seq = s;
    if (kill_step == STEP_BEFORE_CLAIM && s == KILL_AT) kill(getpid(), SIGKILL);
    if (id == VICTIM_ID && victim_pause_fd >= 0 && s == KILL_AT) { /* the skip cells: the lock is planted */
      char c;
      if (read(victim_pause_fd, &c, 1) != 1) _exit(3);
    }
    fill(buf, sizeof buf, id, s);
    uint32_t args[3] = {id, s, checksum(buf, sizeof buf)};
    int r = syncq_am_request_bulk(peer, H_MSG, buf, sizeof buf, args, 3, 0);
    if (r == SYNCQ_EDEAD) _exit(EXIT_EDEAD);
    if (r != SYNCQ_OK) _exit(r < 0 ? 10 - r : 2);
    if (kill_step == STEP_AFTER_COMMIT && s == KILL_AT) kill(getpid(), SIGKILL);
    if (kill_step == STEP_RANDOM) sched_yield(); /* stretch the stream across the random kill */
  }
  (void)syncq_am_disconnect(peer);
  _exit(0);
}

static pid_t spawn_writer(const char *name, uint32_t id, unsigned count, int kill_step, int go_fd) {
  pid_t p = fork();
  if (p == 0) writer(name, id, count, kill_step, go_fd);
  return p;
}

/* ---------------------------------------------------------------- reader */

typedef struct reader {
  uint32_t next[PLANT_ID + 1];
  unsigned bad;
  unsigned handled;
  int die_at; /* receiver cell: SIGKILL self in this handler call (-1: never) */
} reader;

static void h_msg(syncq_am_token *tk, const uint32_t *args, unsigned nargs, const void *data, size_t len, void *ctx) {
  (void)tk;
  reader *r = ctx;
  if (r->die_at >= 0 && r->handled == (unsigned)r->die_at) kill(getpid(), SIGKILL);
  r->handled++;
  if (nargs != 3 || args[0] > PLANT_ID || len != BULK_BYTES || data == NULL) {
    r->bad++;
    return;
  }
  if (args[1] != r->next[args[0]] || checksum(data, len) != args[2]) r->bad++;
  r->next[args[0]] = args[1] + 1u;
}

/* The endpoint every sender and receiver cell makes. */
static syncq_am_config cell_config(int claim) {
  return (syncq_am_config){.claim = claim,
                           .packets = PACKETS,
                           .bulk_blocks = BULK_BLOCKS,
                           .bulk_size = BULK_BYTES,
                           .stale_claim_ns = STALE_NS};
}

/* Create the endpoint `name` (cfg), its messages read into rd. */
static syncq_am_endpoint *create_read_by(const char *name, const syncq_am_config *cfg, reader *rd) {
  syncq_am_endpoint *ep;
  assert_int_equal(syncq_am_create(name, cfg, &ep), SYNCQ_OK);
  memset(rd, 0, sizeof *rd);
  rd->die_at = -1;
  assert_int_equal(syncq_am_register(ep, H_MSG, "msg", h_msg, rd), SYNCQ_OK);
  return ep;
}

/* ---------------------------------------------------------------- cells */

typedef struct cell_result {
  unsigned victim_delivered;
  uint64_t lost, skipped;
  double ms;
  const char *seen; /* what the survivors saw */
} cell_result;

static void stop_at_inside(const char *name) {
  if (strcmp(name, "am.claim.inside") == 0) raise(SIGSTOP);
}

static void stop_at_queued(const char *name) {
  if (strcmp(name, "am.claim.queued") == 0) raise(SIGSTOP);
}

/* A planted sender: one bulk message as PLANT_ID, stopping where `hook`
 * says. Exit as writer's. */
static pid_t spawn_planted(const char *name, void (*hook)(const char *)) {
  pid_t p = fork();
  if (p != 0) return p;
  alarm(CHILD_ALARM_S);
  syncq_am_peer *peer;
  if (syncq_am_connect(NULL, name, &peer) != SYNCQ_OK) _exit(1);
  syncq_race_hook = hook;
  unsigned char buf[BULK_BYTES];
  fill(buf, sizeof buf, PLANT_ID, 0);
  uint32_t args[3] = {PLANT_ID, 0, checksum(buf, sizeof buf)};
  int r = syncq_am_request_bulk(peer, H_MSG, buf, sizeof buf, args, 3, 0);
  _exit(r == SYNCQ_OK ? 0 : r < 0 ? 10 - r : 2);
}

/* The skip cells, once the victim's first KILL_AT messages and the
 * survivors' first halves have arrived (nobody is in the lock): a planted
 * sender takes the lock and stops; `dead` more die waiting behind it
 * (records written); the holder releases (the first dead position is
 * handed GO, never entered). Then the victim may send message KILL_AT. */
static void plant_dead_waiters(const char *name, unsigned dead, int pause_fd) {
  int st = 0;
  pid_t holder = spawn_planted(name, stop_at_inside);
  assert_int_equal(waitpid(holder, &st, WUNTRACED), holder);
  assert_true(WIFSTOPPED(st));
  for (unsigned k = 0; k < dead; k++) {
    pid_t w = spawn_planted(name, stop_at_queued);
    assert_int_equal(waitpid(w, &st, WUNTRACED), w);
    assert_true(WIFSTOPPED(st));
    assert_int_equal(kill(w, SIGKILL), 0);
    assert_int_equal(reap(w), 128 + SIGKILL);
  }
  assert_int_equal(kill(holder, SIGCONT), 0);
  assert_int_equal(reap(holder), 0); /* its message is in the queue (the receiver drained it before) */
  assert_int_equal(write(pause_fd, "p", 1), 1);
}

static void run_sender_cell(int claim, int step, unsigned round, cell_result *res) {
  char name[96];
  name_of(name, sizeof name, claim, step);
  (void)syncq_am_unlink(name);
  syncq_am_config cfg = cell_config(claim);
  reader rd;
  syncq_am_endpoint *ep = create_read_by(name, &cfg, &rd);
  int go[2]; /* survivors send half their messages, then wait for the victim's death */
  assert_int_equal(pipe(go), 0);
  const bool skip_cell = step == STEP_SKIPPED || step == STEP_SKIPPED_RUN;
  int pause[2] = {-1, -1}; /* the skip cells: the victim waits here before message KILL_AT */
  if (skip_cell) assert_int_equal(pipe(pause), 0);
  uint64_t t0 = syncq_now_ns();
  victim_pause_fd = pause[0];
  pid_t victim = spawn_writer(name, VICTIM_ID, step == STEP_RANDOM ? 1000000u : VICTIM_MSGS, step, -1);
  victim_pause_fd = -1;
  bool planted = !skip_cell;
  pid_t surv[SURVIVORS];
  for (int i = 0; i < SURVIVORS; i++) surv[i] = spawn_writer(name, (uint32_t)i, PER_SURVIVOR, -1, go[0]);
  uint64_t kill_at = 0;
  if (step == STEP_RANDOM) {
    unsigned seed = (unsigned)t0 ^ (unsigned)claim ^ (round * 7919u);
    kill_at = t0 + (uint64_t)(rand_r(&seed) % RANDOM_KILL_MAX_US) * 1000u;
  }
  bool victim_gone = false, hung = false;
  int surv_failed = -1; /* the first survivor whose send failed */
  int victim_code = -1;
  int surv_code[SURVIVORS];
  bool surv_gone[SURVIVORS] = {false};
  const uint64_t deadline = t0 + CELL_DEADLINE_NS;
  for (;;) {
    unsigned handled = 0;
    assert_int_equal(syncq_am_poll(ep, POLL_BUDGET, &handled), SYNCQ_OK);
    if (handled == 0) sched_yield();
    if (kill_at != 0 && syncq_now_ns() >= kill_at) {
      kill(victim, SIGKILL);
      kill_at = 0;
    }
    if (!planted && rd.next[VICTIM_ID] == KILL_AT && rd.next[0] == PER_SURVIVOR / 2u &&
        rd.next[1] == PER_SURVIVOR / 2u) { /* all of them out of the lock, waiting on their pipes */
      plant_dead_waiters(name, step == STEP_SKIPPED_RUN ? 2u : 1u, pause[1]);
      planted = true;
    }
    if (!victim_gone) {
      int st;
      if (waitpid(victim, &st, WNOHANG) == victim) {
        victim_gone = true;
        victim_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        /* now every later survivor message passes whatever the victim left */
        for (int i = 0; i < SURVIVORS; i++) assert_int_equal(write(go[1], "g", 1), 1);
      }
    }
    bool all = victim_gone;
    for (int i = 0; i < SURVIVORS; i++) {
      int st;
      if (!surv_gone[i] && waitpid(surv[i], &st, WNOHANG) == surv[i]) {
        surv_gone[i] = true;
        surv_code[i] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (surv_code[i] != 0 && surv_failed < 0) surv_failed = i; /* its messages will never all come */
      }
      all = all && rd.next[i] == PER_SURVIVOR;
    }
    if (all || surv_failed >= 0) break;
    if (syncq_now_ns() > deadline) {
      hung = true;
      break;
    }
  }
  /* drain what the victim may still have committed */
  for (int i = 0; i < 8; i++) (void)syncq_am_poll(ep, POLL_BUDGET, NULL);
  if (hung || surv_failed >= 0) {
    syncq_am_counters hc;
    (void)syncq_am_counters_of(ep, &hc);
    printf("  %s: victim delivered %u, survivors %u %u, lost %llu skipped %llu\n",
           hung ? "hung" : "a survivor's send failed", rd.next[VICTIM_ID], rd.next[0], rd.next[1],
           (unsigned long long)hc.lost, (unsigned long long)hc.skipped);
    /* the others may wait on a queue nobody drains now */
    if (!victim_gone) kill(victim, SIGKILL);
    for (int i = 0; i < SURVIVORS; i++)
      if (!surv_gone[i]) kill(surv[i], SIGKILL);
  }
  if (!victim_gone) victim_code = reap(victim);
  for (int i = 0; i < SURVIVORS; i++)
    if (!surv_gone[i]) surv_code[i] = reap(surv[i]);
  close(go[0]);
  close(go[1]);
  if (skip_cell) {
    close(pause[0]);
    close(pause[1]);
  }
  res->ms = (double)(syncq_now_ns() - t0) / 1e6;
  /* the hang first: its survivors were killed above */
  if (hung) fail_msg("claim %s, step %s: hung past the cell deadline", syncq_am_claim_name(claim), step_names[step]);
  /* every survivor's send succeeded (the first that failed is named: the
   * others were killed above) */
  if (surv_failed >= 0)
    fail_msg("claim %s, step %s: survivor %d exited %d (10 + |status|: a send failed; 1: no connect)",
             syncq_am_claim_name(claim), step_names[step], surv_failed, surv_code[surv_failed]);
  for (int i = 0; i < SURVIVORS; i++) assert_int_equal(surv_code[i], 0);
  assert_int_equal(victim_code, 128 + SIGKILL);
  assert_int_equal(rd.bad, 0); /* order and bytes intact */
  syncq_am_counters cnt;
  assert_int_equal(syncq_am_counters_of(ep, &cnt), SYNCQ_OK);
  res->victim_delivered = rd.next[VICTIM_ID];
  res->lost = cnt.lost;
  res->skipped = cnt.skipped;
  res->seen = "all sends OK, all their messages in order";
  /* exactly what the cell predicts */
  const bool lockfree = claim == SYNCQ_AM_CLAIM_LOCKFREE;
  switch (step) {
  case STEP_BEFORE_CLAIM:
    assert_int_equal(rd.next[VICTIM_ID], KILL_AT);
    assert_int_equal(cnt.lost + cnt.skipped, 0);
    break;
  case STEP_HOLDING_LOCK:
    assert_int_equal(rd.next[VICTIM_ID], KILL_AT);
    assert_int_equal(cnt.lost, 0);
    assert_int_equal(cnt.skipped, lockfree ? 1 : 0); /* lock-free: the assigned position is skipped */
    break;
  case STEP_BULK_TAIL:
    /* the packet was never claimed and the repair gives the block back
     * at the same position: nothing lost or skipped (without the repair
     * the next survivor's bulk send returns SYNCQ_EINVAL) */
    assert_false(lockfree); /* not run: no such instant */
    assert_int_equal(rd.next[VICTIM_ID], KILL_AT);
    assert_int_equal(cnt.lost + cnt.skipped, 0);
    break;
  case STEP_BULK_INSIDE:
    /* no packet of its own was claimed or assigned: nothing for the
     * receiver to take back or skip; the block came back through the
     * survivors' stalled looks (else the cell hangs) */
    assert_int_equal(rd.next[VICTIM_ID], KILL_AT);
    assert_int_equal(cnt.lost + cnt.skipped, 0);
    break;
  case STEP_CLAIMED:
  case STEP_BULK_COPY:
    assert_int_equal(rd.next[VICTIM_ID], KILL_AT);
    assert_int_equal(cnt.lost, 1); /* its own claimed message, taken back */
    assert_int_equal(cnt.skipped, 0);
    break;
  case STEP_AFTER_COMMIT:
    assert_int_equal(rd.next[VICTIM_ID], KILL_AT + 1u); /* committed: delivered */
    assert_int_equal(cnt.lost + cnt.skipped, 0);
    break;
  case STEP_SKIPPED:
  case STEP_SKIPPED_RUN:
    /* it died in the lock, before any claim; the planted holder's message arrived */
    assert_int_equal(rd.next[VICTIM_ID], KILL_AT);
    assert_int_equal(rd.next[PLANT_ID], 1);
    assert_int_equal(cnt.lost + cnt.skipped, 0);
    break;
  default: /* random: a prefix arrived, at most the one in flight lost */
    assert_true(cnt.lost + cnt.skipped <= 1u);
    break;
  }
  assert_int_equal(syncq_am_destroy(ep), SYNCQ_OK);
  /* the name is free again: a new endpoint is created under it */
  assert_int_equal(syncq_am_create(name, &cfg, &ep), SYNCQ_OK);
  assert_int_equal(syncq_am_destroy(ep), SYNCQ_OK);
}

static void run_receiver_cell(int claim, cell_result *res) {
  char name[96];
  name_of(name, sizeof name, claim, STEP_RECEIVER);
  (void)syncq_am_unlink(name);
  syncq_am_config cfg = cell_config(claim);
  int ready[2];
  assert_int_equal(pipe(ready), 0);
  uint64_t t0 = syncq_now_ns();
  pid_t recv = fork();
  if (recv == 0) {
    alarm(CHILD_ALARM_S);
    syncq_am_endpoint *ep;
    if (syncq_am_create(name, &cfg, &ep) != SYNCQ_OK) _exit(1);
    reader rd;
    memset(&rd, 0, sizeof rd);
    rd.die_at = RECEIVER_KILL_AT;
    if (syncq_am_register(ep, H_MSG, "msg", h_msg, &rd) != SYNCQ_OK) _exit(1);
    char c = 1;
    if (write(ready[1], &c, 1) != 1) _exit(1);
    for (;;) {
      unsigned handled = 0;
      (void)syncq_am_poll(ep, POLL_BUDGET, &handled);
      if (handled == 0) sched_yield();
    }
  }
  char c;
  assert_int_equal(read(ready[0], &c, 1), 1);
  close(ready[0]);
  close(ready[1]);
  pid_t snd[SURVIVORS];
  for (int i = 0; i < SURVIVORS; i++) snd[i] = spawn_writer(name, (uint32_t)i, PER_SURVIVOR, -1, -1);
  assert_int_equal(reap(recv), 128 + SIGKILL);
  /* with the receiver gone the queue fills; each sender must give up
   * with SYNCQ_EDEAD (its alarm would fail it on a hang) */
  for (int i = 0; i < SURVIVORS; i++) assert_int_equal(reap(snd[i]), EXIT_EDEAD);
  /* the dead receiver's segment is removed and the name made again */
  assert_int_equal(syncq_am_unlink(name), SYNCQ_OK);
  syncq_am_endpoint *ep;
  assert_int_equal(syncq_am_create(name, &cfg, &ep), SYNCQ_OK);
  assert_int_equal(syncq_am_destroy(ep), SYNCQ_OK);
  res->ms = (double)(syncq_now_ns() - t0) / 1e6;
  res->victim_delivered = 0;
  res->lost = res->skipped = 0;
  res->seen = "senders get SYNCQ_EDEAD; unlink + re-create OK";
}

static void test_crash_matrix(void **state) {
  (void)state;
  printf("crash matrix: claim x step -> victim's messages delivered (of %u before the kill), lost, skipped, ms\n",
         KILL_AT);
  const bool robust = have_robust_futexes();
  for (int claim = 0; claim < SYNCQ_AM_CLAIM_COUNT; claim++) {
    for (int step = 0; step < STEP_COUNT; step++) {
      cell_result res;
      memset(&res, 0, sizeof res);
      if (claim == SYNCQ_AM_CLAIM_POSIX && !robust &&
          (step == STEP_HOLDING_LOCK || step == STEP_BULK_TAIL || step == STEP_BULK_INSIDE ||
           step == STEP_RANDOM)) { /* dies holding it */
        printf("  %-12s %-13s SKIPPED: no robust futexes here (get_robust_list: ENOSYS, e.g. qemu-user)\n",
               syncq_am_claim_name(claim), step_names[step]);
        fflush(stdout); /* as below */
        continue;
      }
      if ((step == STEP_SKIPPED || step == STEP_SKIPPED_RUN) && claim != SYNCQ_AM_CLAIM_TICKET &&
          claim != SYNCQ_AM_CLAIM_ANDERSON) { /* file comment */
        printf("  %-12s %-13s n/a: %s\n", syncq_am_claim_name(claim), step_names[step],
               claim == SYNCQ_AM_CLAIM_LOCKFREE ? "no lock (its abandoned positions: holding-lock)"
               : claim == SYNCQ_AM_CLAIM_POSIX  ? "the kernel's mutex: no positions to skip"
                                                : "one lock word: no positions to skip");
        fflush(stdout); /* as below */
        continue;
      }
      if (claim == SYNCQ_AM_CLAIM_LOCKFREE && step == STEP_BULK_TAIL) { /* file comment */
        printf("  %-12s %-13s n/a: the bulk tail moves before the block is claimed\n", syncq_am_claim_name(claim),
               step_names[step]);
        fflush(stdout); /* before the next cell's fork: a child must not inherit the line */
        continue;
      }
      if (step == STEP_RECEIVER) run_receiver_cell(claim, &res);
      else if (step != STEP_RANDOM) run_sender_cell(claim, step, 0, &res);
      else
        for (unsigned round = 0; round < RANDOM_ROUNDS; round++) { /* sum of the rounds */
          cell_result one;
          run_sender_cell(claim, step, round, &one);
          res.victim_delivered += one.victim_delivered;
          res.lost += one.lost;
          res.skipped += one.skipped;
          res.ms += one.ms;
          res.seen = one.seen;
        }
      printf("  %-12s %-13s delivered %-3u lost %llu skipped %llu %7.1f ms  %s\n", syncq_am_claim_name(claim),
             step_names[step], res.victim_delivered, (unsigned long long)res.lost, (unsigned long long)res.skipped,
             res.ms, res.seen);
      fflush(stdout);
    }
  }
}

/* ---------------------------------------------------------------- storm */

static void stop_at_lock(const char *name) {
  if (strcmp(name, "am.claim.inside") == 0) raise(SIGSTOP);
}

/* A storm sender: stop holding the lock (the first one) or after its
 * position is assigned (lock-free), or queue on the lock for ever (the
 * others of the locking claims: a plain send that gives up on the stopped
 * holder is made again), saying "queued" on ready_fd first. */
static void storm_sender(const char *name, bool stop_in_claim, int ready_fd, int go_fd) {
  alarm(CHILD_ALARM_S);
  syncq_am_peer *peer;
  if (syncq_am_connect(NULL, name, &peer) != SYNCQ_OK) _exit(1);
  if (stop_in_claim) syncq_race_hook = stop_at_lock;
  char c = 1;
  if (ready_fd >= 0 && write(ready_fd, &c, 1) != 1) _exit(1);
  if (go_fd >= 0 && read(go_fd, &c, 1) != 1) _exit(1); /* all queue together, after every fork */
  uint32_t args[3] = {SURVIVORS, 0, 0};
  for (;;) {
    int r = syncq_am_request(peer, H_MSG, args, 3, 0);
    if (r != SYNCQ_OK && r != SYNCQ_ETIMEDOUT) _exit(2);
  }
}

static uint32_t storm_seen;
static unsigned storm_bad;
static void h_storm(syncq_am_token *tk, const uint32_t *args, unsigned nargs, const void *data, size_t len, void *ctx) {
  (void)tk, (void)data, (void)len, (void)ctx;
  if (nargs != 3 || args[0] != 0 || args[1] != storm_seen) storm_bad++; /* only the survivor's, in order */
  else storm_seen++;
}

static void test_storm(void **state) {
  (void)state;
  printf("storm: %d senders killed at once (one stopped holding the claim lock); the survivor's %u messages\n",
         STORM_SENDERS, STORM_MSGS);
  const bool robust = have_robust_futexes();
  for (int claim = 0; claim < SYNCQ_AM_CLAIM_COUNT; claim++) {
    if (claim == SYNCQ_AM_CLAIM_POSIX && !robust) {
      printf("  %-12s SKIPPED: no robust futexes here\n", syncq_am_claim_name(claim));
      continue;
    }
    const bool lockfree = claim == SYNCQ_AM_CLAIM_LOCKFREE;
    const unsigned intervals = lockfree ? STORM_INTERVALS_LOCKFREE : STORM_INTERVALS;
    char name[96];
    name_of(name, sizeof name, claim, 99);
    (void)syncq_am_unlink(name);
    syncq_am_config cfg = {.claim = claim, .packets = STORM_PACKETS, .stale_claim_ns = STORM_STALE_NS};
    syncq_am_endpoint *ep;
    assert_int_equal(syncq_am_create(name, &cfg, &ep), SYNCQ_OK);
    storm_seen = 0;
    storm_bad = 0;
    assert_int_equal(syncq_am_register(ep, H_MSG, "msg", h_storm, NULL), SYNCQ_OK);
    fflush(stdout);
    pid_t holder = fork();
    if (holder == 0) storm_sender(name, true, -1, -1);
    int st = 0;
    assert_int_equal(waitpid(holder, &st, WUNTRACED), holder);
    assert_true(WIFSTOPPED(st));
    int ready[2], go[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(go), 0);
    pid_t kids[STORM_SENDERS];
    for (int i = 0; i < STORM_SENDERS; i++) {
      kids[i] = fork();
      assert_true(kids[i] >= 0);
      if (kids[i] == 0) storm_sender(name, lockfree, ready[1], go[0]);
    }
    for (int i = 0; i < STORM_SENDERS; i++) { /* all connected */
      char c;
      assert_int_equal(read(ready[0], &c, 1), 1);
    }
    for (int i = 0; i < STORM_SENDERS; i++) assert_int_equal(write(go[1], "g", 1), 1);
    if (lockfree) { /* each stops between its two CASes */
      for (int i = 0; i < STORM_SENDERS; i++) {
        assert_int_equal(waitpid(kids[i], &st, WUNTRACED), kids[i]);
        assert_true(WIFSTOPPED(st));
      }
    } else { /* each queues and keeps a position in the lock */
      uint64_t settle = syncq_now_ns() + STORM_SETTLE_NS;
      while (syncq_now_ns() < settle) sched_yield();
    }
    close(ready[0]);
    close(ready[1]);
    close(go[0]);
    close(go[1]);
    for (int i = 0; i < STORM_SENDERS; i++) assert_int_equal(kill(kids[i], SIGKILL), 0);
    assert_int_equal(kill(holder, SIGKILL), 0);
    for (int i = 0; i < STORM_SENDERS; i++) assert_int_equal(reap(kids[i]), 128 + SIGKILL);
    assert_int_equal(reap(holder), 128 + SIGKILL);
    /* the survivor */
    uint64_t t0 = syncq_now_ns();
    pid_t surv = fork();
    if (surv == 0) {
      alarm(CHILD_ALARM_S);
      syncq_am_peer *peer;
      if (syncq_am_connect(NULL, name, &peer) != SYNCQ_OK) _exit(1);
      for (uint32_t s = 0; s < STORM_MSGS; s++) {
        uint32_t args[3] = {0, s, 0};
        int r = syncq_am_request(peer, H_MSG, args, 3, 0);
        if (r != SYNCQ_OK) _exit(r < 0 ? 10 - r : 2); /* 10 + |status| */
      }
      _exit(0);
    }
    const uint64_t deadline = t0 + CELL_DEADLINE_NS;
    while (storm_seen < STORM_MSGS && syncq_now_ns() < deadline) {
      unsigned handled = 0;
      assert_int_equal(syncq_am_poll(ep, POLL_BUDGET, &handled), SYNCQ_OK);
      if (handled == 0) sched_yield();
    }
    double ms = (double)(syncq_now_ns() - t0) / 1e6;
    int code = reap(surv);
    syncq_am_counters cnt;
    assert_int_equal(syncq_am_counters_of(ep, &cnt), SYNCQ_OK);
    printf("  %-12s survivor's messages %u/%u in %7.1f ms (bound %u intervals: %.0f ms), lost %llu skipped %llu\n",
           syncq_am_claim_name(claim), storm_seen, STORM_MSGS, ms, intervals,
           (double)(intervals * STORM_STALE_NS) / 1e6, (unsigned long long)cnt.lost, (unsigned long long)cnt.skipped);
    fflush(stdout);
    assert_int_equal(code, 0); /* every survivor send returned SYNCQ_OK */
    assert_int_equal(storm_seen, STORM_MSGS);
    assert_int_equal(storm_bad, 0);
    /* the storm's positions were all abandoned before any was claimed */
    if (lockfree) assert_int_equal(cnt.skipped, STORM_SENDERS + 1);
    assert_true(ms < (double)(intervals * STORM_STALE_NS) / 1e6);
    assert_int_equal(syncq_am_destroy(ep), SYNCQ_OK);
  }
}

/* ---------------------------------------------------------------- a stalled look at the bulk tail */

static unsigned stalled_calls;
static void stop_when_stalled(const char *name) { /* the second stall: its look's clock is running */
  if (strcmp(name, "am.send.stalled") == 0 && ++stalled_calls == 2u) raise(SIGSTOP);
}

static void die_at_bulk_tail(const char *name) {
  if (strcmp(name, "am.claim.bulk_tail") == 0) kill(getpid(), SIGKILL);
}

/* A child that sends `count` bulk messages as writer `id` (exit as
 * writer's): `hook` set; with its own endpoint (own_name not NULL), so a
 * stalled send polls it and passes "am.send.stalled". */
static void bulk_sender(const char *name, const char *own_name, uint32_t id, unsigned count,
                        void (*hook)(const char *)) {
  alarm(CHILD_ALARM_S);
  syncq_am_endpoint *self = NULL;
  if (own_name != NULL) {
    syncq_am_config own = {.claim = SYNCQ_AM_CLAIM_TAS, .stale_claim_ns = STALE_NS};
    if (syncq_am_create(own_name, &own, &self) != SYNCQ_OK) _exit(1);
  }
  syncq_am_peer *peer;
  if (syncq_am_connect(self, name, &peer) != SYNCQ_OK) _exit(1);
  syncq_race_hook = hook;
  unsigned char buf[BULK_BYTES];
  for (unsigned s = 0; s < count; s++) {
    fill(buf, sizeof buf, id, s);
    uint32_t args[3] = {id, s, checksum(buf, sizeof buf)};
    int r = syncq_am_request_bulk(peer, H_MSG, buf, sizeof buf, args, 3, 0);
    if (r != SYNCQ_OK) _exit(r < 0 ? 10 - r : 2);
  }
  _exit(0);
}

/* A locking claim's holder dies between its two bulk steps (the block at
 * the bulk tail CLAIMED, the bulk tail not advanced) while a sender has
 * been stalled on the full bulk ring long enough that its next step is
 * its look at the block at the bulk tail (am_claim_locked_bulk_stalled),
 * before it comes for the lock. The look finds the block claimed by a dead
 * process and takes it back (FREE a lap on); the lock's repair then finds
 * that block at the bulk tail and must advance the bulk tail past it: the
 * stalled send succeeds and arrives, nothing is lost or skipped. Steps:
 * a filler fills the bulk ring; the stalled sender (with an endpoint of
 * its own, so it passes "am.send.stalled") stops itself at its second
 * stall; the receiver takes one message (the block at the bulk tail is
 * FREE); the victim claims that block and dies at "am.claim.bulk_tail";
 * after more than a stale interval the stalled sender goes on. */
static void test_bulk_tail_stalled_look(void **state) {
  (void)state;
  const bool robust = have_robust_futexes();
  for (int claim = 0; claim < SYNCQ_AM_CLAIM_COUNT; claim++) {
    if (claim == SYNCQ_AM_CLAIM_LOCKFREE) continue; /* no such instant (file comment, bulk-tail) */
    if (claim == SYNCQ_AM_CLAIM_POSIX && !robust) {
      printf("  %-12s SKIPPED: no robust futexes here\n", syncq_am_claim_name(claim));
      fflush(stdout);
      continue;
    }
    char name[96], own[112];
    name_of(name, sizeof name, claim, 98);
    snprintf(own, sizeof own, "%s-own", name);
    (void)syncq_am_unlink(name);
    (void)syncq_am_unlink(own);
    syncq_am_config cfg = cell_config(claim);
    reader rd;
    syncq_am_endpoint *ep = create_read_by(name, &cfg, &rd);
    fflush(stdout);
    pid_t filler = fork();
    if (filler == 0) bulk_sender(name, NULL, 0, BULK_BLOCKS, NULL);
    assert_int_equal(reap(filler), 0); /* every block READY */
    pid_t stalled = fork();
    if (stalled == 0) bulk_sender(name, own, 1, 1, stop_when_stalled);
    int st = 0;
    assert_int_equal(waitpid(stalled, &st, WUNTRACED), stalled);
    assert_true(WIFSTOPPED(st));
    unsigned handled = 0;
    assert_int_equal(syncq_am_poll(ep, 1, &handled), SYNCQ_OK);
    assert_int_equal(handled, 1); /* the block at the bulk tail is FREE */
    pid_t victim = fork();
    if (victim == 0) bulk_sender(name, NULL, VICTIM_ID, 1, die_at_bulk_tail);
    assert_int_equal(reap(victim), 128 + SIGKILL);
    struct timespec pause = {0, (long)(4u * STALE_NS)}; /* the stalled sender's look is due when it goes on */
    nanosleep(&pause, NULL);
    assert_int_equal(kill(stalled, SIGCONT), 0);
    int code = -1;
    const uint64_t deadline = syncq_now_ns() + CELL_DEADLINE_NS;
    while (syncq_now_ns() < deadline) {
      (void)syncq_am_poll(ep, POLL_BUDGET, &handled);
      if (code < 0 && waitpid(stalled, &st, WNOHANG) == stalled) code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
      if (code >= 0 && rd.next[1] == 1u) break;
      if (code > 0) break;
      if (handled == 0) sched_yield();
    }
    if (code < 0) {
      kill(stalled, SIGKILL);
      (void)reap(stalled);
    }
    syncq_am_counters cnt;
    assert_int_equal(syncq_am_counters_of(ep, &cnt), SYNCQ_OK);
    printf("  %-12s stalled sender exit %d (0 sent, 10 + |status| refused), its message %s, lost %llu skipped %llu\n",
           syncq_am_claim_name(claim), code, rd.next[1] == 1u ? "arrived" : "missing", (unsigned long long)cnt.lost,
           (unsigned long long)cnt.skipped);
    fflush(stdout);
    assert_int_equal(code, 0); /* its send succeeded (-1: hung) */
    assert_int_equal(rd.next[0], BULK_BLOCKS);
    assert_int_equal(rd.next[1], 1);
    assert_int_equal(rd.next[VICTIM_ID], 0);
    assert_int_equal(rd.bad, 0);
    assert_int_equal(cnt.lost + cnt.skipped, 0);
    assert_int_equal(syncq_am_destroy(ep), SYNCQ_OK);
    (void)syncq_am_unlink(own); /* the stalled sender's, left by its exit */
  }
}

int main(int argc, char **argv) {
  (void)shm_test_pid(); /* before any fork: every name made carries this pid */
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_crash_matrix),
    cmocka_unit_test(test_storm),
    cmocka_unit_test(test_bulk_tail_stalled_look),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  /* whatever died or failed: none of this run's names stays; one left by
   * tests that all passed is a leak, and fails the run */
  int left = shm_leftovers("syncq-crash-");
  return failed != 0 ? failed : left != 0;
}
