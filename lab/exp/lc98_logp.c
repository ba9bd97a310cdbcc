/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lc98_logp.c — Lumetta & Culler (paper 000) §4.1: shared-memory active
 * messages between two processes, per packet-claim algorithm.
 *
 * lc98-logp (§4.1, Table 1): one client process and one server process
 * (forked), each with its own endpoint; LogP by calibrated-delay
 * subtraction, as the LogP microbenchmarks of Culler et al. (000's [8]) and
 * GASNet's testlogp do:
 *   rtt  = median round trip of a request whose handler replies (each
 *          timed; the ping-pong floor is timed the same way);
 *   o_s  = T(send; delay(d)) - d, with d long enough that the queue
 *          never fills (the send's busy time);
 *   g    = T(N back-to-back sends, then one round trip) / N (the rate a
 *          stream of sends sustains);
 *   o_r  = T(send; delay(d); poll until the reply ran) - d - o_s, at least 0 (d longer
 *          than a round trip, so the reply is waiting);
 *   (o_s and o_r: medians over N timed iterations, robust to an iteration
 *   preempted on this shared machine; the delay spins on the clock);
 *   L    = rtt / 2 - o_s - o_r (negative when send and receive overheads
 *          overlap, as in 000's Table 1), from the run's medians, in a
 *          note (points hold times, which are never negative).
 * Each is its own group (metric), so its variants are interleaved. The rtt group also runs
 * "cacheline-pingpong": two processes bouncing one cache line of a shared
 * mapping, the floor of any round trip (phys measures it between threads).
 * Bulk bandwidth: N bulk requests of 8 KB back to back (the handler reads
 * one word per cache line of the block, pulling it across), against
 * "cross-core-transfer" (lab/floors.c: one core writes a buffer, another
 * copies it out, both halves timed, the slower one's rate: the copy
 * bandwidth between processors 000's "80% of memcpy" means, for a transfer
 * that reuses its buffers),
 * measured in the same group (ratios in the same run). The buffer is the
 * bulk transfer's own working set (the queue's 16 blocks of 8 KB): the AM
 * transfer's blocks travel from the sender's cache to the receiver's,
 * never through memory, and a floor that went to memory would be one the
 * transfer beats by staying in cache (phys measures the memory-sized
 * copy). Both halves, because a sender that reuses its 16 blocks takes
 * each line back from the receiver's cache with its stores, as the
 * floor's writer does from its copier's: on the development VM those
 * stores run at a fifth of the copy's rate or less, so the copier alone
 * ("cross-core-copy", shown beside it) is a rate no stream through reused
 * blocks can approach (docs/lab-internals.md). "memcpy" of the same blocks
 * into a 64 MB ring on one core is shown too.
 *
 * Transport (syncq target, beyond 000): every group above has
 * transport=shm; for each MPI the build found, two more groups have
 * transport=mpi and mpi=<impl>, measured by syncq-lab-mpi-<impl> under
 * mpirun -n 2, which the lab starts itself, one launch per repetition
 * (its variants interleaved inside the launch):
 *   rtt:       am-mpi (AM request/reply with every peer forced through
 *              MPI), mpi-pingpong (osu-style MPI_Send/MPI_Recv of 8 bytes,
 *              the floor), am-shm (the same AM over the queue block, same
 *              job), normalised to mpi-pingpong;
 *   bandwidth: am-mpi (8 KB bulk requests back to back) against mpi-bw
 *              (osu_bw-style windows of 64 8 KB MPI_Isend), normalised
 *              to mpi-bw.
 * Each launch binds every rank to a core under both MPIs
 * (lc98_mpi_command); the MPI groups record it as their "placement"
 * param (LC98_MPI_PLACEMENT), as lc98-apps' groups do.
 *
 * Processes, not threads: the lab's teams are threads, so the children are
 * a lab_proc_team (lab/proc_team.h). A child only runs library code and
 * _exit()s.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../floors.h"
#include "../lab.h"
#include "../proc_team.h"
#include "lc98_common.h"
#include "lc98_mpi_run.h"
#include "syncq/am.h"
#include "syncq/clock.h"
#include "syncq/pr.h"

#define LC98_OS_DELAY_NS 20000u /* d for o_s: far above any g seen here, so the queue never fills */
#define LC98_OR_DELAY_NS 50000u /* d for o_r: far above a round trip, so the reply is waiting */

enum { M_RTT, M_OS, M_OR, M_G, M_BW, M_COUNT };
static const char *const metric_name[M_COUNT] = {"rtt", "o_s", "o_r", "g", "bandwidth"};

/* Every rtt, o_s and o_r sample of a claim in this run, for L. */
#define LC98_MAX_KEPT (LAB_MAX_REPS + LAB_WARMUP_REPS)
static double kept[M_COUNT][SYNCQ_AM_CLAIM_COUNT][LC98_MAX_KEPT];
static int nkept[M_COUNT][SYNCQ_AM_CLAIM_COUNT];

/* The children of a sample, pinned when the run pins. */
static int team_new(lab_ctx *ctx, lab_proc_team *t) {
  char why[LAB_PROC_WHY];
  lab_topo *topo = lab_pinning_enabled(ctx) ? lab_ctx_topo(ctx) : NULL;
  if (lab_proc_team_init(t, topo, 1, 0, why, sizeof why) != 0) {
    lab_fail(ctx, "%s", why);
    return -1;
  }
  return 0;
}

static bool team_ready(lab_ctx *ctx, lab_proc_team *t, uint32_t n) {
  char why[LAB_PROC_WHY];
  if (lab_proc_team_wait_ready(t, n, why, sizeof why)) return true;
  lab_fail(ctx, "%s", why);
  return false;
}

typedef struct logp_point {
  int claim;         /* -1: a floor */
  const char *floor; /* "cacheline-pingpong", "memcpy", "cross-core-copy" or "cross-core-transfer" */
  int metric;
  uint64_t n; /* operations, or the cross-core copy's rounds */
} logp_point;

typedef struct server_state {
  uint64_t sunk;
  volatile uint64_t touched; /* keeps the bulk reads */
} server_state;

static void h_ping(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  (void)d;
  (void)len;
  (void)ctx;
  (void)syncq_am_reply(t, H_PONG, a, na, 0);
}

static void h_sink(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  (void)t;
  (void)a;
  (void)na;
  (void)d;
  (void)len;
  ((server_state *)ctx)->sunk++;
}

static void h_sink_last(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  (void)d;
  (void)len;
  ((server_state *)ctx)->sunk++;
  (void)syncq_am_reply(t, H_PONG, a, na, 0);
}

/* A bulk handler that reads the block (one word per cache line), as a
 * receiver that uses its data must. */
static void h_bulk(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  (void)t;
  (void)a;
  (void)na;
  server_state *s = ctx;
  const unsigned char *p = d;
  uint64_t sum = 0;
  for (size_t i = 0; i < len; i += SYNCQ_CACHELINE) sum += p[i];
  s->touched += sum;
  s->sunk++;
}

static void h_pong(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  (void)t;
  (void)a;
  (void)na;
  (void)d;
  (void)len;
  (*(uint64_t *)ctx)++;
}

static void server_child(lab_proc_team *team, const char *name, int claim) {
  lab_proc_pin(team->topo, 1);
  syncq_am_config cfg = {.claim = claim};
  syncq_am_endpoint *ep;
  if (syncq_am_create(name, &cfg, &ep) != SYNCQ_OK) lab_proc_child_failed(team, 1);
  server_state s = {0, 0};
  syncq_am_register(ep, H_PING, "ping", h_ping, &s);
  syncq_am_register(ep, H_SINK, "sink", h_sink, &s);
  syncq_am_register(ep, H_SINK_LAST, "sink-last", h_sink_last, &s);
  syncq_am_register(ep, H_BULK, "bulk", h_bulk, &s);
  lab_proc_child_ready(team);
  while (!lab_proc_child_should_stop(team)) (void)syncq_am_poll(ep, LC98_POLL_BUDGET, NULL);
  syncq_am_destroy(ep);
  _exit(0);
}

typedef struct client {
  syncq_am_endpoint *ep;
  syncq_am_peer *srv;
  uint64_t pongs;
} client;

static int wait_pongs(client *cl, uint64_t want) {
  while (cl->pongs < want)
    if (syncq_am_poll(cl->ep, LC98_POLL_BUDGET, NULL) != SYNCQ_OK) return -1;
  return 0;
}

static int send1(client *cl, unsigned h, uint32_t i) {
  uint32_t a[1] = {i};
  return syncq_am_request(cl->srv, h, a, 1, 0) == SYNCQ_OK ? 0 : -1;
}

/* Finish a phase: one round trip after the sinks, so the queue is empty. */
static int drain(client *cl) {
  uint64_t want = cl->pongs + 1;
  return send1(cl, H_SINK_LAST, 0) == 0 ? wait_pongs(cl, want) : -1;
}

/* The delay d of the subtraction: a spin on the clock rather than a
 * calibrated loop, so that d is exact in the wall time T is measured in
 * even when the loop's calibration ran on a busy machine. */
static void delay_exact(uint64_t ns) {
  uint64_t until = syncq_now_ns() + ns;
  while (syncq_now_ns() < until) syncq_pr_relax();
}

/* The median over n iterations of T(send; delay d [; poll until the reply
 * ran]) - d. Per-iteration medians keep a preempted iteration (this
 * machine is shared) from shifting the subtraction. */
static double timed_iterations(client *cl, uint64_t n, uint64_t d, bool wait_reply) {
  double *v = malloc(n * sizeof *v);
  if (v == NULL) return -1;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t t0 = syncq_now_ns();
    if (send1(cl, wait_reply ? H_PING : H_SINK, (uint32_t)i) != 0) {
      free(v);
      return -1;
    }
    delay_exact(d);
    if (wait_reply && wait_pongs(cl, cl->pongs + 1) != 0) {
      free(v);
      return -1;
    }
    v[i] = (double)(syncq_now_ns() - t0) - (double)d;
  }
  double m = lab_median(v, n);
  free(v);
  return m;
}

/* Median round trip over n timed iterations. */
static double measure_rtt(client *cl, uint64_t n) {
  double *v = malloc(n * sizeof *v);
  if (v == NULL) return -1;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t t0 = syncq_now_ns();
    if (send1(cl, H_PING, (uint32_t)i) != 0 || wait_pongs(cl, cl->pongs + 1) != 0) {
      free(v);
      return -1;
    }
    v[i] = (double)(syncq_now_ns() - t0);
  }
  double m = lab_median(v, n);
  free(v);
  return m;
}

