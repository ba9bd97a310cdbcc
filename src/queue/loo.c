/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * loo.c — LOO: Giersch & Nolte's unbounded FIFO queue of linked
 * fetch-and-add nodes with deterministic reclamation.
 *
 * Contract
 *   Source:      Oliver Giersch and Jörg Nolte, "Fast and Portable
 *                Concurrent FIFO Queues With Deterministic Memory
 *                Reclamation", IEEE TPDS 33(3), 2022, doi
 *                10.1109/TPDS.2021.3097901: the queue the paper calls LOO,
 *                as its authors' reference implementation states it
 *                (looqueue: ALGORITHMS.md, the pseudo-code of enqueue E1-14,
 *                advance-tail T1-26, dequeue D1-21, advance-head H1-12,
 *                reclamation R1-8 and C1-12; PROOF.md, linearizability,
 *                index bounds, lock-freedom). 004 §VI measures it ("LCRQ,
 *                LOO and wfqueue are globally the best performing").
 *                Written from that pseudo-code; see Deviations.
 *   Progress:    lock-free (PROOF.md §3: a slot can be abandoned by its
 *                enqueuer and dequeuer at most N times in a row before the
 *                node is drained and an enqueuer appends; Deviation 5's
 *                retry follows a move of Head to another node).
 *   Atomics:     uncontended enqueue: 1 FAA (Tail) + 1 FAA (its slot);
 *                dequeue: loads of Head and Tail (the EMPTY test) + 1 FAA
 *                (Head) + 1 FAA (its slot); EMPTY: 2 loads of Head's
 *                swing count and a second load of Head and of Tail
 *                (Deviation 5). Every 128th operation of each
 *                side takes the slow path: a CAS appending a node (enqueue)
 *                or swinging Head (dequeue, then a FAA on the swing
 *                count), bounded CAS loops on Tail or Head, and a
 *                fetch-and-add on the node's operation count.
 *   Memory:      allocates: one node of 128 slots (1,024-aligned, 2 KB) per
 *                128 items enqueued; a node is freed by the operation that
 *                completes the last of three conditions: every slot taken
 *                or abandoned by both sides (the slot scan, started by the
 *                dequeuer that finds the node's index at 128 and resumed by
 *                whoever completes the slot it stopped at), and every
 *                enqueue and every dequeue that went past the end of the
 *                node finished (each side counts them against the final
 *                index recorded when Tail or Head left the node). No hazard
 *                pointers or epochs; at rest only the node Head is in and
 *                those after it are allocated.
 *   Signal-safe: no (malloc and free).
 *   Process-shared: no (node addresses).
 *   Limits:      items non-NULL with their two low bits clear (the slot's
 *                RESUME and READER marks): SYNCQ_EINVAL otherwise. At most
 *                SYNCQ_QUEUE_LOO_MAX_PRODUCERS (447) threads enqueuing and
 *                SYNCQ_QUEUE_LOO_MAX_CONSUMERS (447) dequeuing at once: a
 *                node index has the 10 bits beside a 1,024-aligned address,
 *                reaches 128 + 2P at most for P enqueuers (PROOF.md's
 *                128 + P, plus one more pass per thread after SYNCQ_ENOMEM,
 *                Deviation 2) and 128 + 2C for C dequeuers (PROOF.md), and
 *                must stay below 1,024. 64-bit only.
 *   ABA:         the EMPTY test before the ticket (D6) compares the node
 *                of a Head load with the node of a later Tail load, and
 *                holds no ticket on it: between the two loads that node
 *                can be drained, freed, and its address handed out again
 *                for a node that Tail then names. The paper's test then
 *                sees "Head and Tail in one node, Head's index past
 *                Tail's" while the queue holds items (a dequeuer stalled
 *                there while the queue moved a node on and appended one:
 *                seen under ThreadSanitizer, whose delays are long, in
 *                the queue driver's never-empty run; forced in
 *                loo_race_test). Deviation 5 closes it.
 *   Linearizable: yes (PROOF.md §1): an enqueue at its slot's fetch-and-add
 *                when no dequeuer marked the slot first, or at the CAS that
 *                appends the node holding its item; a dequeue at its slot's
 *                fetch-and-add when the slot held an item, EMPTY at its
 *                second Tail load (Head's swing count unchanged around
 *                it, Deviation 5) or its read of the head node's
 *                successor.
 *   Slots:       item | READER (2) | RESUME (1), starting at 0. The enqueuer
 *                adds the item, the dequeuer adds READER, each with one
 *                fetch-and-add, in either order: a dequeuer first finds no
 *                item and both abandon the slot; RESUME marks a slot the
 *                reclamation scan is waiting on.
 *   Deviations:  (1) the node's slow-path count words are 32 bits (final
 *                count << 16 | count) as in the reference implementation;
 *                the scan is started by the first dequeuer past the end of
 *                the node, as there (ALGORITHMS.md's D11 starts it at the
 *                last slot). (2) Allocation failure is a status, not an
 *                exception: an enqueuer that finds Tail's node full
 *                allocates its node before taking a ticket and answers
 *                SYNCQ_ENOMEM without one if that fails; one that takes a
 *                ticket past the end without a node and cannot allocate
 *                counts itself as a finished slow-path operation and
 *                answers SYNCQ_ENOMEM (so each thread passes the end of a
 *                node at most twice: the limit above). (3) Every atomic
 *                access is seq_cst (the reference implementation relaxes
 *                several). (4) The slow path's EMPTY test (H3) compares
 *                Head's node with Tail's node read then, not with the one
 *                read before the ticket: that node may have been freed
 *                and its address reused by the node now at Head, which
 *                would make a queue that moved on look empty. (5) The
 *                same reuse threatens D6 (see ABA): the queue counts
 *                Head's moves to a successor node (head_swings, bumped by
 *                the CAS's winner before it counts its dequeue finished,
 *                so before the node can be freed). D6's loads only decide
 *                to take a ticket; when they look empty the dequeuer
 *                reads the count, Head and Tail again, and answers EMPTY
 *                only if those look empty too and the count is unchanged
 *                after the Tail load. Then Head's node was not freed
 *                before that load, so a Tail naming its address names
 *                that node, and Head is still in it (Head leaves a node
 *                only after Tail has): the two loads are a snapshot.
 *                Otherwise it starts again. Cost: nothing on a dequeue
 *                that takes a ticket; three loads on Head's cache line and
 *                one of Tail per EMPTY; one fetch-and-add per 128
 *                dequeues. (6) Test hooks (not public): node memory can
 *                come from a test's functions, to fail allocations or to
 *                hand a freed node's address out again at once.
 *   Stats:       cas_attempts, cas_failures (Head, Tail and next CASes).
 */
