/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * claim_common.c — what the packet claims of 000 share: Figure 2's
 * critical section (under any lock), the repair after a holder died inside
 * it, the give-back of a partial claim, and the take-back of a bulk block
 * whose claimer died.
 *
 * Contract
 *   Source:      000 §3.1, Figure 2 (CLAIMPACKET: under the queue's lock,
 *                take the tail packet if FREE, mark it CLAIMED, advance the
 *                tail; CLAIMBULK: the same on both the packet and the bulk
 *                queue in one critical section), for claim_lock.c's four
 *                spin locks and claim_posix.c's mutex. The states carry
 *                their position (am_segment.h), so the section checks
 *                FREE(tail), not a bare FREE flag.
 *   Progress:    wait-free (a bounded number of steps; the lock around it
 *                is the caller's).
 *   Atomics:     the section: 1 acquire load and 1 release store of the
 *                packet state, 1 relaxed store of the tail; bulk + 1
 *                acquire load and 1 release store of the block state.
 *                Repair: 2-4 loads, at most 2 stores. Take-back of a dead
 *                block: 1 load, 1 store (its start time), 1 CAS (and a
 *                /proc read).
 *   Memory:      in the segment; never allocates. Tails read from the
 *                segment are only ever used masked (am_pkt_at, am_slot_at).
 *   Signal-safe: no (the library as a whole is not).
 *   Process-shared: yes (positions and states only).
 *   Limits:      2^31 positions outstanding at once (32-bit tags).
 *   Linearizability: the claim takes effect at the release store of
 *                CLAIMED, under the lock.
 */
#include "am_claim.h"
#include "am_segment.h"
#include "../race_internal.h" /* SYNCQ_RACE_POINT: nothing outside race tests */

uint64_t am_lock_patience_ns(uint64_t stale_ns) {
  uint64_t p = stale_ns > UINT64_MAX / SYNCQ_AM_LOCK_WAIT_STALE ? UINT64_MAX : stale_ns * SYNCQ_AM_LOCK_WAIT_STALE;
  return p < SYNCQ_AM_LOCK_WAIT_MIN_NS ? SYNCQ_AM_LOCK_WAIT_MIN_NS : p;
}

/* ---------------------------------------------------------------- Figure 2 */

/* Under a locking claim, positions are claimed in order, so the slot at
 * tail position t (of n slots) shows FREE(t), or the previous lap's
 * occupant (t - n) still CLAIMED or READY. `busy` lists the types the
 * occupant may have. Anything else was written by no sender or receiver:
 * the tail or the slot was overwritten. */
static bool slot_state_ok(uint64_t s, uint32_t t, uint32_t n, unsigned busy) {
  if (s == am_state(t, 0, AM_FREE)) return true;
  unsigned type = am_state_type(s); /* up to 255 in an overwritten word: test before shifting */
  return am_state_pos(s) == t - n && type != AM_FREE && type <= AM_READY_BULK && (busy & (1u << type)) != 0;
}

/* Figure 2's critical section, for every locking claim: 1 when the
 * tail packet (and, for bulk, the tail block) was FREE and is now ours, 0
 * when not (the queue is full), SYNCQ_EINVAL when a slot shows a state no
 * claim leaves there. The tails are read from the segment but only ever
 * used masked (am_pkt_at, am_slot_at): an overwritten tail misplaces a
 * message or is refused, never moves an access. */
int am_claim_under_lock(const am_qview *v, am_claim_state *cs) {
  am_queue *q = v->q;
  /* relaxed: the tails are written only under this lock, whose acquire
   * orders them */
  uint32_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
  am_packet *p = am_pkt_at(v, t);
  /* acquire: pairs with the receiver's release store of FREE(t), after
   * which the previous message's bulk block and fields are no longer read */
  uint64_t ps = atomic_load_explicit(&p->state, memory_order_acquire);
  if (ps != am_state(t, 0, AM_FREE))
    return slot_state_ok(ps, t, v->packets, 1u << AM_CLAIMED | 1u << AM_READY | 1u << AM_READY_BULK) ? 0 : SYNCQ_EINVAL;
  if (cs->want_bulk) {
    uint32_t b = atomic_load_explicit(&q->bulk_tail, memory_order_relaxed); /* under the lock, as above */
    am_bulk_slot *bs = am_slot_at(v, b);
    /* acquire: pairs with the receiver's release store of FREE(b) */
    uint64_t bst = atomic_load_explicit(&bs->state, memory_order_acquire);
    if (bst != am_state(b, 0, AM_FREE))
      return slot_state_ok(bst, b, v->blocks, 1u << AM_CLAIMED | 1u << AM_READY) ? 0 : SYNCQ_EINVAL;
    atomic_store_explicit(&bs->owner_start, cs->start, memory_order_relaxed); /* published by the store below */
    /* release: a receiver or waiter that reads CLAIMED(b) also sees owner_start */
    atomic_store_explicit(&bs->state, am_state(b, cs->pid, AM_CLAIMED), memory_order_release);
    SYNCQ_RACE_POINT("am.claim.bulk_tail"); /* tests: die with the block claimed, the bulk tail not moved */
    atomic_store_explicit(&q->bulk_tail, b + 1u, memory_order_relaxed); /* read under the lock only */
    cs->bulk_pos = b;
    cs->has_bulk = true;
    SYNCQ_RACE_POINT("am.claim.bulk_inside"); /* tests: die holding the lock and the block, the packet not claimed */
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
  SYNCQ_RACE_POINT("am.claim.tail"); /* tests: die with the packet claimed, the tail not advanced */
  atomic_store_explicit(&q->tail, t + 1u, memory_order_relaxed); /* read under the lock only */
  cs->pkt_pos = t;
  cs->has_pkt = true;
  return 1;
}

/* The dead holder stopped somewhere inside am_claim_under_lock: after
 * claiming the packet (advance the tail it left behind), or after
 * claiming only the block (give the block back). The receiver may have
 * taken the dead holder's claim back already (after the stale interval,
 * before any sender came for the lock): the packet at the tail then shows
 * FREE a lap on, which only a claim of that position leaves there, and
 * the tail is advanced all the same (else every later claim would find
 * a state no claim leaves at the tail and refuse). Likewise the block: a
 * sender stalled on the bulk ring may have taken the dead holder's block
 * back (am_bulk_reclaim_dead, before any sender came for the lock), which
 * leaves it FREE a lap on at the bulk tail; the bulk tail is advanced past
 * it.
 *
 * A claimed packet leaves no bulk tail to repair: the section stores the
 * bulk tail past its block (relaxed) before the packet's link and its
 * release store of CLAIMED(t), so once the acquire load below reads that
 * CLAIMED(t) (or the receiver's FREE(t + packets), released after it
 * read CLAIMED(t)) the bulk tail reads the link's block + 1: it never
 * names the claimed packet's block (models/spin/am_lock.pml, under
 * sequential consistency, agrees). So the bulk tail is loaded only on the
 * path that uses it, after the packet's state (loaded before it, it could
 * read a value older than the dead holder's store). */
void am_claim_repair(const am_qview *v) {
  am_queue *q = v->q;
  /* relaxed: we hold the lock, whose acquire orders the tail */
  uint32_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
  am_packet *p = am_pkt_at(v, t);
  /* acquire: pairs with the dead holder's release store of CLAIMED (or
   * the receiver's release CAS of FREE a lap on, after it read that) */
  uint64_t s = atomic_load_explicit(&p->state, memory_order_acquire);
  if ((am_state_pos(s) == t && am_state_type(s) != AM_FREE) || s == am_state(t + v->packets, 0, AM_FREE)) {
    atomic_store_explicit(&q->tail, t + 1u, memory_order_relaxed); /* under the lock */
    return;
  }
  /* relaxed: under the lock, as the tail; loaded after the state above
   * (see the function's comment) */
  uint32_t b = atomic_load_explicit(&q->bulk_tail, memory_order_relaxed);
  am_bulk_slot *bs = am_slot_at(v, b);
  /* acquire: pairs with the dead holder's release store of CLAIMED(b),
   * or a stalled look's release CAS of FREE a lap on */
  uint64_t bstate = atomic_load_explicit(&bs->state, memory_order_acquire);
  if (bstate == am_state(b + v->blocks, 0, AM_FREE)) {
    atomic_store_explicit(&q->bulk_tail, b + 1u, memory_order_relaxed); /* under the lock */
    return;
  }
  if (am_state_pos(bstate) == b && am_state_type(bstate) == AM_CLAIMED) {
    /* relaxed: published by the release store below (0 while FREE,
     * am_segment.h) */
    atomic_store_explicit(&bs->owner_start, 0u, memory_order_relaxed);
    /* release: pairs with the next claimer's acquire load of FREE(b) (the
     * bulk tail still reads b) */
    atomic_store_explicit(&bs->state, am_state(b, 0, AM_FREE), memory_order_release);
  }
}

/* ---------------------------------------------------------------- give back, take back */

void am_claim_release(const am_qview *v, am_claim_state *cs) {
  if (cs->has_bulk && !cs->has_pkt) { /* lock-free, NOWAIT: the block was reserved, the packet not */
    am_bulk_slot *bs = am_slot_at(v, cs->bulk_pos);
    /* relaxed: published by the release store below (0 while FREE,
     * am_segment.h) */
    atomic_store_explicit(&bs->owner_start, 0u, memory_order_relaxed);
    /* release: pairs with the next claimer's acquire CAS of FREE */
    atomic_store_explicit(&bs->state, am_state(cs->bulk_pos + v->blocks, 0, AM_FREE), memory_order_release);
    cs->has_bulk = false;
  }
}

bool am_bulk_reclaim_dead(const am_qview *v, uint32_t pos) {
  am_bulk_slot *bs = am_slot_at(v, pos);
  /* acquire: pairs with the claimer's release/CAS of CLAIMED */
  uint64_t s = atomic_load_explicit(&bs->state, memory_order_acquire);
  if (am_state_type(s) != AM_CLAIMED) return false; /* FREE, or READY: its packet will free it */
  /* relaxed: 0 (judged by the pid alone) until the claimer writes it
   * after its claim; every free clears it before its release (am_segment.h) */
  if (!am_owner_dead(am_state_pid(s), atomic_load_explicit(&bs->owner_start, memory_order_relaxed))) return false;
  /* relaxed: published by the release CAS below; where that CAS fails
   * (another stalled sender took the block back first, and it may be
   * claimed again), a 0 in a live claim's word only has it judged by its
   * pid alone */
  atomic_store_explicit(&bs->owner_start, 0u, memory_order_relaxed);
  /* release: pairs with the next claimer's acquire CAS/load of FREE */
  return atomic_compare_exchange_strong_explicit(&bs->state, &s, am_state(am_state_pos(s) + v->blocks, 0, AM_FREE),
                                                 memory_order_release, memory_order_relaxed);
}

void am_claim_locked_bulk_stalled(const am_qview *v, am_claim_state *cs) {
  if (!cs->want_bulk || cs->has_bulk) return;
  /* relaxed: a hint of which block we wait for; the CAS in
   * am_bulk_reclaim_dead decides */
  (void)am_bulk_reclaim_dead(v, atomic_load_explicit(&v->q->bulk_tail, memory_order_relaxed));
}
