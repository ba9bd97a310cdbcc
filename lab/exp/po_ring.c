/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_ring.c — po-ring: the process ring, the classic measure of an actor
 * runtime's message hop (Armstrong's ring), on the postoffice's two
 * backends and on real Erlang and Go run by the lab in the same run.
 *
 * N processes in a ring, each forwarding a token to the next; the token
 * carries the hops left, and the process that takes it to zero tells the
 * controller (the lab's thread, attached as a process). One warm-up round
 * of N hops (every process has run, its stack is touched), then VmRSS is
 * read, then H timed hops, then a quit message goes round and every
 * process exits. Three metrics from one run: hop (ns per hop), spawn (us
 * per process, the spawn loop over N) and rss (KB of resident memory per
 * process: VmRSS growth from before spawning to after the warm-up round).
 *
 * Variants: "<backend>:<mailbox>" for the six mailboxes on both backends
 * ("thread": a kernel thread per process, 002's design; "fiber": M:N
 * user-level contexts), and the peers "erlang" (lab/peers/ring/ring.erl,
 * escript on Debian's erlang-base: Erlang processes, receive) and "go"
 * (lab/peers/ring/ring.go: goroutines and channels), each the same ring,
 * same N and H, reporting the same three metrics the same way. Panels:
 * recv=blocking (syncq_po_recv_blocking: a thread sleeps on a futex, a
 * fiber parks; the peers' receive) and recv=yield (002's Recv(): a thread
 * yields to the kernel while the inbox is empty; a fiber yields once to
 * the other fibers and then parks; syncq only).
 *
 * Panel main=member: main takes part, as a program's main logic does
 * when it talks to its processes: the ring's controller is one of the N
 * members, so every lap passes through it. "fiber:<mailbox>": main's
 * work runs as a fiber by syncq_po_run; "fiber-attached:<mailbox>": the
 * lab's thread attached with syncq_po_attach, a thread among fibers (each
 * lap then wakes a sleeping thread); the peers with the escript's own
 * process and Go's main goroutine in the ring (ring.erl, ring.go given
 * "member"). H is rounded up to whole laps. The other panels have
 * main=outside: the controller only starts and ends the rounds.
 * main=member's watch is a thread attached to the system (lab_po_watch,
 * lab/po_faults.h) reading main's count of laps: main's receive stays
 * recv_blocking; a lost token ends with its abandon, main's quit round
 * and the sample's failure (member_reading); a token back with another
 * count of hops left than the lap leaves is a duplicate (main_lap).
 *
 * Cold spawn: spawn_cold is the spawn metric from a program's first
 * system, nothing cached. The postoffice keeps the fiber stacks, the
 * process table and slab chunks of destroyed systems for the next
 * system, so after the first repetition `spawn` measures warm memory;
 * spawn_cold is measured in syncq-lab-po-cold (lab/exp/po_cold.c), a
 * fresh program started for each sample, which creates a system with the
 * default geometry and spawns the N processes, timed from the first spawn
 * until every one has run once (a fiber takes its stack, with its guard
 * and first page, at its first run, not at spawn): the last to run reads
 * the clock and wakes the spawner, which sleeps meanwhile and so takes no
 * core from the schedulers; each then parks in recv, and the program
 * exits; kernel threads the same way. Where that program is absent, in a
 * forked child of the lab instead, on a guard one page larger than the
 * default (a geometry nothing in the process has used: no kept stack
 * fits; the kept table and slabs come with the fork, copied at each
 * first write, and glibc's own cache of thread stacks too). The peers
 * start a fresh runtime for every run: their spawn is cold, and
 * spawn_cold repeats it; they time it the same way, until every process
 * has run once, the last one reading the clock while the script's
 * process waits in receive (Erlang) or main on a channel (Go); the
 * messages that link Erlang's ring come after (ring.erl, ring.go). A
 * ring of more processes than the stack cache's fixed part keeps
 * (SYNCQ_PO_STACK_CACHE_BYTES) starts from an empty cache, so that rss
 * counts its stacks' pages: its spawn is cold too.
 *
 * Kernel threads are not run where they cannot finish: 100,000 threads
 * exceed this machine's task limits, and a yielding thread at 1,000 or more
 * costs half a millisecond a hop (each recv spins through all the others).
 * Fibers keep the runtime's default guards at every N (po.h, "Stacks":
 * guard markers on Linux 6.13 and later, else guard pages while the
 * kernel's vm.max_map_count allows, else canaries); a note names the
 * kernel and the map count.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lab.h"
#include "../po_faults.h"
#include "po_cold.h"
#include "po_peer.h"
#include "syncq/clock.h"
#include "syncq/po.h"

#ifndef SYNCQ_RING_ERL
#define SYNCQ_RING_ERL ""
#endif
#ifndef SYNCQ_RING_GO
#define SYNCQ_RING_GO ""
#endif
#ifndef SYNCQ_PO_COLD
#define SYNCQ_PO_COLD "" /* syncq-lab-po-cold (lab/CMakeLists.txt) */
#endif

enum { RING_TOKEN = 1, RING_DONE, RING_QUIT, RING_ABANDON };

#define RING_THREAD_BLOCKING_MAX 6000
#define RING_THREAD_YIELD_MAX 100
/* --quick: kernel threads and every fiber mailbox up to this many, the
 * yield panel up to RING_QUICK_YIELD_MAX (the suite's time budget). */
#define RING_QUICK_THREADS_MAX 1000
#define RING_QUICK_YIELD_MAX 100
#define RING_MEMBER_MAX 6000          /* main=member: the sizes the claim reads */
#define RING_QUICK_COLD_MAX 6000      /* --quick: spawn_cold up to this many */
#define RING_QUICK_MEMBER_ERLANG 1000 /* --quick: Erlang with main a member only here */
#define NS_PER_US 1e3

typedef struct ring_point {
  const char *backend; /* NULL: a peer */
  const char *mailbox;
  const char *peer; /* "erlang", "go" */
  bool blocking;
  bool member;   /* main takes part (panel main=member) */
  bool cold;     /* spawn_cold measured too (recv=blocking, main=outside) */
  bool attached; /* ... as an attached thread, not a fiber of syncq_po_run */
  int n;
  long hops;
} ring_point;

typedef struct ring_result {
  double spawn_us, hop_ns, rss_kb, spawn_cold_us;
  char why[200];
} ring_result;

/* ------------------------------------------------------------ syncq's ring */

typedef struct ring_prog {
  syncq_po_system *sys; /* main=member only */
  int n;
  syncq_po_pid first; /* members are first .. first+n-1 */
  syncq_po_pid ctl;
  bool blocking;
  _Atomic(int) errors;
  /* [n] (main=outside): each member's count of the tokens it took, a
   * variable in its own frame (a line the hop touches anyway, where a
   * count in an array of its own would add a cache line, often a miss,
   * to every hop of a large ring), published here at its start; the
   * controller sums them at its slow path (ctl_recv) and after a round
   * (round_check), never while members exit (the quit round is not
   * watched) */
  _Atomic(uint64_t) *_Atomic *took;
  uint64_t expect; /* the tokens the members took in the rounds before this one */
  const ring_point *pt;
  char why[200]; /* round_trip's verdict */
  /* main=member's watch: the laps main has ended (relaxed: main's own
   * count, read by the watch only to see that the ring moves) and the
   * members that have reached their first receive (seq_cst: once each);
   * the watch's last reading of laps is kept in `expect` */
  _Atomic(uint64_t) laps;
  _Atomic(int) started;
  _Atomic(int) armed; /* main has started its laps (seq_cst: once; g->ctl is set before) */
  lab_po_watch *watch;
} ring_prog;

static int ring_recv(syncq_po_proc *self, bool blocking, syncq_po_msg **m) {
  return blocking ? syncq_po_recv_blocking(self, m) : syncq_po_recv(self, m);
}

static void ring_member(syncq_po_proc *self, void *arg) {
  ring_prog *g = arg;
  int i = (int)(syncq_po_pid_of(self) - g->first);
  syncq_po_pid next = g->first + (i + 1) % g->n;
  bool last = i == g->n - 1;
  _Atomic(uint64_t) took;
  atomic_init(&took, 0);
  /* release: pairs with ring_hops_sum's acquire (the count's 0 before its address) */
  atomic_store_explicit(&g->took[i], &took, memory_order_release);
  for (;;) {
    syncq_po_msg *m;
    if (ring_recv(self, g->blocking, &m) != SYNCQ_OK) {
      atomic_fetch_add(&g->errors, 1);
      /* The count dies with this frame while the controller may still
       * watch (ctl_recv): unpublished, this member reads as not started,
       * so the watch stays quiet and the failed receive is what the run
       * reports (errors). relaxed: the controller follows no NULL. */
      atomic_store_explicit(&g->took[i], NULL, memory_order_relaxed);
      return;
    }
    if (m->type == RING_QUIT) {
      if (syncq_po_send(self, last ? g->ctl : next, m, SYNCQ_PO_LINK) != SYNCQ_OK) atomic_fetch_add(&g->errors, 1);
      return;
    }
    /* relaxed: the member's own count, read by the controller only to see
     * that the ring moves and, after a round, through the round's last
     * message (a plain increment: one writer) */
    atomic_store_explicit(&took, atomic_load_explicit(&took, memory_order_relaxed) + 1, memory_order_relaxed);
    int64_t k;
    memcpy(&k, m->data, sizeof k);
    syncq_po_pid to = next;
    if (k == 1) {
      m->type = RING_DONE;
      to = g->ctl;
    } else {
      k--;
      memcpy(m->data, &k, sizeof k);
    }
    if (lab_po_send(self, to, m, SYNCQ_PO_LINK) != SYNCQ_OK) atomic_fetch_add(&g->errors, 1);
  }
}

/* The tokens the members took; *started: how many members have reached
 * their first receive (NULL: not wanted). */
static uint64_t ring_hops_sum(const ring_prog *g, int *started) {
  uint64_t sum = 0;
  int n = 0;
  for (int i = 0; i < g->n; i++) {
    /* acquire: pairs with the member's release of its count's address
     * (NULL: not started yet, no token taken) */
    _Atomic(uint64_t) *c = atomic_load_explicit(&g->took[i], memory_order_acquire);
    /* relaxed: see ring_member */
    if (c != NULL) {
      sum += atomic_load_explicit(c, memory_order_relaxed);
      n++;
    }
  }
  if (started) *started = n;
  return sum;
}

static const char *type_name(uint32_t t) {
  return t == RING_TOKEN ? "token" : t == RING_DONE ? "last hop" : t == RING_QUIT ? "quit" : "message";
}

/* The controller's wait for a round's last message: a receive with a
 * deadline of LAB_PO_WATCH_NS at a time, the members' counts read between
 * them. The round's token is lost once every member has started and none
 * has taken a token for LAB_QUEUE_LOST_MS (lab/po_faults.h): SYNCQ_ETIMEDOUT with g->why. The
 * controller waits once a round, outside the timed hops. */
static int ctl_recv(syncq_po_proc *me, ring_prog *g, int64_t k, syncq_po_msg **m) {
  lab_po_streak s = {0, 0};
  uint64_t before = UINT64_MAX;
  for (;;) {
    int r = syncq_po_recv_timeout(me, LAB_PO_WATCH_NS, m);
    if (r != SYNCQ_ETIMEDOUT) return r;
    /* a member that has not run yet may have the token waiting in its
     * inbox: a large ring's first round waits for every fiber's first
     * run (its stack, its first page), which can take seconds */
    int started;
    uint64_t now = ring_hops_sum(g, &started);
    bool moving = now != before || started < g->n;
    before = now;
    if (!lab_po_streak_lost(&s, moving)) continue;
    snprintf(g->why, sizeof g->why,
             "%s:%s lost 1 of %llu messages: the round's token stopped after %llu of its %lld hops and no member "
             "took a token for %d ms",
             g->pt->backend, g->pt->mailbox, (unsigned long long)(now - g->expect + 1),
             (unsigned long long)(now - g->expect), (long long)k, LAB_QUEUE_LOST_MS);
    return SYNCQ_ETIMEDOUT;
  }
}

/* After a round of k hops that ended (outside the timed hops): each member
 * counts a token before it forwards it, and the last hop's message orders
 * every count before the controller's reading, so a ring that carried one
 * token has taken exactly k more. More or fewer: a second token went
 * round, and this round's last hop may have been the other's. */
static int round_check(ring_prog *g, int64_t k) {
  uint64_t took = ring_hops_sum(g, NULL) - g->expect;
  g->expect += (uint64_t)k;
  if (took == (uint64_t)k) return SYNCQ_OK;
  if (g->why[0] == '\0')
    snprintf(g->why, sizeof g->why,
             "%s:%s gave out a message twice: a round of %lld hops ended after the members took %llu tokens "
             "(a duplicate)",
             g->pt->backend, g->pt->mailbox, (long long)k, (unsigned long long)took);
  return SYNCQ_EINVAL;
}

/* Send a token of k hops (or a quit) to pid and wait for the reply. */
static int round_trip(syncq_po_proc *me, ring_prog *g, syncq_po_pid pid, uint32_t type, int64_t k, uint32_t want) {
  syncq_po_msg *m;
  int r = syncq_po_get(me, sizeof k, &m);
  if (r != SYNCQ_OK) return r;
  m->type = type;
  memcpy(m->data, &k, sizeof k);
  /* a quit is never the faulty send: one lost would leave members waiting
   * that the joins below wait for */
  r = type == RING_QUIT ? syncq_po_send(me, pid, m, SYNCQ_PO_LINK) : lab_po_send(me, pid, m, SYNCQ_PO_LINK);
  if (r != SYNCQ_OK) {
    syncq_po_free(me, m);
    return r;
  }
  /* the quit round unwatched: its members exit, their counts with them */
  if ((r = type == RING_QUIT ? syncq_po_recv_blocking(me, &m) : ctl_recv(me, g, k, &m)) != SYNCQ_OK) return r;
  r = m->type == want ? SYNCQ_OK : SYNCQ_EINVAL;
  if (r != SYNCQ_OK && g->why[0] == '\0')
    snprintf(g->why, sizeof g->why,
             "%s:%s gave out a message twice: a %s came back where the %s was awaited (a duplicate)", g->pt->backend,
             g->pt->mailbox, type_name(m->type), type_name(want));
  syncq_po_free(me, m);
  return r;
}

static int syncq_ring(const ring_point *pt, ring_result *res) {
  syncq_po_config cfg = {pt->mailbox, (uint32_t)pt->n + 1, 0, 0, pt->backend, 0, false};
  syncq_po_system *sys;
  /* rss counts the stacks' pages only when they are fresh: the
   * postoffice keeps a destroyed system's stacks, resident, up to its
   * peak, so a ring larger than the cache's fixed part would get the last
   * repetition's back and its VmRSS would not grow. Such a ring starts
   * from an empty cache (its spawn is then cold). */
  if ((size_t)pt->n * SYNCQ_PO_DEFAULT_FIBER_STACK > SYNCQ_PO_STACK_CACHE_BYTES) (void)syncq_po_stack_cache_trim();
  int r = syncq_po_create(&cfg, &sys);
  if (r != SYNCQ_OK) {
    snprintf(res->why, sizeof res->why, "creating a %s:%s postoffice: %s", pt->backend, pt->mailbox, syncq_strerror(r));
    return r;
  }
  syncq_po_proc *me;
  ring_prog g = {sys, pt->n, 0, 0, pt->blocking, 0, NULL, 0, pt, ""};
  g.took = malloc(sizeof *g.took * (size_t)pt->n);
  if (g.took == NULL) {
    snprintf(res->why, sizeof res->why, "out of memory for the members' counts");
    syncq_po_destroy(sys);
    return SYNCQ_ENOMEM;
  }
  for (int i = 0; i < pt->n; i++) atomic_init(&g.took[i], NULL);
  lab_po_faults_reset();
  if ((r = syncq_po_attach(sys, &me)) != SYNCQ_OK) {
    snprintf(res->why, sizeof res->why, "attaching: %s", syncq_strerror(r));
    free(g.took);
    syncq_po_destroy(sys);
    return r;
  }
  g.ctl = syncq_po_pid_of(me);
  g.first = g.ctl + 1;
  long rss0 = lab_vm_rss_kb();
  uint64_t t0 = syncq_now_ns();
  int spawned = 0;
  for (; spawned < pt->n; spawned++) {
    if ((r = syncq_po_spawn(sys, ring_member, &g, NULL)) != SYNCQ_OK) break;
  }
  uint64_t t1 = syncq_now_ns();
  if (r != SYNCQ_OK) {
    const char *lim = syncq_po_limit_reason(sys);
    snprintf(res->why, sizeof res->why, "spawn %d of %d: %s (limit: %s)", spawned + 1, pt->n, syncq_strerror(r),
             lim ? lim : "none named");
  }
  if (r == SYNCQ_OK) r = round_trip(me, &g, g.first, RING_TOKEN, pt->n, RING_DONE); /* warm-up round */
  if (r == SYNCQ_OK) r = round_check(&g, pt->n);
  long rss1 = lab_vm_rss_kb();
  uint64_t t2 = syncq_now_ns();
  if (r == SYNCQ_OK) r = round_trip(me, &g, g.first, RING_TOKEN, pt->hops, RING_DONE);
  uint64_t t3 = syncq_now_ns();
  if (r == SYNCQ_OK) r = round_check(&g, pt->hops);
  /* Quit: goes round and comes back; a ring cut short by a failed spawn
   * quits member by member. */
  if (spawned == pt->n) {
    int q = round_trip(me, &g, g.first, RING_QUIT, 0, RING_QUIT);
    if (r == SYNCQ_OK) r = q;
  } else {
    g.n = spawned; /* never started: no member has sent yet */
    for (int i = 0; i < spawned; i++) {
      syncq_po_msg *m;
      if (syncq_po_get(me, sizeof(int64_t), &m) != SYNCQ_OK) break;
      m->type = RING_QUIT;
      if (syncq_po_send(me, g.first + i, m, SYNCQ_PO_LINK) != SYNCQ_OK) syncq_po_free(me, m);
    }
  }
  for (int i = 0; i < spawned; i++) syncq_po_join(sys, g.first + i);
  syncq_po_msg *m;
  while (syncq_po_try_recv(me, &m) == SYNCQ_OK) syncq_po_free(me, m);
  syncq_po_detach(me);
  free(g.took);
  if (syncq_po_destroy(sys) != SYNCQ_OK && r == SYNCQ_OK) {
    snprintf(res->why, sizeof res->why, "destroying the postoffice");
    r = SYNCQ_EBUSY;
  }
  if (g.why[0] != '\0') {
    snprintf(res->why, sizeof res->why, "%s", g.why);
    if (r == SYNCQ_OK) r = SYNCQ_EINVAL;
  }
  if (r == SYNCQ_OK && atomic_load(&g.errors) != 0) {
    snprintf(res->why, sizeof res->why, "%d ring members saw a failed send or receive", atomic_load(&g.errors));
    r = SYNCQ_EINVAL;
  }
  if (r != SYNCQ_OK) {
    if (res->why[0] == '\0') snprintf(res->why, sizeof res->why, "the ring failed: %s", syncq_strerror(r));
    return r;
  }
  res->spawn_us = (double)(t1 - t0) / NS_PER_US / pt->n;
  res->hop_ns = (double)(t3 - t2) / (double)pt->hops;
  /* a growth: where the resident set shrank meanwhile (pages the allocator
   * gave back), the processes' own cost was under that noise: 0 */
  res->rss_kb = rss0 >= 0 && rss1 > rss0 ? (double)(rss1 - rss0) / pt->n : 0.0;
  return SYNCQ_OK;
}

/* ------------------------------------------------ main takes part (main=member) */

/* Members are main and first .. first+n-2; member i's successor is
 * first+i+1, the last one's main. A token carries the hops left counting
 * the send that carries it: each receiver forwards k-1, and with H a whole
 * number of laps the last hop (k = 1) lands on main. */
static void member_inner(syncq_po_proc *self, void *arg) {
  ring_prog *g = arg;
  int i = (int)(syncq_po_pid_of(self) - g->first);
  atomic_fetch_add(&g->started, 1);
  for (;;) {
    syncq_po_msg *m;
    if (ring_recv(self, g->blocking, &m) != SYNCQ_OK) {
      atomic_fetch_add(&g->errors, 1);
      return;
    }
    /* read after the receive: main may cut the ring short (n = 0) before it sends */
    syncq_po_pid next = i + 1 < g->n - 1 ? g->first + i + 1 : g->ctl;
    bool quit = m->type == RING_QUIT;
    if (!quit) {
      int64_t k;
      memcpy(&k, m->data, sizeof k);
      if (k <= 1) atomic_fetch_add(&g->errors, 1); /* the last hop is main's */
      k--;
      memcpy(m->data, &k, sizeof k);
    }
    if ((quit ? syncq_po_send(self, next, m, SYNCQ_PO_LINK) : lab_po_send(self, next, m, SYNCQ_PO_LINK)) != SYNCQ_OK) {
      syncq_po_free(self, m);
      atomic_fetch_add(&g->errors, 1);
    }
    if (quit) return;
  }
}

/* A main=member line's backend as its variant names it. */
static const char *member_label(const ring_point *pt) { return pt->attached ? "fiber-attached" : pt->backend; }

/* main's turns for one token of k hops: send it, forward it each time it
 * comes back, until the last hop arrives. A token back with other hops
 * left than the n - 1 members leave it (or a token where the quit was
 * awaited) is a second one: SYNCQ_EINVAL with g->why; the watcher's
 * abandon: SYNCQ_ETIMEDOUT. */
static int main_lap(syncq_po_proc *me, ring_prog *g, uint32_t type, int64_t k) {
  syncq_po_msg *m;
  int r = syncq_po_get(me, sizeof k, &m);
  if (r != SYNCQ_OK) return r;
  m->type = type;
  uint64_t laps = atomic_load_explicit(&g->laps, memory_order_relaxed); /* relaxed: main's own count */
  for (;;) {
    memcpy(m->data, &k, sizeof k);
    /* a quit is never the faulty send: one lost would leave members waiting that the joins wait for */
    if ((r = type == RING_QUIT ? syncq_po_send(me, g->first, m, SYNCQ_PO_LINK)
                               : lab_po_send(me, g->first, m, SYNCQ_PO_LINK)) != SYNCQ_OK) {
      syncq_po_free(me, m);
      return r;
    }
    if ((r = ring_recv(me, g->blocking, &m)) != SYNCQ_OK) return r;
    int64_t back;
    memcpy(&back, m->data, sizeof back);
    if (m->type != type || (type == RING_TOKEN && back != k - (g->n - 1))) {
      uint32_t t = m->type;
      syncq_po_free(me, m);
      if (t == RING_ABANDON) return SYNCQ_ETIMEDOUT;
      if (t == RING_TOKEN && type == RING_QUIT && g->why[0] == '\0')
        snprintf(g->why, sizeof g->why,
                 "%s:%s gave out a message twice: a token came back to main where the quit was awaited (a duplicate)",
                 member_label(g->pt), g->pt->mailbox);
      else if (t == RING_TOKEN && g->why[0] == '\0')
        snprintf(g->why, sizeof g->why,
                 "%s:%s gave out a message twice: a token came back to main with %lld hops left where %lld were "
                 "awaited (a duplicate)",
                 member_label(g->pt), g->pt->mailbox, (long long)back, (long long)(k - (g->n - 1)));
      return SYNCQ_EINVAL;
    }
    /* relaxed: read by the watcher only to see that the ring moves */
    atomic_store_explicit(&g->laps, ++laps, memory_order_relaxed);
    k = back;
    if (type == RING_QUIT || k == 1) break;
    k--;
  }
  syncq_po_free(me, m);
  return SYNCQ_OK;
}

/* main=member's watch (lab_po_watch: a thread attached to the system;
 * main's receive is part of every lap, so no deadline goes there): it
 * reads main's count of laps every LAB_PO_WATCH_NS; once every member has
 * started and no lap has ended for LAB_QUEUE_LOST_MS the token is lost,
 * and it sends main an abandon message (main then sends the quit round,
 * which finds every member waiting). */
static bool member_reading(void *arg, bool *moving) {
  ring_prog *g = arg;
  uint64_t laps = atomic_load_explicit(&g->laps, memory_order_relaxed); /* relaxed: see main_lap */
  *moving = laps != g->expect || atomic_load(&g->started) < g->n - 1;
  g->expect = laps; /* main=member leaves it to the watch */
  return atomic_load(&g->armed) != 0;
}

static void member_release(syncq_po_proc *self, void *arg) {
  ring_prog *g = arg;
  syncq_po_msg *m;
  if (syncq_po_get(self, 0, &m) != SYNCQ_OK) return;
  m->type = RING_ABANDON;
  m->len = 0;
  if (syncq_po_send(self, g->ctl, m, SYNCQ_PO_LINK) != SYNCQ_OK) syncq_po_free(self, m);
}

typedef struct member_run {
  ring_prog g;
  long hops;
  uint64_t spawn_ns, hop_ns;
  int spawned;
} member_run;

/* The ring with main (the caller, a fiber of syncq_po_run or an attached
 * thread) as a member: spawn, one warm-up lap, the timed laps, quit. */
static int member_main(syncq_po_proc *me, void *arg) {
  member_run *mr = arg;
  syncq_po_system *sys = mr->g.sys;
  mr->g.ctl = syncq_po_pid_of(me);
  mr->g.first = mr->g.ctl + 1;
  int r = SYNCQ_OK;
  uint64_t t0 = syncq_now_ns();
  for (; mr->spawned < mr->g.n - 1; mr->spawned++) {
    syncq_po_pid pid;
    if ((r = syncq_po_spawn(sys, member_inner, &mr->g, &pid)) != SYNCQ_OK) break;
    if (pid != mr->g.first + mr->spawned) { /* a fresh system hands out pids in order (po.h) */
      atomic_fetch_add(&mr->g.errors, 1);
      mr->spawned++;
      r = SYNCQ_EINVAL;
      break;
    }
  }
  uint64_t t1 = syncq_now_ns();
  atomic_store(&mr->g.armed, 1);
  if (r == SYNCQ_OK) r = main_lap(me, &mr->g, RING_TOKEN, mr->g.n);
  uint64_t t2 = syncq_now_ns();
  if (r == SYNCQ_OK) r = main_lap(me, &mr->g, RING_TOKEN, mr->hops);
  uint64_t t3 = syncq_now_ns();
  if (r == SYNCQ_ETIMEDOUT) {
    uint64_t laps = atomic_load_explicit(&mr->g.laps, memory_order_relaxed); /* relaxed: main's own count */
    snprintf(mr->g.why, sizeof mr->g.why,
             "%s:%s lost a message: the token stopped after %llu of the %lld laps (main a member) and no lap ended "
             "for %d ms",
             member_label(mr->g.pt), mr->g.pt->mailbox, (unsigned long long)laps, (long long)(1 + mr->hops / mr->g.n),
             LAB_QUEUE_LOST_MS);
  }
  (void)lab_po_watch_stop(me, mr->g.watch);
  if (mr->spawned == mr->g.n - 1) {
    int q = main_lap(me, &mr->g, RING_QUIT, 0);
    if (r == SYNCQ_OK) r = q;
  } else {
    mr->g.n = 0; /* never started: quit member by member, each passing its quit to main */
    for (int i = 0; i < mr->spawned; i++) {
      syncq_po_msg *m;
      if (syncq_po_get(me, sizeof(int64_t), &m) != SYNCQ_OK) break;
      m->type = RING_QUIT;
      if (syncq_po_send(me, mr->g.first + i, m, SYNCQ_PO_LINK) != SYNCQ_OK) syncq_po_free(me, m);
    }
  }
  for (int i = 0; i < mr->spawned; i++) syncq_po_join(sys, mr->g.first + i);
  syncq_po_msg *m;
  while (syncq_po_try_recv(me, &m) == SYNCQ_OK) syncq_po_free(me, m);
  mr->spawn_ns = t1 - t0;
  mr->hop_ns = t3 - t2;
  return r;
}

static int syncq_member_ring(const ring_point *pt, ring_result *res) {
  syncq_po_config cfg = {pt->mailbox, (uint32_t)pt->n + 1, 0, 0, pt->backend, 0, false};
  syncq_po_system *sys;
  int r = syncq_po_create(&cfg, &sys);
  if (r != SYNCQ_OK) {
    snprintf(res->why, sizeof res->why, "creating a %s:%s postoffice: %s", pt->backend, pt->mailbox, syncq_strerror(r));
    return r;
  }
  member_run mr;
  memset(&mr, 0, sizeof mr);
  mr.g.n = pt->n;
  mr.g.blocking = pt->blocking;
  mr.g.sys = sys;
  mr.g.pt = pt;
  atomic_init(&mr.g.laps, 0);
  atomic_init(&mr.g.started, 0);
  atomic_init(&mr.g.armed, 0);
  mr.g.expect = UINT64_MAX;
  lab_po_faults_reset();
  /* the watch first: main and its members then take consecutive pids */
  lab_po_watch watch = {.sys = sys, .reading = member_reading, .release = member_release, .arg = &mr.g};
  mr.g.watch = &watch;
  if ((r = lab_po_watch_start(&watch)) != SYNCQ_OK) {
    snprintf(res->why, sizeof res->why, "starting the watch: %s", syncq_strerror(r));
    (void)syncq_po_destroy(sys);
    return r;
  }
  mr.hops = (pt->hops + pt->n - 1) / pt->n * pt->n; /* whole laps: the last hop is main's */
  int result = SYNCQ_OK;
  if (pt->attached) {
    syncq_po_proc *me;
    if ((r = syncq_po_attach(sys, &me)) == SYNCQ_OK) {
      result = member_main(me, &mr);
      syncq_po_detach(me);
    }
  } else {
    r = syncq_po_run(sys, member_main, &mr, &result);
  }
  (void)lab_po_watch_join(&watch);
  if (r == SYNCQ_OK) r = result;
  if (r != SYNCQ_OK && mr.g.why[0] != '\0') {
    snprintf(res->why, sizeof res->why, "%s", mr.g.why);
  } else if (r != SYNCQ_OK) {
    const char *lim = syncq_po_limit_reason(sys);
    snprintf(res->why, sizeof res->why, "the ring failed after %d spawns: %s (limit: %s)", mr.spawned,
             syncq_strerror(r), lim ? lim : "none named");
  }
  if (syncq_po_destroy(sys) != SYNCQ_OK && r == SYNCQ_OK) {
    snprintf(res->why, sizeof res->why, "destroying the postoffice");
    r = SYNCQ_EBUSY;
  }
  if (r == SYNCQ_OK && atomic_load(&mr.g.errors) != 0) {
    snprintf(res->why, sizeof res->why, "%d ring members saw a failed call or a wrong token",
             atomic_load(&mr.g.errors));
    r = SYNCQ_EINVAL;
  }
  if (r != SYNCQ_OK) return r;
  res->spawn_us = (double)mr.spawn_ns / NS_PER_US / (pt->n - 1);
  res->hop_ns = (double)mr.hop_ns / (double)mr.hops;
  return SYNCQ_OK;
}

/* ------------------------------------------------------------ cold spawn */

/* Where spawn_cold runs: syncq-lab-po-cold, a fresh program per sample,
 * when it is there (at the path it was built at, else beside the running
 * syncq-lab: an installed lab or the portable folder); else a forked
 * child (see po_cold.c for what a fork inherits). "" when absent. */
static const char *cold_helper_path(void) {
  static char beside[PATH_MAX];
  if (SYNCQ_PO_COLD[0] != '\0' && access(SYNCQ_PO_COLD, X_OK) == 0) return SYNCQ_PO_COLD;
  ssize_t n = readlink("/proc/self/exe", beside, sizeof beside - 1);
  if (n <= 0) return "";
  beside[n] = '\0';
  char *slash = strrchr(beside, '/');
  static const char name[] = "syncq-lab-po-cold";
  if (slash == NULL || (size_t)(slash + 1 - beside) + sizeof name > sizeof beside) return "";
  memcpy(slash + 1, name, sizeof name);
  return access(beside, X_OK) == 0 ? beside : "";
}

static bool cold_helper(void) { return cold_helper_path()[0] != '\0'; }

static int cold_spawn_helper(const ring_point *pt, ring_result *res) {
  char n[32], out[128];
  snprintf(n, sizeof n, "%d", pt->n);
  const char *argv[] = {"syncq-lab-po-cold", pt->backend, pt->mailbox, n, NULL};
  if (po_program_run("syncq-lab-po-cold", cold_helper_path(), argv, out, sizeof out, res->why, sizeof res->why) != 0)
    return SYNCQ_ESYS;
  if (sscanf(out, "spawn_cold_us=%lf", &res->spawn_cold_us) != 1 || res->spawn_cold_us <= 0) {
    snprintf(res->why, sizeof res->why, "syncq-lab-po-cold answered %.120s", out);
    return SYNCQ_ESYS;
  }
  return SYNCQ_OK;
}

/* The spawn loop over N in a child process, on a system whose stack
 * geometry nothing in this process has used (the guard one page larger
 * than the default): no kept stack fits, every stack is mapped afresh. */
static int cold_spawn_fork(const ring_point *pt, ring_result *res) {
  int fds[2];
  if (pipe(fds) != 0) {
    snprintf(res->why, sizeof res->why, "pipe failed");
    return SYNCQ_ESYS;
  }
  fflush(NULL);
  pid_t child = fork();
  if (child < 0) {
    close(fds[0]), close(fds[1]);
    snprintf(res->why, sizeof res->why, "fork failed");
    return SYNCQ_ESYS;
  }
  if (child == 0) {
    close(fds[0]);
    long page = sysconf(_SC_PAGESIZE);
    size_t guard = strcmp(pt->backend, "fiber") == 0 ? SYNCQ_PO_DEFAULT_FIBER_GUARD : (size_t)page;
    double us = po_cold_spawn_us(pt->backend, pt->mailbox, pt->n, guard + (size_t)page);
    _exit(write(fds[1], &us, sizeof us) == (ssize_t)sizeof us ? 0 : 1);
  }
  close(fds[1]);
  double us = -1;
  ssize_t got = read(fds[0], &us, sizeof us);
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (got != (ssize_t)sizeof us || us < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    snprintf(res->why, sizeof res->why, "the cold-spawn child failed (status %d)", status);
    return SYNCQ_ESYS;
  }
  res->spawn_cold_us = us;
  return SYNCQ_OK;
}

static int cold_spawn(const ring_point *pt, ring_result *res) {
  return cold_helper() ? cold_spawn_helper(pt, res) : cold_spawn_fork(pt, res);
}

/* ------------------------------------------------------------ the peers */

static const char *peer_absent(const char *peer) { return po_peer_absent(peer, SYNCQ_RING_ERL, SYNCQ_RING_GO); }

static int peer_ring(const ring_point *pt, ring_result *res) {
  char n[32], h[32], out[512];
  snprintf(n, sizeof n, "%d", pt->n);
  snprintf(h, sizeof h, "%ld", pt->hops);
  const char *args[] = {n, h, pt->member ? "member" : NULL, NULL};
  if (po_peer_run(pt->peer, SYNCQ_RING_ERL, SYNCQ_RING_GO, args, out, sizeof out, res->why, sizeof res->why) != 0)
    return SYNCQ_ESYS;
  if (sscanf(out, "spawn_us=%lf hop_ns=%lf rss_kb=%lf", &res->spawn_us, &res->hop_ns, &res->rss_kb) != 3) {
    snprintf(res->why, sizeof res->why, "the %s ring answered %.120s", pt->peer, out);
    return SYNCQ_ESYS;
  }
  /* the peer's VM may give memory back between its two reads (a garbage
   * collection): a growth below zero is noise over a cost under it, as
   * for syncq's own (syncq_ring) */
  if (res->rss_kb < 0) res->rss_kb = 0.0;
  res->spawn_cold_us = res->spawn_us; /* a fresh runtime every run */
  return SYNCQ_OK;
}

static int ring_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const ring_point *pt = arg;
  ring_result res;
  memset(&res, 0, sizeof res);
  int r = pt->peer ? peer_ring(pt, &res) : pt->member ? syncq_member_ring(pt, &res) : syncq_ring(pt, &res);
  if (r == SYNCQ_OK && !pt->peer && pt->cold) r = cold_spawn(pt, &res);
  if (r != SYNCQ_OK) {
    lab_fail(ctx, "po-ring %s%s%s N=%d: %s", pt->peer ? pt->peer : pt->backend, pt->peer ? "" : ":",
             pt->peer ? "" : pt->mailbox, pt->n, res.why);
    return -1;
  }
  out->value = res.hop_ns;
  out->ops = (uint64_t)pt->hops;
  out->extra[0] = res.spawn_us;
  out->extra[1] = res.rss_kb;
  out->extra[2] = res.spawn_cold_us; /* recv=blocking, main=outside: the group's third extra */
  return 0;
}

