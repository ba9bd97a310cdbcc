/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mp_test.c — the multiprogramming pseudo-scheduler (syncq/mp.h), the
 * preemption-safe and scheduler-conscious locks, and every registered lock
 * and queue under the pseudo-scheduler at multiprogramming level 3.
 *
 *  - a preempted thread is really stopped: while it reads as preempted (in
 *    the same preemption episode) its progress counter does not move;
 *  - a no-preemption request is honoured (the scheduler defers, the thread
 *    is not stopped during a request shorter than the bound) and is not
 *    honoured past the bound (forced preemption); a "ttas-ps" holder's
 *    request (typed API and ops table) is honoured the same way;
 *  - the request against a preemption signal delivered at a chosen point
 *    (held blocked, then unblocked there): before the request, inside it
 *    (deferred, the end stops the thread), inside a nested one (only the
 *    outermost end stops it), not yet delivered at the end (the end stops
 *    the thread, the late signal finds it resumed), after the resume
 *    (nothing to stop), inside a request past the bound (forced);
 *  - no resume is lost: threads churned at a 200 us quantum all finish a
 *    fixed amount of work;
 *  - stop / destroy: every thread is resumed, destroy refuses while threads
 *    are registered;
 *  - every registered lock: mutual exclusion (a plain shared counter vs the
 *    sum of per-thread increments) with 3 applications x 2 processors, time
 *    sharing and gang;
 *  - every registered queue: no loss, no duplicate, per-producer order
 *    under the same schedule;
 *  - the scheduler-conscious lock passes over a preempted waiter;
 *  - bad inputs: level 0, quantum 0, too many threads, NULLs, disciplines
 *    the locks refuse.
 * Nothing here checks speed. All runs are bounded in time (the lock runs)
 * or in work (the queue and resume runs), with short quanta.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <cmocka.h>

#include "syncq/clock.h"
#include "syncq/backoff.h"
#include "syncq/lock.h"
#include "syncq/lock/sc_queue.h"
#include "syncq/lock/ttas_ps.h"
#include "syncq/mp.h"
#include "syncq/platform.h"
#include "syncq/pr.h"
#include "syncq/queue.h"
#include "syncq/registry.h"
#include "syncq/wait.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

#define US 1000ull
#define MS 1000000ull
#define LEVEL 3 /* the papers' highest multiprogramming level */
#define PROCS 2 /* virtual processors (this machine has 2 cores) */
#define NTHREADS (LEVEL * PROCS)
#define TEST_QUANTUM_NS (1 * MS) /* short quanta: many preemptions in a short test */
#define LOCK_RUN_NS (60 * MS)    /* each lock's time-bounded run */
#define QUEUE_ITEMS 3000u        /* per producer */
#define QUEUE_WORK_NS (10 * US)  /* between two enqueues: the run spans many quanta */
#define QUEUE_CAPACITY 1024u
#define WAIT_LIMIT_NS (20000 * MS) /* a hang (lost resume) fails after this */
#define MAX_ALGOS 64

static void sleep_ns(uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
  nanosleep(&ts, NULL);
}

static syncq_mp_sched *make_sched(unsigned level, unsigned procs, uint64_t quantum, int policy, uint64_t limit) {
  syncq_mp_config c;
  syncq_mp_config_default(&c, level, procs);
  c.quantum_ns = quantum;
  c.policy = policy;
  if (limit) c.nopreempt_limit_ns = limit;
  syncq_mp_sched *s = NULL;
  assert_int_equal(syncq_mp_create(&c, &s), SYNCQ_OK);
  return s;
}

/* ---- bad inputs ---- */
static void *register_fails_limit(void *arg) {
  syncq_mp_thread *t;
  *(int *)((void **)arg)[1] = syncq_mp_register(((void **)arg)[0], 0, 0, &t);
  return NULL;
}

