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
 *   Progress:    lock-free (Figure 8 on 2n cells: an enqueue's tickets
 *                fail only for cells held by older items or taken by
 *                dequeuers that overtook it, and a whole lap of cells held
 *                by items at or past Head answers FULL, see "Room"; the
 *                threshold, 3n - 1 or more, bounds a dequeuer's tries
 *                after the last enqueue).
 *   Atomics:     uncontended enqueue: 1 FAA (Tail) + 1 double-width CAS,
 *                + loads of Tail, the room adjustment, a Head hint on
 *                Tail's line, Threshold and the cell; dequeue: 1 FAA
 *                (Head) + 1 double-width CAS (consume), + loads of
 *                Threshold, Head, Tail and the cell. A ticket that holds
 *                no item adds one FAA on the room adjustment to the
 *                operation that finds so. EMPTY: 3 loads (Threshold, Head,
 *                Tail), no write (Deviation 5), or Threshold alone once it
 *                has run out. FULL: 4 loads (Tail, the adjustment, the
 *                hint, Head), no write, or FAAs on Tail and the adjustment
 *                when another enqueue takes the last room meanwhile.
 *   Memory:      caller's storage: a header of 9 cache lines + 32 bytes per
 *                item of capacity (2 cells of 16); never allocates;
 *                nothing to reclaim.
 *   Signal-safe: yes: no locks, no allocation; a dequeuer's wait for an
 *                enqueuer it overtook is bounded (SYNCQ_SCQ_DEQ_WAIT
 *                pauses), so a handler that interrupts an enqueue and
 *                dequeues the same queue carries on.
 *   Process-shared: yes (no internal pointers; items are opaque words).
 *                Each operation reads the header's geometry (n, order,
 *                remap_shift) once into a local copy (relaxed atomic
 *                loads), checks it is one init writes
 *                (scq2_geometry_read), else SYNCQ_EINVAL, and uses only
 *                the copy: a header another process overwrote,
 *                before or during the operation, cannot make a shift of
 *                64 or an index past the cells. The caller guarantees
 *                the mapping holds SYNCQ_QUEUE_SCQ2_BYTES(n) for the n in
 *                the header. A process that writes the cells can
 *                make operations retry without end, never reach outside
 *                them.
 *   Limits:      capacity n a power of two, 2 <= n <= 2^40 (2n cells); items
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
 *                it is answered when the tickets before the enqueue's,
 *                less those that hold no item, hold n items or enqueues
 *                on their way ("Room"), so an enqueue concurrent with
 *                enqueues in flight, or with operations that have not yet
 *                taken a ticket that holds no item off the count, can see
 *                FULL with fewer than n items present; and a dequeue gives
 *                its item's room back with its Head ticket, before it
 *                consumes, so while dequeues are in flight the cells can
 *                hold more than n items (n and the items of those
 *                dequeues, which may take effect first). Whenever no
 *                operation is in flight the count is the number of items
 *                present, so FULL never outlasts them (sequentially FULL
 *                comes at exactly n). The linearizability runs check the
 *                rest on histories that cannot fill it.
 *   Cells:       lo = the item; hi = cycle (62 bits) << 2 | is-safe << 1 |
 *                occupied. Head and Tail start at 2n (cycle 1), cells at
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
 *                FULL is counted from tickets less those that hold no
 *                item, on 2n cells (see "Dead tickets" and "Room"); the
 *                authors' SCQ2 has n cells and answers FULL when Tail
 *                reaches n tickets past Head (a per-thread
 *                hint of Head); (4) consume
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
 *   Dead tickets: (found twice, fixed) a ticket whose enqueuer gave it up
 *                (its cell still held an older item whose dequeuer had its
 *                ticket but had not consumed it, or was unsafe) is dead:
 *                no item will fill it, yet it kept Tail ahead of Head until
 *                a dequeuer passed it. FULL used to be answered when Tail
 *                was n tickets past Head on n cells, as the authors' SCQ2
 *                does, dead tickets included. (a) With the dequeuers'
 *                Threshold run out, no dequeuer passed them: the queue
 *                answered FULL to every enqueue and EMPTY to every dequeue
 *                for good while it held nothing (4 producers and 4
 *                consumers at capacity 2 on a 16-core Xeon). (b) With
 *                every thread in an enqueue, no dequeuer passed them
 *                either: FULL for good with room free (3 threads putting
 *                then getting at capacity 64 with 57 items, on 2 and on 16
 *                cores: queue_progress_test's near-full case; a work pool
 *                whose threads put then get could deadlock so under
 *                preemption alone). The first fix counted room in items,
 *                which a dead ticket never holds: an enqueue reserved one
 *                in a count before its ticket and the dequeue that
 *                consumed the item released it, on 2n cells, as SCQ's
 *                rings have for n indices. Its price, a fetch-and-add on
 *                a line both sides share in every operation: one thread's
 *                enqueue+dequeue pair went from 22.4-23.7 ns to 31.4-33.2
 *                (thread CPU time, best of 7 x 2M pairs, 12 runs
 *                interleaved with the code before; docs/queues.md), and
 *                on 16 cores dg25-prodcons at N = 8 and 16 from 15.6-19.1
 *                to 9.2-9.5 Mops/s. Tried, not kept: that count split
 *                into a producers' half on Tail's line (a CAS admits an
 *                item) and a consumers' half on Head's line, read through
 *                a hint: the same pair cost (32.6 ns); the cost was the
 *                two read-modify-writes. Now "Room" below: 24.5 ns a
 *                pair against the item count's 32.5 in the same
 *                interleaved runs. tests/queue/scq2_race_test.c builds
 *                both states deterministically (two dequeuers stopped
 *                after their tickets; one dequeuer stopped while enqueues
 *                pass its cell) and fails on the code before each fix.
 *   Room:        FULL from tickets, with the dead ones taken off, and no
 *                per-operation count. Every ticket below Tail is taken by
 *                one enqueuer or jumped by a catchup; every ticket below
 *                Head by one dequeuer; so Tail - Head + adjust, where
 *                adjust adds one for each dequeuer's ticket that held no
 *                item and takes one off for each enqueuer's ticket given
 *                up and each ticket a catchup jumped, counts the tickets
 *                that hold an item or an enqueue on its way, not yet taken
 *                by a dequeuer: with no operation in flight, the items
 *                present. Those events are the slow paths (a cell that
 *                could not take the item, a dequeue that found none), so
 *                the common enqueue and dequeue add nothing; each
 *                operation adds its own once, before it returns. An
 *                enqueue takes a ticket only when the tickets before
 *                Tail hold fewer than n (FULL with loads alone
 *                otherwise), and keeps it only when the tickets before it,
 *                less those it gave up itself, hold fewer than n: a race
 *                for the last room is decided by the ticket order, and
 *                the loser gives its ticket up and answers FULL. Head is
 *                read through head_seen, a value Head had, on Tail's line
 *                (an older Head overstates the room used, never the
 *                reverse): producers read Head's line about once in n
 *                items while consumers keep up. A dequeue gives its
 *                item's room back with its Head ticket, before it
 *                consumes, so the cells can hold more than n items while
 *                dequeues are in flight; with more such dequeues than n
 *                every cell can hold one, so an enqueue that finds 2n
 *                cells held by older items for tickets at or past Head
 *                gives up and answers FULL (it cannot with no other
 *                operation in flight: then at most n items are there, and
 *                the first lap past Head finds a free cell).
 *                tests/queue/scq2_race_test.c builds that lap (three
 *                dequeuers stopped after their tickets); without the exit
 *                the enqueue took tickets for ever. An item may lie
 *                further than Figure 8's 2n - 1 tickets past Head there,
 *                so an enqueue raises Threshold to its distance past Head
 *                + n when that is above 3n - 1, and only ever raises it
 *                (a CAS when it is below what the enqueue wants, where
 *                Figure 8 stores 3n - 1 whenever it differs): a lower
 *                reset may not overwrite a higher one.
 *   Measured:    (the code with n cells and FULL from Head) 2-core
 *                development machine (load average 20-45 from other
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
 *                cheap (FULL then from a Head hint, now from the item
 *                count, before any ticket; EMPTY from Threshold), so the lab's
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
 *   Checked:     models/genmc/scq2.c runs this file under GenMC (RC11,
 *                IMM) with capacity 2 (docs/reliability.md, "Weak memory:
 *                GenMC").
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
/* The geometry of a queue, read once per operation from its header: the
 * shared storage may be written by another process, so the words that are
 * a shift (order), a bound (n) and a rotation (remap_shift) are copied and
 * checked (scq2_geometry_read) and only the copy is used. */
typedef struct scq2_geometry {
  uint64_t n;
  uint32_t order, shift;
} scq2_geometry;

static inline uint64_t c_cycle(const scq2_geometry *g, uint64_t counter) { return (counter >> g->order) & cyc_mask(); }
static inline uint64_t make_entry(uint64_t cycle, uint64_t flags) { return (cycle << 2) | flags; }
/* a < b for cycles modulo 2^62 */
static inline bool cycle_lt(uint64_t a, uint64_t b) { return (int64_t)((a - b) << 2) < 0; }

/* Both words of a cell, item first, each with acquire (pairs with the
 * double-width CAS that wrote them). Not one atomic read: the pair may be
 * torn, and every use of it is validated by the double-width CAS that
 * acts on it. */
static inline syncq_pr_dw load_cell(syncq_pr_dw_atomic *cell) { return syncq_pr_dw_load(cell); }

static inline syncq_pr_dw_atomic *cell_at(syncq_queue_scq2 *q, const scq2_geometry *g, uint64_t counter) {
  return &cells_of(q)[syncq_scq_remap(counter, g->order, g->shift)];
}

/* Room the tickets before ticket t hold, less `own` tickets the caller
 * took and gave up but has not yet taken off `adjust`: Tail - Head counts
 * every ticket between them, and `adjust` takes off the ones that hold no
 * item (see "Room"). Head is read through head_seen, a value Head had, on
 * Tail's line: an older Head only overstates the room used, so only a
 * caller that looks full reads Head's line, about once in n enqueues when
 * the consumers keep up. */
static inline int64_t room_used(syncq_queue_scq2 *q, int64_t n, uint64_t t, int64_t own) {
  const int64_t adjust = atomic_load(&q->adjust);
  /* relaxed: a hint; every value it held was Head's once, and Head only
   * grows, so it is at most Head now (pairs with the relaxed stores below) */
  uint64_t h = atomic_load_explicit(&q->head_seen, memory_order_relaxed);
  if ((int64_t)(t - h) + adjust - own < n) return (int64_t)(t - h) + adjust - own;
  h = atomic_load(&q->head);
  atomic_store_explicit(&q->head_seen, h, memory_order_relaxed); /* relaxed: a hint, as above */
  return (int64_t)(t - h) + adjust - own;
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

/* Figure 8's catchup: Tail moved up to Head. Returns the tickets it
 * jumped, which no enqueuer will take (their dequeuers count them as
 * finding no item: "Room"). */
static uint64_t catchup(syncq_queue_scq2 *q, uint64_t tail, uint64_t head) {
  while (!atomic_compare_exchange_strong(&q->tail, &tail, head)) {
    head = atomic_load(&q->head);
    tail = atomic_load(&q->tail);
    if (tail >= head) return 0;
  }
  return head - tail;
}

/* Is the magic init's? relaxed: a header word init wrote before the queue
 * was handed to its users (the creator's publication orders it); one load,
 * compared and not used otherwise. */
static inline bool magic_ok(const syncq_queue_scq2 *q) {
  return atomic_load_explicit(&q->magic, memory_order_relaxed) == SCQ2_MAGIC;
}

/* False unless the header is one init writes: 2 <= n <= 2^40 a power of
 * two, order = log2(2n), remap_shift 0 or SCQ2_LINE_SHIFT (one line, read
 * anyway). That the storage holds SYNCQ_QUEUE_SCQ2_BYTES(n) bytes the
 * callee cannot know: the caller guarantees it. */
static inline bool scq2_geometry_read(const syncq_queue_scq2 *q, scq2_geometry *g) {
  /* relaxed (all three): header words init wrote before the queue was
   * handed to its users (the creator's publication orders them); checked
   * below, and only these copies are used. One load each: the values
   * checked are the values used, whatever another process writes meanwhile. */
  g->n = atomic_load_explicit(&q->n, memory_order_relaxed);
  g->order = atomic_load_explicit(&q->order, memory_order_relaxed);
  g->shift = atomic_load_explicit(&q->remap_shift, memory_order_relaxed);
  return g->order - 2u <= 39u && g->n == UINT64_C(1) << (g->order - 1u) &&
         (g->shift == 0 || g->shift == SCQ2_LINE_SHIFT);
}

int syncq_queue_scq2_bytes(size_t capacity, size_t *bytes) {
  if (bytes == NULL || capacity < 2 || (capacity & (capacity - 1)) != 0) return SYNCQ_EINVAL;
  if (capacity > ((size_t)1 << 40) || capacity > (SIZE_MAX - sizeof(syncq_queue_scq2)) / 32) return SYNCQ_EINVAL;
  *bytes = SYNCQ_QUEUE_SCQ2_BYTES(capacity);
  return SYNCQ_OK;
}

static int scq2_init(syncq_queue_scq2 *q, size_t capacity, uint32_t remap_shift) {
  size_t bytes;
  if (q == NULL || ((uintptr_t)q % _Alignof(syncq_queue_scq2)) != 0) return SYNCQ_EINVAL;
  if (syncq_queue_scq2_bytes(capacity, &bytes) != SYNCQ_OK) return SYNCQ_EINVAL;
  if (!syncq_pr_dwcas_available()) return SYNCQ_ENOTSUP;
  const uint64_t cells = 2 * (uint64_t)capacity; /* SCQ's 2n entries for n items */
  uint32_t order = 0;
  while ((UINT64_C(1) << order) < cells) order++;
  atomic_init(&q->n, (uint64_t)capacity);
  atomic_init(&q->remap_shift, remap_shift);
  atomic_init(&q->order, order);
  atomic_init(&q->tail, cells); /* cycle 1: cells start at cycle 0 */
  atomic_init(&q->head, cells);
  atomic_init(&q->tail_seen, cells);
  atomic_init(&q->head_seen, cells);
  atomic_init(&q->adjust, 0);
  atomic_init(&q->threshold, -1);
  syncq_pr_dw_atomic *c = cells_of(q);
  for (uint64_t i = 0; i < cells; i++) {
    atomic_init(&c[i].lo, 0);
    atomic_init(&c[i].hi, make_entry(0, SAFE));
  }
  atomic_init(&q->magic, SCQ2_MAGIC);
  return SYNCQ_OK;
}

int syncq_queue_scq2_init(syncq_queue_scq2 *q, size_t capacity) { return scq2_init(q, capacity, 0); }
int syncq_queue_scq2_init_remapped(syncq_queue_scq2 *q, size_t capacity) {
  return scq2_init(q, capacity, SCQ2_LINE_SHIFT);
}

int syncq_queue_scq2_destroy(syncq_queue_scq2 *q) {
  if (q == NULL || !magic_ok(q)) return SYNCQ_EINVAL;
  /* relaxed: no operation may run on a queue being destroyed (the caller's
   * precondition); one that does reads the old magic or none */
  atomic_store_explicit(&q->magic, 0, memory_order_relaxed);
  return SYNCQ_OK;
}

int syncq_queue_scq2_enqueue(syncq_queue_scq2 *q, void *item) {
  scq2_geometry g; /* Process-shared: a geometry init never wrote is refused */
  if (q == NULL || item == NULL || !magic_ok(q) || !scq2_geometry_read(q, &g)) return SYNCQ_EINVAL;
  const int64_t n = (int64_t)g.n;
  /* FULL before a ticket, with loads alone: a producer polling a full
   * queue leaves no ticket for the dequeuers to pass. */
  if (room_used(q, n, atomic_load(&q->tail), 0) >= n) return SYNCQ_FULL;
  int64_t given_up = 0; /* tickets taken and given up, not yet taken off adjust */
  uint64_t blocked = 0; /* of those, cells held by older items at or past Head */
  for (;;) {
    uint64_t T = atomic_fetch_add(&q->tail, 1);
    /* This ticket's room: fewer than n tickets before it may hold items
     * or enqueues on their way (ours given up excepted). Not so when
     * other enqueues took the last room since the test above: the ticket
     * order settles the race, and this one gives its ticket up too and
     * answers FULL. */
    if (room_used(q, n, T, given_up) >= n) {
      atomic_fetch_sub(&q->adjust, given_up + 1);
      return SYNCQ_FULL;
    }
    const uint64_t tc = c_cycle(&g, T);
    syncq_pr_dw_atomic *cell = cell_at(q, &g, T);
    SYNCQ_RACE_POINT("queue.scq2.ticket"); /* between the ticket and the cell: where a dequeuer overtakes */
    syncq_pr_dw E = load_cell(cell);       /* a torn pair fails the CAS below */
    for (;;) {
      if (cycle_lt(e_cycle(E.hi), tc) && !(E.hi & OCCUPIED) && ((E.hi & SAFE) || atomic_load(&q->head) <= T)) {
        SYNCQ_STAT_INC(cas_attempts);
        if (!syncq_pr_dwcas(cell, &E, (syncq_pr_dw){(uint64_t)(uintptr_t)item, make_entry(tc, SAFE | OCCUPIED)})) {
          SYNCQ_STAT_INC(cas_failures);
          continue; /* E holds the cell's value now */
        }
        if (given_up != 0) atomic_fetch_sub(&q->adjust, given_up); /* they hold no item */
        /* Figure 8's reset, 3n - 1 on 2n cells, or more when this item
         * lies further past Head (Head through its hint, at most Head:
         * "Room"). Only raised, never lowered, so a lower reset cannot
         * overwrite a higher one. seq_cst: visible before this enqueue
         * returns, or a later dequeue could read a negative threshold and
         * answer EMPTY over this item. */
        /* relaxed: a hint, as in room_used; Head itself only when the
         * hint says the item lies 2n or more past it */
        uint64_t h = atomic_load_explicit(&q->head_seen, memory_order_relaxed);
        if (T - h >= 2 * (uint64_t)n && (int64_t)(T - h) > 0) h = atomic_load(&q->head);
        const int64_t past = (int64_t)(T - h) + n;
        const int64_t want = past > 3 * n - 1 ? past : 3 * n - 1;
        int64_t th = atomic_load(&q->threshold);
        while (th < want && !atomic_compare_exchange_weak(&q->threshold, &th, want)) {
        }
        return SYNCQ_OK;
      }
      break; /* this cell cannot take it: next ticket */
    }
    given_up++;
    /* Lock-free when more items than n are in the ring (dequeuers that
     * hold their items' tickets have given their room back): a whole lap
     * of cells held by items, at or past Head, answers FULL. Never when
     * no other operation runs: n items at most would be there then. */
    if ((E.hi & OCCUPIED) && cycle_lt(e_cycle(E.hi), tc) && atomic_load(&q->head) <= T &&
        ++blocked >= 2 * (uint64_t)n) {
      atomic_fetch_sub(&q->adjust, given_up);
      return SYNCQ_FULL;
    }
  }
}

int syncq_queue_scq2_dequeue(syncq_queue_scq2 *q, void **item) {
  scq2_geometry g; /* as in enqueue */
  if (q == NULL || item == NULL || !magic_ok(q) || !scq2_geometry_read(q, &g)) return SYNCQ_EINVAL;
  if (atomic_load(&q->threshold) < 0) return SYNCQ_EMPTY;
  if (seems_empty(q)) return SYNCQ_EMPTY;         /* Deviation 5 */
  SYNCQ_RACE_POINT("queue.scq2.dequeue.checked"); /* past the emptiness test, before the ticket */
  int64_t no_item = 0;                            /* tickets taken that held no item, not yet added to adjust */
  for (;;) {
    uint64_t H = atomic_fetch_add(&q->head, 1);
    const uint64_t hc = c_cycle(&g, H);
    syncq_pr_dw_atomic *cell = cell_at(q, &g, H);
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
        if (no_item != 0) atomic_fetch_add(&q->adjust, no_item);
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
    no_item++; /* ticket H holds no item: its enqueuer gave it up, or none will take it */
    uint64_t T = atomic_load(&q->tail);
    if (T <= H + 1) {
      const int64_t add = no_item - (int64_t)catchup(q, T, H + 1);
      if (add != 0) atomic_fetch_add(&q->adjust, add);
      atomic_fetch_sub(&q->threshold, 1);
      return SYNCQ_EMPTY;
    }
    if (atomic_fetch_sub(&q->threshold, 1) <= 0) {
      atomic_fetch_add(&q->adjust, no_item);
      return SYNCQ_EMPTY;
    }
  }
}

SYNCQ_QUEUE_REGISTER(scq2, "scq2", "SCQ2: scalable circular queue, pointers in double-width cells",
                     "Nikolaev 2019 (DISC), Figure 8 with double-width cells; measured by 004 §VI as SCQ2", LOCK_FREE,
                     SYNCQ_PROP_FIFO | SYNCQ_PROP_BOUNDED | SYNCQ_PROP_SIGNAL_SAFE | SYNCQ_PROP_PROCESS_SHARED);
