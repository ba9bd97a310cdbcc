/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * transport_mpi.c — active messages between the ranks of an MPI job
 * (syncq/am_mpi.h): node-local peers through the queue block, the others
 * through MPI.
 *
 * Contract
 *   Source:      000 §1-2 (Clumps: the queue block inside a node, the same
 *                AM interface to other nodes over the network); the MPI
 *                side follows the design of GASNet's AMMPI / mpi-conduit
 *                (Bonachea, "AMMPI: active messages over MPI"): a private
 *                duplicated communicator, pre-posted receives, non-blocking
 *                sends and credit-based flow control, polled with a budget.
 *                Written here from that description; no code taken.
 *   Wire:        one MPI message per active message: a 48-byte header
 *                (kind, handler, words, bulk length, credits returned) and
 *                the bulk bytes, tag AMM_TAG on the private communicator.
 *   Receives:    per MPI peer, a ring of 2C + AMM_CTRL_SLACK receives
 *                posted from that peer only (C: credits). MPI does not let
 *                messages of one source and tag overtake each other, so the
 *                k-th message from a peer completes the k-th posted
 *                receive: a poll tests only the head of each ring (one
 *                MPI_Test per peer), not the whole pool. A receive is
 *                posted again, in ring order, at the start of the next
 *                poll after its handler has returned (rx_repost): never
 *                between a reply's arrival and the requester's next send.
 *   Credits:     a sender holds C request credits per peer; each request
 *                spends one, and the receiver returns it in the header of
 *                its next message to the sender (the reply, typically), or
 *                in a CREDIT message once C/2 are owed. A reply spends
 *                none: its buffer at the requester is the one the request's
 *                credit reserved (at most C requests, so at most C replies,
 *                are in flight to a rank), as in AMMPI. A fast sender thus
 *                never has more than 2C messages waiting in a receiver's
 *                buffers, and a request handler's reply never waits for a
 *                credit (000 §3.1: no deadlock between request cycles).
 *   Sends:       MPI_Isend from a per-peer ring of buffers (the caller's
 *                data is copied, so it may be reused at once); a stalled
 *                send (no credit or no free buffer) keeps polling — this
 *                rank's handlers included, or, from inside a handler, only
 *                harvests credits — until it can go, the peer is dead, or
 *                with SYNCQ_AM_NOWAIT returns SYNCQ_FULL.
 *   Progress:    only inside syncq_am_poll and the send calls.
 *   Faults:      MPI_ERRORS_RETURN on the private communicator; a peer
 *                whose MPI operation fails, that says BYE, that says
 *                FAILED (its own MPI call on this rank's messages failed,
 *                fail_peer), or that stays silent for dead_timeout_ns (D)
 *                is dead. A rank whose MPI call fails a peer sends it
 *                FAILED, best effort, as its last message, so the peer
 *                learns at once instead of after D of silence. Each
 *                peer keeps the first reason found (mark_dead: a code,
 *                the call, when), written out only when asked
 *                (syncq_am_mpi_peer_why); the job's why is the last. See
 *                docs/am-mpi.md for what each MPI allows after a kill.
 *                A node-local peer is lost by its queue block's signs, as
 *                its sends judge it (local_look: its endpoint leaving or
 *                closed, its creator dead), found when asked
 *                (syncq_am_mpi_peer_dead, _why) or at the destroy; self is
 *                never lost. A rank's endpoint says leaving from the start
 *                of its destroy (am_endpoint_leave), its node-local BYE:
 *                sends to it fail from then on as to a closed endpoint.
 *                A failed MPI call of the create is agreed (local) or
 *                SYNCQ_ESYS (collective); of the destroy, SYNCQ_ESYS,
 *                with what MPI keeps (the barrier's request, a receive
 *                not cancelled, or whose cancel did not complete: its
 *                ring stays mapped) keeping the communicator (free_job).
 *   Names:       rank r's endpoint is "sqm<pid>x<n>-<r>" (rank 0's pid,
 *                its n-th job). Once every node-local rank has connected
 *                to it (and made the handle its replies take), the create
 *                removes the name (drop_name; not with keep_name): a rank
 *                killed later leaves nothing in /dev/shm. A job killed
 *                inside its create leaves names; the next create on the
 *                node removes those whose creator is dead (sweep_stale).
 *   Bulk size:   one on every rank: the create refuses ranks that differ
 *                (SYNCQ_EINVAL on every rank, agree_bulk), as a larger
 *                sender's message would overflow a smaller receive.
 *   Silence:     every poll (and every stalled round of a send) looks at
 *                the clock, acting at most every D/16: it sends a heartbeat
 *                to each MPI peer it has sent nothing for D/4, and finds
 *                dead a peer it has heard nothing from for D. A heartbeat
 *                spends no credit, and its buffer is always there while
 *                the peer makes progress (the send ring holds 2C + 8: at
 *                most C requests and C replies wait for the peer), so a
 *                rank out of credits still heartbeats. Our own absence is
 *                not the peer's silence: MPI keeps what arrives meanwhile,
 *                so a gap of ours between polls shorter than D/4 only
 *                delays by that gap what we hear, and a longer one gives
 *                every peer a fresh window of D from our return. Hence a
 *                peer is found dead only after D of silence while we were
 *                present; a peer that polls this transport at least every
 *                D/2 sends at least every D/4 + D/16 + D/2 = 13D/16, its
 *                stamps and ours late by a clock tick each (<= D/32,
 *                amm_now), so never (while MPI's transit takes less than
 *                D/8); one that calls syncq_am_poll at least every D/4
 *                polls the transport every D/2, whatever its node-local
 *                traffic (every second call polls it first). Not
 *                promised: a rank more than D/4 away between every two
 *                polls finds no peer dead by silence (a blocking send to
 *                a dead peer still returns SYNCQ_EDEAD once the credits
 *                are spent: the stalled send polls without a gap);
 *                detection takes D to D + D/16 of polling after the
 *                peer's last message (a clock tick either way).
 *   Threading:   MPI_THREAD_FUNNELED: every call from the main thread.
 *   Memory:      allocates at create; nothing on the send/poll paths.
 *                Per MPI peer two rings of 2C + 8 buffers of 48 bytes +
 *                the bulk size (648 KiB at the defaults), faulted in at
 *                create (ring_prefault) so no send or poll takes a page
 *                fault.
 *   Signal-safe: no.
 *   Limits:      ranks on one node reached by shared memory: at most
 *                SYNCQ_AM_MAX_PEERS (beyond, every peer goes through MPI).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "am/am_core.h" /* am_dispatch */
#include "am/am_internal.h"
#include "syncq/am_mpi.h"
#include "syncq/clock.h"

#define AMM_TAG 7103           /* the only tag on the private communicator */
#define AMM_CTRL_SLACK 8u      /* receives beyond 2C per peer: CREDIT, HB and BYE messages */
#define AMM_HB_DIVISOR 4u      /* heartbeat after dead_timeout / 4 of our silence */
#define AMM_CHECK_DIVISOR 16u  /* a poll acts on the clock at most every dead_timeout / 16 */
#define AMM_COARSE_DIVISOR 32u /* the coarse clock only with a tick <= dead_timeout / 32 (amm_now) */
#define AMM_STALL_YIELD 64u    /* stalled iterations before each sched_yield */
#define AMM_STALL_BUDGET 16u   /* handlers a stalled sender runs per iteration */
#define AMM_JOB_NAME_MAX 24
#define AMM_DESTROY_CAP 10u /* destroy gives up after this many dead timeouts */ /* "sqm<pid>x<n>" */
#define AMM_CANCEL_CHUNK 16u /* cancelled receives completed per MPI_Testall (rx_cancel_all) */

enum { K_REQ = 1, K_REP = 2, K_CREDIT = 3, K_HB = 4, K_BYE = 5, K_FAILED = 6 };

/* Which of this rank's MPI calls failed a peer (fail_peer): the FAILED
 * message carries it in its header's handler field, and the receiver
 * names it (syncq_am_mpi_why). */
enum { FAIL_SEND = 1, FAIL_ISEND, FAIL_IRECV, FAIL_RECV, FAIL_COUNT };
static const char *const fail_text[FAIL_COUNT] = {
  [FAIL_SEND] = "an MPI send failed",
  [FAIL_ISEND] = "MPI_Isend failed",
  [FAIL_IRECV] = "MPI_Irecv failed",
  [FAIL_RECV] = "an MPI receive failed",
};
enum { PATH_MPI = 0, PATH_SHM = 1 };

/* How a peer was lost (amm_peer.lost): a code and a few numbers, kept
 * when it is found lost (mark_dead) and written out only when asked
 * (syncq_am_mpi_peer_why), so finding a peer lost allocates nothing and
 * writes no text per peer. */
enum {
  LOST_NONE = 0,     /* alive, as far as this rank knows */
  LOST_SILENT,       /* heard nothing from for dead_ns (liveness) */
  LOST_LEFT,         /* said BYE */
  LOST_FAILED_HERE,  /* an MPI call of this rank on its messages failed (fail_peer; lost_call) */
  LOST_FAILED_THERE, /* said FAILED: its own MPI call on this rank's messages failed (lost_call) */
  LOST_CLOSED,       /* node-local: its endpoint was closed (local_look) */
  LOST_DIED,         /* node-local: the process that created its endpoint is dead (local_look; lost_pid) */
  LOST_LEAVING,      /* node-local: its endpoint says leaving: its destroy began (local_look) */
};