static void test_bad_inputs(void **state) {
  (void)state;
  syncq_mp_config c;
  syncq_mp_sched *s;
  syncq_mp_config_default(&c, 0, 1);
  assert_int_equal(syncq_mp_create(&c, &s), SYNCQ_EINVAL); /* level 0 */
  syncq_mp_config_default(&c, SYNCQ_MP_MAX_LEVEL + 1, 1);
  assert_int_equal(syncq_mp_create(&c, &s), SYNCQ_EINVAL);
  syncq_mp_config_default(&c, 2, 0);
  assert_int_equal(syncq_mp_create(&c, &s), SYNCQ_EINVAL); /* no processor */
  syncq_mp_config_default(&c, 2, 1);
  c.quantum_ns = 0;
  assert_int_equal(syncq_mp_create(&c, &s), SYNCQ_EINVAL); /* quantum 0 */
  syncq_mp_config_default(&c, 2, 1);
  c.max_threads = SYNCQ_MP_MAX_THREADS + 1;
  assert_int_equal(syncq_mp_create(&c, &s), SYNCQ_EINVAL);
  syncq_mp_config_default(&c, 2, 1);
  c.policy = 7;
  assert_int_equal(syncq_mp_create(&c, &s), SYNCQ_EINVAL);
  syncq_mp_config_default(&c, 2, 1);
  c.signo = -3;
  assert_int_equal(syncq_mp_create(&c, &s), SYNCQ_EINVAL);
  assert_int_equal(syncq_mp_create(NULL, &s), SYNCQ_EINVAL);
  assert_int_equal(syncq_mp_create(&c, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_mp_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_mp_stop(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_mp_unregister(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_mp_get_stats(NULL, NULL), SYNCQ_EINVAL);
  assert_false(syncq_mp_is_preempted(NULL));
  assert_int_equal(syncq_mp_preempt_count(NULL), 0);
  assert_null(syncq_mp_self());
  syncq_mp_nopreempt_begin(); /* unregistered: no-ops */
  syncq_mp_nopreempt_end();
  syncq_mp_nopreempt_end(); /* unmatched: ignored */
  assert_false(syncq_mp_rseq_slice_available());

  /* more threads than the configured maximum */
  syncq_mp_config_default(&c, 2, 2);
  c.max_threads = 1;
  c.quantum_ns = 50 * MS;
  assert_int_equal(syncq_mp_create(&c, &s), SYNCQ_OK);
  syncq_mp_stats st;
  assert_int_equal(syncq_mp_get_stats(s, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_mp_get_stats(s, &st), SYNCQ_OK);
  syncq_mp_thread *t;
  assert_int_equal(syncq_mp_register(NULL, 0, 0, &t), SYNCQ_EINVAL);
  assert_int_equal(syncq_mp_register(s, 2, 0, &t), SYNCQ_EINVAL); /* app >= level */
  assert_int_equal(syncq_mp_register(s, 0, 2, &t), SYNCQ_EINVAL); /* proc >= procs */
  /* the main thread registers on the processor application 0 holds in
   * slice 0 and stops the schedule before the next one */
  assert_int_equal(syncq_mp_register(s, 0, 0, &t), SYNCQ_OK);
  assert_int_equal(syncq_mp_stop(s), SYNCQ_OK);
  assert_ptr_equal(syncq_mp_self(), t);
  syncq_mp_thread *t2;
  assert_int_equal(syncq_mp_register(s, 0, 0, &t2), SYNCQ_EINVAL); /* already registered */
  int r = 0;
  void *args[2] = {s, &r};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, register_fails_limit, args), 0);
  pthread_join(th, NULL);
  assert_int_equal(r, SYNCQ_ELIMIT);
  assert_int_equal(syncq_mp_destroy(s), SYNCQ_EBUSY); /* a thread is registered */
  assert_int_equal(syncq_mp_unregister(t), SYNCQ_OK);
  assert_int_equal(syncq_mp_unregister(t), SYNCQ_EINVAL);
  assert_null(syncq_mp_self());
  assert_int_equal(syncq_mp_destroy(s), SYNCQ_OK);

  /* the locks' own bad inputs */
  syncq_lock_sc sc;
  syncq_lock_config lc = {0, SYNCQ_WAIT_BLOCK, false};
  assert_int_equal(syncq_lock_sc_queue_init(NULL, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_hybrid_sc_init(&sc, &lc), SYNCQ_OK); /* every discipline */
  assert_int_equal(syncq_lock_sc_destroy(&sc), SYNCQ_OK);
  lc.wait = SYNCQ_WAIT_COMPETITIVE;
  assert_int_equal(syncq_lock_sc_queue_init(&sc, &lc), SYNCQ_OK);
  assert_int_equal(syncq_lock_sc_destroy(&sc), SYNCQ_OK);
  lc.wait = 99;
  assert_int_equal(syncq_lock_sc_queue_init(&sc, &lc), SYNCQ_EINVAL);
  lc = (syncq_lock_config){SYNCQ_LOCK_SC_MAX_SLOTS + 1, 0, false};
  assert_int_equal(syncq_lock_sc_queue_init(&sc, &lc), SYNCQ_ELIMIT);
  lc = (syncq_lock_config){0, 0, true};
  assert_int_equal(syncq_lock_sc_queue_init(&sc, &lc), SYNCQ_ENOTSUP);
  assert_int_equal(syncq_lock_hybrid_sc_init(&sc, NULL), SYNCQ_OK);
  assert_int_equal(syncq_lock_sc_unlock(&sc), SYNCQ_EINVAL); /* not held */
  assert_int_equal(syncq_lock_sc_trylock(&sc), SYNCQ_OK);
  assert_int_equal(syncq_lock_sc_trylock(&sc), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_sc_destroy(&sc), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_sc_unlock(&sc), SYNCQ_OK);
  assert_int_equal(syncq_lock_sc_lock(&sc), SYNCQ_OK);
  assert_int_equal(syncq_lock_sc_unlock(&sc), SYNCQ_OK);
  assert_int_equal(syncq_lock_sc_destroy(&sc), SYNCQ_OK);
  uint64_t skips;
  assert_int_equal(syncq_lock_sc_skips(NULL, &skips), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_sc_skips(&sc, NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_sc_lock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_sc_trylock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_sc_destroy(NULL), SYNCQ_EINVAL);
  syncq_lock_tas tl;
  assert_int_equal(syncq_lock_ttas_ps_init(NULL, NULL), SYNCQ_EINVAL);
  lc = (syncq_lock_config){0, 99, false};
  assert_int_equal(syncq_lock_ttas_ps_init(&tl, &lc), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_ttas_ps_init(&tl, NULL), SYNCQ_OK);
  assert_int_equal(syncq_lock_ttas_ps_unlock(&tl), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_ttas_ps_trylock(&tl), SYNCQ_OK);
  assert_int_equal(syncq_lock_ttas_ps_trylock(&tl), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_ttas_ps_destroy(&tl), SYNCQ_EBUSY);
  assert_int_equal(syncq_lock_ttas_ps_unlock(&tl), SYNCQ_OK);
  assert_int_equal(syncq_lock_ttas_ps_lock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_ttas_ps_trylock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_ttas_ps_unlock(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_lock_ttas_ps_destroy(&tl), SYNCQ_OK);
}

/* ---- a preempted thread does not move ---- */
typedef struct spinner {
  syncq_mp_sched *s;
  unsigned app, proc;
  _Atomic(syncq_mp_thread *) handle;
  _Atomic(uint64_t) progress;
  _Atomic(int) stop, done;
  int nopreempt_every; /* > 0: work in requests of this many iterations */
  uint64_t work;       /* > 0: stop after this many iterations */
} spinner;

static void *spinner_main(void *arg) {
  spinner *sp = arg;
  syncq_mp_thread *t;
  if (syncq_mp_register(sp->s, sp->app, sp->proc, &t) != SYNCQ_OK) {
    atomic_store(&sp->done, -1);
    return NULL;
  }
  atomic_store(&sp->handle, t);
  uint64_t i = 0;
  while (!atomic_load(&sp->stop) && (sp->work == 0 || i < sp->work)) {
    if (sp->nopreempt_every > 0 && i % (uint64_t)sp->nopreempt_every == 0) syncq_mp_nopreempt_begin();
    atomic_fetch_add(&sp->progress, 1);
    i++;
    if (sp->nopreempt_every > 0 && i % (uint64_t)sp->nopreempt_every == 0) syncq_mp_nopreempt_end();
  }
  if (sp->nopreempt_every > 0 && i % (uint64_t)sp->nopreempt_every != 0) syncq_mp_nopreempt_end();
  syncq_mp_unregister(t);
  atomic_store(&sp->done, 1);
  return NULL;
}

static syncq_mp_thread *wait_handle(spinner *sp) {
  syncq_mp_thread *t;
  while ((t = atomic_load(&sp->handle)) == NULL) {
    assert_int_not_equal(atomic_load(&sp->done), -1);
    sleep_ns(100 * US);
  }
  return t;
}

static void test_preempted_thread_is_frozen(void **state) {
  (void)state;
  syncq_mp_sched *s = make_sched(2, 1, 3 * MS, SYNCQ_MP_TIMESHARE, 0);
  spinner sp = {.s = s, .app = 0, .proc = 0};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, spinner_main, &sp), 0);
  syncq_mp_thread *t = wait_handle(&sp);
  int observed = 0;
  uint64_t start = syncq_now_ns(), last_episode = 0;
  while (observed < 5 && syncq_now_ns() - start < WAIT_LIMIT_NS) {
    if (!syncq_mp_is_preempted(t)) {
      sleep_ns(200 * US);
      continue;
    }
    uint64_t episode = syncq_mp_preempt_count(t);
    if (episode == last_episode) {
      sleep_ns(200 * US);
      continue;
    }
    uint64_t c1 = atomic_load(&sp.progress);
    sleep_ns(500 * US);
    uint64_t c2 = atomic_load(&sp.progress);
    if (syncq_mp_is_preempted(t) && syncq_mp_preempt_count(t) == episode) {
      assert_int_equal(c1, c2); /* stopped for the whole window */
      observed++;
      last_episode = episode;
    }
  }
  assert_int_equal(observed, 5);
  uint64_t before = atomic_load(&sp.progress);
  while (atomic_load(&sp.progress) == before) sleep_ns(500 * US); /* and it runs again */
  atomic_store(&sp.stop, 1);
  assert_int_equal(syncq_mp_stop(s), SYNCQ_OK);
  pthread_join(th, NULL);
  syncq_mp_stats st;
  assert_int_equal(syncq_mp_get_stats(s, &st), SYNCQ_OK);
  assert_true(st.preemptions >= 5);
  assert_true(st.resumes >= 5);
  assert_int_equal(syncq_mp_destroy(s), SYNCQ_OK);
}

/* ---- no-preemption requests ---- */
typedef struct requester {
  syncq_mp_sched *s;
  uint64_t hold_ns;      /* hold the request this long (0: until stopped) */
  uint64_t stops_during; /* stops counted while the request stood */
  int via;               /* REQ_*: who makes the request */
  int rc;
} requester;

/* The request made directly, or by holding a "ttas-ps" lock through its
 * typed API or through its registry ops table (the lock's own request
 * spans acquisition and critical section). */
enum { REQ_DIRECT, REQ_TTAS_PS, REQ_TTAS_PS_OPS };

static int request_begin(requester *rq, syncq_lock_tas *l) {
  if (rq->via == REQ_DIRECT) {
    syncq_mp_nopreempt_begin();
    return SYNCQ_OK;
  }
  if (rq->via == REQ_TTAS_PS) return syncq_lock_ttas_ps_lock(l);
  syncq_lock_node node; /* the ops table takes one; "ttas-ps" does not use it */
  return ((const syncq_lock_ops *)syncq_lock_ttas_ps_algo.ops)->lock(l, &node);
}

static int request_end(requester *rq, syncq_lock_tas *l) {
  if (rq->via == REQ_DIRECT) {
    syncq_mp_nopreempt_end();
    return SYNCQ_OK;
  }
  if (rq->via == REQ_TTAS_PS) return syncq_lock_ttas_ps_unlock(l);
  syncq_lock_node node;
  return ((const syncq_lock_ops *)syncq_lock_ttas_ps_algo.ops)->unlock(l, &node);
}

static void *requester_main(void *arg) {
  requester *rq = arg;
  syncq_mp_thread *t;
  rq->rc = syncq_mp_register(rq->s, 0, 0, &t);
  if (rq->rc != SYNCQ_OK) return NULL;
  sleep_ns(2 * MS); /* let the schedule start */
  syncq_lock_tas l;
  if (syncq_lock_ttas_ps_init(&l, NULL) != SYNCQ_OK || request_begin(rq, &l) != SYNCQ_OK) {
    rq->rc = SYNCQ_EINVAL;
    syncq_mp_unregister(t);
    return NULL;
  }
  uint64_t s0 = syncq_mp_preempt_count(t), t0 = syncq_now_ns();
  for (;;) {
    uint64_t now = syncq_now_ns();
    if (rq->hold_ns != 0 && now - t0 >= rq->hold_ns) break;
    if (rq->hold_ns == 0 && (syncq_mp_preempt_count(t) != s0 || now - t0 > WAIT_LIMIT_NS)) break;
    syncq_pr_relax();
  }
  rq->stops_during = syncq_mp_preempt_count(t) - s0;
  if (request_end(rq, &l) != SYNCQ_OK || syncq_lock_ttas_ps_destroy(&l) != SYNCQ_OK) rq->rc = SYNCQ_EINVAL;
  syncq_mp_unregister(t);
  return NULL;
}

/* One requester alone at level 2 on one processor, with this quantum and
 * request bound, holding its request hold_ns (0: until stopped): the
 * schedule's counters into *st; returns the stops inside the request. */
static uint64_t run_requester_via(int via, uint64_t quantum, uint64_t limit, uint64_t hold_ns, syncq_mp_stats *st) {
  syncq_mp_sched *s = make_sched(2, 1, quantum, SYNCQ_MP_TIMESHARE, limit);
  requester rq = {.s = s, .hold_ns = hold_ns, .via = via};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, requester_main, &rq), 0);
  pthread_join(th, NULL);
  assert_int_equal(rq.rc, SYNCQ_OK);
  assert_int_equal(syncq_mp_get_stats(s, st), SYNCQ_OK);
  assert_int_equal(syncq_mp_destroy(s), SYNCQ_OK);
  return rq.stops_during;
}

static uint64_t run_requester(uint64_t quantum, uint64_t limit, uint64_t hold_ns, syncq_mp_stats *st) {
  return run_requester_via(REQ_DIRECT, quantum, limit, hold_ns, st);
}

/* A "ttas-ps" holder is not preempted inside its critical section (within
 * the bound: the scheduler defers), through the typed API and through the
 * ops table alike. */
static void test_ttas_ps_holder_not_preempted(void **state) {
  (void)state;
  for (int via = REQ_TTAS_PS; via <= REQ_TTAS_PS_OPS; via++) {
    syncq_mp_stats st;
    uint64_t stops = run_requester_via(via, 1 * MS, 2000 * MS, 30 * MS, &st);
    assert_int_equal(stops, 0);
    assert_true(st.deferrals >= 1);
    assert_int_equal(st.forced, 0);
  }
}

static void test_nopreempt_honoured_within_bound(void **state) {
  (void)state;
  /* quantum 1 ms at level 2: the scheduler wants the processor back every
   * 2 ms; the bound (2 s) is far longer than the 30 ms request */
  syncq_mp_stats st;
  uint64_t stops = run_requester(1 * MS, 2000 * MS, 30 * MS, &st);
  assert_int_equal(stops, 0);     /* never stopped inside the request */
  assert_true(st.deferrals >= 1); /* though the scheduler wanted to */
  assert_int_equal(st.forced, 0);
}

static void test_nopreempt_not_honoured_past_bound(void **state) {
  (void)state;
  /* the bound (1 ms) is shorter than the time the thread would be away
   * (a 5 ms quantum), so the deferral runs out */
  syncq_mp_stats st;
  uint64_t stops = run_requester(5 * MS, 1 * MS, 0, &st); /* holds the request until stopped */
  assert_true(stops >= 1);                                /* stopped despite the request */
  assert_true(st.forced >= 1);
}

/* ---- the request against a signal delivered at a chosen point ----
 * The thread blocks the preemption signal, lets the scheduler decide to
 * preempt it (the gate says stop, the signal waits), and unblocks it at
 * the point under test: the handler runs there, before pthread_sigmask
 * returns. Level 2 on one processor, 100 ms quanta: the decision comes at
 * the first slice's end, the resume a quantum later. */
enum point_case {
  POINT_BEFORE,  /* delivered before the request: stops at once */
  POINT_INSIDE,  /* inside: deferred; the end stops the thread */
  POINT_NESTED,  /* inside a nested request: only the outermost end stops */
  POINT_AT_END,  /* not delivered by the end: the end stops the thread */
  POINT_RESUMED, /* delivered after the resume: nothing to stop */
  POINT_FORCED,  /* inside a request that outlasts the bound: stopped there */
};

typedef struct point_run {
  syncq_mp_sched *s;
  enum point_case c;
  int rc, timed_out;
  /* the thread's stop count (from its value at the decision) after the
   * delivery, after an inner end, after the outermost end */
  uint64_t at_delivery, at_inner_end, at_end;
} point_run;

static void point_set_mask(int how) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGRTMIN + SYNCQ_MP_SIGNAL_OFFSET);
  pthread_sigmask(how, &set, NULL);
}

