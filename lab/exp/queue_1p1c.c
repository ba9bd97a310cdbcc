/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * queue_1p1c.c — queue-1p1c: one producer and one consumer (syncq, beyond
 * the papers).
 *
 * The five papers measure queues with several threads on each side; the
 * commonest use of a queue in a communication library is one thread
 * handing work to one other (a progress thread, a NIC completion poller),
 * where single-producer/single-consumer rings (SYNCQ_PROP_SPSC: ck_ring's
 * SPSC mode, boost::lockfree::spsc_queue) are what users pick. This
 * experiment runs every queue of the registry that can run with one thread
 * on each side (syncq's own, the SPSC peers and the MPMC peers) in the two
 * shapes that matter:
 *
 *   stream:   the producer enqueues N items 0..N-1, the consumer dequeues
 *             N; throughput in M ops/s (an enqueue and a dequeue count as
 *             one operation each, as dg25-prodcons counts them);
 *   pingpong: one item bounces through two queues (thread 0 enqueues into
 *             q1 and waits on q2, thread 1 moves it from q1 to q2); the
 *             mean round trip in ns. Each queue still has one producer and
 *             one consumer, so SPSC rings may run it.
 *
 * The two threads are pinned to the first two slots of the pinning order
 * (two different cores when there are two; lab/topo.c), or share the one
 * processing unit there is (a note says so). Waiting on FULL/EMPTY spins a
 * little, then yields, so a shared processing unit still makes progress.
 *
 * Validation: the consumer must see 0..N-1 in order for a FIFO queue (one
 * producer: any FIFO order is exactly that one) and, for every queue, N
 * items with the right checksum; the queue must end empty; the ping-pong
 * item must come back unchanged every round.
 */
#include <stdlib.h>
#include <string.h>

#include "../construct.h"
#include "../lab.h"
#include "syncq/platform.h"
#include "syncq/pr.h"
#include "syncq/queue.h"
#include "queue_items.h"

#define Q1P1C_CAPACITY LAB_QUEUE_CAPACITY /* dg25's capacity, NewMadeleine's typical size (004 §IV-C) */
#define Q1P1C_SPINS_BEFORE_YIELD 64
#define Q1P1C_NS_PER_US 1e3
#define Q1P1C_REFERENCE "nblfq" /* syncq's default queue: every ratio is against it */
#define Q1P1C_WORKERS 2

typedef enum q1_mode { Q1_STREAM, Q1_PINGPONG } q1_mode;
static const char *const q1_mode_name[] = {"stream", "pingpong"};

typedef struct q1_point {
  const syncq_algo *algo;
  q1_mode mode;
  uint64_t n; /* items (stream) or round trips (pingpong) */
} q1_point;

typedef struct q1_run {
  const q1_point *pt;
  const syncq_queue_ops *ops;
  void *q1, *q2;
  uint64_t out_sum, out_count; /* written by the consumer only, read after the team joined */
  uint64_t errors;             /* idem (order or ping-pong mismatches) */
  lab_queue_watch watch;       /* a queue that lost the items owed (lab.h) */
} q1_run;

/* A queue of algorithm a, capacity Q1P1C_CAPACITY, in fresh storage
 * (lab/construct.h). NULL with *status set when it cannot be made. */
static void *q1_make(const syncq_algo *a, int *status) {
  void *q;
  *status = lab_object_new(a, &(lab_object_cfg){.queue_capacity = Q1P1C_CAPACITY}, &q);
  return q;
}

static void q1_drop(const syncq_algo *a, void *q) { lab_object_free(a, q); }

static inline void q1_wait(unsigned *spins) {
  if (++*spins % Q1P1C_SPINS_BEFORE_YIELD == 0) syncq_yield();
  else syncq_pr_relax();
}

static inline void q1_enqueue(const syncq_queue_ops *ops, lab_queue_watch *watch, void *q, void *item) {
  unsigned spins = 0;
  while (ops->enqueue(q, item) == SYNCQ_FULL && !lab_queue_watch_lost(watch)) q1_wait(&spins);
}

/* q1_dequeue after its first poll failed: the waiting, and the watch for
 * lost items, off the path of a dequeue that succeeds at once. */
static void *q1_dequeue_waiting(const syncq_queue_ops *ops, lab_queue_watch *watch, void *q) {
  unsigned spins = 0;
  lab_queue_streak streak = {0};
  void *x = NULL;
  bool took = false;
  do {
    q1_wait(&spins);
    if (lab_queue_watch_empty(watch, &streak)) break;
  } while (!(took = ops->dequeue(q, &x) == SYNCQ_OK));
  lab_queue_watch_end(watch, &streak);
  return took ? x : NULL;
}

/* The item, or NULL once the items owed were found lost. */
static inline void *q1_dequeue(const syncq_queue_ops *ops, lab_queue_watch *watch, void *q) {
  void *x = NULL;
  return ops->dequeue(q, &x) == SYNCQ_OK ? x : q1_dequeue_waiting(ops, watch, q);
}

static void q1_worker(lab_worker *w) {
  q1_run *r = w->arg;
  const q1_point *pt = r->pt;
  const syncq_queue_ops *ops = r->ops;
  lab_queue_watch *watch = &r->watch;
  if (pt->mode == Q1_STREAM) {
    if (w->id == 0) {
      for (uint64_t i = 0; i < pt->n; i++) q1_enqueue(ops, watch, r->q1, lab_queue_item(i));
      lab_queue_watch_finished(watch);
      return;
    }
    /* Once the items are found lost each q1_dequeue left answers NULL at
     * its first EMPTY (the sum and order are then not read), and the
     * watch counts each: the items still owed. */
    bool fifo = (pt->algo->props & SYNCQ_PROP_FIFO) != 0;
    uint64_t sum = 0, errors = 0;
    for (uint64_t i = 0; i < pt->n; i++) {
      uint64_t v = lab_queue_value(q1_dequeue(ops, watch, r->q1));
      errors += fifo && v != i;
      sum += v;
    }
    r->out_sum = sum;
    r->out_count = pt->n;
    r->errors = errors;
    lab_queue_watch_finished(watch);
    return;
  }
  uint64_t errors = 0;
  for (uint64_t i = 0; i < pt->n; i++) {
    void *x;
    if (w->id == 0) {
      q1_enqueue(ops, watch, r->q1, lab_queue_item(i));
      if ((x = q1_dequeue(ops, watch, r->q2)) == NULL) break; /* the item was lost */
      errors += lab_queue_value(x) != i;
    } else {
      if ((x = q1_dequeue(ops, watch, r->q1)) == NULL) break;
      q1_enqueue(ops, watch, r->q2, x);
    }
  }
  if (w->id == 0) {
    r->errors = errors;
    r->out_count = pt->n;
  }
  lab_queue_watch_finished(watch);
}

static int q1_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const q1_point *pt = arg;
  q1_run r;
  memset(&r, 0, sizeof r);
  r.pt = pt;
  r.ops = pt->algo->ops;
  int st = SYNCQ_OK;
  r.q1 = q1_make(pt->algo, &st);
  if (r.q1 != NULL && pt->mode == Q1_PINGPONG) r.q2 = q1_make(pt->algo, &st);
  if (r.q1 == NULL || (pt->mode == Q1_PINGPONG && r.q2 == NULL)) {
    q1_drop(pt->algo, r.q1);
    lab_fail(ctx, "cannot create a %s queue: %s", pt->algo->name, syncq_strerror(st));
    return -1;
  }
  /* slots 0 and 1 of the pinning order: two cores where there are two */
  const int apart[Q1P1C_WORKERS] = {0, 1};
  uint64_t ns = 0;
  lab_queue_watch_init(&r.watch, Q1P1C_WORKERS);
  int rc = lab_team_run(ctx, Q1P1C_WORKERS, q1_worker, &r, apart, &ns, &out->stats);
  uint64_t left = lab_queue_leftovers(r.ops->dequeue, r.q1, pt->n);
  if (r.q2 != NULL) left += lab_queue_leftovers(r.ops->dequeue, r.q2, pt->n);
  bool empty = left == 0;
  q1_drop(pt->algo, r.q1);
  q1_drop(pt->algo, r.q2);
  if (rc != 0) return -1;
  /* stream: the items the consumer was still owed; pingpong: its one item */
  uint64_t lost = pt->mode == Q1_STREAM ? atomic_load(&r.watch.gave_up) : 1;
  uint64_t total = pt->mode == Q1_STREAM ? pt->n : 2 * pt->n;
  if (lab_queue_watch_check(ctx, &r.watch, pt->algo->name, lost, total) != 0) return -1;
  if (!empty) {
    lab_fail(ctx, "%s gave out more items than were enqueued (%s): %llu left in the queue%s after the %llu %s",
             pt->algo->name, q1_mode_name[pt->mode], (unsigned long long)left, r.q2 ? "s" : "",
             (unsigned long long)pt->n, pt->mode == Q1_STREAM ? "items were taken" : "round trips");
    return -1;
  }
  /* 0 + 1 + ... + (n - 1) */
  uint64_t want_sum = pt->n * (pt->n - 1) / 2;
  bool sum_ok = pt->mode == Q1_PINGPONG || r.out_sum == want_sum;
  if (r.errors != 0 || !empty || r.out_count != pt->n || !sum_ok) {
    lab_fail(ctx,
             "%s failed validation (%s): %llu items out of order or changed, queue %s, %llu of %llu items, "
             "checksum %llu (want %llu)",
             pt->algo->name, q1_mode_name[pt->mode], (unsigned long long)r.errors, empty ? "empty" : "not empty",
             (unsigned long long)r.out_count, (unsigned long long)pt->n, (unsigned long long)r.out_sum,
             (unsigned long long)want_sum);
    return -1;
  }
  if (pt->mode == Q1_STREAM) {
    out->ops = 2 * pt->n;
    out->value = (double)out->ops / ((double)ns / Q1P1C_NS_PER_US); /* ops per us = M ops/s */
  } else {
    out->ops = 4 * pt->n;
    out->value = (double)ns / (double)pt->n;
  }
  return 0;
}

