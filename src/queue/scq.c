/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * scq.c — SCQ: scalable circular queue with fetch-and-add and single-width
 * CAS.
 *
 * Contract
 *   Source:      Ruslan Nikolaev, "A Scalable, Portable, and Memory-Efficient
 *                Lock-Free FIFO Queue", DISC 2019: Figure 8 (SCQ: enqueue,
 *                dequeue, catchup, the threshold against livelock), and §5's
 *                queue of pointers built from two index queues (aq: indices
 *                of filled slots, fq: indices of free slots) around an array
 *                of n slots. 004 §III cites it as the FAA-based state of the
 *                art. (Not one of the five papers; written from the paper's
 *                pseudo-code as recalled: see Deviations.)
 *   Progress:    lock-free (the threshold bounds a dequeuer's tries after
 *                the last enqueue).
 *   Atomics:     uncontended enqueue: fq dequeue (1 FAA + 1 OR, + loads of
 *                Threshold and the entry) + aq enqueue (1 FAA + 1 CAS, +
 *                the entry and Threshold loads); dequeue: the same
 *                mirrored. EMPTY: 1 FAA (Head) + 1 CAS (entry) + catchup
 *                CAS (Tail) + 1 FAA (Threshold), until Threshold < 0.
 *   Memory:      caller's storage (a header of 13 cache lines + 5 words per
 *                item of capacity); never allocates.
 *   Signal-safe: yes as an index queue; the pointer queue's slot hand-over
 *                (write slot, then publish its index) is safe too; a
 *                dequeuer's wait for an enqueuer it overtook is bounded
 *                (SYNCQ_SCQ_DEQ_WAIT pauses), so a handler that interrupts
 *                an enqueue and dequeues the same queue carries on.
 *   Process-shared: yes (no internal pointers). Each operation reads the
 *                header's geometry (n, order, remap_shift) once into a
 *                local copy (relaxed atomic loads) and checks it is one
 *                init writes (n = 2^k, 2 <= n <= 2^40, order = log2(2n), remap_shift 0 or the
 *                line shift), else SYNCQ_EINVAL; only the copy is used,
 *                so a header another process rewrites meanwhile cannot
 *                make a shift of 64 or an index past the rings. An index
 *                taken from a ring that is neither a slot (< n) nor
 *                bottom is SYNCQ_EINVAL too (one compare: bottom >= n).
 *                The caller guarantees the mapping holds
 *                SYNCQ_QUEUE_SCQ_BYTES(n) for the n in the header. A
 *                process that writes the entries can still make
 *                operations retry without end (as one that holds a lock
 *                blocks it), never reach outside the storage.
 *   Limits:      capacity n a power of two, 2 <= n <= 2^40; items non-NULL.
 *   Linearizable: the index rings are; the pointer queue is not at FULL: a
 *                dequeue that has taken its index from aq but not yet given
 *                it back to fq makes a concurrent enqueue see FULL with n-1
 *                items in the queue. Items come out FIFO; EMPTY is
 *                linearizable. The linearizability runs check it with a
 *                capacity no history can fill.
 *   Entries:     64 bits: cycle (high bits, compared modulo their width),
 *                is-safe (1 bit), index (order = log2(2n) bits, all ones =
 *                the empty index "bottom").
 *   Names:       this is the form 004 §VI calls SCQD (pointers through an
 *                index indirection); syncq/queue/scqd.h gives it that name.
 *                SCQ2 (src/queue/scq2.c) holds the pointers in the ring.
 *   Deviations:  (1) none from Figure 8's steps: consume is the paper's
 *                atomic OR, catchup its CAS loop, Threshold reset to 3n-1
 *                on enqueue only when it differs, as in the figure (and in
 *                the authors' code). The changes below are scaling
 *                measures from the paper's §5 and its authors' code.
 *                (2) A dequeuer that meets an empty, safe entry of an older
 *                cycle while Tail > its ticket (the enqueuer holding the
 *                same ticket is between its FAA and its CAS) re-reads it up
 *                to SYNCQ_SCQ_DEQ_WAIT times before invalidating it; the
 *                authors' code waits likewise (longer). Before, it
 *                invalidated at once and the enqueuer had to take another
 *                ticket: whenever consumers run level with producers (the
 *                queue near empty, as in dg25-prodcons), each overtaking
 *                dequeuer cost an enqueuer a ticket, an entry CAS and a
 *                Tail FAA more, and itself a catchup CAS on Tail. Bounded,
 *                because under oversubscription the enqueuer may be
 *                preempted.
 *                (3) Head, Tail and Threshold of each ring are two lines
 *                apart (an unused line between), so x86's adjacent-line
 *                prefetcher, which moves 128-byte pairs, does not couple
 *                producers' Tail with consumers' Head; before, each had a
 *                line of its own, neighbours.
 *                (4) enqueue and dequeue check the magic word (SYNCQ_EINVAL
 *                on storage never initialised or destroyed).
 *                (5) Cache remapping (scq_common.h), only for queues made
 *                by syncq_queue_scq_init_remapped ("scq-remap"): ring
 *                positions rotated so consecutive tickets use different
 *                lines, and the item slots handed out in remapped order.
 *                Without it, eight consecutive tickets taken at the same
 *                moment by eight threads CAS eight entries of one line
 *                (and write eight slots of one line), which the threads
 *                then take in turn: the false sharing the paper's
 *                remapping exists for. With it, one producer and one
 *                consumer lose their batching (about three line transfers
 *                an item instead of three per eight).
 *   Tried, not kept: (a) remapping by default: on 2 cores it took
 *                dg25-prodcons N = 1 from a median of 39-67 to 11-40
 *                Mops/s (15 samples each, interleaved with the unchanged
 *                build); N = 8 (16 threads on 2 cores) was unchanged. It
 *                stays available as "scq-remap", so a many-core machine
 *                can show whether it pays at N = 8. (b) Answering EMPTY
 *                from a Head/Tail comparison before the FAA (Figure 8's
 *                test Tail <= H + 1, made before taking a ticket):
 *                correct, and it spares an empty poll four writes, but on
 *                2 cores it made N = 1 about 10x slower: a cheap failed
 *                poll makes the lab's spin-then-yield consumer give its
 *                core away sooner.
 *   Measured:    2-core development machine (load average 20-50 from other
 *                work), dg25-prodcons, medians of 15 samples interleaved
 *                with the unchanged build: (2)+(3) took N = 1 from 39 to
 *                59 Mops/s and N = 8 from 14.7 to 19.3. Whether SCQ
 *                reaches its aim at N = 8 on 16 cores (and whether
 *                "scq-remap" beats it there) can only be judged on a
 *                many-core machine.
 *   Stats:       cas_attempts, cas_failures; deq_waits,
 *                deq_wait_pauses, deq_waits_out (a dequeue's wait of up to
 *                SYNCQ_SCQ_DEQ_WAIT relaxes for its ticket's enqueuer, on
 *                either ring: an enqueue dequeues its free index from fq),
 *                enq_cells_lost (enqueue tickets whose entry held no
 *                index: a dequeuer had passed it).
 */
#include "syncq/queue/scq.h"

#include "../stats_internal.h"
#include "scq_common.h"
#include "syncq/queue.h"

#define SCQ_MAGIC UINT64_C(0x5343515545554531)

#define SCQ_LINE_SHIFT SYNCQ_SCQ_LINE_SHIFT(sizeof(uint64_t))

/* n: the checked capacity (scq_geometry), never re-read from the header */
static inline _Atomic(uint64_t) *entries_aq(syncq_queue_scq *q) { return (_Atomic(uint64_t) *)(void *)(q + 1); }
static inline _Atomic(uint64_t) *entries_fq(syncq_queue_scq *q, uint64_t n) { return entries_aq(q) + 2 * n; }
static inline _Atomic(void *) *slots_of(syncq_queue_scq *q, uint64_t n) {
  return (_Atomic(void *) *)(void *)(entries_fq(q, n) + 2 * n);
}

typedef struct ring_view {
  syncq_queue_scq_ring *r;
  _Atomic(uint64_t) *e;
  uint64_t n;     /* capacity; the ring has 2n entries */
  uint32_t order; /* log2(2n) */
  uint32_t shift; /* remapping: 0 (identity) or SCQ_LINE_SHIFT */
} ring_view;

static inline uint64_t remap(uint64_t i, uint32_t bits, uint32_t shift) { return syncq_scq_remap(i, bits, shift); }

static inline uint64_t bottom(const ring_view *v) { return (UINT64_C(1) << v->order) - 1; }
static inline uint64_t e_index(const ring_view *v, uint64_t e) { return e & bottom(v); }
static inline uint64_t e_safe(const ring_view *v, uint64_t e) { return (e >> v->order) & 1; }
static inline uint64_t e_cycle(const ring_view *v, uint64_t e) { return e >> (v->order + 1); }
static inline uint64_t make_entry(const ring_view *v, uint64_t cycle, uint64_t safe, uint64_t index) {
  return (cycle << (v->order + 1)) | (safe << v->order) | index;
}
/* cycle of a Head/Tail counter, truncated to the entry's cycle bits */
static inline uint64_t c_cycle(const ring_view *v, uint64_t counter) {
  return (counter >> v->order) & (UINT64_MAX >> (v->order + 1));
}
/* a < b for cycles modulo 2^(64 - order - 1) */
static inline bool cycle_lt(const ring_view *v, uint64_t a, uint64_t b) {
  return (int64_t)((a - b) << (v->order + 1)) < 0;
}

static void ring_init(ring_view *v) {
  uint64_t two_n = 2 * v->n;
  atomic_init(&v->r->tail, two_n); /* cycle 1: entries start at cycle 0 */
  atomic_init(&v->r->head, two_n);
  atomic_init(&v->r->threshold, -1);
  for (uint64_t i = 0; i < two_n; i++) atomic_init(&v->e[i], make_entry(v, 0, 1, bottom(v)));
}

/* Figure 8, enqueue (index < n). */
static void ring_enqueue(ring_view *v, uint64_t index) {
  for (;;) {
    uint64_t T = atomic_fetch_add(&v->r->tail, 1);
    SYNCQ_RACE_POINT("queue.scq.enqueue.ticket"); /* a ticket held, its entry not yet written */
    _Atomic(uint64_t) *ent = &v->e[remap(T, v->order, v->shift)];
    /* acquire: pairs with the CAS/OR of the last writer of the entry. */
    uint64_t E = atomic_load_explicit(ent, memory_order_acquire);
    for (;;) {
      if (cycle_lt(v, e_cycle(v, E), c_cycle(v, T)) && e_index(v, E) == bottom(v) &&
          (e_safe(v, E) || atomic_load(&v->r->head) <= T)) {
        SYNCQ_STAT_INC(cas_attempts);
        if (!atomic_compare_exchange_strong(ent, &E, make_entry(v, c_cycle(v, T), 1, index))) {
          SYNCQ_STAT_INC(cas_failures);
          continue; /* retry with the entry's new value */
        }
        const int64_t want = (int64_t)(3 * v->n - 1);
        /* Written only when it differs (Figure 8), so the enqueuers of a busy queue read a shared line instead of each
         * taking it exclusive. seq_cst: the store must be visible before
         * this enqueue returns, or a dequeue that starts later could still
         * read a negative threshold and answer EMPTY over this item. */
        if (atomic_load(&v->r->threshold) != want) atomic_store(&v->r->threshold, want);
        return;
      }
      if (e_index(v, E) == bottom(v)) SYNCQ_STAT_INC(enq_cells_lost); /* no index in it: a dequeuer passed it */
      break;                                                          /* this entry cannot take it: next ticket */
    }
  }
}

static void catchup(ring_view *v, uint64_t tail, uint64_t head) {
  while (!atomic_compare_exchange_strong(&v->r->tail, &tail, head)) {
    head = atomic_load(&v->r->head);
    tail = atomic_load(&v->r->tail);
    if (tail >= head) break;
  }
}

/* A dequeue's wait for its ticket's enqueuer, once it is over: one wait
 * and its relaxes when there was one, and whether it ran out (`seen`: its
 * last look found the write, even after the last relax; statistics only). */
static inline void count_wait(unsigned waited, bool seen) {
  if (waited > 0) {
    SYNCQ_STAT_INC(deq_waits);
    SYNCQ_STAT_ADD(deq_wait_pauses, waited);
    if (!seen && waited >= SYNCQ_SCQ_DEQ_WAIT) SYNCQ_STAT_INC(deq_waits_out);
  }
  (void)waited, (void)seen;
}

/* Figure 8, dequeue: an index, or bottom when empty. */
static uint64_t ring_dequeue(ring_view *v) {
  if (atomic_load(&v->r->threshold) < 0) return bottom(v);
  for (;;) {
    uint64_t H = atomic_fetch_add(&v->r->head, 1);
    SYNCQ_RACE_POINT("queue.scq.dequeue.ticket"); /* a ticket held, its entry not yet read */
    _Atomic(uint64_t) *ent = &v->e[remap(H, v->order, v->shift)];
    unsigned waited = 0;
    /* acquire: pairs with the enqueuer's CAS that put an index here. */
    uint64_t E = atomic_load_explicit(ent, memory_order_acquire);
    for (;;) {
      if (e_cycle(v, E) == c_cycle(v, H)) {
        /* consume: set the index bits to bottom (Atomic_OR) */
        atomic_fetch_or(ent, bottom(v));
        count_wait(waited, true);
        return e_index(v, E);
      }
      if (e_index(v, E) == bottom(v) && e_safe(v, E) && cycle_lt(v, e_cycle(v, E), c_cycle(v, H)) &&
          waited < SYNCQ_SCQ_DEQ_WAIT && (waited > 0 || atomic_load(&v->r->tail) > H)) {
        /* Empty and safe, and the enqueuer with ticket H has taken it
         * (Tail > H): it is between its FAA and its CAS, and may use this
         * entry (an unsafe one it would pass over: Head > H). Invalidating the entry now
         * would send it round for another ticket, and under load every
         * dequeuer that overtakes an enqueuer does so; wait a little. */
        waited++;
        syncq_pr_relax();
        SYNCQ_RACE_POINT("queue.scq.dequeue.wait"); /* tests: the enqueuer writes before this look */
        /* acquire: as above */
        E = atomic_load_explicit(ent, memory_order_acquire);
        continue;
      }
      uint64_t New = make_entry(v, e_cycle(v, E), 0, e_index(v, E)); /* an old item: mark unsafe */
      if (e_index(v, E) == bottom(v)) New = make_entry(v, c_cycle(v, H), e_safe(v, E), bottom(v));
      if (cycle_lt(v, e_cycle(v, E), c_cycle(v, H))) {
        SYNCQ_STAT_INC(cas_attempts);
        if (!atomic_compare_exchange_strong(ent, &E, New)) {
          SYNCQ_STAT_INC(cas_failures);
          continue;
        }
      }
      count_wait(waited, false);
      break;
    }
    uint64_t T = atomic_load(&v->r->tail);
    if (T <= H + 1) {
      catchup(v, T, H + 1);
      atomic_fetch_sub(&v->r->threshold, 1);
      return bottom(v);
    }
    if (atomic_fetch_sub(&v->r->threshold, 1) <= 0) return bottom(v);
  }
}

/* The geometry of a queue, read once from its header: the shared storage
 * may be written by another process, so the words that are shifts (order),
 * bounds (n) and rotations (remap_shift) are copied and checked here and
 * only the copy is used (Process-shared, in the contract). */
typedef struct scq_geometry {
  uint64_t n;
  uint32_t order, shift;
} scq_geometry;

/* Is the magic init's? relaxed: a header word init wrote before the queue
 * was handed to its users (the creator's publication orders it); one load,
 * compared and not used otherwise. */
static inline bool magic_ok(const syncq_queue_scq *q) {
  return atomic_load_explicit(&q->magic, memory_order_relaxed) == SCQ_MAGIC;
}

/* False unless the header is one that init writes: 2 <= n <= 2^40 a power
 * of two, order = log2(2n), remap_shift 0 or SCQ_LINE_SHIFT. Whether the
 * storage really holds SYNCQ_QUEUE_SCQ_BYTES(n) bytes the callee cannot
 * know: the caller guarantees it (the mapping is the one init was given). */
static inline bool scq_geometry_read(const syncq_queue_scq *q, scq_geometry *g) {
  /* relaxed (all three): header words init wrote before the queue was
   * handed to its users (the creator's publication orders them); checked
   * below, and only these copies are used. One load each: the values
   * checked are the values used, whatever another process writes meanwhile. */
  g->n = atomic_load_explicit(&q->n, memory_order_relaxed);
  g->order = atomic_load_explicit(&q->order, memory_order_relaxed);
  g->shift = atomic_load_explicit(&q->remap_shift, memory_order_relaxed);
  return g->order - 2u <= 39u && g->n == UINT64_C(1) << (g->order - 1u) &&
         (g->shift == 0 || g->shift == SCQ_LINE_SHIFT);
}

static inline ring_view view_aq(syncq_queue_scq *q, const scq_geometry *g) {
  return (ring_view){&q->aq, entries_aq(q), g->n, g->order, g->shift};
}
static inline ring_view view_fq(syncq_queue_scq *q, const scq_geometry *g) {
  return (ring_view){&q->fq, entries_fq(q, g->n), g->n, g->order, g->shift};
}

int syncq_queue_scq_bytes(size_t capacity, size_t *bytes) {
  if (bytes == NULL || capacity < 2 || (capacity & (capacity - 1)) != 0) return SYNCQ_EINVAL;
  if (capacity > ((size_t)1 << 40) || capacity > (SIZE_MAX - sizeof(syncq_queue_scq)) / (5 * sizeof(uint64_t)))
    return SYNCQ_EINVAL;
  *bytes = SYNCQ_QUEUE_SCQ_BYTES(capacity);
  return SYNCQ_OK;
}

static int scq_init(syncq_queue_scq *q, size_t capacity, uint32_t remap_shift) {
  size_t bytes;
  if (q == NULL || ((uintptr_t)q % _Alignof(syncq_queue_scq)) != 0) return SYNCQ_EINVAL;
  if (syncq_queue_scq_bytes(capacity, &bytes) != SYNCQ_OK) return SYNCQ_EINVAL;
  scq_geometry g = {capacity, 0, remap_shift};
  while ((UINT64_C(1) << g.order) < 2 * (uint64_t)capacity) g.order++;
  atomic_init(&q->n, g.n);
  atomic_init(&q->order, g.order);
  atomic_init(&q->remap_shift, g.shift);
  ring_view aq = view_aq(q, &g), fq = view_fq(q, &g);
  ring_init(&aq);
  ring_init(&fq);
  _Atomic(void *) *slots = slots_of(q, g.n);
  uint32_t slot_bits = g.order - 1; /* log2(n) */
  for (size_t i = 0; i < capacity; i++) atomic_init(&slots[i], NULL);
  /* Every slot starts free. Remapped queues hand them out in remapped
   * order: consecutive enqueuers get slots on different cache lines, and
   * since slots come back to fq in about the order they left, they stay
   * spread. */
  for (size_t i = 0; i < capacity; i++) ring_enqueue(&fq, remap(i, slot_bits, remap_shift));
  atomic_init(&q->magic, SCQ_MAGIC);
  return SYNCQ_OK;
}

int syncq_queue_scq_init(syncq_queue_scq *q, size_t capacity) { return scq_init(q, capacity, 0); }
int syncq_queue_scq_init_remapped(syncq_queue_scq *q, size_t capacity) { return scq_init(q, capacity, SCQ_LINE_SHIFT); }

int syncq_queue_scq_destroy(syncq_queue_scq *q) {
  if (q == NULL || !magic_ok(q)) return SYNCQ_EINVAL;
  /* relaxed: no operation may run on a queue being destroyed (the caller's
   * precondition); one that does reads the old magic or none */
  atomic_store_explicit(&q->magic, 0, memory_order_relaxed);
  return SYNCQ_OK;
}

/* An index taken from a ring: below n, a slot; bottom, none (EMPTY or
 * FULL for the caller); anything else was written into the shared entries
 * by something other than this queue's operations. One compare on the fast
 * path: bottom is 2n - 1 >= n. */
#define SCQ_INDEX_OK 0
#define SCQ_INDEX_NONE 1
#define SCQ_INDEX_BAD 2
static inline int index_kind(const ring_view *v, uint64_t i) {
  if (i < v->n) return SCQ_INDEX_OK;
  return i == bottom(v) ? SCQ_INDEX_NONE : SCQ_INDEX_BAD;
}

int syncq_queue_scq_enqueue(syncq_queue_scq *q, void *item) {
  scq_geometry g;
  if (q == NULL || item == NULL || !magic_ok(q) || !scq_geometry_read(q, &g)) return SYNCQ_EINVAL;
  ring_view fq = view_fq(q, &g), aq = view_aq(q, &g);
  uint64_t i = ring_dequeue(&fq);
  int k = index_kind(&fq, i);
  if (k != SCQ_INDEX_OK) return k == SCQ_INDEX_NONE ? SYNCQ_FULL : SYNCQ_EINVAL;
  /* relaxed: published by the seq_cst CAS that puts i into aq, which the
   * dequeuer reads with acquire before reading the slot. */
  atomic_store_explicit(&slots_of(q, g.n)[i], item, memory_order_relaxed);
  ring_enqueue(&aq, i);
  return SYNCQ_OK;
}

int syncq_queue_scq_dequeue(syncq_queue_scq *q, void **item) {
  scq_geometry g;
  if (q == NULL || item == NULL || !magic_ok(q) || !scq_geometry_read(q, &g)) return SYNCQ_EINVAL;
  ring_view fq = view_fq(q, &g), aq = view_aq(q, &g);
  uint64_t i = ring_dequeue(&aq);
  int k = index_kind(&aq, i);
  if (k != SCQ_INDEX_OK) return k == SCQ_INDEX_NONE ? SYNCQ_EMPTY : SYNCQ_EINVAL;
  /* relaxed: ordered after the enqueuer's store by the acquire load of the
   * aq entry that gave us i; before our fq enqueue (seq_cst) hands the slot on. */
  *item = atomic_load_explicit(&slots_of(q, g.n)[i], memory_order_relaxed);
  ring_enqueue(&fq, i);
  return SYNCQ_OK;
}

SYNCQ_QUEUE_REGISTER(
  scq, "scq", "SCQ: scalable circular queue (fetch-and-add, single-width CAS), pointers by indirection (004: SCQD)",
  "Nikolaev 2019 (DISC), Figure 8; cited by 004 §III", LOCK_FREE,
  SYNCQ_PROP_FIFO | SYNCQ_PROP_BOUNDED | SYNCQ_PROP_SIGNAL_SAFE | SYNCQ_PROP_PROCESS_SHARED);

SYNCQ_QUEUE_REGISTER_FNS(scq_remap, "scq-remap", "SCQ with Nikolaev's cache remapping of ring entries and item slots",
                         "Nikolaev 2019 (DISC), Figure 8 and its cache remapping", LOCK_FREE,
                         SYNCQ_PROP_FIFO | SYNCQ_PROP_BOUNDED | SYNCQ_PROP_SIGNAL_SAFE | SYNCQ_PROP_PROCESS_SHARED,
                         syncq_queue_scq, syncq_queue_scq_bytes, syncq_queue_scq_init_remapped, syncq_queue_scq_destroy,
                         syncq_queue_scq_enqueue, syncq_queue_scq_dequeue);
