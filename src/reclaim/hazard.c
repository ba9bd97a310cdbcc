/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hazard.c — hazard pointers.
 *
 * Contract
 *   Source:      M. M. Michael, "Hazard pointers: safe memory reclamation
 *                for lock-free objects", IEEE TPDS 15(6), 2004 (the
 *                algorithm of its Figures 2-3: per-thread records of K
 *                slots, retired lists, scan when a list reaches R). As
 *                there, a thread keeps its record: the first enter on a
 *                domain takes one and caches it thread-locally (HP_CACHE
 *                domains per thread); it goes back to the domain when the
 *                thread exits, when the cache evicts it, or when the
 *                domain is destroyed.
 *   Progress:    protect, retire and scan are lock-free (wait-free but
 *                for protect's re-read loop); enter is wait-free on a cache
 *                hit, lock-free when it must take a free record, and takes
 *                a mutex only to allocate a new record.
 *   Atomics:     enter (cache hit): 1 relaxed store, no locked
 *                instruction; protect: 1 seq_cst store (xchg on x86) + 1
 *                load per try; clear: 1 release store; leave: K release
 *                stores + 1 release store; leave_keep: 1 release store;
 *                retire: a scan every R retirements. A nested enter (the
 *                thread's cached record is entered already) or a cache
 *                miss costs 1 CAS, and its leave 1 more store.
 *   Memory:      records from a process-wide pool (record_pool.h, shared
 *                with ebr.c; never freed: a stale cache entry is always
 *                readable); retired lists grow by
 *                realloc up to R entries, R = max(2 * K * records, 32). A
 *                slot kept across operations (leave_keep) keeps its node
 *                from being freed until the thread's next protect on that
 *                slot, its exit, or the domain's destroy: at most K nodes
 *                per thread.
 *   Signal-safe: no (enter may allocate).
 *   Process-shared: no.
 *   Retire under memory pressure: if the retired list cannot grow, the
 *   node is freed as soon as no slot holds it, scanning and yielding until
 *   then (hazards are held only for one operation, or kept by leave_keep
 *   until the holder's next operation).
 *   Without a thread-exit hook (pthread_key_create failed) records are
 *   taken and released per operation, as nested enters are.
 */
#include <pthread.h>
#include <stdlib.h>

#include "../race_internal.h"
#include "record_pool.h"
#include "syncq/platform.h"
#include "syncq/reclaim.h"

#define RETIRE_MIN_THRESHOLD 32 /* R never below this: amortise the scans */
#define HP_CACHE 8              /* domains whose record a thread keeps */

struct syncq_hp_record {
  SYNCQ_CACHELINE_ALIGNED _Atomic(void *) slot[SYNCQ_HP_MAX_SLOTS];
  /* held while a thread holds it (between enter and leave, or kept in
   * its cache), RELEASING while a thread exit clears it */
  rpool_record rec;
  _Atomic(unsigned) entered; /* 1 between enter and leave; written by the holder only */
  bool cached;               /* holder only: kept in the holder's cache across operations */
  syncq_hp_domain *domain;
  void **retired; /* owned by whoever holds the record */
  size_t nretired, capretired;
};

struct syncq_hp_domain {
  rpool_domain recs;
  unsigned slots;
  syncq_hp_free_fn free_fn;
  void *ctx;
};

/* A thread's kept records, one per domain, found by the domain's id (ids
 * are never reused, so an entry of a destroyed domain matches nothing). */
typedef struct hp_cache_entry {
  uint64_t id; /* 0: unused */
  syncq_hp_record *rec;
} hp_cache_entry;
typedef struct hp_cache {
  hp_cache_entry e[HP_CACHE];
  unsigned victim;
  bool registered; /* the thread-exit hook will give the records back */
} hp_cache;

static rpool pool = RPOOL_INIT(syncq_hp_record, rec); /* records of destroyed domains */
/* initial-exec: enter's lookup is a TLS-relative access, no
 * __tls_get_addr call (as the stats' TLS; the library is not dlopen'ed) */
static _Thread_local hp_cache tcache __attribute__((tls_model("initial-exec")));
static pthread_once_t cache_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t cache_key;
static bool cache_key_ok;

int syncq_hp_domain_create(unsigned slots, syncq_hp_free_fn free_fn, void *ctx, syncq_hp_domain **out) {
  if (slots == 0 || slots > SYNCQ_HP_MAX_SLOTS || free_fn == NULL || out == NULL) return SYNCQ_EINVAL;
  syncq_hp_domain *d = calloc(1, sizeof *d);
  if (d == NULL) return SYNCQ_ENOMEM;
  rpool_domain_init(&d->recs);
  d->slots = slots;
  d->free_fn = free_fn;
  d->ctx = ctx;
  *out = d;
  return SYNCQ_OK;
}

static inline syncq_hp_record *hp_of(rpool_record *x) { return RPOOL_CONTAINER(x, syncq_hp_record, rec); }

static syncq_hp_record *new_record(syncq_hp_domain *d) {
  rpool_record *x = rpool_alloc(&pool);
  if (x == NULL) return NULL;
  syncq_hp_record *r = hp_of(x);
  for (unsigned i = 0; i < SYNCQ_HP_MAX_SLOTS; i++) atomic_store(&r->slot[i], NULL);
  r->domain = d;
  r->retired = NULL;
  r->nretired = r->capretired = 0;
  r->cached = false;
  atomic_store(&r->entered, 0);
  rpool_publish(&d->recs, x); /* orders the fields above before any scan that finds it */
  return r;
}

/* Give back a record this thread keeps for domain `id`, unless it is no
 * longer ours (the domain was destroyed: the record went to the pool and
 * maybe to another thread). RELEASING keeps destroy from pooling it while
 * we clear its slots: a slot cleared after the record changed hands would
 * drop someone else's hazard. */
static void release_kept(uint64_t id, syncq_hp_record *r) {
  if (!rpool_begin_release(&r->rec, id)) return;
  for (unsigned i = 0; i < r->domain->slots; i++)
    atomic_store_explicit(&r->slot[i], NULL,
                          memory_order_release); /* release: pairs with the scan's seq_cst slot load */
  r->cached = false;
  rpool_give_back(&r->rec, id); /* free in its domain; seq_cst: publishes the cleared slots to rpool_try_take */
}

static void cache_release_all(void *p) {
  hp_cache *c = p;
  for (unsigned i = 0; i < HP_CACHE; i++)
    if (c->e[i].id != 0) {
      release_kept(c->e[i].id, c->e[i].rec);
      c->e[i].id = 0;
      c->e[i].rec = NULL;
    }
  c->registered = false;
}

static void cache_key_create(void) { cache_key_ok = pthread_key_create(&cache_key, cache_release_all) == 0; }

/* Keep r (just taken, entered) for domain id. False if the thread cannot
 * keep records (no exit hook) or every entry holds an entered record. */
static bool cache_insert(hp_cache *c, uint64_t id, syncq_hp_record *r) {
  if (!c->registered) {
    pthread_once(&cache_key_once, cache_key_create);
    if (!cache_key_ok || pthread_setspecific(cache_key, c) != 0) return false;
    c->registered = true;
  }
  unsigned pick = HP_CACHE;
  for (unsigned i = 0; i < HP_CACHE && pick == HP_CACHE; i++) {
    hp_cache_entry *e = &c->e[i];
    /* unused, or stale: its domain was destroyed (the record is no longer
     * held under that id). */
    if (e->id == 0 || !rpool_held_in(&e->rec->rec, e->id)) pick = i;
  }
  for (unsigned k = 0; k < HP_CACHE && pick == HP_CACHE; k++) {
    unsigned i = c->victim++ % HP_CACHE;
    /* relaxed: the record's own holder (this thread) wrote entered */
    if (atomic_load_explicit(&c->e[i].rec->entered, memory_order_relaxed) == 0) {
      release_kept(c->e[i].id, c->e[i].rec);
      pick = i;
    }
  }
  if (pick == HP_CACHE) return false;
  c->e[pick].id = id;
  c->e[pick].rec = r;
  r->cached = true;
  return true;
}

int syncq_hp_enter(syncq_hp_domain *d, syncq_hp_record **out) {
  if (d == NULL || out == NULL) return SYNCQ_EINVAL;
  hp_cache *c = &tcache;
  const uint64_t id = d->recs.id;
  bool kept = false;
  for (unsigned i = 0; i < HP_CACHE; i++) {
    if (c->e[i].id != id) continue;
    syncq_hp_record *r = c->e[i].rec;
    kept = true;
    /* relaxed: only this thread writes entered while it holds the record;
     * destroy reads it after every operation (its contract) */
    if (atomic_load_explicit(&r->entered, memory_order_relaxed) != 0) break; /* nested: take another */
    atomic_store_explicit(&r->entered, 1, memory_order_relaxed);
    *out = r;
    return SYNCQ_OK;
  }
  rpool_record *x = rpool_take_free(&d->recs);
  syncq_hp_record *r = x != NULL ? hp_of(x) : new_record(d);
  if (r == NULL) return SYNCQ_ENOMEM;
  r->cached = false;
  if (!kept) (void)cache_insert(c, id, r);
  atomic_store_explicit(&r->entered, 1, memory_order_relaxed); /* relaxed: as above */
  *out = r;
  return SYNCQ_OK;
}

/* End the operation; a record that is not kept goes back to the domain. */
static void finish(syncq_hp_record *rec) {
  /* release: pairs with destroy's acquire load (its EBUSY test) */
  atomic_store_explicit(&rec->entered, 0, memory_order_release);
  if (!rec->cached) rpool_give_back(&rec->rec, rec->domain->recs.id);
}

void syncq_hp_leave(syncq_hp_record *rec) {
  if (rec == NULL) return;
  for (unsigned i = 0; i < rec->domain->slots; i++)
    atomic_store_explicit(&rec->slot[i], NULL,
                          memory_order_release); /* release: pairs with the scan's seq_cst slot load */
  finish(rec);
}

void syncq_hp_leave_keep(syncq_hp_record *rec) {
  if (rec == NULL) return;
  if (!rec->cached) { /* given back: nothing may stay published in it */
    syncq_hp_leave(rec);
    return;
  }
  finish(rec);
}

void *syncq_hp_held(syncq_hp_record *rec, unsigned slot) {
  if (rec == NULL || slot >= rec->domain->slots) return NULL;
  /* relaxed: the slot is written only by this record's holder, the
   * calling thread (a thread reads its own last store) */
  return atomic_load_explicit(&rec->slot[slot], memory_order_relaxed);
}

void *syncq_hp_protect(syncq_hp_record *rec, unsigned slot, _Atomic(void *) *src) {
  if (rec == NULL || src == NULL || slot >= rec->domain->slots) return NULL;
  void *p = atomic_load(src);
  for (;;) {
    /* seq_cst store, then seq_cst re-read: a scan that misses our slot must
     * have run before the store, hence before the node was retired... or
     * the re-read sees that the pointer moved on. */
    atomic_store(&rec->slot[slot], p);
    void *q = atomic_load(src);
    if (q == p) return p;
    p = q;
  }
}

void syncq_hp_set(syncq_hp_record *rec, unsigned slot, void *p) {
  if (rec == NULL || slot >= rec->domain->slots) return;
  atomic_store(&rec->slot[slot], p); /* seq_cst: the caller's validating load follows */
}

void syncq_hp_clear(syncq_hp_record *rec, unsigned slot) {
  if (rec == NULL || slot >= rec->domain->slots) return;
  /* release: pairs with the scan's seq_cst slot load; our reads of the
   * node come before a scan that sees NULL frees it */
  atomic_store_explicit(&rec->slot[slot], NULL, memory_order_release);
}

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
  return (x > y) - (x < y);
}

/* Every non-NULL slot of the domain, sorted; NULL (and *n = 0) if the
 * snapshot cannot be allocated. The records are those on the list at one
 * load of its head, counted by walking them (the list is push-only and a
 * record's domain_next is fixed once published): nrecords could lag the
 * list (publish pushes, then counts) and is read at another instant, so a
 * snapshot sized from it could be too small for records published
 * meanwhile, and drop a hazard. A record published after the head load
 * belongs to an operation that began after the node was retired: its
 * protect re-reads the source and cannot find the node (hazard.c's
 * protect). */
static void **snapshot_hazards(syncq_hp_domain *d, size_t *n) {
  rpool_record *first = rpool_first(&d->recs);
  size_t nrec = 0, k = 0;
  for (rpool_record *x = first; x != NULL; x = x->domain_next) nrec++;
  size_t cap = nrec * d->slots + 1; /* + 1: never malloc(0) */
  void **h = malloc(cap * sizeof *h);
  if (h == NULL) {
    *n = 0;
    return NULL;
  }
  SYNCQ_RACE_POINT("reclaim.hp.scan.counted");
  for (rpool_record *x = first; x != NULL; x = x->domain_next) {
    syncq_hp_record *r = hp_of(x);
    for (unsigned i = 0; i < d->slots; i++) {
      void *p = atomic_load(&r->slot[i]);
      if (p != NULL) h[k++] = p; /* k <= nrec * slots: the same records */
    }
  }
  qsort(h, k, sizeof *h, cmp_ptr);
  *n = k;
  return h;
}

static bool is_hazard(void **h, size_t n, void *p) { return n && bsearch(&p, h, n, sizeof *h, cmp_ptr) != NULL; }

size_t syncq_hp_scan(syncq_hp_record *rec) {
  if (rec == NULL || rec->nretired == 0) return 0;
  syncq_hp_domain *d = rec->domain;
  size_t nh;
  void **h = snapshot_hazards(d, &nh);
  if (h == NULL) return 0; /* cannot tell what is safe: free nothing */
  size_t kept = 0, freed = 0;
  for (size_t i = 0; i < rec->nretired; i++) {
    void *p = rec->retired[i];
    if (is_hazard(h, nh, p)) {
      rec->retired[kept++] = p;
    } else {
      d->free_fn(p, d->ctx);
      freed++;
    }
  }
  rec->nretired = kept;
  free(h);
  return freed;
}

static size_t threshold(syncq_hp_domain *d) {
  size_t r = 2 * d->slots * atomic_load(&d->recs.nrecords);
  return r < RETIRE_MIN_THRESHOLD ? RETIRE_MIN_THRESHOLD : r;
}

int syncq_hp_retire(syncq_hp_record *rec, void *node) {
  if (rec == NULL || node == NULL) return SYNCQ_EINVAL;
  syncq_hp_domain *d = rec->domain;
  if (rec->nretired == rec->capretired) {
    size_t cap = rec->capretired ? rec->capretired * 2 : threshold(d);
    void **grown = realloc(rec->retired, cap * sizeof *grown);
    if (grown == NULL) {
      /* No room to remember it: wait until no slot holds it, then free. */
      for (;;) {
        size_t nh;
        void **h = snapshot_hazards(d, &nh);
        bool held = h == NULL || is_hazard(h, nh, node);
        free(h);
        if (!held) break;
        syncq_yield();
      }
      d->free_fn(node, d->ctx);
      return SYNCQ_OK;
    }
    rec->retired = grown;
    rec->capretired = cap;
  }
  rec->retired[rec->nretired++] = node;
  if (rec->nretired >= threshold(d)) syncq_hp_scan(rec);
  return SYNCQ_OK;
}

/* Destroy: free a record's retired nodes. rpool_domain_drain has taken
 * it from whoever kept it (a thread's cache entry for this domain then
 * matches nothing) and waited out a thread exit that was clearing it. */
static void free_retired(rpool_record *x, void *ctx) {
  syncq_hp_domain *d = ctx;
  syncq_hp_record *r = hp_of(x);
  for (size_t i = 0; i < r->nretired; i++) d->free_fn(r->retired[i], d->ctx);
  free(r->retired);
  r->retired = NULL;
  r->nretired = r->capretired = 0;
}

int syncq_hp_domain_destroy(syncq_hp_domain *d) {
  if (d == NULL) return SYNCQ_EINVAL;
  for (rpool_record *x = rpool_first(&d->recs); x != NULL; x = x->domain_next)
    /* acquire: pairs with finish()'s release store of entered */
    if (atomic_load_explicit(&hp_of(x)->entered, memory_order_acquire)) return SYNCQ_EBUSY;
  rpool_domain_drain(&pool, &d->recs, free_retired, d);
  free(d);
  return SYNCQ_OK;
}
