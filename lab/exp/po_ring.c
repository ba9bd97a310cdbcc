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
 * Kernel threads are not run where they cannot finish: 100,000 threads
 * exceed this machine's task limits, and a yielding thread at 1,000 or more
 * costs half a millisecond a hop (each recv spins through all the others).
 * The 100,000-fiber ring runs without guard pages: with one each it needs
 * 200,000 mappings, over the kernel's vm.max_map_count (65,530 by default);
 * a note gives the count the machine allows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lab.h"
#include "syncq/clock.h"
#include "syncq/po.h"

#ifndef SYNCQ_RING_ERL
#define SYNCQ_RING_ERL ""
#endif
#ifndef SYNCQ_ESCRIPT
#define SYNCQ_ESCRIPT ""
#endif
#ifndef SYNCQ_RING_GO
#define SYNCQ_RING_GO ""
#endif

enum { RING_TOKEN = 1, RING_DONE, RING_QUIT };

/* Fibers above this many processes run without guard pages (two mappings
 * each against vm.max_map_count's 65,530). */
#define RING_GUARDED_MAX 30000
#define RING_THREAD_BLOCKING_MAX 6000
#define RING_THREAD_YIELD_MAX 100
/* --quick: kernel threads and every fiber mailbox up to this many, the
 * yield panel up to RING_QUICK_YIELD_MAX (the suite's time budget). */
#define RING_QUICK_THREADS_MAX 1000
#define RING_QUICK_YIELD_MAX 100
#define NS_PER_US 1e3

typedef struct ring_point {
  const char *backend; /* NULL: a peer */
  const char *mailbox;
  const char *peer; /* "erlang", "go" */
  bool blocking;
  int n;
  long hops;
} ring_point;

typedef struct ring_result {
  double spawn_us, hop_ns, rss_kb;
  char why[200];
} ring_result;

/* ------------------------------------------------------------ syncq's ring */

typedef struct ring_prog {
  int n;
  syncq_po_pid first; /* members are first .. first+n-1 */
  syncq_po_pid ctl;
  bool blocking;
  _Atomic(int) errors;
} ring_prog;

static int ring_recv(syncq_po_proc *self, bool blocking, syncq_po_msg **m) {
  return blocking ? syncq_po_recv_blocking(self, m) : syncq_po_recv(self, m);
}

static void ring_member(syncq_po_proc *self, void *arg) {
  ring_prog *g = arg;
  int i = (int)(syncq_po_pid_of(self) - g->first);
  syncq_po_pid next = g->first + (i + 1) % g->n;
  bool last = i == g->n - 1;
  for (;;) {
    syncq_po_msg *m;
    if (ring_recv(self, g->blocking, &m) != SYNCQ_OK) {
      atomic_fetch_add(&g->errors, 1);
      return;
    }
    if (m->type == RING_QUIT) {
      if (syncq_po_send(self, last ? g->ctl : next, m, SYNCQ_PO_LINK) != SYNCQ_OK) atomic_fetch_add(&g->errors, 1);
      return;
    }
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
    if (syncq_po_send(self, to, m, SYNCQ_PO_LINK) != SYNCQ_OK) atomic_fetch_add(&g->errors, 1);
  }
}

/* Send a token of k hops (or a quit) to pid and wait for the reply. */
static int round_trip(syncq_po_proc *me, syncq_po_pid pid, uint32_t type, int64_t k, uint32_t want) {
  syncq_po_msg *m;
  int r = syncq_po_get(me, sizeof k, &m);
  if (r != SYNCQ_OK) return r;
  m->type = type;
  memcpy(m->data, &k, sizeof k);
  if ((r = syncq_po_send(me, pid, m, SYNCQ_PO_LINK)) != SYNCQ_OK) {
    syncq_po_free(me, m);
    return r;
  }
  if ((r = syncq_po_recv_blocking(me, &m)) != SYNCQ_OK) return r;
  r = m->type == want ? SYNCQ_OK : SYNCQ_EINVAL;
  syncq_po_free(me, m);
  return r;
}

