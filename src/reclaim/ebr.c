/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ebr.c — epoch-based reclamation.
 *
 * Contract
 *   Source:      K. Fraser, "Practical lock-freedom", PhD thesis, Cambridge
 *                TR-579, 2004, §5.2.3: a global epoch; each thread, when
 *                it enters a critical section, announces the epoch it saw;
 *                the epoch advances from e to e+1 only when every thread
 *                inside a critical section has announced e; a node retired
 *                while the global epoch is e goes into limbo list e mod 3
 *                and is freed once the global epoch reaches e+2 (by then
 *                every critical section that could have seen it has
 *                closed). Three lists suffice because a list's nodes are
 *                safe by the time the epoch comes round to reuse it.
 *                The retire epoch is the global epoch read AFTER the node
 *                was unlinked (not the retiring thread's announced epoch,
 *                which may be one behind): a critical section that saw the
 *                node announced at most that epoch.
 *   Records:     a critical section owns a record (record_pool.h, shared
 *                with hazard.c: a thread-local hint makes enter one
 *                uncontended CAS; records are never freed while the process
 *                lives, so a stale hint is readable). Limbo lists belong to
 *                records: they are freed by whoever enters that record
 *                later, by a collector that adopts the idle record (CAS on
 *                its owner word, as enter does), or by destroy.
 *   Progress:    enter/leave/retire are lock-free (enter takes a mutex only
 *                to allocate a new record, the first time a thread meets a
 *                domain); collect scans every record (O(records)).
 *   Stalls:      a thread stalled INSIDE a critical section keeps the epoch
 *                from advancing past its announcement + 1: nothing retired
 *                from then on is freed until it leaves, so memory grows
 *                without bound, but no node it can see is ever freed:
 *                a stall costs memory, never correctness. A thread stalled
 *                outside a critical section costs nothing.
 *   Atomics:     enter: 1 CAS (record) + 1 seq_cst store + 1 fence + 2
 *                loads; leave: 2 stores; retire: 1 load (+ collect every
 *                SYNCQ_EBR_COLLECT_EVERY: one load per record + 1 CAS).
 *   Memory:     nodes wait in intrusive limbo lists (no allocation on
 *                retire); records from a process-wide pool.
 *   Signal-safe: no (enter may allocate; a handler interrupting a critical
 *                section of the same record would corrupt its lists).
 *   Process-shared: no.
 */
#include <stdlib.h>
#include <string.h>

#include "record_pool.h"
#include "syncq/platform.h"
#include "syncq/reclaim.h"

#define LIMBO_LISTS 3        /* epochs e-2, e-1, e: Fraser's three lists */
#define SAFE_DISTANCE 2      /* a list of epoch e is free at global epoch e+2 */
#define HINTS 4              /* records a thread remembers, for 4 domains */
#define ANNOUNCE_ACTIVE 1ull /* low bit of announce: inside a critical section */

typedef struct limbo {
  syncq_ebr_link *head;
  uint64_t epoch; /* the epoch of every node in the list (meaningful if head) */
} limbo;

struct syncq_ebr_record {
  /* (epoch << 1) | ANNOUNCE_ACTIVE inside a critical section, 0 outside.
   * Read by every collector. */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) announce;
  /* held (owner ACTIVE) while entered, free in its domain between
   * critical sections */
  rpool_record rec;
  syncq_ebr_domain *domain;
  limbo lists[LIMBO_LISTS]; /* owned by whoever has the record entered */
  /* nodes in the lists; read by collectors to find records worth adopting */
  _Atomic(size_t) pending;
  unsigned since_collect;
};

struct syncq_ebr_domain {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) epoch;
  SYNCQ_CACHELINE_ALIGNED rpool_domain recs;
  syncq_ebr_free_fn free_fn;
  void *ctx;
};

static rpool pool = RPOOL_INIT(syncq_ebr_record, rec); /* records of destroyed domains */
static _Thread_local syncq_ebr_record *hints[HINTS];
static _Thread_local unsigned hint_next;

