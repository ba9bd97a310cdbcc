/* SPDX-License-Identifier: BSD-2-Clause */
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
 *   Algorithm:   node = {next, stamp, status}; status WAITING, GRANTED or
 *                REMOVED. Waiter: next = NULL; swap itself into tail;
 *                none before it: it holds the lock. Else it stores status
 *                = WAITING and stamp = now, links behind its predecessor
 *                (the release store that publishes the stamp), and polls
 *                its status, storing stamp = now at every poll: GRANTED:
 *                it holds the lock; REMOVED: it was passed over, and
 *                queues again with the same node. Releaser: as MCS's to
 *                find its successor s (CAS tail to NULL when it has none),
 *                reads the clock once, then: s's stamp within
 *                the lock's staleness bound of that time (or later):
 *                status GRANTED, the hand-over. Stale: it waits for s's
 *                link to its own successor (or, s being the tail, CASes
 *                tail from s to NULL: the lock is free), stores REMOVED in
 *                s's status (from then on s's owner may reuse the node:
 *                nothing of it is read again) and goes on with the next
 *                node. Only the holder grants or removes, so the status
 *                changes once per queueing and needs no CAS.
 *   Progress:    blocking. Starvation-free among waiters that are not
 *                preempted: a waiter that publishes at least every
 *                staleness bound from its enqueue until its
 *                grant gets the lock after at most the waiters queued
 *                before it (FIFO over them). A waiter that is off its
 *                processor longer than that when a release reaches it
 *                loses its place and queues again at the tail; one that is
 *                preempted at every release reaching it can starve. A
 *                preempted holder still stops everybody (nothing detects
 *                it). The walk over stale waiters ends at the latest at the
 *                first node linked after the releaser read the clock (its
 *                stamp is later), so a release is bounded by the queue's
 *                length at that time.
 *   Order:       FIFO among running waiters only; registered without
 *                SYNCQ_PROP_FIFO (on an oversubscribed machine waiters are
 *                passed over, which is the point).
 *   Atomics:     uncontended lock: 1 relaxed store (next) + 1 swap, no
 *                clock read, as MCS (a waiter sets its status only once
 *                it has a predecessor); unlock: 2 loads + 1 CAS, as MCS
 *                (skipping the CAS when tail already names a successor);
 *                trylock: 1 relaxed store + 1 CAS. The waiting and the
 *                hand-over are out of line, so the uncontended calls keep
 *                no stack frame, and the ops table calls the bodies, not
 *                the exported functions (no jump between).
 *                A queued waiter: 1 clock read + 1 swap + 1 store to link,
 *                then per poll 1 load + 1 clock read + 1 relaxed store.
 *                A hand-over: 1 clock read + 1 load of the stamp + 1
 *                release store; each waiter passed over: 2 loads + 1
 *                store (+ 1 CAS when it is the tail).
 *   Timestamps:  syncq_now_ns (CLOCK_MONOTONIC, a vDSO call of some 20 ns)
 *                rather than rdtsc: comparable between processors on every
 *                platform the library builds for (rdtsc needs an invariant,
 *                synchronised TSC and exists on x86 only), and read only
 *                while waiting or handing over to a waiter, never on the
 *                uncontended path.
 *   Memory:      the caller's syncq_lock_node per acquisition (it must stay
 *                untouched until unlock returns); never allocates.
 *   Signal-safe: trylock and unlock yes; lock yes (SPIN and YIELD only).
 *   Process-shared: no (the queue links nodes by address): SYNCQ_ENOTSUP.
 *   Waiting:     SPIN (default here): pause between polls; YIELD: yield
 *                every SYNCQ_LOCK_MCS_TP_POLLS_PER_YIELD polls (how the
 *                generic API's safe default runs this lock, restricted:
 *                src/lock/lock.c puts src/lock/gcr.c around it, so only
 *                the two or three admitted waiters yield in the queue
 *                and the others sleep in the passive set, outside it,
 *                where no stamp of theirs can go stale). BLOCK and
 *                COMPETITIVE: SYNCQ_ENOTSUP, since a sleeping waiter
 *                publishes nothing and would be passed over at every
 *                release. A variant that kept sleepers queued in place,
 *                moved running waiters ahead of them and granted the
 *                first sleeper when nobody running waited (or after 256
 *                passes) was built and measured, and left out: once every
 *                waiter sleeps (a holder preempted for longer than the
 *                spin limit suffices) each hand-over waits for a wake-up,
 *                the convoy of plain MCS (8 threads on 2 cores, tight
 *                increment loop, competitive: 8.7-9.3 us per increment in
 *                three runs against pthread mutex's 31-61 ns). Leaving
 *                the convoy needs sleepers out of the queue (a mutex's
 *                barging), not a better choice of whom to grant.
 *   Destroy:     the next holder may destroy and free the lock as soon as
 *                it holds it: the releaser's last access to the lock or to
 *                a successor's node is the GRANTED store (or its CAS of
 *                tail to NULL, after which it stores REMOVED only into the
 *                node of the passed-over tail waiter, which is still
 *                inside lock() and so keeps lock and node alive). The
 *                releaser's short wait for a link spins (SPIN) or yields
 *                every 64 pauses (YIELD: the linker may be preempted).
 *   Limits:      none. The staleness bound: one context switch as
 *                measured by syncq_wait_spin_limit_ns (at the lock's
 *                init), at most SYNCQ_LOCK_MCS_TP_STALE_NS (100 us); the
 *                reasoning is at its definition. When nearly every waiter
 *                is off its processor a release passes over all of them
 *                and frees the lock, and the first thread to run takes it
 *                (a cap of 4 passes followed by a grant to a stale waiter
 *                was measured and left out: 126-206x pthread mutex beside
 *                a busy program on 2 cores with 32 threads), and so was a
 *                hint that made the next waiter spin instead of yield (as
 *                clh_tp.c's does): 2.5-4.0x there, against 1.3-2.0x
 *                without it.
 *   Stats:       cas_attempts, cas_failures (tail CASes), retries
 *                (waiters passed over that queued again), yields.
 *   Deviations:  from the paper as described: (1) no timeout / abort: the
 *                syncq lock API has no timed lock, so the paper's "left"
 *                state (a waiter that gave up) does not exist and only the
 *                releaser changes a node's status; (2) no detection of a
 *                preempted holder (the paper's critical-section start
 *                stamp, which lets waiters yield): it would add a clock
 *                read and a store to every uncontended acquisition; (3) a
 *                removed waiter queues again with the same node, which the
 *                releaser stops reading before it stores REMOVED, instead
 *                of a node reclaimed later; (4) the bound is the measured
 *                context switch (at most 100 us), not a value taken from
 *                the paper; (5) the clock is CLOCK_MONOTONIC, whatever the
 *                paper's machines used.
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
  _Atomic(uint32_t) status; /* TP_WAITING, TP_GRANTED, TP_REMOVED */
} tp_qnode;