static double measure_os(client *cl, uint64_t n) {
  double os = timed_iterations(cl, n, LC98_OS_DELAY_NS, false);
  return os >= 0 && drain(cl) == 0 ? os : -1;
}

static double measure_g(client *cl, uint64_t n) {
  uint64_t t0 = syncq_now_ns();
  for (uint64_t i = 0; i < n; i++)
    if (send1(cl, H_SINK, (uint32_t)i) != 0) return -1;
  if (drain(cl) != 0) return -1;
  return (double)(syncq_now_ns() - t0) / (double)n;
}

static double measure_or(client *cl, uint64_t n, double os) {
  double t = timed_iterations(cl, n, LC98_OR_DELAY_NS, true);
  if (t < 0) return -1;
  /* t and os are medians of separate iterations: when the receive overhead
   * is below their noise (a slow, instrumented or preempted run) the
   * difference can dip under zero; an overhead is at least 0. */
  return t > os ? t - os : 0.0;
}

static double measure_bw(client *cl, uint64_t n, unsigned char *buf, size_t len) {
  uint32_t a[1] = {0};
  uint64_t t0 = syncq_now_ns();
  for (uint64_t i = 0; i < n; i++) {
    buf[0] = (unsigned char)i; /* a fresh block each time */
    if (syncq_am_request_bulk(cl->srv, H_BULK, buf, len, a, 1, 0) != SYNCQ_OK) return -1;
  }
  if (drain(cl) != 0) return -1;
  double s = (double)(syncq_now_ns() - t0) / 1e9;
  return (double)n * (double)len / BYTES_PER_MB / s;
}

