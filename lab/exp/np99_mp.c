/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * np99_mp.c — Nikolopoulos & Papatheodorou (003) §5, Figures 7 and 8:
 * synchronization disciplines under multiprogramming, with copies of the
 * micro-benchmark of its Figure 2 running at once (two-way and three-way
 * multiprogramming: level 2 and 3), each copy on its own structure.
 *
 *   barrier(); for (i = 0; i < N/p; i++) { work(); synchronize(); } barrier();
 *
 * np99-mp-queue: synchronize() alternately enqueues and dequeues on a
 * shared FIFO queue, by discipline:
 *   busy-wait            a ring behind the TTAS lock, spinning (backoff)
 *   immediate-blocking   the same lock, blocking on a futex at once
 *   competitive          the same lock, spinning one context switch, then
 *                        blocking (003 §3.4, Karlin et al.)
 *   scheduler-conscious  the ring behind "hybrid-sc", 003's hybrid queue
 *                        lock handing over to the first waiter that is not
 *                        preempted
 *   non-blocking         the Michael & Scott queue ("ms")
 * np99-mp-barrier: synchronize() is the centralized fetch-and-add barrier
 * (003's best) with busy-wait, immediate blocking and competitive spinning
 * (spin time proportional to the threads not yet arrived).
 *
 * Schedules (variant suffix): "@ts" the pseudo-scheduler time-sharing the
 * copies (processors staggered), "@gang" the pseudo-scheduler co-scheduling
 * them (all threads of a copy run in the same quantum), both with a 10 ms
 * quantum; "@linux" the copies as processes under the Linux scheduler
 * (mp_common.h). The scheduler-conscious lock needs the preempted state
 * that only the pseudo-scheduler publishes, so it has no "@linux" variant.
 * Time: the mean over the copies of each copy's time.
 *
 * Validation: no failed operation, checksums of values enqueued and
 * dequeued agree and the queue ends empty; barriers never fail. A
 * thread's dequeue follows its own enqueue, so the non-blocking queue
 * (linearizable) never answers EMPTY here: a dequeue that does waits,
 * yielding, under the lab's watch for a lost item (lab.h,
 * lab_queue_watch), one watch a copy. Every thread both enqueues and
 * dequeues, so "every producer has finished" is "every thread of the copy
 * has left its loop or waits on EMPTY"; the pseudo-scheduler's stops do
 * not fake it (a thread stopped inside an enqueue or between operations
 * is neither, one stopped in its wait holds no item, one stopped between
 * its wait's item and the wait's end is quiet for that stop only, a few
 * quanta, far below LAB_QUEUE_LOST_MS), and a wait the scheduler holds
 * off for more than 0.5 s starts over. With
 * SYNCQ_LAB_QUEUE_FAULT set (the lab's own tests) the non-blocking
 * discipline runs on the faulty queue instead of "ms", and says so.
 */
#include <stdlib.h>
#include <string.h>

#include "../lab.h"
#include "mp_common.h"
#include "np99_common.h"
#include "syncq/clock.h"
#include "syncq/platform.h"
#include "syncq/barrier.h"
#include "syncq/lock.h"
#include "syncq/queue.h"
#include "syncq/wait.h"

#define NP99MP_QCAP 1024u /* ring capacity: more than p items never sit in it */
#define NP99MP_QUEUE_CAPACITY 1024u
#define NP99MP_LOCK "ttas" /* the spin lock the disciplines wrap */
#define NP99MP_SC_LOCK "hybrid-sc"
#define NP99MP_NB_QUEUE "ms"
#define NP99MP_BARRIER "central-faa"
#define NP99MP_BARRIER_WORK_NS 500000ull
#define NS_PER_MS 1e6

typedef enum np99mp_disc { D_BUSY, D_BLOCK, D_COMPETITIVE, D_SC, D_NONBLOCKING, D_COUNT } np99mp_disc;
typedef enum np99mp_sched { S_TS, S_GANG, S_LINUX, S_COUNT } np99mp_sched;

static const char *const disc_names[D_COUNT] = {"busy-wait", "immediate-blocking", "competitive", "scheduler-conscious",
                                                "non-blocking"};
static const char *const sched_suffix[S_COUNT] = {"ts", "gang", "linux"};
static const int disc_wait[D_COUNT] = {SYNCQ_WAIT_SPIN, SYNCQ_WAIT_BLOCK, SYNCQ_WAIT_COMPETITIVE, SYNCQ_WAIT_SPIN, 0};

/* Every variant name, "<discipline>@<schedule>": the fixed algorithms. */
static const char *const np99mp_queue_algos[] = {
  "busy-wait@ts",           "busy-wait@gang",           "busy-wait@linux",
  "immediate-blocking@ts",  "immediate-blocking@gang",  "immediate-blocking@linux",
  "competitive@ts",         "competitive@gang",         "competitive@linux",
  "scheduler-conscious@ts", "scheduler-conscious@gang", "non-blocking@ts",
  "non-blocking@gang",      "non-blocking@linux",       NULL,
};
static const char *const np99mp_barrier_algos[] = {
  "busy-wait@ts",
  "busy-wait@gang",
  "busy-wait@linux",
  "immediate-blocking@ts",
  "immediate-blocking@gang",
  "immediate-blocking@linux",
  "competitive@ts",
  "competitive@gang",
  "competitive@linux",
  NULL,
};

typedef struct np99mp_point {
  bool barrier;
  np99mp_disc disc;
  np99mp_sched sched;
  int threads, level;
  uint64_t iterations, work_ns;
  char name[48];
} np99mp_point;

typedef struct ring {
  uint64_t head, tail;
  uint64_t slot[NP99MP_QCAP];
} ring;

typedef struct np99mp_state {
  const np99mp_point *pt;
  syncq_lock *lock;   /* lock disciplines */
  ring *q;            /* ... and their queue */
  syncq_queue *nbq;   /* non-blocking */
  syncq_barrier *bar; /* barrier experiment */
  _Atomic(int) errors;
  _Atomic(uint64_t) enq_sum, deq_sum;
  _Atomic(uint64_t) enqueued, dequeued; /* the non-blocking queue's successful operations */
  lab_queue_watch watch;                /* ... and its lost items (lab.h) */
} np99mp_state;

/* The non-blocking discipline's queue: "ms", or the lab's faulty queue
 * under SYNCQ_LAB_QUEUE_FAULT (its tests). */
static const char *np99mp_nb_queue(void) {
  const char *faulty = lab_queue_faults_name();
  return faulty != NULL ? faulty : NP99MP_NB_QUEUE;
}

static void *np99mp_setup(const void *arg, char *why, size_t len) {
  const np99mp_point *pt = arg;
  np99mp_state *s = calloc(1, sizeof *s);
  if (s == NULL) {
    snprintf(why, len, "out of memory");
    return NULL;
  }
  s->pt = pt;
  int r;
  if (pt->barrier) {
    syncq_barrier_config cfg = {(unsigned)pt->threads, disc_wait[pt->disc], false};
    r = syncq_barrier_create(NP99MP_BARRIER, &cfg, &s->bar);
  } else if (pt->disc == D_NONBLOCKING) {
    r = syncq_queue_create(np99mp_nb_queue(), NP99MP_QUEUE_CAPACITY, &s->nbq);
    lab_queue_watch_init(&s->watch, pt->threads);
  } else {
    syncq_lock_config cfg = {0, disc_wait[pt->disc], false};
    r = syncq_lock_create(pt->disc == D_SC ? NP99MP_SC_LOCK : NP99MP_LOCK, &cfg, &s->lock);
    s->q = r == SYNCQ_OK ? calloc(1, sizeof *s->q) : NULL;
    if (r == SYNCQ_OK && s->q == NULL) r = SYNCQ_ENOMEM;
  }
  if (r != SYNCQ_OK) {
    if (s->lock) syncq_lock_destroy(s->lock);
    free(s);
    snprintf(why, len, "%s: cannot create its structure: %s", pt->name, syncq_strerror(r));
    return NULL;
  }
  return s;
}

static int np99mp_queue_dequeue(void *q, void **item) { return syncq_queue_dequeue(q, item); }

static int np99mp_finish(void *state, char *why, size_t len) {
  np99mp_state *s = state;
  int bad = atomic_load(&s->errors) != 0 || atomic_load(&s->enq_sum) != atomic_load(&s->deq_sum);
  bool said = false;
  if (s->nbq) {
    uint64_t enq = atomic_load(&s->enqueued), deq = atomic_load(&s->dequeued);
    uint64_t left = lab_queue_leftovers(np99mp_queue_dequeue, s->nbq, enq + 1);
    lab_queue_lost lost = {np99mp_nb_queue(), "queue", "items", enq > deq + left ? enq - deq - left : 0, enq};
    /* lost items first: every wait gave up, so the sums differ too */
    said = lab_queue_watch_why(&s->watch, &lost, why, len) || lab_queue_duplicate_why(lost.algo, enq, left, why, len);
    bad |= said || left != 0;
    syncq_queue_destroy(s->nbq);
  }
  if (s->lock) {
    bad |= s->q->head != s->q->tail;
    syncq_lock_destroy(s->lock);
    free(s->q);
  }
  if (s->bar) syncq_barrier_destroy(s->bar);
  if (bad && !said)
    snprintf(why, len, "%s failed validation: %d failed operations, checksums %s", s->pt->name, atomic_load(&s->errors),
             atomic_load(&s->enq_sum) == atomic_load(&s->deq_sum) ? "agree" : "differ");
  free(s);
  return bad ? -1 : 0;
}

/* A dequeue from the non-blocking queue that found EMPTY: wait, yielding,
 * until an item (SYNCQ_OK, or a failure) or until the watch finds items
 * lost (SYNCQ_EMPTY). Off the path of a dequeue that succeeds at once. */
static int np99mp_wait(np99mp_state *s, void **x) {
  lab_queue_streak streak = {0};
  int r;
  do {
    syncq_yield();
    if (lab_queue_watch_empty(&s->watch, &streak)) {
      r = SYNCQ_EMPTY;
      break;
    }
  } while ((r = syncq_queue_dequeue(s->nbq, x)) == SYNCQ_EMPTY);
  lab_queue_watch_end(&s->watch, &streak);
  return r;
}

static inline void *item_of(uint64_t v) { return (void *)(uintptr_t)((v + 1) << 4); }
static inline uint64_t value_of(void *item) { return ((uint64_t)(uintptr_t)item >> 4) - 1; }

static void np99mp_worker(lab_worker *w) {
  np99mp_state *s = w->arg;
  const np99mp_point *pt = s->pt;
  uint64_t n = lab_share(pt->iterations, w->n, w->id);
  if (pt->barrier) n = pt->iterations / (uint64_t)w->n; /* every thread reaches every episode */
  uint64_t seed = lab_prng_seed(w->id);
  uint64_t enq = 0, deq = 0, enqueued = 0, dequeued = 0;
  int errors = 0;
  bool gave_up = false; /* the watch found items lost */
  syncq_lock_node node;
  for (uint64_t i = 0; i < n; i++) {
    syncq_delay_ns(np99_work_time(pt->work_ns, &seed));
    if (pt->barrier) {
      errors += syncq_barrier_wait(s->bar, (unsigned)w->id) != SYNCQ_OK;
      continue;
    }
    uint64_t v = ((uint64_t)w->id << 40) | i;
    if (s->nbq) {
      if ((i & 1u) == 0) {
        int r = syncq_queue_enqueue(s->nbq, item_of(v));
        errors += r != SYNCQ_OK;
        enqueued += r == SYNCQ_OK;
        enq += v;
      } else {
        void *x;
        int r = syncq_queue_dequeue(s->nbq, &x);
        if (r == SYNCQ_EMPTY && (r = np99mp_wait(s, &x)) == SYNCQ_EMPTY) {
          gave_up = true;
          break;
        }
        if (r == SYNCQ_OK) {
          deq += value_of(x);
          dequeued++;
        } else errors++;
      }
      continue;
    }
    if (syncq_lock_lock(s->lock, &node) != SYNCQ_OK) {
      errors++;
      continue;
    }
    ring *q = s->q;
    if ((i & 1u) == 0) {
      if (q->tail - q->head < NP99MP_QCAP) {
        q->slot[q->tail++ % NP99MP_QCAP] = v;
        enq += v;
      } else {
        errors++;
      }
    } else if (q->tail != q->head) {
      deq += q->slot[q->head++ % NP99MP_QCAP];
    } else {
      errors++;
    }
    syncq_lock_unlock(s->lock, &node);
  }
  /* a thread with an odd share enqueued one more than it dequeued: take it back */
  if (!pt->barrier && (n & 1u) == 1 && !gave_up) {
    if (s->nbq) {
      void *x;
      int r = syncq_queue_dequeue(s->nbq, &x);
      if (r == SYNCQ_EMPTY) r = np99mp_wait(s, &x);
      if (r == SYNCQ_OK) {
        deq += value_of(x);
        dequeued++;
      } else if (r != SYNCQ_EMPTY) errors++;
    } else if (syncq_lock_lock(s->lock, &node) == SYNCQ_OK) {
      if (s->q->tail != s->q->head) deq += s->q->slot[s->q->head++ % NP99MP_QCAP];
      else errors++;
      syncq_lock_unlock(s->lock, &node);
    }
  }
  if (s->nbq) lab_queue_watch_finished(&s->watch);
  /* relaxed: read after the team is joined */
  atomic_fetch_add_explicit(&s->enq_sum, enq, memory_order_relaxed);
  atomic_fetch_add_explicit(&s->deq_sum, deq, memory_order_relaxed);
  atomic_fetch_add_explicit(&s->enqueued, enqueued, memory_order_relaxed);
  atomic_fetch_add_explicit(&s->dequeued, dequeued, memory_order_relaxed);
  if (errors) atomic_fetch_add(&s->errors, errors);
}

static const mp_bench np99mp_bench = {np99mp_setup, np99mp_worker, np99mp_finish};

static int np99mp_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const np99mp_point *pt = arg;
  uint64_t ns;
  mp_mode mode = pt->sched == S_LINUX ? MP_MODE_REAL : MP_MODE_PSEUDO;
  int policy = pt->sched == S_GANG ? SYNCQ_MP_GANG : SYNCQ_MP_TIMESHARE;
  if (mp_measure(ctx, &np99mp_bench, pt, pt->threads, pt->level, mode, policy, pt->level, &ns, &out->stats, NULL) != 0)
    return -1;
  out->value = (double)ns / NS_PER_MS;
  out->ops = 0; /* per-copy counts are not summed across processes */
  return 0;
}

