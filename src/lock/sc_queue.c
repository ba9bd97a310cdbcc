/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sc_queue.c — scheduler-conscious array queue locks ("sc-queue",
 * "hybrid-sc").
 *
 * Contract
 *   Source:      003 §3.4: "the process that holds a lock polls the state
 *                of the processes waiting in the queue and hands-off the
 *                lock to the first non-preempted process. This solution
 *                sacrifices the FIFO ordering ... in order to attain
 *                multiprogramming scalability" (after Kontothanassis et
 *                al. 1997, whose passed-over waiters rejoin the queue);
 *                003 §3.1 for the array queue lock and its hybrid form
 *                (the place counter by fetch-and-increment, the queue in
 *                cacheable memory). The preempted state is syncq/mp/sched.h's.
 *   Algorithm:   waiter: take ticket t, claim slot t mod N by CAS from a
 *                finished state of an older ticket to WAITING(t) (or find
 *                it pre-granted: GRANTED(t)), spin until GRANTED(t); if
 *                the slot shows anything else, it was passed over: take a
 *                new ticket. Releaser with ticket h: DONE(h) in its slot,
 *                then for k = h+1, h+2, ...: a slot still holding an
 *                older ticket is pre-granted by CAS to GRANTED(k) (ticket
 *                k not arrived yet: it enters on arrival); WAITING(k) of a
 *                running waiter gets GRANTED(k); of a preempted waiter,
 *                SKIPPED(k), and the scan goes on. Only the holder grants
 *                or skips, so one ticket at a time is granted.
 *   Progress:    blocking; starvation-free among waiters that keep running
 *                (FIFO over them); a waiter preempted at each hand-over
 *                can be passed over each time.
 *   Order:       FIFO by ticket (registered with SYNCQ_PROP_FIFO), except
 *                that waiters a scheduler reports preempted (syncq/mp/sched.h)
 *                are passed over and queue again: 003 §3.4 "sacrifices
 *                the FIFO ordering". Without a pseudo-scheduler nobody is
 *                reported preempted and the order is strictly FIFO.
 *   Atomics:     uncontended lock: sc-queue 1 load + 1 CAS (ticket) +
 *                1 load (slot), hybrid-sc 1 fetch-and-add + 1 load;
 *                unlock: 2 loads + 1 store + 1 load + 1 CAS (pre-grant).
 *                Each preempted waiter passed over: 2 loads + 1 store.
 *                BLOCK / COMPETITIVE: a grant or skip of a waiter adds an
 *                exchange of the slot's flag (a futex wake when it read
 *                the sleep mark); a waiter stores the flag once when it
 *                claims its slot.
 *   Memory:      caller's storage with SYNCQ_LOCK_SC_MAX_SLOTS padded
 *                slots (16 KiB); never allocates.
 *   Signal-safe: trylock and unlock yes; lock with SPIN or YIELD yes.
 *   Process-shared: no (slots hold scheduler handles: pointers).
 *   Waiting:     SPIN (default) or YIELD on the own slot; BLOCK and
 *                COMPETITIVE via syncq/wait.h on the slot's 32-bit flag
 *                (the slot word is 64-bit, too wide for a futex). The
 *                claimant writes FLAG(t, WAITING) before its claiming CAS
 *                and then waits on the flag alone while it is
 *                FLAG(t, WAITING), marking it (bit 0) before it sleeps.
 *                A grant writes the word GRANTED(k), then exchanges
 *                FLAG(k, GRANTED) into the flag: the hand-over, after
 *                which only a futex wake follows, when the exchange read
 *                the mark. A skip exchanges FLAG(k, SKIPPED) in first and
 *                then writes the word SKIPPED(k) (still holding the
 *                lock), so a later claimant's flag store cannot be
 *                overwritten; any flag other than WAITING(t) sends the
 *                waiter back to the queue. Without sleeping, a
 *                FIFO hand-over to a waiter that is not running waits
 *                for the scheduler to run it (syncq-lab locks-cost,
 *                defaults-busy: with waiters that could only yield, 1% of
 *                the samples averaged over 0.5 ms an increment; sleeping
 *                locks stayed under 5 us).
 *   Destroy:     the next holder may destroy and free the lock as soon as
 *                it holds it: after the hand-over an unlock touches
 *                nothing of the lock but a futex wake on the slot's flag.
 *   Limits:      at most nslots (max_threads) threads use a lock at once:
 *                with more, two tickets could claim one slot. Tickets are
 *                62-bit (never wrap in practice).
 *   Stats:       cas_attempts / cas_failures (sc-queue ticket), retries
 *                (waiters that were passed over and took a new ticket),
 *                yields, blocks.
 */