#include "syncq/queue/loo.h"

#include <stdlib.h>

#include "../stats_internal.h"
#include "syncq/platform.h"
#include "syncq/queue.h"
#include "../race_internal.h" /* SYNCQ_RACE_POINT: nothing outside race tests */

#define LOO_MAGIC UINT64_C(0x4c4f4f5155455545)
#define LOO_SLOTS 128   /* N: slots per node */
#define LOO_IDX_BITS 10 /* index bits beside a node address */
#define LOO_NODE_ALIGN (UINT64_C(1) << LOO_IDX_BITS)
#define LOO_IDX_MASK (LOO_NODE_ALIGN - 1)

/* slot marks */
#define RESUME UINT64_C(1)
#define READER UINT64_C(2)
#define MARKS (RESUME | READER)

/* reclamation flags: all three set = the node can be freed */
#define R_SLOTS 1u /* every slot taken or abandoned by both sides */
#define R_ENQ 2u   /* every enqueue past the end finished, Tail has left */
#define R_DEQ 4u   /* every dequeue past the end finished, Head has left */

typedef struct loo_node {
  _Atomic(uint64_t) slots[LOO_SLOTS];
  _Atomic(struct loo_node *) next;
  _Atomic(uint32_t) enq_count; /* final count << 16 | finished slow-path enqueues */
  _Atomic(uint32_t) deq_count; /* the same for dequeues */
  _Atomic(uint32_t) reclaim;   /* R_* */
  syncq_queue_loo *q;          /* whose counters a free bumps */
} loo_node;

static inline loo_node *node_of(uint64_t word) { return (loo_node *)(uintptr_t)(word & ~LOO_IDX_MASK); }
static inline uint64_t idx_of(uint64_t word) { return word & LOO_IDX_MASK; }
static inline uint64_t word_of(loo_node *n, uint64_t idx) { return (uint64_t)(uintptr_t)n | idx; }

/* Test hooks (tests/queue/loo_test.c, loo_race_test.c); not in the public
 * header. Both set or both NULL: a test sets them before it initialises a
 * queue and clears them after destroying it. */
