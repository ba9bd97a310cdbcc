/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * queue_sides.c — queue-sides: each side of dg25-prodcons alone (syncq,
 * beyond the papers).
 *
 * dg25-prodcons times N producers and N consumers together, so a queue's
 * figure is whichever side is slower, or the cost of the two meeting in
 * the same cells: its numbers alone cannot say which. Here the two sides
 * run one after the other on the same queue:
 *
 *   fill:  N producer threads enqueue `items` items each into an empty
 *          queue (nobody dequeues);
 *   drain: then N consumer threads dequeue `items` each until it is empty
 *          (nobody enqueues).
 *
 * Two figures per point, in M ops/s: enqueue_throughput (all enqueues over
 * the fill's time, start barrier to the last producer's end) and
 * dequeue_throughput (the same for the drain). A queue whose dg25-prodcons
 * figure is near twice its slower side's is limited by that side; one well
 * below is limited by the meeting of the two (a dequeue waiting for the
 * item of a ticket already taken, cells moving between the two sides'
 * caches). The threads are placed as dg25-prodcons places them: producers
 * on the first N slots of the pinning order, consumers on the next N, so
 * the drain reads cells the fill wrote on other cores (while 2N slots fit
 * the processing units; past them the slots wrap, as dg25-prodcons's do,
 * and consumers share the producers' units).
 *
 * The queue must hold every item at once: the unbounded queues get
 * dg25-prodcons's capacity (1,024: the size of their rings or blocks, as
 * there), the bounded ones a capacity of N * items rounded up to a power
 * of two (a queue that cannot be that large is named in a note and left
 * out of that point). A FULL during the fill or an EMPTY during the drain
 * is retried after the run's --queue-wait, as in dg25-prodcons, and
 * counted (full_polls_per_op, empty_polls_per_op).
 * Validation: the drain's checksum is the fill's, and the queue ends
 * empty.
 */
#include <stdlib.h>
#include <string.h>

#include "../construct.h"
#include "../lab.h"
#include "syncq/pr.h"
#include "syncq/queue.h"
#include "queue_items.h"

#define QS_UNBOUNDED_CAPACITY LAB_QUEUE_CAPACITY /* dg25-prodcons's: the rings' and blocks' size hint */
#define QS_ITEMS_FULL 65536ull                   /* dg25-prodcons's (004 §VI-A) items per thread */

typedef struct qs_point {
  const syncq_algo *algo;
  int n; /* producers = consumers */
  uint64_t items;
  size_t capacity;
} qs_point;

typedef struct qs_run {
  const qs_point *pt;
  const syncq_queue_ops *ops;
  lab_queue_wait wait; /* the run's --queue-wait */
  void *q;
  _Atomic(uint64_t) sum;
  _Atomic(uint64_t) polls; /* FULL during the fill, EMPTY during the drain */
  _Atomic(int) error;      /* the first answer that was neither success nor FULL/EMPTY */
  lab_queue_watch watch;   /* the drain's: a queue that lost items (lab.h) */
} qs_run;

/* The first unexpected status stops every thread of the sample. */
static bool qs_failed(qs_run *r, int st, int expected) {
  if (st == expected)
    return atomic_load_explicit(&r->error, memory_order_relaxed) != SYNCQ_OK; /* relaxed: a stop flag */
  int none = SYNCQ_OK;
  (void)atomic_compare_exchange_strong(&r->error, &none, st);
  return true;
}

static void qs_fill(lab_worker *w) {
  qs_run *r = w->arg;
  uint64_t polls = 0;
  for (uint64_t i = 0; i < r->pt->items; i++) {
    uint32_t spins = 0;
    int st;
    while ((st = r->ops->enqueue(r->q, lab_queue_item(lab_queue_number(w->id, i)))) != SYNCQ_OK) {
      if (qs_failed(r, st, SYNCQ_FULL)) return;
      polls++;
      lab_queue_wait_poll(r->wait, &spins);
    }
  }
  atomic_fetch_add(&r->polls, polls);
}

/* A drain's dequeue after its first poll failed with status st: the
 * waiting, and the watch for lost items, off the path of a dequeue that
 * succeeds at once. False when the drain stops (an error, or items lost). */
static bool qs_take_waiting(qs_run *r, void **x, uint64_t *polls, int st) {
  uint32_t spins = 0;
  lab_queue_streak streak = {0};
  do {
    if (qs_failed(r, st, SYNCQ_EMPTY)) break;
    ++*polls;
    lab_queue_wait_poll(r->wait, &spins);
    if (lab_queue_watch_empty(&r->watch, &streak)) break;
  } while ((st = r->ops->dequeue(r->q, x)) != SYNCQ_OK);
  lab_queue_watch_end(&r->watch, &streak);
  return st == SYNCQ_OK;
}

