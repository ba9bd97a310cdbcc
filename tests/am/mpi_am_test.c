/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_am_test.c — active messages between MPI ranks (syncq/am_mpi.h), run
 * under mpirun by mpi_run.sh with 1, 2, 3 or 4 ranks, once per MPI.
 *
 *   mpi_am_test basic     every rank sends short and bulk requests to every
 *                         rank (itself too); handlers check words and
 *                         bytes and reply; counts checked at the end; bad
 *                         inputs and an oversize bulk refused; with
 *                         SYNCQ_AM_FORCE_MPI=1 every path must be "mpi",
 *                         else (one host) "shm". Also a flood of requests
 *                         without replies (the credits must come back).
 *   mpi_am_test mismatch  rank 1 registers another name at index 2: start
 *                         fails on every rank with a reason naming index 2.
 *   mpi_am_test killed    the last rank SIGKILLs itself mid-run; every other
 *                         rank keeps sending to it and must get SYNCQ_EDEAD
 *                         within the dead timeout plus a margin, and its
 *                         polls must return. Survivors write "ok" to
 *                         $SYNCQ_TEST_OUT/rank.<r> and leave without
 *                         MPI_Finalize (MPI cannot finalise a job with a
 *                         dead rank without ULFM).
 *   mpi_am_test early     the last rank leaves (syncq_am_mpi_destroy) after
 *                         the first exchange; the others get SYNCQ_EDEAD.
 *   mpi_am_test waiter    2 ranks through MPI, a short dead timeout: rank 0
 *                         waits (syncq_am_wait) on a processor it shares
 *                         with busy processes, rank 1 polls; rank 0's
 *                         heartbeats must keep it alive in rank 1's eyes.
 *
 * Every rank checks; a failed check prints rank, line and condition and
 * the rank exits 1 (mpirun then fails).
 */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "syncq/am_mpi.h"
#include "syncq/clock.h"

#define POLL_BUDGET 32u
#define ROUNDS 200u                    /* short round trips per pair */
#define BULK_ROUNDS 20u                /* bulk round trips per pair */
#define FLOOD 1000u                    /* one-way requests per pair (many credit windows) */
#define TEST_DEAD_NS 1000000000ull     /* 1 s: the dead timeout of the fault tests */
#define DETECT_MARGIN_NS 4000000000ull /* detection within timeout + 4 s (a loaded 2-core machine) */
#define BULK_LEN 6000u
#define WAITER_DEAD_NS 200000000ull   /* 200 ms: the waiter scenario's dead timeout */
#define WAITER_QUIET_NS 1500000000ull /* rank 1 polls this long before it sends */
#define WAITER_BUSY 4                 /* busy processes beside the waiting rank */

enum { H_PING = 1, H_PONG = 2, H_BULK = 3, H_BULK_ACK = 4, H_SINK = 5, H_ECHO_NAME = 6 };

static int g_rank = -1;
static int failures;