/* Every registered queue that one producer and one consumer can run: all
 * of them, SPSC rings included (this experiment is where they are
 * measured), except those whose init fails here (noted). */
static int q1_queues(lab_ctx *ctx, const syncq_algo **out, int cap) {
  const syncq_algo *all[LAB_MAX_VARIANTS];
  int n = syncq_registry_list(SYNCQ_FAMILY_QUEUE, all, LAB_MAX_VARIANTS);
  if (n > LAB_MAX_VARIANTS) n = LAB_MAX_VARIANTS;
  int k = 0;
  for (int i = 0; i < n && k < cap; i++) {
    int st;
    void *q = q1_make(all[i], &st);
    if (q == NULL) {
      if (!lab_planning(ctx)) lab_note(ctx, "%s not measured: init says %s", all[i]->name, syncq_strerror(st));
      continue;
    }
    q1_drop(all[i], q);
    out[k++] = all[i];
  }
  return k;
}

static int queue_1p1c_run(lab_ctx *ctx) {
  const syncq_algo *algos[LAB_MAX_VARIANTS];
  int na = q1_queues(ctx, algos, LAB_MAX_VARIANTS);
  /* --quick: 2 modes x ~29 queues x 2 launches x 4 runs must stay within
   * ~25 s on a shared 2-core machine, so 150,000 items (a few ms at tens
   * of M ops/s, ~0.1 s for the slowest rings) and 5,000 round trips: about
   * 16 s at 200,000 items and one launch of 6 runs here, 32 s with two
   * launches under a load average of 16. */
  uint64_t items = lab_by_size(ctx, 2000, 150000, 2000000, 10000000);
  uint64_t rtts = lab_by_size(ctx, 500, 5000, 100000, 1000000);
  int spsc = 0;
  for (int a = 0; a < na; a++) spsc += (algos[a]->props & SYNCQ_PROP_SPSC) != 0;
  lab_begin(ctx,
            "One producer and one consumer thread, pinned to two different cores, on every registered "
            "queue that can run with one thread on each side (%d queues, %d of them single-producer/"
            "single-consumer rings, SYNCQ_PROP_SPSC), capacity %d where bounded. mode=stream: the "
            "producer enqueues N=%llu items, the consumer dequeues them; throughput in M ops/s (an "
            "enqueue and a dequeue count as one operation each). mode=pingpong: one item bounces "
            "through two queues, each with one producer and one consumer, %llu times; the mean round "
            "trip in ns. A thread that finds the queue full or empty spins %d times, then yields. "
            "Ratios are against \"%s\". Every run is validated (FIFO order from the one producer, "
            "count, checksum, queues left empty).",
            na, spsc, Q1P1C_CAPACITY, (unsigned long long)items, (unsigned long long)rtts, Q1P1C_SPINS_BEFORE_YIELD,
            Q1P1C_REFERENCE);
  if (!lab_planning(ctx)) {
    /* pinning needs the topology, so its cores are known below */
    lab_topo *topo = lab_ctx_topo(ctx);
    if (!lab_pinning_enabled(ctx) || topo == NULL)
      lab_note(ctx, "threads not pinned (--no-pin or no topology): the scheduler places producer and consumer");
    else if (lab_pus(ctx) < 2)
      lab_note(ctx,
               "one processing unit: producer and consumer share it, so every hand-over waits for the "
               "scheduler (a yield); the figures measure that, not a cross-core transfer");
    else if (lab_topo_cores(topo) < 2)
      lab_note(ctx, "one core: producer and consumer run on two hardware threads of the same core");
  }
  q1_point pts[LAB_MAX_VARIANTS];
  for (int m = Q1_STREAM; m <= Q1_PINGPONG; m++) {
    lab_group g;
    memset(&g, 0, sizeof g);
    lab_group_param_str(&g, "mode", q1_mode_name[m]);
    lab_group_param(&g, "threads", Q1P1C_WORKERS);
    g.metric = m == Q1_STREAM ? "throughput" : "latency";
    g.unit = m == Q1_STREAM ? "Mops/s" : "ns";
    g.higher_is_better = m == Q1_STREAM;
    g.sample = q1_sample;
    g.normalize_to = Q1P1C_REFERENCE;
    for (int a = 0; a < na; a++) {
      pts[a] = (q1_point){algos[a], (q1_mode)m, m == Q1_STREAM ? items : rtts};
      g.variants[g.nvariants++] = (lab_variant){algos[a]->name, &pts[a]};
    }
    if (lab_run_group(ctx, &g) != 0) return -1;
  }
  return 0;
}