static void qs_drain(lab_worker *w) {
  qs_run *r = w->arg;
  uint64_t polls = 0, sum = 0;
  for (uint64_t i = 0; i < r->pt->items; i++) {
    void *x = NULL;
    int st = r->ops->dequeue(r->q, &x);
    /* Once the drain stops each dequeue left gives up at its first
     * EMPTY (the sum is then not read); the watch counts those of a loss:
     * the items this consumer was still owed. */
    if (st != SYNCQ_OK && !qs_take_waiting(r, &x, &polls, st)) continue;
    sum += lab_queue_value(x);
  }
  atomic_fetch_add(&r->sum, sum);
  atomic_fetch_add(&r->polls, polls);
  lab_queue_watch_finished(&r->watch);
}

static void *qs_make(const qs_point *pt, int *status) {
  void *q;
  *status = lab_object_new(pt->algo, &(lab_object_cfg){.queue_capacity = pt->capacity}, &q);
  return q;
}

static int qs_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const qs_point *pt = arg;
  qs_run r;
  memset(&r, 0, sizeof r);
  r.pt = pt;
  r.ops = pt->algo->ops;
  r.wait = lab_get_queue_wait(ctx);
  atomic_init(&r.error, SYNCQ_OK);
  int st;
  r.q = qs_make(pt, &st);
  if (r.q == NULL) {
    lab_fail(ctx, "cannot create a %s queue of capacity %zu: %s", pt->algo->name, pt->capacity, syncq_strerror(st));
    return -1;
  }
  int *slots = malloc((size_t)pt->n * sizeof *slots);
  if (slots == NULL) {
    lab_object_free(pt->algo, r.q);
    lab_fail(ctx, "out of memory");
    return -1;
  }
  for (int i = 0; i < pt->n; i++) slots[i] = pt->n + i; /* the drain on dg25-prodcons's consumer slots */
  uint64_t fill_ns = 0, drain_ns = 0;
  syncq_stats fill_stats, drain_stats;
  int rc = lab_team_run(ctx, pt->n, qs_fill, &r, NULL, &fill_ns, &fill_stats);
  uint64_t full_polls = atomic_exchange(&r.polls, 0);
  lab_queue_watch_init(&r.watch, pt->n);
  if (rc == 0 && atomic_load(&r.error) == SYNCQ_OK)
    rc = lab_team_run(ctx, pt->n, qs_drain, &r, slots, &drain_ns, &drain_stats);
  uint64_t total = (uint64_t)pt->n * pt->items;
  uint64_t left = lab_queue_leftovers(r.ops->dequeue, r.q, total);
  lab_object_free(pt->algo, r.q);
  free(slots);
  if (rc != 0) return -1;
  if (atomic_load(&r.error) != SYNCQ_OK) {
    lab_fail(ctx, "%s answered %s (neither FULL nor EMPTY): the sample stopped", pt->algo->name,
             syncq_strerror(atomic_load(&r.error)));
    return -1;
  }
  if (lab_queue_watch_check(ctx, &r.watch, pt->algo->name, atomic_load(&r.watch.gave_up), total) != 0) return -1;
  if (lab_queue_duplicate_check(ctx, pt->algo->name, total, left) != 0) return -1;
  uint64_t want = lab_queue_checksum(pt->n, pt->items);
  if (atomic_load(&r.sum) != want) {
    lab_fail(
      ctx,
      "%s gave out other items than were enqueued (one lost and another duplicated, or changed): checksum %llu, expected %llu",
      pt->algo->name, (unsigned long long)atomic_load(&r.sum), (unsigned long long)want);
    return -1;
  }
  uint64_t side_ops = (uint64_t)pt->n * pt->items;
  out->value = (double)side_ops / ((double)fill_ns / 1e3);     /* ops per us = M ops/s */
  out->extra[0] = (double)side_ops / ((double)drain_ns / 1e3); /* the drain's */
  out->ops = 2 * side_ops;
  out->stats = fill_stats;
  syncq_stats_add(&out->stats, &drain_stats);
  out->full_polls = full_polls;
  out->empty_polls = atomic_load(&r.polls);
  return 0;
}

/* N * items rounded up to a power of two, or 0 past SIZE_MAX's half. */
static size_t qs_bounded_capacity(int n, uint64_t items) {
  uint64_t want = (uint64_t)n * items;
  size_t c = 1;
  while (c < want) {
    if (c > SIZE_MAX / 2) return 0;
    c <<= 1;
  }
  return c;
}