typedef struct amm_hdr {
  uint8_t kind;
  uint8_t bulk;
  uint8_t nargs;
  uint8_t pad0;
  uint16_t handler;
  uint16_t pad1;
  uint16_t ret_req; /* request credits returned to the receiver of this header */
  uint16_t pad2;
  uint32_t len; /* bulk bytes after the header */
  uint32_t args[SYNCQ_AM_MAX_ARGS];
} amm_hdr;
_Static_assert(sizeof(amm_hdr) == 48, "a 48-byte header");

/* One ring of requests and buffers (receives from, or sends to, a peer). */
typedef struct amm_ring {
  MPI_Request *req;
  unsigned char *buf; /* n buffers of bufsize bytes, mapped: `bytes` long */
  size_t bytes;
  uint32_t n;
  uint32_t head;   /* recv: next to dispatch; send: oldest possibly in flight */
  uint32_t tested; /* recv: next to test (head..tested are complete) */
  uint32_t tail;   /* send: next free; recv: next to post (tested..tail are posted) */
  uint32_t tslot;  /* recv: tested % n, kept by hand (every poll tests it: no division there) */
} amm_ring;

typedef struct amm_peer {
  int path;
  bool dead, left;
  bool told; /* this rank's last message to the peer is sent: its BYE, or FAILED (fail_peer) */
  amm_ring rx, tx;
  uint32_t credits; /* requests we may still send to this peer */
  uint32_t owed;    /* requests of this peer handled, not yet credited back */
  uint64_t last_heard, last_sent;
  syncq_am_peer *handle; /* what syncq_am_mpi_peer gives out */
  syncq_am_peer *reply;  /* node-local: the handle this rank's replies to it take, until link_replies */
  uint8_t lost;          /* a LOST_*: why dead is set (syncq_am_mpi_peer_why) */
  uint8_t lost_call;     /* LOST_FAILED_*: the FAIL_* call, 0 when the peer named none we know */
  uint64_t lost_at;      /* amm_now when found lost */
  uint64_t lost_quiet;   /* LOST_SILENT: how long it had been silent then */
  uint32_t lost_pid;     /* LOST_DIED: the dead process */
  uint64_t next_look;    /* node-local: amm_now from which local_look reads /proc again (0: at once) */
} amm_peer;

struct syncq_am_mpi {
  MPI_Comm comm;
  int rank, size;
  bool started, polling, freed_comm;
  bool comm_held; /* a request MPI would not let go (the destroy's barrier's) keeps the communicator */
  uint32_t credits;
  uint64_t dead_ns;
  size_t bufsize;
  uint32_t bulk_size;
  syncq_am_endpoint *ep;
  am_transport tp;
  amm_peer *peer;
  int nmpi;             /* peers reached through MPI ... */
  int *mpi_rank;        /* ... their ranks */
  MPI_Request *scr_req; /* scratch of rx_test_all, nmpi each */
  int *scr_src, *scr_idx;
  MPI_Status *scr_st;    /* (MPI_STATUSES_IGNORE trips GCC's -Wstringop-overflow) */
  unsigned rr;           /* round-robin start of the next poll, < nmpi */
  uint64_t last_check;   /* when liveness() last acted on the clock */
  bool coarse;           /* the detector's clock is CLOCK_MONOTONIC_COARSE (amm_now) */
  unsigned failed_calls; /* MPI calls of this job that failed on this rank (destroy: SYNCQ_ESYS) */
  uint64_t t0;           /* amm_now at the start (at the create until then): the peers' lost_at count from it */
  char *peer_text;       /* SYNCQ_AM_MPI_WHY_MAX bytes: what syncq_am_mpi_peer_why last wrote */
  char job[AMM_JOB_NAME_MAX];
  char why[SYNCQ_AM_MPI_WHY_MAX];
};

static void ep_name(const syncq_am_mpi *j, int rank, char *out, size_t n) { snprintf(out, n, "%s-%d", j->job, rank); }

/* The failure detector's clock, read on every poll and at every message
 * sent or received: CLOCK_MONOTONIC_COARSE where its tick (the kernel's,
 * 1 to 10 ms; 4 ms on the 2-core VM) is at most dead_timeout /
 * AMM_COARSE_DIVISOR, else the precise clock. A read of the coarse one
 * costs a fifth of a precise one (13 against 60 ns on the loaded 2-core
 * VM), and a stamp is late by at most a tick. The detector's margin is
 * 3D/16 (a peer polling every D/2 heartbeats at least every 13D/16,
 * docs/am-mpi.md), and two stamps' lateness (the peer's send, the judge's
 * check) must stay well inside it: two ticks of at most D/32 leave D/8 for
 * MPI's transit. With the minimum D of 100 ms the coarse clock is taken
 * on kernels of HZ >= 320 (1,000 is common); a kernel of HZ = 100 or 250
 * gets the precise one. Chosen once per job (`coarse`): every stamp it
 * compares (last_heard, last_sent, last_check) comes from one clock, as a
 * precise reading may be a tick ahead of a coarse one and the unsigned
 * differences must not wrap. */
static bool amm_coarse_fits(uint64_t dead_ns) {
#ifdef CLOCK_MONOTONIC_COARSE
  struct timespec res, ts;
  if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0 || clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0) return false;
  uint64_t tick = (uint64_t)res.tv_sec * 1000000000u + (uint64_t)res.tv_nsec;
  return tick > 0 && tick <= dead_ns / AMM_COARSE_DIVISOR;
#else
  (void)dead_ns;
  return false;
#endif
}

static uint64_t amm_now(const syncq_am_mpi *j) {
#ifdef CLOCK_MONOTONIC_COARSE
  if (j->coarse) {
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC_COARSE, &ts); /* it answered at create: it does every time */
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  }
#else
  (void)j;
#endif
  return syncq_now_ns();
}

static unsigned char *ring_buf(const amm_ring *r, uint32_t i, size_t bufsize) {
  return r->buf + (size_t)(i % r->n) * bufsize;
}

/* Fault a ring's buffers in, writable, now. A ring is used in order, so
 * left to fault as they are used its buffers' first pages fault one after
 * another in the job's first 2C + 8 messages to or from the peer, each in
 * the middle of a send or a poll: a round trip several times the later
 * ones' (docs/am-mpi.md, "The rings' first touch"). Any traffic to a peer
 * commits those pages within a ring's length of messages; touching them
 * here commits them for peers the rank never talks to as well (the memory
 * a job's config sizes: credits and bulk_size, docs/am-mpi.md).
 * MADV_POPULATE_WRITE (Linux 5.14 and later) in one call; EFAULT or
 * ENOMEM: the memory cannot be had, which create reports rather than a
 * fault in a send; an older kernel (EINVAL) gets a write to each page. */
static bool ring_prefault(unsigned char *buf, size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  if (madvise(buf, bytes, MADV_POPULATE_WRITE) == 0) return true;
  if (errno == EFAULT || errno == ENOMEM) return false;
#endif
  long page = sysconf(_SC_PAGESIZE);
  if (page <= 0) page = 4096; /* the smallest page of the systems MPI runs on: a write per page at least */
  for (size_t o = 0; o < bytes; o += (size_t)page) buf[o] = 0;
  return true;
}

