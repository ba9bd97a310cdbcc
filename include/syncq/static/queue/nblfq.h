/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/static/queue/nblfq.h — NBLFQ (004 Algorithms 1-4) as static inline
 * bodies: liburcu's model, for programs that opt in by including this
 * header (no call, no indirect call; statistics only when SYNCQ_STATS is
 * 1, syncq/static/stats.h). syncq/queue/nblfq.h holds the declarations;
 * its exported functions and the registry's "nblfq" ops table are built
 * from these same bodies (src/queue/nblfq.c, whose contract block
 * applies: lock-free, one CAS per operation, async-signal-safe,
 * process-shared), and so is "nblfq2" (src/queue/nblfq2.c, double-width
 * cells).
 *
 * The algorithm (syncq_nbl_*) is written once for both cell
 * representations and every tag width: every function takes `tag_bits`
 * (2..16 for tagged cells, 64 for double-width cells) and is always
 * inlined into a caller that passes a constant, so the modular arithmetic
 * folds away. A cell is the pair (ptr, counter) of 004 §IV-B; ptr 0 is
 * NIL. The counter of a cell counts how many times it has been dequeued
 * (incremented only when a dequeue writes NIL, 004 §IV-C), modulo
 * W = 2^tag_bits.
 *
 * The typed queue (syncq_queue_nblfq_*_inline): 48+16-bit tagged cells on
 * storage of syncq_queue_nblfq_bytes(capacity) bytes initialised by
 * syncq_queue_nblfq_init (out of line). Storage that was never
 * initialised, or was destroyed, is refused with SYNCQ_EINVAL: init sets
 * a magic word beside the ring's mask, which every operation reads anyway
 * (one load of a line already being read). Bytes that happen to equal the
 * magic cannot be told apart. Beside it, the mask (S - 1) is read once per
 * operation (a relaxed atomic load into a local) and checked (syncq_nbl_mask_ok, and the magic, which init
 * stores XOR the mask) before it bounds an index: storage shared between
 * processes can have its header written by another one; a mask init
 * cannot have written, or one changed without the magic, is SYNCQ_EINVAL.
 *
 * Four named delay points, SYNCQ_RACE_POINT, each compiled only where a
 * race test's build defines that macro (as in every lock body; no
 * installed header defines it): "queue.nblfq.chase" between the two cell
 * reads of a chase step, "queue.nblfq.commit" between the end of the chase
 * and the commit CAS, "queue.nblfq.committed" between a successful
 * commit and the hint write (a thread preempted there writes a stale hint
 * when it resumes), and "queue.nblfq.torn" between the two loads of the
 * double-width enqueue's first read (syncq_nbl_put_first).
 */
#ifndef SYNCQ_STATIC_QUEUE_NBLFQ_H
#define SYNCQ_STATIC_QUEUE_NBLFQ_H

#include <stdbool.h>
#include <stdint.h>

#include "syncq/atomic.h"
#include "syncq/pr.h"
#include "syncq/queue/nblfq.h"
#include "syncq/static/stats.h"
#include "syncq/status.h"
#include "syncq/wait.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SYNCQ_NBL_INLINE static inline __attribute__((always_inline))

/* Tagged cells keep the pointer in the low 48 bits, the counter above. */
#define SYNCQ_NBL_PTR_BITS 48
#define SYNCQ_NBL_PTR_MASK ((UINT64_C(1) << SYNCQ_NBL_PTR_BITS) - 1)

typedef struct syncq_nbl_cell {
  uint64_t ptr; /* 0: NIL */
  uint64_t ctr; /* counter, < W */
} syncq_nbl_cell;

SYNCQ_NBL_INLINE syncq_nbl_cell syncq_nbl_mk(uint64_t ptr, uint64_t ctr) {
  syncq_nbl_cell c = {ptr, ctr};
  return c;
}

/* W - 1: the counter mask. */
SYNCQ_NBL_INLINE uint64_t syncq_nbl_wmask(unsigned tag_bits) {
  return tag_bits >= 64 ? UINT64_MAX : (UINT64_C(1) << tag_bits) - 1;
}

SYNCQ_NBL_INLINE bool syncq_nbl_same(syncq_nbl_cell a, syncq_nbl_cell b) { return a.ptr == b.ptr && a.ctr == b.ctr; }

/* syncq_nbl_same, written for the compiler: a tagged cell compares as the
 * one word it is stored as (the pair, rebuilt from a load, folds back to
 * the word loaded), one compare and no register for the fields. */
SYNCQ_NBL_INLINE bool syncq_nbl_eq(syncq_nbl_cell a, syncq_nbl_cell b, unsigned tag_bits) {
  if (tag_bits < 64) return (a.ptr | (a.ctr << SYNCQ_NBL_PTR_BITS)) == (b.ptr | (b.ctr << SYNCQ_NBL_PTR_BITS));
  return syncq_nbl_same(a, b);
}

/* A tagged cell is one word: the pointer in the low 48 bits, the counter
 * above. The first steps (syncq_nbl_put_first, syncq_nbl_take_first) work
 * on the words as loaded: split into fields, the compiler kept both
 * fields and the word alive across the CAS, more values than the
 * registers a function may use without saving them. */
SYNCQ_NBL_INLINE syncq_nbl_cell syncq_nbl_of_word(uint64_t w) {
  return syncq_nbl_mk(w & SYNCQ_NBL_PTR_MASK, w >> SYNCQ_NBL_PTR_BITS);
}

/* Read tagged cell i, as the word stored. */
SYNCQ_NBL_INLINE uint64_t syncq_nbl_load_word(void *cells, uint64_t i) {
  /* acquire: pairs with the seq_cst CAS (syncq_nbl_cas) that wrote the cell, so
   * an item read here was published before it was enqueued. */
  return atomic_load_explicit(&((_Atomic(uint64_t) *)cells)[i], memory_order_acquire);
}

