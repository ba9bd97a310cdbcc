/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * barrier_test.c — the barrier validation driver: every registered
 * barrier, with every waiting discipline it accepts, through its ops table;
 * plus the generic API and bad inputs.
 *
 * Over many episodes with random delays before each arrival, threads = 8x
 * the processing units (of the test plan's confined set,
 * tests/support/test_plan.h: 16 threads on 2 PUs on any machine), then
 * one per confined PU:
 *  - no thread leaves episode k before all arrived: an arrivals counter
 *    read after the barrier must be at least (k+1) x threads, and at most
 *    (k+2) x threads (nobody got two episodes ahead);
 *  - the barrier orders memory: each thread writes its slot of a plain
 *    (non-atomic) array before arriving and reads everybody's after
 *    leaving (TSan checks the happens-before edges);
 *  - thread counts that are not powers of two or of four, and 1.
 * Process-shared barriers run the same check across fork()ed processes.
 *
 * Timed waits (every algorithm with wait_timed, every discipline):
 *  - a thread that never arrives: the others (timed, or untimed beside a
 *    timed one) return SYNCQ_ETIMEDOUT / SYNCQ_EBROKEN, none SYNCQ_OK; the
 *    barrier is then broken for later waits (at once, not joined); reset
 *    mends it and whole episodes pass again;
 *  - races at the deadline: arrivals spread around the timeout, episode
 *    after episode: every status is OK, ETIMEDOUT or EBROKEN; EBROKEN only
 *    in an episode where someone timed out; a waiter that returned OK sees
 *    every thread's write before the barrier (TSan checks the edges);
 *  - processes (process-shared barriers): one never arrives or is
 *    SIGKILLed before arriving, or while waiting;
 *  - bad inputs (NULL, id out of range, timeout 0), and algorithms
 *    without a timed wait return SYNCQ_ENOTSUP at once.
 * A generous watchdog (alarm) turns a hang into a failure; no test checks
 * how long a wait took.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_peers.h"
#include "test_plan.h"

#include "syncq/barrier.h"
#include "syncq/barrier/central.h"
#include "syncq/barrier/dissemination.h"
#include "syncq/barrier/mcs_tree.h"
#include "syncq/barrier/pthread_barrier.h"
#include "syncq/clock.h"
#include "syncq/platform.h"
#include "syncq/wait.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

#define OVERSUBSCRIPTION TEST_PLAN_OVERSUBSCRIPTION
#if SANITIZED
#define SCALE 4
#else
#define SCALE 1
#endif
/* Episodes: spinning waiters under 8x oversubscription burn their time
 * slices each episode, so they get fewer (the point is that they finish). */
#define EPISODES (400 / SCALE)
#define EPISODES_SPIN_OVERSUBSCRIBED (8 / SCALE + 1)
#define EPISODES_SPIN (30 / SCALE)
#define MAX_THREADS 256
/* The timeout of the timed waits that must time out (a missing thread),
 * and of those that return at once (one thread). */
#define TIMEOUT_NS 10000000ull /* 10 ms */

/* The PUs this process is confined to (test_plan.h). */
static int n_pus(void) { return test_plan_confine(); }

typedef struct bar_shared {
  const syncq_barrier_ops *ops;
  void *b;
  int threads;
  int episodes;
  _Atomic(uint64_t) arrivals;
  _Atomic(int) early; /* left before everyone arrived */
  _Atomic(int) ahead; /* someone was two episodes ahead */
  _Atomic(int) stale; /* a slot did not hold this episode's value */
  _Atomic(int) errors;
  int slot[2][MAX_THREADS]; /* plain: ordered by the barrier only */
} bar_shared;

typedef struct bar_thread {
  bar_shared *s;
  unsigned id;
  unsigned seed;
} bar_thread;

static void *bar_main(void *p) {
  bar_thread *t = p;
  bar_shared *s = t->s;
  unsigned seed = t->seed;
  uint64_t n = (uint64_t)s->threads;
  for (int e = 0; e < s->episodes; e++) {
    seed = seed * 1103515245u + 12345u;
    unsigned r = (seed >> 16) % 8u;
    if (r == 0) syncq_yield(); /* random delays before arriving */
    else if (r == 1) syncq_delay_ns(2000);
    s->slot[e & 1][t->id] = e;
    atomic_fetch_add(&s->arrivals, 1);
    if (s->ops->wait(s->b, t->id) != SYNCQ_OK) atomic_fetch_add(&s->errors, 1);
    uint64_t a = atomic_load(&s->arrivals);
    if (a < (uint64_t)(e + 1) * n) atomic_fetch_add(&s->early, 1);
    if (a > (uint64_t)(e + 2) * n) atomic_fetch_add(&s->ahead, 1);
    for (int j = 0; j < s->threads; j++)
      if (s->slot[e & 1][j] != e) {
        atomic_fetch_add(&s->stale, 1);
        break;
      }
    if ((seed >> 8) % 5u == 0) syncq_yield(); /* and after leaving */
  }
  return NULL;
}

