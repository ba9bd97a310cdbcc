/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * naive_ring.c — the naive lockless ring baseline of NBLFQ.
 *
 * Contract
 *   Source:      Denis & Goedefroit (004) §II-B b): "the head is incremented
 *                using a compare-and-swap to reserve a cell, then the
 *                content is written in the buffer; to dequeue ... the tail
 *                is consumed by incrementing the tail, then the element is
 *                read" (PUK's "atomic" lockless queue).
 *   Progress:    blocking (lockless, not lock-free): between the CAS that
 *                reserves an index and the write of its cell, an operation
 *                is "halfway", and the operation that next needs that cell
 *                waits for it (spins, then yields). An enqueue that reads
 *                tail past head reads both again (spinning, then yielding
 *                every SPINS_BEFORE_YIELD retries): in a queue only its
 *                operations wrote, its head read went stale because others
 *                completed operations meanwhile, and the next read ends it;
 *                a process that wrote tail past head holds it there.
 *   Atomics:     uncontended: enqueue 2 loads + 1 CAS + 1 load + 1 store;
 *                dequeue the same.
 *   Deviation:   each cell carries a turn number (the index whose operation
 *                may use it next) besides the item. With a bare pointer
 *                cell, as the plain description reads, an operation a whole
 *                ring ahead can take or overwrite a cell of the previous
 *                round (two enqueuers of i and i + S both see the cell
 *                empty and both write): this driver lost items that way.
 *   Memory:      caller's storage; never allocates.
 *   Signal-safe: no: a handler that interrupts a halfway operation and
 *                waits for its cell deadlocks (the reason 004 replaces it).
 *   Process-shared: yes (no internal pointers). Each operation reads the
 *                header's mask once (a relaxed atomic load into a local,
 *                so the mask checked is the mask used) and checks it (the
 *                magic, stored XOR the mask by init, so a mask changed
 *                alone fails; S - 1 for a power of two S init accepts),
 *                else SYNCQ_EINVAL; only that copy indexes the cells. The caller guarantees the
 *                mapping holds SYNCQ_QUEUE_NAIVE_RING_BYTES(S). A process
 *                that writes a cell's turn, head or tail can make an
 *                operation wait without end (as a halfway operation does):
 *                for a turn nobody will store (a cell written, or an index
 *                reserved past the ones enqueued), or, in an enqueue, in
 *                its retries (spinning, then yielding) while tail reads
 *                past head.
 *   Limits:      capacity a power of two >= 2; items non-NULL; indices are
 *                64-bit counters (no wrap in practice).
 *   Stats:       cas_attempts, cas_failures, yields (while waiting for a
 *                halfway operation, or retrying while tail reads past
 *                head).
 */
#include "syncq/queue/naive_ring.h"

#include "../stats_internal.h"
#include "syncq/platform.h"
#include "syncq/wait.h"
#include "syncq/queue.h"
#include "../race_internal.h" /* SYNCQ_RACE_POINT: nothing outside race tests */

#define NAIVE_MAGIC UINT64_C(0x4e41495645524e47)
#define SPINS_BEFORE_YIELD 64u

static inline syncq_queue_naive_ring_cell *cells_of(syncq_queue_naive_ring *q) {
  return (syncq_queue_naive_ring_cell *)(void *)(q + 1);
}

/* The most cells syncq_queue_naive_ring_bytes accepts. */
#define NAIVE_MAX_CELLS ((uint64_t)((SIZE_MAX - sizeof(syncq_queue_naive_ring)) / sizeof(syncq_queue_naive_ring_cell)))

/* The mask, read once from the header and checked: 0 (no initialised
 * ring has it) unless the mask is S - 1 for a power of two
 * 2 <= S <= NAIVE_MAX_CELLS and the magic, which init stores XOR the mask, is
 * init's (a mask changed alone, even into another well-formed size past
 * the storage, no longer matches it). Another process may write the
 * shared header; the mask bounds every cell index, so only this copy is
 * used. */
