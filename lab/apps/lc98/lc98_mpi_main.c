/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lc98_mpi_main.c — syncq-lab's MPI helper (see lc98_mpi.h): the LogP
 * round trip and bulk bandwidth of active messages over MPI next to MPI's
 * own ping-pong and bandwidth, and 000's applications, measured inside one
 * mpirun launch so each line's variants are interleaved in the same run.
 *
 * Round trip (2 ranks): three phases back to back in the same launch, each
 * N timed round trips after N/10 untimed ones, median reported:
 *   mpi-pingpong  osu_latency's loop: MPI_Send / MPI_Recv of 8 bytes;
 *   am-mpi        a request whose handler replies, every peer forced
 *                 through MPI (syncq_am_mpi with force_mpi);
 *   am-shm        the same over the node-local queue block (same job).
 * First messages (2 ranks, "logp first"): a new job's first round trip
 * through MPI, the mean of its first ring's worth, and the median after.
 * Bandwidth (2 ranks): N messages of 8 KB each way's sender to receiver:
 *   mpi-bw        osu_bw's loop: windows of 64 MPI_Isend / MPI_Irecv,
 *                 MPI_Waitall, and a final 1-byte acknowledgement;
 *   am-mpi        N bulk requests of 8 KB (the handler reads one word per
 *                 cache line), then one round trip.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "lc98_mpi.h"
#include "own_session.h"
#include "syncq/clock.h"

#define PP_BYTES 8     /* osu_latency's small message */
#define BW_BYTES 8192u /* 8 KB, the AM bulk block */
#define BW_WINDOW 64   /* osu_bw's window */
#define POLL_BUDGET 64u
#define WARMUP_DIVISOR 10u
#define CACHELINE 64u
#define TAG_PP 1
#define TAG_BW 2
#define TAG_ACK 3
#define SESSIONS_ENV "SYNCQ_LC98_SAY_SESSIONS"   /* tests/am/mpi_apps_run.sh: print how many ranks lead their session */
#define FAULTS_ENV "SYNCQ_LC98_SAY_FAULTS"       /* tests/am/mpi_apps_run.sh: print each timed run's page faults */
#define PLACEMENT_ENV "SYNCQ_LC98_SAY_PLACEMENT" /* tests/am/mpi_placement_run.sh: print each rank's processors */
#define CPUS_MAX 256                             /* a Cpus_allowed_list kept for the placement line */
#define KEEP_MAPPED_MAX (32u << 20)              /* glibc's largest mmap threshold on 64-bit (4 Mi * sizeof(long)) */

enum { H_PING = 1, H_PONG = 2, H_BULK = 3, H_SINK_LAST = 4, H_STOP = 5 };

typedef struct server {
  uint64_t pongs, touched;
  int stop;
} server;

