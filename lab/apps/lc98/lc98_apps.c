/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lc98_apps.c — 000's Table 4 applications (Lumetta & Culler §4.3: 3-D
 * FFT, connected components, sample sort), in the Split-C style of their
 * originals: bulk-synchronous phases of local computation and of
 * communication, the communication written on the active-message API
 * (syncq/am.h peers from syncq/am_mpi.h), never on MPI directly. MPI is
 * used only outside the timed run: to check the result and to take the
 * maximum of the ranks' times.
 *
 * Communication primitives (Split-C's bulk store / all_store_sync and a
 * barrier), all active messages:
 *   put      a bulk request (H_PUT) copying bytes into a named buffer of
 *            the destination at a byte offset; its handler replies an ack;
 *            put_sync polls until every put of this rank is acknowledged;
 *   append   the same, appending at the destination buffer's fill mark;
 *   allreduce  every rank sends its value to rank 0 (H_ARRIVE), rank 0
 *            combines and sends the result to all (H_RELEASE); doubles as
 *            the barrier between phases.
 * Stores to oneself are local copies (as Split-C's local stores are).
 *
 * Applications:
 *   fft   N^3 complex 3-D FFT, slabs of N/P planes: 2-D FFTs of the local
 *         planes (radix-2, written here), a transpose by puts of rows so
 *         each rank owns N/P y-planes, then the 1-D FFTs along z. Checked
 *         against FFTW's 3-D transform of the same input on rank 0.
 *   cc    connected components of an N x N grid graph whose edges exist
 *         with probability 0.55 (just above the bond-percolation threshold:
 *         large, winding components), rows in blocks per rank: a local
 *         union-find, then rounds of ghost-row exchange (puts) and
 *         min-label relaxation until a round changes nothing (allreduce).
 *         Labels (the smallest vertex id of the component) checked against
 *         a sequential union-find of the whole graph on rank 0. 000 ran a
 *         communication-bound and a computation-bound input; here "cc"
 *         (p = 0.55: components wind across ranks, many exchange rounds)
 *         and "cc-sparse" (p = 0.30: small components, one or two rounds,
 *         the local union-find dominates).
 *   sort  sample sort of SIZE 32-bit keys per rank: local sort, samples to
 *         rank 0 (puts), splitters to all (puts), buckets to their ranks
 *         (appends), local sort. Checked sorted across ranks and a
 *         permutation of the input (count, sum, sum of squares and a hash
 *         sum agree).
 *
 * Time: total from a common start to the last rank's end; comp = local
 * computation, comm = sends, polls and waits (000 Table 4's split); the
 * maximum over ranks of each. Every block an application works in is
 * mapped before its timed run (alloc_touched).
 */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "lc98_mpi.h"
#include "syncq/clock.h"
#include "../../prng.h"

#ifdef SYNCQ_HAVE_FFTW
#include <fftw3.h>
#endif

#define POLL_BUDGET 64u
#define APP_WAIT_NS 30000000000ull /* a rank that hears nothing for 30 s fails */
#define MAX_BUFS 8
#define MAX_RANKS 64
#define CC_EDGE_P 0.55   /* "cc": just above the percolation threshold: winding components across ranks */
#define CC_SPARSE_P 0.30 /* "cc-sparse": small components, mostly within a rank's rows */
#define SORT_SAMPLES 64u /* samples per rank (over-sampling for balance) */
#define SORT_SLACK 3u    /* receive room: 3x the keys per rank */
#define FFT_TOL 1e-9     /* max |error| / max |value| */
#define APP_SEED 0x5eed2026u
#define PAGE_GUESS 4096u /* alloc_touched's stride where sysconf cannot tell the page size */

/* ------------------------------------------------------------ AM layer */

typedef struct app_state {
  unsigned char *buf[MAX_BUFS];
  size_t cap[MAX_BUFS], fill[MAX_BUFS];
  bool overflow;
  uint64_t puts, acks;
  /* allreduce */
  uint32_t epoch, arrived;
  uint64_t acc, result;
  uint32_t released;
} app_state;

static app_state S;

static void h_put(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  (void)ctx;
  if (na == 3 && a[0] < MAX_BUFS) {
    size_t off = (size_t)a[1] | ((size_t)a[2] << 32);
    if (S.buf[a[0]] != NULL && off + len <= S.cap[a[0]]) memcpy(S.buf[a[0]] + off, d, len);
    else S.overflow = true;
  }
  (void)syncq_am_reply(t, APP_H_PUT_ACK, NULL, 0, 0);
}

static void h_append(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  (void)ctx;
  if (na == 1 && a[0] < MAX_BUFS && S.buf[a[0]] != NULL && S.fill[a[0]] + len <= S.cap[a[0]]) {
    memcpy(S.buf[a[0]] + S.fill[a[0]], d, len);
    S.fill[a[0]] += len;
  } else {
    S.overflow = true;
  }
  (void)syncq_am_reply(t, APP_H_PUT_ACK, NULL, 0, 0);
}

static void h_ack(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  (void)t, (void)a, (void)na, (void)d, (void)len, (void)ctx;
  S.acks++;
}

static void h_arrive(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  (void)t, (void)d, (void)len, (void)ctx;
  if (na != 3) return;
  S.acc += (uint64_t)a[1] | ((uint64_t)a[2] << 32);
  S.arrived++;
}

static void h_release(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  (void)t, (void)d, (void)len, (void)ctx;
  if (na != 3) return;
  S.result = (uint64_t)a[1] | ((uint64_t)a[2] << 32);
  S.released = a[0];
}

void lc98_app_register(syncq_am_endpoint *ep) {
  syncq_am_register(ep, APP_H_PUT, "app-put", h_put, NULL);
  syncq_am_register(ep, APP_H_PUT_ACK, "app-put-ack", h_ack, NULL);
  syncq_am_register(ep, APP_H_ARRIVE, "app-arrive", h_arrive, NULL);
  syncq_am_register(ep, APP_H_RELEASE, "app-release", h_release, NULL);
  syncq_am_register(ep, APP_H_APPEND, "app-append", h_append, NULL);
}

/* This process's minor page faults so far (0 where getrusage fails): the
 * applications record how many their timed run took (app_ctx.faults). */
static uint64_t minor_faults(void) {
  struct rusage ru;
  return getrusage(RUSAGE_SELF, &ru) == 0 && ru.ru_minflt > 0 ? (uint64_t)ru.ru_minflt : 0u;
}

static void comp_begin(app_ctx *c) { c->phase_start = syncq_now_ns(); }
static void comp_end(app_ctx *c) { c->comp_ns += syncq_now_ns() - c->phase_start; }
static void comm_begin(app_ctx *c) { c->phase_start = syncq_now_ns(); }
static void comm_end(app_ctx *c) { c->comm_ns += syncq_now_ns() - c->phase_start; }

static void set_buf(int id, void *p, size_t cap) {
  S.buf[id] = p;
  S.cap[id] = cap;
  S.fill[id] = 0;
}

/* Wait for at least one message. syncq_am_wait, not a loop of polls: with
 * more ranks than processors (4 on 2) a spinning rank would keep the rank
 * whose message it waits for off its processor for a time slice. */
static int wait1(app_ctx *c) { return syncq_am_wait(c->ep, POLL_BUDGET, APP_WAIT_NS, NULL) == SYNCQ_OK ? 0 : -1; }

/* Bulk store of len bytes (any length: split in bulk blocks). */
static int put(app_ctx *c, int dest, int id, size_t off, const void *data, size_t len, bool append) {
  if (dest == c->rank) { /* a local store */
    if (append) {
      if (S.fill[id] + len > S.cap[id]) return -1;
      memcpy(S.buf[id] + S.fill[id], data, len);
      S.fill[id] += len;
    } else {
      if (off + len > S.cap[id]) return -1;
      memcpy(S.buf[id] + off, data, len);
    }
    return 0;
  }
  syncq_am_peer *p;
  if (syncq_am_mpi_peer(c->job, dest, &p) != SYNCQ_OK) return -1;
  syncq_am_limits lim;
  syncq_am_peer_limits(p, &lim);
  const unsigned char *b = data;
  size_t step = lim.bulk_size;
  for (size_t done = 0; done < len; done += step) {
    size_t n = len - done < step ? len - done : step;
    size_t o = off + done;
    uint32_t a[3] = {(uint32_t)id, (uint32_t)o, (uint32_t)((uint64_t)o >> 32)};
    int r = append ? syncq_am_request_bulk(p, APP_H_APPEND, b + done, n, a, 1, 0)
                   : syncq_am_request_bulk(p, APP_H_PUT, b + done, n, a, 3, 0);
    if (r != SYNCQ_OK) return -1;
    S.puts++;
  }
  return 0;
}

static int put_sync(app_ctx *c) {
  while (S.acks < S.puts)
    if (wait1(c) != 0) return -1;
  return 0;
}

/* The sum of all ranks' values; also the barrier between phases. Rank 0
 * may receive others' arrivals before it enters: S.acc holds them (a
 * rank can arrive at epoch e+1 only after rank 0 released epoch e, which
 * it does after resetting S.acc). */
static int allreduce(app_ctx *c, uint64_t v, uint64_t *out) {
  uint32_t ep = ++S.epoch;
  if (c->rank == 0) {
    /* the others may have arrived already: S.acc/arrived hold them */
    S.acc += v;
    S.arrived++;
    while (S.arrived < (uint32_t)c->size)
      if (wait1(c) != 0) return -1;
    uint64_t r = S.acc;
    S.acc = 0;
    S.arrived = 0;
    uint32_t a[3] = {ep, (uint32_t)r, (uint32_t)(r >> 32)};
    for (int s = 1; s < c->size; s++) {
      syncq_am_peer *p;
      if (syncq_am_mpi_peer(c->job, s, &p) != SYNCQ_OK || syncq_am_request(p, APP_H_RELEASE, a, 3, 0) != SYNCQ_OK)
        return -1;
    }
    *out = r;
    return 0;
  }
  syncq_am_peer *p0;
  uint32_t a[3] = {ep, (uint32_t)v, (uint32_t)(v >> 32)};
  if (syncq_am_mpi_peer(c->job, 0, &p0) != SYNCQ_OK || syncq_am_request(p0, APP_H_ARRIVE, a, 3, 0) != SYNCQ_OK)
    return -1;
  while (S.released != ep)
    if (wait1(c) != 0) return -1;
  *out = S.result;
  return 0;
}

static int barrier(app_ctx *c) {
  uint64_t x;
  return allreduce(c, 0, &x);
}

/* ------------------------------------------------------------ helpers */

static double unit(uint64_t h) { return (double)(lab_mix64(h) >> LAB_PRNG_DOUBLE_SHIFT) / LAB_PRNG_TWO_POW_53; }

static void fail(char *why, size_t n, const char *msg) { snprintf(why, n, "%s", msg); }

/* Working memory, every page of it written once before the timed run.
 * Whether malloc's pages are mapped yet depends on what the process
 * allocated and freed before (glibc serves large blocks by mmap, below a
 * threshold that moves with the frees, and trims its heap), and that
 * history differs from one variant of a launch to the next: a first
 * write inside the timed run cost a page fault per 4 KB page in some
 * variants and none in others, enough to decide which path looked faster
 * (docs/am-mpi.md, "The applications' page faults"). One write per page,
 * not a memset: the pages get mapped without the whole block also being
 * put in the cache for the timed run. */
static void *alloc_touched(size_t n) {
  unsigned char *p = malloc(n);
  if (p == NULL) return NULL;
  long pg = sysconf(_SC_PAGESIZE);
  size_t step = pg > 0 ? (size_t)pg : PAGE_GUESS;
  volatile unsigned char *v = p; /* a store the compiler keeps (a memset of 0 may become calloc) */
  for (size_t i = 0; i < n; i += step) v[i] = 0;
  if (n > 0) v[n - 1] = 0;
  return p;
}

/* ------------------------------------------------------------ 3-D FFT */

/* In-place radix-2 forward FFT of n (a power of two) values, FFTW's sign. */
static void fft1(double complex *v, size_t n) {
  for (size_t i = 1, j = 0; i < n; i++) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      double complex t = v[i];
      v[i] = v[j];
      v[j] = t;
    }
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    double ang = -2.0 * M_PI / (double)len;
    double complex wl = cos(ang) + I * sin(ang);
    for (size_t i = 0; i < n; i += len) {
      double complex w = 1;
      for (size_t k = 0; k < len / 2; k++) {
        double complex u = v[i + k], t = w * v[i + k + len / 2];
        v[i + k] = u + t;
        v[i + k + len / 2] = u - t;
        w *= wl;
      }
    }
  }
}