static void check_episodes(const syncq_algo *a, int wait, int threads, int episodes) {
  const syncq_barrier_ops *ops = a->ops;
  bar_shared *s = calloc(1, sizeof *s);
  assert_non_null(s);
  s->ops = ops;
  s->b = syncq_alloc_aligned(ops->size, ops->align);
  assert_non_null(s->b);
  s->threads = threads;
  s->episodes = episodes;
  syncq_barrier_config cfg = {(unsigned)threads, wait, false};
  assert_int_equal(ops->init(s->b, &cfg), SYNCQ_OK);
  bar_thread ts[MAX_THREADS];
  pthread_t tids[MAX_THREADS];
  for (int i = 0; i < threads; i++) {
    ts[i] = (bar_thread){s, (unsigned)i, (unsigned)i * 7919u + 1u};
    assert_int_equal(pthread_create(&tids[i], NULL, bar_main, &ts[i]), 0);
  }
  for (int i = 0; i < threads; i++) pthread_join(tids[i], NULL);
  if (atomic_load(&s->early) || atomic_load(&s->ahead) || atomic_load(&s->stale))
    fail_msg("%s/%s, %d threads: %d early leaves, %d ahead, %d stale slots", a->name, syncq_wait_name(wait), threads,
             atomic_load(&s->early), atomic_load(&s->ahead), atomic_load(&s->stale));
  assert_int_equal(atomic_load(&s->errors), 0);
  assert_int_equal(atomic_load(&s->arrivals), (uint64_t)threads * (uint64_t)episodes);
  assert_int_equal(ops->destroy(s->b), SYNCQ_OK);
  free(s->b);
  free(s);
}

/* ---- across processes ---- */
#define PS_PROCS 4

/* Shared by the processes of a run: the barrier (b) and what they count. */
typedef struct ps_region {
  _Atomic(uint64_t) arrivals;
  _Atomic(int) early;
  _Atomic(int) arrived_victim; /* the timed runs' victim counted its arrival */
  SYNCQ_CACHELINE_ALIGNED unsigned char b[];
} ps_region;

/* A region shared with the children forked later (zero bytes), its
 * barrier initialised process-shared for PS_PROCS with this wait; *bytes
 * for ps_unmap. */
static ps_region *ps_map(const syncq_barrier_ops *ops, int wait, size_t *bytes) {
  *bytes = sizeof(ps_region) + ops->size + 4096;
  ps_region *r = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  assert_true(r != MAP_FAILED);
  syncq_barrier_config cfg = {PS_PROCS, wait, true};
  assert_int_equal(ops->init(r->b, &cfg), SYNCQ_OK);
  return r;
}

static void ps_unmap(const syncq_barrier_ops *ops, ps_region *r, size_t bytes) {
  assert_int_equal(ops->destroy(r->b), SYNCQ_OK);
  munmap(r, bytes);
}

