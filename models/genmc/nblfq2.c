/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nblfq2.c — GenMC driver for NBLFQ2 (004 §IV-B: NBLFQ with double-width
 * cells, a pointer word and a 64-bit counter word): src/queue/nblfq2.c
 * itself, included, on a ring of NBLFQ2_S cells (default 2: one lap per
 * two puts), the 16-byte CAS through genmc_shim.h (its tears: a reader can
 * see a cell's new counter with its old pointer). Both first-step
 * shortcuts of nblfq2.c's contract run as the library has them: the
 * dequeue's read of p's counter alone, the enqueue's two loads of u.
 * Workload and properties: check.h; with CHECK_A_MID_TAKE also: A's
 * take, after its own put of 1, answers EMPTY only if C took 1.
 *
 * Seeded controls: GENMC_SEED_DWCAS_HI (genmc_shim.h) compares the
 * counter half alone; with two producers a put overwrites an item (a
 * loss). The three shortcut controls below (docs/reliability.md, "Weak
 * memory: GenMC", has the executions and the arguments):
 *   GENMC_SEED_BUG_TORN_READ  the cell read's second counter load
 *     dropped (counter, pointer: a torn pair trusted). check.h's
 *     workloads without waits accept what it does; with CHECK_HANDOFF a
 *     take trusts (NIL, c) read across another take's commit and
 *     answers EMPTY with an item queued. models/genmc/run lists it.
 *   GENMC_SEED_BUG_DEQ_TRUST  EMPTY from the first step's counter-only
 *     read of p, without the whole re-read. On a processor it cannot
 *     fail: at the whole read of u, (NIL, c), p's round after u's round
 *     c was not filled yet, so p held (NIL, the counter read) and the
 *     queue was empty. Here it fails on CHECK_HANDOFF, through the
 *     shim's tear (a counter-first read of a cell seeing the new counter
 *     with the old pointer): a put reads a full cell that is empty and
 *     fills the next round of the cell after it, out of order, which the
 *     re-read of p catches. models/genmc/run lists it.
 *   GENMC_SEED_BUG_ENQ_ORDER  u's two loads in the other order. It
 *     cannot fail: a pair read there decides only a commit (the CAS
 *     compares both halves) or FULL, which needs a whole re-read of u
 *     equal to it after p's whole read; puts fill the rounds in order,
 *     so at p's read u already held that pair, in either load order.
 *     models/genmc/run does not list it (it holds on every workload,
 *     the handoff included).
 *
 * Build and run: models/genmc/run (genmc -- -I include -I src ...).
 */
#include "genmc_shim.h"

#include "syncq/atomic.h"

#if defined(GENMC_SEED_BUG_ENQ_ORDER) || defined(GENMC_SEED_BUG_DEQ_TRUST) || defined(GENMC_SEED_BUG_TORN_READ)
#define GENMC_SEED_HOOKS 1
#endif
#ifdef GENMC_SEED_HOOKS
/* The controls for the shortcuts of src/queue/nblfq2.c's reads (see
 * above), each a change of what one operation's loads return, made here:
 * every atomic load of the included code goes through genmc_seed_fake
 * (which may answer in the load's place) and genmc_seed_after (which
 * sees the value loaded). The library's text is unchanged.
 *
 * GENMC_SEED_BUG_ENQ_ORDER: the enqueue's first step loads u as pointer
 * then counter, where the library loads counter then pointer. At the
 * first cell load after a put's head load (syncq_nbl_put_first's load of
 * u's counter: nothing loads between them) the pointer is loaded first,
 * and answers the pointer load that follows.
 *
 * GENMC_SEED_BUG_DEQ_TRUST: the dequeue answers EMPTY from its first
 * step's read of p, the counter alone, without the whole re-read of p
 * the contract names: where syncq_nbl_dequeue_miss goes to that re-read
 * (u empty, the counters a step apart), the re-read's three loads answer
 * the first step's pair, (NIL, the counter loaded).
 *
 * GENMC_SEED_BUG_TORN_READ: a load of a cell's counter right after that
 * cell's pointer load, itself after its counter load (syncq_nbl_load's
 * third load) answers the first counter load's value. */
static _Thread_local int genmc_seed_state;               /* where the operation is: see genmc_seed_fake */
static _Thread_local _Atomic(uint64_t) *genmc_seed_at;   /* the cell word the state refers to */
static _Thread_local uint64_t genmc_seed_kept;           /* a value loaded ahead or to answer */
static _Thread_local uint64_t genmc_seed_u[2];           /* the dequeue's last read of u: pointer, counter */
static _Thread_local _Atomic(uint64_t) *genmc_seed_u_at; /* u's counter word */
static _Thread_local uint64_t genmc_seed_val;            /* the answer when genmc_seed_fake says 1 */
static _Atomic(uint64_t) *genmc_seed_head, *genmc_seed_tail, *genmc_seed_cells; /* set by main before the threads */

enum { /* genmc_seed_state */
       SEED_IDLE,
       SEED_PUT,       /* in a put, before its head load */
       SEED_PUT_U,     /* the next load is u's counter */
       SEED_PUT_KEPT,  /* u's pointer loaded ahead, for u's pointer load */
       SEED_TAKE,      /* in a take, before its tail load */
       SEED_TAKE_P,    /* the next load is p's counter */
       SEED_TAKE_U,    /* reading u; the next load of p is the EMPTY re-read or the general path's */
       SEED_TAKE_FAKE, /* answering the re-read of p: counter, pointer, counter */
};
static _Thread_local int genmc_seed_fakes; /* loads of the re-read answered */

static inline int genmc_seed_fake(_Atomic(uint64_t) *o) {
  switch (genmc_seed_state) {
  case SEED_PUT:
    if (o == genmc_seed_head) genmc_seed_state = SEED_PUT_U;
    return 0;
  case SEED_PUT_U: /* o: u's counter word; its pointer is the word before (pr.h: lo, hi) */
    genmc_seed_at = o - 1;
    /* acquire: as the library's load of the pointer, which this is */
    genmc_seed_kept = __c11_atomic_load(genmc_seed_at, memory_order_acquire);
    genmc_seed_state = SEED_PUT_KEPT;
    return 0;
  case SEED_PUT_KEPT:
    if (o != genmc_seed_at) return 0;
    genmc_seed_state = SEED_IDLE;
    genmc_seed_val = genmc_seed_kept;
    return 1;
  case SEED_TAKE:
    if (o == genmc_seed_tail) genmc_seed_state = SEED_TAKE_P;
    return 0;
  case SEED_TAKE_U:
    if (o != genmc_seed_at) return 0;
    genmc_seed_state = SEED_IDLE;
    /* syncq_nbl_dequeue_miss's test: u empty, u.ctr + [t != 0] == p.ctr */
    if (genmc_seed_u[0] != 0 || genmc_seed_u[1] + (genmc_seed_u_at != genmc_seed_cells + 1) != genmc_seed_kept)
      return 0;
    genmc_seed_state = SEED_TAKE_FAKE;
    genmc_seed_fakes = 0;
    /* fall through */
  case SEED_TAKE_FAKE:
    genmc_seed_val = o == genmc_seed_at ? genmc_seed_kept : 0;
    if (++genmc_seed_fakes == 3) genmc_seed_state = SEED_IDLE;
    return 1;
  default:
    return 0;
  }
}
static _Thread_local _Atomic(uint64_t) *genmc_seed_last[2]; /* the last two words loaded, the latest first */
static _Thread_local uint64_t genmc_seed_last_v[2];         /* their values */
static inline uint64_t genmc_seed_after(_Atomic(uint64_t) *o, uint64_t v) {
#ifdef GENMC_SEED_BUG_TORN_READ
  /* syncq_nbl_load's second counter load (counter, pointer, counter of
   * one cell) answers the first: the read trusts its first two loads. */
  if (genmc_seed_last[1] == o && genmc_seed_last[0] == o - 1) v = genmc_seed_last_v[1];
  genmc_seed_last[1] = genmc_seed_last[0];
  genmc_seed_last_v[1] = genmc_seed_last_v[0];
  genmc_seed_last[0] = o;
  genmc_seed_last_v[0] = v;
#endif
  if (genmc_seed_state == SEED_TAKE_P && o != genmc_seed_tail) { /* p's counter (not the tail load before it) */
    genmc_seed_at = o;
    genmc_seed_kept = v;
    genmc_seed_u_at = NULL;
    genmc_seed_state = SEED_TAKE_U;
  } else if (genmc_seed_state == SEED_TAKE_U) { /* u's words, in the order read */
    if (genmc_seed_u_at == NULL) genmc_seed_u_at = o;
    genmc_seed_u[o == genmc_seed_u_at] = v;
  }
  return v;
}
#undef atomic_load_explicit
#define atomic_load_explicit(obj, order) \
  (genmc_seed_fake(obj) ? genmc_seed_val : genmc_seed_after((obj), __c11_atomic_load((obj), (order))))
#endif

#include "queue/nblfq2.c"

#ifdef GENMC_SEED_HOOKS
/* The hooks watch the queue's loads only: check.h's loads (its waits'
 * flags) are clang's own, as <stdatomic.h> defines them. */
#undef atomic_load_explicit
#define atomic_load_explicit __c11_atomic_load
#endif

#include "check.h"

#ifndef NBLFQ2_S
#define NBLFQ2_S 2
#endif

static _Alignas(SYNCQ_CACHELINE) unsigned char storage[SYNCQ_QUEUE_NBLFQ2_BYTES(NBLFQ2_S)];
#define Q ((syncq_queue_nblfq2 *)(void *)storage)

static int put(uint64_t v) {
#ifdef GENMC_SEED_BUG_ENQ_ORDER
  genmc_seed_state = SEED_PUT;
#endif
  return syncq_queue_nblfq2_enqueue(Q, (void *)(uintptr_t)v);
}
static int take(uint64_t *v) {
#ifdef GENMC_SEED_BUG_DEQ_TRUST
  genmc_seed_state = SEED_TAKE;
#endif
  void *p = NULL;
  int r = syncq_queue_nblfq2_dequeue(Q, &p);
  *v = (uint64_t)(uintptr_t)p;
  return r;
}

int main(void) {
  assert(syncq_queue_nblfq2_init(Q, NBLFQ2_S) == SYNCQ_OK);
#ifdef GENMC_SEED_HOOKS
  genmc_seed_head = &Q->head;
  genmc_seed_tail = &Q->tail;
  genmc_seed_cells = (_Atomic(uint64_t) *)cells_of(Q); /* cell i: words 2i (pointer), 2i + 1 (counter) */
#endif
  check_workload();
#ifdef CHECK_A_MID_TAKE
  /* A's take comes after its put of 1 returned: EMPTY only if C took 1
   * before it (check.h asserts no such thing for queues: EMPTY is an
   * answer it accepts from any take). */
  if (check_a_got == 0) assert(check_c_got[0] == 1 || check_c_got[1] == 1);
#endif
  assert(syncq_queue_nblfq2_destroy(Q) == SYNCQ_OK);
  return 0;
}
