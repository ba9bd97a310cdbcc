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
 *                holder's pid (the am_state encoding of am_internal.h,
 *                type GO / HELD / SKIP), and the holder's process start
 *                time sits beside it. The library's own locks
 *                (src/lock/tas.c, ticket.c, anderson.c) keep a bare 0/1 or
 *                a counter, so a dead holder could not be told from a slow
 *                one; these can.
 *                  TAS/TTAS: one word, GO(0) free, HELD(0, pid) held; the
 *                    test-and-set is a CAS GO -> HELD(pid) (an exchange
 *                    would overwrite the holder's name).
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
 *                    start time differs; am_owner_dead) -> CAS to HELD(x,
 *                    self): the waiter now holds position x, repairs what
 *                    the dead holder left half done inside Figure 2
 *                    (am_claim_repair) and then either uses the lock (TAS)
 *                    or releases x to its successor (ticket, Anderson);
 *                  GO(x) (position x was handed over but never entered: its
 *                    process died waiting, or is stopped) -> CAS to SKIP(x)
 *                    and hand GO(x + 1) on. A live process whose position
 *                    was skipped sees it (the word moved past its position)
 *                    and takes a new one: the CAS decides between "x enters"
 *                    and "x is skipped", so two never enter.
 *                The receiver takes back the dead holder's packet claim as
 *                for any dead sender (am.c).
 *   Progress:    blocking; a holder or waiter that dies blocks the others
 *                for at most stale_claim_ns per dead position (plus one
 *                /proc read). A process stopped (SIGSTOP) while holding
 *                the lock blocks the others until it continues: it is not
 *                dead. A process stopped while waiting loses its place.
 *   Atomics:     uncontended claim: TAS 1 CAS, TTAS 1 load + 1 CAS, ticket
 *                1 fetch-and-add + 1 load + 1 CAS, Anderson 1 fetch-and-add
 *                + 1 load + 1 CAS; release 1 store (+ 1 relaxed store of
 *                the start time); + Figure 2's section (1 acquire load and
 *                1 release store of the packet state; bulk + 1 load and
 *                1 store of the block state).
 *   Memory:      in the segment (am_rlock: 65 cache lines per queue);
 *                never allocates.
 *   Signal-safe: no (the library as a whole is not).
 *   Process-shared: yes (the point of it).
 *   Limits:      2^31 positions outstanding at once (32-bit tags); a pid
 *                that is reused while its start time is not yet written
 *                beside the lock word is taken for the live holder until
 *                the new process exits.
 */
#include <sched.h>

#include "am_crash.h"
#include "am_internal.h"
#include "syncq/backoff.h"
#include "syncq/clock.h"

/* Lock word types (bits 7..0 of the am_state encoding). */
enum { AM_RL_GO = 0, AM_RL_HELD = 1, AM_RL_SKIP = 2 };

/* Backoff after a failed test-and-set (000 §3.1 / 001 §4: 100 ns doubling
 * to 30 us), the same as the library's TAS lock. */
#define AM_RL_BACKOFF_INITIAL_NS 100u
#define AM_RL_BACKOFF_CAP_NS 30000u
/* Queue-lock waiters spin locally; they look at the clock (to notice a
 * stuck position) once every this many spins. */
#define AM_RL_CLOCK_EVERY 64u

void (*am_step_hook)(int step);
void am_test_set_step_hook(void (*hook)(int step)) { am_step_hook = hook; }

int am_lock_init(am_queue *q, int claim) {
  am_rlock *l = &q->lock.rlock;
  switch (claim) {
  case SYNCQ_AM_CLAIM_TAS:
  case SYNCQ_AM_CLAIM_TTAS:
  case SYNCQ_AM_CLAIM_TICKET:
  case SYNCQ_AM_CLAIM_ANDERSON:
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
  case SYNCQ_AM_CLAIM_POSIX: return am_posix_init(q);
  case SYNCQ_AM_CLAIM_LOCKFREE: return SYNCQ_OK; /* no lock */
  default: return SYNCQ_EINVAL;
  }
}

/* ---------------------------------------------------------------- repair */

void am_claim_repair(void *base, am_queue *q) {
  const am_header *h = base;
  /* relaxed: we hold the lock, whose acquire orders the tails */
  uint32_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
  uint32_t b = atomic_load_explicit(&q->bulk_tail, memory_order_relaxed);
  am_packet *p = &am_packets(base, q)[t & (h->packets - 1u)];
  am_bulk_slot *bs = &am_bulk_slots(base, q)[b & (h->bulk_blocks - 1u)];
  /* acquire: pairs with the dead holder's release store of CLAIMED */
  uint64_t s = atomic_load_explicit(&p->state, memory_order_acquire);
  if (am_state_pos(s) == t && am_state_type(s) != AM_FREE) {
    atomic_store_explicit(&q->tail, t + 1u, memory_order_relaxed); /* under the lock */
    if (p->has_bulk && p->bulk_pos == b)
      atomic_store_explicit(&q->bulk_tail, b + 1u, memory_order_relaxed); /* under the lock */
    return;
  }
  uint64_t bstate = atomic_load_explicit(&bs->state, memory_order_acquire); /* pairs as above */
  if (am_state_pos(bstate) == b && am_state_type(bstate) == AM_CLAIMED)
    /* release: pairs with the next claimer's acquire load of FREE(b) (the
     * bulk tail still reads b) */
    atomic_store_explicit(&bs->state, am_state(b, 0, AM_FREE), memory_order_release);
}

