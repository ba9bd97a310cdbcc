/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * linked_rings.h — the outer queue that LCRQ and LPRQ share: a Michael &
 * Scott list of rings (Morrison & Afek, PPoPP'13, Figure 6: "LCRQ"),
 * with hazard pointers for the rings that dequeuers leave behind.
 *
 * Not an algorithm on its own: src/queue/lcrq.c (CRQ rings, double-width
 * CAS) and src/queue/lprq.c (PRQ rings, single-width CAS) supply the ring
 * operations and carry the contract blocks. Everything here is static
 * inline, so each file gets its own copy with its ring functions inlined.
 *
 * A ring: head and tail counters (tail's bit 63 is CLOSED), next, size R,
 * then R cells whose layout is the ring's business. A ring is closed by
 * an enqueuer that found it full (tail - head >= R) or that failed a
 * ticket after LR_PATIENCE failed ones in a row (the starvation bound); a closed ring takes
 * no more items, the enqueuer appends a fresh ring holding its item in
 * cell 0, and dequeuers move head past a closed ring once it is empty.
 *
 * Reclamation: two hazard slots, LR_HP_TAIL for the ring an enqueuer
 * uses, LR_HP_HEAD for the ring a dequeuer uses. next is only compared
 * and CASed, never dereferenced through, so it needs no slot. A dequeuer
 * swings tail past the ring before it swings head (as 001's dequeue helps
 * a lagging tail), so a ring retired from head is reachable from neither
 * end. An operation leaves its slot published (syncq_hp_leave_keep), so
 * the next one that finds the same ring at its end (syncq_hp_held) skips
 * the protect's store and fence: a thread pays for a hazard only when it
 * moves to another ring, once per R items, as the paper's per-ring
 * accounting has it. The price: a thread that stops using the queue keeps
 * up to two rings from being freed until it exits or the queue is
 * destroyed.
  */
#ifndef SYNCQ_QUEUE_LINKED_RINGS_H
#define SYNCQ_QUEUE_LINKED_RINGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "../counter/aggfunnel_internal.h"
#include "../stats_internal.h"
#include "syncq/platform.h"
#include "syncq/pr.h"
#include "syncq/reclaim.h"
#include "syncq/status.h"
#include "../race_internal.h" /* SYNCQ_RACE_POINT: nothing outside race tests */

#define LR_CLOSED (UINT64_C(1) << 63) /* tail's CLOSED bit */
#define LR_OPEN UINT64_MAX            /* closed_at of a ring not closed (or whose closer has not recorded it yet) */
#define LR_PATIENCE 16                /* failed tickets before the one at which an enqueuer closes the ring */
#define LR_RING_MIN 2
#define LR_RING_MAX (UINT64_C(1) << 24)
#define LR_RING_DEFAULT 4096 /* sizing hint 0: the smallest ring of the paper's 2^12..2^17 */

enum { LR_OK = 0, LR_RING_CLOSED = 1 };
enum { LR_HP_TAIL = 0, LR_HP_HEAD = 1, LR_HP_SLOTS = 2 };

typedef struct lr_ring {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) head;
  /* A value tail (CLOSED masked) had once, kept on head's line for the
   * dequeuers' emptiness test (lr_ring_seems_empty). */
  _Atomic(uint64_t) tail_seen;
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) tail; /* bit 63: CLOSED */
  /* LR_OPEN, or the first ticket no enqueue will ever write, set once by
   * the enqueuer that closed the ring (lr_close); read by dequeuers only
   * after they saw CLOSED, so it shares tail's line. */
  _Atomic(uint64_t) closed_at;
  /* The tickets given up in the closed ring (lr_give_up): bit t mod 64
   * for ticket t. Written at give-ups only, read by dequeuers only after
   * they saw CLOSED. */
  _Atomic(uint64_t) gave_up;
  SYNCQ_CACHELINE_ALIGNED _Atomic(struct lr_ring *) next;
  uint64_t size;              /* R, a power of two; read-only */
  uint32_t order;             /* log2(R); read-only */
  uint32_t line_order;        /* log2 of the cache lines the cells fill; read-only */
  struct lr_funnels *funnels; /* NULL: tickets by fetch-and-add (lr_tail_ticket); read-only */
  /* R cells follow, from the next cache line */
} lr_ring;

