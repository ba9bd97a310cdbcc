/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * np99_locks.c — np99-locks: 003 §4.2, Figure 5 (the lock half).
 *
 * The micro-benchmark of Figure 2 (np99_common.h) where synchronize() is an
 * enqueue or a dequeue (alternating, starting with an enqueue) on a shared
 * FIFO queue: either a small private array ring protected by a lock (every
 * lock in the registry, each with its default waiting discipline:
 * busy-waiting for the spin locks, as 003 §4.2 measures them), or one of
 * the queues of the queue registry (Figure 5's non-blocking half, Figure
 * 1's fetch-and-increment array queue, and our others). Work loops 5 us +-20%.
 *
 * Threads sweep 1..the processing units: 003 runs one process per
 * processor here (multiprogramming is §5, np99-mp-*); busy-waiting FIFO
 * locks with more threads than processors hand the lock to preempted
 * threads, which locks-cost measures separately.
 * After each run the queue must hold exactly what went in minus what came
 * out, with the same checksum: a lost or duplicated item aborts.
 */
#include <stdlib.h>
#include <string.h>

#include "../construct.h"
#include "../lab.h"
#include "np99_common.h"
#include "syncq/clock.h"
#include "syncq/lock.h"
#include "syncq/platform.h"
#include "syncq/queue.h"
#include "syncq/wait.h"

#define QCAP 1024u    /* ring capacity (power of two) */
#define QPREFILL 512u /* items in the queue at the start: dequeues never find it empty */
#define NS_PER_MS 1e6

typedef struct np99_lock_point {
  const syncq_algo *algo; /* a lock, or a non-blocking queue */
  bool is_queue;
  int threads;
  uint64_t iterations;
  uint64_t work_ns;
} np99_lock_point;

/* The protected queue: plain fields, guarded by the lock. */
typedef struct locked_queue {
  uint64_t head, tail; /* dequeue at head, enqueue at tail */
  uint64_t slot[QCAP];
} locked_queue;

typedef struct np99_lock_run {
  const np99_lock_point *pt;
  const syncq_lock_ops *ops;
  void *lock;
  locked_queue *q;
  _Atomic(int) errors;
  _Atomic(uint64_t) enq_sum, deq_sum; /* checksums of values moved */
} np99_lock_run;

static void lock_worker(lab_worker *w) {
  np99_lock_run *run = w->arg;
  uint64_t n = lab_share(run->pt->iterations, w->n, w->id);
  uint64_t seed = lab_prng_seed(w->id);
  uint64_t enq = 0, deq = 0;
  syncq_lock_node node;
  for (uint64_t i = 0; i < n; i++) {
    syncq_delay_ns(np99_work_time(run->pt->work_ns, &seed));
    if (run->ops->lock(run->lock, &node) != SYNCQ_OK) {
      atomic_fetch_add(&run->errors, 1);
      continue;
    }
    locked_queue *q = run->q;
    if ((i & 1u) == 0) {
      uint64_t v = ((uint64_t)w->id << 40) | i;
      if (q->tail - q->head < QCAP) {
        q->slot[q->tail++ % QCAP] = v;
        enq += v;
      } else {
        atomic_fetch_add(&run->errors, 1);
      }
    } else {
      if (q->tail != q->head) deq += q->slot[q->head++ % QCAP];
      else atomic_fetch_add(&run->errors, 1);
    }
    run->ops->unlock(run->lock, &node);
  }
  /* relaxed: read after lab_team_run joined the team */
  atomic_fetch_add_explicit(&run->enq_sum, enq, memory_order_relaxed);
  atomic_fetch_add_explicit(&run->deq_sum, deq, memory_order_relaxed);
}

static int lock_sample(lab_ctx *ctx, const np99_lock_point *pt, lab_sample *out) {
  const syncq_lock_ops *ops = pt->algo->ops;
  locked_queue *q = calloc(1, sizeof *q);
  syncq_lock_config cfg = {(unsigned)pt->threads, SYNCQ_WAIT_DEFAULT, false};
  void *l = NULL;
  int st = q == NULL ? SYNCQ_ENOMEM : lab_object_new(pt->algo, &(lab_object_cfg){.lock = &cfg}, &l);
  if (st != SYNCQ_OK) {
    free(q);
    lab_fail(ctx, "cannot create a %s lock: %s", pt->algo->name, syncq_strerror(st));
    return -1;
  }
  uint64_t pre = 0;
  for (uint64_t i = 0; i < QPREFILL; i++) {
    q->slot[q->tail++] = (1ull << 63) | i;
    pre += (1ull << 63) | i;
  }
  np99_lock_run *run = syncq_alloc_aligned(sizeof *run, _Alignof(np99_lock_run));
  if (run == NULL) {
    lab_object_free(pt->algo, l);
    free(q);
    lab_fail(ctx, "out of memory");
    return -1;
  }
  run->pt = pt;
  run->ops = ops;
  run->lock = l;
  run->q = q;
  atomic_init(&run->errors, 0);
  atomic_init(&run->enq_sum, 0);
  atomic_init(&run->deq_sum, 0);
  uint64_t ns;
  int rc = lab_team_run(ctx, pt->threads, lock_worker, run, NULL, &ns, &out->stats);
  uint64_t left = 0;
  for (uint64_t k = q->head; k != q->tail; k++) left += q->slot[k % QCAP];
  bool ok = atomic_load(&run->errors) == 0 && pre + atomic_load(&run->enq_sum) - atomic_load(&run->deq_sum) == left;
  lab_object_free(pt->algo, l);
  free(q);
  free(run);
  if (rc != 0) return -1;
  if (!ok) {
    lab_fail(ctx, "%s: the queue lost or duplicated items (mutual exclusion failed)", pt->algo->name);
    return -1;
  }
  out->value = (double)ns / NS_PER_MS;
  out->ops = pt->iterations;
  return 0;
}

/* ---- the non-blocking queues: the same loop, no lock ---- */

typedef struct np99_queue_run {
  const np99_lock_point *pt;
  const syncq_queue_ops *ops;
  void *q;
  _Atomic(int) errors;
  _Atomic(uint64_t) enq_sum, deq_sum;
} np99_queue_run;

/* Values as items: non-NULL, 16-byte aligned, within 48 bits (NBLFQ). */
static inline void *np99_item(uint64_t v) { return (void *)(uintptr_t)((v + 1) << 4); }
static inline uint64_t np99_value(void *item) { return ((uint64_t)(uintptr_t)item >> 4) - 1; }

static void queue_worker(lab_worker *w) {
  np99_queue_run *run = w->arg;
  uint64_t n = lab_share(run->pt->iterations, w->n, w->id);
  uint64_t seed = lab_prng_seed(w->id);
  uint64_t enq = 0, deq = 0;
  for (uint64_t i = 0; i < n; i++) {
    syncq_delay_ns(np99_work_time(run->pt->work_ns, &seed));
    if ((i & 1u) == 0) {
      uint64_t v = ((uint64_t)w->id << 32) | i;
      if (run->ops->enqueue(run->q, np99_item(v)) == SYNCQ_OK) enq += v;
      else atomic_fetch_add(&run->errors, 1);
    } else {
      void *item;
      if (run->ops->dequeue(run->q, &item) == SYNCQ_OK) deq += np99_value(item);
      else atomic_fetch_add(&run->errors, 1);
    }
  }
  /* relaxed: read after lab_team_run joined the team */
  atomic_fetch_add_explicit(&run->enq_sum, enq, memory_order_relaxed);
  atomic_fetch_add_explicit(&run->deq_sum, deq, memory_order_relaxed);
}

static int queue_sample(lab_ctx *ctx, const np99_lock_point *pt, lab_sample *out) {
  const syncq_queue_ops *ops = pt->algo->ops;
  void *q = NULL;
  int st = lab_object_new(pt->algo, &(lab_object_cfg){.queue_capacity = QCAP}, &q);
  np99_queue_run *run = syncq_alloc_aligned(sizeof *run, _Alignof(np99_queue_run));
  if (st != SYNCQ_OK || run == NULL) {
    lab_object_free(pt->algo, q);
    free(run);
    if (st == SYNCQ_OK) st = SYNCQ_ENOMEM;
    lab_fail(ctx, "cannot create a %s queue: %s", pt->algo->name, syncq_strerror(st));
    return -1;
  }
  uint64_t pre = 0;
  for (uint64_t i = 0; i < QPREFILL; i++) {
    uint64_t v = (UINT64_C(0xff) << 32) | i; /* thread ids stay below 0xff */
    if (ops->enqueue(q, np99_item(v)) == SYNCQ_OK) pre += v;
  }
  run->pt = pt;
  run->ops = ops;
  run->q = q;
  atomic_init(&run->errors, 0);
  atomic_init(&run->enq_sum, 0);
  atomic_init(&run->deq_sum, 0);
  uint64_t ns;
  int rc = lab_team_run(ctx, pt->threads, queue_worker, run, NULL, &ns, &out->stats);
  uint64_t left = 0;
  void *item;
  while (ops->dequeue(q, &item) == SYNCQ_OK) left += np99_value(item);
  bool ok = atomic_load(&run->errors) == 0 && pre + atomic_load(&run->enq_sum) - atomic_load(&run->deq_sum) == left;
  lab_object_free(pt->algo, q);
  free(run);
  if (rc != 0) return -1;
  if (!ok) {
    lab_fail(ctx, "%s: the queue lost or duplicated items, or was full/empty when it could not be", pt->algo->name);
    return -1;
  }
  out->value = (double)ns / NS_PER_MS;
  out->ops = pt->iterations;
  return 0;
}

static int np99_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const np99_lock_point *pt = arg;
  return pt->is_queue ? queue_sample(ctx, pt, out) : lock_sample(ctx, pt, out);
}