/* syncq's bounded rings that an SPSC user could pick instead of a peer's
 * SPSC ring: "syncq's best bounded ring" below is the best of these. */
/* clang-format off */
#define Q1_RING_RULE(op, metric, algo, mode, bound)                                                       \
  "{\"op\":\"" op "\",\"metric\":\"" metric "\",\"algo\":\"" algo "\",\"where\":{\"mode\":\"" mode "\"}," \
  "\"at\":{\"threads\":2},\"bound\":" bound "}"
/* clang-format on */
/* clang-format off */
#define Q1_BEST_RING(op, metric, mode, bound)                                                                  \
  "{\"op\":\"any\",\"rules\":[" Q1_RING_RULE(op, metric, "nblfq", mode, bound) "," Q1_RING_RULE(              \
      op, metric, "nblfq2", mode, bound) "," Q1_RING_RULE(op, metric, "scq", mode, bound) "," Q1_RING_RULE(op, \
      metric, "vyukov", mode, bound) "]}"
/* clang-format on */

/* clang-format off */
static const lab_claim queue_1p1c_claims[] = {
  {"syncq target: at one producer and one consumer, syncq's best bounded ring (nblfq, nblfq2, scq or "
   "vyukov) streams items at least half as fast as the best peer library's queue, SPSC rings "
   "included (within 2x).",
   Q1_BEST_RING("peer_ratio_above", "throughput", "stream", "0.5")},
  {"syncq target: at one producer and one consumer, syncq's best bounded ring's ping-pong round trip "
   "is within 1.5x of the best peer library's queue, SPSC rings included.",
   Q1_BEST_RING("peer_ratio_below", "latency", "pingpong", "1.5")},
  {"syncq target: NBLFQ, syncq's default queue, streams at least 1.5x the items of the two-lock "
   "queue at one producer and one consumer (no lock hand-over between the two ends).",
   "{\"op\":\"ratio_above\",\"metric\":\"throughput_ratio\",\"num\":\"nblfq\",\"den\":\"two-lock\","
   "\"where\":{\"mode\":\"stream\"},\"at\":{\"threads\":2},\"bound\":1.5}"},
};
/* clang-format on */

const lab_experiment lab_exp_queue_1p1c = {
  .name = "queue-1p1c",
  .paper = "syncq (beyond the papers)",
  .figure = "one producer, one consumer: stream throughput and ping-pong round trip",
  .title = "Every queue with one producer and one consumer, SPSC rings included",
  .x = NULL,
  .log_y = true,
  .claims = queue_1p1c_claims,
  .nclaims = sizeof queue_1p1c_claims / sizeof queue_1p1c_claims[0],
  .uses_registry = true,
  .family = SYNCQ_FAMILY_QUEUE,
  .run = queue_1p1c_run,
  .perf_counters = true,
};