/* Cells are 16 bytes in both rings, LR_CELLS_PER_LINE to a cache line. */
#define LR_CELL_BYTES 16
#define LR_CELLS_PER_LINE (SYNCQ_CACHELINE / LR_CELL_BYTES)
#ifndef LR_REMAP
#define LR_REMAP 1
#endif

/* The cell of ticket t. With LR_REMAP (Morrison & Afek §5) consecutive
 * tickets go to consecutive cache lines, the line's slot advancing once
 * per pass over the lines: an enqueuer at ticket t and a dequeuer at
 * t - 1 never write the same line, where packed cells would make the
 * two threads of a near-empty queue fight over every line. A bijection on
 * [0, R): the line is i mod L, the slot i / L (L = R / cells per line). */
static inline uint64_t lr_slot(const lr_ring *r, uint64_t t) {
  uint64_t i = t & (r->size - 1);
#if LR_REMAP
  uint64_t lines = UINT64_C(1) << r->line_order;
  return ((i & (lines - 1)) * LR_CELLS_PER_LINE) | (i >> r->line_order);
#else
  return i;
#endif
}

/* lr_slot's inverse: the first ticket (in [0, R)) whose cell is slot s,
 * for a make that writes the cells in address order. */
static inline uint64_t lr_ticket_of_slot(const lr_ring *r, uint64_t s) {
#if LR_REMAP
  return ((s % LR_CELLS_PER_LINE) << r->line_order) | (s / LR_CELLS_PER_LINE);
#else
  (void)r;
  return s;
#endif
}

/* The ring at *end, protected in slot: free when the slot already holds
 * it (held since an earlier, validated protect), else protect. */
static inline lr_ring *lr_protect(syncq_hp_record *rec, unsigned slot, _Atomic(void *) *end) {
  lr_ring *r = atomic_load(end);
  if (r == syncq_hp_held(rec, slot)) return r;
  return syncq_hp_protect(rec, slot, end);
}

/* The cells, after the header (a multiple of the cache line). */
static inline void *lr_cells(lr_ring *r) { return (void *)(r + 1); }

/* The ticket sources of the "-af" variants ("lcrq-af", "lprq-af"): an
 * aggregating funnel (src/counter/aggfunnel.c) in front of head and one
 * in front of tail, after the cells. The funnels' Main is the ring's own
 * head or tail word, so everything else (the CLOSED bit's fetch-and-or,
 * fixState's CAS, the emptiness test's loads) acts on it as before, and
 * a ticket is Main's value before the batch plus the offset in it: a
 * closed tail's bit 63 comes back in every ticket of the batch. */
#define LR_FUNNEL_AGGS 4 /* per funnel: the paper's 2*floor(sqrt(p)) for p = 4 to 8 threads on each end */
typedef struct lr_funnels {
  syncq_aggfunnel_agg head[LR_FUNNEL_AGGS];
  syncq_aggfunnel_agg tail[LR_FUNNEL_AGGS];
} lr_funnels;

static inline uint64_t lr_tail_ticket(lr_ring *r) {
  if (r->funnels == NULL) return atomic_fetch_add(&r->tail, 1);
  return syncq_aggfunnel_fetch_add_(r->funnels->tail, LR_FUNNEL_AGGS, &r->tail, 1);
}
static inline uint64_t lr_head_ticket(lr_ring *r) {
  if (r->funnels == NULL) return atomic_fetch_add(&r->head, 1);
  return syncq_aggfunnel_fetch_add_(r->funnels->head, LR_FUNNEL_AGGS, &r->head, 1);
}

/* An empty ring of R cells of cell_bytes each, head = tail = 0, with
 * funnels in front of head and tail when asked; the caller initialises
 * the cells. NULL when memory is short. */
