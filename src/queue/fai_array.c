/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fai_array.c — the fetch-and-increment array queue of Nikolopoulos &
 * Papatheodorou.
 *
 * Contract
 *   Source:      003 §3.2, Figure 1 ("customized lock-free queue
 *                implementation with f&ops"): enqueue takes a ticket with
 *                fetch-and-increment on head and stores the item in that
 *                slot; dequeue, while head != tail, takes the item in slot
 *                tail (exchange with zero), and if it got one increments
 *                tail. On the Origin2000 head and tail were at-memory
 *                fetchops; here they are ordinary cache lines.
 *   Progress:    blocking, as the paper says ("not powerful enough to make
 *                our lock-free queue non-blocking"): a dequeuer waits for
 *                the enqueuer that holds the ticket at tail to store its
 *                item, and dequeuers take the slots strictly in order.
 *                Enqueue waits for no operation; it reads head and tail
 *                again while tail reads past head (spinning, then yielding
 *                every SPINS_BEFORE_YIELD retries): in a queue only its
 *                operations wrote, its head read went stale because others
 *                completed operations meanwhile, and the next read ends it;
 *                a process that wrote tail past head holds it there.
 *   Atomics:     uncontended enqueue: 2 loads + 1 CAS + 1 store; dequeue:
 *                3 loads + 1 CAS + 1 fetch-and-add.
 *   Memory:      caller's storage; never allocates.
 *   Signal-safe: no (waits for other threads).
 *   Process-shared: yes. Each operation reads the header's mask and shift
 *                once (relaxed atomic loads into locals) and checks them
 *                (the magic, shift = log2(S), mask = S - 1, S within what
 *                init accepts), else SYNCQ_EINVAL; only those copies index
 *                the cells and shift the tickets. The caller guarantees the
 *                mapping holds SYNCQ_QUEUE_FAI_ARRAY_BYTES(S). A process
 *                that writes head, tail or a cell can make an operation
 *                wait without end, as an enqueuer stalled on its ticket
 *                does: a dequeue waits (spins, then yields) for the item of
 *                the ticket at tail, which no enqueue stores once head was
 *                moved past the tickets taken, tail moved off them or the
 *                cell's round changed; an enqueue retries (spinning, then
 *                yielding) while tail reads past head, which in a queue
 *                only its operations wrote lasts until head is read again.
 *                Indices stay within the ring whatever is written.
 *   Limits:      capacity a power of two >= 2; items non-NULL, within 48
 *                bits.
 *   Deviations:  the paper's array is unbounded (slot = ticket); a ring of
 *                S cells reuses slots, so (1) enqueue takes its ticket by a
 *                CAS on head that refuses to pass head - tail >= S (FULL)
 *                instead of a plain fetch-and-increment: a plain ticket on a
 *                full ring has no slot and must wait for a dequeue that may
 *                never come (the linearizability runs hung on exactly
 *                that); (2) each cell
 *                carries 16 bits of the ticket's round beside the item, and
 *                dequeue takes it by CAS on (item, round) instead of
 *                exchange-with-zero, so a dequeuer with a stale tail cannot
 *                take the next round's item.
 *   Stats:       cas_attempts, cas_failures, yields (a dequeue waiting, an
 *                enqueue retrying while tail reads past head).
 */
#include "syncq/queue/fai_array.h"

#include "../stats_internal.h"
#include "syncq/platform.h"
#include "syncq/wait.h"
#include "syncq/queue.h"
#include "../race_internal.h" /* SYNCQ_RACE_POINT: nothing outside race tests */

#define FAI_MAGIC UINT64_C(0x4641494152524159)
#define PTR_BITS 48
#define PTR_MASK ((UINT64_C(1) << PTR_BITS) - 1)
#define SPINS_BEFORE_YIELD 64u

static inline _Atomic(uint64_t) *cells_of(syncq_queue_fai_array *q) { return (_Atomic(uint64_t) *)(void *)(q + 1); }
/* shift: the checked log2(S) (checked_geometry), never re-read */
static inline uint64_t round_of(uint32_t shift, uint64_t ticket) { return (ticket >> shift) & 0xffff; }

/* The most cells syncq_queue_fai_array_bytes accepts. */
#define FAI_MAX_CELLS ((uint64_t)((SIZE_MAX - sizeof(syncq_queue_fai_array)) / sizeof(uint64_t)))

/* The mask and shift, read once from the header and checked: false unless
 * the magic is init's, shift = log2(S) and mask = S - 1 for a power of two
 * 2 <= S <= FAI_MAX_CELLS. Another process may write the shared header;
 * the shift is a shift count and the mask bounds every cell index, so only
 * these copies are used. */
static inline bool checked_geometry(const syncq_queue_fai_array *q, uint64_t *mask, uint32_t *shift) {
  /* relaxed (all three): header words init wrote before the queue was
   * handed to its users (the creator's publication orders them); checked
   * below, and only these copies are used. One load each: the values
   * checked are the values used, whatever another process writes meanwhile. */
  *mask = atomic_load_explicit(&q->mask, memory_order_relaxed);
  *shift = atomic_load_explicit(&q->shift, memory_order_relaxed);
  return atomic_load_explicit(&q->magic, memory_order_relaxed) == FAI_MAGIC && *shift - 1u < 63u &&
         *mask == (UINT64_C(1) << *shift) - 1u && *mask < FAI_MAX_CELLS;
}

int syncq_queue_fai_array_bytes(size_t capacity, size_t *bytes) {
  if (bytes == NULL || capacity < 2 || (capacity & (capacity - 1)) != 0) return SYNCQ_EINVAL;
  if (capacity > (SIZE_MAX - sizeof(syncq_queue_fai_array)) / sizeof(uint64_t)) return SYNCQ_EINVAL;
  *bytes = SYNCQ_QUEUE_FAI_ARRAY_BYTES(capacity);
  return SYNCQ_OK;
}

int syncq_queue_fai_array_init(syncq_queue_fai_array *q, size_t capacity) {
  size_t bytes;
  if (q == NULL || ((uintptr_t)q % _Alignof(syncq_queue_fai_array)) != 0) return SYNCQ_EINVAL;
  if (syncq_queue_fai_array_bytes(capacity, &bytes) != SYNCQ_OK) return SYNCQ_EINVAL;
  atomic_init(&q->head, 0);
  atomic_init(&q->tail, 0);
  uint32_t shift = 0;
  while ((UINT64_C(1) << shift) < (uint64_t)capacity) shift++;
  atomic_init(&q->mask, (uint64_t)capacity - 1);
  atomic_init(&q->shift, shift);
  atomic_init(&q->magic, FAI_MAGIC);
  _Atomic(uint64_t) *c = cells_of(q);
  for (size_t i = 0; i < capacity; i++) atomic_init(&c[i], 0);
  return SYNCQ_OK;
}

int syncq_queue_fai_array_destroy(syncq_queue_fai_array *q) {
  /* relaxed: as in checked_geometry */
  if (q == NULL || atomic_load_explicit(&q->magic, memory_order_relaxed) != FAI_MAGIC) return SYNCQ_EINVAL;
  /* relaxed: no operation may run on a queue being destroyed (the caller's
   * precondition); one that does reads the old magic or none */
  atomic_store_explicit(&q->magic, 0, memory_order_relaxed);
  return SYNCQ_OK;
}

/* One try at the ticket, a fetch-and-increment of head that refuses to
 * pass a full ring: SYNCQ_OK with *h, SYNCQ_FULL, TICKET_LOST (the CAS
 * failed: try again at once) or TICKET_STALE (tail read past head). */
enum { TICKET_LOST = 100, TICKET_STALE };
static inline int try_ticket(syncq_queue_fai_array *q, uint64_t mask, uint64_t *h) {
  *h = atomic_load(&q->head); /* seq_cst loads, head before tail: if full when tail is read, full then */
  uint64_t t = atomic_load(&q->tail);
  if (t > *h) return TICKET_STALE; /* head went stale while we read tail, or tail was written past it */
  if (*h - t > mask) return SYNCQ_FULL;
  SYNCQ_STAT_INC(cas_attempts);
  if (atomic_compare_exchange_weak(&q->head, h, *h + 1)) return SYNCQ_OK;
  SYNCQ_STAT_INC(cas_failures);
  return TICKET_LOST;
}

/* Store the item of ticket h. */
static inline void put(syncq_queue_fai_array *q, uint64_t mask, uint32_t shift, uint64_t bits, uint64_t h) {
  /* tail > h - S was read before the CAS: the dequeue of ticket h - S has
   * emptied our cell and moved tail on (its seq_cst fetch-and-add on tail,
   * read by our seq_cst load, orders its CAS on the cell before our store). */
  /* release: pairs with the dequeuer's acquire load of the cell. */
  atomic_store_explicit(&cells_of(q)[h & mask], bits | (round_of(shift, h) << PTR_BITS), memory_order_release);
}

/* The enqueue once tail has read past head: it tries again, spinning, then
 * yielding every SPINS_BEFORE_YIELD tries while tail stays past head (a
 * writer of the shared tail may hold it there). Out of line: a call inside
 * the enqueue's own loop would make every enqueue save registers for it. */
static __attribute__((noinline, cold)) int enqueue_stale(syncq_queue_fai_array *q, uint64_t mask, uint32_t shift,
                                                         uint64_t bits) {
  uint32_t stale = 0;
  uint64_t h;
  int r = TICKET_STALE;
  while (r != SYNCQ_OK) {
    if (r == SYNCQ_FULL) return r;
    if (r == TICKET_STALE) {
      SYNCQ_RACE_POINT("queue.fai_array.enqueue.stale");
      syncq_wait_spin_yield(&stale, SPINS_BEFORE_YIELD);
    }
    r = try_ticket(q, mask, &h);
  }
  put(q, mask, shift, bits, h);
  return SYNCQ_OK;
}

int syncq_queue_fai_array_enqueue(syncq_queue_fai_array *q, void *item) {
  uint64_t bits = (uint64_t)(uintptr_t)item;
  if (q == NULL || bits == 0 || (bits & ~PTR_MASK) != 0) return SYNCQ_EINVAL;
  uint64_t mask;
  uint32_t shift;
  if (!checked_geometry(q, &mask, &shift)) return SYNCQ_EINVAL;
  uint64_t h;
  int r;
  do r = try_ticket(q, mask, &h);
  while (r == TICKET_LOST);
  if (r == TICKET_STALE) return enqueue_stale(q, mask, shift, bits);
  if (r == SYNCQ_FULL) return r;
  put(q, mask, shift, bits, h);
  return SYNCQ_OK;
}

int syncq_queue_fai_array_dequeue(syncq_queue_fai_array *q, void **item) {
  if (q == NULL || item == NULL) return SYNCQ_EINVAL;
  uint64_t mask;
  uint32_t shift;
  if (!checked_geometry(q, &mask, &shift)) return SYNCQ_EINVAL;
  uint32_t spins = 0;
  for (;;) {
    uint64_t t = atomic_load(&q->tail); /* seq_cst, tail before head: empty when head is read */
    if (atomic_load(&q->head) == t) return SYNCQ_EMPTY;
    _Atomic(uint64_t) *cell = &cells_of(q)[t & mask];
    /* acquire: pairs with the enqueuer's release store of the item. */
    uint64_t w = atomic_load_explicit(cell, memory_order_acquire);
    if (w != 0 && (w >> PTR_BITS) == round_of(shift, t)) {
      SYNCQ_STAT_INC(cas_attempts);
      if (atomic_compare_exchange_strong(cell, &w, 0)) { /* Figure 1: atomic_clear(q->nodes[slot]) */
        atomic_fetch_add(&q->tail, 1);                   /* Figure 1: atomic_increment(q->tail) */
        *item = (void *)(uintptr_t)(w & PTR_MASK);
        return SYNCQ_OK;
      }
      SYNCQ_STAT_INC(cas_failures);
    } else {
      syncq_wait_spin_yield(&spins, SPINS_BEFORE_YIELD); /* the item of ticket t is not stored yet, or tail moved */
    }
  }
}

/* Not SYNCQ_PROP_SPINS_ON_PREEMPTED: a dequeuer does wait for the enqueuer
 * holding the ticket at tail, but yields every SPINS_BEFORE_YIELD spins. */
SYNCQ_QUEUE_REGISTER(fai_array, "fai-array", "fetch-and-increment array queue (tickets on a ring)",
                     "003 §3.2, Figure 1", BLOCKING,
                     SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_BOUNDED | SYNCQ_PROP_PROCESS_SHARED);
