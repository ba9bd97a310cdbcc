/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * claim_lock.c — the spin-lock packet claims of 000: test-and-set,
 * test-and-test-and-set, ticket and Anderson locks around Figure 2, made
 * recoverable: a waiter takes back a lock whose holder died.
 *
 * Contract
 *   Source:      000 §3.1, Figure 2 (CLAIMPACKET: under the queue's lock,
 *                take the tail packet if FREE, mark it CLAIMED, advance the
 *                tail; CLAIMBULK: the same on both the packet and the bulk
 *                queue in one critical section). The locks are 000's four
 *                spin locks (TAS and TTAS with bounded exponential backoff,
 *                003 §3.1 / 001 §4; the ticket lock; Anderson's array lock,
 *                003 §3.1), written here with one change: every word that
 *                says who may enter or who holds the lock carries the
 *                holder's pid (the am_state encoding of am_segment.h,
 *                type GO / HELD / SKIP), and the holder's process start
 *                time sits beside it. The library's own locks
 *                (src/lock/tas.c, ticket.c, anderson.c) keep a bare 0/1 or
 *                a counter, so a dead holder could not be told from a slow
 *                one; these can.
 *                  TAS/TTAS: one word, GO(k) free, HELD(k, pid) held; the
 *                    test-and-set is a CAS GO(k) -> HELD(k, pid) (an
 *                    exchange would overwrite the holder's name; TAS
 *                    tries it while the lock is held too, for the GO(k + 1)
 *                    the holder will store), release stores GO(k + 1): the
 *                    count k makes every hand-over a change of the word.
 *                  Ticket: next (fetch-and-add gives position t) and one
 *                    word GO(x) / HELD(x, pid): "now serving x". A waiter
 *                    enters with CAS GO(t) -> HELD(t, pid); release stores
 *                    GO(t + 1).
 *                  Anderson: the same positions, but position x's word is
 *                    slot[x mod 64] (one cache line each), so every waiter
 *                    spins on its own line; release stores GO(t + 1) into
 *                    the successor's slot. Positions are tagged, so more
 *                    than 64 waiters share slots safely (no SYNCQ_ELIMIT).
 *   Recovery:    a waiter that sees the current position's word unchanged
 *                for the endpoint's stale_claim_ns acts on it:
 *                  HELD(x, pid) with pid dead (exited, zombie, or pid reused:
 *                    start time differs; am_owner_dead) -> clear the
 *                    dead holder's start time beside the word, CAS to
 *                    HELD(x, self) (else the next waiter, reading our word
 *                    and the dead holder's start time, judged us dead):
 *                    the waiter now holds position x, repairs what
 *                    the dead holder left half done inside Figure 2
 *                    (am_claim_repair) and then either uses the lock (TAS)
 *                    or releases x to its successor (ticket, Anderson);
 *                  GO(x) (position x was handed over but never entered: its
 *                    process died waiting, or is stopped) -> CAS to SKIP(x)
 *                    and hand GO(x + 1) on. A live process whose position
 *                    was skipped sees it (the word moved past its position)
 *                    and takes a new one: the CAS decides between "x enters"
 *                    and "x is skipped", so two never enter.
 *                  SKIP(x) with GO(x + 1) not handed on (the skipper died,
 *                    or is stopped, between its CAS and its hand-over) ->
 *                    hand GO(x + 1) on. Every hand-over after a skip is a
 *                    CAS from the earlier word of x + 1's slot
 *                    (rl_hand_on), so the skipper and such a waiter hand
 *                    x + 1 on once between them.
 *                  Then, in the same pass, every following position whose
 *                    waiter record (am_queue.waiter: position and pid,
 *                    written by a waiter that cannot enter at once) names
 *                    a dead process is skipped too (rl_skip_dead_run): a
 *                    crash of many queued senders costs one stale
 *                    interval, not one per dead position.
 *                The receiver takes back the dead holder's packet claim as
 *                for any dead sender (am.c).
 *   Bounds:      SYNCQ_AM_NOWAIT tries the lock AM_NOWAIT_TRIES times (a
 *                few microseconds) and returns SYNCQ_EBUSY: a queue lock
 *                is only joined when it is free and nobody waits (a waiter
 *                cannot leave a queue without costing the others a stale
 *                interval). A plain claim returns SYNCQ_ETIMEDOUT once the
 *                lock has shown no progress of its own for
 *                SYNCQ_AM_LOCK_WAIT_STALE stale intervals, at least
 *                SYNCQ_AM_LOCK_WAIT_MIN_NS (a live holder
 *                that never lets go: stopped, or a foreign pid written
 *                into the word); positions this waiter skipped are not
 *                progress. A lock word no operation writes (TAS: an
 *                unknown type, a SKIP, a pid in GO) is SYNCQ_EINVAL at once.
 *   Progress:    blocking; a holder or waiter that dies blocks the others
 *                for about stale_claim_ns (plus one /proc read per dead
 *                position; a dead waiter without a record, killed between
 *                its fetch-and-add and the record, costs one more
 *                interval). A process stopped (SIGSTOP) while holding the
 *                lock blocks plain claims for the bound above (then
 *                SYNCQ_ETIMEDOUT), NOWAIT claims not at all (SYNCQ_EBUSY):
 *                it is not dead. A process stopped while waiting loses
 *                its place.
 *   Atomics:     uncontended claim: TAS 1 load + 1 CAS, TTAS 1 load + 1 CAS, ticket
 *                1 fetch-and-add + 1 load + 1 CAS, Anderson 1 fetch-and-add
 *                + 1 load + 1 CAS, none reading the clock (a waiter reads
 *                it once it cannot enter); release 1 store (+ 1 relaxed store of
 *                the start time); + Figure 2's section (1 acquire load and
 *                1 release store of the packet state; bulk + 1 load and
 *                1 store of the block state). A waiter that cannot enter
 *                at once: + 1 relaxed store of its record.
 *   Memory:      in the segment (am_rlock: 65 cache lines per queue; the
 *                waiter records: AM_RL_WAITERS x 8 bytes per queue);
 *                never allocates. Every index read from the segment (tails,
 *                positions) is masked with the validated geometry's sizes.
 *   Signal-safe: no (the library as a whole is not).
 *   Process-shared: yes (the point of it).
 *   Limits:      2^31 positions outstanding at once (32-bit tags); a pid
 *                that is reused while its start time is not yet written
 *                beside the lock word is taken for the live holder until
 *                the new process exits (or the bound). More than
 *                AM_RL_WAITERS waiters share records: a record overwritten
 *                by a later position reads as "unknown" (the stale rule).
 */