static inline lr_ring *lr_ring_alloc(uint64_t R, size_t cell_bytes, bool funnels) {
  size_t cells = ((size_t)R * cell_bytes + SYNCQ_CACHELINE - 1) & ~(size_t)(SYNCQ_CACHELINE - 1);
  lr_ring *r = syncq_alloc_aligned(sizeof(lr_ring) + cells + (funnels ? sizeof(lr_funnels) : 0), SYNCQ_CACHELINE);
  if (r == NULL) return NULL;
  r->funnels = NULL;
  if (funnels) {
    r->funnels = (lr_funnels *)((char *)lr_cells(r) + cells);
    syncq_aggfunnel_aggs_init_(r->funnels->head, LR_FUNNEL_AGGS);
    syncq_aggfunnel_aggs_init_(r->funnels->tail, LR_FUNNEL_AGGS);
  }
  atomic_init(&r->head, 0);
  atomic_init(&r->tail, 0);
  atomic_init(&r->next, NULL);
  atomic_init(&r->tail_seen, 0);
  atomic_init(&r->closed_at, LR_OPEN);
  atomic_init(&r->gave_up, 0);
  r->size = R;
  r->order = (uint32_t)__builtin_ctzll(R);
  /* R < LR_CELLS_PER_LINE: one line, the identity map */
  r->line_order = R >= LR_CELLS_PER_LINE ? r->order - (uint32_t)__builtin_ctz(LR_CELLS_PER_LINE) : 0;
  return r;
}

/* fixState (Morrison & Afek Figure 5): after dequeuers ran head past tail,
 * pull tail up to head so that enqueuers do not take tickets that
 * dequeuers have already passed. A closed tail (bit 63) is never below
 * head, so a closed ring is left alone. */
static inline void lr_fix_state(lr_ring *r) {
  for (;;) {
    uint64_t t = atomic_load(&r->tail);
    uint64_t h = atomic_load(&r->head);
    if (atomic_load(&r->tail) != t) continue;
    if (h <= t) return;
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(&r->tail, &t, h)) return;
    SYNCQ_STAT_INC(cas_failures);
  }
}

/* The ring is certainly empty now: head has reached tail (CLOSED masked).
 * Read head first: at the moment tail is read, every ticket an enqueuer
 * holds is below it, hence at or below head, so each is matched by a
 * dequeuer that already holds the same ticket (it takes that item, or
 * makes that enqueuer fail). The same test the ring's dequeue makes after
 * its fetch-and-add, made before it, so that polling an empty queue does
 * not run head past tail.
 * tail only grows (fetch-and-add, fixState raising it to head, the CLOSED
 * bit), so a head below a value tail once had is below tail now: then the
 * answer is "not empty" without reading tail's line, which the enqueuers
 * write at every operation. Only a dequeuer that catches up with
 * tail_seen reads tail, and leaves what it read for the others. */
static inline bool lr_ring_seems_empty(lr_ring *r) {
  uint64_t h = atomic_load(&r->head);
  /* relaxed: a hint; whatever value is read was tail's at some time, and
   * the answer it gives ("go on to the fetch-and-add") is always safe */
  if (h < atomic_load_explicit(&r->tail_seen, memory_order_relaxed)) return false;
  uint64_t t = atomic_load(&r->tail) & ~LR_CLOSED;
  if (h >= t) return true;
  atomic_store_explicit(&r->tail_seen, t, memory_order_relaxed); /* relaxed: a hint, as above */
  return false;
}