/* ------------------------------------------------------------ the experiment */

#define N_MAILBOXES 6
static const char *const ring_algos[] = {
  "fiber:mutex",
  "fiber:nonblocking",
  "fiber:ttas",
  "fiber:two-lock",
  "fiber:mutex-nofree",
  "fiber:mpsc",
  "thread:mutex",
  "thread:nonblocking",
  "thread:ttas",
  "thread:two-lock",
  "thread:mutex-nofree",
  "thread:mpsc",
  "erlang",
  "go",
  /* main=member only: main attached as a thread to a fiber system */
  "fiber-attached:mpsc",
  "fiber-attached:nonblocking",
  "fiber-attached:mutex",
  NULL,
};

static long max_map_count(void) {
  FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
  long v = -1;
  if (f != NULL) {
    if (fscanf(f, "%ld", &v) != 1) v = -1;
    fclose(f);
  }
  return v;
}

/* --quick's subset (the suite's time budget): every mailbox on fibers up
 * to 6,000 processes blocking; past that, and on threads, and in the yield
 * panel, the three the claims name (mpsc, nonblocking, mutex: 002's
 * default). The default size runs every mailbox everywhere. */
static bool quick_variant(const char *backend, const char *mailbox, bool blocking, int n) {
  bool named = strcmp(mailbox, "mpsc") == 0 || strcmp(mailbox, "nonblocking") == 0 || strcmp(mailbox, "mutex") == 0;
  if (strcmp(backend, "thread") == 0 && n > RING_QUICK_THREADS_MAX) return false;
  if (strcmp(backend, "fiber") == 0 && blocking && n <= RING_QUICK_THREADS_MAX) return true;
  return named;
}