#include <sched.h>

#include "am_claim.h"
#include "am_segment.h"
#include "syncq/backoff.h"
#include "syncq/clock.h"
#include "../race_internal.h" /* SYNCQ_RACE_POINT: nothing outside race tests */

/* Lock word types (bits 7..0 of the am_state encoding). */
enum { AM_RL_GO = 0, AM_RL_HELD = 1, AM_RL_SKIP = 2 };
/* Waiter record types (am_queue.waiter): waiting there, or gone for good
 * (a plain claim that gave up: SYNCQ_ETIMEDOUT). */
enum { AM_RL_WAITING = 1, AM_RL_LEFT = 2 };

/* Backoff after a failed test-and-set (000 §3.1 / 001 §4: 100 ns doubling
 * to 30 us), the same as the library's TAS lock. */
#define AM_RL_BACKOFF_INITIAL_NS 100u
#define AM_RL_BACKOFF_CAP_NS 30000u
/* Queue-lock waiters spin locally; they look at the clock (to notice a
 * stuck position) once every this many spins. */
#define AM_RL_CLOCK_EVERY 64u
/* A NOWAIT claim tries the lock this many times (backing off from 100 ns,
 * a few microseconds in all) before SYNCQ_EBUSY. */
#define AM_NOWAIT_TRIES 8u

/* Every claim of this file starts its lock the same way. */
static int rl_init(am_queue *q) {
  am_rlock *l = &q->lock.rlock;
  atomic_init(&l->next, 0u);
  /* Position 0 may enter; every other slot carries a tag before its
   * own first position (i - AM_RLOCK_SLOTS, modulo 2^32). */
  atomic_init(&l->slot[0].word, am_state(0, 0, AM_RL_GO));
  atomic_init(&l->slot[0].start, 0u);
  for (uint32_t i = 1; i < AM_RLOCK_SLOTS; i++) {
    atomic_init(&l->slot[i].word, am_state(i - AM_RLOCK_SLOTS, 0, AM_RL_SKIP));
    atomic_init(&l->slot[i].start, 0u);
  }
  return SYNCQ_OK;
}