/* A dequeuer whose cell is still empty although an enqueuer may still
 * write it (its ticket h is below tail, and below the ring's closed_at)
 * waits a little for that enqueuer before it makes the cell unusable for
 * it: otherwise, with the queue nearly empty, the dequeuer overtakes the
 * enqueuer at every item and both redo their work. Bounded (LR_SPIN
 * relaxes, once per ticket): a preempted enqueuer costs no more than that.
 * The ring files spin on their own cell words.
 *
 * A ticket at or past closed_at, or one given up (its bit in gave_up),
 * has no enqueuer to wait for (lr_close says why), so a dequeuer there
 * goes straight to the empty transition. The wait is only a courtesy:
 * the ring is correct whether a dequeuer waits or not, so a closed_at or
 * a bit not yet written (LR_OPEN while CLOSED is already set) costs a
 * wait, never an item; and a bit that another ticket 64k away set skips a
 * wait that a live enqueuer would have ended, which costs that enqueuer a
 * ticket, never an item. */
#define LR_SPIN 128
/* Nor does a dequeuer wait for an enqueuer that has fallen behind: when
 * more than LR_WAIT_LAG tickets were handed out since h (tail - h), ticket
 * h's enqueuer has stood between its ticket and its write while the
 * others took that many, which a running one does not (its write follows
 * its ticket by a load and a CAS); it was preempted, and a wait would hold
 * the unit for nothing. Where the wait pays, the ping-pong, tail is h + 1.
 * Tickets taken in that span by running threads are at most a few a
 * thread (an enqueue's, or a dequeuer's that fixState lifted tail to), so
 * 64 leaves room for tens of threads at work on one ring; the lag is read
 * from the tail the wait already reads, never on the fast path. Like
 * closed_at, it only drops a wait: the enqueuer of h that comes later
 * finds its cell passed and takes another ticket. */
#define LR_WAIT_LAG 64
static inline bool lr_enqueuer_pending(lr_ring *r, uint64_t h) {
  uint64_t t = atomic_load(&r->tail);
  if ((t & LR_CLOSED) && (h >= atomic_load(&r->closed_at) || (atomic_load(&r->gave_up) >> (h & 63)) & 1)) return false;
  return (t & ~LR_CLOSED) > h && (t & ~LR_CLOSED) - h <= LR_WAIT_LAG;
}

/* Count one such wait and the relaxes it spent (LCRQ looks before each
 * relax, so 0 when its first look found the write; LPRQ relaxes first, so
 * at least 1), and whether it ran out: no look found the enqueuer's
 * write (a write seen at the look after the last relax did not run out).
 * Nothing without the statistics. */
static inline void lr_count_wait(int pauses, bool ran_out) {
  SYNCQ_STAT_INC(deq_waits);
  SYNCQ_STAT_ADD(deq_wait_pauses, pauses);
  if (ran_out) SYNCQ_STAT_INC(deq_waits_out);
  (void)pauses;
  (void)ran_out;
}

/* An enqueuer gave up ticket t (it failed the ticket and will not write
 * its cell) and found the ring closed: it sets t's bit in gave_up, in
 * whatever order the give-ups come (two producers that fill a ring
 * usually give their tickets up lowest first: the closer's before that
 * of the enqueuer whose ticket it passed). Only closed rings have bits
 * set, and only the enqueuers' last tickets there (at most one each), so
 * two given-up tickets 64 apart are rare, and the price of such a pair is
 * lr_enqueuer_pending's. */
static inline void lr_give_up(lr_ring *r, uint64_t t) { atomic_fetch_or(&r->gave_up, UINT64_C(1) << (t & 63)); }

/* Close the ring (the "tantrum") after failing ticket t: no ticket taken
 * from now on succeeds. Counted by the enqueuer that set the bit, not by
 * those that found it set. The one that set it records in closed_at the
 * first ticket no enqueue will write:
 *   - every ticket taken after the fetch-and-or carries CLOSED (tail
 *     only grows: fetch-and-add, fixState's raise, which leaves a closed
 *     tail alone, and this bit; the funnels of the -af rings add to the
 *     same word, so a batch after the bit carries it in each ticket), and
 *     its enqueuer returns LR_RING_CLOSED without touching a cell: every
 *     ticket >= old (tail before the bit) is never written;
 *   - t itself is never written: its enqueuer (this one) gave it up and
 *     returns LR_RING_CLOSED (lr_give_up sets its bit). Tickets in
 *     (t, old) belong to enqueuers that may still write; each that gives
 *     its ticket up sets that ticket's bit, as does an enqueuer whose last
 *     failed ticket lies below t.
 * Cells of later rounds (ticket + k*R) are no concern: those tickets are
 * past old too. */
