/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_skynet.c — po-skynet: the skynet benchmark, the classic measure of
 * an actor runtime's spawn, message and exit on a large tree, on the
 * postoffice and on real Erlang and Go run by the lab in the same run.
 *
 * skynet(num, size): a leaf (size 1) sends num to its parent and exits;
 * an internal process spawns 10 children on num + i*size/10 (size/10
 * each), receives their 10 replies, sums them and sends the sum to its
 * parent. The root covers L leaves (a power of 10): (10L - 1)/9
 * processes in all (1,111,111 for a million leaves), and the root's sum
 * must be L(L-1)/2 (499,999,500,000). Metric: time, ms from the root's
 * spawn to the sum's arrival (the tree's spawns, messages and exits).
 *
 * syncq: main's work runs as a process by syncq_po_run (a fiber in a
 * fiber system), spawns the root and waits for its sum. A parent joins
 * each child as its reply arrives (the postoffice frees a slot at join;
 * Erlang's and Go's processes need none), so slots are recycled while
 * the tree runs. A fiber's child runs next on its scheduler and the ones
 * it displaces queue FIFO, so much of the tree is live at once (a third
 * to a half of 111,111 processes at 100,000 leaves), and for a million
 * leaves it can be more than the largest process table
 * (SYNCQ_PO_MAX_PROCS, 1,048,576): a spawn refused because the table is full waits
 * (for one of its own children's replies, whose join frees a slot, or,
 * with none outstanding, yields) and tries again. A note counts those
 * waits. Leaves never spawn, so the tree always finishes.
 *
 * The watch (lab_po_watch, lab/po_faults.h): a thread attached to the
 * system reads, every LAB_PO_WATCH_NS, the system's counts of processes
 * started and live (the library's own, so the tree's processes do no
 * work for it, and main still waits in recv_blocking). A lost reply
 * leaves its parent and every ancestor waiting while the rest of the
 * tree finishes: once neither count has moved for LAB_QUEUE_LOST_MS, the
 * watcher sends the root and main an abandon message; each waiting
 * process passes it to its children that have not replied, joins them
 * and returns (one whose child has exited without a reply names the lost
 * reply), so the sample fails with what stopped and its processes are
 * gone. A parent knows its children's pids: a reply
 * from one that replied already is a duplicate, and so is anything left
 * in its inbox once its last child is joined (that child's sends are
 * done by its exit); main looks at its inbox likewise after joining the
 * root.
 *
 * Variants: "fiber:<mailbox>" (mpsc, nonblocking, mutex), "thread:mpsc"
 * (a kernel thread per process, only up to 10,000 leaves: 11,111
 * threads; past that a note says why it is skipped), and the peers
 * "erlang" (lab/peers/skynet/skynet.erl: escript, spawn and receive) and
 * "go" (lab/peers/skynet/skynet.go: goroutines and channels).
 * Sizes: 1,000 leaves (smoke), 100,000 (--quick, the suite's time
 * budget), and 10,000, 100,000 and the classic 1,000,000 (default,
 * --full).
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lab.h"
#include "../po_faults.h"
#include "po_peer.h"
#include "syncq/clock.h"
#include "syncq/po.h"

#ifndef SYNCQ_SKYNET_ERL
#define SYNCQ_SKYNET_ERL ""
#endif
#ifndef SYNCQ_SKYNET_GO
#define SYNCQ_SKYNET_GO ""
#endif

enum { SKYNET_FANOUT = 10, SKYNET_REPLY = 1, SKYNET_ABANDON = 2 };
enum { SKYNET_DUP = 1, SKYNET_ABANDONED = 2 }; /* collect's answers besides the library's statuses (< 0) */
#define SKYNET_THREAD_MAX_LEAVES 10000         /* 11,111 kernel threads at once */
#define SKYNET_MAX_LEVEL 7                     /* 10^7 leaves: num fits the arg's 24 bits */
#define NS_PER_MS 1e6

_Static_assert(sizeof(uintptr_t) >= 8, "skynet packs num, level and parent into a pointer-sized argument");

static const po_peers skynet_peers = {SYNCQ_SKYNET_ERL, SYNCQ_SKYNET_GO, "lab/peers/skynet/skynet.go"};