/* ---------------------------------------------------------------- locks */

typedef struct rl_self {
  uint32_t pid;
  uint64_t start;
  uint64_t stale_ns;
} rl_self;

/* Watches one word for staying unchanged through a stale interval. */
typedef struct rl_watch {
  uint64_t word;
  uint64_t since; /* 0: not watching */
} rl_watch;

/* True when w has stayed the watched value for a stale interval (then the
 * watch restarts, so a live owner is asked again one interval later). */
static bool rl_stuck(rl_watch *wt, uint64_t w, uint64_t stale_ns) {
  uint64_t now = syncq_now_ns();
  if (wt->since == 0 || wt->word != w) {
    wt->word = w;
    wt->since = now;
    return false;
  }
  if (now - wt->since < stale_ns) return false;
  wt->since = now;
  return true;
}

static bool rl_holder_dead(const am_rlock_slot *s, uint64_t w) {
  /* relaxed: reads 0 (judge by pid alone) or the holder's own start time:
   * every earlier holder's start was cleared before a release that our
   * acquire load of w is ordered after */
  return am_owner_dead(am_state_pid(w), atomic_load_explicit(&s->start, memory_order_relaxed));
}

/* Enter slot s at position pos by CAS from `expect` (GO(pos) or a dead
 * holder's HELD(pos, pid)). */
