/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * queue_progress_test.c — every registered queue whose contract says
 * lock-free or wait-free keeps moving while one of its threads is stopped
 * inside an operation (a preempted thread, taken to the limit).
 *
 * For each such queue the test first finds the race points
 * (tests/support/syncq_race.h) its enqueue and its dequeue pass, by
 * running a few operations with a hook that records them. Every queue
 * must have at least one in each operation: the points mark where a
 * thread holds a ticket, a reservation or a half-done update that others
 * may meet. Then, for every (operation, point) pair: a victim thread runs
 * enqueue/dequeue pairs and is stopped at its STOP_AT-th arrival at the
 * point inside that operation; it stays stopped until the others are done.
 * WORKERS other threads then each run PAIRS enqueue/dequeue pairs
 * (retrying FULL and EMPTY, yielding), which they must finish within
 * BOUND_S seconds: a bound that catches waiting on the stopped thread,
 * never a speed check (they need milliseconds). Each case runs twice: on
 * a queue holding PREFILL items (near empty: a victim stopped after
 * taking an item's ticket still leaves the others items to take) and on
 * one holding FULL_PREFILL (near full: FULL answers and wrapping rings,
 * with room left for every thread's item and a cell the victim holds).
 * After the victim is let go, every item enqueued comes out once (a
 * checksum).
 *
 * Points of the emulated double-width CAS ("pr.") are left out: the race
 * library's double-width CAS is a lock, and a thread stopped inside it
 * stops every other double-width CAS by construction of the emulation,
 * not of the queue. Blocking queues are exempt by their contract.
 *
 * Fixed thread counts and work: the same plan on any machine.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "syncq_race.h" /* first: its SYNCQ_RACE_POINT, and its double-width CAS */

#include "syncq/platform.h"
#include "syncq/queue.h"
#include "syncq/registry.h"

SYNCQ_RACE_HOOK_DEFINE;

#define CAPACITY 64
#define PREFILL 8 /* items in the queue before anyone starts */
#define FULL_PREFILL (CAPACITY - WORKERS - 4)
#define WORKERS 3 /* running threads besides the stopped one */
#define PAIRS 2000
#define STOP_AT 3     /* the victim's arrival at the point that stops it */
#define BOUND_S 10    /* the others' time to finish (they need milliseconds) */
#define REACH_S 10    /* the victim's time to reach its point */
#define MAX_QUEUES 64 /* registered queues examined */
#define MAX_POINTS 16 /* distinct points per operation */
#define DISCOVER_PAIRS 16

enum { OP_NONE, OP_ENQ, OP_DEQ };
static const char *op_name(int op) { return op == OP_ENQ ? "enqueue" : "dequeue"; }

static void *item_of(uint64_t v) { return (void *)(uintptr_t)((v + 1) << 4); }
static uint64_t value_of(void *p) { return ((uint64_t)(uintptr_t)p >> 4) - 1; }

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* The others' time to finish in a case: BOUND_S, or SELF_CHECK_S in the
 * check that a blocking queue is caught (there the bound only decides how
 * soon; nothing passes it). */
#define SELF_CHECK_S 1
static double bound_s = BOUND_S;

/* The operation the calling thread is inside (for the hooks). */
static _Thread_local int tl_op;
static _Thread_local int tl_victim;

/* ------------------------------------------------------------ discovery */

static pthread_mutex_t found_mu = PTHREAD_MUTEX_INITIALIZER;
static const char *found[3][MAX_POINTS]; /* [op][k]: names (string literals of the library) */
static int nfound[3];

static void record_hook(const char *name) {
  if (tl_op == OP_NONE || strncmp(name, "pr.", 3) == 0) return;
  pthread_mutex_lock(&found_mu);
  int k = 0;
  while (k < nfound[tl_op] && strcmp(found[tl_op][k], name) != 0) k++;
  if (k == nfound[tl_op] && k < MAX_POINTS) found[tl_op][nfound[tl_op]++] = name;
  pthread_mutex_unlock(&found_mu);
}

/* ------------------------------------------------------------ one stop case */

static struct {
  const syncq_queue_ops *ops;
  void *q;
  const char *point;
  int op;
  int arrivals;
  _Atomic(int) stopped; /* the victim stands at the point */
  _Atomic(int) release; /* it may go on */
  _Atomic(int) abandon; /* the workers give up (still stuck after the victim went on) */
  _Atomic(int) victim_done;
  _Atomic(int) workers_done;
  _Atomic(uint64_t) pairs_done; /* the workers' completed pairs, all together */
  _Atomic(uint64_t) sum_in, sum_out, n_in, n_out;
  _Atomic(int) errors; /* an operation answered something else than OK, FULL, EMPTY */
  _Atomic(int) last_error;
} c;

static void stop_hook(const char *name) {
  if (!tl_victim || tl_op != c.op || strcmp(name, c.point) != 0 || ++c.arrivals != STOP_AT) return;
  atomic_store(&c.stopped, 1);
  while (!atomic_load(&c.release)) sleep_ms(1);
}

static void note_error(int st) {
  atomic_fetch_add(&c.errors, 1);
  atomic_store(&c.last_error, st);
}

/* Enqueue v, retrying FULL (and SYNCQ_ENOMEM from a pool a stopped thread
 * may pin for a while) with yields; false on any other answer, or when
 * `stop` says to give up (the victim's run, once it is let go). */
static bool put(uint64_t v, const _Atomic(int) *stop) {
  for (;;) {
    tl_op = OP_ENQ;
    int st = c.ops->enqueue(c.q, item_of(v));
    tl_op = OP_NONE;
    if (st == SYNCQ_OK) {
      atomic_fetch_add(&c.sum_in, v);
      atomic_fetch_add(&c.n_in, 1);
      return true;
    }
    if (st != SYNCQ_FULL && st != SYNCQ_ENOMEM) {
      note_error(st);
      return false;
    }
    if (stop != NULL && atomic_load(stop)) return false;
    syncq_yield();
  }
}

static bool take(const _Atomic(int) *stop) {
  for (;;) {
    void *x = NULL;
    tl_op = OP_DEQ;
    int st = c.ops->dequeue(c.q, &x);
    tl_op = OP_NONE;
    if (st == SYNCQ_OK) {
      atomic_fetch_add(&c.sum_out, value_of(x));
      atomic_fetch_add(&c.n_out, 1);
      return true;
    }
    if (st != SYNCQ_EMPTY) {
      note_error(st);
      return false;
    }
    if (stop != NULL && atomic_load(stop)) return false;
    syncq_yield();
  }
}

/* Runs pairs until it is stopped at the point, then (let go) ends its
 * operation and stops. */
static void *victim_main(void *arg) {
  (void)arg;
  tl_victim = 1;
  for (uint64_t i = 0; !atomic_load(&c.release); i++) {
    if (!put((uint64_t)1 << 40 | i, &c.release)) break;
    if (!take(&c.release)) break;
  }
  atomic_store(&c.victim_done, 1);
  return NULL;
}

static void *worker_main(void *arg) {
  uint64_t id = (uint64_t)(uintptr_t)arg;
  for (uint64_t i = 0; i < PAIRS; i++) {
    if (!put((id + 2) << 40 | i, &c.abandon) || !take(&c.abandon)) break;
    atomic_fetch_add(&c.pairs_done, 1);
  }
  atomic_fetch_add(&c.workers_done, 1);
  return NULL;
}

static void *new_queue(const syncq_algo *a) {
  const syncq_queue_ops *ops = a->ops;
  size_t bytes = 0;
  assert_int_equal(ops->bytes(CAPACITY, &bytes), SYNCQ_OK);
  void *q = syncq_alloc_aligned(bytes, ops->align);
  assert_non_null(q);
  int st = ops->init(q, CAPACITY);
  if (st == SYNCQ_ENOTSUP) {
    print_message("queue %s: SKIPPED: init says %s on this machine\n", a->name, syncq_strerror(st));
    free(q);
    return NULL;
  }
  if (st != SYNCQ_OK) fail_msg("queue %s: init(%d) -> %s", a->name, CAPACITY, syncq_strerror(st));
  return q;
}

/* Drain the queue (everyone has stopped) into the checksum. */
static void drain(void) {
  void *x;
  int st;
  while ((st = c.ops->dequeue(c.q, &x)) == SYNCQ_OK) {
    atomic_fetch_add(&c.sum_out, value_of(x));
    atomic_fetch_add(&c.n_out, 1);
  }
  if (st != SYNCQ_EMPTY) note_error(st);
}

/* One case, on a queue holding `fill` items; returns a failure message
 * into msg (empty: passed). */
static void run_case(const syncq_algo *a, int op, const char *point, uint64_t fill, char *msg, size_t msgn) {
  msg[0] = 0;
  memset(&c, 0, sizeof c);
  c.ops = a->ops;
  c.point = point;
  c.op = op;
  c.q = new_queue(a);
  if (c.q == NULL) return;
  for (uint64_t i = 0; i < fill; i++)
    if (!put(i, NULL)) fail_msg("queue %s: prefill enqueue %llu failed", a->name, (unsigned long long)i);
  syncq_race_hook = stop_hook;
  pthread_t v, w[WORKERS];
  assert_int_equal(pthread_create(&v, NULL, victim_main, NULL), 0);
  double t0 = now_s();
  while (!atomic_load(&c.stopped) && !atomic_load(&c.victim_done) && now_s() - t0 < REACH_S) sleep_ms(1);
  if (!atomic_load(&c.stopped)) {
    atomic_store(&c.release, 1);
    pthread_join(v, NULL);
    syncq_race_hook = NULL;
    snprintf(msg, msgn, "the victim never reached %s inside %s (%llu items in the queue)", point, op_name(op),
             (unsigned long long)fill);
    assert_int_equal(c.ops->destroy(c.q), SYNCQ_OK);
    free(c.q);
    return;
  }
  for (int i = 0; i < WORKERS; i++) assert_int_equal(pthread_create(&w[i], NULL, worker_main, (void *)(uintptr_t)i), 0);
  t0 = now_s();
  while (atomic_load(&c.workers_done) < WORKERS && now_s() - t0 < bound_s) sleep_ms(1);
  double took = now_s() - t0;
  bool stuck = atomic_load(&c.workers_done) < WORKERS;
  uint64_t pairs_then = atomic_load(&c.pairs_done);
  atomic_store(&c.release, 1); /* let the victim go; the others can end now */
  t0 = now_s();
  while (atomic_load(&c.workers_done) < WORKERS && now_s() - t0 < bound_s) sleep_ms(1);
  bool abandoned = atomic_load(&c.workers_done) < WORKERS; /* stuck for good: a failure, not a hang */
  atomic_store(&c.abandon, 1);
  for (int i = 0; i < WORKERS; i++) pthread_join(w[i], NULL);
  pthread_join(v, NULL);
  syncq_race_hook = NULL;
  drain();
  if (abandoned)
    snprintf(msg, msgn,
             "stopped at %s inside %s (%llu items in the queue): the other threads did %llu of %d pairs, and "
             "were still stuck %.0f s after the stopped thread went on",
             point, op_name(op), (unsigned long long)fill, (unsigned long long)atomic_load(&c.pairs_done),
             WORKERS * PAIRS, bound_s);
  else if (stuck)
    snprintf(msg, msgn,
             "with a thread stopped at %s inside %s (%llu items in the queue), the other %d threads did %llu of "
             "%d pairs in %.0f s: they wait for the stopped thread",
             point, op_name(op), (unsigned long long)fill, WORKERS, (unsigned long long)pairs_then, WORKERS * PAIRS,
             took);
  else if (atomic_load(&c.errors) != 0)
    snprintf(msg, msgn, "stopped at %s inside %s (%llu items in the queue): %d operations answered %s", point,
             op_name(op), (unsigned long long)fill, atomic_load(&c.errors), syncq_strerror(atomic_load(&c.last_error)));
  else if (atomic_load(&c.sum_in) != atomic_load(&c.sum_out) || atomic_load(&c.n_in) != atomic_load(&c.n_out))
    snprintf(msg, msgn,
             "stopped at %s inside %s (%llu items in the queue): %llu items in, %llu out (checksums differ: lost "
             "or duplicated)",
             point, op_name(op), (unsigned long long)fill, (unsigned long long)atomic_load(&c.n_in),
             (unsigned long long)atomic_load(&c.n_out));
  else
    print_message("  %-10s %-7s stopped at %-28s %2llu items: others did %d pairs in %.3f s\n", a->name, op_name(op),
                  point, (unsigned long long)fill, WORKERS * PAIRS, took);
  assert_int_equal(c.ops->destroy(c.q), SYNCQ_OK);
  free(c.q);
}

/* The points one queue's operations pass (single-threaded, a few pairs). */
static bool discover(const syncq_algo *a) {
  memset(&c, 0, sizeof c);
  memset(nfound, 0, sizeof nfound);
  c.ops = a->ops;
  c.q = new_queue(a);
  if (c.q == NULL) return false;
  syncq_race_hook = record_hook;
  for (uint64_t i = 0; i < PREFILL; i++) assert_true(put(i, NULL));
  for (uint64_t i = 0; i < DISCOVER_PAIRS; i++) assert_true(put(PREFILL + i, NULL) && take(NULL));
  syncq_race_hook = NULL;
  drain();
  assert_int_equal(c.ops->destroy(c.q), SYNCQ_OK);
  free(c.q);
  return true;
}

static bool nonblocking(const syncq_algo *a) {
  return (a->progress == SYNCQ_PROGRESS_LOCK_FREE || a->progress == SYNCQ_PROGRESS_WAIT_FREE) &&
         (a->props & SYNCQ_PROP_SPSC) == 0;
}

static void test_queues_move_past_a_stopped_thread(void **state) {
  (void)state;
  const syncq_algo *algos[MAX_QUEUES];
  int n = syncq_registry_list(SYNCQ_FAMILY_QUEUE, algos, MAX_QUEUES);
  assert_true(n > 0 && n <= MAX_QUEUES);
  int tested = 0, failures = 0;
  char msg[512];
  for (int i = 0; i < n; i++) {
    const syncq_algo *a = algos[i];
    if (!nonblocking(a)) continue;
    if (!discover(a)) continue;
    tested++;
    for (int op = OP_ENQ; op <= OP_DEQ; op++)
      if (nfound[op] == 0) {
        print_message("FAIL %s: its %s passes no race point (add SYNCQ_RACE_POINT where it holds a ticket)\n", a->name,
                      op_name(op));
        failures++;
      }
    const char *pts[3][MAX_POINTS];
    int npts[3];
    memcpy(pts, found, sizeof pts);
    memcpy(npts, nfound, sizeof npts);
    for (int op = OP_ENQ; op <= OP_DEQ; op++)
      for (int k = 0; k < npts[op]; k++)
        for (int f = 0; f < 2; f++) {
          run_case(a, op, pts[op][k], f == 0 ? PREFILL : FULL_PREFILL, msg, sizeof msg);
          if (msg[0] != 0) {
            print_message("FAIL %s: %s\n", a->name, msg);
            failures++;
          }
        }
  }
  assert_true(tested > 0);
  if (failures != 0) fail_msg("%d case(s) failed (above)", failures);
}

/* The check of the check: Vyukov's bounded queue is blocking (a position
 * claimed but not yet published makes the others answer EMPTY, then FULL,
 * until its thread comes back), and every stop inside it must be caught. */
static void test_a_blocking_queue_is_caught(void **state) {
  (void)state;
  const syncq_algo *a = NULL;
  assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_QUEUE, "vyukov", &a), SYNCQ_OK);
  assert_int_equal(a->progress, SYNCQ_PROGRESS_BLOCKING);
  if (!discover(a)) return;
  assert_true(nfound[OP_ENQ] > 0 && nfound[OP_DEQ] > 0);
  const char *pts[3][MAX_POINTS];
  int npts[3];
  memcpy(pts, found, sizeof pts);
  memcpy(npts, nfound, sizeof npts);
  char msg[512];
  bound_s = SELF_CHECK_S;
  for (int op = OP_ENQ; op <= OP_DEQ; op++)
    for (int k = 0; k < npts[op]; k++) {
      run_case(a, op, pts[op][k], PREFILL, msg, sizeof msg);
      if (strstr(msg, "they wait for the stopped thread") == NULL) {
        bound_s = BOUND_S;
        fail_msg("vyukov, stopped at %s inside %s: not caught (%s)", pts[op][k], op_name(op),
                 msg[0] ? msg : "the others finished");
      }
      print_message("  vyukov     %-7s stopped at %-28s: caught (%s)\n", op_name(op), pts[op][k], msg);
    }
  bound_s = BOUND_S;
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_queues_move_past_a_stopped_thread),
    cmocka_unit_test(test_a_blocking_queue_is_caught),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