/* The panels: recv=blocking and recv=yield with main outside the ring,
 * and recv=blocking with main a member. */
enum { PANEL_BLOCKING, PANEL_YIELD, PANEL_MEMBER, NPANELS };

/* Whether algo runs in panel at N processes; fills *pt. */
static bool ring_variant(lab_ctx *ctx, const char *algo, int panel, int n, bool fibers, ring_point *pt) {
  bool quick = lab_get_size(ctx) == LAB_SIZE_QUICK;
  long fiber_hops = (long)lab_by_size(ctx, 2000, 100000, 500000, 1000000);
  long thread_hops = (long)lab_by_size(ctx, 500, 5000, 20000, 50000);
  long yield_hops = (long)lab_by_size(ctx, 200, 2000, 10000, 20000);
  bool blocking = panel != PANEL_YIELD, member = panel == PANEL_MEMBER;
  const char *colon = strchr(algo, ':');
  *pt = (ring_point){NULL, NULL, NULL, blocking, member, false, false, n, fiber_hops};
  pt->cold = panel == PANEL_BLOCKING && !(quick && n > RING_QUICK_COLD_MAX);
  if (colon == NULL) {
    if (!blocking || peer_absent(algo) != NULL) return false;
    /* --quick: Erlang's VM starts for every sample; with main a member it
     * runs at 1,000 processes only (the claims read Go's ring) */
    if (member && quick && strcmp(algo, "erlang") == 0 && n != RING_QUICK_MEMBER_ERLANG) return false;
    pt->peer = algo;
  } else {
    size_t len = (size_t)(colon - algo);
    pt->mailbox = colon + 1;
    pt->attached = len == strlen("fiber-attached") && strncmp(algo, "fiber-attached", len) == 0;
    pt->backend = strncmp(algo, "thread", len) == 0 ? "thread" : "fiber";
    if (member) {
      /* main as a fiber or attached to fibers; the claims' three mailboxes */
      bool named = strcmp(pt->mailbox, "mpsc") == 0 || strcmp(pt->mailbox, "nonblocking") == 0 ||
                   strcmp(pt->mailbox, "mutex") == 0;
      if (!fibers || strcmp(pt->backend, "fiber") != 0 || !named) return false;
      if (pt->attached) pt->hops = thread_hops; /* a thread's wake-up every lap */
    } else {
      if (pt->attached) return false;
      if (quick && !quick_variant(pt->backend, pt->mailbox, blocking, n)) return false;
      if (strcmp(pt->backend, "fiber") == 0) {
        if (!fibers) return false;
      } else {
        if (n > (blocking ? RING_THREAD_BLOCKING_MAX : RING_THREAD_YIELD_MAX)) return false;
        pt->hops = blocking ? thread_hops : yield_hops;
      }
    }
  }
  if (pt->hops < n) pt->hops = n; /* at least one full round */
  return true;
}

