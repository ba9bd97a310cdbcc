/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lprq.c — LPRQ: LCRQ's linked rings with PRQ rings, single-width CAS only.
 *
 * Contract
 *   Source:      Raed Romanov and Nikita Koval, "The state-of-the-art LCRQ
 *                concurrent queue algorithm does NOT require CAS2",
 *                PPoPP 2023: the PRQ ring (the paper's PRQ enqueue and
 *                dequeue pseudo-code) inside LCRQ's outer list (Morrison &
 *                Afek, PPoPP'13, Figure 6; src/queue/linked_rings.h, shared
 *                with "lcrq"). (Not one of the five papers, nor available
 *                here: written from the paper's idea as recalled, and
 *                argued below; see Cells and Deviations.)
 *   Progress:    lock-free: as LCRQ (the starvation bound: the failed ticket
 *                after LR_PATIENCE = 16 failed ones closes the ring); a dequeuer that finds
 *                an enqueuer's mark voids it after a bounded wait, so
 *                nothing waits long for a preempted thread.
 *   Atomics:     uncontended enqueue: 1 FAA + 3 CAS (mark, claim,
 *                publish); dequeue: 2 loads (head and its line's tail
 *                hint; tail too when the hint is passed) + 1 FAA + 3 loads
 *                + 1 release store. Hazard pointers: no locked instruction
 *                while the thread stays on one ring (as "lcrq"). Measured
 *                (one thread, enqueue+dequeue pair, CPU time, 2-core AMD
 *                EPYC VM): 78 ns before the kept hazard record, 34 ns
 *                after, 33 ns with the tail hint and the cell map: within
 *                1.15x of "lcrq" (29 ns), the difference being the two
 *                extra CAS of the enqueue.
 *   Memory:      as "lcrq": the header in the caller's storage, rings of R
 *                16-byte cells malloc'ed, emptied rings freed through
 *                hazard pointers (src/reclaim/hazard.c), a thread's slots
 *                keeping at most the 2 rings it used last.
 *   Signal-safe: no (malloc, hazard records). Process-shared: no (pointers).
 *   Limits:      unbounded; items non-NULL with bit 63 clear (values with
 *                bit 63 set are thread marks; no user-space pointer on
 *                x86-64 or AArch64 Linux has it; SYNCQ_EINVAL otherwise);
 *                ring size a power of two in [2, 2^24] (sizing hint:
 *                capacity rounded up, 0 -> 4096); 2^63 thread marks in the
 *                life of the process.
 *   Linearizable: yes (the linearizability runs check it).
 *   Cells:       two words, each CASed alone. se: safe (bit 63) | epoch
 *                (the cycle t / R + 1 of the last ticket t that claimed the
 *                cell or that a dequeuer voided it for); val: 0 (empty,
 *                "bottom"), a thread's mark (bit 63 | thread number: a
 *                bottom that names an enqueuer at work), or an item.
 *                Enqueue with ticket t of cycle c, where val is a bottom,
 *                the epoch is < c and the cell is safe or head <= t
 *                (LCRQ's test, in cycles):
 *                  1. CAS val: the bottom read -> my mark;
 *                  2. CAS se: the (safe, epoch) read -> (1, c): the claim;
 *                  3. CAS val: my mark -> item. Fails only if a dequeuer
 *                     (or another enqueuer) replaced the mark: the claim is
 *                     void and the enqueuer takes a new ticket.
 *                A claim always raises the epoch and only a claim sets the
 *                safe bit, so se never takes the same value twice (no ABA
 *                on se). While val holds my mark after step 2, nobody
 *                changes se (every se CAS but the unsafe mark was made
 *                against a value read before my claim, or needs a bottom
 *                it replaced first; the unsafe mark needs an item), so
 *                step 3 succeeding is the atomic (safe, epoch, item) write
 *                LCRQ does with CAS2: the one claim of the cell.
 *                Dequeue with ticket h of cycle c reads se, val, and se
 *                again: an item between two reads of epoch c is cycle c's
 *                item (epochs only grow), which only ticket h takes, by
 *                storing 0; an item under an older epoch marks the cell
 *                unsafe (CAS on se); a mark under an epoch <= c is voided
 *                (CAS val to 0); an empty cell under an older epoch is
 *                raised to epoch c (CAS on se) so that ticket h's enqueuer
 *                fails.
 *   Deviations:  (1) dequeue's emptiness test before its fetch-and-add
 *                (reading tail only past the tail hint), (2) the
 *                starvation bound, (3) the tail help before head moves,
 *                (4) the bounded spin for ticket h's enqueuer before
 *                voiding its cell (here: until an item or a later epoch
 *                shows; none past LR_WAIT_LAG tickets behind tail, nor
 *                at or past the ring's closed_at or at a ticket given up,
 *                which no claim reaches: only ticket t's enqueuer claims
 *                for t's cycle): as in src/queue/lcrq.c; (5) the mark is written
 *                by CAS from whatever bottom was read, so an enqueuer may
 *                void another's unfinished claim (that enqueuer then
 *                retries).
 *   Cell map:    as "lcrq": 4 cells to a line, consecutive tickets on
 *                consecutive lines (lr_slot in src/queue/linked_rings.h).
 *   Notes:       measured with "lcrq", alternating before/after on the
 *                2-core VM (docs/queues.md): dg25-latency pair 104 -> 34
 *                ns (lcrq 31); dg25-prodcons --quick 1P1C 15.2 -> 31.2
 *                Mops/s, 2P2C 16.9 -> 30.0, 4P4C 20.0 -> 33.4. At 1P1C it
 *                trails "lcrq" (46.1) by about 1.5x, more than its
 *                single-thread 1.13x. Measured since (one thread, CPU
 *                time, 512 enqueues then 512 dequeues, median of 9,
 *                interleaved): enqueue 25.1 ns against lcrq's 16.0,
 *                dequeue 12.3 against 17.1: the pair's cost is about
 *                LCRQ's, but at 1P1C the enqueuer's three CAS on the
 *                cell (the paper's mark, claim and publish; its authors'
 *                code makes the same three) make the producer the slower
 *                side: 1.57x LCRQ's producer, the throughput ratio seen
 *                (0.6-0.7x). Counted with the statistics at 1P1C
 *                (1,000,000 items, capacity 1024): 3.00 CAS an enqueue,
 *                no failed CAS, 0.001 failed tickets an item (ring
 *                changes), a dequeuer's first look finding the cell not
 *                yet written 0.1-7% of items, a thread mark on it
 *                0.000: no retry or overtaking to remove; what LPRQ pays
 *                beyond LCRQ at N = 1 is its algorithm's. Beyond the
 *                paper's fast path each operation calls syncq_hp_enter
 *                (about 10% of the single-thread time, shared with
 *                "lcrq"). Polling the cell at growing intervals while an
 *                enqueuer writes it was tried and stayed within noise;
 *                so did a prefetch for writing (prefetchw) of the cell
 *                before its first read in both enqueue and dequeue.
 *   Stats:       cas_attempts, cas_failures, retries (tickets that found no
 *                usable cell, and ring changes); deq_waits,
 *                deq_wait_pauses, deq_waits_out (Deviation (4)'s waits,
 *                the relaxes they spent, those that ran out);
 *                enq_cells_lost (enqueue tickets lost on a cell with no
 *                item: a dequeuer raised its epoch, marked it unsafe or
 *                voided the mark, or another enqueuer's mark took it);
 *                rings_closed (linked_rings.h).
 */
#include "syncq/queue/lprq.h"

#include <stdatomic.h>

#include "linked_rings.h"
#include "rings_af.h"
#include "syncq/queue.h"

#define LPRQ_MAGIC UINT64_C(0x4c50525155455545)
#define SAFE (UINT64_C(1) << 63)
#define IDX (SAFE - 1)
#define MARK (UINT64_C(1) << 63) /* in val: a thread's mark */

typedef struct cell {
  _Atomic(uint64_t) se;  /* safe | index */
  _Atomic(uint64_t) val; /* 0, a mark, or an item */
} cell;

_Static_assert(sizeof(cell) == LR_CELL_BYTES, "lr_slot's map assumes 16-byte cells");
static inline cell *cells_of(lr_ring *r) { return lr_cells(r); }
static inline bool is_bottom(uint64_t v) { return v == 0 || (v & MARK) != 0; }

/* This thread's mark: numbers are never reused, so a mark names one
 * thread for the life of the process (no ABA between two threads' marks). */
static _Atomic(uint64_t) next_mark = 1;
/* initial-exec: a TLS-relative load per enqueue, no __tls_get_addr call
 * in the shared library (as the stats' TLS) */
static _Thread_local uint64_t my_mark __attribute__((tls_model("initial-exec")));

static inline uint64_t mark_of_this_thread(void) {
  if (my_mark == 0)
    my_mark =
      MARK | atomic_fetch_add_explicit(&next_mark, 1, memory_order_relaxed); /* relaxed: only uniqueness matters */
  return my_mark;
}

static lr_ring *prq_make(uint64_t R, void *first, bool funnels) {
  lr_ring *r = lr_ring_alloc(R, sizeof(cell), funnels);
  if (r == NULL) return NULL;
  cell *c = cells_of(r);
  for (uint64_t i = 0; i < R; i++) {
    atomic_init(&c[i].se, SAFE | 0); /* epoch 0: free for cycle 1 (tickets 0..R-1) */
    atomic_init(&c[i].val, 0);
  }
  if (first != NULL) { /* a ring that starts with one item: ticket 0's */
    atomic_init(&c[lr_slot(r, 0)].se, SAFE | 1);
    atomic_init(&c[lr_slot(r, 0)].val, (uint64_t)(uintptr_t)first);
    atomic_init(&r->tail, 1);
  }
  return r;
}

/* The cycle of ticket t: 1 for the ring's first R tickets. */
static inline uint64_t cycle_of(const lr_ring *r, uint64_t t) { return (t >> r->order) + 1; }

/* PRQ enqueue: LR_OK, or LR_RING_CLOSED. */
static inline int prq_enqueue(lr_ring *r, void *item) {
  const uint64_t mark = mark_of_this_thread();
  cell *cells = cells_of(r);
  uint64_t lost = LR_OPEN; /* the ticket failed last */
  for (unsigned tries = 0;; tries++) {
    uint64_t t = lr_tail_ticket(r);
    SYNCQ_RACE_POINT("queue.lprq.enqueue.ticket"); /* a ticket held, its cell not yet written */
    if (t & LR_CLOSED) {
      if (lost != LR_OPEN) lr_give_up(r, lost); /* closed since: the ticket failed last has no writer */
      return LR_RING_CLOSED;
    }
    cell *c = &cells[lr_slot(r, t)];
    uint64_t cyc = cycle_of(r, t);
    uint64_t se = atomic_load(&c->se);
    uint64_t v = atomic_load(&c->val);
    if (is_bottom(v) && (se & IDX) < cyc && ((se & SAFE) || atomic_load(&r->head) <= t)) {
      SYNCQ_STAT_INC(cas_attempts);
      if (atomic_compare_exchange_strong(&c->val, &v, mark)) { /* 1: mark */
        SYNCQ_RACE_POINT("queue.lprq.enqueue.marked");         /* the cell holds our mark, not yet claimed */
        SYNCQ_STAT_INC(cas_attempts);
        if (atomic_compare_exchange_strong(&c->se, &se, SAFE | cyc)) { /* 2: claim */
          uint64_t m = mark;
          SYNCQ_STAT_INC(cas_attempts);
          if (atomic_compare_exchange_strong(&c->val, &m, (uint64_t)(uintptr_t)item)) return LR_OK; /* 3 */
        }
      }
      SYNCQ_STAT_INC(cas_failures);
    }
    /* v: the value read, or the one the mark's CAS found; a failed claim
     * or publish leaves the bottom read (a dequeuer raised the epoch or
     * voided the mark, or another enqueuer's mark replaced ours) */
    if (is_bottom(v)) SYNCQ_STAT_INC(enq_cells_lost);
    SYNCQ_STAT_INC(retries);            /* ticket t lost */
    if (lr_should_close(r, t, tries)) { /* full, or starving: the tantrum */
      lr_close(r, t);
      return LR_RING_CLOSED;
    }
    lost = t;
  }
}

/* PRQ dequeue: true with *item, or false when the ring is empty. */
static inline bool prq_dequeue(lr_ring *r, void **item) {
  if (lr_ring_seems_empty(r)) return false; /* Deviation (1) */
  cell *cells = cells_of(r);
  for (;;) {
    uint64_t h = lr_head_ticket(r);
    SYNCQ_RACE_POINT("queue.lprq.dequeue.ticket"); /* a ticket held, its cell not yet read */
    cell *c = &cells[lr_slot(r, h)];
    uint64_t cyc = cycle_of(r, h);
    bool waited = false;
    for (;;) {
      uint64_t se = atomic_load(&c->se);
      uint64_t v = atomic_load(&c->val);
      uint64_t epoch = se & IDX;
      if (epoch > cyc) break; /* a later cycle owns the cell */
      if (!is_bottom(v)) {
        if (epoch == cyc) {
          /* Epoch c before and after reading v: v is cycle c's item
           * (epochs only grow), and only ticket h takes it. */
          if ((atomic_load(&c->se) & IDX) != cyc) continue;
          /* release: pairs with the acquire side of the enqueuer CAS that
           * next marks the cell (step 1 reads this 0): our read of v comes
           * before the cell's reuse. */
          atomic_store_explicit(&c->val, 0, memory_order_release);
          *item = (void *)(uintptr_t)v;
          return true;
        }
        SYNCQ_STAT_INC(cas_attempts); /* an older cycle's item: mark the cell unsafe */
        if (atomic_compare_exchange_strong(&c->se, &se, se & ~SAFE)) break;
        SYNCQ_STAT_INC(cas_failures);
        continue;
      }
      if (!waited) { /* Deviation (4): give ticket h's enqueuer a moment to publish */
        waited = true;
        if (lr_enqueuer_pending(r, h)) {
          int i = 0;
          bool seen = false;
          while (i < LR_SPIN) {
            syncq_pr_relax();
            i++;
            SYNCQ_RACE_POINT("queue.lprq.dequeue.wait"); /* tests: the enqueuer writes before this look */
            /* relaxed: only a hint; the loop re-reads the cell */
            if (!is_bottom(atomic_load_explicit(&c->val, memory_order_relaxed)) ||
                (atomic_load_explicit(&c->se, memory_order_relaxed) & IDX) > cyc) {
              seen = true;
              break;
            }
          }
          lr_count_wait(i, !seen);
        }
        continue;
      }
      if (v != 0) { /* an enqueuer's mark under epoch <= c: void its claim */
        SYNCQ_STAT_INC(cas_attempts);
        if (!atomic_compare_exchange_strong(&c->val, &v, 0)) SYNCQ_STAT_INC(cas_failures);
        continue;
      }
      if (epoch == cyc) break;      /* empty, and ticket h's claim (if any) is void */
      SYNCQ_STAT_INC(cas_attempts); /* empty: raise it to epoch c, so ticket h's enqueuer fails */
      if (atomic_compare_exchange_strong(&c->se, &se, (se & SAFE) | cyc)) break;
      SYNCQ_STAT_INC(cas_failures);
    }
    uint64_t t = atomic_load(&r->tail) & ~LR_CLOSED;
    if (t <= h + 1) {
      lr_fix_state(r);
      return false;
    }
    SYNCQ_STAT_INC(retries); /* ticket h found nothing, and items may follow */
  }
}

static inline lr_queue view(syncq_queue_lprq *q) {
  return (lr_queue){&q->head, &q->tail, q->hp, q->ring_size, &q->rings_linked, q->funnels != 0};
}

/* init_ring with the ticket source: fetch-and-add, or funnels (the
 * "-af" variant, src/queue/lprq_af.c). */
int syncq_queue_lprq_init_tickets_(syncq_queue_lprq *q, size_t ring_size, bool funnels) {
  if (q == NULL || ((uintptr_t)q % _Alignof(syncq_queue_lprq)) != 0 || !lr_ring_size_ok(ring_size)) return SYNCQ_EINVAL;
  int st = lr_init(prq_make(ring_size, NULL, funnels), &q->head, &q->tail, &q->hp, &q->rings_linked, &q->rings_freed);
  if (st != SYNCQ_OK) return st;
  q->ring_size = ring_size;
  q->funnels = funnels;
  q->magic = LPRQ_MAGIC;
  return SYNCQ_OK;
}

int syncq_queue_lprq_init_ring(syncq_queue_lprq *q, size_t ring_size) {
  return syncq_queue_lprq_init_tickets_(q, ring_size, false);
}

int syncq_queue_lprq_init(syncq_queue_lprq *q, size_t capacity) {
  return syncq_queue_lprq_init_ring(q, lr_ring_size_for(capacity));
}

int syncq_queue_lprq_destroy(syncq_queue_lprq *q) {
  if (q == NULL || q->magic != LPRQ_MAGIC) return SYNCQ_EINVAL;
  lr_queue v = view(q);
  int st = lr_destroy(&v);
  if (st != SYNCQ_OK) return st;
  q->magic = 0;
  return SYNCQ_OK;
}

int syncq_queue_lprq_enqueue(syncq_queue_lprq *q, void *item) {
  if (q == NULL || item == NULL || ((uint64_t)(uintptr_t)item & MARK) != 0) return SYNCQ_EINVAL;
  lr_queue v = view(q);
  return lr_enqueue(&v, item, prq_enqueue, prq_make);
}

int syncq_queue_lprq_dequeue(syncq_queue_lprq *q, void **item) {
  if (q == NULL || item == NULL) return SYNCQ_EINVAL;
  lr_queue v = view(q);
  return lr_dequeue(&v, item, prq_dequeue);
}

uint64_t syncq_queue_lprq_rings_linked(const syncq_queue_lprq *q) {
  return q == NULL ? 0 : atomic_load(&((syncq_queue_lprq *)q)->rings_linked);
}
uint64_t syncq_queue_lprq_rings_freed(const syncq_queue_lprq *q) {
  return q == NULL ? 0 : atomic_load(&((syncq_queue_lprq *)q)->rings_freed);
}

SYNCQ_QUEUE_REGISTER_FIXED(lprq, "lprq",
                           "LPRQ: LCRQ's linked rings with PRQ rings (single-width CAS, thread-marked bottoms)",
                           "Romanov & Koval 2023 (PPoPP); Morrison & Afek 2013, Figure 6", LOCK_FREE,
                           SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES);