static int np99mp_run(lab_ctx *ctx, bool barrier) {
  int pus = lab_pus(ctx);
  int threads = pus < MP_MAX_THREADS / 3 ? pus : MP_MAX_THREADS / 3;
  if (threads < 2) threads = 2; /* synchronization needs two threads */
  /* --quick: a queue copy makes 4,000 operations of ~5 us work; a
   * barrier copy only 12 episodes, because time-sharing staggers a copy's
   * threads so that each episode waits for a quantum (10 ms) */
  uint64_t iterations =
    barrier ? lab_by_size(ctx, 8, 12, 400, 4000) : lab_by_size(ctx, 2000, 4000, 200000, NP99_ITER_FULL);
  if (barrier) iterations *= (uint64_t)threads;
  /* barriers: coarse-grain work (500 us) so that a copy spans several
   * quanta even co-scheduled; queues: 003's 5 us */
  uint64_t work = barrier ? NP99MP_BARRIER_WORK_NS : NP99_WORK_5US_NS;
  lab_begin(ctx,
            "m copies (level m = 2 and 3: 003's two-way and three-way multiprogramming) of 003's "
            "Figure 2 micro-benchmark run at once, each with its own %s and %d threads (the "
            "processing units); each thread runs N/p iterations of work() (a busy loop of %s "
            "+-20%%) and synchronize() (N=%llu per copy). %s "
            "Schedules: @ts, 001's pseudo-scheduler time-sharing the copies' threads over %d "
            "virtual processors (%llu ms quantum, processors staggered); @gang, the same scheduler "
            "co-scheduling each copy's threads; @linux, the copies as processes under the Linux "
            "scheduler on the same processing units. Time: the mean of the copies' times.",
            barrier ? "barrier" : "queue", threads,
            barrier ? "500 us, coarse grain, so that a copy spans several quanta" : "5 us (003 Figures 5-6)",
            (unsigned long long)iterations,
            barrier ? "synchronize() is the centralized fetch-and-add barrier (003's best) with "
                      "busy-wait, immediate blocking or competitive spinning (spin time "
                      "proportional to the threads not yet arrived)."
                    : "synchronize() alternately enqueues and dequeues: on a ring behind the TTAS "
                      "lock (busy-wait with backoff, immediate blocking, competitive spinning), "
                      "behind 003's hybrid queue lock made scheduler-conscious (\"hybrid-sc\", "
                      "passes over preempted waiters), or the Michael & Scott non-blocking queue.",
            threads, (unsigned long long)(mp_quantum_ns(ctx) / 1000000u));
  if (!lab_planning(ctx))
    lab_note(ctx,
             "Differences from 003 and why: 003 ran 64 processors of an Origin2000 under "
             "IRIX's gang and time-sharing schedulers; here %d processing units, and gang "
             "scheduling exists only in the pseudo-scheduler (Linux has none), whose stopped "
             "threads sleep on a futex, so blocking and spinning waiters differ mostly in "
             "mode @linux. The scheduler-conscious lock reads the pseudo-scheduler's "
             "preempted state, so it has no @linux variant.",
             threads);
  if (!barrier && !lab_planning(ctx) && lab_queue_faults_name() != NULL)
    lab_note(ctx,
             "SYNCQ_LAB_QUEUE_FAULT is set: the non-blocking discipline runs on \"%s\", the lab's faulty "
             "queue for its own tests, not on \"" NP99MP_NB_QUEUE "\"; these figures are not 003's.",
             lab_queue_faults_name());
  np99mp_point pts[LAB_MAX_VARIANTS];
  const char *const *names = barrier ? np99mp_barrier_algos : np99mp_queue_algos;
  bool quick = lab_get_size(ctx) <= LAB_SIZE_QUICK;
  if (quick && !lab_planning(ctx))
    lab_note(ctx,
             "--quick measures level 3 only (the claims are at level 3); the default size "
             "measures levels 2 and 3.");
  for (int level = quick ? 3 : 2; level <= 3; level++) {
    lab_group g;
    memset(&g, 0, sizeof g);
    lab_group_param(&g, "threads", threads);
    lab_group_param(&g, "level", level);
    g.metric = "time";
    g.unit = "ms";
    g.sample = np99mp_sample;
    g.normalize_to = "busy-wait@ts";
    for (int i = 0; names[i] != NULL; i++) {
      np99mp_point *pt = &pts[g.nvariants];
      memset(pt, 0, sizeof *pt);
      const char *at = strchr(names[i], '@');
      for (int d = 0; d < D_COUNT; d++)
        if (strncmp(names[i], disc_names[d], (size_t)(at - names[i])) == 0 &&
            strlen(disc_names[d]) == (size_t)(at - names[i]))
          pt->disc = (np99mp_disc)d;
      for (int k = 0; k < S_COUNT; k++)
        if (strcmp(at + 1, sched_suffix[k]) == 0) pt->sched = (np99mp_sched)k;
      pt->barrier = barrier;
      pt->threads = threads;
      pt->level = level;
      pt->iterations = iterations;
      pt->work_ns = work;
      snprintf(pt->name, sizeof pt->name, "%s", names[i]);
      g.variants[g.nvariants++] = (lab_variant){names[i], pt};
    }
    if (lab_run_group(ctx, &g) != 0) return -1;
  }
  return 0;
}