/* Wait until the scheduler's preemption signal is pending for the thread
 * (the decision is made: the gate says stop) and, with resumed, until the
 * scheduler has resumed the thread too; false after WAIT_LIMIT_NS. */
static bool point_wait(syncq_mp_sched *s, bool resumed) {
  uint64_t start = syncq_now_ns();
  for (;;) {
    syncq_mp_stats st;
    sigset_t pending;
    (void)syncq_mp_get_stats(s, &st);
    sigemptyset(&pending);
    (void)sigpending(&pending);
    if (sigismember(&pending, SIGRTMIN + SYNCQ_MP_SIGNAL_OFFSET) == 1 && (!resumed || st.resumes >= 1)) return true;
    if (syncq_now_ns() - start > WAIT_LIMIT_NS) return false;
    sleep_ns(100 * US);
  }
}

static void *point_main(void *arg) {
  point_run *r = arg;
  syncq_mp_thread *t;
  r->rc = syncq_mp_register(r->s, 0, 0, &t);
  if (r->rc != SYNCQ_OK) return NULL;
  point_set_mask(SIG_BLOCK);
  uint64_t s0 = syncq_mp_preempt_count(t);
  if (r->c == POINT_INSIDE || r->c == POINT_AT_END || r->c == POINT_FORCED) syncq_mp_nopreempt_begin();
  if (r->c == POINT_NESTED) {
    syncq_mp_nopreempt_begin();
    syncq_mp_nopreempt_begin();
  }
  if (!point_wait(r->s, r->c == POINT_RESUMED)) r->timed_out = 1;
  if (r->c == POINT_AT_END) syncq_mp_nopreempt_end(); /* the signal still blocked */
  point_set_mask(SIG_UNBLOCK);                        /* the handler runs here */
  r->at_delivery = syncq_mp_preempt_count(t) - s0;
  if (r->c == POINT_FORCED) { /* hold the request until stopped in it */
    uint64_t start = syncq_now_ns();
    while (syncq_mp_preempt_count(t) == s0 && syncq_now_ns() - start < WAIT_LIMIT_NS) syncq_pr_relax();
    r->at_delivery = syncq_mp_preempt_count(t) - s0;
  }
  if (r->c == POINT_NESTED) {
    syncq_mp_nopreempt_end();
    r->at_inner_end = syncq_mp_preempt_count(t) - s0;
  }
  if (r->c != POINT_BEFORE && r->c != POINT_RESUMED && r->c != POINT_AT_END) syncq_mp_nopreempt_end();
  if (r->c == POINT_BEFORE || r->c == POINT_RESUMED) { /* a request after the delivery finds nothing */
    syncq_mp_nopreempt_begin();
    syncq_mp_nopreempt_end();
  }
  r->at_end = syncq_mp_preempt_count(t) - s0;
  syncq_mp_unregister(t);
  return NULL;
}

