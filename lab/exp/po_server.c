/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_server.c — po-server: a request/reply server that spawns one process
 * per request, the work an actor runtime is most often given, on the
 * postoffice and on real Erlang and Go run by the lab in the same run.
 *
 * A client sends R requests to one server process, one at a time, each
 * waiting for its reply; the server spawns a process per request, which
 * replies to the client with the request's number and exits. Metric:
 * us per request (the client's R round trips over R): a spawn, the
 * hops, an exit.
 *
 * syncq: the client is main's work run by syncq_po_run (a fiber in a
 * fiber system); the server links the request message on to the worker
 * it spawned (as Erlang's spawn carries the request into the new
 * process), the worker links it back to the client as the reply, and
 * the client sends the same message again as its next request: no
 * allocation in the steady state. Workers are spawned detached
 * (syncq_po_spawn_detached), as every Erlang process is: a worker's slot
 * is freed when it exits, and the next one takes it with a new generation
 * (the recycled-pid path); nobody joins, in the postoffice as in Erlang
 * and Go.
 *
 * The watch (lab_po_watch, lab/po_faults.h): a thread attached to the
 * system reads, every LAB_PO_WATCH_NS, the system's count of processes
 * started (each request spawns its worker, so the library's own count
 * moves with every request and the hot path does nothing for the watch).
 * Once it has not moved for LAB_QUEUE_LOST_MS it sends the server and the client
 * an abandon message: the server passes it to its last worker (found
 * waiting: the hand-over was lost) and returns, the client stops its
 * requests, so the sample fails naming the lost message and its
 * processes are gone. A reply whose number is not the request's is a
 * duplicate, and so is a reply left in the client's inbox once every
 * worker has exited, or a worker more than the requests (the count).
 *
 * Variants: "fiber:<mailbox>" (mpsc, nonblocking, mutex), "thread:mpsc"
 * (a kernel thread per request; a tenth of the requests, the metric is
 * per request), and the peers "erlang" (lab/peers/server/server.erl) and
 * "go" (lab/peers/server/server.go). R: 100,000 (1,000 for the smoke
 * test).
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../lab.h"
#include "../po_faults.h"
#include "po_peer.h"
#include "syncq/clock.h"
#include "syncq/po.h"

#ifndef SYNCQ_SERVER_ERL
#define SYNCQ_SERVER_ERL ""
#endif
#ifndef SYNCQ_SERVER_GO
#define SYNCQ_SERVER_GO ""
#endif

enum { SERVER_REQUEST = 1, SERVER_REPLY, SERVER_QUIT, SERVER_ABANDON };
#define SERVER_THREAD_SHARE 10               /* kernel threads serve R / 10 requests */
#define SERVER_DESTROY_WAIT_NS 2000000000ull /* the last detached worker's exit, at most */
#define NS_PER_US 1e3

static const po_peers server_peers = {SYNCQ_SERVER_ERL, SYNCQ_SERVER_GO, "lab/peers/server/server.go"};

typedef struct server_point {
  po_line line;
  long requests;
} server_point;

/* One system at a time: the sample's system and its failures. */
static syncq_po_system *server_sys;
static _Atomic(int) server_errors;

/* The watch: the pids the watcher releases, and what it and the server
 * saw (seq_cst: written once a sample, read after syncq_po_run). */
typedef struct server_watch {
  syncq_po_pid client, server;
  uint32_t started;          /* processes started before the first request */
  _Atomic(uint32_t) stalled; /* processes started when the watch fired (0: it did not) */
  _Atomic(int) handover;     /* the server's last worker was still waiting for its request */
  _Atomic(int) armed;        /* the client has started its requests */
  lab_po_watch *watch;
} server_watch;
static server_watch server_w;

/* An abandon message from self to pid: SYNCQ_OK when pid took it. */
static int server_abandon(syncq_po_proc *self, syncq_po_pid pid) {
  syncq_po_msg *m;
  int r = syncq_po_get(self, 0, &m);
  if (r != SYNCQ_OK) return r;
  m->type = SERVER_ABANDON;
  m->len = 0;
  if ((r = syncq_po_send(self, pid, m, SYNCQ_PO_LINK)) != SYNCQ_OK) syncq_po_free(self, m);
  return r;
}

/* The watch (lab_po_watch): owed once the client has started its
 * requests; moving while processes are started. */
static bool server_reading(void *arg, bool *moving) {
  uint32_t *last = arg, st = syncq_po_count(server_sys);
  *moving = st != *last;
  *last = st;
  return atomic_load(&server_w.armed) != 0;
}

static void server_release(syncq_po_proc *self, void *arg) {
  atomic_store(&server_w.stalled, *(uint32_t *)arg);
  (void)server_abandon(self, server_w.server);
  (void)server_abandon(self, server_w.client);
}