static int np99_mp_queue_run(lab_ctx *ctx) { return np99mp_run(ctx, false); }
static int np99_mp_barrier_run(lab_ctx *ctx) { return np99mp_run(ctx, true); }

#define AT3 "\"where\":{\"level\":3},\"at\":\"max_threads\""

/* clang-format off */
static const lab_claim np99_mp_queue_claims[] = {
  {"Immediate blocking performs worse than the other synchronization disciplines (003 §5, Figure 7): "
   "at level 3 under time-sharing it is slower than busy-waiting and competitive spinning.",
   "{\"op\":\"all\",\"rules\":["
   "{\"op\":\"ratio_above\",\"metric\":\"time_ratio\",\"num\":\"immediate-blocking@ts\",\"den\":\"busy-wait@ts\"," AT3 ",\"bound\":1.0},"
   "{\"op\":\"ratio_above\",\"metric\":\"time_ratio\",\"num\":\"immediate-blocking@ts\",\"den\":\"competitive@ts\"," AT3 ",\"bound\":1.0}]}"},
  {"With time sharing, non-blocking algorithms perform better than multiprogramming-conscious spin "
   "locks (003 §5): at level 3 \"non-blocking@ts\" is faster than busy-waiting and competitive "
   "spinning.",
   "{\"op\":\"all\",\"rules\":["
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"non-blocking@ts\",\"den\":\"busy-wait@ts\"," AT3 ",\"bound\":1.0},"
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"non-blocking@ts\",\"den\":\"competitive@ts\"," AT3 ",\"bound\":1.0}]}"},
  {"The hybrid scheduler-conscious queue lock retains its scalability under time sharing (003 §5): "
   "at level 3 it is at least as fast as the busy-waiting lock.",
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"scheduler-conscious@ts\",\"den\":\"busy-wait@ts\"," AT3 ",\"bound\":1.0}"},
  {"For the queues, gang scheduling performs significantly worse than time sharing (003 §5, "
   "Figure 7): at level 3 the non-blocking queue co-scheduled is slower than time-shared.",
   "{\"op\":\"ratio_above\",\"metric\":\"time_ratio\",\"num\":\"non-blocking@gang\",\"den\":\"non-blocking@ts\"," AT3 ",\"bound\":1.0}"},
};
/* clang-format on */