static point_run run_point(enum point_case c, syncq_mp_stats *st) {
  point_run r = {.s = make_sched(2, 1, 100 * MS, SYNCQ_MP_TIMESHARE, c == POINT_FORCED ? 5 * MS : 20000 * MS), .c = c};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, point_main, &r), 0);
  pthread_join(th, NULL);
  assert_int_equal(r.rc, SYNCQ_OK);
  assert_int_equal(r.timed_out, 0);
  assert_int_equal(syncq_mp_stop(r.s), SYNCQ_OK);
  assert_int_equal(syncq_mp_get_stats(r.s, st), SYNCQ_OK);
  assert_int_equal(syncq_mp_destroy(r.s), SYNCQ_OK);
  return r;
}

static void test_request_signal_points(void **state) {
  (void)state;
  syncq_mp_stats st;
  point_run r = run_point(POINT_BEFORE, &st);
  assert_int_equal(r.at_delivery, 1); /* no request: stopped in the handler */
  assert_int_equal(r.at_end, 1);      /* resumed: the later request's end does not stop */
  assert_int_equal(st.deferrals, 0);
  assert_int_equal(st.self_preemptions, 0);

  r = run_point(POINT_INSIDE, &st);
  assert_int_equal(r.at_delivery, 0); /* deferred: still running in the request */
  assert_int_equal(r.at_end, 1);      /* and stopped by its end */
  assert_int_equal(st.deferrals, 1);
  assert_int_equal(st.self_preemptions, 1);
  assert_int_equal(st.forced, 0);

  r = run_point(POINT_NESTED, &st);
  assert_int_equal(r.at_delivery, 0);
  assert_int_equal(r.at_inner_end, 0); /* the inner end leaves the outer request standing */
  assert_int_equal(r.at_end, 1);
  assert_int_equal(st.deferrals, 1);
  assert_int_equal(st.self_preemptions, 1);

  r = run_point(POINT_AT_END, &st);
  assert_int_equal(r.at_delivery, 1); /* stopped by the end before the signal came */
  assert_int_equal(r.at_end, 1);      /* the late signal found it resumed */
  assert_int_equal(st.deferrals, 0);
  assert_int_equal(st.self_preemptions, 1);

  r = run_point(POINT_RESUMED, &st);
  assert_int_equal(r.at_delivery, 0); /* the gate was open again: not stopped */
  assert_int_equal(r.at_end, 0);
  assert_int_equal(st.deferrals, 0);
  assert_int_equal(st.self_preemptions, 0);

  r = run_point(POINT_FORCED, &st);
  assert_int_equal(r.at_delivery, 1); /* stopped inside the request at the bound */
  assert_int_equal(r.at_end, 1);      /* resumed: its end does not stop it again */
  assert_int_equal(st.deferrals, 1);
  assert_int_equal(st.forced, 1);
  assert_int_equal(st.self_preemptions, 0);
}