static inline uint64_t checked_mask(const syncq_queue_naive_ring *q) {
  /* relaxed (both): header words init wrote before the queue was handed to
   * its users (the creator's publication orders them); checked below, and
   * only these copies are used. One load each: the value checked is the
   * value used, whatever another process writes meanwhile. */
  const uint64_t mask = atomic_load_explicit(&q->mask, memory_order_relaxed);
  const uint64_t magic = atomic_load_explicit(&q->magic, memory_order_relaxed);
  return (magic ^ mask) == NAIVE_MAGIC && mask - 1u < NAIVE_MAX_CELLS - 1u && (mask & (mask + 1u)) == 0 ? mask : 0;
}

int syncq_queue_naive_ring_bytes(size_t capacity, size_t *bytes) {
  if (bytes == NULL || capacity < 2 || (capacity & (capacity - 1)) != 0) return SYNCQ_EINVAL;
  if (capacity > (SIZE_MAX - sizeof(syncq_queue_naive_ring)) / sizeof(syncq_queue_naive_ring_cell)) return SYNCQ_EINVAL;
  *bytes = SYNCQ_QUEUE_NAIVE_RING_BYTES(capacity);
  return SYNCQ_OK;
}

int syncq_queue_naive_ring_init(syncq_queue_naive_ring *q, size_t capacity) {
  size_t bytes;
  if (q == NULL || ((uintptr_t)q % _Alignof(syncq_queue_naive_ring)) != 0) return SYNCQ_EINVAL;
  if (syncq_queue_naive_ring_bytes(capacity, &bytes) != SYNCQ_OK) return SYNCQ_EINVAL;
  atomic_init(&q->head, 0);
  atomic_init(&q->tail, 0);
  atomic_init(&q->mask, (uint64_t)capacity - 1);
  atomic_init(&q->magic, NAIVE_MAGIC ^ ((uint64_t)capacity - 1)); /* bound to the mask: see checked_mask */
  syncq_queue_naive_ring_cell *cells = cells_of(q);
  for (size_t i = 0; i < capacity; i++) {
    atomic_init(&cells[i].turn, (uint64_t)i);
    cells[i].data = NULL;
  }
  return SYNCQ_OK;
}

int syncq_queue_naive_ring_destroy(syncq_queue_naive_ring *q) {
  if (q == NULL) return SYNCQ_EINVAL;
  /* relaxed (both): as in checked_mask */
  if ((atomic_load_explicit(&q->magic, memory_order_relaxed) ^ atomic_load_explicit(&q->mask, memory_order_relaxed)) !=
      NAIVE_MAGIC)
    return SYNCQ_EINVAL;
  /* relaxed: no operation may run on a queue being destroyed (the caller's
   * precondition); one that does reads the old magic or none */
  atomic_store_explicit(&q->magic, 0, memory_order_relaxed);
  return SYNCQ_OK;
}

/* One try at reserving an index: SYNCQ_OK with *h, SYNCQ_FULL,
 * TICKET_LOST (the CAS failed: try again at once) or TICKET_STALE (tail
 * read past head). */
enum { TICKET_LOST = 100, TICKET_STALE };
static inline int try_reserve(syncq_queue_naive_ring *q, uint64_t mask, uint64_t *h) {
  *h = atomic_load(&q->head); /* seq_cst loads: head is read before tail */
  uint64_t t = atomic_load(&q->tail);
  if (t > *h) return TICKET_STALE;      /* head went stale while we read tail, or tail was written past it */
  if (*h - t > mask) return SYNCQ_FULL; /* tail read after head: if full then, full now */
  SYNCQ_STAT_INC(cas_attempts);
  if (atomic_compare_exchange_strong(&q->head, h, *h + 1)) return SYNCQ_OK;
  SYNCQ_STAT_INC(cas_failures);
  return TICKET_LOST;
}