/* The single-core memory copy rate, shown beside the bulk transfers: 8 KB
 * blocks copied into a ring larger than the last-level cache. The verdict
 * uses the cross-core copy (lab/floors.c) instead: the transfer crosses
 * cores, and 000's "80% of memcpy" is against the copy bandwidth between
 * processors. */
#define LC98_MEMCPY_RING_BYTES (64u << 20)
static double memcpy_bw(uint64_t n) {
  size_t len = SYNCQ_AM_BULK_MAX, ring = LC98_MEMCPY_RING_BYTES / SYNCQ_AM_BULK_MAX;
  unsigned char *src = aligned_alloc(SYNCQ_CACHELINE, len), *dst = aligned_alloc(SYNCQ_CACHELINE, len * ring);
  if (src == NULL || dst == NULL) {
    free(src);
    free(dst);
    return -1;
  }
  memset(src, 1, len);
  memset(dst, 0, len * ring);
  uint64_t t0 = syncq_now_ns();
  for (uint64_t i = 0; i < n; i++) {
    src[0] = (unsigned char)i;
    memcpy(dst + (i % ring) * len, src, len);
    __asm__ __volatile__("" ::"r"(dst) : "memory"); /* the copy must happen */
  }
  double s = (double)(syncq_now_ns() - t0) / 1e9;
  free(src);
  free(dst);
  return (double)n * (double)len / BYTES_PER_MB / s;
}

/* The bulk transfer's working set: the endpoint's bulk blocks (its config
 * is the default: 16 blocks of SYNCQ_AM_BULK_MAX bytes). */
#define LC98_BULK_WORKING_SET ((size_t)SYNCQ_AM_DEFAULT_BULK_BLOCKS * SYNCQ_AM_BULK_MAX)

/* The copy bandwidth between processors (lab/floors.c) for the bulk
 * transfer's working set, in MB/s: the copier's alone ("cross-core-copy")
 * or the writer's and the copier's together ("cross-core-transfer"). */