/* The worker: takes the request the server links to it and links it back
 * to the client (the pid in its argument) as the reply. */
static void server_worker(syncq_po_proc *self, void *arg) {
  syncq_po_pid client = (syncq_po_pid)(intptr_t)arg;
  syncq_po_msg *m;
  if (syncq_po_recv_blocking(self, &m) != SYNCQ_OK) {
    atomic_fetch_add(&server_errors, 1);
    return;
  }
  if (m->type == SERVER_ABANDON) {
    syncq_po_free(self, m);
    return;
  }
  m->type = SERVER_REPLY;
  if (lab_po_send(self, client, m, SYNCQ_PO_LINK) != SYNCQ_OK) {
    syncq_po_free(self, m);
    atomic_fetch_add(&server_errors, 1);
  }
}

static void server_proc(syncq_po_proc *self, void *arg) {
  (void)arg;
  syncq_po_pid w = -1; /* the last worker */
  for (;;) {
    syncq_po_msg *m;
    if (syncq_po_recv_blocking(self, &m) != SYNCQ_OK) {
      atomic_fetch_add(&server_errors, 1);
      break;
    }
    if (m->type == SERVER_ABANDON && w >= 0 && syncq_po_send(self, w, m, SYNCQ_PO_LINK) == SYNCQ_OK) {
      atomic_store(&server_w.handover, 1); /* the worker was waiting: its request never came */
      break;
    }
    if (m->type != SERVER_REQUEST) {
      syncq_po_free(self, m);
      break; /* quit, or the watcher's abandon */
    }
    if (syncq_po_spawn_detached(server_sys, server_worker, (void *)(intptr_t)m->sender, &w) != SYNCQ_OK ||
        lab_po_send(self, w, m, SYNCQ_PO_LINK) != SYNCQ_OK) {
      /* The client must not wait for ever: it gets a reply it rejects. */
      int64_t none = -1;
      memcpy(m->data, &none, sizeof none);
      m->type = SERVER_REPLY;
      if (syncq_po_send(self, m->sender, m, SYNCQ_PO_LINK) != SYNCQ_OK) syncq_po_free(self, m);
      atomic_fetch_add(&server_errors, 1);
      break;
    }
  }
}

typedef struct server_client_arg {
  long requests;
  uint64_t ns;
  int64_t abandoned_at; /* the request whose reply the watcher's abandon ended (-1: none) */
  int64_t dup;          /* a reply's number that came twice (-1: none) */
  uint32_t workers;     /* processes started for the requests */
} server_client_arg;

static int server_client(syncq_po_proc *self, void *arg) {
  server_client_arg *a = arg;
  syncq_po_pid server;
  int r = syncq_po_spawn(server_sys, server_proc, NULL, &server);
  if (r != SYNCQ_OK) return r;
  server_w.client = syncq_po_pid_of(self);
  server_w.server = server;
  syncq_po_msg *m;
  if ((r = syncq_po_get(self, sizeof(int64_t), &m)) != SYNCQ_OK) {
    if (server_abandon(self, server) == SYNCQ_OK) (void)syncq_po_join(server_sys, server);
    return r;
  }
  server_w.started = syncq_po_count(server_sys);
  atomic_store(&server_w.armed, 1);
  uint64_t t0 = syncq_now_ns();
  for (int64_t i = 0; i < a->requests && r == SYNCQ_OK; i++) {
    m->type = SERVER_REQUEST;
    memcpy(m->data, &i, sizeof i);
    if ((r = lab_po_send(self, server, m, SYNCQ_PO_LINK)) != SYNCQ_OK) break;
    if ((r = syncq_po_recv_blocking(self, &m)) != SYNCQ_OK) {
      m = NULL; /* m was sent: nothing to free */
      break;
    }
    int64_t got;
    memcpy(&got, m->data, sizeof got);
    if (m->type == SERVER_ABANDON) {
      a->abandoned_at = i;
      r = SYNCQ_ETIMEDOUT;
    } else if (m->type != SERVER_REPLY || got != i) {
      if (m->type == SERVER_REPLY && got >= 0 && got < i) a->dup = got;
      r = SYNCQ_EINVAL;
    }
  }
  a->ns = syncq_now_ns() - t0;
  if (m != NULL && r != SYNCQ_OK && r != SYNCQ_EINVAL && r != SYNCQ_ETIMEDOUT) {
    syncq_po_free(self, m);
  } else if (m != NULL) {
    m->type = SERVER_QUIT;
    if (lab_po_send(self, server, m, SYNCQ_PO_LINK) != SYNCQ_OK) syncq_po_free(self, m);
  }
  int j = syncq_po_join(server_sys, server);
  a->workers = syncq_po_count(server_sys) - server_w.started;
  if (r == SYNCQ_OK && j == SYNCQ_OK) {
    /* Every worker gone (the client and the watch left), their sends
     * are done: a reply still here is a second one. */
    for (uint64_t w0 = syncq_now_ns(); syncq_po_live(server_sys) > 2 && syncq_now_ns() - w0 < SERVER_DESTROY_WAIT_NS;)
      (void)syncq_po_yield(self);
    while (syncq_po_try_recv(self, &m) == SYNCQ_OK) {
      int64_t got;
      memcpy(&got, m->data, sizeof got);
      if (m->type == SERVER_REPLY) a->dup = got;
      syncq_po_free(self, m);
    }
  }
  (void)lab_po_watch_stop(self, server_w.watch);
  return r != SYNCQ_OK ? r : j;
}

