/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_fault_test.c — the MPI transport (syncq/am_mpi.h) under MPI calls
 * that fail: each scenario arms one injected failure in
 * tests/am/mpi_objects.c (preloaded into every rank, SYNCQ_MPI_RANK_PRELOAD)
 * on one rank or on all, right before the step whose MPI call it hits,
 * and checks the status each rank gets, that the failure was injected
 * (the interposer's count), that no rank waits past its bound (an alarm)
 * and that a job made next works. The interposer's verdict on the objects
 * left at MPI_Finalize is judged by the ctest line (tests/am/CMakeLists.txt:
 * a clean run, or exactly what the contract leaves with MPI).
 *
 *   mpi_fault_test SCENARIO       run by mpi_run.sh on 2 ranks (destroyreap: 3)
 *
 * The create (through MPI, force_mpi), a fault on every rank (a collective
 * call, which must fail alike everywhere) or on the last rank alone (a
 * local step, agreed: that rank SYNCQ_ESYS, the others SYNCQ_EBROKEN):
 *   dup        MPI_Comm_dup (MPI_COMM_WORLD under MPI_ERRORS_RETURN)  all
 *   seterr     MPI_Comm_set_errhandler of the duplicate (as dup)       last
 *   rank       MPI_Comm_rank                                           last
 *   agree1..4  the agreements' MPI_Allreduce, 1st to 4th               all
 *   bcast      the job name's MPI_Bcast                                all
 *   split      MPI_Comm_split_type                                     all
 *   nodesize   MPI_Comm_size of the node's communicator                last
 *   allgather  the node's MPI_Allgather                                all
 *   nodefree   MPI_Comm_free of the node's communicator                last
 *   ringrecv   the rings' third MPI_Irecv                              last
 * The same from the environment (SYNCQ_MPI_FAULT, set by the ctest line,
 * counted from the rank's first MPI call):
 *   envall     MPI_Allreduce:1 (every rank: SYNCQ_ESYS everywhere)
 *   envrank    MPI_Irecv:3@1 (rank 1 alone: it SYNCQ_ESYS, rank 0 SYNCQ_EBROKEN)
 * threadmain  MPI_Is_thread_main failing (every rank) in the create, the
 *   start and the destroy: each refuses (SYNCQ_EINVAL) and touches nothing,
 *   and a call again without the fault succeeds.
 *   truncate   rank 0's receives posted for 64 bytes (the interposer's
 *              syncq_mpi_recv_cap): rank 1's bulk request overflows one
 *              (MPI_ERR_TRUNCATE, through MPI_Testsome's MPI_ERR_IN_STATUS;
 *              MPI_COMM_WORLD under MPI_ERRORS_RETURN: MPICH raises it there);
 *              rank 1 learns it from rank 0's message, as below
 * bulksize   no injected fault: the ranks' bulk sizes differ (1024 and
 *   4096 bytes): the create refuses on every rank (SYNCQ_EINVAL,
 *   syncq_am_mpi_why(NULL) names both), and nothing is left.
 * The start: start  MPI_Allgather of the handler tables: SYNCQ_ESYS on
 *   every rank, the job not started; its destroy frees all.
 * Sends and polls (through MPI, a dead timeout of DEAD_NS): the failing
 * rank finds the other failed (SYNCQ_EDEAD, syncq_am_mpi_why names the
 * call) and tells it so; the other finds it dead at that message
 * (syncq_am_mpi_why: "failed this rank (CALL failed there)"), not after a
 * dead timeout of silence; both destroy with SYNCQ_OK and leave the job's
 * requests and communicator with MPI (a dead peer's):
 *   isend      rank 0's MPI_Isend of a request
 *   repost     rank 1's MPI_Irecv posting again a receive whose handler ran
 *   recvtest   rank 1's MPI_Testsome and then the MPI_Test of its receive
 *   partial    rank 0's MPI_Testsome fails after completing rank 1's
 *              message (the interposer's MPI_Testsome:1/after: the
 *              request freed and null, MPI_ERR_OTHER, outcount and
 *              indices scribbled): the message's fate is unknown
 * and one the transport recovers from, nothing found dead, all freed:
 *   testsome   rank 0's MPI_Testsome (it tests each receive alone)
 * A send's MPI_Test failing at the poll's reap of finished sends, which
 * tests a ring more than half in flight: rank 0's job has one credit
 * (rings of 10) and its sends stay in flight (the interposer's
 * syncq_mpi_sends_stall) while it sends 6 requests, each answered; the
 * fault is MPI_Test:K/send (the MPI_Test of a send, not of a receive):
 *   failedreap rank 0's first such MPI_Test fails: rank 1 is failed (told
 *              so: "an MPI send failed there") and the next polls test
 *              none of its sends again (a second MPI_Test:2/send armed
 *              never fires); both leave the job's requests and
 *              communicator with MPI, as for isend
 *   leftsend   rank 1 leaves first (its destroy, its BYE); rank 0 finds
 *              it left, and then that MPI_Test fails: no FAILED message
 *              takes the place of rank 0's BYE, which rank 1 gets at
 *              rank 0's destroy: every rank ends clean
 * The destroy of a rank with another peer alive polls while it waits for
 * that peer's BYE, and such a poll retested a failed peer's sends too,
 * its destroy then SYNCQ_ESYS; on 3 ranks (mpi_run.sh's np 3):
 *   destroyreap rank 0 fails rank 1 as in failedreap, the failed request
 *              failing every later MPI_Test (the interposer's
 *              syncq_mpi_failed_sends_stick), and destroys while rank 2
 *              waits for its BYE before leaving: the destroy, which polls
 *              until rank 2's BYE, returns SYNCQ_OK and tests the failed
 *              request no more; ranks 0 and 1 leave the job's requests
 *              and communicator with MPI, rank 2 ends clean
 * The destroy (node-local peers, so the barrier's are the only MPI calls;
 * or through MPI for the rings): the failing last rank returns SYNCQ_ESYS
 * with everything freed that MPI lets go:
 *   ibarrier   MPI_Ibarrier: the other rank's barrier ends at its deadline
 *              (SYNCQ_ETIMEDOUT, its barrier's request left with MPI)
 *   bartest    MPI_Test of the barrier: the request stays with MPI (a
 *              nonblocking collective's can be neither cancelled nor freed)
 *   cancel     MPI_Cancel of a receive (through MPI): it stays posted
 *   testall    MPI_Testall completing cancelled receives: they stay with
 *              MPI, their ring mapped
 *   stall      no fault: MPI_Testall completes nothing (the interposer's
 *              syncq_mpi_testall_stall): the cancels never complete, and
 *              the destroy returns SYNCQ_ETIMEDOUT within its bound,
 *              the receives left with MPI
 *   commfree   MPI_Comm_free of the job's communicator
 *
 * Where a scenario checks syncq_am_mpi_why it checks the peer's own
 * reason too (syncq_am_mpi_peer_why: "failed by this rank (CALL here",
 * "failed this rank (CALL there)", "left the job", each "T ms after the
 * start" with T no later than the check), "" for a peer alive and NULL
 * for bad input. In destroyreap rank 1, told FAILED by rank 0, waits for
 * rank 2's BYE: the job's last error is then rank 2's, and rank 0's
 * reason must still be there; in failedreap rank 0 naps PEER_NAP_NS
 * after the start before the fault, and T must not be earlier.
 *
 * A failed check prints rank, line and condition and ends the job
 * (MPI_Abort).
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "syncq/am_mpi.h"
#include "syncq/clock.h"

#define DEAD_NS 300000000ull   /* 300 ms: the dead timeout of the scenarios that find a peer dead */
#define DESTROY_BOUND_S 10u    /* the destroy's cap is 10 dead timeouts (3 s here): well inside */
#define STEP_ALARM_S 30u       /* a rank still inside a step after this is stuck */
#define FOUND_NS 5000000000ull /* the silent peer is found dead within this (D plus a loaded machine) */
#define POLL_BUDGET 16u
#define SKIPPED 77

enum { H_PING = 1, H_PONG = 2 };

static int g_rank = -1, g_size = 0;
static int (*arm_faults)(const char *);
static unsigned long (*faults_fired)(void);
static void (*recv_cap)(int);
static void (*testall_stall)(int);
static void (*sends_stall)(int);
static void (*failed_sends_stick)(int);
static unsigned long g_pongs, g_pings;
static uint64_t g_started, g_started_end; /* syncq_now_ns before and after the last start_job's start */
#define PEER_TICK_MS 20u                  /* slack of a time in syncq_am_mpi_peer_why: two ticks of the coarse clock */
#define PEER_NAP_NS 100000000ull          /* failedreap: the fault comes this long after the start at least */

#define CHECK(c)                                                                             \
  do {                                                                                       \
    if (!(c)) {                                                                              \
      fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", g_rank, __FILE__, __LINE__, #c); \
      fflush(NULL);                                                                          \
      alarm(10);                                                                             \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
      _exit(1);                                                                              \
    }                                                                                        \
  } while (0)

#define CHECK_RC(got, want)                                                                                            \
  do {                                                                                                                 \
    int got_ = (got), want_ = (want);                                                                                  \
    if (got_ != want_)                                                                                                 \
      fprintf(stderr, "rank %d: %s returned %s, not %s\n", g_rank, #got, syncq_strerror(got_), syncq_strerror(want_)); \
    CHECK(got_ == want_);                                                                                              \
  } while (0)

static void h_ping(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  (void)a;
  (void)na;
  (void)d;
  (void)len;
  (void)ctx;
  g_pings++;
  (void)syncq_am_reply(t, H_PONG, NULL, 0, 0);
}

static void h_pong(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  (void)t;
  (void)a;
  (void)na;
  (void)d;
  (void)len;
  (void)ctx;
  g_pongs++;
}

/* Arm spec on this rank when `here` (an empty spec on the others, which
 * counts nothing). */
static void arm(const char *spec, bool here) { CHECK(arm_faults(here ? spec : "") == 0); }

static syncq_am_mpi *make_job(bool force, uint64_t dead_ns, int want) {
  syncq_am_mpi_config cfg = {.force_mpi = force, .dead_timeout_ns = dead_ns};
  syncq_am_mpi *job = NULL;
  alarm(STEP_ALARM_S);
  CHECK_RC(syncq_am_mpi_create(MPI_COMM_WORLD, &cfg, &job), want);
  alarm(0);
  CHECK((job != NULL) == (want == SYNCQ_OK));
  return job;
}

static void start_job(syncq_am_mpi *job, int want) {
  syncq_am_endpoint *ep = syncq_am_mpi_endpoint(job);
  CHECK(syncq_am_register(ep, H_PING, "ping", h_ping, NULL) == SYNCQ_OK);
  CHECK(syncq_am_register(ep, H_PONG, "pong", h_pong, NULL) == SYNCQ_OK);
  alarm(STEP_ALARM_S);
  g_started = syncq_now_ns();
  CHECK_RC(syncq_am_mpi_start(job), want);
  g_started_end = syncq_now_ns();
  alarm(0);
}

/* A job made now on every rank works: the failed step left nothing that
 * stops it. */
static void one_exchange(syncq_am_mpi *job);
static void destroy_bounded(syncq_am_mpi *job, int want);

static void next_job_works(void) {
  CHECK(arm_faults("") == 0);
  syncq_am_mpi *job = make_job(true, 0, SYNCQ_OK);
  start_job(job, SYNCQ_OK);
  syncq_am_peer *p;
  CHECK(syncq_am_mpi_peer(job, (g_rank + 1) % g_size, &p) == SYNCQ_OK);
  unsigned long want = g_pongs + 1, pinged = g_pings + 1;
  CHECK(syncq_am_request(p, H_PING, NULL, 0, 0) == SYNCQ_OK);
  /* and the ping of the rank before this one answered: on 3 ranks this
   * rank's pong may come before that ping, which a destroy begun at
   * once would answer after its BYE */
  uint64_t end = syncq_now_ns() + FOUND_NS;
  while ((g_pongs < want || g_pings < pinged) && syncq_now_ns() < end)
    (void)syncq_am_poll(syncq_am_mpi_endpoint(job), POLL_BUDGET, NULL);
  CHECK(g_pongs == want && g_pings == pinged);
  alarm(STEP_ALARM_S);
  CHECK_RC(syncq_am_mpi_destroy(job), SYNCQ_OK);
  alarm(0);
}

/* ---------------------------------------------------------------- the create and the start */

typedef struct create_fault {
  const char *scenario, *spec;
  bool all; /* on every rank (a collective call), else the last rank alone */
} create_fault;

static const create_fault create_faults[] = {
  {"dup", "MPI_Comm_dup:1", true},          {"seterr", "MPI_Comm_set_errhandler:1", false},
  {"rank", "MPI_Comm_rank:1", false},       {"agree1", "MPI_Allreduce:1", true},
  {"agree2", "MPI_Allreduce:2", true},      {"agree3", "MPI_Allreduce:3", true},
  {"agree4", "MPI_Allreduce:4", true},      {"bcast", "MPI_Bcast:1", true},
  {"split", "MPI_Comm_split_type:1", true}, {"nodesize", "MPI_Comm_size:2", false},
  {"allgather", "MPI_Allgather:1", true},   {"nodefree", "MPI_Comm_free:1", false},
  {"ringrecv", "MPI_Irecv:3", false},
};

static int scenario_create(const create_fault *f) {
  bool last = g_rank == g_size - 1, here = f->all || last;
  /* the duplication, and setting the duplicate's handler, run under
   * comm's handler (syncq/am_mpi.h): the fatal one would end the job */
  bool returns = strcmp(f->scenario, "dup") == 0 || strcmp(f->scenario, "seterr") == 0;
  if (returns) CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN) == MPI_SUCCESS);
  arm(f->spec, here);
  (void)make_job(true, 0, here ? SYNCQ_ESYS : SYNCQ_EBROKEN);
  CHECK(faults_fired() == (here ? 1u : 0u));
  if (returns) CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL) == MPI_SUCCESS);
  next_job_works();
  return 0;
}

/* A fault armed by SYNCQ_MPI_FAULT before the first MPI call. */
static int scenario_env(bool all) {
  const char *e = getenv("SYNCQ_MPI_FAULT");
  CHECK(e != NULL && strcmp(e, all ? "MPI_Allreduce:1" : "MPI_Irecv:3@1") == 0);
  bool here = all || g_rank == 1;
  (void)make_job(true, 0, here ? SYNCQ_ESYS : SYNCQ_EBROKEN);
  CHECK(faults_fired() == (here ? 1u : 0u));
  next_job_works();
  return 0;
}

static int scenario_threadmain(void) {
  arm("MPI_Is_thread_main:1", true);
  (void)make_job(true, 0, SYNCQ_EINVAL);
  CHECK(arm_faults("") == 0);
  syncq_am_mpi *job = make_job(true, 0, SYNCQ_OK);
  arm("MPI_Is_thread_main:1", true);
  start_job(job, SYNCQ_EINVAL);
  CHECK(arm_faults("") == 0);
  CHECK_RC(syncq_am_mpi_start(job), SYNCQ_OK); /* the handlers registered above */
  arm("MPI_Is_thread_main:1", true);
  CHECK_RC(syncq_am_mpi_destroy(job), SYNCQ_EINVAL);
  CHECK(arm_faults("") == 0);
  one_exchange(job); /* the job still works */
  CHECK(faults_fired() == 3u);
  destroy_bounded(job, SYNCQ_OK);
  return 0;
}

static int scenario_start(void) {
  CHECK(arm_faults("") == 0);
  syncq_am_mpi *job = make_job(true, 0, SYNCQ_OK);
  arm("MPI_Allgather:1", true);
  start_job(job, SYNCQ_ESYS);
  CHECK(faults_fired() == 1u);
  syncq_am_peer *p;
  CHECK(syncq_am_mpi_peer(job, 0, &p) == SYNCQ_EINVAL); /* not started */
  alarm(STEP_ALARM_S);
  CHECK_RC(syncq_am_mpi_destroy(job), SYNCQ_OK);
  alarm(0);
  next_job_works();
  return 0;
}

/* ---------------------------------------------------------------- sends and polls */

/* Poll until the other rank is found dead (bounded). */
static void until_dead(syncq_am_mpi *job, int other) {
  uint64_t end = syncq_now_ns() + FOUND_NS;
  while (!syncq_am_mpi_peer_dead(job, other) && syncq_now_ns() < end)
    (void)syncq_am_poll(syncq_am_mpi_endpoint(job), POLL_BUDGET, NULL);
  CHECK(syncq_am_mpi_peer_dead(job, other));
}

/* syncq_am_mpi_peer_why(job, other) begins with `want` and ends with
 * when the peer was found lost: "T ms after the start", T no later than
 * now and, with `after` (a syncq_now_ns before the loss; 0: none), no
 * earlier than it (a coarse clock's tick late at most, either stamp). */
static void peer_why_at(syncq_am_mpi *job, int other, const char *want, uint64_t after) {
  const char *why = syncq_am_mpi_peer_why(job, other);
  const char *tail = " ms after the start";
  size_t n = why != NULL ? strlen(why) : 0, tn = strlen(tail);
  bool ok = why != NULL && strncmp(why, want, strlen(want)) == 0 && n > tn && strcmp(why + n - tn, tail) == 0;
  if (ok) {
    size_t d = n - tn;
    while (d > 0 && why[d - 1] >= '0' && why[d - 1] <= '9') d--;
    unsigned long long t = strtoull(why + d, NULL, 10);
    ok = d > 0 && d < n - tn && why[d - 1] == ' ' && t <= (syncq_now_ns() - g_started) / 1000000u + PEER_TICK_MS &&
         (after == 0 || t + PEER_TICK_MS >= (after - g_started_end) / 1000000u);
  }
  if (!ok) fprintf(stderr, "rank %d: peer_why(%d): %s (expected %s...)\n", g_rank, other, why ? why : "NULL", want);
  CHECK(ok);
}

static void peer_why_is(syncq_am_mpi *job, int other, const char *want) { peer_why_at(job, other, want, 0); }

/* The other rank failed this one because its own MPI call `call` failed,
 * and said so: found dead by that message, not by a dead timeout's
 * silence (which a run that lost the message would report). */
static void told_failed(syncq_am_mpi *job, int other, const char *call) {
  until_dead(job, other);
  char want[128];
  snprintf(want, sizeof want, "rank %d: failed this rank (%s there)", other, call);
  if (strstr(syncq_am_mpi_why(job), want) == NULL)
    fprintf(stderr, "rank %d: why: %s (expected %s)\n", g_rank, syncq_am_mpi_why(job), want);
  CHECK(strstr(syncq_am_mpi_why(job), want) != NULL);
  snprintf(want, sizeof want, "failed this rank (%s there): its FAILED message came ", call);
  peer_why_is(job, other, want);
}

/* This rank's own MPI call `call` failed on the other's messages (not
 * before `after`, as peer_why_at). */
static void failed_here_at(syncq_am_mpi *job, int other, const char *call, uint64_t after) {
  char want[128];
  snprintf(want, sizeof want, "failed by this rank (%s here, on its messages) ", call);
  peer_why_at(job, other, want, after);
}

static void failed_here(syncq_am_mpi *job, int other, const char *call) { failed_here_at(job, other, call, 0); }

static void destroy_bounded(syncq_am_mpi *job, int want) {
  uint64_t t0 = syncq_now_ns();
  alarm(STEP_ALARM_S);
  CHECK_RC(syncq_am_mpi_destroy(job), want);
  alarm(0);
  CHECK(syncq_now_ns() - t0 < DESTROY_BOUND_S * DEAD_NS + 2000000000ull);
}

/* A round trip from rank 0 to rank 1 and back, so both are up. */
static void one_exchange(syncq_am_mpi *job) {
  syncq_am_peer *p;
  CHECK(syncq_am_mpi_peer(job, 1 - g_rank, &p) == SYNCQ_OK);
  unsigned long want = g_pongs + 1;
  CHECK(syncq_am_request(p, H_PING, NULL, 0, 0) == SYNCQ_OK);
  uint64_t end = syncq_now_ns() + FOUND_NS;
  while (g_pongs < want && syncq_now_ns() < end) (void)syncq_am_poll(syncq_am_mpi_endpoint(job), POLL_BUDGET, NULL);
  CHECK(g_pongs == want);
}

/* Rank `failing` arms spec; `act` makes it fail there; the other rank
 * polls until it finds the failing one silent. */
#define SMALL_BULK 1024u /* bulksize: rank 0's bulk size (rank 1's is four times it) */

#define CAPPED_RECV 64u /* truncate: rank 0's receives hold a header and 16 bytes */

/* A receive that MPI completes with an error: rank 0 finds rank 1 failed. */
static int scenario_truncate(void) {
  CHECK(arm_faults("") == 0);
  /* MPICH 4.0 raises a failed receive's error in MPI_Testsome on
   * MPI_COMM_WORLD's handler, not on the request's communicator's */
  CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN) == MPI_SUCCESS);
  if (g_rank == 0) recv_cap((int)CAPPED_RECV);
  syncq_am_mpi *job = make_job(true, DEAD_NS, SYNCQ_OK);
  recv_cap(0);
  start_job(job, SYNCQ_OK);
  one_exchange(job); /* headers alone: they fit */
  CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
  int other = 1 - g_rank;
  if (g_rank == 1) {
    static unsigned char big[4u * CAPPED_RECV];
    syncq_am_peer *p;
    CHECK(syncq_am_mpi_peer(job, 0, &p) == SYNCQ_OK);
    CHECK_RC(syncq_am_request_bulk(p, H_PING, big, sizeof big, NULL, 0, 0), SYNCQ_OK);
    told_failed(job, other, "an MPI receive failed");
  } else {
    until_dead(job, other);
    if (strstr(syncq_am_mpi_why(job), "an MPI receive failed") == NULL)
      fprintf(stderr, "rank %d: why: %s\n", g_rank, syncq_am_mpi_why(job));
    CHECK(strstr(syncq_am_mpi_why(job), "an MPI receive failed") != NULL);
    failed_here(job, other, "an MPI receive failed");
    CHECK(g_pings == 1u); /* the first exchange's only */
  }
  destroy_bounded(job, SYNCQ_OK);
  return 0;
}