static int cross_copy_sample(lab_ctx *ctx, const logp_point *pt, lab_sample *out) {
  lab_topo *topo = lab_pinning_enabled(ctx) ? lab_ctx_topo(ctx) : NULL;
  int a, b;
  (void)lab_floor_slots(topo, &a, &b);
  char why[LAB_FLOOR_WHY];
  double copy_gbps, transfer_gbps;
  if (lab_floor_cross_core_copy(topo, a, b, LC98_BULK_WORKING_SET, (unsigned)pt->n, &copy_gbps, &transfer_gbps, why,
                                sizeof why) != 0) {
    lab_fail(ctx, "%s", why);
    return -1;
  }
  out->value = (strcmp(pt->floor, "cross-core-transfer") == 0 ? transfer_gbps : copy_gbps) * 1e9 / BYTES_PER_MB;
  return 0;
}

static int pingpong_sample(lab_ctx *ctx, const logp_point *pt, lab_sample *out) {
  lab_proc_team team;
  if (team_new(ctx, &team) != 0) return -1;
  lab_proc_ctl *c = team.ctl;
  pid_t p = lab_proc_team_fork(&team);
  if (p == 0) {
    lab_proc_pin(team.topo, 1);
    lab_proc_child_ready(&team);
    for (uint64_t i = 0; i < pt->n; i++) {
      /* acquire/release: each side's store pairs with the other's load */
      while (atomic_load_explicit(&c->line, memory_order_acquire) != 2 * i + 1) syncq_pr_relax();
      atomic_store_explicit(&c->line, 2 * i + 2, memory_order_release);
    }
    _exit(0);
  }
  lab_proc_pin(team.topo, 0);
  int rc = -1;
  double *v = malloc(pt->n * sizeof *v);
  if (v == NULL) lab_fail(ctx, "out of memory");
  if (p < 0) lab_fail(ctx, "fork failed");
  if (v != NULL && p > 0 && team_ready(ctx, &team, 1)) {
    for (uint64_t i = 0; i < pt->n; i++) {
      uint64_t t0 = syncq_now_ns(); /* timed like the rtt: the clock reads are in both */
      atomic_store_explicit(&c->line, 2 * i + 1, memory_order_release); /* pairs with the child's acquire */
      while (atomic_load_explicit(&c->line, memory_order_acquire) != 2 * i + 2) syncq_pr_relax();
      v[i] = (double)(syncq_now_ns() - t0);
    }
    out->value = lab_median(v, pt->n) / NS_PER_US;
    rc = 0;
  }
  free(v);
  lab_proc_unpin(team.topo);
  lab_proc_team_stop(&team, rc != 0);
  lab_proc_team_destroy(&team);
  return rc;
}

static int logp_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const logp_point *pt = arg;
  memset(out, 0, sizeof *out);
  if (pt->claim < 0 && strcmp(pt->floor, "memcpy") == 0) {
    out->value = memcpy_bw(pt->n);
    if (out->value < 0) lab_fail(ctx, "out of memory");
    return out->value < 0 ? -1 : 0;
  }
  if (pt->claim < 0 && (strcmp(pt->floor, "cross-core-copy") == 0 || strcmp(pt->floor, "cross-core-transfer") == 0))
    return cross_copy_sample(ctx, pt, out);
  if (pt->claim < 0) return pingpong_sample(ctx, pt, out);
  lab_proc_team team;
  if (team_new(ctx, &team) != 0) return -1;
  char sname[96], cname[96];
  lab_proc_seg_name(sname, sizeof sname, LC98_SEG_TAG, "srv");
  lab_proc_seg_name(cname, sizeof cname, LC98_SEG_TAG, "cli");
  pid_t p = lab_proc_team_fork(&team);
  if (p == 0) server_child(&team, sname, pt->claim);
  int rc = -1;
  client cl = {0};
  unsigned char *buf = NULL;
  syncq_am_config cfg = {.claim = pt->claim};
  if (p < 0) {
    lab_fail(ctx, "fork failed");
  } else if (team_ready(ctx, &team, 1)) {
    int r = syncq_am_create(cname, &cfg, &cl.ep);
    if (r == SYNCQ_OK) {
      syncq_am_register(cl.ep, H_PONG, "pong", h_pong, &cl.pongs);
      r = syncq_am_connect(cl.ep, sname, &cl.srv);
    }
    if (r != SYNCQ_OK) {
      lab_fail(ctx, "endpoint set-up failed: %s", syncq_strerror(r));
    } else {
      lab_proc_pin(team.topo, 0);
      double v = -1, os;
      switch (pt->metric) {
      case M_RTT:
        v = measure_rtt(&cl, pt->n) / NS_PER_US;
        break;
      case M_OS:
        v = measure_os(&cl, pt->n) / NS_PER_US;
        break;
      case M_G:
        v = measure_g(&cl, pt->n) / NS_PER_US;
        break;
      case M_OR:
        os = measure_os(&cl, pt->n);
        v = os < 0 ? -1 : measure_or(&cl, pt->n, os) / NS_PER_US;
        break;
      case M_BW:
        buf = aligned_alloc(SYNCQ_CACHELINE, SYNCQ_AM_BULK_MAX);
        if (buf != NULL) {
          memset(buf, 1, SYNCQ_AM_BULK_MAX);
          v = measure_bw(&cl, pt->n, buf, SYNCQ_AM_BULK_MAX);
        }
        break;
      }
      lab_proc_unpin(team.topo);
      if (v == -1) {
        lab_fail(ctx, "%s: a send or poll failed", metric_name[pt->metric]);
      } else {
        out->value = v;
        if (nkept[pt->metric][pt->claim] < LC98_MAX_KEPT)
          kept[pt->metric][pt->claim][nkept[pt->metric][pt->claim]++] = v;
        rc = 0;
      }
    }
  }
  free(buf);
  lab_proc_team_stop(&team, rc != 0);
  lab_proc_team_destroy(&team);
  if (cl.srv) syncq_am_disconnect(cl.srv);
  if (cl.ep) syncq_am_destroy(cl.ep);
  (void)syncq_am_unlink(sname); /* if the server died before removing it */
  return rc;
}

