/*
 * mcs_tp.c — the time-published MCS queue lock ("mcs-tp").
 *
 * Contract
 *   Source:      He, Scherer & Scott, "Preemption Adaptivity in
 *                Time-Published Queue-Based Spin Locks", HiPC 2005: MCS-TP
 *                (waiters publish a timestamp while they spin; the
 *                releaser passes over waiters whose timestamp is stale and
 *                marks them removed; a removed waiter queues again when it
 *                runs). No copy of the paper was at hand: this follows its
 *                published description, not its figure line by line (see
 *                Deviations). The queue itself is MCS91 Figure 5 (as
 *                src/lock/mcs.c).
 *   Algorithm:   node = {next, stamp, status, passes}; status WAITING,
 *                ASLEEP (WAITING with syncq/wait.h's sleep mark), GRANTED
 *                or REMOVED. Waiter: next = NULL, status = WAITING; swap
 *                itself into tail; none before it: it holds the lock.
 *                Else it stores stamp = now, links behind its predecessor
 *                (the release store that publishes the stamp), and polls
 *                its status, storing stamp = now at every poll: GRANTED:
 *                it holds the lock; REMOVED: it was passed over, and
 *                queues again with the same node. BLOCK / COMPETITIVE
 *                (past the spin limit): it marks ASLEEP by CAS and sleeps
 *                on its status. Releaser: as MCS's to find its successor
 *                (CAS tail to NULL when it has none), reads the clock once
 *                and walks the queue: a node ASLEEP is kept in its place
 *                (the first one kept counts a pass); a WAITING node whose
 *                stamp is within SYNCQ_LOCK_MCS_TP_STALE_NS of that time
 *                (or later) is running: it is unlinked from behind the
 *                kept sleepers, its next set to the first of them, and
 *                granted; a stale one (probably preempted) is unlinked
 *                (waiting for its successor's link, or CASing tail back
 *                to the last kept node, or to NULL, freeing the lock, when
 *                none is kept) and gets REMOVED, after which nothing of it
 *                is read again. At the end of the queue, or when the first
 *                sleeper has been passed over SYNCQ_LOCK_MCS_TP_MAX_PASSES
 *                times, the first sleeper is granted. COMPETITIVE: a
 *                releaser that grants a running waiter ahead of sleepers
 *                clears the first sleeper's mark and wakes it after the
 *                hand-over, so that it runs and publishes before its turn.
 *                Only the holder grants, removes or clears a mark, so each
 *                status change is an exchange (to read the mark) without
 *                a retry loop.
 *   Progress:    blocking. Starvation-free among waiters that are not
 *                preempted: a waiter that publishes at least every
 *                SYNCQ_LOCK_MCS_TP_STALE_NS (or sleeps, marked) from its
 *                enqueue until its grant gets the lock after a bounded
 *                number of hand-overs (the waiters queued before it, plus
 *                at most SYNCQ_LOCK_MCS_TP_MAX_PASSES per sleeper ahead of
 *                it). A waiter that is off its processor, unmarked, longer
 *                than that when a release reaches it loses its place and
 *                queues again at the tail; one preempted at every release
 *                reaching it can starve (a COMPETITIVE sleeper woken ahead
 *                of its turn that is not yet running is such a waiter). A
 *                preempted holder still stops everybody (nothing detects
 *                it). A release's walk ends at the latest at the first
 *                node linked after the releaser read the clock (its stamp
 *                is later): bounded by the queue's length at that time.
 *   Order:       FIFO among running waiters, and among sleepers left
 *                asleep; running waiters pass sleepers. Registered without
 *                SYNCQ_PROP_FIFO.
 *   Atomics:     uncontended lock: 1 swap (+ 3 relaxed stores to the own
 *                node), no clock read; unlock: 2 loads + 1 CAS, as MCS.
 *                A queued waiter: 1 clock read + 1 swap + 1 store to link,
 *                then per poll 1 load + 1 clock read + 1 relaxed store
 *                (asleep: nothing). A hand-over: 1 clock read + 2 loads +
 *                1 release exchange; each node walked over: a sleeper 2
 *                loads (the first one also a store), a stale waiter 2
 *                loads + 1 store + 1 exchange (+ 1 CAS when it is the
 *                tail); a running waiter moved ahead of sleepers 2 more
 *                stores (+ COMPETITIVE: 1 CAS and a futex wake).
 *   Timestamps:  syncq_now_ns (CLOCK_MONOTONIC, a vDSO call of some 20 ns)
 *                rather than rdtsc: comparable between processors on every
 *                platform the library builds for (rdtsc needs an invariant,
 *                synchronised TSC and exists on x86 only), and read only
 *                while waiting or handing over to a waiter, never on the
 *                uncontended path.
 *   Memory:      the caller's syncq_lock_node per acquisition (it must stay
 *                untouched until unlock returns); never allocates.
 *   Signal-safe: trylock and unlock yes; lock with SPIN or YIELD yes.
 *   Process-shared: no (the queue links nodes by address): SYNCQ_ENOTSUP.
 *   Waiting:     SPIN (default here): pause between polls; YIELD: yield
 *                every SYNCQ_LOCK_MCS_TP_POLLS_PER_YIELD polls; BLOCK and
 *                COMPETITIVE (the generic API's safe default) via
 *                syncq/wait.h, the sleep mark in the own status.
 *   Destroy:     the next holder may destroy and free the lock as soon as
 *                it holds it: every write to the queue (links, tail,
 *                passes, marks) comes before the granting exchange, after
 *                which an unlock makes only futex wakes: on the granted
 *                node's status (when the exchange read the mark) and, for
 *                COMPETITIVE, on the status of the sleeper it woke ahead
 *                of its turn (a waiter still inside lock(), so neither it
 *                nor the lock may be gone; a wake is a system call on an
 *                address in any case). A release that frees the lock by
 *                CASing tail to NULL past a stale tail waiter then stores
 *                REMOVED into that waiter's node: it is inside lock() on
 *                this lock, which keeps both alive. The releaser's short
 *                wait for a link spins (SPIN) or yields every 64 pauses
 *                (other disciplines: the linker may be preempted).
 *   Limits:      none. The staleness threshold SYNCQ_LOCK_MCS_TP_STALE_NS
 *                (100 us) and SYNCQ_LOCK_MCS_TP_MAX_PASSES (256): the
 *                reasoning is at their definitions.
 *   Stats:       cas_attempts, cas_failures (tail CASes), retries
 *                (waiters passed over that queued again), yields, blocks.
 *   Deviations:  from the paper as described: (1) no timeout / abort: the
 *                syncq lock API has no timed lock, so the paper's "left"
 *                state (a waiter that gave up) does not exist and only the
 *                releaser changes a node's status; (2) no detection of a
 *                preempted holder (the paper's critical-section start
 *                stamp, which lets waiters yield): it would add a clock
 *                read and a store to every uncontended acquisition; (3) a
 *                removed waiter queues again with the same node, which the
 *                releaser stops reading before it stores REMOVED, instead
 *                of a node reclaimed later; (4) sleeping waiters (BLOCK,
 *                COMPETITIVE) are this library's addition: the paper's
 *                locks spin; a sleeper is kept in place and passed over,
 *                not removed, and a running waiter is moved ahead of it;
 *                (5) the threshold is this file's reasoning (100 us), not
 *                a value taken from the paper, and the clock is
 *                CLOCK_MONOTONIC.
 */
