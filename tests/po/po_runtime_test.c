/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_runtime_test.c — the postoffice as a runtime to build on: pids that
 * are recycled with a generation (100,000 spawns and joins through a small
 * table, stale pids refused, a stale sender's message never reaching the
 * slot's next process), attach into a full table, schedulers started under
 * RLIMIT_NPROC, receive with a deadline, sleeping fibers, send_after,
 * main as a process (syncq_po_run), monitors, and detached processes
 * (their exit frees the slot: 100,000 through a 4-slot table).
 *
 * The same source is built once per backend (PO_TEST_BACKEND: "thread",
 * "fiber"). Thread and process counts are fixed numbers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_plan.h"

#include "syncq/clock.h"
#include "syncq/platform.h"
#include "syncq/po.h"

#include "test_sanitizer.h"
#ifndef PO_TEST_BACKEND
#define PO_TEST_BACKEND "thread"
#endif
#define FIBERS (strcmp(PO_TEST_BACKEND, "fiber") == 0)

/* Spawn+join cycles through a table of SMALL_TABLE live processes. */
/* Spawn+join cycles through a 4-slot table: past 8,192 (where a table of
 * never-reused pids ran out) and 2,500 reuses per slot; a fixed count on
 * every build (each is a kernel thread's creation on the thread backend,
 * milliseconds under qemu-user). */
#define CYCLES 10000
#define SMALL_TABLE 4u
#define STALE_ROUNDS (SANITIZED ? 300 : 3000)
#define TEST_STACK (SANITIZED ? 256u * 1024u : 0u)

static syncq_po_system *new_system(uint32_t max_procs, uint32_t schedulers) {
  syncq_po_config cfg = {NULL, max_procs, TEST_STACK, 0, PO_TEST_BACKEND, schedulers, false};
  syncq_po_system *s = NULL;
  int r = syncq_po_create(&cfg, &s);
  if (r != SYNCQ_OK) fail_msg("creating a %s postoffice: %s", PO_TEST_BACKEND, syncq_strerror(r));
  return s;
}

static void send_word(syncq_po_proc *me, syncq_po_pid to, uint32_t type, int64_t word) {
  syncq_po_msg *m;
  assert_int_equal(syncq_po_get(me, sizeof word, &m), SYNCQ_OK);
  m->type = type;
  memcpy(m->data, &word, sizeof word);
  assert_int_equal(syncq_po_send(me, to, m, SYNCQ_PO_LINK), SYNCQ_OK);
}

static int64_t word_of(const syncq_po_msg *m) {
  int64_t w;
  memcpy(&w, m->data, sizeof w);
  return w;
}

/* ------------------------------------------------ pids recycled */

static void nothing(syncq_po_proc *self, void *arg) {
  (void)self;
  (void)arg;
}

static int cmp_pid(const void *a, const void *b) {
  syncq_po_pid x = *(const syncq_po_pid *)a, y = *(const syncq_po_pid *)b;
  return (x > y) - (x < y);
}

/* max_procs bounds live processes, not spawns: 100,000 spawn+join cycles
 * (up to SMALL_TABLE live at once) through a 4-process table, every pid
 * distinct (the generations do not wrap this soon). */
static void test_spawn_join_cycles(void **state) {
  (void)state;
  syncq_po_system *s = new_system(SMALL_TABLE, 2);
  syncq_po_pid *pids = malloc(CYCLES * sizeof *pids);
  assert_non_null(pids);
  syncq_po_pid window[SMALL_TABLE];
  for (int i = 0; i < CYCLES; i++) {
    int k = i % (int)SMALL_TABLE;
    if (i >= (int)SMALL_TABLE) assert_int_equal(syncq_po_join(s, window[k]), SYNCQ_OK);
    int r = syncq_po_spawn(s, nothing, NULL, &window[k]);
    if (r != SYNCQ_OK) fail_msg("spawn %d: %s (%s)", i, syncq_strerror(r), syncq_po_limit_reason(s));
    pids[i] = window[k];
    assert_true(syncq_po_live(s) <= SMALL_TABLE);
  }
  assert_int_equal(syncq_po_spawn(s, nothing, NULL, NULL), SYNCQ_ELIMIT); /* 4 live (exited, unjoined) */
  assert_string_equal(syncq_po_limit_reason(s), "max_procs");
  for (int k = 0; k < (int)SMALL_TABLE; k++) assert_int_equal(syncq_po_join(s, window[k]), SYNCQ_OK);
  assert_int_equal(syncq_po_live(s), 0);
  assert_int_equal(syncq_po_count(s), CYCLES);
  /* a fresh table hands out 0, 1, 2, ... */
  for (int i = 0; i < (int)SMALL_TABLE; i++) assert_int_equal(pids[i], i);
  qsort(pids, CYCLES, sizeof *pids, cmp_pid);
  for (int i = 1; i < CYCLES; i++)
    if (pids[i] == pids[i - 1]) fail_msg("pid %d handed out twice", pids[i]);
  free(pids);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

/* Spawn, reply, join from many parents at once on a small table: fiber
 * parents (threads on the thread backend) and attached threads, each
 * spawning a child that replies and exits, then joining it (the child
 * has usually exited by then: the fiber backend's one-lock join) and
 * joining it again (SYNCQ_ENOENT: the pid is stale). A spawn refused
 * by the full table is retried. Every pid handed out is distinct (the
 * generations), and the table ends empty. */
#define CONC_FIBER_PARENTS 4
#define CONC_THREAD_PARENTS 2
#define CONC_PARENTS (CONC_FIBER_PARENTS + CONC_THREAD_PARENTS)
#define CONC_ROUNDS (SANITIZED ? 150 : 1500)
#define CONC_TABLE 9u /* the 6 parents and 3 children at once: spawns are refused, and retried */

typedef struct conc_parent {
  syncq_po_system *sys;
  syncq_po_proc *self; /* the attached threads' (set by conc_thread) */
  syncq_po_pid *pids;  /* [CONC_ROUNDS] the children's */
  int failures;        /* rounds that went wrong (checked by the test) */
} conc_parent;

static void conc_child(syncq_po_proc *self, void *arg) {
  syncq_po_pid parent = (syncq_po_pid)(intptr_t)arg;
  syncq_po_msg *m;
  if (syncq_po_get(self, sizeof(int64_t), &m) != SYNCQ_OK) return;
  m->type = 1;
  int64_t w = syncq_po_pid_of(self);
  memcpy(m->data, &w, sizeof w);
  (void)syncq_po_send(self, parent, m, SYNCQ_PO_LINK);
}

static void conc_rounds(syncq_po_proc *self, conc_parent *c) {
  for (int i = 0; i < CONC_ROUNDS; i++) {
    syncq_po_pid child;
    int r;
    while ((r = syncq_po_spawn(c->sys, conc_child, (void *)(intptr_t)syncq_po_pid_of(self), &child)) == SYNCQ_ELIMIT)
      (void)syncq_po_yield(self);
    if (r != SYNCQ_OK) {
      fprintf(stderr, "spawn %d: %s\n", i, syncq_strerror(r));
      c->failures++;
      return;
    }
    c->pids[i] = child;
    syncq_po_msg *m;
    if ((r = syncq_po_recv_blocking(self, &m)) != SYNCQ_OK) {
      fprintf(stderr, "recv %d: %s\n", i, syncq_strerror(r));
      c->failures++;
      return;
    }
    if (word_of(m) != child) c->failures++; /* the reply names its sender */
    syncq_po_free(self, m);
    int j1 = syncq_po_join(c->sys, child), j2 = syncq_po_join(c->sys, child);
    if (j1 != SYNCQ_OK) c->failures++;
    if (j2 != SYNCQ_ENOENT) c->failures++; /* stale now */
    if (j1 != SYNCQ_OK || j2 != SYNCQ_ENOENT) fprintf(stderr, "round %d child %d: %d %d\n", i, child, j1, j2);
  }
}

static void conc_fiber(syncq_po_proc *self, void *arg) { conc_rounds(self, arg); }

static void *conc_thread(void *arg) {
  conc_parent *c = arg;
  if (syncq_po_attach(c->sys, &c->self) != SYNCQ_OK) { /* attach may use the reserve, spawn may not */
    c->failures++;
    return NULL;
  }
  conc_rounds(c->self, c);
  if (syncq_po_detach(c->self) != SYNCQ_OK) c->failures++; /* by its owner, this thread */
  return NULL;
}

static void test_concurrent_spawn_join(void **state) {
  (void)state;
  syncq_po_system *s = new_system(CONC_TABLE, 2);
  conc_parent par[CONC_PARENTS];
  syncq_po_pid *all = malloc((size_t)CONC_PARENTS * CONC_ROUNDS * sizeof *all);
  assert_non_null(all);
  for (int k = 0; k < CONC_PARENTS; k++) par[k] = (conc_parent){s, NULL, all + (size_t)k * CONC_ROUNDS, 0};
  syncq_po_pid fp[CONC_FIBER_PARENTS];
  for (int k = 0; k < CONC_FIBER_PARENTS; k++)
    assert_int_equal(syncq_po_spawn(s, conc_fiber, &par[k], &fp[k]), SYNCQ_OK);
  pthread_t t[CONC_THREAD_PARENTS];
  for (int k = 0; k < CONC_THREAD_PARENTS; k++)
    assert_int_equal(pthread_create(&t[k], NULL, conc_thread, &par[CONC_FIBER_PARENTS + k]), 0);
  for (int k = 0; k < CONC_THREAD_PARENTS; k++) assert_int_equal(pthread_join(t[k], NULL), 0);
  for (int k = 0; k < CONC_FIBER_PARENTS; k++) assert_int_equal(syncq_po_join(s, fp[k]), SYNCQ_OK);
  for (int k = 0; k < CONC_PARENTS; k++) {
    if (par[k].failures) fprintf(stderr, "parent %d: %d\n", k, par[k].failures);
    assert_int_equal(par[k].failures, 0);
  }
  assert_int_equal(syncq_po_live(s), 0);
  assert_int_equal(syncq_po_count(s), CONC_THREAD_PARENTS + CONC_FIBER_PARENTS + CONC_PARENTS * CONC_ROUNDS);
  size_t n = (size_t)CONC_PARENTS * CONC_ROUNDS;
  qsort(all, n, sizeof *all, cmp_pid);
  for (size_t i = 1; i < n; i++)
    if (all[i] == all[i - 1]) fail_msg("pid %d handed out twice", all[i]);
  free(all);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

/* A process that reports each message's word to main, until type 0. */
typedef struct echo_arg {
  syncq_po_pid main;
} echo_arg;

static void echo(syncq_po_proc *self, void *arg) {
  echo_arg *a = arg;
  for (;;) {
    syncq_po_msg *m;
    if (syncq_po_recv_blocking(self, &m) != SYNCQ_OK) return;
    uint32_t type = m->type;
    int64_t w = word_of(m);
    syncq_po_free(self, m);
    send_word(self, a->main, 1, w);
    if (type == 0) return;
  }
}

/* A stale pid: send gets SYNCQ_EDEAD and join SYNCQ_ENOENT, before and
 * after its slot has a new process, which never sees the stale message. */
static void test_stale_pids(void **state) {
  (void)state;
  syncq_po_system *s = new_system(2, 2);                         /* main and one process */
  assert_int_equal(syncq_po_pid_generations(s), 1u << (31 - 5)); /* 2 + 16 slots: 5 bits */
  assert_int_equal(syncq_po_pid_generations(NULL), 0);
  assert_int_equal(syncq_po_live(NULL), 0);
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
  echo_arg a = {syncq_po_pid_of(me)};
  syncq_po_pid first;
  assert_int_equal(syncq_po_spawn(s, echo, &a, &first), SYNCQ_OK);
  send_word(me, first, 0, 7);
  syncq_po_msg *m;
  assert_int_equal(syncq_po_recv_blocking(me, &m), SYNCQ_OK);
  assert_int_equal(word_of(m), 7);
  assert_int_equal(syncq_po_join(s, first), SYNCQ_OK);
  assert_int_equal(syncq_po_send(me, first, m, SYNCQ_PO_LINK), SYNCQ_EDEAD);
  assert_int_equal(syncq_po_send(me, first, m, SYNCQ_PO_COPY), SYNCQ_EDEAD);
  assert_int_equal(syncq_po_join(s, first), SYNCQ_ENOENT);
  /* spawn and join until first's slot is taken again (a later generation) */
  syncq_po_pid next;
  int rounds = 0;
  for (;;) {
    assert_int_equal(syncq_po_spawn(s, echo, &a, &next), SYNCQ_OK);
    assert_int_not_equal(next, first);
    if ((next & 31) == (first & 31)) break;
    send_word(me, next, 0, 0);
    syncq_po_msg *r;
    assert_int_equal(syncq_po_recv_blocking(me, &r), SYNCQ_OK);
    syncq_po_free(me, r);
    assert_int_equal(syncq_po_join(s, next), SYNCQ_OK);
    assert_true(++rounds < 64);
  }
  /* next lives in first's slot: first is still stale */
  assert_int_equal(syncq_po_send(me, first, m, SYNCQ_PO_LINK), SYNCQ_EDEAD);
  assert_int_equal(syncq_po_join(s, first), SYNCQ_ENOENT);
  /* a pid of a generation not handed out yet: nobody has it */
  syncq_po_pid future = (syncq_po_pid)(((uint32_t)next + (1u << 5)) & 0x7fffffffu);
  assert_int_equal(syncq_po_send(me, future, m, SYNCQ_PO_LINK), SYNCQ_ENOENT);
  assert_int_equal(syncq_po_join(s, future), SYNCQ_ENOENT);
  assert_int_equal(syncq_po_send(me, -5, m, SYNCQ_PO_LINK), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_send(me, 31, m, SYNCQ_PO_LINK), SYNCQ_EINVAL); /* slot 31 >= 18 */
  assert_int_equal(syncq_po_join(s, 30), SYNCQ_EINVAL);
  /* the new process answers only what was sent to it */
  assert_int_equal(syncq_po_free(me, m), SYNCQ_OK);
  send_word(me, next, 0, 42);
  assert_int_equal(syncq_po_recv_blocking(me, &m), SYNCQ_OK);
  assert_int_equal(word_of(m), 42);
  assert_int_equal(syncq_po_try_recv(me, &m), SYNCQ_EMPTY);
  assert_int_equal(syncq_po_join(s, next), SYNCQ_OK);
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

/* Stale senders in the act: a thread keeps sending to whichever pid is
 * current while one-slot processes come and go; each process checks that
 * every message it receives was addressed to it (its own pid in the
 * payload), never to the slot's earlier process. */
typedef struct stale_race {
  syncq_po_system *sys;
  _Atomic(syncq_po_pid) current; /* -1: none yet */
  _Atomic(int) stop;
  _Atomic(long) wrong, delivered, bad_status;
} stale_race;

static void stale_victim(syncq_po_proc *self, void *arg) {
  stale_race *r = arg;
  syncq_po_msg *m;
  for (int i = 0; i < 200; i++) {
    for (int k = 0; k < 8 && syncq_po_try_recv(self, &m) == SYNCQ_OK; k++) { /* bounded: senders never stop */
      if (word_of(m) != syncq_po_pid_of(self)) atomic_fetch_add(&r->wrong, 1);
      atomic_fetch_add(&r->delivered, 1);
      syncq_po_free(self, m);
    }
    syncq_po_yield(self);
  }
}

static void *stale_sender(void *arg) {
  stale_race *r = arg;
  syncq_po_proc *me;
  if (syncq_po_attach(r->sys, &me) != SYNCQ_OK) {
    atomic_fetch_add(&r->bad_status, 1);
    return NULL;
  }
  syncq_po_msg *m = NULL;
  while (!atomic_load(&r->stop)) {
    syncq_po_pid to = atomic_load(&r->current);
    if (to < 0) continue;
    if (m == NULL && syncq_po_get(me, sizeof(int64_t), &m) != SYNCQ_OK) {
      atomic_fetch_add(&r->bad_status, 1);
      break;
    }
    int64_t w = to;
    memcpy(m->data, &w, sizeof w);
    int st = syncq_po_send(me, to, m, (w & 1) ? SYNCQ_PO_COPY : SYNCQ_PO_LINK);
    if (st == SYNCQ_OK) m = NULL;
    else if (st != SYNCQ_EDEAD) atomic_fetch_add(&r->bad_status, 1); /* cmocka's asserts belong to the main thread */
    sched_yield();
  }
  if (m != NULL) syncq_po_free(me, m);
  if (syncq_po_detach(me) != SYNCQ_OK) atomic_fetch_add(&r->bad_status, 1);
  return NULL;
}

static void test_stale_sender_race(void **state) {
  (void)state;
  stale_race r = {.sys = new_system(3, 2)}; /* two senders and one process */
  atomic_init(&r.current, -1);
  atomic_init(&r.stop, 0);
  atomic_init(&r.wrong, 0);
  atomic_init(&r.delivered, 0);
  atomic_init(&r.bad_status, 0);
  pthread_t t[2];
  for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&t[i], NULL, stale_sender, &r), 0);
  for (int i = 0; i < STALE_ROUNDS; i++) {
    syncq_po_pid p;
    assert_int_equal(syncq_po_spawn(r.sys, stale_victim, &r, &p), SYNCQ_OK);
    atomic_store(&r.current, p);
    assert_int_equal(syncq_po_join(r.sys, p), SYNCQ_OK);
  }
  atomic_store(&r.stop, 1);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  assert_int_equal(atomic_load(&r.wrong), 0);
  assert_int_equal(atomic_load(&r.bad_status), 0);
  assert_true(atomic_load(&r.delivered) > 0);
  assert_int_equal(syncq_po_destroy(r.sys), SYNCQ_OK);
}

/* A table full of processes parked in recv: a thread may still attach
 * (the reserve), wake them, and the system is destroyed cleanly. */
static void parked(syncq_po_proc *self, void *arg) {
  (void)arg;
  syncq_po_msg *m;
  if (syncq_po_recv_blocking(self, &m) == SYNCQ_OK) syncq_po_free(self, m);
}

static void test_attach_full_table(void **state) {
  (void)state;
  syncq_po_system *s = new_system(SMALL_TABLE, 2);
  syncq_po_pid pids[SMALL_TABLE];
  for (uint32_t i = 0; i < SMALL_TABLE; i++) assert_int_equal(syncq_po_spawn(s, parked, NULL, &pids[i]), SYNCQ_OK);
  assert_int_equal(syncq_po_spawn(s, parked, NULL, NULL), SYNCQ_ELIMIT);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_EBUSY);
  syncq_po_proc *att[SYNCQ_PO_ATTACH_RESERVE];
  for (uint32_t i = 0; i < SYNCQ_PO_ATTACH_RESERVE; i++) assert_int_equal(syncq_po_attach(s, &att[i]), SYNCQ_OK);
  syncq_po_proc *more;
  assert_int_equal(syncq_po_attach(s, &more), SYNCQ_ELIMIT); /* the reserve is used up too */
  assert_int_equal(syncq_po_live(s), SMALL_TABLE + SYNCQ_PO_ATTACH_RESERVE);
  for (uint32_t i = 1; i < SYNCQ_PO_ATTACH_RESERVE; i++) assert_int_equal(syncq_po_detach(att[i]), SYNCQ_OK);
  for (uint32_t i = 0; i < SMALL_TABLE; i++) send_word(att[0], pids[i], 0, 0);
  for (uint32_t i = 0; i < SMALL_TABLE; i++) assert_int_equal(syncq_po_join(s, pids[i]), SYNCQ_OK);
  assert_int_equal(syncq_po_detach(att[0]), SYNCQ_OK);
  assert_int_equal(syncq_po_live(s), 0);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

/* ------------------------------------------------ schedulers under RLIMIT_NPROC */

/* Tasks (threads) of user uid on the whole machine: RLIMIT_NPROC counts
 * them, each by its own credentials. Counted thread by thread: under
 * qemu-user setuid changes only the calling thread (qemu's own thread,
 * started before, stays root's), so a process's Uid is not its threads'. */
static long user_tasks(uid_t uid) {
  DIR *proc = opendir("/proc");
  if (proc == NULL) return -1;
  char path[600], line[256];
  long total = 0;
  struct dirent *e;
  while ((e = readdir(proc)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    snprintf(path, sizeof path, "/proc/%s/task", e->d_name);
    DIR *tasks = opendir(path);
    if (tasks == NULL) continue;
    struct dirent *t;
    while ((t = readdir(tasks)) != NULL) {
      if (t->d_name[0] < '0' || t->d_name[0] > '9') continue;
      snprintf(path, sizeof path, "/proc/%s/task/%s/status", e->d_name, t->d_name);
      FILE *f = fopen(path, "r");
      if (f == NULL) continue;
      long u = -1;
      while (fgets(line, sizeof line, f))
        if (strncmp(line, "Uid:", 4) == 0) u = strtol(line + 4, NULL, 10);
      fclose(f);
      if (u == (long)uid) total++;
    }
    closedir(tasks);
  }
  closedir(proc);
  return total;
}

static int create_retrying(const syncq_po_config *cfg, syncq_po_system **s) {
  int r = SYNCQ_ELIMIT;
  /* an exited scheduler leaves the user's task count a moment after its join */
  for (int i = 0; i < 50 && (r = syncq_po_create(cfg, s)) == SYNCQ_ELIMIT; i++) usleep(10000);
  return r;
}

/* The child's checks; its exit code says which failed. */
static int rlimit_child(void) {
  if (setgid(65534) != 0 || setuid(65534) != 0) return 10;
  long base = user_tasks(65534); /* ourselves included */
  if (base < 1) return 11;
  struct rlimit one_more = {(rlim_t)base + 1, (rlim_t)base + 1};
  if (setrlimit(RLIMIT_NPROC, &one_more) != 0) return 12;
  int pus = test_plan_machine_pus(); /* what the library's default (one scheduler per PU) asks for */
  syncq_po_system *s;
  if (!FIBERS) { /* a thread system starts no threads of its own */
    syncq_po_config cfg = {NULL, 8, TEST_STACK, 0, "thread", 0, false};
    if (syncq_po_create(&cfg, &s) != SYNCQ_OK) return 13;
    if (syncq_po_schedulers(s) != 0 || syncq_po_schedulers_reason(s) != NULL) return 14;
    return syncq_po_destroy(s) == SYNCQ_OK ? 0 : 15;
  }
  /* two schedulers asked for, one allowed: refused cleanly */
  syncq_po_config two = {NULL, 64, TEST_STACK, 0, "fiber", 2, false};
  if (syncq_po_create(&two, &s) != SYNCQ_ELIMIT) return 20;
  /* one per processing unit asked for: it runs on the one it got */
  syncq_po_config dflt = {NULL, 64, TEST_STACK, 0, "fiber", 0, false};
  if (create_retrying(&dflt, &s) != SYNCQ_OK) return 21;
  if (syncq_po_schedulers(s) != 1) return 22;
  const char *why = syncq_po_schedulers_reason(s);
  if (pus > 1 ? why == NULL || strcmp(why, "RLIMIT_NPROC") != 0 : why != NULL) return 23;
  syncq_po_proc *me;
  if (syncq_po_attach(s, &me) != SYNCQ_OK) return 24;
  echo_arg a = {syncq_po_pid_of(me)};
  syncq_po_pid pids[40];
  for (int i = 0; i < 40; i++)
    if (syncq_po_spawn(s, echo, &a, &pids[i]) != SYNCQ_OK) return 25;
  for (int i = 0; i < 40; i++) {
    syncq_po_msg *m;
    if (syncq_po_get(me, 8, &m) != SYNCQ_OK) return 26;
    m->type = 0;
    int64_t w = i;
    memcpy(m->data, &w, sizeof w);
    if (syncq_po_send(me, pids[i], m, SYNCQ_PO_LINK) != SYNCQ_OK) return 27;
  }
  int64_t sum = 0;
  for (int i = 0; i < 40; i++) {
    syncq_po_msg *m;
    if (syncq_po_recv_blocking(me, &m) != SYNCQ_OK) return 28;
    sum += word_of(m);
    syncq_po_free(me, m);
  }
  if (sum != 40 * 39 / 2) return 29;
  for (int i = 0; i < 40; i++)
    if (syncq_po_join(s, pids[i]) != SYNCQ_OK) return 30;
  if (syncq_po_detach(me) != SYNCQ_OK || syncq_po_destroy(s) != SYNCQ_OK) return 31;
  /* no thread at all: refused, nothing left behind */
  struct rlimit none = {(rlim_t)base, (rlim_t)base};
  if (setrlimit(RLIMIT_NPROC, &none) != 0) return 32;
  if (syncq_po_create(&dflt, &s) != SYNCQ_ELIMIT) return 33;
  return 0;
}

/* A fiber system asked for one scheduler per processing unit where the
 * kernel allows fewer threads starts with those it gets; a number given
 * in the config is refused in full; no thread at all: refused. (In a
 * child become an unprivileged user: RLIMIT_NPROC does not bind root.) */
static void test_schedulers_under_rlimit(void **state) {
  (void)state;
  fflush(NULL);
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) _exit(rlimit_child());
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_true(WIFEXITED(status));
  if (getuid() != 0 && WEXITSTATUS(status) == 10) return; /* cannot become another user: nothing to check */
  if (WEXITSTATUS(status) != 0) fail_msg("rlimit child: check %d failed", WEXITSTATUS(status));
}

/* ------------------------------------------------ deadlines, sleep, send_after */

#define MS 1000000ull

typedef struct timed_arg {
  syncq_po_pid main;
  uint64_t timeout;
} timed_arg;

/* recv_timeout(timeout): reports to main the status (type) and the
 * nanoseconds it waited (word). */
static void timed_receiver(syncq_po_proc *self, void *arg) {
  timed_arg *a = arg;
  uint64_t t0 = syncq_now_ns();
  syncq_po_msg *m = NULL;
  int r = syncq_po_recv_timeout(self, a->timeout, &m);
  uint64_t waited = syncq_now_ns() - t0;
  if (r == SYNCQ_OK) syncq_po_free(self, m);
  send_word(self, a->main, (uint32_t)(r - SYNCQ_ETIMEDOUT), (int64_t)waited); /* type 0: timed out */
}

static syncq_po_msg *recv_main(syncq_po_proc *me) {
  syncq_po_msg *m;
  assert_int_equal(syncq_po_recv_blocking(me, &m), SYNCQ_OK);
  return m;
}

static void test_recv_timeout(void **state) {
  (void)state;
  syncq_po_system *s = new_system(64, 2);
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
  syncq_po_pid mine = syncq_po_pid_of(me);
  syncq_po_msg *m;
  /* 0: a poll, from a thread */
  assert_int_equal(syncq_po_recv_timeout(me, 0, &m), SYNCQ_ETIMEDOUT);
  send_word(me, mine, 3, 3);
  assert_int_equal(syncq_po_recv_timeout(me, 0, &m), SYNCQ_OK);
  assert_int_equal(m->type, 3);
  syncq_po_free(me, m);
  /* a thread's deadline that expires, and one a message beats */
  uint64_t t0 = syncq_now_ns();
  assert_int_equal(syncq_po_recv_timeout(me, 20 * MS, &m), SYNCQ_ETIMEDOUT);
  assert_true(syncq_now_ns() - t0 >= 20 * MS);
  /* processes: a deadline that expires (not before its time) */
  timed_arg expire = {mine, 30 * MS};
  syncq_po_pid p;
  assert_int_equal(syncq_po_spawn(s, timed_receiver, &expire, &p), SYNCQ_OK);
  m = recv_main(me);
  assert_int_equal(m->type, 0);
  assert_true(word_of(m) >= (int64_t)(30 * MS));
  syncq_po_free(me, m);
  assert_int_equal(syncq_po_join(s, p), SYNCQ_OK);
  /* a message before the deadline: it does not wait the deadline out */
  timed_arg beat = {mine, 3600000 * MS};
  assert_int_equal(syncq_po_spawn(s, timed_receiver, &beat, &p), SYNCQ_OK);
  usleep(5000);
  send_word(me, p, 1, 1);
  m = recv_main(me);
  assert_int_equal(m->type, (uint32_t)(SYNCQ_OK - SYNCQ_ETIMEDOUT));
  assert_true(word_of(m) < (int64_t)(600000 * MS));
  syncq_po_free(me, m);
  assert_int_equal(syncq_po_join(s, p), SYNCQ_OK);
  /* UINT64_MAX: for ever, until the message comes */
  timed_arg ever = {mine, UINT64_MAX};
  assert_int_equal(syncq_po_spawn(s, timed_receiver, &ever, &p), SYNCQ_OK);
  usleep(20000);
  assert_int_equal(syncq_po_recv_timeout(me, 0, &m), SYNCQ_ETIMEDOUT); /* it has not given up */
  send_word(me, p, 1, 1);
  m = recv_main(me);
  assert_int_equal(m->type, (uint32_t)(SYNCQ_OK - SYNCQ_ETIMEDOUT));
  syncq_po_free(me, m);
  assert_int_equal(syncq_po_join(s, p), SYNCQ_OK);
  /* a process polling with 0 */
  timed_arg poll = {mine, 0};
  assert_int_equal(syncq_po_spawn(s, timed_receiver, &poll, &p), SYNCQ_OK);
  m = recv_main(me);
  assert_int_equal(m->type, 0);
  syncq_po_free(me, m);
  assert_int_equal(syncq_po_join(s, p), SYNCQ_OK);
  /* bad inputs */
  assert_int_equal(syncq_po_recv_timeout(NULL, 0, &m), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_recv_timeout(me, 0, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_sleep(NULL, 1), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

/* Many receives whose messages come before the deadline (each wait's
 * deadline is taken back), then many that all expire at once. */
typedef struct many_arg {
  syncq_po_pid main;
  int rounds;
} many_arg;

static void early_receiver(syncq_po_proc *self, void *arg) {
  many_arg *a = arg;
  for (int i = 0; i < a->rounds; i++) {
    send_word(self, a->main, 1, i); /* ask for the next */
    syncq_po_msg *m;
    if (syncq_po_recv_timeout(self, 3600000 * MS, &m) != SYNCQ_OK) return;
    syncq_po_free(self, m);
  }
  send_word(self, a->main, 2, 0);
}

static void expiring(syncq_po_proc *self, void *arg) {
  many_arg *a = arg;
  uint64_t timeout = (uint64_t)(1 + syncq_po_pid_of(self) % 7) * 5 * MS;
  uint64_t t0 = syncq_now_ns();
  syncq_po_msg *m;
  int r = syncq_po_recv_timeout(self, timeout, &m);
  bool ok = r == SYNCQ_ETIMEDOUT && syncq_now_ns() - t0 >= timeout;
  send_word(self, a->main, ok ? 3 : 4, 0);
}

static void test_many_deadlines(void **state) {
  (void)state;
  syncq_po_system *s = new_system(256, 1);
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
  many_arg a = {syncq_po_pid_of(me), SANITIZED ? 300 : 3000};
  syncq_po_pid p;
  assert_int_equal(syncq_po_spawn(s, early_receiver, &a, &p), SYNCQ_OK);
  for (;;) {
    syncq_po_msg *m = recv_main(me);
    uint32_t type = m->type;
    syncq_po_free(me, m);
    if (type == 2) break;
    send_word(me, p, 1, 0);
  }
  assert_int_equal(syncq_po_join(s, p), SYNCQ_OK);
  enum { N = 100 };
  syncq_po_pid pids[N];
  for (int i = 0; i < N; i++) assert_int_equal(syncq_po_spawn(s, expiring, &a, &pids[i]), SYNCQ_OK);
  for (int i = 0; i < N; i++) {
    syncq_po_msg *m = recv_main(me);
    assert_int_equal(m->type, 3);
    syncq_po_free(me, m);
  }
  for (int i = 0; i < N; i++) assert_int_equal(syncq_po_join(s, pids[i]), SYNCQ_OK);
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

/* Sleepers on one scheduler while a ping-pong pair keeps running: the
 * sleepers find the pair has moved on while they slept (a fiber's sleep
 * parks it; it does not hold its scheduler thread: if it did, none would,
 * and the sleeps would take 2.5 s in a row), each sleeps no less than
 * asked and keeps the messages that came meanwhile. At least half must
 * see the pair move: on a loaded machine the kernel can take the
 * scheduler thread off its processor for a whole 50 ms sleep, and that
 * sleeper then sees no hop. */
typedef struct sleep_run {
  syncq_po_pid main;
  _Atomic(long) hops;
  _Atomic(int) stop;
} sleep_run;

static void sleeper(syncq_po_proc *self, void *arg) {
  sleep_run *r = arg;
  syncq_po_msg *go;
  if (syncq_po_recv_blocking(self, &go) != SYNCQ_OK) return; /* main sends "go", then one more */
  syncq_po_free(self, go);
  long before = atomic_load(&r->hops);
  uint64_t t0 = syncq_now_ns();
  int st = syncq_po_sleep(self, 50 * MS);
  uint64_t slept = syncq_now_ns() - t0;
  long after = atomic_load(&r->hops);
  syncq_po_msg *m;
  int kept = syncq_po_try_recv(self, &m) == SYNCQ_OK; /* main sent one while we slept */
  if (kept) syncq_po_free(self, m);
  send_word(self, r->main, st == SYNCQ_OK && slept >= 50 * MS && kept ? 5 : 6, after > before);
}

static void pinger(syncq_po_proc *self, void *arg) {
  sleep_run *r = arg;
  syncq_po_msg *m;
  if (syncq_po_recv_blocking(self, &m) != SYNCQ_OK) return; /* the partner's pid */
  syncq_po_pid partner = (syncq_po_pid)word_of(m);
  syncq_po_free(self, m);
  while (!atomic_load(&r->stop)) {
    send_word(self, partner, 1, 0);
    if (syncq_po_recv_blocking(self, &m) != SYNCQ_OK) return;
    syncq_po_free(self, m);
    atomic_fetch_add(&r->hops, 1);
  }
  send_word(self, partner, 0, 0);
}

static void ponger(syncq_po_proc *self, void *arg) {
  (void)arg;
  for (;;) {
    syncq_po_msg *m;
    if (syncq_po_recv_blocking(self, &m) != SYNCQ_OK) return;
    uint32_t type = m->type;
    syncq_po_pid from = m->sender;
    syncq_po_free(self, m);
    if (type == 0) return;
    send_word(self, from, 1, 0);
  }
}

static void test_sleepers_and_runners(void **state) {
  (void)state;
  syncq_po_system *s = new_system(128, 1);
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
  sleep_run r = {.main = syncq_po_pid_of(me)};
  atomic_init(&r.hops, 0);
  atomic_init(&r.stop, 0);
  enum { SLEEPERS = 50 };
  syncq_po_pid sl[SLEEPERS], ping, pong;
  for (int i = 0; i < SLEEPERS; i++) assert_int_equal(syncq_po_spawn(s, sleeper, &r, &sl[i]), SYNCQ_OK);
  assert_int_equal(syncq_po_spawn(s, ponger, &r, &pong), SYNCQ_OK);
  assert_int_equal(syncq_po_spawn(s, pinger, &r, &ping), SYNCQ_OK);
  send_word(me, ping, 1, pong);
  for (int i = 0; i < SLEEPERS; i++) {
    send_word(me, sl[i], 8, 0); /* go */
    send_word(me, sl[i], 9, 0); /* kept through the sleep */
  }
  uint64_t t0 = syncq_now_ns();
  int moved = 0;
  for (int i = 0; i < SLEEPERS; i++) {
    syncq_po_msg *m = recv_main(me);
    assert_int_equal(m->type, 5);
    moved += word_of(m) != 0;
    syncq_po_free(me, m);
  }
  /* the sleeps overlapped: 50 of 50 ms in a row would take 2.5 s */
  assert_true(syncq_now_ns() - t0 < 2000 * MS);
  assert_true(moved >= SLEEPERS / 2);
  atomic_store(&r.stop, 1);
  for (int i = 0; i < SLEEPERS; i++) assert_int_equal(syncq_po_join(s, sl[i]), SYNCQ_OK);
  assert_int_equal(syncq_po_join(s, ping), SYNCQ_OK);
  assert_int_equal(syncq_po_join(s, pong), SYNCQ_OK);
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

static void reasoned(syncq_po_proc *self, void *arg);

/* send_after: from main and from a process to itself, in deadline order,
 * not before its time; to a process gone by then (dropped); pending at
 * destroy (freed, nothing waits for it); bad inputs. */
static void self_timer(syncq_po_proc *self, void *arg) {
  timed_arg *a = arg;
  syncq_po_msg *m;
  if (syncq_po_get(self, 8, &m) != SYNCQ_OK) return;
  m->type = 2;
  uint64_t t0 = syncq_now_ns(); /* type 2 is due at t0 + 40 ms or later */
  if (syncq_po_send_after(self, syncq_po_pid_of(self), m, 40 * MS) != SYNCQ_OK) return;
  if (syncq_po_get(self, 8, &m) != SYNCQ_OK) return;
  m->type = 1;
  if (syncq_po_send_after(self, syncq_po_pid_of(self), m, 10 * MS) != SYNCQ_OK) return;
  uint64_t t1 = syncq_now_ns(); /* type 1 is due at t1 + 10 ms or earlier */
  uint32_t order[2];
  for (int i = 0; i < 2; i++) {
    if (syncq_po_recv_blocking(self, &m) != SYNCQ_OK) return;
    order[i] = m->type;
    syncq_po_free(self, m);
  }
  /* Deadline order, where the deadlines are known to be in that order: a
   * process descheduled 30 ms between the two calls (a loaded machine,
   * an emulator) armed type 1 after type 2's time. */
  bool ordered = t1 + 10 * MS < t0 + 40 * MS;
  bool ok =
    order[0] + order[1] == 3 && (!ordered || (order[0] == 1 && order[1] == 2)) && syncq_now_ns() - t0 >= 40 * MS;
  send_word(self, a->main, ok ? 7 : 8, 0);
}

static void test_send_after(void **state) {
  (void)state;
  syncq_po_system *s = new_system(15, 2); /* 15 + 16 slots */
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
  syncq_po_pid mine = syncq_po_pid_of(me);
  timed_arg a = {mine, 3600000 * MS};
  syncq_po_pid p;
  /* from main to a waiting process */
  assert_int_equal(syncq_po_spawn(s, timed_receiver, &a, &p), SYNCQ_OK);
  syncq_po_msg *m;
  assert_int_equal(syncq_po_get(me, 8, &m), SYNCQ_OK);
  uint64_t t0 = syncq_now_ns();
  assert_int_equal(syncq_po_send_after(me, p, m, 30 * MS), SYNCQ_OK);
  m = recv_main(me);
  assert_int_equal(m->type, (uint32_t)(SYNCQ_OK - SYNCQ_ETIMEDOUT));
  assert_true(syncq_now_ns() - t0 >= 30 * MS);
  syncq_po_free(me, m);
  assert_int_equal(syncq_po_join(s, p), SYNCQ_OK);
  /* main to itself: 0 is at once */
  assert_int_equal(syncq_po_get(me, 8, &m), SYNCQ_OK);
  assert_int_equal(syncq_po_send_after(me, mine, m, 0), SYNCQ_OK);
  assert_int_equal(syncq_po_recv_timeout(me, 0, &m), SYNCQ_OK);
  syncq_po_free(me, m);
  /* a process to itself, in deadline order */
  assert_int_equal(syncq_po_spawn(s, self_timer, &a, &p), SYNCQ_OK);
  m = recv_main(me);
  assert_int_equal(m->type, 7);
  syncq_po_free(me, m);
  assert_int_equal(syncq_po_join(s, p), SYNCQ_OK);
  /* to a process that is gone when the time comes: dropped */
  assert_int_equal(syncq_po_spawn(s, reasoned, NULL, &p), SYNCQ_OK); /* exits on its first message */
  assert_int_equal(syncq_po_get(me, 8, &m), SYNCQ_OK);
  assert_int_equal(syncq_po_send_after(me, p, m, 20 * MS), SYNCQ_OK);
  send_word(me, p, 1, 0);
  assert_int_equal(syncq_po_join(s, p), SYNCQ_OK);
  usleep(40000); /* its time passes: nothing arrives anywhere */
  assert_int_equal(syncq_po_recv_timeout(me, 0, &m), SYNCQ_ETIMEDOUT);
  /* bad inputs */
  assert_int_equal(syncq_po_get(me, 8, &m), SYNCQ_OK);
  assert_int_equal(syncq_po_send_after(NULL, mine, m, MS), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_send_after(me, mine, NULL, MS), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_send_after(me, -1, m, MS), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_send_after(me, 31, m, MS), SYNCQ_EINVAL); /* slot 31: outside the 31 */
  assert_int_equal(syncq_po_send_after(me, p, m, MS), SYNCQ_EDEAD);   /* stale */
  assert_int_equal(syncq_po_send_after(me, 30, m, MS), SYNCQ_ENOENT); /* never had */
  m->len = m->cap + 1;
  assert_int_equal(syncq_po_send_after(me, mine, m, MS), SYNCQ_EINVAL);
  m->len = 0;
  /* pending at destroy: an hour away, to a process that is gone by then */
  assert_int_equal(syncq_po_spawn(s, reasoned, NULL, &p), SYNCQ_OK);
  assert_int_equal(syncq_po_send_after(me, p, m, 3600000 * MS), SYNCQ_OK);
  send_word(me, p, 1, 0);
  assert_int_equal(syncq_po_join(s, p), SYNCQ_OK);
  assert_int_equal(syncq_po_get(me, 8, &m), SYNCQ_OK);
  assert_int_equal(syncq_po_send_after(me, mine, m, 3600000 * MS), SYNCQ_OK); /* to main itself */
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  t0 = syncq_now_ns();
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
  assert_true(syncq_now_ns() - t0 < 60000 * MS); /* did not wait for the hour */
}

/* ------------------------------------------------ main as a process */

#define RUN_RING 8
#define RUN_ROUNDS 100

/* Ring members: add one to the token and pass it on; type 0 ends. */
static void run_member(syncq_po_proc *self, void *arg) {
  const syncq_po_pid *next = arg; /* next[0]: where to forward */
  for (;;) {
    syncq_po_msg *m;
    if (syncq_po_recv_blocking(self, &m) != SYNCQ_OK) return;
    uint32_t type = m->type;
    int64_t w = word_of(m) + 1;
    memcpy(m->data, &w, sizeof w);
    if (syncq_po_send(self, *next, m, SYNCQ_PO_LINK) != SYNCQ_OK) syncq_po_free(self, m);
    if (type == 0) return;
  }
}

static int inner_main(syncq_po_proc *self, void *arg) {
  (void)self;
  return *(int *)arg * 2;
}

/* The first process: builds a ring with itself in it, sends the token
 * round RUN_ROUNDS times, and returns what came back. */
static int ring_main(syncq_po_proc *self, void *arg) {
  syncq_po_system *s = arg;
  syncq_po_proc *other;
  if (FIBERS && syncq_po_attach(s, &other) != SYNCQ_EINVAL) return -1; /* a fiber is a process already */
  static syncq_po_pid next[RUN_RING];
  syncq_po_pid pids[RUN_RING];
  for (int i = RUN_RING - 1; i >= 0; i--) {
    next[i] = i == RUN_RING - 1 ? syncq_po_pid_of(self) : pids[i + 1];
    if (syncq_po_spawn(s, run_member, &next[i], &pids[i]) != SYNCQ_OK) return -2;
  }
  syncq_po_msg *m;
  int64_t token = 0;
  for (int r = 0; r < RUN_ROUNDS; r++) {
    if (syncq_po_get(self, sizeof token, &m) != SYNCQ_OK) return -3;
    m->type = r == RUN_ROUNDS - 1 ? 0 : 1;
    memcpy(m->data, &token, sizeof token);
    if (syncq_po_send(self, pids[0], m, SYNCQ_PO_LINK) != SYNCQ_OK) return -4;
    if (syncq_po_recv_blocking(self, &m) != SYNCQ_OK) return -5;
    token = word_of(m);
    syncq_po_free(self, m);
  }
  for (int i = 0; i < RUN_RING; i++)
    if (syncq_po_join(s, pids[i]) != SYNCQ_OK) return -6;
  int x = 21, inner = 0; /* a run inside a process: a fiber caller yields */
  if (syncq_po_run(s, inner_main, &x, &inner) != SYNCQ_OK || inner != 42) return -7;
  return (int)token;
}

static void test_run(void **state) {
  (void)state;
  syncq_po_system *s = new_system(16, 2);
  int result = 0;
  assert_int_equal(syncq_po_run(s, ring_main, s, &result), SYNCQ_OK);
  assert_int_equal(result, RUN_RING * RUN_ROUNDS);
  assert_int_equal(syncq_po_run(s, ring_main, s, NULL), SYNCQ_OK); /* result not wanted */
  assert_int_equal(syncq_po_live(s), 0);
  assert_int_equal(syncq_po_run(NULL, ring_main, s, &result), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_run(s, NULL, s, &result), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
  /* a full table: refused, fn never runs */
  s = new_system(1, 2);
  syncq_po_pid p;
  assert_int_equal(syncq_po_spawn(s, parked, NULL, &p), SYNCQ_OK);
  result = 5;
  assert_int_equal(syncq_po_run(s, ring_main, s, &result), SYNCQ_ELIMIT);
  assert_int_equal(result, 5);
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
  send_word(me, p, 0, 0);
  assert_int_equal(syncq_po_join(s, p), SYNCQ_OK);
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

/* ------------------------------------------------ monitors */

/* Waits for one word, sets it as its exit reason, exits. */
static void reasoned(syncq_po_proc *self, void *arg) {
  (void)arg;
  syncq_po_msg *m;
  if (syncq_po_recv_blocking(self, &m) != SYNCQ_OK) return;
  int32_t reason = (int32_t)word_of(m);
  syncq_po_free(self, m);
  if (reason != 0) syncq_po_set_exit_reason(self, reason);
}

static syncq_po_down expect_down(syncq_po_proc *me) {
  syncq_po_msg *m;
  assert_int_equal(syncq_po_recv_timeout(me, 60000 * MS, &m), SYNCQ_OK);
  assert_int_equal(m->type, SYNCQ_PO_DOWN);
  assert_int_equal(m->len, sizeof(syncq_po_down));
  syncq_po_down d;
  memcpy(&d, m->data, sizeof d);
  assert_int_equal(m->sender, d.pid);
  syncq_po_free(me, m);
  return d;
}

/* A fiber (or thread) watcher parked in recv, woken by the down. */
static void watcher(syncq_po_proc *self, void *arg) {
  timed_arg *a = arg; /* main, and (timeout) the pid to watch */
  uint64_t ref = 0;
  if (syncq_po_monitor(self, (syncq_po_pid)a->timeout, &ref) != SYNCQ_OK) return;
  send_word(self, a->main, 1, 0); /* watching */
  syncq_po_msg *m;
  if (syncq_po_recv_blocking(self, &m) != SYNCQ_OK) return;
  syncq_po_down d;
  memcpy(&d, m->data, sizeof d);
  bool ok = m->type == SYNCQ_PO_DOWN && d.ref == ref && d.pid == (syncq_po_pid)a->timeout && d.reason == 11;
  syncq_po_free(self, m);
  send_word(self, a->main, ok ? 2 : 3, 0);
}

static void test_monitors(void **state) {
  (void)state;
  syncq_po_system *s = new_system(64, 2);
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
  syncq_po_pid mine = syncq_po_pid_of(me), p;
  uint64_t r1 = 0, r2 = 0;
  /* a process with a reason, watched twice: two downs, one each */
  assert_int_equal(syncq_po_spawn(s, reasoned, NULL, &p), SYNCQ_OK);
  assert_int_equal(syncq_po_monitor(me, p, &r1), SYNCQ_OK);
  assert_int_equal(syncq_po_monitor(me, p, &r2), SYNCQ_OK);
  assert_int_not_equal(r1, r2);
  send_word(me, p, 1, 42);
  syncq_po_down d1 = expect_down(me), d2 = expect_down(me);
  assert_true((d1.ref == r1 && d2.ref == r2) || (d1.ref == r2 && d2.ref == r1));
  assert_int_equal(d1.pid, p);
  assert_int_equal(d1.reason, 42);
  assert_int_equal(d2.reason, 42);
  syncq_po_msg *m;
  assert_int_equal(syncq_po_recv_timeout(me, 0, &m), SYNCQ_ETIMEDOUT); /* one each, no more */
  /* exited, not joined: noproc at once; joined (stale): noproc */
  assert_int_equal(syncq_po_monitor(me, p, &r1), SYNCQ_OK);
  d1 = expect_down(me);
  assert_int_equal(d1.ref, r1);
  assert_int_equal(d1.reason, SYNCQ_PO_NOPROC);
  assert_int_equal(syncq_po_join(s, p), SYNCQ_OK);
  assert_int_equal(syncq_po_monitor(me, p, NULL), SYNCQ_OK);
  assert_int_equal(expect_down(me).reason, SYNCQ_PO_NOPROC);
  /* a pid nobody has had; bad inputs */
  assert_int_equal(syncq_po_monitor(me, 60, &r1), SYNCQ_OK);
  d1 = expect_down(me);
  assert_int_equal(d1.pid, 60);
  assert_int_equal(d1.reason, SYNCQ_PO_NOPROC);
  assert_int_equal(syncq_po_monitor(NULL, p, &r1), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_monitor(me, -1, &r1), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_monitor(me, 127, &r1), SYNCQ_EINVAL); /* slot 127: outside 64 + 16 */
  assert_int_equal(syncq_po_set_exit_reason(NULL, 1), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_set_exit_reason(me, SYNCQ_PO_NOPROC), SYNCQ_EINVAL);
  /* a normal exit: reason 0 */
  assert_int_equal(syncq_po_spawn(s, reasoned, NULL, &p), SYNCQ_OK);
  assert_int_equal(syncq_po_monitor(me, p, NULL), SYNCQ_OK);
  send_word(me, p, 1, 0);
  assert_int_equal(expect_down(me).reason, 0);
  assert_int_equal(syncq_po_join(s, p), SYNCQ_OK);
  /* a process watching, parked in recv, woken by the down */
  assert_int_equal(syncq_po_spawn(s, reasoned, NULL, &p), SYNCQ_OK);
  timed_arg wa = {mine, (uint64_t)p};
  syncq_po_pid w;
  assert_int_equal(syncq_po_spawn(s, watcher, &wa, &w), SYNCQ_OK);
  m = recv_main(me);
  assert_int_equal(m->type, 1);
  syncq_po_free(me, m);
  send_word(me, p, 1, 11);
  m = recv_main(me);
  assert_int_equal(m->type, 2);
  syncq_po_free(me, m);
  assert_int_equal(syncq_po_join(s, p), SYNCQ_OK);
  assert_int_equal(syncq_po_join(s, w), SYNCQ_OK);
  /* an attached thread that detaches goes down with its reason */
  syncq_po_proc *other;
  assert_int_equal(syncq_po_attach(s, &other), SYNCQ_OK);
  assert_int_equal(syncq_po_set_exit_reason(other, 5), SYNCQ_OK);
  assert_int_equal(syncq_po_monitor(me, syncq_po_pid_of(other), &r1), SYNCQ_OK);
  syncq_po_pid op = syncq_po_pid_of(other);
  assert_int_equal(syncq_po_detach(other), SYNCQ_OK);
  d1 = expect_down(me);
  assert_int_equal(d1.pid, op);
  assert_int_equal(d1.reason, 5);
  /* demonitor: taken back before the exit, no down; after it, ENOENT */
  assert_int_equal(syncq_po_spawn(s, reasoned, NULL, &p), SYNCQ_OK);
  assert_int_equal(syncq_po_monitor(me, p, &r1), SYNCQ_OK);
  assert_int_equal(syncq_po_monitor(me, p, &r2), SYNCQ_OK);
  assert_int_equal(syncq_po_demonitor(me, p, r1), SYNCQ_OK);
  assert_int_equal(syncq_po_demonitor(me, p, r1), SYNCQ_ENOENT);        /* twice */
  assert_int_equal(syncq_po_demonitor(me, p, r2 + 1000), SYNCQ_ENOENT); /* not a ref of ours */
  assert_int_equal(syncq_po_demonitor(NULL, p, r2), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_demonitor(me, -1, r2), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_demonitor(me, 127, r2), SYNCQ_EINVAL);
  send_word(me, p, 1, 3);
  d1 = expect_down(me); /* only r2's */
  assert_int_equal(d1.ref, r2);
  assert_int_equal(d1.reason, 3);
  assert_int_equal(syncq_po_recv_timeout(me, 0, &m), SYNCQ_ETIMEDOUT);
  assert_int_equal(syncq_po_demonitor(me, p, r2), SYNCQ_ENOENT); /* posted already */
  assert_int_equal(syncq_po_join(s, p), SYNCQ_OK);
  /* monitors racing exits: each monitor gets exactly one down */
  enum { RACERS = 40 };
  syncq_po_pid rp[RACERS];
  int seen[RACERS] = {0};
  for (int i = 0; i < RACERS; i++) {
    assert_int_equal(syncq_po_spawn(s, nothing, NULL, &rp[i]), SYNCQ_OK);
    assert_int_equal(syncq_po_monitor(me, rp[i], NULL), SYNCQ_OK);
  }
  for (int i = 0; i < RACERS; i++) {
    d1 = expect_down(me);
    assert_true(d1.reason == 0 || d1.reason == SYNCQ_PO_NOPROC);
    for (int k = 0; k < RACERS; k++)
      if (rp[k] == d1.pid) seen[k]++;
  }
  for (int k = 0; k < RACERS; k++) assert_int_equal(seen[k], 1);
  assert_int_equal(syncq_po_recv_timeout(me, 0, &m), SYNCQ_ETIMEDOUT);
  for (int i = 0; i < RACERS; i++) assert_int_equal(syncq_po_join(s, rp[i]), SYNCQ_OK);
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

/* ------------------------------------------------ detached processes */

/* Detached spawns through a 4-slot table: each exit frees its slot, so
 * the spawns never run out (100,000 fibers; 10,000 kernel threads, as
 * CYCLES and for the same reason); every one is monitored and its DOWN
 * (its own reason, or SYNCQ_PO_NOPROC when it was gone before the
 * monitor) arrives exactly once. */
#define DETACHED_SPAWNS (FIBERS ? 100000 : CYCLES)

static void with_reason(syncq_po_proc *self, void *arg) {
  (void)syncq_po_set_exit_reason(self, (int32_t)(intptr_t)arg);
}

static void test_detached_many(void **state) {
  (void)state;
  syncq_po_system *s = new_system(SMALL_TABLE, 2);
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
  long downs = 0, spawned = 0;
  uint64_t stuck_since = 0;
  while (spawned < DETACHED_SPAWNS) {
    syncq_po_pid p;
    int32_t reason = (int32_t)(spawned % 1000) + 1;
    int r = syncq_po_spawn_detached(s, with_reason, (void *)(intptr_t)reason, &p);
    if (r == SYNCQ_ELIMIT) {
      assert_string_equal(syncq_po_limit_reason(s), "max_procs");
      if (spawned - downs > 0) { /* wait for one to go */
        syncq_po_down d = expect_down(me);
        downs++;
        assert_true(d.reason == SYNCQ_PO_NOPROC || (d.reason >= 1 && d.reason <= 1000));
        stuck_since = 0;
        continue;
      }
      /* every one has gone down: a slot is between its DOWN and its
       * release, a matter of the exiting thread's or fiber's next steps */
      uint64_t now = syncq_now_ns();
      if (stuck_since == 0) stuck_since = now;
      if (now - stuck_since > 30000 * MS)
        fail_msg("after %ld detached spawns, all gone down, the table stays full (%u live)", spawned, syncq_po_live(s));
      syncq_yield();
      continue;
    }
    if (r != SYNCQ_OK) fail_msg("detached spawn %ld: %s (%s)", spawned, syncq_strerror(r), syncq_po_limit_reason(s));
    spawned++;
    stuck_since = 0;
    assert_int_equal(syncq_po_monitor(me, p, NULL), SYNCQ_OK);
    assert_true(syncq_po_live(s) <= SMALL_TABLE + 1); /* the table and main */
  }
  while (downs < spawned) {
    syncq_po_down d = expect_down(me);
    downs++;
    assert_true(d.reason == SYNCQ_PO_NOPROC || (d.reason >= 1 && d.reason <= 1000));
  }
  syncq_po_msg *m;
  assert_int_equal(syncq_po_recv_timeout(me, 0, &m), SYNCQ_ETIMEDOUT); /* one each, no more */
  assert_int_equal(syncq_po_count(s), (uint32_t)DETACHED_SPAWNS + 1u);
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK); /* waits for the last ones' slots */
}

/* A detached process: join never waits on it (SYNCQ_EINVAL while its slot
 * holds it, SYNCQ_ENOENT once freed); its DOWN carries its reason; its
 * name goes at its exit; destroy is SYNCQ_EBUSY while it runs; its pid is
 * dead from its exit; bad inputs. */
static void test_detached_join_down(void **state) {
  (void)state;
  syncq_po_system *s = new_system(4, 2);
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(s, &me), SYNCQ_OK);
  assert_int_equal(syncq_po_spawn_detached(NULL, reasoned, NULL, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_spawn_detached(s, NULL, NULL, NULL), SYNCQ_EINVAL);
  syncq_po_pid p;
  uint64_t ref = 0;
  assert_int_equal(syncq_po_spawn_detached(s, reasoned, NULL, &p), SYNCQ_OK);
  assert_int_equal(syncq_po_monitor(me, p, &ref), SYNCQ_OK);
  assert_int_equal(syncq_po_register(s, "detached", p), SYNCQ_OK);
  assert_int_equal(syncq_po_live(s), 2);
  assert_int_equal(syncq_po_join(s, p), SYNCQ_EINVAL); /* parked in recv: never waited for */
  assert_int_equal(syncq_po_destroy(s), SYNCQ_EBUSY);
  send_word(me, p, 1, 77);
  syncq_po_down d = expect_down(me);
  assert_int_equal(d.ref, ref);
  assert_int_equal(d.pid, p);
  assert_int_equal(d.reason, 77);
  syncq_po_pid w;
  assert_int_equal(syncq_po_whereis(s, "detached", &w), SYNCQ_ENOENT);
  syncq_po_msg *m;
  assert_int_equal(syncq_po_get(me, 0, &m), SYNCQ_OK);
  assert_int_equal(syncq_po_send(me, p, m, SYNCQ_PO_LINK), SYNCQ_EDEAD);
  syncq_po_free(me, m);
  /* the slot comes back without a join */
  uint64_t t0 = syncq_now_ns();
  while (syncq_po_live(s) != 1) {
    if (syncq_now_ns() - t0 > 30000 * MS) fail_msg("an exited detached process kept its slot");
    syncq_yield();
  }
  assert_int_equal(syncq_po_join(s, p), SYNCQ_ENOENT); /* stale */
  /* a table full of detached processes: ELIMIT, then room once they exit */
  syncq_po_pid q[3]; /* and main: 4 live */
  for (int i = 0; i < 3; i++) assert_int_equal(syncq_po_spawn_detached(s, reasoned, NULL, &q[i]), SYNCQ_OK);
  assert_int_equal(syncq_po_spawn_detached(s, reasoned, NULL, NULL), SYNCQ_ELIMIT);
  assert_int_equal(syncq_po_spawn(s, reasoned, NULL, NULL), SYNCQ_ELIMIT);
  assert_string_equal(syncq_po_limit_reason(s), "max_procs");
  for (int i = 0; i < 3; i++) {
    assert_int_not_equal(q[i], p); /* the reused slot has a new generation */
    assert_int_equal(syncq_po_monitor(me, q[i], NULL), SYNCQ_OK);
    send_word(me, q[i], 1, 0);
  }
  for (int i = 0; i < 3; i++) assert_true(expect_down(me).reason == 0);
  t0 = syncq_now_ns();
  while (syncq_po_live(s) != 1) {
    if (syncq_now_ns() - t0 > 30000 * MS) fail_msg("exited detached processes kept their slots");
    syncq_yield();
  }
  /* joinable and detached side by side */
  syncq_po_pid j;
  assert_int_equal(syncq_po_spawn(s, reasoned, NULL, &j), SYNCQ_OK);
  assert_int_equal(syncq_po_spawn_detached(s, reasoned, NULL, &p), SYNCQ_OK);
  send_word(me, j, 1, 0);
  send_word(me, p, 1, 0);
  assert_int_equal(syncq_po_join(s, j), SYNCQ_OK);
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  /* destroy right after the last exit: it waits for the slot's release */
  int r;
  t0 = syncq_now_ns();
  while ((r = syncq_po_destroy(s)) == SYNCQ_EBUSY) { /* p may not have run yet */
    if (syncq_now_ns() - t0 > 30000 * MS) fail_msg("a detached process never exited");
    syncq_yield();
  }
  assert_int_equal(r, SYNCQ_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_spawn_join_cycles),
    cmocka_unit_test(test_stale_pids),
    cmocka_unit_test(test_concurrent_spawn_join),
    cmocka_unit_test(test_stale_sender_race),
    cmocka_unit_test(test_attach_full_table),
    cmocka_unit_test(test_schedulers_under_rlimit),
    cmocka_unit_test(test_recv_timeout),
    cmocka_unit_test(test_many_deadlines),
    cmocka_unit_test(test_sleepers_and_runners),
    cmocka_unit_test(test_send_after),
    cmocka_unit_test(test_run),
    cmocka_unit_test(test_monitors),
    cmocka_unit_test(test_detached_many),
    cmocka_unit_test(test_detached_join_down),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