typedef void *(*syncq_loo_test_alloc_fn)(size_t size, size_t align);
typedef void (*syncq_loo_test_free_fn)(void *p);
extern _Atomic(syncq_loo_test_alloc_fn) syncq_queue_loo_test_alloc__;
_Atomic(syncq_loo_test_alloc_fn) syncq_queue_loo_test_alloc__;
extern _Atomic(syncq_loo_test_free_fn) syncq_queue_loo_test_free__;
_Atomic(syncq_loo_test_free_fn) syncq_queue_loo_test_free__;

static void *node_alloc(void) {
  syncq_loo_test_alloc_fn f = atomic_load(&syncq_queue_loo_test_alloc__);
  return f != NULL ? f(sizeof(loo_node), LOO_NODE_ALIGN) : syncq_alloc_aligned(sizeof(loo_node), LOO_NODE_ALIGN);
}

static void node_dealloc(loo_node *n) {
  syncq_loo_test_free_fn f = atomic_load(&syncq_queue_loo_test_free__);
  if (f != NULL) f(n);
  else free(n);
}

static loo_node *node_new(syncq_queue_loo *q) {
  loo_node *n = node_alloc();
  if (n == NULL) return NULL;
  for (size_t i = 0; i < LOO_SLOTS; i++) atomic_init(&n->slots[i], 0);
  atomic_init(&n->next, NULL);
  atomic_init(&n->enq_count, 0);
  atomic_init(&n->deq_count, 0);
  atomic_init(&n->reclaim, 0);
  n->q = q;
  return n;
}

static void node_free(loo_node *n) {
  atomic_fetch_add(&n->q->nodes_freed, 1);
  node_dealloc(n);
}

/* A slot is done when both its enqueuer (item bits) and its dequeuer
 * (READER) have been there. */
static inline bool slot_done(uint64_t s) { return (s & ~MARKS) != 0 && (s & READER) != 0; }

/* Set `flag`; free the node if the other two were set already. */
static void reclaim_flag(loo_node *n, uint32_t flag) {
  const uint32_t all = R_SLOTS | R_ENQ | R_DEQ;
  if (atomic_fetch_add(&n->reclaim, flag) == (all & ~flag)) node_free(n);
}

/* R1-R8: scan the slots from `start`; stop at the first one not done,
 * leaving RESUME in it for whoever completes it to call this again from
 * the next slot. The call that passes the last slot sets R_SLOTS. */
static void try_reclaim(loo_node *n, size_t start) {
  for (size_t i = start; i < LOO_SLOTS; i++) {
    if (slot_done(atomic_load(&n->slots[i]))) continue;
    if (!slot_done(atomic_fetch_add(&n->slots[i], RESUME))) return;
  }
  reclaim_flag(n, R_SLOTS);
}

/* C1-C12: one slow-path operation on node n finished; `final` (nonzero)
 * is the number of them, known to the one that moved Head or Tail on. */
static void count_finished(loo_node *n, _Atomic(uint32_t) *count, uint32_t final, uint32_t flag) {
  const uint32_t add = 1 + (final << 16);
  const uint32_t before = atomic_fetch_add(count, add);
  const uint32_t done = (before & 0xFFFFu) + 1;
  const uint32_t want = final != 0 ? final : before >> 16;
  if (done == want) reclaim_flag(n, flag);
}

/* CAS *word from *expect to desired while *expect still names node old;
 * true if this thread's CAS did it (then *expect has the index it saw). */
static bool cas_while_node(_Atomic(uint64_t) *word, uint64_t *expect, uint64_t desired, loo_node *old) {
  for (;;) {
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(word, expect, desired)) return true;
    SYNCQ_STAT_INC(cas_failures);
    if (node_of(*expect) != old) return false;
  }
}

int syncq_queue_loo_init(syncq_queue_loo *q, size_t capacity) {
  (void)capacity;
  if (q == NULL || ((uintptr_t)q % _Alignof(syncq_queue_loo)) != 0) return SYNCQ_EINVAL;
  atomic_init(&q->head_swings, 0);
  atomic_init(&q->nodes_linked, 0);
  atomic_init(&q->nodes_freed, 0);
  loo_node *n = node_new(q);
  if (n == NULL) return SYNCQ_ENOMEM;
  atomic_init(&q->head, word_of(n, 0));
  atomic_init(&q->tail, word_of(n, 0));
  q->magic = LOO_MAGIC;
  return SYNCQ_OK;
}