typedef struct skynet_point {
  po_line line;
  int level; /* leaves = 10^level */
} skynet_point;

/* One tree at a time: the sample's system and its tallies. */
static syncq_po_system *skynet_sys;
static _Atomic(int) skynet_errors;
static _Atomic(uint64_t) skynet_waits; /* spawns that found the table full */
/* The watch's verdicts: the first lost reply (or duplicate) found writes
 * its text; seq_cst: set once per sample, read after syncq_po_run. */
static _Atomic(int) skynet_lost, skynet_dup;
static char skynet_lost_why[160], skynet_dup_why[160];

static int64_t pow10i(int level) {
  int64_t p = 1;
  while (level-- > 0) p *= SKYNET_FANOUT;
  return p;
}

/* A process's argument: num (24 bits), level (4 bits), parent pid (32 bits). */
static void *pack(int64_t num, int level, syncq_po_pid parent) {
  return (void *)(((uintptr_t)(uint32_t)parent << 32) | ((uintptr_t)level << 24) | (uintptr_t)num);
}

static int reply(syncq_po_proc *self, syncq_po_pid to, int64_t v) {
  syncq_po_msg *m;
  int r = syncq_po_get(self, sizeof v, &m);
  if (r != SYNCQ_OK) return r;
  m->type = SKYNET_REPLY;
  memcpy(m->data, &v, sizeof v);
  if ((r = lab_po_send(self, to, m, SYNCQ_PO_LINK)) != SYNCQ_OK) syncq_po_free(self, m);
  return r;
}

/* The first verdict of its kind keeps its text. */
static void skynet_verdict(_Atomic(int) *flag, char *why, size_t len, const char *fmt, int level, int64_t num) {
  int no = 0;
  if (atomic_compare_exchange_strong(flag, &no, 1)) snprintf(why, len, fmt, level, (long long)num);
}

/* A message that no reply of a child explains (a second copy). */
static void skynet_duplicate(int level, int64_t num) {
  skynet_verdict(&skynet_dup, skynet_dup_why, sizeof skynet_dup_why,
                 "a second reply to the process of level %d on num %lld (a duplicate)", level, num);
}

/* The watch's abandon: pass it to every child that has not replied and join
 * them (each has exited or returns at the abandon), so the tree is gone
 * once main has joined the root. A child that has exited without a reply
 * lost it. */
static void skynet_abandon(syncq_po_proc *self, const syncq_po_pid *kids, int spawned, unsigned replied, int level,
                           int64_t num) {
  for (int i = 0; i < spawned; i++) {
    if (replied >> i & 1u) continue;
    syncq_po_msg *m;
    if (syncq_po_get(self, 0, &m) != SYNCQ_OK) continue;
    m->type = SKYNET_ABANDON;
    m->len = 0;
    int r = syncq_po_send(self, kids[i], m, SYNCQ_PO_LINK);
    if (r != SYNCQ_OK) syncq_po_free(self, m);
    if (r == SYNCQ_EDEAD)
      skynet_verdict(&skynet_lost, skynet_lost_why, sizeof skynet_lost_why,
                     "the reply of a child that had exited to the process of level %d on num %lld", level, num);
    (void)syncq_po_join(skynet_sys, kids[i]);
  }
}

/* Receive one child's reply into *sum and join that child (its bit set
 * in *replied): SYNCQ_OK, SKYNET_DUP (a reply from a child that replied
 * already: nothing added), SKYNET_ABANDONED (main's abandon), or a
 * failed call's status. */
static int collect(syncq_po_proc *self, const syncq_po_pid *kids, int spawned, unsigned *replied, int64_t *sum) {
  syncq_po_msg *m;
  int r = syncq_po_recv_blocking(self, &m);
  if (r != SYNCQ_OK) return r;
  int64_t v;
  memcpy(&v, m->data, sizeof v);
  syncq_po_pid child = m->sender;
  uint32_t type = m->type;
  bool ok = m->len == sizeof v;
  syncq_po_free(self, m);
  if (type == SKYNET_ABANDON) return SKYNET_ABANDONED;
  if (type != SKYNET_REPLY || !ok) return SYNCQ_EINVAL;
  int i = 0;
  while (i < spawned && kids[i] != child) i++;
  if (i == spawned || (*replied >> i & 1u)) return SKYNET_DUP;
  *replied |= 1u << i;
  *sum += v;
  return syncq_po_join(skynet_sys, child);
}