static int ring_alloc(amm_ring *r, uint32_t n, size_t bufsize) {
  r->n = n;
  r->req = malloc(n * sizeof *r->req);
  if (r->req == NULL) return SYNCQ_ENOMEM;
  for (uint32_t i = 0; i < n; i++) r->req[i] = MPI_REQUEST_NULL;
  /* Its own mapping, not malloc's: page-aligned for madvise, and given
   * back whole at destroy (a heap block could come back to a later job
   * already faulted in, or not, by the allocator's history). */
  void *b = mmap(NULL, (size_t)n * bufsize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (b == MAP_FAILED) return SYNCQ_ENOMEM;
  r->buf = b;
  r->bytes = (size_t)n * bufsize;
  return ring_prefault(r->buf, r->bytes) ? SYNCQ_OK : SYNCQ_ENOMEM;
}

static void ring_unmap(amm_ring *r) {
  if (r->buf != NULL) (void)munmap(r->buf, r->bytes);
  r->buf = NULL;
}

/* The name of a FAIL_* call (0 or out of range: a call not named). */
static const char *fail_name(unsigned call) {
  return call > 0 && call < FAIL_COUNT ? fail_text[call] : "an MPI call failed";
}

/* Peer r is lost (a LOST_*; call: the FAIL_* for LOST_FAILED_*): the first
 * reason found stays (a peer that left and whose send then fails is still
 * one that left). The job's last error (syncq_am_mpi_why) names it too. */
static void mark_dead(syncq_am_mpi *j, int r, unsigned lost, unsigned call) {
  amm_peer *p = &j->peer[r];
  if (p->dead) return;
  uint64_t now = amm_now(j);
  p->dead = true;
  p->lost = (uint8_t)lost;
  p->lost_call = (uint8_t)(call < FAIL_COUNT ? call : 0u);
  p->lost_at = now;
  p->lost_quiet = now - p->last_heard;
  switch (lost) {
  case LOST_SILENT:
    snprintf(j->why, sizeof j->why, "rank %d: silent for longer than the dead timeout", r);
    break;
  case LOST_LEFT:
    snprintf(j->why, sizeof j->why, "rank %d: left the job", r);
    break;
  case LOST_FAILED_HERE:
    snprintf(j->why, sizeof j->why, "rank %d: %s", r, fail_name(call));
    break;
  default:
    snprintf(j->why, sizeof j->why, "rank %d: failed this rank (%s there)", r, fail_name(call));
    break;
  }
}

static int post(syncq_am_mpi *j, int d, unsigned kind, unsigned handler, const void *data, size_t len, bool bulk,
                const uint32_t *args, unsigned nargs);

/* This rank's own MPI call concerning peer r failed (`why`, a FAIL_*): r
 * is failed here, as if dead: nothing more is tested from it or sent to
 * it, and its requests stay with MPI. Without more, r would hear nothing
 * and find this rank silent only after dead_timeout_ns, its sends to this
 * rank stalling meanwhile (docs/am-mpi.md, "A peer failed by this rank's
 * own MPI call"). So, unless this rank has already sent r its last
 * message (a BYE), it sends r one FAILED message, best effort: only when
 * a send buffer to r is free without testing a send (a failed one's
 * request may be unusable), and an MPI_Isend that fails again only counts
 * (told is set first: no second try). Not during the create (the
 * agreement reports a failure there) or before the start. r takes it in
 * ring order, after every message this rank sent before, and finds this
 * rank failed at once (rx_completed). */
static void fail_peer(syncq_am_mpi *j, int r, unsigned why) {
  amm_peer *p = &j->peer[r];
  /* Already failed, dead or left: nothing to tell it (a peer that left
   * still gets this rank's BYE at the destroy, a dead one nothing). */
  if (p->dead) return;
  mark_dead(j, r, LOST_FAILED_HERE, why);
  if (p->told || r == j->rank || !j->started || p->path != PATH_MPI) return;
  p->told = true;
  if (p->tx.tail - p->tx.head < p->tx.n) (void)post(j, r, K_FAILED, why, NULL, 0, false, NULL, 0);
}

/* A node-local peer's end, as its queue block shows it to a send
 * (am_peer_end): its endpoint closed (one load from the mapping, at every
 * call), or the process that created it dead (one read of /proc, at most
 * once per dead_timeout / AMM_CHECK_DIVISOR per peer, or at every call
 * with `now_look`). Found lost, the peer is marked as mark_dead marks one
 * (dead, a code, when), for syncq_am_mpi_peer_dead and _why and the
 * destroy; the job's why is left alone (a question is no error). Sends
 * to it are untouched: the queue block's own checks answer them. Self is
 * never looked at (never lost). */
static void local_look(const syncq_am_mpi *j, int s, bool now_look) {
  amm_peer *p = &j->peer[s]; /* the job's table, writable behind a const job */
  if (p->dead || p->path != PATH_SHM || s == j->rank || p->handle == NULL) return;
  uint64_t now = amm_now(j);
  bool look = now_look || now >= p->next_look;
  if (look) p->next_look = now + j->dead_ns / AMM_CHECK_DIVISOR;
  uint32_t pid = 0;
  int end = am_peer_end(p->handle, look, &pid);
  if (end == AM_END_LIVE) return;
  p->dead = true;
  p->lost = end == AM_END_CLOSED ? LOST_CLOSED : end == AM_END_LEAVING ? LOST_LEAVING : LOST_DIED;
  p->lost_pid = pid;
  p->lost_at = now;
}

/* ---------------------------------------------------------------- sending */

/* Retire completed sends at the oldest end of the ring to peer d. */
static void tx_reap(syncq_am_mpi *j, int d) {
  amm_ring *t = &j->peer[d].tx;
  while (t->head != t->tail) {
    int done = 0;
    if (MPI_Test(&t->req[t->head % t->n], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      j->failed_calls++;
      fail_peer(j, d, FAIL_SEND);
      return;
    }
    if (!done) return;
    t->head++;
  }
}

/* Post one message to d (a free tx buffer must exist). */
static int post(syncq_am_mpi *j, int d, unsigned kind, unsigned handler, const void *data, size_t len, bool bulk,
                const uint32_t *args, unsigned nargs) {
  amm_peer *p = &j->peer[d];
  amm_ring *t = &p->tx;
  unsigned char *b = ring_buf(t, t->tail, j->bufsize);
  amm_hdr h;
  memset(&h, 0, sizeof h);
  h.kind = (uint8_t)kind;
  h.bulk = bulk ? 1u : 0u;
  h.nargs = (uint8_t)nargs;
  h.handler = (uint16_t)handler;
  h.ret_req = (uint16_t)p->owed; /* credits ride on every message back */
  h.len = (uint32_t)len;
  if (nargs > 0) memcpy(h.args, args, nargs * sizeof args[0]);
  memcpy(b, &h, sizeof h);
  if (len > 0) memcpy(b + sizeof h, data, len);
  if (MPI_Isend(b, (int)(sizeof h + len), MPI_BYTE, d, AMM_TAG, j->comm, &t->req[t->tail % t->n]) != MPI_SUCCESS) {
    j->failed_calls++;
    fail_peer(j, d, FAIL_ISEND);
    return SYNCQ_EDEAD;
  }
  p->owed = 0;
  t->tail++;
  p->last_sent = amm_now(j);
  return SYNCQ_OK;
}

/* ---------------------------------------------------------------- receiving */

static int rx_post(syncq_am_mpi *j, int s, uint32_t i) {
  amm_ring *r = &j->peer[s].rx;
  if (MPI_Irecv(ring_buf(r, i, j->bufsize), (int)j->bufsize, MPI_BYTE, s, AMM_TAG, j->comm, &r->req[i % r->n]) !=
      MPI_SUCCESS) {
    j->failed_calls++;
    fail_peer(j, s, FAIL_IRECV);
    return SYNCQ_EDEAD;
  }
  return SYNCQ_OK;
}

/* The next receive from s has completed: harvest what needs no handler
 * (credits, BYE, liveness); its handler runs later, in order. */
static void rx_completed(syncq_am_mpi *j, int s) {
  amm_peer *p = &j->peer[s];
  amm_ring *r = &p->rx;
  const amm_hdr *h = (const amm_hdr *)(const void *)(r->buf + (size_t)r->tslot * j->bufsize);
  r->req[r->tslot] = MPI_REQUEST_NULL; /* MPI freed it on completion */
  r->tested++;
  r->tslot = r->tslot + 1u < r->n ? r->tslot + 1u : 0u;
  p->credits += h->ret_req;
  p->last_heard = amm_now(j);
  if (h->kind == K_BYE) {
    p->left = true;
    mark_dead(j, s, LOST_LEFT, 0);
  } else if (h->kind == K_FAILED) {
    /* s failed this rank (fail_peer): its last message. Failed here too,
     * not left: s tests nothing more from this rank, so sends to it may
     * never complete, and the requests stay with MPI. */
    mark_dead(j, s, LOST_FAILED_THERE, h->handler); /* another process's number: mark_dead checks it */
  }
}

/* Post again, in ring order, the receives of s whose handlers have run.
 * Deferred from rx_dispatch to the start of the next poll (or stalled
 * round): an MPI_Irecv costs about as much as a whole idle poll
 * (docs/am-mpi.md), and posted right after a reply's handler it delayed
 * the requester's next request by that much; at the next poll it runs
 * while that request travels.
 * Ring order keeps "the k-th message completes the k-th posted receive";
 * a message that arrives meanwhile waits in MPI (eager) or holds its
 * sender (rendezvous) until the next poll, which every path that waits
 * for it makes. Inside a poll that keeps finding messages (a flood), the
 * ring is topped up once fewer than half its receives are posted, so a
 * long poll never leaves the sender without posted receives. */
static void rx_repost(syncq_am_mpi *j, int s) {
  amm_peer *p = &j->peer[s];
  amm_ring *r = &p->rx;
  while (!p->left && !p->dead && r->tail - r->head < r->n) {
    if (rx_post(j, s, r->tail) != SYNCQ_OK) return;
    r->tail++;
  }
}

/* Test the next receive from s alone; true if it completed. */
static bool rx_test(syncq_am_mpi *j, int s) {
  amm_peer *p = &j->peer[s];
  amm_ring *r = &p->rx;
  if (p->dead || r->tested == r->tail) return false; /* none posted: every buffer awaits its handler */
  int done = 0;
  if (MPI_Test(&r->req[r->tslot], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
    j->failed_calls++;
    fail_peer(j, s, FAIL_RECV);
    return false;
  }
  if (done) {
    rx_completed(j, s); /* (MPI_Test set our copy of the request to null already) */
  }
  return done != 0;
}

/* The next receive from s failed (MPI has freed its request): s is failed. */
static void rx_failed(syncq_am_mpi *j, int s) {
  amm_ring *r = &j->peer[s].rx;
  r->req[r->tslot] = MPI_REQUEST_NULL;
  j->failed_calls++;
  fail_peer(j, s, FAIL_RECV);
}

/* MPI_Testsome over scr_req[0..m) returned err. With MPI_ERR_IN_STATUS it
 * says which receives completed (outc, scr_idx) and how (each status's
 * MPI_ERROR): one that completed well is taken, one that failed makes its
 * peer failed; MPI has freed both, so neither may be tested again. Any
 * other error says nothing: a request MPI set to null in scr_req has
 * completed in some way (its peer is failed: its message cannot be
 * trusted), the others are tested one by one. Returns how many completed
 * well. */
static int rx_test_failed(syncq_am_mpi *j, int m, int err, int outc) {
  int n = 0;
  if (err == MPI_ERR_IN_STATUS && outc != MPI_UNDEFINED) {
    for (int i = 0; i < outc; i++) {
      int s = j->scr_src[j->scr_idx[i]];
      if (j->scr_st[i].MPI_ERROR == MPI_SUCCESS) {
        rx_completed(j, s);
        n++;
      } else {
        rx_failed(j, s);
      }
    }
    return n;
  }
  for (int i = 0; i < m; i++) {
    if (j->scr_req[i] == MPI_REQUEST_NULL) rx_failed(j, j->scr_src[i]);
    else n += rx_test(j, j->scr_src[i]) ? 1 : 0;
  }
  return n;
}

/* Test the next receive of every MPI peer with one MPI_Testsome (one turn
 * of MPI's progress engine, where a MPI_Test per peer would turn it once
 * per peer). `again`: under Open MPI, look once more when nothing had
 * completed (below); a poll that has just run handlers does not, as the
 * next poll looks anyway, and the requester that ran a reply's handler
 * would otherwise spend that turn before its next request. Returns how
 * many completed. */
static int rx_test_all(syncq_am_mpi *j, bool again) {
  int m = 0;
  for (int k = 0; k < j->nmpi; k++) {
    int s = j->mpi_rank[k];
    amm_peer *p = &j->peer[s];
    if (p->rx.tail - p->rx.tested < p->rx.n / 2u) rx_repost(j, s); /* a flood: see rx_repost */
    if (p->dead || p->rx.tested == p->rx.tail) continue;
    j->scr_req[m] = p->rx.req[p->rx.tslot];
    j->scr_src[m++] = s;
  }
  if (m == 0) return 0;
  /* One peer (two ranks, or all but one dead or full): MPI_Test, which is
   * cheaper than MPI_Testsome under both MPIs and, under Open MPI, looks
   * at the request again after its turn of the progress engine, where
   * MPI_Testsome reports what that turn completed only at the next poll. */
  if (m == 1) return rx_test(j, j->scr_src[0]) ? 1 : 0;
  int outc = 0;
  int err = MPI_Testsome(m, j->scr_req, &outc, j->scr_idx, j->scr_st);
  if (err != MPI_SUCCESS) return rx_test_failed(j, m, err, outc);
#ifdef OPEN_MPI
  /* Open MPI's MPI_Testsome looks at the requests before its turn of the
   * progress engine, not after: what that turn completed would wait for
   * the next poll. Look once more (a failure, as the first's: what it
   * completed is freed and must not be tested again). */
  if (again && outc == 0 && (err = MPI_Testsome(m, j->scr_req, &outc, j->scr_idx, j->scr_st)) != MPI_SUCCESS)
    return rx_test_failed(j, m, err, outc);
#else
  (void)again;
#endif
  if (outc == MPI_UNDEFINED) return 0;
  for (int i = 0; i < outc; i++) rx_completed(j, j->scr_src[j->scr_idx[i]]);
  return outc;
}

/* Return credits to s now if half a window is owed (its sender may be
 * waiting for them and have nothing else coming our way). */
static void credit_back(syncq_am_mpi *j, int s) {
  amm_peer *p = &j->peer[s];
  if (p->dead || p->owed < (j->credits + 1u) / 2u) return;
  tx_reap(j, s);
  if (p->tx.tail - p->tx.head >= p->tx.n) return; /* later, with the next message */
  (void)post(j, s, K_CREDIT, 0, NULL, 0, false, NULL, 0);
}

/* Run the handler of the oldest completed receive from s and post the
 * receive again. */
static void rx_dispatch(syncq_am_mpi *j, int s) {
  amm_peer *p = &j->peer[s];
  amm_ring *r = &p->rx;
  const unsigned char *b = ring_buf(r, r->head, j->bufsize);
  const amm_hdr *h = (const amm_hdr *)(const void *)b;
  if (h->kind == K_REQ || h->kind == K_REP) {
    /* The credit is owed from now, so the reply the handler sends may
     * carry it. The buffer is posted again at our next poll (rx_repost):
     * a request the credit lets through before that waits in MPI, and
     * every path that waits for it polls. */
    if (h->kind == K_REQ) p->owed++;
    uint32_t args[SYNCQ_AM_MAX_ARGS];
    unsigned nargs = h->nargs <= SYNCQ_AM_MAX_ARGS ? h->nargs : SYNCQ_AM_MAX_ARGS;
    memcpy(args, h->args, nargs * sizeof args[0]);
    size_t len = h->bulk ? (h->len <= j->bulk_size ? h->len : j->bulk_size) : 0;
    syncq_am_token tk = {j->ep, h->kind == K_REQ ? AM_Q_REQUEST : AM_Q_REPLY, AM_NO_PEER, false, &j->tp, s};
    am_dispatch(j->ep, &tk, h->handler, args, nargs, h->bulk ? b + sizeof *h : NULL, len);
  }
  r->head++; /* posted again by the next rx_repost */
  credit_back(j, s);
}

/* Heartbeats and the silence check, on every poll (and every stalled
 * round of a send) once dead_timeout / AMM_CHECK_DIVISOR has passed since
 * the last: time, never a count of polls. A count was late both ways: a
 * rank in syncq_am_wait yields its processor at every poll, and beside
 * busy processes a yield can last a time slice (64 yields beside two took
 * 180 ms on the 2-core VM); a rank that computes between its polls, each
 * of which handles a message, went 64 polls (8 dead timeouts at one poll
 * per dead_timeout / 8) without a heartbeat, and its peer declared it
 * dead (mpi_am_test waiter and slowpoll). One coarse clock read per
 * poll (amm_now) is small beside the MPI_Testsome the poll makes anyway.
 * What a silence proves: the contract's "Silence". */
static void liveness(syncq_am_mpi *j) {
  uint64_t now = amm_now(j);
  if (now - j->last_check < j->dead_ns / AMM_CHECK_DIVISOR) return;
  if (now - j->last_check > j->dead_ns / AMM_HB_DIVISOR) {
    /* We were away (computing, or blocked in MPI) for a while: what the
     * peers sent meanwhile may not have reached our receives yet (a
     * rendezvous waits for both sides), and a peer's sends to us may have
     * waited for our progress, so their silence is not evidence; give
     * every peer a fresh window, counted from now. */
    for (int s = 0; s < j->size; s++) j->peer[s].last_heard = now;
  }
  j->last_check = now;
  for (int s = 0; s < j->size; s++) {
    amm_peer *p = &j->peer[s];
    if (p->path != PATH_MPI || p->dead || s == j->rank) continue;
    if (now - p->last_heard > j->dead_ns) {
      mark_dead(j, s, LOST_SILENT, 0);
      continue;
    }
    if (now - p->last_sent > j->dead_ns / AMM_HB_DIVISOR) {
      tx_reap(j, s);
      if (p->tx.tail - p->tx.head < p->tx.n) (void)post(j, s, K_HB, 0, NULL, 0, false, NULL, 0);
    }
  }
}

static void rx_repost_all(syncq_am_mpi *j) {
  for (int k = 0; k < j->nmpi; k++) rx_repost(j, j->mpi_rank[k]);
}

/* Progress without running handlers: for a send stalled inside a handler. */
static void harvest(syncq_am_mpi *j) {
  rx_repost_all(j);
  while (rx_test_all(j, true) > 0) {
  }
  liveness(j);
}

static unsigned amm_poll(void *ctx, unsigned budget) {
  syncq_am_mpi *j = ctx;
  if (j->polling || !j->started) return 0; /* a handler further up is in this poll */
  j->polling = true;
  rx_repost_all(j); /* the receives of the last poll's handlers, before anything is tested */
  unsigned done = 0;
  bool ran = false, replies_only = true; /* this poll has run a handler; every one it ran a reply's */
  bool tested = false;                   /* this poll has tested the receives */
  for (;;) {
    /* run the handlers of completed receives, a peer at a time in turn */
    bool any = false;
    unsigned at = j->rr; /* < nmpi: wrapped by hand, a division per peer cost more than the test of its ring */
    for (int k = 0; k < j->nmpi && done < budget; k++, at = at + 1u < (unsigned)j->nmpi ? at + 1u : 0u) {
      int s = j->mpi_rank[at];
      amm_peer *p = &j->peer[s];
      if (p->rx.head == p->rx.tested) continue;
      const amm_hdr *h = (const amm_hdr *)(const void *)ring_buf(&p->rx, p->rx.head, j->bufsize);
      if (h->kind == K_REQ || h->kind == K_REP) done++;
      if (h->kind != K_REP) replies_only = false;
      rx_dispatch(j, s);
      any = ran = true;
    }
    if (j->nmpi > 0) j->rr = j->rr + 1u < (unsigned)j->nmpi ? j->rr + 1u : 0u;
    if (done >= budget) break;
    if (any) continue;
    /* After replies alone, return at once: the requester that waits for
     * them acts on them before anything else arrives. After requests (a
     * flood, or a peer's calls), test for more, up to the budget. Not
     * before this poll has tested once: replies a stalled send received
     * earlier are no news of the peers' liveness (mpi_am_test backlog). */
    if (ran && replies_only && tested) break;
    tested = true;
    if (rx_test_all(j, !ran) == 0) break;
  }
  /* retire finished sends lazily: only rings more than half in flight;
   * not those to a failed peer (dead, not left), whose requests stay
   * with MPI: one whose MPI_Test failed would fail (and count) again at
   * every poll */
  for (int k = 0; k < j->nmpi; k++) {
    amm_peer *p = &j->peer[j->mpi_rank[k]];
    if (p->dead && !p->left) continue;
    if (p->tx.tail - p->tx.head > p->tx.n / 2) tx_reap(j, j->mpi_rank[k]);
  }
  /* A poll whose budget receives tested earlier filled (a stalled send's
   * harvest tests all that arrived) tested nothing: test once before
   * judging silence, or a backlog of one peer's would hide every peer's
   * heartbeats for as many polls as it holds (mpi_am_test backlog). */
  if (done >= budget) (void)rx_test_all(j, true);
  liveness(j);
  j->polling = false;
  return done;
}

static int amm_send(void *ctx, int d, int qi, unsigned handler, const void *data, size_t len, bool bulk,
                    const uint32_t *args, unsigned nargs, unsigned flags) {
  syncq_am_mpi *j = ctx;
  amm_peer *p = &j->peer[d];
  bool reply = qi == AM_Q_REPLY;
  unsigned spins = 0;
  for (;;) {
    if (p->dead) return SYNCQ_EDEAD;
    if (reply || p->credits > 0) {
      if (p->tx.tail - p->tx.head >= p->tx.n) tx_reap(j, d);
      if (p->tx.tail - p->tx.head < p->tx.n) {
        if (!reply) p->credits--;
        return post(j, d, reply ? K_REP : K_REQ, handler, data, len, bulk, args, nargs);
      }
    }
    if (flags & SYNCQ_AM_NOWAIT) {
      harvest(j); /* so that the caller's next try may find credits */
      return SYNCQ_FULL;
    }
    /* stalled: make progress (000 §3.1: a stalled sender polls) */
    if (j->polling) {
      harvest(j);
    } else {
      (void)syncq_am_poll(j->ep, AMM_STALL_BUDGET, NULL);
      /* Receive before judging silence, on every round: a poll that ran
       * the local queues first and filled its budget there did not reach
       * this transport, and liveness alone would then judge our peers on
       * what we had not yet received (and leave the credits they returned
       * unseen). */
      harvest(j);
    }
    if (++spins % AMM_STALL_YIELD == 0) sched_yield(); /* oversubscribed: let the receiver run */
  }
}

/* ---------------------------------------------------------------- set-up */

static int check_cfg(const syncq_am_mpi_config *c) {
  if (c == NULL) return SYNCQ_OK;
  if (c->credits > SYNCQ_AM_MPI_MAX_CREDITS) return SYNCQ_EINVAL;
  if (c->dead_timeout_ns != 0 && c->dead_timeout_ns < SYNCQ_AM_MPI_MIN_DEAD_NS) return SYNCQ_EINVAL;
  return SYNCQ_OK;
}

static bool force_from_env(void) {
  const char *e = getenv(SYNCQ_AM_MPI_FORCE_ENV);
  return e != NULL && strcmp(e, "1") == 0;
}

/* Cancel every posted receive of ring r and complete each cancel before
 * its buffer may go (MPI 4.0 §3.8.4: a cancelled request must still be
 * completed by a test or wait, and until then MPI may write into its
 * buffer; a receive that had matched a message completes with it,
 * which is dropped: its sender has said BYE). The tests are MPI_Testall
 * over AMM_CANCEL_CHUNK receives at a time (a call no other path makes),
 * repeated until they complete or `deadline` passes. SYNCQ_OK: every
 * receive is complete and the ring's buffers may go. SYNCQ_ESYS: an
 * MPI_Cancel or MPI_Testall failed; SYNCQ_ETIMEDOUT: a cancel did not
 * complete in time. Either way a receive not known complete stays with
 * MPI, and the ring must stay mapped. */
static int rx_cancel_all(amm_ring *r, uint64_t deadline) {
  int rc = SYNCQ_OK;
  if (r->req == NULL) return SYNCQ_OK;
  for (uint32_t i = 0; i < r->n; i++)
    if (r->req[i] != MPI_REQUEST_NULL && MPI_Cancel(&r->req[i]) != MPI_SUCCESS) {
      /* still posted: it stays with MPI, out of the completion below
       * (which it would never pass) */
      r->req[i] = MPI_REQUEST_NULL;
      rc = SYNCQ_ESYS;
    }
  MPI_Status st[AMM_CANCEL_CHUNK]; /* (MPI_STATUSES_IGNORE trips GCC's -Wstringop-overflow) */
  for (uint32_t at = 0; at < r->n; at += AMM_CANCEL_CHUNK) {
    int m = (int)(r->n - at < AMM_CANCEL_CHUNK ? r->n - at : AMM_CANCEL_CHUNK), done = 0;
    for (;;) {
      if (MPI_Testall(m, &r->req[at], &done, st) != MPI_SUCCESS) return SYNCQ_ESYS; /* the rest stays with MPI */
      if (done) break;
      if (syncq_now_ns() > deadline) return SYNCQ_ETIMEDOUT;
      sched_yield(); /* a receive that matched a message completes with the sender's progress */
    }
  }
  return rc;
}

/* Free the job. With mpi_ok false (a peer failed, or sends would not
 * complete) every request, ring and the communicator stay with MPI.
 * SYNCQ_ESYS when an MPI call failed here, SYNCQ_ETIMEDOUT when a
 * cancelled receive did not complete within a quarter of a dead timeout
 * (rx_cancel_all): a receive not known complete keeps its ring mapped
 * (MPI may still write into it) and the communicator; a communicator that
 * could not be freed stays with MPI; the rest is freed. */
static int free_job(syncq_am_mpi *j, bool mpi_ok) {
  int rc = SYNCQ_OK;
  uint64_t deadline = syncq_now_ns() + j->dead_ns / AMM_HB_DIVISOR;
  if (j->peer != NULL) {
    for (int s = 0; s < j->size; s++) {
      amm_peer *p = &j->peer[s];
      if (p->handle != NULL) (void)syncq_am_disconnect(p->handle);
      /* a reply handle not given to the endpoint (link_replies) is still the job's */
      if (p->reply != NULL) (void)syncq_am_disconnect(p->reply);
      if (mpi_ok) { /* requests to or from a dead peer stay with MPI */
        int c = rx_cancel_all(&p->rx, deadline);
        free(p->rx.req);
        if (c == SYNCQ_OK) ring_unmap(&p->rx);
        else if (rc != SYNCQ_ESYS) rc = c; /* SYNCQ_ESYS before SYNCQ_ETIMEDOUT */
        free(p->tx.req);
        ring_unmap(&p->tx);
      }
    }
    free(j->peer);
  }
  free(j->mpi_rank);
  free(j->scr_req);
  free(j->scr_src);
  free(j->scr_idx);
  free(j->scr_st);
  free(j->peer_text);
  if (j->ep != NULL) (void)syncq_am_destroy(j->ep);
  /* A receive left posted keeps the communicator: freed, its context
   * could come back to a later communicator (MPICH), whose first message
   * from that peer the stale receive would take. */
  if (mpi_ok && rc == SYNCQ_OK && !j->comm_held && !j->freed_comm && MPI_Comm_free(&j->comm) != MPI_SUCCESS)
    rc = SYNCQ_ESYS;
  free(j);
  return rc;
}

/* The create's agreement: every rank of c says whether its local steps
 * since the last agreement succeeded (`local`), and every rank learns
 * whether all did. A collective create must fail together: a rank that
 * returned alone would leave the others in the next collective call for
 * ever. SYNCQ_OK when every rank succeeded; this rank's own error when it
 * failed; SYNCQ_EBROKEN when only others did; SYNCQ_ESYS when the
 * agreement itself failed (an MPI call: nothing more is known). */
static int agree(MPI_Comm c, int local) {
  int failed = local != SYNCQ_OK, any = 0;
  if (MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, c) != MPI_SUCCESS) return SYNCQ_ESYS;
  if (local != SYNCQ_OK) return local;
  return any ? SYNCQ_EBROKEN : SYNCQ_OK;
}

/* The agreement after the endpoints' creation (agree), which also
 * compares the ranks' bulk sizes: a message of a rank with a larger one
 * could overflow a peer's receive (MPI_ERR_TRUNCATE, the sender found
 * failed), so every rank refuses a job whose ranks differ (SYNCQ_EINVAL
 * on every rank, the sizes in j->why). One MPI_Allreduce of {failed,
 * bulk, -bulk} under MPI_MAX: whether any rank failed, and the largest
 * and smallest bulk size of those that did not. */
static int agree_bulk(syncq_am_mpi *j, int local) {
  int64_t mine[3] = {local != SYNCQ_OK, local == SYNCQ_OK ? (int64_t)j->bulk_size : 0,
                     local == SYNCQ_OK ? -(int64_t)j->bulk_size : INT64_MIN};
  int64_t all[3] = {0, 0, 0};
  if (MPI_Allreduce(mine, all, 3, MPI_INT64_T, MPI_MAX, j->comm) != MPI_SUCCESS) return SYNCQ_ESYS;
  if (local != SYNCQ_OK) return local;
  if (all[0] != 0) return SYNCQ_EBROKEN;
  if (all[1] != -all[2]) {
    snprintf(j->why, sizeof j->why,
             "the ranks' bulk sizes differ: %" PRIu32 " bytes on this rank, %" PRId64 " to %" PRId64
             " across the job (shm.bulk_size must be the same on every rank)",
             j->bulk_size, -all[2], all[1]);
    return SYNCQ_EINVAL;
  }
  return SYNCQ_OK;
}

/* Allocate the job's tables (peers, MPI ranks, poll scratch) and node_ranks. */
static int alloc_tables(syncq_am_mpi *j, int **node_ranks) {
  size_t n = (size_t)j->size;
  j->peer = calloc(n, sizeof *j->peer);
  *node_ranks = malloc(n * sizeof(int));
  j->mpi_rank = malloc(n * sizeof(int));
  j->scr_req = malloc(n * sizeof(MPI_Request));
  j->scr_src = malloc(n * sizeof(int));
  j->scr_idx = malloc(n * sizeof(int));
  j->scr_st = malloc(n * sizeof(MPI_Status));
  j->peer_text = malloc(SYNCQ_AM_MPI_WHY_MAX);
  if (!j->peer || !*node_ranks || !j->mpi_rank || !j->scr_req || !j->scr_src || !j->scr_idx || !j->scr_st ||
      !j->peer_text)
    return SYNCQ_ENOMEM;
  return SYNCQ_OK;
}

/* Allocate and fault in the rings of every peer reached through MPI and
 * post the receives. */
static int make_rings(syncq_am_mpi *j) {
  for (int s = 0; s < j->size; s++) {
    amm_peer *p = &j->peer[s];
    if (p->path != PATH_MPI) continue;
    j->mpi_rank[j->nmpi++] = s;
    p->credits = j->credits;
    int r = ring_alloc(&p->rx, 2u * j->credits + AMM_CTRL_SLACK, j->bufsize);
    if (r == SYNCQ_OK) r = ring_alloc(&p->tx, 2u * j->credits + AMM_CTRL_SLACK, j->bufsize);
    if (r != SYNCQ_OK) {
      snprintf(j->why, sizeof j->why, "cannot allocate the rings of rank %d: %s", s, syncq_strerror(r));
      return r;
    }
    for (uint32_t i = 0; i < p->rx.n; i++)
      if (rx_post(j, s, i) != SYNCQ_OK) return SYNCQ_ESYS;
    p->rx.tail = p->rx.n; /* every receive posted */
  }
  return SYNCQ_OK;
}

/* Connect to every peer: node-local endpoints by name, the others through
 * this transport. */
static int connect_peers(syncq_am_mpi *j) {
  char name[SYNCQ_AM_NAME_MAX + 1];
  for (int s = 0; s < j->size; s++) {
    amm_peer *p = &j->peer[s];
    int r;
    if (p->path == PATH_SHM) {
      ep_name(j, s, name, sizeof name);
      r = syncq_am_connect(j->ep, name, &p->handle);
      /* the replies' own (no slot of ours in the peer's table: a reply
       * names no sender), made now while the name is there (link_replies) */
      if (r == SYNCQ_OK) r = am_peer_make(NULL, name, &p->reply);
    } else {
      r = am_peer_transport(j->ep, &j->tp, s, &p->handle);
    }
    if (r != SYNCQ_OK) {
      snprintf(j->why, sizeof j->why, "cannot connect to rank %d: %s", s, syncq_strerror(r));
      return r;
    }
  }
  return SYNCQ_OK;
}

/* Give each node-local peer's reply handle (connect_peers) to this
 * rank's endpoint, at the slot that peer claimed in its peer table when
 * it connected, where the first reply to it would otherwise connect by
 * name (am.c, reply_peer): a reply then needs no name, and the names can
 * go (drop_name). After the connections' agreement every node-local peer
 * holds its slot; one not found (not expected) keeps its handle with the
 * job (free_job), and a reply to it connects by name, which succeeds only
 * while the name is there (keep_name). */
static void link_replies(syncq_am_mpi *j) {
  am_peer_slot *t = am_at(j->ep->base, j->ep->geo.peers_off);
  char name[SYNCQ_AM_NAME_MAX + 1];
  for (int s = 0; s < j->size; s++) {
    amm_peer *p = &j->peer[s];
    if (p->path != PATH_SHM || p->reply == NULL) continue;
    ep_name(j, s, name, sizeof name);
    for (unsigned i = 0; i < SYNCQ_AM_MAX_PEERS; i++) {
      /* acquire: pairs with the release store of READY after the slot's name (endpoint.c, peer_index) */
      if (atomic_load_explicit(&t[i].state, memory_order_acquire) != AM_PEER_READY ||
          strncmp(t[i].name, name, sizeof t[i].name) != 0 || j->ep->reply_peer[i] != NULL)
        continue;
      j->ep->reply_peer[i] = p->reply; /* the endpoint's now: its destroy disconnects it */
      p->reply = NULL;
      break;
    }
  }
}

/* Remove this rank's endpoint name once every node-local peer holds its
 * mappings (connect_peers, link_replies): the segment lives on while
 * mapped, and a rank killed from here on leaves no name behind. The path
 * is the one syncq_am_create gave it (endpoint.c, shm_path). The destroy's
 * own unlink then finds no name (ENOENT), which it takes as done. */
static void drop_name(const syncq_am_mpi *j) {
  char path[SYNCQ_AM_NAME_MAX + 2];
  snprintf(path, sizeof path, "/%s", syncq_am_name(j->ep));
  (void)shm_unlink(path); /* a name that stays is removed by the destroy, or by the next job's sweep_stale */
}

/* A name of this transport's: "sqm<pid>x<n>-<rank>", digits only. */
static bool job_name_ok(const char *s) {
  if (strncmp(s, "sqm", 3) != 0) return false;
  s += 3;
  for (int part = 0; part < 3; part++) {
    if (*s < '0' || *s > '9') return false;
    while (*s >= '0' && *s <= '9') s++;
    if (part < 2 && *s++ != (part == 0 ? 'x' : '-')) return false;
  }
  return *s == '\0';
}

/* Remove the names a killed job left before its ranks dropped them
 * (drop_name): a segment of this transport's whose header is complete
 * (its magic) and whose creator is dead (am_owner_dead: its pid, and its
 * start time, so a reused pid is not taken for it). A segment without
 * its magic (its creator killed inside syncq_am_create, or still making
 * it) is left alone, as is one another user owns (not ours to open).
 * Linux's /dev/shm holds the names; elsewhere nothing is swept. Not
 * atomic: were the dead name removed and made again between the look and
 * the unlink (a new job whose rank 0 reuses the dead pid, at the same job
 * count), the new one would lose its name; a rank of that job not yet
 * connected to it then fails its connect, and that job's create fails on
 * every rank (agreed), not hangs. */
static void sweep_stale(void) {
  DIR *d = opendir("/dev/shm");
  if (d == NULL) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!job_name_ok(e->d_name) || strlen(e->d_name) > SYNCQ_AM_NAME_MAX) continue;
    char path[SYNCQ_AM_NAME_MAX + 2];
    snprintf(path, sizeof path, "/%s", e->d_name);
    int fd = shm_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) continue;
    struct stat st;
    bool dead = false;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(am_header)) {
      void *b = mmap(NULL, sizeof(am_header), PROT_READ, MAP_SHARED, fd, 0);
      if (b != MAP_FAILED) {
        am_header *h = b;
        /* acquire: pairs with the release store of magic at creation (endpoint.c, syncq_am_create) */
        dead = atomic_load_explicit(&h->magic, memory_order_acquire) == AM_MAGIC &&
               am_owner_dead((uint32_t)h->creator_pid, h->creator_start);
        munmap(b, sizeof(am_header));
      }
    }
    close(fd);
    if (dead) (void)shm_unlink(path); /* gone meanwhile (another rank's sweep): ENOENT, as wanted */
  }
  closedir(d);
}

