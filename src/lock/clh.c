/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * clh.c — the CLH list-based queue lock.
 *
 * Contract
 *   Source:      Craig 1993; Magnusson, Landin & Hagersten 1994 (the CLH
 *                lock as in Scott's "Shared-Memory Synchronization" §4.3.2,
 *                Figure 4.12): set own node's flag, swap it into tail, spin
 *                on the predecessor's flag; release clears own flag. 003
 *                §3.1 (the linked-list form of the queue lock).
 *   Deviation:   CLH recycles nodes (a thread leaves with its predecessor's
 *                node). Here the nodes live in the lock: the new holder owns
 *                its released predecessor's node and prepares one node (that
 *                one, or one the predecessor left) as its own node's spare,
 *                which the next arrival takes with its one CAS of tail (still
 *                reading the holder's tail word: nobody else can have taken
 *                it). An arrival that finds no spare (the tail's owner does
 *                not hold the lock yet) or loses the CAS takes a node from a
 *                pool inside the lock and swaps it in. The caller's
 *                syncq_lock_node only remembers which node it used and may
 *                be reused once unlock returns. Tail words hold a node's
 *                index and its generation (one more at each enqueue), so a
 *                CAS on tail never mistakes a reused node for the one it
 *                read.
 *   Progress:    blocking; starvation-free (FIFO: the order of the swaps and
 *                CASes of tail). trylock: wait-free. The pool is lock-free.
 *   Atomics:     uncontended lock: 3 loads (tail, then its node's flag
 *                and spare field, both before the CAS) + 1 CAS + 3
 *                relaxed stores (preparing the new spare: its
 *                generation, flag and spare field) + 1 release store
 *                (publishing it) + 2 plain stores (the caller's record),
 *                no load of the lock after the CAS (the new generations
 *                are the tail words' upper bits), no pool operation; on
 *                x86 the CAS is the one locked instruction, and the ops
 *                table calls the bodies, not the exported functions (no
 *                jump between). A flag read held before the CAS: the
 *                arrival still takes the spare, then waits (looking
 *                again first). A contended arrival without a spare: pool
 *                pop (1 DWCAS) + 1 swap, and possibly 1 push later.
 *                trylock: the same as an uncontended lock, or EBUSY after
 *                2 loads (held), 3 (no spare: the tail moved on) or the
 *                lost CAS; never a pool operation. unlock: 3 loads (misuse checks: held,
 *                spare, generation) + 1 release store (BLOCK/COMPETITIVE:
 *                3 loads + 1 release exchange, which reads the sleep
 *                mark).
 *   Memory:      caller's storage, 68 cache lines (4.4 KB); never allocates.
 *   Signal-safe: no (a handler's pop could interleave with its thread's).
 *   Process-shared: no (the queue links nodes by address): SYNCQ_ENOTSUP.
 *   Waiting:     SPIN (default): pause on the predecessor's flag; YIELD,
 *                BLOCK, COMPETITIVE via syncq/wait.h. A successor that
 *                will sleep marks the flag it waits on (1 -> 2 by CAS) and
 *                sleeps on it; the release exchanges 0 in and wakes it
 *                only when it read 2.
 *   Destroy:     the next holder may destroy and free the lock as soon as
 *                it holds it: after its releasing store or exchange an
 *                unlock touches nothing of the lock but a futex wake on
 *                its node's flag. With the pool empty
 *                (more than 64 threads in the lock) lock() yields until a
 *                node comes back; trylock() never takes from the pool.
 *   Limits:      none on threads. A node's generation has 56 bits: a CAS
 *                could mistake a node enqueued 2^56 times while one arrival
 *                sits between its two reads of tail for the one it read.
 *   Stats:       cas_attempts, cas_failures (the CAS of tail; the pool's
 *                DWCAS), yields, blocks.
 */
#include "syncq/lock/clh.h"

#include <stddef.h>

#include "../stats_internal.h"
#include "clh_spare_internal.h"
#include "lock_internal.h"
#include "syncq/platform.h"

typedef syncq_lock_clh_qnode qnode;

/* A node's flag while its owner holds or awaits the lock and the successor
 * may sleep on this flag (the sleep mark of syncq/wait.h). */
#define ASLEEP 2u

/* A tail word: the node's generation above its index in node[]. */
#define INDEX_BITS 8u
_Static_assert(SYNCQ_LOCK_CLH_POOL <= (1u << INDEX_BITS), "a node's index fits a tail word");

/* What the caller's node keeps between lock and unlock. */
typedef struct clh_record {
  qnode *mine;
  uint64_t gen; /* mine's generation when it took the lock */
} clh_record;
_Static_assert(sizeof(clh_record) <= sizeof(syncq_lock_node), "fits in syncq_lock_node");
static inline clh_record *rec(syncq_lock_node *n) { return (clh_record *)(void *)n->opaque; }

/* Remember that node holds the lock through me. The generation tells
 * unlock this acquisition from a later one of the same node: a thread
 * alone alternates between two nodes, so a node released two
 * acquisitions ago is held again, through another syncq_lock_node. */
static inline void remember(syncq_lock_node *node, qnode *me) {
  rec(node)->mine = me;
  /* relaxed: prepare() wrote it before the release that published me's
   * tail word, which this acquisition read (acquire); nobody changes it
   * while we hold me */
  rec(node)->gen = atomic_load_explicit(&me->gen, memory_order_relaxed);
}

static inline qnode *node_of(syncq_lock_clh *l, uint64_t word) { return &l->node[word & ((1u << INDEX_BITS) - 1u)]; }

/* The same, when the caller has me's tail word w at hand (the spare it
 * took): its generation is w's upper bits, prepare()'s value, so the fast
 * path loads nothing back. */
static inline void remember_word(syncq_lock_node *node, qnode *me, uint64_t w) {
  rec(node)->mine = me;
  rec(node)->gen = w >> INDEX_BITS;
}

/* Make node n, whose tail word was w (its last enqueue), ready for its
 * owner to enqueue it again: held (locked 1), nothing spare, and a tail
 * word no earlier enqueue of it had (so a CAS on tail that read an older
 * one fails): w's generation plus one, modulo 2^56 (the bits above the
 * index; the stored generation is kept to the same 56 bits, so that it
 * always equals a tail word's upper bits, which remember_word relies on).
 * Its owner alone touches it here; the release that publishes its tail
 * word (the swap or CAS of tail, or the store of a holder's spare)
 * publishes these writes. */
static inline uint64_t prepare_after(qnode *n, uint64_t w) {
  const uint64_t next = w + (1u << INDEX_BITS); /* the index stays; the carry out of bit 63 drops */
  /* relaxed: its owner's alone (an atomic only for unlock's misuse check,
   * which may read it from a thread that does not own the node) */
  atomic_store_explicit(&n->gen, next >> INDEX_BITS, memory_order_relaxed);
  atomic_store_explicit(&n->locked, 1u, memory_order_relaxed); /* published as said above */
  atomic_store_explicit(&n->spare, 0u, memory_order_relaxed);  /* the same */
  return next;
}

/* The same, n's last tail word rebuilt from its stored generation (the
 * paths that do not hold it). */
static inline uint64_t prepare(syncq_lock_clh *l, qnode *n) {
  /* relaxed: as above */
  return prepare_after(n, atomic_load_explicit(&n->gen, memory_order_relaxed) << INDEX_BITS | (uint64_t)(n - l->node));
}

int syncq_lock_clh_init(syncq_lock_clh *l, const syncq_lock_config *cfg) {
  if (l == NULL) return SYNCQ_EINVAL;
  int wait, ps;
  int r = lock_parse_config(cfg, SYNCQ_WAIT_SPIN, LOCK_WAIT_ALL, 0, &wait, &ps);
  if (r != SYNCQ_OK) return r;
  r = syncq_freelist_init(&l->pool);
  if (r != SYNCQ_OK) return r;
  for (unsigned i = 0; i < SYNCQ_LOCK_CLH_POOL; i++) {
    atomic_init(&l->node[i].locked, 0u);
    atomic_init(&l->node[i].spare, 0u);
    atomic_init(&l->node[i].gen, 0u);
  }
  /* node 0 is the initial (released) tail, node 1 its spare (the first
   * arrival's), the others are free */
  r = syncq_freelist_fill(&l->pool, &l->node[2], SYNCQ_LOCK_CLH_POOL - 2u, sizeof(qnode), offsetof(qnode, link));
  if (r != SYNCQ_OK) return r;
  uint64_t first = prepare(l, &l->node[0]);
  atomic_init(&l->node[0].locked, 0u);
  atomic_init(&l->node[0].spare, prepare(l, &l->node[1]));
  atomic_init(&l->tail, first);
  l->wait = wait;
  if (wait == SYNCQ_WAIT_COMPETITIVE) (void)syncq_wait_calibrate();
  return SYNCQ_OK;
}

int syncq_lock_clh_destroy(syncq_lock_clh *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  qnode *t = node_of(l, atomic_load(&l->tail));
  return atomic_load(&t->locked) != 0u ? SYNCQ_EBUSY : SYNCQ_OK;
}

/* A node from the pool, prepared; *word gets its tail word. */
static qnode *take_node(syncq_lock_clh *l, uint64_t *word) {
  syncq_fl_link *link;
  while (syncq_freelist_pop(&l->pool, &link) != SYNCQ_OK) {
    syncq_wait_yield(); /* every node is in the queue: wait for one back */
  }
  qnode *n = SYNCQ_FL_CONTAINER(link, qnode, link);
  *word = prepare(l, n);
  return n;
}

/* Wait until pred is released. */
static void await_pred(syncq_lock_clh *l, qnode *pred) {
  /* acquire: pairs with the releasing store or exchange in unlock */
  uint32_t v = atomic_load_explicit(&pred->locked, memory_order_acquire);
  if (v != 0u) {
    syncq_waiter w;
    syncq_waiter_init(&w, l->wait, false, lock_spin_limit(l->wait));
    do {
      if (syncq_waiter_step(&w)) {
        /* mark the flag we wait on (we are its only waiter), then sleep
         * on it. seq_cst CAS: a read-modify-write of the flag, so either
         * the release exchange reads the mark or the CAS fails on its 0 */
        if (v == 1u && !atomic_compare_exchange_strong(&pred->locked, &v, ASLEEP)) continue;
        syncq_waiter_sleep(&w, &pred->locked, ASLEEP);
      }
    } while ((v = atomic_load_explicit(&pred->locked, memory_order_acquire)) != 0u); /* pairs as above */
  }
}

/* The new holder (node me) owns its released predecessor, and, when it
 * enqueued a node of its own (not pred's spare), pred's spare if pred's
 * owner left one: one of them becomes me's spare, ready for the next
 * arrival, the other goes back to the pool. clh_tp.c's adopt() has the
 * same steps but stays there: it prepares its own node type, and there
 * the field may have been cleared by a waiter that a successor removed
 * (its reasoning for the relaxed load differs). */
static void adopt(syncq_lock_clh *l, qnode *me, qnode *pred, bool took_spare) {
  /* relaxed: pred's owner set it before its release of pred->locked, which
   * await_pred's acquire load read */
  uint64_t s = took_spare ? 0u : atomic_load_explicit(&pred->spare, memory_order_relaxed);
  if (s != 0u) {
    (void)syncq_freelist_push(&l->pool, &pred->link);
  } else {
    s = prepare(l, pred);
  }
  /* release: publishes the spare's preparation to the arrival whose
   * acquire load of this field reads it (lock()'s fast path) */
  atomic_store_explicit(&me->spare, s, memory_order_release);
}

/* Out of line (the uncontended path keeps no stack frame): wait for pred,
 * then take over its node (and the spare, see adopt()). */
static __attribute__((noinline)) int wait_and_adopt(syncq_lock_clh *l, syncq_lock_node *node, qnode *me, qnode *pred,
                                                    bool took_spare) {
  await_pred(l, pred);
  adopt(l, me, pred, took_spare);
  remember(node, me);
  return SYNCQ_OK;
}

/* Out of line: no spare to take, or the CAS lost: enqueue a node from the
 * pool by swap (wait-free), then wait. */
static __attribute__((noinline)) int enqueue_from_pool(syncq_lock_clh *l, syncq_lock_node *node) {
  uint64_t w;
  qnode *me = take_node(l, &w);
  /* acq_rel: release publishes our node's preparation to the successor
   * that swaps or CASes after us; acquire makes the predecessor's node
   * visible */
  qnode *pred = node_of(l, atomic_exchange_explicit(&l->tail, w, memory_order_acq_rel));
  return wait_and_adopt(l, node, me, pred, false);
}

/* The holder's steps once the tail node (tail word t) is released and we
 * enqueued the spare (tail word s) that its owner left. Our CAS from t
 * proved that nobody enqueued after t's node, so it was not prepared
 * again since: t is its last tail word. */
static inline int hold_with_spare(syncq_lock_clh *l, syncq_lock_node *node, uint64_t t, uint64_t s) {
  remember_word(node, node_of(l, s), s);
  /* adopt(), having taken the spare: t's node becomes the spare's spare.
   * release: pairs with the next arrival's acquire load of the field */
  atomic_store_explicit(&node_of(l, s)->spare, prepare_after(node_of(l, t), t), memory_order_release);
  return SYNCQ_OK;
}

/* The tail node (tail word t) was held when lock() looked: take its spare
 * all the same (FIFO: we enqueue now), then wait for it (await_pred looks
 * again first: it may have been released meanwhile). Out of line, as
 * above. */
static __attribute__((noinline)) int lock_behind(syncq_lock_clh *l, syncq_lock_node *node, uint64_t t) {
  qnode *pred = node_of(l, t);
  uint64_t s = clh_spare_take(&l->tail, t, &pred->spare);
  if (s == 0u) return enqueue_from_pool(l, node); /* no spare, or another arrival came first */
  SYNCQ_RACE_POINT("lock.clh.lock.behind");       /* tests: the holder releases here */
  return wait_and_adopt(l, node, node_of(l, s), pred, true);
}

/* The acquisition, one body for the exported function and the ops table
 * (an exported function is not inlined into the table's wrapper: the
 * wrapper would be one more jump per call). */
static inline int clh_lock(syncq_lock_clh *l, syncq_lock_node *node) {
  if (l == NULL || node == NULL) return SYNCQ_EINVAL;
  /* acquire: pairs with the release of the swap or CAS that wrote the word
   * (clh_spare_take's read of the spare field, and the read of pred's flag
   * below, rely on it) */
  uint64_t t = atomic_load_explicit(&l->tail, memory_order_acquire);
  qnode *pred = node_of(l, t);
  /* Read pred's flag before the CAS, as trylock does, not after it: the
   * load runs beside the spare's, and nothing waits on the CAS but the
   * return. acquire: pairs with the releasing store or exchange in
   * unlock. A 0 read here is this enqueue's release whenever the CAS
   * below succeeds: the acquire load of t orders it after prepare()'s
   * store of 1 for this enqueue, and the CAS from t proves that nobody
   * enqueued after pred since, so pred was not prepared again. */
  if (atomic_load_explicit(&pred->locked, memory_order_acquire) != 0u) return lock_behind(l, node, t);
  uint64_t s = clh_spare_take(&l->tail, t, &pred->spare);
  if (s == 0u) return enqueue_from_pool(l, node); /* no spare, or another arrival came first */
  return hold_with_spare(l, node, t, s);
}

/* Wait-free: the spare of a released tail node, or SYNCQ_EBUSY. The pool
 * cannot help here: a released tail node keeps the spare its owner left
 * (set before the release that trylock read) until an arrival enqueues
 * after it, so reading no spare there means the tail has moved, and a
 * pool node's CAS from t would fail too. */
static inline int clh_trylock(syncq_lock_clh *l, syncq_lock_node *node) {
  if (l == NULL || node == NULL) return SYNCQ_EINVAL;
  uint64_t t = atomic_load_explicit(&l->tail, memory_order_acquire); /* pairs as in lock() */
  qnode *pred = node_of(l, t);
  /* acquire: pairs with the clear in unlock */
  if (atomic_load_explicit(&pred->locked, memory_order_acquire) != 0u) return SYNCQ_EBUSY;
  SYNCQ_RACE_POINT("lock.clh.trylock.released");
  /* Tail words never repeat: taking the spare means t's node stayed the
   * tail since we read it released, so the lock is ours now */
  uint64_t s = clh_spare_take(&l->tail, t, &pred->spare);
  if (s == 0u) return SYNCQ_EBUSY;
  return hold_with_spare(l, node, t, s);
}

static inline int clh_unlock(syncq_lock_clh *l, syncq_lock_node *node) {
  if (l == NULL || node == NULL) return SYNCQ_EINVAL;
  qnode *me = rec(node)->mine;
  /* relaxed: misuse checks. The record names a node of this lock (one
   * unsigned comparison: below node[0] wraps to a large offset). Only the
   * holder's node is held (locked) with a spare set (adopt()): a released
   * node is not held, a waiting or a prepared one has no spare (the
   * generation alone would not tell a prepared one from the record's: a
   * lock made again in the same storage starts its generations over); and
   * a node released and held again since (through another record) has a
   * later generation than this record's. */
  if ((uintptr_t)me - (uintptr_t)l->node >= sizeof l->node ||
      atomic_load_explicit(&me->locked, memory_order_relaxed) == 0u ||
      atomic_load_explicit(&me->spare, memory_order_relaxed) == 0u ||
      atomic_load_explicit(&me->gen, memory_order_relaxed) != rec(node)->gen)
    return SYNCQ_EINVAL;
  /* From the release on, the successor may own, destroy and free the lock
   * (the node is in it): only locals are used after it. */
  if (syncq_wait_may_sleep(l->wait)) {
    /* release: pairs with await_pred's acquire loads; a read-modify-write,
     * so it reads the successor's mark */
    uint32_t old = atomic_exchange_explicit(&me->locked, 0u, memory_order_release);
    SYNCQ_RACE_POINT("lock.handover");
    /* the address only; a stale wake-up of a recycled node is one of the
     * spurious returns waiters allow */
    if (old == ASLEEP) syncq_wait_futex_wake(&me->locked, 1, false);
  } else {
    atomic_store_explicit(&me->locked, 0u, memory_order_release); /* pairs with await_pred's acquire */
    SYNCQ_RACE_POINT("lock.handover");
  }
  return SYNCQ_OK;
}

int syncq_lock_clh_lock(syncq_lock_clh *l, syncq_lock_node *node) { return clh_lock(l, node); }
int syncq_lock_clh_trylock(syncq_lock_clh *l, syncq_lock_node *node) { return clh_trylock(l, node); }
int syncq_lock_clh_unlock(syncq_lock_clh *l, syncq_lock_node *node) { return clh_unlock(l, node); }

/* The ops table calls the bodies, not the exported functions (see clh_lock). */
SYNCQ_LOCK_REGISTER_FNS(clh, "clh", "CLH list-based queue lock (nodes kept in the lock)",
                        "Craig 1993; Magnusson, Landin & Hagersten 1994; 003 §3.1", BLOCKING,
                        SYNCQ_PROP_FIFO | SYNCQ_PROP_USES_NODE, syncq_lock_clh, syncq_lock_clh_init,
                        syncq_lock_clh_destroy, clh_lock, clh_trylock, clh_unlock);