int syncq_ebr_domain_create(syncq_ebr_free_fn free_fn, void *ctx, syncq_ebr_domain **out) {
  if (free_fn == NULL || out == NULL) return SYNCQ_EINVAL;
  syncq_ebr_domain *d = syncq_alloc_aligned(sizeof *d, SYNCQ_CACHELINE);
  if (d == NULL) return SYNCQ_ENOMEM;
  memset(d, 0, sizeof *d);
  /* start past SAFE_DISTANCE so "epoch + 2 <= global" needs no underflow care */
  atomic_init(&d->epoch, SAFE_DISTANCE + 1);
  rpool_domain_init(&d->recs);
  d->free_fn = free_fn;
  d->ctx = ctx;
  *out = d;
  return SYNCQ_OK;
}

uint64_t syncq_ebr_epoch(const syncq_ebr_domain *d) {
  return d == NULL ? 0 : atomic_load(&((syncq_ebr_domain *)d)->epoch);
}

static void free_list(syncq_ebr_domain *d, limbo *l, size_t *freed) {
  syncq_ebr_link *n = l->head;
  l->head = NULL;
  while (n != NULL) {
    syncq_ebr_link *next = n->next; /* read before free_fn reuses the node */
    d->free_fn(n, d->ctx);
    (*freed)++;
    n = next;
  }
}

static void drop_pending(syncq_ebr_record *r, size_t n) {
  /* relaxed: a hint for collectors; the lists themselves are handed over
   * by the owner CAS (acquire) and store (release) */
  if (n) atomic_fetch_sub_explicit(&r->pending, n, memory_order_relaxed);
}

/* Free the record's limbo lists that are safe at global epoch g. */
static size_t free_safe(syncq_ebr_record *r, uint64_t g) {
  size_t freed = 0;
  for (unsigned i = 0; i < LIMBO_LISTS; i++)
    if (r->lists[i].head != NULL && r->lists[i].epoch + SAFE_DISTANCE <= g) free_list(r->domain, &r->lists[i], &freed);
  drop_pending(r, freed);
  return freed;
}

static inline syncq_ebr_record *ebr_of(rpool_record *x) { return RPOOL_CONTAINER(x, syncq_ebr_record, rec); }

static void remember(syncq_ebr_record *r) {
  for (unsigned i = 0; i < HINTS; i++)
    if (hints[i] == r) return;
  hints[hint_next++ % HINTS] = r;
}

static syncq_ebr_record *new_record(syncq_ebr_domain *d) {
  rpool_record *x = rpool_alloc(&pool);
  if (x == NULL) return NULL;
  syncq_ebr_record *r = ebr_of(x);
  atomic_store(&r->announce, 0);
  r->domain = d;
  for (unsigned i = 0; i < LIMBO_LISTS; i++) r->lists[i] = (limbo){NULL, 0};
  atomic_store(&r->pending, 0);
  r->since_collect = 0;
  rpool_publish(&d->recs, x); /* orders the fields above before any collector that finds it */
  return r;
}

static syncq_ebr_record *take_record(syncq_ebr_domain *d) {
  for (unsigned i = 0; i < HINTS; i++)
    if (hints[i] != NULL && rpool_try_take(&hints[i]->rec, d->recs.id)) return hints[i];
  rpool_record *x = rpool_take_free(&d->recs);
  syncq_ebr_record *r = x != NULL ? ebr_of(x) : new_record(d);
  if (r != NULL) remember(r);
  return r;
}

int syncq_ebr_enter(syncq_ebr_domain *d, syncq_ebr_record **out) {
  if (d == NULL || out == NULL) return SYNCQ_EINVAL;
  syncq_ebr_record *r = take_record(d);
  if (r == NULL) return SYNCQ_ENOMEM;
  /* Announce the current epoch. The fence orders the announcement before
   * every read of the structure in the critical section: a collector that
   * missed it scanned before it, hence before any node we will read was
   * retired... or we re-read the epoch and announce the newer one. The
   * fence orders a store before loads, nothing ThreadSanitizer checks (it
   * draws no happens-before from a fence); what a collector needs to see
   * happen before a free is leave's seq_cst store, which TSan sees. */
  uint64_t e = atomic_load(&d->epoch);
  for (;;) {
    atomic_store(&r->announce, (e << 1) | ANNOUNCE_ACTIVE);
    atomic_thread_fence(memory_order_seq_cst);
    uint64_t now = atomic_load(&d->epoch);
    if (now == e) break;
    e = now; /* moved on meanwhile: announce the fresh one, so we do not hold it back */
  }
  (void)free_safe(r, e);
  *out = r;
  return SYNCQ_OK;
}