/* ---------------------------------------------------------------- locks */

typedef struct rl_self {
  uint32_t pid;
  uint64_t start;
  uint64_t stale_ns;
  uint64_t patience_ns; /* a plain claim gives up after this long without progress */
} rl_self;

/* Watches one word (a lock word, or a fingerprint of several) for staying
 * unchanged: through a stale interval (act on a dead or absent owner), and
 * through the patience bound (give up: SYNCQ_ETIMEDOUT). Giving up comes
 * only at the end of a stale interval after one that was acted on, so a
 * waiter that was itself descheduled for the whole bound still looks at
 * the holder (and takes back a dead one) before it gives up. */
typedef struct rl_watch {
  uint64_t word;
  uint64_t since; /* 0: not watching; restarts every stale interval */
  uint64_t first; /* when the word was first seen: progress resets it */
  unsigned acted; /* stale intervals ended (and acted on) since `first` */
} rl_watch;

enum { RL_WAIT, RL_STALE, RL_GIVE_UP };

static int rl_look(rl_watch *wt, uint64_t w, const rl_self *me) {
  uint64_t now = syncq_now_ns();
  if (wt->since == 0 || wt->word != w) {
    wt->word = w;
    wt->since = wt->first = now;
    wt->acted = 0;
    return RL_WAIT;
  }
  if (now - wt->since < me->stale_ns) return RL_WAIT;
  wt->since = now; /* a live owner is asked again one interval later */
  if (wt->acted > 0 && now - wt->first >= me->patience_ns) return RL_GIVE_UP;
  wt->acted++;
  return RL_STALE;
}

static bool rl_holder_dead(const am_rlock_slot *s, uint64_t w) {
  /* relaxed: reads 0 (judge by pid alone) or the holder's own start time:
   * every earlier holder's start was cleared before a release that our
   * acquire load of w is ordered after */
  return am_owner_dead(am_state_pid(w), atomic_load_explicit(&s->start, memory_order_relaxed));
}

/* Enter slot s at position pos by CAS from *expect (GO(pos) or a dead
 * holder's HELD(pos, pid)); on failure *expect gets the word seen.
 * Taking a dead holder's word over, the start time beside it is still the
 * dead holder's until we write ours: a waiter that read HELD(pos, us) and
 * then that start time would judge us dead (our pid's process has another
 * start time) and take the lock over from us. So it is cleared first (0:
 * judged by the pid alone), and the CAS publishes the clearing. A waiter
 * that clears it and then loses the CAS leaves 0 beside the winner's word
 * (the winner judged by its pid alone), as am_bulk_reclaim_dead does. */
static bool rl_enter(am_rlock_slot *s, uint64_t *expect, uint32_t pos, const rl_self *me) {
  bool over = am_state_type(*expect) == AM_RL_HELD; /* a dead holder's word: a take-over */
  bool entered;
  if (over) {
    /* relaxed: published by the release half of the CAS below */
    atomic_store_explicit(&s->start, 0u, memory_order_relaxed);
    /* acq_rel on success: acquire as below; release pairs with a waiter's
     * acquire load of HELD(pos, us) (tas_lock, rl_current), after which it
     * reads 0 or our start time beside it, never the dead holder's */
    entered = atomic_compare_exchange_strong_explicit(&s->word, expect, am_state(pos, me->pid, AM_RL_HELD),
                                                      memory_order_acq_rel, memory_order_acquire);
  } else {
    /* acquire on success: pairs with the release store that handed GO(pos)
     * over (the previous holder's critical section happens before ours);
     * acquire on failure: the word seen is read before the start time
     * beside it (rl_holder_dead) */
    entered = atomic_compare_exchange_strong_explicit(&s->word, expect, am_state(pos, me->pid, AM_RL_HELD),
                                                      memory_order_acquire, memory_order_acquire);
  }
  if (!entered) return false;
  if (over) SYNCQ_RACE_POINT("am.claim.took_over"); /* tests: stop the new holder before its start time */
  /* relaxed: read by waiters only to judge whether we died (0: unknown) */
  atomic_store_explicit(&s->start, me->start, memory_order_relaxed);
  return true;
}

