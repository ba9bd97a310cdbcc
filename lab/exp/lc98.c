/*
 * lc98.c — experiments of Lumetta & Culler (paper 000): shared-memory
 * active messages between processes, per packet-claim algorithm.
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
 * "memcpy" of the same blocks into a 64 MB ring (the memory copy rate),
 * measured in the same group (ratios in the same run).
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
 *
 * lc98-stress (§4.2, Table 2): 1, 3 and 7 writer processes send a total of
 * 1,000,000 integers (default/full; fewer in --quick) to one reader, which
 * checks every writer's count and order. The time runs from the writers'
 * common start to the last integer handled. The 7-writer group also runs
 * "lock-free-1w" (the lock-free claim with one writer) so the paper's
 * "improves with more writers" is a ratio of interleaved runs.
 *
 * Processes, not threads: the lab's teams are threads, so this file forks
 * its own. A child only runs library code and _exit()s.
 */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lab.h"
#include "lc98_mpi_run.h"
#include "syncq/am.h"
#include "syncq/clock.h"
#include "syncq/pr.h"

#define NS_PER_US 1e3
#define NS_PER_MS 1e6
#define BYTES_PER_MB 1e6
#define LC98_POLL_BUDGET 64u
#define LC98_OS_DELAY_NS 20000u   /* d for o_s: far above any g seen here, so the queue never fills */
#define LC98_OR_DELAY_NS 50000u   /* d for o_r: far above a round trip, so the reply is waiting */
#define LC98_STALL_NS 30000000000ull /* a sample with no progress for 30 s fails */
#define LC98_CHILD_ALARM_S 600    /* a child that outlives its parent's interest dies */
#define LC98_STRESS_TOTAL 1000000u /* 000 §4.2 */

enum { H_PING = 1, H_PONG = 2, H_SINK = 3, H_SINK_LAST = 4, H_BULK = 5, H_INT = 6 };
enum { M_RTT, M_OS, M_OR, M_G, M_BW, M_COUNT };
static const char *const metric_name[M_COUNT] = {"rtt", "o_s", "o_r", "g", "bandwidth"};

/* Every rtt, o_s and o_r sample of a claim in this run, for L. */
#define LC98_MAX_KEPT (LAB_MAX_REPS + LAB_WARMUP_REPS)
static double kept[M_COUNT][SYNCQ_AM_CLAIM_COUNT][LC98_MAX_KEPT];
static int nkept[M_COUNT][SYNCQ_AM_CLAIM_COUNT];

/* Shared between the parent and its children (anonymous MAP_SHARED). */
typedef struct lc98_ctl {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) ready; /* children that are set up */
  _Atomic(uint32_t) failed;                        /* a child could not set up */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) go;    /* the parent's start signal */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) stop;  /* the parent is done */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) line; /* cacheline-pingpong */
} lc98_ctl;

static unsigned seg_counter;