int syncq_queue_loo_destroy(syncq_queue_loo *q) {
  if (q == NULL || q->magic != LOO_MAGIC) return SYNCQ_EINVAL;
  q->magic = 0;
  /* The nodes before Head's were freed by the last operation to leave
   * them; Head's and those after it are still linked. */
  loo_node *n = node_of(atomic_load(&q->head));
  while (n != NULL) {
    loo_node *next = atomic_load(&n->next);
    node_dealloc(n);
    n = next;
  }
  return SYNCQ_OK;
}

typedef enum { ADV_INSERTED, ADV_MOVED, ADV_NOMEM } adv_tail_res;

/* T1-T26: Tail's node t is full. Append a node holding item (the spare,
 * or a fresh one), or help move Tail to the node another thread appended. */
static adv_tail_res advance_tail(syncq_queue_loo *q, loo_node *t, void *item, loo_node **spare) {
  for (;;) {
    uint64_t cur = atomic_load(&q->tail);
    if (node_of(cur) != t) { /* moved on already */
      count_finished(t, &t->enq_count, 0, R_ENQ);
      return ADV_MOVED;
    }
    loo_node *next = atomic_load(&t->next);
    if (next == NULL) {
      loo_node *n = *spare != NULL ? *spare : node_new(q);
      if (n == NULL) { /* Deviation 2: this pass is finished, without effect */
        count_finished(t, &t->enq_count, 0, R_ENQ);
        return ADV_NOMEM;
      }
      *spare = NULL;
      atomic_store(&n->slots[0], (uint64_t)(uintptr_t)item); /* published by the CAS on next */
      loo_node *none = NULL;
      SYNCQ_STAT_INC(cas_attempts);
      if (atomic_compare_exchange_strong(&t->next, &none, n)) {
        atomic_fetch_add(&q->nodes_linked, 1);
        if (cas_while_node(&q->tail, &cur, word_of(n, 1), t))
          count_finished(t, &t->enq_count, (uint32_t)(idx_of(cur) - LOO_SLOTS), R_ENQ);
        else count_finished(t, &t->enq_count, 0, R_ENQ);
        return ADV_INSERTED;
      }
      SYNCQ_STAT_INC(cas_failures);
      atomic_store(&n->slots[0], 0); /* another node won: keep this one as a spare */
      *spare = n;
      continue;
    }
    if (cas_while_node(&q->tail, &cur, word_of(next, 1), t))
      count_finished(t, &t->enq_count, (uint32_t)(idx_of(cur) - LOO_SLOTS), R_ENQ);
    else count_finished(t, &t->enq_count, 0, R_ENQ);
    return ADV_MOVED;
  }
}

int syncq_queue_loo_enqueue(syncq_queue_loo *q, void *item) {
  if (q == NULL || item == NULL || q->magic != LOO_MAGIC) return SYNCQ_EINVAL;
  if (((uintptr_t)item & MARKS) != 0) return SYNCQ_EINVAL;
  loo_node *spare = NULL;
  int st = SYNCQ_OK;
  for (;;) {
    /* Deviation 2: a full node means a node will be needed; have it before
     * taking a ticket, or answer ENOMEM without one. */
    if (spare == NULL && idx_of(atomic_load(&q->tail)) >= LOO_SLOTS) {
      spare = node_new(q);
      if (spare == NULL) return SYNCQ_ENOMEM;
    }
    SYNCQ_RACE_POINT("queue.loo.enqueue.checked");
    const uint64_t cur = atomic_fetch_add(&q->tail, 1);
    loo_node *t = node_of(cur);
    const uint64_t i = idx_of(cur);
    if (i < LOO_SLOTS) { /* E4-E10: the slot is ours to write */
      SYNCQ_RACE_POINT("queue.loo.enqueue.ticket");
      const uint64_t before = atomic_fetch_add(&t->slots[i], (uint64_t)(uintptr_t)item);
      if (before <= RESUME) break; /* no dequeuer came first: the item is in */
      /* a dequeuer gave the slot up before we wrote: abandon it too; the
       * later of us two resumes a scan that waits on it */
      if (before == (READER | RESUME)) try_reclaim(t, (size_t)i + 1);
      continue;
    }
    adv_tail_res r = advance_tail(q, t, item, &spare);
    if (r == ADV_INSERTED) break;
    if (r == ADV_NOMEM) {
      st = SYNCQ_ENOMEM;
      break;
    }
  }
  if (spare != NULL) node_dealloc(spare); /* never linked: not counted */
  return st;
}