/* ---- no lost resume; clean shutdown ---- */
static void run_spinners(int policy, uint64_t quantum, uint64_t work, int nopreempt_every, bool stop_early) {
  syncq_mp_sched *s = make_sched(LEVEL, PROCS, quantum, policy, 0);
  spinner sp[NTHREADS];
  pthread_t th[NTHREADS];
  for (int i = 0; i < NTHREADS; i++) {
    sp[i] = (spinner){.s = s,
                      .app = (unsigned)i / PROCS,
                      .proc = (unsigned)i % PROCS,
                      .work = work,
                      .nopreempt_every = nopreempt_every};
    assert_int_equal(pthread_create(&th[i], NULL, spinner_main, &sp[i]), 0);
  }
  for (int i = 0; i < NTHREADS; i++) (void)wait_handle(&sp[i]);
  if (stop_early) {
    sleep_ns(20 * quantum);
    for (int i = 0; i < NTHREADS; i++) atomic_store(&sp[i].stop, 1);
    /* some are stopped right now and cannot see the flag: stop resumes them */
    assert_int_equal(syncq_mp_stop(s), SYNCQ_OK);
  }
  /* every thread must finish: a lost resume leaves one stopped for good */
  uint64_t start = syncq_now_ns();
  for (int i = 0; i < NTHREADS; i++) {
    while (atomic_load(&sp[i].done) == 0 && syncq_now_ns() - start < WAIT_LIMIT_NS) sleep_ns(MS);
    assert_int_equal(atomic_load(&sp[i].done), 1);
  }
  for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
  syncq_mp_stats st;
  assert_int_equal(syncq_mp_get_stats(s, &st), SYNCQ_OK);
  assert_true(st.preemptions + st.deferrals > 0);
  assert_true(st.resumes > 0);
  assert_int_equal(syncq_mp_destroy(s), SYNCQ_OK);
}