static int ring_run(lab_ctx *ctx) {
  bool quick = lab_get_size(ctx) == LAB_SIZE_QUICK;
  static const int smoke[] = {2, 100};
  static const int sweep[] = {2, 100, 1000, 6000, 100000};
  const int *ns = lab_get_size(ctx) == LAB_SIZE_SMOKE ? smoke : sweep;
  int nn = lab_get_size(ctx) == LAB_SIZE_SMOKE ? 2 : 5;
  long fiber_hops = (long)lab_by_size(ctx, 2000, 100000, 500000, 1000000);
  long thread_hops = (long)lab_by_size(ctx, 500, 5000, 20000, 50000);
  long yield_hops = (long)lab_by_size(ctx, 200, 2000, 10000, 20000);
  bool fibers = false;
  for (int i = 0; i < syncq_po_backend_count(); i++) {
    const char *name;
    if (syncq_po_backend_info(i, &name, NULL) == SYNCQ_OK && strcmp(name, "fiber") == 0) fibers = true;
  }
  lab_begin(ctx,
            "A ring of N processes passes a token: each receives it and sends it to the next, %ld hops "
            "(fibers and peers; kernel threads: %ld hops blocking, %ld yielding) after one warm-up round. "
            "hop: ns per hop; spawn: us per process (the spawn loop, on a system whose stack cache the "
            "previous repetition warmed); spawn_cold: the same loop in a fresh program's first system, "
            "timed until every process has run once (syncq-lab-po-cold, started for each sample; the peers "
            "start a fresh runtime every run and time their spawn the same way: it is cold, and spawn_cold "
            "repeats it); rss: KB of resident memory per process (VmRSS "
            "growth from before spawning to after the warm-up round). Lines: the postoffice's six "
            "mailboxes on the fiber backend (user-level contexts, M:N on one scheduler thread per "
            "processing unit) and on the thread backend (a kernel thread each, 002's design), and, run "
            "by the lab in the same run, the same ring in Erlang (escript, processes and receive) and Go "
            "(goroutines and channels). Panels: recv=blocking (syncq: syncq_po_recv_blocking, a fiber "
            "parks and a thread sleeps on a futex; the peers' receive) and recv=yield (002's Recv(): a "
            "thread yields to the kernel while its inbox is empty, a fiber yields once to the other "
            "fibers and then parks; syncq only), both with main=outside (the controller starts and "
            "ends the rounds, outside the ring); and main=member (recv=blocking, N up to 6,000): main "
            "is one of the N members, every lap passes through it: fiber:<mailbox> runs main's work as "
            "a fiber (syncq_po_run), fiber-attached:<mailbox> keeps it an attached thread among the "
            "fibers (%ld hops: a thread's wake-up every lap), and the Erlang and Go rings have the "
            "script's process and the main goroutine as members. Kernel threads run up to N=%d "
            "blocking and N=%d yielding (beyond, a run takes minutes or exceeds the task limits). "
            "With --quick (the suite's time budget) the yield panel stops at 100 processes, kernel "
            "threads at 1,000, and every mailbox runs only on fibers up to 1,000 processes blocking: "
            "elsewhere mpsc, nonblocking and mutex (the default size runs all six everywhere); "
            "spawn_cold stops at 6,000 processes and Erlang's ring with main a member runs at 1,000 "
            "processes only (its VM starts for every sample).",
            fiber_hops, thread_hops, yield_hops, thread_hops, RING_THREAD_BLOCKING_MAX, RING_THREAD_YIELD_MAX);
  if (!lab_planning(ctx)) {
    if (!fibers) lab_note(ctx, "The fiber backend is not in this build (libboost-context-dev missing).");
    const char *why;
    if ((why = peer_absent("erlang")) != NULL) lab_note(ctx, "Peer erlang absent: %s.", why);
    else lab_note(ctx, "Peer erlang: %s running %s.", SYNCQ_ESCRIPT, SYNCQ_RING_ERL);
    if ((why = peer_absent("go")) != NULL) lab_note(ctx, "Peer go absent: %s.", why);
    else lab_note(ctx, "Peer go: %s (built from lab/peers/ring/ring.go).", SYNCQ_RING_GO);
    if (cold_helper()) lab_note(ctx, "Cold spawn: %s, a fresh program per sample.", cold_helper_path());
    else
      lab_note(ctx,
               "Cold spawn: syncq-lab-po-cold is absent (%s): measured in a forked child of the lab "
               "instead, which copies the pages the lab's earlier systems kept at its first write to each.",
               SYNCQ_PO_COLD[0] != '\0' ? SYNCQ_PO_COLD : "not built");
    struct utsname u;
    lab_note(ctx,
             "Guards: every fiber ring, 100,000 processes included, runs with the postoffice's default "
             "guards (page-table guard markers on Linux 6.13 and later; older kernels: guard pages "
             "while vm.max_map_count allows, then canaries). Here: Linux %s, vm.max_map_count %ld.",
             uname(&u) == 0 ? u.release : "(unknown)", max_map_count());
  }
  static ring_point pts[NPANELS][5][LAB_MAX_VARIANTS];
  /* --quick: the yield panel stops at RING_QUICK_YIELD_MAX (the time budget). */
  int yield_max = lab_get_size(ctx) <= LAB_SIZE_QUICK ? RING_QUICK_YIELD_MAX : 1 << 30;
  for (int panel = 0; panel < NPANELS; panel++) {
    for (int i = 0; i < nn; i++) {
      int n = ns[i];
      if (panel == PANEL_YIELD && n > yield_max) continue;
      if (panel == PANEL_MEMBER && n > RING_MEMBER_MAX) continue;
      lab_group g;
      memset(&g, 0, sizeof g);
      lab_group_param_str(&g, "recv", panel == PANEL_YIELD ? "yield" : "blocking");
      lab_group_param_str(&g, "main", panel == PANEL_MEMBER ? "member" : "outside");
      lab_group_param(&g, "processes", n);
      lab_group_param(&g, "threads", lab_pus(ctx));
      g.metric = "hop";
      g.unit = "ns";
      g.sample = ring_sample;
      if (panel != PANEL_MEMBER) {
        g.extra[0] = (struct lab_extra_metric){"spawn", "us", false};
        g.extra[1] = (struct lab_extra_metric){"rss", "KB", false};
        g.nextra = 2;
      }
      if (panel == PANEL_BLOCKING && !(quick && n > RING_QUICK_COLD_MAX))
        g.extra[g.nextra++] = (struct lab_extra_metric){"spawn_cold", "us", false};
      ring_point *p = pts[panel][i];
      for (int a = 0; ring_algos[a] != NULL; a++) {
        ring_point pt;
        if (!ring_variant(ctx, ring_algos[a], panel, n, fibers, &pt)) continue;
        p[g.nvariants] = pt;
        g.variants[g.nvariants] = (lab_variant){ring_algos[a], &p[g.nvariants]};
        g.nvariants++;
      }
      const char *ref = panel == PANEL_MEMBER ? "go" : "erlang";
      g.normalize_to = panel != PANEL_YIELD && peer_absent(ref) == NULL ? ref : NULL;
      if (g.nvariants > 0 && lab_run_group(ctx, &g) != 0) return -1;
    }
  }
  return 0;
}