/* L = rtt/2 - o_s - o_r from the medians of this run's samples. A note,
 * not a point: it is negative when the overheads overlap (000 Table 1:
 * -0.1 to -0.3 us), and points are times, never negative. */
static void note_latency(lab_ctx *ctx, const int *claims, int nc) {
  char text[1024];
  size_t len = (size_t)snprintf(text, sizeof text,
                                "L = rtt/2 - o_s - o_r from this run's medians (us; negative: send and "
                                "receive overheads overlap, as in 000 Table 1):");
  for (int i = 0; i < nc && len < sizeof text; i++) {
    int c = claims[i];
    if (nkept[M_RTT][c] == 0 || nkept[M_OS][c] == 0 || nkept[M_OR][c] == 0) continue;
    double l = lab_median(kept[M_RTT][c], (size_t)nkept[M_RTT][c]) / 2 -
               lab_median(kept[M_OS][c], (size_t)nkept[M_OS][c]) - lab_median(kept[M_OR][c], (size_t)nkept[M_OR][c]);
    len += (size_t)snprintf(text + len, sizeof text - len, " %s %.3g;", syncq_am_claim_name(c), l);
  }
  lab_note(ctx, "%s", text);
}

/* ---- the MPI transport's points (one mpirun launch fills a repetition) */

enum { MV_AM_MPI, MV_PINGPONG, MV_AM_SHM, MV_COUNT }; /* rtt variants */
static const char *const mpi_rtt_names[] = {"am-mpi", "mpi-pingpong", "am-shm"};
static const char *const mpi_bw_names[] = {"am-mpi", "mpi-bw"};
#define LC98_MPI_RANKS 2

typedef struct mpi_point {
  int mpi;    /* index in mpis[] */
  int metric; /* M_RTT or M_BW */
  int var;
  uint64_t n;
} mpi_point;

static lc98_mpi mpis[LC98_MPI_MAX];
static int nmpis;
/* The values of the latest launch per MPI and metric, each taken once. */
static double mpi_cache[LC98_MPI_MAX][2][MV_COUNT];
static bool mpi_have[LC98_MPI_MAX][2][MV_COUNT];

static int mpi_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const mpi_point *pt = arg;
  memset(out, 0, sizeof *out);
  int mi = pt->metric == M_RTT ? 0 : 1;
  const char *const *names = mi == 0 ? mpi_rtt_names : mpi_bw_names;
  int nn = mi == 0 ? 3 : 2;
  if (!mpi_have[pt->mpi][mi][pt->var]) { /* a new repetition: one launch measures every variant */
    char args[64];
    snprintf(args, sizeof args, "logp %s %llu", mi == 0 ? "rtt" : "bw", (unsigned long long)pt->n);
    lc98_mpi_line lines[LC98_MPI_MAX_LINES];
    int nl = lc98_mpi_launch(ctx, &mpis[pt->mpi], LC98_MPI_RANKS, args, lines, LC98_MPI_MAX_LINES);
    if (nl < 0) return -1;
    for (int v = 0; v < nn; v++) {
      mpi_have[pt->mpi][mi][v] = false;
      for (int i = 0; i < nl; i++)
        if (strcmp(lines[i].variant, names[v]) == 0 && lines[i].ok && lines[i].nv >= 1 && lines[i].v[0] > 0) {
          mpi_cache[pt->mpi][mi][v] = lines[i].v[0];
          mpi_have[pt->mpi][mi][v] = true;
        }
    }
    if (!mpi_have[pt->mpi][mi][pt->var]) {
      lab_fail(ctx, "%s: the MPI helper gave no value for %s", mpis[pt->mpi].impl, names[pt->var]);
      return -1;
    }
  }
  out->value = mpi_cache[pt->mpi][mi][pt->var];
  mpi_have[pt->mpi][mi][pt->var] = false;
  return 0;
}