static void test_no_lost_resume(void **state) {
  (void)state;
  /* 200 us quanta: thousands of stop/resume hand-shakes, some deferred */
  run_spinners(SYNCQ_MP_TIMESHARE, 200 * US, 3000000, 64, false);
  run_spinners(SYNCQ_MP_GANG, 200 * US, 3000000, 0, false);
}

static void test_clean_shutdown(void **state) {
  (void)state;
  run_spinners(SYNCQ_MP_TIMESHARE, 5 * MS, 0, 0, true);
  run_spinners(SYNCQ_MP_GANG, 5 * MS, 0, 16, true);
}

/* ---- every registered lock at level 3 ---- */
/* A worker of a level-3 run: thread id is application id / PROCS on
 * processor id % PROCS. */
typedef struct team_arg {
  void *run;
  int id;
} team_arg;

/* The NTHREADS workers of a level-3 run, fn(&args[i]) with args[i] = {run, i}. */
static void start_team(pthread_t *th, team_arg *args, void *(*fn)(void *), void *run) {
  for (int i = 0; i < NTHREADS; i++) {
    args[i] = (team_arg){run, i};
    assert_int_equal(pthread_create(&th[i], NULL, fn, &args[i]), 0);
  }
}

typedef struct lock_run {
  syncq_mp_sched *s;
  const syncq_lock_ops *ops;
  void *lock;
  uint64_t shared; /* plain: only the lock protects it */
  _Atomic(int) inside, violations, stop, registered;
  uint64_t mine[NTHREADS];
  int errors[NTHREADS];
} lock_run;

static void *lock_worker(void *arg) {
  team_arg *a = arg;
  lock_run *run = a->run;
  syncq_mp_thread *t;
  if (syncq_mp_register(run->s, (unsigned)a->id / PROCS, (unsigned)a->id % PROCS, &t) != SYNCQ_OK) {
    run->errors[a->id]++;
    atomic_fetch_add(&run->registered, 1);
    return NULL;
  }
  atomic_fetch_add(&run->registered, 1);
  syncq_lock_node node;
  while (!atomic_load_explicit(&run->stop, memory_order_relaxed)) { /* relaxed: a flag polled */
    if (run->ops->lock(run->lock, &node) != SYNCQ_OK) {
      run->errors[a->id]++;
      break;
    }
    if (atomic_fetch_add(&run->inside, 1) != 0) atomic_fetch_add(&run->violations, 1);
    run->shared = run->shared + 1;
    atomic_fetch_sub(&run->inside, 1);
    if (run->ops->unlock(run->lock, &node) != SYNCQ_OK) run->errors[a->id]++;
    run->mine[a->id]++;
  }
  syncq_mp_unregister(t);
  return NULL;
}

/* wait: a discipline for the lock's config (SYNCQ_WAIT_DEFAULT: the
 * algorithm's own, a NULL config). */
static void lock_under_sched(const syncq_algo *algo, int policy, int wait) {
  const syncq_lock_ops *ops = algo->ops;
  void *lock = syncq_alloc_aligned(ops->size, ops->align);
  assert_non_null(lock);
  syncq_lock_config cfg = {0, wait, false};
  int r = ops->init(lock, wait == SYNCQ_WAIT_DEFAULT ? NULL : &cfg);
  if (r != SYNCQ_OK) {
    print_message("  %s: init %s, skipped\n", algo->name, syncq_strerror(r));
    free(lock);
    return;
  }
  lock_run *run = calloc(1, sizeof *run);
  assert_non_null(run);
  run->s = make_sched(LEVEL, PROCS, TEST_QUANTUM_NS, policy, 0);
  run->ops = ops;
  run->lock = lock;
  pthread_t th[NTHREADS];
  team_arg args[NTHREADS];
  start_team(th, args, lock_worker, run);
  while (atomic_load(&run->registered) < NTHREADS) sleep_ns(100 * US);
  sleep_ns(LOCK_RUN_NS);
  atomic_store(&run->stop, 1);
  assert_int_equal(syncq_mp_stop(run->s), SYNCQ_OK); /* the stopped ones see the flag */
  for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
  uint64_t sum = 0;
  for (int i = 0; i < NTHREADS; i++) {
    sum += run->mine[i];
    assert_int_equal(run->errors[i], 0);
  }
  syncq_mp_stats st;
  assert_int_equal(syncq_mp_get_stats(run->s, &st), SYNCQ_OK);
  print_message("  %-14s %s, %s: %llu acquisitions, %llu preemptions, %llu deferred\n", algo->name,
                policy == SYNCQ_MP_GANG ? "gang" : "time-sharing", syncq_wait_name(wait), (unsigned long long)sum,
                (unsigned long long)st.preemptions, (unsigned long long)st.deferrals);
  assert_int_equal(atomic_load(&run->violations), 0);
  assert_int_equal(run->shared, sum);
  assert_true(sum > 0);
  assert_true(st.preemptions + st.deferrals > 0);
  assert_int_equal(ops->destroy(lock), SYNCQ_OK);
  assert_int_equal(syncq_mp_destroy(run->s), SYNCQ_OK);
  free(run);
  free(lock);
}

static void test_every_lock_level3(void **state) {
  (void)state;
  const syncq_algo *algos[MAX_ALGOS];
  int n = syncq_registry_list(SYNCQ_FAMILY_LOCK, algos, MAX_ALGOS);
  assert_true(n > 0 && n <= MAX_ALGOS);
  for (int i = 0; i < n; i++) lock_under_sched(algos[i], SYNCQ_MP_TIMESHARE, SYNCQ_WAIT_DEFAULT);
  /* the preemption-aware ones under co-scheduling too */
  const char *aware[] = {"ttas-ps", "sc-queue", "hybrid-sc"};
  for (size_t i = 0; i < sizeof aware / sizeof aware[0]; i++) {
    const syncq_algo *a;
    assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_LOCK, aware[i], &a), SYNCQ_OK);
    lock_under_sched(a, SYNCQ_MP_GANG, SYNCQ_WAIT_DEFAULT);
  }
  /* the scheduler-conscious locks' sleeping waiters: preempted while
   * asleep (the stop signal interrupts the futex wait), passed over, woken */
  const char *sc[] = {"sc-queue", "hybrid-sc"};
  const int sleeping[] = {SYNCQ_WAIT_BLOCK, SYNCQ_WAIT_COMPETITIVE};
  for (size_t i = 0; i < sizeof sc / sizeof sc[0]; i++) {
    const syncq_algo *a;
    assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_LOCK, sc[i], &a), SYNCQ_OK);
    for (size_t d = 0; d < sizeof sleeping / sizeof sleeping[0]; d++)
      lock_under_sched(a, SYNCQ_MP_TIMESHARE, sleeping[d]);
  }
}

