/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * am_claim.h — the claim algorithms' interface (layer 2 of src/am, see
 * am_segment.h): one ops table per claim kind (claim_lock.c,
 * claim_posix.c, claim_lockfree.c), chosen once per endpoint or peer from
 * the geometry it validated, and the helpers the claims share
 * (claim_common.c).
 *
 * A claim gives the sender a packet position (and, for a bulk message, a
 * bulk position) whose slots it owns in state CLAIMED, with owner_start
 * written. Progress across calls lives in am_claim_state (the lock-free
 * claim keeps an assignment it could not claim yet).
 */
#ifndef SYNCQ_AM_CLAIM_H
#define SYNCQ_AM_CLAIM_H

#include <stdbool.h>
#include <stdint.h>

#include "am_segment.h"

typedef struct am_claim_state {
  bool want_bulk;
  bool has_bulk, has_pkt;           /* claimed */
  bool bulk_assigned, pkt_assigned; /* lock-free: assigned, not yet claimed */
  uint32_t bulk_pos, pkt_pos;
  uint32_t pid;
  uint64_t start;
  uint64_t bulk_seen; /* lock-free: the state of the block waited for at the last stalled look */
} am_claim_state;

/* am_claim_state.bulk_seen before the first stalled look (the lock-free
 * claim's bulk_skip_abandoned skips a position two looks saw unchanged):
 * a state of no type, never FREE, so the first look only records. A
 * zero-filled bulk_seen equals the first lap's FREE(0), and the first
 * look skipped that position after one stale interval of the stall
 * instead of two. */
#define AM_BULK_SEEN_NONE UINT64_MAX

typedef struct am_claim_ops {
  const char *name; /* syncq_am_claim_name */
  /* Make queue q's lock in a zero-filled segment being created:
   * SYNCQ_OK, SYNCQ_ENOTSUP or SYNCQ_ESYS. */
  int (*init)(am_queue *q);
  /* Claim (see above): SYNCQ_OK (all claimed), SYNCQ_FULL (not now: back
   * off, poll, call again), or an error (SYNCQ_EBUSY, SYNCQ_ETIMEDOUT,
   * SYNCQ_EINVAL, SYNCQ_ESYS). A locking claim holds nothing when it
   * fails; the lock-free one may hold a bulk block (am_claim_release). */
  int (*claim)(const am_qview *v, bool nowait, am_claim_state *cs);
  /* A plain send has been stalled a stale interval waiting for a bulk
   * block: take back the block a dead sender holds, or skip a position
   * whose sender died between assign and claim. */
  void (*bulk_stalled)(const am_qview *v, am_claim_state *cs);
  /* A sender is assigned a position before it claims its slot (Figure
   * 3): the receiver may find the head slot FREE for a position already
   * assigned (skipped once abandoned), and a skipped slot a lap ahead. */
  bool assigns;
} am_claim_ops;

/* The tables, one per syncq_am_claim. */
extern const am_claim_ops am_claim_tas, am_claim_ttas, am_claim_ticket, am_claim_anderson; /* claim_lock.c */
extern const am_claim_ops am_claim_posix_mutex;                                            /* claim_posix.c */
extern const am_claim_ops am_claim_lockfree;                                               /* claim_lockfree.c */

/* ---- shared by the claims (claim_common.c) ---- */

/* Give back what a NOWAIT claim got before returning SYNCQ_FULL. */
void am_claim_release(const am_qview *v, am_claim_state *cs);
/* How long a plain send waits on a claim lock that shows no progress
 * (SYNCQ_AM_LOCK_WAIT_STALE stale intervals, saturating, at least
 * SYNCQ_AM_LOCK_WAIT_MIN_NS). */
uint64_t am_lock_patience_ns(uint64_t stale_ns);
/* Figure 2's critical section, for the locking claims: 1 claimed, 0
 * full, SYNCQ_EINVAL (a slot in a state no claim leaves). */
int am_claim_under_lock(const am_qview *v, am_claim_state *cs);
/* After taking over the lock of a holder that died inside Figure 2's
 * critical section: advance a half-advanced tail or give back a block
 * claimed without its packet. */
void am_claim_repair(const am_qview *v);
/* Take back the bulk block at bulk position pos if it is CLAIMED by a dead
 * owner (a sender that died before its packet); true if it did. */
bool am_bulk_reclaim_dead(const am_qview *v, uint32_t pos);
/* The locking claims' bulk_stalled: the block at the bulk tail may be
 * held by a sender that died inside Figure 2's section, after claiming
 * the block and before its packet; take it back. */
void am_claim_locked_bulk_stalled(const am_qview *v, am_claim_state *cs);

#endif /* SYNCQ_AM_CLAIM_H */