static int logp_mpi_groups(lab_ctx *ctx) {
  const char *absent = NULL;
  nmpis = lc98_mpi_list(mpis, LC98_MPI_MAX, &absent);
  memset(mpi_have, 0, sizeof mpi_have);
  if (nmpis == 0) {
    lab_note(ctx, "transport=mpi points absent: %s", absent);
    return 0;
  }
  uint64_t nrtt = lab_by_size(ctx, 200, 1000, 20000, 100000);
  uint64_t nbw = lab_by_size(ctx, 200, 1000, 20000, 50000);
  static mpi_point pts[LC98_MPI_MAX][2][MV_COUNT];
  for (int k = 0; k < nmpis; k++) {
    char cmd[640];
    lc98_mpi_command(&mpis[k], LC98_MPI_RANKS, cmd, sizeof cmd);
    if (!lab_planning(ctx))
      lab_note(ctx,
               "transport=mpi, mpi=%s: syncq-lab starts `%s %s logp rtt|bw N` itself, one launch per "
               "repetition (N = %llu round trips, %llu bulk messages); the variants of a repetition are "
               "measured back to back inside that launch",
               mpis[k].impl, cmd, mpis[k].helper, (unsigned long long)nrtt, (unsigned long long)nbw);
    for (int mi = 0; mi < 2; mi++) {
      lab_group g;
      memset(&g, 0, sizeof g);
      lab_group_param(&g, "threads", LC98_MPI_RANKS);
      lab_group_param_str(&g, "transport", "mpi");
      lab_group_param_str(&g, "mpi", mpis[k].impl);
      lab_group_param_str(&g, "placement", LC98_MPI_PLACEMENT);
      g.metric = mi == 0 ? "rtt" : "bandwidth";
      g.unit = mi == 0 ? "us" : "MB/s";
      g.higher_is_better = mi == 1;
      g.sample = mpi_sample;
      int nn = mi == 0 ? 3 : 2;
      for (int v = 0; v < nn; v++) {
        pts[k][mi][v] = (mpi_point){k, mi == 0 ? M_RTT : M_BW, v, mi == 0 ? nrtt : nbw};
        g.variants[g.nvariants++] = (lab_variant){mi == 0 ? mpi_rtt_names[v] : mpi_bw_names[v], &pts[k][mi][v]};
      }
      g.normalize_to = mi == 0 ? "mpi-pingpong" : "mpi-bw";
      if (lab_run_group(ctx, &g) != 0) return -1;
    }
  }
  return 0;
}