_Static_assert(sizeof(tp_qnode) <= sizeof(syncq_lock_node), "an MCS-TP node fits in syncq_lock_node");

enum { TP_GRANTED = 0u, TP_WAITING = 1u, TP_REMOVED = 2u };

/* YIELD: yield once every this many polls of the own status. */
#define SYNCQ_LOCK_MCS_TP_POLLS_PER_YIELD 16u
/* Pauses between yields of a releaser waiting for a link (YIELD). */
#define SYNCQ_LOCK_MCS_TP_LINK_PAUSES_PER_YIELD 64u

/* The staleness bound: one measured context switch, at most
 * SYNCQ_LOCK_MCS_TP_STALE_NS (reasoning at its definition). */
static uint64_t stale_bound_ns(void) {
  const uint64_t cs = syncq_wait_spin_limit_ns();
  return cs < SYNCQ_LOCK_MCS_TP_STALE_NS ? cs : SYNCQ_LOCK_MCS_TP_STALE_NS;
}

static inline tp_qnode *qnode_of(syncq_lock_node *n) { return (tp_qnode *)(void *)n->opaque; }

/* Wait for n's successor to link itself (it has swapped itself into tail
 * behind n but not yet stored n->next). */
static tp_qnode *await_link(const syncq_lock_mcs_tp *l, tp_qnode *n) {
  tp_qnode *next;
  uint32_t k = 0;
  /* acquire: pairs with the successor's release store of n->next, which
   * publishes its stamp */
  while ((next = atomic_load_explicit(&n->next, memory_order_acquire)) == NULL) {
    syncq_wait_spin_yield(&k, l->wait == SYNCQ_WAIT_SPIN ? 0u : SYNCQ_LOCK_MCS_TP_LINK_PAUSES_PER_YIELD);
  }
  return next;
}

int syncq_lock_mcs_tp_init(syncq_lock_mcs_tp *l, const syncq_lock_config *cfg) {
  if (l == NULL) return SYNCQ_EINVAL;
  int wait, ps;
  int r = lock_parse_config(cfg, SYNCQ_WAIT_SPIN, LOCK_WAIT_BIT(SYNCQ_WAIT_SPIN) | LOCK_WAIT_BIT(SYNCQ_WAIT_YIELD), 0,
                            &wait, &ps);
  if (r != SYNCQ_OK) return r;
  atomic_init(&l->tail, NULL);
  l->wait = wait;
  l->stale_ns = stale_bound_ns();
  return SYNCQ_OK;
}