#include "syncq/lock/mcs_tp.h"

#include "../stats_internal.h"
#include "lock_internal.h"
#include "syncq/clock.h"
#include "syncq/platform.h"
#include "syncq/wait.h"

/* A waiter's queue node, laid in the caller's syncq_lock_node. */
typedef struct tp_qnode {
  _Atomic(struct tp_qnode *) next;
  _Atomic(uint64_t) stamp;  /* syncq_now_ns at the waiter's last poll */
  _Atomic(uint32_t) status; /* TP_WAITING, TP_ASLEEP, TP_GRANTED, TP_REMOVED */
  _Atomic(uint32_t) passes; /* releases that passed it over while it slept (holders only) */
} tp_qnode;

_Static_assert(sizeof(tp_qnode) <= sizeof(syncq_lock_node), "an MCS-TP node fits in syncq_lock_node");

/* TP_ASLEEP is TP_WAITING with the sleep mark of syncq/wait.h: the waiter
 * is asleep on its status (or about to be), and publishes nothing. */
enum { TP_GRANTED = 0u, TP_WAITING = 1u, TP_REMOVED = 2u, TP_ASLEEP = 3u };

/* YIELD: yield once every this many polls of the own status. */
#define SYNCQ_LOCK_MCS_TP_POLLS_PER_YIELD 16u
/* Pauses between yields of a releaser waiting for a link (not SPIN). */
#define SYNCQ_LOCK_MCS_TP_LINK_PAUSES_PER_YIELD 64u