/* Read cell i. The value is only a candidate: the commit CAS validates it.
 * Double-width cells are read counter, pointer, counter and re-read until
 * both counter reads agree: under one counter value a cell's pointer only
 * goes NIL -> item (a dequeue changes both words at once), so an agreeing
 * read is a pair that was in memory at the time of the pointer read. */
SYNCQ_NBL_INLINE syncq_nbl_cell syncq_nbl_load(void *cells, uint64_t i, unsigned tag_bits) {
  if (tag_bits < 64) return syncq_nbl_of_word(syncq_nbl_load_word(cells, i));
  syncq_pr_dw_atomic *a = (syncq_pr_dw_atomic *)cells;
  for (;;) {
    /* acquire (all three): pair with the seq_cst double-width CAS that wrote
     * the cell; acquire also keeps the three reads in program order. */
    uint64_t c1 = atomic_load_explicit(&a[i].hi, memory_order_acquire);
    uint64_t p = atomic_load_explicit(&a[i].lo, memory_order_acquire);
    uint64_t c2 = atomic_load_explicit(&a[i].hi, memory_order_acquire);
    if (c1 == c2) return syncq_nbl_mk(p, c1);
  }
}

/* The commit on a tagged cell, as words (syncq_nbl_cas). */
SYNCQ_NBL_INLINE bool syncq_nbl_cas_word(void *cells, uint64_t i, uint64_t expect, uint64_t desire) {
  return atomic_compare_exchange_strong(&((_Atomic(uint64_t) *)cells)[i], &expect, desire);
}

/* The commit: CAS cell i from `expect` to `desire`, seq_cst (a full
 * barrier, as the paper's __sync_bool_compare_and_swap). */
SYNCQ_NBL_INLINE bool syncq_nbl_cas(void *cells, uint64_t i, syncq_nbl_cell expect, syncq_nbl_cell desire,
                                    unsigned tag_bits) {
  if (tag_bits < 64)
    return syncq_nbl_cas_word(cells, i, expect.ptr | (expect.ctr << SYNCQ_NBL_PTR_BITS),
                              desire.ptr | (desire.ctr << SYNCQ_NBL_PTR_BITS));
  syncq_pr_dw_atomic *a = (syncq_pr_dw_atomic *)cells;
  syncq_pr_dw e = {expect.ptr, expect.ctr};
  syncq_pr_dw d = {desire.ptr, desire.ctr};
  return syncq_pr_dwcas(&a[i], &e, d);
}

/* Initialise S cells to (NIL, 0) (Algorithm 1). Plain initialisation: the
 * queue is published to other threads by whatever hands them its address. */
SYNCQ_NBL_INLINE void syncq_nbl_init_cells(void *cells, uint64_t S, unsigned tag_bits) {
  if (tag_bits < 64) {
    _Atomic(uint64_t) *a = (_Atomic(uint64_t) *)cells;
    for (uint64_t i = 0; i < S; i++) atomic_init(&a[i], 0);
  } else {
    syncq_pr_dw_atomic *a = (syncq_pr_dw_atomic *)cells;
    for (uint64_t i = 0; i < S; i++) {
      atomic_init(&a[i].lo, 0);
      atomic_init(&a[i].hi, 0);
    }
  }
}

/* Is `mask` one that init writes, S - 1 for a power of two 2 <= S <=
 * max_cells? The ring's storage may be shared with other processes, which
 * can write its header: the mask bounds every cell index and the chase
 * loops, so each operation reads it once, checks it here and passes only
 * that copy on. One compare and a test of the same word. */
SYNCQ_NBL_INLINE bool syncq_nbl_mask_ok(uint64_t mask, uint64_t max_cells) {
  return mask - 1u < max_cells - 1u && (mask & (mask + 1u)) == 0;
}

/* Algorithm 2, COMP(i, u, j, v): is cell u (index i) logically before cell
 * v (index j)? 1 yes, 0 no, -1 ambiguous.
 *
 * In a consistent ring the counters of two neighbours differ by 0 or +-1
 * (004 §V-A invariant: s_k = k + c_k S rises by one per cell except at the
 * tail). The paper's test ((v - u) mod W) < W/2 is exact for those; any
 * other distance means the two reads were made at different times across
 * several rounds (a stale read; with a small tag, possibly a wrap-around),
 * and no order can be trusted: the caller retries from scratch and counts
 * it (stats: retries). */
SYNCQ_NBL_INLINE int syncq_nbl_comp(uint64_t i, syncq_nbl_cell u, uint64_t j, syncq_nbl_cell v, unsigned tag_bits) {
  if (u.ctr == v.ctr) return i < j;
  uint64_t d = (v.ctr - u.ctr) & syncq_nbl_wmask(tag_bits);
  if (d == 1) return 1;
  if (d == syncq_nbl_wmask(tag_bits)) return 0;
  return -1;
}

/* After a lost commit CAS: 8 * 2^k pauses for the k-th loss of this
 * operation (k from 0), at most 512: crossbeam-utils' Backoff::spin
 * schedule (1, 2, ..., 64 pauses, which crossbeam's ArrayQueue waits with
 * after a lost CAS) times 8. The winner has just taken the line of the
 * cell and goes on to the next cell, on the same line; the loser's retry
 * reads that line (its chase) before its CAS, so each retry takes the line
 * from the winner twice. A loser that waited 1 pause first still had two
 * threads of one side on two cores move items at 24 ns each, against 11
 * with 8 pauses (40 with none; ArrayQueue 9-13): the winner needs the
 * time of a few operations with its lines to itself (docs/queues.md, "Under
 * preemption"). Pauses only: signal-safe, no clock; the wait in time
 * depends on the processor's pause (about 23 ns on the development
 * machine's AMD EPYC). Out of line and cold: only a lost CAS calls it,
 * and the operations' fast path keeps its code. */