static int logp_run(lab_ctx *ctx) {
  memset(nkept, 0, sizeof nkept);
  uint64_t n = lab_by_size(ctx, 100, 300, 10000, 20000);
  /* g is the rate a long stream sustains: many times the 256-packet queue */
  uint64_t ng = lab_by_size(ctx, 1000, 4000, 50000, 100000);
  uint64_t nbw = lab_by_size(ctx, 100, 500, 20000, 50000);
  uint64_t npp = lab_by_size(ctx, 1000, 5000, 200000, 500000);
  /* the cross-core copy's rounds: as many bytes as the bulk transfers move */
  uint64_t ncopy = nbw * SYNCQ_AM_BULK_MAX / LC98_BULK_WORKING_SET;
  if (ncopy < 2) ncopy = 2; /* the transfer figure times the writes of rounds 2.. (lab/floors.h) */
  size_t copy_bytes = LC98_BULK_WORKING_SET;
  lab_begin(
    ctx,
    "Two processes, each with an endpoint of the claim under test (256 packets, 16 bulk blocks of "
    "8 KB per queue); the client's requests run handlers in the server. LogP by "
    "calibrated-delay subtraction: rtt = median request/reply round trip (each timed); o_s = median of T(send; "
    "delay %u ns) - %u ns; g = T(%llu back-to-back sends + one round trip)/%llu; o_r = median of "
    "T(send; delay %u ns; poll until the reply ran) - %u ns - o_s (all in us, N = %llu); L = rtt/2 - o_s - o_r is in "
    "the notes. "
    "cacheline-pingpong: two processes bounce one cache line (median of %llu round trips, each "
    "timed), the floor of any round trip. bandwidth: %llu bulk requests of 8 KB back to back, the handler reading one word "
    "per cache line, against cross-core-transfer in the same group: %llu rounds in which one core writes a "
    "%zu KiB buffer (the transfer's working set: its 16 bulk blocks), taking its lines back from the other "
    "core's cache as a sender reusing its blocks does, and the other core copies it out with memcpy, both "
    "halves timed; the rate is the slower half's, which a stream overlapping the two can at best reach (the "
    "copy bandwidth between processors, which 000's 'about 80%% of memcpy' is measured against; the verdict "
    "uses it). cross-core-copy: the copier's time alone in the same kind of rounds (phys measures that copy "
    "through memory). memcpy: the same 8 KB "
    "blocks copied on one core into a 64 MB ring, shown for comparison.",
    LC98_OS_DELAY_NS, LC98_OS_DELAY_NS, (unsigned long long)ng, (unsigned long long)ng, LC98_OR_DELAY_NS,
    LC98_OR_DELAY_NS, (unsigned long long)n, (unsigned long long)npp, (unsigned long long)nbw,
    (unsigned long long)ncopy, copy_bytes / 1024);
  if (!lab_planning(ctx)) {
    int a, b;
    const char *apart = lab_floor_slots(lab_pinning_enabled(ctx) ? lab_ctx_topo(ctx) : NULL, &a, &b);
    if (apart != NULL) lab_note(ctx, "cross-core-transfer and cross-core-copy: %s", apart);
  }
  if (lab_pus(ctx) < 2)
    lab_note(ctx,
             "one processing unit: client and server share it and poll without yielding (000 measured on "
             "dedicated processors), so a round trip can last the rest of a time slice");
  int claims[SYNCQ_AM_CLAIM_COUNT];
  int nc = lc98_claims_selected(ctx, claims);
  static logp_point pts[M_COUNT][SYNCQ_AM_CLAIM_COUNT + 3];
  for (int m = 0; m < M_COUNT; m++) {
    lab_group g;
    memset(&g, 0, sizeof g);
    lab_group_param(&g, "threads", 2);
    lab_group_param_str(&g, "transport", "shm");
    g.metric = metric_name[m];
    g.unit = m == M_BW ? "MB/s" : "us";
    g.higher_is_better = m == M_BW;
    g.sample = logp_sample;
    for (int i = 0; i < nc; i++) {
      pts[m][i] = (logp_point){claims[i], NULL, m, m == M_BW ? nbw : m == M_G ? ng : n};
      g.variants[g.nvariants++] = (lab_variant){syncq_am_claim_name(claims[i]), &pts[m][i]};
    }
    if (m == M_RTT) {
      pts[m][nc] = (logp_point){-1, "cacheline-pingpong", m, npp};
      g.variants[g.nvariants++] = (lab_variant){"cacheline-pingpong", &pts[m][nc]};
      g.normalize_to = "cacheline-pingpong";
    } else if (m == M_BW) {
      pts[m][nc] = (logp_point){-1, "cross-core-transfer", m, ncopy};
      g.variants[g.nvariants++] = (lab_variant){"cross-core-transfer", &pts[m][nc]};
      pts[m][nc + 1] = (logp_point){-1, "cross-core-copy", m, ncopy};
      g.variants[g.nvariants++] = (lab_variant){"cross-core-copy", &pts[m][nc + 1]};
      pts[m][nc + 2] = (logp_point){-1, "memcpy", m, nbw};
      g.variants[g.nvariants++] = (lab_variant){"memcpy", &pts[m][nc + 2]};
      g.normalize_to = "cross-core-transfer";
    } else {
      g.normalize_to = "tas"; /* 000 Table 1 compares the others with the simple locks */
    }
    if (g.nvariants == 0) continue;
    if (lab_run_group(ctx, &g) != 0) return -1;
  }
  if (!lab_planning(ctx)) note_latency(ctx, claims, nc);
  return logp_mpi_groups(ctx);
}

/* clang-format off */
#define RTT_WITHIN_3X(algo)                                                                                     \
  "{\"op\":\"ratio_below\",\"metric\":\"rtt\",\"num\":\"" algo "\",\"den\":\"cacheline-pingpong\",\"bound\":3}"
/* clang-format on */
#define RTT_NEAR_TAS(algo) \
  "{\"op\":\"ratio_below\",\"metric\":\"rtt\",\"num\":\"" algo "\",\"den\":\"tas\",\"bound\":1.1}"

/* clang-format off */
#define MPI_RATIO(dir, metric, num, den, impl, bound)                                                      \
  "{\"op\":\"ratio_" dir "\",\"metric\":\"" metric "\",\"num\":\"" num "\",\"den\":\"" den                        \
  "\",\"where\":{\"transport\":\"mpi\",\"mpi\":\"" impl "\"},\"bound\":" bound "}"