void syncq_ebr_leave(syncq_ebr_record *rec) {
  if (rec == NULL) return;
  /* seq_cst (both): every read of the critical section happens before a
   * collector can see us quiescent */
  atomic_store(&rec->announce, 0);
  rpool_give_back(&rec->rec, rec->domain->recs.id);
}

/* Advance the epoch from g to g+1 if every open critical section has
 * announced g. Returns the epoch after the attempt. */
static uint64_t try_advance(syncq_ebr_domain *d) {
  uint64_t g = atomic_load(&d->epoch);
  for (rpool_record *x = rpool_first(&d->recs); x != NULL; x = x->domain_next) {
    uint64_t a = atomic_load(&ebr_of(x)->announce);
    if ((a & ANNOUNCE_ACTIVE) && (a >> 1) != g) return g; /* someone is still in an older epoch */
  }
  /* failure is fine: someone else advanced it */
  (void)atomic_compare_exchange_strong(&d->epoch, &g, g + 1);
  return atomic_load(&d->epoch);
}

/* Limbo lists belong to records, and a record nobody enters again would
 * keep its nodes until destroy: a collector adopts every idle record that
 * has nodes waiting (taking it exactly as enter does, so nobody else
 * touches its lists meanwhile) and frees what is safe. */
size_t syncq_ebr_collect(syncq_ebr_record *rec) {
  if (rec == NULL || !rpool_is_held(&rec->rec)) return 0;
  rec->since_collect = 0;
  syncq_ebr_domain *d = rec->domain;
  uint64_t g = try_advance(d);
  size_t freed = free_safe(rec, g);
  for (rpool_record *x = rpool_first(&d->recs); x != NULL; x = x->domain_next) {
    syncq_ebr_record *r = ebr_of(x);
    /* relaxed: only a hint; rpool_try_take is the real hand-over */
    if (r == rec || atomic_load_explicit(&r->pending, memory_order_relaxed) == 0) continue;
    if (!rpool_try_take(x, d->recs.id)) continue; /* in use: its owner frees its lists */
    freed += free_safe(r, g);
    rpool_give_back(x, d->recs.id);
  }
  return freed;
}

int syncq_ebr_retire(syncq_ebr_record *rec, syncq_ebr_link *node) {
  if (rec == NULL || node == NULL || !rpool_is_held(&rec->rec)) return SYNCQ_EINVAL;
  /* The epoch read after the unlink: every critical section that can
   * still see the node announced at most e. */
  uint64_t e = atomic_load(&rec->domain->epoch);
  limbo *l = &rec->lists[e % LIMBO_LISTS];
  if (l->head != NULL && l->epoch != e) {
    /* an older list in this slot: its epoch is at most e - 3, safe now */
    size_t freed = 0;
    free_list(rec->domain, l, &freed);
    drop_pending(rec, freed);
  }
  node->next = l->head;
  l->head = node;
  l->epoch = e;
  atomic_fetch_add_explicit(&rec->pending, 1, memory_order_relaxed); /* relaxed: see drop_pending */
  if (++rec->since_collect >= SYNCQ_EBR_COLLECT_EVERY) (void)syncq_ebr_collect(rec);
  return SYNCQ_OK;
}

/* Destroy: free a record's limbo lists (no thread can take it now). */
static void free_all_lists(rpool_record *x, void *ctx) {
  syncq_ebr_record *r = ebr_of(x);
  size_t freed = 0;
  for (unsigned i = 0; i < LIMBO_LISTS; i++) free_list(ctx, &r->lists[i], &freed);
}

int syncq_ebr_domain_destroy(syncq_ebr_domain *d) {
  if (d == NULL) return SYNCQ_EINVAL;
  for (rpool_record *x = rpool_first(&d->recs); x != NULL; x = x->domain_next)
    if (rpool_is_held(x)) return SYNCQ_EBUSY;
  rpool_domain_drain(&pool, &d->recs, free_all_lists, d);
  free(d);
  return SYNCQ_OK;
}
