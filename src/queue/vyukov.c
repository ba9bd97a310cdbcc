/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * vyukov.c — Vyukov's bounded MPMC queue.
 *
 * Contract
 *   Source:      Dmitry Vyukov, "Bounded MPMC queue", 1024cores.net (2010)
 *                (not one of the five papers; one of the array queues 004
 *                §III compares against in spirit, and the queue most
 *                runtimes embed). Each cell holds a sequence number: cell i
 *                is free for the enqueue of position pos when seq == pos,
 *                full for the dequeue of pos when seq == pos + 1.
 *   Progress:    blocking in the strict sense: a producer (consumer) that
 *                claimed a position and stalls before publishing the cell
 *                makes the consumers (producers) of that cell answer EMPTY
 *                (FULL) until it resumes. No operation ever waits.
 *   Linearizable: no, at EMPTY and FULL only: a dequeue can answer EMPTY
 *                while a later-claimed enqueue has already completed (the
 *                earlier claimer has not published yet). Items themselves
 *                come out in claim order (FIFO per producer). The driver
 *                checks order, loss and duplicates; the linearizability
 *                runs skip it for that reason.
 *   Atomics:     uncontended: 2 loads + 1 CAS + 1 store per operation.
 *   Memory:      caller's storage (3 cache lines + 16 bytes per cell);
 *                never allocates.
 *   Signal-safe: no (a handler interrupting a claimed, unpublished cell
 *                would see FULL/EMPTY forever if it waited for it).
 *   Process-shared: yes (no internal pointers). Each operation reads the
 *                header's mask once (a relaxed atomic load into a local,
 *                so the mask checked is the mask used) and checks it (the
 *                magic, stored XOR the mask by init, so a mask changed
 *                alone fails; S - 1 for a power of two S init accepts),
 *                else SYNCQ_EINVAL; only that copy indexes the cells. The
 *                caller guarantees the mapping holds
 *                SYNCQ_QUEUE_VYUKOV_BYTES(S).
 *   Limits:      capacity a power of two >= 2; items non-NULL.
 *   Stats:       cas_attempts, cas_failures.
 */
#include "syncq/queue/vyukov.h"

#include "../stats_internal.h"
#include "syncq/queue.h"
#include "../race_internal.h" /* SYNCQ_RACE_POINT: nothing outside race tests */

#define VYUKOV_MAGIC UINT64_C(0x5659554b4f564d50)

static inline syncq_queue_vyukov_cell *cells_of(syncq_queue_vyukov *q) {
  return (syncq_queue_vyukov_cell *)(void *)(q + 1);
}

/* The most cells syncq_queue_vyukov_bytes accepts. */
#define VYUKOV_MAX_CELLS ((uint64_t)((SIZE_MAX - sizeof(syncq_queue_vyukov)) / sizeof(syncq_queue_vyukov_cell)))

/* The mask, read once from the header and checked: 0 (no initialised
 * queue has it) unless the mask is S - 1 for a power of two
 * 2 <= S <= VYUKOV_MAX_CELLS and the magic, which init stores XOR the mask, is
 * init's (a mask changed alone, even into another well-formed size past
 * the storage, no longer matches it). Another process may write the
 * shared header; the mask bounds every cell index, so only this copy is
 * used. */
static inline uint64_t checked_mask(const syncq_queue_vyukov *q) {
  /* relaxed (both): header words init wrote before the queue was handed to
   * its users (the creator's publication orders them); checked below, and
   * only these copies are used. One load each: the value checked is the
   * value used, whatever another process writes meanwhile. */
  const uint64_t mask = atomic_load_explicit(&q->mask, memory_order_relaxed);
  const uint64_t magic = atomic_load_explicit(&q->magic, memory_order_relaxed);
  return (magic ^ mask) == VYUKOV_MAGIC && mask - 1u < VYUKOV_MAX_CELLS - 1u && (mask & (mask + 1u)) == 0 ? mask : 0;
}

int syncq_queue_vyukov_bytes(size_t capacity, size_t *bytes) {
  if (bytes == NULL || capacity < 2 || (capacity & (capacity - 1)) != 0) return SYNCQ_EINVAL;
  if (capacity > (SIZE_MAX - sizeof(syncq_queue_vyukov)) / sizeof(syncq_queue_vyukov_cell)) return SYNCQ_EINVAL;
  *bytes = SYNCQ_QUEUE_VYUKOV_BYTES(capacity);
  return SYNCQ_OK;
}

int syncq_queue_vyukov_init(syncq_queue_vyukov *q, size_t capacity) {
  size_t bytes;
  if (q == NULL || ((uintptr_t)q % _Alignof(syncq_queue_vyukov)) != 0) return SYNCQ_EINVAL;
  if (syncq_queue_vyukov_bytes(capacity, &bytes) != SYNCQ_OK) return SYNCQ_EINVAL;
  atomic_init(&q->enqueue_pos, 0);
  atomic_init(&q->dequeue_pos, 0);
  atomic_init(&q->mask, (uint64_t)capacity - 1);
  atomic_init(&q->magic, VYUKOV_MAGIC ^ ((uint64_t)capacity - 1)); /* bound to the mask: see checked_mask */
  syncq_queue_vyukov_cell *c = cells_of(q);
  for (size_t i = 0; i < capacity; i++) {
    atomic_init(&c[i].seq, (uint64_t)i);
    c[i].data = NULL;
  }
  return SYNCQ_OK;
}