/* hop(num) / hop(den) below 1 at N processes, main a member of the ring */
/* clang-format off */
#define MEMBER_HOP_BELOW(num, den, n)                                                                              \
  "{\"op\":\"ratio_below\",\"metric\":\"hop\",\"num\":\"" num "\",\"den\":\"" den                                \
  "\",\"where\":{\"recv\":\"blocking\",\"main\":\"member\",\"processes\":" #n "},\"bound\":1.0}"
/* clang-format on */
/* clang-format off */
#define BEST_MEMBER_BELOW(den, n)                                                                                  \
  "{\"op\":\"any\",\"rules\":[" MEMBER_HOP_BELOW("fiber:mpsc", den, n) "," MEMBER_HOP_BELOW("fiber:nonblocking", den, n) \
  "," MEMBER_HOP_BELOW("fiber:mutex", den, n) "]}"
/* clang-format on */

/* hop(num) / hop(den) below bound at N processes, recv=blocking */
/* clang-format off */
#define HOP_BELOW(num, den, n, bound)                                                                              \
  "{\"op\":\"ratio_below\",\"metric\":\"hop\",\"num\":\"" num "\",\"den\":\"" den                                \
  "\",\"where\":{\"recv\":\"blocking\",\"main\":\"outside\",\"processes\":" #n "},\"bound\":" #bound "}"