static int syncq_ring(const ring_point *pt, ring_result *res) {
  bool fibers = strcmp(pt->backend, "fiber") == 0;
  syncq_po_config cfg = {pt->mailbox, (uint32_t)pt->n + 1, 0, 0, pt->backend, 0, false};
  if (fibers && pt->n > RING_GUARDED_MAX) cfg.guard_size = SYNCQ_PO_NO_GUARD;
  syncq_po_system *sys;
  int r = syncq_po_create(&cfg, &sys);
  if (r != SYNCQ_OK) {
    snprintf(res->why, sizeof res->why, "creating a %s:%s postoffice: %s", pt->backend, pt->mailbox,
             syncq_strerror(r));
    return r;
  }
  syncq_po_proc *me;
  ring_prog g = {pt->n, 0, 0, pt->blocking, 0};
  if ((r = syncq_po_attach(sys, &me)) != SYNCQ_OK) {
    snprintf(res->why, sizeof res->why, "attaching: %s", syncq_strerror(r));
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
  if (r == SYNCQ_OK) r = round_trip(me, g.first, RING_TOKEN, pt->n, RING_DONE); /* warm-up round */
  long rss1 = lab_vm_rss_kb();
  uint64_t t2 = syncq_now_ns();
  if (r == SYNCQ_OK) r = round_trip(me, g.first, RING_TOKEN, pt->hops, RING_DONE);
  uint64_t t3 = syncq_now_ns();
  /* Quit: goes round and comes back; a ring cut short by a failed spawn
   * quits member by member. */
  if (spawned == pt->n) {
    int q = round_trip(me, g.first, RING_QUIT, 0, RING_QUIT);
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
  if (syncq_po_destroy(sys) != SYNCQ_OK && r == SYNCQ_OK) {
    snprintf(res->why, sizeof res->why, "destroying the postoffice");
    r = SYNCQ_EBUSY;
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
  res->rss_kb = rss0 >= 0 && rss1 >= 0 ? (double)(rss1 - rss0) / pt->n : 0.0;
  return SYNCQ_OK;
}

/* ------------------------------------------------------------ the peers */

/* Why the peer cannot run (NULL: it can). */
static const char *peer_absent(const char *peer) {
  if (strcmp(peer, "erlang") == 0) {
    if (SYNCQ_ESCRIPT[0] == '\0') return "escript not found when syncq-lab was built (Debian erlang-base)";
    if (access(SYNCQ_ESCRIPT, X_OK) != 0) return "escript is gone since syncq-lab was built";
    if (access(SYNCQ_RING_ERL, R_OK) != 0) return "lab/peers/ring/ring.erl not found";
    return NULL;
  }
  if (SYNCQ_RING_GO[0] == '\0') return "no Go toolchain was found when syncq-lab was built";
  if (access(SYNCQ_RING_GO, X_OK) != 0) return "the Go ring was not built";
  return NULL;
}

static int peer_ring(const ring_point *pt, ring_result *res) {
  char n[32], h[32];
  snprintf(n, sizeof n, "%d", pt->n);
  snprintf(h, sizeof h, "%ld", pt->hops);
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
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]), close(fds[1]);
    if (strcmp(pt->peer, "erlang") == 0)
      execl(SYNCQ_ESCRIPT, "escript", SYNCQ_RING_ERL, n, h, (char *)NULL);
    else
      execl(SYNCQ_RING_GO, "ring", n, h, (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  char out[512];
  size_t got = 0;
  ssize_t k;
  while (got < sizeof out - 1 && (k = read(fds[0], out + got, sizeof out - 1 - got)) > 0) got += (size_t)k;
  out[got] = '\0';
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      sscanf(out, "spawn_us=%lf hop_ns=%lf rss_kb=%lf", &res->spawn_us, &res->hop_ns, &res->rss_kb) != 3) {
    snprintf(res->why, sizeof res->why, "the %s ring failed (status %d): %.120s", pt->peer, status, out);
    return SYNCQ_ESYS;
  }
  return SYNCQ_OK;
}

static int ring_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const ring_point *pt = arg;
  ring_result res;
  memset(&res, 0, sizeof res);
  int r = pt->peer ? peer_ring(pt, &res) : syncq_ring(pt, &res);
  if (r != SYNCQ_OK) {
    lab_fail(ctx, "po-ring %s%s%s N=%d: %s", pt->peer ? pt->peer : pt->backend, pt->peer ? "" : ":",
             pt->peer ? "" : pt->mailbox, pt->n, res.why);
    return -1;
  }
  out->value = res.hop_ns;
  out->ops = (uint64_t)pt->hops;
  out->extra[0] = res.spawn_us;
  out->extra[1] = res.rss_kb;
  return 0;
}

/* ------------------------------------------------------------ the experiment */

#define N_MAILBOXES 6
static const char *const ring_algos[] = {
  "fiber:mutex",  "fiber:nonblocking",  "fiber:ttas",  "fiber:two-lock",  "fiber:mutex-nofree",  "fiber:mpsc",
  "thread:mutex", "thread:nonblocking", "thread:ttas", "thread:two-lock", "thread:mutex-nofree", "thread:mpsc",
  "erlang",       "go",                 NULL,
};

/* How many vm.max_map_count allows with one guard page each (two mappings). */
static long guarded_fiber_limit(void) {
  FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
  long v = -1;
  if (f != NULL) {
    if (fscanf(f, "%ld", &v) != 1) v = -1;
    fclose(f);
  }
  return v > 0 ? v / 2 : -1;
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
            "hop: ns per hop; spawn: us per process (the spawn loop); rss: KB of resident memory per "
            "process (VmRSS growth from before spawning to after the warm-up round). Lines: the "
            "postoffice's six mailboxes on the fiber backend (user-level contexts, M:N on one scheduler "
            "thread per processing unit) and on the thread backend (a kernel thread each, 002's design), "
            "and, run by the lab in the same run, the same ring in Erlang (escript, processes and "
            "receive) and Go (goroutines and channels). Panels: recv=blocking (syncq: "
            "syncq_po_recv_blocking, a fiber parks and a thread sleeps on a futex; the peers' receive) "
            "and recv=yield (002's Recv(): a thread yields to the kernel while its inbox is empty, a "
            "fiber yields once to the other fibers and then parks; syncq only). Kernel threads run up "
            "to N=%d blocking and N=%d yielding (beyond, a run takes minutes or exceeds the task "
            "limits). With --quick (the suite's time budget) the yield panel stops at 100 processes, "
            "kernel threads at 1,000, and every mailbox runs only on fibers up to 1,000 processes "
            "blocking: elsewhere mpsc, nonblocking and mutex (the default size runs all six "
            "everywhere). The 100,000-fiber ring runs without guard pages (see the note).",
            fiber_hops, thread_hops, yield_hops, RING_THREAD_BLOCKING_MAX, RING_THREAD_YIELD_MAX);
  if (!lab_planning(ctx)) {
    if (!fibers) lab_note(ctx, "The fiber backend is not in this build (libboost-context-dev missing).");
    const char *why;
    if ((why = peer_absent("erlang")) != NULL) lab_note(ctx, "Peer erlang absent: %s.", why);
    else lab_note(ctx, "Peer erlang: %s running %s.", SYNCQ_ESCRIPT, SYNCQ_RING_ERL);
    if ((why = peer_absent("go")) != NULL) lab_note(ctx, "Peer go absent: %s.", why);
    else lab_note(ctx, "Peer go: %s (built from lab/peers/ring/ring.go).", SYNCQ_RING_GO);
    long lim = guarded_fiber_limit();
    lab_note(ctx,
             "Guard pages: a fiber's guard page costs two kernel mappings; vm.max_map_count here allows "
             "about %ld guarded fibers, so rings above %d fibers run without guards (SYNCQ_PO_NO_GUARD), "
             "as Erlang's and Go's processes have none.",
             lim, RING_GUARDED_MAX);
  }
  static ring_point pts[2][5][LAB_MAX_VARIANTS];
  /* --quick: the yield panel stops at 1,000 processes (the time budget). */
  int yield_max = lab_get_size(ctx) <= LAB_SIZE_QUICK ? RING_QUICK_YIELD_MAX : 1 << 30;
  for (int b = 0; b < 2; b++) {
    bool blocking = b == 0;
    for (int i = 0; i < nn; i++) {
      int n = ns[i];
      if (!blocking && n > yield_max) continue;
      lab_group g;
      memset(&g, 0, sizeof g);
      lab_group_param_str(&g, "recv", blocking ? "blocking" : "yield");
      lab_group_param(&g, "processes", n);
      lab_group_param(&g, "threads", lab_pus(ctx));
      g.metric = "hop";
      g.unit = "ns";
      g.sample = ring_sample;
      g.extra[0] = (struct lab_extra_metric){"spawn", "us", false};
      g.extra[1] = (struct lab_extra_metric){"rss", "KB", false};
      g.nextra = 2;
      ring_point *p = pts[b][i];
      for (int a = 0; ring_algos[a] != NULL; a++) {
        const char *algo = ring_algos[a];
        const char *colon = strchr(algo, ':');
        ring_point pt = {NULL, NULL, NULL, blocking, n, fiber_hops};
        if (colon == NULL) {
          if (!blocking || peer_absent(algo) != NULL) continue;
          pt.peer = algo;
        } else {
          pt.backend = strncmp(algo, "fiber", 5) == 0 ? "fiber" : "thread";
          pt.mailbox = colon + 1;
          if (quick && !quick_variant(pt.backend, pt.mailbox, blocking, n)) continue;
          if (strcmp(pt.backend, "fiber") == 0) {
            if (!fibers) continue;
          } else {
            if (n > (blocking ? RING_THREAD_BLOCKING_MAX : RING_THREAD_YIELD_MAX)) continue;
            pt.hops = blocking ? thread_hops : yield_hops;
          }
        }
        if (pt.hops < n) pt.hops = n; /* at least one full round */
        p[g.nvariants] = pt;
        g.variants[g.nvariants] = (lab_variant){algo, &p[g.nvariants]};
        g.nvariants++;
      }
      g.normalize_to = blocking && peer_absent("erlang") == NULL ? "erlang" : NULL;
      if (g.nvariants > 0 && lab_run_group(ctx, &g) != 0) return -1;
    }
  }
  return 0;
}