static void h_ping(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  (void)d, (void)len, (void)ctx;
  (void)syncq_am_reply(t, H_PONG, a, na, 0);
}
static void h_pong(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  (void)t, (void)a, (void)na, (void)d, (void)len;
  ((server *)ctx)->pongs++;
}
static void h_bulk(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  (void)t, (void)a, (void)na;
  const unsigned char *p = d;
  uint64_t s = 0;
  for (size_t i = 0; i < len; i += CACHELINE) s += p[i];
  ((server *)ctx)->touched += s;
}
static void h_stop(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  (void)t, (void)a, (void)na, (void)d, (void)len;
  ((server *)ctx)->stop = 1;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double median(double *v, uint64_t n) {
  qsort(v, n, sizeof v[0], cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static syncq_am_mpi *make_job(bool force, server *s, int claim) {
  syncq_am_mpi_config cfg = {.force_mpi = force};
  cfg.shm.claim = claim;
  syncq_am_mpi *j;
  if (syncq_am_mpi_create(MPI_COMM_WORLD, &cfg, &j) != SYNCQ_OK) return NULL;
  syncq_am_endpoint *ep = syncq_am_mpi_endpoint(j);
  syncq_am_register(ep, H_PING, "ping", h_ping, s);
  syncq_am_register(ep, H_PONG, "pong", h_pong, s);
  syncq_am_register(ep, H_BULK, "bulk", h_bulk, s);
  syncq_am_register(ep, H_SINK_LAST, "sink-last", h_ping, s);
  syncq_am_register(ep, H_STOP, "stop", h_stop, s);
  if (syncq_am_mpi_start(j) != SYNCQ_OK) {
    syncq_am_mpi_destroy(j);
    return NULL;
  }
  return j;
}

/* Rank 1 of an AM phase: handle until rank 0 says stop. */
static void serve(syncq_am_mpi *j, server *s) {
  s->stop = 0;
  while (!s->stop) (void)syncq_am_poll(syncq_am_mpi_endpoint(j), POLL_BUDGET, NULL);
}

static int am_roundtrip(syncq_am_mpi *j, server *s, syncq_am_peer *p) {
  uint64_t want = s->pongs + 1;
  uint32_t a[1] = {0};
  if (syncq_am_request(p, H_PING, a, 1, 0) != SYNCQ_OK) return -1;
  while (s->pongs < want)
    if (syncq_am_poll(syncq_am_mpi_endpoint(j), POLL_BUDGET, NULL) != SYNCQ_OK) return -1;
  return 0;
}

static double am_rtt(syncq_am_mpi *j, server *s, uint64_t n, double *v) {
  syncq_am_peer *p;
  if (syncq_am_mpi_peer(j, 1, &p) != SYNCQ_OK) return -1;
  for (uint64_t i = 0; i < n / WARMUP_DIVISOR; i++)
    if (am_roundtrip(j, s, p) != 0) return -1;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t t0 = syncq_now_ns();
    if (am_roundtrip(j, s, p) != 0) return -1;
    v[i] = (double)(syncq_now_ns() - t0) / 1e3;
  }
  uint32_t a[1] = {0};
  (void)syncq_am_request(p, H_STOP, a, 1, 0);
  return median(v, n);
}

static double mpi_rtt(int rank, uint64_t n, double *v) {
  char buf[PP_BYTES] = {0};
  uint64_t warm = n / WARMUP_DIVISOR;
  for (uint64_t i = 0; i < warm + n; i++) {
    uint64_t t0 = syncq_now_ns();
    if (rank == 0) {
      MPI_Send(buf, PP_BYTES, MPI_BYTE, 1, TAG_PP, MPI_COMM_WORLD);
      MPI_Recv(buf, PP_BYTES, MPI_BYTE, 1, TAG_PP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, PP_BYTES, MPI_BYTE, 0, TAG_PP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, PP_BYTES, MPI_BYTE, 0, TAG_PP, MPI_COMM_WORLD);
    }
    if (i >= warm) v[i - warm] = (double)(syncq_now_ns() - t0) / 1e3;
  }
  return rank == 0 ? median(v, n) : 0;
}

static double am_bw(syncq_am_mpi *j, server *s, uint64_t n, unsigned char *blk) {
  syncq_am_peer *p;
  if (syncq_am_mpi_peer(j, 1, &p) != SYNCQ_OK) return -1;
  uint32_t a[1] = {0};
  uint64_t t0 = syncq_now_ns();
  for (uint64_t i = 0; i < n; i++) {
    blk[0] = (unsigned char)i;
    if (syncq_am_request_bulk(p, H_BULK, blk, BW_BYTES, a, 1, 0) != SYNCQ_OK) return -1;
  }
  if (am_roundtrip(j, s, p) != 0) return -1;
  double sec = (double)(syncq_now_ns() - t0) / 1e9;
  (void)syncq_am_request(p, H_STOP, a, 1, 0);
  return (double)n * BW_BYTES / 1e6 / sec;
}

static double mpi_bw(int rank, uint64_t n, unsigned char *blk) {
  MPI_Request rq[BW_WINDOW];
  MPI_Status st[BW_WINDOW];
  char ack = 0;
  uint64_t t0 = syncq_now_ns();
  for (uint64_t i = 0; i < n; i += BW_WINDOW) {
    int w = (int)(n - i < BW_WINDOW ? n - i : BW_WINDOW);
    for (int k = 0; k < w; k++) {
      unsigned char *b = blk + (size_t)k * BW_BYTES;
      if (rank == 0) MPI_Isend(b, BW_BYTES, MPI_BYTE, 1, TAG_BW, MPI_COMM_WORLD, &rq[k]);
      else MPI_Irecv(b, BW_BYTES, MPI_BYTE, 0, TAG_BW, MPI_COMM_WORLD, &rq[k]);
    }
    MPI_Waitall(w, rq, st);
  }
  if (rank == 0) MPI_Recv(&ack, 1, MPI_BYTE, 1, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  else MPI_Send(&ack, 1, MPI_BYTE, 0, TAG_ACK, MPI_COMM_WORLD);
  double sec = (double)(syncq_now_ns() - t0) / 1e9;
  return (double)n * BW_BYTES / 1e6 / sec;
}

/* The first messages of a new job forced through MPI: MPI's own path
 * between the two ranks warmed first (osu_latency's loop, untimed), then
 * a fresh job's first round trip, the mean of its first FILL_TRIPS (every
 * buffer of both ranks' rings used once), and the median of n after.
 * One job per launch: a second job in the same process could reuse ring
 * memory the allocator kept from the first, touched already. */
#define FILL_TRIPS (2u * SYNCQ_AM_MPI_DEFAULT_CREDITS + 8u) /* a ring's length with the default credits */
static int first(int rank, uint64_t n) {
  double *v = malloc((n > FILL_TRIPS ? n : FILL_TRIPS) * sizeof *v);
  if (v == NULL) return 1;
  (void)mpi_rtt(rank, n, v);
  server s = {0};
  syncq_am_mpi *j = make_job(true, &s, SYNCQ_AM_CLAIM_LOCKFREE);
  if (j == NULL) {
    if (rank == 0) printf("error FAIL cannot create the AM job\n");
    free(v);
    return 1;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  double one = 0, fill = 0, steady = 0;
  if (rank == 0) {
    syncq_am_peer *p;
    bool ok = syncq_am_mpi_peer(j, 1, &p) == SYNCQ_OK;
    for (unsigned i = 0; i < FILL_TRIPS && ok; i++) {
      uint64_t t0 = syncq_now_ns();
      ok = am_roundtrip(j, &s, p) == 0;
      v[i] = (double)(syncq_now_ns() - t0) / 1e3;
      fill += v[i] / FILL_TRIPS;
    }
    one = v[0];
    if (ok) steady = am_rtt(j, &s, n, v); /* it ends with rank 1's stop */
    if (ok && steady >= 0) printf("am-mpi-first %.4f ok\nam-mpi-fill %.4f ok\nam-mpi %.4f ok\n", one, fill, steady);
    else printf("am-mpi-first 0 FAIL a round trip failed: %s\n", syncq_am_mpi_why(j));
  } else {
    serve(j, &s);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  syncq_am_mpi_destroy(j);
  free(v);
  return 0;
}

static int logp(int rank, int size, const char *what, uint64_t n) {
  if (size != 2) {
    if (rank == 0) printf("error FAIL logp needs 2 ranks\n");
    return 1;
  }
  if (strcmp(what, "first") == 0) return first(rank, n);
  server s_mpi = {0}, s_shm = {0};
  syncq_am_mpi *jm = make_job(true, &s_mpi, SYNCQ_AM_CLAIM_LOCKFREE);
  syncq_am_mpi *js = make_job(false, &s_shm, SYNCQ_AM_CLAIM_LOCKFREE);
  if (jm == NULL || js == NULL) {
    if (rank == 0) printf("error FAIL cannot create the AM jobs\n");
    return 1;
  }
  double *v = malloc(n * sizeof *v);
  unsigned char *blk = calloc(BW_WINDOW, BW_BYTES);
  if (v == NULL || blk == NULL) return 1;
  if (strcmp(what, "rtt") == 0) {
    double raw = mpi_rtt(rank, n, v);
    MPI_Barrier(MPI_COMM_WORLD);
    double am = 0, sh = 0;
    if (rank == 0) am = am_rtt(jm, &s_mpi, n, v);
    else serve(jm, &s_mpi);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) sh = am_rtt(js, &s_shm, n, v);
    else serve(js, &s_shm);
    if (rank == 0) printf("mpi-pingpong %.4f ok\nam-mpi %.4f ok\nam-shm %.4f ok\n", raw, am, sh);
  } else {
    double raw = mpi_bw(rank, n, blk);
    MPI_Barrier(MPI_COMM_WORLD);
    double am = 0;
    if (rank == 0) am = am_bw(jm, &s_mpi, n, blk);
    else serve(jm, &s_mpi);
    if (rank == 0) printf("mpi-bw %.4f ok\nam-mpi %.4f ok\n", raw, am);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  syncq_am_mpi_destroy(jm);
  syncq_am_mpi_destroy(js);
  free(v);
  free(blk);
  return 0;
}

#define MAX_APPS 8

/* "placement <rank> <processors>" for every rank, on rank 0: the
 * processors this rank may run on (Linux's Cpus_allowed_list, "?" where
 * there is none), as the launcher's binding left them. */
static void say_placement(int rank) {
  char mine[CPUS_MAX] = "?", line[512];
  FILE *f = fopen("/proc/self/status", "r");
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "Cpus_allowed_list: %255s", mine) == 1) break;
  if (f) fclose(f);
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  char *all = rank == 0 ? malloc((size_t)n * CPUS_MAX) : NULL;
  if (rank == 0 && all == NULL) MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE); /* the test reads no line: it fails */
  MPI_Gather(mine, CPUS_MAX, MPI_CHAR, all, CPUS_MAX, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank == 0 && all != NULL)
    for (int r = 0; r < n; r++) printf("placement %d %.*s\n", r, CPUS_MAX, all + (size_t)r * CPUS_MAX);
  free(all);
}

/* apps: "fft,cc" and sizes "32,256": each variant's job runs every app in
 * turn, so one launch measures every (app, variant) of a repetition. */
static int apps(int rank, char *applist, char *sizelist, int nv, char **variants) {
  char *app[MAX_APPS], *save = NULL;
  uint64_t size[MAX_APPS];
  int na = 0;
  for (char *t = strtok_r(applist, ",", &save); t && na < MAX_APPS; t = strtok_r(NULL, ",", &save)) app[na++] = t;
  save = NULL;
  int ns = 0;
  for (char *t = strtok_r(sizelist, ",", &save); t && ns < MAX_APPS; t = strtok_r(NULL, ",", &save))
    size[ns++] = strtoull(t, NULL, 10);
  if (na == 0 || ns != na) {
    if (rank == 0) printf("args 0 0 0 FAIL one size per application\n");
    return 1;
  }
  if (getenv(SESSIONS_ENV) != NULL) { /* "sessions K of N": K ranks lead their session (own_session) */
    int mine = getsid(0) == getpid(), leaders = 0, ranks = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    MPI_Allreduce(&mine, &leaders, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("sessions %d of %d\n", leaders, ranks);
  }
  if (getenv(PLACEMENT_ENV) != NULL) say_placement(rank);
#ifdef __GLIBC__
  /* Keep what the applications free mapped for their next run: blocks up
   * to KEEP_MAPPED_MAX from the heap, never trimmed. Otherwise the pages
   * of a block freed by one run (qsort's scratch, the checks' gathers)
   * may go back to the kernel or stay, by the allocator's history, and
   * the next run's first writes to them fault in its timed part in some
   * variants and not in others (lc98_apps.c, alloc_touched, does the same
   * for the applications' own blocks, whatever their size). After the
   * launch's untimed first run, every later run reuses mapped pages. */
  (void)mallopt(M_MMAP_THRESHOLD, (int)KEEP_MAPPED_MAX);
  (void)mallopt(M_TRIM_THRESHOLD, INT_MAX);
#endif
  int rc = 0;
  for (int i = 0; i < nv; i++) {
    bool forced = strcmp(variants[i], "mpi-forced") == 0;
    syncq_am_claim claim = SYNCQ_AM_CLAIM_LOCKFREE;
    if (!forced && syncq_am_claim_find(variants[i], &claim) != SYNCQ_OK) {
      if (rank == 0) printf("%s 0 0 0 FAIL unknown variant\n", variants[i]);
      rc = 1;
      continue;
    }
    syncq_am_mpi_config cfg = {.force_mpi = forced};
    cfg.shm.claim = (int)claim;
    app_ctx c;
    memset(&c, 0, sizeof c);
    if (syncq_am_mpi_create(MPI_COMM_WORLD, &cfg, &c.job) != SYNCQ_OK) {
      if (rank == 0) printf("%s 0 0 0 FAIL cannot create the AM job\n", variants[i]);
      return 1;
    }
    c.ep = syncq_am_mpi_endpoint(c.job);
    c.rank = syncq_am_mpi_rank(c.job);
    c.size = syncq_am_mpi_size(c.job);
    lc98_app_register(c.ep);
    if (syncq_am_mpi_start(c.job) != SYNCQ_OK) {
      if (rank == 0) printf("%s 0 0 0 FAIL %s\n", variants[i], syncq_am_mpi_why(c.job));
      return 1;
    }
    for (int a = 0; a < na; a++) {
      app_times t;
      char why[256] = "";
      /* One untimed run of each application first, in every variant: the
       * first variant of a launch would pay for the process's first touch
       * of its code and memory, and every variant for its new job's (the
       * endpoint's segment, and with mpi-forced the MPI rings and MPI's
       * own buffers), first written by the sends of its first timed run.
       * With the first variant alone warmed, the later variants' first
       * applications took page faults that the first's did not
       * (docs/am-mpi.md, "The applications' page faults"). */
      if (lc98_app_run(&c, app[a], size[a], &t, why, sizeof why) != 0) {
        if (rank == 0) printf("%s/%s 0 0 0 FAIL %s\n", app[a], variants[i], why);
        rc = 1;
        continue;
      }
      int r = lc98_app_run(&c, app[a], size[a], &t, why, sizeof why);
      if (rank == 0) {
        if (r == 0) printf("%s/%s %.4f %.4f %.4f ok\n", app[a], variants[i], t.total_ms, t.comp_ms, t.comm_ms);
        else printf("%s/%s 0 0 0 FAIL %s\n", app[a], variants[i], why);
        if (r == 0 && getenv(FAULTS_ENV) != NULL) /* the most minor page faults a rank took in the timed run */
          printf("faults %s/%s %llu\n", app[a], variants[i], (unsigned long long)t.faults);
        fflush(stdout);
      }
      if (r != 0) rc = 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    syncq_am_mpi_destroy(c.job);
  }
  return rc;
}

int main(int argc, char **argv) {
  int provided, rank, size;
  if (argc >= 2 && strcmp(argv[1], "app") == 0) lc98_own_session(); /* before MPI_Init: no threads yet */
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rc = 2;
  if (argc >= 4 && strcmp(argv[1], "logp") == 0) rc = logp(rank, size, argv[2], strtoull(argv[3], NULL, 10));
  else if (argc >= 5 && strcmp(argv[1], "app") == 0) rc = apps(rank, argv[2], argv[3], argc - 4, argv + 4);
  else if (rank == 0)
    fprintf(stderr, "usage: %s logp rtt|bw|first N | app fft|cc|cc-sparse|sort[,...] SIZE[,...] VARIANT...\n", argv[0]);
  fflush(stdout);
  MPI_Finalize();
  return rc;
}