/* Ranks whose bulk sizes differ: every rank's create refuses the job
 * (SYNCQ_EINVAL), and syncq_am_mpi_why(NULL) names both sizes. */
static int scenario_bulksize(void) {
  CHECK(arm_faults("") == 0);
  syncq_am_mpi_config cfg = {.force_mpi = true, .dead_timeout_ns = DEAD_NS};
  cfg.shm.bulk_size = g_rank == 0 ? SMALL_BULK : 4u * SMALL_BULK;
  syncq_am_mpi *job = NULL;
  alarm(STEP_ALARM_S);
  CHECK_RC(syncq_am_mpi_create(MPI_COMM_WORLD, &cfg, &job), SYNCQ_EINVAL);
  alarm(0);
  CHECK(job == NULL);
  const char *why = syncq_am_mpi_why(NULL);
  if (strstr(why, "1024") == NULL || strstr(why, "4096") == NULL) fprintf(stderr, "rank %d: why: %s\n", g_rank, why);
  CHECK(strstr(why, "bulk sizes differ") != NULL && strstr(why, "1024") != NULL && strstr(why, "4096") != NULL);
  next_job_works();
  CHECK(strcmp(syncq_am_mpi_why(NULL), "") == 0); /* a create that succeeded says nothing */
  return 0;
}