/* Why this process's last create failed (syncq_am_mpi_why(NULL)): its
 * job is gone. Written by the thread that initialised MPI alone (the
 * job's threading rule). */
static char create_why[SYNCQ_AM_MPI_WHY_MAX];

int syncq_am_mpi_create(MPI_Comm comm, const syncq_am_mpi_config *cfg, syncq_am_mpi **out) {
  int flag = 0, fin = 0;
  /* Without a usable MPI and communicator this rank cannot take part in
   * the collective at all: it can only refuse. */
  if (MPI_Initialized(&flag) != MPI_SUCCESS || !flag) return SYNCQ_EINVAL;
  if (MPI_Finalized(&fin) != MPI_SUCCESS || fin) return SYNCQ_EINVAL;
  if (MPI_Is_thread_main(&flag) != MPI_SUCCESS || !flag) return SYNCQ_EINVAL;
  if (comm == MPI_COMM_NULL) return SYNCQ_EINVAL;
  create_why[0] = '\0';
  /* Every failure from here on is agreed (agree) before the next
   * collective call, so that all ranks return together. */
  MPI_Comm dup;
  if (MPI_Comm_dup(comm, &dup) != MPI_SUCCESS) return SYNCQ_ESYS;
  /* A failed local call here is agreed like the other local steps (the
   * agreement then runs under the handler dup inherited from comm). */
  int rc = out == NULL || check_cfg(cfg) != SYNCQ_OK ? SYNCQ_EINVAL : SYNCQ_OK;
  if (MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN) != MPI_SUCCESS && rc == SYNCQ_OK) rc = SYNCQ_ESYS;
  int rank = 0, size = 0;
  if (rc == SYNCQ_OK && (MPI_Comm_rank(dup, &rank) != MPI_SUCCESS || MPI_Comm_size(dup, &size) != MPI_SUCCESS))
    rc = SYNCQ_ESYS;
  syncq_am_mpi *j = NULL;
  if (rc == SYNCQ_OK) {
    j = calloc(1, sizeof *j);
    if (j == NULL) rc = SYNCQ_ENOMEM;
  }
  rc = agree(dup, rc);
  if (rc != SYNCQ_OK) {
    free(j);
    (void)MPI_Comm_free(&dup); /* failed: it stays with MPI; the create's status says more */
    return rc;
  }
  j->comm = dup;
  j->rank = rank;
  j->size = size;
  j->credits = cfg && cfg->credits ? cfg->credits : SYNCQ_AM_MPI_DEFAULT_CREDITS;
  j->dead_ns = cfg && cfg->dead_timeout_ns ? cfg->dead_timeout_ns : SYNCQ_AM_MPI_DEFAULT_DEAD_NS;
  j->coarse = amm_coarse_fits(j->dead_ns);
  j->t0 = amm_now(j);
  bool force = (cfg && cfg->force_mpi) || force_from_env();

  /* A job name every rank shares: rank 0's pid and a counter. */
  static unsigned jobs;
  if (j->rank == 0) snprintf(j->job, sizeof j->job, "sqm%dx%u", (int)getpid(), jobs);
  jobs++;
  if (MPI_Bcast(j->job, (int)sizeof j->job, MPI_CHAR, 0, j->comm) != MPI_SUCCESS) {
    rc = SYNCQ_ESYS;
    goto fail;
  }

  char name[SYNCQ_AM_NAME_MAX + 1];
  ep_name(j, j->rank, name, sizeof name);
  sweep_stale();
  (void)syncq_am_unlink(name); /* a stale segment of a crashed run of the same pid */
  rc = syncq_am_create(name, cfg ? &cfg->shm : NULL, &j->ep);
  int *node_ranks = NULL;
  if (rc == SYNCQ_OK) {
    syncq_am_limits lim;
    (void)syncq_am_limits_of(j->ep, &lim);
    j->bulk_size = lim.bulk_size;
    j->bufsize = sizeof(amm_hdr) + lim.bulk_size;
    j->tp = (am_transport){amm_send, amm_poll, j->bulk_size, j};
    rc = alloc_tables(j, &node_ranks);
  }
  /* Past this agreement every node-local endpoint exists, with one bulk
   * size on every rank. */
  rc = agree_bulk(j, rc);
  if (rc != SYNCQ_OK) {
    free(node_ranks);
    goto fail;
  }
  /* The node: ranks sharing memory with this one. Both calls are
   * collective with no local step between them. */
  MPI_Comm node;
  int nn = 0;
  if (MPI_Comm_split_type(j->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) {
    free(node_ranks);
    rc = SYNCQ_ESYS;
    goto fail;
  }
  /* The node's size and its freeing are local steps: a failure is agreed
   * with the rings' (node_rc); the Allgather, collective, runs anyway
   * (node_ranks holds a rank per rank of the job, more than the node). */
  int node_rc = MPI_Comm_size(node, &nn) == MPI_SUCCESS ? SYNCQ_OK : SYNCQ_ESYS;
  int g = MPI_Allgather(&j->rank, 1, MPI_INT, node_ranks, 1, MPI_INT, node);
  if (MPI_Comm_free(&node) != MPI_SUCCESS) node_rc = SYNCQ_ESYS;
  if (g != MPI_SUCCESS) {
    free(node_ranks);
    rc = SYNCQ_ESYS;
    goto fail;
  }
  if (node_rc == SYNCQ_OK && !force && nn <= (int)SYNCQ_AM_MAX_PEERS)
    for (int i = 0; i < nn; i++) j->peer[node_ranks[i]].path = PATH_SHM;
  free(node_ranks);
  if (node_rc != SYNCQ_OK) snprintf(j->why, sizeof j->why, "an MPI call on the node's communicator failed");

  rc = agree(j->comm, node_rc != SYNCQ_OK ? node_rc : make_rings(j));
  if (rc != SYNCQ_OK) goto fail;
  rc = agree(j->comm, connect_peers(j));
  if (rc != SYNCQ_OK) goto fail;
  /* Past this agreement every node-local peer has mapped this rank's
   * segment for its sends and its replies: the name is needed no more. */
  link_replies(j);
  if (!(cfg && cfg->keep_name)) drop_name(j);
  j->ep->tp = &j->tp;
  *out = j;
  return SYNCQ_OK;
fail:
  snprintf(create_why, sizeof create_why, "%s", j->why);
  (void)free_job(j, true); /* rc says the create failed; a failure here only leaves more with MPI */
  return rc;
}

