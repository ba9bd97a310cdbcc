/*
 * claim_lock.c — the spin-lock packet claims of 000: test-and-set,
 * test-and-test-and-set, ticket and Anderson locks around Figure 2.
 *
 * Contract
 *   Source:      000 §3.1, Figure 2 (CLAIMPACKET: under the queue's lock,
 *                take the tail packet if FREE, mark it CLAIMED, advance the
 *                tail; CLAIMBULK: the same on both the packet and the bulk
 *                queue in one critical section). The locks are the
 *                library's own (src/lock/tas.c, ticket.c, anderson.c), used
 *                through their typed APIs: they are pointer-free and
 *                process-shared, so they live in the segment's tail
 *                information unchanged.
 *   Progress:    blocking (a sender that dies holding the lock blocks the
 *                other senders; the receiver keeps running). A sender that
 *                dies between claim and commit is reclaimed by the receiver
 *                (am.c). Anderson's lock admits 64 holders + waiters; the
 *                65th sees the queue as full and retries (backoff + poll).
 *   Atomics:     uncontended claim: the lock (TAS: 1 exchange; TTAS: 1
 *                load + 1 exchange; ticket: 1 fetch-and-add + 1 load;
 *                Anderson: 2 fetch-and-add + 1 load) + 1 acquire load of the
 *                packet state + 1 release store of it + the unlock (1
 *                store; Anderson 1 fetch-and-add + 2 stores). Bulk: + 1 load
 *                and 1 store of the block state.
 *   Memory:      in the segment; never allocates.
 *   Signal-safe: no (the library as a whole is not).
 *   Process-shared: yes (the point of it).
 *   Limits:      see the locks' own contracts.
 */
#include "am_internal.h"

int am_lock_init(am_queue *q, int claim) {
  /* spinning (SPIN) as in 000; process_shared so a blocking discipline
   * would use shared futexes if ever chosen */
  const syncq_lock_config cfg = {.max_threads = 0, .wait = 0, .process_shared = true};
  switch (claim) {
  case SYNCQ_AM_CLAIM_TAS: return syncq_lock_tas_init(&q->lock.tas, &cfg);
  case SYNCQ_AM_CLAIM_TTAS: return syncq_lock_ttas_init(&q->lock.tas, &cfg);
  case SYNCQ_AM_CLAIM_TICKET: return syncq_lock_ticket_init(&q->lock.ticket, &cfg);
  case SYNCQ_AM_CLAIM_ANDERSON: return syncq_lock_anderson_init(&q->lock.anderson, &cfg);
  case SYNCQ_AM_CLAIM_POSIX: return am_posix_init(q);
  case SYNCQ_AM_CLAIM_LOCKFREE: return SYNCQ_OK; /* no lock */
  default: return SYNCQ_EINVAL;
  }
}

static int lock_q(am_queue *q, int claim) {
  switch (claim) {
  case SYNCQ_AM_CLAIM_TAS: return syncq_lock_tas_lock(&q->lock.tas);
  case SYNCQ_AM_CLAIM_TTAS: return syncq_lock_ttas_lock(&q->lock.tas);
  case SYNCQ_AM_CLAIM_TICKET: return syncq_lock_ticket_lock(&q->lock.ticket);
  case SYNCQ_AM_CLAIM_ANDERSON: return syncq_lock_anderson_lock(&q->lock.anderson);
  default: return SYNCQ_EINVAL;
  }
}

static int unlock_q(am_queue *q, int claim) {
  switch (claim) {
  case SYNCQ_AM_CLAIM_TAS: return syncq_lock_tas_unlock(&q->lock.tas);
  case SYNCQ_AM_CLAIM_TTAS: return syncq_lock_ttas_unlock(&q->lock.tas);
  case SYNCQ_AM_CLAIM_TICKET: return syncq_lock_ticket_unlock(&q->lock.ticket);
  case SYNCQ_AM_CLAIM_ANDERSON: return syncq_lock_anderson_unlock(&q->lock.anderson);
  default: return SYNCQ_EINVAL;
  }
}

/* Figure 2's critical section, shared with the POSIX claim: true when the
 * tail packet (and, for bulk, the tail block) was FREE and is now ours. */
bool am_claim_under_lock(void *base, am_queue *q, am_claim_state *cs) {
  const am_header *h = base;
  /* relaxed: the tails are written only under this lock, whose acquire
   * orders them */
  uint32_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
  am_packet *p = &am_packets(base, q)[t & (h->packets - 1u)];
  /* acquire: pairs with the receiver's release store of FREE(t), after
   * which the previous message's bulk block and fields are no longer read */
  if (atomic_load_explicit(&p->state, memory_order_acquire) != am_state(t, 0, AM_FREE)) return false;
  if (cs->want_bulk) {
    uint32_t b = atomic_load_explicit(&q->bulk_tail, memory_order_relaxed); /* under the lock, as above */
    am_bulk_slot *bs = &am_bulk_slots(base, q)[b & (h->bulk_blocks - 1u)];
    /* acquire: pairs with the receiver's release store of FREE(b) */
    if (atomic_load_explicit(&bs->state, memory_order_acquire) != am_state(b, 0, AM_FREE)) return false;
    atomic_store_explicit(&bs->owner_start, cs->start, memory_order_relaxed); /* published by the store below */
    /* release: a receiver or waiter that reads CLAIMED(b) also sees owner_start */
    atomic_store_explicit(&bs->state, am_state(b, cs->pid, AM_CLAIMED), memory_order_release);
    atomic_store_explicit(&q->bulk_tail, b + 1u, memory_order_relaxed); /* read under the lock only */
    cs->bulk_pos = b;
    cs->has_bulk = true;
  }
  /* The packet is FREE: nobody else reads its fields, so the bulk link is
   * written before the claim and a receiver that reclaims the claim of a
   * dead sender finds it. */
  p->has_bulk = cs->want_bulk ? 1u : 0u;
  p->bulk_pos = cs->want_bulk ? cs->bulk_pos : AM_NO_BULK;
  atomic_store_explicit(&p->owner_start, cs->start, memory_order_relaxed); /* published by the store below */
  /* release: pairs with the receiver's acquire load of the state (it reads
   * has_bulk, bulk_pos and owner_start of a CLAIMED packet to reclaim it) */
  atomic_store_explicit(&p->state, am_state(t, cs->pid, AM_CLAIMED), memory_order_release);
  atomic_store_explicit(&q->tail, t + 1u, memory_order_relaxed); /* read under the lock only */
  cs->pkt_pos = t;
  cs->has_pkt = true;
  return true;
}

int am_claim_locked(void *base, am_queue *q, int claim, bool nowait, am_claim_state *cs) {
  (void)nowait; /* a locking claim holds nothing when it fails */
  int r = lock_q(q, claim);
  if (r == SYNCQ_ELIMIT) return SYNCQ_FULL; /* Anderson's slots are all taken: wait as for a full queue */
  if (r != SYNCQ_OK) return r;
  bool got = am_claim_under_lock(base, q, cs);
  r = unlock_q(q, claim);
  if (r != SYNCQ_OK) return r;
  return got ? SYNCQ_OK : SYNCQ_FULL;
}