/* Release position pos of slot s: hand GO(pos + 1) to `next` (the same
 * slot for TAS and ticket). */
static void rl_release(am_rlock_slot *s, am_rlock_slot *next, uint32_t pos) {
  atomic_store_explicit(&s->start, 0u, memory_order_relaxed); /* published by the release store below */
  /* release: pairs with the next holder's acquire CAS in rl_enter */
  atomic_store_explicit(&next->word, am_state(pos + 1u, 0, AM_RL_GO), memory_order_release);
}

/* Hand position y on after y - 1 was skipped: GO(y) into y's slot `succ`
 * unless it already names y or a later position. A CAS from the word
 * read, not a store: a waiter that finds SKIP(y - 1) stale (its skipper
 * died or stalls before its hand-over) hands y on too, and a second GO(y)
 * stored after y entered would overwrite y's HELD and let another waiter
 * in beside it (models/spin/am_ticket.pml, -DSTORE_HANDON=1). True if we
 * handed y on. */
static bool rl_hand_on(am_rlock_slot *succ, uint32_t y) {
  /* relaxed: only its position is used, to tell whether y was handed on */
  uint64_t w = atomic_load_explicit(&succ->word, memory_order_relaxed);
  while (am_pos_after(y, am_state_pos(w))) {
    /* release: pairs with y's acquire CAS in rl_enter and the waiters'
     * acquire loads (rl_current); relaxed on failure: as the load above */
    if (atomic_compare_exchange_strong_explicit(&succ->word, &w, am_state(y, 0, AM_RL_GO), memory_order_release,
                                                memory_order_relaxed))
      return true;
  }
  return false;
}

/* A lock word no lock operation writes: a type outside GO / HELD / SKIP,
 * or a pid in a GO or SKIP word. Only an overwritten segment shows one. */
static bool rl_word_bad(uint64_t w) {
  unsigned t = am_state_type(w);
  return t > AM_RL_SKIP || (t != AM_RL_HELD && am_state_pid(w) != 0u);
}

/* TAS / TTAS: one word, GO(k) free, HELD(k, pid) held; each release hands
 * GO(k + 1) on, so a waiter sees every hand-over as a change of the word
 * (a holder that takes the lock again and again is not one that never
 * lets go). NOWAIT: AM_NOWAIT_TRIES test-and-sets, then SYNCQ_EBUSY. */
static int tas_lock(const am_qview *v, bool test_first, bool nowait, const rl_self *me, uint32_t *pos) {
  am_rlock_slot *s = &v->q->lock.rlock.slot[0];
  syncq_backoff_exp b;
  (void)syncq_backoff_exp_init(&b, AM_RL_BACKOFF_INITIAL_NS, AM_RL_BACKOFF_CAP_NS);
  rl_watch wt = {0, 0, 0, 0};
  /* acquire: before reading the start time beside it */
  uint64_t w = atomic_load_explicit(&s->word, memory_order_acquire);
  for (unsigned tries = 1;; tries++) {
    if (rl_word_bad(w) || am_state_type(w) == AM_RL_SKIP) return SYNCQ_EINVAL; /* TAS never skips */
    bool held = am_state_type(w) == AM_RL_HELD;
    if (!held || !test_first) {
      /* TAS tries even while the lock is held (000's test-and-set), for
       * the GO(k + 1) the holder will hand on; TTAS only when it is free */
      uint32_t k = held ? am_state_pos(w) + 1u : am_state_pos(w);
      uint64_t expect = am_state(k, 0, AM_RL_GO);
      if (rl_enter(s, &expect, k, me)) {
        *pos = k;
        return SYNCQ_OK;
      }
      w = expect;
      held = am_state_type(w) == AM_RL_HELD;
    }
    if (nowait) {
      if (tries >= AM_NOWAIT_TRIES) return SYNCQ_EBUSY;
    } else if (!rl_word_bad(w)) {
      int look = rl_look(&wt, w, me);
      if (look == RL_GIVE_UP) return SYNCQ_ETIMEDOUT;
      uint64_t expect = w;
      if (look == RL_STALE && held && rl_holder_dead(s, w) && rl_enter(s, &expect, am_state_pos(w), me)) {
        am_claim_repair(v); /* we hold the dead holder's lock */
        *pos = am_state_pos(w);
        return SYNCQ_OK;
      }
    }
    (void)syncq_backoff_exp_wait(&b);
    w = atomic_load_explicit(&s->word, memory_order_acquire); /* acquire: as above */
  }
}