/* clang-format on */
/* clang-format off */
#define BEST_FIBER_BELOW(den, n)                                                                                   \
  "{\"op\":\"any\",\"rules\":[" HOP_BELOW("fiber:mpsc", den, n, 1.0) "," HOP_BELOW("fiber:nonblocking", den, n, 1.0) \
  "," HOP_BELOW("fiber:mutex", den, n, 1.0) "]}"
/* clang-format on */

/* spawn_cold(num) / spawn_cold(den) below 1 at N processes (recv=blocking, main=outside: where
 * spawn_cold is measured; a peer's spawn_cold is its spawn, a fresh runtime every run) */
/* clang-format off */
#define COLD_SPAWN_BELOW(num, den, n)                                                                              \
  "{\"op\":\"ratio_below\",\"metric\":\"spawn_cold\",\"num\":\"" num "\",\"den\":\"" den                         \
  "\",\"where\":{\"recv\":\"blocking\",\"main\":\"outside\",\"processes\":" #n "},\"bound\":1.0}"
/* clang-format on */
/* clang-format off */
#define BEST_COLD_SPAWN_BELOW(den, n)                                                                              \
  "{\"op\":\"any\",\"rules\":[" COLD_SPAWN_BELOW("fiber:mpsc", den, n) "," COLD_SPAWN_BELOW("fiber:nonblocking", den, n) \
  "," COLD_SPAWN_BELOW("fiber:mutex", den, n) "]}"