#define SYNCQ_NBL_BACKOFF_FIRST_LOG2 3 /* first wait: 8 pauses */
#define SYNCQ_NBL_BACKOFF_STEPS 6      /* doubled at most 6 times: 512 pauses */
static __attribute__((noinline, cold, unused)) void syncq_nbl_backoff(uint32_t *k) {
  for (uint32_t i = 0; i < (UINT32_C(1) << (*k + SYNCQ_NBL_BACKOFF_FIRST_LOG2)); i++) syncq_pr_relax();
  if (*k < SYNCQ_NBL_BACKOFF_STEPS) ++*k;
}

/* The general paths of Algorithms 3 and 4 are out of line (noinline;
 * GCC clones them for the constant tag width of their callers): only a
 * chase that moves, a lost CAS, an ambiguous or inconsistent read reaches
 * them. The operations (syncq_nbl_enqueue, syncq_nbl_dequeue) first take
 * the chase's first step inline at the hint: two cell reads, and where
 * that step is the last (the hint right) the CAS and the hint write, or
 * the validated FULL or EMPTY. That code needs few registers and no
 * stack slot or backoff counter, which the general loop's code, inlined,
 * made every call pay (docs/queues.md, "NBLFQ's one-thread latency").
 * What the first step concludes when it does not commit (FULL, EMPTY, or
 * where the general path goes on) is drawn by syncq_nbl_enqueue_miss and
 * syncq_nbl_dequeue_miss, which the typed queues call out of line, last.
 * Together they draw only the conclusions the general path draws from
 * the same two reads, and count what it counts; otherwise the general
 * path goes on from the same cell (reading it again), or from the hint
 * read again where the general path would retry. */
#define SYNCQ_NBL_SLOW static __attribute__((noinline, unused))

/* The first step of an operation (syncq_nbl_put_first,
 * syncq_nbl_take_first) answers SYNCQ_OK, or one of these: it did not
 * commit (its reads go to syncq_nbl_enqueue_miss or syncq_nbl_dequeue_miss,
 * which conclude FULL, EMPTY or go on to the general path), or its CAS
 * lost (the general path goes on from the cell lost). A caller can then
 * make its call of either its last act and keep no register across it
 * (syncq_queue_nblfq_enqueue_inline). Status and out-parameters, not a
 * struct returned by value: GenMC's interpreter (models/genmc) has no
 * constants of structure type. */
#define SYNCQ_NBL_CHASE 100
#define SYNCQ_NBL_CHASE_LOST 101

/* Algorithm 3 from cell `h` (the hint, or after a lost CAS the cell lost:
 * `lost`, which first waits, deviation 6). `item` is the non-NULL pointer
 * bits (checked by the caller to fit the cell). head is the
 * non-authoritative hint. */
SYNCQ_NBL_SLOW int syncq_nbl_enqueue_slow(void *cells, uint64_t mask, _Atomic(uint64_t) *head, uint64_t item,
                                          uint64_t h, bool lost, unsigned tag_bits) {
  const uint64_t wmask = syncq_nbl_wmask(tag_bits);
  uint32_t backoff = 0;
  if (lost) {
    SYNCQ_STAT_INC(cas_failures);
    syncq_nbl_backoff(&backoff);
  }
  for (;;) {
    const uint64_t h0 = h; /* where this chase starts: FULL writes the hint only if it moved */
    syncq_nbl_cell u, p;
    uint64_t steps = 0;
    bool commit = false;
    for (;;) { /* chase head (lines 4-20) */
      u = syncq_nbl_load(cells, h, tag_bits);
#ifdef SYNCQ_RACE_POINT
      SYNCQ_RACE_POINT("queue.nblfq.chase");
#endif
      p = syncq_nbl_load(cells, (h + mask) & mask, tag_bits);
      if (p.ptr != 0 && u.ptr == 0) { /* empty cell after a non-empty one */
        commit = true;
        break;
      }
      int before = syncq_nbl_comp((h + mask) & mask, p, h, u, tag_bits);
      if (before < 0) break;            /* ambiguous: retry */
      if (!before) {                    /* found the step */
        if (p.ptr == 0 && u.ptr == 0) { /* empty queue */
          commit = true;
          break;
        }
        if (p.ptr != 0 && u.ptr != 0) {
          /* Full, if p and u were in memory together: u unchanged after p
           * was read means they were (a deviation from line 16, which trusts
           * two reads made at different times; without it a FULL could be
           * returned that no linearization explains). */
          if (syncq_nbl_same(syncq_nbl_load(cells, h, tag_bits), u)) {
            /* Line 15, only when the chase moved: producers polling a full
             * queue would otherwise each take the hint's line exclusive on
             * every try (a store storm that slows the enqueue that
             * succeeds once a consumer frees a cell). */
            if (h != h0) atomic_store_explicit(head, h, memory_order_relaxed); /* relaxed: hint */
            return SYNCQ_FULL;
          }
          break; /* changed under us: retry */
        }
        /* p non-empty and u empty here is impossible (caught above); p
         * empty, u non-empty: the tail of the data, walk on to its end. */
      }
      h = (h + 1) & mask;
      if (++steps > 2 * (mask + 1)) break; /* the ring moved under us: retry */
    }
    if (!commit) {
      SYNCQ_STAT_INC(retries);
      h = atomic_load_explicit(head, memory_order_relaxed) & mask; /* relaxed: hint, as above */
      continue;
    }
    uint64_t c = p.ctr;                      /* lines 21-27: the counter the head cell holds */
    if (p.ptr == 0) c = (c + wmask) & wmask; /* empty: p was the last dequeued */
    if (h == 0) c = (c + 1) & wmask;         /* wrapping around the ring */
#ifdef SYNCQ_RACE_POINT
    SYNCQ_RACE_POINT("queue.nblfq.commit");
#endif
    SYNCQ_STAT_INC(cas_attempts);
    if (syncq_nbl_cas(cells, h, syncq_nbl_mk(0, c), syncq_nbl_mk(item, c), tag_bits)) {
#ifdef SYNCQ_RACE_POINT
      SYNCQ_RACE_POINT("queue.nblfq.committed");
#endif
      atomic_store_explicit(head, (h + 1) & mask, memory_order_relaxed); /* relaxed: hint */
      return SYNCQ_OK;
    }
    /* Lost to another enqueue, which filled cell h: chase on from h, not
     * from the hint (its writer may not have moved it yet), after a
     * bounded pause (deviation 6, see src/queue/nblfq.c). */
    SYNCQ_STAT_INC(cas_failures);
    syncq_nbl_backoff(&backoff);
  }
}

