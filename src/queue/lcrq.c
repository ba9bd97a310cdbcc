/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lcrq.c — LCRQ: linked concurrent ring queue (fetch-and-add, double-width
 * CAS).
 *
 * Contract
 *   Source:      Adam Morrison and Yehuda Afek, "Fast concurrent queues for
 *                x86 processors", PPoPP 2013: Figure 5 (CRQ: the ring's
 *                enqueue, dequeue and fixState, the tantrum that closes a
 *                ring, the starvation bound) and Figure 6 (LCRQ: closed
 *                rings linked Michael & Scott style). 004 §VI-A counts it
 *                among the leaders at scale. (Not one of the five papers,
 *                nor available here: written from the paper's pseudo-code
 *                as recalled, figure numbers included; see Deviations.) The outer list is src/queue/linked_rings.h,
 *                shared with LPRQ.
 *   Progress:    lock-free. A ring operation may fail (enqueue: a dequeuer
 *                took its cell first; dequeue: its cell was empty) only
 *                because another operation moved on; an enqueuer that
 *                fails a ticket after LR_PATIENCE (16) failed ones (the
 *                17th in a row) closes the ring and links a new one, so it cannot starve in one ring; a dequeuer waits
 *                for a preempted enqueuer only LR_SPIN relaxes, once, and
 *                not at all once 64 later tickets were taken.
 *   Atomics:     uncontended enqueue: 1 FAA + 1 double-width CAS; dequeue:
 *                1 load of head + 1 of its line's tail hint (+ 1 of tail
 *                when the hint is passed: the emptiness test) + 1 FAA + 1
 *                double-width CAS. Hazard pointers add no locked
 *                instruction while the thread stays on one ring: enter
 *                finds the thread's kept record (a relaxed store), the
 *                ring read equals what the slot still holds (no protect),
 *                leave_keep is a release store; 1 seq_cst store (xchg)
 *                when the thread moves to another ring.
 *                Measured (CPU time of one thread, enqueue+dequeue pair,
 *                2-core AMD EPYC VM, docs/queues.md): 66 ns with a record
 *                taken, protected and released per operation (4 locked
 *                instructions: about half the pair), 31 ns with the kept
 *                record and kept slot, 29 ns with the tail hint and the
 *                cell map.
 *   Memory:      the queue header lives in the caller's storage; rings of
 *                R cells (16 bytes each, + 3 cache lines) are malloc'ed at
 *                init and when a ring closes; emptied rings are retired to
 *                hazard pointers (src/reclaim/hazard.c) and freed when no
 *                slot holds them; a thread's slots keep the last rings it
 *                used (at most 2 per thread) until its next operation moves
 *                on, it exits, or the queue is destroyed; destroy frees
 *                the rest.
 *   Signal-safe: no (malloc, hazard records). Process-shared: no (pointers).
 *   Limits:      unbounded; items non-NULL (NULL is the empty cell);
 *                ring size a power of two in [2, 2^24] (sizing hint:
 *                capacity rounded up; 0 -> 4096); needs double-width CAS
 *                (SYNCQ_ENOTSUP without it); tickets are 63-bit counters.
 *   Linearizable: yes (the paper's §4 proof; the linearizability runs
 *                check it).
 *   Cells:       lo word: safe (bit 63) | index (the ticket the cell serves
 *                next, or served last); hi word: the item, 0 = empty.
 *   Cells:       packed 4 to a 64-byte line, ticket t's cell at
 *                lr_slot(t): consecutive tickets on consecutive lines (the
 *                paper's §5 remedy for false sharing between neighbouring
 *                tickets; see src/queue/linked_rings.h).
 *   Deviations:  (1) dequeue first tests head >= tail and answers EMPTY
 *                without its fetch-and-add (the same test the paper makes
 *                after it; see lr_ring_seems_empty), so consumers polling
 *                an empty queue do not run head past tail and make every
 *                enqueue after them fail; it reads tail's line only when
 *                head has caught up with the last tail a dequeuer saw
 *                (kept on head's line), so a consumer that trails the
 *                producers does not pull the enqueuers' line at every
 *                item; (2) the starvation bound is a count of failed
 *                tickets (16) where the paper leaves starving() to the
 *                implementation; (3) a dequeuer swings tail off the ring it
 *                is about to remove from head (001's help for a lagging
 *                tail), which hazard pointers need and the paper's
 *                garbage-collected presentation does not; (4) a dequeuer
 *                that finds its cell empty while an enqueuer may hold its
 *                ticket (tail > h, by at most LR_WAIT_LAG (64) tickets;
 *                h below the ring's closed_at and not given up) spins up
 *                to LR_SPIN (128) relaxes, once per ticket, for that
 *                enqueuer before the empty transition (bounded: a
 *                preempted enqueuer costs no more). Past the lag, while
 *                the others took 64 tickets, ticket h's enqueuer did not
 *                make the load and CAS between its ticket and its write:
 *                it was preempted, and the dequeuer does not wait (the
 *                ping-pong's wait, tail = h + 1, stays). closed_at,
 *                recorded by the enqueuer whose tantrum set CLOSED
 *                (lr_close), is the tail it closed: no enqueue writes a
 *                cell at or past it, since every later ticket carries
 *                CLOSED and its enqueuer returns before any cell; below
 *                it, each enqueuer that gives a ticket up in the closed
 *                ring (the closer's own, one the closer passed, the last
 *                failed before a CLOSED ticket) sets its bit (mod 64) in
 *                the ring's gave_up (lr_give_up), in whatever order.
 *                The wait decides no outcome (the paper has none: the
 *                empty transition and the enqueuer's failed CAS are its
 *                interleavings), so every interleaving stays one of
 *                Figure 5's whether the dequeuer waits or not: the lag,
 *                closed_at and gave_up only drop waits; a lag misread, a
 *                bit another ticket 64k away set, costs a live enqueuer
 *                its ticket (it takes another), a closed_at or bit not
 *                yet written costs a wait, never an item.
 *   Notes:       where the time went, one thread (perf record -e
 *                cpu-clock): before, syncq_hp_enter, _leave and _protect
 *                took 60% of the samples; now the FAA and the double-width
 *                CAS of each operation dominate, the hazard record's
 *                lookup, held and leave_keep about 10%. Before/after,
 *                alternating in one session on the loaded 2-core VM
 *                (docs/queues.md): dg25-latency pair 126 -> 31 ns (nblfq
 *                14, scq 49); dg25-prodcons --quick 1P1C 15.4 -> 46.1
 *                Mops/s, 2P2C 19.2 -> 25.3, 4P4C 21.7 -> 32.7 (nblfq 193,
 *                57, 56 in the same runs). Left: at 1P1C a quarter of
 *                nblfq, whose operations make one CAS where these make a
 *                FAA and a double-width CAS. Packed cells (LR_REMAP 0)
 *                measured slower at 1P1C and somewhat faster with 4-8
 *                threads taking turns on 2 cores; the map stays, for many
 *                threads on many cores.
 *   Stats:       cas_attempts, cas_failures, retries (tickets that found no
 *                usable cell, and ring changes); deq_waits,
 *                deq_wait_pauses, deq_waits_out (Deviation (4)'s waits,
 *                the relaxes they spent, those that ran out);
 *                enq_cells_lost (enqueue tickets lost on a cell with no
 *                item: a dequeuer had advanced it or marked it unsafe, or
 *                changed it under the CAS); rings_closed (the tantrums:
 *                linked_rings.h).
 */
#include "syncq/queue/lcrq.h"

#include <stdatomic.h>

#include "linked_rings.h"
#include "rings_af.h"
#include "syncq/queue.h"

#define LCRQ_MAGIC UINT64_C(0x4c43525155455545)
#define SAFE (UINT64_C(1) << 63)
#define IDX (SAFE - 1)

/* Test hook (tests/queue/lcrq_test.c): pretend the CPU has no double-width
 * CAS. Not in the public header; hidden from the shared library. */
extern _Atomic(bool) syncq_queue_lcrq_test_no_dwcas__;
_Atomic(bool) syncq_queue_lcrq_test_no_dwcas__;

_Static_assert(sizeof(syncq_pr_dw_atomic) == LR_CELL_BYTES, "lr_slot's map assumes 16-byte cells");
static inline syncq_pr_dw_atomic *cells_of(lr_ring *r) { return lr_cells(r); }

static lr_ring *crq_make(uint64_t R, void *first, bool funnels) {
  lr_ring *r = lr_ring_alloc(R, sizeof(syncq_pr_dw_atomic), funnels);
  if (r == NULL) return NULL;
  syncq_pr_dw_atomic *c = cells_of(r);
  for (uint64_t s = 0; s < R; s++) {                       /* in address order: a close pays this (docs/queues.md) */
    atomic_init(&c[s].lo, SAFE | lr_ticket_of_slot(r, s)); /* the cell serves its first ticket first */
    atomic_init(&c[s].hi, 0);
  }
  if (first != NULL) { /* a ring that starts with one item (Figure 6): ticket 0's cell */
    atomic_init(&c[lr_slot(r, 0)].hi, (uint64_t)(uintptr_t)first);
    atomic_init(&r->tail, 1);
  }
  return r;
}

/* Figure 5, enqueue: LR_OK, or LR_RING_CLOSED. */
static inline int crq_enqueue(lr_ring *r, void *item) {
  syncq_pr_dw_atomic *cells = cells_of(r);
  uint64_t lost = LR_OPEN; /* the ticket failed last */
  for (unsigned tries = 0;; tries++) {
    uint64_t t = lr_tail_ticket(r);
    SYNCQ_RACE_POINT("queue.lcrq.enqueue.ticket"); /* a ticket held, its cell not yet written */
    if (t & LR_CLOSED) {
      if (lost != LR_OPEN) lr_give_up(r, lost); /* closed since: the ticket failed last has no writer */
      return LR_RING_CLOSED;
    }
    syncq_pr_dw_atomic *cell = &cells[lr_slot(r, t)];
    syncq_pr_dw v = syncq_pr_dw_load(cell); /* may be torn: the CAS validates it */
    uint64_t idx = v.lo & IDX;
    if (v.hi == 0 && idx <= t && ((v.lo & SAFE) || atomic_load(&r->head) <= t)) {
      SYNCQ_STAT_INC(cas_attempts);
      if (syncq_pr_dwcas(cell, &v, (syncq_pr_dw){SAFE | t, (uint64_t)(uintptr_t)item})) return LR_OK;
      SYNCQ_STAT_INC(cas_failures);
    }
    if (v.hi == 0) SYNCQ_STAT_INC(enq_cells_lost); /* no item in it: a dequeuer passed it (not a wrapped ring) */
    SYNCQ_STAT_INC(retries);                       /* ticket t lost */
    if (lr_should_close(r, t, tries)) {            /* full, or starving: the tantrum */
      lr_close(r, t);
      return LR_RING_CLOSED;
    }
    lost = t;
  }
}

/* Figure 5, dequeue: true with *item, or false when the ring is empty. */
static inline bool crq_dequeue(lr_ring *r, void **item) {
  if (lr_ring_seems_empty(r)) return false; /* Deviation (1) */
  const uint64_t R = r->size;
  syncq_pr_dw_atomic *cells = cells_of(r);
  for (;;) {
    uint64_t h = lr_head_ticket(r);
    SYNCQ_RACE_POINT("queue.lcrq.dequeue.ticket"); /* a ticket held, its cell not yet read */
    syncq_pr_dw_atomic *cell = &cells[lr_slot(r, h)];
    bool waited = false;
    for (;;) {
      syncq_pr_dw v = syncq_pr_dw_load(cell); /* may be torn: each CAS validates it */
      uint64_t idx = v.lo & IDX, safe = v.lo & SAFE;
      if (idx > h) break; /* a later round owns the cell */
      syncq_pr_dw next;
      bool took = false;
      if (v.hi != 0) {
        if (idx == h) { /* our item: take it, the cell serves ticket h + R next */
          next = (syncq_pr_dw){safe | (h + R), 0};
          took = true;
        } else { /* an older round's item still here: mark the cell unsafe */
          next = (syncq_pr_dw){idx, v.hi};
        }
      } else {         /* empty: advance it past h, so ticket h's enqueuer fails */
        if (!waited) { /* Deviation (4): give ticket h's enqueuer a moment */
          waited = true;
          if (lr_enqueuer_pending(r, h)) {
            int i = 0;
            for (; i < LR_SPIN && atomic_load_explicit(&cell->hi, memory_order_relaxed) == 0; i++)
              syncq_pr_relax();             /* relaxed: only a hint; the loop re-reads the cell */
            lr_count_wait(i, i >= LR_SPIN); /* the loop looks before each relax: no look after the last */
          }
          continue;
        }
        next = (syncq_pr_dw){safe | (h + R), 0};
      }
      SYNCQ_STAT_INC(cas_attempts);
      if (syncq_pr_dwcas(cell, &v, next)) {
        if (took) {
          *item = (void *)(uintptr_t)v.hi;
          return true;
        }
        break;
      }
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

static inline lr_queue view(syncq_queue_lcrq *q) {
  return (lr_queue){&q->head, &q->tail, q->hp, q->ring_size, &q->rings_linked, q->funnels != 0};
}

/* init_ring with the ticket source: fetch-and-add, or funnels (the
 * "-af" variant, src/queue/lcrq_af.c). */
int syncq_queue_lcrq_init_tickets_(syncq_queue_lcrq *q, size_t ring_size, bool funnels) {
  if (q == NULL || ((uintptr_t)q % _Alignof(syncq_queue_lcrq)) != 0 || !lr_ring_size_ok(ring_size)) return SYNCQ_EINVAL;
  if (!syncq_pr_dwcas_available() || atomic_load_explicit(&syncq_queue_lcrq_test_no_dwcas__, memory_order_relaxed))
    return SYNCQ_ENOTSUP; /* relaxed: a test sets the hook before it initialises */
  int st = lr_init(crq_make(ring_size, NULL, funnels), &q->head, &q->tail, &q->hp, &q->rings_linked, &q->rings_freed);
  if (st != SYNCQ_OK) return st;
  q->ring_size = ring_size;
  q->funnels = funnels;
  q->magic = LCRQ_MAGIC;
  return SYNCQ_OK;
}

int syncq_queue_lcrq_init_ring(syncq_queue_lcrq *q, size_t ring_size) {
  return syncq_queue_lcrq_init_tickets_(q, ring_size, false);
}

int syncq_queue_lcrq_init(syncq_queue_lcrq *q, size_t capacity) {
  return syncq_queue_lcrq_init_ring(q, lr_ring_size_for(capacity));
}

int syncq_queue_lcrq_destroy(syncq_queue_lcrq *q) {
  if (q == NULL || q->magic != LCRQ_MAGIC) return SYNCQ_EINVAL;
  lr_queue v = view(q);
  int st = lr_destroy(&v);
  if (st != SYNCQ_OK) return st;
  q->magic = 0;
  return SYNCQ_OK;
}

int syncq_queue_lcrq_enqueue(syncq_queue_lcrq *q, void *item) {
  if (q == NULL || item == NULL) return SYNCQ_EINVAL;
  lr_queue v = view(q);
  return lr_enqueue(&v, item, crq_enqueue, crq_make);
}

int syncq_queue_lcrq_dequeue(syncq_queue_lcrq *q, void **item) {
  if (q == NULL || item == NULL) return SYNCQ_EINVAL;
  lr_queue v = view(q);
  return lr_dequeue(&v, item, crq_dequeue);
}

uint64_t syncq_queue_lcrq_rings_linked(const syncq_queue_lcrq *q) {
  return q == NULL ? 0 : atomic_load(&((syncq_queue_lcrq *)q)->rings_linked);
}
uint64_t syncq_queue_lcrq_rings_freed(const syncq_queue_lcrq *q) {
  return q == NULL ? 0 : atomic_load(&((syncq_queue_lcrq *)q)->rings_freed);
}

SYNCQ_QUEUE_REGISTER_FIXED(lcrq, "lcrq",
                           "LCRQ: linked rings of cells taken by fetch-and-add, updated by double-width CAS",
                           "Morrison & Afek 2013 (PPoPP), Figures 5-6; cited by 004 §VI-A", LOCK_FREE,
                           SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES);