/* The position whose turn it is, seen from waiter t: the highest position
 * before t whose slot carries its own tag (hand-overs go in position
 * order, so the latest one written names the current position). Nearest
 * first: usually it lies a few positions back and the scan stops there.
 * Farther than nslots - 1 back (every waiter in between died: a crash of
 * many queued senders), the highest tag of all slots still names it. False
 * only when no slot names a position before t (an overwritten lock); *w
 * then gets a fingerprint of the words read, which any write to them
 * changes. */
static bool rl_current(am_rlock *l, uint32_t nslots, uint32_t t, uint32_t *x, uint64_t *w) {
  uint64_t mix = 0;
  bool found = false;
  uint32_t best = 0;
  uint64_t best_w = 0;
  for (uint32_t k = (nslots == 1u ? 0u : 1u); k <= nslots; k++) {
    if (nslots == 1u && k == 1u) break;
    uint32_t pos = t - k;
    /* acquire: pairs with the release stores of GO / CAS of HELD, before
     * reading the start time beside the word */
    uint64_t v = atomic_load_explicit(&l->slot[pos % nslots].word, memory_order_acquire);
    if (nslots == 1u) pos = am_state_pos(v); /* ticket: the word names the position itself */
    if (am_state_pos(v) == pos && k < nslots) {
      *x = pos;
      *w = v;
      return true;
    }
    uint32_t vp = am_state_pos(v);
    if (am_pos_after(t, vp) && vp % nslots == pos % nslots && (!found || am_pos_after(vp, best))) {
      found = true;
      best = vp;
      best_w = v;
    }
    mix = (mix ^ v) * 0x9E3779B97F4A7C15ull; /* position-dependent: a moved word changes it */
  }
  if (found) {
    *x = best;
    *w = best_w;
    return true;
  }
  *w = mix;
  return false;
}

/* NOWAIT: take position t only when it is the next one and its slot
 * already says GO(t) (the lock is free, nobody waits): a waiter that
 * cannot leave a queue lock must not join one. */
static int queue_trylock(am_rlock *l, uint32_t nslots, const rl_self *me, uint32_t *pos) {
  syncq_backoff_exp b;
  (void)syncq_backoff_exp_init(&b, AM_RL_BACKOFF_INITIAL_NS, AM_RL_BACKOFF_CAP_NS);
  for (unsigned tries = 1;; tries++) {
    /* relaxed: a hint; the CAS on next decides who gets t */
    uint32_t t = atomic_load_explicit(&l->next, memory_order_relaxed);
    am_rlock_slot *mine = &l->slot[t % nslots];
    const uint64_t go = am_state(t, 0, AM_RL_GO);
    /* relaxed: a hint; rl_enter's acquire CAS decides */
    if (atomic_load_explicit(&mine->word, memory_order_relaxed) == go &&
        /* relaxed: the position orders nothing; the slot words do */
        atomic_compare_exchange_strong_explicit(&l->next, &t, t + 1u, memory_order_relaxed, memory_order_relaxed)) {
      uint64_t expect = go;
      if (rl_enter(mine, &expect, t, me)) {
        *pos = t;
        return SYNCQ_OK;
      }
      return SYNCQ_EBUSY; /* t was skipped under us (we stalled a whole interval): nothing to give back */
    }
    if (tries >= AM_NOWAIT_TRIES) return SYNCQ_EBUSY;
    (void)syncq_backoff_exp_wait(&b);
  }
}