static lc98_ctl *ctl_new(void) {
  void *p = mmap(NULL, sizeof(lc98_ctl), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  memset(p, 0, sizeof(lc98_ctl));
  return p;
}

static void seg_name(char *out, size_t n, const char *role) {
  snprintf(out, n, "syncq-lc98-%d-%s-%u", (int)getpid(), role, seg_counter++);
}

static void pin(lab_ctx *ctx, int slot) {
  char why[128];
  if (lab_pinning_enabled(ctx)) (void)lab_topo_pin_self(lab_ctx_topo(ctx), slot, why, sizeof why);
}

static void unpin(lab_ctx *ctx) {
  if (lab_pinning_enabled(ctx)) lab_topo_unpin_self(lab_ctx_topo(ctx));
}

/* Wait for n children to be ready; false (after lab_fail) if one failed. */
static bool wait_ready(lab_ctx *ctx, lc98_ctl *c, uint32_t n) {
  uint64_t deadline = syncq_now_ns() + LC98_STALL_NS;
  /* acquire: pairs with the children's release increments */
  while (atomic_load_explicit(&c->ready, memory_order_acquire) < n) {
    if (atomic_load(&c->failed) != 0u || syncq_now_ns() > deadline) {
      lab_fail(ctx, "a child process could not set up its endpoint");
      return false;
    }
    sched_yield();
  }
  return true;
}

static void stop_children(lc98_ctl *c, pid_t *pids, int n, bool kill_them) {
  atomic_store(&c->stop, 1u);
  for (int i = 0; i < n; i++) {
    if (pids[i] <= 0) continue;
    if (kill_them) kill(pids[i], SIGKILL);
    (void)waitpid(pids[i], NULL, 0);
  }
}

/* ================================================================ lc98-logp */

typedef struct logp_point {
  int claim;          /* -1: a floor */
  const char *floor;  /* "cacheline-pingpong" or "memcpy" */
  int metric;
  uint64_t n;
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

static void server_child(lab_ctx *ctx, lc98_ctl *c, const char *name, int claim) {
  alarm(LC98_CHILD_ALARM_S);
  pin(ctx, 1);
  syncq_am_config cfg = {.claim = claim};
  syncq_am_endpoint *ep;
  if (syncq_am_create(name, &cfg, &ep) != SYNCQ_OK) {
    atomic_store(&c->failed, 1u);
    _exit(1);
  }
  server_state s = {0, 0};
  syncq_am_register(ep, H_PING, "ping", h_ping, &s);
  syncq_am_register(ep, H_SINK, "sink", h_sink, &s);
  syncq_am_register(ep, H_SINK_LAST, "sink-last", h_sink_last, &s);
  syncq_am_register(ep, H_BULK, "bulk", h_bulk, &s);
  atomic_fetch_add_explicit(&c->ready, 1u, memory_order_release); /* pairs with wait_ready's acquire */
  /* relaxed: a flag; nothing is published with it */
  while (atomic_load_explicit(&c->stop, memory_order_relaxed) == 0u) (void)syncq_am_poll(ep, LC98_POLL_BUDGET, NULL);
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

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median_of(double *v, int n) {
  qsort(v, (size_t)n, sizeof v[0], cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
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
  double m = median_of(v, (int)n);
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
  double m = median_of(v, (int)n);
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

/* The memory copy rate (000 §4.1 compares bulk bandwidth with it): 8 KB
 * blocks copied into a ring larger than the last-level cache, so the
 * copies go to memory as 000's did. */
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

static int pingpong_sample(lab_ctx *ctx, const logp_point *pt, lab_sample *out) {
  lc98_ctl *c = ctl_new();
  if (c == NULL) {
    lab_fail(ctx, "mmap failed");
    return -1;
  }
  pid_t p = fork();
  if (p == 0) {
    alarm(LC98_CHILD_ALARM_S);
    pin(ctx, 1);
    atomic_fetch_add_explicit(&c->ready, 1u, memory_order_release); /* pairs with wait_ready */
    for (uint64_t i = 0; i < pt->n; i++) {
      /* acquire/release: each side's store pairs with the other's load */
      while (atomic_load_explicit(&c->line, memory_order_acquire) != 2 * i + 1) syncq_pr_relax();
      atomic_store_explicit(&c->line, 2 * i + 2, memory_order_release);
    }
    _exit(0);
  }
  pin(ctx, 0);
  int rc = -1;
  double *v = malloc(pt->n * sizeof *v);
  if (v == NULL) lab_fail(ctx, "out of memory");
  if (v != NULL && p > 0 && wait_ready(ctx, c, 1)) {
    for (uint64_t i = 0; i < pt->n; i++) {
      uint64_t t0 = syncq_now_ns(); /* timed like the rtt: the clock reads are in both */
      atomic_store_explicit(&c->line, 2 * i + 1, memory_order_release); /* pairs with the child's acquire */
      while (atomic_load_explicit(&c->line, memory_order_acquire) != 2 * i + 2) syncq_pr_relax();
      v[i] = (double)(syncq_now_ns() - t0);
    }
    out->value = median_of(v, (int)pt->n) / NS_PER_US;
    rc = 0;
  }
  free(v);
  unpin(ctx);
  if (p > 0) stop_children(c, &p, 1, rc != 0);
  munmap(c, sizeof *c);
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
  if (pt->claim < 0) return pingpong_sample(ctx, pt, out);
  lc98_ctl *c = ctl_new();
  if (c == NULL) {
    lab_fail(ctx, "mmap failed");
    return -1;
  }
  char sname[96], cname[96];
  seg_name(sname, sizeof sname, "srv");
  seg_name(cname, sizeof cname, "cli");
  pid_t p = fork();
  if (p == 0) server_child(ctx, c, sname, pt->claim);
  int rc = -1;
  client cl = {0};
  unsigned char *buf = NULL;
  syncq_am_config cfg = {.claim = pt->claim};
  if (p < 0) {
    lab_fail(ctx, "fork failed");
  } else if (wait_ready(ctx, c, 1)) {
    int r = syncq_am_create(cname, &cfg, &cl.ep);
    if (r == SYNCQ_OK) {
      syncq_am_register(cl.ep, H_PONG, "pong", h_pong, &cl.pongs);
      r = syncq_am_connect(cl.ep, sname, &cl.srv);
    }
    if (r != SYNCQ_OK) {
      lab_fail(ctx, "endpoint set-up failed: %s", syncq_strerror(r));
    } else {
      pin(ctx, 0);
      double v = -1, os;
      switch (pt->metric) {
      case M_RTT: v = measure_rtt(&cl, pt->n) / NS_PER_US; break;
      case M_OS: v = measure_os(&cl, pt->n) / NS_PER_US; break;
      case M_G: v = measure_g(&cl, pt->n) / NS_PER_US; break;
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
      unpin(ctx);
      if (v == -1) {
        lab_fail(ctx, "%s: a send or poll failed", metric_name[pt->metric]);
      } else {
        out->value = v;
        if (nkept[pt->metric][pt->claim] < LC98_MAX_KEPT) kept[pt->metric][pt->claim][nkept[pt->metric][pt->claim]++] = v;
        rc = 0;
      }
    }
  }
  free(buf);
  if (p > 0) stop_children(c, &p, 1, rc != 0);
  if (cl.srv) syncq_am_disconnect(cl.srv);
  if (cl.ep) syncq_am_destroy(cl.ep);
  (void)syncq_am_unlink(sname); /* if the server died before removing it */
  munmap(c, sizeof *c);
  return rc;
}

static int claims_selected(lab_ctx *ctx, int *out) {
  int n = 0;
  for (int c = 0; c < SYNCQ_AM_CLAIM_COUNT; c++)
    if (lab_selected(ctx, syncq_am_claim_name(c))) out[n++] = c;
  return n;
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
    double l = median_of(kept[M_RTT][c], nkept[M_RTT][c]) / 2 - median_of(kept[M_OS][c], nkept[M_OS][c]) -
               median_of(kept[M_OR][c], nkept[M_OR][c]);
    len += (size_t)snprintf(text + len, sizeof text - len, " %s %.3g;", syncq_am_claim_name(c), l);
  }
  lab_note(ctx, "%s", text);
}

/* ---- the MPI transport's points (one mpirun launch fills a repetition) */

enum { MV_AM_MPI, MV_PINGPONG, MV_AM_SHM, MV_COUNT };           /* rtt variants */
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
  lab_begin(ctx,
            "Two processes, each with an endpoint of the claim under test (256 packets, 16 bulk blocks of "
            "8 KB per queue); the client's requests run handlers in the server. LogP by "
            "calibrated-delay subtraction: rtt = median request/reply round trip (each timed); o_s = median of T(send; "
            "delay %u ns) - %u ns; g = T(%llu back-to-back sends + one round trip)/%llu; o_r = median of "
            "T(send; delay %u ns; poll until the reply ran) - %u ns - o_s (all in us, N = %llu); L = rtt/2 - o_s - o_r is in "
            "the notes. "
            "cacheline-pingpong: two processes bounce one cache line (median of %llu round trips, each "
            "timed), the floor of any round trip. bandwidth: %llu bulk requests of 8 KB back to back, the handler reading one word "
            "per cache line, against memcpy of the same 8 KB blocks into a 64 MB ring (beyond the caches: "
            "the memory copy rate 000 compares with) in the same group.",
            LC98_OS_DELAY_NS, LC98_OS_DELAY_NS, (unsigned long long)ng, (unsigned long long)ng, LC98_OR_DELAY_NS,
            LC98_OR_DELAY_NS, (unsigned long long)n,
            (unsigned long long)npp, (unsigned long long)nbw);
  if (lab_pus(ctx) < 2) lab_note(ctx, "one processing unit: client and server share it, so round trips include context switches");
  int claims[SYNCQ_AM_CLAIM_COUNT];
  int nc = claims_selected(ctx, claims);
  static logp_point pts[M_COUNT][SYNCQ_AM_CLAIM_COUNT + 1];
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
      pts[m][nc] = (logp_point){-1, "memcpy", m, nbw};
      g.variants[g.nvariants++] = (lab_variant){"memcpy", &pts[m][nc]};
      g.normalize_to = "memcpy";
    } else {
      g.normalize_to = "tas"; /* 000 Table 1 compares the others with the simple locks */
    }
    if (g.nvariants == 0) continue;
    if (lab_run_group(ctx, &g) != 0) return -1;
  }
  if (!lab_planning(ctx)) note_latency(ctx, claims, nc);
  return logp_mpi_groups(ctx);
}

#define RTT_WITHIN_3X(algo)                                                                                     \
  "{\"op\":\"ratio_below\",\"metric\":\"rtt\",\"num\":\"" algo "\",\"den\":\"cacheline-pingpong\",\"bound\":3}"
#define RTT_NEAR_TAS(algo) "{\"op\":\"ratio_below\",\"metric\":\"rtt\",\"num\":\"" algo "\",\"den\":\"tas\",\"bound\":1.1}"

#define MPI_RATIO(dir, metric, num, den, impl, bound)                                                      \
  "{\"op\":\"ratio_" dir "\",\"metric\":\"" metric "\",\"num\":\"" num "\",\"den\":\"" den                        \
  "\",\"where\":{\"transport\":\"mpi\",\"mpi\":\"" impl "\"},\"bound\":" bound "}"

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
  {"Peak bulk bandwidth is roughly 80% of the memory copy rate (000 §4.1): the lock-free claim's above "
   "70% of memcpy's, measured in the same run.",
   "{\"op\":\"ratio_above\",\"metric\":\"bandwidth\",\"num\":\"lock-free\",\"den\":\"memcpy\",\"bound\":0.7}"},
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

static const char *const lc98_fixed[] = {"tas",          "ttas",      "ticket",         "anderson",
                                         "posix-mutex",  "lock-free", "cacheline-pingpong", "memcpy",
                                         "lock-free-1w", "am-mpi", "mpi-pingpong", "am-shm", "mpi-bw",
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

/* ================================================================ lc98-stress */

typedef struct stress_point {
  int claim;
  int writers;
  uint64_t total;
} stress_point;

typedef struct stress_reader {
  uint32_t next[LAB_MAX_THREADS_LIST];
  uint64_t got;
  uint64_t bad;
} stress_reader;

static void h_int(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  (void)t;
  (void)d;
  (void)len;
  stress_reader *r = ctx;
  r->got++;
  if (na != 2 || a[0] >= LAB_MAX_THREADS_LIST || r->next[a[0]] != a[1]) {
    r->bad++;
    return;
  }
  r->next[a[0]]++;
}

static void writer_child(lab_ctx *ctx, lc98_ctl *c, const char *name, uint32_t id, uint64_t count) {
  alarm(LC98_CHILD_ALARM_S);
  pin(ctx, (int)id + 1);
  syncq_am_peer *rd;
  if (syncq_am_connect(NULL, name, &rd) != SYNCQ_OK) {
    atomic_store(&c->failed, 1u);
    _exit(1);
  }
  atomic_fetch_add_explicit(&c->ready, 1u, memory_order_release); /* pairs with wait_ready */
  /* acquire: pairs with the parent's release of go */
  while (atomic_load_explicit(&c->go, memory_order_acquire) == 0u) sched_yield();
  for (uint64_t i = 0; i < count; i++) {
    uint32_t a[2] = {id, (uint32_t)i};
    if (syncq_am_request(rd, H_INT, a, 2, 0) != SYNCQ_OK) _exit(2);
  }
  syncq_am_disconnect(rd);
  _exit(0);
}

static int stress_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const stress_point *pt = arg;
  memset(out, 0, sizeof *out);
  lc98_ctl *c = ctl_new();
  if (c == NULL) {
    lab_fail(ctx, "mmap failed");
    return -1;
  }
  char name[96];
  seg_name(name, sizeof name, "rd");
  syncq_am_config cfg = {.claim = pt->claim};
  syncq_am_endpoint *ep;
  int r = syncq_am_create(name, &cfg, &ep);
  if (r != SYNCQ_OK) {
    munmap(c, sizeof *c);
    lab_fail(ctx, "cannot create the reader's endpoint: %s", syncq_strerror(r));
    return -1;
  }
  stress_reader *rd = calloc(1, sizeof *rd);
  pid_t pids[LAB_MAX_THREADS_LIST] = {0};
  int rc = -1;
  if (rd == NULL) {
    lab_fail(ctx, "out of memory");
    goto out;
  }
  syncq_am_register(ep, H_INT, "int", h_int, rd);
  for (int w = 0; w < pt->writers; w++) {
    uint64_t share = pt->total / (uint64_t)pt->writers + ((uint64_t)w < pt->total % (uint64_t)pt->writers ? 1u : 0u);
    pids[w] = fork();
    if (pids[w] == 0) writer_child(ctx, c, name, (uint32_t)w, share);
    if (pids[w] < 0) {
      lab_fail(ctx, "fork failed");
      goto out;
    }
  }
  if (!wait_ready(ctx, c, (uint32_t)pt->writers)) goto out;
  pin(ctx, 0);
  uint64_t t0 = syncq_now_ns(), last_progress = t0, last_got = 0;
  atomic_store_explicit(&c->go, 1u, memory_order_release); /* pairs with the writers' acquire */
  while (rd->got < pt->total) {
    (void)syncq_am_poll(ep, LC98_POLL_BUDGET, NULL);
    if (rd->got != last_got) {
      last_got = rd->got;
      last_progress = syncq_now_ns();
    } else if (syncq_now_ns() - last_progress > LC98_STALL_NS) {
      break;
    }
  }
  uint64_t t1 = syncq_now_ns();
  unpin(ctx);
  if (rd->got < pt->total) {
    lab_fail(ctx, "%s, %d writers: no progress for 30 s (%llu of %llu)", syncq_am_claim_name(pt->claim),
             pt->writers, (unsigned long long)rd->got, (unsigned long long)pt->total);
    goto out;
  }
  if (rd->bad != 0) {
    lab_fail(ctx, "%s, %d writers: %llu integers out of order or from nowhere", syncq_am_claim_name(pt->claim),
             pt->writers, (unsigned long long)rd->bad);
    goto out;
  }
  out->value = (double)(t1 - t0) / NS_PER_MS;
  rc = 0;
out:
  stop_children(c, pids, pt->writers, rc != 0);
  free(rd);
  syncq_am_destroy(ep);
  munmap(c, sizeof *c);
  return rc;
}

static int stress_run(lab_ctx *ctx) {
  uint64_t total = lab_by_size(ctx, 2000, 10000, LC98_STRESS_TOTAL, LC98_STRESS_TOTAL);
  static const int writers[] = {1, 3, 7};
  lab_begin(ctx,
            "Many-to-one (000 §4.2): 1, 3 and 7 writer processes (forked; the reader is the 8th) send a "
            "total of %llu integers (each a short request of two words: writer, sequence) to one "
            "reader's endpoint of the claim under test (256 packets per queue); the reader checks every "
            "writer's count and order. Time from the common start to the last integer handled. The "
            "7-writer group also runs 'lock-free-1w', the lock-free claim with one writer, interleaved.",
            (unsigned long long)total);
  if (lab_pus(ctx) < 8)
    lab_note(ctx,
             "%d processing units for up to 8 processes: writers and reader are time-shared, which 000 "
             "(one process per processor) did not do; spinning senders compete with the reader",
             lab_pus(ctx));
  int claims[SYNCQ_AM_CLAIM_COUNT];
  int nc = claims_selected(ctx, claims);
  static stress_point pts[3][SYNCQ_AM_CLAIM_COUNT + 1];
  for (int wi = 0; wi < 3; wi++) {
    lab_group g;
    memset(&g, 0, sizeof g);
    lab_group_param(&g, "writers", writers[wi]);
    g.metric = "time";
    g.unit = "ms";
    g.sample = stress_sample;
    for (int i = 0; i < nc; i++) {
      pts[wi][i] = (stress_point){claims[i], writers[wi], total};
      g.variants[g.nvariants++] = (lab_variant){syncq_am_claim_name(claims[i]), &pts[wi][i]};
    }
    if (writers[wi] == 7 && lab_selected(ctx, "lock-free-1w")) {
      pts[wi][nc] = (stress_point){SYNCQ_AM_CLAIM_LOCKFREE, 1, total};
      g.variants[g.nvariants++] = (lab_variant){"lock-free-1w", &pts[wi][nc]};
    }
    if (g.nvariants == 0) continue;
    if (lab_run_group(ctx, &g) != 0) return -1;
  }
  return 0;
}

#define STRESS_BELOW(num, den, w, b)                                                                       \
  "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"" num "\",\"den\":\"" den "\",\"at\":{\"writers\":" w \
  "},\"bound\":" b "}"

static const lab_claim stress_claims[] = {
  {"000 Table 2: the lock-free claim's time with 7 writers is no worse than with 1 (gap reduction: "
   "'the performance of the lock-free algorithm improves with more writers'); here lock-free at 7 "
   "writers against 'lock-free-1w' run interleaved in the same group.",
   STRESS_BELOW("lock-free", "lock-free-1w", "7", "1.0")},
  {"000 §4.2: under contention the lock-free claim performs best: with 7 writers it beats every lock.",
   "{\"op\":\"all\",\"rules\":[" STRESS_BELOW("lock-free", "tas", "7", "1.0") "," STRESS_BELOW(
       "lock-free", "ttas", "7", "1.0") "," STRESS_BELOW("lock-free", "ticket", "7", "1.0") "," STRESS_BELOW("lock-free",
                                                                                                    "anderson", "7",
                                                                                                    "1.0") "," STRESS_BELOW("lock-free", "posix-mutex", "7", "1.0") "]}"},
  {"000 Table 2: the POSIX mutex degrades most under contention (14.1 s against 3.0-4.4 s with 7 "
   "writers): slower than the ticket lock by more than 1.5x.",
   "{\"op\":\"ratio_above\",\"metric\":\"time\",\"num\":\"posix-mutex\",\"den\":\"ticket\",\"at\":{\"writers\":7},"
   "\"bound\":1.5}"},
};

const lab_experiment lab_exp_lc98_stress = {
  .name = "lc98-stress",
  .paper = "000 Lumetta & Culler, §4.2",
  .figure = "Table 2",
  .title = "Communication stress: 1, 3, 7 writer processes to one reader, per claim",
  .x = "writers",
  .log_y = false,
  .claims = stress_claims,
  .nclaims = sizeof stress_claims / sizeof stress_claims[0],
  .fixed_algos = lc98_fixed,
  .run = stress_run,
};