/* The last refused spawn found every slot live (not a system limit). */
static bool table_full(void) {
  const char *why = syncq_po_limit_reason(skynet_sys);
  return why != NULL && strcmp(why, "max_procs") == 0;
}

static void skynet_proc(syncq_po_proc *self, void *arg) {
  uintptr_t a = (uintptr_t)arg;
  int64_t num = (int64_t)(a & 0xFFFFFFu);
  int level = (int)(a >> 24 & 0xFu);
  syncq_po_pid parent = (syncq_po_pid)(uint32_t)(a >> 32);
  int64_t sum = num;
  if (level > 0) {
    sum = 0;
    int64_t sub = pow10i(level - 1);
    syncq_po_pid me = syncq_po_pid_of(self);
    syncq_po_pid kids[SKYNET_FANOUT];
    unsigned replied = 0; /* bit i: kids[i] replied and was joined */
    int spawned = 0, collected = 0, c = SYNCQ_OK;
    for (int i = 0; i < SKYNET_FANOUT && c != SKYNET_ABANDONED; i++) {
      int r;
      while ((r = syncq_po_spawn(skynet_sys, skynet_proc, pack(num + i * sub, level - 1, me), &kids[i])) ==
               SYNCQ_ELIMIT &&
             table_full()) {
        atomic_fetch_add_explicit(&skynet_waits, 1, memory_order_relaxed); /* a tally, read after the run */
        if (collected < spawned) {
          if ((c = collect(self, kids, spawned, &replied, &sum)) == SKYNET_ABANDONED) break;
          if (c == SKYNET_DUP) skynet_duplicate(level, num);
          else if (c != SYNCQ_OK) atomic_fetch_add(&skynet_errors, 1);
          if (c != SKYNET_DUP) collected++;
        } else if (syncq_po_yield(self) != SYNCQ_OK) {
          atomic_fetch_add(&skynet_errors, 1);
        }
      }
      if (c == SKYNET_ABANDONED) break;
      if (r != SYNCQ_OK) {
        atomic_fetch_add(&skynet_errors, 1); /* the sum comes out short: the check fails */
        break;
      }
      spawned++;
    }
    while (collected < spawned && c != SKYNET_ABANDONED) {
      if ((c = collect(self, kids, spawned, &replied, &sum)) == SKYNET_ABANDONED) break;
      if (c == SKYNET_DUP) skynet_duplicate(level, num);
      else if (c != SYNCQ_OK) atomic_fetch_add(&skynet_errors, 1);
      if (c != SKYNET_DUP) collected++;
    }
    if (c == SKYNET_ABANDONED) {
      skynet_abandon(self, kids, spawned, replied, level, num);
      return;
    }
    /* Every child joined: its sends are done, and none is owed. */
    syncq_po_msg *m;
    if (syncq_po_try_recv(self, &m) == SYNCQ_OK) {
      if (m->type == SKYNET_REPLY) skynet_duplicate(level, num);
      syncq_po_free(self, m);
    }
  }
  if (reply(self, parent, sum) != SYNCQ_OK) atomic_fetch_add(&skynet_errors, 1);
}

/* The watch's reading and release (lab_po_watch). */
typedef struct skynet_watch {
  _Atomic(syncq_po_pid) main, root; /* -1 until main has spawned the root */
  int level;
  uint32_t started, live; /* the last reading (the watcher's own) */
  char stall[128];        /* the reading when it fired */
} skynet_watch;

static bool skynet_reading(void *arg, bool *moving) {
  skynet_watch *w = arg;
  uint32_t st = syncq_po_count(skynet_sys), lv = syncq_po_live(skynet_sys);
  *moving = st != w->started || lv != w->live;
  w->started = st;
  w->live = lv;
  return atomic_load(&w->root) >= 0;
}