#define CHECK(c)                                                                             \
  do {                                                                                       \
    if (!(c)) {                                                                              \
      fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", g_rank, __FILE__, __LINE__, #c); \
      failures++;                                                                            \
    }                                                                                        \
  } while (0)

typedef struct counts {
  uint64_t pongs, bulk_acks, sunk, bad;
  uint64_t pings_from[64];
} counts;

static void h_ping(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  counts *c = ctx;
  if (na != 3 || d != NULL || len != 0 || a[1] != a[0] * 7u + 1u || a[0] >= 64) {
    c->bad++;
    return;
  }
  c->pings_from[a[0]]++;
  uint32_t r[2] = {a[2], a[2] ^ 0xabcdu};
  if (syncq_am_reply(t, H_PONG, r, 2, 0) != SYNCQ_OK) c->bad++;
  if (syncq_am_reply(t, H_PONG, r, 2, 0) != SYNCQ_EINVAL) c->bad++; /* at most one reply */
}

static void h_pong(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  counts *c = ctx;
  (void)d;
  (void)len;
  if (na != 2 || a[1] != (a[0] ^ 0xabcdu) || syncq_am_token_is_request(t)) c->bad++;
  /* a reply handler may not reply */
  if (syncq_am_reply(t, H_PONG, a, na, 0) != SYNCQ_EINVAL) c->bad++;
  c->pongs++;
}

static void h_bulk(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  counts *c = ctx;
  const unsigned char *p = d;
  if (na != 1 || len != BULK_LEN || p == NULL) {
    c->bad++;
    return;
  }
  for (size_t i = 0; i < len; i++)
    if (p[i] != (unsigned char)(a[0] + i)) {
      c->bad++;
      return;
    }
  /* reply with the block reversed in a bulk reply */
  static unsigned char back[BULK_LEN];
  for (size_t i = 0; i < len; i++) back[i] = p[len - 1 - i];
  if (syncq_am_reply_bulk(t, H_BULK_ACK, back, len, a, 1, 0) != SYNCQ_OK) c->bad++;
}

static void h_bulk_ack(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  (void)t;
  counts *c = ctx;
  const unsigned char *p = d;
  if (na != 1 || len != BULK_LEN || p == NULL) {
    c->bad++;
    return;
  }
  for (size_t i = 0; i < len; i++)
    if (p[len - 1 - i] != (unsigned char)(a[0] + i)) {
      c->bad++;
      return;
    }
  c->bulk_acks++;
}

static void h_sink(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  (void)t;
  (void)a;
  (void)na;
  (void)d;
  (void)len;
  ((counts *)ctx)->sunk++;
}

static void register_all(syncq_am_endpoint *ep, counts *c, bool odd_name) {
  CHECK(syncq_am_register(ep, H_PING, "ping", h_ping, c) == SYNCQ_OK);
  CHECK(syncq_am_register(ep, H_PONG, odd_name ? "pong-other" : "pong", h_pong, c) == SYNCQ_OK);
  CHECK(syncq_am_register(ep, H_BULK, "bulk", h_bulk, c) == SYNCQ_OK);
  CHECK(syncq_am_register(ep, H_BULK_ACK, "bulk-ack", h_bulk_ack, c) == SYNCQ_OK);
  CHECK(syncq_am_register(ep, H_SINK, "sink", h_sink, c) == SYNCQ_OK);
}

/* Wait (syncq_am_wait, through the transport too) until *v reaches want,
 * or the deadline. A wait, not a loop of polls: with more ranks than
 * processors (np4 on 2) a spinning rank keeps the rank it waits for off
 * its processor. */
static bool poll_until(syncq_am_endpoint *ep, const uint64_t *v, uint64_t want, uint64_t ns) {
  uint64_t end = syncq_now_ns() + ns;
  while (*v < want) {
    uint64_t now = syncq_now_ns();
    if (now > end) return false;
    int r = syncq_am_wait(ep, POLL_BUDGET, end - now, NULL);
    if (r != SYNCQ_OK && r != SYNCQ_ETIMEDOUT) return false;
  }
  return true;
}

#define WAIT_NS 20000000000ull /* 60 s: a hung exchange fails instead of stalling */

/* A barrier that keeps handling messages (a rank blocked in MPI_Barrier
 * would leave the others' requests unanswered). */
static void poll_barrier(syncq_am_endpoint *ep) {
  MPI_Request b;
  int done = 0;
  MPI_Ibarrier(MPI_COMM_WORLD, &b);
  while (!done) {
    MPI_Test(&b, &done, MPI_STATUS_IGNORE);
    (void)syncq_am_poll(ep, POLL_BUDGET, NULL);
  }
}

static void bad_inputs(syncq_am_mpi *job, syncq_am_peer *p) {
  uint32_t a[SYNCQ_AM_MAX_ARGS + 1] = {0};
  static unsigned char big[SYNCQ_AM_BULK_MAX + 1];
  syncq_am_peer *q;
  CHECK(syncq_am_mpi_create(MPI_COMM_WORLD, NULL, NULL) == SYNCQ_EINVAL);
  syncq_am_mpi_config bad = {.credits = SYNCQ_AM_MPI_MAX_CREDITS + 1};
  syncq_am_mpi *j2 = NULL;
  CHECK(syncq_am_mpi_create(MPI_COMM_WORLD, &bad, &j2) == SYNCQ_EINVAL);
  bad = (syncq_am_mpi_config){.dead_timeout_ns = 1};
  CHECK(syncq_am_mpi_create(MPI_COMM_WORLD, &bad, &j2) == SYNCQ_EINVAL);
  CHECK(syncq_am_mpi_create(MPI_COMM_NULL, NULL, &j2) == SYNCQ_EINVAL);
  CHECK(syncq_am_mpi_peer(NULL, 0, &q) == SYNCQ_EINVAL);
  CHECK(syncq_am_mpi_peer(job, -1, &q) == SYNCQ_EINVAL);
  CHECK(syncq_am_mpi_peer(job, syncq_am_mpi_size(job), &q) == SYNCQ_EINVAL);
  CHECK(syncq_am_mpi_peer(job, 0, NULL) == SYNCQ_EINVAL);
  CHECK(syncq_am_mpi_start(job) == SYNCQ_EINVAL); /* a second start */
  CHECK(syncq_am_mpi_start(NULL) == SYNCQ_EINVAL);
  CHECK(syncq_am_mpi_destroy(NULL) == SYNCQ_EINVAL);
  CHECK(syncq_am_mpi_endpoint(NULL) == NULL);
  CHECK(syncq_am_mpi_rank(NULL) == -1 && syncq_am_mpi_size(NULL) == -1);
  CHECK(syncq_am_mpi_path(job, -1) == NULL && syncq_am_mpi_path(NULL, 0) == NULL);
  CHECK(!syncq_am_mpi_peer_dead(job, 999) && !syncq_am_mpi_peer_dead(NULL, 0));
  CHECK(strcmp(syncq_am_mpi_why(NULL), "") == 0);
  /* the send calls' bad inputs, on this path */
  CHECK(syncq_am_request(p, SYNCQ_AM_MAX_HANDLERS, a, 1, 0) == SYNCQ_EINVAL);
  CHECK(syncq_am_request(p, H_SINK, a, SYNCQ_AM_MAX_ARGS + 1, 0) == SYNCQ_EINVAL);
  CHECK(syncq_am_request(p, H_SINK, NULL, 1, 0) == SYNCQ_EINVAL);
  CHECK(syncq_am_request(p, H_SINK, a, 1, 0x80u) == SYNCQ_EINVAL);
  syncq_am_limits lim;
  CHECK(syncq_am_peer_limits(p, &lim) == SYNCQ_OK);
  CHECK(lim.bulk_size == SYNCQ_AM_BULK_MAX);
  /* messages larger than the bulk limit are refused */
  CHECK(syncq_am_request_bulk(p, H_SINK, big, SYNCQ_AM_BULK_MAX + 1, a, 1, 0) == SYNCQ_EINVAL);
  CHECK(syncq_am_request_bulk(p, H_SINK, NULL, 10, a, 1, 0) == SYNCQ_EINVAL);
}

static int scenario_basic(void) {
  syncq_am_mpi *job;
  counts c;
  memset(&c, 0, sizeof c);
  int r = syncq_am_mpi_create(MPI_COMM_WORLD, NULL, &job);
  CHECK(r == SYNCQ_OK);
  if (r != SYNCQ_OK) return 1;
  syncq_am_endpoint *ep = syncq_am_mpi_endpoint(job);
  register_all(ep, &c, false);
  CHECK(syncq_am_mpi_start(job) == SYNCQ_OK);
  int n = syncq_am_mpi_size(job), me = syncq_am_mpi_rank(job);
  const char *e = getenv(SYNCQ_AM_MPI_FORCE_ENV);
  bool forced = e && strcmp(e, "1") == 0;
  for (int s = 0; s < n; s++) CHECK(strcmp(syncq_am_mpi_path(job, s), forced ? "mpi" : "shm") == 0);
  syncq_am_peer *p0;
  CHECK(syncq_am_mpi_peer(job, (me + 1) % n, &p0) == SYNCQ_OK);
  bad_inputs(job, p0);
  /* Flow control: while rank 1 does not poll (it waits in MPI_Barrier),
   * rank 0 can have exactly `credits` requests in flight to it through
   * MPI; the next NOWAIT request is refused with SYNCQ_FULL. */
  if (forced && n >= 2) {
    unsigned sent = 0;
    if (me == 0) {
      syncq_am_peer *p1;
      CHECK(syncq_am_mpi_peer(job, 1, &p1) == SYNCQ_OK);
      uint32_t a[1] = {0};
      int rr;
      while ((rr = syncq_am_request(p1, H_SINK, a, 1, SYNCQ_AM_NOWAIT)) == SYNCQ_OK &&
             sent <= 10u * SYNCQ_AM_MPI_DEFAULT_CREDITS)
        sent++;
      CHECK(rr == SYNCQ_FULL);
      CHECK(sent == SYNCQ_AM_MPI_DEFAULT_CREDITS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Bcast(&sent, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
    if (me == 1) CHECK(poll_until(ep, &c.sunk, sent, WAIT_NS));
    c.sunk = 0;
    poll_barrier(ep); /* rank 0 gets its credits back while it waits here */
  }
  /* round trips to every rank, itself included */
  static unsigned char blk[BULK_LEN];
  for (int s = 0; s < n; s++) {
    syncq_am_peer *p;
    CHECK(syncq_am_mpi_peer(job, s, &p) == SYNCQ_OK);
    for (uint32_t i = 0; i < ROUNDS; i++) {
      uint32_t a[3] = {(uint32_t)me, (uint32_t)me * 7u + 1u, i};
      uint64_t want = c.pongs + 1;
      CHECK(syncq_am_request(p, H_PING, a, 3, 0) == SYNCQ_OK);
      CHECK(poll_until(ep, &c.pongs, want, WAIT_NS));
    }
    for (uint32_t i = 0; i < BULK_ROUNDS; i++) {
      uint32_t a[1] = {i * 13u + (uint32_t)me};
      for (size_t k = 0; k < BULK_LEN; k++) blk[k] = (unsigned char)(a[0] + k);
      uint64_t want = c.bulk_acks + 1;
      CHECK(syncq_am_request_bulk(p, H_BULK, blk, BULK_LEN, a, 1, 0) == SYNCQ_OK);
      CHECK(poll_until(ep, &c.bulk_acks, want, WAIT_NS));
    }
    /* a one-way flood: the credits must come back without replies */
    for (uint32_t i = 0; i < FLOOD; i++) {
      uint32_t a[1] = {i};
      int rr;
      /* NOWAIT: FULL while the queue is full, EBUSY while another sender
       * holds the claim lock (am.h); both are "try again" */
      while ((rr = syncq_am_request(p, H_SINK, a, 1, SYNCQ_AM_NOWAIT)) == SYNCQ_FULL || rr == SYNCQ_EBUSY)
        (void)syncq_am_poll(ep, POLL_BUDGET, NULL);
      if (rr != SYNCQ_OK) fprintf(stderr, "rank %d: flood send %u: %s\n", me, i, syncq_strerror(rr));
      CHECK(rr == SYNCQ_OK);
    }
  }
  /* everyone's flood reaches us: n senders x FLOOD */
  CHECK(poll_until(ep, &c.sunk, (uint64_t)n * FLOOD, WAIT_NS));
  for (int s = 0; s < n; s++) CHECK(c.pings_from[s] == ROUNDS);
  CHECK(c.bad == 0);
  syncq_am_counters k;
  CHECK(syncq_am_counters_of(ep, &k) == SYNCQ_OK);
  CHECK(k.unhandled == 0);
  r = syncq_am_mpi_destroy(job);
  if (r != SYNCQ_OK) fprintf(stderr, "rank %d: destroy: %s\n", me, syncq_strerror(r));
  CHECK(r == SYNCQ_OK);
  return failures ? 1 : 0;
}

static int scenario_mismatch(void) {
  syncq_am_mpi *job;
  counts c;
  memset(&c, 0, sizeof c);
  if (syncq_am_mpi_create(MPI_COMM_WORLD, NULL, &job) != SYNCQ_OK) return 1;
  int me = syncq_am_mpi_rank(job);
  register_all(syncq_am_mpi_endpoint(job), &c, me == 1);
  int r = syncq_am_mpi_start(job);
  if (syncq_am_mpi_size(job) > 1) {
    CHECK(r == SYNCQ_EINVAL);
    CHECK(strstr(syncq_am_mpi_why(job), "index 2") != NULL);
    if (me == 0) printf("mismatch detected: %s\n", syncq_am_mpi_why(job));
    syncq_am_peer *p;
    CHECK(syncq_am_mpi_peer(job, 0, &p) == SYNCQ_EINVAL); /* not started */
  } else {
    CHECK(r == SYNCQ_OK);
  }
  CHECK(syncq_am_mpi_destroy(job) == SYNCQ_OK);
  return failures ? 1 : 0;
}

static void write_result(const char *what) {
  const char *dir = getenv("SYNCQ_TEST_OUT");
  if (dir == NULL) return;
  char path[512];
  snprintf(path, sizeof path, "%s/rank.%d", dir, g_rank);
  FILE *f = fopen(path, "w");
  if (f) {
    fprintf(f, "%s\n", what);
    fclose(f);
  }
}

/* killed (kill = true) or early exit: the last rank goes after one
 * exchange; the others send to it until SYNCQ_EDEAD. */
static int scenario_leave(bool kill_it) {
  syncq_am_mpi *job;
  counts c;
  memset(&c, 0, sizeof c);
  syncq_am_mpi_config cfg = {.dead_timeout_ns = TEST_DEAD_NS};
  if (syncq_am_mpi_create(MPI_COMM_WORLD, &cfg, &job) != SYNCQ_OK) return 1;
  syncq_am_endpoint *ep = syncq_am_mpi_endpoint(job);
  register_all(ep, &c, false);
  CHECK(syncq_am_mpi_start(job) == SYNCQ_OK);
  int n = syncq_am_mpi_size(job), me = syncq_am_mpi_rank(job), victim = n - 1;
  if (n < 2) {
    CHECK(syncq_am_mpi_destroy(job) == SYNCQ_OK);
    return failures ? 1 : 0;
  }
  syncq_am_peer *pv;
  CHECK(syncq_am_mpi_peer(job, victim, &pv) == SYNCQ_OK);
  /* one exchange with everyone, so all are up */
  for (int s = 0; s < n; s++) {
    syncq_am_peer *p;
    CHECK(syncq_am_mpi_peer(job, s, &p) == SYNCQ_OK);
    uint32_t a[3] = {(uint32_t)me, (uint32_t)me * 7u + 1u, 0};
    uint64_t want = c.pongs + 1;
    CHECK(syncq_am_request(p, H_PING, a, 3, 0) == SYNCQ_OK);
    CHECK(poll_until(ep, &c.pongs, want, WAIT_NS));
  }
  poll_barrier(ep);
  if (me == victim) {
    if (kill_it) raise(SIGKILL);
    int r = syncq_am_mpi_destroy(job); /* the others are not leaving: bounded by the timeout */
    CHECK(r == SYNCQ_OK || r == SYNCQ_ETIMEDOUT);
    write_result(failures ? "fail" : "ok");
    MPI_Finalize();
    exit(failures ? 1 : 0);
  }
  /* survivors: keep sending (short and bulk) until SYNCQ_EDEAD */
  uint64_t t0 = syncq_now_ns(), limit = TEST_DEAD_NS + DETECT_MARGIN_NS;
  static unsigned char blk[BULK_LEN];
  int r = SYNCQ_OK;
  uint32_t i = 0;
  while (r == SYNCQ_OK && syncq_now_ns() - t0 < limit + TEST_DEAD_NS) {
    uint32_t a[3] = {(uint32_t)me, (uint32_t)me * 7u + 1u, ++i};
    r =
      (i % 4 == 0) ? syncq_am_request_bulk(pv, H_SINK, blk, BULK_LEN, a, 1, 0) : syncq_am_request(pv, H_PING, a, 3, 0);
    uint64_t tp = syncq_now_ns();
    CHECK(syncq_am_poll(ep, POLL_BUDGET, NULL) == SYNCQ_OK);
    CHECK(syncq_now_ns() - tp < limit); /* a poll never waits for the dead */
  }
  uint64_t took = syncq_now_ns() - t0;
  CHECK(r == SYNCQ_EDEAD);
  CHECK(took < limit);
  CHECK(syncq_am_mpi_peer_dead(job, victim));
  fprintf(stderr, "rank %d: SYNCQ_EDEAD for rank %d after %.0f ms (%s)\n", me, victim, (double)took / 1e6,
          syncq_am_mpi_why(job));
  /* and the living still talk to each other: a ping to every survivor,
   * and nobody leaves before it has every survivor's ping (so no ping
   * reaches a rank that already left) */
  uint64_t pings0 = c.pings_from[me], want = c.pongs + (uint64_t)victim;
  for (int s = 0; s < victim; s++) {
    syncq_am_peer *p;
    CHECK(syncq_am_mpi_peer(job, s, &p) == SYNCQ_OK);
    uint32_t a[3] = {(uint32_t)me, (uint32_t)me * 7u + 1u, 0};
    CHECK(syncq_am_request(p, H_PING, a, 3, 0) == SYNCQ_OK);
  }
  CHECK(poll_until(ep, &c.pongs, want, WAIT_NS));
  CHECK(c.pings_from[me] == pings0 + 1u); /* our own ping to ourselves, handled while we waited */
  for (int s = 0; s < victim; s++)
    if (s != me) CHECK(poll_until(ep, &c.pings_from[s], 2u, WAIT_NS)); /* the first exchange's ping, and this one */
  CHECK(c.bad == 0);
  int d = syncq_am_mpi_destroy(job);
  CHECK(d == SYNCQ_OK || d == SYNCQ_ETIMEDOUT);
  write_result(failures ? "fail" : "ok");
  if (kill_it) {
    fflush(NULL);
    _exit(failures ? 1 : 0); /* no MPI_Finalize with a dead rank (no ULFM) */
  }
  return failures ? 1 : 0;
}

/* Confine this process to the first (which 0) or last CPU it may use. */
static void pin_to(int which) {
  cpu_set_t s;
  if (sched_getaffinity(0, sizeof s, &s) != 0) return;
  int cpu = -1;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &s) && (cpu < 0 || which != 0)) cpu = c;
  if (cpu < 0) return;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  (void)sched_setaffinity(0, sizeof s, &s);
}

/* waiter: a rank in syncq_am_wait yields its processor at every poll, and
 * beside busy processes each yield can last a time slice, so a liveness
 * that counted polls sent its heartbeats late: rank 1 must not find rank 0
 * silent, and its request after WAITER_QUIET_NS must reach rank 0. */
static int scenario_waiter(void) {
  syncq_am_mpi_config cfg = {.force_mpi = true, .dead_timeout_ns = WAITER_DEAD_NS};
  syncq_am_mpi *job;
  counts c;
  memset(&c, 0, sizeof c);
  if (syncq_am_mpi_create(MPI_COMM_WORLD, &cfg, &job) != SYNCQ_OK) return 1;
  int me = syncq_am_mpi_rank(job);
  syncq_am_endpoint *ep = syncq_am_mpi_endpoint(job);
  register_all(ep, &c, false);
  CHECK(syncq_am_mpi_start(job) == SYNCQ_OK);
  CHECK(syncq_am_mpi_size(job) == 2);
  if (failures) return 1;
  if (me == 0) {
    pin_to(0);
    pid_t busy[WAITER_BUSY];
    for (int i = 0; i < WAITER_BUSY; i++) {
      busy[i] = fork();
      if (busy[i] == 0) { /* inherits the pin; dies with us at the latest */
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        alarm(60);
        for (volatile unsigned long x = 0;; x++) {
        }
      }
    }
    CHECK(poll_until(ep, &c.sunk, 1, WAIT_NS)); /* waits with syncq_am_wait */
    for (int i = 0; i < WAITER_BUSY; i++)
      if (busy[i] > 0) kill(busy[i], SIGKILL), waitpid(busy[i], NULL, 0);
  } else {
    pin_to(1);
    uint64_t t0 = syncq_now_ns();
    while (syncq_now_ns() - t0 < WAITER_QUIET_NS) CHECK(syncq_am_poll(ep, POLL_BUDGET, NULL) == SYNCQ_OK);
    if (syncq_am_mpi_peer_dead(job, 0)) fprintf(stderr, "rank 1: %s\n", syncq_am_mpi_why(job));
    CHECK(!syncq_am_mpi_peer_dead(job, 0));
    syncq_am_peer *p0;
    CHECK(syncq_am_mpi_peer(job, 0, &p0) == SYNCQ_OK);
    uint32_t a[1] = {1};
    CHECK(syncq_am_request(p0, H_SINK, a, 1, 0) == SYNCQ_OK);
  }
  if (failures) return 1; /* a dead peer would never join the barrier */
  poll_barrier(ep);
  CHECK(syncq_am_mpi_destroy(job) == SYNCQ_OK);
  return failures ? 1 : 0;
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  const char *what = argc > 1 ? argv[1] : "basic";
  int rc;
  if (strcmp(what, "basic") == 0) rc = scenario_basic();
  else if (strcmp(what, "mismatch") == 0) rc = scenario_mismatch();
  else if (strcmp(what, "killed") == 0) rc = scenario_leave(true);
  else if (strcmp(what, "early") == 0) rc = scenario_leave(false);
  else if (strcmp(what, "waiter") == 0) rc = scenario_waiter();
  else {
    fprintf(stderr, "usage: %s basic|mismatch|killed|early|waiter\n", argv[0]);
    rc = 2;
  }
  if (rc == 0 && g_rank == 0) printf("%s: passed\n", what);
  MPI_Finalize();
  return rc;
}