/* Algorithm 3: the first step of the chase, at the hint h. It commits
 * only where the general path's first step would (u empty and holding the
 * counter lines 21-27 compute from p; with the hint right, p holds the
 * last item, or is the last dequeued cell of an empty queue) and with the
 * same expected cell; a u holding another counter goes to
 * syncq_nbl_enqueue_miss, where the CAS would have failed. Written out:
 * u.ptr is NIL and u.ctr == p.ctr - [p.ptr NIL] + [h == 0] (mod W). With
 * p empty, that u is exactly the step COMP finds (Algorithm 2: u.ctr ==
 * p.ctr - 1, or equal counters across the wrap at h = 0).
 * Answers SYNCQ_OK; SYNCQ_NBL_CHASE when it did not commit (*at, *uo and
 * *po hold h and the two reads, for syncq_nbl_enqueue_miss); or
 * SYNCQ_NBL_CHASE_LOST when the CAS at cell *at lost. The caller's
 * handling of the last two is a call it makes last: the common path
 * keeps no value past the CAS but h, and no register across a call. */
SYNCQ_NBL_INLINE int syncq_nbl_put_first(void *cells, uint64_t mask, _Atomic(uint64_t) *head, uint64_t item,
                                         uint64_t *at, syncq_nbl_cell *uo, syncq_nbl_cell *po, unsigned tag_bits) {
  const uint64_t wmask = syncq_nbl_wmask(tag_bits);
  /* relaxed: a hint only; whatever it says is validated by the CAS. */
  const uint64_t h = atomic_load_explicit(head, memory_order_relaxed) & mask;
  *at = h;
  if (tag_bits < 64) { /* on the words (syncq_nbl_of_word) */
    const uint64_t u = syncq_nbl_load_word(cells, h);
#ifdef SYNCQ_RACE_POINT
    SYNCQ_RACE_POINT("queue.nblfq.chase");
#endif
    const uint64_t p = syncq_nbl_load_word(cells, (h + mask) & mask);
    /* (p + PTR_MASK) >> PTR_BITS is p.ctr + [p.ptr not NIL]: the counter
     * the cell after p holds, as above, is that - 1 + [h == 0]. */
    const uint64_t c = ((((p + SYNCQ_NBL_PTR_MASK) >> SYNCQ_NBL_PTR_BITS) + (h == 0) - 1) & wmask)
                       << SYNCQ_NBL_PTR_BITS;
    if (__builtin_expect(u != c, 0)) {
      *uo = syncq_nbl_of_word(u);
      *po = syncq_nbl_of_word(p);
      return SYNCQ_NBL_CHASE;
    }
#ifdef SYNCQ_RACE_POINT
    SYNCQ_RACE_POINT("queue.nblfq.commit");
#endif
    SYNCQ_STAT_INC(cas_attempts);
    if (__builtin_expect(!syncq_nbl_cas_word(cells, h, c, c | item), 0)) return SYNCQ_NBL_CHASE_LOST;
  } else {
    /* Double-width cells: u as counter, then pointer, two loads where a
     * cell read is three; the pair need not be one that was in memory.
     * The commit needs no more: a CAS that finds (NIL, c) after a counter
     * read of c finds the counter unchanged since (counters only rise),
     * so the pointer was NIL throughout (under one counter it only goes
     * NIL -> item) and the pair read was in memory. What the miss path
     * concludes from u, FULL, it validates with a whole read of u that
     * must give the same pair, which makes the pair one that was in
     * memory when p was read (src/queue/nblfq2.c, contract). acquire
     * (both): pair with the seq_cst double-width CAS that wrote the cell,
     * and keep the counter read before the pointer read. */
    syncq_pr_dw_atomic *a = (syncq_pr_dw_atomic *)cells;
    const uint64_t uc = atomic_load_explicit(&a[h].hi, memory_order_acquire);
#ifdef SYNCQ_RACE_POINT
    SYNCQ_RACE_POINT("queue.nblfq.torn");
#endif
    const syncq_nbl_cell u = syncq_nbl_mk(atomic_load_explicit(&a[h].lo, memory_order_acquire), uc);
#ifdef SYNCQ_RACE_POINT
    SYNCQ_RACE_POINT("queue.nblfq.chase");
#endif
    const syncq_nbl_cell p = syncq_nbl_load(cells, (h + mask) & mask, tag_bits);
    const uint64_t c = (p.ctr - (p.ptr == 0) + (h == 0)) & wmask;
    if (__builtin_expect(!syncq_nbl_same(u, syncq_nbl_mk(0, c)), 0)) {
      *uo = u;
      *po = p;
      return SYNCQ_NBL_CHASE;
    }
#ifdef SYNCQ_RACE_POINT
    SYNCQ_RACE_POINT("queue.nblfq.commit");
#endif
    SYNCQ_STAT_INC(cas_attempts);
    if (__builtin_expect(!syncq_nbl_cas(cells, h, syncq_nbl_mk(0, c), syncq_nbl_mk(item, c), tag_bits), 0))
      return SYNCQ_NBL_CHASE_LOST;
  }
#ifdef SYNCQ_RACE_POINT
  SYNCQ_RACE_POINT("queue.nblfq.committed");
#endif
  atomic_store_explicit(head, (h + 1) & mask, memory_order_relaxed); /* relaxed: hint */
  return SYNCQ_OK;
}