static int syncq_server(const server_point *pt, double *us, char *why, size_t whylen) {
  syncq_po_config cfg = {pt->line.mailbox, 9, 0, 0, pt->line.backend, 0, false};
  int r = syncq_po_create(&cfg, &server_sys);
  if (r != SYNCQ_OK) {
    snprintf(why, whylen, "creating a %s postoffice: %s", pt->line.name, syncq_strerror(r));
    return r;
  }
  atomic_store(&server_errors, 0);
  atomic_store(&server_w.stalled, 0);
  atomic_store(&server_w.handover, 0);
  atomic_store(&server_w.armed, 0);
  lab_po_faults_reset();
  server_client_arg a = {pt->requests, 0, -1, -1, 0};
  uint32_t last = 0;
  lab_po_watch watch = {.sys = server_sys, .reading = server_reading, .release = server_release, .arg = &last};
  server_w.watch = &watch;
  int result = SYNCQ_OK;
  r = lab_po_watch_start(&watch);
  if (r == SYNCQ_OK) r = syncq_po_run(server_sys, server_client, &a, &result);
  (void)lab_po_watch_join(&watch);
  if (r == SYNCQ_OK) r = result;
  uint32_t stalled = atomic_load(&server_w.stalled);
  if (stalled != 0) {
    long at = (long)a.abandoned_at;
    char what[96];
    if (at < 0) snprintf(what, sizeof what, "the client's quit to the server, after its %ld replies", pt->requests);
    else if (atomic_load(&server_w.handover))
      snprintf(what, sizeof what, "the server's hand-over of request %ld to its worker", at);
    else if (stalled - server_w.started > (uint32_t)at) snprintf(what, sizeof what, "the reply to request %ld", at);
    else snprintf(what, sizeof what, "request %ld, for which the server spawned no worker", at);
    snprintf(why, whylen, "%s lost a message: %s; no process was spawned for %d ms (%ld of %ld replies came)",
             pt->line.name, what, LAB_QUEUE_LOST_MS, at < 0 ? pt->requests : at, pt->requests);
    r = SYNCQ_ETIMEDOUT;
  } else if (a.dup >= 0) {
    snprintf(why, whylen, "%s gave out a message twice: a second reply to request %lld (a duplicate)", pt->line.name,
             (long long)a.dup);
    r = SYNCQ_EINVAL;
  } else if (r == SYNCQ_OK && a.workers != (uint32_t)pt->requests) {
    snprintf(why, whylen, "%s gave out a message twice: the server spawned %u workers for %ld requests (a duplicate)",
             pt->line.name, a.workers, pt->requests);
    r = SYNCQ_EINVAL;
  } else if (r != SYNCQ_OK) {
    const char *lim = syncq_po_limit_reason(server_sys);
    snprintf(why, whylen, "the client failed: %s (limit: %s)", syncq_strerror(r), lim ? lim : "none named");
  }
  /* The last worker may still be returning after its reply: destroy
   * answers SYNCQ_EBUSY while a detached process runs; wait a bounded time. */
  int d = syncq_po_destroy(server_sys);
  for (uint64_t t0 = syncq_now_ns(); d == SYNCQ_EBUSY && syncq_now_ns() - t0 < SERVER_DESTROY_WAIT_NS;) {
    struct timespec nap = {0, 100000}; /* 100 us */
    nanosleep(&nap, NULL);
    d = syncq_po_destroy(server_sys);
  }
  server_sys = NULL;
  if (r != SYNCQ_OK) return r;
  if (d != SYNCQ_OK) {
    snprintf(why, whylen, "destroying the postoffice: %s", syncq_strerror(d));
    return d;
  }
  int errors = atomic_load(&server_errors);
  if (errors != 0) {
    snprintf(why, whylen, "%d failed calls in the server or its workers", errors);
    return SYNCQ_EINVAL;
  }
  *us = (double)a.ns / NS_PER_US / (double)pt->requests;
  return SYNCQ_OK;
}

