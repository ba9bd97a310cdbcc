/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lc98_mpi.h — the MPI side of syncq-lab's lc98 experiments: a helper
 * program (syncq-lab-mpi-<impl>, one per MPI) that syncq-lab starts under
 * mpirun. It prints one line per measured variant on rank 0's stdout:
 *     <variant> <value> [<value> ...] [ok | FAIL <why>]
 * and syncq-lab turns the lines into points (lab/exp/lc98.c,
 * lab/exp/lc98_apps.c).
 *
 *   syncq-lab-mpi-<impl> logp rtt N        am-mpi, mpi-pingpong, am-shm (us)
 *   syncq-lab-mpi-<impl> logp bw N         am-mpi, mpi-bw (MB/s, 8 KB messages)
 *   syncq-lab-mpi-<impl> logp first N      am-mpi-first, am-mpi-fill, am-mpi (us):
 *                                          a new job's first round trip through
 *                                          MPI, its first ring's worth, and after
 *   syncq-lab-mpi-<impl> app APP[,APP...] SIZE[,SIZE...] V...
 *                                          for each variant V (a claim name,
 *                                          or "mpi-forced") and each APP:
 *                                          "APP/V total comp comm ok" (ms)
 */
#ifndef SYNCQ_LAB_LC98_MPI_H
#define SYNCQ_LAB_LC98_MPI_H

#include <stdint.h>

#include "syncq/am_mpi.h"

/* Handler indexes of the applications (one table for every app, so every
 * rank registers the same). */
enum {
  APP_H_PUT = 10,     /* bulk: copy data to (buffer, byte offset) and ack */
  APP_H_PUT_ACK = 11, /* reply: one more put acknowledged */
  APP_H_ARRIVE = 12,  /* barrier / reduction: a rank arrived with a value */
  APP_H_RELEASE = 13, /* barrier / reduction: rank 0 releases with the result */
  APP_H_APPEND = 14,  /* bulk: append data to a buffer, ack */
};

/* A run's split of time (000 Table 4). */
typedef struct app_times {
  double total_ms, comp_ms, comm_ms;
  uint64_t faults; /* the most minor page faults a rank took in the timed run */
} app_times;

/* The AM context every application runs on. */
typedef struct app_ctx {
  syncq_am_mpi *job;
  syncq_am_endpoint *ep;
  int rank, size;
  uint64_t comp_ns, comm_ns; /* accumulated by app_comp / app_comm */
  uint64_t phase_start;
  uint64_t faults; /* minor page faults of this rank's timed run */
} app_ctx;

/* Run application `app` ("fft", "cc", "sort") at size `size` over the job;
 * fills times (max over ranks) and returns 0 when the result verified,
 * else -1 with why (on every rank). */
int lc98_app_run(app_ctx *c, const char *app, uint64_t size, app_times *t, char *why, size_t whylen);
/* Register the applications' handlers on an endpoint. */
void lc98_app_register(syncq_am_endpoint *ep);

#endif