static inline void lr_close(lr_ring *r, uint64_t t) {
  uint64_t old = atomic_fetch_or(&r->tail, LR_CLOSED);
  if ((old & LR_CLOSED) == 0) {
    SYNCQ_STAT_INC(rings_closed);
    atomic_store(&r->closed_at, old);
  }
  lr_give_up(r, t);
}

/* Should an enqueuer that failed ticket t (after `tries` earlier failures
 * in this operation: it closes at its LR_PATIENCE + 1-th) close the ring? When it is full (tail - head >= R: no cell is left for t) or
 * when the enqueuer starves (dequeuers keep overtaking it). */
static inline bool lr_should_close(lr_ring *r, uint64_t t, unsigned tries) {
  uint64_t h = atomic_load(&r->head);
  return (int64_t)(t - h) >= (int64_t)r->size || tries >= LR_PATIENCE;
}

/* The fields the outer queue needs (both public structs have them). */
typedef struct lr_queue {
  _Atomic(void *) *head; /* lr_ring *: the ring dequeuers use */
  _Atomic(void *) *tail; /* lr_ring *: the ring enqueuers use */
  syncq_hp_domain *hp;
  uint64_t ring_size;
  _Atomic(uint64_t) *rings_linked; /* rings appended after the first */
  bool funnels;                    /* rings take tickets through funnels (lr_tail_ticket) */
} lr_queue;

typedef int (*lr_ring_enqueue_fn)(lr_ring *r, void *item);                  /* LR_OK or LR_RING_CLOSED */
typedef bool (*lr_ring_dequeue_fn)(lr_ring *r, void **item);                /* true: *item taken */
typedef lr_ring *(*lr_ring_make_fn)(uint64_t R, void *first, bool funnels); /* ring holding first in cell 0 */

/* LCRQ enqueue (Figure 6): enqueue into the tail ring; when it is closed,
 * link a new ring holding the item after it (MS-queue style). */
static inline int lr_enqueue(const lr_queue *q, void *item, lr_ring_enqueue_fn ring_enqueue,
                             lr_ring_make_fn ring_make) {
  syncq_hp_record *rec;
  if (syncq_hp_enter(q->hp, &rec) != SYNCQ_OK) return SYNCQ_ENOMEM;
  int status = SYNCQ_OK;
  for (;;) {
    lr_ring *r = lr_protect(rec, LR_HP_TAIL, q->tail);
    lr_ring *next = atomic_load(&r->next);
    if (next != NULL) { /* tail lags behind a linked ring: help it on */
      void *expect = r;
      SYNCQ_STAT_INC(cas_attempts);
      if (!atomic_compare_exchange_strong(q->tail, &expect, next)) SYNCQ_STAT_INC(cas_failures);
      continue;
    }
    if (ring_enqueue(r, item) == LR_OK) break;
    lr_ring *fresh = ring_make(q->ring_size, item, q->funnels);
    if (fresh == NULL) {
      status = SYNCQ_ENOMEM;
      break;
    }
    lr_ring *none = NULL;
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(&r->next, &none, fresh)) { /* publishes the ring and its cell 0 */
      atomic_fetch_add(q->rings_linked, 1);
      void *expect = r;
      SYNCQ_STAT_INC(cas_attempts);
      if (!atomic_compare_exchange_strong(q->tail, &expect, fresh)) SYNCQ_STAT_INC(cas_failures);
      break;
    }
    SYNCQ_STAT_INC(cas_failures);
    free(fresh); /* never published */
    SYNCQ_STAT_INC(retries);
  }
  syncq_hp_leave_keep(rec); /* the slot stays: see Reclamation above */
  return status;
}