/* ---- every registered queue at level 3 ---- */
#define PRODUCERS (NTHREADS / 2)
#define ITEM_SHIFT 4 /* items are tagged-pointer friendly: low bits clear */
#define SEQ_BITS 20

typedef struct queue_run {
  syncq_mp_sched *s;
  const syncq_queue_ops *ops;
  void *q;
  _Atomic(uint64_t) consumed;
  _Atomic(int) registered, errors, order_errors, dup_errors;
  _Atomic(uint8_t) seen[PRODUCERS][QUEUE_ITEMS];
} queue_run;

static void *queue_worker(void *arg) {
  team_arg *a = arg;
  queue_run *run = a->run;
  syncq_mp_thread *t;
  int rr = syncq_mp_register(run->s, (unsigned)a->id / PROCS, (unsigned)a->id % PROCS, &t);
  atomic_fetch_add(&run->registered, 1);
  if (rr != SYNCQ_OK) {
    atomic_fetch_add(&run->errors, 1);
    return NULL;
  }
  const uint64_t total = (uint64_t)PRODUCERS * QUEUE_ITEMS;
  if (a->id % 2 == 0) { /* producer a->id / 2 */
    uint64_t p = (uint64_t)a->id / 2;
    for (uint64_t i = 0; i < QUEUE_ITEMS; i++) {
      uint64_t v = ((p << SEQ_BITS) | (i + 1)) << ITEM_SHIFT;
      int r;
      while ((r = run->ops->enqueue(run->q, (void *)(uintptr_t)v)) == SYNCQ_FULL) syncq_yield();
      if (r != SYNCQ_OK) atomic_fetch_add(&run->errors, 1);
      syncq_delay_ns(QUEUE_WORK_NS);
    }
  } else { /* consumer: per-producer order as this consumer sees it */
    uint64_t last[PRODUCERS] = {0};
    while (atomic_load(&run->consumed) < total) {
      void *x;
      int r = run->ops->dequeue(run->q, &x);
      if (r == SYNCQ_EMPTY) {
        syncq_yield();
        continue;
      }
      if (r != SYNCQ_OK) {
        atomic_fetch_add(&run->errors, 1);
        break;
      }
      uint64_t v = (uint64_t)(uintptr_t)x >> ITEM_SHIFT;
      uint64_t p = v >> SEQ_BITS, seq = v & ((1u << SEQ_BITS) - 1);
      if (p >= PRODUCERS || seq == 0 || seq > QUEUE_ITEMS) {
        atomic_fetch_add(&run->errors, 1);
        continue;
      }
      if (atomic_exchange(&run->seen[p][seq - 1], 1) != 0) atomic_fetch_add(&run->dup_errors, 1);
      if (seq <= last[p]) atomic_fetch_add(&run->order_errors, 1);
      last[p] = seq;
      atomic_fetch_add(&run->consumed, 1);
    }
  }
  syncq_mp_unregister(t);
  return NULL;
}

static void queue_under_sched(const syncq_algo *algo, int policy) {
  const syncq_queue_ops *ops = algo->ops;
  size_t bytes;
  int r = ops->bytes(QUEUE_CAPACITY, &bytes);
  void *q = r == SYNCQ_OK ? syncq_alloc_aligned(bytes, ops->align) : NULL;
  if (q != NULL) r = ops->init(q, QUEUE_CAPACITY);
  if (q == NULL || r != SYNCQ_OK) {
    print_message("  %s: %s, skipped\n", algo->name, syncq_strerror(r));
    free(q);
    assert_true(r == SYNCQ_ENOTSUP); /* only a missing CPU feature may skip */
    return;
  }
  queue_run *run = calloc(1, sizeof *run);
  assert_non_null(run);
  run->s = make_sched(LEVEL, PROCS, TEST_QUANTUM_NS, policy, 0);
  run->ops = ops;
  run->q = q;
  pthread_t th[NTHREADS];
  team_arg args[NTHREADS];
  start_team(th, args, queue_worker, run);
  for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
  assert_int_equal(syncq_mp_stop(run->s), SYNCQ_OK);
  syncq_mp_stats st;
  assert_int_equal(syncq_mp_get_stats(run->s, &st), SYNCQ_OK);
  print_message("  %-14s %s: %llu slices, %llu preemptions\n", algo->name,
                policy == SYNCQ_MP_GANG ? "gang" : "time-sharing", (unsigned long long)st.slices,
                (unsigned long long)st.preemptions);
  assert_true(st.preemptions > 0);
  assert_int_equal(atomic_load(&run->errors), 0);
  assert_int_equal(atomic_load(&run->dup_errors), 0);
  assert_int_equal(atomic_load(&run->order_errors), 0);
  for (int p = 0; p < PRODUCERS; p++) /* no loss */
    for (unsigned i = 0; i < QUEUE_ITEMS; i++) assert_int_equal(atomic_load(&run->seen[p][i]), 1);
  void *x;
  assert_int_equal(ops->dequeue(q, &x), SYNCQ_EMPTY);
  assert_int_equal(ops->destroy(q), SYNCQ_OK);
  assert_int_equal(syncq_mp_destroy(run->s), SYNCQ_OK);
  free(run);
  free(q);
}

