/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_slots_test.c — the process table without a lock (src/po/process.c,
 * slot_ring.c): the order slots are reused in (and the reuse distance on
 * a large table), two joiners of one pid,
 * spawns refused exactly when the table is full (the table answers even
 * when no stack could be had), and threads and fibers spawning, joining,
 * detaching and exiting 100,000 processes through a table of a few dozen
 * slots (no slot held by two processes at once, every pid the one its
 * spawner got, nothing left live). Built once per backend
 * (PO_TEST_BACKEND).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "syncq/atomic.h"
#include "syncq/po.h"

#ifndef PO_TEST_BACKEND
#define PO_TEST_BACKEND "thread"
#endif
#define FIBERS (strcmp(PO_TEST_BACKEND, "fiber") == 0)

#include "test_sanitizer.h"
/* Sanitizers need deeper stacks, and run a tenth of the churn (a
 * thread's creation costs them far more than a process's work). */
#define TEST_STACK ((TSAN || ASAN) ? 256u * 1024u : 0u)
#define SCALE(n) ((TSAN || ASAN) ? (n) / 10 : (n))

/* Threads that spawn and join (fixed: the same plan on every machine). */
#define WORKERS 4

static syncq_po_system *new_system(uint32_t max_procs, uint32_t schedulers) {
  syncq_po_config cfg = {"mpsc", max_procs, TEST_STACK, 0, PO_TEST_BACKEND, schedulers, false};
  syncq_po_system *s = NULL;
  int r = syncq_po_create(&cfg, &s);
  if (r != SYNCQ_OK) fail_msg("creating a %s postoffice: %s", PO_TEST_BACKEND, syncq_strerror(r));
  return s;
}

/* A pid's slot: its low bits, as many as the generations leave of 31. */
static uint32_t slot_bits(const syncq_po_system *s) {
  uint32_t gens = syncq_po_pid_generations(s), bits = 31;
  while (gens > 1) {
    gens >>= 1;
    bits--;
  }
  return bits;
}
static uint32_t slot_of(const syncq_po_system *s, syncq_po_pid pid) {
  return (uint32_t)pid & ((1u << slot_bits(s)) - 1u);
}
static uint32_t gen_of(const syncq_po_system *s, syncq_po_pid pid) { return (uint32_t)pid >> slot_bits(s); }

static void nothing(syncq_po_proc *self, void *arg) { (void)self, (void)arg; }

/* Runs until *arg is set (a fiber sleeps between looks: it must not hold
 * its scheduler). */
static void hold(syncq_po_proc *self, void *arg) {
  _Atomic(int) *release = arg;
  while (atomic_load(release) == 0) syncq_po_sleep(self, 200000);
}

/* ------------------------------------------------------------ reuse order */

/* A spawn/join loop on a table of N slots hands out slot 0, 1, ..., N-1,
 * then 0 again at the next generation: slot k comes back after the N-1
 * others (never-used slots first, then the one freed longest ago). */