#include "syncq/lock/sc_queue.h"

#include "../stats_internal.h"
#include "lock_internal.h"
#include "syncq/platform.h"

enum { SC_DONE = 0u, SC_WAITING = 1u, SC_GRANTED = 2u, SC_SKIPPED = 3u };
#define SC_STATE_BITS 2u
#define SC_STATE_MASK 3u
#define SC_WORD(ticket, state) (((uint64_t)(ticket) << SC_STATE_BITS) | (state))
#define SC_TICKET(w) ((w) >> SC_STATE_BITS)
#define SC_STATE(w) ((unsigned)((w)&SC_STATE_MASK))
/* A slot's flag (BLOCK / COMPETITIVE): the low bits of a ticket, a state,
 * and the sleep mark of syncq/wait.h. */
#define SC_FLAG_ASLEEP 1u
#define SC_FLAG(ticket, state) (((uint32_t)(ticket) << 3) | ((uint32_t)(state) << 1))
/* YIELD: yield once every this many polls of the own slot. */
#define SC_POLLS_PER_YIELD 16u

static int init_common(syncq_lock_sc *l, const syncq_lock_config *cfg, bool faa) {
  if (l == NULL) return SYNCQ_EINVAL;
  int wait, ps;
  int r = lock_parse_config(cfg, SYNCQ_WAIT_SPIN, LOCK_WAIT_ALL, 0, &wait, &ps);
  if (r != SYNCQ_OK) return r;
  unsigned n = cfg != NULL && cfg->max_threads != 0 ? cfg->max_threads : SYNCQ_LOCK_SC_MAX_SLOTS;
  if (n > SYNCQ_LOCK_SC_MAX_SLOTS) return SYNCQ_ELIMIT;
  if (n < 2) n = 2; /* the holder's slot and the next one */
  l->nslots = n;
  l->faa = faa;
  l->wait = wait;
  l->holder = 0;
  /* Tickets start at n: slot i holds the finished ticket i (an older one
   * than any to come), except slot 0, pre-granted to the first ticket. */
  atomic_init(&l->next_ticket, (uint64_t)n);
  atomic_init(&l->skips, 0u);
  for (unsigned i = 0; i < n; i++) {
    atomic_init(&l->slot[i].word, i == 0 ? SC_WORD(n, SC_GRANTED) : SC_WORD(i, SC_DONE));
    atomic_init(&l->slot[i].owner, NULL);
    atomic_init(&l->slot[i].flag, SC_FLAG(i, SC_DONE));
  }
  if (wait == SYNCQ_WAIT_COMPETITIVE) (void)syncq_wait_calibrate();
  return SYNCQ_OK;
}

int syncq_lock_sc_queue_init(syncq_lock_sc *l, const syncq_lock_config *cfg) { return init_common(l, cfg, false); }
int syncq_lock_hybrid_sc_init(syncq_lock_sc *l, const syncq_lock_config *cfg) { return init_common(l, cfg, true); }

int syncq_lock_sc_destroy(syncq_lock_sc *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  /* free and unawaited: the next ticket's slot is pre-granted to it */
  uint64_t t = atomic_load(&l->next_ticket);
  return atomic_load(&l->slot[t % l->nslots].word) == SC_WORD(t, SC_GRANTED) ? SYNCQ_OK : SYNCQ_EBUSY;
}

static uint64_t take_ticket(syncq_lock_sc *l) {
  if (l->faa) return atomic_fetch_add(&l->next_ticket, 1u); /* seq_cst: orders the slot claim after it */
  uint64_t t = atomic_load(&l->next_ticket);
  for (;;) {
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_weak(&l->next_ticket, &t, t + 1u)) return t; /* seq_cst as above */
    SYNCQ_STAT_INC(cas_failures);
  }
}

/* The bodies, one for the exported function and the ops table each (an
 * exported function is not inlined into the table's wrapper: the wrapper
 * would be one more jump per call). */