/* The quick suite's time budget: --quick runs leave the peer
 * libraries' queues out of this lock experiment (they run in dg25-* and
 * ms98-queue); the peer locks stay. The note says so. */
static bool peer_queue_skipped(lab_ctx *ctx, const syncq_algo *q) {
  return (q->props & SYNCQ_PROP_PEER) != 0 && lab_get_size(ctx) == LAB_SIZE_QUICK;
}

static int np99_locks_run_exp(lab_ctx *ctx) {
  const syncq_algo *algos[LAB_MAX_VARIANTS], *queues[LAB_MAX_VARIANTS];
  int nalgos = syncq_registry_list(SYNCQ_FAMILY_LOCK, algos, LAB_MAX_VARIANTS);
  if (nalgos > LAB_MAX_VARIANTS) nalgos = LAB_MAX_VARIANTS;
  int nq = syncq_registry_list(SYNCQ_FAMILY_QUEUE, queues, LAB_MAX_VARIANTS);
  if (nq > LAB_MAX_VARIANTS) nq = LAB_MAX_VARIANTS;
  int nb = nq; /* every registered queue: Figure 5's other half, Figure 1's array queue */
  int threads[LAB_MAX_THREADS_LIST];
  int nt = lab_threads(ctx, threads, LAB_MAX_THREADS_LIST);
  int pus = lab_pus(ctx);
  uint64_t iters = lab_by_size(ctx, 2000, 20000, 200000, NP99_ITER_FULL);

  lab_begin(ctx,
            "Each of p threads runs N/p iterations of work(); then an enqueue or a dequeue "
            "(alternating) on a shared FIFO queue under the lock (003 Figure 2, §4.2). work() is "
            "a calibrated busy loop of mean %llu ns +-%d%%; N=%llu. The queue is a %u-slot "
            "array ring pre-filled with %u items, protected by each registered lock with its "
            "default waiting discipline, beside every queue of the registry (the same loop on "
            "the queue itself, pre-filled alike). Time is the whole loop, barrier "
            "to barrier; threads up to the processing units (one per processor, as 003).",
            (unsigned long long)NP99_WORK_5US_NS, NP99_IMBALANCE_PCT, (unsigned long long)iters, QCAP, QPREFILL);
  lab_note(ctx, "competitive spin limit (one measured context switch): %llu ns",
           (unsigned long long)syncq_wait_spin_limit_ns());
  for (int k = 0; k < nb; k++)
    if (peer_queue_skipped(ctx, queues[k]) && !lab_planning(ctx)) {
      lab_note(ctx,
               "quick size: the peer libraries' queues are left out here (the quick suite's time "
               "budget); they run in dg25-* and ms98-queue, and here at the default and full sizes");
      break;
    }

  np99_lock_point pts[LAB_MAX_VARIANTS];
  for (int t = 0; t < nt; t++) {
    if (threads[t] > pus) continue; /* see the header comment */
    lab_group g;
    memset(&g, 0, sizeof g);
    lab_group_param(&g, "threads", threads[t]);
    lab_group_param(&g, "work_ns", (double)NP99_WORK_5US_NS);
    g.metric = "time";
    g.unit = "ms";
    g.sample = np99_sample;
    g.normalize_to = "pthread-mutex";
    for (int a = 0; a < nalgos; a++) {
      pts[a] = (np99_lock_point){algos[a], false, threads[t], iters, NP99_WORK_5US_NS};
      g.variants[g.nvariants++] = (lab_variant){algos[a]->name, &pts[a]};
    }
    for (int k = 0; k < nb && g.nvariants < LAB_MAX_VARIANTS; k++) {
      if (peer_queue_skipped(ctx, queues[k])) continue;
      if (queues[k]->props & SYNCQ_PROP_SPSC) continue; /* p threads on each side: queue-1p1c measures SPSC rings */
      pts[g.nvariants] = (np99_lock_point){queues[k], true, threads[t], iters, NP99_WORK_5US_NS};
      g.variants[g.nvariants] = (lab_variant){queues[k]->name, &pts[g.nvariants]};
      g.nvariants++;
    }
    if (lab_run_group(ctx, &g) != 0) return -1;
  }
  return 0;
}