syncq_am_endpoint *syncq_am_mpi_endpoint(const syncq_am_mpi *j) { return j ? j->ep : NULL; }
int syncq_am_mpi_rank(const syncq_am_mpi *j) { return j ? j->rank : -1; }
int syncq_am_mpi_size(const syncq_am_mpi *j) { return j ? j->size : -1; }
const char *syncq_am_mpi_why(const syncq_am_mpi *j) { return j ? j->why : create_why; }

const char *syncq_am_mpi_path(const syncq_am_mpi *j, int rank) {
  if (j == NULL || rank < 0 || rank >= j->size) return NULL;
  return j->peer[rank].path == PATH_SHM ? "shm" : "mpi";
}

/* Self is never lost: with force_mpi this rank's own failed send, or its
 * own BYE during the destroy, marks its entry dead (mark_dead), which is
 * not an answer to "is my peer gone?". */
bool syncq_am_mpi_peer_dead(const syncq_am_mpi *j, int rank) {
  if (j == NULL || rank < 0 || rank >= j->size || rank == j->rank) return false;
  local_look(j, rank, false);
  return j->peer[rank].dead;
}

/* Written out from the code and numbers mark_dead kept, into the job's
 * one buffer: no text is kept per peer. */
const char *syncq_am_mpi_peer_why(const syncq_am_mpi *j, int rank) {
  if (j == NULL || rank < 0 || rank >= j->size || rank == j->rank) return NULL;
  local_look(j, rank, false);
  const amm_peer *p = &j->peer[rank];
  if (!p->dead) return "";
  const uint64_t ms = 1000000u;
  uint64_t at = p->lost_at > j->t0 ? (p->lost_at - j->t0) / ms : 0u; /* found before the start: 0 */
  switch (p->lost) {
  case LOST_SILENT: {
    /* To the microsecond, the silence rounded up and the timeout down:
     * the silence was longer (liveness), so it always reads longer, where
     * whole milliseconds could read "1000 ms, longer than ... 1000 ms" */
    uint64_t q_us = p->lost_quiet / 1000u + (p->lost_quiet % 1000u != 0u), d_us = j->dead_ns / 1000u;
    snprintf(j->peer_text, SYNCQ_AM_MPI_WHY_MAX,
             "silent for %" PRIu64 ".%03" PRIu64 " ms, longer than the dead timeout of %" PRIu64 ".%03" PRIu64
             " ms: found dead %" PRIu64 " ms after the start",
             q_us / 1000u, q_us % 1000u, d_us / 1000u, d_us % 1000u, at);
    break;
  }
  case LOST_LEFT:
    snprintf(j->peer_text, SYNCQ_AM_MPI_WHY_MAX, "left the job: its BYE came %" PRIu64 " ms after the start", at);
    break;
  case LOST_CLOSED:
    snprintf(j->peer_text, SYNCQ_AM_MPI_WHY_MAX, "its endpoint was closed: found %" PRIu64 " ms after the start", at);
    break;
  case LOST_LEAVING:
    snprintf(j->peer_text, SYNCQ_AM_MPI_WHY_MAX,
             "left the job: its endpoint said leaving (its destroy began), found %" PRIu64 " ms after the start", at);
    break;
  case LOST_DIED:
    snprintf(j->peer_text, SYNCQ_AM_MPI_WHY_MAX,
             "its process died (pid %" PRIu32 "): found %" PRIu64 " ms after the start", p->lost_pid, at);
    break;
  case LOST_FAILED_HERE:
    snprintf(j->peer_text, SYNCQ_AM_MPI_WHY_MAX,
             "failed by this rank (%s here, on its messages) %" PRIu64 " ms after the start", fail_name(p->lost_call),
             at);
    break;
  default:
    snprintf(j->peer_text, SYNCQ_AM_MPI_WHY_MAX,
             "failed this rank (%s there): its FAILED message came %" PRIu64 " ms after the start",
             fail_name(p->lost_call), at);
    break;
  }
  return j->peer_text;
}