/* clang-format on */

/* clang-format off */
static const lab_claim logp_claims[] = {
  {"syncq target: the request/reply round trip of every claim within 3x the raw cache-line ping-pong "
   "round trip between the same two processes.",
   "{\"op\":\"all\",\"rules\":[" RTT_WITHIN_3X("tas") "," RTT_WITHIN_3X("ttas") "," RTT_WITHIN_3X(
       "ticket") "," RTT_WITHIN_3X("anderson") "," RTT_WITHIN_3X("posix-mutex") "," RTT_WITHIN_3X("lock-free") "]}"},
  {"Without contention all but the POSIX mutex are within a few percent (000 §4.1, Table 1): TTAS, ticket, "
   "Anderson and lock-free round trips within 10% of test-and-set's.",
   "{\"op\":\"all\",\"rules\":[" RTT_NEAR_TAS("ttas") "," RTT_NEAR_TAS("ticket") "," RTT_NEAR_TAS(
       "anderson") "," RTT_NEAR_TAS("lock-free") "]}"},
  {"The POSIX mutex is more than 25% worse than the others without contention (000 §4.1): its send "
   "overhead o_s above 1.25x test-and-set's.",
   "{\"op\":\"ratio_above\",\"metric\":\"o_s\",\"num\":\"posix-mutex\",\"den\":\"tas\",\"bound\":1.25}"},
  {"Send overhead and gap rise slightly with the algorithm's complexity (000 §4.1): the lock-free claim "
   "(two CAS) has a larger o_s than test-and-set (one).",
   "{\"op\":\"ratio_above\",\"metric\":\"o_s\",\"num\":\"lock-free\",\"den\":\"tas\",\"bound\":1.0}"},
  {"Peak bulk bandwidth is roughly 80% of memcpy's (000 §4.1), meaning the copy bandwidth between "
   "processors: the lock-free claim's above 70% of the cross-core transfer's (one core writes the transfer's "
   "working set, taking its lines back from the other core's cache, and the other copies it out; the "
   "slower half's rate), measured in the same run.",
   "{\"op\":\"ratio_above\",\"metric\":\"bandwidth\",\"num\":\"lock-free\",\"den\":\"cross-core-transfer\",\"bound\":0.7}"},
  {"syncq target: the AM round trip over MPI (every peer forced through MPI) within 1.5x the raw MPI "
   "ping-pong (osu-style 8-byte MPI_Send/MPI_Recv) measured in the same launch, with both Open MPI and MPICH.",
   "{\"op\":\"all\",\"rules\":[" MPI_RATIO("below", "rtt", "am-mpi", "mpi-pingpong", "openmpi", "1.5") "," MPI_RATIO(
       "below", "rtt", "am-mpi", "mpi-pingpong", "mpich", "1.5") "]}"},
  {"syncq target: on one host the shared-memory AM round trip is at most 0.5x the MPI transport's "
   "(same job, same launch), with both MPIs.",
   "{\"op\":\"all\",\"rules\":[" MPI_RATIO("below", "rtt", "am-shm", "am-mpi", "openmpi", "0.5") "," MPI_RATIO(
       "below", "rtt", "am-shm", "am-mpi", "mpich", "0.5") "]}"},
  {"syncq target: 8 KB bulk requests over MPI reach at least 70% of MPI's own bandwidth for 8 KB "
   "messages (osu_bw-style), same launch, with both MPIs.",
   "{\"op\":\"all\",\"rules\":[" MPI_RATIO("above", "bandwidth", "am-mpi", "mpi-bw", "openmpi", "0.7") "," MPI_RATIO(
       "above", "bandwidth", "am-mpi", "mpi-bw", "mpich", "0.7") "]}"},
};
/* clang-format on */

const char *const lc98_fixed[] = {"tas",
                                  "ttas",
                                  "ticket",
                                  "anderson",
                                  "posix-mutex",
                                  "lock-free",
                                  "cacheline-pingpong",
                                  "memcpy",
                                  "lock-free-1w",
                                  "am-mpi",
                                  "mpi-pingpong",
                                  "am-shm",
                                  "mpi-bw",
                                  "cross-core-copy",
                                  "cross-core-transfer",
                                  NULL};

const lab_experiment lab_exp_lc98_logp = {
  .name = "lc98-logp",
  .paper = "000 Lumetta & Culler, §4.1",
  .figure = "Table 1",
  .title = "Active messages between two processes: LogP parameters, round trip and bulk bandwidth per claim",
  .x = NULL,
  .log_y = false,
  .claims = logp_claims,
  .nclaims = sizeof logp_claims / sizeof logp_claims[0],
  .fixed_algos = lc98_fixed,
  .run = logp_run,
};
