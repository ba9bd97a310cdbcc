/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_objects.c — a PMPI interposer that checks a program frees every MPI
 * object it creates: built as a shared library once per MPI
 * (libsyncq_mpi_objects_<impl>.so) and loaded into each rank with
 * LD_PRELOAD (tests/am/mpi_run.sh's SYNCQ_MPI_RANK_PRELOAD, the EXAMPLEs of
 * syncq/am_mpi.h in tests/docs/api_examples_test.py).
 *
 * Each wrapper below calls the PMPI_ entry point it stands for and, when
 * that succeeded, notes the handle it made (a creating call) or forgets
 * the handle it freed (a freeing call). At MPI_Finalize, before
 * PMPI_Finalize, any handle still noted is reported on stderr, one line
 * per kind with the calls that made them:
 *
 *   mpi_objects: rank 1: 1 communicator left at MPI_Finalize (1 from MPI_Comm_dup)
 *
 * and the process exits MPI_OBJECTS_EXIT once MPI has finalised (mpirun
 * then fails the job). A clean run prints nothing; with
 * SYNCQ_MPI_OBJECTS_OUT set to a folder, each rank also writes there
 * mpi_objects.<rank>: "made N left M" (every kind), so a runner can tell
 * that the check ran and saw objects made (tests/am/mpi_run.sh).
 *
 * The kinds and calls: what src/am/mpi/transport_mpi.c makes and frees
 * (communicators: MPI_Comm_dup, MPI_Comm_split_type, MPI_Comm_free;
 * requests: MPI_Isend, MPI_Irecv, MPI_Ibarrier, completed by MPI_Test,
 * MPI_Testsome and MPI_Testall), the other usual makers and freers of
 * those two kinds, and the other kinds an MPI transport is apt to create:
 * windows (MPI_Win_allocate, MPI_Win_allocate_shared: MPI_Win_create's
 * needs an RMA transport the tests' Open MPI launch leaves out),
 * datatypes, groups, info objects and MPI_Alloc_mem's memory.
 * Only handles a wrapped call made are tracked, so a request from a call
 * not wrapped here (MPI_Ibcast, say) and completed by MPI_Wait neither
 * counts nor confuses the count. A completing call frees a tracked
 * request when it returns with that request's handle set to
 * MPI_REQUEST_NULL. Persistent requests (MPI_Send_init, MPI_Ssend_init,
 * MPI_Bsend_init, MPI_Rsend_init, MPI_Recv_init, and where the MPI
 * declares them, MPI_VERSION >= 4, the persistent collectives
 * MPI_Barrier_init, MPI_Bcast_init, MPI_Allreduce_init and
 * MPI_Allgather_init) are requests too, made by their _init call;
 * completion leaves their handle (inactive, to be started again), and
 * only MPI_Request_free frees one ("persistent requests" below); a
 * completing call that returns MPI_ERR_IN_STATUS completed each request
 * whose status's MPI_ERROR is not MPI_ERR_PENDING. The communicator of
 * MPI_Comm_idup (and of MPI_Comm_idup_with_info, MPI_VERSION >= 4) is
 * counted when its request completes: MPI may write the handle only
 * then, and the program may not use it before ("pending MPI_Comm_idup"). A
 * receive's buffer (MPI_Irecv's, or a persistent receive's from its
 * MPI_Start) is kept until the receive completes, and an munmap of it
 * before then fails the run ("receive buffers" below).
 *
 * Injected faults: SYNCQ_MPI_FAULT="NAME:K[@R][,NAME:K[@R]...]" makes the
 * K-th call (K >= 1) of NAME in each rank (only in rank R of
 * MPI_COMM_WORLD with @R), counted from the rank's first call, fail with
 * MPI_ERR_OTHER instead of calling PMPI_NAME: nothing is made, freed or
 * completed. A failing call that names a communicator first calls its
 * error handler (PMPI_Comm_call_errhandler), as MPI does: under
 * MPI_ERRORS_ARE_FATAL the job ends there, so a fault reaches the caller
 * only under MPI_ERRORS_RETURN; a failing call on requests alone
 * (MPI_Test, MPI_Testsome, MPI_Cancel, MPI_Request_free) returns the
 * code as under MPI_ERRORS_RETURN. NAME is one of fault_names[].
 * MPI_Testsome:K[@R]/after instead lets PMPI_Testsome run and fails the
 * K-th call that completed a request, after it: the completed requests
 * are freed and set to MPI_REQUEST_NULL as on success, outcount and
 * indices are scribbled over (MPI 4.0 §3.7.5 defines neither after an
 * error other than MPI_ERR_IN_STATUS), and MPI_ERR_OTHER is returned: the
 * generic error after a partial completion, which the standard allows
 * and neither Open MPI 4.1 nor MPICH 4.0 produces (docs/am-mpi.md).
 * MPI_Test:K[@R]/send counts only the MPI_Test calls on a request
 * MPI_Isend made (a send's, not a receive's) and fails the K-th of them,
 * before the PMPI call, as above. A program that loads this library can
 * also arm faults counted from now,
 * found with dlsym(RTLD_DEFAULT, ...):
 *   int syncq_mpi_faults_arm(const char *spec)   same syntax, replaces every
 *                                                armed fault; 0, or -1 for a
 *                                                malformed spec
 *   unsigned long syncq_mpi_faults_fired(void)   faults injected so far
 *   void syncq_mpi_recv_cap(int bytes)           every later MPI_Irecv of
 *                                                MPI_BYTE on this rank is
 *                                                posted for at most `bytes`
 *                                                (0: as asked), so a longer
 *                                                message fails it with
 *                                                MPI_ERR_TRUNCATE
 *   void syncq_mpi_testall_stall(int on)         while on, MPI_Testall on this
 *                                                rank completes nothing (flag
 *                                                0, MPI not called): requests
 *                                                that never complete
 *   void syncq_mpi_sends_stall(int on)           while on, MPI_Test on this rank
 *                                                of a request MPI_Isend made
 *                                                completes nothing (flag 0, MPI
 *                                                not called; a "/send" fault
 *                                                still counts it): sends that
 *                                                stay in flight
 *   void syncq_mpi_failed_sends_stick(int on)    while on, a request whose
 *                                                MPI_Test a "/send" fault
 *                                                failed fails every later
 *                                                MPI_Test of the handle at
 *                                                that address too
 *                                                (MPI_ERR_OTHER, MPI not
 *                                                called, each counted as a
 *                                                fault injected): a send
 *                                                request MPI broke
 * A malformed SYNCQ_MPI_FAULT is reported on stderr and ends the rank
 * (exit MPI_OBJECTS_EXIT).
 *
 * Thread-safe (one mutex); the bookkeeping allocates with malloc, outside
 * MPI. Test machinery, not library code: it prints and exits.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MPI_OBJECTS_EXIT 3    /* the exit status of a rank that left objects */