/* 64-bit FNV-1a of a handler's name (0 when unregistered). */
static uint64_t handler_hash(const syncq_am_endpoint *ep, unsigned i) {
  const char *n = syncq_am_handler_name(ep, i);
  if (n == NULL) return 0;
  uint64_t h = 0xcbf29ce484222325ull;                                              /* FNV offset basis */
  for (const char *c = n; *c; c++) h = (h ^ (unsigned char)*c) * 0x100000001b3ull; /* FNV prime */
  return h | 1u; /* registered, even with an empty name */
}

int syncq_am_mpi_start(syncq_am_mpi *j) {
  int flag = 0;
  if (j == NULL || j->started) return SYNCQ_EINVAL;
  if (MPI_Is_thread_main(&flag) != MPI_SUCCESS || !flag) return SYNCQ_EINVAL;
  uint64_t mine[SYNCQ_AM_MAX_HANDLERS];
  for (unsigned i = 0; i < SYNCQ_AM_MAX_HANDLERS; i++) mine[i] = handler_hash(j->ep, i);
  uint64_t *all = malloc((size_t)j->size * sizeof mine);
  if (all == NULL) return SYNCQ_ENOMEM;
  if (MPI_Allgather(mine, SYNCQ_AM_MAX_HANDLERS, MPI_UINT64_T, all, SYNCQ_AM_MAX_HANDLERS, MPI_UINT64_T, j->comm) !=
      MPI_SUCCESS) {
    free(all);
    return SYNCQ_ESYS;
  }
  int rc = SYNCQ_OK;
  for (int s = 1; s < j->size && rc == SYNCQ_OK; s++)
    for (unsigned i = 0; i < SYNCQ_AM_MAX_HANDLERS; i++)
      if (all[(size_t)s * SYNCQ_AM_MAX_HANDLERS + i] != all[i]) {
        const char *mn = syncq_am_handler_name(j->ep, i);
        snprintf(j->why, sizeof j->why,
                 "handler tables differ: index %u is %s on rank 0 and %s on rank %d (this rank %d: '%s')", i,
                 all[i] ? "registered" : "unregistered",
                 all[(size_t)s * SYNCQ_AM_MAX_HANDLERS + i] ? "registered under another name" : "unregistered", s,
                 j->rank, mn ? mn : "(none)");
        if (all[i] && all[(size_t)s * SYNCQ_AM_MAX_HANDLERS + i])
          snprintf(j->why, sizeof j->why,
                   "handler tables differ: index %u has another name on rank %d than on rank 0 "
                   "(this rank %d: '%s')",
                   i, s, j->rank, mn ? mn : "(none)");
        rc = SYNCQ_EINVAL;
        break;
      }
  free(all);
  if (rc != SYNCQ_OK) return rc;
  uint64_t now = amm_now(j);
  for (int s = 0; s < j->size; s++) j->peer[s].last_heard = j->peer[s].last_sent = now;
  j->last_check = now;
  j->t0 = now;
  j->started = true;
  return SYNCQ_OK;
}