/* Write the item into the cell of reserved index h. */
static inline void fill(syncq_queue_naive_ring *q, uint64_t mask, uint64_t h, void *item) {
  syncq_queue_naive_ring_cell *cell = &cells_of(q)[h & mask];
  uint32_t spins = 0;
  /* acquire: pairs with the release store of turn by the dequeue of index
   * h - S, which may still be halfway (reserved, not yet emptied). */
  while (atomic_load_explicit(&cell->turn, memory_order_acquire) != h)
    syncq_wait_spin_yield(&spins, SPINS_BEFORE_YIELD);
  cell->data = item;
  /* release: pairs with the dequeuer's acquire load of turn; publishes data. */
  atomic_store_explicit(&cell->turn, h + 1, memory_order_release);
}

/* The enqueue once tail has read past head: it tries again, spinning, then
 * yielding every SPINS_BEFORE_YIELD tries while tail stays past head (a
 * writer of the shared tail may hold it there). Out of line: the enqueue's
 * own reservation loop keeps no call. */
static __attribute__((noinline, cold)) int enqueue_stale(syncq_queue_naive_ring *q, uint64_t mask, void *item) {
  uint32_t stale = 0;
  uint64_t h;
  int r = TICKET_STALE;
  while (r != SYNCQ_OK) {
    if (r == SYNCQ_FULL) return r;
    if (r == TICKET_STALE) {
      SYNCQ_RACE_POINT("queue.naive_ring.enqueue.stale");
      syncq_wait_spin_yield(&stale, SPINS_BEFORE_YIELD);
    }
    r = try_reserve(q, mask, &h);
  }
  fill(q, mask, h, item);
  return SYNCQ_OK;
}

int syncq_queue_naive_ring_enqueue(syncq_queue_naive_ring *q, void *item) {
  if (q == NULL || item == NULL) return SYNCQ_EINVAL;
  const uint64_t mask = checked_mask(q);
  if (mask == 0) return SYNCQ_EINVAL;
  uint64_t h;
  int r;
  do r = try_reserve(q, mask, &h);
  while (r == TICKET_LOST);
  if (r == TICKET_STALE) return enqueue_stale(q, mask, item);
  if (r == SYNCQ_FULL) return r;
  fill(q, mask, h, item);
  return SYNCQ_OK;
}

int syncq_queue_naive_ring_dequeue(syncq_queue_naive_ring *q, void **item) {
  if (q == NULL || item == NULL) return SYNCQ_EINVAL;
  const uint64_t mask = checked_mask(q);
  if (mask == 0) return SYNCQ_EINVAL;
  uint64_t t;
  for (;;) { /* reserve index t (seq_cst loads: tail is read before head) */
    t = atomic_load(&q->tail);
    uint64_t h = atomic_load(&q->head);
    if (t == h) return SYNCQ_EMPTY; /* head read after tail: empty at that moment */
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(&q->tail, &t, t + 1)) break;
    SYNCQ_STAT_INC(cas_failures);
  }
  syncq_queue_naive_ring_cell *cell = &cells_of(q)[t & mask];
  uint32_t spins = 0;
  /* acquire: pairs with the enqueuer's release store of turn, which may
   * still be halfway (index reserved, item not yet written). */
  while (atomic_load_explicit(&cell->turn, memory_order_acquire) != t + 1)
    syncq_wait_spin_yield(&spins, SPINS_BEFORE_YIELD);
  *item = cell->data;
  /* release: pairs with the acquire load of turn by the enqueuer of t + S. */
  atomic_store_explicit(&cell->turn, t + mask + 1, memory_order_release);
  return SYNCQ_OK;
}

/* Not SYNCQ_PROP_SPINS_ON_PREEMPTED: an operation does wait for a halfway
 * one's cell, but yields every SPINS_BEFORE_YIELD spins. */
SYNCQ_QUEUE_REGISTER(naive_ring, "naive-ring", "naive lockless ring: reserve an index by CAS, then write", "004 §II-B",
                     BLOCKING,
                     SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_BOUNDED | SYNCQ_PROP_PROCESS_SHARED);
