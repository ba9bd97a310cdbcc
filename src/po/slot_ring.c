/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * slot_ring.c — the process table's free slots (process.c), oldest first:
 * Vyukov's bounded MPMC queue of slot indices, so a spawn takes the slot
 * freed longest ago and a join or exit gives one back without a lock.
 *
 * Contract
 *   Source:      Dmitry Vyukov, "Bounded MPMC queue" (1024cores.net,
 *                2010): an array of cells, each with a sequence number
 *                that says whose turn it is (the enqueue of position pos
 *                finds pos, the dequeue finds pos + 1), and two positions
 *                claimed by CAS. Here a cell stores its sequence number
 *                less its own index, so zero bytes are the empty ring's
 *                first lap and init touches no cell.
 *   Progress:    take is lock-free and answers SYNCQ_EMPTY rather than
 *                wait; put waits (yielding) while the cell it claimed is
 *                still being read by the dequeue of the lap before (the
 *                ring never holds more than the table's slots, so a full
 *                cell is always one in flight), else lock-free.
 *   Atomics:     uncontended put or take: 1 CAS (its position) + a load
 *                and a store of the cell's sequence number (and, once
 *                a page of a first lap, a plain store to the next page:
 *                see put).
 *   Memory:      16 bytes a cell, capacity n rounded up to a power of
 *                two, from calloc (zero pages for a large table: touched
 *                as used, each page first by a write; see put).
 *   Limits:      n <= 2^31 slots; 64-bit positions never wrap in practice.
 *   Signal-safe: no (put may wait for another thread).
 *   Process-shared: no.
 *   Linearizability: a FIFO queue: a take linearizes at its position's
 *                CAS, a put at its position's CAS (its slot is seen once
 *                its cell's release store is done: until then a take of
 *                that position answers SYNCQ_EMPTY).
 */
#include "slot_ring.h"

#include <stdlib.h>

#include "../race_internal.h"

/* Cells in a 4 KB page (the smallest page size of the kernels syncq runs
 * on; a larger page is only touched sooner). */
#define PO_SLOT_RING_PAGE_CELLS (4096 / sizeof(po_slot_cell))

int po_slot_ring_init(po_slot_ring *r, uint32_t n) {
  if (r == NULL || n == 0 || n > (1u << 31)) return SYNCQ_EINVAL;
  uint64_t cap = 1;
  while (cap < n) cap <<= 1;
  r->cells = calloc((size_t)cap, sizeof *r->cells);
  if (r->cells == NULL) return SYNCQ_ENOMEM;
  r->mask = cap - 1;
  /* The first page's first touch a write (see put). */
  atomic_store_explicit(&r->cells[0].seq, 0, memory_order_relaxed); /* relaxed: before the ring is shared */
  atomic_init(&r->tail, 0);
  atomic_init(&r->head, 0);
  return SYNCQ_OK;
}

void po_slot_ring_destroy(po_slot_ring *r) {
  free(r->cells);
  r->cells = NULL;
}

void po_slot_ring_put(po_slot_ring *r, uint32_t slot) {
  /* relaxed: a guess at the position, checked against the cell. */
  uint64_t pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
  po_slot_cell *c;
  for (;;) {
    uint64_t i = pos & r->mask;
    c = &r->cells[i];
    /* acquire: pairs with take's release store of the cell (the slot it
     * read is read before we write ours). */
    uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire) + i;
    int64_t dif = (int64_t)(seq - pos);
    if (dif == 0) {
      /* relaxed: the cell's sequence number orders the slot, not tail. */
      if (atomic_compare_exchange_weak_explicit(&r->tail, &pos, pos + 1, memory_order_relaxed, memory_order_relaxed))
        break;
    } else if (dif < 0) {
      /* The dequeue of the lap before is still reading this cell. */
      syncq_yield();
      pos = atomic_load_explicit(&r->tail, memory_order_relaxed); /* relaxed: as above */
    } else {
      pos = atomic_load_explicit(&r->tail, memory_order_relaxed); /* relaxed: another put took pos */
    }
  }
  SYNCQ_RACE_POINT("po.slot_ring.put.claimed");
  /* First lap, first cell of a page: write to the next page now, so that
   * its first touch is a write. A page whose first touch is a read (the
   * load above, a take's) maps the shared zero page, and the write after
   * it copies that page and flushes the other processors' TLBs (an
   * interprocessor interrupt per page of the ring): in a tree of a
   * million processes on 2 schedulers those flushes took a fifth of the
   * time. A plain store to the cell's pad, which nothing else reads or
   * writes (no race with the cell's own put, a page of puts away). Not an
   * RMW of its sequence number: clang compiles an idempotent one (a
   * fetch_add of 0) to a load, and an LL/SC one (Armv8.0, qemu-user's
   * emulation of a one-thread program) loads before it stores, a read
   * first all the same. volatile: the store is all it is for. */
  if (pos + PO_SLOT_RING_PAGE_CELLS <= r->mask && (pos & (PO_SLOT_RING_PAGE_CELLS - 1)) == 0)
    *(volatile uint32_t *)&r->cells[pos + PO_SLOT_RING_PAGE_CELLS].pad = 0;
  c->slot = slot;
  /* release: pairs with take's acquire load of the cell (it reads slot). */
  atomic_store_explicit(&c->seq, pos + 1 - (pos & r->mask), memory_order_release);
}

int po_slot_ring_take(po_slot_ring *r, uint32_t *slot) {
  uint64_t pos = atomic_load_explicit(&r->head, memory_order_relaxed); /* relaxed: as put's tail */
  po_slot_cell *c;
  for (;;) {
    uint64_t i = pos & r->mask;
    c = &r->cells[i];
    /* acquire: pairs with put's release store (the slot it wrote). */
    uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire) + i;
    int64_t dif = (int64_t)(seq - (pos + 1));
    if (dif == 0) {
      /* relaxed: as in put. */
      if (atomic_compare_exchange_weak_explicit(&r->head, &pos, pos + 1, memory_order_relaxed, memory_order_relaxed))
        break;
    } else if (dif < 0) {
      return SYNCQ_EMPTY; /* nothing there yet (or its put is in flight) */
    } else {
      pos = atomic_load_explicit(&r->head, memory_order_relaxed); /* relaxed: another take took pos */
    }
  }
  *slot = c->slot;
  /* release: pairs with put's acquire load of the cell one lap on (our
   * read of slot comes before its write). */
  atomic_store_explicit(&c->seq, pos + r->mask + 1 - (pos & r->mask), memory_order_release);
  return SYNCQ_OK;
}

uint64_t po_slot_ring_taken(const po_slot_ring *r) {
  /* relaxed: a count (each take advances head once). */
  return atomic_load_explicit(&((po_slot_ring *)r)->head, memory_order_relaxed);
}
