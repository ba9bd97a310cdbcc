/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wfqueue.c — YMC wfqueue: a wait-free queue of fetch-and-add indices into
 * an infinite array of cells, emulated by a list of segments.
 *
 * Contract
 *   Source:      Chaoran Yang and John Mellor-Crummey, "A Wait-free Queue
 *                as Fast as Fetch-and-Add", PPoPP 2016: Listing 1 (the
 *                obstruction-free queue on an infinite array: FAA on T and
 *                H, the cell's value CAS, ⊤ for a cell a dequeuer gave up),
 *                Listing 2 (cells of val/enq/deq, segments, requests,
 *                handles, find_cell, advance_end_for_linearizability),
 *                Listing 3 (enqueue: enq_fast, enq_slow), Listing 4
 *                (help_enq: a dequeuer commits a pending enqueue request
 *                into its cell), Listing 5 (dequeue: deq_fast, deq_slow,
 *                help_deq, the candidate announced in the request's idx),
 *                and §5's memory reclamation (cleanup: hazard segment ids
 *                in the handles, the helpers' check and update, the front
 *                index I as the cleaner's exclusion). 004 §VI-A counts
 *                "wfqueue" among the leaders. (The paper is not among the
 *                five; written from its pseudo-code as recalled, listing
 *                numbers included; the authors' code was read to
 *                understand, not copied. See Deviations.)
 *   Progress:    wait-free for a thread that holds a handle: an operation
 *                tries the fast path PATIENCE (10) times, then publishes a
 *                request that every peer's dequeue helps (each dequeue that
 *                takes an item helps the next handle in the ring; each
 *                dequeue that meets an empty cell offers it to the next
 *                pending enqueue request in the ring), so a request is
 *                done once the peers' operations have gone round the ring
 *                of n handles: a bound in n, the paper's wait-freedom
 *                argument. Two non-wait-free parts, both off
 *                the operation proper: a thread's first operation on a
 *                queue that must make a new handle waits for a cleanup in
 *                progress (bounded work, but the cleaner may be
 *                preempted); a dequeuer that holds an index whose segment
 *                cannot be allocated retries the allocation (yielding)
 *                rather than abandon a cell an item may land in.
 *   Atomics:     uncontended enqueue: 1 relaxed store (the hazard id,
 *                Deviation (7)) + 1 FAA (T) + 1 CAS (the cell's value) +
 *                1 release store (hazard cleared): the paper's FAA and
 *                CAS; dequeue: the same with
 *                1 FAA (H) + 1 CAS (the cell's deq, taking the item) and
 *                the read of the next handle's dequeue request (helping
 *                it, when it is pending). An EMPTY dequeue that finds
 *                H >= T: 2 loads (3 when H caught up with the T last
 *                seen), no locked instruction (Deviation (6)); one that
 *                raced an enqueue past that test: 1 FAA + 2 CAS (val to
 *                ⊤, enq to ⊤) after WFQ_SPIN (100) relaxes. Once per
 *                segment, 1 CAS (link) and 1 store (the handle's segment
 *                pointer); a cleanup every 2n segments (4 FAA of 0 with
 *                its CAS).
 *   Memory:      the queue header lives in the caller's storage; segments
 *                of N cells (64 bytes each: val, enq, deq and padding, as
 *                the paper pads cells to a line) are malloc'ed as indices
 *                reach them (a handle keeps one it failed to link, as
 *                its spare), or taken back from the queue's stock of
 *                SYNCQ_QUEUE_WFQUEUE_STOCK (4) reclaimed segments
 *                (Deviation (8)): a queue holds at most that many
 *                segments beyond its live ones. Reclamation is
 *                the paper's: a handle publishes the id of the oldest
 *                segment it may touch (its hazard id) for the length of
 *                an operation; a dequeuer whose segment is 2n past the
 *                front takes the front (I = -1), moves every handle's
 *                segment pointers past the segments no hazard id covers,
 *                and frees those. A thread between operations pins
 *                nothing. Handles (5 lines, + a spare segment) live in a
 *                process-wide pool, never freed: a handle goes back to its
 *                queue when its thread exits or its thread's cache evicts
 *                it, and to the pool when the queue is destroyed.
 *   Handles:     syncq's queue API has no thread handle, so a thread gets
 *                one on its first operation on a queue, as src/reclaim/
 *                hazard.c gives records: a thread-local cache of 8
 *                (queue id, handle) pairs (initial-exec TLS; ids are
 *                never reused, so an entry of a destroyed queue matches
 *                nothing), filled from the queue's free handles or a new
 *                one linked into the queue's ring; a pthread key's
 *                destructor gives the thread's handles back at exit.
 *                Without a key a handle is taken and given back per
 *                operation. Limit: max_threads handles per queue (256 by
 *                default, init_ex up to 65536): a thread that needs one
 *                more gets SYNCQ_ELIMIT, and succeeds once another
 *                thread holding one has exited.
 *   Signal-safe: no (malloc, the handle cache). Process-shared: no.
 *   Limits:      unbounded; items non-NULL (⊤ is the address of an object
 *                of this file, which no item can equal); N a power of two
 *                in [2, 2^16] (sizing hint: capacity rounded up; 0 ->
 *                1024); indices are 63-bit counters.
 *                SYNCQ_ENOMEM: an enqueue whose segment or handle cannot
 *                be allocated returns it with the item not queued (a
 *                published request is withdrawn by a CAS on its id, or
 *                found already committed and completed); a dequeue
 *                returns it only when it cannot get a handle: once it
 *                holds an index it must reach that cell, so it retries a
 *                segment it cannot allocate (see Progress). A handle's
 *                spare is allocated when a segment is needed, not ahead
 *                of each dequeue as in the authors' code.
 *   Linearizable: yes (the paper's proof; the linearizability runs
 *                check it, with the fast path on and with PATIENCE 0).
 *   Deviations:  (1) handles are taken per thread through a cache (above)
 *                where the paper registers every thread up front; a new
 *                handle is linked under the front index I, so cleanup
 *                never meets a ring that changes under it. (2) A helper
 *                lowers its hazard id to the peer's (never raises it), so
 *                its own segments stay covered. (3) help_enq re-reads the
 *                request's value when it finds the request committed to
 *                its cell by another helper (the value read before could
 *                belong to the request's previous use). (4) A dequeue
 *                cleans up whenever its segment is 2n past the front, not
 *                only after it used its spare, so that consumers that
 *                never append a segment still reclaim. (5) Test hooks
 *                (not public): PATIENCE 0 makes every operation take the
 *                slow path (the enqueue's index from its one FAA left to
 *                the dequeuers; the dequeue's index settled, then handed
 *                to its own request as an announced candidate: see
 *                deq_forced), a function called right after a request is
 *                published, and a count of segment allocations to fail. (6) A dequeue first tests H >= T
 *                and answers EMPTY without its fetch-and-add (see
 *                seems_empty; LCRQ's lr_ring_seems_empty makes the same
 *                test): otherwise each dequeue polling an empty queue
 *                spends an index, WFQ_SPIN relaxes and two CAS, runs H
 *                past T, and makes enqueuers fail that many cells. (7)
 *                An operation publishes its hazard id with a relaxed
 *                store where the paper's pseudo-code needs it ordered
 *                before the segment pointer's read (the authors' code:
 *                a plain store that x86's locked FAA orders): the FAA on
 *                T or H that follows orders it, against the cleaner's
 *                FAA of 0 on both words before and after its updates
 *                (the argument at order_hazards). It was a seq_cst
 *                store, an xchg on x86: one locked instruction more per
 *                operation. (8) Cleanup puts the segments it takes off
 *                the list into the queue's stock (4 slots, an exchange
 *                each) and an append takes one from there before it
 *                calls malloc; the paper frees them. A fresh segment of
 *                1024 64-byte cells cost 7 to 14 page faults (glibc trims
 *                the producer's arena when the consumer frees), about 4
 *                us each on the loaded 2-core VM.
 *   Measured:    one thread, CPU time (2-core AMD EPYC VM, interleaved
 *                runs): enqueue+dequeue pair 42.5 -> 34.0 ns with (7)
 *                (lcrq 31.3); enqueue 21.0 -> 16.6 ns, dequeue 22.2 ->
 *                18.0 ns in batches of 512 (lcrq 16.0, 17.1). One
 *                producer and one consumer (1,000,000 items, the
 *                producer slowed to let the consumer keep up): 8.9 page
 *                faults per segment before (8), 5.5 after; the consumer
 *                fell behind by more than the stock on this loaded VM
 *                in many runs, and then every append is a malloc. The
 *                lockstep run of tests/queue/wfqueue_test.c takes every
 *                append from the stock. dg25-prodcons --size quick at
 *                N = 1 (16 segments a sample), page faults a sample: 235
 *                to 265 before, 159 to 229 after in runs where the
 *                threads seldom ran side by side (3-6 Mops/s), about 75
 *                after in runs near 35 Mops/s (lcrq: 30 to 70, the
 *                harness's own).
 *   Tried, not kept: a process-wide cache (1 MiB, 64 slots) of the
 *                segments a stock cannot hold and of destroyed queues'
 *                segments, for dg25's fresh queue a sample: 75 -> 64 page
 *                faults a sample near 35 Mops/s, 198 -> 135 in the slow
 *                runs; process-wide state for a few percent.
 *   Stats:       cas_attempts, cas_failures, retries (the slow enqueue's
 *                cells that another request took); deq_waits,
 *                deq_wait_pauses, deq_waits_out (help_enq's waits of up
 *                to WFQ_SPIN relaxes for an empty cell's enqueuer, in a
 *                dequeue's own cells and in those it examines for a
 *                peer's request); enq_cells_lost (fast-path enqueues whose
 *                cell a dequeuer had marked ⊤, or had given to another
 *                enqueuer's request it committed there); enq_slow (enqueues that
 *                published a request; syncq_queue_wfqueue_get_counts
 *                keeps the same count per queue).
 */
#include "syncq/queue/wfqueue.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "../stats_internal.h"
#include "syncq/platform.h"
#include "syncq/queue.h"
#include "../race_internal.h" /* SYNCQ_RACE_POINT: nothing outside race tests */

#define WFQ_MAGIC UINT64_C(0x5746515545554531)
#define WFQ_PATIENCE 10         /* fast-path tries before the slow path (the paper's PATIENCE) */
#define WFQ_SPIN 100            /* relaxes a dequeuer waits for its cell's enqueuer */
#define WFQ_NO_HAZARD INT64_MAX /* a handle between operations */
#define WFQ_CACHE 8             /* queues whose handle a thread keeps */
#define WFQ_ACTIVE UINT64_C(1)  /* owner word: (queue id << 1) | held */

/* Test hooks (tests/queue/wfqueue_test.c); not in the public header. */
typedef void (*syncq_wfq_test_hook_fn)(int point);
enum { WFQ_HOOK_ENQ_PUBLISHED = 1, WFQ_HOOK_DEQ_PUBLISHED = 2 };
extern _Atomic(int) syncq_queue_wfqueue_test_patience__;
_Atomic(int) syncq_queue_wfqueue_test_patience__ = -1; /* >= 0: PATIENCE of queues initialised from now on */
extern _Atomic(syncq_wfq_test_hook_fn) syncq_queue_wfqueue_test_hook__;
_Atomic(syncq_wfq_test_hook_fn) syncq_queue_wfqueue_test_hook__;
extern _Atomic(int) syncq_queue_wfqueue_test_fail_segments__;
_Atomic(int) syncq_queue_wfqueue_test_fail_segments__; /* > 0: that many segment allocations fail */

typedef struct wfq_enq_req {
  _Atomic(int64_t) id; /* > 0: pending, the first cell it may take; -i: committed to cell i; 0: none */
  _Atomic(void *) val;
} wfq_enq_req;

typedef struct wfq_deq_req {
  _Atomic(int64_t) id;  /* the index before the first cell it may take */
  _Atomic(int64_t) idx; /* id: searching; > id: candidate announced; < 0: done at -idx */
} wfq_deq_req;

typedef struct wfq_cell {
  _Atomic(void *) val;        /* NULL (⊥), an item, or TOP_VAL */
  _Atomic(wfq_enq_req *) enq; /* NULL, the request committed here, or TOP_ENQ */
  _Atomic(wfq_deq_req *) deq; /* NULL, the request that took the item, or TOP_DEQ */
  char pad[SYNCQ_CACHELINE - 3 * sizeof(void *)];
} wfq_cell;
_Static_assert(sizeof(wfq_cell) == SYNCQ_CACHELINE, "a cell per cache line, as in the paper");

typedef struct syncq_wfq_segment {
  SYNCQ_CACHELINE_ALIGNED _Atomic(struct syncq_wfq_segment *) next;
  int64_t id; /* written before the segment is linked, read-only after */
  /* N cells follow, from the next cache line */
} wfq_segment;

struct syncq_wfq_handle {
  /* read by cleaners and helpers */
  SYNCQ_CACHELINE_ALIGNED _Atomic(int64_t) hzd; /* the oldest segment id the operation may touch */
  _Atomic(wfq_segment *) ep, dp;                /* the segments of the last enqueue and dequeue */
  _Atomic(struct syncq_wfq_handle *) next;      /* the ring */
  _Atomic(uint64_t) owner;                      /* (queue id << 1) | WFQ_ACTIVE; 0 in the pool */
  struct syncq_wfq_handle *pool_next;           /* under pool_lock */
  SYNCQ_CACHELINE_ALIGNED wfq_enq_req er;
  SYNCQ_CACHELINE_ALIGNED wfq_deq_req dr;
  /* the holder's alone (handed on with the handle through the owner CAS) */
  SYNCQ_CACHELINE_ALIGNED struct syncq_wfq_handle *eh, *dh; /* the next peers to help */
  int64_t eh_id;                  /* the peer request this handle failed to place (the paper's Ei) */
  int64_t enq_seg_id, deq_seg_id; /* ids of ep and dp when the last operation ended */
  wfq_segment *spare;
  /* counters: written by the holder, read by syncq_queue_wfqueue_get_counts */
  _Atomic(uint64_t) slow_enq, slow_deq, helped_enq, helped_deq;
};
typedef struct syncq_wfq_handle wfq_handle;

/* ⊤ for each cell word: addresses no item or request can have. */
static const char wfq_top_item;
#define TOP_VAL ((void *)(uintptr_t)&wfq_top_item)
static wfq_enq_req wfq_top_enq;
#define TOP_ENQ (&wfq_top_enq)
static wfq_deq_req wfq_top_deq;
#define TOP_DEQ (&wfq_top_deq)

static inline void count_inc(_Atomic(uint64_t) *c) {
  /* relaxed: statistics, written by the handle's holder only */
  atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

static inline void call_hook(int point) {
  /* relaxed: a test sets the hook before the threads it watches start */
  syncq_wfq_test_hook_fn f = atomic_load_explicit(&syncq_queue_wfqueue_test_hook__, memory_order_relaxed);
  if (f != NULL) f(point);
}

/* ------------------------------------------------------------ segments */

static inline wfq_cell *cells_of(wfq_segment *s) { return (wfq_cell *)(void *)(s + 1); }

/* A segment to append: one from the queue's stock of reclaimed segments
 * (Deviation (8)), else a fresh one; its cells empty. NULL when memory is
 * short. */
static wfq_segment *seg_new(syncq_queue_wfqueue *q) {
  /* relaxed: a test sets the hook while no other thread allocates */
  if (atomic_load_explicit(&syncq_queue_wfqueue_test_fail_segments__, memory_order_relaxed) > 0 &&
      atomic_fetch_sub(&syncq_queue_wfqueue_test_fail_segments__, 1) > 0)
    return NULL; /* test hook: memory is short */
  size_t n = (size_t)1 << q->seg_order;
  wfq_segment *s = NULL;
  for (unsigned k = 0; k < SYNCQ_QUEUE_WFQUEUE_STOCK && s == NULL; k++)
    /* relaxed: a hint, the exchange decides; acquire: pairs with
     * seg_reclaim's release, after which no user of the segment is left
     * (the cleaner saw each one's hazard id released) */
    if (atomic_load_explicit(&q->stock[k], memory_order_relaxed) != NULL)
      s = atomic_exchange_explicit(&q->stock[k], NULL, memory_order_acquire);
  if (s != NULL) {
    atomic_fetch_add_explicit(&q->segments_reused, 1, memory_order_relaxed); /* relaxed: a statistic */
  } else {
    s = syncq_alloc_aligned(sizeof *s + n * sizeof(wfq_cell), SYNCQ_CACHELINE);
    if (s == NULL) return NULL;
  }
  atomic_init(&s->next, NULL);
  s->id = 0;
  wfq_cell *c = cells_of(s);
  for (size_t k = 0; k < n; k++) {
    atomic_init(&c[k].val, NULL);
    atomic_init(&c[k].enq, NULL);
    atomic_init(&c[k].deq, NULL);
  }
  return s;
}

/* find_cell (Listing 2): the cell of index i, walking from *cur (a segment
 * the caller's hazard id covers, with id <= i / N) and appending segments
 * that do not exist yet (the handle's spare first). *cur ends on i's
 * segment. NULL when a segment cannot be allocated and may_fail; otherwise
 * the allocation is retried, yielding (see Progress). */
static wfq_cell *find_cell(syncq_queue_wfqueue *q, wfq_handle *h, wfq_segment **cur, int64_t i, bool may_fail) {
  wfq_segment *s = *cur;
  const int64_t want = i >> q->seg_order;
  for (int64_t j = s->id; j < want; j++) {
    wfq_segment *next = atomic_load(&s->next);
    if (next == NULL) {
      wfq_segment *fresh = h->spare;
      while (fresh == NULL) {
        fresh = seg_new(q);
        if (fresh != NULL) break;
        if (may_fail) return NULL;
        syncq_yield();
      }
      h->spare = fresh;
      fresh->id = j + 1; /* unpublished: the CAS below publishes it */
      SYNCQ_STAT_INC(cas_attempts);
      if (atomic_compare_exchange_strong(&s->next, &next, fresh)) {
        next = fresh;
        h->spare = NULL;
        atomic_fetch_add_explicit(&q->segments_linked, 1, memory_order_relaxed); /* relaxed: a statistic */
      } else {
        SYNCQ_STAT_INC(cas_failures); /* next: the segment another thread linked; ours stays spare */
      }
    }
    s = next;
  }
  *cur = s;
  return &cells_of(s)[i & (((int64_t)1 << q->seg_order) - 1)];
}

/* find_cell on the handle's own segment pointer (ep or dp), which it
 * stores back only when it moved (once per segment). */
static wfq_cell *find_own_cell(syncq_queue_wfqueue *q, wfq_handle *h, _Atomic(wfq_segment *) *own, int64_t i,
                               bool may_fail) {
  /* Read after the operation's first fetch-and-add: a cleaner either
   * sees the hazard id or its updates of this pointer are visible here
   * (Deviation (7), order_hazards) */
  wfq_segment *s0 = atomic_load(own), *s = s0;
  wfq_cell *c = find_cell(q, h, &s, i, may_fail);
  if (c != NULL && s != s0) atomic_store(own, s);
  return c;
}

/* advance_end_for_linearizability (Listing 2): *end > i. */
static inline void advance_end(_Atomic(int64_t) *end, int64_t i) {
  int64_t e = atomic_load(end);
  while (e <= i && !atomic_compare_exchange_weak(end, &e, i + 1)) {
  }
}

/* ------------------------------------------------------------ reclamation (§5) */

/* The segment a hazard id covers, if it is older than cur. */
static wfq_segment *check(wfq_handle *ph, wfq_segment *cur, wfq_segment *old) {
  /* seq_cst: pairs with a helper's seq_cst hazard store (help_deq); an
   * operation's own, relaxed, is ordered by order_hazards */
  int64_t hz = atomic_load(&ph->hzd);
  if (hz < cur->id) {
    wfq_segment *s = old;
    while (s->id < hz) s = atomic_load(&s->next);
    cur = s;
  }
  return cur;
}

/* Move one of a handle's segment pointers up to cur; if the handle moved
 * it meanwhile or its hazard id is older, cur comes back down. */
static wfq_segment *update(_Atomic(wfq_segment *) *pp, wfq_segment *cur, wfq_handle *ph, wfq_segment *old) {
  wfq_segment *p = atomic_load(pp);
  if (p->id < cur->id) {
    SYNCQ_STAT_INC(cas_attempts);
    if (!atomic_compare_exchange_strong(pp, &p, cur)) {
      SYNCQ_STAT_INC(cas_failures);
      if (p->id < cur->id) cur = p;
    }
    cur = check(ph, cur, old);
  }
  return cur;
}

static inline int64_t garbage_limit(const syncq_queue_wfqueue *q) {
  /* relaxed: a threshold; any value the counter had will do */
  uint32_t n = atomic_load_explicit(&q->nhandles, memory_order_relaxed);
  return 2 * (int64_t)(n == 0 ? 1 : n);
}

/* Deviation (7): an operation publishes its hazard id with a relaxed
 * store (the authors' code: a plain store, ordered on x86 by the locked
 * fetch-and-add after it), then takes its index by a fetch-and-add on ei
 * (enqueue) or di (dequeue), and only then reads its segment pointer; a
 * helper that lowers its hazard id makes a fetch-and-add of 0 on di
 * before it reads the peer's pointer (help_deq). The cleaner makes a
 * read-modify-write on both words before its first pass (R1) and after
 * its updates (R2). ei and di change by read-modify-writes only, so an
 * operation's fetch-and-add and R1, R2 are ordered in the word's
 * modification order, and the later one reads from the earlier one's
 * release sequence (synchronizes with it). An operation whose
 * fetch-and-add comes
 *   before R1: its hazard id happens-before the first pass, whose check
 *     of its handle sees it (or a later value) before any update, so no
 *     pointer of the handle moves past it and nothing it covers is freed;
 *   between R1 and R2: its index is past every index the cleaner used
 *     (advance_end raised ei to di before R1), so no update moves its
 *     pointer past its cell, and its hazard id happens-before the second
 *     pass, which sees it;
 *   after R2: it acquired the updates, so the pointer it reads is one the
 *     cleaner kept (or a later one).
 * This replaces a seq_cst store (xchg on x86) per operation with four
 * read-modify-writes per cleanup, one cleanup every 2n segments. */
static inline void order_hazards(syncq_queue_wfqueue *q) {
  (void)atomic_fetch_add(&q->ei, 0);
  (void)atomic_fetch_add(&q->di, 0);
}

/* A segment cleanup took off the list: into the stock when a slot is
 * free (Deviation (8)), else back to the allocator. */
static void seg_reclaim(syncq_queue_wfqueue *q, wfq_segment *s) {
  bool kept = false;
  for (unsigned k = 0; k < SYNCQ_QUEUE_WFQUEUE_STOCK && !kept; k++) {
    wfq_segment *none = NULL;
    /* relaxed: a hint; release: pairs with seg_new's acquire exchange */
    kept = atomic_load_explicit(&q->stock[k], memory_order_relaxed) == NULL &&
           atomic_compare_exchange_strong_explicit(&q->stock[k], &none, s, memory_order_release, memory_order_relaxed);
  }
  if (!kept) free(s);
  atomic_fetch_add_explicit(&q->segments_freed, 1, memory_order_relaxed); /* relaxed: a statistic */
}

/* cleanup (§5): free the segments before every handle's segments and
 * hazard. One cleaner at a time: it holds the front (hi = -1). */
static void cleanup(syncq_queue_wfqueue *q, wfq_handle *th, int64_t th_seg_id) {
  int64_t oid = atomic_load(&q->hi);
  if (oid < 0 || th_seg_id - oid < garbage_limit(q)) return;
  SYNCQ_STAT_INC(cas_attempts);
  if (!atomic_compare_exchange_strong(&q->hi, &oid, -1)) {
    SYNCQ_STAT_INC(cas_failures);
    return;
  }
  /* Only the front's holder frees, so th's segment is safe to read now
   * (before, another cleaner could have moved dp on and freed it). */
  wfq_segment *nw = atomic_load(&th->dp);
  /* Enqueue indices from now on are past every dequeue index so far, so
   * no operation that starts after a handle's pointers moved needs a cell
   * before them. */
  advance_end(&q->ei, atomic_load(&q->di));
  order_hazards(q); /* R1 */
  wfq_segment *old = atomic_load(&q->hp);
  wfq_handle *ph = th;
  unsigned visited = 0;
  do {
    nw = check(ph, nw, old);
    nw = update(&ph->ep, nw, ph, old);
    nw = update(&ph->dp, nw, ph, old);
    visited++;
    ph = atomic_load(&ph->next);
  } while (nw->id > oid && ph != th);
  order_hazards(q); /* R2 */
  /* Again over the same handles (no handle joins while the front is
   * held): a hazard published after its first check pulls nw back. */
  ph = th;
  for (unsigned k = 0; k < visited && nw->id > oid; k++) {
    nw = check(ph, nw, old);
    ph = atomic_load(&ph->next);
  }
  if (nw->id <= oid) {
    atomic_store(&q->hi, oid);
    return;
  }
  atomic_store(&q->hp, nw);
  atomic_store(&q->hi, nw->id);
  while (old != nw) {
    wfq_segment *next = atomic_load(&old->next);
    seg_reclaim(q, old);
    old = next;
  }
}

/* ------------------------------------------------------------ enqueue (Listing 3) */

/* 1: done; 0: the cell was taken (*id = its index); -1: no segment. */
static int enq_fast(syncq_queue_wfqueue *q, wfq_handle *h, void *v, int64_t *id) {
  int64_t i = atomic_fetch_add(&q->ei, 1);
  SYNCQ_RACE_POINT("queue.wfqueue.enqueue.ticket"); /* a cell index held, not yet written */
  wfq_cell *c = find_own_cell(q, h, &h->ep, i, true);
  if (c == NULL) return -1; /* index i is left to the dequeuers, who mark it ⊤ */
  void *bot = NULL;
  SYNCQ_STAT_INC(cas_attempts);
  if (atomic_compare_exchange_strong(&c->val, &bot, v)) return 1;
  SYNCQ_STAT_INC(cas_failures);
  SYNCQ_STAT_INC(enq_cells_lost); /* ⊤, or a request a dequeuer committed there after it */
  *id = i;
  return 0;
}

static int enq_slow(syncq_queue_wfqueue *q, wfq_handle *h, void *v, int64_t id) {
  wfq_enq_req *r = &h->er;
  atomic_store(&r->val, v);
  atomic_store(&r->id, id); /* published: dequeuers may commit it to a cell >= id from now on */
  count_inc(&h->slow_enq);
  SYNCQ_STAT_INC(enq_slow);
  call_hook(WFQ_HOOK_ENQ_PUBLISHED);
  wfq_segment *tail = atomic_load(&h->ep);
  int64_t i;
  do {
    i = atomic_fetch_add(&q->ei, 1);
    wfq_cell *c = find_cell(q, h, &tail, i, true);
    if (c == NULL) {
      int64_t expect = id;
      if (atomic_compare_exchange_strong(&r->id, &expect, 0)) return SYNCQ_ENOMEM; /* withdrawn */
      break; /* a dequeuer committed it meanwhile: complete it */
    }
    wfq_enq_req *ce = NULL;
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(&c->enq, &ce, r) && atomic_load(&c->val) != TOP_VAL) {
      int64_t expect = id;
      (void)atomic_compare_exchange_strong(&r->id, &expect, -i); /* fails if a helper committed it elsewhere */
      break;
    }
    SYNCQ_STAT_INC(retries);
  } while (atomic_load(&r->id) > 0);
  int64_t at = -atomic_load(&r->id);                    /* the cell it was committed to */
  wfq_cell *c = find_own_cell(q, h, &h->ep, at, false); /* linked already: no allocation */
  if (at > i) advance_end(&q->ei, at);
  atomic_store(&c->val, v);
  return SYNCQ_OK;
}

/* ------------------------------------------------------------ help_enq (Listing 4) */

static void commit_value(syncq_queue_wfqueue *q, wfq_cell *c, int64_t i, void *v) {
  advance_end(&q->ei, i);
  atomic_store(&c->val, v);
}

/* The dequeuer at index i settles cell c: an item, NULL (the queue was
 * empty at i), or TOP_VAL (no item for i, but enqueues are past it).
 * The wait also covers a cell at or past T, which no enqueuer holds yet:
 * there it waits for the enqueue that takes i next, which otherwise finds
 * ⊤ and loses the cell (docs/queues.md, "No wait for an enqueuer that
 * cannot come": without it, ping-pong pairs lost 30 times the cells). */
static void *help_enq(syncq_queue_wfqueue *q, wfq_handle *th, wfq_cell *c, int64_t i) {
  void *v = atomic_load(&c->val);
  if (v == NULL) { /* the enqueuer of index i may be just behind */
    int k = 0;
    for (; v == NULL && k < WFQ_SPIN; k++) {
      syncq_pr_relax();
      v = atomic_load(&c->val);
    }
    SYNCQ_STAT_INC(deq_waits);
    SYNCQ_STAT_ADD(deq_wait_pauses, k);
    if (v == NULL) SYNCQ_STAT_INC(deq_waits_out); /* ran out */
  }
  if (v != NULL && v != TOP_VAL) return v;
  if (v == NULL) {
    SYNCQ_STAT_INC(cas_attempts);
    if (!atomic_compare_exchange_strong(&c->val, &v, TOP_VAL) && v != TOP_VAL) return v; /* it arrived */
  }
  /* c->val is ⊤: offer the cell to a pending enqueue request */
  wfq_enq_req *e = atomic_load(&c->enq);
  if (e == NULL) {
    wfq_handle *ph = th->eh;
    wfq_enq_req *pe = &ph->er;
    int64_t pid = atomic_load(&pe->id);
    if (th->eh_id != 0 && th->eh_id != pid) { /* the peer we stayed with is done: next peer */
      th->eh_id = 0;
      th->eh = ph = atomic_load(&ph->next);
      pe = &ph->er;
      pid = atomic_load(&pe->id);
    }
    if (pid > 0 && pid <= i && !atomic_compare_exchange_strong(&c->enq, &e, pe) && e != pe) {
      th->eh_id = pid; /* another request took this cell: stay with this peer */
    } else {
      th->eh_id = 0;
      th->eh = atomic_load(&ph->next);
    }
    if (e == NULL && atomic_compare_exchange_strong(&c->enq, &e, TOP_ENQ)) e = TOP_ENQ;
  }
  if (e == TOP_ENQ) return atomic_load(&q->ei) <= i ? NULL : TOP_VAL;
  int64_t eid = atomic_load(&e->id);
  void *ev = atomic_load(&e->val); /* request eid's value while eid is pending: the CAS below checks */
  if (eid > i) {                   /* the request is for a later cell */
    if (atomic_load(&c->val) == TOP_VAL && atomic_load(&q->ei) <= i) return NULL;
  } else if (eid > 0 && atomic_compare_exchange_strong(&e->id, &eid, -i)) {
    if (e != &th->er) count_inc(&th->helped_enq);
    commit_value(q, c, i, ev);
  } else if (eid == -i) { /* committed here by another helper: Deviation (3) */
    ev = atomic_load(&e->val);
    if (atomic_load(&c->val) == TOP_VAL) commit_value(q, c, i, ev);
  }
  return atomic_load(&c->val);
}

/* ------------------------------------------------------------ dequeue (Listing 5) */

/* An item; NULL: empty; TOP_VAL: lost the cell (*id = its index). */
static void *deq_fast(syncq_queue_wfqueue *q, wfq_handle *h, int64_t *id) {
  int64_t i = atomic_fetch_add(&q->di, 1);
  SYNCQ_RACE_POINT("queue.wfqueue.dequeue.ticket"); /* a cell index held, not yet read */
  wfq_cell *c = find_own_cell(q, h, &h->dp, i, false);
  void *v = help_enq(q, h, c, i);
  if (v == NULL) return NULL;
  wfq_deq_req *cd = NULL;
  if (v != TOP_VAL) {
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(&c->deq, &cd, TOP_DEQ)) return v;
    SYNCQ_STAT_INC(cas_failures);
  }
  *id = i;
  return TOP_VAL;
}

/* Complete ph's dequeue request, if it is pending (th == ph: its own). */
static void help_deq(syncq_queue_wfqueue *q, wfq_handle *th, wfq_handle *ph) {
  wfq_deq_req *r = &ph->dr;
  int64_t idx = atomic_load(&r->idx);
  int64_t id = atomic_load(&r->id);
  if (idx < id) return; /* nothing pending */
  /* Cover the peer's segments with our hazard id (Deviation (2)), then
   * read its pointer and check that the request is still pending: its
   * holder's hazard id covered dp until then, ours does from then on. The
   * request's publication, read above, made the peer's hazard id visible
   * here; the fetch-and-add of 0 orders ours for a cleaner (Deviation
   * (7), order_hazards). Our own request is covered by our own id. */
  if (th != ph) {
    int64_t ph_h = atomic_load(&ph->hzd);
    if (ph_h < atomic_load_explicit(&th->hzd, memory_order_relaxed)) { /* relaxed: our own word */
      atomic_store(&th->hzd, ph_h);
      (void)atomic_fetch_add(&q->di, 0);
    }
  }
  wfq_segment *dp = atomic_load(&ph->dp);
  idx = atomic_load(&r->idx);
  const bool own = th == ph;
  int64_t i = id + 1, old = id, cand = 0;
  for (;;) {
    wfq_segment *hs = dp;
    for (; idx == old && cand == 0; i++) {
      wfq_cell *c = find_cell(q, th, &hs, i, !own);
      if (c == NULL) return; /* a peer's request: its holder goes on */
      advance_end(&q->di, i);
      void *v = help_enq(q, th, c, i);
      if (v == NULL || (v != TOP_VAL && atomic_load(&c->deq) == NULL)) cand = i;
      else idx = atomic_load(&r->idx);
    }
    if (cand != 0) { /* announce it, unless another helper announced a cell first */
      SYNCQ_STAT_INC(cas_attempts);
      if (atomic_compare_exchange_strong(&r->idx, &idx, cand)) idx = cand;
      if (idx >= cand) cand = 0;
    }
    if (idx < 0 || atomic_load(&r->id) != id) break; /* done */
    wfq_cell *c = find_cell(q, th, &dp, idx, false); /* examined already: linked */
    wfq_deq_req *cd = NULL;
    if (atomic_load(&c->val) == TOP_VAL || atomic_compare_exchange_strong(&c->deq, &cd, r) || cd == r) {
      int64_t expect = idx;
      if (atomic_compare_exchange_strong(&r->idx, &expect, -idx) && !own) count_inc(&th->helped_deq);
      break;
    }
    old = idx;
    if (idx >= i) i = idx + 1;
  }
}

/* idx0: id (search from id + 1), or, from deq_forced, a cell after id
 * that help_enq has settled and that is a candidate already. */
static void *deq_slow(syncq_queue_wfqueue *q, wfq_handle *h, int64_t id, int64_t idx0) {
  wfq_deq_req *r = &h->dr;
  atomic_store(&r->id, id);
  atomic_store(&r->idx, idx0); /* published */
  count_inc(&h->slow_deq);
  call_hook(WFQ_HOOK_DEQ_PUBLISHED);
  help_deq(q, h, h);
  int64_t i = -atomic_load(&r->idx);
  wfq_cell *c = find_own_cell(q, h, &h->dp, i, false);
  void *v = atomic_load(&c->val);
  return v == TOP_VAL ? NULL : v;
}

/* Deviation (6): the queue is certainly empty now: every index enqueues
 * have taken is held by a dequeuer already (H >= T, H read first). An item
 * such an index holds is promised to the dequeue in progress that holds
 * it, which linearizes before this one. T only grows, so H below a value T
 * had is "not empty" without reading T's line, which every enqueue
 * writes; a dequeuer reads T only when H has caught up with ei_seen. */
static inline bool seems_empty(syncq_queue_wfqueue *q) {
  int64_t d = atomic_load(&q->di);
  /* relaxed: a hint; any value T had is at most T now, and "go on" is
   * always a safe answer */
  if (d < atomic_load_explicit(&q->ei_seen, memory_order_relaxed)) return false;
  int64_t e = atomic_load(&q->ei);
  if (d >= e) return true;
  atomic_store_explicit(&q->ei_seen, e, memory_order_relaxed); /* relaxed: a hint, as above */
  return false;
}

/* Test hook PATIENCE 0: the dequeue's one index i goes to its own request.
 * Cell i is settled first, as a fast-path try would; if it lost the cell,
 * the request searches from i + 1 as after any failed try; if the cell is
 * a candidate (empty verdict, or an untaken item), the request starts with
 * it announced (id i - 1, idx i): announcing it with idx = id = i - 1
 * instead would let a helper still acting on the handle's previous request
 * (whose candidates include i - 1, but never i: i was past H when they
 * were examined) complete this one at the previous candidate. */
static void *deq_forced(syncq_queue_wfqueue *q, wfq_handle *h) {
  int64_t i = atomic_fetch_add(&q->di, 1);
  SYNCQ_RACE_POINT("queue.wfqueue.dequeue.ticket"); /* a cell index held, not yet read */
  wfq_cell *c = find_own_cell(q, h, &h->dp, i, false);
  void *v = help_enq(q, h, c, i);
  if (v == TOP_VAL || (v != NULL && atomic_load(&c->deq) != NULL)) return deq_slow(q, h, i, i);
  return deq_slow(q, h, i - 1, i);
}

/* ------------------------------------------------------------ handles */

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static wfq_handle *pool; /* handles of destroyed queues */
static _Atomic(uint64_t) next_queue_id = 1;

typedef struct wfq_cache_entry {
  uint64_t id; /* 0: unused */
  wfq_handle *h;
} wfq_cache_entry;
typedef struct wfq_cache {
  wfq_cache_entry e[WFQ_CACHE];
  unsigned victim;
  bool registered; /* the key's destructor will give the handles back */
} wfq_cache;
/* initial-exec: the lookup is a TLS-relative access (as hazard.c's cache) */
static _Thread_local wfq_cache tcache __attribute__((tls_model("initial-exec")));
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t cache_key;
static bool cache_key_ok;

static inline uint64_t held_by(uint64_t qid) { return (qid << 1) | WFQ_ACTIVE; }

/* Give a handle back to queue qid; nothing if it is no longer held under
 * that id (the queue was destroyed: the handle went to the pool). */
static void handle_release(uint64_t qid, wfq_handle *h) {
  uint64_t o = held_by(qid);
  (void)atomic_compare_exchange_strong(&h->owner, &o, qid << 1);
}

static void cache_release_all(void *p) {
  wfq_cache *c = p;
  for (unsigned k = 0; k < WFQ_CACHE; k++)
    if (c->e[k].id != 0) {
      handle_release(c->e[k].id, c->e[k].h);
      c->e[k].id = 0;
      c->e[k].h = NULL;
    }
  c->registered = false;
}

static void key_create(void) { cache_key_ok = pthread_key_create(&cache_key, cache_release_all) == 0; }

static bool cache_insert(wfq_cache *c, uint64_t qid, wfq_handle *h) {
  if (!c->registered) {
    pthread_once(&key_once, key_create);
    if (!cache_key_ok || pthread_setspecific(cache_key, c) != 0) return false;
    c->registered = true;
  }
  unsigned pick = WFQ_CACHE;
  for (unsigned k = 0; k < WFQ_CACHE && pick == WFQ_CACHE; k++) /* unused, or its queue is gone */
    if (c->e[k].id == 0 || atomic_load(&c->e[k].h->owner) != held_by(c->e[k].id)) pick = k;
  if (pick == WFQ_CACHE) { /* evict: between operations, so its handle is idle */
    pick = c->victim++ % WFQ_CACHE;
    handle_release(c->e[pick].id, c->e[pick].h);
  }
  c->e[pick].id = qid;
  c->e[pick].h = h;
  return true;
}

/* A fresh handle linked into q's ring, held by the caller. */
static int handle_join(syncq_queue_wfqueue *q, wfq_handle **out) {
  uint32_t n = atomic_fetch_add(&q->nhandles, 1);
  if (n >= q->max_handles) {
    atomic_fetch_sub(&q->nhandles, 1);
    return SYNCQ_ELIMIT;
  }
  pthread_mutex_lock(&pool_lock);
  wfq_handle *h = pool;
  if (h != NULL) pool = h->pool_next;
  pthread_mutex_unlock(&pool_lock);
  if (h == NULL) h = syncq_alloc_aligned(sizeof *h, SYNCQ_CACHELINE);
  if (h == NULL) {
    atomic_fetch_sub(&q->nhandles, 1);
    return SYNCQ_ENOMEM;
  }
  atomic_store(&h->owner, held_by(q->id));
  atomic_store(&h->hzd, WFQ_NO_HAZARD);
  atomic_store(&h->er.id, 0);
  atomic_store(&h->er.val, NULL);
  atomic_store(&h->dr.id, 0);
  atomic_store(&h->dr.idx, -1);
  h->eh_id = 0;
  h->spare = NULL;
  h->pool_next = NULL;
  atomic_store(&h->slow_enq, 0);
  atomic_store(&h->slow_deq, 0);
  atomic_store(&h->helped_enq, 0);
  atomic_store(&h->helped_deq, 0);
  /* Hold the front, as a cleaner does: the front segment stays, and no
   * cleanup walks the ring while it grows (Deviation (1)). */
  for (;;) {
    int64_t oid = atomic_load(&q->hi);
    if (oid >= 0 && atomic_compare_exchange_weak(&q->hi, &oid, -1)) {
      wfq_segment *front = atomic_load(&q->hp);
      atomic_store(&h->ep, front);
      atomic_store(&h->dp, front);
      h->enq_seg_id = h->deq_seg_id = front->id;
      wfq_handle *first = atomic_load(&q->handles);
      if (first == NULL) {
        atomic_store(&h->next, h);
        atomic_store(&q->handles, h);
      } else {
        atomic_store(&h->next, atomic_load(&first->next));
        atomic_store(&first->next, h); /* published: peers' ring walks may meet it now */
      }
      h->eh = h->dh = atomic_load(&h->next);
      atomic_store(&q->hi, oid);
      break;
    }
    syncq_yield();
  }
  *out = h;
  return SYNCQ_OK;
}

/* The calling thread's handle on q; *kept: it stays with the thread after
 * the operation (else the caller gives it back). */
static int handle_get(syncq_queue_wfqueue *q, wfq_handle **out, bool *kept) {
  wfq_cache *c = &tcache;
  const uint64_t qid = q->id;
  for (unsigned k = 0; k < WFQ_CACHE; k++)
    if (c->e[k].id == qid) {
      *out = c->e[k].h;
      *kept = true;
      return SYNCQ_OK;
    }
  wfq_handle *h = NULL;
  for (int pass = 0; pass < 2 && h == NULL; pass++) {
    wfq_handle *first = atomic_load(&q->handles), *f = first;
    if (f != NULL) do {
        uint64_t free_here = qid << 1;
        if (atomic_compare_exchange_strong(&f->owner, &free_here, held_by(qid))) h = f;
        f = atomic_load(&f->next);
      } while (h == NULL && f != first);
    if (h == NULL) {
      int st = handle_join(q, &h);
      if (st == SYNCQ_ENOMEM) return st;
      /* SYNCQ_ELIMIT: a handle may have been given back meanwhile; look once more */
      if (st == SYNCQ_ELIMIT && pass == 1) return st;
    }
  }
  *kept = cache_insert(c, qid, h);
  *out = h;
  return SYNCQ_OK;
}

/* ------------------------------------------------------------ API */

int syncq_queue_wfqueue_init_ex(syncq_queue_wfqueue *q, size_t segment_cells, size_t max_threads) {
  if (q == NULL || ((uintptr_t)q % _Alignof(syncq_queue_wfqueue)) != 0) return SYNCQ_EINVAL;
  if (segment_cells < SYNCQ_QUEUE_WFQUEUE_SEGMENT_MIN || segment_cells > SYNCQ_QUEUE_WFQUEUE_SEGMENT_MAX ||
      (segment_cells & (segment_cells - 1)) != 0)
    return SYNCQ_EINVAL;
  if (max_threads == 0 || max_threads > SYNCQ_QUEUE_WFQUEUE_THREADS_MAX) return SYNCQ_EINVAL;
  q->seg_order = (uint32_t)__builtin_ctzll((unsigned long long)segment_cells);
  for (unsigned k = 0; k < SYNCQ_QUEUE_WFQUEUE_STOCK; k++) atomic_init(&q->stock[k], NULL);
  wfq_segment *s = seg_new(q);
  if (s == NULL) return SYNCQ_ENOMEM;
  atomic_init(&q->ei, 1); /* index 0 is never used: a request id 0 means none, and -i needs i > 0 */
  atomic_init(&q->di, 1);
  atomic_init(&q->ei_seen, 1);
  atomic_init(&q->hi, 0);
  atomic_init(&q->hp, s);
  atomic_init(&q->handles, NULL);
  atomic_init(&q->nhandles, 0);
  atomic_init(&q->segments_linked, 0);
  atomic_init(&q->segments_freed, 0);
  atomic_init(&q->segments_reused, 0);
  q->max_handles = (uint32_t)max_threads;
  /* relaxed: a test sets the hook before it initialises the queue */
  int p = atomic_load_explicit(&syncq_queue_wfqueue_test_patience__, memory_order_relaxed);
  q->patience = p >= 0 ? (uint32_t)p : WFQ_PATIENCE;
  q->id = atomic_fetch_add(&next_queue_id, 1);
  q->magic = WFQ_MAGIC;
  return SYNCQ_OK;
}

int syncq_queue_wfqueue_init(syncq_queue_wfqueue *q, size_t capacity) {
  size_t n = SYNCQ_QUEUE_WFQUEUE_SEGMENT_DEFAULT;
  if (capacity != 0) {
    n = SYNCQ_QUEUE_WFQUEUE_SEGMENT_MIN;
    while (n < capacity && n < SYNCQ_QUEUE_WFQUEUE_SEGMENT_MAX) n <<= 1;
  }
  return syncq_queue_wfqueue_init_ex(q, n, SYNCQ_QUEUE_WFQUEUE_THREADS_DEFAULT);
}

int syncq_queue_wfqueue_destroy(syncq_queue_wfqueue *q) {
  if (q == NULL || q->magic != WFQ_MAGIC) return SYNCQ_EINVAL;
  wfq_handle *first = atomic_load(&q->handles), *h;
  if (first != NULL) {
    h = first;
    do {
      if (atomic_load(&h->hzd) != WFQ_NO_HAZARD) return SYNCQ_EBUSY; /* an operation runs */
      h = atomic_load(&h->next);
    } while (h != first);
    h = first;
    do {
      wfq_handle *next = atomic_load(&h->next);
      for (;;) { /* take it from its thread (whose cache entry then matches nothing) */
        uint64_t o = atomic_load(&h->owner);
        if (atomic_compare_exchange_strong(&h->owner, &o, 0)) break;
      }
      free(h->spare);
      h->spare = NULL;
      pthread_mutex_lock(&pool_lock);
      h->pool_next = pool;
      pool = h;
      pthread_mutex_unlock(&pool_lock);
      h = next;
    } while (h != first);
  }
  for (wfq_segment *s = atomic_load(&q->hp), *next; s != NULL; s = next) {
    next = atomic_load_explicit(&s->next, memory_order_relaxed); /* relaxed: no concurrent user at destroy */
    free(s);
  }
  for (unsigned k = 0; k < SYNCQ_QUEUE_WFQUEUE_STOCK; k++) free(atomic_exchange(&q->stock[k], NULL));
  q->magic = 0;
  return SYNCQ_OK;
}

int syncq_queue_wfqueue_enqueue(syncq_queue_wfqueue *q, void *item) {
  if (q == NULL || q->magic != WFQ_MAGIC || item == NULL) return SYNCQ_EINVAL;
  wfq_handle *h;
  bool kept;
  int st = handle_get(q, &h, &kept);
  if (st != SYNCQ_OK) return st;
  /* relaxed: the fetch-and-add on ei after it orders it for a cleaner
   * (Deviation (7), order_hazards) */
  atomic_store_explicit(&h->hzd, h->enq_seg_id, memory_order_relaxed);
  int r = 0;
  int64_t id = 0;
  for (uint32_t p = 0; p < q->patience && r == 0; p++) r = enq_fast(q, h, item, &id);
  if (r < 0) {
    st = SYNCQ_ENOMEM;
  } else if (r == 0) {
    if (q->patience == 0) id = atomic_fetch_add(&q->ei, 1); /* test hook: the slow path at once */
    st = enq_slow(q, h, item, id);
  }
  h->enq_seg_id = atomic_load(&h->ep)->id;
  atomic_store_explicit(&h->hzd, WFQ_NO_HAZARD, memory_order_release); /* release: pairs with check's load */
  if (!kept) handle_release(q->id, h);
  return st;
}

int syncq_queue_wfqueue_dequeue(syncq_queue_wfqueue *q, void **item) {
  if (q == NULL || q->magic != WFQ_MAGIC || item == NULL) return SYNCQ_EINVAL;
  wfq_handle *h;
  bool kept;
  int st = handle_get(q, &h, &kept);
  if (st != SYNCQ_OK) return st;
  if (q->patience != 0 && seems_empty(q)) { /* Deviation (6); not under the PATIENCE-0 hook */
    if (!kept) handle_release(q->id, h);
    return SYNCQ_EMPTY;
  }
  /* relaxed: the fetch-and-add on di after it orders it for a cleaner
   * (Deviation (7), order_hazards) */
  atomic_store_explicit(&h->hzd, h->deq_seg_id, memory_order_relaxed);
  void *v = TOP_VAL;
  int64_t id = 0;
  for (uint32_t p = 0; p < q->patience && v == TOP_VAL; p++) v = deq_fast(q, h, &id);
  if (q->patience == 0) v = deq_forced(q, h); /* test hook: the slow path at once */
  else if (v == TOP_VAL) v = deq_slow(q, h, id, id);
  if (v != NULL) { /* help the next peer's dequeue */
    help_deq(q, h, h->dh);
    h->dh = atomic_load(&h->dh->next);
  }
  h->deq_seg_id = atomic_load(&h->dp)->id;
  atomic_store_explicit(&h->hzd, WFQ_NO_HAZARD, memory_order_release); /* release: pairs with check's load */
  cleanup(q, h, h->deq_seg_id); /* when h's segment is 2n past the front: Deviation (4) */
  if (!kept) handle_release(q->id, h);
  if (v == NULL) return SYNCQ_EMPTY;
  *item = v;
  return SYNCQ_OK;
}

uint64_t syncq_queue_wfqueue_segments_linked(const syncq_queue_wfqueue *q) {
  return q == NULL ? 0 : atomic_load(&((syncq_queue_wfqueue *)q)->segments_linked);
}
uint64_t syncq_queue_wfqueue_segments_freed(const syncq_queue_wfqueue *q) {
  return q == NULL ? 0 : atomic_load(&((syncq_queue_wfqueue *)q)->segments_freed);
}

int syncq_queue_wfqueue_get_counts(const syncq_queue_wfqueue *q, syncq_queue_wfqueue_counts *out) {
  if (q == NULL || out == NULL || q->magic != WFQ_MAGIC) return SYNCQ_EINVAL;
  syncq_queue_wfqueue *m = (syncq_queue_wfqueue *)q;
  *out = (syncq_queue_wfqueue_counts){0};
  wfq_handle *first = atomic_load(&m->handles), *h = first;
  if (h != NULL) do {
      /* relaxed: statistics, written by each handle's holder */
      out->slow_enqueues += atomic_load_explicit(&h->slow_enq, memory_order_relaxed);
      out->slow_dequeues += atomic_load_explicit(&h->slow_deq, memory_order_relaxed);
      out->helped_enqueues += atomic_load_explicit(&h->helped_enq, memory_order_relaxed);
      out->helped_dequeues += atomic_load_explicit(&h->helped_deq, memory_order_relaxed);
      out->handles++;
      h = atomic_load(&h->next);
    } while (h != first);
  return SYNCQ_OK;
}

SYNCQ_QUEUE_REGISTER_FIXED(
  wfqueue, "wfqueue",
  "YMC wfqueue: fetch-and-add on an infinite array of cells in linked segments, slow path helped by peers",
  "Yang & Mellor-Crummey 2016 (PPoPP), Listings 1-5 and its reclamation; cited by 004 §VI-A", WAIT_FREE,
  SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES);
