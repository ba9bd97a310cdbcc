/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nblfq2.c — NBLFQ2: NBLFQ with double-width cells.
 *
 * Contract
 *   Source:      Denis & Goedefroit, NBLFQ (004) §IV-B: "an alternate
 *                implementation that stores the pair in two consecutive
 *                words" with a double-width CAS, W = 2^64; otherwise the
 *                same Algorithms 1-4 (syncq/static/queue/nblfq.h).
 *   Progress:    lock-free (004 §V-B).
 *   Atomics:     uncontended: enqueue 1 cell read, 2 loads + 1 double-
 *                width CAS; dequeue 1 cell read, 1 load and the CAS. A
 *                cell read is 3 loads (counter, pointer, counter, re-read
 *                while the counters differ) so that the pair is one that was in
 *                memory; FULL or EMPTY costs one more cell read
 *                (validation, as in nblfq.c). The dequeue's first step
 *                reads only the counter of p, the cell before the hint:
 *                the step (u.ctr + [t != 0] == p.ctr) and the commit use
 *                no more of p, and one 64-bit load of it is never torn.
 *                p's pointer matters only to EMPTY, which is answered
 *                after a later full read of p finds (NIL, that counter):
 *                under one counter value a cell's pointer only goes NIL
 *                -> item (an item leaves with a counter increment), so p
 *                held NIL at the first read and throughout, and the
 *                answer is the one the full first read would have
 *                validated (syncq_nbl_take_first).
 *                The enqueue's first step reads u, the cell at the hint,
 *                as counter then pointer: two loads, without the second
 *                counter load that would prove the pair was in memory.
 *                It commits only where u reads (NIL, c), c computed from
 *                p, with a CAS that expects (NIL, c): if the CAS finds
 *                it, the counter read c before the pointer load and is c
 *                again at the CAS; counters only rise (64 bits never
 *                wrap), so it was c throughout, and under one counter the
 *                pointer only goes NIL -> item, so it was NIL throughout:
 *                (NIL, c) was in memory at both loads, the pair a whole
 *                read would have returned. When it does not commit, u
 *                goes to syncq_nbl_enqueue_miss, where it only chooses
 *                the cell the general path starts from (which reads
 *                again) except for FULL; FULL re-reads u whole and needs
 *                the same pair: the counter then held from the first
 *                load to the re-read, and the pointer, non-NIL at the
 *                pointer load, could not change under it, so the pair was
 *                in memory from the pointer load on, and when p was read
 *                after it, the general path's validation (which needs
 *                the counter first: read after the pointer, it could
 *                belong to a later round in which the same pointer was
 *                enqueued again). What a pair that was never in memory
 *                costs: a retry counted (stats)
 *                where the comparison finds it ambiguous, or, where the
 *                cell was filled and emptied between the two loads (the
 *                ring lapped), a CAS that loses, handled as any lost CAS.
 *   Memory:      caller's storage (5 cache lines + 16 bytes per cell);
 *                never allocates.
 *   Signal-safe: yes (as nblfq.c).
 *   Process-shared: yes (no internal pointers). Each operation reads the
 *                header's mask once (a relaxed atomic load into a local),
 *                checks it (the magic, stored XOR the mask by init, so a
 *                mask changed alone fails; S - 1 for a power of two S
 *                within what init accepts) and uses only that copy: a
 *                header another process overwrote is SYNCQ_EINVAL, never
 *                an index past the cells. The caller guarantees the
 *                mapping holds SYNCQ_QUEUE_NBLFQ2_BYTES(S).
 *   Limits:      capacity a power of two >= 2; items any non-NULL pointer
 *                (all 64 bits); 64-bit counters never wrap in practice
 *                (004 §IV-B: centuries). SYNCQ_ENOTSUP at init where the CPU
 *                has no double-width CAS (syncq_pr_dwcas_available()).
 *   Stats:       as nblfq.c (cas_attempts, cas_failures, retries).
 *   Deviations:  as nblfq.c (1)-(6); plus the 3-load cell read, since two
 *                64-bit loads of a 16-byte cell can be torn (the first
 *                steps' reads of p and u above excepted).
 *   Checked:     models/genmc/nblfq2.c runs this file under GenMC (RC11,
 *                IMM) on 2 cells; its handoff workload fails with the
 *                torn-read guard dropped and (through the model's
 *                two-store cell writes only) with EMPTY answered without
 *                re-reading p; the enqueue's load order cannot fail there
 *                and rests on the argument above (docs/reliability.md,
 *                "Weak memory: GenMC").
 */
#include "syncq/queue/nblfq2.h"

#include "syncq/static/queue/nblfq.h"
#include "syncq/queue.h"

#define NBLFQ2_TAG_BITS 64                        /* W = 2^64: the counter is a whole word */
#define NBLFQ2_MAGIC UINT64_C(0x4e424c4651320000) /* "NBLFQ2" */
/* The most cells syncq_queue_nblfq2_bytes accepts. */
#define NBLFQ2_MAX_CELLS ((uint64_t)((SIZE_MAX - sizeof(syncq_queue_nblfq2)) / sizeof(syncq_pr_dw_atomic)))

static inline void *cells_of(syncq_queue_nblfq2 *q) { return (void *)(q + 1); }

int syncq_queue_nblfq2_bytes(size_t capacity, size_t *bytes) {
  if (bytes == NULL || capacity < 2 || (capacity & (capacity - 1)) != 0) return SYNCQ_EINVAL;
  if (capacity > (SIZE_MAX - sizeof(syncq_queue_nblfq2)) / sizeof(syncq_pr_dw_atomic)) return SYNCQ_EINVAL;
  *bytes = SYNCQ_QUEUE_NBLFQ2_BYTES(capacity);
  return SYNCQ_OK;
}

int syncq_queue_nblfq2_init(syncq_queue_nblfq2 *q, size_t capacity) {
  size_t bytes;
  if (q == NULL || ((uintptr_t)q % _Alignof(syncq_queue_nblfq2)) != 0) return SYNCQ_EINVAL;
  if (syncq_queue_nblfq2_bytes(capacity, &bytes) != SYNCQ_OK) return SYNCQ_EINVAL;
  if (!syncq_pr_dwcas_available()) return SYNCQ_ENOTSUP;
  atomic_init(&q->head, 0);
  atomic_init(&q->tail, 0);
  atomic_init(&q->mask, (uint64_t)capacity - 1);
  atomic_init(&q->magic, NBLFQ2_MAGIC ^ ((uint64_t)capacity - 1)); /* bound to the mask: see checked_mask */
  syncq_nbl_init_cells(cells_of(q), (uint64_t)capacity, NBLFQ2_TAG_BITS);
  return SYNCQ_OK;
}

int syncq_queue_nblfq2_destroy(syncq_queue_nblfq2 *q) {
  if (q == NULL) return SYNCQ_EINVAL;
  /* relaxed (both): as in checked_mask */
  if ((atomic_load_explicit(&q->magic, memory_order_relaxed) ^ atomic_load_explicit(&q->mask, memory_order_relaxed)) !=
      NBLFQ2_MAGIC)
    return SYNCQ_EINVAL;
  /* relaxed: no operation may run on a queue being destroyed (the caller's
   * precondition); one that does reads the old magic or none */
  atomic_store_explicit(&q->magic, 0, memory_order_relaxed);
  return SYNCQ_OK;
}

/* The mask, read once from the header and checked (syncq_nbl_mask_ok):
 * 0, which no initialised queue has, when the header is not one init
 * wrote or the mask is not S - 1 for a size init accepts. Init stores the
 * magic XOR the mask, so a mask changed alone (a bit flipped into another
 * well-formed size, past the storage) no longer matches it. */
static inline uint64_t checked_mask(const syncq_queue_nblfq2 *q) {
  /* relaxed (both): header words init wrote before the queue was handed to
   * its users (the creator's publication orders them); checked below, and
   * only these copies are used. One load each: the value checked is the
   * value used, whatever another process writes meanwhile. */
  const uint64_t mask = atomic_load_explicit(&q->mask, memory_order_relaxed);
  const uint64_t magic = atomic_load_explicit(&q->magic, memory_order_relaxed);
  return (magic ^ mask) == NBLFQ2_MAGIC && syncq_nbl_mask_ok(mask, NBLFQ2_MAX_CELLS) ? mask : 0;
}

/* The enqueue's call out of its first step when it did not commit, out
 * of line and its last act (as syncq_queue_nblfq_enqueue_miss_), the
 * reads by address (as dequeue_miss below). */
static __attribute__((noinline)) int enqueue_miss(syncq_queue_nblfq2 *q, uint64_t bits, uint64_t mask, uint64_t h,
                                                  const syncq_nbl_cell *u, const syncq_nbl_cell *p) {
  return syncq_nbl_enqueue_miss(cells_of(q), mask, &q->head, bits, h, *u, *p, NBLFQ2_TAG_BITS);
}

int syncq_queue_nblfq2_enqueue(syncq_queue_nblfq2 *q, void *item) {
  uint64_t bits = (uint64_t)(uintptr_t)item;
  if (q == NULL || bits == 0) return SYNCQ_EINVAL;
  const uint64_t mask = checked_mask(q);
  if (mask == 0) return SYNCQ_EINVAL;
  uint64_t h;
  syncq_nbl_cell u, p;
  const int r = syncq_nbl_put_first(cells_of(q), mask, &q->head, bits, &h, &u, &p, NBLFQ2_TAG_BITS);
  if (__builtin_expect(r == SYNCQ_OK, 1)) return r;
  if (r == SYNCQ_NBL_CHASE) return enqueue_miss(q, bits, mask, h, &u, &p);
  return syncq_nbl_enqueue_slow(cells_of(q), mask, &q->head, bits, h, true, NBLFQ2_TAG_BITS); /* lost cell h */
}

/* The dequeue's calls out of its first step, out of line and its last
 * act (as syncq_queue_nblfq_dequeue_miss_): the first step's reads go by
 * address, since two double-width cells and the rest are more words than
 * the six argument registers hold. */
static __attribute__((noinline)) int dequeue_miss(syncq_queue_nblfq2 *q, void **item, uint64_t mask, uint64_t t,
                                                  const syncq_nbl_cell *u, const syncq_nbl_cell *p) {
  uint64_t bits;
  const int r = syncq_nbl_dequeue_miss(cells_of(q), mask, &q->tail, &bits, t, *u, *p, NBLFQ2_TAG_BITS);
  if (r == SYNCQ_OK) *item = (void *)(uintptr_t)bits;
  return r;
}
static __attribute__((noinline)) int dequeue_lost(syncq_queue_nblfq2 *q, void **item, uint64_t mask, uint64_t t) {
  uint64_t bits;
  const int r = syncq_nbl_dequeue_slow(cells_of(q), mask, &q->tail, &bits, t, true, NBLFQ2_TAG_BITS);
  if (r == SYNCQ_OK) *item = (void *)(uintptr_t)bits;
  return r;
}

int syncq_queue_nblfq2_dequeue(syncq_queue_nblfq2 *q, void **item) {
  if (q == NULL || item == NULL) return SYNCQ_EINVAL;
  const uint64_t mask = checked_mask(q);
  if (mask == 0) return SYNCQ_EINVAL;
  uint64_t bits;
  syncq_nbl_cell u, p;
  const int r = syncq_nbl_take_first(cells_of(q), mask, &q->tail, &bits, &u, &p, NBLFQ2_TAG_BITS);
  if (__builtin_expect(r == SYNCQ_OK, 1)) {
    *item = (void *)(uintptr_t)bits;
    return r;
  }
  if (r == SYNCQ_NBL_CHASE) return dequeue_miss(q, item, mask, bits, &u, &p);
  return dequeue_lost(q, item, mask, bits);
}

/* relaxed: a header word init wrote (read as it is, unchecked: a count to show, never an index) */
size_t syncq_queue_nblfq2_capacity(const syncq_queue_nblfq2 *q) {
  return q == NULL ? 0 : (size_t)atomic_load_explicit(&q->mask, memory_order_relaxed) + 1;
}

SYNCQ_QUEUE_REGISTER(nblfq2, "nblfq2", "NBLFQ2: NBLFQ with double-width (pointer, 64-bit counter) cells",
                     "004 §IV-B, Algorithms 1-4", LOCK_FREE,
                     SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_BOUNDED | SYNCQ_PROP_SIGNAL_SAFE |
                       SYNCQ_PROP_PROCESS_SHARED);