int syncq_lock_mcs_tp_destroy(syncq_lock_mcs_tp *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  return atomic_load(&l->tail) != NULL ? SYNCQ_EBUSY : SYNCQ_OK;
}

/* There is a predecessor: publish our stamp, link behind pred, poll, and
 * queue again each time a releaser passes us over. Out of line (the
 * uncontended path keeps no stack frame). */
static __attribute__((noinline)) int link_and_wait(syncq_lock_mcs_tp *l, tp_qnode *me, tp_qnode *pred) {
  for (;;) {
    /* relaxed: only the releaser that finds us writes our status, after
     * its acquire load of the link below, whose release store publishes
     * this one (set here, not before the swap: one store less on the
     * uncontended path, whose holder's status nobody reads) */
    atomic_store_explicit(&me->status, TP_WAITING, memory_order_relaxed);
    /* relaxed: published to the releaser by the release store of
     * pred->next below (the releaser finds us only through it) */
    atomic_store_explicit(&me->stamp, syncq_now_ns(), memory_order_relaxed);
    /* release: pairs with the acquire load of next in the releaser's
     * unlock (its own node's, or a passed-over node's in await_link) */
    atomic_store_explicit(&pred->next, me, memory_order_release);
    uint32_t polls = 0;
    for (;;) {
      /* acquire: pairs with the releaser's release store of GRANTED or
       * REMOVED (after its last read of our node) */
      uint32_t s = atomic_load_explicit(&me->status, memory_order_acquire);
      if (s == TP_GRANTED) return SYNCQ_OK;
      if (s == TP_REMOVED) break;
      syncq_wait_spin_yield(&polls, l->wait == SYNCQ_WAIT_YIELD ? SYNCQ_LOCK_MCS_TP_POLLS_PER_YIELD : 0u);
      /* relaxed: a hint the releaser reads (relaxed); a late or early
       * view of it changes whom it grants, never mutual exclusion */
      atomic_store_explicit(&me->stamp, syncq_now_ns(), memory_order_relaxed);
    }
    SYNCQ_STAT_INC(retries); /* passed over while not running: queue again */
    /* relaxed: published by the acq_rel swap below */
    atomic_store_explicit(&me->next, (tp_qnode *)NULL, memory_order_relaxed);
    /* acq_rel: as in syncq_lock_mcs_tp_lock */
    pred = atomic_exchange_explicit(&l->tail, (void *)me, memory_order_acq_rel);
    if (pred == NULL) return SYNCQ_OK;
  }
}

/* The acquisition, one body for the exported function and the ops table
 * (an exported function is not inlined into the table's wrapper: the
 * wrapper would be one more jump per call). */
static inline int mcs_tp_lock(syncq_lock_mcs_tp *l, syncq_lock_node *node) {
  if (l == NULL || node == NULL) return SYNCQ_EINVAL;
  tp_qnode *me = qnode_of(node);
  /* relaxed: published by the acq_rel swap below (a successor links
   * itself here) */
  atomic_store_explicit(&me->next, (tp_qnode *)NULL, memory_order_relaxed);
  /* acq_rel: release publishes our node to the node that swaps after us;
   * acquire pairs with the releasing CAS of tail to NULL in unlock */
  tp_qnode *pred = atomic_exchange_explicit(&l->tail, (void *)me, memory_order_acq_rel);
  if (pred == NULL) return SYNCQ_OK;
  return link_and_wait(l, me, pred);
}

static inline int mcs_tp_trylock(syncq_lock_mcs_tp *l, syncq_lock_node *node) {
  if (l == NULL || node == NULL) return SYNCQ_EINVAL;
  tp_qnode *me = qnode_of(node);
  /* relaxed: published by the CAS below (the holder's status is not read) */
  atomic_store_explicit(&me->next, (tp_qnode *)NULL, memory_order_relaxed);
  void *expected = NULL;
  /* seq_cst: acquires the lock (pairs with unlock's CAS to NULL) */
  bool took = atomic_compare_exchange_strong(&l->tail, &expected, (void *)me);
  SYNCQ_STAT_INC(cas_attempts); /* counted after the CAS: no store waits ahead of it */
  if (took) return SYNCQ_OK;
  SYNCQ_STAT_INC(cas_failures);
  return SYNCQ_EBUSY;
}

/* The release with a successor (succ, or NULL: one swapped itself in but
 * has not linked yet): hand over to the first waiter whose stamp is
 * fresh, passing over the stale ones. Out of line (the uncontended
 * release keeps no stack frame). */