static inline int sc_lock(syncq_lock_sc *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  syncq_mp_thread *self = syncq_mp_self();
  bool sleeping = syncq_wait_may_sleep(l->wait);
  for (;;) {
    uint64_t t = take_ticket(l);
    syncq_lock_sc_slot *s = &l->slot[t % l->nslots];
    uint64_t mine = SC_WORD(t, SC_WAITING), granted = SC_WORD(t, SC_GRANTED);
    uint32_t polls = 0;
    /* claim the slot (or find it pre-granted) */
    for (;;) {
      uint64_t w = atomic_load_explicit(&s->word, memory_order_acquire); /* pairs with the releaser's grant */
      if (w == granted) {
        l->holder = t;
        return SYNCQ_OK;
      }
      if (SC_TICKET(w) < t && (SC_STATE(w) == SC_DONE || SC_STATE(w) == SC_SKIPPED)) {
        /* relaxed: published by the seq_cst CAS below, read by the
         * releaser after its acquire load of the word */
        atomic_store_explicit(&s->owner, self, memory_order_relaxed);
        /* relaxed: likewise; a skipped predecessor in the slot has been
         * told already (the releaser changes a flag before the word), and
         * sees this value as "passed over" if it has not looked yet */
        if (sleeping) atomic_store_explicit(&s->flag, SC_FLAG(t, SC_WAITING), memory_order_relaxed);
        if (atomic_compare_exchange_strong(&s->word, &w, mine)) break;
        continue; /* the releaser pre-granted it meanwhile */
      }
      /* an older ticket still lives in the slot: more users than slots */
      syncq_pr_relax();
    }
    /* wait for the grant */
    uint64_t w;
    if (sleeping) {
      /* on the flag alone: the releaser's exchange of it is its last
       * access to the lock, so we may not take the lock on the word (set
       * before) and let the lock be freed under that exchange */
      uint32_t waiting = SC_FLAG(t, SC_WAITING), f;
      syncq_waiter sw;
      syncq_waiter_init(&sw, l->wait, false, lock_spin_limit(l->wait));
      for (;;) {
        /* acquire: pairs with the releaser's exchange of the flag */
        f = atomic_load_explicit(&s->flag, memory_order_acquire);
        if ((f & ~SC_FLAG_ASLEEP) != waiting) break;
        if (!syncq_waiter_step(&sw)) continue;
        /* mark, then sleep. seq_cst CAS: a read-modify-write of the flag,
         * so either the releaser's exchange reads the mark or the CAS
         * fails on its new value */
        if ((f & SC_FLAG_ASLEEP) != 0u || atomic_compare_exchange_strong(&s->flag, &f, f | SC_FLAG_ASLEEP))
          syncq_waiter_sleep(&sw, &s->flag, waiting | SC_FLAG_ASLEEP);
      }
      /* granted, or anything else: passed over (skipped, or the slot
       * already claimed by a later ticket) */
      w = f == SC_FLAG(t, SC_GRANTED) ? granted : SC_WORD(t, SC_SKIPPED);
    } else {
      while ((w = atomic_load_explicit(&s->word, memory_order_acquire)) == mine) { /* pairs with the grant */
        syncq_wait_spin_yield(&polls, l->wait == SYNCQ_WAIT_YIELD ? SC_POLLS_PER_YIELD : 0u);
      }
    }
    if (w == granted) {
      l->holder = t;
      return SYNCQ_OK;
    }
    SYNCQ_STAT_INC(retries); /* passed over while preempted: queue again */
  }
}

static inline int sc_trylock(syncq_lock_sc *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  uint64_t t = atomic_load(&l->next_ticket);
  /* acquire: pairs with the releaser's pre-granting CAS */
  if (atomic_load_explicit(&l->slot[t % l->nslots].word, memory_order_acquire) != SC_WORD(t, SC_GRANTED))
    return SYNCQ_EBUSY;
  SYNCQ_STAT_INC(cas_attempts);
  /* seq_cst: taking ticket t, whose slot is already granted, takes the lock */
  if (!atomic_compare_exchange_strong(&l->next_ticket, &t, t + 1u)) {
    SYNCQ_STAT_INC(cas_failures);
    return SYNCQ_EBUSY;
  }
  l->holder = t;
  return SYNCQ_OK;
}

/* From the hand-over on (the pre-granting CAS, the grant's store or, when
 * the waiter may sleep, the grant's exchange of the flag) the next holder
 * may destroy and free the lock: only locals are used after it. */