static int scenario_peer_fails(const char *scenario) {
  CHECK(arm_faults("") == 0);
  syncq_am_mpi *job = make_job(true, DEAD_NS, SYNCQ_OK);
  start_job(job, SYNCQ_OK);
  syncq_am_endpoint *ep = syncq_am_mpi_endpoint(job);
  one_exchange(job);
  /* every rank's exchange has ended before a fault is armed */
  CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
  int other = 1 - g_rank;
  bool recover = strcmp(scenario, "testsome") == 0, partial = strcmp(scenario, "partial") == 0;
  int failing = strcmp(scenario, "isend") == 0 || recover || partial ? 0 : 1;
  const char *why = NULL;
  unsigned long fired = 1;
  if (g_rank == failing) {
    syncq_am_peer *p;
    CHECK(syncq_am_mpi_peer(job, other, &p) == SYNCQ_OK);
    if (strcmp(scenario, "isend") == 0) {
      arm("MPI_Isend:1", true);
      CHECK_RC(syncq_am_request(p, H_PING, NULL, 0, 0), SYNCQ_EDEAD);
      why = "MPI_Isend failed";
    } else if (strcmp(scenario, "repost") == 0) {
      /* the ping's handler runs in one poll, its receive is posted again
       * at the next: that MPI_Irecv fails */
      arm("MPI_Irecv:1", true);
      uint64_t end = syncq_now_ns() + FOUND_NS;
      while (faults_fired() == 0 && syncq_now_ns() < end) (void)syncq_am_poll(ep, POLL_BUDGET, NULL);
      why = "MPI_Irecv failed";
    } else if (strcmp(scenario, "recvtest") == 0) {
      /* the poll's MPI_Testsome fails, then the MPI_Test of the first
       * receive it tests alone (the other rank's: ranks in order) */
      arm("MPI_Testsome:1,MPI_Test:1", true);
      uint64_t end = syncq_now_ns() + FOUND_NS;
      while (faults_fired() < 2 && syncq_now_ns() < end) (void)syncq_am_poll(ep, POLL_BUDGET, NULL);
      why = "an MPI receive failed";
      fired = 2;
    } else if (partial) {
      arm("MPI_Testsome:1/after", true);
      CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS); /* rank 1 sends once this is armed */
      uint64_t end = syncq_now_ns() + FOUND_NS;
      while (faults_fired() == 0 && syncq_now_ns() < end) (void)syncq_am_poll(ep, POLL_BUDGET, NULL);
      why = "an MPI receive failed";
    } else {
      arm("MPI_Testsome:1", true);
      uint64_t end = syncq_now_ns() + FOUND_NS;
      while (faults_fired() == 0 && syncq_now_ns() < end) (void)syncq_am_poll(ep, POLL_BUDGET, NULL);
    }
    CHECK(faults_fired() == fired);
  }
  if (recover) {
    /* nothing lost: both ranks still talk, nobody is dead */
    CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
    one_exchange(job);
    CHECK(!syncq_am_mpi_peer_dead(job, other));
    CHECK(strcmp(syncq_am_mpi_peer_why(job, other), "") == 0);
    CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
    destroy_bounded(job, SYNCQ_OK);
    return 0;
  }
  if (g_rank == failing) {
    CHECK(syncq_am_mpi_peer_dead(job, other));
    if (strstr(syncq_am_mpi_why(job), why) == NULL)
      fprintf(stderr, "rank %d: why: %s\n", g_rank, syncq_am_mpi_why(job));
    CHECK(strstr(syncq_am_mpi_why(job), why) != NULL);
    failed_here(job, other, why);
    syncq_am_peer *p;
    CHECK(syncq_am_mpi_peer(job, other, &p) == SYNCQ_OK);
    CHECK_RC(syncq_am_request(p, H_PING, NULL, 0, 0), SYNCQ_EDEAD);
  } else {
    if (partial) {
      CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
      syncq_am_peer *p;
      CHECK(syncq_am_mpi_peer(job, other, &p) == SYNCQ_OK);
      CHECK_RC(syncq_am_request(p, H_PING, NULL, 0, 0), SYNCQ_OK); /* what rank 0's MPI_Testsome completes */
    }
    told_failed(job, other,
                strcmp(scenario, "isend") == 0    ? "MPI_Isend failed"
                : strcmp(scenario, "repost") == 0 ? "MPI_Irecv failed"
                                                  : "an MPI receive failed");
  }
  destroy_bounded(job, SYNCQ_OK);
  return 0;
}