/* clang-format on */

/* clang-format off */
static const lab_claim ring_claims[] = {
  {"syncq target: a message hop between fiber processes costs no more than Erlang's, measured in the same "
   "run, at every ring size from 2 to 6,000 processes (the best of the mpsc, nonblocking and mutex "
   "mailboxes, recv_blocking).",
   "{\"op\":\"all\",\"rules\":[" BEST_FIBER_BELOW("erlang", 2) "," BEST_FIBER_BELOW("erlang", 100) ","
   BEST_FIBER_BELOW("erlang", 1000) "," BEST_FIBER_BELOW("erlang", 6000) "]}"},
  {"syncq target: a message hop between fiber processes costs no more than Go's goroutines and channels, "
   "same run, at every ring size from 2 to 6,000 processes.",
   "{\"op\":\"all\",\"rules\":[" BEST_FIBER_BELOW("go", 2) "," BEST_FIBER_BELOW("go", 100) ","
   BEST_FIBER_BELOW("go", 1000) "," BEST_FIBER_BELOW("go", 6000) "]}"},
  {"syncq target: with main taking part in the ring (main's work a fiber, run by syncq_po_run), a message "
   "hop costs no more than Go's, whose main goroutine is a member, same run, at 2, 100, 1,000 and 6,000 "
   "processes (the best of the mpsc, nonblocking and mutex mailboxes).",
   "{\"op\":\"all\",\"rules\":[" BEST_MEMBER_BELOW("go", 2) "," BEST_MEMBER_BELOW("go", 100) ","
   BEST_MEMBER_BELOW("go", 1000) "," BEST_MEMBER_BELOW("go", 6000) "]}"},
  {"syncq target: a ring of 100,000 fiber processes completes (hop time recorded at N=100,000).",
   "{\"op\":\"value_below\",\"metric\":\"hop\",\"algo\":\"fiber:mpsc\","
   "\"where\":{\"recv\":\"blocking\",\"main\":\"outside\",\"processes\":100000},\"bound\":1e9}"},
  {"syncq target: spawning a fiber process costs at most 2 us (mpsc mailbox, 6,000 processes).",
   "{\"op\":\"value_below\",\"metric\":\"spawn\",\"algo\":\"fiber:mpsc\","
   "\"where\":{\"recv\":\"blocking\",\"main\":\"outside\",\"processes\":6000},\"bound\":2.0}"},
  {"syncq target: a cold spawn (a fresh process's first system: every stack and process record mapped "
   "afresh) costs no more than Erlang's spawn in a fresh VM, measured in the same run, at 1,000 and 6,000 "
   "processes (spawn_cold; the best of the mpsc, nonblocking and mutex mailboxes).",
   "{\"op\":\"all\",\"rules\":[" BEST_COLD_SPAWN_BELOW("erlang", 1000) "," BEST_COLD_SPAWN_BELOW("erlang", 6000)
   "]}"},
  {"syncq target: a fiber process needs at most 8 KB of resident memory (mpsc mailbox, 100,000 processes).",
   "{\"op\":\"value_below\",\"metric\":\"rss\",\"algo\":\"fiber:mpsc\","
   "\"where\":{\"recv\":\"blocking\",\"main\":\"outside\",\"processes\":100000},\"bound\":8.0}"},
  {"Kernel threads make every hop a trip through the kernel's scheduler: fibers at least 10x faster per "
   "hop than threads at 1,000 processes (mpsc, recv_blocking).",
   HOP_BELOW("fiber:mpsc", "thread:mpsc", 1000, 0.1)},
};
/* clang-format on */

const lab_experiment lab_exp_po_ring = {
  .name = "po-ring",
  .paper = "002 LaForest 2007, §7 (lightweight processes)",
  .figure = "beyond 002: the process ring",
  .title = "Postoffice process ring: ns per hop, spawn and memory per process, fibers vs threads vs Erlang and Go",
  .x = "processes",
  .log_y = true,
  .log_x = true,
  .claims = ring_claims,
  .nclaims = sizeof ring_claims / sizeof ring_claims[0],
  .uses_registry = false,
  .fixed_algos = ring_algos,
  .run = ring_run,
  .postoffice = true,
};
