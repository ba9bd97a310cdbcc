/* SPDX-License-Identifier: BSD-2-Clause */
/* slot_ring.h — the process table's free slots, oldest first: a bounded
 * MPMC ring of slot indices (slot_ring.c), so spawn and join take and
 * give a slot without a lock. */
#ifndef SYNCQ_PO_SLOT_RING_H
#define SYNCQ_PO_SLOT_RING_H

#include <stdatomic.h>
#include <stdint.h>

#include "syncq/platform.h"
#include "syncq/pr.h"
#include "syncq/status.h"

/* One cell: its sequence number less the cell's index (so zero bytes are
 * the empty ring's first lap), and the slot it holds. */
typedef struct po_slot_cell {
  _Atomic(uint64_t) seq;
  uint32_t slot;
  uint32_t pad; /* written once, by the put a page of cells before (its first touch of the page) */
} po_slot_cell;

typedef struct po_slot_ring {
  po_slot_cell *cells; /* [mask + 1], zero at init (calloc: a large one is zero pages) */
  uint64_t mask;
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) tail; /* the next enqueue's position */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) head; /* the next dequeue's position */
} po_slot_ring;

/* A ring for up to n slots (n >= 1; its capacity is n rounded up to a
 * power of two). SYNCQ_ENOMEM, or SYNCQ_EINVAL for n == 0 or above 2^31. */
int po_slot_ring_init(po_slot_ring *r, uint32_t n);
void po_slot_ring_destroy(po_slot_ring *r);
/* Append a slot. The caller holds at most n slots out of the ring at a
 * time, so it is never full; it may wait out a dequeue still reading the
 * cell it needs. */
void po_slot_ring_put(po_slot_ring *r, uint32_t slot);
/* The oldest slot: SYNCQ_OK with *slot, or SYNCQ_EMPTY (none, or the
 * oldest one's enqueue is still in flight). */
int po_slot_ring_take(po_slot_ring *r, uint32_t *slot);
/* Takes so far (a count: relaxed). */
uint64_t po_slot_ring_taken(const po_slot_ring *r);

#endif