static inline tp_qnode *qnode_of(syncq_lock_node *n) { return (tp_qnode *)(void *)n->opaque; }

/* Wait for n's successor to link itself (it has swapped itself into tail
 * behind n but not yet stored n->next). */
static tp_qnode *await_link(const syncq_lock_mcs_tp *l, tp_qnode *n) {
  tp_qnode *next;
  uint32_t k = 0;
  /* acquire: pairs with the successor's release store of n->next, which
   * publishes its stamp */
  while ((next = atomic_load_explicit(&n->next, memory_order_acquire)) == NULL) {
    if (l->wait != SYNCQ_WAIT_SPIN && (++k % SYNCQ_LOCK_MCS_TP_LINK_PAUSES_PER_YIELD) == 0) {
      SYNCQ_STAT_INC(yields);
      syncq_yield();
    } else {
      syncq_pr_relax();
    }
  }
  return next;
}

int syncq_lock_mcs_tp_init(syncq_lock_mcs_tp *l, const syncq_lock_config *cfg) {
  if (l == NULL) return SYNCQ_EINVAL;
  int wait, ps;
  int r = lock_parse_config(cfg, SYNCQ_WAIT_SPIN, LOCK_WAIT_ALL, 0, &wait, &ps);
  if (r != SYNCQ_OK) return r;
  atomic_init(&l->tail, NULL);
  l->wait = wait;
  if (wait == SYNCQ_WAIT_COMPETITIVE) (void)syncq_wait_calibrate();
  return SYNCQ_OK;
}

int syncq_lock_mcs_tp_destroy(syncq_lock_mcs_tp *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  return atomic_load(&l->tail) != NULL ? SYNCQ_EBUSY : SYNCQ_OK;
}

