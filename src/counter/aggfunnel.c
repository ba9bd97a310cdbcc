/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * aggfunnel.c — aggregating funnel counter: fetch-and-adds that arrive
 * together are applied to the main counter as one batch.
 *
 * Contract
 *   Source:      Younghun Roh, Yuanhao Wei, Eric Ruppert, Panagiota
 *                Fatourou, Siddhartha Jayanti, Julian Shun, "Aggregating
 *                Funnels for Faster Fetch&Add and Queues", PPoPP 2025
 *                (arXiv 2411.14420), the Aggregating Funnel's Fetch&Add
 *                (the paper's algorithm; its figure numbers not checked):
 *                a thread fetch-and-adds its delta into its
 *                aggregator; the thread whose add starts a batch (the
 *                delegate: its old aggregator value equals the end of the
 *                last batch sent on) reads the aggregator, applies the
 *                batch's sum to Main with one fetch-and-add and publishes
 *                the batch's start on Main; each member returns that start
 *                plus its offset in the batch. The paper is not available
 *                here: written from its description (see Deviations).
 *   Progress:    blocking. A member waits for its batch's delegate, and a
 *                delegate waits until the members of the batch
 *                SYNCQ_COUNTER_AGGFUNNEL_LOG (4) batches back on its
 *                aggregator have read their results: a thread stopped
 *                between its aggregator add and its return stops the
 *                others on its aggregator (never those on the others, nor
 *                direct adds). Waiters relax the core and yield every
 *                32nd pause (syncq_wait_spin_yield). Deltas outside
 *                [1, 2^32] and load: wait-free (one instruction on Main).
 *   Atomics:     per add through an aggregator, 2 locked instructions: a
 *                delegate 1 fetch-and-add on its aggregator + 1 on Main
 *                (for the whole batch), then plain stores of the record
 *                (release); a member 1 fetch-and-add on its aggregator +
 *                1 on the record's acked word; both read the aggregator's
 *                sent line while they wait. Main sees one fetch-and-add per
 *                batch instead of one per add.
 *   Memory:      caller's storage: Main's line and per aggregator 2 + 4
 *                cache lines (count; sent; 4 batch records); never
 *                allocates.
 *   Signal-safe: no (a handler that interrupts an add and adds on the same
 *                aggregator waits for itself). Process-shared: no (the
 *                layout holds no pointers, but a thread's aggregator comes
 *                from a per-process thread index; untested there).
 *   Limits:      the value wraps modulo 2^64. Adds of 1 to 2^32 go through
 *                the aggregators, other deltas (0, negative, larger) to
 *                Main directly. Aggregators: 1 to
 *                SYNCQ_COUNTER_AGGFUNNEL_AGGS_MAX (8), default 4; a thread
 *                uses aggregator (its index mod the count), its index
 *                taken from a process-wide counter at its first add (never
 *                from the core count), so threads k and k + naggs share
 *                one; the paper's placement by NUMA node is not made.
 *   Linearizable: yes, for every delta: a batch's adds take effect, in
 *                their aggregator order, at the delegate's fetch-and-add on
 *                Main, which falls between each member's aggregator add and
 *                its return; direct adds and load act on Main at once. So
 *                +1 adds return unique, gap-free values (the tickets LCRQ
 *                and LPRQ need: src/queue/linked_rings.h).
 *   Deviations:  (1) the paper's batches are a linked list reclaimed by
 *                epochs; here each aggregator keeps a ring of 4 batch
 *                records in place, read under a sequence count (a
 *                seqlock of release stores and acquire loads), and a
 *                delegate reuses a record only once its members have
 *                acknowledged (acked, one fetch-and-add each): no
 *                allocation, at the cost of the member's second locked
 *                instruction and the delegate's wait above. (2) The
 *                paper's 2*floor(sqrt(p)) aggregators for p threads is the
 *                caller's choice here (init_aggs); the counter registry's
 *                entry and the queues use 4. (3) The paper's
 *                Fetch&AddDirect (an add made on Main itself), used
 *                adaptively: a thread whose wait in a funnel lasted long
 *                enough to yield (AF_YIELD_EVERY pauses: the thread it
 *                waited for was most likely descheduled) makes its next
 *                AF_DIRECT (64) adds, on any funnel, directly on Main, so
 *                that oversubscribed threads stop queueing behind
 *                preempted delegates (measured: 8 threads on 2 cores,
 *                np99-counter, 738 ms for 100,000 adds without it; see
 *                docs/queues.md); deltas outside [1, 2^32] always go
 *                there. Direct adds are linearizable with the batches
 *                (each is one fetch-and-add on Main, as a batch is).
 *   Stats:       yields (every 32nd pause of a wait).
 */
#include "syncq/counter/aggfunnel.h"

#include <stdbool.h>
#include <stdatomic.h>

#include "../stats_internal.h"
#include "aggfunnel_internal.h"
#include "syncq/counter.h"
#include "syncq/wait.h"

#define AF_LOG SYNCQ_COUNTER_AGGFUNNEL_LOG
#define AF_DELTA_MAX (UINT64_C(1) << 32) /* larger adds go to Main: keeps aggregator spans far below 2^63 */
#define AF_YIELD_EVERY 32                /* a waiter yields every 32nd pause: oversubscribed, the awaited thread runs */
#define AF_DIRECT 64                     /* adds a thread makes directly on Main after a wait that had to yield */

_Static_assert((AF_LOG & (AF_LOG - 1)) == 0, "record index arithmetic assumes a power of two");

/* Test hooks (tests/counter/aggfunnel_test.c, tests/queue/
 * rings_af_cases.h): while widen is set, a delegate yields before it reads
 * the end of its batch, so batches form even on 2 processing units, and
 * members count themselves. Not in the public header; hidden from the
 * shared library. */
extern _Atomic(bool) syncq_aggfunnel_test_widen__;
_Atomic(bool) syncq_aggfunnel_test_widen__;
extern _Atomic(uint64_t) syncq_aggfunnel_test_members__;
_Atomic(uint64_t) syncq_aggfunnel_test_members__;

static _Atomic(uint32_t) af_threads; /* thread indices handed out so far */
/* initial-exec: a TLS-relative load per add, no __tls_get_addr call in the
 * shared library (as LPRQ's mark and the stats' TLS) */
static _Thread_local uint32_t af_self __attribute__((tls_model("initial-exec")));   /* 1 + index; 0 before */
static _Thread_local uint32_t af_direct __attribute__((tls_model("initial-exec"))); /* adds left for Main */

/* The thread's aggregator: a fixed thread-local index, never the core
 * count, so a test plans the same batching on any machine. */
static inline unsigned af_pick(unsigned naggs) {
  uint32_t s = af_self;
  if (s == 0) {
    /* relaxed: only uniqueness matters */
    s = 1 + atomic_fetch_add_explicit(&af_threads, 1, memory_order_relaxed);
    af_self = s;
  }
  return (s - 1) % naggs;
}

/* A wait had to yield: go to Main directly for a while (Deviations (3)),
 * except under the test hook, whose runs want every add in a batch. */
static void af_stalled(void) {
  if (!atomic_load_explicit(&syncq_aggfunnel_test_widen__, memory_order_relaxed)) /* relaxed: a test's switch */
    af_direct = AF_DIRECT;
}

void syncq_aggfunnel_aggs_init_(syncq_aggfunnel_agg *aggs, unsigned naggs) {
  for (unsigned i = 0; i < naggs; i++) {
    syncq_aggfunnel_agg *a = &aggs[i];
    atomic_init(&a->count, 0);
    atomic_init(&a->sent, 0);
    atomic_init(&a->last, AF_LOG - 1); /* the first batch takes record 0 */
    for (unsigned j = 0; j < AF_LOG; j++) {
      atomic_init(&a->log[j].seq, 0);
      atomic_init(&a->log[j].from, 0);
      atomic_init(&a->log[j].to, 0); /* an empty batch, fully acknowledged */
      atomic_init(&a->log[j].base, 0);
      atomic_init(&a->log[j].acked, 0);
    }
  }
}

/* The delegate of the batch that starts at aggregator value x: apply the
 * batch to Main, publish its record, and send on. */
static uint64_t af_deliver(syncq_aggfunnel_agg *a, _Atomic(uint64_t) *main, uint64_t x, uint64_t d) {
  /* relaxed: only delegates write last, and the previous one released
   * sent after writing it (this thread acquired sent == x) */
  uint32_t j = (atomic_load_explicit(&a->last, memory_order_relaxed) + 1) & (AF_LOG - 1);
  syncq_aggfunnel_batch *b = &a->log[j];
  /* relaxed: from and to are written by earlier delegates only, ordered
   * before this one by the same chain of sent */
  uint64_t span =
    atomic_load_explicit(&b->to, memory_order_relaxed) - atomic_load_explicit(&b->from, memory_order_relaxed);
  uint32_t pauses = 0;
  /* acquire: pairs with each member's release add to acked, made after it
   * read the record: none of them reads it once we rewrite it */
  while (atomic_load_explicit(&b->acked, memory_order_acquire) != span) syncq_wait_spin_yield(&pauses, AF_YIELD_EVERY);
  if (pauses >= AF_YIELD_EVERY) af_stalled(); /* a reader was stopped: see Deviations (3) */
  /* relaxed: a test's switch (widen: let more adds join the batch) */
  if (atomic_load_explicit(&syncq_aggfunnel_test_widen__, memory_order_relaxed)) syncq_wait_yield();
  uint64_t to = atomic_load(&a->count); /* the batch: every add in [x, to) */
  uint64_t base = atomic_fetch_add(main, to - x);
  uint64_t seq = atomic_load_explicit(&b->seq, memory_order_relaxed); /* relaxed: only delegates write it */
  atomic_store_explicit(&b->seq, seq + 1, memory_order_relaxed);      /* relaxed: ordered by the release stores below */
  /* release (each): a reader whose acquire load sees one of these values
   * also sees the odd seq, and rejects what it read; pairs with the
   * readers' acquire loads of the fields (no fences: TSan models these) */
  atomic_store_explicit(&b->from, x, memory_order_release);
  atomic_store_explicit(&b->to, to, memory_order_release);
  atomic_store_explicit(&b->base, base, memory_order_release);
  /* relaxed: no member reads acked; published by seq's release store */
  atomic_store_explicit(&b->acked, d, memory_order_relaxed); /* the delegate's share needs no reading */
  /* release: pairs with the readers' acquire load of seq */
  atomic_store_explicit(&b->seq, seq + 2, memory_order_release);
  atomic_store_explicit(&a->last, j, memory_order_relaxed); /* relaxed: published by sent's release store */
  /* release: pairs with the waiters' acquire loads of sent: the record and
   * last are visible to every thread that sees the batch sent */
  atomic_store_explicit(&a->sent, to, memory_order_release);
  return base;
}

/* A member whose add x is in a batch already sent: find the batch's
 * record (it stays until we acknowledge it), take our result, acknowledge. */
static uint64_t af_collect(syncq_aggfunnel_agg *a, uint64_t x, uint64_t d) {
  /* relaxed: a starting point only (most often our batch is the newest) */
  uint32_t j = atomic_load_explicit(&a->last, memory_order_relaxed);
  for (uint32_t k = 0;; k++) {
    syncq_aggfunnel_batch *b = &a->log[(j - k) & (AF_LOG - 1)];
    /* acquire: pairs with the delegate's release store of an even seq */
    uint64_t s1 = atomic_load_explicit(&b->seq, memory_order_acquire);
    if (s1 & 1) continue; /* being rewritten: not ours */
    /* acquire (each): pairs with the delegate's release stores of the
     * fields, made after its odd seq, and keeps the seq reload below after
     * them: a field from a rewrite in progress shows as a changed seq */
    uint64_t from = atomic_load_explicit(&b->from, memory_order_acquire);
    uint64_t to = atomic_load_explicit(&b->to, memory_order_acquire);
    uint64_t base = atomic_load_explicit(&b->base, memory_order_acquire);
    /* relaxed: ordered after the acquire loads above */
    if (atomic_load_explicit(&b->seq, memory_order_relaxed) != s1) continue;
    if (x - from >= to - from) continue; /* another batch (modulo 2^64) */
    /* release: pairs with the acquire load of acked by the delegate that
     * reuses the record: our reads above come before its rewrite */
    atomic_fetch_add_explicit(&b->acked, d, memory_order_release);
    /* relaxed: a test's switch and tally, read after the threads joined */
    if (atomic_load_explicit(&syncq_aggfunnel_test_widen__, memory_order_relaxed))
      atomic_fetch_add_explicit(&syncq_aggfunnel_test_members__, 1, memory_order_relaxed);
    return base + (x - from);
  }
}

uint64_t syncq_aggfunnel_fetch_add_(syncq_aggfunnel_agg *aggs, unsigned naggs, _Atomic(uint64_t) *main,
                                    uint64_t delta) {
  if (delta - 1 >= AF_DELTA_MAX) return atomic_fetch_add(main, delta); /* 0 wraps to a large value */
  if (af_direct != 0) {                                                /* after a stall: Deviations (3) */
    af_direct--;
    return atomic_fetch_add(main, delta);
  }
  syncq_aggfunnel_agg *a = &aggs[af_pick(naggs)];
  uint64_t x = atomic_fetch_add(&a->count, delta);
  uint32_t pauses = 0;
  uint64_t s;
  /* acquire: pairs with the delegate's release store of sent */
  while ((int64_t)(x - (s = atomic_load_explicit(&a->sent, memory_order_acquire))) > 0)
    syncq_wait_spin_yield(&pauses, AF_YIELD_EVERY);
  if (pauses >= AF_YIELD_EVERY) af_stalled(); /* the delegate was stopped: Deviations (3) */
  return s == x ? af_deliver(a, main, x, delta) : af_collect(a, x, delta);
}

int syncq_counter_aggfunnel_init_aggs(syncq_counter_aggfunnel *c, int64_t initial, unsigned naggs) {
  if (c == NULL || ((uintptr_t)c % _Alignof(syncq_counter_aggfunnel)) != 0 || naggs == 0 ||
      naggs > SYNCQ_COUNTER_AGGFUNNEL_AGGS_MAX)
    return SYNCQ_EINVAL;
  atomic_init(&c->main, (uint64_t)initial);
  c->naggs = naggs;
  syncq_aggfunnel_aggs_init_(c->agg, naggs);
  return SYNCQ_OK;
}

int syncq_counter_aggfunnel_init(syncq_counter_aggfunnel *c, int64_t initial) {
  return syncq_counter_aggfunnel_init_aggs(c, initial, SYNCQ_COUNTER_AGGFUNNEL_AGGS_DEFAULT);
}

int syncq_counter_aggfunnel_destroy(syncq_counter_aggfunnel *c) { return c == NULL ? SYNCQ_EINVAL : SYNCQ_OK; }

int syncq_counter_aggfunnel_fetch_add(syncq_counter_aggfunnel *c, int64_t delta, int64_t *old) {
  /* naggs outside [1, AGGS_MAX]: storage never initialised (zeroed: a
   * division by zero in af_pick) or overwritten (an aggregator past agg[]) */
  if (c == NULL || c->naggs - 1u >= SYNCQ_COUNTER_AGGFUNNEL_AGGS_MAX) return SYNCQ_EINVAL;
  uint64_t prev = syncq_aggfunnel_fetch_add_(c->agg, c->naggs, &c->main, (uint64_t)delta);
  if (old != NULL) *old = (int64_t)prev;
  return SYNCQ_OK;
}

int syncq_counter_aggfunnel_load(syncq_counter_aggfunnel *c, int64_t *value) {
  if (c == NULL || value == NULL) return SYNCQ_EINVAL;
  *value = (int64_t)atomic_load(&c->main);
  return SYNCQ_OK;
}

SYNCQ_COUNTER_REGISTER(aggfunnel, "aggfunnel", "aggregating funnel: batched fetch-and-add through 4 aggregators",
                       "Roh, Wei, Ruppert, Fatourou, Jayanti, Shun 2025 (PPoPP; arXiv 2411.14420)", BLOCKING,
                       SYNCQ_PROP_LINEARIZABLE);