#define ARRAY_ON_STACK 64     /* request arrays up to this long are copied on the stack */
#define CREATORS_REPORTED 16u /* distinct creating calls named per kind */

enum { K_COMM, K_REQUEST, K_WIN, K_TYPE, K_GROUP, K_INFO, K_MEM, K_COUNT };

#define MAKERS_PER_HANDLE 4 /* creating calls told apart per handle; beyond, the last one counts them */

/* One tracked handle: its bytes as a key (never 0: no MPI's handle of a
 * made object is all zero bits), how many live objects it stands for and
 * how many of them each call made. A handle may stand for several: both
 * MPIs return one shared, predefined request for an operation that
 * completed at once (MPICH's "lightweight" sends, Open MPI's
 * ompi_request_empty for a one-rank MPI_Ibarrier), and each must still be
 * completed or freed by the caller. Which of a shared handle's objects a
 * free ends cannot be told: the last maker's count goes down. */
typedef struct slot {
  uint64_t key;
  size_t n;
  const char *by[MAKERS_PER_HANDLE];
  size_t nby[MAKERS_PER_HANDLE];
} slot;

/* A kind's handles: an open-addressing multiset with linear probing,
 * deleted by backward shift (no tombstones), grown at half full. */
typedef struct kind {
  const char *one, *many;
  slot *s;
  size_t cap, used; /* slots, and slots holding a handle */
  size_t live;      /* live objects: the sum of the slots' n */
  size_t made;      /* objects ever noted */
} kind;

static kind kinds[K_COUNT] = {
  [K_COMM] = {"communicator", "communicators", NULL, 0, 0, 0, 0},
  [K_REQUEST] = {"request", "requests", NULL, 0, 0, 0, 0},
  [K_WIN] = {"window", "windows", NULL, 0, 0, 0, 0},
  [K_TYPE] = {"datatype", "datatypes", NULL, 0, 0, 0, 0},
  [K_GROUP] = {"group", "groups", NULL, 0, 0, 0, 0},
  [K_INFO] = {"info object", "info objects", NULL, 0, 0, 0, 0},
  [K_MEM] = {"MPI_Alloc_mem buffer", "MPI_Alloc_mem buffers", NULL, 0, 0, 0, 0},
};
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int failed_bookkeeping; /* malloc failed: the report says the counts are incomplete */

static uint64_t key_of(const void *handle, size_t n) {
  uint64_t k = 0;
  memcpy(&k, handle, n < sizeof k ? n : sizeof k);
  return k;
}

static size_t home(uint64_t k, size_t cap) {
  k ^= k >> 33; /* fmix64 of MurmurHash3: handles are pointers or small integers */
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return (size_t)k & (cap - 1);
}

/* The slot of k, or the empty slot where it would go. */
static size_t find(const kind *t, uint64_t k) {
  size_t i = home(k, t->cap);
  while (t->s[i].key != 0 && t->s[i].key != k) i = (i + 1) & (t->cap - 1);
  return i;
}

static int grow(kind *t) {
  size_t cap = t->cap ? t->cap * 2 : 256, oldcap = t->cap;
  slot *old = t->s, *s = calloc(cap, sizeof *s);
  if (s == NULL) return -1;
  t->s = s;
  t->cap = cap;
  for (size_t i = 0; i < oldcap; i++)
    if (old[i].key != 0) t->s[find(t, old[i].key)] = old[i];
  free(old);
  return 0;
}

static void put(kind *t, uint64_t k, const char *by) {
  if (k == 0) return;
  if ((t->used + 1) * 2 > t->cap && grow(t) != 0) {
    failed_bookkeeping = 1;
    return;
  }
  size_t i = find(t, k);
  slot *e = &t->s[i];
  if (e->key == 0) {
    memset(e, 0, sizeof *e);
    e->key = k;
    t->used++;
  }
  size_t m = 0;
  while (m < MAKERS_PER_HANDLE - 1 && e->by[m] != NULL && e->by[m] != by) m++;
  if (e->by[m] == NULL) e->by[m] = by;
  e->nby[m]++;
  e->n++;
  t->live++;
}

/* Forget one object of handle k; 1 when one was tracked. */
static int drop(kind *t, uint64_t k) {
  if (k == 0 || t->cap == 0) return 0;
  size_t i = find(t, k);
  if (t->s[i].key == 0) return 0;
  slot *e = &t->s[i];
  t->live--;
  size_t m = MAKERS_PER_HANDLE - 1;
  while (e->nby[m] == 0) m--; /* e->n > 0: some maker's count is */
  e->nby[m]--;
  if (--e->n > 0) return 1;
  /* backward shift: move up each later entry of the run whose home is
   * not between the hole and it */
  size_t hole = i;
  for (size_t j = (i + 1) & (t->cap - 1); t->s[j].key != 0; j = (j + 1) & (t->cap - 1)) {
    size_t h = home(t->s[j].key, t->cap);
    if (((j - h) & (t->cap - 1)) >= ((j - hole) & (t->cap - 1))) {
      t->s[hole] = t->s[j];
      hole = j;
    }
  }
  memset(&t->s[hole], 0, sizeof t->s[hole]);
  t->used--;
  return 1;
}

static void note(int kind_i, const void *handle, size_t n, const char *by) {
  pthread_mutex_lock(&lock);
  kinds[kind_i].made++;
  put(&kinds[kind_i], key_of(handle, n), by);
  pthread_mutex_unlock(&lock);
}

static void forget(int kind_i, const void *handle, size_t n) {
  pthread_mutex_lock(&lock);
  (void)drop(&kinds[kind_i], key_of(handle, n));
  pthread_mutex_unlock(&lock);
}

#define NOTE(kind_i, h, by) note(kind_i, &(h), sizeof(h), by)
#define FORGET(kind_i, h) forget(kind_i, &(h), sizeof(h))

/* ---------------------------------------------------------------- receive buffers */

/* The buffer of every receive MPI_Irecv posted and no completing call has
 * completed yet: MPI may write into it until then, a cancelled receive
 * included (MPI 4.0 §3.8.4), and one given to MPI_Request_free before it
 * completed may be written at any time after (its key is cleared: it is
 * never known complete). munmap of a range holding such a buffer is
 * reported at once on stderr and fails the run at MPI_Finalize:
 *
 *   mpi_objects: rank 0: munmap of the buffer of a receive not completed (posted by MPI_Irecv)
 *
 * A plain array: a few hundred receives at most are live in the tests. */
static int world_rank(void);

typedef struct live_recv {
  uint64_t key; /* the request; 0 once freed uncompleted */
  uintptr_t lo, hi;
  const char *by; /* the call that posted it: MPI_Irecv, or MPI_Start of a persistent receive */
} live_recv;
static live_recv *recvs;
static size_t nrecvs, caprecvs;
static atomic_int unmapped_live; /* munmaps that hit a receive's buffer */

