/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * clh_tp.c — the time-published CLH queue lock ("clh-tp").
 *
 * Contract
 *   Source:      He, Scherer & Scott, "Preemption Adaptivity in
 *                Time-Published Queue-Based Spin Locks", HiPC 2005:
 *                CLH-TP (waiters publish a timestamp in their own node
 *                while they spin on the predecessor's; a waiter whose
 *                predecessor's timestamp is stale removes that node from
 *                the queue and spins on the node before it; the removed
 *                waiter queues again when it runs). No copy of the paper's
 *                figure was at hand: this follows its published
 *                description, not its code line by line (see Deviations).
 *                The queue is CLH (as src/lock/clh.c).
 *   Algorithm:   node = {word, stamp}; word = state | predecessor index
 *                << 8; states AVAILABLE (released), WAITING, TRANSIENT
 *                (its owner is linking it or removing its predecessor:
 *                not removable), REMOVED, HELD. Waiter: takes the spare
 *                node (word TRANSIENT) that the tail node's owner left
 *                once it held the lock, by one CAS of the tail word (as
 *                clh.c), or, with none there or the CAS lost, pops a
 *                node, word = TRANSIENT, and swaps it into tail.
 *                Predecessor already AVAILABLE: word = HELD (nobody CASes
 *                a TRANSIENT word), it holds the lock (the spare path
 *                reads the tail node's word before its CAS, as trylock:
 *                a CAS from the tail word read proves the node was not
 *                enqueued again since, so AVAILABLE read then still
 *                holds; not AVAILABLE then, it looks again after the
 *                CAS). Else stamp = now,
 *                word = (WAITING, pred) (having taken pred's spare, it
 *                first clears pred's spare field: see Memory), and it
 *                polls, storing stamp = now at each poll:
 *                own word no longer (WAITING, pred): it was removed, and
 *                queues again with the same node. Predecessor AVAILABLE:
 *                CAS own word (WAITING, pred) -> HELD; it holds the lock.
 *                Predecessor WAITING with a stamp older than the
 *                lock's staleness bound: CAS own word to TRANSIENT (so
 *                its own successor cannot remove it meanwhile), CAS the
 *                predecessor's word (WAITING, pp) -> (REMOVED, pp), and on
 *                success spin on pp; then store own word (WAITING, new
 *                pred). Predecessor HELD (we come next): pause without
 *                yielding for up to the staleness bound from when we
 *                first saw it so, then poll as before. The new holder
 *                owns its released predecessor and prepares the spare
 *                for the next arrival (that node, or the spare its owner
 *                left, if nobody took it). Releaser: stores AVAILABLE
 *                into its node. Every
 *                change of a WAITING word is a CAS from the value read, so
 *                a removal and the owner's grant (or its own removal of
 *                its predecessor) cannot both happen.
 *   Progress:    blocking. Starvation-free among waiters that are not
 *                preempted: one that publishes at least every
 *                staleness bound from its enqueue to its grant
 *                gets the lock after at most the waiters queued before it
 *                (FIFO over them). A waiter that is off its processor
 *                longer than that while a successor polls loses its place
 *                and queues again at the tail; one preempted every time
 *                can starve. A preempted holder stops everybody (nothing
 *                detects it), and so does a waiter preempted while
 *                TRANSIENT (for the few instructions of a link or a
 *                removal). A preempted last waiter is removed only when
 *                somebody queues behind it: until then the lock stays
 *                idle (nobody else wants it). trylock: wait-free.
 *   Order:       FIFO among running waiters only; registered without
 *                SYNCQ_PROP_FIFO.
 *   Atomics:     uncontended lock: 3 loads (tail, then its node's word
 *                and spare field, both before the CAS) + 1 CAS + 4
 *                relaxed stores (HELD; preparing the new spare: its
 *                generation, word and spare field) + 1 release store
 *                (publishing it) + 2 plain stores (the caller's record),
 *                no load of the lock after the CAS (the new generations are
 *                the tail words' upper bits), no pool operation, no clock
 *                read; on x86 the CAS is the one locked instruction, and
 *                the ops table calls the bodies, not the exported
 *                functions (no jump between).
 *                trylock: the same, or EBUSY after 2 loads (held), 3
 *                (no spare: the tail moved on) or the lost CAS; never a
 *                pool operation. unlock: 2
 *                relaxed loads (word, generation) + 1 release store. A contended arrival without a
 *                spare: pool pop (1 DWCAS) + 1 swap, and possibly 1 push
 *                later. A queued
 *                waiter: 1 clock read + 2 stores to link, then per poll 2
 *                loads + 1 clock read + 1 relaxed store (+ 1 load of the
 *                predecessor's stamp while it waits), and 1 CAS to take
 *                the lock. A removal: 2 CASes + 1 store by the remover.
 *   Timestamps:  syncq_now_ns (CLOCK_MONOTONIC), for mcs_tp.c's reasons:
 *                comparable between processors everywhere, read only
 *                while waiting.
 *   Memory:      caller's storage, 68 cache lines (4.4 KB: the lock's
 *                nodes, as clh); never allocates. Nodes are reclaimed
 *                by the protocol: a node is read only by its owner and its
 *                one successor; the waiter that takes the lock through its
 *                predecessor's AVAILABLE node (the new holder, by its CAS
 *                to HELD or its store) owns that node and the spare left
 *                in it: one becomes its own spare, the other goes back to
 *                the pool. The arrival that took a spare and must wait
 *                clears the predecessor's spare field before it publishes
 *                its WAITING word, so a successor that removes it and
 *                takes the lock through that predecessor never hands out
 *                the node the removed waiter queues again with; a removed
 *                node is handed back to its owner by the remover's CAS
 *                (the remover took the predecessor index from the CASed
 *                value and never reads the node again), and its owner
 *                queues again with it. The caller's syncq_lock_node only
 *                remembers which pool node it holds and that node's
 *                generation (so unlock refuses a record whose node was
 *                released and has been taken again, by another record),
 *                and may be reused once unlock returns. Tail words hold a node's index and
 *                its generation (one more at each enqueue), so a CAS on
 *                tail never mistakes a reused node for the one it read.
 *                With the pool empty (more than 64 threads in the lock)
 *                lock() yields until a node comes back; trylock()
 *                never takes from the pool.
 *   Signal-safe: no (a handler's pool pop could interleave with its
 *                thread's, as clh). A thread stopped by a signal while it
 *                waits is passed over like a preempted one.
 *   Process-shared: no (the queue links nodes by address): SYNCQ_ENOTSUP.
 *   Waiting:     SPIN (default here): pause between polls; YIELD: yield
 *                every SYNCQ_LOCK_CLH_TP_POLLS_PER_YIELD polls (how the
 *                generic API's safe default runs this lock, restricted
 *                as mcs_tp.c says). BLOCK and
 *                COMPETITIVE: SYNCQ_ENOTSUP, since a sleeping waiter
 *                publishes nothing and would be removed by every
 *                successor (mcs_tp.c measured the variant that keeps
 *                sleepers and why it was left out).
 *   Destroy:     the next holder may destroy and free the lock as soon as
 *                it holds it: the releaser's last access is its AVAILABLE
 *                store. Removers and removed waiters touch only nodes of
 *                a lock that some thread still waits for.
 *   Limits:      SYNCQ_LOCK_CLH_TP_POOL - 2 (64) threads in the lock
 *                without waiting for a node. A node's generation has 56
 *                bits: a CAS could mistake a node enqueued 2^56 times
 *                while one arrival sits between its two reads of tail
 *                for the one it read. The staleness bound: one context
 *                switch as measured by syncq_wait_spin_limit_ns (at the
 *                lock's init), at most SYNCQ_LOCK_CLH_TP_STALE_NS (100
 *                us; reasoning at mcs_tp.h's).
 *   Stats:       cas_attempts, cas_failures (state-word and tail CASes), retries
 *                (removed waiters that queued again), yields.
 *   Deviations:  from the paper as described: (1) no timeout / abort (the
 *                lock API has no timed lock), so only successors change a
 *                waiting node's state besides its owner; (2) no detection
 *                of a preempted holder (the paper's critical-section
 *                stamp): it would add a clock read and a store to every
 *                uncontended acquisition; (3) nodes come from a pool in
 *                the lock (as clh), the predecessor named by its index in
 *                the same word as the state, so that the remover's one
 *                CAS both removes a node and reads whom to spin on next;
 *                (4) a removed waiter queues again with its own node
 *                (handed back by the removal) instead of a fresh one, and
 *                an uncontended arrival takes the spare its predecessor's
 *                owner prepared (clh.c's deviation); (5)
 *                the bound, the clock and the next waiter that does not
 *                yield are mcs_tp.c's, not the paper's.
 */
#include "syncq/lock/clh_tp.h"

#include <stddef.h>

#include "../stats_internal.h"
#include "clh_spare_internal.h"
#include "lock_internal.h"
#include "syncq/clock.h"
#include "syncq/platform.h"
#include "syncq/wait.h"

typedef syncq_lock_clh_tp_qnode qnode;

_Static_assert(SYNCQ_LOCK_CLH_TP_POOL <= 255u, "a node index fits in 8 bits of the state word");

enum { TP_AVAILABLE = 0u, TP_WAITING = 1u, TP_TRANSIENT = 2u, TP_REMOVED = 3u, TP_HELD = 4u };
#define TP_STATE(w) ((w)&0xffu)
#define TP_PRED(w) (((w) >> 8) & 0xffu)
#define TP_WORD(state, pred) ((uint32_t)(state) | ((uint32_t)(pred) << 8))

/* A tail word: the node's generation above its index in node[]. */
#define INDEX_BITS 8u

/* YIELD: yield once every this many polls. */
#define SYNCQ_LOCK_CLH_TP_POLLS_PER_YIELD 16u

/* What the caller's node keeps between lock and unlock. */
typedef struct clh_tp_record {
  qnode *mine;
  uint64_t gen; /* mine's generation when it took the lock */
} clh_tp_record;
_Static_assert(sizeof(clh_tp_record) <= sizeof(syncq_lock_node), "fits in syncq_lock_node");
static inline clh_tp_record *rec(syncq_lock_node *n) { return (clh_tp_record *)(void *)n->opaque; }

/* Remember that node holds the lock through me. The generation tells
 * unlock this acquisition from a later one of the same pool node: a
 * thread alone alternates between two nodes, so a node released two
 * acquisitions ago is HELD again, by another syncq_lock_node. */
static inline void remember(syncq_lock_node *node, qnode *me) {
  rec(node)->mine = me;
  /* relaxed: we own me (we prepared it, or our acquisition ordered us
   * after the thread that did) */
  rec(node)->gen = atomic_load_explicit(&me->gen, memory_order_relaxed);
}

/* The same, when the caller has me's tail word w at hand (the spare it
 * took): its generation is w's upper bits, prepare()'s value, so the fast
 * path loads nothing back. */
static inline void remember_word(syncq_lock_node *node, qnode *me, uint64_t w) {
  rec(node)->mine = me;
  rec(node)->gen = w >> INDEX_BITS;
}

static inline uint32_t index_of(const syncq_lock_clh_tp *l, const qnode *q) { return (uint32_t)(q - l->node); }

static inline qnode *node_of(syncq_lock_clh_tp *l, uint64_t word) { return &l->node[word & ((1u << INDEX_BITS) - 1u)]; }

/* Make node n, whose tail word was w (its last enqueue), ready for its
 * owner to enqueue it again: TRANSIENT (a successor cannot remove it
 * before its owner names its predecessor), nothing spare, and a tail word
 * no earlier enqueue of it had (so a CAS on tail that read an older one
 * fails): w's generation plus one, modulo 2^56 (the bits above the index;
 * the stored generation is kept to the same 56 bits, so that it always
 * equals a tail word's upper bits, which remember_word relies on). Its
 * owner alone touches it here; the release that publishes its tail word
 * (the swap or CAS of tail, or the store of a holder's spare) publishes
 * these writes. */
static inline uint64_t prepare_after(qnode *n, uint64_t w) {
  const uint64_t next = w + (1u << INDEX_BITS); /* the index stays; the carry out of bit 63 drops */
  /* relaxed: its owner's alone (an atomic only for unlock's misuse check,
   * which may read it from a thread that does not own the node) */
  atomic_store_explicit(&n->gen, next >> INDEX_BITS, memory_order_relaxed);
  atomic_store_explicit(&n->word, TP_TRANSIENT, memory_order_relaxed); /* published as said above */
  atomic_store_explicit(&n->spare, 0u, memory_order_relaxed);          /* the same */
  return next;
}

/* The same, n's last tail word rebuilt from its stored generation (the
 * paths that do not hold it). */
static inline uint64_t prepare(syncq_lock_clh_tp *l, qnode *n) {
  /* relaxed: as above */
  return prepare_after(n, atomic_load_explicit(&n->gen, memory_order_relaxed) << INDEX_BITS | index_of(l, n));
}

int syncq_lock_clh_tp_init(syncq_lock_clh_tp *l, const syncq_lock_config *cfg) {
  if (l == NULL) return SYNCQ_EINVAL;
  int wait, ps;
  int r = lock_parse_config(cfg, SYNCQ_WAIT_SPIN, LOCK_WAIT_BIT(SYNCQ_WAIT_SPIN) | LOCK_WAIT_BIT(SYNCQ_WAIT_YIELD), 0,
                            &wait, &ps);
  if (r != SYNCQ_OK) return r;
  r = syncq_freelist_init(&l->pool);
  if (r != SYNCQ_OK) return r;
  for (unsigned i = 0; i < SYNCQ_LOCK_CLH_TP_POOL; i++) {
    atomic_init(&l->node[i].word, TP_AVAILABLE);
    atomic_init(&l->node[i].stamp, 0u);
    atomic_init(&l->node[i].spare, 0u);
    atomic_init(&l->node[i].gen, 0u);
  }
  /* node 0 is the initial (released) tail, node 1 its spare (the first
   * arrival's), the others are free */
  r = syncq_freelist_fill(&l->pool, &l->node[2], SYNCQ_LOCK_CLH_TP_POOL - 2u, sizeof(qnode), offsetof(qnode, link));
  if (r != SYNCQ_OK) return r;
  uint64_t first = prepare(l, &l->node[0]);
  atomic_init(&l->node[0].word, TP_AVAILABLE);
  atomic_init(&l->node[0].spare, prepare(l, &l->node[1]));
  atomic_init(&l->tail, first);
  l->wait = wait;
  const uint64_t cs = syncq_wait_spin_limit_ns(); /* the bound: SYNCQ_LOCK_CLH_TP_STALE_NS's reasoning */
  l->stale_ns = cs < SYNCQ_LOCK_CLH_TP_STALE_NS ? cs : SYNCQ_LOCK_CLH_TP_STALE_NS;
  return SYNCQ_OK;
}

int syncq_lock_clh_tp_destroy(syncq_lock_clh_tp *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  qnode *t = node_of(l, atomic_load(&l->tail));
  return TP_STATE(atomic_load(&t->word)) != TP_AVAILABLE ? SYNCQ_EBUSY : SYNCQ_OK;
}

static qnode *take_node(syncq_lock_clh_tp *l) {
  syncq_fl_link *link;
  while (syncq_freelist_pop(&l->pool, &link) != SYNCQ_OK) {
    syncq_wait_yield(); /* every node is in the queue: wait for one back */
  }
  return SYNCQ_FL_CONTAINER(link, qnode, link);
}

/* The new holder (node me) owns its released predecessor pred, and the
 * spare pred's owner left in it when me came from the pool (a holder that
 * took that spare: hold_with_spare): one of them becomes me's spare, ready
 * for the next arrival, the other goes back to the pool. An arrival that took pred's spare and had to
 * wait cleared the field (wait_on_spare_giver), so it, or a successor
 * that removed it and took the lock through pred, reads 0 here, not a
 * node in use. clh.c's adopt() has the same steps, for its own node type
 * and without removals (nobody clears the field there). */
static void adopt(syncq_lock_clh_tp *l, qnode *me, qnode *pred) {
  /* relaxed: pred's owner set it before its AVAILABLE release store, which
   * the caller read by acquire; the arrival that took it cleared it before
   * its release store of its WAITING word, which the caller either is or
   * read by acquire (its own load of a removed waiter's word, or the
   * removers' CASes and release stores of their words after it) */
  uint64_t s = atomic_load_explicit(&pred->spare, memory_order_relaxed);
  if (s != 0u) {
    (void)syncq_freelist_push(&l->pool, &pred->link);
  } else {
    s = prepare(l, pred);
  }
  /* release: publishes the spare's preparation to the arrival whose
   * acquire load of this field reads it (lock()'s fast path) */
  atomic_store_explicit(&me->spare, s, memory_order_release);
}

static void pause_or_yield(const syncq_lock_clh_tp *l, uint32_t *polls) {
  syncq_wait_spin_yield(polls, l->wait == SYNCQ_WAIT_YIELD ? SYNCQ_LOCK_CLH_TP_POLLS_PER_YIELD : 0u);
}

/* me is linked as (WAITING, pred). Poll until it holds the lock (true:
 * pred, released, goes back to the pool) or a successor removed it
 * (false: me is its owner's alone again). */
static bool await_grant(syncq_lock_clh_tp *l, qnode *me, qnode *pred) {
  uint32_t mine = TP_WORD(TP_WAITING, index_of(l, pred));
  uint32_t polls = 0;
  uint64_t next_since = 0; /* when we last saw pred HELD (we are next), 0: not */
  for (;;) {
    /* acquire: pairs with the remover's CAS of our word (after it, pred
     * may be recycled: we stop reading it) */
    if (atomic_load_explicit(&me->word, memory_order_acquire) != mine) return false;
    /* acquire: pairs with the releaser's AVAILABLE store (the critical
     * section before it) and with the owner's store of (WAITING, pp),
     * which publishes the stamp we read below */
    uint32_t pw = atomic_load_explicit(&pred->word, memory_order_acquire);
    if (TP_STATE(pw) == TP_AVAILABLE) {
      uint32_t expected = mine;
      SYNCQ_STAT_INC(cas_attempts);
      /* seq_cst: against a successor's removing CAS on the same word */
      if (atomic_compare_exchange_strong(&me->word, &expected, TP_HELD)) {
        adopt(l, me, pred); /* we were its only reader */
        return true;
      }
      SYNCQ_STAT_INC(cas_failures);
      return false; /* removed just now; our successor spins on pred */
    }
    const uint64_t now = syncq_now_ns();
    /* relaxed: a hint our successor reads (relaxed); a late or early view
     * of it changes whom it removes, never mutual exclusion */
    atomic_store_explicit(&me->stamp, now, memory_order_relaxed);
    if (TP_STATE(pw) == TP_WAITING && atomic_load_explicit(&pred->stamp, memory_order_relaxed) + l->stale_ns < now) {
      /* relaxed above: the stamp is a hint, at least the one published
       * with pw (acquire). The predecessor looks preempted: remove it.
       * First make ourselves unremovable, so that whom our successor
       * spins on stays decided by one word. */
      uint32_t expected = mine;
      SYNCQ_STAT_INC(cas_attempts);
      if (!atomic_compare_exchange_strong(&me->word, &expected, TP_TRANSIENT)) {
        SYNCQ_STAT_INC(cas_failures);
        return false;
      }
      expected = pw;
      SYNCQ_STAT_INC(cas_attempts);
      /* seq_cst: against its owner's CAS to HELD or TRANSIENT */
      if (atomic_compare_exchange_strong(&pred->word, &expected, TP_WORD(TP_REMOVED, TP_PRED(pw)))) {
        pred = &l->node[TP_PRED(pw)]; /* its owner queues again with it; we never read it again */
        mine = TP_WORD(TP_WAITING, TP_PRED(pw));
      } else {
        SYNCQ_STAT_INC(cas_failures); /* it took the lock or moved on: keep it */
      }
      /* release: pairs with our successor's acquire load of this word
       * (the stamp stored above is published with it) */
      atomic_store_explicit(&me->word, mine, memory_order_release);
      continue;
    }
    if (TP_STATE(pw) == TP_HELD) {
      /* Next in line: a yield now would likely leave us off our processor
       * at the hand-over, and the lock idle for a context switch. Spin
       * while the holder is within one context switch of its grant as we
       * saw it; past that it may share our processor, so yield as usual. */
      if (next_since == 0) next_since = now;
      if (now - next_since < l->stale_ns) {
        syncq_pr_relax();
        continue;
      }
    } else {
      next_since = 0;
    }
    pause_or_yield(l, &polls);
  }
}

/* me is enqueued behind pred, which was not released when we looked:
 * publish our stamp and link, wait, and queue again with the same node
 * each time a successor removes us. Out of line (the uncontended path
 * keeps no stack frame). */
static __attribute__((noinline)) int link_and_wait(syncq_lock_clh_tp *l, syncq_lock_node *node, qnode *me,
                                                   qnode *pred) {
  for (;;) {
    /* relaxed: published by the release store of our word below */
    atomic_store_explicit(&me->stamp, syncq_now_ns(), memory_order_relaxed);
    /* release: pairs with our successor's acquire load of our word */
    atomic_store_explicit(&me->word, TP_WORD(TP_WAITING, index_of(l, pred)), memory_order_release);
    if (await_grant(l, me, pred)) break;
    SYNCQ_STAT_INC(retries); /* removed while not running: queue again */
    /* acq_rel: release publishes our node's preparation to the node that
     * enqueues after us; acquire makes the predecessor's node visible */
    pred = node_of(l, atomic_exchange_explicit(&l->tail, prepare(l, me), memory_order_acq_rel));
    /* acquire: pairs with the releaser's AVAILABLE store */
    if (TP_STATE(atomic_load_explicit(&pred->word, memory_order_acquire)) == TP_AVAILABLE) {
      /* relaxed: nobody CASes a TRANSIENT word, so a store takes the
       * lock; our successor only tests the state (not removable either
       * way) */
      atomic_store_explicit(&me->word, TP_HELD, memory_order_relaxed);
      adopt(l, me, pred);
      break;
    }
  }
  remember(node, me);
  return SYNCQ_OK;
}

/* No spare to take, or the CAS lost: enqueue a node from the pool by swap
 * (wait-free), then take the lock or wait. Out of line, as above. */
static __attribute__((noinline)) int enqueue_from_pool(syncq_lock_clh_tp *l, syncq_lock_node *node) {
  qnode *me = take_node(l);
  /* acq_rel as in link_and_wait */
  qnode *pred = node_of(l, atomic_exchange_explicit(&l->tail, prepare(l, me), memory_order_acq_rel));
  /* acquire: pairs with the releaser's AVAILABLE store */
  if (TP_STATE(atomic_load_explicit(&pred->word, memory_order_acquire)) != TP_AVAILABLE)
    return link_and_wait(l, node, me, pred);
  atomic_store_explicit(&me->word, TP_HELD, memory_order_relaxed); /* relaxed: as in link_and_wait */
  adopt(l, me, pred);
  remember(node, me);
  return SYNCQ_OK;
}

/* We took pred's spare (me) and must wait for pred: clear the spare
 * field first, so that whoever takes the lock through pred (we, or a
 * successor that removed us) does not adopt me, which stays ours.
 * relaxed: published by the release store of our WAITING word in
 * link_and_wait (adopt()'s comment). Out of line, as above. */
static __attribute__((noinline)) int wait_on_spare_giver(syncq_lock_clh_tp *l, syncq_lock_node *node, qnode *me,
                                                         qnode *pred) {
  atomic_store_explicit(&pred->spare, 0u, memory_order_relaxed);
  return link_and_wait(l, node, me, pred);
}

/* The holder's steps once the tail node (tail word t) is released and we
 * enqueued the spare (tail word s) that its owner left. Our CAS from t
 * proved that nobody enqueued after t's node, so it was not prepared
 * again since: t is its last tail word. */
static inline int hold_with_spare(syncq_lock_clh_tp *l, syncq_lock_node *node, uint64_t t, uint64_t s) {
  qnode *me = node_of(l, s);
  /* relaxed: nobody CASes a TRANSIENT word, so a store takes the lock;
   * our successor only tests the state (not removable either way) */
  atomic_store_explicit(&me->word, TP_HELD, memory_order_relaxed);
  remember_word(node, me, s);
  /* adopt(), having taken the spare: t's node becomes me's spare.
   * release: pairs with the next arrival's acquire load of the field */
  atomic_store_explicit(&me->spare, prepare_after(node_of(l, t), t), memory_order_release);
  return SYNCQ_OK;
}

/* The tail node (tail word t) was not released when lock() looked: take
 * its spare all the same (FIFO: we enqueue now), then hold the lock if it
 * has been released meanwhile, or wait. Out of line, as above. */
static __attribute__((noinline)) int lock_behind(syncq_lock_clh_tp *l, syncq_lock_node *node, uint64_t t) {
  qnode *pred = node_of(l, t);
  uint64_t s = clh_spare_take(&l->tail, t, &pred->spare);
  if (s == 0u) return enqueue_from_pool(l, node); /* no spare, or another arrival came first */
  qnode *me = node_of(l, s);
  SYNCQ_RACE_POINT("lock.clh_tp.lock.behind"); /* tests: the holder releases here */
  /* acquire: pairs with the releaser's AVAILABLE store */
  if (TP_STATE(atomic_load_explicit(&pred->word, memory_order_acquire)) != TP_AVAILABLE)
    return wait_on_spare_giver(l, node, me, pred);
  return hold_with_spare(l, node, t, s);
}

/* The acquisition, one body for the exported function and the ops table
 * (an exported function is not inlined into the table's wrapper: the
 * wrapper would be one more jump per call). */
static inline int clh_tp_lock(syncq_lock_clh_tp *l, syncq_lock_node *node) {
  if (l == NULL || node == NULL) return SYNCQ_EINVAL;
  /* acquire: pairs with the release of the swap or CAS that wrote the word
   * (clh_spare_take's read of the spare field, and the read of pred's word
   * below, rely on it) */
  uint64_t t = atomic_load_explicit(&l->tail, memory_order_acquire);
  qnode *pred = node_of(l, t);
  /* Read pred's state before the CAS, as trylock does, not after it: the
   * load runs beside the spare's, and nothing waits on the CAS but the
   * return. acquire: pairs with the releaser's AVAILABLE store. An
   * AVAILABLE read here is this enqueue's release whenever the CAS below
   * succeeds: the acquire load of t orders it after prepare()'s
   * TRANSIENT store for this enqueue, and the CAS from t proves that
   * nobody enqueued after pred since, so pred was not prepared again. */
  if (TP_STATE(atomic_load_explicit(&pred->word, memory_order_acquire)) != TP_AVAILABLE) return lock_behind(l, node, t);
  uint64_t s = clh_spare_take(&l->tail, t, &pred->spare);
  if (s == 0u) return enqueue_from_pool(l, node); /* no spare, or another arrival came first */
  return hold_with_spare(l, node, t, s);
}

int syncq_lock_clh_tp_lock(syncq_lock_clh_tp *l, syncq_lock_node *node) { return clh_tp_lock(l, node); }

/* Wait-free: the spare of a released tail node, or SYNCQ_EBUSY. The pool
 * cannot help here: a released tail node keeps the spare its owner left
 * (set before the AVAILABLE release that trylock read; only an arrival
 * that enqueued after it clears or prepares it again), so reading no
 * spare there means the tail has moved, and a pool node's CAS from t
 * would fail too. */
static inline int clh_tp_trylock(syncq_lock_clh_tp *l, syncq_lock_node *node) {
  if (l == NULL || node == NULL) return SYNCQ_EINVAL;
  uint64_t t = atomic_load_explicit(&l->tail, memory_order_acquire); /* pairs as in lock() */
  qnode *pred = node_of(l, t);
  /* acquire: pairs with the releaser's AVAILABLE store */
  if (TP_STATE(atomic_load_explicit(&pred->word, memory_order_acquire)) != TP_AVAILABLE) return SYNCQ_EBUSY;
  SYNCQ_RACE_POINT("lock.clh.trylock.released");
  /* Tail words never repeat: taking the spare means t's node stayed the
   * tail since we read it released (an enqueued node is released once,
   * and prepared again only after a successor enqueued), so the lock is
   * ours now */
  uint64_t s = clh_spare_take(&l->tail, t, &pred->spare);
  if (s == 0u) return SYNCQ_EBUSY;
  return hold_with_spare(l, node, t, s);
}

static inline int clh_tp_unlock(syncq_lock_clh_tp *l, syncq_lock_node *node) {
  if (l == NULL || node == NULL) return SYNCQ_EINVAL;
  qnode *me = rec(node)->mine;
  /* relaxed: misuse checks. A node HELD under another generation holds
   * the lock for a later acquisition, not for this record. */
  if (me < &l->node[0] || me >= &l->node[SYNCQ_LOCK_CLH_TP_POOL] ||
      atomic_load_explicit(&me->word, memory_order_relaxed) != TP_HELD ||
      atomic_load_explicit(&me->gen, memory_order_relaxed) != rec(node)->gen)
    return SYNCQ_EINVAL;
  /* release: pairs with the successor's acquire load of our word. From
   * here on the successor may own, destroy and free the lock (the node is
   * in it): only locals are used after it. */
  atomic_store_explicit(&me->word, TP_AVAILABLE, memory_order_release);
  SYNCQ_RACE_POINT("lock.handover");
  return SYNCQ_OK;
}

int syncq_lock_clh_tp_trylock(syncq_lock_clh_tp *l, syncq_lock_node *node) { return clh_tp_trylock(l, node); }
int syncq_lock_clh_tp_unlock(syncq_lock_clh_tp *l, syncq_lock_node *node) { return clh_tp_unlock(l, node); }

/* The ops table calls the bodies, not the exported functions (see clh_tp_lock). */
SYNCQ_LOCK_REGISTER_FNS(clh_tp, "clh-tp",
                        "time-published CLH queue lock (preempted waiters removed by their successors)",
                        "He, Scherer & Scott, HiPC 2005 (CLH-TP)", BLOCKING, SYNCQ_PROP_USES_NODE, syncq_lock_clh_tp,
                        syncq_lock_clh_tp_init, syncq_lock_clh_tp_destroy, clh_tp_lock, clh_tp_trylock, clh_tp_unlock);