static void skynet_send_abandon(syncq_po_proc *self, syncq_po_pid to, int level) {
  syncq_po_msg *m;
  if (syncq_po_get(self, 0, &m) != SYNCQ_OK) return;
  m->type = SKYNET_ABANDON;
  m->len = 0;
  int r = syncq_po_send(self, to, m, SYNCQ_PO_LINK);
  if (r == SYNCQ_OK) return;
  syncq_po_free(self, m);
  if (r == SYNCQ_EDEAD && level >= 0)
    skynet_verdict(&skynet_lost, skynet_lost_why, sizeof skynet_lost_why, "the root's sum to main (level %d, num %lld)",
                   level, 0);
}

static void skynet_release(syncq_po_proc *self, void *arg) {
  skynet_watch *w = arg;
  snprintf(w->stall, sizeof w->stall,
           "no process was spawned or exited for %d ms (%u processes started, %u live, main and the watch counted) and "
           "main had no sum",
           LAB_QUEUE_LOST_MS, w->started, w->live);
  skynet_send_abandon(self, atomic_load(&w->root), w->level);
  skynet_send_abandon(self, atomic_load(&w->main), -1);
}

typedef struct skynet_main_arg {
  int level;
  int64_t sum;
  uint64_t ns;
  skynet_watch *watch;
  lab_po_watch *watcher;
} skynet_main_arg;

static int skynet_main(syncq_po_proc *self, void *arg) {
  skynet_main_arg *a = arg;
  uint64_t t0 = syncq_now_ns();
  syncq_po_pid root;
  int r = syncq_po_spawn(skynet_sys, skynet_proc, pack(0, a->level, syncq_po_pid_of(self)), &root);
  if (r != SYNCQ_OK) return r;
  atomic_store(&a->watch->main, syncq_po_pid_of(self));
  atomic_store(&a->watch->root, root);
  syncq_po_msg *m;
  if ((r = syncq_po_recv_blocking(self, &m)) != SYNCQ_OK) return r;
  if (m->type == SKYNET_ABANDON) { /* the watcher's: the tree stopped */
    syncq_po_free(self, m);
    (void)syncq_po_join(skynet_sys, root);
    return SYNCQ_ETIMEDOUT;
  }
  a->ns = syncq_now_ns() - t0;
  memcpy(&a->sum, m->data, sizeof a->sum);
  bool ok = m->type == SKYNET_REPLY && m->sender == root;
  syncq_po_free(self, m);
  (void)lab_po_watch_stop(self, a->watcher);
  if (!ok) return SYNCQ_EINVAL;
  if ((r = syncq_po_join(skynet_sys, root)) != SYNCQ_OK) return r;
  /* The root has exited: a second sum would be here by now. */
  while (syncq_po_try_recv(self, &m) == SYNCQ_OK) {
    if (m->type == SKYNET_REPLY)
      skynet_verdict(&skynet_dup, skynet_dup_why, sizeof skynet_dup_why,
                     "a second sum from the root (level %d, num %lld) to main (a duplicate)", a->level, 0);
    syncq_po_free(self, m);
  }
  return SYNCQ_OK;
}