/* H1-H12: Head's node h is used up. Move Head to its successor, or answer
 * EMPTY if there is none that Tail has reached (Deviation 4: Tail read
 * now, not before the ticket). */
static bool advance_head(syncq_queue_loo *q, uint64_t cur, loo_node *h) {
  loo_node *next = atomic_load(&h->next);
  if (next == NULL || node_of(atomic_load(&q->tail)) == h) {
    count_finished(h, &h->deq_count, 0, R_DEQ);
    return false;
  }
  cur += 1; /* Head's value after our ticket */
  if (cas_while_node(&q->head, &cur, word_of(next, 0), h)) {
    /* Deviation 5: counted before our count can free h */
    atomic_fetch_add(&q->head_swings, 1);
    count_finished(h, &h->deq_count, (uint32_t)(idx_of(cur) - LOO_SLOTS), R_DEQ);
  } else count_finished(h, &h->deq_count, 0, R_DEQ);
  return true;
}

/* D6's test: Head at or past Tail, or past the end, in Tail's node. */
static inline bool looks_empty(uint64_t head, uint64_t tail) {
  return (idx_of(head) >= LOO_SLOTS || idx_of(head) >= idx_of(tail)) && node_of(head) == node_of(tail);
}

int syncq_queue_loo_dequeue(syncq_queue_loo *q, void **item) {
  if (q == NULL || item == NULL || q->magic != LOO_MAGIC) return SYNCQ_EINVAL;
  for (;;) {
    uint64_t h0 = atomic_load(&q->head);
    SYNCQ_RACE_POINT("queue.loo.dequeue.snapshot");
    uint64_t t0 = atomic_load(&q->tail);
    /* D6: EMPTY before taking a ticket, so idle polls do not move Head.
     * These loads only decide to take a ticket: h0's node may have been
     * freed and its address be Tail's node now (Deviation 5). */
    if (looks_empty(h0, t0)) {
      /* Deviation 5: EMPTY from a snapshot that Head's swing count,
       * unchanged around it, shows to be one */
      const uint64_t swings = atomic_load(&q->head_swings);
      h0 = atomic_load(&q->head);
      SYNCQ_RACE_POINT("queue.loo.dequeue.confirm");
      t0 = atomic_load(&q->tail);
      if (looks_empty(h0, t0)) {
        if (atomic_load(&q->head_swings) == swings) return SYNCQ_EMPTY;
        continue; /* Head moved to another node meanwhile (progress): read again */
      }
    }
    const uint64_t cur = atomic_fetch_add(&q->head, 1);
    loo_node *h = node_of(cur);
    const uint64_t i = idx_of(cur);
    if (i < LOO_SLOTS) { /* D9-D17: the slot is ours to read */
      SYNCQ_RACE_POINT("queue.loo.dequeue.ticket");
      const uint64_t before = atomic_fetch_add(&h->slots[i], READER);
      const uint64_t bits = before & ~MARKS;
      if (bits != 0) {
        if (before & RESUME) try_reclaim(h, (size_t)i + 1);
        *item = (void *)(uintptr_t)bits;
        return SYNCQ_OK;
      }
      continue; /* its enqueuer has not written: both abandon the slot */
    }
    /* the first dequeuer past the end starts the slot scan (Deviation 1) */
    if (i == LOO_SLOTS) try_reclaim(h, 0);
    if (!advance_head(q, cur, h)) return SYNCQ_EMPTY;
  }
}

uint64_t syncq_queue_loo_nodes_linked(const syncq_queue_loo *q) {
  return q == NULL ? 0 : atomic_load(&((syncq_queue_loo *)q)->nodes_linked);
}
uint64_t syncq_queue_loo_nodes_freed(const syncq_queue_loo *q) {
  return q == NULL ? 0 : atomic_load(&((syncq_queue_loo *)q)->nodes_freed);
}

SYNCQ_QUEUE_REGISTER_FIXED(loo, "loo", "LOO: linked nodes of fetch-and-add slots, freed deterministically",
                           "Giersch & Nolte 2022 (IEEE TPDS); measured by 004 §VI", LOCK_FREE,
                           SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES);
