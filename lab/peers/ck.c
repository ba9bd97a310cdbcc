/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ck.c — Concurrency Kit (libck-dev) behind syncq's ops tables.
 *
 * Contract (of the adapters; the algorithms are ck's, unchanged)
 *   Source:      Concurrency Kit 0.7 (Samy Al Bahra et al.), Debian
 *                libck-dev: ck_ring.h, ck_fifo.h, ck_stack.h,
 *                ck_spinlock.h, ck_barrier.h. Each entry calls ck's own
 *                inline functions; the adapter adds only argument checks,
 *                storage and the status codes.
 *   Entries:     queue "ck:ring_mpmc", "ck:ring_spsc" (SYNCQ_PROP_SPSC),
 *                "ck:fifo_mpmc"; stack "ck:stack"; lock "ck:spinlock_fas",
 *                "ck:spinlock_cas", "ck:spinlock_ticket",
 *                "ck:spinlock_anderson", "ck:spinlock_mcs",
 *                "ck:spinlock_clh"; barrier "ck:barrier_centralized",
 *                "ck:barrier_combining", "ck:barrier_dissemination",
 *                "ck:barrier_tournament", "ck:barrier_mcs".
 *   Progress:    rings: blocking in the strict sense (an MPMC producer
 *                waits for earlier producers to publish); fifo_mpmc and
 *                stack: lock-free (ck's generation-counted double-width
 *                CAS); locks and barriers: blocking, pure spinning
 *                (ck_pr_stall), so only SYNCQ_WAIT_SPIN (and the default)
 *                is accepted, the other disciplines are SYNCQ_ENOTSUP.
 *   Atomics:     ck's: ring MPMC enqueue 1 CAS + 1 store, dequeue 1 CAS;
 *                SPSC 0 atomics (loads/stores with fences); fifo_mpmc
 *                enqueue 2 DWCAS, dequeue 1 DWCAS; stack push 1 CAS, pop
 *                1 DWCAS (+ the same again on the adapter's node free list).
 *   Memory:      rings: a ring of 2 x capacity slots (ck keeps one slot
 *                empty, so FULL comes after 2 x capacity - 1 items:
 *                SYNCQ_PROP_LOOSE_CAPACITY), allocated at init; fifo_mpmc:
 *                one malloc'd node per enqueue (SYNCQ_PROP_ALLOCATES);
 *                dequeued nodes are not reused but kept until destroy, as
 *                ck needs safe reclamation before reuse (see below); stack: a pool of cfg->capacity nodes
 *                made at init (push answers SYNCQ_ENOMEM when it is empty);
 *                Anderson: max_threads slots; CLH: nodes are handed from
 *                thread to thread (a thread leaves with its predecessor's
 *                node), so each thread keeps a small cache of nodes,
 *                malloc'd on first use and freed when the thread exits;
 *                barriers: per-thread state made at init.
 *   Signal-safe: no.
 *   Process-shared: no (pointers inside): SYNCQ_ENOTSUP when asked.
 *   Limits:      capacity a power of two >= 2, at most PEER_MAX_CAPACITY;
 *                Anderson: at most max_threads (default
 *                CK_ANDERSON_DEFAULT_SLOTS, rounded up to a power of two,
 *                which ck's anderson_locked() needs) threads in the lock at
 *                once: ck does not check, more corrupts the lock. ck has no trylock
 *                for Anderson and CLH: the adapter answers SYNCQ_EBUSY when
 *                ck's *_locked() says held and otherwise acquires with
 *                lock(), which may wait for a thread that won the race.
 */
#include <ck_barrier.h>
#include <ck_fifo.h>
#include <ck_pr.h>
#include <ck_ring.h>
#include <ck_spinlock.h>
#include <ck_stack.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "peer_adapter.h"
#include "syncq/barrier.h"
#include "syncq/lock.h"
#include "syncq/platform.h"
#include "syncq/queue.h"
#include "syncq/stack.h"
#include "syncq/wait.h"

#define CK_SOURCE "Concurrency Kit 0.7 (libck-dev)"
#define CK_ANDERSON_DEFAULT_SLOTS 64u /* as syncq's own Anderson lock */
#define CK_ANDERSON_MAX_SLOTS 4096u
#define CK_CLH_CACHE 8  /* nodes a thread keeps for later acquisitions */
#define CK_FIFO_GROW 64 /* nodes malloc'd at once when the free list is empty */

/* ================================================================ rings */

typedef struct ck_ring_box {
  uint64_t magic;
  ck_ring_t ring;
  ck_ring_buffer_t *buf;
} ck_ring_box;

static int ring_bytes(size_t c, size_t *b) {
  if (b == NULL || !peer_pow2(c) || c > PEER_MAX_CAPACITY) return SYNCQ_EINVAL;
  *b = sizeof(ck_ring_box);
  return SYNCQ_OK;
}

static int ring_init(ck_ring_box *r, size_t c) {
  if (r == NULL || (uintptr_t)r % _Alignof(ck_ring_box) != 0 || !peer_pow2(c) || c > PEER_MAX_CAPACITY)
    return SYNCQ_EINVAL;
  /* ck keeps one slot empty: 2 x capacity slots hold at least capacity */
  r->buf = syncq_alloc_aligned(2 * c * sizeof *r->buf, SYNCQ_CACHELINE);
  if (r->buf == NULL) return SYNCQ_ENOMEM;
  ck_ring_init(&r->ring, (unsigned)(2 * c));
  r->magic = PEER_MAGIC_LIVE;
  return SYNCQ_OK;
}

static int ring_destroy(ck_ring_box *r) {
  if (r == NULL || r->magic != PEER_MAGIC_LIVE) return SYNCQ_EINVAL;
  r->magic = 0;
  free(r->buf);
  return SYNCQ_OK;
}

static int ring_enq_mpmc(ck_ring_box *r, void *item) {
  if (r == NULL || item == NULL) return SYNCQ_EINVAL;
  return ck_ring_enqueue_mpmc(&r->ring, r->buf, item) ? SYNCQ_OK : SYNCQ_FULL;
}

static int ring_deq_mpmc(ck_ring_box *r, void **item) {
  if (r == NULL || item == NULL) return SYNCQ_EINVAL;
  return ck_ring_dequeue_mpmc(&r->ring, r->buf, item) ? SYNCQ_OK : SYNCQ_EMPTY;
}

static int ring_enq_spsc(ck_ring_box *r, void *item) {
  if (r == NULL || item == NULL) return SYNCQ_EINVAL;
  return ck_ring_enqueue_spsc(&r->ring, r->buf, item) ? SYNCQ_OK : SYNCQ_FULL;
}

static int ring_deq_spsc(ck_ring_box *r, void **item) {
  if (r == NULL || item == NULL) return SYNCQ_EINVAL;
  return ck_ring_dequeue_spsc(&r->ring, r->buf, item) ? SYNCQ_OK : SYNCQ_EMPTY;
}

/* SYNCQ_PROP_SPINS_ON_PREEMPTED: ck_ring_enqueue_mpmc claims a slot by CAS
 * on p_head, writes it, then loops `while (p_tail != producer)
 * ck_pr_stall();` until every earlier claimer has moved p_tail: a
 * preempted earlier producer keeps the later ones spinning, never
 * yielding (ck_ring.h). The more producers, the longer that chain: a
 * stress run oversubscribes it only on a small confined PU set
 * (tests/support/test_plan.h).
 * Linearizable except at FULL, so not SYNCQ_PROP_LINEARIZABLE
 * (tests/support/test_queue_contract.h): _ck_ring_enqueue_mp counts room
 * against p_head (claims), _ck_ring_dequeue_mc counts items against
 * p_tail (publications), so a claimed, unpublished slot makes an enqueue
 * answer FULL while a dequeue that comes after it answers EMPTY. A
 * dequeue is one CAS on c_head after reading its slot, so taking an
 * enqueue at its p_tail store and a dequeue at that CAS, OK and EMPTY are
 * linearizable; FULL alone is not. */
SYNCQ_QUEUE_REGISTER_FNS(ck_ring_mpmc, "ck:ring_mpmc", "Concurrency Kit ck_ring, MPMC", CK_SOURCE, BLOCKING,
                         SYNCQ_PROP_PEER | SYNCQ_PROP_FIFO | SYNCQ_PROP_BOUNDED | SYNCQ_PROP_LOOSE_CAPACITY |
                           SYNCQ_PROP_SPINS_ON_PREEMPTED,
                         ck_ring_box, ring_bytes, ring_init, ring_destroy, ring_enq_mpmc, ring_deq_mpmc);
/* Not SPINS_ON_PREEMPTED: one producer and one consumer, neither ever
 * waits for the other (FULL/EMPTY come back at once). */
SYNCQ_QUEUE_REGISTER_FNS(ck_ring_spsc, "ck:ring_spsc", "Concurrency Kit ck_ring, SPSC", CK_SOURCE, WAIT_FREE,
                         SYNCQ_PROP_PEER | SYNCQ_PROP_FIFO | SYNCQ_PROP_BOUNDED | SYNCQ_PROP_LOOSE_CAPACITY |
                           SYNCQ_PROP_SPSC,
                         ck_ring_box, ring_bytes, ring_init, ring_destroy, ring_enq_spsc, ring_deq_spsc);

/* ================================================================ fifo_mpmc */

/* A queue node. ck_fifo_mpmc leaves reclamation to the caller: a dequeuer
 * may still read the old dummy it just lost a race for (ck has no re-check
 * of the head before trusting head == tail), so a dequeued node must not be
 * reused until no operation can hold it: ck pairs this queue with safe
 * memory reclamation. The adapter keeps it simple and safe: every dequeued
 * node goes on a garbage list and is freed at destroy, never reused while
 * the queue lives (reusing it at once, as a free list would, made a
 * dequeue answer EMPTY on a full queue in np99-locks). */
typedef struct fifo_node {
  ck_fifo_mpmc_entry_t entry; /* first: ck hands back entry pointers */
  ck_stack_entry_t garbage_link;
} fifo_node;

typedef struct ck_fifo_box {
  ck_fifo_mpmc_t fifo; /* aligned as ck wants (double-width CAS) */
  ck_stack_t garbage;  /* dequeued nodes, pushed only, freed at destroy */
  uint64_t magic;
} ck_fifo_box;

CK_STACK_CONTAINER(fifo_node, garbage_link, fifo_node_of_garbage)

static int fifo_bytes(size_t c, size_t *b) {
  (void)c; /* unbounded: capacity is only a sizing hint */
  if (b == NULL) return SYNCQ_EINVAL;
  *b = sizeof(ck_fifo_box);
  return SYNCQ_OK;
}

static fifo_node *fifo_node_new(void) {
  fifo_node *n = syncq_alloc_aligned(sizeof *n, _Alignof(fifo_node));
  if (n != NULL) memset(n, 0, sizeof *n);
  return n;
}

static int fifo_init(ck_fifo_box *f, size_t c) {
  (void)c;
  if (f == NULL || (uintptr_t)f % _Alignof(ck_fifo_box) != 0) return SYNCQ_EINVAL;
  memset(f, 0, sizeof *f);
  ck_stack_init(&f->garbage);
  fifo_node *stub = fifo_node_new();
  if (stub == NULL) return SYNCQ_ENOMEM;
  ck_fifo_mpmc_init(&f->fifo, &stub->entry);
  f->magic = PEER_MAGIC_LIVE;
  return SYNCQ_OK;
}

static int fifo_dequeue(ck_fifo_box *f, void **item);

static int fifo_destroy(ck_fifo_box *f) {
  if (f == NULL || f->magic != PEER_MAGIC_LIVE) return SYNCQ_EINVAL;
  void *x;
  while (fifo_dequeue(f, &x) == SYNCQ_OK) {
  }
  f->magic = 0;
  ck_fifo_mpmc_entry_t *stub;
  ck_fifo_mpmc_deinit(&f->fifo, &stub);
  free(stub);
  ck_stack_entry_t *e;
  while ((e = ck_stack_pop_npsc(&f->garbage)) != NULL) free(fifo_node_of_garbage(e));
  return SYNCQ_OK;
}

static int fifo_enqueue(ck_fifo_box *f, void *item) {
  if (f == NULL || item == NULL) return SYNCQ_EINVAL;
  fifo_node *n = fifo_node_new();
  if (n == NULL) return SYNCQ_ENOMEM;
  ck_fifo_mpmc_enqueue(&f->fifo, &n->entry, item);
  return SYNCQ_OK;
}

static int fifo_dequeue(ck_fifo_box *f, void **item) {
  if (f == NULL || item == NULL) return SYNCQ_EINVAL;
  ck_fifo_mpmc_entry_t *garbage;
  if (!ck_fifo_mpmc_dequeue(&f->fifo, item, &garbage)) return SYNCQ_EMPTY;
  /* the old dummy: kept until destroy (see above) */
  ck_stack_push_upmc(&f->garbage, &((fifo_node *)(void *)garbage)->garbage_link);
  return SYNCQ_OK;
}

SYNCQ_QUEUE_REGISTER_FNS(ck_fifo_mpmc, "ck:fifo_mpmc",
                         "Concurrency Kit ck_fifo_mpmc (Michael & Scott, generation counters)", CK_SOURCE, LOCK_FREE,
                         SYNCQ_PROP_PEER | SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES,
                         ck_fifo_box, fifo_bytes, fifo_init, fifo_destroy, fifo_enqueue, fifo_dequeue);

/* ================================================================ stack */

typedef struct stack_node {
  ck_stack_entry_t link;
  void *item;
} stack_node;

typedef struct ck_stack_box {
  ck_stack_t stack; /* aligned for ck's double-width CAS */
  ck_stack_t free;
  stack_node *pool;
  uint64_t magic;
} ck_stack_box;

CK_STACK_CONTAINER(stack_node, link, stack_node_of)

static int stack_init(ck_stack_box *b, const syncq_stack_config *cfg) {
  if (b == NULL || (uintptr_t)b % _Alignof(ck_stack_box) != 0) return SYNCQ_EINVAL;
  uint32_t cap = cfg && cfg->capacity ? cfg->capacity : SYNCQ_STACK_DEFAULT_CAPACITY;
  if (cfg && (cfg->capacity > SYNCQ_STACK_MAX_CAPACITY || cfg->max_threads > SYNCQ_STACK_MAX_THREADS))
    return SYNCQ_EINVAL;
  ck_stack_init(&b->stack);
  ck_stack_init(&b->free);
  b->pool = calloc(cap, sizeof *b->pool);
  if (b->pool == NULL) return SYNCQ_ENOMEM;
  for (uint32_t i = cap; i-- > 0;) ck_stack_push_mpmc(&b->free, &b->pool[i].link);
  b->magic = PEER_MAGIC_LIVE;
  return SYNCQ_OK;
}

static int stack_destroy(ck_stack_box *b) {
  if (b == NULL || b->magic != PEER_MAGIC_LIVE) return SYNCQ_EINVAL;
  b->magic = 0;
  free(b->pool);
  return SYNCQ_OK;
}

static int stack_push(ck_stack_box *b, void *item) {
  if (b == NULL || item == NULL) return SYNCQ_EINVAL;
  ck_stack_entry_t *e = ck_stack_pop_mpmc(&b->free);
  if (e == NULL) return SYNCQ_ENOMEM;
  stack_node *n = stack_node_of(e);
  n->item = item;
  ck_stack_push_mpmc(&b->stack, &n->link);
  return SYNCQ_OK;
}

static int stack_pop(ck_stack_box *b, void **item) {
  if (b == NULL || item == NULL) return SYNCQ_EINVAL;
  ck_stack_entry_t *e = ck_stack_pop_mpmc(&b->stack);
  if (e == NULL) return SYNCQ_EMPTY;
  stack_node *n = stack_node_of(e);
  *item = n->item;
  ck_stack_push_mpmc(&b->free, &n->link);
  return SYNCQ_OK;
}

SYNCQ_STACK_REGISTER_FNS(ck_stack, "ck:stack", "Concurrency Kit ck_stack (Treiber, generation-counted pop)", CK_SOURCE,
                         LOCK_FREE, SYNCQ_PROP_PEER | SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_BOUNDED, ck_stack_box,
                         stack_init, stack_destroy, stack_push, stack_pop);

/* ================================================================ locks */

/* ck's locks spin with ck_pr_stall and nothing else: the default and SPIN
 * only. Unknown disciplines EINVAL, process sharing ENOTSUP (pointers or,
 * for the simple ones, no promise from ck). */
static int lock_cfg(const syncq_lock_config *cfg) {
  if (cfg == NULL) return SYNCQ_OK;
  if (cfg->wait < 0 || cfg->wait >= SYNCQ_WAIT_COUNT) return SYNCQ_EINVAL;
  if (cfg->wait != SYNCQ_WAIT_DEFAULT && cfg->wait != SYNCQ_WAIT_SPIN) return SYNCQ_ENOTSUP;
  if (cfg->process_shared) return SYNCQ_ENOTSUP;
  return SYNCQ_OK;
}

typedef struct ck_simple_lock {
  union {
    ck_spinlock_fas_t fas;
    ck_spinlock_cas_t cas;
    ck_spinlock_ticket_t ticket;
  } u;
  uint64_t magic;
} ck_simple_lock;

#define SIMPLE_LOCK(kind, title, props)                                                                           \
  static int kind##_init(ck_simple_lock *k, const syncq_lock_config *cfg) {                                       \
    if (k == NULL) return SYNCQ_EINVAL;                                                                           \
    int r = lock_cfg(cfg);                                                                                        \
    if (r != SYNCQ_OK) return r;                                                                                  \
    ck_spinlock_##kind##_init(&k->u.kind);                                                                        \
    k->magic = PEER_MAGIC_LIVE;                                                                                   \
    return SYNCQ_OK;                                                                                              \
  }                                                                                                               \
  static int kind##_destroy(ck_simple_lock *k) {                                                                  \
    if (k == NULL || k->magic != PEER_MAGIC_LIVE) return SYNCQ_EINVAL;                                            \
    if (ck_spinlock_##kind##_locked(&k->u.kind)) return SYNCQ_EBUSY;                                              \
    k->magic = 0;                                                                                                 \
    return SYNCQ_OK;                                                                                              \
  }                                                                                                               \
  static int kind##_lock(ck_simple_lock *k, syncq_lock_node *n) {                                                 \
    if (k == NULL || n == NULL) return SYNCQ_EINVAL;                                                              \
    ck_spinlock_##kind##_lock(&k->u.kind);                                                                        \
    return SYNCQ_OK;                                                                                              \
  }                                                                                                               \
  static int kind##_trylock(ck_simple_lock *k, syncq_lock_node *n) {                                              \
    if (k == NULL || n == NULL) return SYNCQ_EINVAL;                                                              \
    return ck_spinlock_##kind##_trylock(&k->u.kind) ? SYNCQ_OK : SYNCQ_EBUSY;                                     \
  }                                                                                                               \
  static int kind##_unlock(ck_simple_lock *k, syncq_lock_node *n) {                                               \
    if (k == NULL || n == NULL) return SYNCQ_EINVAL;                                                              \
    ck_spinlock_##kind##_unlock(&k->u.kind);                                                                      \
    return SYNCQ_OK;                                                                                              \
  }                                                                                                               \
  SYNCQ_LOCK_REGISTER_FNS(ck_##kind, "ck:spinlock_" #kind, title, CK_SOURCE, BLOCKING, SYNCQ_PROP_PEER | (props), \
                          ck_simple_lock, kind##_init, kind##_destroy, kind##_lock, kind##_trylock, kind##_unlock)

SIMPLE_LOCK(fas, "Concurrency Kit ck_spinlock_fas (test-and-set by swap)", SYNCQ_PROP_LINEARIZABLE);
SIMPLE_LOCK(cas, "Concurrency Kit ck_spinlock_cas (test-and-test-and-set by CAS)", SYNCQ_PROP_LINEARIZABLE);
SIMPLE_LOCK(ticket, "Concurrency Kit ck_spinlock_ticket", SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO);

/* ---- MCS: ck's queue node lives in the caller's syncq_lock_node */

typedef struct ck_mcs_lock {
  ck_spinlock_mcs_t tail;
  uint64_t magic;
} ck_mcs_lock;

_Static_assert(sizeof(struct ck_spinlock_mcs) <= sizeof(syncq_lock_node), "MCS node fits a syncq_lock_node");

static int mcs_init(ck_mcs_lock *k, const syncq_lock_config *cfg) {
  if (k == NULL) return SYNCQ_EINVAL;
  int r = lock_cfg(cfg);
  if (r != SYNCQ_OK) return r;
  ck_spinlock_mcs_init(&k->tail);
  k->magic = PEER_MAGIC_LIVE;
  return SYNCQ_OK;
}

static int mcs_destroy(ck_mcs_lock *k) {
  if (k == NULL || k->magic != PEER_MAGIC_LIVE) return SYNCQ_EINVAL;
  if (ck_spinlock_mcs_locked(&k->tail)) return SYNCQ_EBUSY;
  k->magic = 0;
  return SYNCQ_OK;
}

static int mcs_lock(ck_mcs_lock *k, syncq_lock_node *n) {
  if (k == NULL || n == NULL) return SYNCQ_EINVAL;
  ck_spinlock_mcs_lock(&k->tail, (struct ck_spinlock_mcs *)(void *)n->opaque);
  return SYNCQ_OK;
}

static int mcs_trylock(ck_mcs_lock *k, syncq_lock_node *n) {
  if (k == NULL || n == NULL) return SYNCQ_EINVAL;
  return ck_spinlock_mcs_trylock(&k->tail, (struct ck_spinlock_mcs *)(void *)n->opaque) ? SYNCQ_OK : SYNCQ_EBUSY;
}

static int mcs_unlock(ck_mcs_lock *k, syncq_lock_node *n) {
  if (k == NULL || n == NULL) return SYNCQ_EINVAL;
  ck_spinlock_mcs_unlock(&k->tail, (struct ck_spinlock_mcs *)(void *)n->opaque);
  return SYNCQ_OK;
}

SYNCQ_LOCK_REGISTER_FNS(ck_mcs, "ck:spinlock_mcs", "Concurrency Kit ck_spinlock_mcs", CK_SOURCE, BLOCKING,
                        SYNCQ_PROP_PEER | SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_USES_NODE, ck_mcs_lock,
                        mcs_init, mcs_destroy, mcs_lock, mcs_trylock, mcs_unlock);

/* ---- Anderson: the slot ck hands back is kept in the caller's node */

typedef struct ck_anderson_lock {
  ck_spinlock_anderson_t lock;
  ck_spinlock_anderson_thread_t *slots;
  uint64_t magic;
} ck_anderson_lock;

static int anderson_init(ck_anderson_lock *k, const syncq_lock_config *cfg) {
  if (k == NULL) return SYNCQ_EINVAL;
  int r = lock_cfg(cfg);
  if (r != SYNCQ_OK) return r;
  unsigned want = cfg && cfg->max_threads ? cfg->max_threads : CK_ANDERSON_DEFAULT_SLOTS;
  if (want > CK_ANDERSON_MAX_SLOTS) return SYNCQ_ELIMIT;
  /* A power of two: ck_spinlock_anderson_locked() masks the ticket with
   * count - 1, which names the next slot only when count is a power of two
   * (with 3 slots, after 3 rounds it reads slot 2 and says "held"). */
  unsigned n = 1;
  while (n < want) n <<= 1;
  k->slots = syncq_alloc_aligned(n * sizeof *k->slots, SYNCQ_CACHELINE);
  if (k->slots == NULL) return SYNCQ_ENOMEM;
  ck_spinlock_anderson_init(&k->lock, k->slots, n);
  k->magic = PEER_MAGIC_LIVE;
  return SYNCQ_OK;
}

static int anderson_destroy(ck_anderson_lock *k) {
  if (k == NULL || k->magic != PEER_MAGIC_LIVE) return SYNCQ_EINVAL;
  if (ck_spinlock_anderson_locked(&k->lock)) return SYNCQ_EBUSY;
  k->magic = 0;
  free(k->slots);
  return SYNCQ_OK;
}

static int anderson_lock(ck_anderson_lock *k, syncq_lock_node *n) {
  if (k == NULL || n == NULL) return SYNCQ_EINVAL;
  ck_spinlock_anderson_thread_t *slot;
  ck_spinlock_anderson_lock(&k->lock, &slot);
  memcpy(n->opaque, &slot, sizeof slot);
  return SYNCQ_OK;
}

static int anderson_trylock(ck_anderson_lock *k, syncq_lock_node *n) {
  if (k == NULL || n == NULL) return SYNCQ_EINVAL;
  if (ck_spinlock_anderson_locked(&k->lock)) return SYNCQ_EBUSY;
  return anderson_lock(k, n); /* ck has no trylock: see the contract */
}

static int anderson_unlock(ck_anderson_lock *k, syncq_lock_node *n) {
  if (k == NULL || n == NULL) return SYNCQ_EINVAL;
  ck_spinlock_anderson_thread_t *slot;
  memcpy(&slot, n->opaque, sizeof slot);
  ck_spinlock_anderson_unlock(&k->lock, slot);
  return SYNCQ_OK;
}

/* SYNCQ_PROP_USES_NODE: the slot */
SYNCQ_LOCK_REGISTER_FNS(ck_anderson, "ck:spinlock_anderson", "Concurrency Kit ck_spinlock_anderson", CK_SOURCE,
                        BLOCKING, SYNCQ_PROP_PEER | SYNCQ_PROP_FIFO | SYNCQ_PROP_USES_NODE, ck_anderson_lock,
                        anderson_init, anderson_destroy, anderson_lock, anderson_trylock, anderson_unlock);

/* ---- CLH: a per-thread cache of ck nodes (see the contract) */

typedef struct clh_cache {
  int n;
  ck_spinlock_clh_t *node[CK_CLH_CACHE];
} clh_cache;

static pthread_key_t clh_key;
static pthread_once_t clh_once = PTHREAD_ONCE_INIT;
static int clh_key_ok;

static void clh_cache_free(void *p) {
  clh_cache *c = p;
  for (int i = 0; i < c->n; i++) free(c->node[i]);
  free(c);
}

static void clh_key_make(void) { clh_key_ok = pthread_key_create(&clh_key, clh_cache_free) == 0; }

static clh_cache *clh_mine(void) {
  pthread_once(&clh_once, clh_key_make);
  if (!clh_key_ok) return NULL;
  clh_cache *c = pthread_getspecific(clh_key);
  if (c == NULL) {
    c = calloc(1, sizeof *c);
    if (c != NULL && pthread_setspecific(clh_key, c) != 0) {
      free(c);
      c = NULL;
    }
  }
  return c;
}

static ck_spinlock_clh_t *clh_node_get(void) {
  clh_cache *c = clh_mine();
  if (c != NULL && c->n > 0) return c->node[--c->n];
  return syncq_alloc_aligned(sizeof(ck_spinlock_clh_t), SYNCQ_CACHELINE);
}

static void clh_node_put(ck_spinlock_clh_t *node) {
  clh_cache *c = clh_mine();
  if (c != NULL && c->n < CK_CLH_CACHE) c->node[c->n++] = node;
  else free(node);
}

typedef struct ck_clh_lock {
  ck_spinlock_clh_t *tail;
  uint64_t magic;
} ck_clh_lock;

static int clh_init(ck_clh_lock *k, const syncq_lock_config *cfg) {
  if (k == NULL) return SYNCQ_EINVAL;
  int r = lock_cfg(cfg);
  if (r != SYNCQ_OK) return r;
  ck_spinlock_clh_t *unowned = syncq_alloc_aligned(sizeof *unowned, SYNCQ_CACHELINE);
  if (unowned == NULL) return SYNCQ_ENOMEM;
  ck_spinlock_clh_init(&k->tail, unowned);
  k->magic = PEER_MAGIC_LIVE;
  return SYNCQ_OK;
}

static int clh_destroy(ck_clh_lock *k) {
  if (k == NULL || k->magic != PEER_MAGIC_LIVE) return SYNCQ_EINVAL;
  if (ck_spinlock_clh_locked(&k->tail)) return SYNCQ_EBUSY;
  k->magic = 0;
  free(k->tail); /* the last releaser's node: nobody else holds it */
  return SYNCQ_OK;
}

static int clh_lock(ck_clh_lock *k, syncq_lock_node *n) {
  if (k == NULL || n == NULL) return SYNCQ_EINVAL;
  ck_spinlock_clh_t *mine = clh_node_get();
  if (mine == NULL) return SYNCQ_ENOMEM;
  ck_spinlock_clh_lock(&k->tail, mine);
  memcpy(n->opaque, &mine, sizeof mine);
  return SYNCQ_OK;
}

static int clh_trylock(ck_clh_lock *k, syncq_lock_node *n) {
  if (k == NULL || n == NULL) return SYNCQ_EINVAL;
  if (ck_spinlock_clh_locked(&k->tail)) return SYNCQ_EBUSY;
  return clh_lock(k, n); /* ck has no trylock: see the contract */
}

static int clh_unlock(ck_clh_lock *k, syncq_lock_node *n) {
  if (k == NULL || n == NULL) return SYNCQ_EINVAL;
  ck_spinlock_clh_t *mine;
  memcpy(&mine, n->opaque, sizeof mine);
  ck_spinlock_clh_unlock(&mine); /* mine is now the predecessor's node */
  clh_node_put(mine);
  return SYNCQ_OK;
}

SYNCQ_LOCK_REGISTER_FNS(ck_clh, "ck:spinlock_clh", "Concurrency Kit ck_spinlock_clh", CK_SOURCE, BLOCKING,
                        SYNCQ_PROP_PEER | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES | SYNCQ_PROP_USES_NODE, ck_clh_lock,
                        clh_init, clh_destroy, clh_lock, clh_trylock, clh_unlock);

/* ================================================================ barriers */

/* Per-thread state of every kind, one cache line each (no false sharing). */
typedef union barrier_state {
  ck_barrier_centralized_state_t central;
  ck_barrier_combining_state_t combining;
  ck_barrier_dissemination_state_t dissemination;
  ck_barrier_tournament_state_t tournament;
  ck_barrier_mcs_state_t mcs;
  unsigned char pad[SYNCQ_CACHELINE];
} barrier_state;

#define COMBINING_FAN_IN 4 /* threads per leaf group (syncq's MCS tree uses 4 too) */

typedef struct ck_barrier_box {
  uint64_t magic;
  unsigned threads;
  barrier_state *state; /* [threads] */
  void *shared;         /* the kind's shared part (one or threads structs) */
  void **per_thread;    /* dissemination flags / tournament rounds, [threads] */
  ck_barrier_combining_t combining;
  ck_barrier_combining_group_t *groups; /* [1 + groups]: root, then leaves */
  ck_barrier_centralized_t central;
} ck_barrier_box;

typedef enum { BK_CENTRAL, BK_COMBINING, BK_DISSEMINATION, BK_TOURNAMENT, BK_MCS } barrier_kind;

static void barrier_free(ck_barrier_box *b) {
  if (b->per_thread != NULL)
    for (unsigned i = 0; i < b->threads; i++) free(b->per_thread[i]);
  free(b->per_thread);
  free(b->shared);
  free(b->groups);
  free(b->state);
  b->per_thread = NULL;
  b->shared = NULL;
  b->groups = NULL;
  b->state = NULL;
}

static int barrier_init_kind(ck_barrier_box *b, const syncq_barrier_config *cfg, barrier_kind kind) {
  if (b == NULL || cfg == NULL || cfg->threads == 0) return SYNCQ_EINVAL;
  if (cfg->threads > SYNCQ_BARRIER_MAX_THREADS) return SYNCQ_ELIMIT;
  if (cfg->wait < 0 || cfg->wait >= SYNCQ_WAIT_COUNT) return SYNCQ_EINVAL;
  if (cfg->wait != SYNCQ_WAIT_DEFAULT && cfg->wait != SYNCQ_WAIT_SPIN) return SYNCQ_ENOTSUP;
  if (cfg->process_shared) return SYNCQ_ENOTSUP;
  memset(b, 0, sizeof *b);
  unsigned n = cfg->threads;
  b->threads = n;
  b->state = syncq_alloc_aligned(n * sizeof *b->state, SYNCQ_CACHELINE);
  if (b->state == NULL) return SYNCQ_ENOMEM;
  memset(b->state, 0, n * sizeof *b->state);
  switch (kind) {
  case BK_CENTRAL:
    memset(&b->central, 0, sizeof b->central);
    break;
  case BK_COMBINING: {
    unsigned leaves = (n + COMBINING_FAN_IN - 1) / COMBINING_FAN_IN;
    b->groups = syncq_alloc_aligned((1 + leaves) * sizeof *b->groups, SYNCQ_CACHELINE);
    if (b->groups == NULL) goto nomem;
    memset(b->groups, 0, (1 + leaves) * sizeof *b->groups);
    ck_barrier_combining_init(&b->combining, &b->groups[0]);
    for (unsigned g = 0; g < leaves; g++) {
      unsigned k = n - g * COMBINING_FAN_IN < COMBINING_FAN_IN ? n - g * COMBINING_FAN_IN : COMBINING_FAN_IN;
      ck_barrier_combining_group_init(&b->combining, &b->groups[1 + g], k);
    }
    for (unsigned i = 0; i < n; i++) b->state[i].combining.sense = ~0u; /* CK_..._STATE_INITIALIZER */
    break;
  }
  case BK_DISSEMINATION: {
    b->shared = calloc(n, sizeof(ck_barrier_dissemination_t));
    b->per_thread = calloc(n, sizeof *b->per_thread);
    if (b->shared == NULL || b->per_thread == NULL) goto nomem;
    unsigned flags = ck_barrier_dissemination_size(n);
    for (unsigned i = 0; i < n; i++)
      if ((b->per_thread[i] = calloc(flags ? flags : 1, sizeof(ck_barrier_dissemination_flag_t))) == NULL) goto nomem;
    ck_barrier_dissemination_init(b->shared, (ck_barrier_dissemination_flag_t **)b->per_thread, n);
    /* subscribe in id order, so that thread id i has ck's tid i */
    for (unsigned i = 0; i < n; i++) ck_barrier_dissemination_subscribe(b->shared, &b->state[i].dissemination);
    break;
  }
  case BK_TOURNAMENT: {
    b->shared = calloc(1, sizeof(ck_barrier_tournament_t));
    b->per_thread = calloc(n, sizeof *b->per_thread);
    if (b->shared == NULL || b->per_thread == NULL) goto nomem;
    unsigned rounds = ck_barrier_tournament_size(n);
    for (unsigned i = 0; i < n; i++)
      if ((b->per_thread[i] = calloc(rounds ? rounds : 1, sizeof(ck_barrier_tournament_round_t))) == NULL) goto nomem;
    ck_barrier_tournament_init(b->shared, (ck_barrier_tournament_round_t **)b->per_thread, n);
    for (unsigned i = 0; i < n; i++) ck_barrier_tournament_subscribe(b->shared, &b->state[i].tournament);
    break;
  }
  case BK_MCS:
    b->shared = syncq_alloc_aligned(n * sizeof(ck_barrier_mcs_t), SYNCQ_CACHELINE);
    if (b->shared == NULL) goto nomem;
    memset(b->shared, 0, n * sizeof(ck_barrier_mcs_t));
    ck_barrier_mcs_init(b->shared, n);
    for (unsigned i = 0; i < n; i++) ck_barrier_mcs_subscribe(b->shared, &b->state[i].mcs);
    break;
  }
  b->magic = PEER_MAGIC_LIVE;
  return SYNCQ_OK;
nomem:
  barrier_free(b);
  return SYNCQ_ENOMEM;
}

static int barrier_destroy(ck_barrier_box *b) {
  if (b == NULL || b->magic != PEER_MAGIC_LIVE) return SYNCQ_EINVAL;
  b->magic = 0;
  barrier_free(b);
  return SYNCQ_OK;
}

static ck_barrier_box *barrier_arg(ck_barrier_box *b, unsigned id) {
  return (b == NULL || b->magic != PEER_MAGIC_LIVE || id >= b->threads) ? NULL : b;
}

/* One barrier of ck: its init (the kind) and wait (ck's call on the
 * thread's state), then the registry entry. No deadline in ck: untimed. */
#define CK_BARRIER(kind, name, title, props, KIND, call)                                                             \
  static int kind##_init(ck_barrier_box *p, const syncq_barrier_config *c) { return barrier_init_kind(p, c, KIND); } \
  static int kind##_wait(ck_barrier_box *p, unsigned id) {                                                           \
    ck_barrier_box *b = barrier_arg(p, id);                                                                          \
    if (b == NULL) return SYNCQ_EINVAL;                                                                              \
    call;                                                                                                            \
    return SYNCQ_OK;                                                                                                 \
  }                                                                                                                  \
  SYNCQ_BARRIER_REGISTER_UNTIMED_FNS(ck_##kind, name, title, CK_SOURCE, BLOCKING, SYNCQ_PROP_PEER | (props),         \
                                     ck_barrier_box, kind##_init, barrier_destroy, kind##_wait)

CK_BARRIER(central, "ck:barrier_centralized", "Concurrency Kit ck_barrier_centralized (sense-reversing)", 0, BK_CENTRAL,
           ck_barrier_centralized(&b->central, &b->state[id].central, b->threads));
CK_BARRIER(combining, "ck:barrier_combining", "Concurrency Kit ck_barrier_combining (groups of 4)",
           SYNCQ_PROP_ALLOCATES, BK_COMBINING,
           ck_barrier_combining(&b->combining, &b->groups[1 + id / COMBINING_FAN_IN], &b->state[id].combining));
CK_BARRIER(dissemination, "ck:barrier_dissemination", "Concurrency Kit ck_barrier_dissemination", SYNCQ_PROP_ALLOCATES,
           BK_DISSEMINATION, ck_barrier_dissemination(b->shared, &b->state[id].dissemination));
CK_BARRIER(tournament, "ck:barrier_tournament", "Concurrency Kit ck_barrier_tournament", SYNCQ_PROP_ALLOCATES,
           BK_TOURNAMENT, ck_barrier_tournament(b->shared, &b->state[id].tournament));
CK_BARRIER(bmcs, "ck:barrier_mcs", "Concurrency Kit ck_barrier_mcs (MCS tree)", SYNCQ_PROP_ALLOCATES, BK_MCS,
           ck_barrier_mcs(b->shared, &b->state[id].mcs));

/* ================================================================ register */

int lab_peer_ck_register(unsigned flags, char *why, size_t len) {
  const syncq_algo *const all[] = {
    &syncq_queue_ck_ring_mpmc_algo,    &syncq_queue_ck_fifo_mpmc_algo,   &syncq_stack_ck_stack_algo,
    &syncq_lock_ck_fas_algo,           &syncq_lock_ck_cas_algo,          &syncq_lock_ck_ticket_algo,
    &syncq_lock_ck_anderson_algo,      &syncq_lock_ck_mcs_algo,          &syncq_lock_ck_clh_algo,
    &syncq_barrier_ck_central_algo,    &syncq_barrier_ck_combining_algo, &syncq_barrier_ck_dissemination_algo,
    &syncq_barrier_ck_tournament_algo, &syncq_barrier_ck_bmcs_algo,
  };
  int n = 0, st = SYNCQ_OK;
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) n += peer_add(all[i], &st);
  if ((flags & LAB_PEERS_SPSC) != 0) n += peer_add(&syncq_queue_ck_ring_spsc_algo, &st);
  if (n == 0) snprintf(why, len, "registry refused: %s", syncq_strerror(st));
  return n;
}
