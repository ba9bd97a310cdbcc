/*
 * claim_posix.c — the POSIX mutex packet claim of 000, made robust.
 *
 * Contract
 *   Source:      000 §3.1, Figure 2 under "the Solaris implementation of
 *                Posix mutexes" (process-shared; "locks are implicitly
 *                reclaimed after abnormal termination"). Written here, not
 *                through src/lock/pthread_mutex.c: that lock repairs
 *                EOWNERDEAD silently, and the claim must know, to repair
 *                the tail a dying holder may have left half-advanced.
 *   Progress:    blocking, but a holder that dies inside the critical
 *                section does not block the others: the next locker gets
 *                EOWNERDEAD, repairs the queue tail (below) and marks the
 *                mutex consistent.
 *   Atomics:     glibc robust mutex: uncontended lock 1 CAS (plus the
 *                robust-list bookkeeping, no system call), unlock 1
 *                exchange; + the critical section of Figure 2 (1 acquire
 *                load, 1 release store; bulk + 1 load, 1 store).
 *   Memory:      in the segment; never allocates.
 *   Signal-safe: no (pthread_mutex_lock is not async-signal-safe).
 *   Process-shared: yes (PTHREAD_PROCESS_SHARED, PTHREAD_MUTEX_ROBUST).
 *   Limits:      none beyond the queue's.
 */
#include <errno.h>

#include "am_internal.h"

int am_posix_init(am_queue *q) {
  pthread_mutexattr_t a;
  if (pthread_mutexattr_init(&a) != 0) return SYNCQ_ESYS;
  int e = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  if (e == 0) e = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  if (e == 0) e = pthread_mutex_init(&q->lock.mutex, &a);
  (void)pthread_mutexattr_destroy(&a);
  if (e != 0) {
    errno = e;
    return e == ENOTSUP ? SYNCQ_ENOTSUP : SYNCQ_ESYS;
  }
  return SYNCQ_OK;
}

/* The previous holder died inside Figure 2's critical section. It may have
 * claimed the tail packet without advancing the tail (then advance it, and
 * the bulk tail if that packet took the tail block), or claimed the tail
 * block without its packet (then give the block back). The receiver takes
 * the dead claim itself back later (am.c), as for any dead sender. */
static void repair(void *base, am_queue *q) {
  const am_header *h = base;
  /* relaxed: we hold the mutex, whose acquire orders the tails */
  uint32_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
  uint32_t b = atomic_load_explicit(&q->bulk_tail, memory_order_relaxed);
  am_packet *p = &am_packets(base, q)[t & (h->packets - 1u)];
  am_bulk_slot *bs = &am_bulk_slots(base, q)[b & (h->bulk_blocks - 1u)];
  /* acquire: pairs with the dead holder's release store of CLAIMED */
  uint64_t s = atomic_load_explicit(&p->state, memory_order_acquire);
  if (am_state_pos(s) == t && am_state_type(s) != AM_FREE) {
    atomic_store_explicit(&q->tail, t + 1u, memory_order_relaxed); /* under the mutex */
    if (p->has_bulk && p->bulk_pos == b)
      atomic_store_explicit(&q->bulk_tail, b + 1u, memory_order_relaxed); /* under the mutex */
    return;
  }
  uint64_t bstate = atomic_load_explicit(&bs->state, memory_order_acquire); /* pairs as above */
  if (am_state_pos(bstate) == b && am_state_type(bstate) == AM_CLAIMED)
    /* release: pairs with the next claimer's acquire load of FREE(b) */
    atomic_store_explicit(&bs->state, am_state(b, 0, AM_FREE), memory_order_release);
}

int am_claim_posix(void *base, am_queue *q, bool nowait, am_claim_state *cs) {
  (void)nowait; /* holds nothing when it fails */
  int e = pthread_mutex_lock(&q->lock.mutex);
  if (e == EOWNERDEAD) {
    repair(base, q);
    e = pthread_mutex_consistent(&q->lock.mutex);
  }
  if (e != 0) {
    errno = e;
    return SYNCQ_ESYS;
  }
  bool got = am_claim_under_lock(base, q, cs);
  e = pthread_mutex_unlock(&q->lock.mutex);
  if (e != 0) {
    errno = e;
    return SYNCQ_ESYS;
  }
  return got ? SYNCQ_OK : SYNCQ_FULL;
}