static int syncq_skynet(const skynet_point *pt, double *ms, char *why, size_t whylen) {
  int64_t leaves = pow10i(pt->level);
  int64_t procs = (SKYNET_FANOUT * leaves - 1) / (SKYNET_FANOUT - 1) + 1; /* the tree and main */
  uint32_t max_procs = procs > (int64_t)SYNCQ_PO_MAX_PROCS ? SYNCQ_PO_MAX_PROCS : (uint32_t)procs;
  syncq_po_config cfg = {pt->line.mailbox, max_procs, 0, 0, pt->line.backend, 0, false};
  int r = syncq_po_create(&cfg, &skynet_sys);
  if (r != SYNCQ_OK) {
    snprintf(why, whylen, "creating a %s postoffice: %s", pt->line.name, syncq_strerror(r));
    return r;
  }
  atomic_store(&skynet_errors, 0);
  atomic_store(&skynet_lost, 0);
  atomic_store(&skynet_dup, 0);
  lab_po_faults_reset();
  skynet_watch sw = {-1, -1, pt->level, 0, 0, ""};
  lab_po_watch watcher = {.sys = skynet_sys, .reading = skynet_reading, .release = skynet_release, .arg = &sw};
  skynet_main_arg a = {pt->level, 0, 0, &sw, &watcher};
  int result = SYNCQ_OK;
  r = lab_po_watch_start(&watcher);
  if (r == SYNCQ_OK) r = syncq_po_run(skynet_sys, skynet_main, &a, &result);
  bool fired = lab_po_watch_join(&watcher);
  if (r == SYNCQ_OK) r = result;
  if (r == SYNCQ_ETIMEDOUT && fired) {
    if (atomic_load(&skynet_lost))
      snprintf(why, whylen, "%s lost a message: %s; %s", pt->line.name, skynet_lost_why, sw.stall);
    else snprintf(why, whylen, "%s lost a message: %s", pt->line.name, sw.stall);
  } else if (r != SYNCQ_OK) {
    const char *lim = syncq_po_limit_reason(skynet_sys);
    snprintf(why, whylen, "the tree failed: %s (limit: %s)", syncq_strerror(r), lim ? lim : "none named");
  }
  int d = syncq_po_destroy(skynet_sys);
  skynet_sys = NULL;
  if (r != SYNCQ_OK) return r;
  if (d != SYNCQ_OK) {
    snprintf(why, whylen, "destroying the postoffice: %s", syncq_strerror(d));
    return d;
  }
  if (atomic_load(&skynet_dup)) {
    snprintf(why, whylen, "%s gave out a message twice: %s", pt->line.name, skynet_dup_why);
    return SYNCQ_EINVAL;
  }
  int errors = atomic_load(&skynet_errors);
  if (errors != 0 || a.sum != leaves * (leaves - 1) / 2) {
    snprintf(why, whylen, "sum %lld, want %lld (%d processes saw a failed call)", (long long)a.sum,
             (long long)(leaves * (leaves - 1) / 2), errors);
    return SYNCQ_EINVAL;
  }
  *ms = (double)a.ns / NS_PER_MS;
  return SYNCQ_OK;
}

static int peer_skynet(const skynet_point *pt, double *ms, char *why, size_t whylen) {
  char leaves[32], out[256];
  long long want = (long long)(pow10i(pt->level) * (pow10i(pt->level) - 1) / 2), sum = -1;
  snprintf(leaves, sizeof leaves, "%lld", (long long)pow10i(pt->level));
  const char *args[] = {leaves, NULL};
  if (po_peer_run(pt->line.peer, skynet_peers.erl_script, skynet_peers.go_bin, args, out, sizeof out, why, whylen) != 0)
    return SYNCQ_ESYS;
  if (sscanf(out, "time_ms=%lf sum=%lld", ms, &sum) != 2 || sum != want) {
    snprintf(why, whylen, "the %s tree answered %.120s (sum wanted: %lld)", pt->line.peer, out, want);
    return SYNCQ_EINVAL;
  }
  return SYNCQ_OK;
}

static int skynet_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const skynet_point *pt = arg;
  char why[256] = "";
  double ms = 0;
  int r = pt->line.peer ? peer_skynet(pt, &ms, why, sizeof why) : syncq_skynet(pt, &ms, why, sizeof why);
  if (r != SYNCQ_OK) {
    lab_fail(ctx, "po-skynet %s, %lld leaves: %s", pt->line.name, (long long)pow10i(pt->level), why);
    return -1;
  }
  out->value = ms;
  out->ops = (uint64_t)((SKYNET_FANOUT * pow10i(pt->level) - 1) / (SKYNET_FANOUT - 1));
  return 0;
}