static inline int sc_unlock(syncq_lock_sc *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  uint64_t h = l->holder;
  syncq_lock_sc_slot *hs = &l->slot[h % l->nslots];
  bool sleeping = syncq_wait_may_sleep(l->wait);
  /* relaxed: detects a misuse only (nobody but the holder changes it) */
  if (atomic_load_explicit(&hs->word, memory_order_relaxed) != SC_WORD(h, SC_GRANTED)) return SYNCQ_EINVAL;
  /* release: pairs with the acquire load of the acquirer that claims
   * this slot for a later ticket */
  atomic_store_explicit(&hs->word, SC_WORD(h, SC_DONE), memory_order_release);
  for (uint64_t k = h + 1u;; k++) {
    syncq_lock_sc_slot *s = &l->slot[k % l->nslots];
    uint64_t w = atomic_load_explicit(&s->word, memory_order_acquire); /* pairs with the waiter's claim */
    for (;;) {
      if (SC_TICKET(w) < k) {
        /* ticket k has not claimed its slot: pre-grant it. seq_cst:
         * releases the critical section to whoever takes ticket k */
        if (atomic_compare_exchange_strong(&s->word, &w, SC_WORD(k, SC_GRANTED))) {
          SYNCQ_RACE_POINT("lock.handover");
          return SYNCQ_OK;
        }
        continue; /* it just claimed it: w now holds WAITING(k) */
      }
      break; /* WAITING(k): only we change it from here */
    }
    /* relaxed: ordered by the acquire load of WAITING(k) above */
    syncq_mp_thread *owner = atomic_load_explicit(&s->owner, memory_order_relaxed);
    if (!syncq_mp_is_preempted(owner)) {
      if (!sleeping) {
        /* release: hands the critical section over; pairs with the waiter's acquire */
        atomic_store_explicit(&s->word, SC_WORD(k, SC_GRANTED), memory_order_release);
        SYNCQ_RACE_POINT("lock.handover");
        return SYNCQ_OK;
      }
      /* relaxed: the waiter reads it after the flag's exchange below
       * (release), which it acquires; claimants of later tickets only
       * see an older ticket still in the slot */
      atomic_store_explicit(&s->word, SC_WORD(k, SC_GRANTED), memory_order_relaxed);
      _Atomic(uint32_t) *flag = &s->flag;
      /* release: hands the critical section over (pairs with the
       * waiter's acquire load of the flag); a read-modify-write, so it
       * reads the waiter's mark */
      uint32_t old = atomic_exchange_explicit(flag, SC_FLAG(k, SC_GRANTED), memory_order_release);
      SYNCQ_RACE_POINT("lock.handover");
      if ((old & SC_FLAG_ASLEEP) != 0u) syncq_wait_futex_wake(flag, 0, false);
      return SYNCQ_OK;
    }
    if (sleeping) {
      /* tell the waiter first, then free the slot (below): a claimant of
       * a later ticket then writes the flag after this exchange. relaxed:
       * the skipped waiter publishes nothing and takes nothing from us;
       * a read-modify-write, so it reads the waiter's mark. We still hold
       * the lock: the slot is ours to touch after it. */
      uint32_t old = atomic_exchange_explicit(&s->flag, SC_FLAG(k, SC_SKIPPED), memory_order_relaxed);
      if ((old & SC_FLAG_ASLEEP) != 0u) syncq_wait_futex_wake(&s->flag, 0, false);
    }
    /* release: pairs with the CAS (acquire) of the claimant of a later
     * ticket, whose flag store must follow our exchange above; the
     * skipped waiter itself publishes nothing and re-queues */
    atomic_store_explicit(&s->word, SC_WORD(k, SC_SKIPPED), memory_order_release);
    atomic_fetch_add_explicit(&l->skips, 1u, memory_order_relaxed); /* relaxed: a statistic */
  }
}

int syncq_lock_sc_skips(const syncq_lock_sc *l, uint64_t *out) {
  if (l == NULL || out == NULL) return SYNCQ_EINVAL;
  *out = atomic_load(&((syncq_lock_sc *)l)->skips);
  return SYNCQ_OK;
}

int syncq_lock_sc_lock(syncq_lock_sc *l) { return sc_lock(l); }
int syncq_lock_sc_trylock(syncq_lock_sc *l) { return sc_trylock(l); }
int syncq_lock_sc_unlock(syncq_lock_sc *l) { return sc_unlock(l); }

/* The ops tables call the bodies, not the exported functions. */
SYNCQ_LOCK_REGISTER_NODELESS_FNS(sc_queue, "sc-queue", "scheduler-conscious array queue lock (ticket by CAS)",
                                 "003 §3.4; Kontothanassis et al. 1997", BLOCKING,
                                 SYNCQ_PROP_FIFO | SYNCQ_PROP_SIGNAL_SAFE, syncq_lock_sc, syncq_lock_sc_queue_init,
                                 syncq_lock_sc_destroy, sc_lock, sc_trylock, sc_unlock);
SYNCQ_LOCK_REGISTER_NODELESS_FNS(hybrid_sc, "hybrid-sc",
                                 "003's hybrid queue lock (ticket by fetch-and-add), scheduler-conscious",
                                 "003 §3.1, §3.4, §5", BLOCKING, SYNCQ_PROP_FIFO | SYNCQ_PROP_SIGNAL_SAFE,
                                 syncq_lock_sc, syncq_lock_hybrid_sc_init, syncq_lock_sc_destroy, sc_lock, sc_trylock,
                                 sc_unlock);