/* The caller holds lock when `locked`. */
static void recv_posted(uint64_t key, const void *buf, int count, MPI_Datatype type, const char *by, int locked) {
  int size = 0;
  if (key == 0 || count <= 0 || PMPI_Type_size(type, &size) != MPI_SUCCESS || size <= 0) return;
  if (!locked) pthread_mutex_lock(&lock);
  if (nrecvs == caprecvs) {
    size_t cap = caprecvs ? caprecvs * 2 : 256;
    live_recv *n = realloc(recvs, cap * sizeof *n);
    if (n == NULL) {
      failed_bookkeeping = 1;
      if (!locked) pthread_mutex_unlock(&lock);
      return;
    }
    recvs = n;
    caprecvs = cap;
  }
  recvs[nrecvs++] = (live_recv){key, (uintptr_t)buf, (uintptr_t)buf + (size_t)count * (size_t)size, by};
  if (!locked) pthread_mutex_unlock(&lock);
}

/* Request k completed (forget its buffer) or was freed uncompleted
 * (keep the buffer, never to be matched again). The caller holds lock. */
static void recv_done(uint64_t k, int completed) {
  if (k == 0) return;
  for (size_t i = 0; i < nrecvs; i++)
    if (recvs[i].key == k) {
      if (completed) recvs[i] = recvs[--nrecvs];
      else recvs[i].key = 0;
      return;
    }
}

static void unmapped_said(const char *by) {
  unmapped_live = 1;
  fprintf(stderr, "mpi_objects: rank %d: munmap of the buffer of a receive not completed (posted by %s)\n",
          world_rank(), by);
}

/* Every live receive's buffer is still mapped: the check for an munmap
 * this library's own did not see (an MPI's memory hooks, UCX's under
 * MPICH, bind the program's munmap to theirs). msync fails with ENOMEM on
 * a range with an unmapped page. Run where the transport has just freed a
 * job (MPI_Comm_free) and at MPI_Finalize. */
static void check_live_mapped(void) {
  long page = sysconf(_SC_PAGESIZE);
  if (page <= 0) return;
  const char *bad = NULL;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < nrecvs && !bad; i++) {
    uintptr_t lo = recvs[i].lo & ~((uintptr_t)page - 1);
    if (msync((void *)lo, recvs[i].hi - lo, MS_ASYNC) != 0 && errno == ENOMEM) bad = recvs[i].by;
  }
  pthread_mutex_unlock(&lock);
  if (bad) unmapped_said(bad);
}

int munmap(void *addr, size_t len) {
  static int (*real)(void *, size_t);
  if (real == NULL) *(void **)&real = dlsym(RTLD_NEXT, "munmap");
  uintptr_t lo = (uintptr_t)addr, hi = lo + len;
  const char *hit = NULL;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < nrecvs && !hit; i++)
    if (recvs[i].lo < hi && lo < recvs[i].hi) hit = recvs[i].by;
  pthread_mutex_unlock(&lock);
  if (hit) unmapped_said(hit);
  return real(addr, len);
}

/* ---------------------------------------------------------------- injected faults */

#define FAULTS_MAX 16 /* armed entries at once */

/* The calls a fault can be injected into. */
static const char *const fault_names[] = {
  "MPI_Comm_dup",  "MPI_Comm_split_type", "MPI_Comm_free",      "MPI_Comm_set_errhandler",
  "MPI_Comm_rank", "MPI_Comm_size",       "MPI_Is_thread_main", "MPI_Isend",
  "MPI_Irecv",     "MPI_Ibarrier",        "MPI_Test",           "MPI_Testsome",
  "MPI_Cancel",    "MPI_Request_free",    "MPI_Allreduce",      "MPI_Bcast",
  "MPI_Allgather", "MPI_Testall",
};

/* What a fault counts: every call of its name (failed before the PMPI
 * call), the calls that completed a request ("/after", failed after it),
 * or the calls on a request MPI_Isend made ("/send", failed before). */
enum { FORM_BEFORE, FORM_AFTER, FORM_SEND };

typedef struct fault {
  const char *name; /* an entry of fault_names */
  unsigned long k;  /* the call that fails, 1-based */
  int rank;         /* -1: every rank */
  int form;         /* a FORM_* */
  unsigned long n;  /* calls of name counted so far */
} fault;

static fault faults[FAULTS_MAX];
static int nfaults;
static atomic_int armed;   /* nfaults > 0: read first, so an unarmed call takes no lock */
static atomic_ulong fired; /* faults injected */
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

/* Parse spec into out[]; the number of entries, or -1 when malformed. */
static int parse_faults(const char *spec, fault *out) {
  int n = 0;
  const char *p = spec;
  while (*p != '\0') {
    const char *colon = strchr(p, ':');
    if (colon == NULL || n == FAULTS_MAX) return -1;
    const char *name = NULL;
    for (size_t i = 0; i < sizeof fault_names / sizeof fault_names[0]; i++)
      if (strlen(fault_names[i]) == (size_t)(colon - p) && strncmp(fault_names[i], p, (size_t)(colon - p)) == 0)
        name = fault_names[i];
    if (name == NULL) return -1;
    char *end;
    unsigned long k = strtoul(colon + 1, &end, 10);
    if (end == colon + 1 || k == 0 || k == ULONG_MAX) return -1;
    long rank = -1;
    if (*end == '@') {
      const char *r = end + 1;
      rank = strtol(r, &end, 10);
      if (end == r || rank < 0 || rank > INT_MAX) return -1;
    }
    int form = FORM_BEFORE;
    if (strncmp(end, "/after", 6) == 0) {
      if (strcmp(name, "MPI_Testsome") != 0) return -1; /* the one call whose wrapper injects after */
      form = FORM_AFTER;
      end += 6;
    } else if (strncmp(end, "/send", 5) == 0) {
      if (strcmp(name, "MPI_Test") != 0) return -1; /* the one call whose wrapper tells sends apart */
      form = FORM_SEND;
      end += 5;
    }
    if (*end != '\0' && *end != ',') return -1;
    out[n++] = (fault){name, k, (int)rank, form, 0};
    p = *end == ',' ? end + 1 : end;
  }
  return n;
}

static int arm(const char *spec) {
  fault f[FAULTS_MAX];
  int n = parse_faults(spec, f);
  if (n < 0) return -1;
  pthread_mutex_lock(&lock);
  memcpy(faults, f, (size_t)n * sizeof f[0]);
  nfaults = n;
  armed = n > 0;
  pthread_mutex_unlock(&lock);
  return 0;
}

