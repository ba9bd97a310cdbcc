/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_timer_bench.c — what one fiber parked on a deadline costs the other
 * fibers of its scheduler (docs/reliability.md, "Deadlines on a busy
 * scheduler"). Not a test: a driver, linked against the shared library so
 * that two builds of it can be compared with one binary:
 *
 *   po_timer_bench WORKLOAD PARKED ROUNDS
 *
 * WORKLOAD: ring (100 fibers pass a token 20,000 laps), skynet (a tree of
 * 10^5 leaves, 10 children a node, sums sent up), server (8 clients, 50,000
 * requests each, to one server), rtt (two fibers ping-pong, each wait a
 * recv_timeout of 1 s). PARKED: 1 to keep a fiber waiting in recv_timeout
 * (100 ms, again and again) on the same scheduler, 0 not to. One
 * scheduler, "mpsc" mailboxes. Prints one line a round: the workload's
 * nanoseconds per message.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncq/clock.h"
#include "syncq/po.h"

enum { RING = 100, RING_LAPS = 20000, SKY_FAN = 10, SKY_DEPTH = 5, CLIENTS = 8, REQS = 50000, RTT = 500000 };

static syncq_po_system *sys;
static uint64_t messages; /* the round's messages, for the per-message figure */

static int send_word(syncq_po_proc *self, syncq_po_pid to, uint32_t type, uint64_t w) {
  syncq_po_msg *m;
  int r = syncq_po_get(self, sizeof w, &m);
  if (r != SYNCQ_OK) return r;
  m->type = type;
  m->len = sizeof w;
  memcpy(m->data, &w, sizeof w);
  r = syncq_po_send(self, to, m, SYNCQ_PO_LINK);
  if (r != SYNCQ_OK) (void)syncq_po_free(self, m);
  return r;
}

static int recv_word(syncq_po_proc *self, uint64_t *w, syncq_po_pid *from) {
  syncq_po_msg *m;
  int r = syncq_po_recv_blocking(self, &m);
  if (r != SYNCQ_OK) return r;
  memcpy(w, m->data, sizeof *w);
  if (from != NULL) *from = m->sender;
  return syncq_po_free(self, m);
}

/* ---- the parked fiber ---- */

static void parked(syncq_po_proc *self, void *arg) {
  (void)arg;
  for (;;) {
    syncq_po_msg *m;
    int r = syncq_po_recv_timeout(self, 100000000ull, &m);
    if (r == SYNCQ_OK) {
      (void)syncq_po_free(self, m);
      return; /* told to stop */
    }
    if (r != SYNCQ_ETIMEDOUT) return;
  }
}

/* ---- ring ---- */

static syncq_po_pid ring_pid[RING];

static void ring_member(syncq_po_proc *self, void *arg) {
  uintptr_t i = (uintptr_t)arg;
  for (;;) {
    uint64_t w;
    if (recv_word(self, &w, NULL) != SYNCQ_OK) return;
    if (w == 0) { /* passed on, to stop the next member (the first has gone) */
      (void)send_word(self, ring_pid[(i + 1) % RING], 0, 0);
      return;
    }
    if (i + 1 == RING) w--;
    if (send_word(self, ring_pid[(i + 1) % RING], 0, w) != SYNCQ_OK) return;
  }
}

static int ring(syncq_po_proc *self) {
  for (uintptr_t i = RING; i-- > 0;)
    if (syncq_po_spawn(sys, ring_member, (void *)i, &ring_pid[i]) != SYNCQ_OK) return 1;
  (void)self;
  /* The last member decrements; a 0 stops each member in turn. */
  if (send_word(self, ring_pid[0], 0, RING_LAPS) != SYNCQ_OK) return 1;
  for (int i = 0; i < RING; i++)
    if (syncq_po_join(sys, ring_pid[i]) != SYNCQ_OK) return 1;
  messages = (uint64_t)RING * RING_LAPS;
  return 0;
}

/* ---- skynet ---- */

typedef struct sky_arg {
  syncq_po_pid parent;
  uint64_t first, level;
} sky_arg;

static void sky(syncq_po_proc *self, void *arg) {
  sky_arg a = *(sky_arg *)arg;
  free(arg);
  uint64_t sum = 0;
  if (a.level == 0) sum = a.first;
  else {
    uint64_t span = 1;
    for (uint64_t l = 1; l < a.level; l++) span *= SKY_FAN;
    for (uint64_t c = 0; c < SKY_FAN; c++) {
      sky_arg *ca = malloc(sizeof *ca);
      if (ca == NULL) return;
      *ca = (sky_arg){syncq_po_pid_of(self), a.first + c * span, a.level - 1};
      if (syncq_po_spawn_detached(sys, sky, ca, NULL) != SYNCQ_OK) {
        free(ca);
        return;
      }
    }
    for (int c = 0; c < SKY_FAN; c++) {
      uint64_t w;
      if (recv_word(self, &w, NULL) != SYNCQ_OK) return;
      sum += w;
    }
  }
  (void)send_word(self, a.parent, 0, sum);
}

static int skynet(syncq_po_proc *self) {
  sky_arg *a = malloc(sizeof *a);
  if (a == NULL) return 1;
  *a = (sky_arg){syncq_po_pid_of(self), 0, SKY_DEPTH};
  if (syncq_po_spawn_detached(sys, sky, a, NULL) != SYNCQ_OK) return 1;
  uint64_t sum;
  if (recv_word(self, &sum, NULL) != SYNCQ_OK) return 1;
  uint64_t n = 1;
  for (int l = 0; l < SKY_DEPTH; l++) n *= SKY_FAN;
  if (sum != n * (n - 1) / 2) return 2;
  messages = n * SKY_FAN / (SKY_FAN - 1); /* every node but the root's parent sends once */
  return 0;
}

/* ---- server ---- */

static syncq_po_pid server_pid;

static void server(syncq_po_proc *self, void *arg) {
  (void)arg;
  for (uint64_t left = (uint64_t)CLIENTS * REQS; left > 0; left--) {
    uint64_t w;
    syncq_po_pid from;
    if (recv_word(self, &w, &from) != SYNCQ_OK) return;
    if (send_word(self, from, 0, w + 1) != SYNCQ_OK) return;
  }
}

static void client(syncq_po_proc *self, void *arg) {
  (void)arg;
  for (uint64_t i = 0; i < REQS; i++) {
    uint64_t w;
    if (send_word(self, server_pid, 0, i) != SYNCQ_OK || recv_word(self, &w, NULL) != SYNCQ_OK || w != i + 1) return;
  }
}

static int server_run(syncq_po_proc *self) {
  (void)self;
  syncq_po_pid c[CLIENTS];
  if (syncq_po_spawn(sys, server, NULL, &server_pid) != SYNCQ_OK) return 1;
  for (int i = 0; i < CLIENTS; i++)
    if (syncq_po_spawn(sys, client, NULL, &c[i]) != SYNCQ_OK) return 1;
  for (int i = 0; i < CLIENTS; i++)
    if (syncq_po_join(sys, c[i]) != SYNCQ_OK) return 1;
  if (syncq_po_join(sys, server_pid) != SYNCQ_OK) return 1;
  messages = 2ull * CLIENTS * REQS;
  return 0;
}

/* ---- rtt: each wait a recv_timeout ---- */

static void echo(syncq_po_proc *self, void *arg) {
  (void)arg;
  for (;;) {
    syncq_po_msg *m;
    if (syncq_po_recv_timeout(self, 1000000000ull, &m) != SYNCQ_OK) return;
    if (m->type == 1) {
      (void)syncq_po_free(self, m);
      return;
    }
    syncq_po_pid to = m->sender;
    if (syncq_po_send(self, to, m, SYNCQ_PO_LINK) != SYNCQ_OK) (void)syncq_po_free(self, m);
  }
}

static int rtt(syncq_po_proc *self) {
  syncq_po_pid e;
  if (syncq_po_spawn(sys, echo, NULL, &e) != SYNCQ_OK) return 1;
  for (uint64_t i = 0; i < RTT; i++) {
    syncq_po_msg *m;
    if (send_word(self, e, 0, i) != SYNCQ_OK) return 1;
    if (syncq_po_recv_timeout(self, 1000000000ull, &m) != SYNCQ_OK) return 1;
    (void)syncq_po_free(self, m);
  }
  if (send_word(self, e, 1, 0) != SYNCQ_OK || syncq_po_join(sys, e) != SYNCQ_OK) return 1;
  messages = 2ull * RTT;
  return 0;
}

typedef struct job {
  const char *what;
  int with_parked;
} job;

static int main_proc(syncq_po_proc *self, void *arg) {
  job *j = arg;
  syncq_po_pid pk = 0;
  if (j->with_parked && syncq_po_spawn(sys, parked, NULL, &pk) != SYNCQ_OK) return 1;
  int r = strcmp(j->what, "ring") == 0     ? ring(self)
          : strcmp(j->what, "skynet") == 0 ? skynet(self)
          : strcmp(j->what, "server") == 0 ? server_run(self)
          : strcmp(j->what, "rtt") == 0    ? rtt(self)
                                           : 3;
  if (j->with_parked) {
    if (send_word(self, pk, 0, 0) != SYNCQ_OK || syncq_po_join(sys, pk) != SYNCQ_OK) return 1;
  }
  return r;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s ring|skynet|server|rtt PARKED(0|1) ROUNDS\n", argv[0]);
    return 2;
  }
  job j = {argv[1], atoi(argv[2])};
  int rounds = atoi(argv[3]);
  for (int k = 0; k < rounds; k++) {
    syncq_po_config cfg = {"mpsc", 120000, 0, 0, "fiber", 1, false};
    if (syncq_po_create(&cfg, &sys) != SYNCQ_OK) return 1;
    int result = -1;
    uint64_t t0 = syncq_now_ns();
    if (syncq_po_run(sys, main_proc, &j, &result) != SYNCQ_OK || result != 0) {
      fprintf(stderr, "%s: round %d failed (%d)\n", j.what, k, result);
      return 1;
    }
    uint64_t dt = syncq_now_ns() - t0;
    (void)syncq_po_destroy(sys);
    printf("%s parked=%d ns/msg %.1f\n", j.what, j.with_parked, (double)dt / (double)messages);
    fflush(stdout);
  }
  return 0;
}