int syncq_queue_vyukov_destroy(syncq_queue_vyukov *q) {
  if (q == NULL) return SYNCQ_EINVAL;
  /* relaxed (both): as in checked_mask */
  if ((atomic_load_explicit(&q->magic, memory_order_relaxed) ^ atomic_load_explicit(&q->mask, memory_order_relaxed)) !=
      VYUKOV_MAGIC)
    return SYNCQ_EINVAL;
  /* relaxed: no operation may run on a queue being destroyed (the caller's
   * precondition); one that does reads the old magic or none */
  atomic_store_explicit(&q->magic, 0, memory_order_relaxed);
  return SYNCQ_OK;
}

int syncq_queue_vyukov_enqueue(syncq_queue_vyukov *q, void *item) {
  if (q == NULL || item == NULL) return SYNCQ_EINVAL;
  const uint64_t mask = checked_mask(q);
  if (mask == 0) return SYNCQ_EINVAL;
  syncq_queue_vyukov_cell *c;
  /* relaxed: a guess validated by the CAS below. */
  uint64_t pos = atomic_load_explicit(&q->enqueue_pos, memory_order_relaxed);
  for (;;) {
    c = &cells_of(q)[pos & mask];
    /* acquire: pairs with the release store of seq by the dequeue that
     * emptied this cell (its read of data happens before our write). */
    uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
    int64_t dif = (int64_t)(seq - pos);
    if (dif == 0) {
      SYNCQ_STAT_INC(cas_attempts);
      /* relaxed: claiming the position orders nothing; the cell's seq
       * carries the publication. */
      if (atomic_compare_exchange_weak_explicit(&q->enqueue_pos, &pos, pos + 1, memory_order_relaxed,
                                                memory_order_relaxed))
        break;
      SYNCQ_STAT_INC(cas_failures); /* pos was reloaded */
    } else if (dif < 0) {
      return SYNCQ_FULL; /* the cell still holds the item of pos - S */
    } else {
      pos = atomic_load_explicit(&q->enqueue_pos, memory_order_relaxed); /* relaxed: a fresh guess */
    }
  }
  SYNCQ_RACE_POINT("queue.vyukov.enqueue.claimed"); /* a position claimed, its cell not yet published */
  c->data = item;
  /* release: pairs with the dequeuer's acquire load of seq; publishes data. */
  atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
  return SYNCQ_OK;
}

int syncq_queue_vyukov_dequeue(syncq_queue_vyukov *q, void **item) {
  if (q == NULL || item == NULL) return SYNCQ_EINVAL;
  const uint64_t mask = checked_mask(q);
  if (mask == 0) return SYNCQ_EINVAL;
  syncq_queue_vyukov_cell *c;
  /* relaxed: a guess validated by the CAS below. */
  uint64_t pos = atomic_load_explicit(&q->dequeue_pos, memory_order_relaxed);
  for (;;) {
    c = &cells_of(q)[pos & mask];
    /* acquire: pairs with the enqueuer's release store of seq (data). */
    uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
    int64_t dif = (int64_t)(seq - (pos + 1));
    if (dif == 0) {
      SYNCQ_STAT_INC(cas_attempts);
      /* relaxed: as in enqueue, the cell's seq carries the ordering. */
      if (atomic_compare_exchange_weak_explicit(&q->dequeue_pos, &pos, pos + 1, memory_order_relaxed,
                                                memory_order_relaxed))
        break;
      SYNCQ_STAT_INC(cas_failures);
    } else if (dif < 0) {
      return SYNCQ_EMPTY; /* the cell's item for pos is not published yet */
    } else {
      pos = atomic_load_explicit(&q->dequeue_pos, memory_order_relaxed); /* relaxed: a fresh guess */
    }
  }
  SYNCQ_RACE_POINT("queue.vyukov.dequeue.claimed"); /* a position claimed, its cell not yet freed */
  *item = c->data;
  /* release: pairs with the acquire load of seq by the enqueuer of pos + S. */
  atomic_store_explicit(&c->seq, pos + mask + 1, memory_order_release);
  return SYNCQ_OK;
}

/* Not SYNCQ_PROP_SPINS_ON_PREEMPTED: a cell claimed but not yet published
 * makes the others answer FULL/EMPTY; no operation waits for it. */
SYNCQ_QUEUE_REGISTER(vyukov, "vyukov", "Vyukov's bounded MPMC queue (per-cell sequence numbers)",
                     "Vyukov 2010, 1024cores.net \"Bounded MPMC queue\"", BLOCKING,
                     SYNCQ_PROP_FIFO | SYNCQ_PROP_BOUNDED | SYNCQ_PROP_PROCESS_SHARED);