static int skynet_run(lab_ctx *ctx) {
  static const int smoke[] = {3}, quick[] = {5}, dflt[] = {4, 5, 6};
  lab_size size = lab_get_size(ctx);
  const int *levels = size == LAB_SIZE_SMOKE ? smoke : size == LAB_SIZE_QUICK ? quick : dflt;
  int nlevels = size == LAB_SIZE_SMOKE || size == LAB_SIZE_QUICK ? 1 : 3;
  bool fibers = po_have_fibers();
  lab_begin(
    ctx,
    "skynet: a tree of processes, each internal one spawning 10 children and summing their "
    "replies, the leaves replying their number; the root's sum is checked. time: ms from the "
    "root's spawn to its sum. Leaves: 10,000, 100,000 and 1,000,000 (the classic tree, 1,111,111 "
    "processes) at the default and full sizes; 100,000 alone at --quick (the suite's time "
    "budget: the classic million is left to the default size); 1,000 for the smoke test. Lines: the postoffice on fibers "
    "(main's work run as a fiber by syncq_po_run; a parent joins each child as its reply "
    "arrives, freeing its slot) with three mailboxes, on kernel threads up to %d leaves, and, "
    "run by the lab in the same run, the same tree in Erlang (escript, spawn and receive) and "
    "Go (goroutines and channels).",
    SKYNET_THREAD_MAX_LEAVES);
  po_peer_notes(ctx, &skynet_peers, fibers);
  if (!lab_planning(ctx) && pow10i(levels[nlevels - 1]) > SKYNET_THREAD_MAX_LEAVES)
    lab_note(ctx,
             "Kernel threads skipped past %d leaves: a tree of 100,000 leaves is 111,111 threads at "
             "once, past this machine's task limits (RLIMIT_NPROC, kernel.threads-max) or its memory.",
             SKYNET_THREAD_MAX_LEAVES);
  static skynet_point pts[3][LAB_MAX_VARIANTS];
  atomic_store(&skynet_waits, 0);
  for (int i = 0; i < nlevels; i++) {
    lab_group g;
    memset(&g, 0, sizeof g);
    lab_group_param(&g, "leaves", (double)pow10i(levels[i]));
    lab_group_param(&g, "threads", lab_pus(ctx));
    g.metric = "time";
    g.unit = "ms";
    g.sample = skynet_sample;
    skynet_point *p = pts[i];
    for (int a = 0; po_peer_lines[a] != NULL; a++) {
      skynet_point pt = {.level = levels[i]};
      if (!po_line_parse(po_peer_lines[a], &skynet_peers, fibers, &pt.line)) continue;
      if (pt.line.backend != NULL && strcmp(pt.line.backend, "thread") == 0 &&
          pow10i(levels[i]) > SKYNET_THREAD_MAX_LEAVES)
        continue;
      p[g.nvariants] = pt;
      g.variants[g.nvariants] = (lab_variant){pt.line.name, &p[g.nvariants]};
      g.nvariants++;
    }
    g.normalize_to = po_peer_normalize_to(&skynet_peers);
    if (g.nvariants > 0 && lab_run_group(ctx, &g) != 0) return -1;
  }
  uint64_t waits = atomic_load(&skynet_waits);
  if (!lab_planning(ctx) && waits > 0)
    lab_note(ctx,
             "%llu spawns found the process table full (SYNCQ_PO_MAX_PROCS, %u slots) and waited for a "
             "child's reply and join, or yielded, before trying again.",
             (unsigned long long)waits, SYNCQ_PO_MAX_PROCS);
  return 0;
}

/* time(fiber:<mb>) / time(go) below 1 at the largest tree measured */
/* clang-format off */
#define TIME_BELOW_GO(num)                                                                                         \
  "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"" num "\",\"den\":\"go\",\"at\":{\"leaves\":\"max\"},"     \
  "\"bound\":1.0}"
/* clang-format on */

/* clang-format off */
static const lab_claim skynet_claims[] = {
  {"syncq target: the skynet tree on fiber processes takes no longer than Go's goroutines and channels, "
   "measured in the same run, on the largest tree measured (1,000,000 leaves; 100,000 at --quick; the "
   "best of the mpsc, nonblocking and mutex mailboxes).",
   "{\"op\":\"any\",\"rules\":[" TIME_BELOW_GO("fiber:mpsc") "," TIME_BELOW_GO("fiber:nonblocking") ","
   TIME_BELOW_GO("fiber:mutex") "]}"},
};
/* clang-format on */

const lab_experiment lab_exp_po_skynet = {
  .name = "po-skynet",
  .paper = "002 LaForest 2007, §7 (lightweight processes)",
  .figure = "beyond 002: skynet, a tree of a million processes",
  .title =
    "Postoffice skynet: a tree of processes summing their children's replies, fibers vs threads vs Erlang "
    "and Go",
  .x = "leaves",
  .log_y = true,
  .log_x = true,
  .claims = skynet_claims,
  .nclaims = sizeof skynet_claims / sizeof skynet_claims[0],
  .uses_registry = false,
  .fixed_algos = po_peer_lines,
  .run = skynet_run,
  .postoffice = true,
};
