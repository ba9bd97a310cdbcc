/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_objects_selftest.c — the check of mpi_objects.c itself: one rank
 * makes an object of every kind the interposer tracks, each request
 * through a different completing call, and frees them all except the
 * kind named on its command line:
 *
 *   mpi_objects_selftest none|communicator|request|window|datatype|group|info|memory
 *
 * "none" must end clean; any other must end with the interposer's line
 * naming that kind and the call that made it, and a failed run
 * (tests/am/CMakeLists.txt: mpi_objects_<impl>_*).
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define CHECK(x)                                                     \
  do {                                                               \
    if ((x) != MPI_SUCCESS) {                                        \
      fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #x); \
      MPI_Abort(MPI_COMM_WORLD, 2);                                  \
    }                                                                \
  } while (0)

static const char *keep; /* the kind left unfreed */

static int freeing(const char *kind) { return strcmp(keep, kind) != 0; }

/* Requests to and from this rank, each completed another way: a pair by
 * MPI_Waitall, one by MPI_Test, one by MPI_Testsome, a receive nobody
 * sends to cancelled and freed (MPI_Request_free), an MPI_Ibarrier by
 * MPI_Wait, an MPI_Issend by MPI_Waitany. Leaving one: a send completed
 * by nothing (its receive is, so it has finished inside MPI). */
static void requests(MPI_Comm c) {
  int me, a = 1, b = 0, flag = 0, out = 0, idx[1], any = -1;
  MPI_Request r[2], s;
  MPI_Status st[2]; /* not MPI_STATUS(ES)_IGNORE: MPICH's are constant pointers GCC warns about */
  MPI_Comm_rank(c, &me);
  CHECK(MPI_Irecv(&b, 1, MPI_INT, me, 1, c, &r[0]));
  CHECK(MPI_Isend(&a, 1, MPI_INT, me, 1, c, &r[1]));
  CHECK(MPI_Waitall(2, r, st));
  CHECK(MPI_Irecv(&b, 1, MPI_INT, me, 2, c, &r[0]));
  CHECK(MPI_Isend(&a, 1, MPI_INT, me, 2, c, &s));
  while (!flag) CHECK(MPI_Test(&r[0], &flag, &st[0]));
  do CHECK(MPI_Testsome(1, &s, &out, idx, st));
  while (out == 0);
  CHECK(MPI_Irecv(&b, 1, MPI_INT, me, 3, c, &r[0]));
  CHECK(MPI_Cancel(&r[0]));
  CHECK(MPI_Request_free(&r[0]));
  CHECK(MPI_Ibarrier(c, &r[0]));
  CHECK(MPI_Wait(&r[0], &st[0]));
  CHECK(MPI_Irecv(&b, 1, MPI_INT, me, 4, c, &r[0]));
  CHECK(MPI_Issend(&a, 1, MPI_INT, me, 4, c, &r[1]));
  CHECK(MPI_Waitall(1, &r[0], st));
  CHECK(MPI_Waitany(1, &r[1], &any, &st[0]));
  CHECK(MPI_Irecv(&b, 1, MPI_INT, me, 5, c, &r[0]));
  CHECK(MPI_Isend(&a, 1, MPI_INT, me, 5, c, &s));
  CHECK(MPI_Wait(&r[0], &st[0]));
  if (freeing("request")) CHECK(MPI_Wait(&s, &st[0]));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  keep = argc > 1 ? argv[1] : "none";
  MPI_Comm c, node;
  CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  CHECK(MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  CHECK(MPI_Comm_free(&node));
  requests(c);

  MPI_Win w;
  int *base = NULL;
  CHECK(MPI_Win_allocate((MPI_Aint)sizeof(int), (int)sizeof(int), MPI_INFO_NULL, c, &base, &w));
  if (freeing("window")) CHECK(MPI_Win_free(&w));
  MPI_Datatype t;
  CHECK(MPI_Type_contiguous(4, MPI_INT, &t));
  CHECK(MPI_Type_commit(&t));
  if (freeing("datatype")) CHECK(MPI_Type_free(&t));
  MPI_Group g;
  CHECK(MPI_Comm_group(c, &g));
  if (freeing("group")) CHECK(MPI_Group_free(&g));
  MPI_Info info;
  CHECK(MPI_Info_create(&info));
  if (freeing("info")) CHECK(MPI_Info_free(&info));
  void *mem = NULL;
  CHECK(MPI_Alloc_mem(64, MPI_INFO_NULL, &mem));
  if (freeing("memory")) CHECK(MPI_Free_mem(mem));
  if (freeing("communicator")) CHECK(MPI_Comm_free(&c));
  printf("mpi_objects_selftest: made every kind, left %s\n", keep);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