static int peer_server(const server_point *pt, double *us, char *why, size_t whylen) {
  char n[32], out[256];
  snprintf(n, sizeof n, "%ld", pt->requests);
  const char *args[] = {n, NULL};
  if (po_peer_run(pt->line.peer, server_peers.erl_script, server_peers.go_bin, args, out, sizeof out, why, whylen) != 0)
    return SYNCQ_ESYS;
  if (sscanf(out, "us_per_request=%lf", us) != 1) {
    snprintf(why, whylen, "the %s server answered %.120s", pt->line.peer, out);
    return SYNCQ_EINVAL;
  }
  return SYNCQ_OK;
}

static int server_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const server_point *pt = arg;
  char why[256] = "";
  double us = 0;
  int r = pt->line.peer ? peer_server(pt, &us, why, sizeof why) : syncq_server(pt, &us, why, sizeof why);
  if (r != SYNCQ_OK) {
    lab_fail(ctx, "po-server %s, %ld requests: %s", pt->line.name, pt->requests, why);
    return -1;
  }
  out->value = us;
  out->ops = (uint64_t)pt->requests;
  return 0;
}

static int server_run(lab_ctx *ctx) {
  long requests = (long)lab_by_size(ctx, 1000, 100000, 100000, 100000);
  bool fibers = po_have_fibers();
  lab_begin(ctx,
            "A client sends %ld requests, one at a time, to one server process, which spawns a process "
            "per request; that process replies to the client with the request's number and exits. "
            "request: us per request (the client's round trips over their number). Lines: the "
            "postoffice on fibers (the client is main's work run as a fiber by syncq_po_run; workers are "
            "spawned detached, so each exit frees its slot and pids are recycled all along) with "
            "three mailboxes, on kernel threads (a thread per request; %ld requests), and, run by the lab "
            "in the same run, the same server in Erlang (escript, spawn and receive) and Go (a goroutine "
            "per request, channels).",
            requests, requests / SERVER_THREAD_SHARE);
  po_peer_notes(ctx, &server_peers, fibers);
  static server_point pts[LAB_MAX_VARIANTS];
  lab_group g;
  memset(&g, 0, sizeof g);
  lab_group_param(&g, "requests", (double)requests);
  lab_group_param(&g, "threads", lab_pus(ctx));
  g.metric = "request";
  g.unit = "us";
  g.sample = server_sample;
  for (int a = 0; po_peer_lines[a] != NULL; a++) {
    server_point pt = {.requests = requests};
    if (!po_line_parse(po_peer_lines[a], &server_peers, fibers, &pt.line)) continue;
    if (pt.line.backend != NULL && strcmp(pt.line.backend, "thread") == 0) pt.requests = requests / SERVER_THREAD_SHARE;
    pts[g.nvariants] = pt;
    g.variants[g.nvariants] = (lab_variant){pt.line.name, &pts[g.nvariants]};
    g.nvariants++;
  }
  g.normalize_to = po_peer_normalize_to(&server_peers);
  return g.nvariants > 0 ? lab_run_group(ctx, &g) : 0;
}

/* request(fiber:<mb>) / request(go) below 1 */
/* clang-format off */
#define REQUEST_BELOW_GO(num)                                                                                      \
  "{\"op\":\"ratio_below\",\"metric\":\"request\",\"num\":\"" num "\",\"den\":\"go\",\"bound\":1.0}"
/* clang-format on */

/* clang-format off */
static const lab_claim server_claims[] = {
  {"syncq target: a request served by a process spawned for it costs a fiber client no more than Go's "
   "goroutine per request, measured in the same run (the best of the mpsc, nonblocking and mutex "
   "mailboxes).",
   "{\"op\":\"any\",\"rules\":[" REQUEST_BELOW_GO("fiber:mpsc") "," REQUEST_BELOW_GO("fiber:nonblocking") ","
   REQUEST_BELOW_GO("fiber:mutex") "]}"},
};
/* clang-format on */

const lab_experiment lab_exp_po_server = {
  .name = "po-server",
  .paper = "002 LaForest 2007, §7 (lightweight processes)",
  .figure = "beyond 002: a request/reply server, a process per request",
  .title =
    "Postoffice request/reply server: a process per request, us per request, fibers vs threads vs Erlang "
    "and Go",
  .x = NULL,
  .log_y = true,
  .log_x = false,
  .claims = server_claims,
  .nclaims = sizeof server_claims / sizeof server_claims[0],
  .uses_registry = false,
  .fixed_algos = po_peer_lines,
  .run = server_run,
  .postoffice = true,
};