#define BACKLOG_DEAD_NS 2000000000ull /* failedreap, leftsend: 2 s, so rank 0 sends no heartbeat meanwhile */
#define BACKLOG_SENDS 6u              /* more than half the ring of 2 x 1 + 8, and room left in it */

/* failedreap, leftsend, destroyreap: a job with one credit per peer
 * (send rings of 10), started; rank 0 has BACKLOG_SENDS requests to rank
 * 1 in flight, each answered, none retired (syncq_mpi_sends_stall stays
 * on); a third rank sends nothing. */
static syncq_am_mpi *backlog_job(uint64_t dead_ns) {
  CHECK(arm_faults("") == 0);
  syncq_am_mpi_config cfg = {.force_mpi = true, .dead_timeout_ns = dead_ns, .credits = 1};
  syncq_am_mpi *job = NULL;
  alarm(STEP_ALARM_S);
  CHECK_RC(syncq_am_mpi_create(MPI_COMM_WORLD, &cfg, &job), SYNCQ_OK);
  alarm(0);
  start_job(job, SYNCQ_OK);
  syncq_am_endpoint *ep = syncq_am_mpi_endpoint(job);
  uint64_t end = syncq_now_ns() + FOUND_NS;
  if (g_rank == 0) {
    sends_stall(1);
    syncq_am_peer *p;
    CHECK(syncq_am_mpi_peer(job, 1, &p) == SYNCQ_OK);
    for (unsigned i = 0; i < BACKLOG_SENDS; i++) {
      unsigned long want = g_pongs + 1;
      /* the credit is back (the last pong): SYNCQ_FULL only for a full ring */
      CHECK_RC(syncq_am_request(p, H_PING, NULL, 0, SYNCQ_AM_NOWAIT), SYNCQ_OK);
      while (g_pongs < want && syncq_now_ns() < end) (void)syncq_am_poll(ep, POLL_BUDGET, NULL);
      CHECK(g_pongs == want);
    }
  } else if (g_rank == 1) {
    while (g_pings < BACKLOG_SENDS && syncq_now_ns() < end) (void)syncq_am_poll(ep, POLL_BUDGET, NULL);
    CHECK(g_pings == BACKLOG_SENDS);
  }
  CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
  return job;
}