static void check_process_shared(const syncq_algo *a, int wait, int episodes) {
  const syncq_barrier_ops *ops = a->ops;
  size_t bytes;
  ps_region *r = ps_map(ops, wait, &bytes);
  pid_t pids[PS_PROCS];
  for (int p = 0; p < PS_PROCS; p++) {
    pids[p] = fork();
    assert_true(pids[p] >= 0);
    if (pids[p] == 0) {
      int bad = 0;
      for (int e = 0; e < episodes; e++) {
        if ((e + p) % 3 == 0) syncq_yield();
        atomic_fetch_add(&r->arrivals, 1);
        if (ops->wait(r->b, (unsigned)p) != SYNCQ_OK) bad = 1;
        if (atomic_load(&r->arrivals) < (uint64_t)(e + 1) * PS_PROCS) atomic_fetch_add(&r->early, 1);
      }
      _exit(bad);
    }
  }
  for (int p = 0; p < PS_PROCS; p++) {
    int st = 0;
    assert_int_equal(waitpid(pids[p], &st, 0), pids[p]);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  assert_int_equal(atomic_load(&r->early), 0);
  assert_int_equal(atomic_load(&r->arrivals), (uint64_t)PS_PROCS * (uint64_t)episodes);
  ps_unmap(ops, r, bytes);
}

static void check_bad_inputs(const syncq_algo *a) {
  const syncq_barrier_ops *ops = a->ops;
  void *b = syncq_alloc_aligned(ops->size, ops->align);
  assert_non_null(b);
  syncq_barrier_config cfg = {3, SYNCQ_WAIT_DEFAULT, false};
  assert_int_equal(ops->init(NULL, &cfg), SYNCQ_EINVAL);
  assert_int_equal(ops->init(b, NULL), SYNCQ_EINVAL);
  cfg.threads = 0;
  assert_int_equal(ops->init(b, &cfg), SYNCQ_EINVAL);
  cfg.threads = SYNCQ_BARRIER_MAX_THREADS + 1;
  assert_int_equal(ops->init(b, &cfg), SYNCQ_ELIMIT);
  cfg.threads = 3;
  cfg.wait = 17;
  assert_int_equal(ops->init(b, &cfg), SYNCQ_EINVAL);
  cfg.wait = -3;
  assert_int_equal(ops->init(b, &cfg), SYNCQ_EINVAL);
  cfg.wait = SYNCQ_WAIT_DEFAULT;
  assert_int_equal(ops->destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(ops->wait(NULL, 0), SYNCQ_EINVAL);
  /* one thread: wait returns at once, episode after episode */
  cfg.threads = 1;
  assert_int_equal(ops->init(b, &cfg), SYNCQ_OK);
  for (int i = 0; i < 5; i++) assert_int_equal(ops->wait(b, 0), SYNCQ_OK);
  assert_int_equal(ops->wait(b, 1), SYNCQ_EINVAL); /* id out of range */
  assert_int_equal(ops->destroy(b), SYNCQ_OK);
  if ((a->props & SYNCQ_PROP_PROCESS_SHARED) == 0) {
    cfg.process_shared = true;
    assert_int_equal(ops->init(b, &cfg), SYNCQ_ENOTSUP);
  }
  free(b);
}

static void test_every_registered_barrier(void **state) {
  (void)state;
  const syncq_algo *algos[SYNCQ_REGISTRY_MAX];
  int n = syncq_registry_list(SYNCQ_FAMILY_BARRIER, algos, SYNCQ_REGISTRY_MAX);
  assert_true(n >= 5);
  int over = test_plan_oversubscribed(OVERSUBSCRIPTION);
  _Static_assert(TEST_PLAN_MAX_THREADS <= MAX_THREADS, "a run's threads must fit its arrays");
  for (int i = 0; i < n; i++) {
    const syncq_algo *a = algos[i];
    const syncq_barrier_ops *ops = a->ops;
    check_bad_inputs(a);
    for (int w = SYNCQ_WAIT_SPIN; w < SYNCQ_WAIT_COUNT; w++) {
      void *probe = syncq_alloc_aligned(ops->size, ops->align);
      syncq_barrier_config cfg = {2, w, false};
      int r = ops->init(probe, &cfg);
      if (r == SYNCQ_OK) ops->destroy(probe);
      free(probe);
      if (r == SYNCQ_ENOTSUP) {
        print_message("barrier %s: discipline %s not supported (skipped)\n", a->name, syncq_wait_name(w));
        continue;
      }
      assert_int_equal(r, SYNCQ_OK);
      uint64_t t0 = syncq_now_ns();
      int eps = w == SYNCQ_WAIT_SPIN ? EPISODES_SPIN : EPISODES;
      check_episodes(a, w, over, w == SYNCQ_WAIT_SPIN ? EPISODES_SPIN_OVERSUBSCRIBED : EPISODES); /* oversubscribed */
      check_episodes(a, w, 5, eps); /* not a power of 2 or 4 */
      check_episodes(a, w, n_pus(), EPISODES * 2);
      uint64_t t1 = syncq_now_ns();
      if (a->props & SYNCQ_PROP_PROCESS_SHARED) check_process_shared(a, w, eps);
      uint64_t t2 = syncq_now_ns();
      print_message("barrier %s/%s: %d threads: %.2f s, process-shared %.2f s\n", a->name, syncq_wait_name(w), over,
                    (double)(t1 - t0) / 1e9, (double)(t2 - t1) / 1e9);
    }
  }
}

static void test_generic_api(void **state) {
  (void)state;
  syncq_barrier *b = NULL;
  syncq_barrier_config cfg = {1, SYNCQ_WAIT_DEFAULT, false};
  assert_int_equal(syncq_barrier_create("central-faa", &cfg, &b), SYNCQ_OK);
  assert_string_equal(syncq_barrier_algo(b)->name, "central-faa");
  assert_int_equal(syncq_barrier_wait(b, 0), SYNCQ_OK);
  assert_int_equal(syncq_barrier_wait(b, 1), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_destroy(b), SYNCQ_OK);
  assert_int_equal(syncq_barrier_create("no-such-barrier", &cfg, &b), SYNCQ_ENOENT);
  assert_int_equal(syncq_barrier_create(NULL, &cfg, &b), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_create("mcs-tree", NULL, &b), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_create("mcs-tree", &cfg, NULL), SYNCQ_EINVAL);
  cfg.threads = 0;
  assert_int_equal(syncq_barrier_create("mcs-tree", &cfg, &b), SYNCQ_EINVAL);
  cfg.threads = 2;
  cfg.wait = 9;
  assert_int_equal(syncq_barrier_create("dissemination", &cfg, &b), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_wait(NULL, 0), SYNCQ_EINVAL);
  assert_null(syncq_barrier_algo(NULL));
}

static void test_typed_apis(void **state) {
  (void)state;
  syncq_barrier_central c;
  syncq_barrier_mcs_tree t;
  syncq_barrier_dissemination d;
  syncq_barrier_pthread p;
  syncq_barrier_config cfg = {1, SYNCQ_WAIT_SPIN, false};
  assert_int_equal(syncq_barrier_central_init(&c, &cfg), SYNCQ_OK);
  assert_int_equal(syncq_barrier_central_cas_wait(&c, 0), SYNCQ_OK);
  assert_int_equal(syncq_barrier_central_faa_wait(&c, 0), SYNCQ_OK);
  assert_int_equal(syncq_barrier_central_faa_wait(NULL, 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_central_cas_wait(&c, 1), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_central_destroy(&c), SYNCQ_OK);
  assert_int_equal(syncq_barrier_mcs_tree_init(&t, &cfg), SYNCQ_OK);
  assert_int_equal(syncq_barrier_mcs_tree_wait(&t, 0), SYNCQ_OK);
  assert_int_equal(syncq_barrier_mcs_tree_destroy(&t), SYNCQ_OK);
  assert_int_equal(syncq_barrier_mcs_tree_wait(&t, 0), SYNCQ_EINVAL); /* destroyed */
  assert_int_equal(syncq_barrier_dissemination_init(&d, &cfg), SYNCQ_OK);
  assert_int_equal(syncq_barrier_dissemination_wait(&d, 0), SYNCQ_OK);
  assert_int_equal(syncq_barrier_dissemination_destroy(&d), SYNCQ_OK);
  assert_int_equal(syncq_barrier_dissemination_wait(&d, 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_pthread_init(&p, &cfg), SYNCQ_ENOTSUP); /* spin */
  cfg.wait = SYNCQ_WAIT_BLOCK;
  assert_int_equal(syncq_barrier_pthread_init(&p, &cfg), SYNCQ_OK);
  assert_int_equal(syncq_barrier_pthread_wait(&p, 0), SYNCQ_OK);
  assert_int_equal(syncq_barrier_pthread_destroy(&p), SYNCQ_OK);
  assert_int_equal(syncq_barrier_mcs_tree_init(NULL, &cfg), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_dissemination_init(NULL, &cfg), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_pthread_init(NULL, &cfg), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_pthread_wait(NULL, 0), SYNCQ_EINVAL);
  /* the timed waits and resets, typed */
  cfg.wait = SYNCQ_WAIT_SPIN;
  assert_int_equal(syncq_barrier_central_init(&c, &cfg), SYNCQ_OK);
  assert_int_equal(syncq_barrier_central_faa_wait_timed(&c, 0, TIMEOUT_NS), SYNCQ_OK);
  assert_int_equal(syncq_barrier_central_cas_wait_timed(&c, 0, TIMEOUT_NS), SYNCQ_OK);
  assert_int_equal(syncq_barrier_central_cas_wait_timed(&c, 1, TIMEOUT_NS), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_central_faa_wait_timed(&c, 0, 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_central_faa_wait_timed(NULL, 0, TIMEOUT_NS), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_central_reset(&c), SYNCQ_OK);
  assert_int_equal(syncq_barrier_central_reset(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_central_destroy(&c), SYNCQ_OK);
  assert_int_equal(syncq_barrier_mcs_tree_init(&t, &cfg), SYNCQ_OK);
  assert_int_equal(syncq_barrier_mcs_tree_wait_timed(&t, 0, TIMEOUT_NS), SYNCQ_OK);
  assert_int_equal(syncq_barrier_mcs_tree_reset(&t), SYNCQ_OK);
  assert_int_equal(syncq_barrier_mcs_tree_destroy(&t), SYNCQ_OK);
  assert_int_equal(syncq_barrier_mcs_tree_wait_timed(&t, 0, TIMEOUT_NS), SYNCQ_EINVAL); /* destroyed */
  assert_int_equal(syncq_barrier_mcs_tree_reset(&t), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_mcs_tree_reset(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_dissemination_init(&d, &cfg), SYNCQ_OK);
  assert_int_equal(syncq_barrier_dissemination_wait_timed(&d, 0, TIMEOUT_NS), SYNCQ_OK);
  assert_int_equal(syncq_barrier_dissemination_reset(&d), SYNCQ_OK);
  assert_int_equal(syncq_barrier_dissemination_destroy(&d), SYNCQ_OK);
  assert_int_equal(syncq_barrier_dissemination_wait_timed(&d, 0, TIMEOUT_NS), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_dissemination_reset(&d), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_dissemination_reset(NULL), SYNCQ_EINVAL);
  cfg.wait = SYNCQ_WAIT_BLOCK;
  assert_int_equal(syncq_barrier_pthread_init(&p, &cfg), SYNCQ_OK);
  assert_int_equal(syncq_barrier_pthread_wait_timed(&p, 0, TIMEOUT_NS), SYNCQ_ENOTSUP);
  assert_int_equal(syncq_barrier_pthread_wait_timed(&p, 1, TIMEOUT_NS), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_pthread_wait_timed(NULL, 0, TIMEOUT_NS), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_pthread_reset(&p), SYNCQ_ENOTSUP);
  assert_int_equal(syncq_barrier_pthread_reset(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_pthread_destroy(&p), SYNCQ_OK);
}

/* ---- timed waits ---- */

/* A hang fails the test after this long (a watchdog, not a measure). */
#define WATCHDOG_S 120
/* Timeouts of waits that must not time out (everyone arrives). */
#define LONG_TIMEOUT_NS 60000000000ull /* 60 s */
/* Race rounds: arrivals delayed by 0, T/4, T/2, 3T/4 or T (T the
 * timeout): the last ones come at or beside the first ones' deadline.
 * Sanitized builds run slower: a longer T keeps both outcomes common. */
#if defined(__aarch64__) /* run under qemu-user in CI: fewer, longer rounds */
#define RACE_SCALE 3
#else
#define RACE_SCALE 1
#endif
#define RACE_ROUNDS (60 / SCALE / RACE_SCALE)
#define RACE_ROUNDS_SPIN (12 / SCALE / RACE_SCALE + 1) /* spinners oversubscribed burn their slices */
#define RACE_TIMEOUT_NS \
  (300000ull * SCALE * SCALE * RACE_SCALE * RACE_SCALE) /* 0.3 ms; 4.8 ms sanitized, 2.7 under qemu */
#define TIMED_THREADS 5

static void watchdog_fired(int sig) {
  (void)sig;
  static const char msg[] = "barrier_test: a barrier wait hung past the watchdog\n";
  ssize_t w = write(2, msg, sizeof msg - 1);
  (void)w;
  _exit(3);
}

static void watchdog_arm(void) {
  signal(SIGALRM, watchdog_fired);
  alarm(WATCHDOG_S);
}

static void watchdog_disarm(void) { alarm(0); }

typedef struct timed_shared {
  const syncq_barrier_ops *ops;
  void *b;
  int threads;
  int slot[MAX_THREADS]; /* plain: ordered by the barrier only */
  int round;
} timed_shared;

typedef struct timed_thread {
  timed_shared *s;
  unsigned id;
  int timed;           /* wait_timed (else the untimed wait) */
  uint64_t timeout_ns; /* of wait_timed */
  uint64_t delay_ns;   /* before arriving */
  int status;
  int saw_all; /* an OK waiter saw every slot of this round */
} timed_thread;

static void *timed_main(void *p) {
  timed_thread *t = p;
  timed_shared *s = t->s;
  if (t->delay_ns) syncq_delay_ns(t->delay_ns);
  s->slot[t->id] = s->round;
  t->status = t->timed ? s->ops->wait_timed(s->b, t->id, t->timeout_ns) : s->ops->wait(s->b, t->id);
  t->saw_all = 1;
  if (t->status == SYNCQ_OK)
    for (int j = 0; j < s->threads; j++)
      if (s->slot[j] != s->round) t->saw_all = 0;
  return NULL;
}

/* Run one episode of `threads` threads, of which `missing` never arrives
 * (-1: none). */
static void run_timed_round(timed_shared *s, timed_thread *ts, int missing) {
  pthread_t tids[MAX_THREADS];
  for (int i = 0; i < s->threads; i++)
    if (i != missing) assert_int_equal(pthread_create(&tids[i], NULL, timed_main, &ts[i]), 0);
  for (int i = 0; i < s->threads; i++)
    if (i != missing) pthread_join(tids[i], NULL);
}

/* After a break: every later wait returns EBROKEN at once, without
 * joining; reset mends; whole episodes pass again. */
static void check_broken_then_reset(const syncq_algo *a, int wait, timed_shared *s) {
  const syncq_barrier_ops *ops = s->ops;
  for (int i = 0; i < s->threads; i++) {
    assert_int_equal(ops->wait(s->b, (unsigned)i), SYNCQ_EBROKEN);
    assert_int_equal(ops->wait_timed(s->b, (unsigned)i, LONG_TIMEOUT_NS), SYNCQ_EBROKEN);
    assert_int_equal(ops->wait_timed(s->b, (unsigned)i, SYNCQ_BARRIER_NO_TIMEOUT), SYNCQ_EBROKEN);
  }
  assert_int_equal(ops->reset(s->b), SYNCQ_OK);
  timed_thread ts[MAX_THREADS];
  for (int e = 0; e < 2; e++) { /* one timed, one untimed per thread */
    s->round++;
    for (int i = 0; i < s->threads; i++)
      ts[i] = (timed_thread){s, (unsigned)i, (i + e) % 2, LONG_TIMEOUT_NS, 0, -100, 0};
    run_timed_round(s, ts, -1);
    for (int i = 0; i < s->threads; i++) {
      if (ts[i].status != SYNCQ_OK || !ts[i].saw_all)
        fail_msg("%s/%s after reset: thread %d: %s, saw all %d", a->name, syncq_wait_name(wait), i,
                 syncq_strerror(ts[i].status), ts[i].saw_all);
    }
  }
}

/* One thread never arrives; the others wait, all timed or only the
 * thread `timed_one` timed. */
static void check_never_arrives(const syncq_algo *a, int wait, int missing, int timed_one) {
  const syncq_barrier_ops *ops = a->ops;
  timed_shared *s = calloc(1, sizeof *s);
  assert_non_null(s);
  s->ops = ops;
  s->threads = TIMED_THREADS;
  s->b = syncq_alloc_aligned(ops->size, ops->align);
  assert_non_null(s->b);
  syncq_barrier_config cfg = {(unsigned)s->threads, wait, false};
  assert_int_equal(ops->init(s->b, &cfg), SYNCQ_OK);
  /* a whole episode first, so the break is not in episode 0 */
  timed_thread ts[MAX_THREADS];
  s->round = 1;
  for (int i = 0; i < s->threads; i++) ts[i] = (timed_thread){s, (unsigned)i, 1, LONG_TIMEOUT_NS, 0, -100, 0};
  run_timed_round(s, ts, -1);
  for (int i = 0; i < s->threads; i++) assert_int_equal(ts[i].status, SYNCQ_OK);
  s->round = 2;
  for (int i = 0; i < s->threads; i++)
    ts[i] = (timed_thread){s, (unsigned)i, timed_one < 0 || i == timed_one, TIMEOUT_NS, 0, -100, 0};
  run_timed_round(s, ts, missing);
  int timedout = 0;
  for (int i = 0; i < s->threads; i++) {
    if (i == missing) continue;
    int st = ts[i].status;
    if (st == SYNCQ_ETIMEDOUT) timedout++;
    if (st != SYNCQ_ETIMEDOUT && st != SYNCQ_EBROKEN)
      fail_msg("%s/%s, thread %d never arrives: thread %d (%s) returned %s", a->name, syncq_wait_name(wait), missing, i,
               ts[i].timed ? "timed" : "untimed", syncq_strerror(st));
    if (!ts[i].timed && st != SYNCQ_EBROKEN)
      fail_msg("%s/%s: an untimed waiter returned %s", a->name, syncq_wait_name(wait), syncq_strerror(st));
  }
  assert_true(timedout >= 1);
  check_broken_then_reset(a, wait, s);
  assert_int_equal(ops->destroy(s->b), SYNCQ_OK);
  free(s->b);
  free(s);
}

/* Arrivals spread around the deadline, round after round. */
static void check_deadline_races(const syncq_algo *a, int wait) {
  const syncq_barrier_ops *ops = a->ops;
  timed_shared *s = calloc(1, sizeof *s);
  assert_non_null(s);
  s->ops = ops;
  s->threads = TIMED_THREADS;
  s->b = syncq_alloc_aligned(ops->size, ops->align);
  assert_non_null(s->b);
  syncq_barrier_config cfg = {(unsigned)s->threads, wait, false};
  assert_int_equal(ops->init(s->b, &cfg), SYNCQ_OK);
  unsigned seed = 12345u + (unsigned)wait;
  int broken_rounds = 0, whole_rounds = 0;
  timed_thread ts[MAX_THREADS];
  int rounds = wait == SYNCQ_WAIT_SPIN ? RACE_ROUNDS_SPIN : RACE_ROUNDS;
  for (int r = 0; r < rounds; r++) {
    s->round = r + 1;
    for (int i = 0; i < s->threads; i++) {
      seed = seed * 1103515245u + 12345u;
      uint64_t delay = RACE_TIMEOUT_NS * ((seed >> 16) % 5u) / 4u;
      int timed = r % 4 != 3 || i == 0; /* every 4th round: one timed, the rest untimed */
      ts[i] = (timed_thread){s, (unsigned)i, timed, RACE_TIMEOUT_NS, delay, -100, 0};
    }
    run_timed_round(s, ts, -1);
    int timedout = 0, brokenst = 0, ok = 0;
    for (int i = 0; i < s->threads; i++) {
      int st = ts[i].status;
      if (st == SYNCQ_OK) {
        ok++;
        if (!ts[i].saw_all)
          fail_msg("%s/%s round %d: thread %d left before everyone arrived", a->name, syncq_wait_name(wait), r, i);
      } else if (st == SYNCQ_ETIMEDOUT) {
        timedout++;
        if (!ts[i].timed) fail_msg("%s/%s: an untimed wait timed out", a->name, syncq_wait_name(wait));
      } else if (st == SYNCQ_EBROKEN) {
        brokenst++;
      } else {
        fail_msg("%s/%s round %d: thread %d returned %s", a->name, syncq_wait_name(wait), r, i, syncq_strerror(st));
      }
    }
    if (brokenst > 0 && timedout == 0)
      fail_msg("%s/%s round %d: EBROKEN without a timeout", a->name, syncq_wait_name(wait), r);
    if (timedout > 0) {
      broken_rounds++;
      assert_int_equal(ops->wait_timed(s->b, 0, LONG_TIMEOUT_NS), SYNCQ_EBROKEN);
      assert_int_equal(ops->reset(s->b), SYNCQ_OK);
    } else {
      whole_rounds++;
    }
  }
  print_message("barrier %s/%s deadline races: %d rounds broken, %d whole\n", a->name, syncq_wait_name(wait),
                broken_rounds, whole_rounds);
  assert_int_equal(ops->destroy(s->b), SYNCQ_OK);
  free(s->b);
  free(s);
}

/* Processes: PS_PROCS - 1 wait timed, one never arrives (exits, or is
 * SIGKILLed before arriving); or one is SIGKILLed while it waits, after
 * arriving (then its arrival counts: that episode completes for the
 * others, and the next one times out). */
enum { PS_VICTIM_EXITS, PS_VICTIM_KILLED_BEFORE, PS_VICTIM_KILLED_WAITING };

static void check_process_shared_timeout(const syncq_algo *a, int wait, int how) {
  const syncq_barrier_ops *ops = a->ops;
  size_t bytes;
  ps_region *r = ps_map(ops, wait, &bytes);
  const unsigned victim = PS_PROCS - 1;
  pid_t vp = fork();
  assert_true(vp >= 0);
  if (vp == 0) {
    if (how == PS_VICTIM_KILLED_WAITING) {
      /* its arrival is counted before the flag is set */
      atomic_store(&r->arrived_victim, 1);
      (void)ops->wait(r->b, victim);
    } else if (how == PS_VICTIM_KILLED_BEFORE) {
      pause(); /* killed here */
    }
    _exit(0);
  }
  if (how == PS_VICTIM_KILLED_WAITING) {
    while (atomic_load(&r->arrived_victim) == 0) syncq_yield();
    syncq_delay_ns(1000000); /* let it arrive (if not, the others time out: also checked) */
  }
  if (how != PS_VICTIM_EXITS) kill(vp, SIGKILL);
  int st = 0;
  assert_int_equal(waitpid(vp, &st, 0), vp);
  pid_t pids[PS_PROCS - 1];
  for (unsigned p = 0; p < victim; p++) {
    pids[p] = fork();
    assert_true(pids[p] >= 0);
    if (pids[p] == 0) {
      /* exit code: 0 as expected, 1 not */
      int s1 = ops->wait_timed(r->b, p, TIMEOUT_NS);
      int bad = s1 != SYNCQ_OK && s1 != SYNCQ_ETIMEDOUT && s1 != SYNCQ_EBROKEN;
      if (how != PS_VICTIM_KILLED_WAITING && s1 == SYNCQ_OK) bad = 1;
      if (s1 == SYNCQ_OK) { /* the victim's arrival counted: the next episode times out */
        int s2 = ops->wait_timed(r->b, p, TIMEOUT_NS);
        if (s2 != SYNCQ_ETIMEDOUT && s2 != SYNCQ_EBROKEN) bad = 1;
      }
      _exit(bad);
    }
  }
  for (unsigned p = 0; p < victim; p++) {
    assert_int_equal(waitpid(pids[p], &st, 0), pids[p]);
    if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0))
      fail_msg("%s/%s process-shared, victim case %d: survivor %u got an unexpected status", a->name,
               syncq_wait_name(wait), how, p);
  }
  assert_int_equal(ops->wait(r->b, 0), SYNCQ_EBROKEN);
  assert_int_equal(ops->reset(r->b), SYNCQ_OK);
  ps_unmap(ops, r, bytes);
}

static void check_timed_bad_inputs(const syncq_algo *a) {
  const syncq_barrier_ops *ops = a->ops;
  void *b = syncq_alloc_aligned(ops->size, ops->align);
  assert_non_null(b);
  syncq_barrier_config cfg = {1, SYNCQ_WAIT_DEFAULT, false};
  assert_int_equal(ops->init(b, &cfg), SYNCQ_OK);
  assert_int_equal(ops->wait_timed(NULL, 0, TIMEOUT_NS), SYNCQ_EINVAL);
  assert_int_equal(ops->wait_timed(b, 1, TIMEOUT_NS), SYNCQ_EINVAL); /* id out of range */
  assert_int_equal(ops->wait_timed(b, 0, 0), SYNCQ_EINVAL);          /* timeout 0: no poll */
  assert_int_equal(ops->reset(NULL), SYNCQ_EINVAL);
  if (strcmp(a->name, "pthread-barrier") == 0) {
    /* no timed wait: refused at once, never waits */
    assert_int_equal(ops->wait_timed(b, 0, TIMEOUT_NS), SYNCQ_ENOTSUP);
    assert_int_equal(ops->reset(b), SYNCQ_ENOTSUP);
  } else {
    /* one thread: the timed wait returns at once, the refused ones did not
     * join or break anything */
    for (int i = 0; i < 3; i++) assert_int_equal(ops->wait_timed(b, 0, TIMEOUT_NS), SYNCQ_OK);
    assert_int_equal(ops->wait_timed(b, 0, UINT64_MAX - 1), SYNCQ_OK); /* deadline saturates */
    assert_int_equal(ops->wait_timed(b, 0, SYNCQ_BARRIER_NO_TIMEOUT), SYNCQ_OK);
    assert_int_equal(ops->wait(b, 0), SYNCQ_OK);
    assert_int_equal(ops->reset(b), SYNCQ_OK);
    assert_int_equal(ops->wait(b, 0), SYNCQ_OK);
  }
  assert_int_equal(ops->destroy(b), SYNCQ_OK);
  free(b);
}

static void test_timed_waits(void **state) {
  (void)state;
  const syncq_algo *algos[SYNCQ_REGISTRY_MAX];
  int n = syncq_registry_list(SYNCQ_FAMILY_BARRIER, algos, SYNCQ_REGISTRY_MAX);
  int with_timeout = 0;
  watchdog_arm();
  for (int i = 0; i < n; i++) {
    const syncq_algo *a = algos[i];
    const syncq_barrier_ops *ops = a->ops;
    if (ops->wait_timed == NULL || ops->reset == NULL) {
      print_message("barrier %s: no timed wait (skipped; the generic API returns ENOTSUP)\n", a->name);
      continue;
    }
    check_timed_bad_inputs(a);
    if (strcmp(a->name, "pthread-barrier") == 0) {
      print_message("barrier %s: no timed wait in POSIX: ENOTSUP checked\n", a->name);
      continue;
    }
    with_timeout++;
    for (int w = SYNCQ_WAIT_SPIN; w < SYNCQ_WAIT_COUNT; w++) {
      uint64_t t0 = syncq_now_ns();
      check_never_arrives(a, w, TIMED_THREADS - 1, -1); /* the last leaf (dissemination: the last partner) */
      if (strcmp(a->name, "mcs-tree") == 0) check_never_arrives(a, w, 0, -1); /* its root */
      check_never_arrives(a, w, 2, 4); /* one timed, the others untimed: EBROKEN */
      check_deadline_races(a, w);
      if (a->props & SYNCQ_PROP_PROCESS_SHARED) {
        check_process_shared_timeout(a, w, PS_VICTIM_EXITS);
        check_process_shared_timeout(a, w, PS_VICTIM_KILLED_BEFORE);
        check_process_shared_timeout(a, w, PS_VICTIM_KILLED_WAITING);
      }
      print_message("barrier %s/%s timed waits: %.2f s\n", a->name, syncq_wait_name(w),
                    (double)(syncq_now_ns() - t0) / 1e9);
    }
  }
  watchdog_disarm();
  assert_true(with_timeout >= 4); /* central-cas, central-faa, mcs-tree, dissemination */
}

static void test_timed_generic_api(void **state) {
  (void)state;
  watchdog_arm();
  syncq_barrier *b = NULL;
  syncq_barrier_config cfg = {2, SYNCQ_WAIT_BLOCK, false};
  assert_int_equal(syncq_barrier_wait_timed(NULL, 0, TIMEOUT_NS), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_reset(NULL), SYNCQ_EINVAL);
  assert_string_not_equal(syncq_strerror(SYNCQ_EBROKEN), "unknown status");
  /* the generic API: the missing partner, then broken, then reset */
  assert_int_equal(syncq_barrier_create("mcs-tree", &cfg, &b), SYNCQ_OK);
  assert_int_equal(syncq_barrier_wait_timed(b, 0, TIMEOUT_NS), SYNCQ_ETIMEDOUT);
  assert_int_equal(syncq_barrier_wait(b, 1), SYNCQ_EBROKEN);
  assert_int_equal(syncq_barrier_wait_timed(b, 2, TIMEOUT_NS), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_wait_timed(b, 0, 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_reset(b), SYNCQ_OK);
  assert_int_equal(syncq_barrier_destroy(b), SYNCQ_OK);
  assert_int_equal(syncq_barrier_create("pthread-barrier", &cfg, &b), SYNCQ_OK);
  assert_int_equal(syncq_barrier_wait_timed(b, 0, TIMEOUT_NS), SYNCQ_ENOTSUP); /* at once: never waits */
  assert_int_equal(syncq_barrier_reset(b), SYNCQ_ENOTSUP);
  assert_int_equal(syncq_barrier_destroy(b), SYNCQ_OK);
  /* algorithms whose ops table has no timed wait (the peers') */
  const syncq_algo *algos[SYNCQ_REGISTRY_MAX];
  int n = syncq_registry_list(SYNCQ_FAMILY_BARRIER, algos, SYNCQ_REGISTRY_MAX);
  for (int i = 0; i < n; i++) {
    const syncq_barrier_ops *ops = algos[i]->ops;
    if (ops->wait_timed != NULL) continue;
    cfg.wait = SYNCQ_WAIT_DEFAULT;
    if (syncq_barrier_create(algos[i]->name, &cfg, &b) != SYNCQ_OK) continue;
    assert_int_equal(syncq_barrier_wait_timed(b, 0, TIMEOUT_NS), SYNCQ_ENOTSUP);
    assert_int_equal(syncq_barrier_reset(b), SYNCQ_ENOTSUP);
    assert_int_equal(syncq_barrier_destroy(b), SYNCQ_OK);
  }
  watchdog_disarm();
}

int main(int argc, char **argv) {
  if (argc > 1) cmocka_set_test_filter(argv[1]); /* e.g. "test_timed*" */
  test_plan_confine();
  test_register_peers();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_every_registered_barrier),
    cmocka_unit_test(test_generic_api),
    cmocka_unit_test(test_typed_apis),
    cmocka_unit_test(test_timed_waits),
    cmocka_unit_test(test_timed_generic_api),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