/* Algorithm 3 after a first step at h that did not commit, from its reads
 * u and p (syncq_nbl_put_first's SYNCQ_NBL_CHASE). Line 7's test first
 * (it commits whatever the counters say, in the general path); then a
 * full ring at the step is FULL once u reads the same again (the general
 * path's validation; the chase did not move: no hint write), so that
 * producers polling a full ring read three cells, not five. Otherwise the
 * general path goes on from h; from the hint read again after an
 * ambiguous pair or a FULL that did not validate (a retry, counted as
 * there). */
SYNCQ_NBL_INLINE int syncq_nbl_enqueue_miss(void *cells, uint64_t mask, _Atomic(uint64_t) *head, uint64_t item,
                                            uint64_t h, syncq_nbl_cell u, syncq_nbl_cell p, unsigned tag_bits) {
  uint64_t from = h;
  if (!(p.ptr != 0 && u.ptr == 0)) {
    const int before = syncq_nbl_comp((h + mask) & mask, p, h, u, tag_bits);
    if (before == 0 && p.ptr != 0 && u.ptr != 0 && syncq_nbl_eq(syncq_nbl_load(cells, h, tag_bits), u, tag_bits))
      return SYNCQ_FULL;
    if (before < 0 || (before == 0 && p.ptr != 0 && u.ptr != 0)) {
      SYNCQ_STAT_INC(retries);
      from = atomic_load_explicit(head, memory_order_relaxed) & mask; /* relaxed: hint, as above */
    }
  }
  return syncq_nbl_enqueue_slow(cells, mask, head, item, from, false, tag_bits);
}

/* Algorithm 3: the first step, then what its answer asks for. */
SYNCQ_NBL_INLINE int syncq_nbl_enqueue(void *cells, uint64_t mask, _Atomic(uint64_t) *head, uint64_t item,
                                       unsigned tag_bits) {
  uint64_t h;
  syncq_nbl_cell u, p;
  const int r = syncq_nbl_put_first(cells, mask, head, item, &h, &u, &p, tag_bits);
  if (__builtin_expect(r == SYNCQ_OK, 1)) return r;
  if (r == SYNCQ_NBL_CHASE) return syncq_nbl_enqueue_miss(cells, mask, head, item, h, u, p, tag_bits);
  return syncq_nbl_enqueue_slow(cells, mask, head, item, h, true, tag_bits); /* lost cell h */
}

/* Algorithm 4 from cell `t` (the hint, or after a lost CAS the cell lost:
 * `lost`, which first waits). On SYNCQ_OK *item holds the pointer bits. */
SYNCQ_NBL_SLOW int syncq_nbl_dequeue_slow(void *cells, uint64_t mask, _Atomic(uint64_t) *tail, uint64_t *item,
                                          uint64_t t, bool lost, unsigned tag_bits) {
  const uint64_t wmask = syncq_nbl_wmask(tag_bits);
  uint32_t backoff = 0;
  if (lost) {
    SYNCQ_STAT_INC(cas_failures);
    syncq_nbl_backoff(&backoff);
  }
  for (;;) {
    const uint64_t t0 = t; /* where this chase starts: EMPTY writes the hint only if it moved */
    syncq_nbl_cell p = syncq_nbl_load(cells, (t + mask) & mask, tag_bits);
#ifdef SYNCQ_RACE_POINT
    SYNCQ_RACE_POINT("queue.nblfq.chase");
#endif
    syncq_nbl_cell u = syncq_nbl_load(cells, t, tag_bits);
    uint64_t steps = 0;
    bool ok = true;
    for (;;) { /* chase tail (lines 6-10): find the counter's step down */
      int before = syncq_nbl_comp((t + mask) & mask, p, t, u, tag_bits);
      if (before < 0 || ++steps > 2 * (mask + 1)) {
        ok = false; /* ambiguous, or the ring moved under us: retry */
        break;
      }
      if (!before) break;
      t = (t + 1) & mask;
      p = u;
#ifdef SYNCQ_RACE_POINT
      SYNCQ_RACE_POINT("queue.nblfq.chase");
#endif
      u = syncq_nbl_load(cells, t, tag_bits);
    }
    if (ok && u.ptr == 0) {
      /* Lines 11-13, empty. Validated like FULL: p unchanged after u was
       * read means both were in memory together, and a consistent step
       * with an empty tail cell is an empty queue. An empty u under a
       * non-empty p is an inconsistent read (the paper would CAS an empty
       * cell here): retry. */
      if (p.ptr == 0 && syncq_nbl_same(syncq_nbl_load(cells, (t + mask) & mask, tag_bits), p)) {
        /* 004 writes nothing here (Algorithm 4, line 12); the hint is
         * written when the chase moved, so the next poll starts at the
         * tail, never on a poll that found it in place: consumers polling
         * an empty queue read the hint's line and leave it shared. */
        if (t != t0) atomic_store_explicit(tail, t, memory_order_relaxed); /* relaxed: hint */
        return SYNCQ_EMPTY;
      }
      ok = false;
    }
    if (!ok) {
      SYNCQ_STAT_INC(retries);
      t = atomic_load_explicit(tail, memory_order_relaxed) & mask; /* relaxed: hint, as above */
      continue;
    }
    syncq_nbl_cell nil = {0, (u.ctr + 1) & wmask}; /* line 14 */
#ifdef SYNCQ_RACE_POINT
    SYNCQ_RACE_POINT("queue.nblfq.commit");
#endif
    SYNCQ_STAT_INC(cas_attempts);
    if (syncq_nbl_cas(cells, t, u, nil, tag_bits)) {
#ifdef SYNCQ_RACE_POINT
      SYNCQ_RACE_POINT("queue.nblfq.committed");
#endif
      atomic_store_explicit(tail, (t + 1) & mask, memory_order_relaxed); /* relaxed: hint */
      *item = u.ptr;
      return SYNCQ_OK;
    }
    /* Lost to another dequeue, which took cell t: chase on from t after a
     * bounded pause (deviation 6, as in enqueue). */
    SYNCQ_STAT_INC(cas_failures);
    syncq_nbl_backoff(&backoff);
  }
}