/* failedreap: a send's failed MPI_Test fails its peer once; the poll's
 * reap of finished sends then skips that peer, whose requests stay with
 * MPI (before, it tested the same send at every poll, each failure
 * counted again). */
static int scenario_failedreap(void) {
  /* "/send" belongs to MPI_Test alone, "/after" to MPI_Testsome alone */
  CHECK(arm_faults("MPI_Testsome:1/send") == -1);
  CHECK(arm_faults("MPI_Test:1/after") == -1);
  syncq_am_mpi *job = backlog_job(BACKLOG_DEAD_NS);
  if (g_rank == 0) {
    syncq_am_endpoint *ep = syncq_am_mpi_endpoint(job);
    /* a nap (well inside a quarter of the dead timeout): the time the
     * failure is stamped with counts from the start */
    uint64_t after = g_started_end + PEER_NAP_NS;
    while (syncq_now_ns() < after) (void)usleep(10000);
    arm("MPI_Test:1/send,MPI_Test:2/send", true);
    uint64_t end = syncq_now_ns() + FOUND_NS;
    while (faults_fired() == 0 && syncq_now_ns() < end) (void)syncq_am_poll(ep, POLL_BUDGET, NULL);
    CHECK(faults_fired() == 1u);
    CHECK(syncq_am_mpi_peer_dead(job, 1));
    if (strstr(syncq_am_mpi_why(job), "rank 1: an MPI send failed") == NULL)
      fprintf(stderr, "rank %d: why: %s\n", g_rank, syncq_am_mpi_why(job));
    CHECK(strstr(syncq_am_mpi_why(job), "rank 1: an MPI send failed") != NULL);
    failed_here_at(job, 1, "an MPI send failed", after);
    /* each poll would reach the reap: the ring is still more than half in flight */
    for (int i = 0; i < 4; i++) (void)syncq_am_poll(ep, POLL_BUDGET, NULL);
    CHECK(faults_fired() == 1u);
    CHECK(arm_faults("") == 0); /* the destroy tests this rank's BYE to itself */
    sends_stall(0);
  } else {
    told_failed(job, 0, "an MPI send failed");
  }
  destroy_bounded(job, SYNCQ_OK);
  next_job_works();
  return 0;
}

