/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * spawn_deque.h — a scheduler's children in waiting: the fibers a fiber's
 * spawns displaced from runnext, taken newest first by their scheduler
 * and oldest first by the others (fiber_sched.c).
 *
 * Contract
 *   Source:      Chase & Lev, "Dynamic Circular Work-Stealing Deque"
 *                (SPAA 2005), Figure 1 (push, take, steal on a circular
 *                array, top and bottom indices that only grow), with the
 *                C11 memory orders of Lê, Pop, Cohen and Zappa Nardelli,
 *                "Correct and Efficient Work-Stealing for Weak Memory
 *                Models" (PPoPP 2013), Figure 1. Why: Cilk's work-first
 *                order for what a process spawns: the scheduler runs the
 *                newest waiting child, so a tree of processes is walked
 *                depth first and few of its processes are live at once
 *                (their records, mailboxes and stacks stay in cache), while
 *                an idle scheduler takes the oldest, a large subtree.
 *   Deviation:   a fixed array (PO_DEQUE_CAP), not the paper's growing
 *                one: a push that finds it full answers false and the
 *                caller queues the fiber on its run queue instead (Go's
 *                local run queue of 256 spills to the global one). The
 *                paper's fence(release) + relaxed store of bottom in push
 *                is a release store, and so is every store of bottom in
 *                take: a thief's acquire load that reads take's store
 *                must still see what the pushes before it published (the
 *                paper's fence covers later relaxed stores of bottom; a
 *                release store covers only itself: GenMC found the race,
 *                models/genmc/spawn_deque.c). Plain stores on x86-64,
 *                and ThreadSanitizer models them, as it does no fence.
 *   TSan form:   ThreadSanitizer draws no happens-before from a
 *                standalone fence, so under TSan (PO_DEQUE_FENCES 0) the
 *                paper's seq_cst fences of take (between its store of
 *                bottom and its load of top) and steal (between its loads
 *                of top and bottom) are seq_cst orders on those accesses
 *                instead: with every CAS of top seq_cst too, the owner's
 *                claim and a thief's are then a Dekker pair in C11's total
 *                order of seq_cst accesses (store buffering forbidden), the
 *                SC deque of Chase and Lev's paper, and TSan sees each
 *                access's acquire or release. Take's claim is then an
 *                exchange, not a seq_cst store: qemu-user lets a seq_cst
 *                load pass an earlier seq_cst store (docs/reliability.md,
 *                "Where qemu shows a reordering..."), not a
 *                read-modify-write. Other builds keep the fences: the
 *                exchange on bottom's line cost more per hop than a store
 *                and a fence (docs/reliability.md, "Weak memory: GenMC").
 *                GenMC checks both forms.
 *   Empty take:  take claims before it looks, even on an empty deque.
 *                A test first (bottom <= top, with top read relaxed: only
 *                the owner moves bottom and top only grows, each step a
 *                taken fiber, so a top even stale that reaches bottom says
 *                every fiber pushed is taken) would answer the same NULL
 *                without the store and the fence, and GenMC holds it
 *                (models/genmc/spawn_deque.c checks that a NULL take
 *                leaves nothing pushed before it), but po-ring's hops were
 *                slower with it (docs/reliability.md, "Weak memory:
 *                GenMC").
 *   Progress:    push and take: wait-free for the owner (take makes one
 *                CAS when it meets a thief over the last fiber); steal:
 *                lock-free (a CAS on top, false when it loses).
 *   Atomics:     push: 2 loads + 1 store; take: 1 store, 1 seq_cst fence,
 *                2 loads, 1 more store when empty (+1 CAS for the last
 *                fiber); steal: 2 loads, 1 seq_cst fence, 1 CAS. (TSan
 *                form: take's store and fence an exchange, steal's fence
 *                gone, the loads around them seq_cst.)
 *   Memory:      none: PO_DEQUE_CAP pointers inside the scheduler.
 *   Owner:       push and take only by the scheduler's own thread; steal by
 *                any thread.
 *   Signal-safe: no.  Process-shared: no.
 */
#ifndef SYNCQ_PO_SPAWN_DEQUE_H
#define SYNCQ_PO_SPAWN_DEQUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sanitizer.h" /* PO_TSAN */
#include "syncq/pr.h"

/* 1: take and steal order their Dekker pair with the paper's seq_cst
 * fences; 0: with seq_cst orders on the accesses (see the contract). 0
 * under ThreadSanitizer (PO_TSAN, the detection the fiber switch's hooks
 * and PO_FENCED use too), else 1; models/genmc/spawn_deque.c sets it. */
#ifndef PO_DEQUE_FENCES
#define PO_DEQUE_FENCES (!PO_TSAN)
#endif

/* Go's local run queue holds 256 goroutines; past that, what a scheduler
 * spawns waits in its FIFO run queue. */
enum { PO_DEQUE_CAP = 256 };

typedef struct po_deque {
  SYNCQ_CACHELINE_ALIGNED _Atomic(int64_t) top;    /* thieves' end: the oldest */
  SYNCQ_CACHELINE_ALIGNED _Atomic(int64_t) bottom; /* owner's end: the newest */
  _Atomic(void *) cell[PO_DEQUE_CAP];
} po_deque;

static inline void po_deque_init(po_deque *q) {
  atomic_init(&q->top, 0);
  atomic_init(&q->bottom, 0);
  for (int i = 0; i < PO_DEQUE_CAP; i++) atomic_init(&q->cell[i], NULL);
}

/* Owner: x at the bottom; false when the deque is full. */
static inline bool po_deque_push(po_deque *q, void *x) {
  int64_t b = atomic_load_explicit(&q->bottom, memory_order_relaxed); /* the owner's own index */
  /* acquire: pairs with a thief's CAS of top (seq_cst): the cell it took
   * is free to reuse. */
  int64_t t = atomic_load_explicit(&q->top, memory_order_acquire);
  if (b - t >= PO_DEQUE_CAP) return false;
  /* relaxed: published by the release store of bottom below. */
  atomic_store_explicit(&q->cell[b % PO_DEQUE_CAP], x, memory_order_relaxed);
  /* release: pairs with steal's acquire load of bottom: a thief that sees
   * b + 1 sees the cell and what x points to. */
  atomic_store_explicit(&q->bottom, b + 1, memory_order_release);
  return true;
}

/* Owner: the newest fiber, or NULL. */
static inline void *po_deque_take(po_deque *q) {
  int64_t b = atomic_load_explicit(&q->bottom, memory_order_relaxed) - 1; /* the owner's own index */
  /* The claim of cell b comes before the load of top, against steal's
   * loads of top and then bottom (Dekker): a thief and the owner never
   * both take one fiber without meeting at the CAS below. */
#if PO_DEQUE_FENCES
  /* release: pairs with steal's acquire load of bottom, which may read
   * this store instead of a push's (see the contract). Then the seq_cst
   * fence, against steal's fence between its loads. */
  atomic_store_explicit(&q->bottom, b, memory_order_release);
  atomic_thread_fence(memory_order_seq_cst);
  int64_t t = atomic_load_explicit(&q->top, memory_order_relaxed); /* ordered by the fence */
#else
  /* seq_cst exchange (a store; an RMW for qemu's sake, see the contract),
   * then a seq_cst load: ordered in the total order, against steal's
   * seq_cst loads. The exchange's release half pairs with steal's load of
   * bottom, as the store's above. */
  (void)atomic_exchange_explicit(&q->bottom, b, memory_order_seq_cst);
  int64_t t = atomic_load_explicit(&q->top, memory_order_seq_cst);
#endif
  void *x = NULL;
  if (t <= b) {
    x = atomic_load_explicit(&q->cell[b % PO_DEQUE_CAP], memory_order_relaxed); /* the owner's own write */
    if (t == b) {
      /* The last one: the owner and a thief race for it on top. seq_cst:
       * as steal's CAS. */
      if (!atomic_compare_exchange_strong_explicit(&q->top, &t, t + 1, memory_order_seq_cst, memory_order_relaxed))
        x = NULL;
      atomic_store_explicit(&q->bottom, b + 1, memory_order_release); /* empty again; release: as above */
    }
  } else {
    atomic_store_explicit(&q->bottom, b + 1, memory_order_release); /* it was empty: undo; release: as above */
  }
  return x;
}

/* Any thread: the oldest fiber, or NULL (empty, or another taker won it:
 * the caller looks elsewhere). */
static inline void *po_deque_steal(po_deque *q) {
#if PO_DEQUE_FENCES
  /* acquire: pairs with the CAS of top by other takers (a cell they took
   * is not taken again). */
  int64_t t = atomic_load_explicit(&q->top, memory_order_acquire);
  atomic_thread_fence(memory_order_seq_cst); /* see take */
  /* acquire: pairs with push's release store of bottom. */
  int64_t b = atomic_load_explicit(&q->bottom, memory_order_acquire);
#else
  /* seq_cst: the Dekker pair with take's exchange of bottom and load of
   * top (see take); the acquire half pairs with the CAS of top by other
   * takers, as above. */
  int64_t t = atomic_load_explicit(&q->top, memory_order_seq_cst);
  /* seq_cst: after the load of top in the total order (see take); the
   * acquire half pairs with push's release store of bottom. */
  int64_t b = atomic_load_explicit(&q->bottom, memory_order_seq_cst);
#endif
  if (t >= b) return NULL;
  void *x = atomic_load_explicit(&q->cell[t % PO_DEQUE_CAP], memory_order_relaxed); /* published by bottom */
  /* seq_cst: the paper's; the winner of t owns x. */
  if (!atomic_compare_exchange_strong_explicit(&q->top, &t, t + 1, memory_order_seq_cst, memory_order_relaxed))
    return NULL;
  return x;
}

/* Any thread: does it look non-empty (a hint)? */
static inline bool po_deque_busy(po_deque *q) {
  /* relaxed: a hint, as the run queue's head and tail in has_work. */
  return atomic_load_explicit(&q->bottom, memory_order_relaxed) > atomic_load_explicit(&q->top, memory_order_relaxed);
}

#endif