int syncq_lock_mcs_tp_lock(syncq_lock_mcs_tp *l, syncq_lock_node *node) {
  if (l == NULL || node == NULL) return SYNCQ_EINVAL;
  tp_qnode *me = qnode_of(node);
  const bool may_sleep = syncq_wait_may_sleep(l->wait);
  for (;;) {
    /* relaxed: published by the acq_rel swap below */
    atomic_store_explicit(&me->next, (tp_qnode *)NULL, memory_order_relaxed);
    atomic_store_explicit(&me->status, TP_WAITING, memory_order_relaxed);
    atomic_store_explicit(&me->passes, 0u, memory_order_relaxed);
    /* acq_rel: release publishes our node to the node that swaps after us;
     * acquire pairs with the releasing CAS of tail to NULL in unlock */
    tp_qnode *pred = atomic_exchange_explicit(&l->tail, (void *)me, memory_order_acq_rel);
    if (pred == NULL) return SYNCQ_OK;
    /* relaxed: published to the releaser by the release store of
     * pred->next below (the releaser finds us only through it) */
    atomic_store_explicit(&me->stamp, syncq_now_ns(), memory_order_relaxed);
    /* release: pairs with the acquire load of next in the releaser's
     * unlock (its own node's, or another waiter's in await_link) */
    atomic_store_explicit(&pred->next, me, memory_order_release);
    syncq_waiter w;
    syncq_waiter_init(&w, l->wait, false, may_sleep ? lock_spin_limit(l->wait) : 0);
    uint32_t polls = 0;
    for (;;) {
      /* acquire: pairs with the releaser's release exchange of GRANTED or
       * REMOVED (after its last access to our node) */
      uint32_t s = atomic_load_explicit(&me->status, memory_order_acquire);
      if (s == TP_GRANTED) return SYNCQ_OK;
      if (s == TP_REMOVED) break;
      if (may_sleep) {
        if (syncq_waiter_step(&w)) {
          /* mark our status, then sleep on it. seq_cst CAS: a
           * read-modify-write of the word, so either the releaser's
           * exchange reads the mark or the CAS fails on its value */
          if (s == TP_WAITING && !atomic_compare_exchange_strong(&me->status, &s, TP_ASLEEP)) continue;
          syncq_waiter_sleep(&w, &me->status, TP_ASLEEP);
          /* woken ahead of its turn (COMPETITIVE: a releaser cleared our
           * mark): spin again, publishing, for another spin limit */
          if (atomic_load_explicit(&me->status, memory_order_acquire) == TP_WAITING) /* pairs with the clearing CAS */
            syncq_waiter_init(&w, l->wait, false, lock_spin_limit(l->wait));
          else
            continue; /* still asleep-marked: nothing to publish */
        }
      } else if (l->wait == SYNCQ_WAIT_YIELD && ++polls % SYNCQ_LOCK_MCS_TP_POLLS_PER_YIELD == 0) {
        SYNCQ_STAT_INC(yields);
        syncq_yield();
      } else {
        syncq_pr_relax();
      }
      /* relaxed: a hint the releaser reads (relaxed); a late or early
       * view of it changes whom it grants, never mutual exclusion */
      atomic_store_explicit(&me->stamp, syncq_now_ns(), memory_order_relaxed);
    }
    SYNCQ_STAT_INC(retries); /* passed over while not running: queue again */
  }
}

int syncq_lock_mcs_tp_trylock(syncq_lock_mcs_tp *l, syncq_lock_node *node) {
  if (l == NULL || node == NULL) return SYNCQ_EINVAL;
  tp_qnode *me = qnode_of(node);
  /* relaxed: published by the CAS below */
  atomic_store_explicit(&me->next, (tp_qnode *)NULL, memory_order_relaxed);
  atomic_store_explicit(&me->status, TP_GRANTED, memory_order_relaxed);
  void *expected = NULL;
  SYNCQ_STAT_INC(cas_attempts);
  /* seq_cst: acquires the lock (pairs with unlock's CAS to NULL) */
  if (atomic_compare_exchange_strong(&l->tail, &expected, (void *)me)) return SYNCQ_OK;
  SYNCQ_STAT_INC(cas_failures);
  return SYNCQ_EBUSY;
}

/* Write a waiter's final status (GRANTED or REMOVED). release: pairs with
 * the waiter's acquire load of its status; an exchange, so it reads the
 * waiter's sleep mark. Returns whether the waiter may be asleep: the
 * caller wakes it (futex wake on the address, nothing else). */
static inline bool tp_settle(tp_qnode *n, uint32_t to) {
  return atomic_exchange_explicit(&n->status, to, memory_order_release) == TP_ASLEEP;
}

/* Unlink cur, which follows the kept node prev: prev's next becomes cur's
 * successor (or prev becomes the tail). Returns cur's successor (NULL
 * when prev became the tail). The caller holds the lock. */