/* hop(num) / hop(den) below bound at N processes, recv=blocking */
#define HOP_BELOW(num, den, n, bound)                                                                              \
  "{\"op\":\"ratio_below\",\"metric\":\"hop\",\"num\":\"" num "\",\"den\":\"" den                                \
  "\",\"where\":{\"recv\":\"blocking\",\"processes\":" #n "},\"bound\":" #bound "}"
#define BEST_FIBER_BELOW(den, n)                                                                                   \
  "{\"op\":\"any\",\"rules\":[" HOP_BELOW("fiber:mpsc", den, n, 1.0) "," HOP_BELOW("fiber:nonblocking", den, n, 1.0) \
  "," HOP_BELOW("fiber:mutex", den, n, 1.0) "]}"

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
  {"syncq target: a ring of 100,000 fiber processes completes (hop time recorded at N=100,000).",
   "{\"op\":\"value_below\",\"metric\":\"hop\",\"algo\":\"fiber:mpsc\","
   "\"where\":{\"recv\":\"blocking\",\"processes\":100000},\"bound\":1e9}"},
  {"syncq target: spawning a fiber process costs at most 2 us (mpsc mailbox, 6,000 processes).",
   "{\"op\":\"value_below\",\"metric\":\"spawn\",\"algo\":\"fiber:mpsc\","
   "\"where\":{\"recv\":\"blocking\",\"processes\":6000},\"bound\":2.0}"},
  {"syncq target: a fiber process needs at most 8 KB of resident memory (mpsc mailbox, 100,000 processes).",
   "{\"op\":\"value_below\",\"metric\":\"rss\",\"algo\":\"fiber:mpsc\","
   "\"where\":{\"recv\":\"blocking\",\"processes\":100000},\"bound\":8.0}"},
  {"Kernel threads make every hop a trip through the kernel's scheduler: fibers at least 10x faster per "
   "hop than threads at 1,000 processes (mpsc, recv_blocking).",
   HOP_BELOW("fiber:mpsc", "thread:mpsc", 1000, 0.1)},
};

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
};
