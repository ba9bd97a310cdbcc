/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_objects_selftest.c — the check of mpi_objects.c itself: one rank
 * makes an object of every kind the interposer tracks, each request
 * through a different completing call, and frees them all except the
 * kind named on its command line:
 *
 *   mpi_objects_selftest none|communicator|request|window|datatype|group|info|memory|every
 *                        |persistent|idup|started|mpi4
 *
 * "none" must end clean; a kind must end with the interposer's line
 * naming that kind and the call that made it, and a failed run; "every"
 * leaves one object made by each of the other wrapped calls (others()),
 * each of which must be named in its kind's line. "persistent" leaves a
 * persistent receive (MPI_Recv_init's, started and completed twice),
 * "idup" MPI_Comm_idup's communicator (its request completed), and
 * "started" unmaps the buffer of a persistent receive MPI_Start has
 * activated, before its completion; "mpi4" leaves one object made by
 * each MPI 4.0 call the interposer wraps (persistent collectives,
 * MPI_Comm_idup_with_info), and is skipped (exit 77 through mpi_run.sh)
 * under an MPI older than 4.0 (tests/am/CMakeLists.txt:
 * mpi_objects_<impl>_*).
 */
#define _GNU_SOURCE /* MAP_ANONYMOUS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

/* A page of its own for a receive's buffer, so that it can be unmapped. */
static int *page_buffer(void) {
  void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    fprintf(stderr, "mpi_objects_selftest: mmap failed\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return p;
}

/* Persistent requests to and from this rank: a pair started together
 * (MPI_Startall) and completed by MPI_Waitall, started again one by one
 * (MPI_Start) and completed by MPI_Test and MPI_Wait, and freed
 * (MPI_Request_free), the receive's buffer unmapped between its last
 * completion and its freeing: a persistent receive's buffer is the
 * caller's again once the receive completes, though its handle lives on.
 * Then a persistent receive nobody sends to: started, cancelled and
 * completed (MPI_Wait) before its buffer goes, or, with "started", freed
 * (MPI_Request_free) while still active, its buffer then unmapped: MPI
 * may write into it until the receive completes, which the program can
 * no longer learn. (Unmapped before the free, MPICH's memory hooks would
 * hide the munmap from mpi_objects.c, whose later check, an msync at
 * MPI_Finalize, sees only receives not completed by then.) */
static void persistent_requests(MPI_Comm c) {
  int me, a = 1, flag = 0;
  MPI_Request r[2];
  MPI_Status st[2];
  MPI_Comm_rank(c, &me);
  int *buf = page_buffer();
  CHECK(MPI_Recv_init(buf, 1, MPI_INT, me, 6, c, &r[0]));
  CHECK(MPI_Send_init(&a, 1, MPI_INT, me, 6, c, &r[1]));
  CHECK(MPI_Startall(2, r));
  CHECK(MPI_Waitall(2, r, st));
  CHECK(MPI_Start(&r[0]));
  CHECK(MPI_Start(&r[1]));
  while (!flag) CHECK(MPI_Test(&r[0], &flag, &st[0]));
  CHECK(MPI_Wait(&r[1], &st[1]));
  munmap(buf, 4096); /* complete: not reported */
  if (freeing("persistent")) CHECK(MPI_Request_free(&r[0]));
  CHECK(MPI_Request_free(&r[1]));

  int *idle = page_buffer();
  CHECK(MPI_Recv_init(idle, 1, MPI_INT, me, 7, c, &r[0]));
  CHECK(MPI_Start(&r[0]));
  CHECK(MPI_Cancel(&r[0]));
  if (freeing("started")) CHECK(MPI_Wait(&r[0], &st[0])); /* the cancel completed: its buffer is ours */
  CHECK(MPI_Request_free(&r[0]));
  munmap(idle, 4096); /* reported when the receive was freed active */
}

/* MPI_STATUSES_IGNORE, read at run time: GCC warns about the constant
 * pointer MPICH defines it as when it is passed where statuses are
 * written. */
static MPI_Status *volatile statuses_ignore;

/* Persistent receives that complete with an error (MPI_ERR_TRUNCATE: a
 * message longer than the receive), completed by MPI_Waitall, by
 * MPI_Testall and by MPI_Waitall given MPI_STATUSES_IGNORE (the
 * interposer reads statuses of its own), each of which returns
 * MPI_ERR_IN_STATUS: the receive
 * has completed all the same (its status's MPI_ERROR is not
 * MPI_ERR_PENDING), so its buffer is the program's again and is unmapped
 * before the request is freed: not reported. Under MPI_ERRORS_RETURN on
 * the communicator and on MPI_COMM_WORLD (MPICH 4.0 raises a failed
 * receive's error on the latter). */
static void failed_persistent(MPI_Comm c) {
  int me, two[2] = {1, 2}, flag = 0;
  MPI_Request r[2];
  MPI_Status st[2];
  MPI_Comm_rank(c, &me);
  CHECK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
  CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  statuses_ignore = MPI_STATUSES_IGNORE;
  for (int k = 0; k < 3; k++) {
    int *buf = page_buffer();
    CHECK(MPI_Recv_init(buf, 1, MPI_INT, me, 8 + k, c, &r[0]));
    CHECK(MPI_Start(&r[0]));
    CHECK(MPI_Isend(two, 2, MPI_INT, me, 8 + k, c, &r[1]));
    int rc;
    st[0].MPI_ERROR = MPI_ERR_OTHER; /* what the check below needs where statuses are ignored */
    if (k == 0) {
      rc = MPI_Waitall(2, r, st);
    } else if (k == 2) {
      rc = MPI_Waitall(2, r, statuses_ignore);
    } else {
      do rc = MPI_Testall(2, r, &flag, st);
      while (rc == MPI_SUCCESS && !flag);
    }
    /* (Open MPI 4.1 delivers a send to self longer than the receive
     * without an error: then both completed well, and the error path is
     * checked under MPICH alone) */
    if (rc != MPI_SUCCESS &&
        (rc != MPI_ERR_IN_STATUS || st[0].MPI_ERROR == MPI_SUCCESS || st[0].MPI_ERROR == MPI_ERR_PENDING)) {
      fprintf(stderr,
              "mpi_objects_selftest: %s of a truncated receive returned %d (status %d), not MPI_ERR_IN_STATUS\n",
              k == 1 ? "MPI_Testall" : "MPI_Waitall", rc, st[0].MPI_ERROR);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    munmap(buf, 4096); /* complete, with an error: not reported */
    if (r[1] != MPI_REQUEST_NULL) CHECK(MPI_Wait(&r[1], &st[1]));
    CHECK(MPI_Request_free(&r[0]));
  }
  CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  CHECK(MPI_Comm_set_errhandler(c, MPI_ERRORS_ARE_FATAL));
}

/* MPI 4.0's calls the interposer wraps: a persistent barrier, broadcast,
 * allreduce and allgather, each started and completed once (MPI_Waitall)
 * and then freed, and MPI_Comm_idup_with_info's communicator (its request
 * completed by MPI_Wait), freed; with "mpi4", all left. Under an older
 * MPI, "mpi4" says it is skipped (the file skip in SYNCQ_TEST_OUT, which
 * mpi_run.sh turns into exit 77). */
static void mpi4(MPI_Comm c) {
  int leave = strcmp(keep, "mpi4") == 0;
#if MPI_VERSION >= 4
  int x = 1, sum = 0, all[1] = {0};
  MPI_Request r[5];
  MPI_Status st[4];
  MPI_Comm idup;
  CHECK(MPI_Barrier_init(c, MPI_INFO_NULL, &r[0]));
  CHECK(MPI_Bcast_init(&x, 1, MPI_INT, 0, c, MPI_INFO_NULL, &r[1]));
  CHECK(MPI_Allreduce_init(&x, &sum, 1, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &r[2]));
  CHECK(MPI_Allgather_init(&x, 1, MPI_INT, all, 1, MPI_INT, c, MPI_INFO_NULL, &r[3]));
  CHECK(MPI_Startall(4, r));
  CHECK(MPI_Waitall(4, r, st));
  CHECK(MPI_Comm_idup_with_info(c, MPI_INFO_NULL, &idup, &r[4]));
  CHECK(MPI_Wait(&r[4], &st[0]));
  if (!leave) {
    for (int i = 0; i < 4; i++) CHECK(MPI_Request_free(&r[i]));
    CHECK(MPI_Comm_free(&idup));
  }
#else
  (void)c;
  const char *dir = getenv("SYNCQ_TEST_OUT");
  char path[4096];
  if (leave && dir != NULL && snprintf(path, sizeof path, "%s/skip", dir) < (int)sizeof path) {
    FILE *f = fopen(path, "w");
    if (f != NULL) {
      fprintf(f, "this MPI (MPI_VERSION %d) has no MPI 4.0 calls\n", MPI_VERSION);
      fclose(f);
    }
  }
#endif
}

/* Every wrapped call main and requests() do not make: one object each,
 * freed through the freeing calls they do not use (MPI_Comm_disconnect,
 * MPI_Testall, MPI_Testany, MPI_Waitsome), or, with "every", left. */
static void others(MPI_Comm c) {
  int leave = strcmp(keep, "every") == 0, me, a = 1, b = 0, flag = 0, idx = -1, out = 0, two[2];
  MPI_Status st[2];
  MPI_Comm_rank(c, &me);
  MPI_Comm k[5];
  MPI_Group world;
  CHECK(MPI_Comm_group(c, &world));
  CHECK(MPI_Comm_dup(c, &k[0]));
  CHECK(MPI_Comm_dup_with_info(c, MPI_INFO_NULL, &k[1]));
  CHECK(MPI_Comm_split(c, 0, me, &k[2]));
  CHECK(MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &k[3]));
  CHECK(MPI_Comm_create(c, world, &k[4]));
  if (!leave) {
    CHECK(MPI_Comm_disconnect(&k[2]));
    for (int i = 0; i < 5; i++)
      if (i != 2) CHECK(MPI_Comm_free(&k[i]));
  }
  MPI_Request r[11];
  MPI_Comm idup;
  CHECK(MPI_Irecv(&b, 1, MPI_INT, me, 20, c, &r[0]));
  CHECK(MPI_Isend(&a, 1, MPI_INT, me, 20, c, &r[1]));
  /* the synchronous send first: MPICH gives a send complete at once a
   * shared handle (mpi_objects.c counts it per object all the same) */
  CHECK(MPI_Issend(&a, 1, MPI_INT, me, 21, c, &r[3]));
  CHECK(MPI_Irecv(&b, 1, MPI_INT, me, 21, c, &r[2]));
  CHECK(MPI_Ibarrier(c, &r[4]));
  CHECK(MPI_Comm_idup(c, &idup, &r[5]));
  CHECK(MPI_Send_init(&a, 1, MPI_INT, me, 22, c, &r[6]));
  CHECK(MPI_Recv_init(&b, 1, MPI_INT, me, 22, c, &r[7]));
  CHECK(MPI_Ssend_init(&a, 1, MPI_INT, me, 23, c, &r[8]));
  CHECK(MPI_Bsend_init(&a, 1, MPI_INT, me, 23, c, &r[9]));
  CHECK(MPI_Rsend_init(&a, 1, MPI_INT, me, 23, c, &r[10]));
  if (!leave) {
    while (!flag) CHECK(MPI_Testall(2, &r[0], &flag, st));
    for (int left = 2; left > 0; left--) {
      flag = 0;
      while (!flag) CHECK(MPI_Testany(2, &r[2], &idx, &flag, &st[0]));
    }
    for (int pending = 2; pending > 0; pending -= out) CHECK(MPI_Waitsome(2, &r[4], &out, two, st));
    CHECK(MPI_Request_free(&r[6])); /* never started */
    CHECK(MPI_Request_free(&r[7]));
    for (int i = 8; i < 11; i++) CHECK(MPI_Request_free(&r[i]));
    /* the communicator, counted when MPI_Waitsome completed its request */
    if (freeing("idup")) CHECK(MPI_Comm_free(&idup));
  } else {
    /* left, but complete inside MPI (MPI_Request_get_status frees nothing) */
    for (int i = 0; i < 6; i++)
      for (flag = 0; !flag;) CHECK(MPI_Request_get_status(r[i], &flag, &st[0]));
    /* its request completed by no wrapped call: the communicator is not counted */
    CHECK(MPI_Comm_free(&idup));
  }
  MPI_Win w;
  void *base = NULL;
  CHECK(MPI_Win_allocate_shared((MPI_Aint)sizeof(int), (int)sizeof(int), MPI_INFO_NULL, c, &base, &w));
  if (!leave) CHECK(MPI_Win_free(&w));
  MPI_Datatype t[3];
  int len[1] = {2};
  MPI_Aint disp[1] = {0};
  MPI_Datatype types[1] = {MPI_INT};
  CHECK(MPI_Type_vector(2, 1, 2, MPI_INT, &t[0]));
  CHECK(MPI_Type_create_struct(1, len, disp, types, &t[1]));
  CHECK(MPI_Type_dup(MPI_INT, &t[2]));
  if (!leave)
    for (int i = 0; i < 3; i++) CHECK(MPI_Type_free(&t[i]));
  MPI_Group g[2];
  int rank0[1] = {0};
  CHECK(MPI_Group_incl(world, 1, rank0, &g[0]));
  CHECK(MPI_Group_excl(world, 0, rank0, &g[1]));
  if (!leave)
    for (int i = 0; i < 2; i++) CHECK(MPI_Group_free(&g[i]));
  CHECK(MPI_Group_free(&world));
  MPI_Info info, copy;
  CHECK(MPI_Info_create(&info));
  CHECK(MPI_Info_set(info, "syncq", "1"));
  CHECK(MPI_Info_dup(info, &copy));
  CHECK(MPI_Info_free(&info));
  if (!leave) CHECK(MPI_Info_free(&copy));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  keep = argc > 1 ? argv[1] : "none";
  MPI_Comm c, node;
  CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  CHECK(MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  CHECK(MPI_Comm_free(&node));
  requests(c);
  persistent_requests(c);
  failed_persistent(c);
  mpi4(c);

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
  others(c);
  if (freeing("communicator")) CHECK(MPI_Comm_free(&c));
  printf("mpi_objects_selftest: made every kind, left %s\n", keep);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