/* Position y has just been handed GO(y) by us (we skipped or released
 * y - 1 as recovery). While the waiter record of y says its waiter has
 * died or left, skip y at once and hand y + 1 on: a run of dead waiters (a crash
 * of many senders) costs one pass, not one stale interval each. Stops at
 * our own position t, at a live or unknown waiter (no record, or one of
 * another position: it is left to the stale rule), or when a CAS finds the
 * word changed (someone else acts). Returns the last position handed GO. */
static uint32_t rl_skip_dead_run(am_rlock *l, const am_queue *q, uint32_t nslots, uint32_t y, uint32_t t) {
  while (am_pos_after(t, y)) {
    /* relaxed: the record names a process, it publishes no data; a record
     * not yet visible reads as "unknown" */
    uint64_t rec = atomic_load_explicit(&q->waiter[y % AM_RL_WAITERS], memory_order_relaxed);
    if (am_state_pos(rec) != y) break; /* no record of y (yet, or any more) */
    if (am_state_type(rec) != AM_RL_LEFT &&
        (am_state_type(rec) != AM_RL_WAITING || am_state_pid(rec) == 0u || !am_owner_dead(am_state_pid(rec), 0)))
      break;
    am_rlock_slot *s = &l->slot[y % nslots], *succ = &l->slot[(y + 1u) % nslots];
    uint64_t expect = am_state(y, 0, AM_RL_GO);
    /* acq_rel: as the stale skip in queue_lock */
    if (!atomic_compare_exchange_strong_explicit(&s->word, &expect, am_state(y, 0, AM_RL_SKIP), memory_order_acq_rel,
                                                 memory_order_relaxed))
      break;
    SYNCQ_RACE_POINT("am.claim.skipped"); /* tests: die between the skip and the hand-over */
    (void)rl_hand_on(succ, y + 1u);
    y++;
  }
  return y;
}

/* A plain claim gives up position t (SYNCQ_ETIMEDOUT): say so in its record,
 * so whoever reaches t skips it at once (rl_skip_dead_run) instead of
 * waiting a stale interval for a live process that will never enter; and
 * if t was handed to us meanwhile, hand it straight on. */
static int rl_leave(am_rlock *l, am_queue *q, uint32_t nslots, uint32_t t, const rl_self *me) {
  /* relaxed: read only to name a position's fate (rl_skip_dead_run) */
  atomic_store_explicit(&q->waiter[t % AM_RL_WAITERS], am_state(t, me->pid, AM_RL_LEFT), memory_order_relaxed);
  SYNCQ_RACE_POINT("am.claim.left"); /* tests: stop a waiter giving up while t is handed to it */
  am_rlock_slot *mine = &l->slot[t % nslots];
  uint64_t expect = am_state(t, 0, AM_RL_GO);
  /* acq_rel: as the stale skip in queue_lock */
  if (atomic_compare_exchange_strong_explicit(&mine->word, &expect, am_state(t, 0, AM_RL_SKIP), memory_order_acq_rel,
                                              memory_order_relaxed)) {
    SYNCQ_RACE_POINT("am.claim.skipped"); /* tests: die between the skip and the hand-over */
    (void)rl_hand_on(&l->slot[(t + 1u) % nslots], t + 1u);
  }
  return SYNCQ_ETIMEDOUT;
}

/* Ticket (nslots 1) and Anderson (nslots AM_RLOCK_SLOTS): *pos gets the
 * position held. SYNCQ_ETIMEDOUT when the lock showed no progress for the
 * patience bound (the position we leave behind is skipped like a dead
 * waiter's). */
