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
 *                         Every rank finds its endpoint's name gone
 *                         from /dev/shm once the create returns (basic,
 *                         killed, early) and records it for mpi_run.sh,
 *                         which checks none is left after the run.
 *   mpi_am_test sweep     (one rank) the create removes a name of the
 *                         transport's whose creator is dead, and leaves a
 *                         live process's and one not of the transport's.
 *   mpi_am_test early     the last rank leaves (syncq_am_mpi_destroy) after
 *                         the first exchange; the others get SYNCQ_EDEAD.
 *                         killed and early, not forced (the victim on the
 *                         node, through shared memory): the survivors
 *                         must find it lost through syncq_am_mpi_peer_dead
 *                         and _why too ("its process died (pid N)" with
 *                         the victim's pid; "left the job: its endpoint
 *                         said leaving", from the start of its destroy,
 *                         within the dead timeout and not after the 10 of
 *                         its barrier).
 *   mpi_am_test selfbye   2 ranks through MPI: rank 1's requests run on
 *                         rank 0 only inside its destroy, after it took
 *                         its own BYE; its handlers must find rank 0
 *                         itself not lost (peer_dead false, peer_why NULL).
 *   mpi_am_test waiter    2 ranks through MPI, a short dead timeout: rank 0
 *                         waits (syncq_am_wait) on a processor it shares
 *                         with busy processes, rank 1 polls; rank 0's
 *                         heartbeats must keep it alive in rank 1's eyes
 *                         (and rank 1's in rank 0's), unless the silent
 *                         rank's processor was taken from it altogether
 *                         meanwhile (the run is then made again:
 *                         mpi_run.sh, $SYNCQ_TEST_OUT/inconclusive).
 *   mpi_am_test stopped   2 ranks through MPI: rank 1 keeps sending pings
 *                         while its child stops rank 0 (SIGSTOP) for a
 *                         fifth of the dead timeout at a time, 12 times;
 *                         neither may find the other dead.
 *   mpi_am_test slowpoll  2 ranks through MPI: rank 1 computes an eighth of
 *                         the dead timeout between polls that each handle
 *                         one request of rank 0's; its heartbeats must
 *                         keep it alive in rank 0's eyes (a run in which
 *                         it was away from its polls for half the dead
 *                         timeout at once is made again, as above).
 *   mpi_am_test crowded   2 ranks through MPI: rank 0's node-local queue
 *                         fills every poll's budget; neither rank may find
 *                         the other dead, every ping is answered.
 *   mpi_am_test backlog   2 ranks through MPI: rank 0 polls with a budget
 *                         of 1 every eighth of the dead timeout through a
 *                         backlog of received requests that a send without
 *                         credits tested; it must not find rank 1 dead.
 *   mpi_am_test prefault  2 ranks through MPI: a new job's first ring's
 *                         worth of round trips (every buffer of both
 *                         rings used once) takes at most a few page
 *                         faults on either rank: create faulted the rings
 *                         in. A first job warms MPI's path and the code.
 *   mpi_am_test failargs | failendpoint | failrings
 *                         the last rank alone fails a step of its own
 *                         inside syncq_am_mpi_create, through MPI (force):
 *                         a NULL out (SYNCQ_EINVAL), a malformed endpoint
 *                         config (SYNCQ_EINVAL from syncq_am_create), or
 *                         rings it cannot map (a data limit, RLIMIT_DATA,
 *                         below them: SYNCQ_ENOMEM). Every rank must return
 *                         within an alarm's CREATE_FAIL_S, the failing one
 *                         with its error and the others with SYNCQ_EBROKEN;
 *                         a job created next on every rank then works.
 *                         failrings first probes, before MPI_Init, whether
 *                         the kernel refuses an anonymous mapping past a
 *                         lowered RLIMIT_DATA (Linux 4.7 and later, unless
 *                         booted with ignore_rlimit_data); where it does
 *                         not, no rank calls the create: the last rank writes
 *                         the reason to $SYNCQ_TEST_OUT/skip and mpi_run.sh
 *                         exits 77 (ctest's skip) with it.
 *   mpi_am_test failrings-nolimit
 *                         the same probe with the limit left where it is,
 *                         so the mapping is not refused: the path of a
 *                         kernel that does not enforce the limit, which
 *                         must end in that skip (mpi_expect_skip.sh).
 *
 * Every rank checks; a failed check prints rank, line and condition and
 * ends the whole job at once (MPI_Abort): the other ranks would otherwise
 * wait for the failed one in a barrier or in MPI_Finalize until
 * mpi_run.sh's timeout.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
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
#define WAITER_DEAD_NS 200000000ull        /* 200 ms: the waiter scenario's dead timeout */
#define WAITER_QUIET_NS 1500000000ull      /* rank 1 polls this long before it sends */
#define WAITER_BUSY 4                      /* busy processes beside the waiting rank */
#define WITNESS_TICK_NS 5000000ull         /* the waiter's witness sleeps 5 ms at a time */
#define SLOW_CREDITS 64u                   /* slowpoll: a CREDIT message is owed after 32 handled */
#define SLOW_POLLS 30u                     /* slowpoll: rank 1's slow polls (3.75 dead timeouts) */
#define SLOW_GAP_NS (TEST_DEAD_NS / 8u)    /* slowpoll: rank 1 computes this long between polls */
#define BACKLOG_POLLS 24u                  /* backlog: rank 0's slow polls (3 dead timeouts) */
#define STOP_NS (TEST_DEAD_NS / 5u)        /* stopped: rank 0 is stopped this long at a time ... */
#define STOP_RUN_NS 50000000ull            /* ... and runs 50 ms between its stops ... */
#define STOP_ROUNDS 12u                    /* ... this many times (3 s, 3 dead timeouts) */
#define CROWD_LOCAL 16u                    /* crowded: node-local messages always in rank 0's queue ... */
#define CROWD_BUDGET 4u                    /* ... more than each of its polls handles */
#define CROWD_CREDITS 8u                   /* crowded: rank 0's pings outrun these at once */
#define CROWD_PHASE_NS (2u * TEST_DEAD_NS) /* crowded: each phase lasts two dead timeouts */

#define RING_TRIPS (2u * SYNCQ_AM_MPI_DEFAULT_CREDITS + 8u) /* prefault: a ring's buffers (syncq/am_mpi.h) */
#define CREATE_FAIL_S 30u          /* failing creates: a rank still inside after this is stuck (the alarm ends it) */
#define FAIL_DATA_SLACK (8u << 20) /* failrings: data the failing rank may still map (its rings need more) */
#define PROBE_MAP (4u * FAIL_DATA_SLACK) /* failrings' probe: a mapping past the slack */
#define PREFAULT_SLACK 8u                /* prefault: faults the kernel or MPI may add (a ring's worth is 40 or more) */

#define SKIPPED 77 /* a scenario's result: it cannot run here (mpi_run.sh reads $SYNCQ_TEST_OUT/skip) */

enum { H_PING = 1, H_PONG = 2, H_BULK = 3, H_BULK_ACK = 4, H_SINK = 5, H_ECHO_NAME = 6, H_LOCAL = 7, H_SELF = 8 };

static int g_rank = -1;

/* End the whole job now, failed: a rank that stopped here and returned
 * would leave the others waiting for it (in a barrier, an exchange or
 * MPI_Finalize) until mpi_run.sh's timeout. MPI_Abort ends every rank,
 * also under --enable-recovery; the alarm ends this one should the abort
 * itself hang, and mpirun then ends the others. */
static _Noreturn void leave_now(void) {
  fflush(NULL);
  int up = 0;
  MPI_Initialized(&up); /* failrings' probe runs before MPI_Init: nothing to abort yet */
  if (!up) _exit(1);
  alarm(10);
  MPI_Abort(MPI_COMM_WORLD, 1);
  _exit(1);
}

#define CHECK(c)                                                                             \
  do {                                                                                       \
    if (!(c)) {                                                                              \
      fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", g_rank, __FILE__, __LINE__, #c); \
      leave_now();                                                                           \
    }                                                                                        \
  } while (0)

#define LIVE_PING UINT32_MAX /* a ping's sequence word: the survivors' pings to each other (scenario_leave) */

typedef struct counts {
  uint64_t pongs, bulk_acks, sunk, bad;
  uint64_t pongs_live; /* pongs to LIVE_PING pings (also in pongs) */
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
  if (na == 2 && a[0] == LIVE_PING) c->pongs_live++;
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

#define WAIT_NS 20000000000ull /* 20 s: a hung exchange fails instead of stalling */

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
  CHECK(syncq_am_mpi_peer_why(job, 999) == NULL && syncq_am_mpi_peer_why(NULL, 0) == NULL);
  CHECK(syncq_am_mpi_peer_why(job, -1) == NULL && syncq_am_mpi_peer_why(job, syncq_am_mpi_rank(job)) == NULL);
  for (int s = 0; s < syncq_am_mpi_size(job); s++) /* every peer alive: nothing to say */
    CHECK(s == syncq_am_mpi_rank(job) || strcmp(syncq_am_mpi_peer_why(job, s), "") == 0);
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

/* The job's endpoint name must be gone from /dev/shm once the create
 * returns (every node-local peer has mapped it), so a rank killed from
 * then on leaves none; recorded in $SYNCQ_TEST_OUT/shm.<rank> for
 * mpi_run.sh, which checks after the run that none is left. */
static void check_unnamed(syncq_am_mpi *job) {
  const char *name = syncq_am_name(syncq_am_mpi_endpoint(job));
  CHECK(name != NULL);
  char path[512];
  snprintf(path, sizeof path, "/%s", name);
  int fd = shm_open(path, O_RDONLY, 0);
  if (fd >= 0) close(fd);
  if (fd >= 0 || errno != ENOENT) fprintf(stderr, "rank %d: %s still named after the create\n", g_rank, name);
  CHECK(fd < 0 && errno == ENOENT);
  const char *dir = getenv("SYNCQ_TEST_OUT");
  if (dir == NULL) return;
  snprintf(path, sizeof path, "%s/shm.%d", dir, g_rank);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  fprintf(f, "%s\n", name);
  CHECK(fclose(f) == 0);
}

/* The detector scenarios' job of two ranks through MPI (cfg): pair_create
 * makes it and registers the test's handlers on its endpoint; a scenario
 * registers its own next, then pair_start starts the job and gives the
 * other rank's peer. */
static syncq_am_mpi *pair_create(const syncq_am_mpi_config *cfg, counts *c, syncq_am_endpoint **ep) {
  syncq_am_mpi *job = NULL;
  memset(c, 0, sizeof *c);
  CHECK(syncq_am_mpi_create(MPI_COMM_WORLD, cfg, &job) == SYNCQ_OK);
  *ep = syncq_am_mpi_endpoint(job);
  register_all(*ep, c, false);
  return job;
}

static syncq_am_peer *pair_start(syncq_am_mpi *job) {
  syncq_am_peer *peer = NULL;
  CHECK(syncq_am_mpi_start(job) == SYNCQ_OK);
  CHECK(syncq_am_mpi_size(job) == 2);
  CHECK(syncq_am_mpi_peer(job, 1 - syncq_am_mpi_rank(job), &peer) == SYNCQ_OK);
  return peer;
}

static int scenario_basic(void) {
  syncq_am_mpi *job;
  counts c;
  memset(&c, 0, sizeof c);
  int r = syncq_am_mpi_create(MPI_COMM_WORLD, NULL, &job);
  CHECK(r == SYNCQ_OK);
  if (r != SYNCQ_OK) return 1;
  check_unnamed(job); /* and every reply below goes to a peer whose name is gone */
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
  return 0;
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
  return 0;
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
  /* Through shared memory (not forced), a victim that leaves early waits
   * in the destroy's barrier (for 10 dead timeouts at most) before it
   * closes its endpoint; it says "leaving" from its destroy's start, so
   * the survivors must find it lost within the dead timeout (and join
   * that barrier in their own destroy). */
  const char *fe = getenv(SYNCQ_AM_MPI_FORCE_ENV);
  bool forced = fe != NULL && strcmp(fe, "1") == 0;
  syncq_am_mpi_config cfg = {.dead_timeout_ns = TEST_DEAD_NS};
  /* every rank's pid: a node-local victim's death names it */
  int pids[64] = {0}, mypid = (int)getpid(), nw = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &nw);
  CHECK(nw <= 64);
  MPI_Allgather(&mypid, 1, MPI_INT, pids, 1, MPI_INT, MPI_COMM_WORLD);
  if (syncq_am_mpi_create(MPI_COMM_WORLD, &cfg, &job) != SYNCQ_OK) return 1;
  check_unnamed(job);
  syncq_am_endpoint *ep = syncq_am_mpi_endpoint(job);
  register_all(ep, &c, false);
  CHECK(syncq_am_mpi_start(job) == SYNCQ_OK);
  int n = syncq_am_mpi_size(job), me = syncq_am_mpi_rank(job), victim = n - 1;
  if (n < 2) {
    CHECK(syncq_am_mpi_destroy(job) == SYNCQ_OK);
    return 0;
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
    write_result("ok");
    MPI_Finalize();
    exit(0);
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
  /* A node-local victim is lost too, not only to sends: its process's
   * death (killed), or its endpoint leaving (early), found by the ask. */
  bool local = strcmp(syncq_am_mpi_path(job, victim), "shm") == 0;
  CHECK(local == !forced);
  CHECK(syncq_am_mpi_peer_dead(job, victim));
  /* the victim's own reason: its BYE, or (killed) its silence, at least
   * the dead timeout long (a coarse clock's tick short at most), unless
   * this MPI failed a call on it first; node-local, what its queue block
   * shows */
  const char *pw = syncq_am_mpi_peer_why(job, victim);
  unsigned long long quiet = 0, quiet_us = 0, dead_ms = 0, dead_us = 0, at_ms = 0;
  int died = 0, end = 0;
  bool said = false;
  if (pw != NULL && local && kill_it)
    said = sscanf(pw, "its process died (pid %d): found %llu ms after the start", &died, &at_ms) == 2 &&
           died == pids[victim];
  else if (pw != NULL && local)
    said = sscanf(pw, "left the job: its endpoint said leaving (its destroy began), found %llu ms after the start",
                  &at_ms) == 1;
  else if (pw != NULL)
    said = kill_it ? (sscanf(pw, "silent for %llu.%3llu ms, longer than the dead timeout of %llu.%3llu ms%n", &quiet,
                             &quiet_us, &dead_ms, &dead_us, &end) == 4 &&
                      end > 0 && dead_ms == TEST_DEAD_NS / 1000000u && dead_us == TEST_DEAD_NS / 1000u % 1000u &&
                      quiet * 1000u + quiet_us > dead_ms * 1000u + dead_us) ||
                       strncmp(pw, "failed by this rank (", 21) == 0
                   : strncmp(pw, "left the job: its BYE came ", 27) == 0;
  if (!said) fprintf(stderr, "rank %d: peer_why(%d): %s\n", me, victim, pw ? pw : "NULL");
  CHECK(said);
  fprintf(stderr, "rank %d: SYNCQ_EDEAD for rank %d after %.0f ms (%s)\n", me, victim, (double)took / 1e6,
          syncq_am_mpi_why(job));
  /* and the living still talk to each other: a ping to every survivor,
   * and nobody leaves before it has every survivor's ping and pong (so no
   * ping, and no pong, reaches a rank that already left: a rank's
   * endpoint takes nothing once its destroy began). The pongs counted
   * are those to these pings alone: a node-local victim that left early
   * still answers, from its destroy, the pings queued before it began to
   * leave. */
  uint64_t pings0 = c.pings_from[me], want = c.pongs_live + (uint64_t)victim;
  for (int s = 0; s < victim; s++) {
    syncq_am_peer *p;
    CHECK(syncq_am_mpi_peer(job, s, &p) == SYNCQ_OK);
    uint32_t a[3] = {(uint32_t)me, (uint32_t)me * 7u + 1u, LIVE_PING};
    CHECK(syncq_am_request(p, H_PING, a, 3, 0) == SYNCQ_OK);
  }
  CHECK(poll_until(ep, &c.pongs_live, want, WAIT_NS));
  CHECK(c.pings_from[me] == pings0 + 1u); /* our own ping to ourselves, handled while we waited */
  for (int s = 0; s < victim; s++)
    if (s != me) CHECK(poll_until(ep, &c.pings_from[s], 2u, WAIT_NS)); /* the first exchange's ping, and this one */
  CHECK(c.bad == 0);
  uint64_t td = syncq_now_ns();
  int d = syncq_am_mpi_destroy(job);
  td = syncq_now_ns() - td;
  CHECK(d == SYNCQ_OK || d == SYNCQ_ETIMEDOUT);
  /* the survivors' BYEs reach each other at once, and nothing waits for
   * sends to the dead rank (its bulk ones never complete) */
  if (td >= limit) fprintf(stderr, "rank %d: destroy took %.0f ms\n", me, (double)td / 1e6);
  CHECK(td < limit);
  write_result("ok");
  if (kill_it) {
    fflush(NULL);
    _exit(0); /* no MPI_Finalize with a dead rank (no ULFM) */
  }
  return 0;
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

/* The waiter's witnesses: a thread of each rank, on that rank's processor,
 * that sleeps WITNESS_TICK_NS at a time and keeps, in a file both ranks
 * map ($SYNCQ_TEST_OUT/witness.<rank>), the longest its rank's main thread
 * was seen off the processor at once (its run time in
 * /proc/self/task/<tid>/schedstat did not move) and the longest the
 * witness itself woke up late (the whole process off it). A rank's main
 * thread polls, and the time-kept liveness sends a heartbeat at its first
 * poll past a quarter of the dead timeout of silence: a rank kept off its
 * processor for half the dead timeout at once (the machine's other work,
 * a CPU quota) could not keep up however it kept time, and its silence
 * says nothing about its liveness. A liveness that counted polls was late
 * with the rank on its processor every few milliseconds (each of its
 * yields lasted one busy process's time slice): that stays a failure. */
typedef struct witness {
  _Atomic uint64_t late_ns;   /* the witness's longest lateness */
  _Atomic uint64_t frozen_ns; /* the main thread's longest time seen off the processor */
  _Atomic uint64_t awake_ns;  /* the witness's latest wake-up (a lateness that lasts yet) */
  _Atomic int stop;
  int tid; /* the main thread, set before the witness starts */
} witness;

static witness *witness_map(int rank, bool create) {
  const char *dir = getenv("SYNCQ_TEST_OUT");
  char path[4096];
  if (dir == NULL || snprintf(path, sizeof path, "%s/witness.%d", dir, rank) >= (int)sizeof path) return NULL;
  int fd = open(path, create ? O_RDWR | O_CREAT | O_TRUNC : O_RDWR, 0600);
  if (fd < 0) return NULL;
  void *m = MAP_FAILED;
  if (!create || ftruncate(fd, sizeof(witness)) == 0)
    m = mmap(NULL, sizeof(witness), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  return m == MAP_FAILED ? NULL : m;
}

/* The main thread's run time (ns, schedstat's first field); 0 where it
 * cannot be read (fd < 0, no CONFIG_SCHED_INFO). */
static uint64_t run_time_ns(int fd) {
  char buf[128];
  if (fd < 0 || lseek(fd, 0, SEEK_SET) != 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  if (n <= 0) return 0;
  buf[n] = '\0';
  return strtoull(buf, NULL, 10);
}

static void *witness_main(void *arg) {
  witness *w = arg;
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", w->tid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  uint64_t prev = syncq_now_ns(), ran = run_time_ns(fd), ran_at = prev;
  /* relaxed: each of the witness's values is read alone, by the other rank after the fact */
  atomic_store_explicit(&w->awake_ns, prev, memory_order_relaxed);
  /* relaxed: a flag alone; nothing is published with it */
  while (!atomic_load_explicit(&w->stop, memory_order_relaxed)) {
    struct timespec ts = {0, (long)WITNESS_TICK_NS};
    (void)nanosleep(&ts, NULL);
    uint64_t now = syncq_now_ns(), r = run_time_ns(fd);
    uint64_t late = now - prev > WITNESS_TICK_NS ? now - prev - WITNESS_TICK_NS : 0;
    /* relaxed: as above; only this thread writes them */
    atomic_store_explicit(&w->awake_ns, now, memory_order_relaxed);
    if (late > atomic_load_explicit(&w->late_ns, memory_order_relaxed))
      atomic_store_explicit(&w->late_ns, late, memory_order_relaxed);
    if (r != ran) {
      ran = r, ran_at = now; /* it ran since the last look */
    } else if (fd >= 0 && now - ran_at > atomic_load_explicit(&w->frozen_ns, memory_order_relaxed)) {
      atomic_store_explicit(&w->frozen_ns, now - ran_at, memory_order_relaxed); /* off since ran_at at least */
    }
    prev = now;
  }
  if (fd >= 0) close(fd);
  return NULL;
}

/* Start this rank's witness on its processor (the thread inherits the
 * pin); NULL where it cannot, and the other rank then judges as without. */
static witness *witness_start(int rank, pthread_t *t) {
  witness *w = witness_map(rank, true);
  if (w != NULL) w->tid = (int)gettid(); /* the thread's creation orders it before the thread's reads */
  if (w != NULL && pthread_create(t, NULL, witness_main, w) != 0) {
    munmap(w, sizeof *w);
    w = NULL;
  }
  return w;
}

static void witness_stop(int rank, witness *w, pthread_t t) {
  if (w == NULL) return;
  atomic_store_explicit(&w->stop, 1, memory_order_relaxed); /* relaxed: see witness_main */
  pthread_join(t, NULL);
  /* relaxed: written by the thread joined above */
  fprintf(stderr, "rank %d: kept off its processor for %.1f ms at most (its witness: late by %.1f ms at most)\n", rank,
          (double)atomic_load_explicit(&w->frozen_ns, memory_order_relaxed) / 1e6,
          (double)atomic_load_explicit(&w->late_ns, memory_order_relaxed) / 1e6);
  munmap(w, sizeof *w);
}

/* The longest rank `rank` was seen kept off its processor at once (its
 * witness: the main thread off, or the whole process off), counting a
 * time off that lasts yet; 0 without a witness. */
static uint64_t kept_off_ns(int rank) {
  witness *w = witness_map(rank, false);
  if (w == NULL) return 0;
  /* relaxed: the witness stores each value alone */
  uint64_t late = atomic_load_explicit(&w->late_ns, memory_order_relaxed);
  uint64_t frozen = atomic_load_explicit(&w->frozen_ns, memory_order_relaxed);
  uint64_t awake = atomic_load_explicit(&w->awake_ns, memory_order_relaxed), now = syncq_now_ns();
  munmap(w, sizeof *w);
  if (frozen > late) late = frozen;
  if (awake != 0 && now - awake > WITNESS_TICK_NS && now - awake - WITNESS_TICK_NS > late)
    late = now - awake - WITNESS_TICK_NS;
  return late;
}

/* The run judged nothing: rank `who` was away from its processor or its
 * polls for `off` at once. Say so, mark it for mpi_run.sh (which runs the
 * scenario again) and end the job. */
static _Noreturn void inconclusive(int who, uint64_t off) {
  fprintf(stderr, "rank %d: inconclusive: rank %d was away for %.0f ms at once\n", g_rank, who, (double)off / 1e6);
  const char *dir = getenv("SYNCQ_TEST_OUT");
  char path[4096];
  if (dir != NULL && snprintf(path, sizeof path, "%s/inconclusive", dir) < (int)sizeof path) {
    FILE *f = fopen(path, "w");
    if (f != NULL) fprintf(f, "rank %d away for %.0f ms at once\n", who, (double)off / 1e6), fclose(f);
  }
  leave_now();
}

/* This rank found rank `peer` silent: the run judged nothing (and ends,
 * inconclusive) when the peer, or this rank, which hears it only while
 * it runs, was kept off its processor for half the dead timeout or more
 * at once. */
static void waiter_inconclusive(int peer) {
  int who = peer;
  uint64_t off = kept_off_ns(peer), self = kept_off_ns(g_rank);
  if (self > off) off = self, who = g_rank;
  if (off >= WAITER_DEAD_NS / 2) inconclusive(who, off);
}

/* waiter: a rank in syncq_am_wait yields its processor at every poll, and
 * beside busy processes each yield can last a time slice, so a liveness
 * that counted polls sent its heartbeats late: rank 1 must not find rank 0
 * silent, and its request after WAITER_QUIET_NS must reach rank 0. Either
 * rank that finds the other silent while the other's witness saw its
 * processor taken from it judges nothing (waiter_inconclusive). */
static int scenario_waiter(void) {
  syncq_am_mpi_config cfg = {.force_mpi = true, .dead_timeout_ns = WAITER_DEAD_NS};
  counts c;
  syncq_am_endpoint *ep;
  syncq_am_mpi *job = pair_create(&cfg, &c, &ep);
  int me = syncq_am_mpi_rank(job);
  (void)pair_start(job);
  pthread_t wt;
  witness *w = NULL;
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
    w = witness_start(0, &wt); /* after the forks: a fork copies this thread only */
    /* waits with syncq_am_wait, a dead timeout at a time, to see whether rank 1 went silent */
    uint64_t end = syncq_now_ns() + WAIT_NS;
    while (c.sunk < 1 && syncq_now_ns() < end && !syncq_am_mpi_peer_dead(job, 1))
      (void)poll_until(ep, &c.sunk, 1, WAITER_DEAD_NS);
    bool dead = syncq_am_mpi_peer_dead(job, 1);
    if (dead) fprintf(stderr, "rank 0: %s\n", syncq_am_mpi_why(job));
    if (dead) waiter_inconclusive(1);
    CHECK(!dead);
    CHECK(c.sunk == 1);
    witness_stop(0, w, wt);
    for (int i = 0; i < WAITER_BUSY; i++)
      if (busy[i] > 0) kill(busy[i], SIGKILL), waitpid(busy[i], NULL, 0);
  } else {
    pin_to(1);
    w = witness_start(1, &wt);
    uint64_t t0 = syncq_now_ns();
    while (syncq_now_ns() - t0 < WAITER_QUIET_NS) CHECK(syncq_am_poll(ep, POLL_BUDGET, NULL) == SYNCQ_OK);
    bool dead = syncq_am_mpi_peer_dead(job, 0);
    if (dead) fprintf(stderr, "rank 1: %s\n", syncq_am_mpi_why(job));
    if (dead) waiter_inconclusive(0);
    CHECK(!dead);
    syncq_am_peer *p0;
    CHECK(syncq_am_mpi_peer(job, 0, &p0) == SYNCQ_OK);
    uint32_t a[1] = {1};
    CHECK(syncq_am_request(p0, H_SINK, a, 1, 0) == SYNCQ_OK);
  }
  poll_barrier(ep);
  if (me == 1) witness_stop(1, w, wt); /* after the barrier: rank 0 may still judge rank 1 */
  CHECK(syncq_am_mpi_destroy(job) == SYNCQ_OK);
  return 0;
}

/* slowpoll: rank 1 computes between its polls (it sleeps SLOW_GAP_NS, an
 * eighth of the dead timeout) and each poll handles one of rank 0's
 * requests, which need no reply; rank 0 sent all its credits' worth at the
 * start, so rank 1 owes no CREDIT message before its last poll. Rank 1's
 * heartbeats alone tell rank 0 that it lives: they must go at its first
 * poll past a quarter of the dead timeout of silence, busy poll or not.
 * A run in which rank 1 was away from its polls for half the dead timeout
 * at once (it measures its own gaps) judges nothing: the rank was then
 * really silent for long stretches. */
static int scenario_slowpoll(void) {
  syncq_am_mpi_config cfg = {.force_mpi = true, .credits = SLOW_CREDITS, .dead_timeout_ns = TEST_DEAD_NS};
  counts c;
  syncq_am_endpoint *ep;
  syncq_am_mpi *job = pair_create(&cfg, &c, &ep);
  int me = syncq_am_mpi_rank(job);
  syncq_am_peer *peer = pair_start(job);
  uint64_t gap = 0; /* rank 1: the longest time between two of its polls */
  bool dead = false;
  if (me == 0) {
    for (uint32_t i = 0; i < SLOW_CREDITS; i++) { /* all its credits: none is missing, so none waits */
      uint32_t a[1] = {i};
      CHECK(syncq_am_request(peer, H_SINK, a, 1, SYNCQ_AM_NOWAIT) == SYNCQ_OK);
    }
    CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
    /* wait for rank 1's request after its slow polls, watching its silence */
    uint64_t end = syncq_now_ns() + WAIT_NS;
    while (c.sunk < 1 && syncq_now_ns() < end && !syncq_am_mpi_peer_dead(job, 1))
      (void)poll_until(ep, &c.sunk, 1, TEST_DEAD_NS / 8);
    dead = syncq_am_mpi_peer_dead(job, 1);
    if (dead) fprintf(stderr, "rank 0: %s\n", syncq_am_mpi_why(job));
  } else {
    /* Rank 0's requests went before its barrier message: after the
     * barrier, MPI has matched them to this rank's posted receives, so
     * each poll below finds one complete (a poll that found none would
     * be idle). */
    CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
    unsigned n = 0;
    uint64_t end = syncq_now_ns() + WAIT_NS;
    while (n == 0 && syncq_now_ns() < end) CHECK(syncq_am_poll(ep, 1, &n) == SYNCQ_OK); /* the first arrived */
    uint64_t prev = syncq_now_ns();
    for (unsigned i = 0; i < SLOW_POLLS; i++) {
      struct timespec ts = {0, (long)SLOW_GAP_NS};
      (void)nanosleep(&ts, NULL); /* "computing" */
      uint64_t now = syncq_now_ns();
      if (now - prev > gap) gap = now - prev;
      prev = now;
      CHECK(syncq_am_poll(ep, 1, &n) == SYNCQ_OK);
      CHECK(n == 1); /* a busy poll each time: rank 0's requests wait */
    }
    CHECK(c.sunk == SLOW_POLLS + 1u);
    dead = syncq_am_mpi_peer_dead(job, 0);
    if (dead) fprintf(stderr, "rank 1: %s\n", syncq_am_mpi_why(job));
    CHECK(!dead); /* rank 0 waited in syncq_am_wait: it heartbeats */
    uint32_t a[1] = {1};
    CHECK(syncq_am_request(peer, H_SINK, a, 1, 0) == SYNCQ_OK);
  }
  /* rank 1's longest gap, for rank 0's verdict (both left their polls) */
  CHECK(MPI_Bcast(&gap, 1, MPI_UINT64_T, 1, MPI_COMM_WORLD) == MPI_SUCCESS);
  if (me == 0) {
    fprintf(stderr, "rank 0: rank 1 polled every %.0f ms at most\n", (double)gap / 1e6);
    if (dead && gap >= TEST_DEAD_NS / 2) inconclusive(1, gap);
    CHECK(!dead);
    CHECK(c.sunk == 1);
  }
  poll_barrier(ep);
  CHECK(c.bad == 0);
  CHECK(syncq_am_mpi_destroy(job) == SYNCQ_OK);
  return 0;
}

static void sleep_ns(uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* stopped: rank 1's child stops rank 0 (SIGSTOP) for a fifth of the dead
 * timeout at a time, STOP_ROUNDS times, letting it run 50 ms in between:
 * a judge away in many gaps shorter than a quarter of the dead timeout,
 * none of which restarts its silence windows (unless the machine's load
 * adds 50 ms to a stop). For the first half rank 1
 * keeps sending requests (pings, which rank 0 answers), and its credits
 * run out in each stop; for the second half it only polls, and each
 * rank hears the other only through heartbeats. Neither rank may find the
 * other dead: rank 0 hears, at each return, what rank 1 sent while it was
 * stopped (MPI kept it), and rank 1 hears rank 0's replies and heartbeats
 * each time rank 0 runs. A run in which a rank found silent was away from
 * its polls for half the dead timeout at once (the machine's load on top
 * of the stops) judges nothing. */
static int scenario_stopped(void) {
  syncq_am_mpi_config cfg = {.force_mpi = true, .dead_timeout_ns = TEST_DEAD_NS};
  counts c;
  syncq_am_endpoint *ep;
  syncq_am_mpi *job = pair_create(&cfg, &c, &ep);
  int me = syncq_am_mpi_rank(job);
  syncq_am_peer *peer = pair_start(job);
  int pid0 = (int)getpid(), len = 0;
  CHECK(MPI_Bcast(&pid0, 1, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
  /* rank 1's child signals rank 0 by its pid: both must be on one host */
  char host[MPI_MAX_PROCESSOR_NAME], host0[MPI_MAX_PROCESSOR_NAME];
  CHECK(MPI_Get_processor_name(host, &len) == MPI_SUCCESS);
  memcpy(host0, host, sizeof host);
  CHECK(MPI_Bcast(host0, (int)sizeof host0, MPI_CHAR, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(strcmp(host, host0) == 0);
  uint64_t gap = 0, prev = syncq_now_ns(), sent = 0, end = prev + WAIT_NS;
  if (me == 0) {
    /* poll until rank 1's closing request; the stops show as gaps */
    while (c.sunk < 1 && !syncq_am_mpi_peer_dead(job, 1) && syncq_now_ns() < end) {
      CHECK(syncq_am_poll(ep, POLL_BUDGET, NULL) == SYNCQ_OK);
      sched_yield();
      uint64_t now = syncq_now_ns();
      if (now - prev > gap) gap = now - prev;
      prev = now;
    }
  } else {
    pid_t stopper = fork();
    if (stopper == 0) { /* rank 1's child: no MPI here */
      (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
      alarm(60);
      for (unsigned i = 0; i < STOP_ROUNDS; i++) {
        kill(pid0, SIGSTOP);
        sleep_ns(STOP_NS);
        kill(pid0, SIGCONT);
        sleep_ns(STOP_RUN_NS);
      }
      _exit(0);
    }
    CHECK(stopper > 0);
    /* send for the first half, then only poll, until the stops are over:
     * NOWAIT, so that this loop sees its own gaps; SYNCQ_FULL while rank
     * 0 is stopped (no credits) */
    uint64_t quiet = prev + STOP_ROUNDS / 2u * (STOP_NS + STOP_RUN_NS);
    while (waitpid(stopper, NULL, WNOHANG) == 0 && !syncq_am_mpi_peer_dead(job, 0) && syncq_now_ns() < end) {
      uint32_t a[3] = {1u, 8u, (uint32_t)sent};
      int r = syncq_now_ns() < quiet ? syncq_am_request(peer, H_PING, a, 3, SYNCQ_AM_NOWAIT) : SYNCQ_FULL;
      CHECK(r == SYNCQ_OK || r == SYNCQ_FULL || r == SYNCQ_EDEAD);
      if (r == SYNCQ_OK) sent++;
      CHECK(syncq_am_poll(ep, POLL_BUDGET, NULL) == SYNCQ_OK);
      if (r == SYNCQ_FULL) sched_yield();
      uint64_t now = syncq_now_ns();
      if (now - prev > gap) gap = now - prev;
      prev = now;
    }
    if (syncq_am_mpi_peer_dead(job, 0)) {
      kill(stopper, SIGKILL), waitpid(stopper, NULL, 0);
      kill(pid0, SIGCONT);
    }
  }
  bool dead = syncq_am_mpi_peer_dead(job, 1 - me);
  if (dead) fprintf(stderr, "rank %d: %s\n", me, syncq_am_mpi_why(job));
  if (me == 1 && !dead) {
    uint32_t a[1] = {1};
    CHECK(syncq_am_request(peer, H_SINK, a, 1, 0) == SYNCQ_OK);
    CHECK(poll_until(ep, &c.pongs, sent, WAIT_NS)); /* every ping answered */
  }
  /* each rank's longest gap between its polls, for the other's verdict */
  uint64_t gaps[2];
  CHECK(MPI_Allgather(&gap, 1, MPI_UINT64_T, gaps, 1, MPI_UINT64_T, MPI_COMM_WORLD) == MPI_SUCCESS);
  fprintf(stderr, "rank %d: away from its polls for %.0f ms at most%s\n", me, (double)gap / 1e6,
          me == 1 ? "" : " (its stops included)");
  if (dead && gaps[1 - me] >= TEST_DEAD_NS / 2) inconclusive(1 - me, gaps[1 - me]);
  CHECK(!dead);
  if (me == 0) CHECK(c.sunk == 1);
  if (me == 1) CHECK(sent > 0 && c.pongs == sent);
  poll_barrier(ep);
  CHECK(c.bad == 0);
  CHECK(syncq_am_mpi_destroy(job) == SYNCQ_OK);
  return 0;
}

/* crowded: rank 0's node-local queue is never empty, and holds more
 * than a poll's budget: a handler of its own sends the next local
 * message each time it runs. A poll that served the local queues first
 * every time never reached the MPI transport: the rank sent no heartbeat
 * (rank 1 found it dead after one dead timeout), and a send of its stalled
 * on credits judged rank 1 on receives it had not tested (rank 0 found
 * rank 1 dead, and the send returned SYNCQ_EDEAD). For two dead timeouts
 * rank 0 only polls; for two more it also sends blocking pings to rank 1,
 * more than its credits, so its sends stall while the local traffic goes
 * on. Neither rank may find the other dead, every ping must be answered,
 * and every poll of rank 0's must have had its budget filled by local
 * messages. A rank found silent that was away from its polls for half the
 * dead timeout at once judges nothing. */
typedef struct crowd {
  syncq_am_peer *self; /* rank 0's connection to its own endpoint */
  bool stop;           /* the next local message sends no other */
  uint64_t refused;    /* local sends that failed */
} crowd;

static void h_local(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  (void)t, (void)a, (void)na, (void)d, (void)len;
  crowd *cw = ctx;
  uint32_t x[1] = {0};
  if (cw->self != NULL && !cw->stop && syncq_am_request(cw->self, H_LOCAL, x, 1, SYNCQ_AM_NOWAIT) != SYNCQ_OK)
    cw->refused++;
}

static int scenario_crowded(void) {
  /* keep_name: rank 0 connects to its own endpoint by name, as a sender
   * outside the job would */
  syncq_am_mpi_config cfg = {
    .force_mpi = true, .credits = CROWD_CREDITS, .dead_timeout_ns = TEST_DEAD_NS, .keep_name = true};
  crowd cw = {0};
  counts c;
  syncq_am_endpoint *ep;
  syncq_am_mpi *job = pair_create(&cfg, &c, &ep);
  int me = syncq_am_mpi_rank(job);
  CHECK(syncq_am_register(ep, H_LOCAL, "local", h_local, &cw) == SYNCQ_OK);
  syncq_am_peer *peer = pair_start(job);
  uint64_t gap = 0, prev = syncq_now_ns(), end = prev + WAIT_NS, pings = 0;
  if (me == 0) {
    CHECK(syncq_am_connect(NULL, syncq_am_name(ep), &cw.self) == SYNCQ_OK);
    for (uint32_t i = 0; i < CROWD_LOCAL; i++) {
      uint32_t x[1] = {i};
      CHECK(syncq_am_request(cw.self, H_LOCAL, x, 1, SYNCQ_AM_NOWAIT) == SYNCQ_OK);
    }
    uint64_t t0 = prev;
    for (uint64_t now = t0; now - t0 < 2u * CROWD_PHASE_NS && !syncq_am_mpi_peer_dead(job, 1);) {
      if (now - t0 >= CROWD_PHASE_NS) { /* the second phase: a blocking ping, which stalls without credits */
        uint32_t a[3] = {0u, 1u, (uint32_t)pings};
        int r = syncq_am_request(peer, H_PING, a, 3, 0);
        if (r == SYNCQ_EDEAD) break;
        CHECK(r == SYNCQ_OK);
        pings++;
      }
      unsigned n = 0;
      CHECK(syncq_am_poll(ep, CROWD_BUDGET, &n) == SYNCQ_OK);
      CHECK(n == CROWD_BUDGET); /* the local messages alone fill every poll */
      now = syncq_now_ns();
      if (now - prev > gap) gap = now - prev;
      prev = now;
    }
    if (!syncq_am_mpi_peer_dead(job, 1)) {
      uint32_t a[1] = {0};
      CHECK(syncq_am_request(peer, H_SINK, a, 1, 0) == SYNCQ_OK);
      CHECK(poll_until(ep, &c.pongs, pings, WAIT_NS)); /* every ping answered, the local traffic going on */
    }
  } else {
    /* poll until rank 0's closing request */
    while (c.sunk < 1 && !syncq_am_mpi_peer_dead(job, 0) && syncq_now_ns() < end) {
      int r = syncq_am_wait(ep, POLL_BUDGET, TEST_DEAD_NS / 8u, NULL);
      CHECK(r == SYNCQ_OK || r == SYNCQ_ETIMEDOUT);
      uint64_t now = syncq_now_ns();
      if (now - prev > gap) gap = now - prev;
      prev = now;
    }
  }
  bool dead = syncq_am_mpi_peer_dead(job, 1 - me);
  if (dead) fprintf(stderr, "rank %d: %s\n", me, syncq_am_mpi_why(job));
  /* each rank's longest gap between its polls (a stalled send polls), for the other's verdict */
  uint64_t gaps[2];
  CHECK(MPI_Allgather(&gap, 1, MPI_UINT64_T, gaps, 1, MPI_UINT64_T, MPI_COMM_WORLD) == MPI_SUCCESS);
  fprintf(stderr, "rank %d: away from its polls for %.0f ms at most\n", me, (double)gap / 1e6);
  if (dead && gaps[1 - me] >= TEST_DEAD_NS / 2) inconclusive(1 - me, gaps[1 - me]);
  CHECK(!dead);
  if (me == 0) {
    fprintf(stderr, "rank 0: %llu pings answered beside the local traffic\n", (unsigned long long)pings);
    CHECK(pings > 2u * CROWD_CREDITS && c.pongs == pings); /* past the credits: sends stalled */
    CHECK(cw.refused == 0);
  } else {
    CHECK(c.sunk == 1);
  }
  cw.stop = true; /* the local messages left are handled by the barrier's polls */
  poll_barrier(ep);
  if (cw.self != NULL) CHECK(syncq_am_disconnect(cw.self) == SYNCQ_OK);
  CHECK(c.bad == 0);
  CHECK(syncq_am_mpi_destroy(job) == SYNCQ_OK);
  return 0;
}

/* backlog: a send that finds no credit tests every MPI receive that has
 * completed (harvest), which can leave more of them tested than the next
 * polls run. Each rank sends the other all its credits' worth of requests
 * at once; then rank 0's next send, without a credit, harvests rank 1's,
 * and rank 0 polls with a budget of 1 every eighth of the dead timeout
 * for BACKLOG_POLLS polls, each running one of that backlog, while rank 1
 * polls all the time and heartbeats. Rank 0 must not find rank 1 dead: a
 * poll tests its receives before it judges silence, also one whose budget
 * the backlog filled. A run in which rank 1 was away from its polls for
 * half the dead timeout at once judges nothing. */
static int scenario_backlog(void) {
  syncq_am_mpi_config cfg = {.force_mpi = true, .credits = SLOW_CREDITS, .dead_timeout_ns = TEST_DEAD_NS};
  counts c;
  syncq_am_endpoint *ep;
  syncq_am_mpi *job = pair_create(&cfg, &c, &ep);
  int me = syncq_am_mpi_rank(job);
  syncq_am_peer *peer = pair_start(job);
  uint32_t a[1] = {0};
  for (uint32_t i = 0; i < SLOW_CREDITS; i++) CHECK(syncq_am_request(peer, H_SINK, a, 1, SYNCQ_AM_NOWAIT) == SYNCQ_OK);
  /* both ranks' requests went before their barrier messages (as in slowpoll) */
  CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
  uint64_t gap = 0, prev = syncq_now_ns();
  bool dead = false;
  if (me == 0) {
    /* no credit came back yet (nothing was received since start): the send
     * harvests, testing every request of rank 1's that arrived */
    CHECK(syncq_am_request(peer, H_SINK, a, 1, SYNCQ_AM_NOWAIT) == SYNCQ_FULL);
    for (unsigned i = 0; i < BACKLOG_POLLS && !dead; i++) {
      sleep_ns(SLOW_GAP_NS); /* "computing" */
      unsigned n = 0;
      CHECK(syncq_am_poll(ep, 1, &n) == SYNCQ_OK);
      CHECK(n == 1); /* one of the backlog each time */
      dead = syncq_am_mpi_peer_dead(job, 1);
    }
    if (dead) fprintf(stderr, "rank 0: %s\n", syncq_am_mpi_why(job));
  }
  /* rank 1 polls until rank 0 is done judging (the barrier's polls) */
  MPI_Request b;
  int done = 0;
  CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &b) == MPI_SUCCESS);
  while (!done) {
    CHECK(MPI_Test(&b, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(syncq_am_poll(ep, POLL_BUDGET, NULL) == SYNCQ_OK);
    sched_yield();
    uint64_t now = syncq_now_ns();
    if (me == 1 && now - prev > gap) gap = now - prev;
    prev = now;
  }
  CHECK(MPI_Bcast(&gap, 1, MPI_UINT64_T, 1, MPI_COMM_WORLD) == MPI_SUCCESS);
  if (me == 0) {
    fprintf(stderr, "rank 0: rank 1 was away from its polls for %.0f ms at most\n", (double)gap / 1e6);
    if (dead && gap >= TEST_DEAD_NS / 2) inconclusive(1, gap);
    CHECK(!dead);
  }
  CHECK(poll_until(ep, &c.sunk, SLOW_CREDITS, WAIT_NS)); /* every request of the other's ran */
  poll_barrier(ep);
  CHECK(c.bad == 0);
  CHECK(syncq_am_mpi_destroy(job) == SYNCQ_OK);
  return 0;
}

/* selfbye: what rank 0's handlers, run inside its own destroy, see of
 * rank 0 itself. */
typedef struct self_seen {
  syncq_am_mpi *job;
  unsigned runs;   /* handlers run */
  unsigned dead;   /* ... that found this rank dead (syncq_am_mpi_peer_dead of itself) */
  unsigned differ; /* ... that found peer_dead and peer_why of itself disagreeing */
} self_seen;

static void h_self(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  (void)t;
  (void)a;
  (void)na;
  (void)d;
  (void)len;
  self_seen *w = ctx;
  int me = syncq_am_mpi_rank(w->job);
  bool dead = syncq_am_mpi_peer_dead(w->job, me);
  const char *why = syncq_am_mpi_peer_why(w->job, me);
  w->runs++;
  w->dead += dead ? 1u : 0u;
  /* dead with a reason, or alive with "" (or NULL: self is bad input) */
  w->differ += dead != (why != NULL && why[0] != '\0') ? 1u : 0u;
}

/* selfbye: with every peer through MPI, a rank's destroy sends its BYE to
 * itself too, and takes it (its own entry found "left") while handling
 * what still arrives. Rank 1 sends SELF_REQUESTS requests that rank 0
 * handles only inside its destroy, after its own BYE: the handlers must
 * find rank 0 itself not lost, through both calls. */
#define SELF_REQUESTS 8u
static int scenario_selfbye(void) {
  syncq_am_mpi_config cfg = {.force_mpi = true, .dead_timeout_ns = TEST_DEAD_NS};
  counts c;
  syncq_am_endpoint *ep;
  self_seen w = {0};
  syncq_am_mpi *job = pair_create(&cfg, &c, &ep);
  w.job = job;
  CHECK(syncq_am_register(ep, H_SELF, "self", h_self, &w) == SYNCQ_OK);
  syncq_am_peer *peer = pair_start(job);
  int me = syncq_am_mpi_rank(job);
  CHECK(strcmp(syncq_am_mpi_path(job, me), "mpi") == 0);
  if (me == 1)
    for (uint32_t i = 0; i < SELF_REQUESTS; i++) CHECK(syncq_am_request(peer, H_SELF, &i, 1, 0) == SYNCQ_OK);
  /* rank 0 has not polled: the requests wait in MPI for its destroy */
  CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(!syncq_am_mpi_peer_dead(job, me) && syncq_am_mpi_peer_why(job, me) == NULL);
  CHECK(w.runs == 0);
  CHECK(syncq_am_mpi_destroy(job) == SYNCQ_OK);
  if (me == 0) {
    if (w.dead != 0 || w.differ != 0)
      fprintf(stderr, "rank 0: of %u handlers in the destroy, %u found itself dead, %u disagreeing\n", w.runs, w.dead,
              w.differ);
    CHECK(w.runs == SELF_REQUESTS);
    CHECK(w.dead == 0 && w.differ == 0);
  }
  CHECK(c.bad == 0);
  return 0;
}

static uint64_t minor_faults(void) {
  struct rusage u;
  CHECK(getrusage(RUSAGE_SELF, &u) == 0);
  return (uint64_t)u.ru_minflt;
}

/* n round trips, rank 0 asking and rank 1 answering; the minor page
 * faults this rank took meanwhile. */
static uint64_t round_trips(syncq_am_endpoint *ep, syncq_am_peer *peer, counts *c, int me, unsigned n) {
  uint64_t f0 = minor_faults();
  for (unsigned i = 0; i < n; i++) {
    if (me == 1) continue;
    uint32_t a[3] = {0, 1, i}; /* from rank 0, its check word, a serial */
    CHECK(syncq_am_request(peer, H_PING, a, 3, 0) == SYNCQ_OK);
    CHECK(poll_until(ep, &c->pongs, i + 1u, WAIT_NS));
  }
  if (me == 1) CHECK(poll_until(ep, &c->pings_from[0], n, WAIT_NS));
  return minor_faults() - f0;
}

static int scenario_prefault(void) {
  syncq_am_mpi_config cfg = {.force_mpi = true};
  counts c;
  syncq_am_endpoint *ep;
  /* The first job: MPI's own path between the ranks and this program's
   * code are touched here, so the second job's faults are its rings'. */
  syncq_am_mpi *job = pair_create(&cfg, &c, &ep);
  int me = syncq_am_mpi_rank(job);
  (void)round_trips(ep, pair_start(job), &c, me, 2u * RING_TRIPS);
  poll_barrier(ep);
  CHECK(syncq_am_mpi_destroy(job) == SYNCQ_OK);
  job = pair_create(&cfg, &c, &ep);
  uint64_t faults = round_trips(ep, pair_start(job), &c, me, RING_TRIPS);
  fprintf(stderr, "rank %d: %llu minor page faults in a new job's first %u round trips\n", me,
          (unsigned long long)faults, RING_TRIPS);
  CHECK(faults <= PREFAULT_SLACK);
  poll_barrier(ep);
  CHECK(c.bad == 0);
  CHECK(syncq_am_mpi_destroy(job) == SYNCQ_OK);
  return 0;
}

/* This process's data size as RLIMIT_DATA counts it (VmData), in bytes. */
static uint64_t data_bytes(void) {
  FILE *f = fopen("/proc/self/status", "r");
  CHECK(f != NULL);
  char line[256];
  unsigned long long kb = 0;
  bool found = false;
  while (!found && fgets(line, sizeof line, f) != NULL) found = sscanf(line, "VmData: %llu kB", &kb) == 1;
  fclose(f);
  CHECK(found);
  return (uint64_t)kb * 1024u;
}

/* failrings lowers RLIMIT_DATA under the last rank's rings, and the
 * kernel counts anonymous private mappings against that limit only from
 * Linux 4.7, and not when booted with ignore_rlimit_data: there the rings
 * map and no rank can be made to fail. Probed before MPI_Init (MPI's own
 * mappings must not meet a lowered limit): lower the limit as the scenario
 * does (`lower`), map more than its slack as the transport maps a ring
 * (private, anonymous, writable, untouched) and see whether the mapping is
 * refused. Returns true when it is; else says why in `why`. */
static bool data_limit_refuses(bool lower, char *why, size_t len) {
  struct rlimit data;
  CHECK(getrlimit(RLIMIT_DATA, &data) == 0);
  if (lower) {
    struct rlimit low = data;
    low.rlim_cur = (rlim_t)(data_bytes() + FAIL_DATA_SLACK);
    CHECK(setrlimit(RLIMIT_DATA, &low) == 0);
  }
  void *p = mmap(NULL, PROBE_MAP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  int err = errno;
  CHECK(setrlimit(RLIMIT_DATA, &data) == 0);
  if (p == MAP_FAILED) {
    /* Refused with the limit left where it is: something else (RLIMIT_AS,
     * the commit limit) stops the probe, which then tells nothing. */
    if (!lower)
      fprintf(stderr, "rank %d: the probe's %u MiB mapping was refused (errno %d)\n", g_rank, PROBE_MAP >> 20, err);
    CHECK(lower && err == ENOMEM);
    return true;
  }
  CHECK(munmap(p, PROBE_MAP) == 0);
  struct utsname u;
  CHECK(uname(&u) == 0);
  snprintf(
    why, len,
    "RLIMIT_DATA is not enforced on anonymous mappings here (Linux %s: a %u MiB mapping %s was not refused; the "
    "limit counts them from Linux 4.7, unless the kernel was booted with ignore_rlimit_data), so failrings "
    "cannot make a rank's rings fail to map",
    u.release, PROBE_MAP >> 20,
    lower ? "past a limit 8 MiB above the process's data" : "with the limit left where it was (failrings-nolimit)");
  return false;
}

/* One rank's step fails inside the collective create: every rank returns
 * (the alarm ends a rank left waiting in a collective call), the failing
 * one with its own error, the others with SYNCQ_EBROKEN, and nothing is
 * left behind that stops a job created next. */
static int scenario_createfail(const char *step) {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  bool failing = g_rank == n - 1;
  syncq_am_mpi_config cfg = {.force_mpi = true};
  syncq_am_mpi *job = NULL, **out = &job;
  int want = SYNCQ_EBROKEN;
  struct rlimit data;
  CHECK(getrlimit(RLIMIT_DATA, &data) == 0);
  if (failing && strcmp(step, "args") == 0) {
    out = NULL;
    want = SYNCQ_EINVAL;
  } else if (failing && strcmp(step, "endpoint") == 0) {
    cfg.shm.bulk_size = 100; /* not a multiple of the cache line */
    want = SYNCQ_EINVAL;
  } else if (failing) {
    /* Rings of 2 x 1024 + 8 buffers of 48 + 8,192 bytes, about 17 MB a
     * ring, against a limit FAIL_DATA_SLACK above what the process has:
     * the first ring's mapping fails, the steps before it fit. */
    cfg.credits = SYNCQ_AM_MPI_MAX_CREDITS;
    cfg.shm.bulk_size = SYNCQ_AM_BULK_MAX;
    struct rlimit low = data;
    low.rlim_cur = (rlim_t)(data_bytes() + FAIL_DATA_SLACK);
    CHECK(setrlimit(RLIMIT_DATA, &low) == 0);
    want = SYNCQ_ENOMEM;
  }
  alarm(CREATE_FAIL_S);
  int r = syncq_am_mpi_create(MPI_COMM_WORLD, &cfg, out);
  alarm(0);
  CHECK(setrlimit(RLIMIT_DATA, &data) == 0);
  if (r != want) fprintf(stderr, "rank %d: %s: create returned %d, not %d\n", g_rank, step, r, want);
  CHECK(r == want);
  CHECK(job == NULL);
  /* Every rank left the failed create together: a job made now works. */
  syncq_am_mpi_config ok = {.force_mpi = true};
  alarm(CREATE_FAIL_S);
  CHECK(syncq_am_mpi_create(MPI_COMM_WORLD, &ok, &job) == SYNCQ_OK);
  CHECK(syncq_am_mpi_start(job) == SYNCQ_OK);
  CHECK(syncq_am_mpi_size(job) == n);
  CHECK(syncq_am_mpi_destroy(job) == SYNCQ_OK);
  alarm(0);
  return 0;
}

/* failrings: the last rank's probe (it is the one that fails) decides
 * for every rank; where its kernel does not enforce the limit, the reason
 * goes to $SYNCQ_TEST_OUT/skip for mpi_run.sh and no rank calls the create. */
static int scenario_failrings(int refuses, const char *why) {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  CHECK(MPI_Bcast(&refuses, 1, MPI_INT, n - 1, MPI_COMM_WORLD) == MPI_SUCCESS);
  if (refuses) return scenario_createfail("rings");
  if (g_rank == n - 1) {
    fprintf(stderr, "rank %d: skipped: %s\n", g_rank, why);
    const char *dir = getenv("SYNCQ_TEST_OUT");
    char path[4096];
    if (dir != NULL && snprintf(path, sizeof path, "%s/skip", dir) < (int)sizeof path) {
      FILE *f = fopen(path, "w");
      CHECK(f != NULL);
      fprintf(f, "%s\n", why);
      CHECK(fclose(f) == 0);
    }
  }
  return SKIPPED;
}

/* sweep: the create removes the name of this transport's that a killed
 * job left (its creator dead: here a child that made an endpoint under
 * such a name and exited without destroying it), and leaves a live
 * process's (this one's) and a name that is not the transport's. One rank. */
static int scenario_sweep(void) {
  char dead[64], live[64], other[64];
  int fds[2];
  CHECK(pipe(fds) == 0);
  pid_t child = fork();
  CHECK(child >= 0);
  if (child == 0) {
    syncq_am_endpoint *e = NULL;
    char name[64];
    snprintf(name, sizeof name, "sqm%dx0-0", (int)getpid());
    int ok = syncq_am_create(name, NULL, &e) == SYNCQ_OK;
    if (write(fds[1], &ok, sizeof ok) != (ssize_t)sizeof ok) ok = 0;
    _exit(ok ? 0 : 1); /* killed in effect: its endpoint is never destroyed */
  }
  int ok = 0;
  CHECK(read(fds[0], &ok, sizeof ok) == (ssize_t)sizeof ok && ok);
  int st = 0;
  CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0);
  close(fds[0]);
  close(fds[1]);
  snprintf(dead, sizeof dead, "/sqm%dx0-0", (int)child);
  snprintf(live, sizeof live, "/sqm%dx900-0", (int)getpid());
  snprintf(other, sizeof other, "/sqmtest%d", (int)child);
  syncq_am_endpoint *mine = NULL, *odd = NULL;
  CHECK(syncq_am_create(live + 1, NULL, &mine) == SYNCQ_OK);
  /* its creator is this process too, but its name is not the transport's */
  CHECK(syncq_am_create(other + 1, NULL, &odd) == SYNCQ_OK);
  syncq_am_mpi *job = NULL;
  bool made = syncq_am_mpi_create(MPI_COMM_WORLD, NULL, &job) == SYNCQ_OK;
  /* looked at first, checked after the clean-up: a failed check ends the
   * job at once, and must leave no name of this test's behind */
  int fd = shm_open(dead, O_RDONLY, 0);
  bool dead_gone = fd < 0 && errno == ENOENT;
  if (fd >= 0) close(fd);
  fd = shm_open(live, O_RDONLY, 0);
  bool live_kept = fd >= 0;
  if (fd >= 0) close(fd);
  fd = shm_open(other, O_RDONLY, 0);
  bool other_kept = fd >= 0;
  if (fd >= 0) close(fd);
  bool destroyed = !made || syncq_am_mpi_destroy(job) == SYNCQ_OK;
  destroyed = syncq_am_destroy(mine) == SYNCQ_OK && destroyed;
  destroyed = syncq_am_destroy(odd) == SYNCQ_OK && destroyed;
  (void)shm_unlink(dead); /* not removed by the create: still this test's to remove */
  if (!dead_gone) fprintf(stderr, "%s: left by a dead creator, not removed\n", dead);
  CHECK(made && dead_gone && live_kept && other_kept && destroyed);
  return 0;
}

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "basic";
  /* Before MPI_Init: see data_limit_refuses. */
  char why[512] = "";
  int refuses = 1;
  bool nolimit = strcmp(what, "failrings-nolimit") == 0;
  if (nolimit || strcmp(what, "failrings") == 0) refuses = data_limit_refuses(!nolimit, why, sizeof why);
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  int rc;
  if (strcmp(what, "basic") == 0) rc = scenario_basic();
  else if (strcmp(what, "mismatch") == 0) rc = scenario_mismatch();
  else if (strcmp(what, "killed") == 0) rc = scenario_leave(true);
  else if (strcmp(what, "sweep") == 0) rc = scenario_sweep();
  else if (strcmp(what, "early") == 0) rc = scenario_leave(false);
  else if (strcmp(what, "waiter") == 0) rc = scenario_waiter();
  else if (strcmp(what, "slowpoll") == 0) rc = scenario_slowpoll();
  else if (strcmp(what, "stopped") == 0) rc = scenario_stopped();
  else if (strcmp(what, "crowded") == 0) rc = scenario_crowded();
  else if (strcmp(what, "backlog") == 0) rc = scenario_backlog();
  else if (strcmp(what, "prefault") == 0) rc = scenario_prefault();
  else if (strcmp(what, "selfbye") == 0) rc = scenario_selfbye();
  else if (strcmp(what, "failargs") == 0 || strcmp(what, "failendpoint") == 0) rc = scenario_createfail(what + 4);
  else if (strcmp(what, "failrings") == 0 || nolimit) rc = scenario_failrings(refuses, why);
  else {
    fprintf(stderr,
            "usage: %s basic|mismatch|killed|early|waiter|slowpoll|stopped|crowded|backlog|prefault|"
            "selfbye|failargs|failendpoint|failrings|failrings-nolimit|sweep\n",
            argv[0]);
    rc = 2;
  }
  if (rc != 0 && rc != SKIPPED) {
    fprintf(stderr, "rank %d: %s: failed\n", g_rank, what);
    leave_now();
  }
  if (g_rank == 0) printf("%s: %s\n", what, rc == SKIPPED ? "skipped" : "passed");
  MPI_Finalize();
  return 0;
}
