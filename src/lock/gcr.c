/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gcr.c — generic concurrency restriction around a FIFO lock: what the
 * generic API (lock.c) puts around a FIFO lock whose waiters may sleep
 * (created with no discipline named, or with SYNCQ_WAIT_BLOCK or
 * SYNCQ_WAIT_COMPETITIVE; spinning and yielding keep the lock alone).
 *
 * Contract
 *   Source:      Dice & Kogan, "Avoiding Scalability Collapse by
 *                Restricting Concurrency", Euro-Par 2019 (GCR: a wrapper
 *                that admits a few threads to any lock and parks the rest
 *                in a passive queue whose head is admitted when there is
 *                room, and periodically whatever the count says); Dice,
 *                "Malthusian Locks", EuroSys 2017 (concurrency
 *                restriction: an active set that circulates, a passive set
 *                that sleeps, long-term fairness by periodic promotion).
 *                No copy of the papers was at hand: this follows their
 *                published description, not a figure line by line (see
 *                Deviations).
 *   Why:         a FIFO lock hands over to the longest waiter. With more
 *                threads than processing units that waiter is often
 *                preempted or asleep, so each hand-over costs a wake-up
 *                while nobody holds the lock, and the waiters that spin
 *                take the processors the successor needs. Restricted, the
 *                inner lock sees the holder and at most
 *                SYNCQ_LOCK_GCR_ADMITTED (+1) waiters, which wait briefly
 *                and so are running; the others sleep outside it and cost no processor. The
 *                lock's discipline says how a waiter waits: passive
 *                waiters sleep at once (BLOCK) or after about one context
 *                switch of spinning (COMPETITIVE); the admitted ones (at
 *                most SYNCQ_LOCK_GCR_ADMITTED + 1) wait competitively
 *                under both (lock.c makes the inner lock COMPETITIVE when
 *                BLOCK is named): each is next in line within a few
 *                critical sections, and a FIFO hand-over to a waiter that
 *                slept at once idles the lock for its wake-up (locks-cost,
 *                oversubscribed, 64 threads on 2 cores: block named at
 *                1.7-3.7x pthread mutex with admitted waiters that slept
 *                at once, 0.97-1.74x with spinning ones; docs/reliability.md).
 *   Algorithm:   lock: (1) nobody admitted: try the inner lock once (its
 *                trylock); (2) admitted < SYNCQ_LOCK_GCR_ADMITTED: take a
 *                place by CAS and call the inner lock; (3) else join the
 *                passive queue (an MCS queue of nodes on the waiters'
 *                stacks: swap into its tail, link behind the predecessor,
 *                wait until made its head); the head waits until admitted
 *                < SYNCQ_LOCK_GCR_ADMITTED (it takes the place by CAS) or
 *                the promote flag is set (it clears it and takes a place
 *                beyond the limit), makes its successor head, and calls
 *                the inner lock. Every acquisition, once the inner lock is
 *                held: give the place back (admitted - 1), count the
 *                acquisition and set promote every
 *                SYNCQ_LOCK_GCR_PROMOTE_EVERY-th, and wake the passive head
 *                if it sleeps and either no admitted waiter is left or
 *                it was just promoted. A sleeping head is not woken for
 *                room while admitted waiters remain: the wake-up is a
 *                system call inside the critical section, and arriving
 *                threads usually fill the room first; the last admitted
 *                waiter's acquisition wakes it, so the lock never idles
 *                with the passive head asleep. A waiter behind the head
 *                may sleep while the lock is free: when the head itself
 *                is preempted inside its spin (competitive) and the
 *                admitted waiters finish meanwhile, the queue behind it
 *                waits for the head to run again (as any queue of
 *                passive waiters does). unlock and trylock are the
 *                inner lock's, untouched.
 *   Progress:    blocking (the inner lock's). Starvation-free when the
 *                inner lock is: the passive queue is FIFO, and its head
 *                enters at the latest at the next promotion, within
 *                SYNCQ_LOCK_GCR_PROMOTE_EVERY acquisitions of the lock
 *                (room usually comes much sooner).
 *   Order:       not FIFO: a thread that arrives while there is room
 *                passes the passive waiters. Bound: a thread k-th in the
 *                passive queue is admitted within (k + 1) *
 *                SYNCQ_LOCK_GCR_PROMOTE_EVERY acquisitions provided each
 *                head runs between promotions (promote is one flag: two
 *                promotions made while the head is off its processor
 *                count as one, so the bound is in acquisitions during
 *                which the heads run), then waits in
 *                the inner lock behind the other admitted waiters (at most
 *                SYNCQ_LOCK_GCR_ADMITTED + 1 with a FIFO inner lock, whose
 *                admitted waiters are all served between two promotions)
 *                and any trylock that wins a free lock, in the inner
 *                lock's order (sc-queue and hybrid-sc pass over preempted
 *                waiters).
 *   Atomics:     lock, nobody admitted and the lock free: 1 load + the
 *                inner trylock + the holder's plain counter (every
 *                SYNCQ_LOCK_GCR_PROMOTE_EVERY-th acquisition also 1
 *                exchange of promote and 1 load of head_asleep); contended,
 *                admitted: + 1 CAS and 1 fetch-and-sub (and 1 load of
 *                head_asleep when it leaves none admitted); passive: + 1
 *                swap and 1 store (link), the head 1 CAS (or 1 exchange of
 *                promote and 1 fetch-and-add; + 1 load of the gate and 1
 *                exchange of head_asleep before each sleep) and its
 *                hand-over (1 load, 1 exchange, or 1 CAS of the tail).
 *                unlock: the inner lock's alone.
 *   Memory:      the passive node is on the waiting thread's stack (it
 *                lives while its lock() call does); the state is a few
 *                words beside the inner lock; never allocates.
 *   Signal-safe: no (passive waiters sleep on futexes), as the
 *                disciplines it applies to (BLOCK, COMPETITIVE).
 *   Process-shared: no (the generic API's locks are private).
 *   Waiting:     passive waiters wait by the lock's discipline: BLOCK
 *                sleeps at once, COMPETITIVE spins about one measured
 *                context switch (syncq_wait_spin_limit_ns) first (admitted
 *                waiters: see Why); asleep, a non-head sleeps on its
 *                node's word (the sleep mark of syncq/wait.h: 0 -> 2 by
 *                CAS; the hand-over exchange reads it and wakes), the head
 *                on the gate sequence after announcing itself in
 *                head_asleep (Dekker's pair with the holder's seq_cst
 *                decrement or promotion and its load of head_asleep; the
 *                holder bumps the gate before its wake, so the head's
 *                futex wait cannot miss it). Both announcements (the
 *                head's in head_asleep, the holder's promotion) are
 *                exchanges, not seq_cst stores: C11 orders a seq_cst
 *                store before a later seq_cst load, but qemu-user (7.2,
 *                x86-64 host) emulates AArch64's STLR and LDAR with a
 *                barrier before the store and after the load only, so
 *                the head's announcement could pass its load of admitted
 *                (a store buffer): it read 1, the last admitted waiter
 *                read head_asleep 0, and the head slept with the lock
 *                free and nobody admitted (lock_restrict_test's 16
 *                threads stopped for good). A read-modify-write is a full
 *                barrier there and on any processor, as syncq/wait.h's
 *                sleepers counters and the locks' sleep marks are.
 *   Destroy:     unlock is the inner lock's (its free-after-unlock
 *                promise holds unchanged): everything of this file runs
 *                inside lock(), while the caller still waits for or holds
 *                the lock, which therefore cannot be destroyed.
 *   Limits:      2^32 - 1 threads at once (admitted counts fewer).
 *   Admitted:    SYNCQ_LOCK_GCR_ADMITTED is 1: on 16 cores (locks-cost,
 *                2 and 4 threads a unit) every restricted FIFO lock
 *                measured 0.31-0.56x pthread mutex beside a busy program
 *                with 1, 1.34-4.63x with 2 (docs/reliability.md, "One
 *                admitted waiter"). The time-published locks (mcs-tp,
 *                clh-tp) keep SYNCQ_LOCK_GCR_ADMITTED_TP (2): their
 *                admitted waiters yield, and with one the passive head
 *                is woken at nearly every hand-over (7.9x and 5.2x
 *                pthread mutex oversubscribed, on 2 cores). The limit is
 *                the lock's (lock_gcr_init); SYNCQ_LOCK_GCR_ADMITTED
 *                below stands for it.
 *   Stats:       blocks (sleeps of passive waiters), as syncq/wait.h counts.
 *   Deviations:  from the papers as described: (1) the place is given back
 *                when the inner lock is acquired rather than at unlock, so
 *                unlock stays the inner lock's (a waiter that is not
 *                holding is what the count restricts, and an unlock by a
 *                non-holder cannot corrupt it); (2) the first attempt is
 *                the inner lock's trylock when nobody is admitted, so an
 *                uncontended acquisition costs one more load than the
 *                inner lock; (3) promotion by count, not by a random or
 *                timed trial; (4) the head sleeps after spinning (the
 *                papers' head spins).
 */
#include "gcr_internal.h"

#include "syncq/platform.h"
#include "syncq/wait.h"

/* A passive waiter's node, on its stack. */
typedef struct gcr_pnode {
  _Atomic(struct gcr_pnode *) next;
  _Atomic(uint32_t) state; /* PN_WAITING, PN_ASLEEP (waiting and maybe asleep), PN_HEAD */
} gcr_pnode;

enum { PN_WAITING = 0u, PN_HEAD = 1u, PN_ASLEEP = 2u };

/* Pauses between yields of a head waiting for its successor's link. */
#define GCR_LINK_PAUSES_PER_YIELD 64u

void lock_gcr_init(lock_gcr *g, int wait, uint32_t limit) {
  g->limit = limit == 0u ? 1u : limit;
  atomic_init(&g->admitted, 0u);
  atomic_init(&g->promote, 0u);
  atomic_init(&g->gate, 0u);
  atomic_init(&g->head_asleep, 0u);
  g->acquisitions = 0;
  g->wait = wait;
  g->spin_limit_ns = syncq_wait_spin_limit_for(wait);
  atomic_init(&g->passive, NULL);
}

/* Take an admitted place if there is room: true when taken. */
static bool take_place(lock_gcr *g) {
  /* seq_cst: for the passive head, the load after its announcement in
   * head_asleep (Dekker's pair with acquired()) */
  uint32_t a = atomic_load(&g->admitted);
  while (a < g->limit) {
    /* seq_cst: the head's CAS here is half of the Dekker pair with
     * head_asleep (see acquired()); for others a count only */
    if (atomic_compare_exchange_weak(&g->admitted, &a, a + 1u)) return true;
  }
  return false;
}

/* May the passive head enter now? Takes the place when it may. */
static bool head_may_enter(lock_gcr *g) {
  if (take_place(g)) return true;
  /* seq_cst: pairs with the holder's seq_cst store of promote */
  if (atomic_load(&g->promote) != 0u && atomic_exchange(&g->promote, 0u) != 0u) {
    atomic_fetch_add(&g->admitted, 1u); /* seq_cst: a count; beyond the limit by one */
    return true;
  }
  return false;
}

/* Wait in the passive queue until admitted. */
static void wait_passive(lock_gcr *g) {
  gcr_pnode me;
  atomic_init(&me.next, NULL);
  atomic_init(&me.state, PN_WAITING);
  /* acq_rel: release publishes our node to the successor that swaps
   * after us; acquire pairs with the departing head's release CAS of the
   * tail to NULL (nothing of it read after) */
  gcr_pnode *pred = atomic_exchange_explicit(&g->passive, &me, memory_order_acq_rel);
  syncq_waiter w;
  if (pred != NULL) {
    /* release: pairs with the acquire load of next by the departing head */
    atomic_store_explicit(&pred->next, &me, memory_order_release);
    syncq_waiter_init(&w, g->wait, false, g->spin_limit_ns);
    uint32_t v;
    /* acquire: pairs with the predecessor's release exchange of PN_HEAD */
    while ((v = atomic_load_explicit(&me.state, memory_order_acquire)) != PN_HEAD) {
      if (!syncq_waiter_step(&w)) continue;
      /* seq_cst CAS: a read-modify-write of the word, so either the
       * hand-over exchange reads the mark or the CAS fails on PN_HEAD */
      if (v == PN_WAITING && !atomic_compare_exchange_strong(&me.state, &v, PN_ASLEEP)) continue;
      syncq_waiter_sleep(&w, &me.state, PN_ASLEEP);
    }
  }
  /* the head: wait for room or promotion */
  syncq_waiter_init(&w, g->wait, false, g->spin_limit_ns);
  while (!head_may_enter(g)) {
    if (!syncq_waiter_step(&w)) continue;
    uint32_t seq = atomic_load(&g->gate); /* seq_cst: read before announcing ourselves */
    /* seq_cst read-modify-write, not a store: Dekker's pair with
     * acquired()'s decrement or promotion and its load of head_asleep
     * (contract: Waiting, why an exchange) */
    (void)atomic_exchange(&g->head_asleep, 1u);
    if (head_may_enter(g)) {
      atomic_store_explicit(&g->head_asleep, 0u, memory_order_relaxed); /* relaxed: a hint; only we set it */
      break;
    }
    syncq_waiter_sleep(&w, &g->gate, seq);
    atomic_store_explicit(&g->head_asleep, 0u, memory_order_relaxed); /* relaxed: as above */
  }
  /* leave the passive queue: make the successor head */
  /* acquire: pairs with the successor's release store of our next */
  gcr_pnode *succ = atomic_load_explicit(&me.next, memory_order_acquire);
  if (succ == NULL) {
    gcr_pnode *expected = &me;
    /* seq_cst (release half used): pairs with the acquire swap above */
    if (atomic_compare_exchange_strong(&g->passive, &expected, NULL)) return;
    uint32_t k = 0;
    while ((succ = atomic_load_explicit(&me.next, memory_order_acquire)) == NULL) /* pairs as above */
      syncq_wait_spin_yield(&k, GCR_LINK_PAUSES_PER_YIELD);
  }
  /* release: pairs with the successor's acquire load of its state; a
   * read-modify-write, so it reads the successor's sleep mark. The
   * successor's node lives until it leaves its lock(): after this it may,
   * so the wake uses the address only. */
  if (atomic_exchange_explicit(&succ->state, PN_HEAD, memory_order_release) == PN_ASLEEP)
    syncq_wait_futex_wake(&succ->state, 1, false);
}

/* The inner lock is held: give the place back (if one was taken), count
 * the acquisition, promote, wake the passive head if it sleeps and nobody
 * admitted is left or it was promoted (contract: Algorithm). */
static void acquired(lock_gcr *g, bool placed) {
  bool room = false;
  if (placed) {
    /* seq_cst: Dekker's pair with the head's seq_cst store of head_asleep */
    room = atomic_fetch_sub(&g->admitted, 1u) == 1u;
  }
  /* plain: only the holder of the inner lock touches it */
  if (++g->acquisitions % SYNCQ_LOCK_GCR_PROMOTE_EVERY == 0u) {
    /* seq_cst read-modify-write, not a store: Dekker's pair as above */
    (void)atomic_exchange(&g->promote, 1u);
    room = true;
  }
  if (room && atomic_load(&g->head_asleep) != 0u) { /* seq_cst: the other half */
    atomic_fetch_add(&g->gate, 1u);                 /* seq_cst: the head's futex wait sees the change */
    syncq_wait_futex_wake(&g->gate, 1, false);
  }
}

int lock_gcr_lock(lock_gcr *g, const syncq_lock_ops *ops, void *storage, syncq_lock_node *node) {
  /* relaxed: a hint; the trylock decides */
  if (atomic_load_explicit(&g->admitted, memory_order_relaxed) == 0u && ops->trylock(storage, node) == SYNCQ_OK) {
    acquired(g, false);
    return SYNCQ_OK;
  }
  if (!take_place(g)) wait_passive(g);
  int r = ops->lock(storage, node);
  if (r == SYNCQ_OK) {
    acquired(g, true);
  } else if (atomic_fetch_sub(&g->admitted, 1u) == 1u && /* seq_cst: as in acquired() */
             atomic_load(&g->head_asleep) != 0u) {
    /* the inner lock refused (e.g. SYNCQ_ELIMIT): the place goes back */
    atomic_fetch_add(&g->gate, 1u);
    syncq_wait_futex_wake(&g->gate, 1, false);
  }
  return r;
}