/* num's time below den's at the largest thread count, which must be past 8 */
/* clang-format off */
#define NB_BEATS(num, den)                                                                          \
  "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"" num "\",\"den\":\"" den "\","              \
  "\"where\":{\"work_ns\":5000},\"at\":\"max_threads\",\"bound\":1.0,\"min_threads\":9}"
/* clang-format on */

/* clang-format off */
static const lab_claim np99_locks_claims[] = {
  {"The queue lock is the best lock: with contention the array queue lock (fetch-and-add "
   "form) beats the test-and-set and the ticket lock (003 §4.2, Figure 5).",
   "{\"op\":\"all\",\"rules\":["
   "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"array-faa\",\"den\":\"tas\","
   "\"where\":{\"work_ns\":5000},\"at\":\"max_threads\",\"bound\":1.0,\"min_threads\":2},"
   "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"array-faa\",\"den\":\"ticket\","
   "\"where\":{\"work_ns\":5000},\"at\":\"max_threads\",\"bound\":1.0,\"min_threads\":2}]}"},
  {"Locks whose atomic step is an LL-SC loop do worse than their fetchop forms: the array "
   "queue lock taking its place by fetch-and-add beats the one taking it by a CAS loop "
   "(003 §4.2, Figure 5).",
   "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"array-faa\",\"den\":\"array-cas\","
   "\"where\":{\"work_ns\":5000},\"at\":\"max_threads\",\"bound\":1.0,\"min_threads\":2}"},
  {"Non-blocking queues (MS best, then PLJ, then Valois) beat the locks with cacheable "
   "variables beyond 8 processors (003 §4.2, Figure 5): on a machine of 9 processing units or more, "
   "at the largest thread count measured (past 8), MS beats PLJ, PLJ beats Valois, and Valois beats "
   "the locks whose atomic step works on a cached line (tas, and array-cas, the LL-SC form).",
   "{\"op\":\"needs_pus\",\"pus\":9,\"rule\":{\"op\":\"all\",\"rules\":["
   NB_BEATS("ms", "plj") "," NB_BEATS("plj", "valois") "," NB_BEATS("valois", "tas") ","
   NB_BEATS("valois", "array-cas") "]}}"},
  {"The fetch-and-increment array queue of Figure 1 is the best queue: at the largest thread "
   "count it beats the MS non-blocking queue (003 §4.2).",
   "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"fai-array\",\"den\":\"ms\","
   "\"where\":{\"work_ns\":5000},\"at\":\"max_threads\",\"bound\":1.0,\"min_threads\":2}"},
};
/* clang-format on */

const lab_experiment lab_exp_np99_locks = {
  .name = "np99-locks",
  .paper = "003 Nikolopoulos & Papatheodorou 1999, §4.2",
  .figure = "Figure 5 (locks)",
  .title = "A FIFO queue protected by each lock (spin locks, queue locks, mutexes)",
  .x = "threads",
  .log_y = true,
  .claims = np99_locks_claims,
  .nclaims = sizeof np99_locks_claims / sizeof np99_locks_claims[0],
  .uses_registry = true,
  .family = SYNCQ_FAMILY_LOCK,
  .also_family = true,
  .family2 = SYNCQ_FAMILY_QUEUE,
  .run = np99_locks_run_exp,
};