/* Algorithm 4: the first step of the chase, at the hint t. The step is
 * where COMP(t - 1, p, t, u) answers "not before" (Algorithm 2): u.ctr ==
 * p.ctr - 1, or equal counters across the wrap at t = 0, here u.ctr + [t
 * != 0] == p.ctr (mod W). A step at a full u commits (lines 14-15):
 * SYNCQ_OK, the item's pointer bits in *bits. Anything else is
 * SYNCQ_NBL_CHASE (*bits, *uo and *po hold t and the two reads, for
 * syncq_nbl_dequeue_miss) or SYNCQ_NBL_CHASE_LOST (the CAS at cell *bits
 * lost), each handled by a call the caller makes last, as in
 * syncq_nbl_put_first. */
SYNCQ_NBL_INLINE int syncq_nbl_take_first(void *cells, uint64_t mask, _Atomic(uint64_t) *tail, uint64_t *bits,
                                          syncq_nbl_cell *uo, syncq_nbl_cell *po, unsigned tag_bits) {
  const uint64_t wmask = syncq_nbl_wmask(tag_bits);
  /* relaxed: a hint only; whatever it says is validated by the CAS. */
  const uint64_t t = atomic_load_explicit(tail, memory_order_relaxed) & mask;
  *bits = t;
  if (tag_bits < 64) { /* on the words (syncq_nbl_of_word) */
    const uint64_t p = syncq_nbl_load_word(cells, (t + mask) & mask);
#ifdef SYNCQ_RACE_POINT
    SYNCQ_RACE_POINT("queue.nblfq.chase");
#endif
    const uint64_t u = syncq_nbl_load_word(cells, t);
    /* u's counter plus [t != 0], the carry out of the counter cleared (none
     * with 16 bits: it leaves the word), against p's; and u's pointer. */
    const uint64_t k =
      (u + ((uint64_t)(t != 0) << SYNCQ_NBL_PTR_BITS)) & (wmask << SYNCQ_NBL_PTR_BITS | SYNCQ_NBL_PTR_MASK);
    const uint64_t item_up = u << (64 - SYNCQ_NBL_PTR_BITS); /* the pointer, shifted up: the test and the item */
    if (__builtin_expect((k ^ p) >> SYNCQ_NBL_PTR_BITS != 0 || item_up == 0, 0)) {
      *uo = syncq_nbl_of_word(u);
      *po = syncq_nbl_of_word(p);
      return SYNCQ_NBL_CHASE;
    }
#ifdef SYNCQ_RACE_POINT
    SYNCQ_RACE_POINT("queue.nblfq.commit");
#endif
    SYNCQ_STAT_INC(cas_attempts);
    const uint64_t nil = (((u >> SYNCQ_NBL_PTR_BITS) + 1) & wmask) << SYNCQ_NBL_PTR_BITS; /* line 14 */
    if (__builtin_expect(!syncq_nbl_cas_word(cells, t, u, nil), 0)) return SYNCQ_NBL_CHASE_LOST;
#ifdef SYNCQ_RACE_POINT
    SYNCQ_RACE_POINT("queue.nblfq.committed");
#endif
    atomic_store_explicit(tail, (t + 1) & mask, memory_order_relaxed); /* relaxed: hint */
    *bits = item_up >> (64 - SYNCQ_NBL_PTR_BITS);
    return SYNCQ_OK;
  }
  /* Double-width cells: of p, the counter alone, one load where a cell
   * read is three. The step and the commit use no more of p; its pointer
   * matters only to EMPTY, which syncq_nbl_dequeue_miss concludes from a
   * later read of p that finds (NIL, this counter): under one counter a
   * cell's pointer only goes NIL -> item, so p held NIL here too, and
   * throughout (an item taken out of p would have moved its counter).
   * *po goes out with that NIL pointer, the one the test can pass with. */
  /* acquire: pairs with the double-width CAS that wrote the counter, and
   * keeps this read before u's, as the first load of a cell read. */
  const syncq_nbl_cell p =
    syncq_nbl_mk(0, atomic_load_explicit(&((syncq_pr_dw_atomic *)cells)[(t + mask) & mask].hi, memory_order_acquire));
#ifdef SYNCQ_RACE_POINT
  SYNCQ_RACE_POINT("queue.nblfq.chase");
#endif
  const syncq_nbl_cell u = syncq_nbl_load(cells, t, tag_bits);
  if (__builtin_expect(((u.ctr + (t != 0) - p.ctr) & wmask) != 0 || u.ptr == 0, 0)) {
    *uo = u;
    *po = p;
    return SYNCQ_NBL_CHASE;
  }
#ifdef SYNCQ_RACE_POINT
  SYNCQ_RACE_POINT("queue.nblfq.commit");
#endif
  SYNCQ_STAT_INC(cas_attempts);
  if (__builtin_expect(!syncq_nbl_cas(cells, t, u, syncq_nbl_mk(0, (u.ctr + 1) & wmask), tag_bits), 0))
    return SYNCQ_NBL_CHASE_LOST;
#ifdef SYNCQ_RACE_POINT
  SYNCQ_RACE_POINT("queue.nblfq.committed");
#endif
  atomic_store_explicit(tail, (t + 1) & mask, memory_order_relaxed); /* relaxed: hint */
  *bits = u.ptr;
  return SYNCQ_OK;
}