static __attribute__((noinline)) int hand_over(syncq_lock_mcs_tp *l, tp_qnode *me, tp_qnode *succ) {
  if (succ == NULL) succ = await_link(l, me);
  const uint64_t now = syncq_now_ns();
  for (;;) {
    /* relaxed: the stamp is a hint (see link_and_wait); the one the waiter
     * stored before linking is visible through the acquire of its link */
    uint64_t stamp = atomic_load_explicit(&succ->stamp, memory_order_relaxed);
    if (stamp + l->stale_ns >= now) {
      /* running (or published after we read the clock): the hand-over.
       * release: pairs with the waiter's acquire load of its status. From
       * here on the successor may own, destroy and free the lock and leave
       * with its node: only locals are used after it. */
      atomic_store_explicit(&succ->status, TP_GRANTED, memory_order_release);
      SYNCQ_RACE_POINT("lock.handover");
      return SYNCQ_OK;
    }
    /* stale: probably preempted; pass it over. First its successor, read
     * while it still waits (a WAITING node is not reused). */
    tp_qnode *next = atomic_load_explicit(&succ->next, memory_order_acquire); /* pairs as in await_link */
    if (next == NULL) {
      void *expected = (void *)succ;
      SYNCQ_STAT_INC(cas_attempts);
      /* seq_cst (release half used): frees the lock, as the CAS in unlock */
      if (atomic_compare_exchange_strong(&l->tail, &expected, (void *)NULL)) {
        /* The lock is free; succ's owner is still inside lock() (on this
         * lock, with this node), so both are alive. release: pairs with
         * its acquire load of the status; it then queues again. */
        atomic_store_explicit(&succ->status, TP_REMOVED, memory_order_release);
        SYNCQ_RACE_POINT("lock.handover");
        return SYNCQ_OK;
      }
      SYNCQ_STAT_INC(cas_failures);
      next = await_link(l, succ);
    }
    /* release: pairs with the waiter's acquire load of its status; we do
     * not read its node again (it may reinitialise it and queue again) */
    atomic_store_explicit(&succ->status, TP_REMOVED, memory_order_release);
    succ = next;
  }
}

static inline int mcs_tp_unlock(syncq_lock_mcs_tp *l, syncq_lock_node *node) {
  if (l == NULL || node == NULL) return SYNCQ_EINVAL;
  void *tail = atomic_load(&l->tail);
  if (tail == NULL) return SYNCQ_EINVAL; /* nobody holds it */
  tp_qnode *me = qnode_of(node);
  /* acquire: pairs with the successor's release store of our next */
  tp_qnode *succ = atomic_load_explicit(&me->next, memory_order_acquire);
  if (succ == NULL && tail == (void *)me) {
    /* no successor seen (tail read other than us: one has swapped in, as
     * only the holder moves tail back to NULL, and the CAS would fail:
     * skip it, as syncq/static/lock/mcs.h does) */
    void *expected = (void *)me;
    /* seq_cst (release half used): pairs with the acquire swap in lock() */
    bool released = atomic_compare_exchange_strong(&l->tail, &expected, (void *)NULL);
    SYNCQ_STAT_INC(cas_attempts); /* counted after the CAS: no store waits ahead of it */
    if (released) {
      SYNCQ_RACE_POINT("lock.handover");
      return SYNCQ_OK;
    }
    SYNCQ_STAT_INC(cas_failures);
  }
  return hand_over(l, me, succ);
}

int syncq_lock_mcs_tp_lock(syncq_lock_mcs_tp *l, syncq_lock_node *node) { return mcs_tp_lock(l, node); }
int syncq_lock_mcs_tp_trylock(syncq_lock_mcs_tp *l, syncq_lock_node *node) { return mcs_tp_trylock(l, node); }
int syncq_lock_mcs_tp_unlock(syncq_lock_mcs_tp *l, syncq_lock_node *node) { return mcs_tp_unlock(l, node); }

/* The ops table calls the bodies, not the exported functions (see mcs_tp_lock). */
SYNCQ_LOCK_REGISTER_FNS(mcs_tp, "mcs-tp", "time-published MCS queue lock (passes over preempted waiters)",
                        "He, Scherer & Scott, HiPC 2005 (MCS-TP)", BLOCKING,
                        SYNCQ_PROP_SIGNAL_SAFE | SYNCQ_PROP_USES_NODE, syncq_lock_mcs_tp, syncq_lock_mcs_tp_init,
                        syncq_lock_mcs_tp_destroy, mcs_tp_lock, mcs_tp_trylock, mcs_tp_unlock);