/* leftsend: a send to a peer that has left fails; the peer still gets
 * this rank's BYE, not a FAILED message in its place (which made it
 * failed there, its requests and communicator left with MPI). */
static int scenario_leftsend(void) {
  syncq_am_mpi *job = backlog_job(BACKLOG_DEAD_NS);
  if (g_rank == 1) {
    destroy_bounded(job, SYNCQ_OK); /* its BYE, then it waits for rank 0's */
  } else {
    until_dead(job, 1);
    if (strstr(syncq_am_mpi_why(job), "rank 1: left the job") == NULL)
      fprintf(stderr, "rank %d: why: %s\n", g_rank, syncq_am_mpi_why(job));
    CHECK(strstr(syncq_am_mpi_why(job), "rank 1: left the job") != NULL);
    peer_why_is(job, 1, "left the job: its BYE came ");
    /* the next MPI_Test of a send is the poll's reap, the ring being more
     * than half in flight (nothing else is tested from or sent to a peer
     * that has left) */
    arm("MPI_Test:1/send", true);
    (void)syncq_am_poll(syncq_am_mpi_endpoint(job), POLL_BUDGET, NULL);
    CHECK(faults_fired() == 1u);
    CHECK(strstr(syncq_am_mpi_why(job), "rank 1: left the job") != NULL);
    peer_why_is(job, 1, "left the job: its BYE came "); /* the first reason stays */
    sends_stall(0);
    destroy_bounded(job, SYNCQ_OK);
  }
  next_job_works();
  return 0;
}