/* Algorithm 4 after a first step at t that did not commit, from its reads
 * p and u (syncq_nbl_take_first's SYNCQ_NBL_CHASE). No step at t: the
 * general path goes on from t; from the hint read again after an
 * ambiguous pair (a retry, counted as there). A step at an empty u under
 * an empty p is EMPTY once p reads the same again (the validation of the
 * general path; the chase did not move, so no hint write); under a full
 * p it is an inconsistent read: a retry from the hint, as the general
 * path. On SYNCQ_OK *item holds the pointer bits. */
SYNCQ_NBL_INLINE int syncq_nbl_dequeue_miss(void *cells, uint64_t mask, _Atomic(uint64_t) *tail, uint64_t *item,
                                            uint64_t t, syncq_nbl_cell u, syncq_nbl_cell p, unsigned tag_bits) {
  const uint64_t wmask = syncq_nbl_wmask(tag_bits);
  uint64_t from = t;
  if (((u.ctr + (t != 0)) & wmask) != p.ctr) {
    if (syncq_nbl_comp((t + mask) & mask, p, t, u, tag_bits) < 0) {
      SYNCQ_STAT_INC(retries);
      from = atomic_load_explicit(tail, memory_order_relaxed) & mask; /* relaxed: hint, as above */
    }
  } else { /* the step, at an empty u */
    if (p.ptr == 0 && syncq_nbl_eq(syncq_nbl_load(cells, (t + mask) & mask, tag_bits), p, tag_bits)) return SYNCQ_EMPTY;
    SYNCQ_STAT_INC(retries);
    from = atomic_load_explicit(tail, memory_order_relaxed) & mask; /* relaxed: hint, as above */
  }
  return syncq_nbl_dequeue_slow(cells, mask, tail, item, from, false, tag_bits);
}

/* Algorithm 4: the first step, then what its answer asks for. On
 * SYNCQ_OK *item holds the pointer bits. */
SYNCQ_NBL_INLINE int syncq_nbl_dequeue(void *cells, uint64_t mask, _Atomic(uint64_t) *tail, uint64_t *item,
                                       unsigned tag_bits) {
  uint64_t bits;
  syncq_nbl_cell u, p;
  const int r = syncq_nbl_take_first(cells, mask, tail, &bits, &u, &p, tag_bits);
  if (__builtin_expect(r == SYNCQ_OK, 1)) {
    *item = bits;
    return r;
  }
  if (r == SYNCQ_NBL_CHASE) return syncq_nbl_dequeue_miss(cells, mask, tail, item, bits, u, p, tag_bits);
  return syncq_nbl_dequeue_slow(cells, mask, tail, item, bits, true, tag_bits); /* lost cell t */
}

/* ------------------------------------------------- the typed queue */

/* Counter bits of a cell: 64 - SYNCQ_NBL_PTR_BITS. */
#define SYNCQ_QUEUE_NBLFQ_TAG_BITS 16
/* "NBLFQ16": init sets syncq_queue_nblfq.magic to it XOR the mask, destroy
 * clears it. Bound to the mask, so a mask changed alone (one bit flipped
 * into another well-formed size, past the storage) no longer matches. */
#define SYNCQ_QUEUE_NBLFQ_MAGIC UINT64_C(0x4e424c4651313600)

/* The most cells syncq_queue_nblfq_bytes accepts (its size fits size_t). */
#define SYNCQ_QUEUE_NBLFQ_MAX_CELLS ((uint64_t)((SIZE_MAX - sizeof(syncq_queue_nblfq)) / sizeof(uint64_t)))

static inline void *syncq_queue_nblfq_cells_inline(syncq_queue_nblfq *q) { return (void *)(q + 1); }

/* A tagged cell as the word it is stored as, and back (64 - 48 = 16
 * counter bits: the typed queue's cells). */
static inline uint64_t syncq_queue_nblfq_word_(syncq_nbl_cell c) { return c.ptr | (c.ctr << SYNCQ_NBL_PTR_BITS); }
static inline syncq_nbl_cell syncq_queue_nblfq_cell_(uint64_t w) {
  return syncq_nbl_mk(w & SYNCQ_NBL_PTR_MASK, w >> SYNCQ_NBL_PTR_BITS);
}

/* The typed queue's calls out of its first step, out of line: each is the
 * operation's last act, with its arguments in registers (at most six
 * words), so the first step needs no register saved across a call, no
 * stack frame, and nothing live past its CAS but the cell index: cells
 * and hint are found again from q, the reads passed as words. */