static tp_qnode *tp_unlink(syncq_lock_mcs_tp *l, tp_qnode *prev, tp_qnode *cur) {
  tp_qnode *nx = atomic_load_explicit(&cur->next, memory_order_acquire); /* pairs as in await_link */
  if (nx == NULL) {
    /* relaxed: ordered before a later enqueuer's link by the seq_cst CAS
     * below and its acq_rel swap of tail */
    atomic_store_explicit(&prev->next, (tp_qnode *)NULL, memory_order_relaxed);
    void *expected = (void *)cur;
    SYNCQ_STAT_INC(cas_attempts);
    /* seq_cst: later enqueuers link behind prev (their swap acquires it) */
    if (atomic_compare_exchange_strong(&l->tail, &expected, (void *)prev)) return NULL;
    SYNCQ_STAT_INC(cas_failures);
    nx = await_link(l, cur);
  }
  /* relaxed: read by later holders, which the grant's release orders */
  atomic_store_explicit(&prev->next, nx, memory_order_relaxed);
  return nx;
}

int syncq_lock_mcs_tp_unlock(syncq_lock_mcs_tp *l, syncq_lock_node *node) {
  if (l == NULL || node == NULL) return SYNCQ_EINVAL;
  if (atomic_load(&l->tail) == NULL) return SYNCQ_EINVAL; /* nobody holds it */
  tp_qnode *me = qnode_of(node);
  /* acquire: pairs with the successor's release store of our next */
  tp_qnode *cur = atomic_load_explicit(&me->next, memory_order_acquire);
  if (cur == NULL) {
    void *expected = (void *)me;
    SYNCQ_STAT_INC(cas_attempts);
    /* seq_cst (release half used): pairs with the acquire swap in lock() */
    if (atomic_compare_exchange_strong(&l->tail, &expected, (void *)NULL)) {
      SYNCQ_RACE_POINT("lock.handover");
      return SYNCQ_OK;
    }
    SYNCQ_STAT_INC(cas_failures);
    cur = await_link(l, me); /* a successor swapped itself in but has not linked yet */
  }
  const uint64_t now = syncq_now_ns();
  /* The sleepers passed over stay queued, in order: first .. prev. */
  tp_qnode *first = NULL, *prev = NULL;
  tp_qnode *grant, *prewake = NULL;
  for (;;) {
    /* acquire: pairs with the waiter's seq_cst CAS that marks it asleep
     * (nothing is read through it; acquire for symmetry with lock()) */
    uint32_t s = atomic_load_explicit(&cur->status, memory_order_acquire);
    if (s == TP_ASLEEP) {
      /* asleep, not preempted: keep its place. The first sleeper is
       * granted once passed over SYNCQ_LOCK_MCS_TP_MAX_PASSES times. */
      if (first == NULL) {
        /* relaxed: only holders read and write passes (ordered by the
         * hand-over's release and acquire) */
        uint32_t p = atomic_load_explicit(&cur->passes, memory_order_relaxed);
        if (p >= SYNCQ_LOCK_MCS_TP_MAX_PASSES) {
          grant = cur;
          break;
        }
        atomic_store_explicit(&cur->passes, p + 1u, memory_order_relaxed); /* as above */
        first = cur;
      }
      prev = cur;
      tp_qnode *nx = atomic_load_explicit(&cur->next, memory_order_acquire); /* pairs as in await_link */
      if (nx == NULL) { /* the end: nobody running waits; the first sleeper gets it */
        grant = first;
        break;
      }
      cur = nx;
      continue;
    }
    /* relaxed: the stamp is a hint (see lock()); the one the waiter
     * stored before linking is visible through the acquire of its link */
    uint64_t stamp = atomic_load_explicit(&cur->stamp, memory_order_relaxed);
    if (stamp + SYNCQ_LOCK_MCS_TP_STALE_NS >= now) {
      /* running (or published after we read the clock) */
      if (first != NULL) {
        /* it moves ahead of the sleepers: out of its place, and the
         * sleepers queue behind it */
        (void)tp_unlink(l, prev, cur);
        /* relaxed: published by the grant's release exchange */
        atomic_store_explicit(&cur->next, first, memory_order_relaxed);
        /* COMPETITIVE: wake the first sleeper ahead of its turn (clear
         * its mark now, wake it after the hand-over), so that it is
         * running, and publishing, when a release reaches it: granted
         * while asleep, the lock would wait for its wake-up. BLOCK asks
         * its waiters to sleep: they wait for their turn asleep. */
        uint32_t asleep = TP_ASLEEP;
        /* seq_cst CAS (release half: pairs with the waiter's acquire
         * load after its sleep). It cannot fail: only holders change a
         * marked status, and we hold the lock; a CAS all the same, so
         * that a broken assumption costs a wake-up, never a grant. */
        if (l->wait == SYNCQ_WAIT_COMPETITIVE && atomic_compare_exchange_strong(&first->status, &asleep, TP_WAITING))
          prewake = first;
      }
      grant = cur;
      break;
    }
    /* stale: probably preempted; pass it over (it queues again). */
    tp_qnode *nx;
    if (prev == NULL) {
      nx = atomic_load_explicit(&cur->next, memory_order_acquire); /* pairs as in await_link */
      if (nx == NULL) {
        void *expected = (void *)cur;
        SYNCQ_STAT_INC(cas_attempts);
        /* seq_cst (release half used): frees the lock, as the CAS above */
        if (atomic_compare_exchange_strong(&l->tail, &expected, (void *)NULL)) {
          /* The lock is free; cur's owner is still inside lock() (on
           * this lock, with this node), so both are alive. */
          if (tp_settle(cur, TP_REMOVED)) syncq_wait_futex_wake(&cur->status, 1, false);
          SYNCQ_RACE_POINT("lock.handover");
          return SYNCQ_OK;
        }
        SYNCQ_STAT_INC(cas_failures);
        nx = await_link(l, cur);
      }
    } else {
      nx = tp_unlink(l, prev, cur);
    }
    /* from here on cur's owner may reinitialise its node and queue again:
     * we do not touch it after this (a wake is a system call on the
     * address of a node whose owner is inside lock()) */
    if (tp_settle(cur, TP_REMOVED)) syncq_wait_futex_wake(&cur->status, 1, false);
    if (nx == NULL) { /* cur was the tail behind the sleepers */
      grant = first;
      break;
    }
    cur = nx;
  }
  /* The hand-over. From here on the new holder may own, destroy and free
   * the lock and leave with its node: only the futex wake on its status
   * word's address follows. */
  bool asleep = tp_settle(grant, TP_GRANTED);
  SYNCQ_RACE_POINT("lock.handover");
  if (asleep) syncq_wait_futex_wake(&grant->status, 1, false);
  /* the address of a waiter that is still inside lock() (it waits for
   * the lock, so the lock is not destroyed): a system call, no access */
  if (prewake != NULL) syncq_wait_futex_wake(&prewake->status, 1, false);
  return SYNCQ_OK;
}

SYNCQ_LOCK_OPS(ops, syncq_lock_mcs_tp, syncq_lock_mcs_tp_init, syncq_lock_mcs_tp_destroy, syncq_lock_mcs_tp_lock,
               syncq_lock_mcs_tp_trylock, syncq_lock_mcs_tp_unlock);

const syncq_algo syncq_lock_mcs_tp_algo = {
  SYNCQ_FAMILY_LOCK, "mcs-tp", "time-published MCS queue lock (passes over preempted waiters)",
  "He, Scherer & Scott, HiPC 2005 (MCS-TP)", SYNCQ_PROGRESS_BLOCKING, SYNCQ_PROP_SIGNAL_SAFE | SYNCQ_PROP_USES_NODE,
  &ops,
};
