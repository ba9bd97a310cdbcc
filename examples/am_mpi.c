/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * am_mpi.c — active messages between the ranks of an MPI job
 * (syncq/am_mpi.h, docs/am-mpi.md): every rank asks the next rank (round
 * robin) to square numbers and checks the replies; ranks on one machine
 * reach each other through shared memory, the others through MPI
 * (SYNCQ_AM_FORCE_MPI=1 sends everything through MPI). Prints one line
 * per rank; exits 0 when every reply came back right.
 *
 *   mpicc.openmpi am_mpi.c $(pkg-config --cflags --libs syncq-am-mpi-openmpi) -o am_mpi
 *   mpirun.openmpi -n 2 ./am_mpi             (or mpicc.mpich, mpirun.mpich)
 */
#include <stdint.h>
#include <stdio.h>

#include <mpi.h>
#include <syncq/am_mpi.h>

#define REQUESTS 50
enum { H_SQUARE = 0, H_RESULT = 1 };

static void on_square(syncq_am_token *t, const uint32_t *args, unsigned nargs, const void *data, size_t len,
                      void *ctx) {
  (void)data, (void)len, (void)ctx;
  uint32_t out[2] = {args[0], nargs == 1 ? args[0] * args[0] : 0};
  syncq_am_reply(t, H_RESULT, out, 2, 0);
}

typedef struct results {
  unsigned got, wrong;
} results;

static void on_result(syncq_am_token *t, const uint32_t *args, unsigned nargs, const void *data, size_t len,
                      void *ctx) {
  (void)t, (void)data, (void)len;
  results *r = ctx;
  r->got++;
  if (nargs != 2 || args[1] != args[0] * args[0]) r->wrong++;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  syncq_am_mpi *job;
  results r = {0, 0};
  int rc = syncq_am_mpi_create(MPI_COMM_WORLD, NULL, &job);
  if (rc != SYNCQ_OK) {
    fprintf(stderr, "syncq_am_mpi_create: %s\n", syncq_strerror(rc));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  syncq_am_endpoint *ep = syncq_am_mpi_endpoint(job);
  syncq_am_register(ep, H_SQUARE, "square", on_square, NULL);
  syncq_am_register(ep, H_RESULT, "result", on_result, &r);
  if ((rc = syncq_am_mpi_start(job)) != SYNCQ_OK) {
    fprintf(stderr, "syncq_am_mpi_start: %s (%s)\n", syncq_strerror(rc), syncq_am_mpi_why(job));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int me = syncq_am_mpi_rank(job), n = syncq_am_mpi_size(job);
  syncq_am_peer *next;
  syncq_am_mpi_peer(job, (me + 1) % n, &next);
  for (uint32_t i = 1; i <= REQUESTS; i++) {
    while ((rc = syncq_am_request(next, H_SQUARE, &i, 1, 0)) == SYNCQ_FULL) syncq_am_poll(ep, 16, NULL);
    if (rc != SYNCQ_OK) {
      fprintf(stderr, "rank %d: request: %s\n", me, syncq_strerror(rc));
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    while (r.got < i) syncq_am_poll(ep, 16, NULL); /* also serves the previous rank's requests */
  }
  /* keep serving until every rank has its replies */
  MPI_Request barrier;
  int done = 0;
  MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
  while (!done) {
    syncq_am_poll(ep, 16, NULL);
    MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
  }
  printf("rank %d of %d: %u replies via %s, %u wrong\n", me, n, r.got, syncq_am_mpi_path(job, (me + 1) % n), r.wrong);
  int ok = r.got == REQUESTS && r.wrong == 0;
  syncq_am_mpi_destroy(job);
  MPI_Finalize();
  return ok ? 0 : 1;
}
