/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * claim_lockfree.c — 000's lock-free packet claim (Figure 3).
 *
 * Contract
 *   Source:      000 §3.2, Figure 3: a sender is assigned a packet by
 *                CAS on the queue tail (tail -> tail + 1), then claims the
 *                assigned packet by CAS on its type (FREE -> CLAIMED); more
 *                senders may be assigned than there are packets, and one
 *                whose claim fails backs off, polls and tries again. A bulk
 *                message reserves its bulk block the same way (CAS on the
 *                bulk tail, CAS on the block's claimed flag) before its
 *                packet, so a sender never holds the head packet while
 *                waiting for a block (§3.2's second deadlock).
 *                Differences: the tails are 32-bit counters, not indexes
 *                mod Q, and a slot's FREE state carries the position it is
 *                free for (am_segment.h), so the claim CAS expects
 *                FREE(position): per-sender order holds even when a sender
 *                is preempted for a lap, and the receiver can skip a
 *                position whose sender died between the two CASes (it
 *                stores FREE(position + Q); a live sender that finds its
 *                position skipped is assigned a new one). A bulk position
 *                whose sender died between its two CASes is skipped by a
 *                sender stalled on the bulk ring, once the block at the
 *                bulk tail has shown FREE for the dead position through a
 *                whole stale interval (bulk_skip_abandoned); a live sender
 *                that finds its block position skipped takes a new one at
 *                once, once, as for a packet. A sender is assigned a
 *                packet only when the packet at the tail is free for that
 *                position, and a bulk block only when the block at the
 *                bulk tail is, so no more senders are assigned than there
 *                are slots: an assignment on a full queue bound the
 *                packet freed next to a sender that was often not
 *                running (more processes than processors), and the
 *                in-order receiver waited at it (docs/reliability.md,
 *                "Active messages: seven lock-free writers on two
 *                processors"); in 000 any sender assigned that packet
 *                could take it (models/spin/am_claim.pml checks the rule
 *                across assign's separate loads and CAS, and finds the
 *                packet bound to a sender backing off with the old
 *                assignment, am-claim-control-old-assign). A bulk block
 *                assigned ahead bound the block freed next to a stalled
 *                sender the same way: the bulk send assigned it a lap
 *                later waited until its own stall skipped the position
 *                (two stale intervals), and a NOWAIT bulk send found the
 *                ring full meanwhile (models/spin/am_bulk.pml checks the
 *                bulk rule; am-bulk-control-old-assign fails the old one).
 *   Progress:    lock-free in 000's (Valois's) sense: no locks, but a
 *                sender waits for the packet at the tail (and the block
 *                at the bulk tail) to be freed by the receiver; a dead
 *                sender cannot block other senders.
 *   Atomics:     uncontended short message: 2 loads (the tail, the tail
 *                packet's state) + 1 CAS (assign) + 1 CAS (claim) + 1
 *                store (owner). Bulk: 2 loads (the bulk tail, the tail
 *                block's state) + 2 CAS + 1 store more, NOWAIT or not.
 *                000 counts "four CAS instructions" for bulk, as here.
 *   Memory:      in the segment; never allocates.
 *   Signal-safe: no (the library as a whole is not).
 *   Process-shared: yes (positions and states only).
 *   Bounds:      a NOWAIT claim never waits (SYNCQ_FULL). A slot state no
 *                sender or receiver writes (unknown type, a pid in FREE)
 *                is SYNCQ_EINVAL. A plain claim waits while the queue is
 *                full (packets or bulk blocks), as a full queue is
 *                waited on (am.c), holding no assignment.
 *   Limits:      2^31 positions may be outstanding at once (counter wrap).
 *                A sender killed between its claim CAS and the store of
 *                its start time leaves a claim that reads start time 0
 *                (judged by its pid alone, so a live sender in that window
 *                is never taken for dead); if its pid is then reused, the
 *                claim is taken for the new process's until that process
 *                exits, and the receiver waits at it (as the locking
 *                claims' lock word, claim_lock.c; models/spin/am_claim.pml,
 *                am-claim-pid-reused-lives-on, shows it).
 *                A sender takes a packet or bulk block assignment only
 *                when the slot at the tail is free for it, so a NOWAIT
 *                send never leaves an assignment behind when it returns
 *                SYNCQ_FULL, and a plain send waits holding none.
 */
#include <stddef.h>

#include "am_claim.h"
#include "am_segment.h"
#include "../race_internal.h" /* SYNCQ_RACE_POINT: nothing outside race tests */

/* A slot state no sender or receiver writes: an unknown type, or a pid
 * in a FREE state. Only an overwritten segment shows one. */
static bool state_bad(uint64_t s) {
  return am_state_type(s) > AM_READY_BULK || (am_state_type(s) == AM_FREE && am_state_pid(s) != 0u);
}

/* Assign the next position of *tail, only when its slot (in `states`, `n`
 * slots of `stride` bytes) is FREE for it. SYNCQ_FULL when the tail slot
 * still holds an earlier lap's position, SYNCQ_EINVAL when it shows a
 * state nobody writes (the queue would never drain). */
static int assign(_Atomic(uint32_t) *tail, unsigned char *states, size_t stride, uint32_t n, uint32_t *pos) {
  uint32_t t = atomic_load_explicit(tail, memory_order_relaxed); /* the CAS below decides */
  for (;;) {
    SYNCQ_RACE_POINT("am.claim.assign"); /* tests: another sender takes position t here */
    _Atomic(uint64_t) *st = (_Atomic(uint64_t) *)(states + (size_t)(t & (n - 1u)) * stride);
    /* relaxed: a hint only; the claim CAS (acquire) decides ownership */
    uint64_t s = atomic_load_explicit(st, memory_order_relaxed);
    if (s != am_state(t, 0, AM_FREE)) {
      if (state_bad(s)) return SYNCQ_EINVAL;
      /* An earlier lap's position, not yet freed (or, FREE, assigned and
       * not yet claimed: a bulk block's is skipped by a stalled send,
       * bulk_skip_abandoned, a packet's by the receiver): full. */
      if (am_pos_after(t, am_state_pos(s))) return SYNCQ_FULL;
      /* Position t taken (claimed, committed, or already freed for
       * t + n): another sender was assigned t since this one read the
       * tail, so there may be room beyond it. The tail has moved past
       * t, and a CAS reads the tail's latest value: the CAS below
       * fails and reloads t (on a segment another process overwrote it
       * may succeed; the claim then finds the slot passed and takes a
       * new position). */
    }
    /* relaxed: the position orders nothing; the claim CAS on the slot
     * (acquire) orders the sender after the receiver's FREE store */
    if (atomic_compare_exchange_weak_explicit(tail, &t, t + 1u, memory_order_relaxed, memory_order_relaxed)) {
      *pos = t;
      return SYNCQ_OK;
    }
  }
}

/* CAS the slot FREE(pos) -> CLAIMED(pos, pid): SYNCQ_OK, SYNCQ_FULL (not
 * yet free; *passed tells whether the slot has moved past pos: the
 * receiver skipped it), SYNCQ_EINVAL (a state nobody writes). */
static int claim_slot(_Atomic(uint64_t) *st, uint32_t pos, uint32_t pid, bool *passed) {
  uint64_t expect = am_state(pos, 0, AM_FREE);
  /* acquire on success: pairs with the receiver's release store of
   * FREE(pos) (the previous occupant is done with) */
  if (atomic_compare_exchange_strong_explicit(st, &expect, am_state(pos, pid, AM_CLAIMED), memory_order_acquire,
                                              memory_order_relaxed))
    return SYNCQ_OK;
  if (state_bad(expect)) return SYNCQ_EINVAL;
  *passed = am_pos_after(am_state_pos(expect), pos);
  return SYNCQ_FULL;
}

/* The packet and the bulk block share one layout where the claim looks:
 * the state first, the owner's start time next (am_segment.h). assign and
 * take read a slot of either through a byte stride from these offsets. */
_Static_assert(offsetof(am_packet, state) == 0 && offsetof(am_bulk_slot, state) == 0, "state first");
_Static_assert(offsetof(am_packet, owner_start) == offsetof(am_bulk_slot, owner_start), "owner_start alike");

/* Take a slot of one ring (the packets, or the bulk blocks: its tail,
 * `n` slots of `stride` bytes from `slots`), keeping the assignment in
 * *assigned and *pos across calls: assign a position when none is held
 * (only when the slot at the tail is free for it), claim it, and write
 * the owner's start time. A claim that finds its position skipped
 * (passed) takes a new position at once, once: the ring may have room,
 * and a NOWAIT send answered SYNCQ_FULL for it; a second skip in a row is
 * left to the caller (a plain send retries, a NOWAIT send answers), so a
 * segment another process rewrites under us cannot keep a NOWAIT send
 * here. SYNCQ_OK: the slot claimed is *out. SYNCQ_FULL leaves nothing
 * held but on a segment overwritten between assign and claim (the slot
 * then shows neither FREE for the position nor a later one): the
 * assignment, never a claim; `seen`, when not NULL, is
 * reset on each new assignment (the bulk block's stalled look,
 * bulk_skip_abandoned). */
static inline int take(_Atomic(uint32_t) *tail, unsigned char *slots, size_t stride, uint32_t n,
                       const am_claim_state *cs, bool *assigned, uint32_t *pos, uint64_t *seen,
                       const char *inside_point, unsigned char **out) {
  (void)inside_point; /* read only by race-test builds' SYNCQ_RACE_POINT */
  unsigned char *slot;
  for (bool again = false;; again = true) {
    if (!*assigned) {
      int r = assign(tail, slots, stride, n, pos);
      if (r != SYNCQ_OK) return r;
      *assigned = true;
      if (seen != NULL) *seen = AM_BULK_SEEN_NONE; /* no stalled look at this block yet */
      SYNCQ_RACE_POINT(inside_point);              /* tests: die (or stop) assigned, not claimed */
    }
    slot = slots + (size_t)(*pos & (n - 1u)) * stride;
    bool passed = false;
    int r = claim_slot((_Atomic(uint64_t) *)slot, *pos, cs->pid, &passed);
    if (r == SYNCQ_OK) break;
    if (!passed) return r;
    /* Skipped: a packet by the receiver, a bulk block by a send stalled
     * on the same block a lap later (bulk_skip_abandoned); either way
     * this sender stalled between its two CASes through two stale
     * intervals. */
    *assigned = false;
    if (again) return r;
  }
  SYNCQ_RACE_POINT("am.claim.owner"); /* tests: stop claimed, the start time not yet written */
  /* Ours now. The receiver reads the owner only after seeing CLAIMED and
   * deciding the owner is dead, or after READY (release in am.c).
   * relaxed: until this store reclaimers read owner_start as 0 (every
   * free clears it, am_segment.h) and judge us by our pid alone, never by
   * the previous claimer's start time (which made a live sender here look
   * dead, and its claim was taken back under it) */
  atomic_store_explicit((_Atomic(uint64_t) *)(slot + offsetof(am_packet, owner_start)), cs->start,
                        memory_order_relaxed);
  *assigned = false;
  *out = slot; /* the caller's packet: not recomputed from the position */
  return SYNCQ_OK;
}

static int lockfree_claim(const am_qview *v, bool nowait, am_claim_state *cs) {
  am_queue *q = v->q;
  (void)nowait; /* a plain send and a NOWAIT send claim alike; am_send waits or answers */
  if (cs->want_bulk && !cs->has_bulk) {
    /* Only when the block at the tail is free for it, waiting or not: a
     * block position taken on a full ring would bind the block freed next
     * to this sender (FREE(position)), and while this sender is not
     * running a NOWAIT bulk send would find the ring full and a plain one
     * would wait until the position was skipped (file comment). */
    unsigned char *slot;
    int r = take(&q->bulk_tail, (unsigned char *)v->slots, sizeof *v->slots, v->blocks, cs, &cs->bulk_assigned,
                 &cs->bulk_pos, &cs->bulk_seen, "am.claim.bulk_inside", &slot);
    if (r != SYNCQ_OK) return r;
    cs->has_bulk = true;
  }
  if (!cs->has_pkt) {
    /* Only when the packet at the tail is free for it, waiting or not: a
     * position taken on a full queue binds the packet to this sender
     * (FREE(position)), and the in-order receiver waits at it until this
     * sender runs again (docs/reliability.md, "Active messages: seven
     * lock-free writers on two processors"). */
    unsigned char *slot;
    int r = take(&q->tail, (unsigned char *)v->pk, sizeof *v->pk, v->packets, cs, &cs->pkt_assigned, &cs->pkt_pos, NULL,
                 "am.claim.inside", &slot);
    if (r != SYNCQ_OK) return r;
    am_packet *p = (am_packet *)slot;
    p->has_bulk = cs->want_bulk ? 1u : 0u;
    p->bulk_pos = cs->want_bulk ? cs->bulk_pos : AM_NO_BULK;
    cs->has_pkt = true;
  }
  return SYNCQ_OK;
}

/* The block of bulk position pos (the bulk tail, or the position a
 * stalled send holds) still shows FREE for an earlier position, unchanged
 * since the last look (`seen`, one stale interval ago): that position's
 * sender died between assign and claim. Skip it (FREE for a lap later; a
 * live late sender then takes a new position). Returns the state seen
 * now. */
static uint64_t bulk_skip_abandoned(const am_qview *v, uint32_t pos, uint64_t seen) {
  am_bulk_slot *bs = am_slot_at(v, pos);
  /* relaxed: the CAS below decides; nothing is read through this value */
  uint64_t s = atomic_load_explicit(&bs->state, memory_order_relaxed);
  if (s != seen || am_state_type(s) != AM_FREE || !am_pos_after(pos, am_state_pos(s))) return s;
  uint64_t next = am_state(am_state_pos(s) + v->blocks, 0, AM_FREE);
  /* relaxed: FREE -> FREE hands over no data; the next claimer's acquire
   * CAS still pairs with the receiver's release store that freed it */
  (void)atomic_compare_exchange_strong_explicit(&bs->state, &s, next, memory_order_relaxed, memory_order_relaxed);
  return next;
}

/* A plain send stalled on the bulk ring, once per stale interval: the
 * block at the bulk tail (or at its own position, where it holds one) is
 * held by a sender that died before its packet (take it back), or still
 * free for an earlier position whose sender died between its two CASes
 * (skip that position: the block is then free for the tail's). */
static void lockfree_bulk_stalled(const am_qview *v, am_claim_state *cs) {
  if (!cs->want_bulk || cs->has_bulk) return;
  /* relaxed: a hint of which block we wait for; the CASes decide */
  uint32_t bp = cs->bulk_assigned ? cs->bulk_pos : atomic_load_explicit(&v->q->bulk_tail, memory_order_relaxed);
  (void)am_bulk_reclaim_dead(v, bp);
  cs->bulk_seen = bulk_skip_abandoned(v, bp, cs->bulk_seen);
}

static int lockfree_init(am_queue *q) {
  (void)q;
  return SYNCQ_OK; /* no lock: the tails and states were zero-filled and set by creation */
}

const am_claim_ops am_claim_lockfree = {"lock-free", lockfree_init, lockfree_claim, lockfree_bulk_stalled, true};