/* clang-format off */
static const lab_claim np99_mp_barrier_claims[] = {
  {"Gang scheduling performs better for tightly synchronized programs with barriers (003 §5, "
   "Figure 8): at level 3 the busy-waiting barrier co-scheduled is faster than time-shared.",
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"busy-wait@gang\",\"den\":\"busy-wait@ts\"," AT3 ",\"bound\":1.0}"},
  {"Competitive spinning was beneficial in general with barriers (003 §5): under the Linux "
   "scheduler at level 3 it is faster than busy-waiting.",
   "{\"op\":\"ratio_below\",\"metric\":\"time_ratio\",\"num\":\"competitive@linux\",\"den\":\"busy-wait@linux\"," AT3 ",\"bound\":1.0}"},
};
/* clang-format on */

const lab_experiment lab_exp_np99_mp_queue = {
  .name = "np99-mp-queue",
  .paper = "003 Nikolopoulos & Papatheodorou 1999, §3.4, §5",
  .figure = "Figure 7",
  .title = "Queues under multiprogramming: disciplines x time-sharing / gang / Linux",
  .x = "level",
  .log_y = false,
  .claims = np99_mp_queue_claims,
  .nclaims = sizeof np99_mp_queue_claims / sizeof np99_mp_queue_claims[0],
  .uses_registry = false,
  .fixed_algos = np99mp_queue_algos,
  .run = np99_mp_queue_run,
};

const lab_experiment lab_exp_np99_mp_barrier = {
  .name = "np99-mp-barrier",
  .paper = "003 Nikolopoulos & Papatheodorou 1999, §3.4, §5",
  .figure = "Figure 8",
  .title = "Barriers under multiprogramming: disciplines x time-sharing / gang / Linux",
  .x = "level",
  .log_y = false,
  .claims = np99_mp_barrier_claims,
  .nclaims = sizeof np99_mp_barrier_claims / sizeof np99_mp_barrier_claims[0],
  .uses_registry = false,
  .fixed_algos = np99mp_barrier_algos,
  .run = np99_mp_barrier_run,
};
