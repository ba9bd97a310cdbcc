/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * scq2.c — SCQ2: Nikolaev's scalable circular queue with the pointers in
 * the ring, one double-width cell per position.
 *
 * Contract
 *   Source:      Ruslan Nikolaev, "A Scalable, Portable, and Memory-Efficient
 *                Lock-Free FIFO Queue", DISC 2019: Figure 8 (enqueue,
 *                dequeue, catchup, the threshold), applied to cells that
 *                hold the item beside the entry word, as the paper's
 *                double-width variant and its authors' SCQ2 code do; 004
 *                §VI measures it as "SCQ2" (among the best at scale).
 *                Written from the paper; see Deviations.
 *   Progress:    lock-free (the threshold, 2n - 1 for n cells holding at
 *                most n items, bounds a dequeuer's tries after the last
 *                enqueue).
 *   Atomics:     uncontended enqueue: 1 FAA (Tail) + 1 double-width CAS,
 *                + loads of Tail, the Head hint and the cell; dequeue: 1
 *                FAA (Head) + 1 double-width CAS (consume), + loads of
 *                Threshold, Head, Tail and the cell. EMPTY: 3 loads
 *                (Threshold, Head, Tail), no write (Deviation 5), or
 *                Threshold alone once it has run out.
 *   Memory:      caller's storage: a header of 9 cache lines + 16 bytes per
 *                cell; never allocates; nothing to reclaim.
 *   Signal-safe: yes: no locks, no allocation; a dequeuer's wait for an
 *                enqueuer it overtook is bounded (SYNCQ_SCQ_DEQ_WAIT
 *                pauses), so a handler that interrupts an enqueue and
 *                dequeues the same queue carries on.
 *   Process-shared: yes (no internal pointers; items are opaque words).
 *   Limits:      capacity n (= cells) a power of two, 2 <= n <= 2^40; items
 *                non-NULL; cycles are 62 bits wide, compared modulo 2^62
 *                (a thread would have to sleep for 2^61 rounds to be
 *                confused). SYNCQ_ENOTSUP at init without a double-width
 *                CAS (syncq_pr_dwcas_available()).
 *   Lost item:   (found and fixed) the dequeuer used to write a cell with
 *                single-width operations on its entry word (the AND that
 *                consumes, the CAS that invalidates or marks unsafe) while
 *                the enqueuer writes the pair with a double-width CAS.
 *                Where that CAS is a lock around a read and a write
 *                (ThreadSanitizer's runtime: its 128-bit atomics take one
 *                internal mutex; libatomic on machines without a 16-byte
 *                CAS instruction), a dequeuer that gave up waiting for the
 *                enqueuer of its ticket could invalidate the cell between
 *                the enqueuer's read and write: the enqueuer's write then
 *                put the item back over the invalidation, the dequeuer
 *                answered EMPTY, Head moved past, and the item was never
 *                seen again (queue-1p1c's ping-pong under ThreadSanitizer:
 *                both threads found their queue empty for good). With
 *                lock cmpxchg16b (the inline x86-64 path) or CASPAL/LDXP
 *                the mix is atomic and nothing was lost. Every write of a
 *                cell is now a double-width CAS on the pair (the authors'
 *                SCQ2 consumes with a double-width fetch-and-AND likewise);
 *                tests/queue/scq2_race_test.c stops an enqueuer inside a
 *                lock-based double-width CAS while its dequeuer overtakes
 *                it, which lost the item every time before.
 *   Linearizable: items come out FIFO, EMPTY is linearizable; FULL is not:
 *                it is answered when Tail - Head reaches n tickets, and a
 *                dequeuer that has taken its ticket but not yet its item
 *                still counts, so a concurrent enqueue can see FULL with
 *                fewer than n items present (sequentially FULL comes at
 *                exactly n). The linearizability runs check it on
 *                histories that cannot fill it.
 *   Cells:       lo = the item; hi = cycle (62 bits) << 2 | is-safe << 1 |
 *                occupied. Head and Tail start at n (cycle 1), cells at
 *                cycle 0, safe, empty.
 *   Deviations:  (1) cells are remapped (consecutive tickets on different
 *                lines, scq_common.h), as the authors' code always does,
 *                only in queues made by syncq_queue_scq2_init_remapped:
 *                on 2 cores remapping cost SCQ one producer and one
 *                consumer most of their throughput (src/queue/scq.c,
 *                "Tried, not kept"); (2) a
 *                dequeuer that meets an empty safe cell of an older cycle
 *                while Tail says the enqueuer of its ticket is on its way
 *                re-reads it up to SYNCQ_SCQ_DEQ_WAIT times before
 *                invalidating it (the authors' SCQ2, lfring_cas2.h,
 *                invalidates at once); (3)
 *                the FULL test reads a per-queue hint of Head (a value
 *                Head once had) and reads Head itself only when the hint
 *                says full (the authors keep it per thread); (4) consume
 *                is a double-width CAS that clears the occupied bit of the
 *                pair the dequeuer read (the authors: a double-width
 *                fetch-and-AND); the dequeuer's invalidation and unsafe
 *                marks are double-width CASes too (the authors: a CAS on
 *                the entry word; see "Lost item"); (5) dequeue first
 *                reads Head, then Tail, and answers EMPTY without a
 *                ticket when Head >= Tail: Figure 8's test after the
 *                fetch-and-add (Tail <= H + 1), made before it, so the
 *                same argument makes the EMPTY linearizable (when Tail is
 *                read, every ticket an enqueuer holds is held by a
 *                dequeuer too). Tail is read only once Head has caught
 *                up with tail_seen, a value Tail had, kept on Head's
 *                line (as LCRQ's lr_ring_seems_empty), so a consumer that
 *                trails the producer does not pull Tail's line at every
 *                item. Threshold alone let a consumer polling an
 *                empty queue take a ticket per poll while the last
 *                enqueue's reset lasts (2n - 1 polls): a Head FAA, a CAS
 *                on the cell the producer fills next, a catchup CAS on
 *                Tail and a Threshold FAA (tests/queue/scq2_race_test.c
 *                counts the tickets polls take: 300 for 100 items with 3
 *                polls after each before, none now).
 *   Full and empty at once: (found on 16 cores and fixed) an enqueuer
 *                that gives up tickets and answers FULL leaves dead
 *                tickets between Head and Tail; with the dequeuers'
 *                Threshold run out, no dequeuer took them and the queue
 *                answered FULL to every enqueue and EMPTY to every dequeue
 *                for good while it held nothing (4 producers and 4
 *                consumers at capacity 2 stalled in the first trial on a
 *                16-core Xeon; never seen on 2 cores). answer_full gives
 *                the dequeuers their threshold back;
 *                tests/queue/scq2_race_test.c builds the state with two
 *                dequeuers stopped after their tickets and fails on the
 *                code before.
 *   Measured:    2-core development machine (load average 20-45 from other
 *                work), dg25-prodcons, medians of 15 samples: N = 8 (16
 *                threads) 19-23 Mops/s, level with SCQ. One thread's
 *                enqueue+dequeue pair (thread CPU time, best of 7 x 2M):
 *                21 ns with the single-width consume, 22.5-23 ns with the
 *                double-width one ("Lost item").
 *   N = 1:       under heavy load (load average 15-600) the lab's
 *                dg25-prodcons N = 1 gave SCQ2 0.2-4 Mops/s
 *                where SCQ gave 3-40 in the same runs. Not the data path
 *                there: each thread's CPU time per item was 60-800 ns for
 *                SCQ2 and 80-900 for SCQ, its wall time 1-5 us. Slow runs are runs where the two threads
 *                take turns instead of running side by side: counted
 *                inside SCQ2, every FULL answer of such a run came with
 *                1,010-1,024 items in the queue and every EMPTY with none
 *                (the other thread was off its core, the machine being
 *                loaded), and SCQ's slow runs show the same phases. With
 *                the lab's pinning off (--no-pin) SCQ2 gave 58, 1.4, 34
 *                and 29 Mops/s against SCQ's 34, 30, 35 and 36 in the
 *                same runs. What is SCQ2's own: its failed polls are
 *                cheap (FULL from the Head hint before any ticket, as in
 *                the authors' code; EMPTY from Threshold), so the lab's
 *                waiters, which yield after a count of polls, give their
 *                core away sooner than SCQ's, whose failed polls take
 *                fetch-and-adds and CASes on the other ring; a build that
 *                paused 50 times in each failed poll moved pinned N = 1
 *                from 0.18-0.93 to 0.76-1.95 Mops/s (three runs each):
 *                part of the gap, not all. Not changed: slowing a failed
 *                poll down would tune the queue to the harness. At a
 *                lower load (NBLFQ at 200-270 Mops/s) SCQ2 gave 26-45 (one
 *                launch 3.5) against SCQ's 75-78, and the build before the
 *                double-width consume gave the same 25-27: a factor of
 *                about two remains, open. Counted there, over half of the
 *                consumer's EMPTY answers took a ticket (Head FAA, cell
 *                CAS, Tail catchup CAS, Threshold FAA: lines the producer
 *                writes) where most of SCQ's came from Threshold alone;
 *                Deviation 5 now answers those polls from Head and Tail
 *                with no write (see docs/queues.md, "One producer, one
 *                consumer", for the figures after it).
 *   Stats:       cas_attempts, cas_failures.
 */
#include "syncq/queue/scq2.h"

#include "../stats_internal.h"
#include "scq_common.h"
#include "syncq/queue.h"
#include "../race_internal.h" /* SYNCQ_RACE_POINT: nothing outside race tests */

#define SCQ2_MAGIC UINT64_C(0x5343513251554532)
#define SCQ2_LINE_SHIFT SYNCQ_SCQ_LINE_SHIFT(sizeof(syncq_pr_dw_atomic))

#define OCCUPIED UINT64_C(1)
#define SAFE UINT64_C(2)

static inline syncq_pr_dw_atomic *cells_of(syncq_queue_scq2 *q) { return (syncq_pr_dw_atomic *)(void *)(q + 1); }

static inline uint64_t cyc_mask(void) { return UINT64_MAX >> 2; }
static inline uint64_t e_cycle(uint64_t e) { return e >> 2; }
static inline uint64_t c_cycle(const syncq_queue_scq2 *q, uint64_t counter) {
  return (counter >> q->order) & cyc_mask();
}
static inline uint64_t make_entry(uint64_t cycle, uint64_t flags) { return (cycle << 2) | flags; }
/* a < b for cycles modulo 2^62 */
static inline bool cycle_lt(uint64_t a, uint64_t b) { return (int64_t)((a - b) << 2) < 0; }

/* Both words of a cell, item first, each with acquire (pairs with the
 * double-width CAS that wrote them). Not one atomic read: the pair may be
 * torn, and every use of it is validated by the double-width CAS that
 * acts on it. */
static inline syncq_pr_dw load_cell(syncq_pr_dw_atomic *cell) { return syncq_pr_dw_load(cell); }

static inline syncq_pr_dw_atomic *cell_at(syncq_queue_scq2 *q, uint64_t counter) {
  return &cells_of(q)[syncq_scq_remap(counter, q->order, q->remap_shift)];
}

/* FULL when `tail` tickets reach n past Head. The hint is a value Head
 * once had (Head only grows), so a test that passes on it passes on Head;
 * Head itself is read only when the hint says full. */
static inline bool full_at(syncq_queue_scq2 *q, uint64_t tail) {
  /* relaxed: a hint; any value it holds is a lower bound of Head. */
  const uint64_t hint = atomic_load_explicit(&q->head_hint, memory_order_relaxed);
  if (tail < hint + q->n) return false;
  uint64_t h = atomic_load(&q->head);
  /* relaxed: a hint (see above); a stale store only lowers the bound.
   * Written only when Head moved, so producers polling a full queue share
   * the line instead of taking it in turn. */
  if (h != hint) atomic_store_explicit(&q->head_hint, h, memory_order_relaxed);
  return tail >= h + q->n;
}

/* Answer FULL (Tail n tickets past Head). Tickets that enqueuers took and
 * gave up (their cell still held an older item whose dequeuer had its
 * ticket but had not consumed it yet) are dead: no item will fill them, yet
 * they keep Tail ahead of Head until dequeuers take and pass them. If the
 * dequeuers' Threshold has run out meanwhile, none of them takes a ticket:
 * the queue is empty, Tail stays n past Head, and every later call
 * answers FULL or EMPTY for good (8 threads at capacity 2 on 16 cores
 * reached it within a second; see "Full and empty at once"). So an
 * enqueuer that answers FULL while Threshold says empty gives the
 * dequeuers their threshold back, as an enqueue does: they take the dead
 * tickets (each fails and counts down), Head comes within n of Tail, and
 * enqueues go through again. Raising Threshold never makes a dequeue
 * answer EMPTY wrongly; it only lets dequeuers try longer. */
static int answer_full(syncq_queue_scq2 *q) {
  /* seq_cst, as the enqueue's own store: a dequeuer that reads the new
   * value takes a ticket */
  if (atomic_load(&q->threshold) < 0) atomic_store(&q->threshold, (int64_t)(2 * q->n - 1));
  return SYNCQ_FULL;
}

/* Deviation 5: the queue is empty now when Head has reached Tail. Head
 * is read first: when Tail is read, every ticket an enqueuer holds is
 * below it, hence below the Head read or at most equal to it, so a
 * dequeuer already holds each (it takes that item, or makes its enqueuer
 * give the ticket up): Figure 8's test "Tail <= H + 1" after the
 * fetch-and-add, made before it. Without it, a consumer polling an empty
 * queue whose Threshold an enqueue has just reset takes a ticket per
 * poll: a Head FAA, a CAS on the cell the producer fills next, a catchup
 * CAS on Tail and a Threshold FAA, all on lines the producer writes.
 * Tail only grows (fetch-and-add, catchup), so a Head below a value Tail
 * once had is below Tail now: "not empty" without reading Tail's line,
 * which the producers write at every enqueue. Only a dequeuer that has
 * caught up with tail_seen reads Tail, and leaves what it read there. */
static inline bool seems_empty(syncq_queue_scq2 *q) {
  uint64_t h = atomic_load(&q->head);
  /* relaxed: a hint; whatever value is read was Tail's at some time, and
   * the answer it gives ("go on to the fetch-and-add") is always safe */
  if (h < atomic_load_explicit(&q->tail_seen, memory_order_relaxed)) return false;
  uint64_t t = atomic_load(&q->tail);
  if (h >= t) return true;
  atomic_store_explicit(&q->tail_seen, t, memory_order_relaxed); /* relaxed: a hint, as above */
  return false;
}

static void catchup(syncq_queue_scq2 *q, uint64_t tail, uint64_t head) {
  while (!atomic_compare_exchange_strong(&q->tail, &tail, head)) {
    head = atomic_load(&q->head);
    tail = atomic_load(&q->tail);
    if (tail >= head) break;
  }
}

int syncq_queue_scq2_bytes(size_t capacity, size_t *bytes) {
  if (bytes == NULL || capacity < 2 || (capacity & (capacity - 1)) != 0) return SYNCQ_EINVAL;
  if (capacity > ((size_t)1 << 40) || capacity > (SIZE_MAX - sizeof(syncq_queue_scq2)) / 16) return SYNCQ_EINVAL;
  *bytes = SYNCQ_QUEUE_SCQ2_BYTES(capacity);
  return SYNCQ_OK;
}

static int scq2_init(syncq_queue_scq2 *q, size_t capacity, uint32_t remap_shift) {
  size_t bytes;
  if (q == NULL || ((uintptr_t)q % _Alignof(syncq_queue_scq2)) != 0) return SYNCQ_EINVAL;
  if (syncq_queue_scq2_bytes(capacity, &bytes) != SYNCQ_OK) return SYNCQ_EINVAL;
  if (!syncq_pr_dwcas_available()) return SYNCQ_ENOTSUP;
  q->n = capacity;
  q->remap_shift = remap_shift;
  q->order = 0;
  while ((UINT64_C(1) << q->order) < (uint64_t)capacity) q->order++;
  atomic_init(&q->tail, (uint64_t)capacity); /* cycle 1: cells start at cycle 0 */
  atomic_init(&q->head, (uint64_t)capacity);
  atomic_init(&q->head_hint, (uint64_t)capacity);
  atomic_init(&q->tail_seen, (uint64_t)capacity);
  atomic_init(&q->threshold, -1);
  syncq_pr_dw_atomic *c = cells_of(q);
  for (size_t i = 0; i < capacity; i++) {
    atomic_init(&c[i].lo, 0);
    atomic_init(&c[i].hi, make_entry(0, SAFE));
  }
  q->magic = SCQ2_MAGIC;
  return SYNCQ_OK;
}

int syncq_queue_scq2_init(syncq_queue_scq2 *q, size_t capacity) { return scq2_init(q, capacity, 0); }
int syncq_queue_scq2_init_remapped(syncq_queue_scq2 *q, size_t capacity) {
  return scq2_init(q, capacity, SCQ2_LINE_SHIFT);
}

int syncq_queue_scq2_destroy(syncq_queue_scq2 *q) {
  if (q == NULL || q->magic != SCQ2_MAGIC) return SYNCQ_EINVAL;
  q->magic = 0;
  return SYNCQ_OK;
}

int syncq_queue_scq2_enqueue(syncq_queue_scq2 *q, void *item) {
  if (q == NULL || item == NULL || q->magic != SCQ2_MAGIC) return SYNCQ_EINVAL;
  if (full_at(q, atomic_load(&q->tail))) return answer_full(q);
  for (;;) {
    uint64_t T = atomic_fetch_add(&q->tail, 1);
    const uint64_t tc = c_cycle(q, T);
    syncq_pr_dw_atomic *cell = cell_at(q, T);
    SYNCQ_RACE_POINT("queue.scq2.ticket"); /* between the ticket and the cell: where a dequeuer overtakes */
    syncq_pr_dw E = load_cell(cell);       /* a torn pair fails the CAS below */
    for (;;) {
      if (cycle_lt(e_cycle(E.hi), tc) && !(E.hi & OCCUPIED) && ((E.hi & SAFE) || atomic_load(&q->head) <= T)) {
        SYNCQ_STAT_INC(cas_attempts);
        if (!syncq_pr_dwcas(cell, &E, (syncq_pr_dw){(uint64_t)(uintptr_t)item, make_entry(tc, SAFE | OCCUPIED)})) {
          SYNCQ_STAT_INC(cas_failures);
          continue; /* E holds the cell's value now */
        }
        const int64_t want = (int64_t)(2 * q->n - 1);
        /* Written only when it differs (Figure 8). seq_cst: visible before
         * this enqueue returns, or a later dequeue could read a negative
         * threshold and answer EMPTY over this item. */
        if (atomic_load(&q->threshold) != want) atomic_store(&q->threshold, want);
        return SYNCQ_OK;
      }
      break; /* this cell cannot take it: next ticket */
    }
    if (full_at(q, T + 1)) return answer_full(q);
  }
}

int syncq_queue_scq2_dequeue(syncq_queue_scq2 *q, void **item) {
  if (q == NULL || item == NULL || q->magic != SCQ2_MAGIC) return SYNCQ_EINVAL;
  if (atomic_load(&q->threshold) < 0) return SYNCQ_EMPTY;
  if (seems_empty(q)) return SYNCQ_EMPTY;         /* Deviation 5 */
  SYNCQ_RACE_POINT("queue.scq2.dequeue.checked"); /* past the emptiness test, before the ticket */
  for (;;) {
    uint64_t H = atomic_fetch_add(&q->head, 1);
    const uint64_t hc = c_cycle(q, H);
    syncq_pr_dw_atomic *cell = cell_at(q, H);
    SYNCQ_RACE_POINT("queue.scq2.dequeue.ticket"); /* between the ticket and the cell: an item held, not yet taken */
    unsigned waited = 0;
    /* acquire (both): pair with the double-width CAS of the cell's last
     * writer. A torn pair is caught by the double-width CAS below. */
    syncq_pr_dw E = load_cell(cell);
    for (;;) {
      if (e_cycle(E.hi) == hc && (E.hi & OCCUPIED)) {
        /* Ours: only ticket H's enqueuer writes cycle hc occupied, only we
         * consume it. Consume (Figure 8's atomic AND) as a double-width
         * CAS on the pair we read: it fails if the pair was torn (a stale
         * item word) or a later dequeuer marked the cell unsafe meanwhile,
         * and we retry with what it found. */
        SYNCQ_STAT_INC(cas_attempts);
        if (!syncq_pr_dwcas(cell, &E, (syncq_pr_dw){E.lo, E.hi & ~OCCUPIED})) {
          SYNCQ_STAT_INC(cas_failures);
          continue; /* E holds the cell's value now */
        }
        *item = (void *)(uintptr_t)E.lo;
        return SYNCQ_OK;
      }
      if (!(E.hi & OCCUPIED) && (E.hi & SAFE) && cycle_lt(e_cycle(E.hi), hc) && waited < SYNCQ_SCQ_DEQ_WAIT &&
          (waited > 0 || atomic_load(&q->tail) > H)) {
        waited++; /* Deviation 2: ticket H's enqueuer is between its FAA and its CAS */
        syncq_pr_relax();
        E = load_cell(cell);
        continue;
      }
      /* an older item: mark the cell unsafe; empty: move it to our cycle.
       * A double-width CAS like the enqueuer's, never a CAS on the entry
       * word alone: see "Lost item" in the contract. */
      uint64_t New = (E.hi & OCCUPIED) ? (E.hi & ~SAFE) : make_entry(hc, E.hi & SAFE);
      if (cycle_lt(e_cycle(E.hi), hc) && New != E.hi) {
        SYNCQ_STAT_INC(cas_attempts);
        if (!syncq_pr_dwcas(cell, &E, (syncq_pr_dw){E.lo, New})) {
          SYNCQ_STAT_INC(cas_failures);
          continue;
        }
      }
      break;
    }
    uint64_t T = atomic_load(&q->tail);
    if (T <= H + 1) {
      catchup(q, T, H + 1);
      atomic_fetch_sub(&q->threshold, 1);
      return SYNCQ_EMPTY;
    }
    if (atomic_fetch_sub(&q->threshold, 1) <= 0) return SYNCQ_EMPTY;
  }
}

SYNCQ_QUEUE_REGISTER(scq2, "scq2", "SCQ2: scalable circular queue, pointers in double-width cells",
                     "Nikolaev 2019 (DISC), Figure 8 with double-width cells; measured by 004 §VI as SCQ2", LOCK_FREE,
                     SYNCQ_PROP_FIFO | SYNCQ_PROP_BOUNDED | SYNCQ_PROP_SIGNAL_SAFE | SYNCQ_PROP_PROCESS_SHARED);