static void test_fifo_reuse_order(void **state) {
  (void)state;
  syncq_po_system *s = new_system(8, 2);
  const uint32_t nslots = 8 + SYNCQ_PO_ATTACH_RESERVE;
  syncq_po_pid first = -1;
  for (uint32_t k = 0; k < 3 * nslots; k++) {
    syncq_po_pid pid;
    assert_int_equal(syncq_po_spawn(s, nothing, NULL, &pid), SYNCQ_OK);
    assert_int_equal(slot_of(s, pid), k % nslots);
    assert_int_equal(gen_of(s, pid), k / nslots);
    assert_int_equal(syncq_po_join(s, pid), SYNCQ_OK);
    if (k == 0) first = pid;
  }
  assert_int_equal(syncq_po_join(s, first), SYNCQ_ENOENT); /* stale */
  /* Frees out of order: every slot taken (attach may use them all), then
   * freed in a shuffled order; they come back in that order. */
  syncq_po_proc *p[8 + SYNCQ_PO_ATTACH_RESERVE];
  for (uint32_t k = 0; k < nslots; k++) assert_int_equal(syncq_po_attach(s, &p[k]), SYNCQ_OK);
  uint32_t freed[8 + SYNCQ_PO_ATTACH_RESERVE];
  for (uint32_t k = 0; k < nslots; k++) {
    syncq_po_proc *q = p[(k * 7u) % nslots]; /* 7 and 24 coprime: each once */
    freed[k] = slot_of(s, syncq_po_pid_of(q));
    assert_int_equal(syncq_po_detach(q), SYNCQ_OK);
  }
  for (uint32_t k = 0; k < nslots; k++) {
    syncq_po_pid pid;
    assert_int_equal(syncq_po_spawn(s, nothing, NULL, &pid), SYNCQ_OK);
    assert_int_equal(slot_of(s, pid), freed[k]);
    assert_int_equal(syncq_po_join(s, pid), SYNCQ_OK);
  }
  assert_int_equal(syncq_po_live(s), 0);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

/* On a table larger than SYNCQ_PO_REUSE_DISTANCE, a spawn/join loop
 * takes never-used slots only until more than the distance of freed ones
 * wait: slots 0 .. SYNCQ_PO_REUSE_DISTANCE, then the oldest freed, so
 * the loop keeps to SYNCQ_PO_REUSE_DISTANCE + 1 slots (their records and
 * mailboxes) however large max_procs is, and each slot comes back after
 * exactly that many others. */
static void test_reuse_distance(void **state) {
  (void)state;
  const uint32_t ring = SYNCQ_PO_REUSE_DISTANCE + 1;
  syncq_po_system *s = new_system(4 * SYNCQ_PO_REUSE_DISTANCE, 2);
  syncq_po_pid first = -1;
  for (uint32_t k = 0; k < 3 * ring; k++) {
    syncq_po_pid pid;
    assert_int_equal(syncq_po_spawn(s, nothing, NULL, &pid), SYNCQ_OK);
    if (slot_of(s, pid) != k % ring || gen_of(s, pid) != k / ring)
      fail_msg("spawn %u got slot %u generation %u, not slot %u generation %u", k, slot_of(s, pid), gen_of(s, pid),
               k % ring, k / ring);
    assert_int_equal(syncq_po_join(s, pid), SYNCQ_OK);
    if (k == 0) first = pid;
  }
  assert_int_equal(syncq_po_join(s, first), SYNCQ_ENOENT); /* stale, its slot twice reused */
  assert_int_equal(syncq_po_count(s), 3 * ring);
  assert_int_equal(syncq_po_live(s), 0);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

/* The distance is a count of waiting slots, not a phase: once fewer
 * than SYNCQ_PO_REUSE_DISTANCE + 1 freed slots wait again (live processes
 * took the rest), never-used slots are handed out again while there are
 * any. Attached processes: no thread to make. */
static void test_reuse_by_waiting_count(void **state) {
  (void)state;
  enum { EXTRA = 3, HELD = EXTRA + 3 };
  const uint32_t ring = SYNCQ_PO_REUSE_DISTANCE + 1 + EXTRA;
  syncq_po_system *s = new_system(2 * SYNCQ_PO_REUSE_DISTANCE, 2);
  syncq_po_proc **p = calloc(ring, sizeof *p);
  assert_non_null(p);
  for (uint32_t k = 0; k < ring; k++) {
    assert_int_equal(syncq_po_attach(s, &p[k]), SYNCQ_OK);
    assert_int_equal(slot_of(s, syncq_po_pid_of(p[k])), k);
  }
  for (uint32_t k = 0; k < ring; k++) assert_int_equal(syncq_po_detach(p[k]), SYNCQ_OK);
  /* `ring` freed slots wait: the oldest EXTRA + 1 come back (until
   * SYNCQ_PO_REUSE_DISTANCE wait), then never-used ones follow. */
  syncq_po_proc *h[HELD];
  for (uint32_t k = 0; k < HELD; k++) {
    assert_int_equal(syncq_po_attach(s, &h[k]), SYNCQ_OK);
    uint32_t want = k <= EXTRA ? k : ring + (k - EXTRA - 1);
    if (slot_of(s, syncq_po_pid_of(h[k])) != want)
      fail_msg("attach %u with %u live got slot %u, not %u", k, k, slot_of(s, syncq_po_pid_of(h[k])), want);
  }
  for (uint32_t k = 0; k < HELD; k++) assert_int_equal(syncq_po_detach(h[k]), SYNCQ_OK);
  assert_int_equal(syncq_po_live(s), 0);
  free(p);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

/* Threads attaching and detaching at once on a table larger than the
 * distance, their live count rising and falling across the point where
 * never-used and freed slots alternate: every reservation finds a slot
 * (none refused, none waits for good), no slot is held twice, and the
 * slots ever taken stay below the most live plus the distance. */
#define REUSE_HOLD 16
typedef struct reuse_churn {
  syncq_po_system *sys;
  _Atomic(uint8_t) *held;         /* [nslots]: 1 while a process of ours has the slot */
  _Atomic(uint32_t) top;          /* highest slot seen */
  _Atomic(long) refused, doubles; /* counted here, checked by the test's thread (cmocka's) */
  uint32_t rounds;
} reuse_churn;

static void *reuse_worker(void *arg) {
  reuse_churn *c = arg;
  syncq_po_proc *p[REUSE_HOLD];
  for (uint32_t r = 0; r < c->rounds; r++) {
    uint32_t n = 1 + r % REUSE_HOLD; /* live counts that rise and fall */
    for (uint32_t k = 0; k < n; k++) {
      if (syncq_po_attach(c->sys, &p[k]) != SYNCQ_OK) { /* with at most WORKERS * REUSE_HOLD live */
        atomic_fetch_add(&c->refused, 1);
        n = k;
        break;
      }
      uint32_t i = slot_of(c->sys, syncq_po_pid_of(p[k]));
      if (atomic_exchange(&c->held[i], 1) != 0) atomic_fetch_add(&c->doubles, 1);
      uint32_t t = atomic_load(&c->top);
      while (i > t && !atomic_compare_exchange_weak(&c->top, &t, i)) {
      }
    }
    for (uint32_t k = 0; k < n; k++) {
      atomic_store(&c->held[slot_of(c->sys, syncq_po_pid_of(p[k]))], 0);
      if (syncq_po_detach(p[k]) != SYNCQ_OK) atomic_fetch_add(&c->refused, 1);
    }
  }
  return NULL;
}

static void test_reuse_distance_concurrent(void **state) {
  (void)state;
  const uint32_t max = 2 * SYNCQ_PO_REUSE_DISTANCE, nslots = max + SYNCQ_PO_ATTACH_RESERVE;
  reuse_churn c = {new_system(max, 2), calloc(nslots, 1), 0, 0, 0, (uint32_t)SCALE(4000)};
  assert_non_null(c.held);
  /* The first SYNCQ_PO_REUSE_DISTANCE or so attaches take never-used
   * slots (fewer freed ones wait); from then on the two alternate as the
   * live count moves (tens of thousands of attaches in all). */
  pthread_t t[WORKERS];
  for (int k = 0; k < WORKERS; k++) assert_int_equal(pthread_create(&t[k], NULL, reuse_worker, &c), 0);
  for (int k = 0; k < WORKERS; k++) assert_int_equal(pthread_join(t[k], NULL), 0);
  assert_int_equal(atomic_load(&c.refused), 0);
  assert_int_equal(atomic_load(&c.doubles), 0);
  assert_int_equal(syncq_po_live(c.sys), 0);
  if (atomic_load(&c.top) >= SYNCQ_PO_REUSE_DISTANCE + WORKERS * REUSE_HOLD)
    fail_msg("slot %u taken with at most %d live", atomic_load(&c.top), WORKERS * REUSE_HOLD);
  free((void *)c.held);
  assert_int_equal(syncq_po_destroy(c.sys), SYNCQ_OK);
}

/* ------------------------------------------------------- two joiners, one pid */

typedef struct joiners {
  syncq_po_system *s;
  _Atomic(syncq_po_pid) pid;
  _Atomic(int) round, arrived;
  int result[2];
} joiners;

typedef struct joiner_arg {
  joiners *j;
  int id;
} joiner_arg;

static void *joiner(void *arg) {
  joiner_arg *a = arg;
  joiners *j = a->j;
  for (int r = 1;; r++) {
    while (atomic_load(&j->round) < r) sched_yield();
    syncq_po_pid pid = atomic_load(&j->pid);
    if (pid < 0) return NULL;
    j->result[a->id] = syncq_po_join(j->s, pid);
    atomic_fetch_add(&j->arrived, 1);
  }
}

/* A child that is done or still running (every other round yields a
 * while): two threads join its pid at once, exactly one gets SYNCQ_OK and
 * the other SYNCQ_ENOENT, in both of join's paths (the free of a done
 * fiber and the claim of a running process). */
static void slow(syncq_po_proc *self, void *arg) {
  (void)arg;
  for (int k = 0; k < 20; k++) syncq_po_yield(self);
}

#define JOIN_ROUNDS SCALE(2000)
static void test_two_joiners_one_wins(void **state) {
  (void)state;
  joiners j = {.s = new_system(8, 2)};
  atomic_init(&j.pid, 0);
  atomic_init(&j.round, 0);
  atomic_init(&j.arrived, 0);
  pthread_t t[2];
  joiner_arg a[2] = {{&j, 0}, {&j, 1}};
  for (int k = 0; k < 2; k++) assert_int_equal(pthread_create(&t[k], NULL, joiner, &a[k]), 0);
  int ok = 0;
  for (int r = 1; r <= JOIN_ROUNDS; r++) {
    syncq_po_pid pid;
    assert_int_equal(syncq_po_spawn(j.s, r % 2 ? slow : nothing, NULL, &pid), SYNCQ_OK);
    atomic_store(&j.arrived, 0);
    atomic_store(&j.pid, pid);
    atomic_store(&j.round, r);
    while (atomic_load(&j.arrived) < 2) sched_yield();
    int wins = (j.result[0] == SYNCQ_OK) + (j.result[1] == SYNCQ_OK);
    int misses = (j.result[0] == SYNCQ_ENOENT) + (j.result[1] == SYNCQ_ENOENT);
    if (wins != 1 || misses != 1)
      fail_msg("round %d: joins answered %s and %s", r, syncq_strerror(j.result[0]), syncq_strerror(j.result[1]));
    ok += wins;
    assert_int_equal(syncq_po_join(j.s, pid), SYNCQ_ENOENT); /* joined: stale */
  }
  atomic_store(&j.pid, -1);
  atomic_store(&j.round, JOIN_ROUNDS + 1);
  for (int k = 0; k < 2; k++) pthread_join(t[k], NULL);
  assert_int_equal(ok, JOIN_ROUNDS);
  assert_int_equal(syncq_po_live(j.s), 0);
  assert_int_equal(syncq_po_destroy(j.s), SYNCQ_OK);
}

/* --------------------------------------------------------- exact refusals */

typedef struct spawner {
  syncq_po_system *s;
  int rounds;
  long refused, other;
} spawner;

static void *spawn_join_loop(void *arg) {
  spawner *w = arg;
  for (int k = 0; k < w->rounds; k++) {
    syncq_po_pid pid;
    int r = syncq_po_spawn(w->s, nothing, NULL, &pid);
    if (r == SYNCQ_ELIMIT) w->refused++;
    else if (r != SYNCQ_OK || syncq_po_join(w->s, pid) != SYNCQ_OK) w->other++;
  }
  return NULL;
}

/* A table of M processes: with M - WORKERS held, WORKERS threads that
 * each keep at most one process live are never refused; with M held,
 * every one of their spawns is (and live stays M). */
#define REFUSAL_M 12u
#define REFUSAL_ROUNDS SCALE(3000)
static void run_spawners(syncq_po_system *s, int rounds, spawner *w) {
  pthread_t t[WORKERS];
  for (int k = 0; k < WORKERS; k++) {
    w[k] = (spawner){s, rounds, 0, 0};
    assert_int_equal(pthread_create(&t[k], NULL, spawn_join_loop, &w[k]), 0);
  }
  for (int k = 0; k < WORKERS; k++) pthread_join(t[k], NULL);
}

static void test_refused_only_when_full(void **state) {
  (void)state;
  syncq_po_system *s = new_system(REFUSAL_M, 2);
  _Atomic(int) release = 0;
  syncq_po_pid held[REFUSAL_M];
  for (uint32_t k = 0; k < REFUSAL_M - WORKERS; k++)
    assert_int_equal(syncq_po_spawn(s, hold, &release, &held[k]), SYNCQ_OK);
  spawner w[WORKERS];
  run_spawners(s, REFUSAL_ROUNDS, w);
  for (int k = 0; k < WORKERS; k++) {
    assert_int_equal(w[k].other, 0);
    if (w[k].refused != 0) fail_msg("worker %d: %ld spawns refused below the limit", k, w[k].refused);
  }
  assert_int_equal(syncq_po_live(s), REFUSAL_M - WORKERS);
  for (uint32_t k = REFUSAL_M - WORKERS; k < REFUSAL_M; k++)
    assert_int_equal(syncq_po_spawn(s, hold, &release, &held[k]), SYNCQ_OK);
  run_spawners(s, REFUSAL_ROUNDS / 10, w);
  for (int k = 0; k < WORKERS; k++) {
    assert_int_equal(w[k].other, 0);
    assert_int_equal(w[k].refused, REFUSAL_ROUNDS / 10);
  }
  assert_string_equal(syncq_po_limit_reason(s), "max_procs");
  assert_int_equal(syncq_po_live(s), REFUSAL_M);
  atomic_store(&release, 1);
  for (uint32_t k = 0; k < REFUSAL_M; k++) assert_int_equal(syncq_po_join(s, held[k]), SYNCQ_OK);
  assert_int_equal(syncq_po_live(s), 0);
  assert_int_equal(syncq_po_destroy(s), SYNCQ_OK);
}

/* ---------------------------------------- a full table before the stack pool */

static long vm_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  if (f == NULL) return -1;
  long pages = -1;
  if (fscanf(f, "%ld", &pages) != 1) pages = -1;
  fclose(f);
  return pages < 0 ? -1 : pages * sysconf(_SC_PAGESIZE);
}

/* A fiber spawn into a full table is refused for the table ("max_procs")
 * even when no stack could be had either (RLIMIT_AS leaves no room for a
 * 48 MB stack); with one slot freed, the spawn succeeds and the process,
 * which cannot have its stack when it first runs, exits without running
 * (SYNCQ_PO_EXIT_NOMEM: join returns, the reason names the limit). In a
 * child: the limit is the whole process's. */
enum { UNLIMITED_HERE = 77 };

static void test_full_table_answers_before_stacks(void **state) {
  (void)state;
  if (!FIBERS) {
    print_message("skipped: a thread's stack is its own (pthread_create), made after its slot is taken\n");
    skip();
  }
  if (TSAN || ASAN) {
    print_message("skipped under a sanitizer: its shadow memory needs more address space than the limit leaves\n");
    skip();
  }
  fflush(NULL);
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    syncq_po_config cfg = {"mpsc", 2, (size_t)48 << 20, 0, "fiber", 1, false};
    syncq_po_system *s;
    if (syncq_po_create(&cfg, &s) != SYNCQ_OK) _exit(10);
    syncq_po_proc *a, *b;
    if (syncq_po_attach(s, &a) != SYNCQ_OK || syncq_po_attach(s, &b) != SYNCQ_OK) _exit(11);
    long now = vm_bytes();
    if (now <= 0) _exit(12);
    struct rlimit rl = {(rlim_t)now + ((rlim_t)16 << 20), (rlim_t)now + ((rlim_t)16 << 20)};
    if (setrlimit(RLIMIT_AS, &rl) != 0) _exit(13);
    /* Where the limit does not bind mappings (an emulator that reserved
     * the guest's address space up front: qemu-user), nothing to test. */
    void *probe =
      mmap(NULL, (size_t)1 << 30, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (probe != MAP_FAILED) {
      munmap(probe, (size_t)1 << 30);
      _exit(UNLIMITED_HERE);
    }
    syncq_po_pid pid;
    int r = syncq_po_spawn(s, nothing, NULL, &pid);
    const char *why = syncq_po_limit_reason(s);
    if (r != SYNCQ_ELIMIT || why == NULL || strcmp(why, "max_procs") != 0) {
      fprintf(stderr, "spawn into a full table: %s, reason %s\n", syncq_strerror(r), why ? why : "(none)");
      _exit(20);
    }
    if (syncq_po_detach(b) != SYNCQ_OK) _exit(21);
    r = syncq_po_spawn(s, nothing, NULL, &pid);
    if (r == SYNCQ_OK) r = syncq_po_join(s, pid);
    why = syncq_po_limit_reason(s);
    if (r != SYNCQ_OK || why == NULL || strcmp(why, "max_procs") == 0) {
      fprintf(stderr, "spawn with a slot free and no room for a stack: %s, reason %s\n", syncq_strerror(r),
              why ? why : "(none)");
      _exit(22);
    }
    if (syncq_po_live(s) != 1) _exit(23);
    _exit(0); /* the system goes with the child */
  }
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_true(WIFEXITED(status));
  if (WEXITSTATUS(status) == UNLIMITED_HERE) {
    print_message("skipped: the address space limit does not bind mappings here\n");
    skip();
  }
  assert_int_equal(WEXITSTATUS(status), 0);
}

/* ------------------------------------------------------------------ churn */

/* Every slot's current holder (its pid + 1), set by the process when it
 * starts (or attaches) and cleared when it returns (or detaches): a second
 * process in a slot before the first returned finds it set. `processes`
 * counts them. */
#define CHURN_MAX 24u
#define CHURN_SLOTS (CHURN_MAX + SYNCQ_PO_ATTACH_RESERVE)
#define CHURN_PER_WORKER SCALE(FIBERS ? 25000 : 2500)

typedef struct churn {
  syncq_po_system *s;
  _Atomic(int32_t) holder[CHURN_SLOTS];
  _Atomic(long) doubles, wrong_pid, processes, errors, detached_left;
} churn;

typedef struct churn_job {
  churn *c;
  syncq_po_pid expect; /* written by the spawner before the join (read after it) */
  syncq_po_pid seen;
  bool grandchild;
} churn_job;

static void occupy(churn *c, syncq_po_proc *self) {
  syncq_po_pid me = syncq_po_pid_of(self);
  int32_t none = 0;
  atomic_fetch_add(&c->processes, 1);
  if (!atomic_compare_exchange_strong(&c->holder[slot_of(c->s, me)], &none, me + 1)) atomic_fetch_add(&c->doubles, 1);
}
static void vacate(churn *c, syncq_po_proc *self) {
  syncq_po_pid me = syncq_po_pid_of(self);
  int32_t mine = me + 1;
  if (!atomic_compare_exchange_strong(&c->holder[slot_of(c->s, me)], &mine, 0)) atomic_fetch_add(&c->doubles, 1);
}

static int spawn_retry(churn *c, syncq_po_fn fn, void *arg, syncq_po_pid *pid, bool detached) {
  for (;;) {
    int r = detached ? syncq_po_spawn_detached(c->s, fn, arg, pid) : syncq_po_spawn(c->s, fn, arg, pid);
    if (r != SYNCQ_ELIMIT) return r;
    sched_yield(); /* detached ones on their way out fill the table for a moment */
  }
}

static void churn_leaf(syncq_po_proc *self, void *arg) {
  churn_job *j = arg;
  occupy(j->c, self);
  j->seen = syncq_po_pid_of(self);
  if (j->seen % 3 == 0) syncq_po_yield(self);
  vacate(j->c, self);
}

static void churn_detached(syncq_po_proc *self, void *arg) {
  churn *c = arg;
  occupy(c, self);
  vacate(c, self);
  atomic_fetch_sub(&c->detached_left, 1);
}

/* A child that spawns and joins a grandchild of its own (a fiber joining
 * a fiber: join's parking path) before it returns. */
static void churn_parent(syncq_po_proc *self, void *arg) {
  churn_job *j = arg;
  occupy(j->c, self);
  j->seen = syncq_po_pid_of(self);
  churn_job g = {j->c, -1, -1, false};
  syncq_po_pid pid;
  if (spawn_retry(j->c, churn_leaf, &g, &pid, false) != SYNCQ_OK || syncq_po_join(j->c->s, pid) != SYNCQ_OK)
    atomic_fetch_add(&j->c->errors, 1);
  else if (g.seen != pid) atomic_fetch_add(&j->c->wrong_pid, 1);
  vacate(j->c, self);
}

static void *churn_worker(void *arg) {
  churn *c = arg;
  syncq_po_proc *me;
  if (syncq_po_attach(c->s, &me) != SYNCQ_OK) {
    atomic_fetch_add(&c->errors, 1);
    return NULL;
  }
  occupy(c, me);
  for (int k = 0; k < CHURN_PER_WORKER; k++) {
    syncq_po_pid pid, pid2;
    churn_job a = {c, -1, -1, false}, b = {c, -1, -1, false};
    int r = SYNCQ_OK;
    switch (k % 8) {
    case 5: /* detached: its exit frees the slot */
      atomic_fetch_add(&c->detached_left, 1);
      r = spawn_retry(c, churn_detached, c, &pid, true);
      if (r != SYNCQ_OK) atomic_fetch_sub(&c->detached_left, 1);
      break;
    case 6: /* two at once, joined newest first */
      r = spawn_retry(c, churn_leaf, &a, &pid, false);
      if (r == SYNCQ_OK) r = spawn_retry(c, churn_parent, &b, &pid2, false);
      if (r == SYNCQ_OK) r = syncq_po_join(c->s, pid2);
      if (r == SYNCQ_OK) r = syncq_po_join(c->s, pid);
      if (r == SYNCQ_OK && (a.seen != pid || b.seen != pid2)) atomic_fetch_add(&c->wrong_pid, 1);
      break;
    case 7: { /* an attach of its own, and its detach */
      syncq_po_proc *extra;
      r = syncq_po_attach(c->s, &extra);
      if (r == SYNCQ_OK) {
        occupy(c, extra);
        vacate(c, extra);
        r = syncq_po_detach(extra);
      }
      break;
    }
    default:
      r = spawn_retry(c, k % 2 ? churn_parent : churn_leaf, &a, &pid, false);
      if (r == SYNCQ_OK) r = syncq_po_join(c->s, pid);
      if (r == SYNCQ_OK && a.seen != pid) atomic_fetch_add(&c->wrong_pid, 1);
      break;
    }
    if (r != SYNCQ_OK) atomic_fetch_add(&c->errors, 1);
  }
  vacate(c, me);
  if (syncq_po_detach(me) != SYNCQ_OK) atomic_fetch_add(&c->errors, 1);
  return NULL;
}

static void test_churn(void **state) {
  (void)state;
  churn *c = calloc(1, sizeof *c);
  assert_non_null(c);
  c->s = new_system(CHURN_MAX, 2);
  pthread_t t[WORKERS];
  for (int k = 0; k < WORKERS; k++) assert_int_equal(pthread_create(&t[k], NULL, churn_worker, c), 0);
  for (int k = 0; k < WORKERS; k++) pthread_join(t[k], NULL);
  while (atomic_load(&c->detached_left) != 0) sched_yield();
  /* a detached one's slot is freed after its body: wait for the count */
  while (syncq_po_live(c->s) != 0) sched_yield();
  assert_int_equal(atomic_load(&c->errors), 0);
  assert_int_equal(atomic_load(&c->doubles), 0);
  assert_int_equal(atomic_load(&c->wrong_pid), 0);
  print_message("%ld processes through %u slots\n", atomic_load(&c->processes), CHURN_SLOTS);
  for (uint32_t k = 0; k < CHURN_SLOTS; k++) assert_int_equal(atomic_load(&c->holder[k]), 0);
  assert_int_equal(syncq_po_destroy(c->s), SYNCQ_OK);
  free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_fifo_reuse_order),
    cmocka_unit_test(test_reuse_distance),
    cmocka_unit_test(test_reuse_by_waiting_count),
    cmocka_unit_test(test_reuse_distance_concurrent),
    cmocka_unit_test(test_two_joiners_one_wins),
    cmocka_unit_test(test_refused_only_when_full),
    cmocka_unit_test(test_full_table_answers_before_stacks),
    cmocka_unit_test(test_churn),
  };
  return cmocka_run_group_tests_name("po_slots_" PO_TEST_BACKEND, tests, NULL, NULL);
}
