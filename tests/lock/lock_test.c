/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lock_test.c — the lock validation driver: every registered lock, with
 * every waiting discipline it accepts, through its ops table; plus the
 * generic API and the bad inputs.
 *
 *  - mutual exclusion: threads = 8x the processing units (of the test
 *    plan's confined set, tests/support/test_plan.h) each add 1 to a
 *    plain (non-atomic) shared counter under the lock; the total must be
 *    the sum of the increments, and an occupancy counter checks that no
 *    two threads are ever inside at once. Yields are injected inside and
 *    outside the critical section at varying points, so holders are
 *    preempted (the oversubscribed run must finish: progress).
 *  - trylock semantics: free -> OK, held (by this or another thread) ->
 *    EBUSY; and a linearizability check of short trylock/unlock histories
 *    against a sequential mutex specification (tests/support/lincheck.h).
 *  - FIFO order for the locks that promise it (SYNCQ_PROP_FIFO).
 *  - process-shared locks: the same mutual exclusion across fork()ed
 *    processes in a MAP_SHARED mapping; locks without the property refuse
 *    process_shared with SYNCQ_ENOTSUP.
 *  - thread limits: a lock with slots (Anderson, array, sc-queue) refuses
 *    one thread past them with SYNCQ_ELIMIT, and no plan here exceeds any
 *    lock's limit.
 *  - bad inputs: NULL everywhere, unknown disciplines.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <cmocka.h>

#include "test_peers.h"
#include "test_plan.h"

#include "lincheck.h"
#include "syncq/counter/lock.h"
#include "syncq/lock.h"
#include "syncq/lock/anderson.h"
#include "syncq/lock/array.h"
#include "syncq/lock/clh.h"
#include "syncq/lock/futex_mutex.h"
#include "syncq/lock/mcs.h"
#include "syncq/lock/pthread_mutex.h"
#include "syncq/lock/tas.h"
#include "syncq/lock/ticket.h"
#include "syncq/clock.h"
#include "syncq/platform.h"
#include "syncq/stats.h"
#include "syncq/wait.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

#define OVERSUBSCRIPTION TEST_PLAN_OVERSUBSCRIPTION
#if SANITIZED
#define SCALE 4
#else
#define SCALE 1
#endif
/* Increments per thread. Under 8x oversubscription a busy-waiting lock
 * whose holder is preempted makes every waiter spin out its time slice,
 * and a FIFO spin lock hands the lock to preempted threads (a convoy: tens
 * of ms per hand-over on a loaded 2-core machine); so spinning runs get
 * fewer (the point there is that the run finishes), and FIFO spin locks
 * are also stressed with one thread per processing unit. */
#define ITERS_FAST (1000 / SCALE)
#define ITERS_SPIN (100 / SCALE)
#define ITERS_FIFO_SPIN_OVERSUBSCRIBED (2 / SCALE + 1)
#define ITERS_FIFO_SPIN_PER_PU (300 / SCALE)
#define YIELD_IN_CS 61 /* prime: yields land at varying points */
#define YIELD_OUTSIDE 7

/* The PUs this process is confined to (test_plan.h), and 8x as many
 * threads: 2 and 16 on any machine with 2 PUs or more. */
static int n_pus(void) { return test_plan_confine(); }
static int n_threads(void) { return test_plan_oversubscribed(OVERSUBSCRIPTION); }

/* A stress creates its lock for exactly its threads (max_threads), so the
 * array locks get a slot each; the plan stays within their slots. */
_Static_assert(TEST_PLAN_MAX_THREADS <= SYNCQ_LOCK_ARRAY_MAX_SLOTS, "a stress would exceed the array locks' slots");

static void *new_lock_storage(const syncq_lock_ops *ops) {
  void *p = syncq_alloc_aligned(ops->size, ops->align);
  assert_non_null(p);
  memset(p, 0xA5, ops->size); /* init must not rely on zeroed memory */
  return p;
}

static syncq_lock_config cfg_of(int wait) {
  syncq_lock_config c;
  memset(&c, 0, sizeof c);
  c.wait = wait;
  return c;
}

/* ------------------------------------------------------------ mutual exclusion */

typedef struct mx_shared {
  const syncq_lock_ops *ops;
  void *lock;
  uint64_t counter;        /* plain: protected by the lock only */
  _Atomic(int) occupancy;  /* threads inside the critical section */
  _Atomic(int) violations; /* times occupancy was seen > 1 */
  _Atomic(int) errors;     /* non-OK returns */
  int iters;
} mx_shared;

static void mx_body(mx_shared *s, syncq_lock_node *node, unsigned seed) {
  for (int i = 0; i < s->iters; i++) {
    if (s->ops->lock(s->lock, node) != SYNCQ_OK) {
      atomic_fetch_add(&s->errors, 1);
      continue;
    }
    if (atomic_fetch_add(&s->occupancy, 1) != 0) atomic_fetch_add(&s->violations, 1);
    uint64_t c = s->counter;
    if ((i + (int)seed) % YIELD_IN_CS == 0) syncq_yield(); /* holder preempted mid-update */
    s->counter = c + 1;
    atomic_fetch_sub(&s->occupancy, 1);
    if (s->ops->unlock(s->lock, node) != SYNCQ_OK) atomic_fetch_add(&s->errors, 1);
    if ((i + (int)seed) % YIELD_OUTSIDE == 0) syncq_yield();
  }
}

typedef struct mx_thread {
  mx_shared *s;
  unsigned seed;
  syncq_lock_node node;
} mx_thread;

static void *mx_thread_main(void *p) {
  mx_thread *t = p;
  mx_body(t->s, &t->node, t->seed);
  return NULL;
}

static bool fifo_spinning(const syncq_algo *a, int wait) {
  return (a->props & SYNCQ_PROP_FIFO) != 0 && wait == SYNCQ_WAIT_SPIN;
}

static void check_mutual_exclusion(const syncq_algo *a, int wait, int t, int iters) {
  const syncq_lock_ops *ops = a->ops;
  syncq_lock_config cfg = cfg_of(wait);
  cfg.max_threads = (unsigned)t;
  mx_shared s;
  memset(&s, 0, sizeof s);
  s.ops = ops;
  s.lock = new_lock_storage(ops);
  s.iters = iters;
  int r = ops->init(s.lock, &cfg);
  if (r == SYNCQ_ELIMIT)
    fail_msg("%s/%s: refuses max_threads %d (SYNCQ_ELIMIT): the plan exceeds its documented thread limit", a->name,
             syncq_wait_name(wait), t);
  assert_int_equal(r, SYNCQ_OK);
  mx_thread *ts = syncq_alloc_aligned(sizeof(mx_thread) * (size_t)t, _Alignof(mx_thread));
  pthread_t *tids = calloc((size_t)t, sizeof *tids);
  assert_non_null(ts);
  assert_non_null(tids);
  for (int i = 0; i < t; i++) {
    ts[i].s = &s;
    ts[i].seed = (unsigned)i * 13u;
    assert_int_equal(pthread_create(&tids[i], NULL, mx_thread_main, &ts[i]), 0);
  }
  for (int i = 0; i < t; i++) pthread_join(tids[i], NULL);
  if (atomic_load(&s.violations) != 0)
    fail_msg("%s/%s: %d mutual-exclusion violations", a->name, syncq_wait_name(wait), atomic_load(&s.violations));
  assert_int_equal(atomic_load(&s.errors), 0);
  if (s.counter != (uint64_t)t * (uint64_t)s.iters)
    fail_msg("%s/%s: counter %llu, expected %llu", a->name, syncq_wait_name(wait), (unsigned long long)s.counter,
             (unsigned long long)t * (unsigned long long)s.iters);
  assert_int_equal(ops->destroy(s.lock), SYNCQ_OK);
  free(s.lock);
  free(ts);
  free(tids);
}

/* ------------------------------------------------------------ trylock */

typedef struct try_arg {
  const syncq_lock_ops *ops;
  void *lock;
  int result;
} try_arg;

static void *try_from_other_thread(void *p) {
  try_arg *t = p;
  syncq_lock_node node;
  t->result = t->ops->trylock(t->lock, &node);
  if (t->result == SYNCQ_OK) t->ops->unlock(t->lock, &node);
  return NULL;
}

static void check_trylock(const syncq_algo *a, int wait) {
  const syncq_lock_ops *ops = a->ops;
  syncq_lock_config cfg = cfg_of(wait);
  void *l = new_lock_storage(ops);
  syncq_lock_node n1, n2;
  assert_int_equal(ops->init(l, &cfg), SYNCQ_OK);
  assert_int_equal(ops->trylock(l, &n1), SYNCQ_OK);    /* free -> acquired */
  assert_int_equal(ops->trylock(l, &n2), SYNCQ_EBUSY); /* held -> busy */
  try_arg t = {ops, l, 12345};
  pthread_t tid;
  assert_int_equal(pthread_create(&tid, NULL, try_from_other_thread, &t), 0);
  pthread_join(tid, NULL);
  assert_int_equal(t.result, SYNCQ_EBUSY);        /* held by another thread -> busy */
  assert_int_equal(ops->destroy(l), SYNCQ_EBUSY); /* held: not destroyed */
  assert_int_equal(ops->unlock(l, &n1), SYNCQ_OK);
  t.result = 12345;
  assert_int_equal(pthread_create(&tid, NULL, try_from_other_thread, &t), 0);
  pthread_join(tid, NULL);
  assert_int_equal(t.result, SYNCQ_OK); /* released -> another thread gets it */
  assert_int_equal(ops->lock(l, &n2), SYNCQ_OK);
  assert_int_equal(ops->trylock(l, &n1), SYNCQ_EBUSY);
  assert_int_equal(ops->unlock(l, &n2), SYNCQ_OK);
  assert_int_equal(ops->destroy(l), SYNCQ_OK);
  free(l);
}

/* A lock sized for a thread count that is not a power of two stays free
 * after every number of lock/unlock rounds: trylock takes it, destroy
 * succeeds (an array lock's slot arithmetic must wrap by the count, not a
 * mask). */
enum { CYCLE_MAX_THREADS = 6, CYCLE_MAX_ROUNDS = 13 };

static void check_free_after_rounds(const syncq_algo *a) {
  const syncq_lock_ops *ops = a->ops;
  for (unsigned t = 1; t <= CYCLE_MAX_THREADS; t++) {
    for (int rounds = 0; rounds <= CYCLE_MAX_ROUNDS; rounds++) {
      syncq_lock_config cfg = cfg_of(SYNCQ_WAIT_DEFAULT);
      cfg.max_threads = t;
      void *l = new_lock_storage(ops);
      syncq_lock_node node;
      int r = ops->init(l, &cfg);
      if (r == SYNCQ_ELIMIT || r == SYNCQ_ENOTSUP) { /* cannot be sized so small: documented */
        free(l);
        break;
      }
      assert_int_equal(r, SYNCQ_OK);
      for (int k = 0; k < rounds; k++) {
        assert_int_equal(ops->lock(l, &node), SYNCQ_OK);
        assert_int_equal(ops->unlock(l, &node), SYNCQ_OK);
      }
      if (ops->destroy(l) != SYNCQ_OK)
        fail_msg("lock %s, max_threads %u: destroy refused after %d lock/unlock rounds", a->name, t, rounds);
      assert_int_equal(ops->init(l, &cfg), SYNCQ_OK);
      for (int k = 0; k < rounds; k++) {
        assert_int_equal(ops->lock(l, &node), SYNCQ_OK);
        assert_int_equal(ops->unlock(l, &node), SYNCQ_OK);
      }
      if (ops->trylock(l, &node) != SYNCQ_OK)
        fail_msg("lock %s, max_threads %u: trylock refused a free lock after %d rounds", a->name, t, rounds);
      assert_int_equal(ops->unlock(l, &node), SYNCQ_OK);
      assert_int_equal(ops->destroy(l), SYNCQ_OK);
      free(l);
    }
  }
}

/* The locks with one slot per thread, which must document a limit. */
static bool has_slots(const syncq_algo *a) {
  static const char *const slotted[] = {"anderson", "array-cas", "array-faa",
                                        "sc-queue", "hybrid-sc", "ck:spinlock_anderson"};
  for (size_t i = 0; i < sizeof slotted / sizeof slotted[0]; i++)
    if (strcmp(a->name, slotted[i]) == 0) return true;
  return false;
}

/* max_threads: a lock either has no thread limit (any value is accepted)
 * or documents one (Anderson and array locks: their slots; sc-queue: its
 * slots): then init answers SYNCQ_ELIMIT one past it, and nothing else
 * but OK below. Found by bisection between the largest plan here, which
 * every lock must accept, and UINT_MAX. Returns the limit (0: none). */
static unsigned check_thread_limit(const syncq_algo *a) {
  const syncq_lock_ops *ops = a->ops;
  void *l = new_lock_storage(ops);
  syncq_lock_config cfg = cfg_of(SYNCQ_WAIT_DEFAULT);
  unsigned lo = TEST_PLAN_MAX_THREADS, hi = UINT_MAX;
  cfg.max_threads = lo;
  int r = ops->init(l, &cfg);
  if (r != SYNCQ_OK)
    fail_msg("lock %s: init with max_threads %u (the most any stress here plans) -> %s", a->name, lo,
             syncq_strerror(r));
  assert_int_equal(ops->destroy(l), SYNCQ_OK);
  cfg.max_threads = hi;
  r = ops->init(l, &cfg);
  if (r == SYNCQ_OK) {
    assert_int_equal(ops->destroy(l), SYNCQ_OK);
    free(l);
    return 0;
  }
  if (r != SYNCQ_ELIMIT)
    fail_msg("lock %s: init with max_threads %u -> %s, not OK or ELIMIT", a->name, hi, syncq_strerror(r));
  while (hi - lo > 1) { /* init(lo) OK, init(hi) ELIMIT */
    unsigned mid = lo + (hi - lo) / 2;
    cfg.max_threads = mid;
    r = ops->init(l, &cfg);
    if (r == SYNCQ_OK) {
      assert_int_equal(ops->destroy(l), SYNCQ_OK);
      lo = mid;
    } else if (r == SYNCQ_ELIMIT) {
      hi = mid;
    } else {
      fail_msg("lock %s: init with max_threads %u -> %s, not OK or ELIMIT", a->name, mid, syncq_strerror(r));
    }
  }
  free(l);
  return lo;
}

/* Linearizability of trylock/unlock: a sequential mutex with trylock. */
enum { LK_TRY = 1, LK_UNLOCK = 2 };
typedef struct lk_state {
  int holder; /* thread + 1, 0 when free */
} lk_state;
static void lk_init(void *st, uint64_t param) {
  (void)param;
  ((lk_state *)st)->holder = 0;
}
static bool lk_apply(void *st, const lc_op *op) {
  lk_state *s = st;
  if (op->kind == LK_TRY) {
    if (op->status == SYNCQ_OK) {
      if (s->holder != 0) return false;
      s->holder = op->thread + 1;
      return true;
    }
    return op->status == SYNCQ_EBUSY && s->holder != 0;
  }
  if (op->kind == LK_UNLOCK) {
    if (op->status != SYNCQ_OK || s->holder != op->thread + 1) return false;
    s->holder = 0;
    return true;
  }
  return false;
}
static const char *lk_kind(int k) { return k == LK_TRY ? "trylock" : "unlock"; }
static const lc_spec lk_spec = {"mutex-with-trylock", sizeof(lk_state), 0, lk_init, lk_apply};

#define LK_THREADS TEST_PLAN_HISTORY_THREADS
#define LK_OPS_PER_THREAD 7 /* trylocks; each success adds an unlock */
#define LK_HISTORIES (150 / SCALE)

typedef struct lk_run {
  const syncq_lock_ops *ops;
  void *lock;
  lc_clock *clock;
  _Atomic(int) *go;
  int thread;
  lc_op ops_rec[2 * LK_OPS_PER_THREAD];
  int n;
} lk_run;

static void *lk_thread(void *p) {
  lk_run *r = p;
  syncq_lock_node node;
  while (atomic_load(r->go) == 0) syncq_pr_relax();
  r->n = 0;
  for (int i = 0; i < LK_OPS_PER_THREAD; i++) {
    lc_op *op = &r->ops_rec[r->n++];
    op->thread = r->thread;
    op->kind = LK_TRY;
    op->arg = 0;
    op->ret = 0;
    op->call = lc_tick(r->clock);
    op->status = r->ops->trylock(r->lock, &node);
    op->done = lc_tick(r->clock);
    if (op->status == SYNCQ_OK) {
      if (i % 3 == 0) syncq_yield();
      lc_op *u = &r->ops_rec[r->n++];
      u->thread = r->thread;
      u->kind = LK_UNLOCK;
      u->arg = 0;
      u->ret = 0;
      u->call = lc_tick(r->clock);
      u->status = r->ops->unlock(r->lock, &node);
      u->done = lc_tick(r->clock);
    }
  }
  return NULL;
}

static void check_trylock_linearizable(const syncq_algo *a) {
  const syncq_lock_ops *ops = a->ops;
  void *l = new_lock_storage(ops);
  lk_run *runs = syncq_alloc_aligned(sizeof(lk_run) * LK_THREADS, _Alignof(lk_run));
  assert_non_null(runs);
  for (int h = 0; h < LK_HISTORIES; h++) {
    assert_int_equal(ops->init(l, NULL), SYNCQ_OK);
    lc_clock clock;
    lc_clock_init(&clock);
    _Atomic(int) go;
    atomic_init(&go, 0);
    pthread_t tids[LK_THREADS];
    for (int i = 0; i < LK_THREADS; i++) {
      runs[i].ops = ops;
      runs[i].lock = l;
      runs[i].clock = &clock;
      runs[i].go = &go;
      runs[i].thread = i;
      assert_int_equal(pthread_create(&tids[i], NULL, lk_thread, &runs[i]), 0);
    }
    atomic_store(&go, 1);
    for (int i = 0; i < LK_THREADS; i++) pthread_join(tids[i], NULL);
    lc_op all[LC_MAX_OPS];
    size_t n = 0;
    for (int i = 0; i < LK_THREADS; i++)
      for (int k = 0; k < runs[i].n; k++) all[n++] = runs[i].ops_rec[k];
    const char *err = NULL;
    if (!lc_check(&lk_spec, all, n, &err)) {
      lc_print(all, n, lk_kind);
      fail_msg("%s: trylock/unlock history not linearizable (%s)", a->name, err ? err : "no order");
    }
    assert_int_equal(ops->destroy(l), SYNCQ_OK);
  }
  free(runs);
  free(l);
}

/* ------------------------------------------------------------ FIFO */

#define FIFO_WAITERS 5

typedef struct fifo_shared {
  const syncq_lock_ops *ops;
  void *lock;
  _Atomic(int) calling[FIFO_WAITERS]; /* waiter i is about to call lock() */
  int order[FIFO_WAITERS];            /* who got it, in turn (under the lock) */
  int got;
} fifo_shared;

typedef struct fifo_thread {
  fifo_shared *s;
  int id;
  syncq_lock_node node;
} fifo_thread;

static void *fifo_main(void *p) {
  fifo_thread *t = p;
  atomic_store(&t->s->calling[t->id], 1);
  if (t->s->ops->lock(t->s->lock, &t->node) == SYNCQ_OK) {
    t->s->order[t->s->got++] = t->id;
    t->s->ops->unlock(t->s->lock, &t->node);
  }
  return NULL;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* The holder keeps the lock while waiters arrive one by one (each given
 * time to enter its lock() call: the wait only orders arrivals, it does
 * not measure anything); they must get the lock in arrival order. */
static void check_fifo(const syncq_algo *a, int wait) {
  const syncq_lock_ops *ops = a->ops;
  syncq_lock_config cfg = cfg_of(wait);
  fifo_shared s;
  memset(&s, 0, sizeof s);
  s.ops = ops;
  s.lock = new_lock_storage(ops);
  assert_int_equal(ops->init(s.lock, &cfg), SYNCQ_OK);
  fifo_thread *ts = syncq_alloc_aligned(sizeof(fifo_thread) * FIFO_WAITERS, _Alignof(fifo_thread));
  assert_non_null(ts);
  syncq_lock_node mine;
  pthread_t tids[FIFO_WAITERS];
  assert_int_equal(ops->lock(s.lock, &mine), SYNCQ_OK);
  for (int i = 0; i < FIFO_WAITERS; i++) {
    ts[i].s = &s;
    ts[i].id = i;
    assert_int_equal(pthread_create(&tids[i], NULL, fifo_main, &ts[i]), 0);
    while (atomic_load(&s.calling[i]) == 0) syncq_yield();
    sleep_ms(30);
  }
  assert_int_equal(ops->unlock(s.lock, &mine), SYNCQ_OK);
  for (int i = 0; i < FIFO_WAITERS; i++) pthread_join(tids[i], NULL);
  assert_int_equal(s.got, FIFO_WAITERS);
  for (int i = 0; i < FIFO_WAITERS; i++)
    if (s.order[i] != i)
      fail_msg("%s/%s: waiter %d got the lock in turn %d", a->name, syncq_wait_name(wait), s.order[i], i);
  assert_int_equal(ops->destroy(s.lock), SYNCQ_OK);
  free(s.lock);
  free(ts);
}

/* ------------------------------------------------------------ process-shared */

#define PS_PROCS 4
#define PS_ITERS (3000 / SCALE)

typedef struct ps_region {
  uint64_t counter;
  _Atomic(int) occupancy;
  _Atomic(int) violations;
  SYNCQ_CACHELINE_ALIGNED unsigned char lock[]; /* the lock's storage */
} ps_region;

static void check_process_shared(const syncq_algo *a, int wait) {
  const syncq_lock_ops *ops = a->ops;
  syncq_lock_config cfg = cfg_of(wait);
  cfg.process_shared = true;
  cfg.max_threads = PS_PROCS + 1;
  size_t bytes = sizeof(ps_region) + ops->size + 4096;
  ps_region *r = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  assert_true(r != MAP_FAILED);
  assert_true(ops->align <= 4096 && ((uintptr_t)r->lock % ops->align) == 0);
  assert_int_equal(ops->init(r->lock, &cfg), SYNCQ_OK);
  int iters = fifo_spinning(a, wait) ? PS_ITERS / 200 : wait == SYNCQ_WAIT_SPIN ? PS_ITERS / 4 : PS_ITERS;
  pid_t pids[PS_PROCS];
  for (int p = 0; p < PS_PROCS; p++) {
    pids[p] = fork();
    assert_true(pids[p] >= 0);
    if (pids[p] == 0) {
      syncq_lock_node node;
      int bad = 0;
      for (int i = 0; i < iters; i++) {
        if (ops->lock(r->lock, &node) != SYNCQ_OK) bad = 1;
        if (atomic_fetch_add(&r->occupancy, 1) != 0) atomic_fetch_add(&r->violations, 1);
        uint64_t c = r->counter;
        if ((i + p) % YIELD_IN_CS == 0) syncq_yield();
        r->counter = c + 1;
        atomic_fetch_sub(&r->occupancy, 1);
        if (ops->unlock(r->lock, &node) != SYNCQ_OK) bad = 1;
        if ((i + p) % YIELD_OUTSIDE == 0) syncq_yield();
      }
      _exit(bad);
    }
  }
  for (int p = 0; p < PS_PROCS; p++) {
    int st = 0;
    assert_int_equal(waitpid(pids[p], &st, 0), pids[p]);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  assert_int_equal(atomic_load(&r->violations), 0);
  assert_int_equal(r->counter, (uint64_t)PS_PROCS * (uint64_t)iters);
  assert_int_equal(ops->destroy(r->lock), SYNCQ_OK);
  munmap(r, bytes);
}

/* ------------------------------------------------------------ bad inputs */

static void check_bad_inputs(const syncq_algo *a) {
  const syncq_lock_ops *ops = a->ops;
  void *l = new_lock_storage(ops);
  syncq_lock_node node;
  syncq_lock_config cfg = cfg_of(SYNCQ_WAIT_DEFAULT);
  assert_int_equal(ops->init(NULL, NULL), SYNCQ_EINVAL);
  assert_int_equal(ops->destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(ops->lock(NULL, &node), SYNCQ_EINVAL);
  assert_int_equal(ops->trylock(NULL, &node), SYNCQ_EINVAL);
  assert_int_equal(ops->unlock(NULL, &node), SYNCQ_EINVAL);
  cfg.wait = 99;
  assert_int_equal(ops->init(l, &cfg), SYNCQ_EINVAL);
  cfg.wait = -1;
  assert_int_equal(ops->init(l, &cfg), SYNCQ_EINVAL);
  assert_int_equal(ops->init(l, NULL), SYNCQ_OK); /* NULL config: defaults */
  assert_int_equal(ops->lock(l, NULL), SYNCQ_EINVAL);
  assert_int_equal(ops->trylock(l, NULL), SYNCQ_EINVAL);
  assert_int_equal(ops->lock(l, &node), SYNCQ_OK);
  assert_int_equal(ops->unlock(l, NULL), SYNCQ_EINVAL);
  assert_int_equal(ops->unlock(l, &node), SYNCQ_OK);
  assert_int_equal(ops->destroy(l), SYNCQ_OK);
  if ((a->props & SYNCQ_PROP_PROCESS_SHARED) == 0) {
    cfg.wait = SYNCQ_WAIT_DEFAULT;
    cfg.process_shared = true;
    assert_int_equal(ops->init(l, &cfg), SYNCQ_ENOTSUP);
  }
  free(l);
}

/* ------------------------------------------------------------ the driver */

static void test_every_registered_lock(void **state) {
  (void)state;
  const syncq_algo *algos[SYNCQ_REGISTRY_MAX];
  int n = syncq_registry_list(SYNCQ_FAMILY_LOCK, algos, SYNCQ_REGISTRY_MAX);
  assert_true(n >= 2);
  for (int i = 0; i < n; i++) {
    const syncq_algo *a = algos[i];
    check_bad_inputs(a);
    unsigned limit = check_thread_limit(a);
    if (limit != 0)
      print_message("lock %s: at most %u threads (max_threads %u: SYNCQ_ELIMIT)\n", a->name, limit, limit + 1);
    else if (has_slots(a)) fail_msg("lock %s: has one slot per thread, yet accepts max_threads %u", a->name, UINT_MAX);
    check_free_after_rounds(a);
    check_trylock_linearizable(a);
    for (int w = 0; w < SYNCQ_WAIT_COUNT; w++) {
      void *probe = new_lock_storage(a->ops);
      syncq_lock_config cfg = cfg_of(w);
      int r = ((const syncq_lock_ops *)a->ops)->init(probe, &cfg);
      if (r == SYNCQ_OK) ((const syncq_lock_ops *)a->ops)->destroy(probe);
      free(probe);
      if (w == SYNCQ_WAIT_DEFAULT) assert_int_equal(r, SYNCQ_OK);
      if (r == SYNCQ_ENOTSUP) {
        print_message("lock %s: discipline %s not supported (skipped)\n", a->name, syncq_wait_name(w));
        continue;
      }
      assert_int_equal(r, SYNCQ_OK);
      if (w == SYNCQ_WAIT_DEFAULT) { /* the default is one of the others, run below */
        check_trylock(a, w);
        continue;
      }
      uint64_t t0 = syncq_now_ns();
      check_trylock(a, w);
      if (fifo_spinning(a, w)) {
        check_mutual_exclusion(a, w, n_threads(), ITERS_FIFO_SPIN_OVERSUBSCRIBED);
        check_mutual_exclusion(a, w, n_pus(), ITERS_FIFO_SPIN_PER_PU);
      } else {
        check_mutual_exclusion(a, w, n_threads(), w == SYNCQ_WAIT_SPIN ? ITERS_SPIN : ITERS_FAST);
      }
      uint64_t t1 = syncq_now_ns();
      if (a->props & SYNCQ_PROP_FIFO) check_fifo(a, w);
      uint64_t t2 = syncq_now_ns();
      if (a->props & SYNCQ_PROP_PROCESS_SHARED) check_process_shared(a, w);
      uint64_t t3 = syncq_now_ns();
      print_message("lock %s/%s: %d threads: exclusion %.2f s, fifo %.2f s, process-shared %.2f s\n", a->name,
                    syncq_wait_name(w), n_threads(), (double)(t1 - t0) / 1e9, (double)(t2 - t1) / 1e9,
                    (double)(t3 - t2) / 1e9);
    }
  }
}

static void test_generic_api(void **state) {
  (void)state;
  syncq_lock *l = NULL;
  syncq_lock_node node;
  assert_int_equal(syncq_lock_create("ttas", NULL, &l), SYNCQ_OK);
  assert_string_equal(syncq_lock_algo(l)->name, "ttas");
  assert_int_equal(syncq_lock_lock(l, &node), SYNCQ_OK);
  assert_int_equal(syncq_lock_trylock(l, &node), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_destroy(l), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_unlock(l, &node), SYNCQ_OK);
  assert_int_equal(syncq_lock_trylock(l, &node), SYNCQ_OK);
  assert_int_equal(syncq_lock_unlock(l, &node), SYNCQ_OK);
  assert_int_equal(syncq_lock_destroy(l), SYNCQ_OK);
  syncq_lock_config cfg = cfg_of(42);
  assert_int_equal(syncq_lock_create("ttas", &cfg, &l), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_create("no-such-lock", NULL, &l), SYNCQ_ENOENT);
  assert_int_equal(syncq_lock_create(NULL, NULL, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_create("ttas", NULL, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_lock(NULL, &node), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_trylock(NULL, &node), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_unlock(NULL, &node), SYNCQ_EINVAL);
  assert_null(syncq_lock_algo(NULL));
  assert_int_equal(syncq_lock_create("mcs", NULL, &l), SYNCQ_OK);
  assert_int_equal(syncq_lock_lock(l, NULL), SYNCQ_EINVAL); /* mcs keeps its state in the node */
  assert_int_equal(syncq_lock_destroy(l), SYNCQ_OK);
}

static void test_typed_tas(void **state) {
  (void)state;
  syncq_lock_tas l;
  syncq_lock_config cfg = cfg_of(SYNCQ_WAIT_SPIN);
  assert_int_equal(syncq_lock_ttas_init(&l, &cfg), SYNCQ_OK);
  assert_int_equal(syncq_lock_ttas_unlock(&l), SYNCQ_EINVAL); /* not held */
  assert_int_equal(syncq_lock_ttas_lock(&l), SYNCQ_OK);
  assert_int_equal(syncq_lock_ttas_trylock(&l), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_tas_trylock(&l), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_ttas_unlock(&l), SYNCQ_OK);
  assert_int_equal(syncq_lock_ttas_destroy(&l), SYNCQ_OK);
  assert_int_equal(syncq_lock_tas_init(NULL, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_ttas_lock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_ttas_trylock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_tas_unlock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_tas_destroy(NULL), SYNCQ_EINVAL);
}

static void test_pthread_mutex_spin_unsupported_and_robust(void **state) {
  (void)state;
  syncq_lock_pthread_mutex m;
  syncq_lock_config cfg = cfg_of(SYNCQ_WAIT_SPIN);
  assert_int_equal(syncq_lock_pthread_mutex_init(&m, &cfg), SYNCQ_ENOTSUP);
  cfg.wait = SYNCQ_WAIT_YIELD;
  assert_int_equal(syncq_lock_pthread_mutex_init(&m, &cfg), SYNCQ_ENOTSUP);
  /* a robust process-shared mutex whose owner dies is recovered (where
   * the kernel keeps robust futex lists: qemu-user does not) */
  void *robust_head = NULL;
  size_t robust_len = 0;
  if (syscall(SYS_get_robust_list, 0, &robust_head, &robust_len) != 0) {
    printf("robust mutex recovery skipped: no robust futexes here (get_robust_list: ENOSYS)\n");
    return;
  }
  syncq_lock_pthread_mutex *r = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  assert_true(r != MAP_FAILED);
  cfg.wait = SYNCQ_WAIT_DEFAULT;
  cfg.process_shared = true;
  assert_int_equal(syncq_lock_pthread_mutex_init(r, &cfg), SYNCQ_OK);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) _exit(syncq_lock_pthread_mutex_lock(r) == SYNCQ_OK ? 0 : 1); /* dies holding it */
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  assert_int_equal(syncq_lock_pthread_mutex_lock(r), SYNCQ_OK);
  assert_int_equal(syncq_lock_pthread_mutex_unlock(r), SYNCQ_OK);
  assert_int_equal(syncq_lock_pthread_mutex_destroy(r), SYNCQ_OK);
  munmap(r, 4096);
  assert_int_equal(syncq_lock_pthread_mutex_lock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_pthread_mutex_trylock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_pthread_mutex_unlock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_pthread_mutex_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_pthread_mutex_init(NULL, NULL), SYNCQ_EINVAL);
}

typedef struct anderson_arg {
  syncq_lock_anderson *l;
  int result;
} anderson_arg;

static void *anderson_locker(void *p) {
  anderson_arg *a = p;
  a->result = syncq_lock_anderson_lock(a->l);
  if (a->result == SYNCQ_OK) syncq_lock_anderson_unlock(a->l);
  return NULL;
}

static void test_anderson_thread_limit(void **state) {
  (void)state;
  syncq_lock_anderson *l = syncq_alloc_aligned(sizeof *l, _Alignof(syncq_lock_anderson));
  assert_non_null(l);
  syncq_lock_config cfg = cfg_of(SYNCQ_WAIT_YIELD);
  cfg.max_threads = SYNCQ_LOCK_ARRAY_MAX_SLOTS + 1;
  assert_int_equal(syncq_lock_anderson_init(l, &cfg), SYNCQ_ELIMIT);
  cfg.max_threads = 2;
  assert_int_equal(syncq_lock_anderson_init(l, &cfg), SYNCQ_OK);
  assert_int_equal(syncq_lock_anderson_lock(l), SYNCQ_OK);
  anderson_arg waiter = {l, 12345}, extra = {l, 12345};
  pthread_t tw, te;
  assert_int_equal(pthread_create(&tw, NULL, anderson_locker, &waiter), 0);
  while (atomic_load(&l->inside) != 2u) syncq_yield();            /* the waiter is in */
  assert_int_equal(syncq_lock_anderson_trylock(l), SYNCQ_ELIMIT); /* a third: beyond the limit */
  assert_int_equal(pthread_create(&te, NULL, anderson_locker, &extra), 0);
  pthread_join(te, NULL);
  assert_int_equal(extra.result, SYNCQ_ELIMIT);
  assert_int_equal(syncq_lock_anderson_unlock(l), SYNCQ_OK);
  pthread_join(tw, NULL);
  assert_int_equal(waiter.result, SYNCQ_OK);
  assert_int_equal(syncq_lock_anderson_unlock(l), SYNCQ_EINVAL); /* free now */
  assert_int_equal(syncq_lock_anderson_destroy(l), SYNCQ_OK);
  free(l);
}

static void test_typed_bad_inputs(void **state) {
  (void)state;
  syncq_lock_node n;
  syncq_lock_config big = cfg_of(SYNCQ_WAIT_DEFAULT);
  big.max_threads = SYNCQ_LOCK_ARRAY_MAX_SLOTS + 1;
  syncq_lock_array *arr = syncq_alloc_aligned(sizeof *arr, _Alignof(syncq_lock_array));
  assert_non_null(arr);
  assert_int_equal(syncq_lock_array_faa_init(arr, &big), SYNCQ_ELIMIT);
  assert_int_equal(syncq_lock_array_cas_init(arr, &big), SYNCQ_ELIMIT);
  big.max_threads = 3; /* rounded up to 4 slots */
  assert_int_equal(syncq_lock_array_cas_init(arr, &big), SYNCQ_OK);
  assert_int_equal(arr->mask, 3u);
  assert_int_equal(syncq_lock_array_unlock(arr), SYNCQ_EINVAL); /* not held */
  assert_int_equal(syncq_lock_array_cas_lock(arr), SYNCQ_OK);
  assert_int_equal(syncq_lock_array_trylock(arr), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_array_destroy(arr), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_array_unlock(arr), SYNCQ_OK);
  assert_int_equal(syncq_lock_array_destroy(arr), SYNCQ_OK);
  free(arr);
  assert_int_equal(syncq_lock_array_cas_lock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_array_faa_lock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_array_trylock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_array_unlock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_array_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_anderson_lock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_anderson_trylock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_anderson_unlock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_anderson_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_anderson_init(NULL, NULL), SYNCQ_EINVAL);
  syncq_lock_ticket t;
  assert_int_equal(syncq_lock_ticket_init(&t, NULL), SYNCQ_OK);
  assert_int_equal(syncq_lock_ticket_unlock(&t), SYNCQ_EINVAL); /* not held */
  assert_int_equal(syncq_lock_ticket_lock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_ticket_trylock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_ticket_unlock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_ticket_destroy(NULL), SYNCQ_EINVAL);
  syncq_lock_mcs m;
  assert_int_equal(syncq_lock_mcs_init(&m, NULL), SYNCQ_OK);
  assert_int_equal(syncq_lock_mcs_unlock(&m, &n), SYNCQ_EINVAL); /* not held */
  assert_int_equal(syncq_lock_mcs_lock(&m, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_mcs_lock(NULL, &n), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_mcs_trylock(NULL, &n), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_mcs_destroy(NULL), SYNCQ_EINVAL);
  syncq_lock_clh *c = syncq_alloc_aligned(sizeof *c, _Alignof(syncq_lock_clh));
  assert_non_null(c);
  assert_int_equal(syncq_lock_clh_init(c, NULL), SYNCQ_OK);
  memset(&n, 0, sizeof n);
  assert_int_equal(syncq_lock_clh_unlock(c, &n), SYNCQ_EINVAL); /* a node that never locked */
  assert_int_equal(syncq_lock_clh_lock(c, &n), SYNCQ_OK);
  assert_int_equal(syncq_lock_clh_destroy(c), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_clh_unlock(c, &n), SYNCQ_OK);
  assert_int_equal(syncq_lock_clh_unlock(c, &n), SYNCQ_EINVAL); /* twice */
  assert_int_equal(syncq_lock_clh_destroy(c), SYNCQ_OK);
  free(c);
  assert_int_equal(syncq_lock_clh_lock(NULL, &n), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_clh_trylock(NULL, &n), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_clh_destroy(NULL), SYNCQ_EINVAL);
  syncq_lock_futex_mutex f;
  syncq_lock_config spin = cfg_of(SYNCQ_WAIT_SPIN);
  assert_int_equal(syncq_lock_futex_mutex_init(&f, &spin), SYNCQ_ENOTSUP);
  assert_int_equal(syncq_lock_futex_mutex_init(&f, NULL), SYNCQ_OK);
  assert_int_equal(syncq_lock_futex_mutex_unlock(&f), SYNCQ_EINVAL); /* not held */
  assert_int_equal(syncq_lock_futex_mutex_lock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_futex_mutex_trylock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_futex_mutex_destroy(NULL), SYNCQ_EINVAL);
}

static void test_lock_counter_typed(void **state) {
  (void)state;
  syncq_counter_lock c;
  int64_t v = 0;
  syncq_lock_config spin = cfg_of(SYNCQ_WAIT_SPIN);
  assert_int_equal(syncq_counter_lock_init(NULL, 0, "ttas", NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_lock_init(&c, 0, NULL, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_lock_init(&c, 0, "no-such-lock", NULL), SYNCQ_ENOENT);
  assert_int_equal(syncq_counter_lock_init(&c, 0, "pthread-mutex", &spin), SYNCQ_ENOTSUP);
  assert_int_equal(syncq_counter_lock_init(&c, 40, "clh", NULL), SYNCQ_OK);
  assert_int_equal(syncq_counter_lock_fetch_add(&c, 2, &v), SYNCQ_OK);
  assert_int_equal(v, 40);
  assert_int_equal(syncq_counter_lock_load(&c, &v), SYNCQ_OK);
  assert_int_equal(v, 42);
  assert_int_equal(syncq_counter_lock_load(&c, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_lock_destroy(&c), SYNCQ_OK);
  assert_int_equal(syncq_counter_lock_destroy(&c), SYNCQ_EINVAL); /* already destroyed */
  assert_int_equal(syncq_counter_lock_fetch_add(&c, 1, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_lock_fetch_add(NULL, 1, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_counter_lock_destroy(NULL), SYNCQ_EINVAL);
}

static void test_wait_api(void **state) {
  (void)state;
  int d = -1;
  assert_int_equal(syncq_wait_check(SYNCQ_WAIT_COMPETITIVE), SYNCQ_OK);
  assert_int_equal(syncq_wait_check(SYNCQ_WAIT_COUNT), SYNCQ_EINVAL);
  assert_int_equal(syncq_wait_check(-1), SYNCQ_EINVAL);
  assert_string_equal(syncq_wait_name(SYNCQ_WAIT_BLOCK), "block");
  assert_null(syncq_wait_name(77));
  assert_int_equal(syncq_wait_from_name("competitive", &d), SYNCQ_OK);
  assert_int_equal(d, SYNCQ_WAIT_COMPETITIVE);
  assert_int_equal(syncq_wait_from_name("nap", &d), SYNCQ_ENOENT);
  assert_int_equal(syncq_wait_from_name(NULL, &d), SYNCQ_EINVAL);
  assert_int_equal(syncq_wait_from_name("spin", NULL), SYNCQ_EINVAL);
  uint64_t lim = syncq_wait_spin_limit_ns();
  assert_true(lim >= 1000 && lim <= 200000);     /* the documented clamp */
  assert_int_equal(syncq_wait_calibrate(), lim); /* measured once */
  print_message("competitive spin limit: %llu ns\n", (unsigned long long)lim);
}

int main(void) {
  test_plan_confine();
  test_register_peers();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_wait_api),
    cmocka_unit_test(test_every_registered_lock),
    cmocka_unit_test(test_generic_api),
    cmocka_unit_test(test_typed_tas),
    cmocka_unit_test(test_anderson_thread_limit),
    cmocka_unit_test(test_typed_bad_inputs),
    cmocka_unit_test(test_lock_counter_typed),
    cmocka_unit_test(test_pthread_mutex_spin_unsupported_and_robust),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
