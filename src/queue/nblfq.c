/*
 * nblfq.c — NBLFQ: lock-free bounded MPMC queue optimized for low contention.
 *
 * Contract
 *   Source:      Denis & Goedefroit, NBLFQ (004): Algorithm 1 (init),
 *                Algorithm 2 (COMP), Algorithm 3 (enqueue), Algorithm 4
 *                (dequeue); invariant and proofs §V. Written once in
 *                src/queue/nblfq_core.h for both cell widths.
 *   Progress:    lock-free (004 §V-B): a CAS fails only because another
 *                operation's CAS succeeded.
 *   Atomics:     uncontended, with the head/tail hints right: enqueue 2
 *                loads + 1 CAS, dequeue 2 loads + 1 CAS; a FULL or EMPTY
 *                answer costs one more load (validation, see below).
 *   Memory:      caller's storage (header of 3 cache lines + 8 bytes per
 *                cell); never allocates; nothing to reclaim (items are the
 *                caller's).
 *   Signal-safe: yes: no locks, no allocation, the ring is consistent
 *                after every CAS, so a handler that interrupts an operation
 *                may operate on the same queue (tests/queue prove it).
 *   Process-shared: yes (no internal pointers; items are opaque words).
 *   Limits:      capacity S a power of two >= 2 (004 §IV-B: S > 1, power
 *                of two); items non-NULL and within 48 bits (x86-64 and
 *                AArch64 user addresses); counters of 16 bits: a thread
 *                that sleeps between its reads and its CAS while the ring
 *                turns 2^16 times over (2^16 * S operations) can suffer ABA
 *                (004 §V-A b); use "nblfq2" where that is plausible.
 *   Stats:       cas_attempts, cas_failures; retries = restarts without a
 *                CAS (an ambiguous counter comparison, an inconsistent
 *                read, or a chase longer than 2S cells).
 *   Deviations:  (1) COMP answers "ambiguous" when two neighbours'
 *                counters differ by more than one, and the operation
 *                retries (the paper's (v-u) mod W < W/2 would guess);
 *                (2) FULL and EMPTY are returned only after re-reading the
 *                first of the two cells and finding it unchanged, so the
 *                two reads are a snapshot (the paper trusts two reads made
 *                at different times, which can answer FULL or EMPTY when
 *                the queue never was); (3) dequeue retries on an empty tail
 *                cell under a non-empty predecessor instead of CASing it.
 */
#include "syncq/queue/nblfq.h"

#include "nblfq_core.h"
#include "syncq/queue.h"

#define NBLFQ_TAG_BITS 16
#define NBLFQ_MAGIC UINT64_C(0x4e424c4651313600) /* "NBLFQ16" */

static inline void *cells_of(syncq_queue_nblfq *q) { return (void *)(q + 1); }

int syncq_queue_nblfq_bytes(size_t capacity, size_t *bytes) {
  if (bytes == NULL || capacity < 2 || (capacity & (capacity - 1)) != 0) return SYNCQ_EINVAL;
  if (capacity > (SIZE_MAX - sizeof(syncq_queue_nblfq)) / sizeof(uint64_t)) return SYNCQ_EINVAL;
  *bytes = SYNCQ_QUEUE_NBLFQ_BYTES(capacity);
  return SYNCQ_OK;
}

int syncq_queue_nblfq_init(syncq_queue_nblfq *q, size_t capacity) {
  size_t bytes;
  if (q == NULL || ((uintptr_t)q % _Alignof(syncq_queue_nblfq)) != 0) return SYNCQ_EINVAL;
  if (syncq_queue_nblfq_bytes(capacity, &bytes) != SYNCQ_OK) return SYNCQ_EINVAL;
  atomic_init(&q->head, 0);
  atomic_init(&q->tail, 0);
  q->mask = (uint64_t)capacity - 1;
  q->magic = NBLFQ_MAGIC;
  nbl_init_cells(cells_of(q), (uint64_t)capacity, NBLFQ_TAG_BITS);
  return SYNCQ_OK;
}

int syncq_queue_nblfq_destroy(syncq_queue_nblfq *q) {
  if (q == NULL || q->magic != NBLFQ_MAGIC) return SYNCQ_EINVAL;
  q->magic = 0;
  return SYNCQ_OK;
}

int syncq_queue_nblfq_enqueue(syncq_queue_nblfq *q, void *item) {
  uint64_t bits = (uint64_t)(uintptr_t)item;
  if (q == NULL || bits == 0 || (bits & ~NBL_PTR_MASK) != 0) return SYNCQ_EINVAL;
  return nbl_enqueue(cells_of(q), q->mask, &q->head, bits, NBLFQ_TAG_BITS);
}

int syncq_queue_nblfq_dequeue(syncq_queue_nblfq *q, void **item) {
  if (q == NULL || item == NULL) return SYNCQ_EINVAL;
  uint64_t bits;
  int r = nbl_dequeue(cells_of(q), q->mask, &q->tail, &bits, NBLFQ_TAG_BITS);
  if (r == SYNCQ_OK) *item = (void *)(uintptr_t)bits;
  return r;
}

size_t syncq_queue_nblfq_capacity(const syncq_queue_nblfq *q) { return q == NULL ? 0 : (size_t)q->mask + 1; }

static int ops_bytes(size_t c, size_t *b) { return syncq_queue_nblfq_bytes(c, b); }
static int ops_init(void *q, size_t c) { return syncq_queue_nblfq_init(q, c); }
static int ops_destroy(void *q) { return syncq_queue_nblfq_destroy(q); }
static int ops_enqueue(void *q, void *item) { return syncq_queue_nblfq_enqueue(q, item); }
static int ops_dequeue(void *q, void **item) { return syncq_queue_nblfq_dequeue(q, item); }

static const syncq_queue_ops nblfq_ops = {
  ops_bytes, _Alignof(syncq_queue_nblfq), ops_init, ops_destroy, ops_enqueue, ops_dequeue,
};

const syncq_algo syncq_queue_nblfq_algo = {
  SYNCQ_FAMILY_QUEUE, "nblfq", "NBLFQ: one-CAS lock-free ring of 48+16-bit tagged pointers",
  "004 Algorithms 1-4, §IV-V", SYNCQ_PROGRESS_LOCK_FREE,
  SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_BOUNDED | SYNCQ_PROP_SIGNAL_SAFE |
      SYNCQ_PROP_PROCESS_SHARED,
  &nblfq_ops,
};