static int queue_sides_run(lab_ctx *ctx) {
  const syncq_algo *all[LAB_MAX_VARIANTS];
  int na = syncq_registry_list(SYNCQ_FAMILY_QUEUE, all, LAB_MAX_VARIANTS);
  if (na > LAB_MAX_VARIANTS) na = LAB_MAX_VARIANTS;
  int threads[LAB_MAX_THREADS_LIST];
  int nt = lab_threads(ctx, threads, LAB_MAX_THREADS_LIST);
  uint64_t items = lab_by_size(ctx, 1000, 16384, QS_ITEMS_FULL, QS_ITEMS_FULL);
  lab_queue_wait wait = lab_get_queue_wait(ctx);
  lab_begin(ctx,
            "Each side of dg25-prodcons alone, one after the other on one queue: N producer threads "
            "enqueue %llu items each into the empty queue (the fill), then N consumer threads dequeue "
            "as many each until it is empty (the drain). enqueue_throughput and dequeue_throughput are "
            "each side's operations over its time, from the start barrier to its last thread's end, in "
            "M ops/s. Producers take dg25-prodcons's producer slots of the pinning order, consumers its "
            "consumer slots. The unbounded queues have dg25-prodcons's capacity (%d: their rings' or "
            "blocks' size), the bounded ones N * items rounded up to a power of two, so that every "
            "item fits. A FULL or EMPTY is retried after a wait, as in dg25-prodcons (--queue-wait %s: "
            "%s), and counted. A checksum proves each item came out once.",
            (unsigned long long)items, QS_UNBOUNDED_CAPACITY, lab_queue_wait_name(wait), lab_queue_wait_text(wait));
  lab_note_queue_wait(ctx);
  qs_point pts[LAB_MAX_VARIANTS];
  bool spinners_noted = false;
  for (int t = 0; t < nt; t++) {
    lab_group g;
    memset(&g, 0, sizeof g);
    lab_group_param(&g, "threads", threads[t]);
    g.metric = "enqueue_throughput";
    g.unit = "Mops/s";
    g.higher_is_better = true;
    g.extra[0] = (struct lab_extra_metric){"dequeue_throughput", "Mops/s", true};
    g.nextra = 1;
    g.sample = qs_sample;
    for (int a = 0; a < na; a++) {
      const syncq_algo *algo = all[a];
      if (algo->props & SYNCQ_PROP_SPSC) continue; /* several threads on a side: queue-1p1c runs them */
      /* N threads at a time: a queue whose operations spin on a preempted
       * claimer is left out only where the N threads outnumber the units */
      if ((algo->props & SYNCQ_PROP_SPINS_ON_PREEMPTED) && threads[t] > lab_pus(ctx)) {
        if (!lab_planning(ctx) && !spinners_noted && lab_selected(ctx, algo->name))
          lab_note(ctx,
                   "the queues whose operations spin on a preempted claimer (spins-on-preempted, as %s) "
                   "are not run where the N threads of a side outnumber the %d processing units",
                   algo->name, lab_pus(ctx));
        spinners_noted = spinners_noted || !lab_planning(ctx);
        continue;
      }
      bool bounded = (algo->props & SYNCQ_PROP_BOUNDED) != 0;
      size_t cap = bounded ? qs_bounded_capacity(threads[t], items) : QS_UNBOUNDED_CAPACITY;
      pts[a] = (qs_point){algo, threads[t], items, cap};
      if (!lab_planning(ctx) && lab_selected(ctx, algo->name)) {
        int st = cap ? SYNCQ_OK : SYNCQ_EINVAL;
        void *q = cap ? qs_make(&pts[a], &st) : NULL;
        if (q == NULL) {
          lab_note(ctx,
                   "%s not measured at threads=%d: a queue of capacity %zu (every item at once) cannot be made: %s",
                   algo->name, threads[t], cap, syncq_strerror(st));
          continue;
        }
        lab_object_free(algo, q);
      }
      g.variants[g.nvariants++] = (lab_variant){algo->name, &pts[a]};
    }
    if (lab_run_group(ctx, &g) != 0) return -1;
  }
  return 0;
}

const lab_experiment lab_exp_queue_sides = {
  .name = "queue-sides",
  .paper = "syncq (beyond the papers)",
  .figure = "dg25-prodcons's two sides, each alone",
  .title = "Enqueue and dequeue throughput of every queue, each side alone (fill, then drain)",
  .x = "threads",
  .log_y = true,
  .claims = NULL,
  .nclaims = 0,
  .uses_registry = true,
  .family = SYNCQ_FAMILY_QUEUE,
  .run = queue_sides_run,
  .perf_counters = true,
};
