/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nblfq.c — NBLFQ: lock-free bounded MPMC queue optimized for low contention.
 *
 * Contract
 *   Source:      Denis & Goedefroit, NBLFQ (004): Algorithm 1 (init),
 *                Algorithm 2 (COMP), Algorithm 3 (enqueue), Algorithm 4
 *                (dequeue); invariant and proofs §V. Written once in
 *                syncq/static/queue/nblfq.h for both cell widths.
 *   Progress:    lock-free (004 §V-B): a CAS fails only because another
 *                operation's CAS succeeded.
 *   Atomics:     uncontended, with the head/tail hints right: enqueue 2
 *                loads + 1 CAS, dequeue 2 loads + 1 CAS; a FULL or EMPTY
 *                answer costs one more load (validation, see below).
 *   Memory:      caller's storage (header of 5 cache lines + 8 bytes per
 *                cell); never allocates; nothing to reclaim (items are the
 *                caller's).
 *   Signal-safe: yes: no locks, no allocation, the ring is consistent
 *                after every CAS, so a handler that interrupts an operation
 *                may operate on the same queue (tests/queue prove it).
 *   Process-shared: yes (no internal pointers; items are opaque words).
 *                Each operation reads the mask once (a relaxed atomic
 *                load into a local), checks it (syncq_nbl_mask_ok: S - 1
 *                for a power of two S within what init accepts; the magic,
 *                which init stores XOR the mask, so a mask changed alone
 *                fails) and uses only that copy, so a header another
 *                process overwrote is SYNCQ_EINVAL, never an index past
 *                the cells or an endless chase; the caller guarantees the
 *                mapping holds SYNCQ_QUEUE_NBLFQ_BYTES(S).
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
 *                cell under a non-empty predecessor instead of CASing it;
 *                (4) the head and tail hints are two lines apart (an
 *                unused line between; they were on neighbouring lines,
 *                which x86's adjacent-line prefetcher moves as a pair:
 *                producers write one, consumers the other); (5) FULL
 *                writes the head hint (Algorithm 3, line 15) and EMPTY the
 *                tail hint (Algorithm 4 writes none there) only when the
 *                chase moved it: threads polling a full or empty queue
 *                then only read the hint's line, where a write on every
 *                answer had each of them take the line exclusive on every
 *                try, a storm the operation that then succeeds must wait
 *                through (most with more pollers than processing units);
 *                (6) after a lost commit CAS the operation waits
 *                8 * 2^k pauses (k-th loss of this call from 0, at most
 *                512; syncq_nbl_backoff) and chases on from the cell it
 *                lost, where 004 retries at once from the hint: the winner
 *                holds that cell's line and goes on to the next cell on
 *                it, and the hint may not be written yet (or be rewound by
 *                a writer that was descheduled before its hint write,
 *                which cost a chase of up to S cells on every retry). Two
 *                threads of one side on two cores moved items about 4x
 *                slower than crossbeam's ArrayQueue, which waits 1..64
 *                pauses after a lost CAS; NBLFQ's loser also reads the
 *                winner's line in its chase, and needs the longer first
 *                wait to match it (docs/queues.md, "Under preemption").
 *                tests/queue/nblfq_race_test.c checks the chase after a
 *                lost CAS.
 *   Preemption:  nothing in an operation waits for another thread's step:
 *                the ring is consistent after every CAS, a stopped thread
 *                holds no ticket or cell, and a chase only reads.
 *                tests/queue/queue_progress_test.c stops a thread for
 *                good at each race point of syncq/static/queue/nblfq.h,
 *                and the others finish their work. A thread stopped
 *                between its commit and its hint write leaves a stale
 *                hint behind: the next chase from it walks at most S
 *                cells, and the next commit rewrites it; a retry after a
 *                lost CAS does not read it (deviation 6).
 *   Backoff history: a first bounded pause after a failed commit CAS,
 *                inline in the retry loop, took NBLFQ2's dg25-prodcons
 *                N = 1 median from about 50-85 to 15-25 Mops/s, where no
 *                CAS fails (the loop's code, not the pause, changed); the
 *                wait of deviation 6 is out of line and cold, and N = 1
 *                moved within the noise (docs/queues.md).
 *   Scaling:     NBLFQ falls behind the FAA queues past a few threads by
 *                design (004 §II-C, §VI-D: built for low contention): every
 *                enqueue CASes the one cell after the last item and every
 *                dequeue the first item's cell, so N producers serialise on
 *                one line, and a loser restarts its chase. That is the
 *                algorithm's; the implementation adds no shared write
 *                beyond the paper's (the hints), its hints no longer
 *                share a 128-byte pair of lines, and a loser waits a
 *                little before it retries (deviation 6).
 *   Inline:      enqueue and dequeue are static inline in syncq/static/
 *                queue/nblfq.h (with the algorithm, syncq_nbl_*); this
 *                file exports them and builds the ops
 *                table from them (SYNCQ_QUEUE_REGISTER_FNS). Never-initialised or
 *                destroyed storage: SYNCQ_EINVAL (a magic word read beside
 *                the mask). Only the chase's first step is inline (with
 *                the hint right it is the whole operation), computed on
 *                the cell words as loaded; what it concludes other than a
 *                commit (FULL, EMPTY, where the general loop goes on) and
 *                the general loop itself are static noinline functions of
 *                the header, each called last with its arguments in
 *                registers, so the common path saves no register and
 *                keeps no stack frame (docs/queues.md, "NBLFQ's
 *                one-thread latency").
 */
#include "syncq/queue/nblfq.h"

#include "syncq/queue.h"
#include "syncq/static/queue/nblfq.h"

#define NBLFQ_TAG_BITS SYNCQ_QUEUE_NBLFQ_TAG_BITS
#define NBLFQ_MAGIC SYNCQ_QUEUE_NBLFQ_MAGIC

static inline void *cells_of(syncq_queue_nblfq *q) { return syncq_queue_nblfq_cells_inline(q); }

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
  atomic_init(&q->mask, (uint64_t)capacity - 1);
  atomic_init(&q->magic, NBLFQ_MAGIC ^ ((uint64_t)capacity - 1)); /* bound to the mask (syncq/static/queue/nblfq.h) */
  syncq_nbl_init_cells(cells_of(q), (uint64_t)capacity, NBLFQ_TAG_BITS);
  return SYNCQ_OK;
}

int syncq_queue_nblfq_destroy(syncq_queue_nblfq *q) {
  if (q == NULL) return SYNCQ_EINVAL;
  /* relaxed (both): as in enqueue (syncq/static/queue/nblfq.h) */
  if ((atomic_load_explicit(&q->magic, memory_order_relaxed) ^ atomic_load_explicit(&q->mask, memory_order_relaxed)) !=
      NBLFQ_MAGIC)
    return SYNCQ_EINVAL;
  /* relaxed: no operation may run on a queue being destroyed (the caller's
   * precondition); one that does reads the old magic or none */
  atomic_store_explicit(&q->magic, 0, memory_order_relaxed);
  return SYNCQ_OK;
}

/* The exported operations and the ops table are the static inline bodies
 * of syncq/static/queue/nblfq.h. */
int syncq_queue_nblfq_enqueue(syncq_queue_nblfq *q, void *item) { return syncq_queue_nblfq_enqueue_inline(q, item); }
int syncq_queue_nblfq_dequeue(syncq_queue_nblfq *q, void **item) { return syncq_queue_nblfq_dequeue_inline(q, item); }

/* relaxed: a header word init wrote (read as it is, unchecked: a count to show, never an index) */
size_t syncq_queue_nblfq_capacity(const syncq_queue_nblfq *q) {
  return q == NULL ? 0 : (size_t)atomic_load_explicit(&q->mask, memory_order_relaxed) + 1;
}

SYNCQ_QUEUE_REGISTER_FNS(nblfq, "nblfq", "NBLFQ: one-CAS lock-free ring of 48+16-bit tagged pointers",
                         "004 Algorithms 1-4, §IV-V", LOCK_FREE,
                         SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_BOUNDED | SYNCQ_PROP_SIGNAL_SAFE |
                           SYNCQ_PROP_PROCESS_SHARED,
                         syncq_queue_nblfq, syncq_queue_nblfq_bytes, syncq_queue_nblfq_init, syncq_queue_nblfq_destroy,
                         syncq_queue_nblfq_enqueue_inline, syncq_queue_nblfq_dequeue_inline);