/* LCRQ dequeue (Figure 6): dequeue from the head ring; when it is empty
 * and a ring follows, it is closed (next is set only after the ring
 * closed), so dequeue once more: an enqueue may have landed between the
 * first EMPTY and the closing. Empty a second time, it stays empty: move
 * head on and retire it. */
static inline int lr_dequeue(const lr_queue *q, void **item, lr_ring_dequeue_fn ring_dequeue) {
  syncq_hp_record *rec;
  if (syncq_hp_enter(q->hp, &rec) != SYNCQ_OK) return SYNCQ_ENOMEM;
  int status;
  for (;;) {
    lr_ring *r = lr_protect(rec, LR_HP_HEAD, q->head);
    if (ring_dequeue(r, item)) {
      status = SYNCQ_OK;
      break;
    }
    lr_ring *next = atomic_load(&r->next);
    if (next == NULL) {
      status = SYNCQ_EMPTY;
      break;
    }
    if (ring_dequeue(r, item)) {
      status = SYNCQ_OK;
      break;
    }
    void *expect = r;
    if (atomic_load(q->tail) == r) { /* tail must leave r before head does (see above) */
      SYNCQ_STAT_INC(cas_attempts);
      if (!atomic_compare_exchange_strong(q->tail, &expect, next)) SYNCQ_STAT_INC(cas_failures);
      expect = r;
    }
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(q->head, &expect, next)) {
      syncq_hp_clear(rec, LR_HP_HEAD);
      (void)syncq_hp_retire(rec, r); /* freed once no hazard slot holds it */
    } else {
      SYNCQ_STAT_INC(cas_failures);
    }
    SYNCQ_STAT_INC(retries);
  }
  syncq_hp_leave_keep(rec); /* the slot stays: see Reclamation above */
  return status;
}

/* The ring size for a sizing hint: 0 -> LR_RING_DEFAULT, else the next
 * power of two, within [LR_RING_MIN, LR_RING_MAX]. */
static inline uint64_t lr_ring_size_for(size_t capacity) {
  if (capacity == 0) return LR_RING_DEFAULT;
  if (capacity >= LR_RING_MAX) return LR_RING_MAX;
  uint64_t R = LR_RING_MIN;
  while (R < capacity) R <<= 1;
  return R;
}

static inline bool lr_ring_size_ok(size_t R) { return R >= LR_RING_MIN && R <= LR_RING_MAX && (R & (R - 1)) == 0; }

/* hp free function: ctx is the queue's rings_freed counter. */
static inline void lr_free_ring(void *ring, void *ctx) {
  free(ring);
  atomic_fetch_add((_Atomic(uint64_t) *)ctx, 1);
}

/* init: the list starts as one ring, first (the ring's make; NULL when it
 * could not be allocated), at both ends, with the counters at zero and a
 * hazard domain whose frees count in rings_freed. On failure nothing is
 * left allocated. */
static inline int lr_init(lr_ring *first, _Atomic(void *) *head, _Atomic(void *) *tail, syncq_hp_domain **hp,
                          _Atomic(uint64_t) *rings_linked, _Atomic(uint64_t) *rings_freed) {
  atomic_init(rings_linked, 0);
  atomic_init(rings_freed, 0);
  if (first == NULL) return SYNCQ_ENOMEM;
  int st = syncq_hp_domain_create(LR_HP_SLOTS, lr_free_ring, rings_freed, hp);
  if (st != SYNCQ_OK) {
    free(first);
    return st;
  }
  atomic_init(head, first);
  atomic_init(tail, first);
  return SYNCQ_OK;
}

/* destroy: free the retired rings (the domain), then the list. */
static inline int lr_destroy(const lr_queue *q) {
  int r = syncq_hp_domain_destroy(q->hp);
  if (r != SYNCQ_OK) return r;
  for (lr_ring *n = atomic_load(q->head), *next; n != NULL; n = next) {
    next = atomic_load_explicit(&n->next, memory_order_relaxed); /* relaxed: no concurrent user at destroy */
    free(n);
  }
  return SYNCQ_OK;
}

#endif