static void arm_from_env(void) {
  const char *e = getenv("SYNCQ_MPI_FAULT");
  if (e == NULL || *e == '\0') return;
  if (arm(e) != 0) {
    fprintf(stderr,
            "mpi_objects: SYNCQ_MPI_FAULT=%s: expected NAME:K[@R][/after|/send][,...] with K >= 1 and NAME one of "
            "the calls listed in mpi_objects.c\n",
            e);
    exit(MPI_OBJECTS_EXIT);
  }
}

int syncq_mpi_faults_arm(const char *spec);
int syncq_mpi_faults_arm(const char *spec) {
  pthread_once(&env_once, arm_from_env); /* an env spec armed later would replace this one */
  return spec == NULL ? -1 : arm(spec);
}

unsigned long syncq_mpi_faults_fired(void);
unsigned long syncq_mpi_faults_fired(void) { return fired; }

static atomic_int recv_cap; /* syncq_mpi_recv_cap: 0, or the most bytes an MPI_Irecv of MPI_BYTE is posted for */

static atomic_int testall_stall; /* syncq_mpi_testall_stall */

void syncq_mpi_testall_stall(int on);
void syncq_mpi_testall_stall(int on) { testall_stall = on != 0; }

static atomic_int sends_stall; /* syncq_mpi_sends_stall */

void syncq_mpi_sends_stall(int on);
void syncq_mpi_sends_stall(int on) { sends_stall = on != 0; }

/* syncq_mpi_failed_sends_stick: where the send requests a "/send" fault
 * failed while on are kept (a few: the first STUCK_MAX), under `lock`.
 * By the handle's address, not its value: MPICH gives every send that
 * completed at once one shared handle value. */
#define STUCK_MAX 8
static atomic_int sends_stick;
static const MPI_Request *stuck[STUCK_MAX];
static int nstuck;

void syncq_mpi_failed_sends_stick(int on);
void syncq_mpi_failed_sends_stick(int on) {
  pthread_mutex_lock(&lock);
  sends_stick = on != 0;
  nstuck = 0;
  pthread_mutex_unlock(&lock);
}

/* Whether the request at r is a send request a "/send" fault failed
 * while sticking is on; with `add`, make it one. */
static int stuck_send(const MPI_Request *r, int add) {
  int yes = 0;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nstuck && !yes; i++) yes = stuck[i] == r;
  if (!yes && add && sends_stick && nstuck < STUCK_MAX) stuck[nstuck++] = r;
  pthread_mutex_unlock(&lock);
  return yes;
}

void syncq_mpi_recv_cap(int bytes);
void syncq_mpi_recv_cap(int bytes) { recv_cap = bytes > 0 ? bytes : 0; }

/* This rank in MPI_COMM_WORLD, or -1 before MPI_Init. */
static int world_rank(void) {
  int up = 0, r = -1;
  if (PMPI_Initialized(&up) != MPI_SUCCESS || !up || PMPI_Comm_rank(MPI_COMM_WORLD, &r) != MPI_SUCCESS) return -1;
  return r;
}

/* Whether this call of `name` is one that must fail, counted by the
 * faults of that form (FORM_*): before the PMPI call, once the PMPI call
 * has completed a request ("/after"), or before a call on a request
 * MPI_Isend made ("/send"). */
static int fault_hit_when(const char *name, int form) {
  pthread_once(&env_once, arm_from_env);
  if (!armed) return 0;
  int hit = 0, me = -2;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nfaults; i++) {
    fault *f = &faults[i];
    if (f->form != form || strcmp(f->name, name) != 0) continue;
    if (f->rank >= 0) {
      if (me == -2) me = world_rank();
      if (me != f->rank) continue;
    }
    if (++f->n == f->k) hit = 1;
  }
  pthread_mutex_unlock(&lock);
  if (hit) fired++;
  return hit;
}

static int fault_hit(const char *name) { return fault_hit_when(name, FORM_BEFORE); }

/* An injected failure of a call on comm: its error handler first, as MPI does. */
static int failed_on(MPI_Comm comm) {
  if (comm != MPI_COMM_NULL) (void)PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
  return MPI_ERR_OTHER;
}

#define FAULT_ON(name, comm)                     \
  do {                                           \
    if (fault_hit(name)) return failed_on(comm); \
  } while (0)
#define FAULT(name)                            \
  do {                                         \
    if (fault_hit(name)) return MPI_ERR_OTHER; \
  } while (0)

/* ---------------------------------------------------------------- communicators */

/* The handle a creating call wrote, read only when it succeeded. */
static void note_comm(int rc, const MPI_Comm *c, const char *by) {
  if (rc == MPI_SUCCESS && *c != MPI_COMM_NULL) NOTE(K_COMM, *c, by);
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
  FAULT_ON("MPI_Comm_dup", comm);
  int rc = PMPI_Comm_dup(comm, newcomm);
  note_comm(rc, newcomm, "MPI_Comm_dup");
  return rc;
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm) {
  int rc = PMPI_Comm_dup_with_info(comm, info, newcomm);
  note_comm(rc, newcomm, "MPI_Comm_dup_with_info");
  return rc;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
  int rc = PMPI_Comm_split(comm, color, key, newcomm);
  note_comm(rc, newcomm, "MPI_Comm_split");
  return rc;
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm) {
  FAULT_ON("MPI_Comm_split_type", comm);
  int rc = PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
  note_comm(rc, newcomm, "MPI_Comm_split_type");
  return rc;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
  int rc = PMPI_Comm_create(comm, group, newcomm);
  note_comm(rc, newcomm, "MPI_Comm_create");
  return rc;
}

int MPI_Comm_free(MPI_Comm *comm) {
  check_live_mapped();
  FAULT_ON("MPI_Comm_free", *comm);
  MPI_Comm c = *comm;
  int rc = PMPI_Comm_free(comm);
  if (rc == MPI_SUCCESS) FORGET(K_COMM, c);
  return rc;
}

int MPI_Comm_disconnect(MPI_Comm *comm) {
  MPI_Comm c = *comm;
  int rc = PMPI_Comm_disconnect(comm);
  if (rc == MPI_SUCCESS) FORGET(K_COMM, c);
  return rc;
}

/* ---------------------------------------------------------------- requests */

static void note_req(int rc, const MPI_Request *r, const char *by) {
  if (rc == MPI_SUCCESS && *r != MPI_REQUEST_NULL) NOTE(K_REQUEST, *r, by);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request *request) {
  FAULT_ON("MPI_Isend", comm);
  int rc = PMPI_Isend(buf, count, datatype, dest, tag, comm, request);
  note_req(rc, request, "MPI_Isend");
  return rc;
}

