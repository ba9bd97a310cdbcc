/*
 * hazard.c — hazard pointers.
 *
 * Contract
 *   Source:      M. M. Michael, "Hazard pointers: safe memory reclamation
 *                for lock-free objects", IEEE TPDS 15(6), 2004 (the
 *                algorithm of its Figures 2-3: per-thread records of K
 *                slots, retired lists, scan when a list reaches R).
 *   Progress:    protect, retire and scan are lock-free (wait-free but
 *                for protect's re-read loop); enter is lock-free when a
 *                record is free, and takes a mutex only to allocate a new
 *                record (the first time a thread meets a domain).
 *   Atomics:     protect: 1 seq_cst store + 1 load per try; enter: 1 CAS
 *                (hint hit); leave: K stores + 1 store.
 *   Memory:      records from a process-wide pool (never freed: a stale
 *                hint is always readable); retired lists grow by realloc
 *                up to R entries, R = max(2 * K * records, 32).
 *   Signal-safe: no (enter may allocate).
 *   Process-shared: no.
 *   Retire under memory pressure: if the retired list cannot grow, the
 *   node is freed as soon as no slot holds it, scanning and yielding until
 *   then (hazards are held only for one operation).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "syncq/platform.h"
#include "syncq/reclaim.h"

#define RETIRE_MIN_THRESHOLD 32 /* R never below this: amortise the scans */
#define HINTS 4                 /* records a thread remembers, for 4 domains */
#define OWNER_ACTIVE 1ull       /* low bit of owner: the record is entered */

struct syncq_hp_record {
  SYNCQ_CACHELINE_ALIGNED _Atomic(void *) slot[SYNCQ_HP_MAX_SLOTS];
  /* (domain id << 1) | OWNER_ACTIVE; (id << 1) when free in that domain;
   * 0 in the global pool. */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) owner;
  syncq_hp_record *domain_next; /* set before the record is published */
  syncq_hp_record *pool_next;   /* under pool_lock */
  syncq_hp_domain *domain;
  void **retired;               /* owned by whoever has the record entered */
  size_t nretired, capretired;
};