static bool rl_enter(am_rlock_slot *s, uint64_t expect, uint32_t pos, const rl_self *me) {
  /* acquire on success: pairs with the release store that handed GO(pos)
   * over (the previous holder's critical section happens before ours) */
  if (!atomic_compare_exchange_strong_explicit(&s->word, &expect, am_state(pos, me->pid, AM_RL_HELD),
                                               memory_order_acquire, memory_order_relaxed))
    return false;
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

/* TAS / TTAS: one word, position 0 forever. */
static uint32_t tas_lock(void *base, am_queue *q, bool test_first, const rl_self *me) {
  am_rlock_slot *s = &q->lock.rlock.slot[0];
  const uint64_t free_word = am_state(0, 0, AM_RL_GO);
  syncq_backoff_exp b;
  (void)syncq_backoff_exp_init(&b, AM_RL_BACKOFF_INITIAL_NS, AM_RL_BACKOFF_CAP_NS);
  rl_watch wt = {0, 0};
  for (;;) {
    /* relaxed: TTAS's test is a hint; the CAS in rl_enter decides */
    uint64_t w = test_first ? atomic_load_explicit(&s->word, memory_order_relaxed) : free_word;
    if (w == free_word && rl_enter(s, free_word, 0, me)) return 0;
    w = atomic_load_explicit(&s->word, memory_order_acquire); /* acquire: before reading start beside it */
    if (am_state_type(w) == AM_RL_HELD && rl_stuck(&wt, w, me->stale_ns) && rl_holder_dead(s, w) &&
        rl_enter(s, w, 0, me)) {
      am_claim_repair(base, q); /* we hold the dead holder's lock */
      return 0;
    }
    (void)syncq_backoff_exp_wait(&b);
  }
}

static void tas_unlock(am_queue *q) {
  am_rlock_slot *s = &q->lock.rlock.slot[0];
  atomic_store_explicit(&s->start, 0u, memory_order_relaxed); /* published by the release store below */
  /* release: pairs with the next holder's acquire CAS */
  atomic_store_explicit(&s->word, am_state(0, 0, AM_RL_GO), memory_order_release);
}

/* The position whose turn it is, seen from waiter t: the highest position
 * before t whose slot carries its own tag. False if it lies more than
 * nslots - 1 positions back (a closer waiter watches it). */
static bool rl_current(am_rlock *l, uint32_t nslots, uint32_t t, uint32_t *x, uint64_t *w) {
  for (uint32_t k = (nslots == 1u ? 0u : 1u); k < nslots; k++) {
    uint32_t pos = t - k;
    /* acquire: pairs with the release stores of GO / CAS of HELD, before
     * reading the start time beside the word */
    uint64_t v = atomic_load_explicit(&l->slot[pos % nslots].word, memory_order_acquire);
    if (nslots == 1u) pos = am_state_pos(v); /* ticket: the word names the position itself */
    if (am_state_pos(v) == pos) {
      *x = pos;
      *w = v;
      return true;
    }
  }
  return false;
}

/* Ticket (nslots 1) and Anderson (nslots AM_RLOCK_SLOTS): returns the
 * position held. */
static uint32_t queue_lock(void *base, am_queue *q, uint32_t nslots, const rl_self *me) {
  am_rlock *l = &q->lock.rlock;
  /* relaxed: the position orders nothing; the slot words do */
  uint32_t t = atomic_fetch_add_explicit(&l->next, 1u, memory_order_relaxed);
  rl_watch wt = {0, 0};
  unsigned spins = 0;
  for (;;) {
    am_rlock_slot *mine = &l->slot[t % nslots];
    /* relaxed: a hint; rl_enter's CAS decides */
    uint64_t w = atomic_load_explicit(&mine->word, memory_order_relaxed);
    if (w == am_state(t, 0, AM_RL_GO) && rl_enter(mine, w, t, me)) return t;
    uint32_t wp = am_state_pos(w);
    if (am_pos_after(wp, t) || (wp == t && am_state_type(w) == AM_RL_SKIP)) {
      /* our turn was skipped while we were not looking: queue again */
      t = atomic_fetch_add_explicit(&l->next, 1u, memory_order_relaxed); /* relaxed: as above */
      wt.since = 0;
      continue;
    }
    if (++spins % AM_RL_CLOCK_EVERY != 0u) {
      syncq_pr_relax();
      continue;
    }
    uint32_t x;
    uint64_t cw;
    if (!rl_current(l, nslots, t, &x, &cw) || !rl_stuck(&wt, cw, me->stale_ns)) {
      sched_yield(); /* an oversubscribed machine must run the holder */
      continue;
    }
    am_rlock_slot *cur = &l->slot[x % nslots], *succ = &l->slot[(x + 1u) % nslots];
    if (am_state_type(cw) == AM_RL_GO) {
      /* position x was handed over and never entered: skip it (the CAS
       * decides against x's own entering CAS) */
      uint64_t expect = cw;
      /* release: a skipped x that sees SKIP(x) is ordered after nothing
       * of ours; release keeps the hand-over below after the CAS */
      if (atomic_compare_exchange_strong_explicit(&cur->word, &expect, am_state(x, 0, AM_RL_SKIP),
                                                  memory_order_acq_rel, memory_order_relaxed))
        /* release: pairs with x + 1's acquire CAS in rl_enter */
        atomic_store_explicit(&succ->word, am_state(x + 1u, 0, AM_RL_GO), memory_order_release);
    } else if (am_state_type(cw) == AM_RL_HELD && rl_holder_dead(cur, cw) && rl_enter(cur, cw, x, me)) {
      /* We hold the dead holder's position x. If it had already handed
       * x + 1 on before dying, there is nothing to repair. */
      uint64_t sw = atomic_load_explicit(&succ->word, memory_order_acquire); /* pairs with release of GO */
      if (nslots == 1u || !am_pos_after(am_state_pos(sw), x)) {
        am_claim_repair(base, q);
        rl_release(cur, succ, x);
      }
    }
  }
}

static void queue_unlock(am_queue *q, uint32_t nslots, uint32_t t) {
  am_rlock *l = &q->lock.rlock;
  rl_release(&l->slot[t % nslots], &l->slot[(t + 1u) % nslots], t);
}

/* ---------------------------------------------------------------- claim */

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
  const am_header *h = base;
  rl_self me = {cs->pid, cs->start, h->stale_ns};
  uint32_t pos = 0;
  switch (claim) {
  case SYNCQ_AM_CLAIM_TAS: pos = tas_lock(base, q, false, &me); break;
  case SYNCQ_AM_CLAIM_TTAS: pos = tas_lock(base, q, true, &me); break;
  case SYNCQ_AM_CLAIM_TICKET: pos = queue_lock(base, q, 1u, &me); break;
  case SYNCQ_AM_CLAIM_ANDERSON: pos = queue_lock(base, q, AM_RLOCK_SLOTS, &me); break;
  default: return SYNCQ_EINVAL;
  }
  am_crash_point(AM_STEP_LOCKED); /* tests: die holding the lock */
  bool got = am_claim_under_lock(base, q, cs);
  switch (claim) {
  case SYNCQ_AM_CLAIM_TAS:
  case SYNCQ_AM_CLAIM_TTAS: tas_unlock(q); break;
  case SYNCQ_AM_CLAIM_TICKET: queue_unlock(q, 1u, pos); break;
  default: queue_unlock(q, AM_RLOCK_SLOTS, pos); break;
  }
  return got ? SYNCQ_OK : SYNCQ_FULL;
}