int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request) {
  int rc = PMPI_Issend(buf, count, datatype, dest, tag, comm, request);
  note_req(rc, request, "MPI_Issend");
  return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request) {
  FAULT_ON("MPI_Irecv", comm);
  int cap = recv_cap;
  if (cap > 0 && datatype == MPI_BYTE && count > cap) count = cap;
  int rc = PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
  note_req(rc, request, "MPI_Irecv");
  if (rc == MPI_SUCCESS && *request != MPI_REQUEST_NULL)
    recv_posted(key_of(request, sizeof *request), buf, count, datatype, "MPI_Irecv", 0);
  return rc;
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request) {
  FAULT_ON("MPI_Ibarrier", comm);
  int rc = PMPI_Ibarrier(comm, request);
  note_req(rc, request, "MPI_Ibarrier");
  return rc;
}

/* ---------------------------------------------------------------- pending MPI_Comm_idup */

/* The MPI_Comm_idup requests not yet completed, each with where MPI
 * writes the new communicator's handle. The communicator is counted when
 * a completing call completes its request (idup_done), reading the handle
 * then, not at the MPI_Comm_idup call: newcomm is an output of a
 * nonblocking call, which the program may not use before the request
 * completes (MPI 4.0 §7.4.2), so an MPI may write it only then. Open MPI
 * 4.1 and MPICH 4.0 both write it at the call, and the same handle stays
 * (checked with 2 ranks under each); counted at the call, a key read
 * there would be wrong under an MPI that writes later, and the
 * MPI_Comm_free of the real handle would find nothing to forget. Freeing
 * the communicator before completion is erroneous, so a program cannot
 * have freed it earlier; an idup never completed leaves its request,
 * which is reported. A plain array: a handful are pending at once. */
typedef struct idup {
  uint64_t key;    /* the request */
  MPI_Comm *where; /* the caller's newcomm */
  const char *by;  /* MPI_Comm_idup, or MPI_Comm_idup_with_info */
} idup;
static idup *idups;
static size_t nidups, capidups;

static void idup_pending(uint64_t key, MPI_Comm *where, const char *by) {
  pthread_mutex_lock(&lock);
  if (nidups == capidups) {
    size_t cap = capidups ? capidups * 2 : 16;
    idup *n = realloc(idups, cap * sizeof *n);
    if (n == NULL) {
      failed_bookkeeping = 1;
      pthread_mutex_unlock(&lock);
      return;
    }
    idups = n;
    capidups = cap;
  }
  idups[nidups++] = (idup){key, where, by};
  pthread_mutex_unlock(&lock);
}

/* Request k was completed (or freed: `completed` 0); if it was an
 * MPI_Comm_idup's, count the communicator MPI has now written. The caller
 * holds lock. */
static void idup_done(uint64_t k, int completed) {
  for (size_t i = 0; i < nidups; i++)
    if (idups[i].key == k) {
      MPI_Comm c = *idups[i].where;
      const char *by = idups[i].by;
      idups[i] = idups[--nidups];
      if (completed && c != MPI_COMM_NULL) {
        kinds[K_COMM].made++;
        put(&kinds[K_COMM], key_of(&c, sizeof c), by);
      }
      return;
    }
}

static void idup_made(int rc, MPI_Comm *newcomm, const MPI_Request *request, const char *by) {
  note_req(rc, request, by);
  if (rc != MPI_SUCCESS) return;
  if (*request != MPI_REQUEST_NULL) idup_pending(key_of(request, sizeof *request), newcomm, by);
  else note_comm(rc, newcomm, by); /* complete at once: the handle is written */
}

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request) {
  int rc = PMPI_Comm_idup(comm, newcomm, request);
  idup_made(rc, newcomm, request, "MPI_Comm_idup");
  return rc;
}

#if MPI_VERSION >= 4
int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request) {
  int rc = PMPI_Comm_idup_with_info(comm, info, newcomm, request);
  idup_made(rc, newcomm, request, "MPI_Comm_idup_with_info");
  return rc;
}
#endif

/* ---------------------------------------------------------------- persistent requests */

/* Every persistent request made by a wrapped _init call and not yet
 * freed: a request (counted in K_REQUEST by its _init call) whose
 * completion leaves its handle, inactive, to be started again. MPI_Start
 * and MPI_Startall activate it: a receive's buffer is then MPI's
 * (recv_posted, "posted by MPI_Start") until a completing call reports it
 * complete (persistent_done), and MPI_Request_free of an active receive
 * leaves its buffer MPI's for good, as for MPI_Irecv's. A completing call
 * reports a persistent request complete by its flag, index or indices,
 * not by nulling its handle (it never does). A plain array: the tests
 * hold a few. */
typedef struct persistent {
  uint64_t key;
  int recv, active;
  void *buf;
  int count;
  MPI_Datatype type;
} persistent;
static persistent *persistents;
static size_t npersistents, cappersistents;

static void persistent_made(int rc, const MPI_Request *r, int recv, const void *buf, int count, MPI_Datatype type,
                            const char *by) {
  note_req(rc, r, by);
  if (rc != MPI_SUCCESS || *r == MPI_REQUEST_NULL) return;
  pthread_mutex_lock(&lock);
  if (npersistents == cappersistents) {
    size_t cap = cappersistents ? cappersistents * 2 : 16;
    persistent *n = realloc(persistents, cap * sizeof *n);
    if (n == NULL) {
      failed_bookkeeping = 1;
      pthread_mutex_unlock(&lock);
      return;
    }
    persistents = n;
    cappersistents = cap;
  }
  persistents[npersistents++] = (persistent){key_of(r, sizeof *r), recv, 0, (void *)(uintptr_t)buf, count, type};
  pthread_mutex_unlock(&lock);
}

/* The caller holds lock. */
static persistent *persistent_of(uint64_t k) {
  for (size_t i = 0; i < npersistents; i++)
    if (persistents[i].key == k) return &persistents[i];
  return NULL;
}

/* reqs[i] for each i of idx[0..n) (every i < n when idx is NULL) was
 * reported complete: an active persistent request is inactive again, its
 * buffer the caller's. */
static void persistent_done(const MPI_Request *reqs, const int *idx, int n) {
  pthread_mutex_lock(&lock);
  for (int j = 0; j < n && npersistents > 0; j++) {
    int i = idx != NULL ? idx[j] : j;
    if (i < 0 || reqs[i] == MPI_REQUEST_NULL) continue;
    persistent *p = persistent_of(key_of(&reqs[i], sizeof reqs[i]));
    if (p == NULL || !p->active) continue;
    p->active = 0;
    if (p->recv) recv_done(p->key, 1);
  }
  pthread_mutex_unlock(&lock);
}

static void persistent_started(const MPI_Request *r) {
  pthread_mutex_lock(&lock);
  persistent *p = persistent_of(key_of(r, sizeof *r));
  if (p != NULL && !p->active) {
    p->active = 1;
    if (p->recv) recv_posted(p->key, p->buf, p->count, p->type, "MPI_Start", 1);
  }
  pthread_mutex_unlock(&lock);
}

int MPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                  MPI_Request *request) {
  int rc = PMPI_Send_init(buf, count, datatype, dest, tag, comm, request);
  persistent_made(rc, request, 0, buf, count, datatype, "MPI_Send_init");
  return rc;
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request) {
  int rc = PMPI_Ssend_init(buf, count, datatype, dest, tag, comm, request);
  persistent_made(rc, request, 0, buf, count, datatype, "MPI_Ssend_init");
  return rc;
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request) {
  int rc = PMPI_Bsend_init(buf, count, datatype, dest, tag, comm, request);
  persistent_made(rc, request, 0, buf, count, datatype, "MPI_Bsend_init");
  return rc;
}

int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request) {
  int rc = PMPI_Rsend_init(buf, count, datatype, dest, tag, comm, request);
  persistent_made(rc, request, 0, buf, count, datatype, "MPI_Rsend_init");
  return rc;
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                  MPI_Request *request) {
  int rc = PMPI_Recv_init(buf, count, datatype, source, tag, comm, request);
  persistent_made(rc, request, 1, buf, count, datatype, "MPI_Recv_init");
  return rc;
}

#if MPI_VERSION >= 4
/* MPI 4.0's persistent collectives (MPICH 4.0 has them, Open MPI 4.1 does
 * not): requests like the above, started and completed the same way; the
 * buffer MPI writes while one is active counts as a receive's (a
 * broadcast's on every rank but the root). */
int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request) {
  int rc = PMPI_Barrier_init(comm, info, request);
  persistent_made(rc, request, 0, NULL, 0, MPI_BYTE, "MPI_Barrier_init");
  return rc;
}

int MPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
                   MPI_Request *request) {
  int me = -1;
  int rc = PMPI_Bcast_init(buffer, count, datatype, root, comm, info, request);
  if (rc == MPI_SUCCESS && PMPI_Comm_rank(comm, &me) != MPI_SUCCESS) me = root; /* then not watched */
  persistent_made(rc, request, me != root, buffer, count, datatype, "MPI_Bcast_init");
  return rc;
}

int MPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                       MPI_Info info, MPI_Request *request) {
  int rc = PMPI_Allreduce_init(sendbuf, recvbuf, count, datatype, op, comm, info, request);
  persistent_made(rc, request, 1, recvbuf, count, datatype, "MPI_Allreduce_init");
  return rc;
}

int MPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
  int size = 0;
  int rc = PMPI_Allgather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request);
  if (rc == MPI_SUCCESS && (PMPI_Comm_size(comm, &size) != MPI_SUCCESS || size <= 0 || recvcount > INT_MAX / size))
    size = 0; /* then not watched */
  persistent_made(rc, request, size > 0, recvbuf, recvcount * size, recvtype, "MPI_Allgather_init");
  return rc;
}
#endif

int MPI_Start(MPI_Request *request) {
  int rc = PMPI_Start(request);
  if (rc == MPI_SUCCESS) persistent_started(request);
  return rc;
}

int MPI_Startall(int count, MPI_Request array_of_requests[]) {
  int rc = PMPI_Startall(count, array_of_requests);
  for (int i = 0; rc == MPI_SUCCESS && i < count; i++) persistent_started(&array_of_requests[i]);
  return rc;
}

/* The requests of before[0..n) that a completing call set to null. */
static void forget_completed(const MPI_Request *before, const MPI_Request *after, int n) {
  pthread_mutex_lock(&lock);
  for (int i = 0; i < n; i++)
    if (before[i] != MPI_REQUEST_NULL && after[i] == MPI_REQUEST_NULL) {
      uint64_t k = key_of(&before[i], sizeof before[i]);
      (void)drop(&kinds[K_REQUEST], k);
      recv_done(k, 1);
      if (nidups > 0) idup_done(k, 1);
    }
  pthread_mutex_unlock(&lock);
}

int MPI_Request_free(MPI_Request *request) {
  FAULT("MPI_Request_free");
  MPI_Request r = *request;
  int rc = PMPI_Request_free(request);
  if (rc == MPI_SUCCESS) {
    FORGET(K_REQUEST, r);
    uint64_t k = key_of(&r, sizeof r);
    pthread_mutex_lock(&lock);
    recv_done(k, 0); /* a receive freed before it completed: its buffer is MPI's for good */
    persistent *p = persistent_of(k);
    if (p != NULL) *p = persistents[--npersistents]; /* its handle may come back for another request */
    idup_done(k, 0);                                 /* (erroneous for a nonblocking collective's) */
    pthread_mutex_unlock(&lock);
  }
  return rc;
}

/* Whether r is a request MPI_Isend made (one of its objects, for a
 * shared handle). */
static int made_by_isend(MPI_Request r) {
  uint64_t k = key_of(&r, sizeof r);
  int yes = 0;
  pthread_mutex_lock(&lock);
  const kind *t = &kinds[K_REQUEST];
  if (k != 0 && t->cap != 0) {
    const slot *e = &t->s[find(t, k)];
    for (size_t m = 0; e->key == k && m < MAKERS_PER_HANDLE && !yes; m++)
      yes = e->by[m] != NULL && e->nby[m] > 0 && strcmp(e->by[m], "MPI_Isend") == 0;
  }
  pthread_mutex_unlock(&lock);
  return yes;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
  FAULT("MPI_Test");
  if ((armed || sends_stall || sends_stick) && made_by_isend(*request)) {
    if (sends_stick && stuck_send(request, 0)) {
      fired++;
      return MPI_ERR_OTHER;
    }
    if (fault_hit_when("MPI_Test", FORM_SEND)) {
      if (sends_stick) (void)stuck_send(request, 1);
      return MPI_ERR_OTHER;
    }
    if (sends_stall) {
      *flag = 0;
      return MPI_SUCCESS;
    }
  }
  MPI_Request r = *request;
  int rc = PMPI_Test(request, flag, status);
  forget_completed(&r, request, 1);
  if (rc == MPI_SUCCESS && *flag) persistent_done(request, NULL, 1);
  return rc;
}

int MPI_Wait(MPI_Request *request, MPI_Status *status) {
  MPI_Request r = *request;
  int rc = PMPI_Wait(request, status);
  forget_completed(&r, request, 1);
  if (rc == MPI_SUCCESS) persistent_done(request, NULL, 1);
  return rc;
}

/* A completing call over an array: a copy of the handles before it, on
 * the stack when short. */