static void test_every_queue_level3(void **state) {
  (void)state;
  const syncq_algo *algos[MAX_ALGOS];
  int n = syncq_registry_list(SYNCQ_FAMILY_QUEUE, algos, MAX_ALGOS);
  assert_true(n > 0 && n <= MAX_ALGOS);
  for (int i = 0; i < n; i++) queue_under_sched(algos[i], i % 2 ? SYNCQ_MP_GANG : SYNCQ_MP_TIMESHARE);
}

/* ---- the scheduler-conscious lock passes over a preempted waiter ---- */
typedef struct sc_run {
  syncq_mp_sched *s;
  syncq_lock_sc lock;
  _Atomic(int) phase; /* 0 start, 1 waiter queued, 2 done */
  _Atomic(syncq_mp_thread *) waiter;
  _Atomic(int) waiter_got;
} sc_run;

static void *sc_waiter(void *arg) {
  sc_run *r = arg;
  syncq_mp_thread *t;
  assert_int_equal(syncq_mp_register(r->s, 1, 0, &t), SYNCQ_OK); /* application 1 */
  atomic_store(&r->waiter, t);
  assert_int_equal(syncq_lock_sc_lock(&r->lock), SYNCQ_OK); /* queues behind the main thread */
  atomic_store(&r->waiter_got, 1);
  assert_int_equal(syncq_lock_sc_unlock(&r->lock), SYNCQ_OK);
  syncq_mp_unregister(t);
  return NULL;
}

/* wait: the lock's discipline (SYNCQ_WAIT_DEFAULT: a NULL config, SPIN).
 * BLOCK: the waiter is asleep on its slot when the pseudo-scheduler stops
 * it; the releaser's skip must wake it to queue again. */
static void sc_passes_over_preempted_waiter(int wait) {
  sc_run *r = calloc(1, sizeof *r);
  assert_non_null(r);
  /* level 2, one processor, long quanta: the waiter (application 1) is
   * stopped while application 0 holds the processor */
  r->s = make_sched(2, 1, 100 * MS, SYNCQ_MP_TIMESHARE, 0);
  syncq_lock_config cfg = {0, wait, false};
  assert_int_equal(syncq_lock_hybrid_sc_init(&r->lock, wait == SYNCQ_WAIT_DEFAULT ? NULL : &cfg), SYNCQ_OK);
  assert_int_equal(syncq_lock_sc_lock(&r->lock), SYNCQ_OK); /* the main thread, unregistered */
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, sc_waiter, r), 0);
  /* wait until the waiter is queued (its ticket taken) and preempted */
  uint64_t start = syncq_now_ns();
  syncq_mp_thread *w;
  while ((w = atomic_load(&r->waiter)) == NULL) sleep_ns(100 * US);
  while ((atomic_load(&r->lock.next_ticket) < SYNCQ_LOCK_SC_MAX_SLOTS + 2 || !syncq_mp_is_preempted(w)) &&
         syncq_now_ns() - start < WAIT_LIMIT_NS)
    sleep_ns(100 * US);
  assert_true(syncq_mp_is_preempted(w));
  /* release while it is preempted: passed over, the lock stays free */
  assert_int_equal(syncq_lock_sc_unlock(&r->lock), SYNCQ_OK);
  uint64_t skips;
  assert_int_equal(syncq_lock_sc_skips(&r->lock, &skips), SYNCQ_OK);
  if (syncq_mp_preempt_count(w) > 0 && skips == 1) {
    assert_int_equal(syncq_lock_sc_trylock(&r->lock), SYNCQ_OK); /* free for a running thread */
    assert_int_equal(atomic_load(&r->waiter_got), 0);
    assert_int_equal(syncq_lock_sc_unlock(&r->lock), SYNCQ_OK);
  } else {
    fail_msg("the preempted waiter was not passed over (skips %llu)", (unsigned long long)skips);
  }
  /* once resumed it queues again and gets the lock */
  pthread_join(th, NULL);
  assert_int_equal(atomic_load(&r->waiter_got), 1);
  assert_int_equal(syncq_mp_stop(r->s), SYNCQ_OK);
  assert_int_equal(syncq_mp_destroy(r->s), SYNCQ_OK);
  assert_int_equal(syncq_lock_sc_destroy(&r->lock), SYNCQ_OK);
  free(r);
}

static void test_sc_passes_over_preempted_waiter(void **state) {
  (void)state;
  sc_passes_over_preempted_waiter(SYNCQ_WAIT_DEFAULT);
}

static void test_sc_passes_over_preempted_sleeping_waiter(void **state) {
  (void)state;
#if TSAN
  /* ThreadSanitizer holds an asynchronous signal back until the thread
   * enters an intercepted call; a thread asleep in the futex system call
   * (then back in it after EINTR) never does, so the pseudo-scheduler's
   * stop signal cannot preempt it there. */
  print_message("skipped under ThreadSanitizer: it defers the stop signal of a thread asleep in futex()\n");
  skip();
#else
  sc_passes_over_preempted_waiter(SYNCQ_WAIT_BLOCK);
#endif
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_bad_inputs),
    cmocka_unit_test(test_preempted_thread_is_frozen),
    cmocka_unit_test(test_nopreempt_honoured_within_bound),
    cmocka_unit_test(test_ttas_ps_holder_not_preempted),
    cmocka_unit_test(test_nopreempt_not_honoured_past_bound),
    cmocka_unit_test(test_request_signal_points),
    cmocka_unit_test(test_no_lost_resume),
    cmocka_unit_test(test_clean_shutdown),
    cmocka_unit_test(test_sc_passes_over_preempted_waiter),
    cmocka_unit_test(test_sc_passes_over_preempted_sleeping_waiter),
    cmocka_unit_test(test_every_lock_level3),
    cmocka_unit_test(test_every_queue_level3),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