static int queue_lock(const am_qview *v, uint32_t nslots, const rl_self *me, uint32_t *pos) {
  am_rlock *l = &v->q->lock.rlock;
  /* relaxed: the position orders nothing; the slot words do */
  uint32_t t = atomic_fetch_add_explicit(&l->next, 1u, memory_order_relaxed);
  rl_watch wt = {0, 0, 0, 0};
  /* When a waiter that keeps finding its turn skipped gives up: set at the
   * first look that does not enter (0: not yet), so that a claim that
   * enters at once reads no clock, as a TAS claim reads none (the clock
   * read was the larger part of what the uncontended ticket and Anderson
   * claims cost beyond TAS's: docs/reliability.md) */
  uint64_t deadline = 0;
  unsigned spins = 0;
  bool recorded = false;
  for (;;) {
    am_rlock_slot *mine = &l->slot[t % nslots];
    /* relaxed: a hint; rl_enter's CAS decides */
    uint64_t w = atomic_load_explicit(&mine->word, memory_order_relaxed);
    uint64_t expect = w;
    if (w == am_state(t, 0, AM_RL_GO) && rl_enter(mine, &expect, t, me)) {
      *pos = t;
      return SYNCQ_OK;
    }
    if (deadline == 0) {
      deadline = syncq_now_ns() + me->patience_ns;
      if (deadline < me->patience_ns) deadline = UINT64_MAX; /* saturated, and never 0 again */
    }
    if (!recorded) { /* we wait: say who waits here (see rl_skip_dead_run) */
      /* relaxed: read only to name a process (rl_skip_dead_run) */
      atomic_store_explicit(&v->q->waiter[t % AM_RL_WAITERS], am_state(t, me->pid, AM_RL_WAITING),
                            memory_order_relaxed);
      recorded = true;
      SYNCQ_RACE_POINT("am.claim.queued"); /* tests: stop a waiter that holds a position */
    }
    uint32_t wp = am_state_pos(w);
    if (am_pos_after(wp, t) || (wp == t && am_state_type(w) == AM_RL_SKIP)) {
      /* our turn was skipped while we were not looking: queue again (an
       * overwritten word can say so for ever: the deadline still holds) */
      if (syncq_now_ns() >= deadline) return SYNCQ_ETIMEDOUT;            /* holds no position now */
      t = atomic_fetch_add_explicit(&l->next, 1u, memory_order_relaxed); /* relaxed: as above */
      wt.since = 0;
      recorded = false;
      continue;
    }
    if (++spins % AM_RL_CLOCK_EVERY != 0u) {
      syncq_pr_relax();
      continue;
    }
    uint32_t x = t;
    uint64_t cw;
    bool seen = rl_current(l, nslots, t, &x, &cw);
    int look = rl_look(&wt, cw, me);
    if (wt.first + me->patience_ns >= wt.first) deadline = wt.first + me->patience_ns; /* progress moves it */
    if (look == RL_GIVE_UP) return rl_leave(l, v->q, nslots, t, me);
    if (!seen || look != RL_STALE) {
      sched_yield(); /* an oversubscribed machine must run the holder */
      continue;
    }
    am_rlock_slot *cur = &l->slot[x % nslots], *succ = &l->slot[(x + 1u) % nslots];
    bool handed = false; /* we handed GO(x + 1) on */
    if (am_state_type(cw) == AM_RL_GO && am_state_pid(cw) == 0u) {
      /* position x was handed over and never entered: skip it (the CAS
       * decides against x's own entering CAS) */
      uint64_t skip_expect = cw;
      /* release: a skipped x that sees SKIP(x) is ordered after nothing
       * of ours; release keeps the hand-over below after the CAS */
      if (atomic_compare_exchange_strong_explicit(&cur->word, &skip_expect, am_state(x, 0, AM_RL_SKIP),
                                                  memory_order_acq_rel, memory_order_relaxed)) {
        SYNCQ_RACE_POINT("am.claim.skipped"); /* tests: die between the skip and the hand-over */
        (void)rl_hand_on(succ, x + 1u);       /* false: a waiter that found our SKIP(x) stale did it */
        handed = true;
      }
    } else if (am_state_type(cw) == AM_RL_HELD && rl_holder_dead(cur, cw) && rl_enter(cur, &cw, x, me)) {
      /* We hold the dead holder's position x. If it had already handed
       * x + 1 on before dying, there is nothing to repair. */
      uint64_t sw = atomic_load_explicit(&succ->word, memory_order_acquire); /* pairs with release of GO */
      if (nslots == 1u || !am_pos_after(am_state_pos(sw), x)) {
        am_claim_repair(v);
        rl_release(cur, succ, x);
        handed = true;
      }
    } else if (am_state_type(cw) == AM_RL_SKIP && am_state_pid(cw) == 0u) {
      /* x was skipped and x + 1 not handed on: its skipper died (or is
       * stopped) between its CAS and its hand-over. For Anderson's lock a
       * SKIP is also what a skipped slot keeps; rl_hand_on then finds
       * x + 1 handed on already and does nothing. */
      handed = rl_hand_on(succ, x + 1u);
    }
    if (handed) {
      uint32_t y = rl_skip_dead_run(l, v->q, nslots, x + 1u, t);
      if (y == t) continue; /* the run reached us: our own slot says GO(t) now */
      /* What we wrote is not progress: watch the word we left, keeping
       * the time the lock last moved on its own (a lock that only moves
       * when we skip its positions, e.g. an overwritten `next`, still
       * ends in SYNCQ_ETIMEDOUT). */
      (void)rl_current(l, nslots, t, &x, &wt.word); /* the word (or fingerprint) our hand-over left */
      wt.since = syncq_now_ns();
    }
  }
}