#define OVER_ARRAY(n, reqs, call)                                                                \
  do {                                                                                           \
    MPI_Request stack_copy[ARRAY_ON_STACK] = {0};                                                \
    MPI_Request *copy = (n) <= ARRAY_ON_STACK ? stack_copy : malloc((size_t)(n) * sizeof *copy); \
    if (copy == NULL) failed_bookkeeping = 1;                                                    \
    else if ((n) > 0) memcpy(copy, (reqs), (size_t)(n) * sizeof *copy);                          \
    rc = (call);                                                                                 \
    if (copy != NULL) forget_completed(copy, (reqs), (n));                                       \
    if (copy != stack_copy) free(copy);                                                          \
  } while (0)

/* The indices a Testsome/Waitsome returned complete (persistent_done). */
static void some_done(int rc, const MPI_Request *reqs, const int *outcount, const int *indices) {
  if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && *outcount != MPI_UNDEFINED)
    persistent_done(reqs, indices, *outcount);
}

int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                 MPI_Status array_of_statuses[]) {
  FAULT("MPI_Testsome");
  int rc;
  OVER_ARRAY(incount, array_of_requests,
             PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses));
  some_done(rc, array_of_requests, outcount, array_of_indices);
  if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED && *outcount > 0 && fault_hit_when("MPI_Testsome", FORM_AFTER)) {
    /* "/after": the completed requests stay freed and null; what the
     * standard leaves undefined is made unusable */
    for (int i = 0; i < *outcount; i++) array_of_indices[i] = -1;
    *outcount = incount + 1;
    return MPI_ERR_OTHER;
  }
  return rc;
}

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                 MPI_Status array_of_statuses[]) {
  int rc;
  OVER_ARRAY(incount, array_of_requests,
             PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses));
  some_done(rc, array_of_requests, outcount, array_of_indices);
  return rc;
}

/* The statuses a Testall/Waitall is given: the caller's, or, for
 * MPI_STATUSES_IGNORE, this library's (on the stack when short), so that
 * an MPI_ERR_IN_STATUS can be read (all_done). NULL when none could be
 * had: the caller's MPI_STATUSES_IGNORE is passed on, the bookkeeping marked
 * incomplete. */
static MPI_Status *statuses_for(MPI_Status *given, int n, MPI_Status *own) {
  if (given != MPI_STATUSES_IGNORE) return given;
  if (n <= ARRAY_ON_STACK) return own;
  MPI_Status *s = n > 0 ? malloc((size_t)n * sizeof *s) : NULL;
  if (s == NULL) failed_bookkeeping = 1;
  return s;
}

/* What a Testall/Waitall over reqs[0..n) completed, by its result: all of
 * them on success (with flag, for Testall); with MPI_ERR_IN_STATUS, each
 * whose status's MPI_ERROR is not MPI_ERR_PENDING (MPI 4.0 §3.7.5: it
 * completed, well or with that error; a persistent request is inactive
 * again either way); with any other error, none (an error of the call
 * itself). st may be NULL (statuses_for): then an MPI_ERR_IN_STATUS
 * completes none. */
static void all_done(int rc, const MPI_Request *reqs, int n, const MPI_Status *st) {
  if (rc == MPI_SUCCESS) {
    persistent_done(reqs, NULL, n);
    return;
  }
  if (rc != MPI_ERR_IN_STATUS || st == NULL) return;
  for (int i = 0; i < n; i++)
    if (st[i].MPI_ERROR != MPI_ERR_PENDING) persistent_done(reqs, &i, 1);
}

int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[]) {
  FAULT("MPI_Testall");
  if (testall_stall) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  int rc;
  MPI_Status own[ARRAY_ON_STACK];
  MPI_Status *st = statuses_for(array_of_statuses, count, own);
  OVER_ARRAY(count, array_of_requests,
             PMPI_Testall(count, array_of_requests, flag, st != NULL ? st : array_of_statuses));
  if (rc != MPI_SUCCESS || *flag) all_done(rc, array_of_requests, count, st);
  if (st != own && st != array_of_statuses) free(st);
  return rc;
}

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]) {
  int rc;
  MPI_Status own[ARRAY_ON_STACK];
  MPI_Status *st = statuses_for(array_of_statuses, count, own);
  OVER_ARRAY(count, array_of_requests, PMPI_Waitall(count, array_of_requests, st != NULL ? st : array_of_statuses));
  all_done(rc, array_of_requests, count, st);
  if (st != own && st != array_of_statuses) free(st);
  return rc;
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int *indx, int *flag, MPI_Status *status) {
  int rc;
  OVER_ARRAY(count, array_of_requests, PMPI_Testany(count, array_of_requests, indx, flag, status));
  if (rc == MPI_SUCCESS && *flag && *indx != MPI_UNDEFINED) persistent_done(array_of_requests, indx, 1);
  return rc;
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int *indx, MPI_Status *status) {
  int rc;
  OVER_ARRAY(count, array_of_requests, PMPI_Waitany(count, array_of_requests, indx, status));
  if (rc == MPI_SUCCESS && *indx != MPI_UNDEFINED) persistent_done(array_of_requests, indx, 1);
  return rc;
}

int MPI_Cancel(MPI_Request *request) {
  FAULT("MPI_Cancel");
  return PMPI_Cancel(request);
}

/* ---------------------------------------------------------------- other calls a fault can hit */

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  FAULT_ON("MPI_Comm_set_errhandler", comm);
  return PMPI_Comm_set_errhandler(comm, errhandler);
}

int MPI_Comm_rank(MPI_Comm comm, int *rank) {
  FAULT_ON("MPI_Comm_rank", comm);
  return PMPI_Comm_rank(comm, rank);
}

int MPI_Comm_size(MPI_Comm comm, int *size) {
  FAULT_ON("MPI_Comm_size", comm);
  return PMPI_Comm_size(comm, size);
}

int MPI_Is_thread_main(int *flag) {
  FAULT("MPI_Is_thread_main");
  return PMPI_Is_thread_main(flag);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  FAULT_ON("MPI_Allreduce", comm);
  return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  FAULT_ON("MPI_Bcast", comm);
  return PMPI_Bcast(buffer, count, datatype, root, comm);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  FAULT_ON("MPI_Allgather", comm);
  return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

/* ---------------------------------------------------------------- windows */

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win) {
  int rc = PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
  if (rc == MPI_SUCCESS && *win != MPI_WIN_NULL) NOTE(K_WIN, *win, "MPI_Win_allocate");
  return rc;
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win) {
  int rc = PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win);
  if (rc == MPI_SUCCESS && *win != MPI_WIN_NULL) NOTE(K_WIN, *win, "MPI_Win_allocate_shared");
  return rc;
}

int MPI_Win_free(MPI_Win *win) {
  MPI_Win w = *win;
  int rc = PMPI_Win_free(win);
  if (rc == MPI_SUCCESS) FORGET(K_WIN, w);
  return rc;
}

/* ---------------------------------------------------------------- datatypes */