static __attribute__((noinline, unused)) int syncq_queue_nblfq_enqueue_miss_(syncq_queue_nblfq *q, uint64_t bits,
                                                                             uint64_t mask, uint64_t h, uint64_t u,
                                                                             uint64_t p) {
  return syncq_nbl_enqueue_miss(syncq_queue_nblfq_cells_inline(q), mask, &q->head, bits, h, syncq_queue_nblfq_cell_(u),
                                syncq_queue_nblfq_cell_(p), SYNCQ_QUEUE_NBLFQ_TAG_BITS);
}
static __attribute__((noinline, unused)) int syncq_queue_nblfq_enqueue_lost_(syncq_queue_nblfq *q, uint64_t bits,
                                                                             uint64_t mask, uint64_t h) {
  return syncq_nbl_enqueue_slow(syncq_queue_nblfq_cells_inline(q), mask, &q->head, bits, h, true,
                                SYNCQ_QUEUE_NBLFQ_TAG_BITS);
}
static __attribute__((noinline, unused)) int syncq_queue_nblfq_dequeue_miss_(syncq_queue_nblfq *q, void **item,
                                                                             uint64_t mask, uint64_t t, uint64_t u,
                                                                             uint64_t p) {
  uint64_t bits;
  const int r =
    syncq_nbl_dequeue_miss(syncq_queue_nblfq_cells_inline(q), mask, &q->tail, &bits, t, syncq_queue_nblfq_cell_(u),
                           syncq_queue_nblfq_cell_(p), SYNCQ_QUEUE_NBLFQ_TAG_BITS);
  if (r == SYNCQ_OK) *item = (void *)(uintptr_t)bits;
  return r;
}
static __attribute__((noinline, unused)) int syncq_queue_nblfq_dequeue_lost_(syncq_queue_nblfq *q, void **item,
                                                                             uint64_t mask, uint64_t t) {
  uint64_t bits;
  const int r = syncq_nbl_dequeue_slow(syncq_queue_nblfq_cells_inline(q), mask, &q->tail, &bits, t, true,
                                       SYNCQ_QUEUE_NBLFQ_TAG_BITS);
  if (r == SYNCQ_OK) *item = (void *)(uintptr_t)bits;
  return r;
}

/* SYNCQ_OK or SYNCQ_FULL; SYNCQ_EINVAL for a NULL or uninitialised queue,
 * a NULL item or one beyond 48 bits, or a mask init cannot have written
 * (another process wrote over the shared header). The caller guarantees
 * the storage holds SYNCQ_QUEUE_NBLFQ_BYTES(capacity) for that mask. */
static inline int syncq_queue_nblfq_enqueue_inline(syncq_queue_nblfq *q, void *item) {
  uint64_t bits = (uint64_t)(uintptr_t)item;
  if (q == NULL || bits - 1u >= SYNCQ_NBL_PTR_MASK) return SYNCQ_EINVAL; /* NULL, or beyond 48 bits */
  /* relaxed (both): header words init wrote before the queue was handed to
   * its users (the creator's publication orders them). One load each, into
   * a local: the mask checked is the mask used, whatever another process
   * writes meanwhile (a plain field could be loaded again after the check). */
  const uint64_t mask = atomic_load_explicit(&q->mask, memory_order_relaxed);
  if ((atomic_load_explicit(&q->magic, memory_order_relaxed) ^ mask) != SYNCQ_QUEUE_NBLFQ_MAGIC ||
      !syncq_nbl_mask_ok(mask, SYNCQ_QUEUE_NBLFQ_MAX_CELLS))
    return SYNCQ_EINVAL;
  uint64_t h;
  syncq_nbl_cell u, p;
  const int r = syncq_nbl_put_first(syncq_queue_nblfq_cells_inline(q), mask, &q->head, bits, &h, &u, &p,
                                    SYNCQ_QUEUE_NBLFQ_TAG_BITS);
  if (__builtin_expect(r == SYNCQ_OK, 1)) return r;
  if (r == SYNCQ_NBL_CHASE)
    return syncq_queue_nblfq_enqueue_miss_(q, bits, mask, h, syncq_queue_nblfq_word_(u), syncq_queue_nblfq_word_(p));
  return syncq_queue_nblfq_enqueue_lost_(q, bits, mask, h);
}

/* SYNCQ_OK with *item set, or SYNCQ_EMPTY; SYNCQ_EINVAL for NULL, an
 * uninitialised queue or a mask init cannot have written (as enqueue). */
static inline int syncq_queue_nblfq_dequeue_inline(syncq_queue_nblfq *q, void **item) {
  if (q == NULL || item == NULL) return SYNCQ_EINVAL;
  const uint64_t mask = atomic_load_explicit(&q->mask, memory_order_relaxed); /* relaxed: as in enqueue */
  if ((atomic_load_explicit(&q->magic, memory_order_relaxed) ^ mask) != SYNCQ_QUEUE_NBLFQ_MAGIC || /* as above */
      !syncq_nbl_mask_ok(mask, SYNCQ_QUEUE_NBLFQ_MAX_CELLS))
    return SYNCQ_EINVAL;
  uint64_t bits;
  syncq_nbl_cell u, p;
  const int r =
    syncq_nbl_take_first(syncq_queue_nblfq_cells_inline(q), mask, &q->tail, &bits, &u, &p, SYNCQ_QUEUE_NBLFQ_TAG_BITS);
  if (__builtin_expect(r == SYNCQ_OK, 1)) {
    *item = (void *)(uintptr_t)bits;
    return r;
  }
  if (r == SYNCQ_NBL_CHASE)
    return syncq_queue_nblfq_dequeue_miss_(q, item, mask, bits, syncq_queue_nblfq_word_(u), syncq_queue_nblfq_word_(p));
  return syncq_queue_nblfq_dequeue_lost_(q, item, mask, bits);
}

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_STATIC_QUEUE_NBLFQ_H */