#define REAP3_DEAD_NS 8000000000ull /* destroyreap: 8 s, so rank 0 tests no send to rank 2 (a heartbeat's) meanwhile */

/* destroyreap (3 ranks): rank 0 fails rank 1 at a send's MPI_Test, a
 * request that then fails every MPI_Test (the interposer's
 * syncq_mpi_failed_sends_stick), and destroys while rank 2, which waits
 * for rank 0's BYE before its own, is still there: rank 0's destroy polls
 * until rank 2's BYE comes, and those polls must not test rank 1's sends
 * again (before, each did: the request failed again, and the destroy
 * returned SYNCQ_ESYS). */
static int scenario_destroyreap(void) {
  syncq_am_mpi *job = backlog_job(REAP3_DEAD_NS);
  if (g_rank == 0) {
    syncq_am_endpoint *ep = syncq_am_mpi_endpoint(job);
    failed_sends_stick(1);
    arm("MPI_Test:1/send", true);
    uint64_t end = syncq_now_ns() + FOUND_NS;
    while (faults_fired() == 0 && syncq_now_ns() < end) (void)syncq_am_poll(ep, POLL_BUDGET, NULL);
    CHECK(faults_fired() == 1u);
    CHECK(syncq_am_mpi_peer_dead(job, 1) && !syncq_am_mpi_peer_dead(job, 2));
    if (strstr(syncq_am_mpi_why(job), "rank 1: an MPI send failed") == NULL)
      fprintf(stderr, "rank %d: why: %s\n", g_rank, syncq_am_mpi_why(job));
    CHECK(strstr(syncq_am_mpi_why(job), "rank 1: an MPI send failed") != NULL);
    failed_here(job, 1, "an MPI send failed");
    CHECK(strcmp(syncq_am_mpi_peer_why(job, 2), "") == 0); /* alive */
    /* bad input: no job, a rank out of range, this rank itself */
    CHECK(syncq_am_mpi_peer_why(NULL, 1) == NULL);
    CHECK(syncq_am_mpi_peer_why(job, -1) == NULL && syncq_am_mpi_peer_why(job, 3) == NULL);
    CHECK(syncq_am_mpi_peer_why(job, 0) == NULL);
    sends_stall(0); /* the BYEs leave */
    uint64_t t0 = syncq_now_ns();
    alarm(STEP_ALARM_S);
    CHECK_RC(syncq_am_mpi_destroy(job), SYNCQ_OK);
    alarm(0);
    CHECK(syncq_now_ns() - t0 < 2u * FOUND_NS);
    CHECK(faults_fired() == 1u); /* the failed request was not tested again */
    failed_sends_stick(0);
  } else if (g_rank == 1) {
    told_failed(job, 0, "an MPI send failed");
    CHECK(strcmp(syncq_am_mpi_peer_why(job, 2), "") == 0);
    CHECK(syncq_am_mpi_peer_why(job, 1) == NULL);
    /* rank 2's BYE not before this rank was told: the last error is then
     * rank 2's, and each peer's own reason stays */
    CHECK(MPI_Send(NULL, 0, MPI_BYTE, 2, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
    until_dead(job, 2); /* its destroy's BYE, before it waits for this rank's */
    if (strstr(syncq_am_mpi_why(job), "rank 2: left the job") == NULL)
      fprintf(stderr, "rank %d: why: %s\n", g_rank, syncq_am_mpi_why(job));
    CHECK(strstr(syncq_am_mpi_why(job), "rank 2: left the job") != NULL);
    peer_why_is(job, 0, "failed this rank (an MPI send failed there): its FAILED message came ");
    peer_why_is(job, 2, "left the job: its BYE came ");
    destroy_bounded(job, SYNCQ_OK);
  } else {
    until_dead(job, 0); /* rank 0's BYE: it is in its destroy, and waits for this rank's */
    peer_why_is(job, 0, "left the job: its BYE came ");
    CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(strcmp(syncq_am_mpi_peer_why(job, 1), "") == 0); /* rank 1 leaves after this rank */
    CHECK(syncq_am_mpi_peer_why(job, 2) == NULL);
    destroy_bounded(job, SYNCQ_OK);
  }
  next_job_works();
  return 0;
}

/* ---------------------------------------------------------------- the destroy */

static int scenario_destroy(const char *scenario) {
  bool last = g_rank == g_size - 1;
  bool through_mpi = strcmp(scenario, "ibarrier") != 0 && strcmp(scenario, "bartest") != 0;
  bool stall = strcmp(scenario, "stall") == 0;
  CHECK(arm_faults("") == 0);
  /* node-local: the barrier's are the destroy's only MPI calls */
  uint64_t dead = through_mpi ? DEAD_NS : SYNCQ_AM_MPI_MIN_DEAD_NS;
  syncq_am_mpi *job = make_job(through_mpi, dead, SYNCQ_OK);
  start_job(job, SYNCQ_OK);
  if (through_mpi) one_exchange(job);
  const char *spec = strcmp(scenario, "ibarrier") == 0  ? "MPI_Ibarrier:1"
                     : strcmp(scenario, "bartest") == 0 ? "MPI_Test:1"
                     : strcmp(scenario, "cancel") == 0  ? "MPI_Cancel:1"
                     : strcmp(scenario, "testall") == 0 ? "MPI_Testall:1"
                                                        : "MPI_Comm_free:1";
  if (through_mpi) CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
  if (stall) testall_stall(last);
  else arm(spec, last);
  /* the other rank's barrier waits for the failed one until its deadline */
  int want = last                                ? (stall ? SYNCQ_ETIMEDOUT : SYNCQ_ESYS)
             : strcmp(scenario, "ibarrier") == 0 ? SYNCQ_ETIMEDOUT
                                                 : SYNCQ_OK;
  uint64_t t0 = syncq_now_ns();
  alarm(STEP_ALARM_S);
  CHECK_RC(syncq_am_mpi_destroy(job), want);
  alarm(0);
  CHECK(syncq_now_ns() - t0 < DESTROY_BOUND_S * dead + 2000000000ull);
  CHECK(faults_fired() == (last && !stall ? 1u : 0u));
  testall_stall(0);
  next_job_works();
  return 0;
}

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "";
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  *(void **)&arm_faults = dlsym(RTLD_DEFAULT, "syncq_mpi_faults_arm");
  *(void **)&faults_fired = dlsym(RTLD_DEFAULT, "syncq_mpi_faults_fired");
  *(void **)&recv_cap = dlsym(RTLD_DEFAULT, "syncq_mpi_recv_cap");
  *(void **)&testall_stall = dlsym(RTLD_DEFAULT, "syncq_mpi_testall_stall");
  *(void **)&sends_stall = dlsym(RTLD_DEFAULT, "syncq_mpi_sends_stall");
  *(void **)&failed_sends_stick = dlsym(RTLD_DEFAULT, "syncq_mpi_failed_sends_stick");
  int rc = -1;
  bool three = strcmp(what, "destroyreap") == 0;
  if (arm_faults == NULL || faults_fired == NULL || recv_cap == NULL || testall_stall == NULL || sends_stall == NULL ||
      failed_sends_stick == NULL) {
    if (g_rank == 0) {
      const char *dir = getenv("SYNCQ_TEST_OUT");
      char path[4096];
      if (dir != NULL && snprintf(path, sizeof path, "%s/skip", dir) < (int)sizeof path) {
        FILE *f = fopen(path, "w");
        CHECK(f != NULL);
        fprintf(f, "the fault injector (tests/am/mpi_objects.c) is not preloaded\n");
        CHECK(fclose(f) == 0);
      }
    }
    rc = SKIPPED;
  } else if (g_size != (three ? 3 : 2)) {
    fprintf(stderr, "mpi_fault_test runs %s on %d ranks\n", what, three ? 3 : 2);
  } else if (three) {
    rc = scenario_destroyreap();
  } else {
    for (size_t i = 0; i < sizeof create_faults / sizeof create_faults[0]; i++)
      if (strcmp(what, create_faults[i].scenario) == 0) rc = scenario_create(&create_faults[i]);
    if (strcmp(what, "start") == 0) rc = scenario_start();
    if (strcmp(what, "threadmain") == 0) rc = scenario_threadmain();
    if (strcmp(what, "bulksize") == 0) rc = scenario_bulksize();
    if (strcmp(what, "truncate") == 0) rc = scenario_truncate();
    if (strcmp(what, "failedreap") == 0) rc = scenario_failedreap();
    if (strcmp(what, "leftsend") == 0) rc = scenario_leftsend();
    if (strcmp(what, "envall") == 0 || strcmp(what, "envrank") == 0) rc = scenario_env(strcmp(what, "envall") == 0);
    if (strcmp(what, "isend") == 0 || strcmp(what, "repost") == 0 || strcmp(what, "recvtest") == 0 ||
        strcmp(what, "testsome") == 0 || strcmp(what, "partial") == 0)
      rc = scenario_peer_fails(what);
    if (strcmp(what, "ibarrier") == 0 || strcmp(what, "bartest") == 0 || strcmp(what, "cancel") == 0 ||
        strcmp(what, "testall") == 0 || strcmp(what, "stall") == 0 || strcmp(what, "commfree") == 0)
      rc = scenario_destroy(what);
    if (rc == -1) fprintf(stderr, "mpi_fault_test: no scenario %s (see the file's head)\n", what);
  }
  if (rc != 0 && rc != SKIPPED) CHECK(!"scenario failed");
  if (g_rank == 0) printf("%s: %s\n", what, rc == SKIPPED ? "skipped" : "passed");
  MPI_Finalize();
  return 0;
}