static void note_type(int rc, const MPI_Datatype *t, const char *by) {
  if (rc == MPI_SUCCESS && *t != MPI_DATATYPE_NULL) NOTE(K_TYPE, *t, by);
}

int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype) {
  int rc = PMPI_Type_contiguous(count, oldtype, newtype);
  note_type(rc, newtype, "MPI_Type_contiguous");
  return rc;
}

int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype) {
  int rc = PMPI_Type_vector(count, blocklength, stride, oldtype, newtype);
  note_type(rc, newtype, "MPI_Type_vector");
  return rc;
}

int MPI_Type_create_struct(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                           const MPI_Datatype array_of_types[], MPI_Datatype *newtype) {
  int rc = PMPI_Type_create_struct(count, array_of_blocklengths, array_of_displacements, array_of_types, newtype);
  note_type(rc, newtype, "MPI_Type_create_struct");
  return rc;
}

int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype) {
  int rc = PMPI_Type_dup(oldtype, newtype);
  note_type(rc, newtype, "MPI_Type_dup");
  return rc;
}

int MPI_Type_free(MPI_Datatype *datatype) {
  MPI_Datatype t = *datatype;
  int rc = PMPI_Type_free(datatype);
  if (rc == MPI_SUCCESS) FORGET(K_TYPE, t);
  return rc;
}

/* ---------------------------------------------------------------- groups */

static void note_group(int rc, const MPI_Group *g, const char *by) {
  /* MPI_GROUP_EMPTY is predefined: freeing it is allowed and a no-op */
  if (rc == MPI_SUCCESS && *g != MPI_GROUP_NULL && *g != MPI_GROUP_EMPTY) NOTE(K_GROUP, *g, by);
}

int MPI_Comm_group(MPI_Comm comm, MPI_Group *group) {
  int rc = PMPI_Comm_group(comm, group);
  note_group(rc, group, "MPI_Comm_group");
  return rc;
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup) {
  int rc = PMPI_Group_incl(group, n, ranks, newgroup);
  note_group(rc, newgroup, "MPI_Group_incl");
  return rc;
}

int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup) {
  int rc = PMPI_Group_excl(group, n, ranks, newgroup);
  note_group(rc, newgroup, "MPI_Group_excl");
  return rc;
}

int MPI_Group_free(MPI_Group *group) {
  MPI_Group g = *group;
  int rc = PMPI_Group_free(group);
  if (rc == MPI_SUCCESS) FORGET(K_GROUP, g);
  return rc;
}

/* ---------------------------------------------------------------- info objects */

int MPI_Info_create(MPI_Info *info) {
  int rc = PMPI_Info_create(info);
  if (rc == MPI_SUCCESS && *info != MPI_INFO_NULL) NOTE(K_INFO, *info, "MPI_Info_create");
  return rc;
}

int MPI_Info_dup(MPI_Info info, MPI_Info *newinfo) {
  int rc = PMPI_Info_dup(info, newinfo);
  if (rc == MPI_SUCCESS && *newinfo != MPI_INFO_NULL) NOTE(K_INFO, *newinfo, "MPI_Info_dup");
  return rc;
}

int MPI_Info_free(MPI_Info *info) {
  MPI_Info i = *info;
  int rc = PMPI_Info_free(info);
  if (rc == MPI_SUCCESS) FORGET(K_INFO, i);
  return rc;
}

/* ---------------------------------------------------------------- memory */

int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr) {
  int rc = PMPI_Alloc_mem(size, info, baseptr);
  void *p = NULL;
  if (rc == MPI_SUCCESS) memcpy(&p, baseptr, sizeof p); /* baseptr: the address of the caller's pointer */
  if (p != NULL) NOTE(K_MEM, p, "MPI_Alloc_mem");
  return rc;
}

int MPI_Free_mem(void *base) {
  int rc = PMPI_Free_mem(base);
  if (rc == MPI_SUCCESS) FORGET(K_MEM, base);
  return rc;
}

/* ---------------------------------------------------------------- the report */

/* One line for kind t; 1 when it has live objects. */
static int report(int rank, const kind *t) {
  if (t->live == 0) return 0;
  const char *by[CREATORS_REPORTED];
  size_t n[CREATORS_REPORTED], nby = 0, other = 0;
  for (size_t i = 0; i < t->cap; i++)
    for (size_t m = 0; t->s[i].key != 0 && m < MAKERS_PER_HANDLE; m++) {
      if (t->s[i].nby[m] == 0) continue;
      size_t j = 0;
      while (j < nby && strcmp(by[j], t->s[i].by[m]) != 0) j++;
      if (j == nby && nby < CREATORS_REPORTED) {
        by[nby] = t->s[i].by[m];
        n[nby++] = 0;
      }
      if (j < nby) n[j] += t->s[i].nby[m];
      else other += t->s[i].nby[m];
    }
  char line[1024];
  int at = snprintf(line, sizeof line, "mpi_objects: rank %d: %zu %s left at MPI_Finalize (", rank, t->live,
                    t->live == 1 ? t->one : t->many);
  for (size_t j = 0; j < nby && at > 0 && (size_t)at < sizeof line; j++)
    at += snprintf(line + at, sizeof line - (size_t)at, "%s%zu from %s", j ? ", " : "", n[j], by[j]);
  if (other > 0 && at > 0 && (size_t)at < sizeof line)
    at += snprintf(line + at, sizeof line - (size_t)at, ", %zu from other calls", other);
  if (at > 0 && (size_t)at < sizeof line) snprintf(line + at, sizeof line - (size_t)at, ")");
  fprintf(stderr, "%s\n", line);
  return 1;
}

int MPI_Finalize(void) {
  int rank = -1, left = 0;
  size_t made = 0, live = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  check_live_mapped();
  pthread_mutex_lock(&lock);
  for (int k = 0; k < K_COUNT; k++) {
    left |= report(rank, &kinds[k]);
    made += kinds[k].made;
    live += kinds[k].live;
  }
  const char *dir = getenv("SYNCQ_MPI_OBJECTS_OUT");
  if (dir != NULL && *dir != '\0') {
    char path[4096];
    snprintf(path, sizeof path, "%s/mpi_objects.%d", dir, rank);
    FILE *f = fopen(path, "w");
    if (f != NULL) {
      fprintf(f, "made %zu left %zu\n", made, live);
      fclose(f);
    }
  }
  if (unmapped_live) left = 1; /* said when it happened (munmap) */
  if (failed_bookkeeping)
    fprintf(stderr, "mpi_objects: rank %d: out of memory for the bookkeeping: the counts above are a lower bound\n",
            rank);
  pthread_mutex_unlock(&lock);
  fflush(stderr);
  int rc = PMPI_Finalize();
  if (left) exit(MPI_OBJECTS_EXIT); /* after MPI's own exit protocol, so mpirun sees a plain failure */
  return rc;
}