int syncq_am_mpi_peer(syncq_am_mpi *j, int rank, syncq_am_peer **out) {
  if (j == NULL || out == NULL || !j->started || rank < 0 || rank >= j->size) return SYNCQ_EINVAL;
  *out = j->peer[rank].handle;
  return SYNCQ_OK;
}

/* A node-local peer found leaving (LOST_LEAVING) that is in its destroy
 * still, its process alive: it comes to the job-wide barrier as this rank
 * does (unless a loss of its own makes it skip it), so it is no reason
 * to skip it here. One that has closed its endpoint since has left the
 * barrier behind, or skipped it; one that died never comes. */
static bool leaving_now(const syncq_am_mpi *j, int s) {
  const amm_peer *p = &j->peer[s];
  return p->lost == LOST_LEAVING && am_peer_end(p->handle, true, NULL) == AM_END_LEAVING;
}

int syncq_am_mpi_destroy(syncq_am_mpi *j) {
  int flag = 0;
  if (j == NULL) return SYNCQ_EINVAL;
  if (MPI_Is_thread_main(&flag) != MPI_SUCCESS || !flag) return SYNCQ_EINVAL;
  int rc = SYNCQ_OK;
  bool mpi_ok = true;
  unsigned failed0 = j->failed_calls;
  /* This rank leaves: its endpoint says so at once, as its BYE tells its
   * MPI peers below. A node-local peer's send from now on returns
   * SYNCQ_EDEAD as to a closed endpoint (as an MPI peer's does once our
   * BYE is in), and the peer finds this rank lost (local_look) now, not
   * when the endpoint closes after the barrier (up to 10 dead timeouts
   * later when this rank leaves early). What is already queued is still
   * handled by the polls below. */
  am_endpoint_leave(j->ep);
  if (j->started) {
    /* A living peer keeps sending heartbeats while it polls, so we wait
     * for its BYE as long as it lives; the silence rule (liveness) ends
     * the wait for one that died. The cap only bounds the pathological. */
    uint64_t deadline = syncq_now_ns() + AMM_DESTROY_CAP * j->dead_ns;
    /* BYE to every MPI peer still here (its credits do not matter now). */
    for (int s = 0; s < j->size; s++) {
      amm_peer *p = &j->peer[s];
      /* a peer that already said BYE still waits for ours */
      bool failed = p->dead && !p->left;
      if (p->path != PATH_MPI || failed) continue;
      while (!(p->dead && !p->left) && p->tx.tail - p->tx.head >= p->tx.n && syncq_now_ns() < deadline) {
        harvest(j);
        tx_reap(j, s);
        sched_yield(); /* the peer that must take our sends may be waiting for this processor */
      }
      /* (told: this rank failed the peer and said so, its last message) */
      if (!(p->dead && !p->left) && !p->told && p->tx.tail - p->tx.head < p->tx.n) {
        p->told = true; /* no FAILED after the BYE: the peer may be gone by then */
        (void)post(j, s, K_BYE, 0, NULL, 0, false, NULL, 0);
      }
    }
    /* Handle what still arrives until each peer has said BYE or died. */
    for (;;) {
      bool waiting = false;
      for (int s = 0; s < j->size; s++)
        if (j->peer[s].path == PATH_MPI && !j->peer[s].dead && s != j->rank) waiting = true;
      if (!waiting) break;
      if (syncq_now_ns() > deadline) {
        rc = SYNCQ_ETIMEDOUT;
        break;
      }
      (void)syncq_am_poll(j->ep, AMM_STALL_BUDGET, NULL);
      sched_yield();
    }
    /* Node-local peers, which said no BYE: a barrier of the whole job,
     * non-blocking and bounded, handling messages meanwhile (skipped when
     * a peer died or left early: it would never complete). */
    bool any_dead = false;
    for (int s = 0; s < j->size; s++) {
      if (s == j->rank) continue;
      local_look(j, s, true);                            /* a node-local peer whose process died never joins */
      any_dead |= j->peer[s].dead && !leaving_now(j, s); /* left early, too */
    }
    if (!any_dead && rc == SYNCQ_OK) {
      MPI_Request bar;
      int done = 0;
      if (MPI_Ibarrier(j->comm, &bar) != MPI_SUCCESS) {
        /* no request made; the other ranks' barrier ends at their deadline */
        j->failed_calls++;
        snprintf(j->why, sizeof j->why, "MPI_Ibarrier failed");
      } else {
        while (!done) {
          if (MPI_Test(&bar, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            /* Every peer has said BYE: the rings and the communicator
             * can go. A barrier's request still live (bar not null)
             * stays with MPI: a nonblocking collective's request can be
             * neither cancelled nor freed (MPI 3.1, 5.12), and with it
             * the communicator (free_job). */
            j->failed_calls++;
            j->comm_held = bar != MPI_REQUEST_NULL;
            snprintf(j->why, sizeof j->why, "MPI_Test of the job-wide barrier failed");
            break;
          }
          if (done) break;
          if (syncq_now_ns() > deadline) {
            /* Every MPI peer has said BYE: its receives can be cancelled
             * and the rings freed. The barrier's request stays with MPI
             * (a nonblocking collective's can be neither cancelled nor
             * freed), and with it the communicator (free_job). */
            rc = SYNCQ_ETIMEDOUT;
            j->comm_held = true;
            break;
          }
          (void)syncq_am_poll(j->ep, AMM_STALL_BUDGET, NULL);
          sched_yield();
        }
      }
    }
    /* Our own BYEs: wait for them to leave, bounded. Not to a peer that
     * failed: a send to it (a bulk one, which needs the receiver) may
     * never complete, and waiting for it held every survivor here until
     * the cap (10 dead timeouts); its requests stay with MPI. */
    for (int s = 0; s < j->size; s++) {
      amm_peer *p = &j->peer[s];
      if (p->path != PATH_MPI) continue;
      while (p->tx.head != p->tx.tail && !(p->dead && !p->left && s != j->rank) && syncq_now_ns() < deadline) {
        tx_reap(j, s);
        if (p->tx.head != p->tx.tail) sched_yield(); /* as above: the receiver may need this processor */
      }
      if (p->tx.head != p->tx.tail || (p->dead && !p->left && s != j->rank)) mpi_ok = false;
    }
  }
  unsigned failed_now = j->failed_calls;
  j->ep->tp = NULL;
  int freed = free_job(j, mpi_ok);
  /* An MPI call of this rank failed during the destroy: said before a
   * timeout. (j is gone: failed0 and the count were read before.) */
  if (freed == SYNCQ_ESYS || failed_now != failed0) return SYNCQ_ESYS;
  return rc != SYNCQ_OK ? rc : freed;
}