static void queue_unlock(am_queue *q, uint32_t nslots, uint32_t t) {
  am_rlock *l = &q->lock.rlock;
  rl_release(&l->slot[t % nslots], &l->slot[(t + 1u) % nslots], t);
}

/* ---------------------------------------------------------------- claim */

/* Figure 2's section under the lock a claim's lock step returned (r:
 * SYNCQ_OK with position pos held, or why not), then the release of pos
 * (nslots: 1 for TAS, TTAS and ticket, whose every position uses
 * slot[0]; AM_RLOCK_SLOTS for Anderson). */
static int locked_section(const am_qview *v, am_claim_state *cs, int r, uint32_t nslots, uint32_t pos) {
  if (r != SYNCQ_OK) return r;         /* a locking claim holds nothing when it fails */
  SYNCQ_RACE_POINT("am.claim.inside"); /* tests: die (or stop) holding the lock */
  int got = am_claim_under_lock(v, cs);
  queue_unlock(v->q, nslots, pos);
  return got > 0 ? SYNCQ_OK : got == 0 ? SYNCQ_FULL : got;
}

static rl_self self_of(const am_qview *v, const am_claim_state *cs) {
  return (rl_self){cs->pid, cs->start, v->stale_ns, am_lock_patience_ns(v->stale_ns)};
}

static int tas_claim(const am_qview *v, bool nowait, am_claim_state *cs) {
  rl_self me = self_of(v, cs);
  uint32_t pos = 0;
  int r = tas_lock(v, false, nowait, &me, &pos);
  return locked_section(v, cs, r, 1u, pos);
}

static int ttas_claim(const am_qview *v, bool nowait, am_claim_state *cs) {
  rl_self me = self_of(v, cs);
  uint32_t pos = 0;
  int r = tas_lock(v, true, nowait, &me, &pos);
  return locked_section(v, cs, r, 1u, pos);
}

static int ticket_claim(const am_qview *v, bool nowait, am_claim_state *cs) {
  rl_self me = self_of(v, cs);
  uint32_t pos = 0;
  int r = nowait ? queue_trylock(&v->q->lock.rlock, 1u, &me, &pos) : queue_lock(v, 1u, &me, &pos);
  return locked_section(v, cs, r, 1u, pos);
}

static int anderson_claim(const am_qview *v, bool nowait, am_claim_state *cs) {
  rl_self me = self_of(v, cs);
  uint32_t pos = 0;
  int r =
    nowait ? queue_trylock(&v->q->lock.rlock, AM_RLOCK_SLOTS, &me, &pos) : queue_lock(v, AM_RLOCK_SLOTS, &me, &pos);
  return locked_section(v, cs, r, AM_RLOCK_SLOTS, pos);
}

/* clang-format off */
const am_claim_ops am_claim_tas      = {"tas",      rl_init, tas_claim,      am_claim_locked_bulk_stalled, false};
const am_claim_ops am_claim_ttas     = {"ttas",     rl_init, ttas_claim,     am_claim_locked_bulk_stalled, false};
const am_claim_ops am_claim_ticket   = {"ticket",   rl_init, ticket_claim,   am_claim_locked_bulk_stalled, false};
const am_claim_ops am_claim_anderson = {"anderson", rl_init, anderson_claim, am_claim_locked_bulk_stalled, false};
/* clang-format on */