static double complex fft_input(size_t n, size_t z, size_t y, size_t x) {
  uint64_t i = ((uint64_t)z * n + y) * n + x;
  return unit(APP_SEED ^ (2 * i)) - 0.5 + I * (unit(APP_SEED ^ (2 * i + 1)) - 0.5);
}

static int app_fft(app_ctx *c, size_t n, char *why, size_t wl) {
  int P = c->size, r = c->rank;
  if (n < 2 || (n & (n - 1)) != 0 || n % (size_t)P != 0 || n * sizeof(double complex) > SYNCQ_AM_BULK_MAX) {
    fail(why, wl, "fft: N must be a power of two, a multiple of the ranks, rows within a bulk block");
    return -1;
  }
  size_t np = n / (size_t)P, plane = n * n;
  double complex *A = alloc_touched(np * plane * sizeof *A), *B = alloc_touched(np * plane * sizeof *B),
                 *tmp = alloc_touched(n * sizeof *tmp);
  if (!A || !B || !tmp) {
    fail(why, wl, "fft: out of memory");
    return -1;
  }
  for (size_t zl = 0; zl < np; zl++)
    for (size_t y = 0; y < n; y++)
      for (size_t x = 0; x < n; x++) A[zl * plane + y * n + x] = fft_input(n, (size_t)r * np + zl, y, x);
  set_buf(0, B, np * plane * sizeof *B);
  int rc = -1;
  if (barrier(c) != 0) goto out;
  uint64_t t0 = syncq_now_ns(), f0 = minor_faults();
  comp_begin(c); /* 2-D FFTs of the local planes: x, then y */
  for (size_t zl = 0; zl < np; zl++) {
    double complex *pl = A + zl * plane;
    for (size_t y = 0; y < n; y++) fft1(pl + y * n, n);
    for (size_t x = 0; x < n; x++) {
      for (size_t y = 0; y < n; y++) tmp[y] = pl[y * n + x];
      fft1(tmp, n);
      for (size_t y = 0; y < n; y++) pl[y * n + x] = tmp[y];
    }
  }
  comp_end(c);
  comm_begin(c); /* transpose: row (z, y) goes to the owner of y, at B[yl][z][x] */
  for (int k = 0; k < P; k++) {
    int q = (r + k) % P; /* staggered, so ranks do not all hit rank 0 first */
    for (size_t zl = 0; zl < np; zl++)
      for (size_t yl = 0; yl < np; yl++) {
        size_t y = (size_t)q * np + yl, z = (size_t)r * np + zl;
        size_t off = (yl * plane + z * n) * sizeof *B;
        if (put(c, q, 0, off, A + zl * plane + y * n, n * sizeof *A, false) != 0) goto comm_fail;
      }
  }
  if (put_sync(c) != 0 || barrier(c) != 0) goto comm_fail;
  comm_end(c);
  comp_begin(c); /* FFTs along z */
  for (size_t yl = 0; yl < np; yl++)
    for (size_t x = 0; x < n; x++) {
      double complex *col = B + yl * plane;
      for (size_t z = 0; z < n; z++) tmp[z] = col[z * n + x];
      fft1(tmp, n);
      for (size_t z = 0; z < n; z++) col[z * n + x] = tmp[z];
    }
  comp_end(c);
  comm_begin(c);
  if (barrier(c) != 0) goto comm_fail;
  comm_end(c);
  /* check against FFTW on rank 0 (outside the timed run) */
  {
    uint64_t total_ns = syncq_now_ns() - t0;
    c->phase_start = total_ns;
    c->faults = minor_faults() - f0;
    double complex *all = r == 0 ? malloc(n * plane * sizeof *all) : NULL;
    MPI_Gather(B, (int)(np * plane * 2), MPI_DOUBLE, all, (int)(np * plane * 2), MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int ok = 1;
    if (r == 0) {
#ifdef SYNCQ_HAVE_FFTW
      fftw_complex *in = fftw_malloc(n * plane * sizeof *in), *outv = fftw_malloc(n * plane * sizeof *outv);
      fftw_plan pl = fftw_plan_dft_3d((int)n, (int)n, (int)n, in, outv, FFTW_FORWARD, FFTW_ESTIMATE);
      for (size_t z = 0; z < n; z++)
        for (size_t y = 0; y < n; y++)
          for (size_t x = 0; x < n; x++) {
            in[(z * n + y) * n + x] = fft_input(n, z, y, x); /* fftw_complex is double complex after <complex.h> */
          }
      fftw_execute(pl);
      double maxv = 0, maxe = 0;
      for (size_t z = 0; z < n; z++)
        for (size_t y = 0; y < n; y++)
          for (size_t x = 0; x < n; x++) {
            size_t i = (z * n + y) * n + x;
            double complex ref = outv[i];
            /* ours: rank y/np holds B[y%np][z][x], gathered in rank order */
            double complex got = all[(y * n + z) * n + x];
            maxv = fmax(maxv, cabs(ref));
            maxe = fmax(maxe, cabs(ref - got));
          }
      if (!(maxe <= FFT_TOL * maxv)) {
        ok = 0;
        snprintf(why, wl, "fft: differs from FFTW by %.3g (max value %.3g)", maxe, maxv);
      }
      fftw_destroy_plan(pl);
      fftw_free(in);
      fftw_free(outv);
#else
      ok = 0;
      fail(why, wl, "fft: built without FFTW (libfftw3-dev): cannot check the result");
#endif
      free(all);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok && r != 0) fail(why, wl, "fft: result differs from FFTW (see rank 0)");
    rc = ok ? 0 : -1;
  }
  goto out;
comm_fail:
  fail(why, wl, "fft: an active message failed");
out:
  set_buf(0, NULL, 0);
  free(A);
  free(B);
  free(tmp);
  return rc;
}

/* ------------------------------------------------------------ connected components */

static double cc_p = CC_EDGE_P; /* the input's edge probability */

static bool cc_edge(size_t n, size_t v, int dir) { /* dir 0: to the right, 1: down */
  return unit(APP_SEED ^ lab_mix64((uint64_t)v * 2 + (uint64_t)dir) ^ (uint64_t)n) < cc_p;
}

static size_t uf_find(size_t *p, size_t x) {
  while (p[x] != x) {
    p[x] = p[p[x]]; /* path halving */
    x = p[x];
  }
  return x;
}

static void uf_union(size_t *p, size_t a, size_t b) {
  a = uf_find(p, a);
  b = uf_find(p, b);
  if (a != b) p[a < b ? b : a] = a < b ? a : b; /* the smaller index is the root */
}

static void rows_of(size_t n, int P, int r, size_t *r0, size_t *r1) {
  *r0 = n * (size_t)r / (size_t)P;
  *r1 = n * (size_t)(r + 1) / (size_t)P;
}

static int app_cc(app_ctx *c, size_t n, char *why, size_t wl) {
  int P = c->size, r = c->rank;
  size_t r0, r1;
  rows_of(n, P, r, &r0, &r1);
  size_t rows = r1 - r0, nv = rows * n;
  if (n < 2 || rows < 1) {
    fail(why, wl, "cc: bad size");
    return -1;
  }
  size_t *par = alloc_touched(nv * sizeof *par);
  uint64_t *lab = alloc_touched(nv * sizeof *lab), *mn = alloc_touched(nv * sizeof *mn);
  uint64_t *ga = alloc_touched(n * sizeof *ga), *gb = alloc_touched(n * sizeof *gb);
  if (!par || !lab || !mn || !ga || !gb) {
    fail(why, wl, "cc: out of memory");
    return -1;
  }
  set_buf(0, ga, n * sizeof *ga); /* ghost row above (owned by r-1) */
  set_buf(1, gb, n * sizeof *gb); /* ghost row below (owned by r+1) */
  int rc = -1;
  if (barrier(c) != 0) goto comm_fail;
  uint64_t t0 = syncq_now_ns(), f0 = minor_faults();
  comp_begin(c); /* local union-find; label = smallest global id of the local component */
  for (size_t i = 0; i < nv; i++) par[i] = i;
  for (size_t y = 0; y < rows; y++)
    for (size_t x = 0; x < n; x++) {
      size_t v = (r0 + y) * n + x, i = y * n + x;
      if (x + 1 < n && cc_edge(n, v, 0)) uf_union(par, i, i + 1);
      if (y + 1 < rows && cc_edge(n, v, 1)) uf_union(par, i, i + n);
    }
  for (size_t i = 0; i < nv; i++) par[i] = uf_find(par, i);
  for (size_t i = 0; i < nv; i++) lab[i] = r0 * n + par[i]; /* the root is the smallest local index */
  comp_end(c);
  for (unsigned round = 0;; round++) {
    comm_begin(c); /* exchange boundary rows */
    if (r > 0 && put(c, r - 1, 1, 0, lab, n * sizeof *lab, false) != 0) goto comm_fail;
    if (r + 1 < P && put(c, r + 1, 0, 0, lab + (rows - 1) * n, n * sizeof *lab, false) != 0) goto comm_fail;
    if (put_sync(c) != 0 || barrier(c) != 0) goto comm_fail;
    comm_end(c);
    comp_begin(c);
    uint64_t changed = 0;
    for (size_t i = 0; i < nv; i++) mn[i] = UINT64_MAX;
    for (size_t i = 0; i < nv; i++) mn[par[i]] = lab[i] < mn[par[i]] ? lab[i] : mn[par[i]];
    for (size_t x = 0; x < n; x++) {
      if (r > 0 && cc_edge(n, (r0 - 1) * n + x, 1) && ga[x] < mn[par[x]]) mn[par[x]] = ga[x];
      size_t i = (rows - 1) * n + x;
      if (r + 1 < P && cc_edge(n, (r1 - 1) * n + x, 1) && gb[x] < mn[par[i]]) mn[par[i]] = gb[x];
    }
    for (size_t i = 0; i < nv; i++)
      if (mn[par[i]] != lab[i]) {
        lab[i] = mn[par[i]];
        changed = 1;
      }
    comp_end(c);
    comm_begin(c);
    uint64_t any;
    if (allreduce(c, changed, &any) != 0) goto comm_fail; /* ranks that changed a label */
    comm_end(c);
    if (!any) break;
  }
  c->phase_start = syncq_now_ns() - t0;
  c->faults = minor_faults() - f0;
  {
    /* check: gather the labels, sequential union-find of the whole graph */
    int *counts = malloc((size_t)P * sizeof(int)), *displs = malloc((size_t)P * sizeof(int));
    uint64_t *all = r == 0 ? malloc(n * n * sizeof *all) : NULL;
    for (int q = 0; q < P; q++) {
      size_t a, b;
      rows_of(n, P, q, &a, &b);
      counts[q] = (int)((b - a) * n);
      displs[q] = (int)(a * n);
    }
    MPI_Gatherv(lab, (int)nv, MPI_UINT64_T, all, counts, displs, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    int ok = 1;
    if (r == 0) {
      size_t *sp = malloc(n * n * sizeof *sp);
      for (size_t i = 0; i < n * n; i++) sp[i] = i;
      for (size_t v = 0; v < n * n; v++) {
        if (v % n + 1 < n && cc_edge(n, v, 0)) uf_union(sp, v, v + 1);
        if (v / n + 1 < n && cc_edge(n, v, 1)) uf_union(sp, v, v + n);
      }
      for (size_t v = 0; v < n * n && ok; v++)
        if (all[v] != uf_find(sp, v)) { /* the root is the component's smallest id */
          ok = 0;
          snprintf(why, wl, "cc: vertex %zu labelled %llu, union-find says %zu", v, (unsigned long long)all[v],
                   uf_find(sp, v));
        }
      free(sp);
      free(all);
    }
    free(counts);
    free(displs);
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok && r != 0) fail(why, wl, "cc: labels differ from the union-find (see rank 0)");
    rc = ok ? 0 : -1;
  }
  goto out;
comm_fail:
  fail(why, wl, "cc: an active message failed");
out:
  set_buf(0, NULL, 0);
  set_buf(1, NULL, 0);
  free(par);
  free(lab);
  free(mn);
  free(ga);
  free(gb);
  return rc;
}

/* ------------------------------------------------------------ sample sort */

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* count, sum, sum of squares, hash sum: equal for permutations */
static void multiset(const uint32_t *k, size_t n, uint64_t out[4]) {
  out[0] = n;
  out[1] = out[2] = out[3] = 0;
  for (size_t i = 0; i < n; i++) {
    out[1] += k[i];
    out[2] += (uint64_t)k[i] * k[i];
    out[3] += lab_mix64(k[i]);
  }
}

static int app_sort(app_ctx *c, size_t nk, char *why, size_t wl) {
  int P = c->size, r = c->rank;
  if (nk < SORT_SAMPLES || P > MAX_RANKS) {
    fail(why, wl, "sort: too few keys per rank");
    return -1;
  }
  uint32_t *keys = alloc_touched(nk * sizeof *keys), *recv = alloc_touched(SORT_SLACK * nk * sizeof *recv);
  uint32_t *samples = alloc_touched((size_t)P * SORT_SAMPLES * sizeof *samples), split[MAX_RANKS];
  if (!keys || !recv || !samples) {
    fail(why, wl, "sort: out of memory");
    return -1;
  }
  for (size_t i = 0; i < nk; i++) keys[i] = (uint32_t)lab_mix64(APP_SEED ^ ((uint64_t)r << 40) ^ i);
  uint64_t before[4], after[4], sb[4], sa[4];
  multiset(keys, nk, before);
  set_buf(0, samples, (size_t)P * SORT_SAMPLES * sizeof *samples);
  set_buf(1, split, sizeof split);
  set_buf(2, recv, SORT_SLACK * nk * sizeof *recv);
  int rc = -1;
  if (barrier(c) != 0) goto comm_fail;
  uint64_t t0 = syncq_now_ns(), f0 = minor_faults();
  comp_begin(c);
  qsort(keys, nk, sizeof *keys, cmp_u32);
  uint32_t mine[SORT_SAMPLES];
  for (size_t i = 0; i < SORT_SAMPLES; i++) mine[i] = keys[(i * nk) / SORT_SAMPLES + nk / (2 * SORT_SAMPLES)];
  comp_end(c);
  comm_begin(c);
  if (put(c, 0, 0, (size_t)r * sizeof mine, mine, sizeof mine, false) != 0 || put_sync(c) != 0 || barrier(c) != 0)
    goto comm_fail;
  comm_end(c);
  if (r == 0) {
    comp_begin(c);
    qsort(samples, (size_t)P * SORT_SAMPLES, sizeof *samples, cmp_u32);
    for (int q = 1; q < P; q++) split[q - 1] = samples[(size_t)q * SORT_SAMPLES];
    comp_end(c);
    comm_begin(c);
    for (int q = 1; q < P; q++)
      if (put(c, q, 1, 0, split, (size_t)(P - 1) * sizeof *split, false) != 0) goto comm_fail;
    comm_end(c);
  }
  comm_begin(c);
  if (put_sync(c) != 0 || barrier(c) != 0) goto comm_fail;
  /* buckets: keys are sorted, so bucket q is a range */
  size_t lo = 0;
  for (int k = 0; k < P; k++) {
    int q = (r + k) % P;
    size_t a = 0, b = nk;
    /* [a, b): keys in bucket q = [split[q-1], split[q]) */
    if (q > 0) {
      size_t L = 0, H = nk;
      while (L < H) {
        size_t m = (L + H) / 2;
        if (keys[m] < split[q - 1]) L = m + 1;
        else H = m;
      }
      a = L;
    }
    if (q < P - 1) {
      size_t L = 0, H = nk;
      while (L < H) {
        size_t m = (L + H) / 2;
        if (keys[m] < split[q]) L = m + 1;
        else H = m;
      }
      b = L;
    }
    lo += b - a;
    if (b > a && put(c, q, 2, 0, keys + a, (b - a) * sizeof *keys, true) != 0) goto comm_fail;
  }
  if (put_sync(c) != 0 || barrier(c) != 0) goto comm_fail;
  comm_end(c);
  if (S.overflow) {
    fail(why, wl, "sort: a bucket overflowed its receive buffer");
    goto out;
  }
  size_t got = S.fill[2] / sizeof *recv;
  comp_begin(c);
  qsort(recv, got, sizeof *recv, cmp_u32);
  comp_end(c);
  c->phase_start = syncq_now_ns() - t0;
  c->faults = minor_faults() - f0;
  {
    int ok = lo == nk;
    for (size_t i = 1; i < got; i++)
      if (recv[i - 1] > recv[i]) ok = 0;
    /* boundaries: my max <= the next rank's min */
    uint64_t mymax = got ? recv[got - 1] : 0, prevmax = 0;
    uint64_t mymin = got ? recv[0] : UINT32_MAX;
    MPI_Sendrecv(&mymax, 1, MPI_UINT64_T, r + 1 < P ? r + 1 : MPI_PROC_NULL, 9, &prevmax, 1, MPI_UINT64_T,
                 r > 0 ? r - 1 : MPI_PROC_NULL, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (r > 0 && prevmax > mymin) ok = 0;
    multiset(recv, got, after);
    MPI_Allreduce(before, sb, 4, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(after, sa, 4, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (memcmp(sb, sa, sizeof sb) != 0) ok = 0;
    int all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) fail(why, wl, "sort: output not sorted across ranks, or not a permutation of the input");
    rc = all_ok ? 0 : -1;
  }
  goto out;
comm_fail:
  fail(why, wl, "sort: an active message failed");
out:
  for (int i = 0; i < 3; i++) set_buf(i, NULL, 0);
  free(keys);
  free(recv);
  free(samples);
  return rc;
}

int lc98_app_run(app_ctx *c, const char *app, uint64_t size, app_times *t, char *why, size_t whylen) {
  memset(&S, 0, sizeof S);
  c->comp_ns = c->comm_ns = c->faults = 0;
  int r;
  if (strcmp(app, "fft") == 0) r = app_fft(c, (size_t)size, why, whylen);
  else if (strcmp(app, "cc") == 0 || strcmp(app, "cc-sparse") == 0) {
    cc_p = strcmp(app, "cc") == 0 ? CC_EDGE_P : CC_SPARSE_P;
    r = app_cc(c, (size_t)size, why, whylen);
  } else if (strcmp(app, "sort") == 0) r = app_sort(c, (size_t)size, why, whylen);
  else {
    snprintf(why, whylen, "unknown application '%s'", app);
    r = -1;
  }
  /* each app leaves its total run time (ns) in phase_start */
  uint64_t mine[4] = {r == 0 ? c->phase_start : 0, c->comp_ns, c->comm_ns, r == 0 ? c->faults : 0}, mx[4];
  MPI_Allreduce(mine, mx, 4, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  t->total_ms = (double)mx[0] / 1e6;
  t->comp_ms = (double)mx[1] / 1e6;
  t->comm_ms = (double)mx[2] / 1e6;
  t->faults = mx[3];
  return r;
}