struct syncq_hp_domain {
  uint64_t id;
  unsigned slots;
  syncq_hp_free_fn free_fn;
  void *ctx;
  _Atomic(syncq_hp_record *) records; /* lock-free push-only list */
  _Atomic(size_t) nrecords;
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static syncq_hp_record *pool; /* records of destroyed domains */
static _Atomic(uint64_t) next_domain_id = 1;
static _Thread_local syncq_hp_record *hints[HINTS];
static _Thread_local unsigned hint_next;

int syncq_hp_domain_create(unsigned slots, syncq_hp_free_fn free_fn, void *ctx, syncq_hp_domain **out) {
  if (slots == 0 || slots > SYNCQ_HP_MAX_SLOTS || free_fn == NULL || out == NULL) return SYNCQ_EINVAL;
  syncq_hp_domain *d = calloc(1, sizeof *d);
  if (d == NULL) return SYNCQ_ENOMEM;
  d->id = atomic_fetch_add(&next_domain_id, 1);
  d->slots = slots;
  d->free_fn = free_fn;
  d->ctx = ctx;
  atomic_init(&d->records, NULL);
  atomic_init(&d->nrecords, 0);
  *out = d;
  return SYNCQ_OK;
}

static bool try_take(syncq_hp_record *r, uint64_t id) {
  uint64_t want = id << 1;
  return atomic_compare_exchange_strong(&r->owner, &want, (id << 1) | OWNER_ACTIVE);
}

static void remember(syncq_hp_record *r) {
  for (unsigned i = 0; i < HINTS; i++)
    if (hints[i] == r) return;
  hints[hint_next++ % HINTS] = r;
}

static syncq_hp_record *new_record(syncq_hp_domain *d) {
  pthread_mutex_lock(&pool_lock);
  syncq_hp_record *r = pool;
  if (r != NULL) pool = r->pool_next;
  pthread_mutex_unlock(&pool_lock);
  if (r == NULL) {
    r = syncq_alloc_aligned(sizeof *r, SYNCQ_CACHELINE);
    if (r == NULL) return NULL;
    memset(r, 0, sizeof *r);
  }
  for (unsigned i = 0; i < SYNCQ_HP_MAX_SLOTS; i++) atomic_store(&r->slot[i], NULL);
  r->domain = d;
  r->retired = NULL;
  r->nretired = r->capretired = 0;
  atomic_store(&r->owner, (d->id << 1) | OWNER_ACTIVE);
  /* publish: the seq_cst CAS orders the fields above before any scan that
   * finds the record through the list. */
  syncq_hp_record *head = atomic_load(&d->records);
  do r->domain_next = head;
  while (!atomic_compare_exchange_weak(&d->records, &head, r));
  atomic_fetch_add(&d->nrecords, 1);
  return r;
}

int syncq_hp_enter(syncq_hp_domain *d, syncq_hp_record **out) {
  if (d == NULL || out == NULL) return SYNCQ_EINVAL;
  for (unsigned i = 0; i < HINTS; i++) {
    if (hints[i] != NULL && try_take(hints[i], d->id)) {
      *out = hints[i];
      return SYNCQ_OK;
    }
  }
  for (syncq_hp_record *r = atomic_load(&d->records); r != NULL; r = r->domain_next) {
    if (try_take(r, d->id)) {
      remember(r);
      *out = r;
      return SYNCQ_OK;
    }
  }
  syncq_hp_record *r = new_record(d);
  if (r == NULL) return SYNCQ_ENOMEM;
  remember(r);
  *out = r;
  return SYNCQ_OK;
}

void syncq_hp_leave(syncq_hp_record *rec) {
  if (rec == NULL) return;
  for (unsigned i = 0; i < rec->domain->slots; i++) atomic_store(&rec->slot[i], NULL);
  atomic_store(&rec->owner, rec->domain->id << 1);
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
  atomic_store(&rec->slot[slot], p);
}

void syncq_hp_clear(syncq_hp_record *rec, unsigned slot) { syncq_hp_set(rec, slot, NULL); }

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
  return (x > y) - (x < y);
}

/* Every non-NULL slot of the domain, sorted; NULL (and *n = 0) if the
 * snapshot cannot be allocated. */
static void **snapshot_hazards(syncq_hp_domain *d, size_t *n) {
  size_t cap = atomic_load(&d->nrecords) * d->slots + 1, k = 0;
  void **h = malloc(cap * sizeof *h);
  if (h == NULL) {
    *n = 0;
    return NULL;
  }
  for (syncq_hp_record *r = atomic_load(&d->records); r != NULL; r = r->domain_next) {
    for (unsigned i = 0; i < d->slots; i++) {
      void *p = atomic_load(&r->slot[i]);
      if (p != NULL && k < cap) h[k++] = p;
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

static size_t threshold(const syncq_hp_domain *d) {
  size_t r = 2 * d->slots * atomic_load(&d->nrecords);
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

int syncq_hp_domain_destroy(syncq_hp_domain *d) {
  if (d == NULL) return SYNCQ_EINVAL;
  for (syncq_hp_record *r = atomic_load(&d->records); r != NULL; r = r->domain_next)
    if (atomic_load(&r->owner) & OWNER_ACTIVE) return SYNCQ_EBUSY;
  syncq_hp_record *r = atomic_load(&d->records);
  while (r != NULL) {
    syncq_hp_record *next = r->domain_next;
    for (size_t i = 0; i < r->nretired; i++) d->free_fn(r->retired[i], d->ctx);
    free(r->retired);
    r->retired = NULL;
    r->nretired = r->capretired = 0;
    atomic_store(&r->owner, 0); /* no id is 0: stale hints cannot take it */
    pthread_mutex_lock(&pool_lock);
    r->pool_next = pool;
    pool = r;
    pthread_mutex_unlock(&pool_lock);
    r = next;
  }
  free(d);
  return SYNCQ_OK;
}
