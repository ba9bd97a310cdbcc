/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_chaos_test.c — the postoffice's runtime under a randomized mix of
 * everything at once, with its promises checked at the end (and where
 * cheap, on the fly).
 *
 * For each seed of a fixed list (the six mailbox algorithms in turn), a
 * fiber system with 3 schedulers on the test plan's confined PUs
 * (PO_TEST_BACKEND "thread": a thread per process) and a small process
 * table (so slots and pids are reused many times) runs trees of "chaos"
 * processes that spawn one another (detached, or joined by their parent
 * at its end), each running a program of random operations drawn from
 * its seed: send (linked or copied) or send_after to a random pid (live,
 * dead or stale), send to a "sink", receive with and without a deadline,
 * sleep, monitor and demonitor, link and unlink, trap exits (always,
 * never, or toggled), register, unregister and look up a name, send exit
 * signals (kill, normal, or an abnormal reason unique in the run), a
 * blocking call bracketed by syncq_po_blocking_begin/_end, and spawn
 * children (some linked). Every process logs what it did and what it
 * expects; a process killed by an exit signal returns at once. A process
 * links only to processes spawned after it, and at its end waits only
 * for theirs (the DOWNs of its monitors, its links' EXITs): no cycle of
 * waits. The attached main thread watches: a watchdog fails the test,
 * naming every process still running and what it waits for, if the run
 * does not end.
 *
 * Checked (po.h's promises):
 *  - monitors: exactly one SYNCQ_PO_DOWN per monitor (pid and ref its
 *    own), none after a demonitor that returned SYNCQ_OK, one after one
 *    that returned SYNCQ_ENOENT; every DOWN of a process carries the same
 *    reason (or SYNCQ_PO_NOPROC), which is the one it set or one that
 *    killed it;
 *  - links: a non-trapping process linked to a process that exits
 *    abnormally is killed (its next call returns SYNCQ_EKILLED once the
 *    DOWN shows the exit); a trapping one gets exactly one SYNCQ_PO_EXIT
 *    per link that fired, with the partner's reason (or SYNCQ_PO_NOPROC),
 *    and none after an unlink that returned SYNCQ_OK; a process that never
 *    traps gets no SYNCQ_PO_EXIT message; every SYNCQ_PO_EXIT comes from
 *    a partner or a signaller, and a direct signal with SYNCQ_OK to a
 *    trapping process still receiving is received exactly once;
 *  - names: a name has one live holder; whereis never answers with a
 *    process whose DOWN its caller has handled; every name is gone at
 *    the end;
 *  - messages: a message (a delayed one too) is received only by the
 *    process it was sent to (never by the slot's next process), with its
 *    sender field, at most once, and a plain send's in per-sender order;
 *    every message sent with SYNCQ_OK to a process that received until
 *    its end (a sink, or a chaos process that finished its program
 *    without being killed: its final drain takes messages until
 *    try_recv answers SYNCQ_EMPTY, yielding while "mpsc" answers
 *    SYNCQ_EBUSY, a sender between its two steps) arrived;
 *  - pids: a slot's next process starts only after its previous one has
 *    exited, with a later generation, never on a slot that a live
 *    process holds; no pid value repeats; SYNCQ_EDEAD only for a pid
 *    whose process has exited; join of a child returns SYNCQ_OK (also
 *    from a killed parent);
 *  - no hang (the watchdog), no leak (the ASan build's LeakSanitizer),
 *    and syncq_po_destroy succeeds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include <cmocka.h>

#include "test_plan.h"
#include "test_random.h"
#include "test_sanitizer.h"

#include "syncq/po.h"

#ifndef PO_TEST_BACKEND
#define PO_TEST_BACKEND "fiber"
#endif
#define FIBERS (strcmp(PO_TEST_BACKEND, "fiber") == 0)
#define US 1000ull
#define MS 1000000ull
#define SCHEDULERS 3u
#define MAX_PROCS 40u                  /* chaos processes, sinks and main share it: slots are reused */
#define NPROC (SANITIZED ? 500 : 1000) /* chaos processes per seed */
#define OPS 24                         /* operations of one chaos program */
#define NSINK 2
#define NNAMES 6
#define MAXMON 16 /* monitors one process takes at most */
#define MAXLINK 8 /* links one process takes at most */
#define MAXJOIN 4 /* joinable children one process spawns at most */
#define FIBER_STACK (SANITIZED ? 256u * 1024u : 64u * 1024u)
#define WATCHDOG_S 60      /* a bound only a hang reaches */
#define SIG_BASE 100000000 /* unique abnormal reasons of exit signals */
#define VOL_BASE 1000000   /* a process's own abnormal reason: VOL_BASE + index */

enum { CLS_PLAIN, CLS_TRAP, CLS_TOGGLE };
enum { T_DATA = 1, T_LATE, T_SINK, T_STOP };
enum { MON_ACTIVE, MON_DEMON_OK, MON_DEMON_ENOENT };
enum { LINK_ACTIVE, LINK_UNLINKED, LINK_FIRED };

typedef struct payload {
  int32_t from; /* sender's index (chaos) */
  int32_t seq;  /* sender's sequence number (per recipient for sinks) */
  syncq_po_pid to;
} payload;

typedef struct mon {
  int32_t target;
  int32_t state;
  uint64_t ref;
  int32_t downs;
  int32_t reason;
} mon;

typedef struct lnk {
  int32_t target;
  int32_t state;
  int32_t exits; /* SYNCQ_PO_EXIT messages of this link */
  int32_t reason;
} lnk;

typedef struct sent {
  int32_t to;
  int32_t seq;
  bool open; /* the recipient was still receiving after the send returned */
} sent;

typedef struct got {
  int32_t from;
  int32_t seq;
} got;

typedef struct rec {
  _Atomic syncq_po_pid pid; /* set by its spawner and by the process itself, -1 before */
  atomic_int known;         /* a target for the others (it traps exits as its class says) */
  atomic_int done;          /* its body is returning (or it never started) */
  atomic_int closed;        /* it receives no more */
  atomic_int last_op;       /* for the watchdog */
  atomic_int kill_sent;     /* someone sent it SYNCQ_PO_EXIT_KILL */
  atomic_int wait_on;       /* the final phase waits for this process's DOWN or EXIT */
  int cls;
  bool unused;    /* its spawn was refused */
  bool killed;    /* a call returned SYNCQ_EKILLED */
  bool completed; /* finished its program and its final receive */
  int32_t vol_reason;
  uint64_t seed;
  /* The process's own logs, read by main once done is seen. */
  mon mons[MAXMON];
  int nmon;
  lnk links[MAXLINK];
  int nlink;
  sent *sent;
  int nsent;
  got *got;
  int ngot, capgot;
  int32_t sink_sent[NSINK];
  int32_t seq;
  int32_t late_seq; /* send_after's messages: sequence numbers of their own */
  syncq_po_pid joins[MAXJOIN];
  int njoin;
} rec;

typedef struct sig {
  atomic_int from, to; /* -1 until issued */
  atomic_int ok, open, received;
} sig;

typedef struct chaos {
  syncq_po_system *sys;
  uint64_t seed;
  uint32_t slot_bits;
  rec *recs;
  atomic_int next_idx;
  atomic_int *slot_holder;    /* index + 1 of a slot's last chaos process; -1: a sink or main */
  atomic_uchar *related;      /* [a * NPROC + b]: a linked b or sent b an exit signal */
  int32_t *last_seq;          /* [w * NPROC + s], touched by w only */
  atomic_int_fast64_t *truth; /* a process's DOWN reason, as first seen (INT64_MIN: none yet) */
  sig *sigs;
  atomic_int nsig;
  atomic_int holder[NNAMES]; /* index + 1 of a name's holder */
  syncq_po_pid sinks[NSINK];
  got *sink_got[NSINK];
  int sink_ngot[NSINK];
  pthread_mutex_t fail_lock;
  atomic_int failures;
  char first_failure[512];
} chaos;

static chaos *C; /* the run in progress (one at a time) */

static void failure(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void failure(const char *fmt, ...) {
  if (atomic_fetch_add(&C->failures, 1) != 0) return;
  pthread_mutex_lock(&C->fail_lock);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(C->first_failure, sizeof C->first_failure, fmt, ap);
  va_end(ap);
  pthread_mutex_unlock(&C->fail_lock);
}

static int idx_of_pid(syncq_po_pid pid) {
  int n = atomic_load(&C->next_idx);
  if (n > NPROC) n = NPROC;
  for (int i = 0; i < n; i++)
    if (atomic_load(&C->recs[i].pid) == pid) return i;
  return -1;
}

static void name_of(int k, char *buf) { snprintf(buf, 16, "n%d", k); }

/* ---- the sinks: receive until STOP, check order, keep a log ---- */

static void sink(syncq_po_proc *self, void *arg) {
  int k = (int)(intptr_t)arg;
  int cap = 1024, n = 0;
  got *log = malloc((size_t)cap * sizeof *log);
  int32_t *last = calloc(NPROC, sizeof *last);
  if (log == NULL || last == NULL) {
    failure("sink %d: out of memory", k);
    free(log);
    free(last);
    return;
  }
  for (;;) {
    syncq_po_msg *m;
    int r = syncq_po_recv_blocking(self, &m);
    if (r != SYNCQ_OK) {
      failure("sink %d: recv_blocking: %s", k, syncq_strerror(r));
      break;
    }
    uint32_t type = m->type;
    if (type == T_SINK) {
      payload p;
      memcpy(&p, m->data, sizeof p);
      if (p.to != syncq_po_pid_of(self)) failure("sink %d got a message for pid %d", k, (int)p.to);
      else if (p.from < 0 || p.from >= NPROC) failure("sink %d: sender index %d", k, (int)p.from);
      else {
        if (p.seq != last[p.from] + 1)
          failure("sink %d: from process %d seq %d after %d (lost, repeated or out of order)", k, (int)p.from,
                  (int)p.seq, (int)last[p.from]);
        last[p.from] = p.seq;
        if (m->sender != atomic_load(&C->recs[p.from].pid))
          failure("sink %d: sender field %d, process %d is pid %d", k, (int)m->sender, (int)p.from,
                  (int)atomic_load(&C->recs[p.from].pid));
        if (n == cap) {
          got *g = realloc(log, (size_t)cap * 2 * sizeof *log);
          if (g == NULL) {
            failure("sink %d: out of memory", k);
            syncq_po_free(self, m);
            break;
          }
          log = g;
          cap *= 2;
        }
        log[n++] = (got){p.from, p.seq};
      }
    } else if (type != T_STOP) {
      failure("sink %d: a message of type %#x", k, (unsigned)type);
    }
    syncq_po_free(self, m);
    if (type == T_STOP) break;
  }
  free(last);
  C->sink_got[k] = log;
  C->sink_ngot[k] = n;
}

/* ---- the chaos processes ---- */

typedef struct ctx {
  syncq_po_proc *self;
  syncq_po_pid me_pid;
  int me;
  rec *r;
  uint64_t rng;
  bool trapping;
  unsigned char *seen_down; /* [NPROC]: a DOWN of that process handled here */
} ctx;

static uint32_t pick(ctx *c, uint32_t n) { return (uint32_t)(test_random(&c->rng) % n); }

/* A known chaos process other than me (its pid published), or -1. */
static int pick_target(ctx *c, bool higher) {
  int n = atomic_load(&C->next_idx);
  if (n > NPROC) n = NPROC;
  for (int tries = 0; tries < 8; tries++) {
    int t = (int)pick(c, (uint32_t)n);
    if (t == c->me || (higher && t < c->me)) continue;
    if (!atomic_load(&C->recs[t].known)) continue;
    return t;
  }
  return -1;
}

static void note_edead(ctx *c, int t, const char *what) {
  if (!atomic_load(&C->recs[t].done))
    failure("process %d: %s of process %d (pid %d) found it dead while its body still ran", c->me, what, t,
            (int)atomic_load(&C->recs[t].pid));
}

static lnk *link_of(ctx *c, int t) {
  for (int i = 0; i < c->r->nlink; i++)
    if (c->r->links[i].target == t) return &c->r->links[i];
  return NULL;
}

static void record_truth(int t, int32_t reason, int me) {
  if (reason == SYNCQ_PO_NOPROC) return;
  int_fast64_t want = INT64_MIN;
  if (!atomic_compare_exchange_strong(&C->truth[t], &want, reason) && want != reason)
    failure("process %d: DOWN of process %d with reason %d, another DOWN had %d", me, t, (int)reason, (int)want);
}

static void add_got(ctx *c, int32_t from, int32_t seq) {
  rec *r = c->r;
  if (r->ngot == r->capgot) {
    int cap = r->capgot ? r->capgot * 2 : 64;
    got *g = realloc(r->got, (size_t)cap * sizeof *g);
    if (g == NULL) {
      failure("process %d: out of memory", c->me);
      return;
    }
    r->got = g;
    r->capgot = cap;
  }
  r->got[r->ngot++] = (got){from, seq};
}

/* Handle one received message; false: stop (killed). */
static bool handle(ctx *c, syncq_po_msg *m) {
  rec *r = c->r;
  bool go_on = true;
  if (m->type == T_DATA) {
    payload p;
    memcpy(&p, m->data, sizeof p);
    if (p.to != c->me_pid)
      failure("process %d (pid %d) received a message sent to pid %d", c->me, (int)c->me_pid, (int)p.to);
    if (p.from < 0 || p.from >= NPROC || m->sender != atomic_load(&C->recs[p.from].pid)) {
      failure("process %d: a message from index %d with sender field %d", c->me, (int)p.from, (int)m->sender);
    } else {
      int32_t *last = &C->last_seq[(size_t)c->me * NPROC + (size_t)p.from];
      if (p.seq <= *last)
        failure("process %d: from process %d seq %d after %d (repeated or out of order)", c->me, (int)p.from,
                (int)p.seq, (int)*last);
      *last = p.seq;
      add_got(c, p.from, p.seq);
    }
  } else if (m->type == T_LATE) {
    /* send_after's: no order against the plain sends, at most once (the
     * end checks), only to the process it was sent to */
    payload p;
    memcpy(&p, m->data, sizeof p);
    if (p.to != c->me_pid)
      failure("process %d (pid %d) received a delayed message sent to pid %d", c->me, (int)c->me_pid, (int)p.to);
    if (p.from < 0 || p.from >= NPROC || m->sender != atomic_load(&C->recs[p.from].pid))
      failure("process %d: a delayed message from index %d with sender field %d", c->me, (int)p.from, (int)m->sender);
    else add_got(c, p.from, -p.seq);
  } else if (m->type == SYNCQ_PO_DOWN) {
    syncq_po_down d;
    memcpy(&d, m->data, sizeof d);
    mon *mo = NULL;
    for (int i = 0; i < r->nmon; i++)
      if (r->mons[i].ref == d.ref) mo = &r->mons[i];
    if (mo == NULL) {
      failure("process %d: a DOWN with ref %llu it never took", c->me, (unsigned long long)d.ref);
    } else if (mo->state == MON_DEMON_OK) {
      failure("process %d: a DOWN of process %d after demonitor returned SYNCQ_OK", c->me, (int)mo->target);
    } else if (mo->downs++ != 0) {
      failure("process %d: a second DOWN for its monitor of process %d", c->me, (int)mo->target);
    } else {
      int t = mo->target;
      mo->reason = d.reason;
      if (d.pid != atomic_load(&C->recs[t].pid) || m->sender != d.pid)
        failure("process %d: DOWN for process %d names pid %d, sender %d (its pid is %d)", c->me, t, (int)d.pid,
                (int)m->sender, (int)atomic_load(&C->recs[t].pid));
      record_truth(t, d.reason, c->me);
      c->seen_down[t] = 1;
      lnk *l = link_of(c, t);
      if (l != NULL && r->cls == CLS_TRAP && l->state == LINK_ACTIVE) {
        /* its EXIT is here or on its way (a monitor taken after the
         * partner's exit posts its DOWN at once, before the exit posts the
         * link's EXIT): the final phase waits for it */
        l->state = LINK_FIRED;
      } else if (l != NULL && r->cls == CLS_PLAIN && l->state == LINK_ACTIVE && d.reason != SYNCQ_PO_EXIT_NORMAL &&
                 d.reason != SYNCQ_PO_NOPROC) {
        /* killed before the DOWN was posted: the next call must say so */
        int y = syncq_po_yield(c->self);
        if (y != SYNCQ_EKILLED)
          failure("process %d (not trapping) survived linked process %d's exit with reason %d (yield: %s)", c->me, t,
                  (int)d.reason, syncq_strerror(y));
        else go_on = false;
      }
    }
  } else if (m->type == SYNCQ_PO_EXIT) {
    syncq_po_exit_msg e;
    memcpy(&e, m->data, sizeof e);
    int s = idx_of_pid(e.pid);
    if (e.pid != m->sender) failure("process %d: EXIT from %d with sender field %d", c->me, (int)e.pid, (int)m->sender);
    if (r->cls == CLS_PLAIN) failure("process %d never traps exits, got an EXIT from pid %d", c->me, (int)e.pid);
    if (s < 0) {
      failure("process %d: an EXIT from pid %d, no chaos process", c->me, (int)e.pid);
    } else if (e.reason >= SIG_BASE && e.reason - SIG_BASE < atomic_load(&C->nsig) &&
               atomic_load(&C->sigs[e.reason - SIG_BASE].from) == s &&
               atomic_load(&C->sigs[e.reason - SIG_BASE].to) == c->me) {
      /* (a partner of s killed by a signal passes its reason on: that is a link's EXIT) */
      sig *g = &C->sigs[e.reason - SIG_BASE];
      if (atomic_fetch_add(&g->received, 1) != 0) failure("process %d got exit signal %d twice", c->me, (int)e.reason);
    } else {
      if (!atomic_load(&C->related[(size_t)s * NPROC + (size_t)c->me]) &&
          !atomic_load(&C->related[(size_t)c->me * NPROC + (size_t)s]))
        failure("process %d: an EXIT (reason %d) from process %d, neither linked nor signalling", c->me, (int)e.reason,
                s);
      lnk *l = link_of(c, s); /* s > me: only a link's exit (normal signals go to higher processes) */
      if (l != NULL) {
        if (l->state == LINK_UNLINKED)
          failure("process %d: an EXIT (reason %d) from process %d after unlink returned SYNCQ_OK", c->me,
                  (int)e.reason, s);
        else if (r->cls == CLS_TRAP) {
          if (l->exits++ != 0) failure("process %d: a second EXIT of its link to process %d", c->me, s);
          l->reason = e.reason;
        }
      }
    }
  } else {
    failure("process %d: a message of type %#x", c->me, (unsigned)m->type);
  }
  syncq_po_free(c->self, m);
  return go_on;
}

/* Receive what is there within wait_ns; false: killed. */
static bool receive(ctx *c, uint64_t wait_ns, bool try_only) {
  syncq_po_msg *m;
  int r = try_only ? syncq_po_try_recv(c->self, &m) : syncq_po_recv_timeout(c->self, wait_ns, &m);
  if (r == SYNCQ_EKILLED) return false;
  /* SYNCQ_EBUSY: "mpsc", a message on its way (try_recv, or a wait of 0) */
  if (r == SYNCQ_EMPTY || r == SYNCQ_ETIMEDOUT || (r == SYNCQ_EBUSY && (try_only || wait_ns == 0))) return true;
  if (r != SYNCQ_OK) {
    failure("process %d: receive: %s", c->me, syncq_strerror(r));
    return true;
  }
  return handle(c, m);
}

static void chaos_proc(syncq_po_proc *self, void *arg);

/* Spawn one child; returns its index or -1. */
static int spawn_child(ctx *c, syncq_po_pid *pid, bool joinable) {
  /* a full table refuses (SYNCQ_ELIMIT, taken as an outcome): keep the
   * indices for spawns that may succeed */
  if (syncq_po_live(C->sys) + 2 > MAX_PROCS) return -1;
  int k = atomic_fetch_add(&C->next_idx, 1);
  if (k >= NPROC) return -1;
  rec *cr = &C->recs[k];
  cr->seed = C->seed ^ ((uint64_t)(k + 1) * 0x9E3779B97F4A7C15ull);
  if (cr->seed == 0) cr->seed = 1;
  cr->cls = (int)(cr->seed % 3);
  syncq_po_pid got_pid;
  int r = joinable ? syncq_po_spawn(C->sys, chaos_proc, cr, &got_pid)
                   : syncq_po_spawn_detached(C->sys, chaos_proc, cr, &got_pid);
  if (r == SYNCQ_OK) {
    atomic_store(&cr->pid, got_pid);
    if (pid != NULL) *pid = got_pid;
  }
  if (r != SYNCQ_OK) {
    if (r != SYNCQ_ELIMIT) failure("process %d: spawn: %s", c ? c->me : -1, syncq_strerror(r));
    cr->unused = true;
    atomic_store(&cr->done, 1);
    return -1;
  }
  return k;
}

static bool take_monitor(ctx *c, int t, syncq_po_pid pid) {
  if (c->r->nmon == MAXMON) return true;
  uint64_t ref;
  int r = syncq_po_monitor(c->self, pid, &ref);
  if (r == SYNCQ_EKILLED) return false;
  if (r != SYNCQ_OK) {
    failure("process %d: monitor of %d: %s", c->me, t, syncq_strerror(r));
    return true;
  }
  c->r->mons[c->r->nmon++] = (mon){t, MON_ACTIVE, ref, 0, 0};
  return true;
}

/* Link to t (t > me: the pair's link is only ever made from here) and
 * monitor it, so the final wait sees its exit. */
static bool take_link(ctx *c, int t, syncq_po_pid pid) {
  if (c->r->nlink == MAXLINK || c->r->nmon == MAXMON || link_of(c, t) != NULL) return true;
  atomic_store(&C->related[(size_t)c->me * NPROC + (size_t)t], 1);
  int r = syncq_po_link(c->self, pid);
  if (r == SYNCQ_EKILLED) return false;
  if (r == SYNCQ_EDEAD) note_edead(c, t, "link");
  else if (r != SYNCQ_OK) failure("process %d: link to %d: %s", c->me, t, syncq_strerror(r));
  if (r != SYNCQ_OK) return true;
  c->r->links[c->r->nlink++] = (lnk){t, LINK_ACTIVE, 0, 0};
  return take_monitor(c, t, pid);
}

static int op_send(ctx *c) {
  rec *r = c->r;
  bool to_sink = pick(c, 4) == 0;
  int t = to_sink ? (int)pick(c, NSINK) : pick_target(c, false);
  if (t < 0) return SYNCQ_OK;
  syncq_po_pid to = to_sink ? C->sinks[t] : atomic_load(&C->recs[t].pid);
  syncq_po_msg *m;
  int s = syncq_po_get(c->self, sizeof(payload), &m);
  if (s != SYNCQ_OK) return s;
  payload p = {c->me, to_sink ? r->sink_sent[t] + 1 : r->seq + 1, to};
  memcpy(m->data, &p, sizeof p);
  m->type = to_sink ? T_SINK : T_DATA;
  s = syncq_po_send(c->self, to, m, pick(c, 2) ? SYNCQ_PO_LINK : SYNCQ_PO_COPY);
  if (s != SYNCQ_OK) syncq_po_free(c->self, m);
  if (s == SYNCQ_EKILLED) return s;
  if (to_sink) {
    if (s == SYNCQ_OK) r->sink_sent[t]++;
    else failure("process %d: send to sink %d: %s", c->me, t, syncq_strerror(s));
    return SYNCQ_OK;
  }
  if (s == SYNCQ_OK) {
    r->seq++;
    r->sent[r->nsent++] = (sent){t, p.seq, !atomic_load(&C->recs[t].closed)};
  } else if (s == SYNCQ_EDEAD) {
    r->seq++; /* a sequence number that never arrives: the receiver skips it */
    note_edead(c, t, "send");
  } else {
    failure("process %d: send to %d: %s", c->me, t, syncq_strerror(s));
  }
  return SYNCQ_OK;
}

static int op_send_after(ctx *c) {
  int t = pick_target(c, false);
  if (t < 0) return SYNCQ_OK;
  syncq_po_pid to = atomic_load(&C->recs[t].pid);
  syncq_po_msg *m;
  int s = syncq_po_get(c->self, sizeof(payload), &m);
  if (s != SYNCQ_OK) return s;
  payload p = {c->me, ++c->r->late_seq, to};
  memcpy(m->data, &p, sizeof p);
  m->type = T_LATE;
  uint32_t d = pick(c, 3);
  s = syncq_po_send_after(c->self, to, m, d == 0 ? 0 : d == 1 ? 100 * US : 1 * MS);
  if (s != SYNCQ_OK) syncq_po_free(c->self, m);
  if (s == SYNCQ_EKILLED) return s;
  if (s == SYNCQ_EDEAD) note_edead(c, t, "send_after");
  else if (s != SYNCQ_OK) failure("process %d: send_after to %d: %s", c->me, t, syncq_strerror(s));
  return SYNCQ_OK;
}

static int op_signal(ctx *c) {
  uint32_t kind = pick(c, 4);
  /* a normal signal only to a higher process: from a lower one, an EXIT
   * with reason normal is a link's */
  int t = pick_target(c, kind == 1);
  if (t < 0) return SYNCQ_OK;
  int32_t reason;
  sig *g = NULL;
  atomic_store(&C->related[(size_t)c->me * NPROC + (size_t)t], 1);
  if (kind == 0) {
    reason = SYNCQ_PO_EXIT_KILL;
    atomic_store(&C->recs[t].kill_sent, 1);
  } else if (kind == 1) {
    reason = SYNCQ_PO_EXIT_NORMAL;
  } else {
    int n = atomic_fetch_add(&C->nsig, 1);
    g = &C->sigs[n];
    atomic_store(&g->to, t);
    atomic_store(&g->from, c->me);
    reason = SIG_BASE + n;
  }
  int s = syncq_po_exit(c->self, atomic_load(&C->recs[t].pid), reason);
  if (s == SYNCQ_EKILLED) return s;
  if (s == SYNCQ_OK) {
    if (g != NULL) {
      atomic_store(&g->open, !atomic_load(&C->recs[t].closed));
      atomic_store(&g->ok, 1);
    }
  } else if (s == SYNCQ_EDEAD) {
    note_edead(c, t, "exit signal");
  } else {
    failure("process %d: exit signal to %d: %s", c->me, t, syncq_strerror(s));
  }
  return SYNCQ_OK;
}

static int op_names(ctx *c, int *mine) {
  char name[16];
  uint32_t what = pick(c, 3);
  int k = (int)pick(c, NNAMES);
  if (what == 0 && *mine < 0) {
    name_of(k, name);
    int s = syncq_po_register(C->sys, name, c->me_pid);
    if (s == SYNCQ_OK) {
      int prev = atomic_exchange(&C->holder[k], c->me + 1);
      if (prev != 0 && !atomic_load(&C->recs[prev - 1].done))
        failure("process %d registered %s, still held by running process %d", c->me, name, prev - 1);
      *mine = k;
    } else if (s != SYNCQ_EEXIST) {
      failure("process %d: register %s: %s", c->me, name, syncq_strerror(s));
    }
  } else if (what == 1 && *mine >= 0) {
    name_of(*mine, name);
    atomic_store(&C->holder[*mine], 0);
    int s = syncq_po_unregister(C->sys, name);
    if (s != SYNCQ_OK) failure("process %d: unregister of its own %s: %s", c->me, name, syncq_strerror(s));
    *mine = -1;
  } else {
    name_of(k, name);
    syncq_po_pid p;
    int s = syncq_po_whereis(C->sys, name, &p);
    if (s == SYNCQ_OK) {
      int t = idx_of_pid(p);
      if (t < 0) failure("process %d: whereis %s: pid %d, no chaos process", c->me, name, (int)p);
      else if (c->seen_down[t])
        failure("process %d: whereis %s: process %d, whose DOWN it has handled", c->me, name, t);
    } else if (s != SYNCQ_ENOENT) {
      failure("process %d: whereis %s: %s", c->me, name, syncq_strerror(s));
    }
  }
  return SYNCQ_OK;
}

/* The final phase: take back monitors of lower processes, wait for the
 * DOWNs of the rest (higher processes: no cycle), then receive what is
 * left. false: killed. */
static bool final_phase(ctx *c) {
  rec *r = c->r;
  for (int i = 0; i < r->nmon; i++) {
    mon *mo = &r->mons[i];
    if (mo->state != MON_ACTIVE || mo->downs != 0 || mo->target > c->me) continue;
    int s = syncq_po_demonitor(c->self, atomic_load(&C->recs[mo->target].pid), mo->ref);
    if (s == SYNCQ_OK) mo->state = MON_DEMON_OK;
    else if (s == SYNCQ_ENOENT) mo->state = MON_DEMON_ENOENT;
    else failure("process %d: demonitor: %s", c->me, syncq_strerror(s));
  }
  atomic_store(&r->last_op, 100);
  for (;;) {
    bool waiting = false;
    for (int i = 0; i < r->nmon; i++)
      if (r->mons[i].state != MON_DEMON_OK && r->mons[i].downs == 0) {
        waiting = true;
        atomic_store(&r->wait_on, r->mons[i].target);
        atomic_store(&r->last_op, 100);
      }
    for (int i = 0; i < r->nlink && r->cls == CLS_TRAP; i++)
      if (r->links[i].state == LINK_FIRED && r->links[i].exits == 0) {
        waiting = true;
        atomic_store(&r->wait_on, r->links[i].target);
        atomic_store(&r->last_op, 102);
      }
    if (!waiting) break;
    if (!receive(c, 20 * MS, false)) return false;
  }
  atomic_store(&r->last_op, 101);
  atomic_store(&r->closed, 1);
  for (;;) {
    syncq_po_msg *m;
    int s = syncq_po_try_recv(c->self, &m);
    if (s == SYNCQ_EKILLED) return false;
    if (s == SYNCQ_EMPTY) break; /* exact: nothing left, nothing on its way */
    if (s == SYNCQ_EBUSY) {      /* "mpsc": a sender between its two steps */
      if (syncq_po_yield(c->self) == SYNCQ_EKILLED) return false;
      continue;
    }
    if (s != SYNCQ_OK) {
      failure("process %d: try_recv: %s", c->me, syncq_strerror(s));
      break;
    }
    if (!handle(c, m)) return false;
  }
  return true;
}

static void chaos_proc(syncq_po_proc *self, void *arg) {
  rec *r = arg;
  ctx c = {self, syncq_po_pid_of(self), (int)(r - C->recs), r, r->seed, false, NULL};
  int mine = -1;
  atomic_store(&r->pid, c.me_pid);
  /* the slot: its last chaos process has exited, its generation is older */
  uint32_t slot = (uint32_t)c.me_pid & ((1u << C->slot_bits) - 1u);
  int prev = atomic_exchange(&C->slot_holder[slot], c.me + 1);
  if (prev < 0) failure("process %d got slot %u of a sink or main (pid %d)", c.me, slot, (int)c.me_pid);
  else if (prev > 0) {
    rec *pr = &C->recs[prev - 1];
    syncq_po_pid pp = atomic_load(&pr->pid);
    if (!atomic_load(&pr->done))
      failure("process %d (pid %d) took slot %u of running process %d", c.me, (int)c.me_pid, slot, prev - 1);
    if (((uint32_t)pp >> C->slot_bits) >= ((uint32_t)c.me_pid >> C->slot_bits))
      failure("process %d (pid %d) reuses slot %u after pid %d: no later generation", c.me, (int)c.me_pid, slot,
              (int)pp);
  }
  r->sent = malloc(2 * OPS * sizeof *r->sent);
  c.seen_down = calloc(NPROC, 1);
  if (r->sent == NULL || c.seen_down == NULL) {
    failure("process %d: out of memory", c.me);
    goto out;
  }
  if (r->cls != CLS_PLAIN && syncq_po_trap_exits(self, true) != SYNCQ_OK) goto killed;
  c.trapping = r->cls != CLS_PLAIN;
  r->vol_reason = pick(&c, 2) ? SYNCQ_PO_EXIT_NORMAL : VOL_BASE + c.me;
  if (syncq_po_set_exit_reason(self, r->vol_reason) != SYNCQ_OK) goto killed;
  atomic_store(&r->known, 1); /* a target for the others from now on */
  for (int op = 0; op < OPS; op++) {
    uint32_t what = pick(&c, 16);
    atomic_store(&r->last_op, (int)what);
    int s = SYNCQ_OK;
    int t;
    syncq_po_pid child;
    switch (what) {
    case 0:
    case 1:
    case 2:
      s = op_send(&c);
      if (s == SYNCQ_OK) s = op_send(&c);
      break;
    case 3:
      if (!receive(&c, pick(&c, 3) == 0 ? 0 : (pick(&c, 2) ? 100 * US : 2 * MS), false)) goto killed;
      break;
    case 4:
      if (!receive(&c, 0, true)) goto killed;
      break;
    case 5:
      t = pick_target(&c, false);
      if (t >= 0 && !take_monitor(&c, t, atomic_load(&C->recs[t].pid))) goto killed;
      break;
    case 6:
      if (r->nmon > 0) {
        mon *mo = &r->mons[pick(&c, (uint32_t)r->nmon)];
        if (mo->state != MON_ACTIVE) break;
        s = syncq_po_demonitor(self, atomic_load(&C->recs[mo->target].pid), mo->ref);
        if (s == SYNCQ_OK) mo->state = MON_DEMON_OK;
        else if (s == SYNCQ_ENOENT) mo->state = MON_DEMON_ENOENT, s = SYNCQ_OK;
        else failure("process %d: demonitor: %s", c.me, syncq_strerror(s));
      }
      break;
    case 7:
      t = pick_target(&c, true);
      if (t >= 0 && !take_link(&c, t, atomic_load(&C->recs[t].pid))) goto killed;
      break;
    case 8:
      if (r->nlink > 0) {
        lnk *l = &r->links[pick(&c, (uint32_t)r->nlink)];
        if (l->state != LINK_ACTIVE) break;
        s = syncq_po_unlink(self, atomic_load(&C->recs[l->target].pid));
        if (s == SYNCQ_OK) l->state = LINK_UNLINKED;
        else if (s == SYNCQ_ENOENT) l->state = LINK_FIRED, s = SYNCQ_OK;
        else failure("process %d: unlink: %s", c.me, syncq_strerror(s));
      }
      break;
    case 9:
      if (r->cls == CLS_TOGGLE) {
        c.trapping = !c.trapping;
        s = syncq_po_trap_exits(self, c.trapping);
      }
      break;
    case 10:
      s = op_names(&c, &mine);
      break;
    case 11:
      if (pick(&c, 3) == 0) s = op_signal(&c);
      break;
    case 12:
    case 13:
      if (r->njoin < MAXJOIN && pick(&c, 4) == 0) {
        t = spawn_child(&c, &child, true);
        if (t >= 0) r->joins[r->njoin++] = child;
      } else {
        t = spawn_child(&c, &child, false);
      }
      if (t >= 0 && pick(&c, 2) && !take_link(&c, t, child)) goto killed;
      break;
    case 14:
      if (pick(&c, 2)) s = syncq_po_sleep(self, 50 * US);
      else s = op_send_after(&c);
      break;
    default:
      if (pick(&c, 4) == 0) {
        s = syncq_po_blocking_begin(self);
        if (s == SYNCQ_OK) {
          struct timespec ts = {0, 200000};
          nanosleep(&ts, NULL);
          s = syncq_po_blocking_end(self);
        }
        if (s != SYNCQ_OK) failure("process %d: blocking bracket: %s", c.me, syncq_strerror(s));
      }
      break;
    }
    if (s == SYNCQ_EKILLED) goto killed;
  }
  if (!final_phase(&c)) goto killed;
  r->completed = true;
  goto out;
killed:
  r->killed = true;
out:
  /* joined even when killed (join is not refused then): a slot nobody
   * joins stays taken */
  for (int i = 0; i < r->njoin; i++) {
    int s = syncq_po_join(C->sys, r->joins[i]);
    if (s != SYNCQ_OK) failure("process %d: join of its child pid %d: %s", c.me, (int)r->joins[i], syncq_strerror(s));
  }
  if (mine >= 0) atomic_store(&C->holder[mine], 0); /* the exit takes the name */
  free(c.seen_down);
  atomic_store(&r->done, 1);
}

/* ---- the run and its end checks ---- */

static int cmp_got(const void *a, const void *b) {
  const got *x = a, *y = b;
  if (x->from != y->from) return x->from < y->from ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool has_got(const got *g, int n, int from, int seq) {
  got key = {from, seq};
  return bsearch(&key, g, (size_t)n, sizeof *g, cmp_got) != NULL;
}

static int cmp_pid(const void *a, const void *b) {
  syncq_po_pid x = *(const syncq_po_pid *)a, y = *(const syncq_po_pid *)b;
  return x < y ? -1 : x > y;
}

/* Could process t have exited with reason R? Its own reason, or one that
 * reached it: a kill, an exit signal sent to it, or (through links) the
 * same of a process related to it by a link or a signal. */
static bool possible_reason(int t, int32_t reason, int n) {
  /* no signal kills with reason normal here (none is sent to oneself) */
  if (reason == SYNCQ_PO_EXIT_NORMAL) return C->recs[t].vol_reason == SYNCQ_PO_EXIT_NORMAL;
  int *queue = malloc((size_t)n * sizeof *queue);
  unsigned char *seen = calloc((size_t)n, 1);
  bool ok = false;
  if (queue == NULL || seen == NULL) {
    failure("end checks: out of memory");
    free(queue);
    free(seen);
    return true;
  }
  int head = 0, tail = 0;
  queue[tail++] = t;
  seen[t] = 1;
  while (head < tail && !ok) {
    int u = queue[head++];
    rec *r = &C->recs[u];
    if (reason == r->vol_reason || (reason == SYNCQ_PO_EXIT_KILLED && atomic_load(&r->kill_sent))) ok = true;
    if (reason >= SIG_BASE && reason - SIG_BASE < atomic_load(&C->nsig) &&
        atomic_load(&C->sigs[reason - SIG_BASE].to) == u)
      ok = true;
    for (int s = 0; s < n; s++)
      if (!seen[s] && (atomic_load(&C->related[(size_t)s * NPROC + (size_t)u]) ||
                       atomic_load(&C->related[(size_t)u * NPROC + (size_t)s]))) {
        seen[s] = 1;
        queue[tail++] = s;
      }
  }
  free(queue);
  free(seen);
  return ok;
}

static void end_checks(int n) {
  /* pids: no value twice */
  syncq_po_pid *pids = malloc((size_t)n * sizeof *pids);
  assert_non_null(pids);
  int np = 0;
  for (int i = 0; i < n; i++)
    if (!C->recs[i].unused && atomic_load(&C->recs[i].pid) >= 0) pids[np++] = atomic_load(&C->recs[i].pid);
  qsort(pids, (size_t)np, sizeof *pids, cmp_pid);
  for (int i = 1; i < np; i++)
    if (pids[i] == pids[i - 1]) failure("pid %d was handed out twice", (int)pids[i]);
  free(pids);
  for (int i = 0; i < n; i++) {
    rec *r = &C->recs[i];
    if (r->got != NULL) qsort(r->got, (size_t)r->ngot, sizeof *r->got, cmp_got);
    for (int j = 1; j < r->ngot; j++)
      if (cmp_got(&r->got[j - 1], &r->got[j]) == 0)
        failure("process %d received %s message %d of process %d twice", i, r->got[j].seq < 0 ? "delayed" : "plain",
                (int)(r->got[j].seq < 0 ? -r->got[j].seq : r->got[j].seq), (int)r->got[j].from);
  }
  for (int k = 0; k < NSINK; k++) qsort(C->sink_got[k], (size_t)C->sink_ngot[k], sizeof(got), cmp_got);
  for (int i = 0; i < n; i++) {
    rec *r = &C->recs[i];
    int_fast64_t truth = atomic_load(&C->truth[i]);
    if (truth != INT64_MIN && !possible_reason(i, (int32_t)truth, n))
      failure("process %d went down with reason %d: neither its own (%d) nor a signal's", i, (int)truth,
              (int)r->vol_reason);
    /* every message to a sink arrived (the sinks' order check saw no gap) */
    for (int k = 0; k < NSINK; k++)
      if (r->sink_sent[k] > 0 && !has_got(C->sink_got[k], C->sink_ngot[k], i, r->sink_sent[k]))
        failure("sink %d never got message %d of process %d", k, (int)r->sink_sent[k], i);
    /* every message to a chaos process that received until its end */
    for (int j = 0; j < r->nsent; j++) {
      sent *s = &r->sent[j];
      rec *to = &C->recs[s->to];
      if (s->open && to->completed && !has_got(to->got, to->ngot, i, s->seq))
        failure("process %d never got message %d of process %d (sent while it received)", s->to, (int)s->seq, i);
    }
    if (!r->completed) continue;
    for (int j = 0; j < r->nmon; j++) {
      mon *mo = &r->mons[j];
      if (mo->state != MON_DEMON_OK && mo->downs != 1)
        failure("process %d: its monitor of %d got %d DOWNs", i, (int)mo->target, (int)mo->downs);
    }
    for (int j = 0; j < r->nlink; j++) {
      lnk *l = &r->links[j];
      if (r->cls == CLS_TRAP && l->state == LINK_FIRED && l->exits != 1)
        failure("process %d (trapping): its link to %d fired with %d EXIT messages", i, (int)l->target, (int)l->exits);
      int_fast64_t down = atomic_load(&C->truth[l->target]);
      if (r->cls == CLS_TRAP && l->exits == 1 && l->reason != SYNCQ_PO_NOPROC && down != INT64_MIN && l->reason != down)
        failure("process %d (trapping): EXIT of its link to %d with reason %d, its DOWN had %d", i, (int)l->target,
                (int)l->reason, (int)down);
    }
  }
  int nsig = atomic_load(&C->nsig);
  for (int k = 0; k < nsig; k++) {
    sig *g = &C->sigs[k];
    rec *to = &C->recs[atomic_load(&g->to)];
    if (atomic_load(&g->ok) && atomic_load(&g->open) && to->completed && to->cls == CLS_TRAP &&
        atomic_load(&g->received) != 1)
      failure("exit signal %d from %d to trapping process %d: received %d times", SIG_BASE + k, atomic_load(&g->from),
              atomic_load(&g->to), atomic_load(&g->received));
  }
  for (int k = 0; k < NNAMES; k++) {
    char name[16];
    syncq_po_pid p;
    name_of(k, name);
    int s = syncq_po_whereis(C->sys, name, &p);
    if (s != SYNCQ_ENOENT)
      failure("name %s maps to pid %d after every process exited (%s)", name, (int)p, syncq_strerror(s));
  }
}

static const char *op_name(int op) {
  static const char *const names[] = {"send",      "send",  "send",   "recv_timeout", "try_recv", "monitor",
                                      "demonitor", "link",  "unlink", "trap_exits",   "names",    "exit signal",
                                      "spawn",     "spawn", "sleep",  "blocking"};
  if (op == 100) return "final: waiting for a DOWN of process";
  if (op == 102) return "final: waiting for the link's EXIT of process";
  if (op == 101) return "final: draining";
  return op >= 0 && op < 16 ? names[op] : "?";
}

static void run_seed(uint64_t seed, const char *mailbox) {
  chaos *c = calloc(1, sizeof *c);
  assert_non_null(c);
  C = c;
  c->seed = seed;
  pthread_mutex_init(&c->fail_lock, NULL);
  syncq_po_config cfg = {mailbox, MAX_PROCS, FIBERS ? FIBER_STACK : 0, 0, PO_TEST_BACKEND, FIBERS ? SCHEDULERS : 0,
                         false};
  int r = syncq_po_create(&cfg, &c->sys);
  if (r != SYNCQ_OK) fail_msg("creating a %s system: %s", PO_TEST_BACKEND, syncq_strerror(r));
  uint32_t gens = syncq_po_pid_generations(c->sys);
  c->slot_bits = 31u;
  while (gens > 1) gens >>= 1, c->slot_bits--;
  uint32_t nslots = 1u << c->slot_bits;
  c->recs = calloc(NPROC, sizeof *c->recs);
  c->slot_holder = calloc(nslots, sizeof *c->slot_holder);
  c->related = calloc((size_t)NPROC * NPROC, 1);
  c->last_seq = calloc((size_t)NPROC * NPROC, sizeof *c->last_seq);
  c->truth = calloc(NPROC, sizeof *c->truth);
  c->sigs = calloc((size_t)NPROC * OPS, sizeof *c->sigs);
  assert_true(c->recs && c->slot_holder && c->related && c->last_seq && c->truth && c->sigs);
  for (int i = 0; i < NPROC; i++) {
    atomic_store(&c->recs[i].pid, -1);
    atomic_store(&c->truth[i], INT64_MIN);
  }
  for (int i = 0; i < NPROC * OPS; i++) atomic_store(&c->sigs[i].to, -1), atomic_store(&c->sigs[i].from, -1);

  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(c->sys, &me), SYNCQ_OK);
  atomic_store(&c->slot_holder[(uint32_t)syncq_po_pid_of(me) & (nslots - 1)], -1);
  for (int k = 0; k < NSINK; k++) {
    assert_int_equal(syncq_po_spawn(c->sys, sink, (void *)(intptr_t)k, &c->sinks[k]), SYNCQ_OK);
    atomic_store(&c->slot_holder[(uint32_t)c->sinks[k] & (nslots - 1)], -1);
  }
  /* Roots: a few processes started from main, and more whenever the
   * trees thin out (every process may die early), until NPROC are taken. */
  for (int i = 0; i < 4; i++) spawn_child(NULL, NULL, false);

  /* Watch: every process taken has returned, and none can take more. */
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    int n = atomic_load(&c->next_idx);
    if (n > NPROC) n = NPROC;
    int running = 0;
    for (int i = 0; i < n; i++) running += !atomic_load(&c->recs[i].done);
    int n2 = atomic_load(&c->next_idx);
    if (n2 > NPROC) n2 = NPROC;
    if (running == 0 && n2 == n && n == NPROC) break;
    if (n2 < NPROC && syncq_po_live(c->sys) < MAX_PROCS / 2) spawn_child(NULL, NULL, false);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - t0.tv_sec > WATCHDOG_S) {
      for (int i = 0; i < n; i++) {
        if (!atomic_load(&c->recs[i].done)) {
          int op = atomic_load(&c->recs[i].last_op);
          fprintf(stderr, "  process %d (pid %d, class %d): still running, last operation %s", i,
                  (int)atomic_load(&c->recs[i].pid), c->recs[i].cls, op_name(op));
          if (op == 100 || op == 102) fprintf(stderr, " %d", atomic_load(&c->recs[i].wait_on));
          fputc('\n', stderr);
        }
      }
      fail_msg("seed %llu (%s): %d of %d processes still running after %d s (failures so far: %d, first: %s)",
               (unsigned long long)seed, mailbox, running, n, WATCHDOG_S, atomic_load(&c->failures), c->first_failure);
    }
    syncq_po_msg *m;
    if (syncq_po_recv_timeout(me, 2 * MS, &m) == SYNCQ_OK) {
      failure("main got a message of type %#x", (unsigned)m->type);
      syncq_po_free(me, m);
    }
  }
  /* the detached processes' slots go back once their stacks are pooled */
  for (int i = 0; syncq_po_live(c->sys) != 1 + NSINK; i++) {
    if (i == WATCHDOG_S * 1000)
      fail_msg("seed %llu: %u processes live after every chaos process returned", (unsigned long long)seed,
               syncq_po_live(c->sys));
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  int n = atomic_load(&c->next_idx);
  if (n > NPROC) n = NPROC;
  for (int k = 0; k < NSINK; k++) {
    syncq_po_msg *m;
    assert_int_equal(syncq_po_get(me, 1, &m), SYNCQ_OK);
    m->type = T_STOP;
    assert_int_equal(syncq_po_send(me, c->sinks[k], m, SYNCQ_PO_LINK), SYNCQ_OK);
    assert_int_equal(syncq_po_join(c->sys, c->sinks[k]), SYNCQ_OK);
  }
  end_checks(n);
  int completed = 0, killed = 0, unused = 0;
  for (int i = 0; i < n; i++)
    completed += c->recs[i].completed, killed += c->recs[i].killed, unused += c->recs[i].unused;
  int downs = 0, links = 0, fired = 0, msgs = 0, reused = 0;
  for (int i = 0; i < n; i++) {
    rec *q = &c->recs[i];
    for (int j = 0; j < q->nmon; j++) downs += q->mons[j].downs;
    for (int j = 0; j < q->nlink; j++) links++, fired += q->links[j].state == LINK_FIRED;
    msgs += q->ngot;
    reused += !q->unused && (uint32_t)atomic_load(&q->pid) >> c->slot_bits != 0;
  }
  for (int k = 0; k < NSINK; k++) msgs += c->sink_ngot[k];
  fprintf(stderr,
          "seed %#llx (%s): %d processes (%d on a reused slot), %d completed, %d killed, %d spawns refused; "
          "%d messages, %d DOWNs, %d links (%d fired), %d exit signals\n",
          (unsigned long long)seed, mailbox, n, reused, completed, killed, unused, msgs, downs, links, fired,
          atomic_load(&c->nsig));
  int fails = atomic_load(&c->failures);
  if (fails != 0)
    fail_msg("seed %llu (%s): %d failures; first: %s", (unsigned long long)seed, mailbox, fails, c->first_failure);
  /* the mix reached what it means to exercise */
  if (completed == 0 || killed == 0 || unused > n / 2)
    fail_msg("seed %llu (%s): a degenerate run: %d processes, %d completed, %d killed, %d refused",
             (unsigned long long)seed, mailbox, n, completed, killed, unused);
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(c->sys), SYNCQ_OK);
  for (int i = 0; i < NPROC; i++) {
    free(c->recs[i].sent);
    free(c->recs[i].got);
  }
  for (int k = 0; k < NSINK; k++) free(c->sink_got[k]);
  free(c->recs);
  free(c->slot_holder);
  free(c->related);
  free(c->last_seq);
  free(c->truth);
  free(c->sigs);
  pthread_mutex_destroy(&c->fail_lock);
  free(c);
  C = NULL;
}

static const uint64_t seeds[] = {0x1,
                                 0x2545F4914F6CDD1Dull,
                                 0x9E3779B97F4A7C15ull,
                                 0xD1B54A32D192ED03ull,
                                 0x8CB92BA72F3D8DD7ull,
                                 0xF1357AEA2E62A9C5ull,
                                 0x94D049BB133111EBull,
                                 0xBF58476D1CE4E5B9ull,
                                 0x2127599BF4325C37ull,
                                 0x880355F21E6D1965ull,
                                 0xA0761D6478BD642Full,
                                 0xE7037ED1A0B428DBull};
/* every mailbox algorithm, twice each */
static const char *const mailboxes[] = {"mutex", "nonblocking", "mpsc", "ttas", "two-lock", "mutex-nofree"};

static void test_chaos(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
    run_seed(seeds[i], mailboxes[i % (sizeof mailboxes / sizeof mailboxes[0])]);
}

int main(void) {
  test_plan_confine();
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_chaos)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
